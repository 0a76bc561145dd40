/*
 * A worker process: one libevent loop serving /mcp on the inherited
 * listener.  Nothing here is state another worker needs: sessions and
 * backend session ids live in the store, so any worker can serve any
 * request and a worker crash loses nothing.
 */
#ifndef VMCPD_WORKER_H
#define VMCPD_WORKER_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <stdint.h>
#include <jansson.h>

#include "proto/proto.h"
#include "shared/version.h"
#include "view.h"
#include "shared/stats.h"
#include "worker_main.h"

struct config;
struct config_backend;
struct event;
struct httpd_limits;
struct event_base;
struct httpd;
struct httpd_req;
struct http_call;
struct http_client;
struct store;
struct backend_call;
struct mcp_req;
struct session;
struct wake_msg;

struct worker {
	struct event_base		*w_base;
	struct httpd			*w_httpd;
	struct http_client		*w_hc;
	struct store			*w_store;
	const struct config		*w_conf;
	int				 w_slot;
	unsigned int			 w_gen;
	pid_t				 w_pid;
	int				 w_chan;
	int				 w_listen_fd;
	int				 w_diag_fd;	/* -1: none */
	struct diag_slot		*w_stats;	/* shared, per slot */
	int				 w_nstats;	/* workers' slots */
	int				 w_stat_slot;	/* the one written: the
							 * builder's is w_nstats */
	struct event			*w_chan_ev;
	struct event			*w_sig_term;
	struct event			*w_sig_usr1;
	struct event			*w_drain_ev;
	int				 w_draining;
	size_t				 w_inflight;	/* requests held */
	size_t				 w_unflushed;	/* replies not yet written */
	uint64_t			 w_rpc_seq;	/* backend request ids */
	TAILQ_HEAD(, mcp_req)		 w_reqs;
};

/* worker.c; worker_main() is in worker_main.h */
/*
 * Requests in flight, counted as nginx counts r->main->count: the front
 * holds each /mcp request while its handler runs and releases it when
 * the handler returns; whatever carries the request on past that call
 * (an mcp_req, an mreq, a GET or listen stream) takes its own hold when
 * it is made and releases it when it is freed.  So a synchronous answer
 * releases nothing itself.  A release with nothing held is a bug: it is
 * logged with the place (where), not clamped away.  A draining worker
 * exits when nothing is held and every reply is written.
 */
void	 worker_request_hold(struct worker *);
void	 worker_request_release(struct worker *, const char *where);
void	 worker_reply_flushed(struct worker *);
void	 worker_exit_if_idle(struct worker *);
struct worker *worker_self(void);	/* one worker per process */
/* a zeroed request-sized object: calloc() bypasses malloc's per-thread
 * cache (tcache), malloc() does not */
void	*worker_zalloc(size_t);
void	 worker_process_init(struct worker *, const struct config *,
	    unsigned int gen, int chan_fd, int base_flags,
	    void (*on_signal)(int, short, void *),
	    void (*on_wake)(void *, const struct wake_msg *));

/* http_front.c: the HTTP server (httpd.c) set up, routes, reply helpers */
int	 front_init(struct worker *);
void	 front_limits(const struct config *, struct httpd_limits *);
void	 front_drain(struct worker *, int stop);
size_t	 front_nconns(struct worker *);
int	 front_host_ok(struct worker *, struct httpd_req *);
/* front_host_ok(), or 0 with the request answered 403 */
int	 front_host_check(struct worker *, struct httpd_req *);
void	 front_free(struct worker *);
void	 front_reply_json(struct httpd_req *, int status, json_t *body,
	    const char *session_id);
void	 front_reply_error(struct httpd_req *, int status, json_t *id,
	    int code, const char *message);
void	 front_reply_result(struct httpd_req *, const json_t *id,
	    const char *result, size_t len);
/* {"jsonrpc":"2.0","id":id,kind:json} from text the caller has */
char	*front_compose(const json_t *id, const char *kind, const char *json,
	    size_t len, size_t *outlen);
void	 front_reply_member(struct httpd_req *, const json_t *id,
	    const char *kind, const char *json, size_t len);
int	 front_sse_send_text(struct httpd_req *, const char *id,
	    const char *data, size_t len);
