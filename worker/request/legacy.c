/*
 * The 2025-11-25 client's codec (pipeline.h): MCP 2025-11-25 Streamable
 * HTTP with sessions (MCP 2025-11-25, Transports, Streamable HTTP).  Its
 * request (struct mcp_req) runs through the pipeline with the session
 * phase (the session validated after the authorization gate, as the
 * request found it), the hot path's route by the name's text, the
 * backend call over the client session's backend session, and the
 * answers: the backend's under the client's id (on the call's SSE
 * stream once one is open), errors, the rate limit's tool result.  What
 * client and backend ask each other mid-call is legacy_relay.c's;
 * initialize, GET and DELETE legacy_session.c's.
 */
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>

#include "shared/log.h"
#include "worker/http/httpd.h"
#include "worker/process/counters.h"
#include "proto/meta.h"
#include "proto/headers.h"
#include "proto/http_req.h"
#include "proto/mrequest.h"
#include "worker/http/http_reply.h"
#include "worker/relay/mrtr.h"
#include "worker/request/legacy.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"
#include "worker/request/legacy_req.h"
#include "worker/pipeline/pipeline.h"
#include "worker/composite/composite_run.h"
#include "worker/auth/ratelimit.h"
#include "worker/state/session_redis.h"

static int	legacy_params_load(struct mcp_req *);

static void	legacy_req_destroy(struct request *);

