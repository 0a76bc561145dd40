/*
 * backend.c, backend_http.c: the transport to backends.  POST a
 * JSON-RPC body with these headers to a backend (its URL, or its
 * bridge's Unix socket), read the answer (JSON or an SSE stream,
 * resumed after a cut), GET its standalone stream, DELETE a session.
 * Which revision, which session and what to do when it fails is
 * upstream.c's.
 */
#ifndef VMCPD_BACKEND_H
#define VMCPD_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct worker;
struct config_backend;
struct backend_call;
struct http_call;
struct http_call_cbs;
struct proto_span;
struct trace_span;
struct trace_ref;

struct backend_call_cbs {
	/* a notification the backend sent mid-call (borrowed) */
	void	(*bc_message)(void *arg, json_t *msg);
	/*
	 * A request the backend sent mid-call (elicitation, sampling,
	 * roots), on backend session bsid: return 0 when relayed (the
	 * answer goes back with backend_post_nowait()), or -1 with why
	 * (the backend then gets that refusal).  May be NULL.
	 */
	int	(*bc_request)(void *arg, json_t *msg, const char *bsid,
		    char *why, size_t whylen);
	/*
	 * Once: rc 0 with the backend's JSON-RPC response (borrowed;
	 * result or error) or rc -1 with errmsg, and then with the error
	 * response of a non-2xx body if there was one (else NULL).  flags:
	 * BACKEND_F_LOST when the backend no longer knows the session
	 * (404, or 400 naming it), BACKEND_F_REFUSED for an HTTP 4xx that
	 * turned the request away unrun (not 408 or 429), BACKEND_F_BUDGET
	 * for an answer this worker refused to buffer (errmsg names the
	 * limit).
	 */
	void	(*bc_done)(void *arg, int rc, json_t *response, int flags,
		    const char *errmsg);
	/*
	 * Optional, instead of bc_done for a well-formed final answer: the
	 * text of its "result" or "error" (kind), valid JSON, to be passed
	 * on as it is; with bc_raw_members, a result's members as scanned
	 * (mem[nmem]), else (or if not sure of them) NULL.
	 */
	void	(*bc_done_raw)(void *arg, const char *kind, const char *json,
		    size_t len, const struct proto_span *mem, size_t nmem);
	/* 1: the result's members are read, found in the answer's scan */
	int	bc_raw_members;
	/*
	 * Optional: the backend ended its SSE stream before the response
	 * (SEP-1699 polling); the call resumes it after retry_ms itself.
	 */
	void	(*bc_cut)(void *arg, long retry_ms);
};

#define BACKEND_F_LOST		0x01
#define BACKEND_F_REFUSED	0x02
/* refused here: buffering it would pass operational.answerBuffer */
#define BACKEND_F_BUDGET	0x04
/* the most members of a result bc_done_raw gives (else mem is NULL) */
#define BACKEND_RESULT_MEMBERS	32

/* a message whose answer nobody waits for: a response, a notification */
void	 backend_post_nowait(struct worker *, const struct config_backend *,
	    const char *bsid, const char *version, json_t *msg);
/* the same, started, with cbs told when it is through; NULL: not sent */
struct http_call *backend_post_start(struct worker *,
	    const struct config_backend *, const char *bsid,
	    const char *version, json_t *msg, const struct http_call_cbs *,
	    void *arg);
int	 backend_notify(struct worker *, const struct config_backend *,
	    const char *bsid, const char *version, const char *method,
	    json_t *params);
void	 backend_call_cancel(struct backend_call *);
/* cancel, and tell the backend (reason may be NULL) */
void	 backend_call_abort(struct backend_call *, const char *reason);
void	 backend_free_all(struct worker *);
int	 backend_session_delete(struct worker *, const struct config_backend *,
	    const char *bsid, const char *version, uint64_t timeout_ms,
	    const struct http_call_cbs *, void *arg);
/* an unstarted GET of the backend's standalone SSE stream */
struct http_call *backend_get_stream(struct worker *,
	    const struct config_backend *, const char *bsid,
	    const char *version, const char *last_event_id);
/* the cached initialize result of a backend (caps etc.), or NULL */
json_t	*backend_info_get(struct worker *, const struct config_backend *);
void	 backend_info_put(struct worker *, const struct config_backend *,
	    const char *version, json_t *init_result);

/* a streamable-http backend's CA bundle and outgoingAuth credential */
/* the Authorization the next request takes (token_exchange), or NULL */
void	 backend_cred_set(const char *);
const char *backend_cred_get(void);
int	 backend_http_setup(struct http_call *,
	    const struct config_backend *);

/* one POST: our request id (in the body too), the body, and headers */
struct backend_hdr {
	const char	*bh_name;
	const char	*bh_value;
};

struct backend_req {
	const char			*br_id;
	const char			*br_body;
	size_t				 br_len;
	const char			*br_bsid;	/* Mcp-Session-Id, or NULL */
	const char			*br_version;	/* MCP-Protocol-Version */
	const struct backend_hdr	*br_hdrs;
	size_t				 br_nhdrs;
	const char			*br_method;	/* the body's */
	/*
	 * Tracing (worker/trace/trace.h): its CLIENT span, taken by
	 * backend_post() (ended with the call); with none, and
	 * br_spanned not set, one is made under br_trace (NULL: a new
	 * trace).  br_spanned: the caller made the span (or wanted none).
	 */
	struct trace_span		*br_span;
	const struct trace_ref		*br_trace;
	int				 br_spanned;
};

/*
 * A CLIENT span for a request of method to be (NULL: not sampled),
 * under parent; target (tlen bytes, or NULL) in its name and as key.
 */
struct trace_span *backend_trace_begin(const struct config_backend *,
	    const struct trace_ref *parent, const char *method,
	    const char *key, const char *target, size_t tlen);
/* the trace context's headers on hc (s's, else parent's; none: none) */
int	 backend_trace_headers(struct http_call *, const struct trace_span *,
	    const struct trace_ref *parent);
/* a span's outcome: rc -1 a failure (errmsg), else the HTTP status */
void	 backend_trace_done(struct trace_span *, int rc, long status,
	    const char *errmsg);
/* its end (NULL: none); not finished: cancelled */
void	 backend_trace_end(struct trace_span *, int finished);

#define BACKEND_ID_MAX	64
/* our next request id, "vmcpd-<pid>-<seq>": unique across workers */
void	 backend_next_id(struct worker *, char *buf, size_t size);
struct backend_call *backend_post(struct worker *,
	    const struct config_backend *, const struct backend_req *,
	    const struct backend_call_cbs *, void *arg);
/* the session id the backend answered under (or was sent), or NULL */
const char *backend_call_session(const struct backend_call *);
/* an unstarted POST whose answer is a long-lived stream */
struct http_call *backend_post_stream(struct worker *,
	    const struct config_backend *, const struct backend_req *);

#endif /* VMCPD_BACKEND_H */
