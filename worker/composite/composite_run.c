/*
 * A composite tool's run in a worker (composite_run.h): the driver of
 * the scheduler (shared/composite_sched.c).  Each tool step is a
 * tools/call through the upstream edge, under the step tool's backend
 * and its own name there (hidden tools too), with its arguments coerced
 * to the tool's inputSchema; timers are libevent's; progress goes to
 * the client as each step starts and ends when it sent a progressToken;
 * the client's cancel or disconnect cancels every call in flight.
 *
 * A 2026-07-28 call waiting for the client's input alone is suspended
 * on a handle (handle.h) and answered input_required; its retry resumes
 * it here or on any worker.  A 2025-11-25 client is asked over its
 * session (mrtr.c).  Both are composite_resume.c's.
 *
 * Counting (docs/ARCHITECTURE.md, Composite tools): the composite's own
 * tools/call takes the server's tokens once at the edge, as any call;
 * each step takes a token of the caller's per-user bucket and of its
 * tool's own buckets (ratelimit_step()), is authorized
 * (composite_step_allowed()) and audited.
 */
#include <sys/queue.h>
#include <sys/random.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "shared/cedar_request.h"
#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/composite_io.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "proto/method.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/composite/composite_run.h"
#include "worker/composite/handle.h"
#include "worker/auth/ratelimit.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/view/view_read.h"
#include "proto/proto.h"
#include "proto/classify.h"
#include "worker/process/process.h"
#include "worker/process/request.h"
#include "worker/relay/mrtr.h"
#include "worker/state/session.h"
#include "worker/upstream/backend_session.h"
#include "worker/view/view_get.h"
#include "worker/view/view_int.h"
#include "worker/composite/handle_redis.h"
#include "worker/composite/composite_run_int.h"


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

const struct composite *
composite_routed(struct worker *w, json_t *view, const char *name,
    size_t len)
{
	const struct composite	*co;
	struct view_route	 rt;
	int			 yes;

	if ((co = composite_find(w->w_conf, name, len)) == NULL)
		return NULL;
	memset(&rt, 0, sizeof(rt));
	yes = view_route_get(w, view, VIEW_ROUTE_TOOL, name, len, &rt) == 0 &&
	    rt.vr_backend != NULL && strcmp(rt.vr_backend, COMPOSITE_ROUTE) ==
	    0;
	view_route_clear(&rt);
	return yes ? co : NULL;
}

const struct composite *
composite_of_request(const struct request *r)
{
	const char	*name;
	size_t		 len;

	if (r->r_msg.jm_mm->mm_id != MCP_M_TOOLS_CALL ||
	    r->r_w->w_conf->cf_composites == NULL ||
	    ratelimit_tool_name(r->r_fast.rf_params != NULL ?
	    r->r_fast.rf_name : NULL, r->r_fast.rf_namelen,
	    r->r_msg.jm_params, &name, &len) == -1)
		return NULL;
	return composite_routed(r->r_w, r->r_view, name, len);
}

void
crun_audit(struct crun *cr, const char *type, const char *outcome,
    const struct composite_step *cs, const char *tool, const char *error)
{
	json_t *target, *extra;

	if (!cr->cr_w->w_conf->cf_audit.ca_enabled)
		return;
	target = json_pack("{s:s, s:s, s:s}", "type", "workflow",
	    "workflow_id", cr->cr_id, "workflow_name", cr->cr_co->co_name);
	extra = json_pack("{s:I, s:I, s:I}", "duration_ms", (json_int_t)
	    (store_now_ms() - cr->cr_start_ms), "step_count",
	    (json_int_t)cr->cr_co->co_nsteps, "timeout_ms",
	    (json_int_t)cr->cr_co->co_timeout_ms);
	if (target != NULL && cs != NULL) {
		(void)json_object_set_new(target, "step_id",
		    json_string(cs->cs_id));
		(void)json_object_set_new(target, "step_type", json_string(
		    cs->cs_kind == COMPOSITE_TOOL ? "tool" :
		    cs->cs_kind == COMPOSITE_FOREACH ? "forEach" :
		    "elicitation"));
	}
	if (target != NULL && tool != NULL)
		(void)json_object_set_new(target, "tool_name",
		    json_string(tool));
	if (extra != NULL && error != NULL)
		(void)json_object_set_new(extra, "error", json_string(error));
	audit_workflow(cr->cr_w, cr->cr_p, type, outcome, target, extra);
}

