/*
 * Unit tests for shared/jwt.c: keys generated here (RSA, P-256, P-384,
 * Ed25519), published as a JWKS, tokens signed here; every algorithm,
 * the pinning of the algorithm to the key, and the claim checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>

#include "shared/jwt.h"

#define NOW	1800000000LL

static EVP_PKEY	*rsa, *rsa_small, *p256, *p384, *ed;

static char *
b64url(const unsigned char *b, size_t len)
{
	static const char	 a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
	    "opqrstuvwxyz0123456789-_";
	char			*o = malloc(len * 4 / 3 + 4), *p = o;
	size_t			 i;
	uint32_t		 v;

	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
		*p++ = a[v >> 18];
		*p++ = a[(v >> 12) & 63];
		*p++ = a[(v >> 6) & 63];
		*p++ = a[v & 63];
	}
	if (len - i == 1) {
		v = (uint32_t)b[i] << 16;
		*p++ = a[v >> 18];
		*p++ = a[(v >> 12) & 63];
	} else if (len - i == 2) {
		v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8;
		*p++ = a[v >> 18];
		*p++ = a[(v >> 12) & 63];
		*p++ = a[(v >> 6) & 63];
	}
	*p = '\0';
	return o;
}

static char *
b64s(const char *s)
{
	return b64url((const unsigned char *)s, strlen(s));
}

static char *
bn_b64(EVP_PKEY *k, const char *param, size_t pad)
{
	BIGNUM		*bn = NULL;
	unsigned char	 buf[1024];
	int		 n;

	assert_int_equal(EVP_PKEY_get_bn_param(k, param, &bn), 1);
	n = pad ? BN_bn2binpad(bn, buf, (int)pad) : BN_bn2bin(bn, buf);
	BN_free(bn);
	return b64url(buf, (size_t)n);
}

/* a JWK of k's public half; alg may be NULL */
static char *
jwk(EVP_PKEY *k, const char *kid, const char *alg)
{
	char		*o, *x, *y, algm[64] = "";
	unsigned char	 raw[64];
	size_t		 rlen = sizeof(raw);

	if (alg != NULL)
		(void)snprintf(algm, sizeof(algm), ",\"alg\":\"%s\"", alg);
	if (EVP_PKEY_is_a(k, "RSA")) {
		x = bn_b64(k, OSSL_PKEY_PARAM_RSA_N, 0);
		y = bn_b64(k, OSSL_PKEY_PARAM_RSA_E, 0);
		assert_true(asprintf(&o, "{\"kty\":\"RSA\",\"kid\":\"%s\","
		    "\"use\":\"sig\",\"n\":\"%s\",\"e\":\"%s\"%s}", kid, x, y,
		    algm) > 0);
	} else if (EVP_PKEY_is_a(k, "EC")) {
		size_t c = EVP_PKEY_get_bits(k) == 256 ? 32 : 48;

		x = bn_b64(k, OSSL_PKEY_PARAM_EC_PUB_X, c);
		y = bn_b64(k, OSSL_PKEY_PARAM_EC_PUB_Y, c);
		assert_true(asprintf(&o, "{\"kty\":\"EC\",\"kid\":\"%s\","
		    "\"crv\":\"%s\",\"x\":\"%s\",\"y\":\"%s\"%s}", kid,
		    c == 32 ? "P-256" : "P-384", x, y, algm) > 0);
	} else {
		assert_int_equal(EVP_PKEY_get_raw_public_key(k, raw, &rlen),
		    1);
		x = b64url(raw, rlen);
		y = NULL;
		assert_true(asprintf(&o, "{\"kty\":\"OKP\",\"kid\":\"%s\","
		    "\"crv\":\"Ed25519\",\"x\":\"%s\"%s}", kid, x, algm) > 0);
	}
	free(x);
	free(y);
	return o;
}

