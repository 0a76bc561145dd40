/*
 * The 2026-07-28 client's codec (pipeline.h) and entry: MCP 2026-07-28,
 * stateless (Overview, section Statelessness).  The request was
 * classified and its envelope and headers checked by proto_classify()
 * (or the hot path's scan); it runs through the pipeline without a
 * session phase and is answered from the same era-free core as a
 * 2025-11-25 client's: lists from the shared view with
 * self-describing cursors, calls routed to a backend under its own
 * name.  A 2026-07-28 backend gets the request as it came (its
 * input_required, MRTR, relayed as it is); a 2025-11-25 one is reached
 * over the identity scope's backend session (backend_session.c), so a Modern
 * client needs no session of its own and any worker can serve any
 * request.  Every result carries resultType and vmcpd's serverInfo; the
 * cacheable ones ttlMs and cacheScope.  A Legacy backend's mid-call
 * request cannot reach a Modern client: the client gets -32021 when it
 * lacks the capability, else a clear error.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "worker/http/httpd.h"

#include "shared/config.h"
#include "proto/http_req.h"
#include "proto/classify.h"
#include "proto/mheaders.h"
#include "proto/mrequest.h"
#include "proto/meta.h"
#include "shared/version.h"
#include "worker/http/http_reply.h"
#include "worker/request/modern.h"
#include "worker/view/core.h"
#include "worker/composite/composite_run.h"
#include "worker/auth/ratelimit.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/auth/audit.h"
#include "worker/request/modern_req.h"
#include "worker/pipeline/pipeline.h"
#include "worker/state/task_store.h"


static json_t *
modern_server_info(struct worker *w)
{
	return json_pack("{s:s, s:s}", "name", w->w_conf->cf_name, "version",
	    VMCPD_VERSION);
}

static void
modern_free(struct mreq *m)
{
	(void)request_finalize(&m->m_r, __func__);
}

/* its last hold gone (request_finalize()): its own state freed */
static void
modern_destroy(struct request *r)
{
	struct mreq *m = (struct mreq *)r;	/* m_r is its head */

	composite_run_cancel(m->m_r.r_run, "the request ended");
	composite_task_detach(m->m_ctask);
	task_store->ts_cancel(m);
	pipeline_clear(&m->m_r);
	json_decref(m->m_bcaps);
	json_decref(m->m_tresult);
	if (m->m_trec != NULL)
		task_rec_clear(m->m_trec);
	free(m->m_trec);
	free(m->m_fast.mf_name);
	free(m->m_fast.mf_own);
	free(m);
}

/* the answer: on the request's SSE stream if one was opened */
static void
modern_reply(struct mreq *m, int status, json_t *msg)
{
	httpd_req_set_close_cb(m->m_r.r_req, NULL, NULL);
	if (m->m_r.r_streaming) {
		(void)front_sse_send(m->m_r.r_req, NULL, msg);
		front_sse_end(m->m_r.r_req);
	} else
		front_reply_json(m->m_r.r_req, status, msg, NULL);
	m->m_r.r_req = NULL;
	modern_free(m);
}

/* an error; 2026-07-28 has no -32002: resource not found is -32602 */
void
modern_error(struct mreq *m, int status, int code, const char *message,
    json_t *data)
{
	json_t *e;

	if (code == MCP_ERR_RESOURCE_NOT_FOUND)
		code = JSONRPC_INVALID_PARAMS;
	e = jsonrpc_error_new(m->m_r.r_msg.jm_id, code, message, data);
	modern_reply(m, status, e);
	json_decref(e);
}

static void
modern_result_as(struct mreq *m, json_t *result, const char *type,
    long long ttl_ms, const char *scope)
{
	json_t *si, *r, *resp;

	si = modern_server_info(m->m_r.r_w);
	r = proto_modern_result(result, type, si, ttl_ms, scope);
	json_decref(si);
	if (r == NULL) {
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return;
	}
	resp = jsonrpc_result_new(m->m_r.r_msg.jm_id, r);
	modern_reply(m, 200, resp);
	json_decref(resp);
}

static void
modern_result(struct mreq *m, json_t *result, long long ttl_ms,
    const char *scope)
{
	modern_result_as(m, result, NULL, ttl_ms, scope);
}

