/*
 * A composite run's tool steps (composite_run.h), each a request of its
 * own through the request pipeline (worker/pipeline/pipeline.h), as a
 * client's call: the step codec here authorizes it under the run's
 * principal (its tool resolved first: a hidden tool is authorized under
 * its own name and backend), counts it in the caller's and the tool's
 * buckets, and sends it over the caller's backend session, in the
 * revision the upstream edge picks; its answer goes back to the run's
 * scheduler.  A retry (the backend's input given, composite_resume.c)
 * is neither authorized nor counted again.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/cedar_request.h"
#include "shared/composite_io.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/auth/authz.h"
#include "worker/composite/composite_run_int.h"
#include "worker/pipeline/pipeline.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/view/view_int.h"

static const struct request_codec crun_step_codec;

int
composite_step_allowed(struct worker *w, const struct principal *p,
    json_t *view, const char *name, const char *backend, const char *own,
    const json_t *entry, const json_t *args, char *why, size_t whylen)
{
	struct cedar_call	 call;
	struct view_route	 rt;
	json_t			*item = NULL;
	int			 advertised, allow = 0;

	if (!authz_on(w))
		return 1;
	memset(&call, 0, sizeof(call));
	call.cc_kind = CEDAR_TOOL;
	call.cc_arguments = json_is_object(args) ? args : NULL;
	/* advertised: name routes to this very tool */
	memset(&rt, 0, sizeof(rt));
	advertised = view_route_get(w, view, VIEW_ROUTE_TOOL, name,
	    strlen(name), &rt) == 0 && rt.vr_backend != NULL &&
	    rt.vr_own != NULL && strcmp(rt.vr_backend, backend) == 0 &&
	    strcmp(rt.vr_own, own) == 0;
	view_route_clear(&rt);
	if (advertised) {
		/* as a client's call of it: the view's annotations */
		call.cc_name = name;
		(void)snprintf(why, whylen, "the view can't be read");
		if (authz_view_tool(w, view, name, &item) == -1)
			goto out;
		call.cc_annotations = json_object_get(item, "annotations");
	} else {
		/* hidden: its own name under its backend, its own hints */
		call.cc_name = own;
		call.cc_server = backend;
		call.cc_annotations = json_object_get(entry, "annotations");
	}
	allow = authz_step(w, p, &call, why, whylen);
out:
	json_decref(item);
	return allow;
}

/* a backend's lists as the builder stored them (once per run) */
static json_t *
crun_tools_of(struct crun *cr, const char *backend)
{
	const struct config_backend	*be;
	json_t				*raw;

	if (cr->cr_raw == NULL && (cr->cr_raw = json_object()) == NULL)
		return NULL;
	if ((raw = json_object_get(cr->cr_raw, backend)) == NULL) {
		/* lists are shared, but a token_exchange backend's,
		 * the caller's own (backend_session.h) */
		be = config_backend_find(cr->cr_w->w_conf, backend);
		raw = view_load(cr->cr_w, "raw", be != NULL ?
		    bsession_scope(cr->cr_p, be, BSESSION_FOR_SHARED) :
		    VIEW_SCOPE_ANON, backend, NULL);
		if (json_object_set_new(cr->cr_raw, backend, raw != NULL ?
		    raw : json_null()) == -1)
			return NULL;
	}
	return json_object_get(raw, "tools");
}

static json_t *
crun_tool_find(json_t *tools, const char *own)
{
	json_t	*t;
	size_t	 i;

	json_array_foreach(tools, i, t)
		if (json_is_string(json_object_get(t, "name")) &&
		    strcmp(json_string_value(json_object_get(t, "name")),
		    own) == 0)
			return t;
	return NULL;
}

/*
 * A step's tool, as the builder resolved it (composite_view.c):
 * "<backend>.<own name>" first, else an advertised name (hidden tools
 * too).  0 with the backend, its own name (a new string) and the
 * tool's entry if listed (borrowed, or NULL); -1 unknown.
 */
