/*
 * JWS-signed JWT access tokens (RFC 7515, 7519, 9068) checked against a
 * JWKS (RFC 7517), on OpenSSL 3 and jansson.  Pure: no I/O, no clock
 * (the caller passes the time).  The algorithm is pinned by the key: a
 * JWK's kty/crv (and its alg when it has one) decide which algorithm it
 * verifies, whatever the token's header says; "none" and HS* are never
 * accepted (RFC 8725 3.1, 3.2).
 */
#ifndef VMCPD_JWT_H
#define VMCPD_JWT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JWT_TOKEN_MAX	8192		/* bytes of a compact JWS */
#define JWKS_BODY_MAX	(256 * 1024)	/* bytes of a JWKS document */
#define JWKS_KEYS_MAX	64		/* keys kept of one JWKS */
#define JWT_KID_MAX	256
#define JWT_SUB_MAX	1024		/* bytes of a subject (sub) */
#define JWT_STR(x)	#x
#define JWT_XSTR(x)	JWT_STR(x)	/* a limit's figure in a message */

enum jwt_alg {
	JWT_ALG_BAD = 0,
	JWT_RS256,
	JWT_RS384,
	JWT_RS512,
	JWT_PS256,
	JWT_ES256,
	JWT_ES384,
	JWT_EDDSA
};

struct jwt_key {
	char		 jk_kid[JWT_KID_MAX + 1];
	enum jwt_alg	 jk_alg;	/* the one algorithm it verifies */
	int		 jk_rsa;	/* RS* and PS256 share RSA keys */
	int		 jk_any_rsa;	/* no "alg": any RSA algorithm */
	void		*jk_pkey;	/* EVP_PKEY * */
};

struct jwks {
	struct jwt_key	*jw_keys;
	size_t		 jw_nkeys;
};

/* a token split and decoded; jt_input points into the caller's text */
struct jwt {
	json_t		*jt_header;
	json_t		*jt_claims;
	const char	*jt_kid;	/* in jt_header */
	enum jwt_alg	 jt_alg;
	unsigned char	*jt_sig;
	size_t		 jt_siglen;
	const char	*jt_input;	/* "header.payload", signed */
	size_t		 jt_inputlen;
};

struct jwt_policy {
	const char	*jp_issuer;	/* exact match */
	const char	*jp_audience;	/* "aud" must contain it */
	int64_t		 jp_now;	/* seconds since the epoch */
	int64_t		 jp_skew;	/* seconds of leeway */
};

/*
 * Strict base64url without padding (RFC 7515 2, RFC 4648 5): the
 * alphabet only, no '=', no whitespace, unused trailing bits zero.
 * Returns the decoded length, or -1; out holds at least len * 3 / 4.
 */
long	 jwt_b64url_decode(const char *in, size_t len, unsigned char *out);

/* a JWKS document into keys; keys of no use to us (enc, oct, weak RSA,
 * unknown kty) are skipped.  -1 with *why if none is usable */
int	 jwks_parse(const char *buf, size_t len, struct jwks *,
	    const char **why);
void	 jwks_clear(struct jwks *);
const struct jwt_key *jwks_find(const struct jwks *, const char *kid);

/*
 * Split a compact JWS: -1 when it is not one at all (an opaque token,
 * maybe), -2 when it is one we refuse (alg none or HS*, no kid, crit,
 * nested, too large); *why says which.
 */
int	 jwt_parse(const char *tok, size_t len, struct jwt *,
	    const char **why);
void	 jwt_clear(struct jwt *);
/* the signature under the key, with the key's algorithm: 0 or -1 */
int	 jwt_verify_sig(const struct jwt *, const struct jwt_key *,
	    const char **why);
/* iss, aud, exp, nbf, iat, sub of a token's (or an introspection
 * answer's) claims: 0 with *exp, or -1 with *why (a fixed text) */
int	 jwt_check_claims(const json_t *claims, const struct jwt_policy *,
	    int64_t *exp, const char **why);

#endif
