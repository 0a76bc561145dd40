/*
 * Incoming authentication (incomingAuth): who sent a request to /mcp.
 * With type oidc every request carries a bearer access token (RFC 6750
 * 2.1; never in the query string), verified against the issuer's JWKS
 * (shared/jwt.c; keys shared by the workers through the store's keys
 * db) or, for an opaque token, by RFC 7662 introspection.  With type
 * local (a Unix socket listen) it is the peer's user.  The verified
 * identity, a struct principal, hangs on the request until it ends:
 * auth_principal() for the policy gate, auth_scope() for what is bound
 * to a principal (Legacy sessions).
 */
#ifndef VMCPD_AUTH_H
#define VMCPD_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct worker;
struct httpd_req;

/* hex of the first 128 bits of SHA-256(iss NUL sub) */
#define AUTH_SCOPE_LEN	32

struct principal {
	int		 p_refs;
	char		*p_iss;
	char		*p_sub;		/* unique per issuer only */
	json_t		*p_claims;	/* the verified claims */
	char		 p_scope[AUTH_SCOPE_LEN + 1];
	int64_t		 p_exp;		/* seconds since the epoch */
};

enum auth_verdict {
	AUTH_GO = 0,		/* go on: identity attached (or anonymous) */
	AUTH_ANSWERED,		/* refused: the answer is sent */
	AUTH_LATER		/* waiting on keys or introspection: cont()
				 * runs later, or the request is answered */
};

typedef void	(*auth_cont_fn)(struct worker *, struct httpd_req *);

int	 auth_init(struct worker *);
void	 auth_free(void);
/* a request to /mcp: AUTH_GO, AUTH_ANSWERED or AUTH_LATER */
int	 auth_request(struct worker *, struct httpd_req *, auth_cont_fn);
/* the RFC 9728 documents: 1 if path is one (answered), else 0 */
int	 auth_well_known(struct worker *, struct httpd_req *,
	    const char *path);
/*
 * An OpenID Connect ID token (Core 3.1.3.7) of the clients' issuer, got
 * by vmcpd's own login of a person (worker/link): its signature under
 * the issuer's keys, iss, aud holding client_id, exp; 0 with its
 * principal scope, or -1 with why (a fixed text; -2: no keys yet, try
 * again).
 */
int	 auth_id_token(struct worker *, const char *tok, const char *client_id,
	    char scope[AUTH_SCOPE_LEN + 1], const char **why);
/* the same, and its verified claims (a new reference) into *claims */
int	 auth_id_claims(struct worker *, const char *tok,
	    const char *client_id, char scope[AUTH_SCOPE_LEN + 1],
	    json_t **claims, const char **why);
/* the request's principal, or NULL (anonymous) */
const struct principal *auth_principal(const struct httpd_req *);
/* the request's principal held past the request (a composite run's),
 * or NULL (anonymous); auth_principal_drop() lets it go */
struct principal *auth_principal_hold(const struct httpd_req *);
void	 auth_principal_drop(struct principal *);
/* the request's principal scope, "" for anonymous */
const char *auth_scope(const struct httpd_req *);
/* a and b name the same principal scope (constant time) */
int	 auth_scope_eq(const char *a, const char *b);
void	 auth_scope_of(const char *iss, const char *sub,
	    char out[AUTH_SCOPE_LEN + 1]);
/* the JWKS refresh interval a Cache-Control value asks for (bounded) */
uint64_t auth_refresh_ms(const char *cache_control);

/*
 * The worker's cache of checked tokens (auth_cache.c): a principal under
 * the bytes of the token it was checked for, found only by those very
 * bytes; NULL from auth_cache_new(): no memory or randomness.  get
 * drops an entry expired at now (seconds); put holds a reference of p.
 */
struct auth_cache;
struct auth_cache *auth_cache_new(void);
void	 auth_cache_free(struct auth_cache *);
struct principal *auth_cache_get(struct auth_cache *, const char *key,
	    size_t len, int64_t now);
void	 auth_cache_put(struct auth_cache *, const char *key, size_t len,
	    struct principal *);
/* SipHash-1-3 under the key (k0, k1), each little-endian */
uint64_t auth_siphash(uint64_t k0, uint64_t k1, const void *, size_t);

#endif
