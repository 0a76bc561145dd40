/*
 * JWS verification on OpenSSL 3 (EVP_DigestVerify), jansson for the
 * JSON.  Written here rather than taken from libcjose: cjose picks the
 * verifier from the token's "alg" and leaves pinning it to the key, its
 * base64url decoder accepts padding, and it has no EdDSA; the whole
 * verifier is a few hundred lines we fuzz (tests/fuzz/fuzz_jwt.c).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "jwt.h"

#define JWT_RSA_MIN_BITS	2048

static const struct {
	const char	*name;
	enum jwt_alg	 alg;
} jwt_algs[] = {
	{ "RS256", JWT_RS256 }, { "RS384", JWT_RS384 },
	{ "RS512", JWT_RS512 }, { "PS256", JWT_PS256 },
	{ "ES256", JWT_ES256 }, { "ES384", JWT_ES384 },
	{ "EdDSA", JWT_EDDSA },
};

static enum jwt_alg
jwt_alg_lookup(const char *s)
{
	size_t	 i;

	for (i = 0; i < sizeof(jwt_algs) / sizeof(jwt_algs[0]); i++)
		if (strcmp(jwt_algs[i].name, s) == 0)
			return jwt_algs[i].alg;
	return JWT_ALG_BAD;
}

static int
b64url_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

long
jwt_b64url_decode(const char *in, size_t len, unsigned char *out)
{
	uint32_t	 acc = 0;
	size_t		 i, o = 0;
	int		 bits = 0, v;

	if (len % 4 == 1 || len > LONG_MAX / 3)
		return -1;
	for (i = 0; i < len; i++) {
		if ((v = b64url_val((unsigned char)in[i])) == -1)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1U << bits) - 1;
		}
	}
	/* the bits left over must be zero: one encoding per value */
	if (acc != 0)
		return -1;
	return (long)o;
}

/* a base64url member of a JWK, decoded (malloc'd), within max bytes */
static unsigned char *
jwk_bytes(const json_t *jwk, const char *name, size_t max, size_t *len)
{
	const char	*s;
	unsigned char	*b;
	size_t		 slen;
	long		 n;

	if ((s = json_string_value(json_object_get(jwk, name))) == NULL)
		return NULL;
	slen = strlen(s);
	if (slen == 0 || slen > (max * 4 + 2) / 3 + 1 ||
	    (b = malloc(slen * 3 / 4 + 1)) == NULL)
		return NULL;
	if ((n = jwt_b64url_decode(s, slen, b)) <= 0) {
		free(b);
		return NULL;
	}
	*len = (size_t)n;
	return b;
}

