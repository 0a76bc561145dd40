/*
 * worker/auth/auth_cache.c: the cache of checked tokens finds a principal
 * only under the exact bytes of the token it was put for (a token one
 * byte off, a prefix, a longer one, an unchecked one are misses), drops
 * it once expired, and its SipHash-1-3 is OpenSSL's SIPHASH MAC with
 * c-rounds 1 and d-rounds 3, on every length up to 100.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "worker/auth/auth.h"

static uint64_t
le64(const unsigned char *p)
{
	uint64_t	 v = 0;
	int		 i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* SipHash-1-3 as OpenSSL computes it, 64-bit output */
static uint64_t
openssl_siphash(const unsigned char key[16], const unsigned char *m,
    size_t len)
{
	EVP_MAC		*mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	EVP_MAC_CTX	*ctx;
	OSSL_PARAM	 params[4];
	unsigned char	 out[8];
	size_t		 outlen = 0, size = 8;
	unsigned int	 c = 1, d = 3;

	assert_non_null(mac);
	ctx = EVP_MAC_CTX_new(mac);
	assert_non_null(ctx);
	params[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size);
	params[1] = OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_C_ROUNDS, &c);
	params[2] = OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_D_ROUNDS, &d);
	params[3] = OSSL_PARAM_construct_end();
	assert_int_equal(EVP_MAC_init(ctx, key, 16, params), 1);
	assert_int_equal(EVP_MAC_update(ctx, m, len), 1);
	assert_int_equal(EVP_MAC_final(ctx, out, &outlen, sizeof(out)), 1);
	assert_int_equal(outlen, 8);
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return le64(out);
}

static void
test_siphash(void **state)
{
	unsigned char	 key[16], m[100];
	uint64_t	 k0, k1;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)i;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (unsigned char)(i * 7 + 3);
	k0 = le64(key);
	k1 = le64(key + 8);
	for (i = 0; i <= sizeof(m); i++)
		assert_true(auth_siphash(k0, k1, m, i) ==
		    openssl_siphash(key, m, i));
}

static struct principal *
mkprincipal(int64_t exp)
{
	struct principal *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->p_refs = 1;
	p->p_exp = exp;
	return p;
}

static void
test_auth_cache_exact(void **state)
{
	struct auth_cache	*ac = auth_cache_new();
	struct principal	*p = mkprincipal(1000), *q = mkprincipal(2000);
	char			 tok[800], other[800];
	size_t			 i;

	(void)state;
	assert_non_null(ac);
	for (i = 0; i < sizeof(tok); i++)
		tok[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-_."[i % 65];
	auth_cache_put(ac, tok, sizeof(tok), p);
	assert_int_equal(p->p_refs, 2);
	assert_ptr_equal(auth_cache_get(ac, tok, sizeof(tok), 10), p);
	/* one byte off, anywhere: never the principal */
	for (i = 0; i < sizeof(tok); i += 37) {
		memcpy(other, tok, sizeof(tok));
		other[i] ^= 1;
		assert_null(auth_cache_get(ac, other, sizeof(other), 10));
	}
	other[0] = tok[0];
	assert_null(auth_cache_get(ac, tok, sizeof(tok) - 1, 10));
	assert_null(auth_cache_get(ac, tok, 0, 10));
	/* a token never put, many of them: none found */
	for (i = 0; i < 10000; i++) {
		(void)snprintf(other, sizeof(other), "unchecked.%zu", i);
		assert_null(auth_cache_get(ac, other, strlen(other), 10));
	}
	/* a second token, the first still there (or its slot taken) */
	auth_cache_put(ac, "short", 5, q);
	assert_ptr_equal(auth_cache_get(ac, "short", 5, 10), q);
	assert_null(auth_cache_get(ac, "shorT", 5, 10));
	/* expired: dropped, its reference let go */
	assert_null(auth_cache_get(ac, "short", 5, 2000));
	assert_int_equal(q->p_refs, 1);
	assert_null(auth_cache_get(ac, "short", 5, 10));
	auth_principal_drop(q);
	auth_cache_free(ac);
	assert_int_equal(p->p_refs, 1);
	auth_principal_drop(p);
}

/* caches are apart: each holds its own reference */
static void
test_auth_cache_keys(void **state)
{
	struct auth_cache	*a = auth_cache_new(), *b = auth_cache_new();
	struct principal	*p = mkprincipal(1000);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	auth_cache_put(a, "tok", 3, p);
	auth_cache_put(b, "tok", 3, p);
	assert_int_equal(p->p_refs, 3);
	assert_ptr_equal(auth_cache_get(a, "tok", 3, 1), p);
	assert_ptr_equal(auth_cache_get(b, "tok", 3, 1), p);
	auth_cache_free(a);
	auth_cache_free(b);
	assert_int_equal(p->p_refs, 1);
	auth_principal_drop(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_auth_cache_exact),
		cmocka_unit_test(test_auth_cache_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