static void
crun_call_free(struct crun *cr, struct crun_call *c, const char *abort_why)
{
	TAILQ_REMOVE(&cr->cr_calls, c, cc_entry);
	ratelimit_wait_cancel(c->cc_rl);
	free(c->cc_tool);
	if (c->cc_up != NULL) {
		if (abort_why != NULL)
			upstream_abort(c->cc_up, abort_why);
		else
			upstream_cancel(c->cc_up);
	}
	json_decref(c->cc_params);
	if (c->cc_sess != NULL) {
		session_clear(c->cc_sess);
		free(c->cc_sess);
	}
	free(c);
}

void
crun_elicit_free(struct crun *cr, struct crun_elicit *ce)
{
	TAILQ_REMOVE(&cr->cr_elicits, ce, ce_entry);
	mrtr_cancel(ce->ce_wait);
	json_decref(ce->ce_params);
	free(ce);
}

void
crun_free(struct crun *cr, const char *abort_why)
{
	struct crun_call	*c;
	struct crun_elicit	*ce;
	struct crun_timer	*t;

	while ((c = TAILQ_FIRST(&cr->cr_calls)) != NULL)
		crun_call_free(cr, c, abort_why);
	while ((ce = TAILQ_FIRST(&cr->cr_elicits)) != NULL)
		crun_elicit_free(cr, ce);
	while ((t = TAILQ_FIRST(&cr->cr_timers)) != NULL) {
		TAILQ_REMOVE(&cr->cr_timers, t, ct_entry);
		event_free(t->ct_ev);
		free(t);
	}
	if (cr->cr_deadline != NULL)
		event_free(cr->cr_deadline);
	wf_run_free(cr->cr_run);
	auth_principal_drop(cr->cr_p);
	json_decref(cr->cr_view);
	json_decref(cr->cr_token);
	json_decref(cr->cr_caps);
	json_decref(cr->cr_raw);
	json_decref(cr->cr_params);
	handle_redis_cancel(cr);
	if (cr->cr_slot != NULL)
		*cr->cr_slot = NULL;
	worker_request_release(cr->cr_w, __func__);
	free(cr);
}

/* the end of a run whose edge is gone */
static void
crun_done_nowhere(void *arg, json_t *result, int code, const char *message)
{
	(void)arg;
	(void)code;
	(void)message;
	json_decref(result);
}

