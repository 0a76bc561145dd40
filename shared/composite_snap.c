/*
 * A composite run suspended and resumed (composite.h; MCP 2026-07-28,
 * Multi Round-Trip Requests): the run as JSON once nothing but input
 * is awaited, and that JSON made a run again.  A snapshot is what
 * vmcpd's handles db keeps (worker/composite/handle.c), never what a client
 * holds, and the run it restores goes on exactly where it stopped:
 * the steps' states and outputs, the forEach iterations, the retry
 * counters and arguments, the calls that wait (an elicitation, a
 * backend's input_required with its requestState) and the deadline.
 * A snapshot names its composite and the definition's fingerprint: a
 * reload that changed the composite refuses it.  Restore checks the
 * snapshot's shape as it would a stranger's, so that a damaged record
 * is an error, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "composite_int.h"

#define WF_SNAP_VERSION	1

static const char *const wf_snap_states[] = {
	[WF_WAITING] = "waiting",
	[WF_RUNNING] = "running",
	[WF_RETRY_WAIT] = "retry",
	[WF_COMPLETED] = "completed",
	[WF_FAILED] = "failed",
	[WF_SKIPPED] = "skipped"
};

void
wf_unsuspend(struct wf_run *wr, json_t **inner)
{
	if (*inner == NULL)
		return;
	json_decref(*inner);
	*inner = NULL;
	wr->wr_suspended--;
}

/* the inner-state slot of a tool call in flight, or NULL */
static json_t **
wf_inner_slot(struct wf_run *wr, uint64_t call)
{
	size_t			 i = (size_t)(call >> 32);
	size_t			 k = (size_t)(call & 0xffffffff);
	struct wf_stepst	*ss;

	if (wr->wr_finished || i >= wr->wr_co->co_nsteps)
		return NULL;
	ss = &wr->wr_st[i];
	if (ss->ss_state != WF_RUNNING)
		return NULL;
	if (k == WF_ITER_NONE)
		return wr->wr_co->co_steps[i].cs_kind == COMPOSITE_TOOL ?
		    &ss->ss_inner : NULL;
	if (k - 1 >= ss->ss_niters ||
	    ss->ss_iters[k - 1].wi_state != WF_RUNNING)
		return NULL;
	return &ss->ss_iters[k - 1].wi_inner;
}

int
wf_run_call_suspend(struct wf_run *wr, uint64_t call, json_t *result)
{
	json_t	**slot, *inner, *st, *ir;

	if ((slot = wf_inner_slot(wr, call)) == NULL || *slot != NULL)
		return -1;
	st = json_object_get(result, "requestState");
	ir = json_object_get(result, "inputRequests");
	if ((st != NULL && !json_is_string(st)) ||
	    (ir != NULL && !json_is_object(ir)) || (st == NULL && ir == NULL))
		return -1;
	if ((inner = json_object()) == NULL ||
	    (st != NULL && json_object_set_new(inner, "requestState",
	    json_deep_copy(st)) == -1) ||
	    (ir != NULL && json_object_set_new(inner, "inputRequests",
	    json_deep_copy(ir)) == -1)) {
		json_decref(inner);
		return -1;
	}
	*slot = inner;
	wr->wr_suspended++;
	return 0;
}

json_t *
wf_run_call_resume(struct wf_run *wr, uint64_t call)
{
	json_t	**slot, *inner;

	if ((slot = wf_inner_slot(wr, call)) == NULL || *slot == NULL)
		return NULL;
	inner = *slot;
	*slot = NULL;
	wr->wr_suspended--;
	return inner;
}

static int
wf_eliciting(const struct wf_run *wr)
{
	size_t	 i;

	for (i = 0; i < wr->wr_co->co_nsteps; i++)
		if (wr->wr_co->co_steps[i].cs_kind == COMPOSITE_ELICITATION &&
		    wr->wr_st[i].ss_state == WF_RUNNING)
			return 1;
	return 0;
}

