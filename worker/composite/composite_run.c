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

#include "shared/composite_io.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/trace/trace.h"
#include "worker/auth/audit.h"
#include "worker/composite/composite_run.h"
#include "proto/classify.h"
#include "proto/mrequest.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/relay/mrtr.h"
#include "worker/view/view_int.h"
#include "worker/composite/handle_redis.h"
#include "worker/composite/composite_run_int.h"


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
	json_t	*target, *extra;
	char	 tid[33], sid[17];

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
	if (extra != NULL && trace_ids(cr->cr_span, tid, sid) == 0) {
		(void)json_object_set_new(extra, "trace_id", json_string(tid));
		(void)json_object_set_new(extra, "span_id", json_string(sid));
	}
	audit_workflow(cr->cr_w, cr->cr_p, type, outcome, target, extra);
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
	crun_trace_end(cr, abort_why);
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
cd_call(void *arg, uint64_t call, const struct composite_step *cs,
    json_t *args)
{
	struct crun	*cr = arg;

	cr->cr_calling = cs;	/* its span's parent: the step's */
	crun_call_start(cr, call, cs->cs_tool, args, NULL);
	cr->cr_calling = NULL;
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

	crun_trace_step(cr, i, st);
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
	crun_trace_end(cr, error);
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
	/* a step cannot carry a task back (not a tasks extension hop) */
	if (era == PROTO_ERA_MODERN)
		cr->cr_caps = proto_caps_without_tasks(json_object_get(
		    json_object_get(params, "_meta"),
		    MCP_META_CLIENT_CAPABILITIES));
	cr->cr_start_ms = store_now_ms();
	crun_trace_begin(cr, req);
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

	diag_tag_target(w, req, co->co_name, strlen(co->co_name), NULL);
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