static EVP_PKEY *
jwk_fromdata(const char *type, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM	*params = NULL;
	EVP_PKEY_CTX	*ctx = NULL;
	EVP_PKEY	*pkey = NULL;

	if ((params = OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

static EVP_PKEY *
jwk_rsa(const json_t *jwk)
{
	OSSL_PARAM_BLD	*bld = NULL;
	BIGNUM		*n = NULL, *e = NULL;
	unsigned char	*nb = NULL, *eb = NULL;
	EVP_PKEY	*pkey = NULL;
	size_t		 nlen, elen;

	if ((nb = jwk_bytes(jwk, "n", 1024, &nlen)) == NULL ||
	    (eb = jwk_bytes(jwk, "e", 8, &elen)) == NULL ||
	    (n = BN_bin2bn(nb, (int)nlen, NULL)) == NULL ||
	    (e = BN_bin2bn(eb, (int)elen, NULL)) == NULL ||
	    (bld = OSSL_PARAM_BLD_new()) == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
		goto done;
	pkey = jwk_fromdata("RSA", bld);
	if (pkey != NULL && EVP_PKEY_get_bits(pkey) < JWT_RSA_MIN_BITS) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
done:
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(e);
	free(nb);
	free(eb);
	return pkey;
}

static EVP_PKEY *
jwk_ec(const json_t *jwk, enum jwt_alg *alg)
{
	OSSL_PARAM_BLD	*bld = NULL;
	EVP_PKEY_CTX	*ctx = NULL;
	EVP_PKEY	*pkey = NULL;
	unsigned char	*x = NULL, *y = NULL, pub[1 + 2 * 48];
	const char	*crv, *group;
	size_t		 xlen, ylen, clen;

	crv = json_string_value(json_object_get(jwk, "crv"));
	if (crv != NULL && strcmp(crv, "P-256") == 0) {
		group = "prime256v1";
		clen = 32;
		*alg = JWT_ES256;
	} else if (crv != NULL && strcmp(crv, "P-384") == 0) {
		group = "secp384r1";
		clen = 48;
		*alg = JWT_ES384;
	} else
		return NULL;
	/* x and y are exactly the field size (RFC 7518 6.2.1.2) */
	if ((x = jwk_bytes(jwk, "x", clen, &xlen)) == NULL ||
	    (y = jwk_bytes(jwk, "y", clen, &ylen)) == NULL ||
	    xlen != clen || ylen != clen)
		goto done;
	pub[0] = 0x04;
	memcpy(pub + 1, x, clen);
	memcpy(pub + 1 + clen, y, clen);
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld,
	    OSSL_PKEY_PARAM_GROUP_NAME, group, 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY,
	    pub, 1 + 2 * clen))
		goto done;
	if ((pkey = jwk_fromdata("EC", bld)) == NULL)
		goto done;
	/* a point not on the curve is refused here, not at verify time */
	if ((ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL)) == NULL ||
	    EVP_PKEY_public_check(ctx) != 1) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
done:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_BLD_free(bld);
	free(x);
	free(y);
	return pkey;
}

static EVP_PKEY *
jwk_okp(const json_t *jwk)
{
	const char	*crv = json_string_value(json_object_get(jwk, "crv"));
	unsigned char	*x;
	size_t		 xlen;
	EVP_PKEY	*pkey = NULL;

	if (crv == NULL || strcmp(crv, "Ed25519") != 0 ||
	    (x = jwk_bytes(jwk, "x", 32, &xlen)) == NULL)
		return NULL;
	if (xlen == 32)
		pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x,
		    xlen);
	free(x);
	return pkey;
}

/* one JWK into k: 0, or -1 when it is of no use for verifying */
static int
jwk_load(const json_t *jwk, struct jwt_key *k)
{
	const char	*kty, *kid, *use, *alg;
	enum jwt_alg	 a = JWT_ALG_BAD, want = JWT_ALG_BAD;
	EVP_PKEY	*pkey = NULL;

	memset(k, 0, sizeof(*k));
	if (!json_is_object(jwk) ||
	    (kty = json_string_value(json_object_get(jwk, "kty"))) == NULL ||
	    (kid = json_string_value(json_object_get(jwk, "kid"))) == NULL ||
	    *kid == '\0' || strlen(kid) > JWT_KID_MAX)
		return -1;
	use = json_string_value(json_object_get(jwk, "use"));
	if (json_object_get(jwk, "use") != NULL &&
	    (use == NULL || strcmp(use, "sig") != 0))
		return -1;
	alg = json_string_value(json_object_get(jwk, "alg"));
	if (json_object_get(jwk, "alg") != NULL &&
	    (alg == NULL || (want = jwt_alg_lookup(alg)) == JWT_ALG_BAD))
		return -1;
	if (strcmp(kty, "RSA") == 0) {
		if (want != JWT_ALG_BAD && want != JWT_RS256 &&
		    want != JWT_RS384 && want != JWT_RS512 &&
		    want != JWT_PS256)
			return -1;
		if ((pkey = jwk_rsa(jwk)) == NULL)
			return -1;
		k->jk_rsa = 1;
		k->jk_any_rsa = want == JWT_ALG_BAD;
		a = want;
	} else if (strcmp(kty, "EC") == 0) {
		if ((pkey = jwk_ec(jwk, &a)) == NULL)
			return -1;
	} else if (strcmp(kty, "OKP") == 0) {
		if ((pkey = jwk_okp(jwk)) == NULL)
			return -1;
		a = JWT_EDDSA;
	} else
		return -1;
	/* an alg that contradicts the curve pins nothing: drop the key */
	if (!k->jk_rsa && want != JWT_ALG_BAD && want != a) {
		EVP_PKEY_free(pkey);
		return -1;
	}
	k->jk_alg = a;
	k->jk_pkey = pkey;
	memcpy(k->jk_kid, kid, strlen(kid) + 1);
	return 0;
}