/*
 * What this principal may use, as its lists show it: with authz on the
 * capabilities are cut to it (core_capabilities_shown()) and, as a
 * filtered list, the answer is private (MCP 2026-07-28, Caching).
 */
static void
modern_discover(struct request *rq)
{
	struct mreq		*m = (struct mreq *)rq;	/* m_r is its head */
	json_t			*view = rq->r_view;
	struct authz_filter	 af, *f;
	json_t			*r, *caps;

	f = authz_list_filter(m->m_r.r_w, m->m_r.r_req, &af);
	if ((caps = core_capabilities(view, 0)) != NULL)
		core_capabilities_shown(caps, view, f);
	/* the tasks extension, when a backend offers it or a composite
	 * runs as a task */
	if (caps != NULL && (json_array_size(json_object_get(view,
	    "taskBackends")) > 0 || composite_tasks_offered(rq->r_w, view)))
		(void)json_object_set_new(caps, "extensions", json_pack(
		    "{s:{}}", MCP_TASKS_EXTENSION));
	r = json_pack("{s:[s], s:o}", "supportedVersions", MCP_VERSION_MODERN,
	    "capabilities", caps);
	modern_result(m, r, 0, f != NULL ? "private" : "public");
}

/* the params as a Legacy backend takes them: no Modern envelope */
static json_t *
modern_backend_params(json_t *params)
{
	json_t *p;

	if ((p = json_copy(params)) == NULL)
		return NULL;
	(void)json_object_del(p, "inputResponses");
	(void)json_object_del(p, "requestState");
	if (proto_params_strip_meta(p) == -1) {
		json_decref(p);
		return NULL;
	}
	return p;
}

/*
 * The hot path's call as a tree, from the body parsed again (the scan
 * made sure it parses and passes every check), for the code that needs
 * one; a call routed already gets its backend params.
 */
int
modern_fast_load(struct mreq *m)
{
	struct jsonrpc_msg	*msg = &m->m_r.r_msg;
	const char		*body;
	size_t			 len;
	int			 rc = 0;

	if (m->m_r.r_fast.rf_params == NULL)
		return 0;
	if (m->m_r.r_req == NULL)
		return -1;
	body = httpd_req_body(m->m_r.r_req, &len);
	if (request_msg_reparse(&m->m_r, body, len) == -1)
		return -1;
	json_decref(m->m_r.r_caps);
	m->m_r.r_caps = json_incref(json_object_get(json_object_get(
	    msg->jm_params, "_meta"), MCP_META_CLIENT_CAPABILITIES));
	/* routed already: under the backend's name (core_route) */
	if (m->m_r.r_be != NULL && m->m_r.r_bparams == NULL &&
	    ((m->m_r.r_bparams = modern_backend_params(msg->jm_params)) == NULL ||
	    (m->m_fast.mf_own != NULL && json_object_set_new(m->m_r.r_bparams,
	    "name", json_string(m->m_fast.mf_own)) == -1)))
		rc = -1;
	free(m->m_fast.mf_name);
	free(m->m_fast.mf_own);
	memset(&m->m_fast, 0, sizeof(m->m_fast));
	memset(&m->m_r.r_fast, 0, sizeof(m->m_r.r_fast));
	return rc;
}

/* Mcp-Param-* of a tools/call against the tool's x-mcp-header args */
static int
modern_check_params(struct mreq *m, json_t *view)
{
	struct proto_reqhdrs	 hdrs;
	struct proto_verdict	 v;
	json_t			*map;
	int			 rc = 0;

	if ((map = core_tool_headers(view, json_string_value(
	    json_object_get(m->m_r.r_msg.jm_params, "name")))) == NULL)
		return 0;
	memset(&hdrs, 0, sizeof(hdrs));
	hdrs.rh_param = front_param_header;
	hdrs.rh_arg = m->m_r.r_req;
	memset(&v, 0, sizeof(v));
	if (proto_param_headers_check(map, json_object_get(m->m_r.r_msg.jm_params,
	    "arguments"), &hdrs, &v) == -1) {
		modern_error(m, v.pv_http, v.pv_code, v.pv_msg,
		    json_incref(v.pv_data));
		rc = -1;
	}
	proto_verdict_clear(&v);
	json_decref(map);
	return rc;
}

/*
 * A backend's result, copied, with the backend's reserved _meta keys
 * left on its hop; NULL when there is none (the client got an error).
 */
