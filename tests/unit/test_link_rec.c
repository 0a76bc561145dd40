/*
 * Unit tests for shared/link_rec.c: the link and consent records' codec
 * (round trip, version, bounds, garbage), consent ids, the random
 * strings and the PKCE S256 challenge (RFC 7636 appendix B).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/link_rec.h"

static void
link_fill(struct link_rec *lr)
{
	memset(lr, 0, sizeof(*lr));
	(void)snprintf(lr->lr_backend, sizeof(lr->lr_backend), "github");
	(void)snprintf(lr->lr_iss, sizeof(lr->lr_iss), "https://idp.example");
	(void)snprintf(lr->lr_sub, sizeof(lr->lr_sub), "alice");
	lr->lr_linked_ms = 1700000000000ULL;
	lr->lr_refreshed_ms = 1700000001000ULL;
	lr->lr_expires_ms = 1700003600000ULL;
	(void)snprintf(lr->lr_access, sizeof(lr->lr_access), "gho_a\"b\\c");
	(void)snprintf(lr->lr_refresh, sizeof(lr->lr_refresh), "ghr_xyz");
}

static void
test_link_rec_codec(void **state)
{
	struct link_rec	*lr, *back;
	char		*s;
	size_t		 len;

	(void)state;
	lr = malloc(sizeof(*lr));
	back = malloc(sizeof(*back));
	assert_non_null(lr);
	assert_non_null(back);
	link_fill(lr);
	assert_non_null(s = link_rec_encode(lr, &len));
	assert_int_equal(strlen(s), len);
	assert_null(memchr(s, '\n', len));	/* one line */
	assert_int_equal(strncmp(s, "{\"v\":1,", 7), 0);
	assert_int_equal(link_rec_decode(s, len, back), 0);
	assert_memory_equal(lr, back, sizeof(*lr));
	free(s);

	/* tokens at their bound pass; one past does not decode */
	memset(lr->lr_access, 'a', LINK_TOKEN_MAX);
	lr->lr_access[LINK_TOKEN_MAX] = '\0';
	memset(lr->lr_refresh, 'r', LINK_TOKEN_MAX);
	lr->lr_refresh[LINK_TOKEN_MAX] = '\0';
	assert_non_null(s = link_rec_encode(lr, &len));
	assert_int_equal(link_rec_decode(s, len, back), 0);
	assert_string_equal(back->lr_access, lr->lr_access);
	free(s);
	s = strdup("{\"v\":1,\"backend\":\"b\",\"iss\":\"\",\"sub\":\"\","
	    "\"linked\":1,\"refreshed\":0,\"expires\":0,\"access\":\"a\","
	    "\"refresh\":\"\"}");
	assert_int_equal(link_rec_decode(s, strlen(s), back), 0);
	assert_string_equal(back->lr_backend, "b");
	assert_int_equal(back->lr_linked_ms, 1);
	free(s);

	/* another version, a missing member, a negative stamp, a NUL
	 * inside, an empty backend, not JSON, cut short, a duplicate */
	{
		static const char *const bad[] = {
			"{\"v\":2,\"backend\":\"b\",\"iss\":\"\",\"sub\":\"\","
			    "\"linked\":1,\"refreshed\":0,\"expires\":0,"
			    "\"access\":\"a\",\"refresh\":\"\"}",
			"{\"v\":1,\"backend\":\"b\",\"iss\":\"\",\"sub\":\"\","
			    "\"linked\":1,\"refreshed\":0,\"expires\":0,"
			    "\"access\":\"a\"}",
			"{\"v\":1,\"backend\":\"b\",\"iss\":\"\",\"sub\":\"\","
			    "\"linked\":-1,\"refreshed\":0,\"expires\":0,"
			    "\"access\":\"a\",\"refresh\":\"\"}",
			"{\"v\":1,\"backend\":\"b\\u0000c\",\"iss\":\"\","
			    "\"sub\":\"\",\"linked\":1,\"refreshed\":0,"
			    "\"expires\":0,\"access\":\"a\",\"refresh\":\"\"}",
			"{\"v\":1,\"backend\":\"\",\"iss\":\"\",\"sub\":\"\","
			    "\"linked\":1,\"refreshed\":0,\"expires\":0,"
			    "\"access\":\"a\",\"refresh\":\"\"}",
			"{\"v\":1,\"backend\":\"b\",\"backend\":\"c\","
			    "\"iss\":\"\",\"sub\":\"\",\"linked\":1,"
			    "\"refreshed\":0,\"expires\":0,\"access\":\"a\","
			    "\"refresh\":\"\"}",
			"[1]", "", "{\"v\":1,",
		};
		size_t	 i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			assert_int_equal(link_rec_decode(bad[i],
			    strlen(bad[i]), back), -1);
	}
	assert_int_equal(link_rec_decode(NULL, 0, back), -1);
	/* a token one past the bound */
	memset(lr->lr_access, 0, sizeof(lr->lr_access));
	{
		size_t	 n = LINK_TOKEN_MAX + 200;
		char	*big = malloc(n);

		assert_non_null(big);
		len = (size_t)snprintf(big, n, "{\"v\":1,\"backend\":\"b\","
		    "\"iss\":\"\",\"sub\":\"\",\"linked\":1,\"refreshed\":0,"
		    "\"expires\":0,\"refresh\":\"\",\"access\":\"");
		memset(big + len, 'a', LINK_TOKEN_MAX + 1);
		len += LINK_TOKEN_MAX + 1;
		memcpy(big + len, "\"}", 2);
		len += 2;
		assert_int_equal(link_rec_decode(big, len, back), -1);
		free(big);
	}
	free(lr);
	free(back);
}

