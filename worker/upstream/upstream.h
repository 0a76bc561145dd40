/*
 * The one backend edge (upstream.c): every request vmcpd sends a
 * backend goes through here, whoever asks (the Legacy and Modern client
 * edges, the view fetches, the notification listener).  One call says
 * "send METHOD with these params to BACKEND for this identity scope
 * (and this client session)"; the edge resolves the revision it goes
 * in (eras.c), opens or reuses the backend session, builds the request
 * through a per-revision table of hooks (as nginx's upstream module
 * takes create_request / process_header / finalize_request from each
 * protocol module), corrects the era record and retries once where
 * nothing ran, and calls back once with a domain result.  backend.c
 * below it is the transport alone.
 */
#ifndef VMCPD_UPSTREAM_H
#define VMCPD_UPSTREAM_H

#include <jansson.h>

#include "proto/proto.h"

struct worker;
struct config_backend;
struct session;
struct upstream;
struct upstream_cbs;	/* upstream_result.h */
struct trace_ref;

/* an identity scope: "anon", or a principal's (hex, auth.h) */
#define UPSTREAM_SCOPE_MAX	64

struct upstream_req {
	const char		*uq_method;
	const char		*uq_scope;	/* identity scope, kept */
	/* the Legacy client's session, whose own backend sessions its
	 * requests go over (NULL: the scope's, as a Modern client's,
	 * lists and notifications) */
	struct session		*uq_sess;
	enum proto_era		 uq_client;	/* ERA_LISTING: lists */
	/* the Legacy client's capabilities, declared when its backend
	 * session is opened (what vmcpd can relay to it) */
	const json_t		*uq_caps;
	int			 uq_flags;
	/* the trace context its CLIENT span is made under (copied), or
	 * NULL: a new trace (worker/trace/trace.h) */
	const struct trace_ref	*uq_trace;
	/* optional: the backend ended its stream before answering and is
	 * resumed after retry_ms (backend.h, bc_cut); called with arg */
	void			(*uq_cut)(void *arg, long retry_ms);
};

#define UPSTREAM_F_TEXT		0x01	/* the answer as text if it can */
/*
 * resources/(un)subscribe, made where the notification listener listens
 * (uq_client ERA_LISTING): 2025-11-25, on the scope's session if one is
 * open (else the client session's); 2026-07-28 has no such request, its
 * listen stream asks for the URIs anew (notify_resubscribe()) and the
 * call completes with {}
 */
#define UPSTREAM_F_SUBSCRIPTION	0x02
/* not a request: the backend's description (its initialize or
 * server/discover result), cached when there is one */
#define UPSTREAM_F_DESCRIBE	0x04
/* a health probe (the builder's): uq_method "ping" goes as
 * server/discover in 2026-07-28; the circuit breaker neither gates nor
 * counts it (its outcome is the probe's, health_probe_record()) */
#define UPSTREAM_F_PROBE	0x08

/* NULL: failed at once (no memory, cannot send); no callback then */
struct upstream *upstream_call(struct worker *, const struct config_backend *,
	    const struct upstream_req *, const struct upstream_cbs *,
	    void *arg);
/* no callback after either, whatever state the call is in; abort also
 * tells the backend where its revision can (reason may be NULL) */
void	 upstream_cancel(struct upstream *);
void	 upstream_abort(struct upstream *, const char *reason);
void	 upstream_free_all(struct worker *);

/* messages whose answer nobody waits for, on a known backend session */
void	 upstream_post(struct worker *, const struct config_backend *,
	    const char *bsid, const char *version, json_t *msg);
int	 upstream_notify(struct worker *, const struct config_backend *,
	    const char *bsid, const char *version, const char *method,
	    json_t *params);
/* a request whose answer nobody waits for (logging/setLevel) */
int	 upstream_request_nowait(struct worker *,
	    const struct config_backend *, const char *bsid,
	    const char *version, const char *method, json_t *params);

/*
 * token_exchange: the credential of backend session bsid (its
 * principal's) for the next request made to be (a DELETE); then
 * upstream_cred_done().  No-op for other backends.
 */
void	 upstream_cred_for(struct worker *, const struct config_backend *,
	    const char *bsid);
void	 upstream_cred_done(void);

/* vmcpd's clientInfo, as the client of a backend */
json_t	*upstream_client_info(void);

#endif /* VMCPD_UPSTREAM_H */
