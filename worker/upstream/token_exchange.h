/*
 * outgoingAuth token_exchange (RFC 8693): the client's access token is
 * exchanged at the backend's tokenUrl for a token the backend takes.
 *
 * A request with a principal, when some backend uses token_exchange,
 * first makes sure the store's tokens db holds that principal's token
 * for each such backend (texch_request(); one exchange in flight per
 * key across the workers, a lock record as the JWKS fetch's).  The
 * upstream edge then reads it there for the principal's scope
 * (texch_credential()): the builder, which has no client token, too.
 * A token is sealed at rest (shared/seal.h) under a key only the
 * daemon's memory holds, bound to its record's key.
 */
#ifndef VMCPD_TEXCH_H
#define VMCPD_TEXCH_H

#include <stddef.h>
#include <stdint.h>

struct worker;
struct httpd_req;
struct config_backend;

enum texch_verdict {
	TEXCH_GO = 0,		/* go on now */
	TEXCH_LATER,		/* cont() runs once the exchanges ended */
	TEXCH_ANSWERED		/* refused: the answer is sent */
};

#define TEXCH_KEY_MAX		256
#define TEXCH_AUTHZ_MAX		(16 * 1024)	/* "Bearer " and a token */
#define TEXCH_TOKEN_MAX		(TEXCH_AUTHZ_MAX - 8)
#define TEXCH_MARGIN_MS		(30ULL * 1000)	/* renewed that early */
#define TEXCH_DEFAULT_TTL_S	300	/* an answer without expires_in */
/*
 * A principal holding state (views, backend sessions, tokens) is
 * recorded as "pr|<scope>" in the tokens db, grouped under
 * TEXCH_PRINCIPALS so that sessions.maxPrincipals costs one read; it
 * lasts TEXCH_PRINCIPAL_MS after its last request, as its backend
 * sessions do, and is renewed at most every TEXCH_TOUCH_MS.
 */
#define TEXCH_PRINCIPALS	"principals"
#define TEXCH_PRINCIPAL_MS	(60ULL * 60 * 1000)
#define TEXCH_TOUCH_MS		(60ULL * 1000)

int	 texch_init(struct worker *);
/* once the Redis connection is set up: tokens shared (provider redis) */
void	 texch_init_redis(struct worker *);
void	 texch_free(void);
/* before the request goes on: TEXCH_GO, TEXCH_LATER (then cont), or
 * TEXCH_ANSWERED (a new principal beyond sessions.maxPrincipals) */
int	 texch_request(struct worker *, struct httpd_req *,
	    void (*cont)(struct worker *, struct httpd_req *));
/* the scope of req's view: the principal's when some backend needs
 * its own token (token_exchange, or authorization_code: the person's
 * link), else the shared one (no cost without such backends) */
const char *texch_view_scope(const struct httpd_req *);
/* the backend uses token_exchange */
int	 texch_backend(const struct config_backend *);
/*
 * The Authorization value for be under scope: 0, or -1 with why (which
 * names the backend and never quotes a token)
 */
int	 texch_credential(struct worker *, const struct config_backend *,
	    const char *scope, char *authz, size_t len, char *why,
	    size_t whylen);

/* pure, for unit tests (test_texch.c) */
/* a principal's record expiring at expires_ms is to be renewed now */
int	 texch_principal_stale(uint64_t expires_ms, uint64_t now_ms);
int	 texch_key(char *buf, size_t len, const char *scope,
	    const char *backend, const char *audience, const char *scopes);
uint64_t texch_expiry(uint64_t now_ms, int64_t expires_in_s,
	    int64_t subject_exp_s);
/* an RFC 8693 2.2.1 answer: 0 with the token (malloc'd) and its
 * expires_in (0: not given), or -1 with why (never the token) */
int	 texch_parse(const char *body, size_t len, char **token,
	    int64_t *expires_in, char *why, size_t whylen);

#endif /* VMCPD_TEXCH_H */