void
composite_run_cancel(struct crun *cr, const char *why)
{
	if (cr == NULL)
		return;
	cr->cr_slot = NULL;
	log_debug("composite %s: run %s cancelled: %s", cr->cr_co->co_name,
	    cr->cr_id, why != NULL ? why : "");
	crun_audit(cr, "vmcp_workflow_failed", "failure", NULL, NULL,
	    why != NULL ? why : "cancelled");
	if (cr->cr_depth > 0) {
		/* inside the run (the edge went away under a callback):
		 * nothing reaches the edge any more, crun_leave() frees */
		cr->cr_cc.cc_notify = NULL;
		cr->cr_cc.cc_request = NULL;
		cr->cr_cc.cc_done = crun_done_nowhere;
		cr->cr_ended = 1;
		return;
	}
	crun_free(cr, why != NULL ? why : "cancelled");
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


/*
 * Around each entry into the run from the loop (wf_run_start(),
 * _call_done(), _elicit_done(), _timer(), _abort()): cd_done() inside
 * only marks the end, and crun_leave() frees the run then, or, for a
 * 2026-07-28 call, suspends it on a handle once it waits for input
 * alone (never from inside a driver callback).
 */
void
crun_enter(struct crun *cr)
{
	cr->cr_depth++;
}

void
crun_leave(struct crun *cr)
{
	if (--cr->cr_depth > 0)
		return;
	if (cr->cr_ended)
		crun_free(cr, "the composite tool ended");
	else if (cr->cr_era == PROTO_ERA_MODERN &&
	    wf_run_suspendable(cr->cr_run))
		crun_suspend(cr);
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

	c->cc_up = NULL;	/* done: no cancel */
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
		    c->cc_be->cb_name, m != NULL ? m : "error",
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
		    c->cc_be->cb_name, r->ur_errmsg != NULL ? r->ur_errmsg :
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

/* a call of the run, its params (taken) to its backend: NULL, failed */
static struct crun_call *
crun_call_new(struct crun *cr, uint64_t call,
    const struct config_backend *be, json_t *params, int rounds)
{
	struct crun_call *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		json_decref(params);
		crun_fail_call(cr, call, "out of memory");
		return NULL;
	}
	c->cc_run = cr;
	c->cc_id = call;
	c->cc_be = be;
	c->cc_params = params;
	c->cc_rounds = rounds;
	TAILQ_INSERT_TAIL(&cr->cr_calls, c, cc_entry);
	return c;
}

/* the call sent to its backend, or failed */
static void
crun_call_up(struct crun *cr, struct crun_call *c)
{
	static const struct upstream_cbs cbs = {
		crun_params, crun_push, crun_on_done
	};
	struct upstream_req	 uq;
	uint64_t		 call = c->cc_id;
	char			 why[300];

	memset(&uq, 0, sizeof(uq));
	uq.uq_method = "tools/call";
	/*
	 * A step goes where its caller's direct call would (backend_session.h):
	 * over a 2025-11-25 caller's client session's own backend
	 * session (read anew, as a direct call reads it), else over the
	 * caller's principal's
	 */
	uq.uq_scope = bsession_scope(cr->cr_p, c->cc_be, BSESSION_FOR_USER);
	if (cr->cr_cc.cc_sid != NULL && c->cc_sess == NULL &&
	    (c->cc_sess = calloc(1, sizeof(*c->cc_sess))) != NULL &&
	    session_load(cr->cr_w->w_store, cr->cr_cc.cc_sid, store_now_ms(),
	    c->cc_sess) != 0) {
		free(c->cc_sess);
		c->cc_sess = NULL;
	}
	uq.uq_sess = c->cc_sess;
	uq.uq_caps = c->cc_sess != NULL ? cr->cr_cc.cc_caps : NULL;
	uq.uq_client = cr->cr_era;
	if ((c->cc_up = upstream_call(cr->cr_w, c->cc_be, &uq, &cbs, c)) ==
	    NULL) {
		(void)snprintf(why, sizeof(why), "backend %s: cannot send the "
		    "call", c->cc_be->cb_name);
		crun_call_free(cr, c, NULL);
		crun_fail_call(cr, call, why);
	}
}

void
crun_call_send(struct crun *cr, uint64_t call,
    const struct config_backend *be, json_t *params, int rounds)
{
	struct crun_call *c;

	if ((c = crun_call_new(cr, call, be, params, rounds)) != NULL)
		crun_call_up(cr, c);
}

/* a step refused by its tool's rate limit */
static void
crun_call_limited(struct crun *cr, uint64_t call, const char *tool,
    unsigned int retry)
{
	char why[512];

	(void)snprintf(why, sizeof(why), "tool %s: %s (retry after %u s)",
	    tool, RATELIMIT_MESSAGE, retry);
	crun_fail_call(cr, call, why);
}

/* Redis's buckets answered a step's wait (ratelimit_step()) */
static void
crun_on_limit(void *arg, enum ratelimit_verdict v, unsigned int retry)
{
	struct crun_call	*c = arg;
	struct crun		*cr = c->cc_run;
	uint64_t		 call = c->cc_id;
	char			*tool;

	c->cc_rl = NULL;	/* answered: no cancel */
	crun_enter(cr);
	if (v != RATELIMIT_LIMITED)
		crun_call_up(cr, c);
	else {
		tool = c->cc_tool;
		c->cc_tool = NULL;
		crun_call_free(cr, c, NULL);
		crun_call_limited(cr, call, tool, retry);
		free(tool);
	}
	crun_leave(cr);		/* may free cr */
}

/*
 * A tool call of the run: the step's tool (by its name in the step)
 * with args (taken), authorized, counted and sent; extra (borrowed,
 * or NULL) adds a resumed call's requestState and inputResponses.  A
 * call that cannot start is reported failed.  Counted in Redis's
 * buckets, the call waits for their answer (crun_on_limit()), in
 * cr_calls, so that the run's end cancels the wait.
 */
void
crun_call_start(struct crun *cr, uint64_t call, const char *tool,
    json_t *args, const json_t *extra)
{
	const struct config_backend	*be = NULL;
	struct crun_call		*c;
	json_t				*entry = NULL, *params = NULL;
	char				*own = NULL, why[512], az[256];
	unsigned int			 retry;

	if (crun_resolve(cr, tool, &be, &own, &entry) == -1) {
		(void)snprintf(why, sizeof(why), "tool %s is not in the view",
		    tool);
		goto fail;
	}
	if (!json_is_object(args)) {
		json_decref(args);
		args = json_object();
	}
	composite_coerce_args(args, json_object_get(entry, "inputSchema"));
	if (!composite_step_allowed(cr->cr_w, cr->cr_p, cr->cr_view, tool,
	    be->cb_name, own, entry, args, az, sizeof(az))) {
		log_debug("composite %s: run %s: tool %s denied: %s",
		    cr->cr_co->co_name, cr->cr_id, tool, az);
		crun_audit(cr, "vmcp_workflow_step_denied", "denied",
		    &cr->cr_co->co_steps[call >> 32], tool, az);
		(void)snprintf(why, sizeof(why), "tool %s: denied by the "
		    "authorization policy", tool);
		goto fail;
	}
	if ((params = json_pack("{s:s, s:O}", "name", own, "arguments",
	    args)) == NULL || (extra != NULL && json_object_update(params,
	    (json_t *)extra) == -1)) {
		json_decref(params);
		(void)snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	free(own);
	json_decref(args);
	if ((c = crun_call_new(cr, call, be, params, 0)) == NULL)
		return;
	switch (ratelimit_step(cr->cr_w, cr->cr_p, tool, strlen(tool), &retry,
	    crun_on_limit, c, &c->cc_rl)) {
	case RATELIMIT_LIMITED:
		crun_call_free(cr, c, NULL);
		crun_call_limited(cr, call, tool, retry);
		return;
	case RATELIMIT_PENDING:
		if ((c->cc_tool = strdup(tool)) != NULL)
			return;
		/* no memory to say which tool: the step fails now */
		crun_call_free(cr, c, NULL);
		crun_fail_call(cr, call, "out of memory");
		return;
	default:
		crun_call_up(cr, c);
		return;
	}
fail:
	free(own);
	json_decref(args);
	crun_fail_call(cr, call, why);
}

static void
cd_call(void *arg, uint64_t call, const struct composite_step *cs,
    json_t *args)
{
	crun_call_start(arg, call, cs->cs_tool, args, NULL);
}


static void
crun_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct crun_timer	*t = arg;
	struct crun		*cr = t->ct_run;
	uint64_t		 token = t->ct_token;

	(void)fd;
	(void)ev;
	TAILQ_REMOVE(&cr->cr_timers, t, ct_entry);
	event_free(t->ct_ev);
	free(t);
	crun_enter(cr);
	wf_run_timer(cr->cr_run, token);
	crun_leave(cr);		/* may free cr */
}

static void
cd_timer(void *arg, uint64_t token, uint64_t ms)
{
	struct crun		*cr = arg;
	struct crun_timer	*t;
	struct timeval		 tv = { (time_t)(ms / 1000),
				    (suseconds_t)(ms % 1000) * 1000 };

	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->ct_ev = evtimer_new(cr->cr_w->w_base, crun_on_timer, t)) ==
	    NULL) {
		free(t);
		/* a timer lost is a step that never times out: the
		 * workflow's own deadline still ends the run */
		log_warnx("composite %s: out of memory for a timer",
		    cr->cr_co->co_name);
		return;
	}
	t->ct_run = cr;
	t->ct_token = token;
	TAILQ_INSERT_TAIL(&cr->cr_timers, t, ct_entry);
	(void)evtimer_add(t->ct_ev, &tv);
}