static json_t *
modern_backend_result(struct mreq *m, json_t *response)
{
	json_t *result, *meta;

	if ((result = json_copy(json_object_get(response, "result"))) ==
	    NULL || !json_is_object(result)) {
		json_decref(result);
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: the backend sent no result", NULL);
		return NULL;
	}
	if ((meta = json_object_get(result, "_meta")) != NULL) {
		meta = json_copy(meta);
		proto_meta_strip(meta);
		(void)json_object_set_new(result, "_meta", meta);
	}
	return result;
}

/* a routed request's result (taken): only a complete read is cacheable */
void
modern_result_out(struct mreq *m, json_t *result, const char *type)
{
	if (strcmp(type, "complete") == 0 &&
	    (m->m_r.r_msg.jm_mm->mm_flags & MCP_MF_CACHEABLE))
		modern_result_as(m, result, type, 0, "public");
	else
		modern_result_as(m, result, type, -1, NULL);
}

static void
modern_on_backend_message(struct mreq *m, json_t *msg)
{
	/* progress on the request's stream; logs only if it asked */
	if (m->m_r.r_req == NULL || !request_note_relayed(msg, m->m_log))
		return;
	if (!m->m_r.r_streaming) {
		front_sse_start(m->m_r.r_req, NULL);
		m->m_r.r_streaming = 1;
	}
	(void)front_sse_send(m->m_r.r_req, NULL, msg);
}

/* a Legacy backend asks something mid-call: no way to a Modern client
 * yet; the backend is refused and the client told why afterwards */
static int
modern_on_backend_request(struct mreq *m, json_t *msg, char *why,
    size_t whylen)
{
	const char	*method, *cap;
	json_error_t	 jerr;

	/* the hot path kept the client's capabilities as text */
	if (m->m_r.r_caps == NULL && m->m_fast.mf_caps != NULL)
		m->m_r.r_caps = json_loadb(m->m_fast.mf_caps, m->m_fast.mf_capslen,
		    JSON_ALLOW_NUL, &jerr);
	method = json_string_value(json_object_get(msg, "method"));
	if (method == NULL)
		method = "?";
	cap = proto_request_capability(method);
	(void)snprintf(m->m_refused, sizeof(m->m_refused), "%s", method);
	if (cap != NULL && !json_is_object(json_object_get(m->m_r.r_caps, cap)))
		(void)snprintf(m->m_needcap, sizeof(m->m_needcap), "%s", cap);
	(void)snprintf(why, whylen, "vmcpd cannot relay %s to this "
	    "2026-07-28 client", method);
	return -1;
}

/* what the backend sends mid-call */
static int
modern_on_push(void *arg, json_t *msg, const char *bsid, const char *version,
    char *why, size_t whylen)
{
	(void)bsid;
	(void)version;
	if (json_object_get(msg, "id") != NULL)
		return modern_on_backend_request(arg, msg, why, whylen);
	modern_on_backend_message(arg, msg);
	return 0;
}

/* a 2025-11-25 backend's answer */
static void
modern_legacy_done(struct mreq *m, json_t *response, int rc,
    const char *errmsg)
{
	json_t		*err, *result;
	char		 msg[600];
	int		 code;

	/* a refusal that made the call fail, as an error or as a tool
	 * result with isError: the client learns what it lacked (a
	 * backend that asks and carries on is no failure) */
	if (m->m_needcap[0] != '\0' && rc == 0 &&
	    (json_object_get(response, "error") != NULL ||
	    json_is_true(json_object_get(json_object_get(response, "result"),
	    "isError")))) {
		modern_error(m, 400, MCP_ERR_MISSING_CAPABILITY,
		    "Missing required client capability: the backend asked "
		    "for it mid-call", json_pack("{s:{s:{}}}",
		    "requiredCapabilities", m->m_needcap));
		return;
	}
	if (rc == -1) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", errmsg);
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
		return;
	}
	if ((err = json_object_get(response, "error")) != NULL) {
		code = (int)json_integer_value(json_object_get(err, "code"));
		if (m->m_refused[0] != '\0')
			(void)snprintf(msg, sizeof(msg), "%s (the backend "
			    "asked %s, which vmcpd cannot relay to a "
			    "2026-07-28 client yet)", json_string_value(
			    json_object_get(err, "message")) != NULL ?
			    json_string_value(json_object_get(err, "message")) :
			    "error", m->m_refused);
		else
			(void)snprintf(msg, sizeof(msg), "%s",
			    json_string_value(json_object_get(err,
			    "message")) != NULL ? json_string_value(
			    json_object_get(err, "message")) : "error");
		modern_error(m, 200, code, msg, json_incref(json_object_get(err,
		    "data")));
		return;
	}
	if ((result = modern_backend_result(m, response)) != NULL)
		modern_result_out(m, result, "complete");
}