static void
consent_fill(struct consent_rec *cr)
{
	memset(cr, 0, sizeof(*cr));
	assert_int_equal(consent_id_new(cr->cr_id), 0);
	(void)snprintf(cr->cr_scope, sizeof(cr->cr_scope), "oidc:abc");
	(void)snprintf(cr->cr_iss, sizeof(cr->cr_iss), "https://idp.example");
	(void)snprintf(cr->cr_sub, sizeof(cr->cr_sub), "alice");
	(void)snprintf(cr->cr_backend, sizeof(cr->cr_backend), "github");
	(void)snprintf(cr->cr_sid, sizeof(cr->cr_sid), "s1");
	cr->cr_leg = CONSENT_UPSTREAM;
	cr->cr_created_ms = 5;
	cr->cr_expires_ms = 5 + CONSENT_TTL_MS;
	assert_int_equal(link_random(cr->cr_nonce, CONSENT_NONCE_LEN), 0);
	assert_int_equal(link_random(cr->cr_verifier, CONSENT_VERIFIER_LEN),
	    0);
}

static void
test_consent_rec_codec(void **state)
{
	struct consent_rec	 cr, back;
	char			*s, *p;
	size_t			 len;

	(void)state;
	consent_fill(&cr);
	assert_non_null(s = consent_rec_encode(&cr, &len));
	assert_int_equal(consent_rec_decode(s, len, &back), 0);
	assert_memory_equal(&cr, &back, sizeof(cr));
	/* the leg by name; an unknown one refused */
	assert_non_null(p = strstr(s, "\"leg\":\"upstream\""));
	memcpy(p + 7, "upstreaM", 8);
	assert_int_equal(consent_rec_decode(s, len, &back), -1);
	free(s);
	cr.cr_leg = CONSENT_LOGIN;
	assert_non_null(s = consent_rec_encode(&cr, &len));
	assert_int_equal(consent_rec_decode(s, len, &back), 0);
	assert_int_equal(back.cr_leg, CONSENT_LOGIN);
	/* an id not shaped as ours */
	assert_non_null(p = strstr(s, CONSENT_PREFIX));
	p[8] = 'X';
	assert_int_equal(consent_rec_decode(s, len, &back), -1);
	free(s);
	cr.cr_leg = (enum consent_leg)7;
	assert_null(consent_rec_encode(&cr, &len));
	/* a link is no consent, nor the reverse */
	{
		struct link_rec	*lr = malloc(sizeof(*lr));

		assert_non_null(lr);
		link_fill(lr);
		assert_non_null(s = link_rec_encode(lr, &len));
		assert_int_equal(consent_rec_decode(s, len, &back), -1);
		free(s);
		consent_fill(&cr);
		assert_non_null(s = consent_rec_encode(&cr, &len));
		assert_int_equal(link_rec_decode(s, len, lr), -1);
		free(s);
		free(lr);
	}
}

static void
test_consent_id(void **state)
{
	char	 a[CONSENT_ID_LEN + 1], b[CONSENT_ID_LEN + 1];

	(void)state;
	assert_int_equal(consent_id_new(a), 0);
	assert_int_equal(consent_id_new(b), 0);
	assert_int_equal(strlen(a), CONSENT_ID_LEN);
	assert_int_equal(strncmp(a, CONSENT_PREFIX, 8), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(consent_id_valid(a), 1);
	assert_int_equal(consent_id_valid("vmcpd-e-0123456789abcdef0123456789"
	    "abcdef"), 1);
	/* upper case, short, long, another prefix, NULL */
	assert_int_equal(consent_id_valid("vmcpd-e-0123456789ABCDEF0123456789"
	    "abcdef"), 0);
	assert_int_equal(consent_id_valid("vmcpd-e-0123456789abcdef0123456789"
	    "abcde"), 0);
	assert_int_equal(consent_id_valid("vmcpd-e-0123456789abcdef0123456789"
	    "abcdef0"), 0);
	assert_int_equal(consent_id_valid("vmcpd-t-0123456789abcdef0123456789"
	    "abcdef"), 0);
	assert_int_equal(consent_id_valid(NULL), 0);
}

static void
test_link_random(void **state)
{
	char	 a[CONSENT_VERIFIER_LEN + 1], b[CONSENT_VERIFIER_LEN + 1];
	size_t	 i;

	(void)state;
	assert_int_equal(link_random(a, CONSENT_VERIFIER_LEN), 0);
	assert_int_equal(link_random(b, CONSENT_VERIFIER_LEN), 0);
	assert_int_equal(strlen(a), CONSENT_VERIFIER_LEN);
	assert_string_not_equal(a, b);
	/* RFC 7636 4.1: unreserved characters only */
	for (i = 0; i < CONSENT_VERIFIER_LEN; i++)
		assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
		    "nopqrstuvwxyz0123456789-_", a[i]));
	assert_int_equal(link_random(a, 0), 0);
	assert_string_equal(a, "");
}

/* RFC 7636 appendix B */
static void
test_link_pkce(void **state)
{
	char	 c[44];

	(void)state;
	assert_int_equal(link_pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_"
	    "wW1gFWFOEjXk", c), 0);
	assert_string_equal(c, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_rec_codec),
		cmocka_unit_test(test_consent_rec_codec),
		cmocka_unit_test(test_consent_id),
		cmocka_unit_test(test_link_random),
		cmocka_unit_test(test_link_pkce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