void	 front_sse_keepalive(struct httpd_req *);
void	 front_reply_empty(struct httpd_req *, int status);
/* start an SSE response (200, text/event-stream) with stream timeouts */
void	 front_sse_start(struct httpd_req *, const char *session_id);
int	 front_sse_send(struct httpd_req *, const char *id,
	    const json_t *msg);
void	 front_sse_end(struct httpd_req *);
const char *front_header(struct httpd_req *, const char *name);
/* 0 for GET or HEAD; else a 405 is sent and -1 */
int	 front_get_only(struct httpd_req *);

/* diag.c: the diagnostics listener, /status and /metrics */
int	 diag_init(struct worker *);
void	 diag_drain(struct worker *);
void	 diag_free(struct worker *);
void	 diag_count_request(struct worker *, int mcp);
void	 diag_count_mcp(struct worker *, struct httpd_req *);
void	 diag_tag_method(struct httpd_req *, const struct mcp_method *);
void	 diag_tag_method_header(struct httpd_req *, const char *name);
void	 diag_tag_kind(struct httpd_req *, const char *kind);
void	 diag_tag_error(struct httpd_req *);
void	 diag_count_view_build(struct worker *);
void	 diag_count_era_change(struct worker *);
void	 diag_count_ratelimit_fail_open(struct worker *);
void	 diag_count_redis_error(struct worker *);
void	 diag_count_session_check(struct worker *, int sent);
void	 diag_count_session_inval(struct worker *);
/* a principal's backend session closed: evicted by the cap, or idle */
void	 diag_count_bsession_end(struct worker *,
	    const struct config_backend *, int evicted);
uint64_t diag_backend_start(void);
void	 diag_count_list_changed(struct worker *,
	    const struct config_backend *);
uint64_t diag_list_changes(struct worker *, const struct config_backend *);
void	 diag_count_relist(struct worker *, const struct config_backend *,
	    int storm, unsigned int interval_ms);
void	 diag_answer_bytes(struct worker *, const struct config_backend *,
	    size_t);
void	 diag_count_answer_refused(struct worker *,
	    const struct config_backend *, int budget);
void	 diag_backend_done(struct worker *, const struct config_backend *,
	    uint64_t start, int rc, long status, const char *errmsg);
const char *front_param_header(void *req, const char *name);
const char *front_params_text(struct httpd_req *, size_t *len);

/* core.c: the era-free core, pure functions on the view */
enum core_kind {
	CORE_OTHER = 0,
	CORE_LIST,		/* answered from the view */
	CORE_ROUTE		/* forwarded to one backend */
};

struct core_err {
	int	ce_code;
	char	ce_msg[512];
};

enum core_kind core_method_kind(const char *method);
/* a list page as result text: Legacy, or 2026-07-28 with server_info;
 * authz (NULL: none) filters its items per principal (worker/authz.h) */
struct authz_filter;
int	 core_list(json_t *view, const char *method, json_t *params,
	    size_t pagesize, const json_t *server_info,
	    struct authz_filter *authz, char **text, size_t *len,
	    struct core_err *);
int	 core_route(json_t *view, const struct config *, const char *method,
	    json_t *params, const struct config_backend **be,
	    json_t **bparams, struct core_err *);
/* tools/call by the name alone (name need not be NUL-terminated) */
int	 core_route_tool(json_t *view, const struct config *,
	    const char *name, size_t namelen,
	    const struct config_backend **be, const char **own,
	    struct core_err *);
json_t	*core_capabilities(json_t *view, int logging);
/*
 * caps (core_capabilities()) cut to what the principal of authz (NULL:
 * none, caps stay) may use, as its lists show it: prompts when it may
 * see a prompt, resources a resource or a template, completions either;
 * tools stay (tools/list always answers).
 */
void	 core_capabilities_shown(json_t *caps, json_t *view,
	    struct authz_filter *authz);
/* 1 if the tool core_route_tool() routed last declares x-mcp-header
 * arguments: read with its route, no second look-up */
int	 core_route_has_headers(void);
json_t	*core_tool_headers(json_t *view, const char *name);
void	 core_free(void);
json_t	*core_param_headers(json_t *view, const char *method,
	    const json_t *params, const json_t *bparams);