/*
 * The answer of a 2026-07-28 backend.  An input_required result goes
 * to the client as it is (MRTR pass-through: the retry is routed by
 * name again, and requestState travels byte for byte); the backend's
 * reserved _meta keys stay on its hop.
 */
static void
modern_modern_done(struct mreq *m, json_t *response, int rc,
    const char *errmsg)
{
	json_t		*err, *result, *rt;
	const char	*emsg, *type;
	char		 msg[600], tmsg[700];
	json_int_t	 code;

	err = json_object_get(response, "error");
	code = json_integer_value(json_object_get(err, "code"));
	if (json_is_object(err)) {
		emsg = json_string_value(json_object_get(err, "message"));
		if (emsg == NULL)
			emsg = "error";
		if (code == MCP_ERR_MISSING_CAPABILITY) {
			/* the capabilities are the client's, mirrored */
			modern_error(m, 400, (int)code, emsg,
			    json_incref(json_object_get(err, "data")));
			return;
		}
		if (code == MCP_ERR_HEADER_MISMATCH ||
		    code == MCP_ERR_UNSUPPORTED_VERSION) {
			(void)snprintf(msg, sizeof(msg), "Internal error: "
			    "backend %s refused vmcpd's request: %s",
			    m->m_r.r_be->cb_name, emsg);
			modern_error(m, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
			return;
		}
		modern_error(m, 200, (int)code, emsg,
		    json_incref(json_object_get(err, "data")));
		return;
	}
	if (rc == -1) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", errmsg);
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
		return;
	}
	if ((result = modern_backend_result(m, response)) == NULL)
		return;
	rt = json_object_get(result, "resultType");
	type = json_is_string(rt) ? json_string_value(rt) : "complete";
	/* a task's ttlMs is its own (CreateTaskResult, DetailedTask), not
	 * a cache hint */
	if (strcmp(type, "task") != 0 && m->m_task[0] == '\0') {
		(void)json_object_del(result, "ttlMs");
		(void)json_object_del(result, "cacheScope");
	}
	switch (modern_task_result(m, result, type, msg, sizeof(msg))) {
	case -1:
		json_decref(result);
		(void)snprintf(tmsg, sizeof(tmsg), "Internal error: %s", msg);
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR, tmsg, NULL);
		return;
	case 1:
		return;		/* answered once the task is recorded */
	}
	modern_result_out(m, result, type);
}

void
modern_task_answer(struct mreq *m, json_t *result, const char *err)
{
	char msg[300];

	if (result == NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", err);
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
		return;
	}
	modern_result_out(m, result, "task");
}

void
modern_task_local(struct mreq *m, json_t *result, int code,
    const char *message)
{
	if (result == NULL)
		modern_error(m, 200, code, message, NULL);
	else
		modern_result_out(m, result, "complete");
}

/* vmcpd's serverInfo as JSON text, made once */
static const char *
modern_server_info_text(struct worker *w, size_t *len)
{
	static char	*text;
	static size_t	 tlen;
	json_t		*si;

	if (text == NULL && (si = modern_server_info(w)) != NULL) {
		text = jsonrpc_dump(si, &tlen);
		json_decref(si);
	}
	*len = tlen;
	return text;
}

#define MODERN_BUF_LIT(b, l, c, lit) \
	proto_text_add((b), (l), (c), (lit), sizeof(lit) - 1)

/*
 * The common case of a backend's answer, as text: the members of its
 * result pass through as they are, but for its _meta, which alone is
 * parsed, to drop the backend's reserved keys and stamp vmcpd's
 * serverInfo.  A 2026-07-28 backend's cache hints go (vmcpd sets its
 * own); a 2025-11-25 backend's result is "complete", whatever it says,
 * as modern_result_out() makes it.  -1: not the common case (an
 * error, an escaped key, too many members), take the parsing path.
 */