static void
jwt_key_void(struct jwt_key *k)
{
	k->jk_alg = JWT_ALG_BAD;
	k->jk_rsa = k->jk_any_rsa = 0;
}

int
jwks_parse(const char *buf, size_t len, struct jwks *out, const char **why)
{
	json_t		*root, *keys, *jwk;
	json_error_t	 jerr;
	size_t		 i, j;

	memset(out, 0, sizeof(*out));
	*why = "the JWKS is not a JSON object with a \"keys\" array";
	if (len > JWKS_BODY_MAX) {
		*why = "the JWKS is too large";
		return -1;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL)
		return -1;
	if (!json_is_array(keys = json_object_get(root, "keys")))
		goto fail;
	if ((out->jw_keys = calloc(JWKS_KEYS_MAX, sizeof(*out->jw_keys))) ==
	    NULL)
		goto fail;
	json_array_foreach(keys, i, jwk) {
		if (out->jw_nkeys == JWKS_KEYS_MAX)
			break;
		if (jwk_load(jwk, &out->jw_keys[out->jw_nkeys]) == -1)
			continue;
		/* a kid twice names no key: neither verifies anything */
		for (j = 0; j < out->jw_nkeys; j++)
			if (strcmp(out->jw_keys[j].jk_kid,
			    out->jw_keys[out->jw_nkeys].jk_kid) == 0) {
				jwt_key_void(&out->jw_keys[j]);
				jwt_key_void(&out->jw_keys[out->jw_nkeys]);
			}
		out->jw_nkeys++;
	}
	json_decref(root);
	if (out->jw_nkeys == 0) {
		*why = "the JWKS has no usable signing key";
		jwks_clear(out);
		return -1;
	}
	return 0;
fail:
	json_decref(root);
	jwks_clear(out);
	return -1;
}

void
jwks_clear(struct jwks *jw)
{
	size_t	 i;

	for (i = 0; i < jw->jw_nkeys; i++)
		EVP_PKEY_free(jw->jw_keys[i].jk_pkey);
	free(jw->jw_keys);
	memset(jw, 0, sizeof(*jw));
}

const struct jwt_key *
jwks_find(const struct jwks *jw, const char *kid)
{
	size_t	 i;

	for (i = 0; kid != NULL && i < jw->jw_nkeys; i++)
		if (strcmp(jw->jw_keys[i].jk_kid, kid) == 0)
			return &jw->jw_keys[i];
	return NULL;
}

