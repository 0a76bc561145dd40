/*
 * Per-user upstream accounts: outgoingAuth type authorization_code
 * (docs/ARCHITECTURE.md, "Linking users' accounts").  A call to such a
 * backend by a principal holding no usable link of its own is not sent:
 * the client is sent to a URL of vmcpd's (URL-mode elicitation), where
 * the person logs in at the clients' identity provider (the same
 * principal, or nothing is linked) and then consents at the backend's
 * authorization server; vmcpd keeps the tokens (link_store.h) and
 * sends them, refreshed, on that principal's calls.
 *
 *	link_web.c	/oauth/start and /oauth/callback on the main
 *			listener, the pages the person sees
 *	link_token.c	the token endpoint: a code's exchange, a refresh
 *			(one in flight per link across workers and nodes)
 *	link_phase.c	the pipeline's credential phase: a link, or a
 *			consent (the codec's rc_consent)
 */
#ifndef VMCPD_LINK_H
#define VMCPD_LINK_H

#include <stddef.h>
#include <stdint.h>

struct config_backend;
struct httpd_req;
struct principal;
struct worker;

/* an access token this close to its expiry is refreshed first */
#define LINK_MARGIN_MS		(60ULL * 1000)
#define LINK_URL_MAX		2048

enum link_state {
	LINK_OK = 0,		/* a usable link: the call goes on */
	LINK_NEEDED,		/* none, or refused upstream: consent */
	LINK_FAILED		/* could not tell (store, upstream down) */
};

typedef void	(*link_state_cb)(void *arg, enum link_state);

/* what /metrics counts (vmcpd_link_*_total{outcome}) */
enum link_count {
	LINKC_CONSENT_STARTED = 0,	/* an elicitation sent */
	LINKC_CONSENT_COMPLETED,	/* a link stored */
	LINKC_CONSENT_REFUSED,		/* denied, wrong person, bad state */
	LINKC_REFRESH_OK,
	LINKC_REFRESH_REFUSED,		/* invalid_grant: consent anew */
	LINKC_REFRESH_FAILED,		/* the server down or garbled */
	LINKC_N
};
void	 link_count(struct worker *, enum link_count);

/* be's outgoingAuth is authorization_code */
int	 link_backend(const struct config_backend *);
int	 link_init(struct worker *);
void	 link_free(void);

/* link_web.c: 1 if path is /oauth/start or /oauth/callback (answered),
 * else 0 */
int	 link_web(struct worker *, struct httpd_req *, const char *path);

/*
 * link_token.c: the link of (scope, be) refreshed with its refresh
 * token, one refresh in flight per link across the workers (and the
 * nodes, with Redis); cb(arg, LINK_OK) once it is stored,
 * LINK_NEEDED when the upstream server refused it (the link is
 * dropped), LINK_FAILED else.  -1: cb will not be called.
 */
int	 link_refresh(struct worker *, const struct config_backend *,
	    const char *scope, link_state_cb, void *arg);
void	 link_refresh_cancel(void *arg);

/*
 * link_phase.c: a new consent for p's call to be (sid: the 2025-11-25
 * session to tell of its completion, or NULL), stored; cb(arg, 0, id,
 * url) with the elicitationId and the URL the person opens, or cb(arg,
 * -1, NULL, NULL).
 */
typedef void	(*consent_new_cb)(void *arg, int rc, const char *id,
		    const char *url);
int	 link_consent_new(struct worker *, const struct principal *,
	    const struct config_backend *, const char *sid, consent_new_cb,
	    void *arg);

#endif /* VMCPD_LINK_H */