static int
crun_resolve(struct crun *cr, const char *tool,
    const struct config_backend **be, char **own, json_t **entry)
{
	const struct config	*cf = cr->cr_w->w_conf;
	struct view_route	 rt;
	json_t			*tools;
	size_t			 i, len;
	int			 rc = -1;

	for (i = 0; i < cf->cf_nbackends; i++) {
		len = strlen(cf->cf_backends[i].cb_name);
		if (strncmp(tool, cf->cf_backends[i].cb_name, len) != 0 ||
		    tool[len] != '.')
			continue;
		tools = crun_tools_of(cr, cf->cf_backends[i].cb_name);
		if ((*entry = crun_tool_find(tools, tool + len + 1)) == NULL)
			continue;
		*be = &cf->cf_backends[i];
		return (*own = strdup(tool + len + 1)) != NULL ? 0 : -1;
	}
	memset(&rt, 0, sizeof(rt));
	if (view_route_get(cr->cr_w, cr->cr_view, VIEW_ROUTE_TOOL, tool,
	    strlen(tool), &rt) == 0 && rt.vr_backend != NULL &&
	    rt.vr_own != NULL && (*be = config_backend_find(cf,
	    rt.vr_backend)) != NULL && (*own = strdup(rt.vr_own)) != NULL) {
		*entry = crun_tool_find(crun_tools_of(cr, rt.vr_backend),
		    rt.vr_own);
		rc = 0;
	}
	view_route_clear(&rt);
	return rc;
}

static int
crun_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	struct crun_call *c = arg;

	/* a copy each time: a 2026-07-28 hop adds its _meta to it, with
	 * the client's capabilities mirrored (a backend asks only for
	 * what the client can give, relayed or on a handle) */
	if ((up->up_tree = json_copy(c->cc_params)) == NULL)
		return -1;
	if (era == PROTO_ERA_MODERN)
		up->up_caps = c->cc_run->cr_era == PROTO_ERA_MODERN ?
		    c->cc_run->cr_caps : c->cc_run->cr_cc.cc_caps;
	return 0;
}

/* what a backend sends mid-step: no client to relay a request to */
static int
crun_push(void *arg, json_t *msg, const char *bsid, const char *version,
    char *why, size_t whylen)
{
	(void)arg;
	(void)bsid;
	(void)version;
	if (json_object_get(msg, "id") == NULL)
		return 0;	/* a notification: the step's own business */
	(void)snprintf(why, whylen, "vmcpd does not relay requests made "
	    "during a composite tool's step");
	return -1;
}



static void
crun_on_done(void *arg, const struct upstream_result *r)
{
	struct crun_call	*c = arg;
	struct crun		*cr = c->cc_run;
	json_t			*resp, *e;
	uint64_t		 id = c->cc_id;
	char			 why[512];
	const char		*m;

	c->cc_r.r_up = NULL;	/* done: no cancel */
	resp = upstream_response(r);
	crun_enter(cr);
	switch (r->ur_status) {
	case UPSTREAM_COMPLETE:
		why[0] = '\0';
		break;
	case UPSTREAM_ERROR:
		e = json_object_get(resp, "error");
		m = json_string_value(json_object_get(e, "message"));
		(void)snprintf(why, sizeof(why), "backend %s: %s (%lld)",
		    c->cc_r.r_be->cb_name, m != NULL ? m : "error",
		    (long long)json_integer_value(json_object_get(e,
		    "code")));
		break;
	case UPSTREAM_INPUT_REQUIRED:
		/* a 2026-07-28 client is asked on the run's handle, its
		 * backend's state kept in vmcpd's record */
		if (cr->cr_era == PROTO_ERA_MODERN) {
			crun_call_free(cr, c, NULL);
			if (wf_run_call_suspend(cr->cr_run, id,
			    json_object_get(resp, "result")) == -1)
				wf_run_call_done(cr->cr_run, id, NULL,
				    "a malformed input_required answer");
			goto out;
		}
		/* a 2025-11-25 client is asked over its session */
		if (crun_relay(cr, c, json_object_get(resp, "result"), why,
		    sizeof(why)) == 0) {
			crun_call_free(cr, c, NULL);
			goto out;
		}
		break;
	default:
		(void)snprintf(why, sizeof(why), "backend %s: %s",
		    c->cc_r.r_be->cb_name, r->ur_errmsg != NULL ? r->ur_errmsg :
		    "no answer");
		break;
	}
	crun_call_free(cr, c, NULL);
	wf_run_call_done(cr->cr_run, id, why[0] == '\0' ?
	    json_object_get(resp, "result") : NULL, why[0] == '\0' ? NULL :
	    why);
out:
	crun_leave(cr);		/* may free cr, or suspend it */
	json_decref(resp);
}

