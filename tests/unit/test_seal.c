/*
 * shared/seal.c: records sealed with the daemon's in-memory key open
 * only under that key, with the same binding, unaltered, and hold no
 * plaintext.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "shared/seal.h"

#define TOKEN	"eyJhbGciOiJSUzI1NiJ9.secret-token-bytes.sig"
#define KEY1	"scope1|github|aud|repo"
#define KEY2	"scope2|github|aud|repo"

static int
setup(void **state)
{
	(void)state;
	return seal_key_generate();
}

static int
teardown(void **state)
{
	(void)state;
	seal_key_clear();
	return 0;
}

static void
seal_one(const char *ad, uint8_t *out, size_t outlen)
{
	assert_int_equal(seal_data(ad, strlen(ad), TOKEN, strlen(TOKEN), out,
	    outlen), 0);
}

static void
test_seal_roundtrip(void **state)
{
	uint8_t	 s1[sizeof(TOKEN) + SEAL_OVERHEAD], s2[sizeof(s1)];
	uint8_t	 p[sizeof(TOKEN)];
	size_t	 n = 0, slen = strlen(TOKEN) + SEAL_OVERHEAD;

	(void)state;
	seal_one(KEY1, s1, sizeof(s1));
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s1, slen, p, sizeof(p),
	    &n), 0);
	assert_int_equal(n, strlen(TOKEN));
	assert_memory_equal(p, TOKEN, n);
	/* no plaintext at rest, and a fresh nonce each time */
	assert_null(memmem(s1, slen, "secret-token", 12));
	seal_one(KEY1, s2, sizeof(s2));
	assert_memory_not_equal(s1, s2, slen);
	/* out too small */
	assert_int_equal(seal_data(KEY1, strlen(KEY1), TOKEN, strlen(TOKEN),
	    s2, slen - 1), -1);
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s1, slen, p, n - 1,
	    &n), -1);
}

static void
test_seal_bound(void **state)
{
	uint8_t	 s[sizeof(TOKEN) + SEAL_OVERHEAD], p[sizeof(TOKEN)];
	size_t	 n, i, slen = strlen(TOKEN) + SEAL_OVERHEAD;

	(void)state;
	seal_one(KEY1, s, sizeof(s));
	/* moved to another record key */
	assert_int_equal(seal_open(KEY2, strlen(KEY2), s, slen, p, sizeof(p),
	    &n), -1);
	/* any bit altered, or cut short */
	for (i = 0; i < slen; i++) {
		s[i] ^= 0x01;
		assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p,
		    sizeof(p), &n), -1);
		s[i] ^= 0x01;
	}
	for (i = 0; i < slen; i++)
		assert_int_equal(seal_open(KEY1, strlen(KEY1), s, i, p,
		    sizeof(p), &n), -1);
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p, sizeof(p),
	    &n), 0);
	/* another daemon's key (a restart): nothing opens */
	assert_int_equal(seal_key_generate(), 0);
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p, sizeof(p),
	    &n), -1);
	/* no key at all */
	seal_key_clear();
	assert_int_equal(seal_data(KEY1, strlen(KEY1), TOKEN, strlen(TOKEN),
	    s, sizeof(s)), -1);
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p, sizeof(p),
	    &n), -1);
	assert_int_equal(seal_key_generate(), 0);
}

static void
test_seal_keyid(void **state)
{
	uint8_t	 s[sizeof(TOKEN) + SEAL_OVERHEAD], p[sizeof(TOKEN)];
	size_t	 n, slen = strlen(TOKEN) + SEAL_OVERHEAD;

	(void)state;
	seal_one(KEY1, s, sizeof(s));
	/* the key id names the key: another one is refused before GCM */
	s[1] ^= 0x80;
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p, sizeof(p),
	    &n), -1);
}

/* a key given (sessionStorage.sealKeyFile): every node opens what any
 * sealed, a node with another key nothing */
static void
test_seal_key_set(void **state)
{
	uint8_t	 k1[SEAL_KEY_LEN], k2[SEAL_KEY_LEN];
	uint8_t	 s[sizeof(TOKEN) + SEAL_OVERHEAD], s2[sizeof(s)];
	uint8_t	 p[sizeof(TOKEN)];
	size_t	 n, slen = strlen(TOKEN) + SEAL_OVERHEAD;

	(void)state;
	memset(k1, 0x11, sizeof(k1));
	memset(k2, 0x11, sizeof(k2));
	k2[31] = 0x12;
	assert_int_equal(seal_key_set(k1), 0);
	seal_one(KEY1, s, sizeof(s));
	/* "another node": the same key set again, after another one */
	assert_int_equal(seal_key_generate(), 0);
	assert_int_equal(seal_key_set(k1), 0);
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p, sizeof(p),
	    &n), 0);
	assert_int_equal(n, strlen(TOKEN));
	assert_memory_equal(p, TOKEN, n);
	/* the key id is derived, not the key's bytes */
	assert_memory_not_equal(s + 1, k1, SEAL_KEYID_LEN);
	seal_one(KEY1, s2, sizeof(s2));
	assert_memory_equal(s + 1, s2 + 1, SEAL_KEYID_LEN);
	/* another key: its id differs, nothing opens */
	assert_int_equal(seal_key_set(k2), 0);
	seal_one(KEY1, s2, sizeof(s2));
	assert_memory_not_equal(s + 1, s2 + 1, SEAL_KEYID_LEN);
	assert_int_equal(seal_open(KEY1, strlen(KEY1), s, slen, p, sizeof(p),
	    &n), -1);
	assert_int_equal(seal_key_generate(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seal_roundtrip),
		cmocka_unit_test(test_seal_bound),
		cmocka_unit_test(test_seal_keyid),
		cmocka_unit_test(test_seal_key_set),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