int
wf_run_suspendable(const struct wf_run *wr)
{
	return !wr->wr_finished && !wr->wr_in_pump &&
	    wr->wr_running == wr->wr_suspended &&
	    (wr->wr_suspended > 0 || wf_eliciting(wr));
}

void
wf_run_set_deadline(struct wf_run *wr, uint64_t ms)
{
	wr->wr_deadline_ms = ms;
}

uint64_t
wf_run_deadline(const struct wf_run *wr)
{
	return wr->wr_deadline_ms;
}

/* {call, key, step, kind: tool, tool, arguments, requestState?, ...} */
static json_t *
wf_pending_tool(uint64_t call, const char *key, const char *step,
    const char *tool, json_t *args, json_t *inner)
{
	json_t	*p;

	if ((p = json_pack("{s:I, s:s, s:s, s:s, s:s, s:O?}", "call",
	    (json_int_t)call, "key", key, "step", step, "kind", "tool",
	    "tool", tool, "arguments", args)) == NULL ||
	    json_object_update(p, inner) == -1) {
		json_decref(p);
		return NULL;
	}
	return p;
}

json_t *
wf_run_pending(const struct wf_run *wr)
{
	const struct composite_step	*cs;
	const struct wf_stepst		*ss;
	json_t				*out, *p, *msg;
	char				 err[TMPL_ERR_MAX], key[160];
	size_t				 i, k;

	if ((out = json_array()) == NULL)
		return NULL;
	for (i = 0; i < wr->wr_co->co_nsteps; i++) {
		cs = &wr->wr_co->co_steps[i];
		ss = &wr->wr_st[i];
		if (ss->ss_state != WF_RUNNING)
			continue;
		p = NULL;
		if (cs->cs_kind == COMPOSITE_ELICITATION) {
			/* its template reads its dependencies alone, which
			 * have ended: the message is the one first asked */
			if ((msg = tmpl_eval(cs->cs_message, wr->wr_ctx, err,
			    sizeof(err))) == NULL)
				msg = json_string("");
			p = json_pack("{s:I, s:s, s:s, s:s, s:s, s:O}", "call",
			    (json_int_t)wf_call_id(i, WF_ITER_NONE), "key",
			    cs->cs_id, "step", cs->cs_id, "kind",
			    "elicitation", "message", json_is_string(msg) ?
			    json_string_value(msg) : "", "requestedSchema",
			    cs->cs_schema);
			json_decref(msg);
		} else if (cs->cs_kind == COMPOSITE_TOOL) {
			if (ss->ss_inner == NULL)
				continue;
			p = wf_pending_tool(wf_call_id(i, WF_ITER_NONE),
			    cs->cs_id, cs->cs_id, cs->cs_tool, ss->ss_args,
			    ss->ss_inner);
		} else {
			for (k = 0; k < ss->ss_niters; k++) {
				if (ss->ss_iters[k].wi_state != WF_RUNNING ||
				    ss->ss_iters[k].wi_inner == NULL)
					continue;
				(void)snprintf(key, sizeof(key), "%s[%zu]",
				    cs->cs_id, k);
				if ((p = wf_pending_tool(wf_call_id(i, k + 1),
				    key, cs->cs_id, cs->cs_inner->cs_tool,
				    ss->ss_iters[k].wi_args,
				    ss->ss_iters[k].wi_inner)) == NULL ||
				    json_array_append_new(out, p) == -1)
					goto fail;
			}
			continue;
		}
		if (p == NULL || json_array_append_new(out, p) == -1)
			goto fail;
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

static int
wf_is_elicit(const json_t *entry)
{
	const char	*kind = json_string_value(json_object_get(entry, "kind"));

	return kind != NULL && strcmp(kind, "elicitation") == 0;
}

json_t *
wf_input_requests(const json_t *pending)
{
	json_t		*out, *p, *r, *v;
	const char	*key, *k;
	char		 name[320];
	size_t		 i;

	if ((out = json_object()) == NULL)
		return NULL;
	json_array_foreach(pending, i, p) {
		key = json_string_value(json_object_get(p, "key"));
		if (key == NULL)
			continue;
		if (wf_is_elicit(p)) {
			r = json_pack("{s:s, s:{s:s, s:O, s:O}}", "method",
			    "elicitation/create", "params", "mode", "form",
			    "message", json_object_get(p, "message"),
			    "requestedSchema", json_object_get(p,
			    "requestedSchema"));
			if (r == NULL || json_object_set_new(out, key, r) == -1)
				goto fail;
			continue;
		}
		json_object_foreach(json_object_get(p, "inputRequests"), k,
		    v) {
			if (snprintf(name, sizeof(name), "%s/%s", key, k) >=
			    (int)sizeof(name))
				goto fail;
			if (json_object_set(out, name, v) == -1)
				goto fail;
		}
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

json_t *
wf_input_response(const json_t *entry, const json_t *responses)
{
	json_t		*r, *out, *v;
	const char	*key, *k, *action;
	char		 name[320];

	if ((key = json_string_value(json_object_get(entry, "key"))) == NULL ||
	    !json_is_object(responses))
		return NULL;
	if (wf_is_elicit(entry)) {
		r = json_object_get(responses, key);
		action = json_string_value(json_object_get(r, "action"));
		v = json_object_get(r, "content");
		if (action == NULL || (strcmp(action, "accept") != 0 &&
		    strcmp(action, "decline") != 0 &&
		    strcmp(action, "cancel") != 0) ||
		    (v != NULL && !json_is_object(v)))
			return NULL;
		return json_incref(r);
	}
	if ((out = json_object()) == NULL)
		return NULL;
	json_object_foreach(json_object_get(entry, "inputRequests"), k, v) {
		if (snprintf(name, sizeof(name), "%s/%s", key, k) >=
		    (int)sizeof(name) ||
		    !json_is_object(r = json_object_get(responses, name)) ||
		    json_object_set(out, k, r) == -1) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* a member set to a copy of v, if v is not NULL */
static int
wf_snap_set(json_t *o, const char *key, json_t *v)
{
	if (v == NULL)
		return 0;
	return json_object_set_new(o, key, json_deep_copy(v));
}

static json_t *
wf_snap_iter(const struct wf_iter *wi)
{
	json_t	*o;

	if ((o = json_pack("{s:s, s:I}", "state",
	    wf_snap_states[wi->wi_state], "attempt",
	    (json_int_t)wi->wi_attempt)) == NULL)
		return NULL;
	if (wf_snap_set(o, "args", wi->wi_args) == -1 ||
	    wf_snap_set(o, "output", wi->wi_output) == -1 ||
	    wf_snap_set(o, "inner", wi->wi_inner) == -1 ||
	    (wi->wi_error != NULL && json_object_set_new(o, "error",
	    json_string(wi->wi_error)) == -1)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
wf_snap_step(const struct composite_step *cs, const struct wf_stepst *ss)
{
	json_t	*o, *iters, *it;
	size_t	 k;

	if ((o = json_pack("{s:s, s:s, s:I}", "id", cs->cs_id, "state",
	    wf_snap_states[ss->ss_state], "attempt",
	    (json_int_t)ss->ss_attempt)) == NULL)
		return NULL;
	if (wf_snap_set(o, "args", ss->ss_args) == -1 ||
	    wf_snap_set(o, "inner", ss->ss_inner) == -1)
		goto fail;
	if (cs->cs_kind == COMPOSITE_FOREACH && ss->ss_coll != NULL) {
		if (wf_snap_set(o, "collection", ss->ss_coll) == -1 ||
		    json_object_set_new(o, "next",
		    json_integer((json_int_t)ss->ss_next)) == -1 ||
		    json_object_set_new(o, "failed",
		    json_boolean(ss->ss_failed)) == -1 ||
		    (ss->ss_ferror != NULL && json_object_set_new(o,
		    "failedWhy", json_string(ss->ss_ferror)) == -1) ||
		    (iters = json_array()) == NULL ||
		    json_object_set_new(o, "iterations", iters) == -1)
			goto fail;
		for (k = 0; k < ss->ss_niters; k++)
			if ((it = wf_snap_iter(&ss->ss_iters[k])) == NULL ||
			    json_array_append_new(iters, it) == -1)
				goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *
wf_run_snapshot(const struct wf_run *wr)
{
	const struct composite	*co = wr->wr_co;
	json_t			*snap, *steps, *st;
	size_t			 i;

	if (!wf_run_suspendable(wr))
		return NULL;
	if ((snap = json_pack("{s:i, s:s, s:s, s:I, s:I, s:o, s:[]}", "v",
	    WF_SNAP_VERSION, "composite", co->co_name, "fingerprint",
	    co->co_fp, "maxParallel", (json_int_t)wr->wr_maxpar, "deadline",
	    (json_int_t)wr->wr_deadline_ms, "ctx", json_deep_copy(wr->wr_ctx),
	    "steps")) == NULL)
		return NULL;
	steps = json_object_get(snap, "steps");
	for (i = 0; i < co->co_nsteps; i++)
		if ((st = wf_snap_step(&co->co_steps[i], &wr->wr_st[i])) ==
		    NULL || json_array_append_new(steps, st) == -1) {
			json_decref(snap);
			return NULL;
		}
	return snap;
}

/* --- restore --- */

static int
wf_restore_state(const json_t *o, enum wf_state *st)
{
	const char	*s = json_string_value(json_object_get(o, "state"));
	size_t		 i;

	for (i = 0; s != NULL && i < sizeof(wf_snap_states) /
	    sizeof(wf_snap_states[0]); i++)
		if (strcmp(s, wf_snap_states[i]) == 0) {
			*st = (enum wf_state)i;
			return 0;
		}
	return -1;
}

/* a count member: 0 <= n <= max */
static int
wf_restore_count(const json_t *o, const char *key, size_t max, size_t *n)
{
	json_t	*v = json_object_get(o, key);

	if (v == NULL) {
		*n = 0;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return -1;
	*n = (size_t)json_integer_value(v);
	return 0;
}

/* a copy of a member that must be an object when present (or needed) */
static int
wf_restore_obj(const json_t *o, const char *key, int need, json_t **dst)
{
	json_t	*v = json_object_get(o, key);

	if (v == NULL)
		return need ? -1 : 0;
	if (!json_is_object(v) || (*dst = json_deep_copy(v)) == NULL)
		return -1;
	return 0;
}

static int
wf_restore_iter(struct wf_run *wr, const struct composite_step *cs,
    struct wf_stepst *ss, size_t k, const json_t *o)
{
	struct wf_iter	*wi = &ss->ss_iters[k];
	json_t		*v;
	size_t		 n;

	if (!json_is_object(o) || wf_restore_state(o, &wi->wi_state) == -1 ||
	    wf_restore_count(o, "attempt", cs->cs_retry_count, &n) == -1)
		return -1;
	wi->wi_attempt = (unsigned int)n;
	/* the iterations started are those below next */
	if ((wi->wi_state == WF_WAITING) != (k >= ss->ss_next) ||
	    wi->wi_state == WF_SKIPPED)
		return -1;
	if (wf_restore_obj(o, "args", wi->wi_state == WF_RUNNING ||
	    wi->wi_state == WF_RETRY_WAIT, &wi->wi_args) == -1 ||
	    wf_restore_obj(o, "inner", wi->wi_state == WF_RUNNING,
	    &wi->wi_inner) == -1)
		return -1;
	/* an output is a completed iteration's alone: one that still runs
	 * gets its own when it ends */
	if ((v = json_object_get(o, "output")) != NULL &&
	    (wi->wi_state != WF_COMPLETED ||
	    (wi->wi_output = json_deep_copy(v)) == NULL))
		return -1;
	if ((v = json_object_get(o, "error")) != NULL &&
	    (!json_is_string(v) ||
	    (wi->wi_error = strdup(json_string_value(v))) == NULL))
		return -1;
	switch (wi->wi_state) {
	case WF_RUNNING:
		ss->ss_running++;
		wr->wr_running++;
		wr->wr_suspended++;
		break;
	case WF_COMPLETED:
	case WF_FAILED:
		ss->ss_ended++;
		break;
	default:
		break;
	}
	return 0;
}

static int
wf_restore_foreach(struct wf_run *wr, const struct composite_step *cs,
    struct wf_stepst *ss, const json_t *o)
{
	json_t	*coll, *iters, *v;
	size_t	 k;

	coll = json_object_get(o, "collection");
	iters = json_object_get(o, "iterations");
	if (!json_is_array(coll) || !json_is_array(iters) ||
	    json_array_size(coll) > cs->cs_max_iterations ||
	    json_array_size(iters) != json_array_size(coll) ||
	    !json_is_boolean(json_object_get(o, "failed")) ||
	    (ss->ss_coll = json_deep_copy(coll)) == NULL)
		return -1;
	if (wf_restore_count(o, "next", json_array_size(coll),
	    &ss->ss_next) == -1)
		return -1;
	ss->ss_failed = json_is_true(json_object_get(o, "failed"));
	if ((v = json_object_get(o, "failedWhy")) != NULL &&
	    (!json_is_string(v) ||
	    (ss->ss_ferror = strdup(json_string_value(v))) == NULL))
		return -1;
	/* ss_niters with ss_iters, never before: wf_run_free() walks them */
	if (json_array_size(coll) > 0 && (ss->ss_iters = calloc(
	    json_array_size(coll), sizeof(*ss->ss_iters))) == NULL)
		return -1;
	ss->ss_niters = json_array_size(coll);
	for (k = 0; k < ss->ss_niters; k++)
		if (wf_restore_iter(wr, cs, ss, k, json_array_get(iters, k)) ==
		    -1)
			return -1;
	/* a forEach that has every iteration ended has ended itself */
	if (ss->ss_ended == ss->ss_niters || (ss->ss_failed &&
	    ss->ss_running == 0))
		return -1;
	return 0;
}

static int
wf_restore_step(struct wf_run *wr, size_t i, const json_t *o)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	struct wf_stepst		*ss = &wr->wr_st[i];
	size_t				 n;
	int				 run;

	if (!json_is_object(o) || !json_is_string(json_object_get(o, "id")) ||
	    strcmp(json_string_value(json_object_get(o, "id")),
	    cs->cs_id) != 0 || wf_restore_state(o, &ss->ss_state) == -1 ||
	    wf_restore_count(o, "attempt", cs->cs_retry_count, &n) == -1)
		return -1;
	ss->ss_attempt = (unsigned int)n;
	run = ss->ss_state == WF_RUNNING || ss->ss_state == WF_RETRY_WAIT;
	switch (ss->ss_state) {
	case WF_WAITING:
		return 0;
	case WF_COMPLETED:
	case WF_FAILED:
	case WF_SKIPPED:
		wr->wr_left--;
		return 0;
	default:
		break;
	}
	switch (cs->cs_kind) {
	case COMPOSITE_TOOL:
		if (wf_restore_obj(o, "args", run, &ss->ss_args) == -1 ||
		    wf_restore_obj(o, "inner", ss->ss_state == WF_RUNNING,
		    &ss->ss_inner) == -1)
			return -1;
		if (ss->ss_state == WF_RUNNING) {
			wr->wr_running++;
			wr->wr_suspended++;
		}
		return 0;
	case COMPOSITE_ELICITATION:
		return ss->ss_state == WF_RUNNING ? 0 : -1;
	default:
		if (ss->ss_state != WF_RUNNING)
			return -1;
		return wf_restore_foreach(wr, cs, ss, o);
	}
}

/* the restored run's timers: pending calls' timeouts, retry delays */
static void
wf_restore_timers(struct wf_run *wr)
{
	const struct composite_step	*cs;
	struct wf_stepst		*ss;
	struct wf_iter			*wi;
	size_t				 i, k;

	for (i = 0; i < wr->wr_co->co_nsteps; i++) {
		cs = &wr->wr_co->co_steps[i];
		ss = &wr->wr_st[i];
		if (ss->ss_state == WF_RETRY_WAIT)
			wr->wr_drv->wd_timer(wr->wr_arg, wf_call_id(i,
			    WF_ITER_NONE), wf_backoff(cs, ss->ss_attempt));
		if (ss->ss_state != WF_RUNNING)
			continue;
		if (cs->cs_kind != COMPOSITE_FOREACH) {
			wf_arm_timeout(wr, wf_call_id(i, WF_ITER_NONE),
			    ss->ss_attempt, cs->cs_timeout_ms);
			continue;
		}
		for (k = 0; k < ss->ss_niters; k++) {
			wi = &ss->ss_iters[k];
			if (wi->wi_state == WF_RUNNING)
				wf_arm_timeout(wr, wf_call_id(i, k + 1),
				    wi->wi_attempt, cs->cs_inner->cs_timeout_ms);
			else if (wi->wi_state == WF_RETRY_WAIT)
				wr->wr_drv->wd_timer(wr->wr_arg,
				    wf_call_id(i, k + 1),
				    wf_backoff(cs, wi->wi_attempt));
		}
	}
}

struct wf_run *
wf_run_restore(const struct composite *co, const json_t *snap,
    const struct wf_driver *drv, void *arg, char *err, size_t errlen)
{
	struct wf_run	*wr = NULL;
	json_t		*ctx, *steps, *v;
	const char	*name, *fp;
	size_t		 i, n;

	name = json_string_value(json_object_get(snap, "composite"));
	fp = json_string_value(json_object_get(snap, "fingerprint"));
	if (json_integer_value(json_object_get(snap, "v")) !=
	    WF_SNAP_VERSION || name == NULL || fp == NULL) {
		(void)snprintf(err, errlen, "not a snapshot of a run");
		return NULL;
	}
	if (strcmp(name, co->co_name) != 0) {
		(void)snprintf(err, errlen, "a snapshot of composite \"%s\", "
		    "not \"%s\"", name, co->co_name);
		return NULL;
	}
	if (strcmp(fp, co->co_fp) != 0) {
		(void)snprintf(err, errlen, "composite \"%s\" has changed "
		    "since the snapshot", co->co_name);
		return NULL;
	}
	ctx = json_object_get(snap, "ctx");
	steps = json_object_get(snap, "steps");
	if (!json_is_object(ctx) ||
	    !json_is_object(json_object_get(ctx, "steps")) ||
	    !json_is_object(json_object_get(ctx, "workflow")) ||
	    json_object_get(ctx, "params") == NULL ||
	    !json_is_array(steps) || json_array_size(steps) != co->co_nsteps ||
	    wf_restore_count(snap, "maxParallel", COMPOSITE_PARALLEL_MAX *
	    COMPOSITE_STEPS_MAX, &n) == -1 ||
	    !json_is_integer(v = json_object_get(snap, "deadline")) ||
	    json_integer_value(v) < 0)
		goto bad;
	if ((wr = calloc(1, sizeof(*wr))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	wr->wr_co = co;
	if ((wr->wr_st = calloc(co->co_nsteps, sizeof(*wr->wr_st))) == NULL ||
	    (wr->wr_ctx = json_deep_copy(ctx)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		wf_run_free(wr);
		return NULL;
	}
	wr->wr_drv = drv;
	wr->wr_arg = arg;
	wr->wr_maxpar = n > 0 ? (unsigned int)n : 10;
	wr->wr_deadline_ms = (uint64_t)json_integer_value(v);
	wr->wr_left = co->co_nsteps;
	wr->wr_steps = json_object_get(wr->wr_ctx, "steps");
	for (i = 0; i < co->co_nsteps; i++)
		if (wf_restore_step(wr, i, json_array_get(steps, i)) == -1)
			goto bad;
	/* as taken: something waits for input, nothing else runs */
	if (!wf_run_suspendable(wr))
		goto bad;
	wf_restore_timers(wr);
	return wr;
bad:
	(void)snprintf(err, errlen, "a damaged snapshot of composite \"%s\"",
	    co->co_name);
	wf_run_free(wr);
	return NULL;
}