/* one base64url JSON object of a token */
static json_t *
jwt_part(const char *s, size_t len)
{
	unsigned char	*b;
	json_t		*j;
	json_error_t	 jerr;
	long		 n;

	if (len == 0 || (b = malloc(len * 3 / 4 + 1)) == NULL)
		return NULL;
	if ((n = jwt_b64url_decode(s, len, b)) <= 0) {
		free(b);
		return NULL;
	}
	/* duplicate members are an attack vector (RFC 7515 5.2 step 4) */
	j = json_loadb((const char *)b, (size_t)n, JSON_REJECT_DUPLICATES,
	    &jerr);
	free(b);
	if (j != NULL && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

int
jwt_parse(const char *tok, size_t len, struct jwt *t, const char **why)
{
	const char	*d1, *d2, *alg, *cty;
	size_t		 hlen, plen, slen;
	long		 n;

	memset(t, 0, sizeof(*t));
	*why = "not a JWT";
	if ((d1 = memchr(tok, '.', len)) == NULL ||
	    (d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok))) == NULL)
		return -1;
	if (memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - tok)) != NULL) {
		*why = "encrypted or malformed token (JWE is not accepted)";
		return -2;
	}
	if (len > JWT_TOKEN_MAX) {
		*why = "the token is too large";
		return -2;
	}
	hlen = (size_t)(d1 - tok);
	plen = (size_t)(d2 - d1 - 1);
	slen = len - (size_t)(d2 + 1 - tok);
	*why = "malformed token";
	if ((t->jt_header = jwt_part(tok, hlen)) == NULL)
		return -2;
	if ((alg = json_string_value(json_object_get(t->jt_header, "alg"))) ==
	    NULL) {
		*why = "the token has no alg";
		goto fail;
	}
	if ((t->jt_alg = jwt_alg_lookup(alg)) == JWT_ALG_BAD) {
		*why = "the token's algorithm is not accepted";
		goto fail;
	}
	if (json_object_get(t->jt_header, "crit") != NULL) {
		*why = "the token has critical header parameters";
		goto fail;
	}
	cty = json_string_value(json_object_get(t->jt_header, "cty"));
	if (cty != NULL && strcasecmp(cty, "JWT") == 0) {
		*why = "nested tokens are not accepted";
		goto fail;
	}
	t->jt_kid = json_string_value(json_object_get(t->jt_header, "kid"));
	if (t->jt_kid == NULL || *t->jt_kid == '\0' ||
	    strlen(t->jt_kid) > JWT_KID_MAX) {
		*why = "the token has no kid";
		goto fail;
	}
	if ((t->jt_claims = jwt_part(d1 + 1, plen)) == NULL) {
		*why = "the token's claims are not a JSON object";
		goto fail;
	}
	if (slen == 0 || (t->jt_sig = malloc(slen * 3 / 4 + 1)) == NULL ||
	    (n = jwt_b64url_decode(d2 + 1, slen, t->jt_sig)) <= 0) {
		*why = "malformed signature";
		goto fail;
	}
	t->jt_siglen = (size_t)n;
	t->jt_input = tok;
	t->jt_inputlen = (size_t)(d2 - tok);
	return 0;
fail:
	jwt_clear(t);
	return -2;
}

void
jwt_clear(struct jwt *t)
{
	json_decref(t->jt_header);
	json_decref(t->jt_claims);
	free(t->jt_sig);
	memset(t, 0, sizeof(*t));
}

/* JWS's R || S (RFC 7518 3.4) as the DER OpenSSL verifies */
static unsigned char *
jwt_ecdsa_der(const unsigned char *sig, size_t siglen, size_t clen,
    int *derlen)
{
	ECDSA_SIG	*es;
	BIGNUM		*r, *s;
	unsigned char	*der = NULL;

	if (siglen != 2 * clen || (es = ECDSA_SIG_new()) == NULL)
		return NULL;
	r = BN_bin2bn(sig, (int)clen, NULL);
	s = BN_bin2bn(sig + clen, (int)clen, NULL);
	if (r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return NULL;
	}
	if ((*derlen = i2d_ECDSA_SIG(es, &der)) <= 0)
		der = NULL;
	ECDSA_SIG_free(es);
	return der;
}