/* header and claims (JSON texts) signed by k with alg into a token */
static char *
sign(EVP_PKEY *k, const char *alg, const char *header, const char *claims)
{
	EVP_MD_CTX	*m = EVP_MD_CTX_new();
	EVP_PKEY_CTX	*pc = NULL;
	char		*h = b64s(header), *c = b64s(claims), *in, *s, *tok;
	unsigned char	 sig[1024], raw[96];
	const unsigned char *sp = sig;
	size_t		 slen = sizeof(sig), clen = 0;
	const char	*md = "SHA256";
	ECDSA_SIG	*es;

	assert_true(asprintf(&in, "%s.%s", h, c) > 0);
	if (strcmp(alg, "RS384") == 0 || strcmp(alg, "ES384") == 0)
		md = "SHA384";
	else if (strcmp(alg, "RS512") == 0)
		md = "SHA512";
	else if (strcmp(alg, "EdDSA") == 0)
		md = NULL;
	assert_int_equal(EVP_DigestSignInit_ex(m, &pc, md, NULL, NULL, k,
	    NULL), 1);
	if (strcmp(alg, "PS256") == 0) {
		assert_true(EVP_PKEY_CTX_set_rsa_padding(pc,
		    RSA_PKCS1_PSS_PADDING) > 0);
		assert_true(EVP_PKEY_CTX_set_rsa_pss_saltlen(pc,
		    RSA_PSS_SALTLEN_DIGEST) > 0);
	}
	assert_int_equal(EVP_DigestSign(m, sig, &slen,
	    (unsigned char *)in, strlen(in)), 1);
	EVP_MD_CTX_free(m);
	if (alg[0] == 'E' && alg[1] == 'S') {
		clen = strcmp(alg, "ES256") == 0 ? 32 : 48;
		es = d2i_ECDSA_SIG(NULL, &sp, (long)slen);
		assert_non_null(es);
		BN_bn2binpad(ECDSA_SIG_get0_r(es), raw, (int)clen);
		BN_bn2binpad(ECDSA_SIG_get0_s(es), raw + clen, (int)clen);
		ECDSA_SIG_free(es);
		s = b64url(raw, 2 * clen);
	} else
		s = b64url(sig, slen);
	assert_true(asprintf(&tok, "%s.%s", in, s) > 0);
	free(h);
	free(c);
	free(in);
	free(s);
	return tok;
}

static int
setup(void **state)
{
	(void)state;
	rsa = EVP_RSA_gen(2048);
	rsa_small = EVP_RSA_gen(1024);
	p256 = EVP_EC_gen("P-256");
	p384 = EVP_EC_gen("P-384");
	ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	return rsa && rsa_small && p256 && p384 && ed ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(rsa_small);
	EVP_PKEY_free(p256);
	EVP_PKEY_free(p384);
	EVP_PKEY_free(ed);
	return 0;
}

static void
load_jwks(struct jwks *jw, const char *keys)
{
	const char	*why;
	char		*doc;

	assert_true(asprintf(&doc, "{\"keys\":[%s]}", keys) > 0);
	if (jwks_parse(doc, strlen(doc), jw, &why) == -1)
		fail_msg("jwks: %s", why);
	free(doc);
}

#define GOOD_CLAIMS "{\"iss\":\"https://idp\",\"aud\":\"vmcp\"," \
	"\"sub\":\"alice\",\"exp\":1800000600,\"iat\":1800000000}"

/* 0 verified, else why */
static const char *
check(const struct jwks *jw, const char *tok)
{
	struct jwt_policy	 p = { "https://idp", "vmcp", NOW, 30 };
	struct jwt		 t;
	const struct jwt_key	*k;
	const char		*why = NULL;
	int64_t			 exp;

	if (jwt_parse(tok, strlen(tok), &t, &why) != 0)
		return why;
	if ((k = jwks_find(jw, t.jt_kid)) == NULL)
		why = "unknown kid";
	else if (jwt_verify_sig(&t, k, &why) == 0 &&
	    jwt_check_claims(t.jt_claims, &p, &exp, &why) == 0)
		why = NULL;
	jwt_clear(&t);
	return why;
}

static void
expect(const struct jwks *jw, EVP_PKEY *k, const char *alg, const char *kid,
    const char *claims, const char *want)
{
	char		*tok, hdr[256];
	const char	*why;

	(void)snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"kid\":\"%s\","
	    "\"typ\":\"at+jwt\"}", alg, kid);
	tok = sign(k, alg, hdr, claims);
	why = check(jw, tok);
	if (want == NULL && why != NULL)
		fail_msg("%s/%s: %s", alg, kid, why);
	if (want != NULL && (why == NULL || strcmp(why, want) != 0))
		fail_msg("%s/%s: got %s, want %s", alg, kid,
		    why ? why : "ok", want);
	free(tok);
}