struct mcp_req *
legacy_req_new(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg)
{
	struct mcp_req *mr;

	if ((mr = worker_zalloc(sizeof(*mr))) == NULL) {
		front_reply_error(req, 500, msg->jm_id, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return NULL;
	}
	request_start(&mr->mr_r, w, req, msg, legacy_req_destroy);
	TAILQ_INSERT_TAIL(&w->w_reqs, mr, mr_entry);
	return mr;
}

/* the request is answered (or abandoned): forget it */
void
legacy_req_free(struct mcp_req *mr)
{
	(void)request_finalize(&mr->mr_r, __func__);
}

/* its last hold gone (request_finalize()): its own state freed */
static void
legacy_req_destroy(struct request *r)
{
	struct mcp_req *mr = (struct mcp_req *)r;	/* mr_r is its head */

	composite_run_cancel(mr->mr_r.r_run, "the request ended");
	pipeline_clear(&mr->mr_r);
	session_redis_cancel(mr);
	json_decref(mr->mr_result);
	mrtr_cancel(mr->mr_wait);
	json_decref(mr->mr_state);
	json_decref(mr->mr_responses);
	free(mr->mr_text);
	free(mr->mr_own);
	TAILQ_REMOVE(&mr->mr_r.r_w->w_reqs, mr, mr_entry);
	session_clear(&mr->mr_sess);
	free(mr);
}

/*
 * The request's SSE stream, begun with a priming event (SEP-1699: MCP
 * 2025-11-25, Transports, Resumability): "<tag>-0", the tag naming the
 * stream within the session (stream.c), from which a GET resumes it
 * once vmcpd ended it (legacy_on_cut()).  No tag (no randomness): no
 * priming, and the stream is never cut.
 */
int
legacy_stream_open(struct mcp_req *mr)
{
	char	id[STREAM_TAG_LEN + 8];

	if (mr->mr_r.r_streaming)
		return 0;
	if (mr->mr_r.r_req == NULL)
		return -1;
	front_sse_start(mr->mr_r.r_req, NULL);
	mr->mr_r.r_streaming = 1;
	if (stream_post_tag(mr->mr_tag) == -1) {
		mr->mr_tag[0] = '\0';
		return 0;
	}
	(void)snprintf(id, sizeof(id), "%s-0", mr->mr_tag);
	(void)front_sse_prime(mr->mr_r.r_req, id, -1);
	return 0;
}

/* text of a message on the stream; once cut, kept for its resumption */
static int
legacy_stream_text(struct mcp_req *mr, const char *text, size_t len)
{
	if (mr->mr_cut)
		return stream_post_publish(mr->mr_r.r_w, mr->mr_sid,
		    mr->mr_tag, text, len);
	return front_sse_send_text(mr->mr_r.r_req, NULL, text, len);
}

int
legacy_stream_send(struct mcp_req *mr, const json_t *msg)
{
	char	*text;
	size_t	 len;
	int	 rc;

	if (!mr->mr_cut)
		return front_sse_send(mr->mr_r.r_req, NULL, msg);
	if ((text = jsonrpc_dump(msg, &len)) == NULL)
		return -1;
	rc = legacy_stream_text(mr, text, len);
	free(text);
	return rc;
}

/*
 * The backend ended its stream before its response (SEP-1699 polling)
 * and is resumed by the upstream edge after retry_ms: the client's
 * stream ends likewise, after its priming event and that retry, and
 * what the call still sends is kept in the session's store for the
 * client's GET with Last-Event-ID (stream.c), on any worker.
 */
static void
legacy_on_cut(void *arg, long retry_ms)
{
	struct mcp_req		*mr = arg;
	struct httpd_req	*req = mr->mr_r.r_req;

	/* the params as a tree: the body goes with the connection */
	if (mr->mr_cut || req == NULL || legacy_stream_open(mr) == -1 ||
	    mr->mr_tag[0] == '\0' || legacy_params_load(mr) == -1)
		return;
	(void)front_sse_prime(req, NULL, retry_ms);
	httpd_req_set_close_cb(req, NULL, NULL);
	front_sse_end(req);
	mr->mr_r.r_req = NULL;
	mr->mr_cut = 1;
	log_debug("session %.8s...: the backend cut the stream of its %s; "
	    "so did vmcpd (stream %s)", mr->mr_sid, mr->mr_r.r_msg.jm_method,
	    mr->mr_tag);
}

/*
 * The client closed a primed stream while its call is under way (to a
 * backend, or a composite's run): the call goes on and what it sends is
 * kept as after a cut, for a GET with Last-Event-ID.  0: the request
 * ends, as any whose client is gone.
 */
static int
legacy_detach(struct request *r)
{
	struct mcp_req *mr = (struct mcp_req *)r;	/* mr_r is its head */

	/* the params as a tree: the body goes with the connection */
	if (!r->r_streaming || mr->mr_tag[0] == '\0' || mr->mr_cut ||
	    (r->r_up == NULL && r->r_run == NULL) ||
	    legacy_params_load(mr) == -1)
		return 0;
	mr->mr_cut = 1;
	log_debug("session %.8s... closed the stream of its %s; kept as "
	    "stream %s", mr->mr_sid, r->r_msg.jm_method, mr->mr_tag);
	return 1;
}

/* answer with a JSON-RPC message; on the SSE stream if one is open */
void
legacy_req_reply(struct mcp_req *mr, json_t *msg)
{
	if (mr->mr_cut) {
		(void)legacy_stream_send(mr, msg);
		return;
	}
	if (mr->mr_sse && !mr->mr_initialize)
		(void)legacy_stream_open(mr);
	httpd_req_set_close_cb(mr->mr_r.r_req, NULL, NULL);
	if (mr->mr_r.r_streaming) {
		(void)front_sse_send(mr->mr_r.r_req, NULL, msg);
		front_sse_end(mr->mr_r.r_req);
	} else
		front_reply_json(mr->mr_r.r_req, 200, msg,
		    mr->mr_initialize && mr->mr_sess.s_id[0] != '\0' ?
		    mr->mr_sess.s_id : NULL);
	mr->mr_r.r_req = NULL;
}

/* an error with its own HTTP status, never a session id, and forget it */
void
legacy_req_refuse(struct mcp_req *mr, int status, int code,
    const char *message, json_t *data)
{
	json_t *e;

	if (mr->mr_r.r_streaming || mr->mr_cut) {
		/* its status is sent: on the stream */
		legacy_req_answer(mr, jsonrpc_error_new(mr->mr_r.r_msg.jm_id,
		    code, message, data));
		return;
	}
	e = jsonrpc_error_new(mr->mr_r.r_msg.jm_id, code, message, data);
	httpd_req_set_close_cb(mr->mr_r.r_req, NULL, NULL);
	front_reply_json(mr->mr_r.r_req, status, e, NULL);
	mr->mr_r.r_req = NULL;
	json_decref(e);
	legacy_req_free(mr);
}

void
legacy_req_error(struct mcp_req *mr, int code, const char *message)
{
	json_t *e;

	e = jsonrpc_error_new(mr->mr_r.r_msg.jm_id, code, message, NULL);
	legacy_req_reply(mr, e);
	json_decref(e);
	legacy_req_free(mr);
}

/* answer with msg (taken; NULL: out of memory) and forget the request */
void
legacy_req_answer(struct mcp_req *mr, json_t *msg)
{
	if (msg == NULL) {
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	legacy_req_reply(mr, msg);
	json_decref(msg);
	legacy_req_free(mr);
}

static void
legacy_on_backend_message(struct mcp_req *mr, json_t *msg)
{
	if (!request_note_relayed(msg, 1) || legacy_stream_open(mr) == -1)
		return;
	(void)legacy_stream_send(mr, msg);
}

/* a 2025-11-25 backend's answer, as a tree */
static void
legacy_legacy_done(struct mcp_req *mr, const struct upstream_result *r)
{
	json_t	*response = r->ur_response, *err;
	char	 msg[600];

	if (r->ur_status == UPSTREAM_FAILED) {
		log_warnx("%s for session %.8s...: %s", mr->mr_r.r_msg.jm_method,
		    mr->mr_sid, r->ur_errmsg);
		(void)snprintf(msg, sizeof(msg), "Internal error: %s",
		    r->ur_errmsg);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	/* the backend's answer under the client's id */
	err = json_object_get(response, "error");
	legacy_req_answer(mr, json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0",
	    "id", mr->mr_r.r_msg.jm_id, err != NULL ? "error" : "result",
	    err != NULL ? err : json_object_get(response, "result")));
}

/* what the backend sends mid-call: relayed on this request's stream */
static int
legacy_on_push(void *arg, json_t *msg, const char *bsid, const char *version,
    char *why, size_t whylen)
{
	if (json_object_get(msg, "id") != NULL)
		return legacy_relay_request(arg, msg, bsid, version, why,
		    whylen);
	legacy_on_backend_message(arg, msg);
	return 0;
}

/* the backend's answer as text, under the client's id */
static void
legacy_on_backend_done_raw(struct mcp_req *mr, const char *kind,
    const char *json, size_t len)
{
	char	*msg;
	size_t	 mlen;

	if (mr->mr_sse)
		(void)legacy_stream_open(mr);
	if (!mr->mr_cut)
		httpd_req_set_close_cb(mr->mr_r.r_req, NULL, NULL);
	if (mr->mr_r.r_streaming || mr->mr_cut) {
		if ((msg = front_compose(mr->mr_r.r_msg.jm_id, kind, json, len,
		    &mlen)) != NULL) {
			(void)legacy_stream_text(mr, msg, mlen);
			free(msg);
		}
		if (!mr->mr_cut)
			front_sse_end(mr->mr_r.r_req);
	} else
		front_reply_member(mr->mr_r.r_req, mr->mr_r.r_msg.jm_id, kind, json,
		    len);
	mr->mr_r.r_req = NULL;
	legacy_req_free(mr);
}

/*
 * The client's own text of params, when routing passes them on
 * unchanged: the body the front accepted (front_mcp_post) is still the
 * request's input, and sending it as it is spares dumping it again.
 */
static const char *
legacy_params_text(struct mcp_req *mr, size_t *len)
{
	if (mr->mr_r.r_fast.rf_params != NULL && mr->mr_r.r_req != NULL) {
		*len = mr->mr_r.r_fast.rf_plen;
		return mr->mr_r.r_fast.rf_params;
	}
	if (mr->mr_r.r_req == NULL || mr->mr_r.r_bparams == NULL ||
	    mr->mr_r.r_bparams != mr->mr_r.r_msg.jm_params)
		return NULL;
	return front_params_text(mr->mr_r.r_req, len);
}


/*
 * The request for a 2025-11-25 backend: the client's text if it has it.
 * vmcpd serves no experimental 2025-11-25 tasks (it could not poll one
 * for the client: tasks/get and the rest are -32601), so a task asked
 * for (params.task) is not passed on and the call runs as a plain one:
 * params holding one go as the tree, without it.  The hot path's
 * params hold none (the front's scan declines those).
 */
static int
legacy_params_legacy(struct mcp_req *mr, struct upstream_params *up)
{
	json_t	*p;

	if ((up->up_text = legacy_params_text(mr, &up->up_len)) == NULL &&
	    mr->mr_r.r_fast.rf_params != NULL)
		return -1;	/* the request's body is gone */
	if (mr->mr_r.r_fast.rf_params != NULL ||
	    json_object_get(mr->mr_r.r_bparams, "task") == NULL) {
		up->up_tree = json_incref(mr->mr_r.r_bparams);
		return 0;
	}
	/* off the hot path: the tree is here */
	up->up_text = NULL;
	if ((p = json_copy(mr->mr_r.r_bparams)) == NULL)
		return -1;
	(void)json_object_del(p, "task");
	up->up_tree = p;
	return 0;
}

/* to a 2026-07-28 backend: no backend session, the client's
 * capabilities and log level in this request's _meta, and the input
 * the client gave in the last round */
static int
legacy_params_modern(struct mcp_req *mr, struct upstream_params *up)
{
	json_t	*p, *view;
	int	 fast = mr->mr_r.r_fast.rf_params != NULL;

	if (legacy_params_load(mr) == -1)
		return -1;
	/* routed by name alone: the tool's Mcp-Param-* worked out now */
	if (fast && mr->mr_r.r_phdrs == NULL &&
	    (view = view_peek(mr->mr_r.r_w)) != NULL) {
		mr->mr_r.r_phdrs = core_param_headers(view, mr->mr_r.r_msg.jm_method,
		    mr->mr_r.r_msg.jm_params, mr->mr_r.r_bparams);
		json_decref(view);
	}
	/* no task for a 2025-11-25 client, which could not poll it:
	 * neither asked for (as legacy_params_legacy()) nor declared */
	if (proto_caps_tasks(mr->mr_r.r_caps)) {
		if ((p = proto_caps_without_tasks(mr->mr_r.r_caps)) == NULL)
			return -1;
		json_decref(mr->mr_r.r_caps);
		mr->mr_r.r_caps = p;
	}
	if ((p = json_copy(mr->mr_r.r_bparams)) == NULL)
		return -1;
	up->up_tree = p;
	(void)json_object_del(p, "task");
	if ((mr->mr_responses != NULL && json_object_set(p, "inputResponses",
	    mr->mr_responses) == -1) || (mr->mr_state != NULL &&
	    json_object_set(p, "requestState", mr->mr_state) == -1))
		return -1;
	up->up_caps = mr->mr_r.r_caps;
	up->up_level = mr->mr_sess.s_log_level;
	up->up_phdrs = mr->mr_r.r_phdrs;
	return 0;
}

/* the request in the revision the backend is met in (create_request) */
static int
legacy_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	return era == PROTO_ERA_MODERN ? legacy_params_modern(arg, up) :
	    legacy_params_legacy(arg, up);
}

/*
 * A 2026-07-28 backend's error as a 2025-11-25 client knows it: a
 * resource not found is -32602 with data.uri there, -32002 here (MCP
 * 2025-11-25 and 2026-07-28, Resources, Error Handling).  A new
 * reference.
 */
static json_t *
legacy_error_of_modern(const struct jsonrpc_msg *msg, json_t *err)
{
	json_t	*e, *data = json_object_get(err, "data");

	if (msg->jm_mm == NULL || msg->jm_mm->mm_id != MCP_M_RESOURCES_READ ||
	    json_integer_value(json_object_get(err, "code")) !=
	    JSONRPC_INVALID_PARAMS ||
	    !json_is_string(json_object_get(data, "uri")) ||
	    (e = json_copy(err)) == NULL)
		return json_incref(err);
	(void)json_object_set_new(e, "code",
	    json_integer(MCP_ERR_RESOURCE_NOT_FOUND));
	return e;
}

/* the answer of a 2026-07-28 backend, for a 2025-11-25 client */
static void
legacy_modern_done(struct mcp_req *mr, enum upstream_status status,
    json_t *response, const char *errmsg)
{
	json_t		*err, *result, *meta;
	char		 msg[600];

	err = json_object_get(response, "error");
	if (status == UPSTREAM_FAILED || (status == UPSTREAM_ERROR &&
	    !json_is_object(err))) {
		log_warnx("%s for session %.8s...: %s", mr->mr_r.r_msg.jm_method,
		    mr->mr_sid, errmsg);
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", errmsg);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	if (status == UPSTREAM_ERROR) {
		legacy_req_answer(mr, json_pack("{s:s, s:O, s:o}", "jsonrpc",
		    "2.0", "id", mr->mr_r.r_msg.jm_id, "error",
		    legacy_error_of_modern(&mr->mr_r.r_msg, err)));
		return;
	}
	result = json_object_get(response, "result");
	if (!json_is_object(result)) {
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: the backend sent no result");
		return;
	}
	if (status == UPSTREAM_INPUT_REQUIRED) {
		legacy_mrtr_round(mr, result);
		return;
	}
	/* 2026-07-28's envelope and reserved keys stay on its hop */
	if ((result = json_deep_copy(result)) == NULL) {
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	(void)json_object_del(result, "resultType");
	(void)json_object_del(result, "ttlMs");
	(void)json_object_del(result, "cacheScope");
	if ((meta = json_object_get(result, "_meta")) != NULL) {
		proto_meta_strip(meta);
		if (json_object_size(meta) == 0)
			(void)json_object_del(result, "_meta");
	}
	legacy_req_answer(mr, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0",
	    "id", mr->mr_r.r_msg.jm_id, "result", result));
}

/* the backend's answer, in the revision it came in */
static void
legacy_on_done(void *arg, const struct upstream_result *r)
{
	struct mcp_req	*mr = arg;
	json_t		*resp;

	mr->mr_r.r_up = NULL;
	if (r->ur_era != PROTO_ERA_MODERN) {
		if (r->ur_text != NULL)
			legacy_on_backend_done_raw(mr, r->ur_kind, r->ur_text,
			    r->ur_len);
		else
			legacy_legacy_done(mr, r);
		return;
	}
	resp = upstream_response(r);
	if (resp == NULL && r->ur_status != UPSTREAM_FAILED)
		legacy_modern_done(mr, UPSTREAM_FAILED, NULL,
		    "the backend's answer could not be read");
	else
		legacy_modern_done(mr, r->ur_status, resp, r->ur_errmsg);
	json_decref(resp);
}

/*
 * The backend call over the client session's backend session (as the
 * request found it), declaring the session's capabilities; a subscribe
 * or unsubscribe goes to legacy_subscribe(), which makes it where the
 * notification listener listens.
 */
static enum pipeline_rc
legacy_upstream(struct request *r, struct upstream_req *uq)
{
	struct mcp_req *mr = (struct mcp_req *)r;	/* mr_r is its head */

	if (!(uq->uq_flags & UPSTREAM_F_SUBSCRIPTION) &&
	    (MCP_METHOD_IS(r->r_msg.jm_mm, MCP_M_RESOURCES_SUBSCRIBE) ||
	    MCP_METHOD_IS(r->r_msg.jm_mm, MCP_M_RESOURCES_UNSUBSCRIBE))) {
		legacy_subscribe(mr, &mr->mr_sess);
		return PIPELINE_DONE;
	}
	uq->uq_sess = &mr->mr_sess;
	uq->uq_caps = r->r_caps;
	uq->uq_cut = legacy_on_cut;
	/* a client that would rather stream: primed before the call */
	if (mr->mr_sse)
		(void)legacy_stream_open(mr);
	return PIPELINE_NEXT;
}

/*
 * Does the client list text/event-stream before application/json?  It
 * is then answered with an SSE stream (docs/ARCHITECTURE.md, SSE
 * answers); a value that begins with application/json and no
 * parameter (the SDKs') costs one comparison of its first bytes.
 */
static int
legacy_wants_sse(struct httpd_req *req)
{
	static const char	 json[] = "application/json,";
	const char		*accept = httpd_req_known(req, HTTP_H_ACCEPT);

	if (accept == NULL || strncmp(accept, json, sizeof(json) - 1) == 0)
		return 0;
	return proto_accept_prefers(accept, "text/event-stream",
	    "application/json");
}

/*
 * The session phase: the client's session validated (after the
 * authorization gate: "403 before 404"), touched, and kept as the
 * request found it (mr_sess); legacy_session() answers a refusal.
 */
static enum pipeline_rc
legacy_session_phase(struct request *r)
{
	struct mcp_req	*mr = (struct mcp_req *)r;	/* mr_r is its head */
	struct session	 s;
	size_t		 n;

	httpd_req_set_close_cb(r->r_req, NULL, NULL);
	memset(&s, 0, sizeof(s));
	if (legacy_session(r->r_w, r->r_req, r->r_msg.jm_id, &s, 1) == -1) {
		r->r_req = NULL;
		legacy_req_free(mr);
		return PIPELINE_DONE;
	}
	pipeline_watch(r);
	/* as snprintf("%s") would, without its cost on every call */
	n = strnlen(s.s_id, sizeof(mr->mr_sid) - 1);
	memcpy(mr->mr_sid, s.s_id, n);
	mr->mr_sid[n] = '\0';
	r->r_sid = mr->mr_sid;
	mr->mr_sess = s;
	mr->mr_sse = legacy_wants_sse(r->r_req);
	r->r_caps = json_incref(s.s_client_caps);
	pipeline_trace_session(r, mr->mr_sid);
	return PIPELINE_NEXT;
}

/* a list's page: on an SSE stream if the client would rather */
static void
legacy_answer_text(struct request *r, const char *text, size_t len)
{
	if (r->r_req == NULL)
		(void)request_finalize(r, __func__);
	else
		legacy_on_backend_done_raw((struct mcp_req *)r, "result",
		    text, len);
}

/* routed as the client sent them */
static json_t *
legacy_route_params(struct request *r)
{
	return json_incref(r->r_msg.jm_params);
}

/*
 * An error: at 200 on the request's stream if one is open; at another
 * status (the gate's 403, a 500) on its own, never with a session id.
 */
static void
legacy_codec_error(struct request *r, int status, int code,
    const char *message, json_t *data)
{
	struct mcp_req *mr = (struct mcp_req *)r;	/* mr_r is its head */

	if (status != 200) {
		legacy_req_refuse(mr, status, code, message, data);
		return;
	}
	legacy_req_answer(mr, jsonrpc_error_new(r->r_msg.jm_id, code,
	    message, data));
}

/* the rate limit's refusal: a tool result, as the reference vMCP's */
static void
legacy_limited(struct request *r, unsigned int retry_s)
{
	legacy_req_answer((struct mcp_req *)r, jsonrpc_result_new(
	    r->r_msg.jm_id, ratelimit_result(retry_s)));
}

/*
 * A fast-path call to a tool its backend names differently (a prefixed
 * one): the client's params text with the name replaced, so that the
 * params are neither parsed nor dumped.  -1: a name that would need
 * escaping (then the call takes the parsing path).
 */
static int
legacy_fast_rename(struct mcp_req *mr, const char *own)
{
	struct request_fast	*f = &mr->mr_r.r_fast;
	char			*t;
	size_t			 len;

	if ((t = jsonrpc_scan_rename(f->rf_params, f->rf_plen, f->rf_name,
	    f->rf_namelen, own, &len)) == NULL)
		return -1;
	if ((mr->mr_own = strdup(own)) == NULL) {
		free(t);
		return -1;
	}
	f->rf_name = t + (f->rf_name - f->rf_params);
	f->rf_namelen = strlen(own);
	mr->mr_text = t;
	f->rf_params = t;
	f->rf_plen = len;
	return 0;
}

/*
 * The fast path's tools/call, routed by its name alone (rc_route_fast):
 * NEXT with r_be set when it is routed (on to the credential phase),
 * DONE when answered with an error; NEXT without r_be when
 * the call needs its params as a tree after all, now loaded: a backend
 * that may speak 2026-07-28, or a renamed tool whose name needs
 * escaping.
 */
static enum pipeline_rc
legacy_route_fast(struct request *r)
{
	struct mcp_req	*mr = (struct mcp_req *)r;	/* mr_r is its head */
	struct core_err	 cerr;
	const char	*own;

	if (core_route_tool(r->r_view, r->r_w->w_conf, r->r_fast.rf_name,
	    r->r_fast.rf_namelen, &r->r_be, &own, &cerr) == -1) {
		legacy_req_error(mr, cerr.ce_code, cerr.ce_msg);
		return PIPELINE_DONE;
	}
	diag_tag_route(r);	/* its name, before a rename */
	if ((strlen(own) == r->r_fast.rf_namelen &&
	    memcmp(own, r->r_fast.rf_name, r->r_fast.rf_namelen) == 0) ||
	    legacy_fast_rename(mr, own) == 0)
		return PIPELINE_NEXT;	/* routed */
	r->r_be = NULL;
	if (legacy_params_load(mr) == -1) {
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot parse the request again");
		return PIPELINE_DONE;
	}
	return PIPELINE_NEXT;
}

static void
legacy_composite_notify(void *arg, json_t *msg)
{
	legacy_on_backend_message(arg, msg);
	json_decref(msg);
}

static void
legacy_composite_done(void *arg, json_t *result, int code,
    const char *message)
{
	struct mcp_req *mr = arg;

	if (result == NULL)
		legacy_req_error(mr, code, message);
	else
		legacy_req_answer(mr, jsonrpc_result_new(mr->mr_r.r_msg.jm_id,
		    result));
}

/* a composite tool's call (rc_composite): run here (composite_run.c) */
static enum pipeline_rc
legacy_composite(struct request *r)
{
	static const struct composite_client cc0 = {
		legacy_composite_notify, legacy_mrtr_send,
		legacy_composite_done, NULL, NULL, NULL, NULL
	};
	struct mcp_req		*mr = (struct mcp_req *)r;
	struct composite_client	 cc = cc0;
	const struct composite	*co;

	if ((co = composite_of_request(r)) == NULL)
		return PIPELINE_NEXT;
	if (legacy_params_load(mr) == -1) {
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot parse the request again");
		return PIPELINE_DONE;
	}
	cc.cc_arg = mr;
	cc.cc_sid = mr->mr_sid;
	cc.cc_caps = mr->mr_sess.s_client_caps;
	composite_run_start(r->r_w, r->r_view, r->r_req, PROTO_ERA_LEGACY, co,
	    r->r_msg.jm_params, &cc, &r->r_run);
	return PIPELINE_DONE;
}

static struct mcp_req *
legacy_req_find(struct worker *w, const char *sid, const json_t *id)
{
	struct mcp_req	*mr;

	TAILQ_FOREACH(mr, &w->w_reqs, mr_entry)
		if (!mr->mr_initialize && strcmp(mr->mr_sid, sid) == 0 &&
		    json_equal(mr->mr_r.r_msg.jm_id, id))
			return mr;
	return NULL;
}

/*
 * A request the client cancelled, if this worker holds it: its backend
 * call is cancelled too, and the client gets no response (MCP
 * 2025-11-25, Cancellation); an SSE stream, opened if need be, ends
 * without one (MCP 2025-11-25, Transports: the stream SHOULD, not MUST,
 * carry the response).  1 if it was here.
 */
int
legacy_cancel(struct worker *w, const char *sid, const json_t *id,
    const char *reason)
{
	struct mcp_req	*mr;

	if ((mr = legacy_req_find(w, sid, id)) == NULL)
		return 0;
	log_debug("session %.8s... cancelled its %s", sid,
	    mr->mr_r.r_msg.jm_method);
	upstream_abort(mr->mr_r.r_up, reason);
	mr->mr_r.r_up = NULL;
	if (mr->mr_r.r_req != NULL) {
		httpd_req_set_close_cb(mr->mr_r.r_req, NULL, NULL);
		if (!mr->mr_r.r_streaming)
			front_sse_start(mr->mr_r.r_req, NULL);
		front_sse_end(mr->mr_r.r_req);
		mr->mr_r.r_req = NULL;
	}
	legacy_req_free(mr);
	return 1;
}

/* a fast-path call's params as a tree, from the body parsed again */
static int
legacy_params_load(struct mcp_req *mr)
{
	const char		*body;
	char			*own = mr->mr_own;
	size_t			 len;
	int			 rc = 0;
	json_t			*params;

	if (mr->mr_r.r_fast.rf_params == NULL)
		return 0;
	if (mr->mr_r.r_req == NULL)
		return -1;
	body = httpd_req_body(mr->mr_r.r_req, &len);
	if (request_msg_reparse(&mr->mr_r, body, len) == -1)
		return -1;
	params = mr->mr_r.r_msg.jm_params;
	free(mr->mr_text);
	mr->mr_text = mr->mr_own = NULL;
	memset(&mr->mr_r.r_fast, 0, sizeof(mr->mr_r.r_fast));
	/* routed already: under the backend's own name */
	if (mr->mr_r.r_be != NULL && mr->mr_r.r_bparams == NULL) {
		if (own == NULL)
			mr->mr_r.r_bparams = json_incref(params);
		else if ((mr->mr_r.r_bparams = json_copy(params)) == NULL ||
		    json_object_set_new(mr->mr_r.r_bparams, "name",
		    json_string(own)) == -1)
			rc = -1;
	}
	free(own);
	return rc;
}

static const struct upstream_cbs legacy_cbs = {
	legacy_params, legacy_on_push, legacy_on_done
};

const struct request_codec legacy_codec = {
	.rc_name = "2025-11-25",
	.rc_era = PROTO_ERA_LEGACY,
	.rc_close_cancels = 0,
	.rc_detach = legacy_detach,
	.rc_session = legacy_session_phase,
	.rc_route_fast = legacy_route_fast,
	.rc_local = NULL,
	.rc_check = NULL,
	.rc_list_info = NULL,
	.rc_route_params = legacy_route_params,
	.rc_composite = legacy_composite,
	.rc_upstream = legacy_upstream,
	.rc_cbs = &legacy_cbs,
	.rc_error = legacy_codec_error,
	.rc_limited = legacy_limited,
	.rc_consent = legacy_consent,
	.rc_answer_text = legacy_answer_text,
};

/*
 * The lists and the routed calls: through the request pipeline
 * (pipeline.h), whose session phase finds the session after the
 * authorization gate (s is NULL: the row's REQUEST_M_NO_SESSION).
 */
void
legacy_viewed(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, const struct request_fast *fast,
    struct session *s)
{
	struct mcp_req *mr;

	(void)s;
	if ((mr = legacy_req_new(w, req, msg)) == NULL)
		return;
	mr->mr_r.r_fast = *fast;
	pipeline_run(&mr->mr_r, &legacy_codec);
}