static void
cd_cancel(void *arg, uint64_t call)
{
	struct crun		*cr = arg;
	struct crun_call	*c;

	struct crun_elicit	*ce;

	TAILQ_FOREACH(c, &cr->cr_calls, cc_entry)
		if (c->cc_id == call) {
			crun_call_free(cr, c, "the composite step ended");
			return;
		}
	TAILQ_FOREACH(ce, &cr->cr_elicits, ce_entry)
		if (ce->ce_id == call) {
			crun_elicit_free(cr, ce);
			return;
		}
}

static const char *
crun_state_name(enum wf_state st)
{
	switch (st) {
	case WF_RUNNING:
		return "started";
	case WF_COMPLETED:
		return "completed";
	case WF_SKIPPED:
		return "skipped";
	default:
		return "failed";
	}
}

/* a step started or ended: progress for the client, an audit event */
static void
cd_step(void *arg, size_t i, enum wf_state st)
{
	struct crun			*cr = arg;
	const struct composite_step	*cs = &cr->cr_co->co_steps[i];
	const char			*what = crun_state_name(st);
	char				 type[64], msg[300];
	json_t				*n;

	(void)snprintf(type, sizeof(type), "vmcp_workflow_step_%s", what);
	crun_audit(cr, type, st == WF_FAILED ? "failure" : "success", cs,
	    cs->cs_kind == COMPOSITE_TOOL ? cs->cs_tool :
	    cs->cs_kind == COMPOSITE_FOREACH && cs->cs_inner->cs_kind ==
	    COMPOSITE_TOOL ? cs->cs_inner->cs_tool : NULL, NULL);
	if (cr->cr_token == NULL || cr->cr_cc.cc_notify == NULL)
		return;
	(void)snprintf(msg, sizeof(msg), "step %s %s", cs->cs_id, what);
	/* progress increases with every event (MCP 2025-11-25, Progress);
	 * a step has at most two, so 2n bounds them */
	n = json_pack("{s:s, s:s, s:{s:O, s:I, s:I, s:s}}", "jsonrpc", "2.0",
	    "method", "notifications/progress", "params", "progressToken",
	    cr->cr_token, "progress", (json_int_t)++cr->cr_progress, "total",
	    (json_int_t)(2 * cr->cr_co->co_nsteps), "message", msg);
	if (n != NULL)
		cr->cr_cc.cc_notify(cr->cr_cc.cc_arg, n);
}