int
jwt_verify_sig(const struct jwt *t, const struct jwt_key *k,
    const char **why)
{
	EVP_MD_CTX	*mctx = NULL;
	EVP_PKEY_CTX	*pctx = NULL;
	const char	*md = NULL;
	unsigned char	*der = NULL;
	const unsigned char *sig = t->jt_sig;
	size_t		 siglen = t->jt_siglen;
	int		 derlen = 0, rc = -1;

	*why = "the token's algorithm does not match its key";
	if (k->jk_rsa ? !(k->jk_any_rsa ? t->jt_alg >= JWT_RS256 &&
	    t->jt_alg <= JWT_PS256 : t->jt_alg == k->jk_alg) :
	    t->jt_alg != k->jk_alg)
		return -1;
	switch (t->jt_alg) {
	case JWT_RS256:
	case JWT_PS256:
	case JWT_ES256:
		md = "SHA256";
		break;
	case JWT_RS384:
	case JWT_ES384:
		md = "SHA384";
		break;
	case JWT_RS512:
		md = "SHA512";
		break;
	case JWT_EDDSA:
		md = NULL;
		break;
	default:
		return -1;
	}
	*why = "bad signature";
	if (t->jt_alg == JWT_ES256 || t->jt_alg == JWT_ES384) {
		if ((der = jwt_ecdsa_der(t->jt_sig, t->jt_siglen,
		    t->jt_alg == JWT_ES256 ? 32 : 48, &derlen)) == NULL)
			return -1;
		sig = der;
		siglen = (size_t)derlen;
	}
	if ((mctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit_ex(mctx, &pctx, md, NULL, NULL, k->jk_pkey,
	    NULL) != 1)
		goto done;
	/* RFC 7518 3.5: PSS with MGF1 of the same hash, salt its size */
	if (t->jt_alg == JWT_PS256 &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) <=
	    0))
		goto done;
	if (EVP_DigestVerify(mctx, sig, siglen,
	    (const unsigned char *)t->jt_input, t->jt_inputlen) == 1)
		rc = 0;
done:
	EVP_MD_CTX_free(mctx);
	OPENSSL_free(der);
	return rc;
}

/* a NumericDate (RFC 7519 2): an integer, or a real without fraction */
static int
jwt_numeric_date(const json_t *v, int64_t *out)
{
	double	 d;

	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (!isfinite(d) || d < -9e15 || d > 9e15)
			return -1;
		*out = (int64_t)d;
		return 0;
	}
	return -1;
}

int
jwt_check_claims(const json_t *c, const struct jwt_policy *p, int64_t *exp,
    const char **why)
{
	const json_t	*aud, *v, *sub;
	const char	*iss;
	int64_t		 t;
	size_t		 i;
	int		 found = 0;

	iss = json_string_value(json_object_get(c, "iss"));
	if (iss == NULL || strcmp(iss, p->jp_issuer) != 0) {
		*why = "the token's issuer is not the one configured";
		return -1;
	}
	aud = json_object_get(c, "aud");
	if (json_is_string(aud))
		found = strcmp(json_string_value(aud), p->jp_audience) == 0;
	else if (json_is_array(aud))
		json_array_foreach(aud, i, v)
			if (json_is_string(v) && strcmp(json_string_value(v),
			    p->jp_audience) == 0)
				found = 1;
	if (!found) {
		*why = "the token is not for this server (audience)";
		return -1;
	}
	if (jwt_numeric_date(json_object_get(c, "exp"), exp) == -1) {
		*why = "the token has no valid exp";
		return -1;
	}
	if (p->jp_now >= *exp + p->jp_skew) {
		*why = "the token has expired";
		return -1;
	}
	if ((v = json_object_get(c, "nbf")) != NULL &&
	    (jwt_numeric_date(v, &t) == -1 || p->jp_now + p->jp_skew < t)) {
		*why = "the token is not valid yet (nbf)";
		return -1;
	}
	if ((v = json_object_get(c, "iat")) != NULL &&
	    (jwt_numeric_date(v, &t) == -1 || p->jp_now + p->jp_skew < t)) {
		*why = "the token was issued in the future (iat)";
		return -1;
	}
	sub = json_object_get(c, "sub");
	if (!json_is_string(sub) || json_string_length(sub) == 0 ||
	    strlen(json_string_value(sub)) != json_string_length(sub)) {
		*why = "the token has no subject (sub)";
		return -1;
	}
	/* it names the principal in keys and logs: bounded, and said so */
	if (json_string_length(sub) > JWT_SUB_MAX) {
		*why = "the token's subject (sub) is too long (over "
		    JWT_XSTR(JWT_SUB_MAX) " bytes)";
		return -1;
	}
	return 0;
}