static struct jwks
all_keys(void)
{
	struct jwks	 jw;
	char		*k[7], *s;

	k[0] = jwk(rsa, "r", NULL);
	k[1] = jwk(rsa, "r256", "RS256");
	k[2] = jwk(p256, "e256", NULL);
	k[3] = jwk(p384, "e384", "ES384");
	k[4] = jwk(ed, "ed", NULL);
	k[5] = jwk(rsa, "ps", "PS256");
	k[6] = jwk(rsa_small, "small", NULL);
	assert_true(asprintf(&s, "%s,%s,%s,%s,%s,%s,%s", k[0], k[1], k[2],
	    k[3], k[4], k[5], k[6]) > 0);
	load_jwks(&jw, s);
	free(s);
	for (size_t i = 0; i < 7; i++)
		free(k[i]);
	return jw;
}

static void
test_algorithms(void **state)
{
	struct jwks jw = all_keys();

	(void)state;
	/* the 1024-bit key was left out */
	assert_int_equal(jw.jw_nkeys, 6);
	assert_null(jwks_find(&jw, "small"));
	expect(&jw, rsa, "RS256", "r", GOOD_CLAIMS, NULL);
	expect(&jw, rsa, "RS384", "r", GOOD_CLAIMS, NULL);
	expect(&jw, rsa, "RS512", "r", GOOD_CLAIMS, NULL);
	expect(&jw, rsa, "PS256", "r", GOOD_CLAIMS, NULL);
	expect(&jw, rsa, "RS256", "r256", GOOD_CLAIMS, NULL);
	expect(&jw, rsa, "PS256", "ps", GOOD_CLAIMS, NULL);
	expect(&jw, p256, "ES256", "e256", GOOD_CLAIMS, NULL);
	expect(&jw, p384, "ES384", "e384", GOOD_CLAIMS, NULL);
	expect(&jw, ed, "EdDSA", "ed", GOOD_CLAIMS, NULL);
	jwks_clear(&jw);
}

