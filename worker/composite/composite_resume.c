/*
 * A composite run waiting for its client's input (composite_run.c runs
 * it): an elicitation step put to the client, a 2026-07-28 backend
 * step's input_required relayed to a 2025-11-25 client over its session
 * (mrtr.c), and a 2026-07-28 client's run suspended on a handle
 * (handle.h) and resumed by its retry on any worker (MCP 2026-07-28,
 * Multi Round-Trip Requests).
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/composite/composite_run.h"
#include "worker/composite/handle.h"
#include "worker/composite/handle_redis.h"
#include "worker/state/session_redis.h"
#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/relay/mrtr.h"
#include "worker/composite/composite_run_int.h"

static int
crun_elicit_send(void *arg, json_t *msg)
{
	struct crun_elicit *ce = arg;

	return ce->ce_run->cr_cc.cc_request(ce->ce_run->cr_cc.cc_arg, msg);
}

/* the client's answer (an ElicitResult), or NULL: none in time */
static void
crun_elicit_done(void *arg, json_t *responses, const char *err)
{
	struct crun_elicit	*ce = arg;
	struct crun		*cr = ce->ce_run;
	uint64_t		 id = ce->ce_id;
	json_t			*r = json_object_get(responses, "elicit");
	const char		*action;

	ce->ce_wait = NULL;	/* mrtr.c freed it */
	crun_elicit_free(cr, ce);
	action = json_string_value(json_object_get(r, "action"));
	if (action == NULL) {
		log_debug("composite %s: an elicitation went unanswered: %s",
		    cr->cr_co->co_name, err != NULL ? err : "no action");
		action = "cancel";
	}
	crun_enter(cr);
	wf_run_elicit_done(cr->cr_run, id, action, json_object_get(r,
	    "content"));
	crun_leave(cr);		/* may free cr */
}

/*
 * An elicitation step: a 2025-11-25 client is asked over its session,
 * on the call's stream, as a 2026-07-28 backend's input requests are
 * (mrtr.c: the answer may come to any worker).  A 2026-07-28 call is
 * answered input_required on a handle (crun_suspend()).  A run that
 * cannot ask ends with a JSON-RPC error that says why.
 */