static int
modern_backend_text(struct mreq *m, const struct upstream_result *r,
    int legacy)
{
	struct proto_span	 scan[32];
	const struct proto_span	*rt, *mt, *mem = r->ur_members;
	const char		*json = r->ur_text;
	size_t			 len = r->ur_len;
	json_t			*meta = NULL;
	json_error_t		 jerr;
	const char		*si;
	char			*out = NULL, *mtext = NULL, *msg;
	size_t			 n, i, olen = 0, ocap = 0, silen, mlen, msglen;
	int			 first = 1, cacheable;

	n = r->ur_nmembers;
	if (mem == NULL && proto_json_members(json, len, scan, 32, &n) == -1)
		return -1;
	if (mem == NULL)
		mem = scan;
	for (i = 0; i < n; i++)
		if (mem[i].ps_key == NULL)
			return -1;
	rt = proto_json_member(mem, n, "resultType");
	mt = proto_json_member(mem, n, "_meta");
	if (rt != NULL && rt->ps_val[0] != '"')
		return -1;
	/* a task's id is mapped on the tree (modern_task.c) */
	if (m->m_task[0] != '\0' || (rt != NULL && rt->ps_vallen == 6 &&
	    memcmp(rt->ps_val, "\"task\"", 6) == 0))
		return -1;
	if ((si = modern_server_info_text(m->m_r.r_w, &silen)) == NULL)
		return -1;
	/* as a rule its serverInfo alone, which goes without a tree */
	if (mt != NULL && !proto_meta_text_dropped(mt->ps_val, mt->ps_vallen)) {
		if ((meta = json_loadb(mt->ps_val, mt->ps_vallen,
		    JSON_ALLOW_NUL, &jerr)) == NULL || !json_is_object(meta)) {
			json_decref(meta);
			return -1;
		}
		proto_meta_strip(meta);
		(void)json_object_del(meta, MCP_META_SERVER_INFO);
		if (json_object_size(meta) > 0 &&
		    (mtext = jsonrpc_dump(meta, &mlen)) == NULL) {
			json_decref(meta);
			return -1;
		}
		json_decref(meta);
	}
	if (legacy)
		rt = NULL;	/* dropped, then set to "complete" */
	cacheable = (rt == NULL || (rt->ps_vallen == 10 &&
	    memcmp(rt->ps_val, "\"complete\"", 10) == 0)) &&
	    (m->m_r.r_msg.jm_mm->mm_flags & MCP_MF_CACHEABLE);
	/* room for all but a big _meta: one allocation, as a rule */
	ocap = len + silen + 128;
	if ((out = malloc(ocap)) == NULL ||
	    proto_text_add(&out, &olen, &ocap, "{", 1) == -1)
		goto fail;
	for (i = 0; i < n; i++) {
		if ((((mem[i].ps_keylen == 5 && memcmp(mem[i].ps_key,
		    "ttlMs", 5) == 0) || (mem[i].ps_keylen == 10 && memcmp(
		    mem[i].ps_key, "cacheScope", 10) == 0)) &&
		    (!legacy || cacheable)) || &mem[i] == mt ||
		    (legacy && mem[i].ps_keylen == 10 &&
		    memcmp(mem[i].ps_key, "resultType", 10) == 0))
			continue;
		if (proto_text_add_member(&out, &olen, &ocap, &first,
		    &mem[i]) == -1)
			goto fail;
	}
	if ((!first && proto_text_add(&out, &olen, &ocap, ",", 1) == -1) ||
	    (rt == NULL && MODERN_BUF_LIT(&out, &olen, &ocap,
	    "\"resultType\":\"complete\",") == -1) ||
	    (cacheable && MODERN_BUF_LIT(&out, &olen, &ocap,
	    "\"ttlMs\":0,\"cacheScope\":\"public\",") == -1) ||
	    MODERN_BUF_LIT(&out, &olen, &ocap, "\"_meta\":{\""
	    MCP_META_SERVER_INFO "\":") == -1 ||
	    proto_text_add(&out, &olen, &ocap, si, silen) == -1 ||
	    (mtext != NULL && (proto_text_add(&out, &olen, &ocap, ",", 1) ==
	    -1 || proto_text_add(&out, &olen, &ocap, mtext + 1,
	    mlen - 2) == -1)) ||
	    proto_text_add(&out, &olen, &ocap, "}}", 2) == -1)
		goto fail;
	free(mtext);
	httpd_req_set_close_cb(m->m_r.r_req, NULL, NULL);
	if (m->m_r.r_streaming) {
		if ((msg = front_compose(m->m_r.r_msg.jm_id, "result", out, olen,
		    &msglen)) != NULL) {
			(void)front_sse_send_text(m->m_r.r_req, NULL, msg, msglen);
			free(msg);
		}
		front_sse_end(m->m_r.r_req);
	} else
		front_reply_member(m->m_r.r_req, m->m_r.r_msg.jm_id, "result", out,
		    olen);
	m->m_r.r_req = NULL;
	modern_free(m);
	free(out);
	return 0;
fail:
	free(mtext);
	free(out);
	return -1;
}