static void
test_pinning(void **state)
{
	struct jwks	 jw = all_keys();
	char		*h, *c, *tok, *pub, *in, *s;
	unsigned char	 mac[64];
	unsigned int	 maclen = sizeof(mac);

	(void)state;
	/* the key's alg wins over the token's */
	expect(&jw, rsa, "RS384", "r256", GOOD_CLAIMS,
	    "the token's algorithm does not match its key");
	expect(&jw, rsa, "RS256", "ps",  GOOD_CLAIMS,
	    "the token's algorithm does not match its key");
	/* an RSA-signed token naming an EC key */
	expect(&jw, rsa, "RS256", "e256", GOOD_CLAIMS,
	    "the token's algorithm does not match its key");
	expect(&jw, p384, "ES384", "e256", GOOD_CLAIMS,
	    "the token's algorithm does not match its key");
	/* signed by another key under a known kid */
	expect(&jw, p256, "ES256", "e256", GOOD_CLAIMS, NULL);
	expect(&jw, p384, "ES256", "e256", GOOD_CLAIMS, "bad signature");
	expect(&jw, rsa, "RS256", "nokey", GOOD_CLAIMS, "unknown kid");

	/* alg none */
	h = b64s("{\"alg\":\"none\",\"kid\":\"r\"}");
	c = b64s(GOOD_CLAIMS);
	assert_true(asprintf(&tok, "%s.%s.", h, c) > 0);
	assert_string_equal(check(&jw, tok),
	    "the token's algorithm is not accepted");
	free(tok);
	free(h);

	/* HS256 keyed with the RSA key's public JWK (key confusion) */
	pub = jwk(rsa, "r", NULL);
	h = b64s("{\"alg\":\"HS256\",\"kid\":\"r\"}");
	assert_true(asprintf(&in, "%s.%s", h, c) > 0);
	HMAC(EVP_sha256(), pub, (int)strlen(pub), (unsigned char *)in,
	    strlen(in), mac, &maclen);
	s = b64url(mac, maclen);
	assert_true(asprintf(&tok, "%s.%s", in, s) > 0);
	assert_string_equal(check(&jw, tok),
	    "the token's algorithm is not accepted");
	free(tok);
	free(s);
	free(in);
	free(h);
	free(pub);

	/* no kid, crit, nested, JWE, too large, padding, tampering */
	h = b64s("{\"alg\":\"RS256\"}");
	assert_true(asprintf(&tok, "%s.%s.AAAA", h, c) > 0);
	assert_string_equal(check(&jw, tok), "the token has no kid");
	free(tok);
	free(h);
	tok = sign(rsa, "RS256", "{\"alg\":\"RS256\",\"kid\":\"r\","
	    "\"crit\":[\"exp\"]}", GOOD_CLAIMS);
	assert_string_equal(check(&jw, tok),
	    "the token has critical header parameters");
	free(tok);
	tok = sign(rsa, "RS256", "{\"alg\":\"RS256\",\"kid\":\"r\","
	    "\"cty\":\"JWT\"}", GOOD_CLAIMS);
	assert_string_equal(check(&jw, tok), "nested tokens are not accepted");
	free(tok);
	assert_string_equal(check(&jw, "a.b.c.d.e"),
	    "encrypted or malformed token (JWE is not accepted)");
	assert_string_equal(check(&jw, "opaque-token"), "not a JWT");
	tok = sign(rsa, "RS256", "{\"alg\":\"RS256\",\"kid\":\"r\"}",
	    GOOD_CLAIMS);
	in = malloc(strlen(tok) + 2);
	strcpy(in, tok);
	strcat(in, "=");
	assert_string_equal(check(&jw, in), "malformed signature");
	/* a flipped claim byte */
	strcpy(in, tok);
	in[strchr(in, '.') - in + 5] ^= 1;
	assert_non_null(check(&jw, in));
	free(in);
	free(tok);
	s = malloc(JWT_TOKEN_MAX);
	memset(s, 'A', JWT_TOKEN_MAX - 1);
	s[JWT_TOKEN_MAX - 1] = '\0';
	assert_true(asprintf(&tok, "%s.%s.%s", h = b64s("{}"), c, s) > 0);
	assert_string_equal(check(&jw, tok), "the token is too large");
	free(tok);
	free(h);
	free(s);
	free(c);
	jwks_clear(&jw);
}

static void
test_claims(void **state)
{
	struct jwks	 jw = all_keys();
	char		*sub;

	(void)state;
#define C(x) "{\"iss\":\"https://idp\",\"sub\":\"alice\"," x "}"
	expect(&jw, rsa, "RS256", "r",
	    C("\"aud\":[\"x\",\"vmcp\"],\"exp\":1800000001"), NULL);
	expect(&jw, rsa, "RS256", "r",
	    C("\"aud\":[\"x\"],\"exp\":1800000001"),
	    "the token is not for this server (audience)");
	expect(&jw, rsa, "RS256", "r", C("\"exp\":1800000001"),
	    "the token is not for this server (audience)");
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\""),
	    "the token has no valid exp");
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\",\"exp\":\"9\""),
	    "the token has no valid exp");
	/* expired, but within the 30 s skew; then beyond it */
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\","
	    "\"exp\":1799999980"), NULL);
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\","
	    "\"exp\":1799999970"), "the token has expired");
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\","
	    "\"exp\":1800000600,\"nbf\":1800000020"), NULL);
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\","
	    "\"exp\":1800000600,\"nbf\":1800000031"),
	    "the token is not valid yet (nbf)");
	expect(&jw, rsa, "RS256", "r", C("\"aud\":\"vmcp\","
	    "\"exp\":1800000600,\"iat\":1800000100"),
	    "the token was issued in the future (iat)");
	expect(&jw, rsa, "RS256", "r",
	    "{\"iss\":\"https://idp/\",\"sub\":\"a\",\"aud\":\"vmcp\","
	    "\"exp\":1800000600}",
	    "the token's issuer is not the one configured");
	expect(&jw, rsa, "RS256", "r",
	    "{\"iss\":\"https://idp\",\"aud\":\"vmcp\",\"exp\":1800000600}",
	    "the token has no subject (sub)");
	expect(&jw, rsa, "RS256", "r",
	    "{\"iss\":\"https://idp\",\"sub\":\"\",\"aud\":\"vmcp\","
	    "\"exp\":1800000600}", "the token has no subject (sub)");
	expect(&jw, rsa, "RS256", "r",
	    "{\"iss\":\"https://idp\",\"sub\":7,\"aud\":\"vmcp\","
	    "\"exp\":1800000600}", "the token has no subject (sub)");
	/* a subject past JWT_SUB_MAX is said to be too long, not missing */
	sub = malloc(JWT_SUB_MAX + 128);
	assert_non_null(sub);
	(void)snprintf(sub, JWT_SUB_MAX + 128, "{\"iss\":\"https://idp\","
	    "\"sub\":\"%0*d\",\"aud\":\"vmcp\",\"exp\":1800000600}",
	    JWT_SUB_MAX, 7);
	expect(&jw, rsa, "RS256", "r", sub, NULL);
	(void)snprintf(sub, JWT_SUB_MAX + 128, "{\"iss\":\"https://idp\","
	    "\"sub\":\"%0*d\",\"aud\":\"vmcp\",\"exp\":1800000600}",
	    JWT_SUB_MAX + 1, 7);
	expect(&jw, rsa, "RS256", "r", sub,
	    "the token's subject (sub) is too long (over 1024 bytes)");
	free(sub);
	/* duplicate claims are refused outright */
	expect(&jw, rsa, "RS256", "r",
	    "{\"iss\":\"https://idp\",\"sub\":\"a\",\"sub\":\"b\","
	    "\"aud\":\"vmcp\",\"exp\":1800000600}",
	    "the token's claims are not a JSON object");