static void
cd_done(void *arg, json_t *ctx, const char *error)
{
	struct crun	*cr = arg;
	json_t		*result = NULL;
	char		 err[512], text[700];

	if (error == NULL &&
	    (result = composite_result(cr->cr_co, ctx, err, sizeof(err))) ==
	    NULL)
		error = err;
	if (error != NULL) {
		/* a tool's failure is a result with isError (MCP 2025-11-25,
		 * Tools, Error Handling), as a backend tool's would be */
		(void)snprintf(text, sizeof(text), "composite tool %s "
		    "failed: %s", cr->cr_co->co_name, error);
		result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
		    "text", "text", text, "isError", 1);
		log_debug("%s", text);
	}
	crun_audit(cr, error == NULL ? "vmcp_workflow_completed" :
	    strstr(error, "timed out") != NULL && strncmp(error, "step ", 5) !=
	    0 ? "vmcp_workflow_timed_out" : "vmcp_workflow_failed",
	    error == NULL ? "success" : "failure", NULL, NULL, error);
	/* the edge forgets the run before it is answered (and freed) */
	if (cr->cr_slot != NULL)
		*cr->cr_slot = NULL;
	cr->cr_slot = NULL;
	if (cr->cr_elicit) {
		json_decref(result);
		(void)snprintf(text, sizeof(text), "Internal error: composite "
		    "tool %s: %s", cr->cr_co->co_name, error);
		cr->cr_cc.cc_done(cr->cr_cc.cc_arg, NULL,
		    JSONRPC_INTERNAL_ERROR, text);
	} else
		cr->cr_cc.cc_done(cr->cr_cc.cc_arg, result, result == NULL ?
		    JSONRPC_INTERNAL_ERROR : 0,
		    "Internal error: out of memory");
	if (cr->cr_depth > 0)
		cr->cr_ended = 1;	/* crun_leave() frees it */
	else
		crun_free(cr, "the composite tool ended");
}

static void
crun_on_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct crun	*cr = arg;
	char		 why[64];

	(void)fd;
	(void)ev;
	(void)snprintf(why, sizeof(why), "timed out after %llu ms",
	    (unsigned long long)cr->cr_co->co_timeout_ms);
	crun_enter(cr);
	wf_run_abort(cr->cr_run, why);
	crun_leave(cr);		/* may free cr */
}

const struct wf_driver crun_driver = {
	cd_call, cd_elicit, cd_timer, cd_cancel, cd_step, cd_done
};