/*
 * The backend's answer: as text when it can pass as it is (no backend
 * refused mid-call: the tree path tells the client), else as a tree
 * for the revision it came in.
 */
static void
modern_on_done(void *arg, const struct upstream_result *r)
{
	struct mreq	*m = arg;
	json_t		*resp;
	int		 legacy = r->ur_era != PROTO_ERA_MODERN;
	int		 rc = r->ur_status == UPSTREAM_FAILED ? -1 : 0;

	m->m_r.r_up = NULL;
	if (r->ur_text != NULL && strcmp(r->ur_kind, "result") == 0 &&
	    m->m_refused[0] == '\0' && modern_backend_text(m, r, legacy) == 0)
		return;
	if ((resp = upstream_response(r)) == NULL && rc == 0) {
		rc = -1;
		r = NULL;
	}
	if (legacy)
		modern_legacy_done(m, resp, rc, r != NULL ? r->ur_errmsg :
		    "the backend's answer could not be read");
	else
		modern_modern_done(m, resp, rc, r != NULL ? r->ur_errmsg :
		    "the backend's answer could not be read");
	json_decref(resp);
}

/*
 * The hot path's route (rc_route_fast): a tool without x-mcp-header
 * arguments (so no Mcp-Param-* to check or send): NEXT with r_be set,
 * routed.  Anything else takes the tree path, which also words every
 * error: NEXT without r_be, the call loaded as a tree.
 */
static enum pipeline_rc
modern_route_fast(struct request *r)
{
	struct mreq			*m = (struct mreq *)r;
	const struct config_backend	*be;
	struct core_err			 cerr;
	const char			*own;
	size_t				 n = r->r_fast.rf_namelen;

	if (core_route_tool(r->r_view, r->r_w->w_conf, r->r_fast.rf_name, n,
	    &be, &own, &cerr) == 0 && !core_route_has_headers() &&
	    /* renamed: the backend's name goes in place of the client's */
	    ((strlen(own) == n && memcmp(own, r->r_fast.rf_name, n) == 0) ||
	    (m->m_fast.mf_own = strdup(own)) != NULL)) {
		r->r_be = be;
		return PIPELINE_NEXT;	/* routed */
	}
	if (modern_fast_load(m) == -1) {
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return PIPELINE_DONE;
	}
	return PIPELINE_NEXT;
}

static void
modern_composite_notify(void *arg, json_t *msg)
{
	modern_on_backend_message(arg, msg);
	json_decref(msg);
}

static void
modern_composite_done(void *arg, json_t *result, int code,
    const char *message)
{
	struct mreq	*m = arg;
	const char	*type;

	/* complete, or input_required on a handle (composite_run.c) */
	type = json_string_value(json_object_get(result, "resultType"));
	if (result == NULL)
		modern_error(m, 200, code, message, NULL);
	else
		modern_result_out(m, result, type != NULL ? type :
		    "complete");
}

/* a composite run as a task: the client's CreateTaskResult */
static void
modern_composite_task(void *arg, json_t *result, int code,
    const char *message)
{
	struct mreq *m = arg;

	m->m_ctask = NULL;
	if (result == NULL)
		modern_error(m, 200, code, message, NULL);
	else
		modern_result_out(m, result, "task");
}

/* a composite tool's call (rc_composite): run here (composite_run.c),
 * or as a task (composite_task.c) */