/* bclose.c: closing the backend sessions of ended client sessions */
int	 bclose_init(struct worker *);
void	 bclose_free(void);
void	 bclose_opened(struct worker *, const struct config_backend *);
void	 bclose_forget(struct worker *, const struct config_backend *);
void	 bclose_session(struct worker *, const struct session *);
void	 bclose_replaced(struct worker *, const struct config_backend *,
	    const char *sid, const char *version);
/* a scope's backend session no record names any more (evicted, or an
 * open that lost a race): closed once its calls are over */
void	 bclose_unheld(struct worker *, const struct config_backend *,
	    const char *sid, const char *version);

/* bsession.c: backend sessions of an identity scope: bsession.h */

/*
 * eras.c: which revision each backend speaks (store "eras" db).  A
 * pinned era (config era:) is used as it is; sse and stdio backends
 * (whose bridges speak 2025-11-25) are Legacy; the others are probed
 * once with server/discover and the outcome shared by all workers.
 */
typedef void (*era_cb)(void *arg, enum proto_era);
/* the backend's record (PROTO_ERA_BOTH: it speaks both), or
 * PROTO_ERA_UNKNOWN */
enum proto_era era_get(struct worker *, const struct config_backend *);
/* the revision a request for a client of era client goes in now
 * (proto_era_pick()), or PROTO_ERA_UNKNOWN: not probed yet */
enum proto_era era_for(struct worker *, const struct config_backend *,
	    enum proto_era client);
/* the revision to use for a client of era client, as era_for(), now
 * (> 0), or 0 with cb called later with it, or -1 (no memory) */
int	 era_resolve(struct worker *, const struct config_backend *,
	    enum proto_era client, era_cb, void *arg);
/* the client era lists and notifications go for: none, so a backend
 * that speaks both is listed and listened to in 2026-07-28 */
#define ERA_LISTING	PROTO_ERA_UNKNOWN
void	 era_resolve_cancel(struct worker *, void *arg);
/* self-healing: a backend that answers as the other era */
void	 era_set(struct worker *, const struct config_backend *,
	    enum proto_era, const char *why);
void	 era_forget(struct worker *, const struct config_backend *,
	    const char *why);
void	 eras_free(void);

/* mrtr.c: a 2026-07-28 backend's input requests put to a Legacy client */
struct mrtr_wait;
/* send one server-to-client request on the client's stream; 0 or -1 */
typedef int (*mrtr_send_cb)(void *arg, json_t *msg);
/* once: the inputResponses (borrowed), or NULL and why */
typedef void (*mrtr_done_cb)(void *arg, json_t *responses, const char *err);
struct mrtr_wait *mrtr_ask(struct worker *, const char *sid,
	    const json_t *client_caps, const json_t *input_requests,
	    mrtr_send_cb, mrtr_done_cb, void *arg, char *why, size_t whylen);
void	 mrtr_cancel(struct mrtr_wait *);
/* rounds of a backend's input_required relayed for one call (as
 * go-sdk's client) */
#define MRTR_ROUNDS	10
/* a backend's input_required result: its inputRequests (an object, or
 * NULL) and requestState (a string, or NULL); -1: neither, or either of
 * the wrong type */
int	 mrtr_input_required(const json_t *result, json_t **irp,
	    json_t **statep);
/*
 * A client's answer: 0 if it was to an input request (taken; the caller
 * answers 202), 1 if not, 2 if req is answered here later (the answer
 * goes through Redis: another node asked).
 */
int	 mrtr_answer(struct worker *, struct httpd_req *, const char *sid,
	    const struct jsonrpc_msg *);
void	 mrtr_wake(struct worker *, const char *id);
/* sessionStorage redis: an answer for id may be in Redis */
void	 mrtr_redis_wake(struct worker *, const char *id);
void	 mrtr_free_all(void);

/*
 * views.c (and view_*.c): the shared aggregated view (store "views" db).  view_get()
 * answers at once from the stored view (one past its freshness starts
 * a rebuild in the background); only the first view of a generation is
 * waited for.  Views are built by the builder process alone
 * (builder.c), which workers ask by wake-ups.  view_refresh() (the
 * builder): a backend changed; cb gets the view built with its lists
 * listed anew.
 */