static void
crun_fail_call(struct crun *cr, uint64_t call, const char *why)
{
	wf_run_call_done(cr->cr_run, call, NULL, why);
}

/* the step's request released (request_finalize()): r_free */
static void
crun_call_destroy(struct request *r)
{
	struct crun_call *c = (struct crun_call *)r;	/* cc_r is its head */

	pipeline_clear(r);
	ratelimit_wait_cancel(c->cc_rl);
	free(c->cc_tool);
	json_decref(c->cc_params);
	json_decref(c->cc_args);
	json_decref(c->cc_extra);
	if (c->cc_sess != NULL) {
		session_clear(c->cc_sess);
		free(c->cc_sess);
	}
	free(c);
}

void
crun_call_free(struct crun *cr, struct crun_call *c, const char *abort_why)
{
	TAILQ_REMOVE(&cr->cr_calls, c, cc_entry);
	if (c->cc_r.r_up != NULL && abort_why != NULL) {
		upstream_abort(c->cc_r.r_up, abort_why);
		c->cc_r.r_up = NULL;
	}
	(void)request_finalize(&c->cc_r, __func__);
}

/* the call's request failed: the step with why */
static void
crun_call_fail(struct crun_call *c, const char *why)
{
	struct crun	*cr = c->cc_run;
	uint64_t	 call = c->cc_id;

	crun_call_free(cr, c, NULL);
	crun_fail_call(cr, call, why);
}

/*
 * A call of the run as a request of the pipeline, in cr_calls (the
 * run's end cancels it): the step's tool and args (taken) to resolve
 * and authorize, or (a retry) its backend and params (taken).  NULL:
 * failed, reported.
 */
static struct crun_call *
crun_call_new(struct crun *cr, uint64_t call, const char *tool, json_t *args,
    const json_t *extra, const struct config_backend *be, json_t *params,
    int rounds)
{
	struct crun_call	*c;
	struct jsonrpc_msg	 msg;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (tool != NULL && (c->cc_tool = strdup(tool)) == NULL)) {
		free(c);
		json_decref(args);
		json_decref(params);
		crun_fail_call(cr, call, "out of memory");
		return NULL;
	}
	memset(&msg, 0, sizeof(msg));
	msg.jm_kind = JSONRPC_REQUEST;
	msg.jm_mm = mcp_method_get(MCP_M_TOOLS_CALL);
	msg.jm_method = msg.jm_mm->mm_name;
	request_start(&c->cc_r, cr->cr_w, NULL, &msg, crun_call_destroy);
	c->cc_r.r_principal = cr->cr_p;
	c->cc_r.r_view = json_incref(cr->cr_view);
	crun_trace_call(cr, &c->cc_r);
	c->cc_r.r_be = be;
	c->cc_run = cr;
	c->cc_id = call;
	c->cc_args = args;
	c->cc_extra = json_incref((json_t *)extra);
	c->cc_params = params;
	c->cc_rounds = rounds;
	c->cc_retry = be != NULL;
	TAILQ_INSERT_TAIL(&cr->cr_calls, c, cc_entry);
	return c;
}

