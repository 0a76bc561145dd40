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

#include <stddef.h>

#include <jansson.h>

#include "proto/proto.h"

struct worker;
struct config_backend;
struct session;
struct http_call;
struct http_call_cbs;
struct upstream;

enum upstream_status {
	UPSTREAM_COMPLETE = 0,		/* a result */
	UPSTREAM_INPUT_REQUIRED,	/* a 2026-07-28 result asking input */
	UPSTREAM_ERROR,			/* the backend's JSON-RPC error */
	/* no answer, or an invalid one (a 2026-07-28 resultType the
	 * backend may not give): ur_errmsg says why */
	UPSTREAM_FAILED
};

struct upstream_result {
	enum upstream_status	 ur_status;
	enum proto_era		 ur_era;	/* the revision it went in */
	/* UPSTREAM_F_TEXT and a well-formed answer: the text of its
	 * "result" or "error" (ur_kind), JSON to pass on as it is */
	const char		*ur_kind;
	const char		*ur_text;
	size_t			 ur_len;
	/* a result's text: its members, as scanned (NULL: too many, or
	 * not known) */
	const struct proto_span	*ur_members;
	size_t			 ur_nmembers;
	/* else the JSON-RPC response (borrowed), or NULL */
	json_t			*ur_response;
	const char		*ur_errmsg;	/* UPSTREAM_FAILED */
};

/*
 * The params of a call as the caller builds them for revision era (its
 * create_request): a tree (up_tree, taken) or text (up_text, borrowed
 * for the call's life, or up_owned, taken).  For 2026-07-28 a tree gets
 * this hop's _meta here (up_caps mirrored, up_level); text must carry
 * it already.
 */
struct upstream_params {
	json_t		*up_tree;
	const char	*up_text;
	char		*up_owned;
	size_t		 up_len;
	/* 2026-07-28 headers: Mcp-Name's value unless the tree names it,
	 * and the Mcp-Param-* values (name -> string), borrowed */
	const char	*up_name;
	size_t		 up_namelen;
	const json_t	*up_phdrs;
	const json_t	*up_caps;
	const char	*up_level;
};

struct upstream_cbs {
	/* create_request: -1 fails the call (no memory, body gone) */
	int	(*uc_params)(void *arg, enum proto_era era,
		    struct upstream_params *);
	/*
	 * What the backend sends mid-call: a notification (progress, a
	 * log message) or a request for the client (elicitation,
	 * sampling, roots) on backend session bsid in revision version.
	 * 0: relayed (a request's answer goes back with upstream_post()),
	 * -1 with why: the backend gets that refusal.  May be NULL.
	 */
	int	(*uc_push)(void *arg, json_t *msg, const char *bsid,
		    const char *version, char *why, size_t whylen);
	/* once, unless cancelled */
	void	(*uc_done)(void *arg, const struct upstream_result *);
};

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
 * A backend's notification stream for a scope: the standalone GET of
 * its scope session (2025-11-25), or a subscriptions/listen POST with
 * params (2026-07-28).  cbs get the HTTP call's events as they come;
 * upstream_stream_ended() reads the outcome (a session the backend
 * forgot is forgotten, a refused listen has its era probed again).
 */
enum upstream_stream_end {
	UPSTREAM_END_RETRY = 0,		/* back off and reconnect */
	UPSTREAM_END_NO_STREAM		/* the backend offers none (405, 404) */
};
/* NULL: failed at once; later failures come to hc_done (hc NULL) */
struct upstream *upstream_stream(struct worker *,
	    const struct config_backend *, const char *scope,
	    const json_t *params, const struct http_call_cbs *, void *arg);
/* from hc_done: what the end means; frees the stream's upstream */
enum upstream_stream_end upstream_stream_ended(struct upstream *,
	    long status);
/* a stream's era (PROTO_ERA_UNKNOWN until it is known) */
enum proto_era upstream_era(const struct upstream *);
/* answer a request that came on the stream, on its session */
void	 upstream_stream_reply(struct upstream *, json_t *msg);

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
/* a response (the tree, or the text parsed): a new reference, or NULL */
json_t	*upstream_response(const struct upstream_result *);

/* the decisions, pure, for unit tests (test_upstream.c) */
enum upstream_next {
	UPSTREAM_DELIVER = 0,	/* the outcome goes to the caller */
	UPSTREAM_REOPEN,	/* the session was lost: open anew, resend */
	UPSTREAM_REPROBE	/* not 2026-07-28 after all: probe, resend */
};
enum upstream_next upstream_next_step(enum proto_era era, int failed,
	    int flags, const json_t *response, int retried);
enum upstream_status upstream_classify(enum proto_era era, int failed,
	    const json_t *response, const char *kind, const char *rtype,
	    size_t rtlen, const char *method, int *was_legacy,
	    const char **invalid);

/*
 * What the backend edge tells the parts above it, which it never calls
 * by name (worker.c sets these once; a NULL member: nobody listens):
 * a 2026-07-28 backend's subscribe (its listen stream asks anew), an
 * ended record of the closing queue that is a subscription's (0: taken),
 * and a client session ended (its subscriptions go).
 */
struct store_rec;
struct upstream_hooks {
	void	(*uh_resubscribe)(struct worker *,
		    const struct config_backend *);
	int	(*uh_closing)(struct worker *, const void *key, size_t klen,
		    const struct store_rec *);
	void	(*uh_session_end)(struct worker *, const char *sid);
};
extern struct upstream_hooks upstream_hooks;

#endif /* VMCPD_UPSTREAM_H */