typedef void (*view_cb)(void *arg, json_t *view, const char *err);
int	 view_get(struct worker *, view_cb, void *arg);
int	 view_get_scope(struct worker *, const char *scope, view_cb,
	    void *arg);
int	 view_refresh(struct worker *, const char *backend, view_cb,
	    void *arg);
void	 view_get_cancel(struct worker *, void *arg);
/* a backend's lists changed: the builder lists it anew (view_refresh()) */
void	 view_changed(struct worker *, const char *backend);
void	 view_changed_soon(struct worker *, const struct config_backend *);
/* active health checks, in the builder (healthcheck.c) */
int	 probe_init(struct worker *);
void	 probe_free(void);
/* probe be now, unless a probe of it is out (verdict_redis.c) */
void	 probe_soon(const struct config_backend *);

/* the view builder (builder.c): this process builds; a worker's asks */
void	 views_builder_init(struct worker *);
void	 views_build_request(struct worker *, const char *key,
	    const char *backend);
/* a worker: the builder stored the view named by key */
void	 views_wake(struct worker *, const char *key);
/* a list can't be answered from view (a backend missing): why, or NULL */
const char *view_incomplete(struct worker *, json_t *view);
json_t	*view_peek(struct worker *);	/* the stored view, or NULL */
/* read in place from view's layout (view.h): 0, VIEW_NO_ROUTE, -1 */
int	 view_page_get(struct worker *, json_t *view,
	    const struct view_page_req *, struct view_page *);
int	 view_route_get(struct worker *, json_t *view, enum view_route_kind,
	    const char *name, size_t namelen, struct view_route *);
int	 view_template_get(struct worker *, json_t *view, const char *uri,
	    int exact, struct view_route *);
/* a listed item's text by its key (*text malloc'd) */
int	 view_item_get(struct worker *, json_t *view, enum view_kind,
	    const char *key, size_t klen, char **text, size_t *tlen);
size_t	 views_page_size(struct worker *);
void	 views_free(void);

/* stream.c: standalone GET streams and delivery to them */
void	 stream_get(struct worker *, struct httpd_req *,
	    struct session *);
int	 stream_publish(struct worker *, const char *sid, const json_t *msg);
void	 stream_terminate(struct worker *, const char *sid);
void	 stream_drain(struct worker *);
void	 stream_wake(struct worker *, const char *sid);
void	 stream_free_all(struct worker *);

/* notify.c: one notification listener per backend (worker 0) */
void	 notify_init(struct worker *);
void	 notify_stop(struct worker *);
void	 notify_free(struct worker *);
void	 notify_fanout(struct worker *, const json_t *msg, const char *uri);
/* sessions and listeners told of each list of view that differs from old */
void	 notify_lists_changed(struct worker *, json_t *old, json_t *view,
	    const char *who);
/* a backend's subscribed URIs changed: worker 0 looks (subs.c) */
void	 notify_resubscribe(struct worker *, const struct config_backend *);
/* worker 0: a 2026-07-28 backend's listen opened anew, its URIs now */
void	 notify_relisten(struct worker *, const struct config_backend *);
/* the builder: backend's lists changed; sessions told if the view did */
void	 notify_refresh(struct worker *, const char *backend);

/* listen.c: subscriptions/listen streams of Modern clients; msg as
 * modern_handle()'s */
void	 listen_start(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg);
void	 listen_deliver(struct worker *, const char *kind, const char *uri);
void	 listen_broadcast(struct worker *, const char *kind, const char *uri);
void	 listen_drain(struct worker *);

/* modern.c: the Modern (2026-07-28) client edge; a request that goes on
 * takes msg (request_start()), else the caller releases it */
void	 modern_free_all(void);
void	 modern_handle(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg);
/* the method table's Modern handler of the requests on the view */
void	 modern_viewed(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg);
/* the hot path of a 2026-07-28 tools/call, off a scan of the body: 0 if
 * it took the request, -1 if not sure (then parse and classify) */
int	 modern_scan_post(struct worker *, struct httpd_req *, const char *,
	    size_t);

/*
 * The hot path's call, taken from a scan of the body (jsonrpc_scan)
 * instead of a tree: params and their name as the client sent them,
 * inside the request's body, which lives as long as the request.
 */