void
cd_elicit(void *arg, uint64_t call, const struct composite_step *cs,
    const char *message)
{
	struct crun		*cr = arg;
	struct crun_elicit	*ce = NULL;
	json_t			*ir;
	char			 why[300], err[200];

	/* a 2026-07-28 call: the step waits in the run, which
	 * crun_leave() suspends on a handle once nothing else runs; only
	 * a client that declared elicitation is asked (MCP 2026-07-28,
	 * Elicitation) */
	if (cr->cr_era == PROTO_ERA_MODERN) {
		if (json_is_object(json_object_get(cr->cr_caps,
		    "elicitation")))
			return;
		(void)snprintf(err, sizeof(err), "the client did not declare "
		    "the elicitation capability");
		goto fail;
	}
	if (cr->cr_cc.cc_request == NULL || cr->cr_cc.cc_sid == NULL) {
		(void)snprintf(err, sizeof(err), "the client cannot be asked");
		goto fail;
	}
	ir = json_pack("{s:{s:s, s:{s:s, s:O}}}", "elicit", "method",
	    "elicitation/create", "params", "message", message,
	    "requestedSchema", cs->cs_schema);
	if (ir == NULL || (ce = calloc(1, sizeof(*ce))) == NULL) {
		json_decref(ir);
		(void)snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	ce->ce_run = cr;
	ce->ce_id = call;
	TAILQ_INSERT_TAIL(&cr->cr_elicits, ce, ce_entry);
	ce->ce_wait = mrtr_ask(cr->cr_w, cr->cr_cc.cc_sid, cr->cr_cc.cc_caps,
	    ir, crun_elicit_send, crun_elicit_done, ce, err, sizeof(err));
	json_decref(ir);
	if (ce->ce_wait == NULL) {
		crun_elicit_free(cr, ce);
		goto fail;
	}
	return;
fail:
	(void)snprintf(why, sizeof(why), "step %s asks the user "
	    "(elicitation): %s", cs->cs_id, err);
	cr->cr_elicit = 1;
	wf_run_abort(cr->cr_run, why);
}

/* a relayed backend's input answered: the call again with them */
static void
crun_relay_done(void *arg, json_t *responses, const char *err)
{
	struct crun_elicit		*ce = arg;
	struct crun			*cr = ce->ce_run;
	const struct config_backend	*be = ce->ce_be;
	json_t				*params = json_incref(ce->ce_params);
	uint64_t			 id = ce->ce_id;
	int				 rounds = ce->ce_rounds;
	char				 why[300];

	ce->ce_wait = NULL;	/* mrtr.c freed it */
	crun_elicit_free(cr, ce);
	crun_enter(cr);
	if (responses == NULL) {
		(void)snprintf(why, sizeof(why), "backend %s asked for input: "
		    "%s", be->cb_name, err != NULL ? err : "no answer");
		json_decref(params);
		wf_run_call_done(cr->cr_run, id, NULL, why);
	} else if (json_object_set(params, "inputResponses", responses) ==
	    -1) {
		json_decref(params);
		wf_run_call_done(cr->cr_run, id, NULL, "out of memory");
	} else
		crun_call_send(cr, id, be, params, rounds);
	crun_leave(cr);		/* may free cr */
}

/*
 * A 2026-07-28 backend's input_required in a 2025-11-25 client's run:
 * its input requests are put to the client over its session (mrtr.c,
 * as legacy_relay.c does for a call) and the call retried with the answers
 * and the backend's requestState, a bounded number of rounds.  0 when
 * asked (or retried at once: a requestState alone), -1 and why.
 */
int
crun_relay(struct crun *cr, const struct crun_call *c, json_t *result,
    char *why, size_t whylen)
{
	struct crun_elicit	*ce;
	json_t			*ir, *state, *params;
	char			 err[200];

	if (c->cc_rounds >= MRTR_ROUNDS) {
		(void)snprintf(why, whylen, "backend %s still asks for input "
		    "after %d rounds", c->cc_r.r_be->cb_name, MRTR_ROUNDS);
		return -1;
	}
	if (mrtr_input_required(result, &ir, &state) == -1) {
		(void)snprintf(why, whylen, "backend %s sent an invalid "
		    "input_required result", c->cc_r.r_be->cb_name);
		return -1;
	}
	if (cr->cr_cc.cc_request == NULL || cr->cr_cc.cc_sid == NULL) {
		(void)snprintf(why, whylen, "backend %s asked for input: the "
		    "client cannot be asked", c->cc_r.r_be->cb_name);
		return -1;
	}
	if ((params = json_copy(c->cc_params)) == NULL)
		goto oom;
	(void)json_object_del(params, "inputResponses");
	(void)json_object_del(params, "requestState");
	if (state != NULL && json_object_set(params, "requestState",
	    state) == -1) {
		json_decref(params);
		goto oom;
	}
	if (json_object_size(ir) == 0) {
		/* load shedding: the state alone, again */
		crun_call_send(cr, c->cc_id, c->cc_r.r_be, params,
		    c->cc_rounds + 1);
		return 0;
	}
	if ((ce = calloc(1, sizeof(*ce))) == NULL) {
		json_decref(params);
		goto oom;
	}
	ce->ce_run = cr;
	ce->ce_id = c->cc_id;
	ce->ce_be = c->cc_r.r_be;
	ce->ce_params = params;
	ce->ce_rounds = c->cc_rounds + 1;
	TAILQ_INSERT_TAIL(&cr->cr_elicits, ce, ce_entry);
	ce->ce_wait = mrtr_ask(cr->cr_w, cr->cr_cc.cc_sid, cr->cr_cc.cc_caps,
	    ir, crun_elicit_send, crun_relay_done, ce, err, sizeof(err));
	if (ce->ce_wait == NULL) {
		crun_elicit_free(cr, ce);
		(void)snprintf(why, whylen, "backend %s asked for input: %s",
		    c->cc_r.r_be->cb_name, err);
		return -1;
	}
	return 0;
oom:
	(void)snprintf(why, whylen, "out of memory");
	return -1;
}

/*
 * The run waits for the 2026-07-28 client's input alone: its state goes
 * to a handle (handle.h) bound to the caller and the composite until
 * the workflow's deadline, and the call is answered input_required
 * with the handle as requestState (MCP 2026-07-28, Multi Round-Trip
 * Requests); the run ends here, to be restored by the retry on any
 * worker (crun_resume()).
 */
void
crun_suspend(struct crun *cr)
{
	json_t		*pending = NULL, *ir = NULL, *snap = NULL, *result;
	enum handle_err	 e = HANDLE_ERROR;
	char		 id[HANDLE_ID_LEN + 1], why[128];

	if ((pending = wf_run_pending(cr->cr_run)) == NULL ||
	    (ir = wf_input_requests(pending)) == NULL ||
	    (snap = wf_run_snapshot(cr->cr_run)) == NULL ||
	    (e = handle_mint(cr->cr_w->w_store, cr->cr_owner, cr->cr_co,
	    snap, store_now_ms(), wf_run_deadline(cr->cr_run), id)) !=
	    HANDLE_OK) {
		(void)snprintf(why, sizeof(why), "cannot save the run for "
		    "the client's input: %s", handle_err_name(e));
		log_warnx("composite %s: run %s: %s", cr->cr_co->co_name,
		    cr->cr_id, why);
		json_decref(pending);
		json_decref(ir);
		json_decref(snap);
		crun_enter(cr);
		wf_run_abort(cr->cr_run, why);
		crun_leave(cr);		/* frees cr */
		return;
	}
	json_decref(pending);
	json_decref(snap);
	log_debug("composite %s: run %s suspended", cr->cr_co->co_name,
	    cr->cr_id);
	crun_audit(cr, "vmcp_workflow_suspended", "success", NULL, NULL, NULL);
	result = json_pack("{s:s, s:o, s:s}", "resultType", "input_required",
	    "inputRequests", ir, "requestState", id);
	if (cr->cr_slot != NULL)
		*cr->cr_slot = NULL;
	cr->cr_slot = NULL;
	cr->cr_cc.cc_done(cr->cr_cc.cc_arg, result, result == NULL ?
	    JSONRPC_INTERNAL_ERROR : 0, "Internal error: out of memory");
	crun_free(cr, NULL);
}

/* a refused requestState: one answer for every reason (no oracle) */
static void
crun_refuse(struct worker *w, struct httpd_req *req,
    const struct composite *co, const struct composite_client *cc,
    const char *reason)
{
	json_t *target;

	log_info("composite %s: requestState refused: %s", co->co_name,
	    reason);
	if (w->w_conf->cf_audit.ca_enabled) {
		target = json_pack("{s:s, s:s}", "type", "workflow",
		    "workflow_name", co->co_name);
		audit_workflow(w, auth_principal(req),
		    "vmcp_workflow_resume_refused", "denied", target,
		    json_pack("{s:s}", "error", reason));
	}
	cc->cc_done(cc->cc_arg, NULL, JSONRPC_INVALID_PARAMS,
	    HANDLE_CLIENT_MESSAGE);
}

/*
 * The retry of a suspended run (params' requestState, a handle, and
 * inputResponses): the handle is taken for its owner and composite,
 * the run restored under this worker's loop and each wait answered,
 * elicitations at once, suspended calls retried with their backend's
 * state and answers.  A missing answer asks again on a new handle.
 */
static void	crun_resume_snap(struct worker *, json_t *, struct httpd_req *,
		    const struct composite *, json_t *,
		    const struct composite_client *, struct crun **, json_t *);

/*
 * The handle is claimed through handle_store: on this host at once,
 * or in Redis, so the retry may come to any node and a replay is
 * refused on all.  A run stands in while the claim is out (the edge's
 * slot cancels it, the request held); the verdict frees it and the
 * retry goes on.
 */
static void
crun_claimed(void *arg, enum handle_err he, json_t *snap)
{
	struct crun			*cr = arg;
	struct worker			*w = cr->cr_w;
	struct composite_client		 cc = cr->cr_cc;
	struct crun			**slot = cr->cr_slot;
	struct httpd_req		*req = cr->cr_req;
	const struct composite		*co = cr->cr_co;
	json_t				*view, *params;

	view = json_incref(cr->cr_view);
	params = json_incref(cr->cr_params);
	/* held across: the request must not look finished in between */
	worker_request_hold(w);
	cr->cr_slot = NULL;
	*slot = NULL;
	crun_free(cr, NULL);
	if (he == HANDLE_UNAVAILABLE)
		cc.cc_done(cc.cc_arg, NULL, MCP_ERR_TRANSPORT,
		    SESSION_REDIS_DOWN);
	else if (he != HANDLE_OK)
		crun_refuse(w, req, co, &cc, handle_err_name(he));
	else
		crun_resume_snap(w, view, req, co, params, &cc, slot, snap);
	json_decref(view);
	json_decref(params);
	worker_request_release(w, __func__);
}

static void
crun_claim(struct worker *w, json_t *view, struct httpd_req *req,
    const struct composite *co, json_t *params,
    const struct composite_client *cc, struct crun **slot, const char *id)
{
	struct crun *cr;

	if (!handle_id_valid(id)) {
		crun_refuse(w, req, co, cc, handle_err_name(HANDLE_UNKNOWN));
		return;
	}
	if ((cr = crun_new(w, view, req, PROTO_ERA_MODERN, co, params,
	    cc)) == NULL) {
		cc->cc_done(cc->cc_arg, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	cr->cr_params = json_incref(params);
	cr->cr_req = req;
	/* in the slot first: the verdict may come within the call */
	cr->cr_slot = slot;
	*slot = cr;
	if (handle_store->hs_claim(w->w_store, id, cr->cr_owner, co,
	    store_now_ms(), crun_claimed, cr) == -1) {
		crun_free(cr, NULL);
		cc->cc_done(cc->cc_arg, NULL, MCP_ERR_TRANSPORT,
		    SESSION_REDIS_DOWN);
	}
}

void
crun_resume(struct worker *w, json_t *view, struct httpd_req *req,
    const struct composite *co, json_t *params,
    const struct composite_client *cc, struct crun **slot)
{
	const char	*id;

	id = json_string_value(json_object_get(params, "requestState"));
	if (id == NULL) {
		crun_refuse(w, req, co, cc, "not_a_string");
		return;
	}
	crun_claim(w, view, req, co, params, cc, slot, id);
}

/* the run restored from snap (the caller's reference, taken) */
static void
crun_resume_snap(struct worker *w, json_t *view, struct httpd_req *req,
    const struct composite *co, json_t *params,
    const struct composite_client *cc, struct crun **slot, json_t *snap)
{
	struct crun	*cr;
	json_t		*pending = NULL, *answers = NULL, *e, *a;
	json_t		*inner, *resp;
	char		 err[256];
	uint64_t	 now = store_now_ms(), dl, call;
	size_t		 i;

	if ((cr = crun_new(w, view, req, PROTO_ERA_MODERN, co, params,
	    cc)) == NULL)
		goto oom;
	(void)snprintf(cr->cr_id, sizeof(cr->cr_id), "%s", json_string_value(
	    json_object_get(json_object_get(json_object_get(snap, "ctx"),
	    "workflow"), "id")) != NULL ? json_string_value(json_object_get(
	    json_object_get(json_object_get(snap, "ctx"), "workflow"),
	    "id")) : "");
	if ((cr->cr_run = wf_run_restore(co, snap, &crun_driver, cr, err,
	    sizeof(err))) == NULL) {
		crun_free(cr, NULL);
		json_decref(snap);
		crun_refuse(w, req, co, cc, err);
		return;
	}
	json_decref(snap);
	dl = wf_run_deadline(cr->cr_run);
	if (crun_arm_deadline(cr, dl > now ? dl - now : 1) == -1 ||
	    (pending = wf_run_pending(cr->cr_run)) == NULL ||
	    (answers = json_array()) == NULL) {
		json_decref(pending);
		crun_free(cr, NULL);
		goto oom;
	}
	crun_audit(cr, "vmcp_workflow_resumed", "success", NULL, NULL, NULL);
	log_debug("composite %s: run %s resumed", co->co_name, cr->cr_id);
	cr->cr_slot = slot;
	*slot = cr;
	if (cr->cr_cc.cc_resumed != NULL)
		cr->cr_cc.cc_resumed(cr->cr_cc.cc_arg);
	resp = json_object_get(params, "inputResponses");
	json_array_foreach(pending, i, e) {
		if ((a = wf_input_response(e, resp)) == NULL) {
			/* not all answered: ask again, on a new handle */
			json_decref(answers);
			json_decref(pending);
			crun_suspend(cr);
			return;
		}
		(void)json_array_append_new(answers, a);
	}
	crun_enter(cr);
	json_array_foreach(pending, i, e) {
		if (cr->cr_ended)
			break;
		a = json_array_get(answers, i);
		call = (uint64_t)json_integer_value(json_object_get(e, "call"));
		if (strcmp(json_string_value(json_object_get(e, "kind")),
		    "elicitation") == 0) {
			wf_run_elicit_done(cr->cr_run, call, json_string_value(
			    json_object_get(a, "action")), json_object_get(a,
			    "content"));
			continue;
		}
		if ((inner = wf_run_call_resume(cr->cr_run, call)) == NULL)
			continue;
		(void)json_object_del(inner, "inputRequests");
		if (json_object_set(inner, "inputResponses", a) == -1)
			wf_run_call_done(cr->cr_run, call, NULL,
			    "out of memory");
		else
			crun_call_start(cr, call, json_string_value(
			    json_object_get(e, "tool")), json_deep_copy(
			    json_object_get(e, "arguments")), inner);
		json_decref(inner);
	}
	json_decref(answers);
	json_decref(pending);
	crun_leave(cr);		/* may free cr, or suspend it again */
	return;
oom:
	cc->cc_done(cc->cc_arg, NULL, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory");
}