#undef C
	jwks_clear(&jw);
}

static void
test_b64url(void **state)
{
	unsigned char	 out[16];

	(void)state;
	assert_int_equal(jwt_b64url_decode("", 0, out), 0);
	assert_int_equal(jwt_b64url_decode("YQ", 2, out), 1);
	assert_int_equal(out[0], 'a');
	/* trailing bits set: another encoding of "a" */
	assert_int_equal(jwt_b64url_decode("YR", 2, out), -1);
	assert_int_equal(jwt_b64url_decode("YQ==", 4, out), -1);
	assert_int_equal(jwt_b64url_decode("Y", 1, out), -1);
	assert_int_equal(jwt_b64url_decode("Y+/a", 4, out), -1);
	assert_int_equal(jwt_b64url_decode("_-_-", 4, out), 3);
}

static void
test_jwks(void **state)
{
	struct jwks	 jw;
	const char	*why;
	char		*a, *b, *doc;

	(void)state;
	/* a kid twice verifies nothing */
	a = jwk(rsa, "dup", NULL);
	b = jwk(p256, "dup", NULL);
	assert_true(asprintf(&doc, "%s,%s", a, b) > 0);
	load_jwks(&jw, doc);
	expect(&jw, rsa, "RS256", "dup", GOOD_CLAIMS,
	    "the token's algorithm does not match its key");
	expect(&jw, p256, "ES256", "dup", GOOD_CLAIMS,
	    "the token's algorithm does not match its key");
	jwks_clear(&jw);
	free(doc);
	free(a);
	free(b);
	/* an encryption key, an HMAC key: nothing usable */
	doc = "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"h\",\"k\":\"AAAA\"},"
	    "{\"kty\":\"RSA\",\"kid\":\"x\",\"use\":\"enc\",\"n\":\"AQAB\","
	    "\"e\":\"AQAB\"}]}";
	assert_int_equal(jwks_parse(doc, strlen(doc), &jw, &why), -1);
	assert_string_equal(why, "the JWKS has no usable signing key");
	assert_int_equal(jwks_parse("[]", 2, &jw, &why), -1);
	assert_int_equal(jwks_parse("{\"keys\":{}}", 11, &jw, &why), -1);
	/* an EC point off the curve */
	doc = "{\"keys\":[{\"kty\":\"EC\",\"kid\":\"e\",\"crv\":\"P-256\","
	    "\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\","
	    "\"y\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\"}]}";
	assert_int_equal(jwks_parse(doc, strlen(doc), &jw, &why), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_algorithms),
		cmocka_unit_test(test_pinning),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_b64url),
		cmocka_unit_test(test_jwks),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