/*
 * A tool call of the run: the step's tool (by its name in the step)
 * with args (taken); extra (borrowed, or NULL) adds a resumed call's
 * requestState and inputResponses.  A call that cannot start is
 * reported failed.
 */
void
crun_call_start(struct crun *cr, uint64_t call, const char *tool,
    json_t *args, const json_t *extra)
{
	struct crun_call *c;

	if ((c = crun_call_new(cr, call, tool, args, extra, NULL, NULL,
	    0)) != NULL)
		pipeline_run(&c->cc_r, &crun_step_codec);
}

/* a retry of a call with params (taken) to its backend */
void
crun_call_send(struct crun *cr, uint64_t call,
    const struct config_backend *be, json_t *params, int rounds)
{
	struct crun_call *c;

	if ((c = crun_call_new(cr, call, NULL, NULL, NULL, be, params,
	    rounds)) != NULL)
		pipeline_run(&c->cc_r, &crun_step_codec);
}

/*
 * The authorize phase of a step (rc_authorize): its tool resolved, its
 * arguments coerced to the tool's inputSchema, the call authorized
 * (composite_step_allowed()), and its params made under the backend's
 * name.  A retry was authorized when first sent.
 */
static enum pipeline_rc
crun_step_authorize(struct request *r)
{
	struct crun_call		*c = (struct crun_call *)r;
	struct crun			*cr = c->cc_run;
	const struct config_backend	*be = NULL;
	json_t				*entry = NULL, *args;
	char				*own = NULL, why[512], az[256];

	if (c->cc_retry)
		return PIPELINE_NEXT;
	if (crun_resolve(cr, c->cc_tool, &be, &own, &entry) == -1) {
		(void)snprintf(why, sizeof(why), "tool %s is not in the view",
		    c->cc_tool);
		goto fail;
	}
	if (!json_is_object(c->cc_args)) {
		json_decref(c->cc_args);
		c->cc_args = json_object();
	}
	args = c->cc_args;
	composite_coerce_args(args, json_object_get(entry, "inputSchema"));
	if (!composite_step_allowed(cr->cr_w, cr->cr_p, cr->cr_view,
	    c->cc_tool, be->cb_name, own, entry, args, az, sizeof(az))) {
		log_debug("composite %s: run %s: tool %s denied: %s",
		    cr->cr_co->co_name, cr->cr_id, c->cc_tool, az);
		crun_audit(cr, "vmcp_workflow_step_denied", "denied",
		    &cr->cr_co->co_steps[c->cc_id >> 32], c->cc_tool, az);
		(void)snprintf(why, sizeof(why), "tool %s: denied by the "
		    "authorization policy", c->cc_tool);
		goto fail;
	}
	if ((c->cc_params = json_pack("{s:s, s:O}", "name", own, "arguments",
	    args)) == NULL || (c->cc_extra != NULL && json_object_update(
	    c->cc_params, c->cc_extra) == -1)) {
		(void)snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	free(own);
	r->r_be = be;
	return PIPELINE_NEXT;
fail:
	free(own);
	crun_call_fail(c, why);
	return PIPELINE_DONE;
}

/* Redis's buckets answered a step's wait (ratelimit_step()): the
 * ratelimit phase again, with the verdict */
static void
crun_on_limit(void *arg, enum ratelimit_verdict v, unsigned int retry)
{
	struct crun_call	*c = arg;
	struct crun		*cr = c->cc_run;

	c->cc_rl = NULL;	/* answered: no cancel */
	c->cc_verdict = v;
	c->cc_retry_s = retry;
	c->cc_decided = 1;
	crun_enter(cr);
	pipeline_resume(&c->cc_r, c->cc_r.r_view, NULL);
	crun_leave(cr);		/* may free cr */
}

/*
 * The ratelimit phase of a step (rc_ratelimit): a token of the
 * caller's per-user bucket and of its tool's own buckets; counted in
 * Redis's buckets, the call waits for their answer (crun_on_limit()).
 */
static enum pipeline_rc
crun_step_ratelimit(struct request *r)
{
	struct crun_call	*c = (struct crun_call *)r;
	enum ratelimit_verdict	 v;
	unsigned int		 retry;

	if (c->cc_retry)
		return PIPELINE_NEXT;
	if (c->cc_decided) {
		v = c->cc_verdict;
		retry = c->cc_retry_s;
	} else
		v = ratelimit_step(r->r_w, c->cc_run->cr_p, c->cc_tool,
		    strlen(c->cc_tool), &retry, crun_on_limit, c, &c->cc_rl);
	switch (v) {
	case RATELIMIT_LIMITED:
		r->r_codec->rc_limited(r, retry);
		return PIPELINE_DONE;
	case RATELIMIT_PENDING:
		return PIPELINE_WAIT;
	default:
		return PIPELINE_NEXT;
	}
}

/*
 * The backend call (rc_upstream): where its caller's direct call would
 * go (backend_session.h): over a 2025-11-25 caller's client session's
 * own backend session (read anew, as a direct call reads it), else
 * over the caller's principal's; in the caller's revision; its answer
 * as a tree.
 */
static enum pipeline_rc
crun_step_upstream(struct request *r, struct upstream_req *uq)
{
	struct crun_call	*c = (struct crun_call *)r;
	struct crun		*cr = c->cc_run;

	if (cr->cr_cc.cc_sid != NULL && c->cc_sess == NULL &&
	    (c->cc_sess = calloc(1, sizeof(*c->cc_sess))) != NULL &&
	    session_load(cr->cr_w->w_store, cr->cr_cc.cc_sid, store_now_ms(),
	    c->cc_sess) != 0) {
		free(c->cc_sess);
		c->cc_sess = NULL;
	}
	uq->uq_sess = c->cc_sess;
	uq->uq_caps = c->cc_sess != NULL ? cr->cr_cc.cc_caps : NULL;
	uq->uq_client = cr->cr_era;
	uq->uq_flags &= ~UPSTREAM_F_TEXT;
	return PIPELINE_NEXT;
}

static void
crun_step_error(struct request *r, int status, int code, const char *message,
    json_t *data)
{
	char why[512];

	(void)status;
	(void)code;
	json_decref(data);
	if (r->r_be != NULL)
		(void)snprintf(why, sizeof(why), "backend %s: %s",
		    r->r_be->cb_name, message);
	else
		(void)snprintf(why, sizeof(why), "%s", message);
	crun_call_fail((struct crun_call *)r, why);
}

/* a step refused by its tool's rate limit */
static void
crun_step_limited(struct request *r, unsigned int retry_s)
{
	struct crun_call	*c = (struct crun_call *)r;
	char			 why[512];

	(void)snprintf(why, sizeof(why), "tool %s: %s (retry after %u s)",
	    c->cc_tool, RATELIMIT_MESSAGE, retry_s);
	crun_call_fail(c, why);
}

static const struct upstream_cbs crun_step_cbs = {
	crun_params, crun_push, crun_on_done
};

/* a composite's step: no client of its own, no session, routed when
 * authorized */
static const struct request_codec crun_step_codec = {
	.rc_name = "composite step",
	.rc_era = PROTO_ERA_LEGACY,	/* the caller's: rc_upstream */
	.rc_authorize = crun_step_authorize,
	.rc_ratelimit = crun_step_ratelimit,
	.rc_upstream = crun_step_upstream,
	.rc_cbs = &crun_step_cbs,
	.rc_error = crun_step_error,
	.rc_limited = crun_step_limited,
};