static enum pipeline_rc
modern_composite(struct request *r)
{
	static const struct composite_client cc0 = {
		modern_composite_notify, NULL, modern_composite_done, NULL,
		NULL, NULL, NULL
	};
	struct composite_client	 cc = cc0;
	const struct composite	*co;

	if ((co = composite_of_request(r)) == NULL)
		return PIPELINE_NEXT;
	if (modern_fast_load((struct mreq *)r) == -1) {
		modern_error((struct mreq *)r, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return PIPELINE_DONE;
	}
	if (composite_task_wanted(co, r->r_msg.jm_params) &&
	    modern_task_declared((struct mreq *)r)) {
		composite_task_start(r->r_w, r->r_view, r->r_req, co,
		    r->r_msg.jm_params, modern_composite_task, r,
		    &((struct mreq *)r)->m_ctask);
		return PIPELINE_DONE;
	}
	cc.cc_arg = r;
	composite_run_start(r->r_w, r->r_view, r->r_req, PROTO_ERA_MODERN, co,
	    r->r_msg.jm_params, &cc, &r->r_run);
	return PIPELINE_DONE;
}

/*
 * What 2026-07-28 checks before a list or a route (rc_check): a method
 * behind a capability not offered does not exist (tools are always
 * offered: core_capabilities()); a tools/call's Mcp-Param-* headers
 * match its x-mcp-header arguments.
 */
static enum pipeline_rc
modern_check(struct request *r)
{
	struct mreq		*m = (struct mreq *)r;	/* m_r is its head */
	const struct mcp_method	*mm = r->r_msg.jm_mm;
	struct modern_task_err	 te;
	const char		*cap;
	char			 msg[300];

	/* the tasks extension's methods: routed by the task's record */
	if (mm->mm_cap == MCP_CAP_TASKS) {
		switch (modern_task_route(m, &te)) {
		case -1:
			modern_error(m, te.te_status, te.te_code, te.te_msg,
			    te.te_data);
			return PIPELINE_DONE;
		case 1:
			return PIPELINE_WAIT;
		case MODERN_TASK_ANSWERED:
			return PIPELINE_DONE;
		}
		pipeline_forward(r, 0);
		return PIPELINE_DONE;
	}
	if (mm->mm_cap != MCP_CAP_TOOLS &&
	    (cap = mcp_cap_name(mm->mm_cap)) != NULL &&
	    !json_is_object(json_object_get(json_object_get(r->r_view,
	    "capabilities"), cap))) {
		(void)snprintf(msg, sizeof(msg), "Method not found: %s (no "
		    "backend offers %s)", r->r_msg.jm_method, cap);
		modern_error(m, 404, JSONRPC_METHOD_NOT_FOUND, msg, NULL);
		return PIPELINE_DONE;
	}
	if (mm->mm_id == MCP_M_TOOLS_CALL &&
	    modern_check_params(m, r->r_view) == -1)
		return PIPELINE_DONE;
	return PIPELINE_NEXT;
}

static json_t *
modern_route_params(struct request *r)
{
	return modern_backend_params(r->r_msg.jm_params);
}

static void
modern_codec_error(struct request *r, int status, int code,
    const char *message, json_t *data)
{
	modern_error((struct mreq *)r, status, code, message, data);
}

/* the rate limit's refusal: an error at HTTP 200, as the reference
 * vMCP sends it */
static void
modern_limited(struct request *r, unsigned int retry_s)
{
	modern_error((struct mreq *)r, 200, RATELIMIT_CODE, RATELIMIT_MESSAGE,
	    ratelimit_data(retry_s));
}

static const struct upstream_cbs modern_cbs = {
	modern_params, modern_on_push, modern_on_done
};

const struct request_codec modern_codec = {
	.rc_name = "2026-07-28",
	.rc_era = PROTO_ERA_MODERN,
	.rc_close_cancels = 1,
	.rc_session = NULL,
	.rc_route_fast = modern_route_fast,
	.rc_local = modern_discover,
	.rc_check = modern_check,
	.rc_list_info = modern_server_info,
	.rc_route_params = modern_route_params,
	.rc_composite = modern_composite,
	.rc_upstream = NULL,
	.rc_cbs = &modern_cbs,
	.rc_error = modern_codec_error,
	.rc_limited = modern_limited,
	.rc_consent = modern_consent,
	.rc_consent_answer = modern_consent_answer,
};

/* dispatched through the Modern column of the method table */
void
modern_handle(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg)
{
	const struct request_method	*rm;
	char				 emsg[300];

	if (msg->jm_kind != JSONRPC_REQUEST) {
		/* over HTTP a notification changes nothing (Streamable HTTP,
		 * section Sending Messages) */
		front_reply_empty(req, 202);
		return;
	}
	if ((rm = request_method_of(msg))->rm_modern == NULL) {
		(void)snprintf(emsg, sizeof(emsg), "Method not found: %.200s "
		    "(not a 2026-07-28 method vmcpd serves)", msg->jm_method);
		front_reply_error(req, 404, msg->jm_id,
		    JSONRPC_METHOD_NOT_FOUND, emsg);
		return;
	}
	rm->rm_modern(w, req, msg);
}

/* discover, the lists and the routed calls: on the view */
void
modern_viewed(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg)
{
	struct mreq	*m;
	json_t		*meta;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		front_reply_error(req, 500, msg->jm_id, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	request_start(&m->m_r, w, req, msg, modern_destroy);
	meta = json_object_get(m->m_r.r_msg.jm_params, "_meta");
	m->m_r.r_caps = json_incref(json_object_get(meta,
	    MCP_META_CLIENT_CAPABILITIES));
	m->m_log = json_object_get(meta, "io.modelcontextprotocol/logLevel") !=
	    NULL;
	pipeline_run(&m->m_r, &modern_codec);
}

int
modern_scan_post(struct worker *w, struct httpd_req *req, const char *body,
    size_t len)
{
	struct proto_reqhdrs	 hdrs;
	struct proto_mcall	 mc;
	struct jsonrpc_msg	 msg;
	struct mreq		*m;
	json_t			*id;
	char			*name;

	/* a Legacy client is not held up: the hot path needs this header;
	 * each is the first line of its name, recorded by the head's parse */
	memset(&hdrs, 0, sizeof(hdrs));
	if ((hdrs.rh_protocol_version = httpd_req_known(req,
	    HTTP_H_MCP_PROTOCOL_VERSION)) == NULL ||
	    strstr(hdrs.rh_protocol_version, MCP_VERSION_MODERN) == NULL)
		return -1;
	hdrs.rh_method = httpd_req_known(req, HTTP_H_MCP_METHOD);
	hdrs.rh_name = httpd_req_known(req, HTTP_H_MCP_NAME);
	if (proto_modern_scan_call(body, len, &hdrs, &mc) != 1)
		return -1;
	audit_note_call(w, req, mc.mc_scan.js_mm, mc.mc_scan.js_name,
	    mc.mc_scan.js_namelen, mc.mc_scan.js_params,
	    mc.mc_scan.js_paramslen);
	if ((id = jsonrpc_scan_id(&mc.mc_scan)) == NULL)
		return -1;
	if ((m = worker_zalloc(sizeof(*m))) == NULL ||
	    (name = strndup(mc.mc_scan.js_name, mc.mc_scan.js_namelen)) ==
	    NULL) {
		free(m);
		json_decref(id);
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	msg.jm_kind = JSONRPC_REQUEST;
	msg.jm_root = id;	/* the only tree: released with the message */
	msg.jm_id = id;
	msg.jm_method = mc.mc_scan.js_mm->mm_name;
	msg.jm_mm = mc.mc_scan.js_mm;
	request_start(&m->m_r, w, req, &msg, modern_destroy);
	m->m_r.r_fast.rf_params = mc.mc_scan.js_params;
	m->m_r.r_fast.rf_plen = mc.mc_scan.js_paramslen;
	m->m_r.r_fast.rf_name = name;
	m->m_fast.mf_meta = mc.mc_scan.js_meta;
	m->m_fast.mf_metalen = mc.mc_scan.js_metalen;
	m->m_fast.mf_name = name;
	m->m_r.r_fast.rf_namelen = mc.mc_scan.js_namelen;
	m->m_fast.mf_nameval = mc.mc_scan.js_name - 1;
	m->m_fast.mf_caps = mc.mc_caps;
	m->m_fast.mf_capslen = mc.mc_capslen;
	pipeline_run(&m->m_r, &modern_codec);
	return 0;
}
