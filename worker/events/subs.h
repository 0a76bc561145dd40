/*
 * Resource subscriptions (subs.c; docs/ARCHITECTURE.md, Resource
 * subscriptions): who holds which (backend, URI), in the store's subs
 * db (shared/store_subs.c, shared/subs_rec.h), and the backend
 * subscriptions made from that, one per (backend, URI) however many
 * subscriptions/listen streams and Legacy sessions hold it.
 *
 * Every worker records and releases the holdings of its own streams and
 * sessions; worker 0, whose listeners hear the backends (notify.c),
 * makes and ends the backend subscriptions from the marks the holdings
 * leave, a bounded number of calls at a time, and sweeps the holdings
 * of workers that died.
 */
#ifndef VMCPD_SUBS_H
#define VMCPD_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/proto.h"
#include "shared/subs_rec.h"

struct worker;
struct httpd_req;
struct config_backend;
struct store_rec;

#define SUBS_GROUP_MAX	64	/* a principal's scope, or an address */
#define SUBS_LIMITED	1	/* subs_hold(): the principal's cap */

struct subs_want {
	const struct config_backend	*sw_be;
	const char			*sw_uri;
};

int	 subs_init(struct worker *);
void	 subs_stop(struct worker *);	/* a drain: worker 0 stops making */
void	 subs_free(struct worker *);

/*
 * A refusal at a cap: the JSON-RPC code (*code), the message naming the
 * limit (msg) and the error's data ({"limit": key, "max": n}, a new
 * reference).  n: the URIs a listen names, or a session holds.
 */
enum subs_cap {
	SUBS_CAP_LISTEN = 0,	/* sessions.maxSubscriptions, a listen */
	SUBS_CAP_SESSION,	/* the same, a Legacy session */
	SUBS_CAP_PRINCIPAL	/* sessions.maxSubscriptionsPerPrincipal */
};
json_t	*subs_refusal(struct worker *, enum subs_cap, size_t n, int *code,
	    char *msg, size_t msglen);

/* the group a request's subscriptions count in: its principal, or an
 * anonymous client's address (as sessions.maxPerAddress): 0, or -1 */
int	 subs_group(struct httpd_req *, char *buf, size_t len);
/* a new subscriptions/listen stream's holder id: 0, or -1 */
int	 subs_listen_holder(struct worker *, char *buf, size_t len);

/*
 * Hold n (backend, URI) pairs for holder, counted in group under
 * sessions.maxSubscriptionsPerPrincipal: 0, SUBS_LIMITED (nothing
 * held), or -1.  expires_ms: a Legacy session's last possible moment
 * (0: none; a listen stream's go when it closes or its worker dies).
 */
int	 subs_hold(struct worker *, const char *holder, const char *group,
	    const struct subs_want *, size_t n, uint64_t expires_ms);
/* release holder's holdings (of uri only, if not NULL): a batch now,
 * the rest on the next turns */
void	 subs_release(struct worker *, const char *holder, const char *uri);
/* a Legacy session ended (DELETE, expiry): its holdings released */
void	 subs_session_end(struct worker *, const char *sid);
/* the subscription of (be, uri) is made on the scope session the
 * listener hears now: 1, else 0 */
int	 subs_made(struct worker *, const struct config_backend *,
	    const char *uri);
/* a Legacy client's subscribe of (be, uri) goes to the scope session
 * now: recorded made there first, as worker 0 records its own */
void	 subs_made_now(struct worker *, const struct config_backend *,
	    const char *uri);
/* each Legacy session holding uri (with any backend) */
void	 subs_sessions(struct worker *, const char *uri,
	    void (*cb)(void *, const char *sid), void *arg);
/* the URIs held of be (an array), for a 2026-07-28 backend's listen */
json_t	*subs_wanted(struct worker *, const struct config_backend *);

/* worker 0's listener of be: its stream is up (its era; the scope
 * session, for 2025-11-25), or down */
void	 subs_listener_up(struct worker *, const struct config_backend *,
	    enum proto_era, const char *bsid);
void	 subs_listener_down(struct worker *, const struct config_backend *);
/* WAKE_RESUBSCRIBE: marks to look at (worker 0) */
void	 subs_wake(struct worker *);
/* backend_session_close.c: a record from the closing queue: 0 if it was a holding's
 * (handled here), -1 if not */
int	 subs_closing(struct worker *, const void *key, size_t klen,
	    const struct store_rec *);

#endif /* VMCPD_SUBS_H */