struct legacy_fast {
	const char	*lf_params;	/* NULL: not the fast path */
	size_t		 lf_plen;
	const char	*lf_name;
	size_t		 lf_namelen;
	/* a renamed tool: the params text under the backend's name */
	char		*lf_text;
	char		*lf_own;	/* that name */
};

/* legacy.c: the Legacy (2025-11-25) client edge, entered from the front
 * (http_front.c) with the POST's message parsed and classified; msg as
 * modern_handle()'s */
void	 legacy_post(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg, const struct legacy_fast *);
void	 legacy_get(struct worker *, struct httpd_req *);
void	 legacy_delete(struct worker *, struct httpd_req *);
/* cancel the request id of session sid if held here: 1, else 0 */
int	 legacy_cancel(struct worker *, const char *sid, const json_t *id,
	    const char *reason);

/* cancel.c: a client's notifications/cancelled, on whichever worker */
void	 cancel_request(struct worker *, const char *sid,
	    const json_t *params);
/* WAKE_CANCEL: params as cancel_request() sent them */
void	 cancel_wake(struct worker *, const char *sid, const char *params);


/* session.c: Legacy client session records in the store */
#define SESSION_ID_LEN	43	/* 256 random bits, base64url */

struct session_backend {
	char	*sb_name;
	char	*sb_sid;	/* backend's Mcp-Session-Id, NULL if none */
	char	*sb_version;	/* negotiated with the backend */
};

struct session {
	char			 s_id[SESSION_ID_LEN + 1];
	char			*s_version;	/* negotiated with the client */
	json_t			*s_client_caps;
	json_t			*s_client_info;
	char			*s_owner;	/* "iss\0sub" binding; "" anon */
	char			*s_log_level;	/* logging/setLevel, or NULL */
	json_t			*s_subs;	/* subscribed resource URIs */
	int			 s_initialized;	/* notifications/initialized */
	uint64_t		 s_created_ms;
	uint64_t		 s_seen_ms;
	uint64_t		 s_max_ms;	/* absolute expiry */
	uint64_t		 s_rstamp;	/* the Redis record's version
						 * this copy is, 0: none */
	struct session_backend	*s_backends;
	size_t			 s_nbackends;
	/* session_copy()'s one block: the backends' array and every
	 * string above, freed by session_str_free() only if not in it */
	char			*s_pack;
	size_t			 s_packlen;
};

int	 session_mint_id(char out[SESSION_ID_LEN + 1]);
int	 session_encode(const struct session *, char **buf, size_t *len);
int	 session_decode(const char *buf, size_t len, struct session *);
void	 session_clear(struct session *);
void	 session_str_free(struct session *, char *);
int	 session_holds_backends(const struct session *);
/* STORE_NOTFOUND (1) if absent or expired */
int	 session_load(struct store *, const char *id, uint64_t now_ms,
	    struct session *);
int	 session_save(struct store *, const struct session *, uint64_t ttl_ms,
	    uint64_t now_ms);
struct store_limit;
int	 session_create(struct store *, const struct session *,
	    uint64_t ttl_ms, uint64_t now_ms, const struct store_limit *);
#define SESSION_GROUP_MAX	64	/* "v6 prefix/64" and a NUL */
int	 session_client_group(const struct sockaddr *, socklen_t, char *,
	    size_t);
uint64_t session_copy_stamp(struct store *, const char *id, uint64_t now_ms);
void	 session_copy_gone(struct store *, const char *id, uint64_t now_ms);
int	 session_put_copy(struct store *, const struct session *,
	    uint64_t ttl_ms, uint64_t now_ms);
int	 session_delete(struct store *, const char *id);
void	 session_cache_free(void);
uint64_t session_expiry(const struct session *, uint64_t ttl_ms);
struct session_backend *session_backend_get(struct session *,
	    const char *name);
int	 session_backend_set(struct session *, const char *name,
	    const char *sid, const char *version);

/* backend.c: the transport to backends, in backend.h; upstream.c: the
 * one backend edge every request to a backend goes through, upstream.h */
#include "backend.h"
#include "bsession.h"
#include "upstream.h"

#endif