/* a run's shell for req (its principal and owner), or NULL */
struct crun *
crun_new(struct worker *w, json_t *view, struct httpd_req *req,
    enum proto_era era, const struct composite *co, json_t *params,
    const struct composite_client *cc)
{
	struct crun	*cr;

	if ((cr = calloc(1, sizeof(*cr))) == NULL)
		return NULL;
	worker_request_hold(w);
	cr->cr_w = w;
	cr->cr_co = co;
	cr->cr_cc = *cc;
	cr->cr_era = era;
	cr->cr_view = json_incref(view);
	cr->cr_p = auth_principal_hold(req);
	(void)snprintf(cr->cr_owner, sizeof(cr->cr_owner), "%s",
	    auth_scope(req));
	cr->cr_token = json_incref(json_object_get(json_object_get(params,
	    "_meta"), "progressToken"));
	if (era == PROTO_ERA_MODERN)
		cr->cr_caps = json_incref(json_object_get(json_object_get(
		    params, "_meta"), MCP_META_CLIENT_CAPABILITIES));
	cr->cr_start_ms = store_now_ms();
	TAILQ_INIT(&cr->cr_calls);
	TAILQ_INIT(&cr->cr_elicits);
	TAILQ_INIT(&cr->cr_timers);
	return cr;
}

/* the workflow's deadline on the loop, ms from now */
int
crun_arm_deadline(struct crun *cr, uint64_t ms)
{
	struct timeval	 tv = { (time_t)(ms / 1000),
			    (suseconds_t)(ms % 1000) * 1000 };

	if ((cr->cr_deadline = evtimer_new(cr->cr_w->w_base,
	    crun_on_deadline, cr)) == NULL)
		return -1;
	(void)evtimer_add(cr->cr_deadline, &tv);
	return 0;
}


void
composite_run_start(struct worker *w, json_t *view, struct httpd_req *req,
    enum proto_era era, const struct composite *co, json_t *params,
    const struct composite_client *cc, struct crun **slot)
{
	struct crun	*cr;
	json_t		*args, *p = NULL;
	char		 err[512], msg[600];
	uint8_t		 rnd[16];
	size_t		 i;

	/* a 2026-07-28 retry carrying a handle vmcpd minted: the retry
	 * of a composite is never a backend's, which never sees its
	 * requestState */
	if (era == PROTO_ERA_MODERN &&
	    json_object_get(params, "requestState") != NULL) {
		crun_resume(w, view, req, co, params, cc, slot);
		return;
	}
	args = json_object_get(params, "arguments");
	if (args != NULL && !json_is_object(args)) {
		cc->cc_done(cc->cc_arg, NULL, JSONRPC_INVALID_PARAMS,
		    "Invalid params: \"arguments\" must be an object");
		return;
	}
	if ((p = composite_params(co, args, err, sizeof(err))) == NULL) {
		(void)snprintf(msg, sizeof(msg), "Invalid params: %s", err);
		cc->cc_done(cc->cc_arg, NULL, JSONRPC_INVALID_PARAMS, msg);
		return;
	}
	if ((cr = crun_new(w, view, req, era, co, params, cc)) == NULL)
		goto oom;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		(void)snprintf(cr->cr_id + 2 * i, 3, "%02x", rnd[i]);
	if ((cr->cr_run = wf_run_new(co, p, cr->cr_id, 0, &crun_driver,
	    cr)) == NULL || crun_arm_deadline(cr, co->co_timeout_ms) == -1) {
		crun_free(cr, NULL);
		goto oom;
	}
	json_decref(p);
	/* a snapshot keeps the wall clock's deadline for the resume */
	wf_run_set_deadline(cr->cr_run, cr->cr_start_ms + co->co_timeout_ms);
	crun_audit(cr, "vmcp_workflow_started", "success", NULL, NULL, NULL);
	log_debug("composite %s: run %s", co->co_name, cr->cr_id);
	/* a run that ends at once answers in here, and clears the slot */
	cr->cr_slot = slot;
	*slot = cr;
	crun_enter(cr);
	wf_run_start(cr->cr_run);
	crun_leave(cr);		/* may free cr, or suspend it */
	return;
oom:
	json_decref(p);
	cc->cc_done(cc->cc_arg, NULL, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory");
}
