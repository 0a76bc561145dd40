/*
 * The dataflow scheduler of a composite run (composite_sched.h): a step starts
 * as soon as its own dependencies have ended (the reference runs levels
 * with a barrier between them), within a bound on running calls; its
 * condition, onError policy (abort, continue, retry with capped
 * exponential backoff), forEach iterations (maxParallel, maxIterations,
 * per-iteration onError) and elicitation answers (abort, continue,
 * skip_remaining, which skips every step not yet started) are all
 * decided here.  No I/O: the driver starts calls and timers and reports
 * their end, so every path runs in unit tests without sockets.
 *
 * The context the templates read ({params, steps, workflow}) lists the
 * steps in their declaration order from the start, whatever order they
 * finish in, so that a result built from it is deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/composite_io.h"
#include "composite_int.h"

/* the step's timeout for this attempt of a call */
void
wf_arm_timeout(struct wf_run *wr, uint64_t call, unsigned int attempt,
    uint64_t ms)
{
	wr->wr_drv->wd_timer(wr->wr_arg, WF_TIMEOUT |
	    (uint64_t)attempt << WF_ATTEMPT_SHIFT | call, ms);
}

static void
wf_cancel(struct wf_run *wr, uint64_t call)
{
	if (wr->wr_drv->wd_cancel != NULL)
		wr->wr_drv->wd_cancel(wr->wr_arg, call);
}

/* the workflow ended early: what is in flight is of no more use */
static void
wf_cancel_all(struct wf_run *wr)
{
	struct wf_stepst	*ss;
	size_t			 i, k;

	for (i = 0; i < wr->wr_co->co_nsteps; i++) {
		ss = &wr->wr_st[i];
		if (ss->ss_state != WF_RUNNING)
			continue;
		if (wr->wr_co->co_steps[i].cs_kind != COMPOSITE_FOREACH)
			wf_cancel(wr, wf_call_id(i, WF_ITER_NONE));
		for (k = 0; k < ss->ss_niters; k++)
			if (ss->ss_iters[k].wi_state == WF_RUNNING)
				wf_cancel(wr, wf_call_id(i, k + 1));
	}
}

static int
wf_state_ended(enum wf_state s)
{
	return s == WF_COMPLETED || s == WF_FAILED || s == WF_SKIPPED;
}

const char *
wf_state_name(enum wf_state s)
{
	switch (s) {
	case WF_WAITING:
		return "pending";
	case WF_RUNNING:
	case WF_RETRY_WAIT:
		return "running";
	case WF_COMPLETED:
		return "completed";
	case WF_FAILED:
		return "failed";
	default:
		return "skipped";
	}
}

/* the workflow fails (because of step id, if not NULL): the first
 * reason wins */
static void
wf_run_fail(struct wf_run *wr, const char *id, const char *why)
{
	char	 buf[512];

	if (wr->wr_finished)
		return;
	if (id != NULL)
		(void)snprintf(buf, sizeof(buf), "step %s: %s", id, why);
	else
		(void)snprintf(buf, sizeof(buf), "%s", why);
	wr->wr_error = strdup(buf);
	wr->wr_finished = 1;
	wf_cancel_all(wr);
	(void)json_object_set_new(json_object_get(wr->wr_ctx, "workflow"),
	    "status", json_string("failed"));
}

/* a step's record in the context: status, output, error */
static void
wf_step_end(struct wf_run *wr, size_t i, enum wf_state st, json_t *output,
    const char *error)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	json_t				*rec;

	wr->wr_st[i].ss_state = st;
	wr->wr_left--;
	if (output == NULL)
		output = cs->cs_defaults != NULL ?
		    json_deep_copy(cs->cs_defaults) : json_object();
	rec = json_pack("{s:s, s:o}", "status", wf_state_name(st), "output",
	    output);
	if (rec != NULL && error != NULL)
		(void)json_object_set_new(rec, "error", json_string(error));
	if (rec != NULL)
		(void)json_object_set_new(wr->wr_steps, cs->cs_id, rec);
	if (wr->wr_drv->wd_step != NULL)
		wr->wr_drv->wd_step(wr->wr_arg, i, st);
}

/* a step failed for good: its onError decides */
static void
wf_step_failed(struct wf_run *wr, size_t i, const char *error)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];

	wf_step_end(wr, i, WF_FAILED, NULL, error);
	if (cs->cs_onerror != COMPOSITE_CONTINUE)
		wf_run_fail(wr, cs->cs_id, error);
}

uint64_t
wf_backoff(const struct composite_step *cs, unsigned int attempt)
{
	uint64_t	 d = cs->cs_retry_delay_ms;
	unsigned int	 k;

	for (k = 1; k < attempt && d < cs->cs_retry_delay_ms *
	    COMPOSITE_BACKOFF_CAP; k++)
		d *= 2;
	if (d > cs->cs_retry_delay_ms * COMPOSITE_BACKOFF_CAP)
		d = cs->cs_retry_delay_ms * COMPOSITE_BACKOFF_CAP;
	return d;
}

/* the context of a forEach iteration: the run's plus .forEach */
static json_t *
wf_iter_ctx(struct wf_run *wr, size_t i, size_t k)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	json_t				*ctx;

	if ((ctx = json_copy(wr->wr_ctx)) == NULL)
		return NULL;
	if (json_object_set_new(ctx, "forEach", json_pack("{s:O, s:I}",
	    cs->cs_itemvar, json_array_get(wr->wr_st[i].ss_coll, k), "index",
	    (json_int_t)k)) == -1) {
		json_decref(ctx);
		return NULL;
	}
	return ctx;
}

static void
wf_iter_start(struct wf_run *wr, size_t i, size_t k)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	struct wf_stepst		*ss = &wr->wr_st[i];
	struct wf_iter			*wi = &ss->ss_iters[k];
	char				 err[TMPL_ERR_MAX];
	json_t				*ctx;

	wi->wi_state = WF_RUNNING;
	ss->ss_running++;
	wr->wr_running++;
	if (wi->wi_args == NULL) {
		err[0] = '\0';
		if ((ctx = wf_iter_ctx(wr, i, k)) != NULL) {
			wi->wi_args = composite_tvalue_expand(
			    &cs->cs_inner->cs_args, ctx, err, sizeof(err));
			json_decref(ctx);
		}
		if (wi->wi_args == NULL) {
			wf_run_call_done(wr, wf_call_id(i, k + 1), NULL,
			    err[0] != '\0' ? err : "out of memory");
			return;
		}
	}
	wr->wr_drv->wd_call(wr->wr_arg, wf_call_id(i, k + 1), cs->cs_inner,
	    json_incref(wi->wi_args));
	wf_arm_timeout(wr, wf_call_id(i, k + 1), wi->wi_attempt,
	    cs->cs_inner->cs_timeout_ms);
}

/* the forEach step's output once every iteration has ended */
static void
wf_foreach_end(struct wf_run *wr, size_t i)
{
	struct wf_stepst	*ss = &wr->wr_st[i];
	json_t			*iters, *it, *out;
	size_t			 k, ok = 0, bad = 0;

	if (ss->ss_failed) {
		wf_step_failed(wr, i, ss->ss_ferror != NULL ? ss->ss_ferror :
		    "an iteration failed");
		return;
	}
	iters = json_array();
	for (k = 0; k < ss->ss_niters; k++) {
		struct wf_iter	*wi = &ss->ss_iters[k];

		if (wi->wi_state == WF_COMPLETED)
			ok++;
		else
			bad++;
		it = json_pack("{s:I, s:O, s:s, s:O?}", "index", (json_int_t)k,
		    "item", json_array_get(ss->ss_coll, k), "status",
		    wf_state_name(wi->wi_state), "output", wi->wi_output);
		if (it != NULL && wi->wi_error != NULL)
			(void)json_object_set_new(it, "error",
			    json_string(wi->wi_error));
		(void)json_array_append_new(iters, it);
	}
	out = json_pack("{s:o, s:I, s:I, s:I}", "iterations", iters, "count",
	    (json_int_t)ss->ss_niters, "completed", (json_int_t)ok, "failed",
	    (json_int_t)bad);
	wf_step_end(wr, i, WF_COMPLETED, out, NULL);
}

/* the items of a forEach: an array, or a string holding one */
static json_t *
wf_collection(struct wf_run *wr, size_t i, char *err, size_t errlen)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	json_t				*v, *a;
	json_error_t			 je;

	if ((v = tmpl_eval(cs->cs_collection, wr->wr_ctx, err, errlen)) ==
	    NULL)
		return NULL;
	if (json_is_string(v)) {
		a = json_loads(json_string_value(v), 0, &je);
		json_decref(v);
		v = a;
	}
	if (!json_is_array(v)) {
		json_decref(v);
		(void)snprintf(err, errlen, "collection is not a JSON array");
		return NULL;
	}
	if (json_array_size(v) > cs->cs_max_iterations) {
		(void)snprintf(err, errlen, "collection has %zu items, more "
		    "than maxIterations (%u)", json_array_size(v),
		    cs->cs_max_iterations);
		json_decref(v);
		return NULL;
	}
	return v;
}

/* a ready step: its condition, then its start; 0 if it waits for room */
static int
wf_step_start(struct wf_run *wr, size_t i)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	struct wf_stepst		*ss = &wr->wr_st[i];
	char				 err[TMPL_ERR_MAX];
	json_t				*msg;
	int				 yes;

	if (cs->cs_kind == COMPOSITE_TOOL && wr->wr_running >= wr->wr_maxpar)
		return 0;
	err[0] = '\0';
	if (cs->cs_cond != NULL && ss->ss_attempt == 0) {
		if (tmpl_eval_bool(cs->cs_cond, wr->wr_ctx, &yes, err,
		    sizeof(err)) == -1) {
			wf_step_failed(wr, i, err);
			return 1;
		}
		if (!yes) {
			wf_step_end(wr, i, WF_SKIPPED, NULL, NULL);
			return 1;
		}
	}
	ss->ss_state = WF_RUNNING;
	if (wr->wr_drv->wd_step != NULL)
		wr->wr_drv->wd_step(wr->wr_arg, i, WF_RUNNING);
	switch (cs->cs_kind) {
	case COMPOSITE_TOOL:
		if ((ss->ss_args = composite_tvalue_expand(&cs->cs_args,
		    wr->wr_ctx, err, sizeof(err))) == NULL) {
			wf_step_failed(wr, i, err[0] != '\0' ? err :
			    "out of memory");
			return 1;
		}
		wr->wr_running++;
		wr->wr_drv->wd_call(wr->wr_arg, wf_call_id(i, WF_ITER_NONE),
		    cs, json_incref(ss->ss_args));
		wf_arm_timeout(wr, wf_call_id(i, WF_ITER_NONE), 0,
		    cs->cs_timeout_ms);
		return 1;
	case COMPOSITE_ELICITATION:
		if ((msg = tmpl_eval(cs->cs_message, wr->wr_ctx, err,
		    sizeof(err))) == NULL) {
			wf_step_failed(wr, i, err);
			return 1;
		}
		wr->wr_drv->wd_elicit(wr->wr_arg, wf_call_id(i, WF_ITER_NONE),
		    cs, json_is_string(msg) ? json_string_value(msg) : "");
		json_decref(msg);
		wf_arm_timeout(wr, wf_call_id(i, WF_ITER_NONE), 0,
		    cs->cs_timeout_ms);
		return 1;
	default:
		if ((ss->ss_coll = wf_collection(wr, i, err, sizeof(err))) ==
		    NULL) {
			wf_step_failed(wr, i, err);
			return 1;
		}
		ss->ss_niters = json_array_size(ss->ss_coll);
		if (ss->ss_niters > 0 && (ss->ss_iters = calloc(ss->ss_niters,
		    sizeof(*ss->ss_iters))) == NULL) {
			wf_step_failed(wr, i, "out of memory");
			return 1;
		}
		return 1;
	}
}

static int
wf_step_ready(const struct wf_run *wr, size_t i)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	size_t				 j;

	for (j = 0; j < cs->cs_ndeps; j++)
		if (!wf_state_ended(wr->wr_st[cs->cs_deps[j]].ss_state))
			return 0;
	return 1;
}

/* start what can start, in declaration order, until nothing changes */
static void
wf_run_pump(struct wf_run *wr)
{
	const struct composite	*co = wr->wr_co;
	struct wf_stepst	*ss;
	size_t			 i;
	int			 progress;

	if (wr->wr_in_pump) {
		wr->wr_again = 1;
		return;
	}
	wr->wr_in_pump = 1;
	do {
		wr->wr_again = 0;
		progress = 0;
		for (i = 0; i < co->co_nsteps && !wr->wr_finished; i++) {
			ss = &wr->wr_st[i];
			if (ss->ss_state == WF_WAITING && wf_step_ready(wr, i))
				progress |= wf_step_start(wr, i);
			if (ss->ss_state != WF_RUNNING ||
			    co->co_steps[i].cs_kind != COMPOSITE_FOREACH)
				continue;
			while (!ss->ss_failed && ss->ss_next < ss->ss_niters &&
			    ss->ss_running <
			    co->co_steps[i].cs_max_parallel &&
			    wr->wr_running < wr->wr_maxpar &&
			    !wr->wr_finished) {
				wf_iter_start(wr, i, ss->ss_next++);
				progress = 1;
			}
			if (ss->ss_state == WF_RUNNING &&
			    ss->ss_ended == ss->ss_niters) {
				wf_foreach_end(wr, i);
				progress = 1;
			} else if (ss->ss_failed && ss->ss_running == 0) {
				wf_foreach_end(wr, i);
				progress = 1;
			}
		}
		if (wr->wr_left == 0 && !wr->wr_finished) {
			wr->wr_finished = 1;
			(void)json_object_set_new(json_object_get(wr->wr_ctx,
			    "workflow"), "status", json_string("completed"));
		}
	} while ((progress || wr->wr_again) && !wr->wr_finished);
	wr->wr_in_pump = 0;
	if (wr->wr_finished && !wr->wr_reported) {
		wr->wr_reported = 1;
		/* last: the driver may free the run */
		wr->wr_drv->wd_done(wr->wr_arg, wr->wr_ctx, wr->wr_error);
	}
}

struct wf_run *
wf_run_new(const struct composite *co, json_t *params, const char *run_id,
    unsigned int max_parallel, const struct wf_driver *drv, void *arg)
{
	struct wf_run	*wr;
	size_t		 i;

	if ((wr = calloc(1, sizeof(*wr))) == NULL)
		return NULL;
	wr->wr_co = co;
	wr->wr_drv = drv;
	wr->wr_arg = arg;
	wr->wr_maxpar = max_parallel > 0 ? max_parallel : 10;
	wr->wr_left = co->co_nsteps;
	wr->wr_ctx = json_pack("{s:O, s:{}, s:{s:s, s:I, s:s}}", "params",
	    params, "steps", "workflow", "id", run_id, "step_count",
	    (json_int_t)co->co_nsteps, "status", "running");
	if (wr->wr_ctx == NULL ||
	    (wr->wr_st = calloc(co->co_nsteps, sizeof(*wr->wr_st))) == NULL)
		goto fail;
	wr->wr_steps = json_object_get(wr->wr_ctx, "steps");
	for (i = 0; i < co->co_nsteps; i++)
		if (json_object_set_new(wr->wr_steps, co->co_steps[i].cs_id,
		    json_pack("{s:s}", "status", "pending")) == -1)
			goto fail;
	return wr;
fail:
	wf_run_free(wr);
	return NULL;
}

void
wf_run_free(struct wf_run *wr)
{
	struct wf_stepst	*ss;
	size_t			 i, k;

	if (wr == NULL)
		return;
	for (i = 0; wr->wr_st != NULL && i < wr->wr_co->co_nsteps; i++) {
		ss = &wr->wr_st[i];
		json_decref(ss->ss_args);
		json_decref(ss->ss_coll);
		json_decref(ss->ss_inner);
		for (k = 0; k < ss->ss_niters; k++) {
			json_decref(ss->ss_iters[k].wi_args);
			json_decref(ss->ss_iters[k].wi_output);
			json_decref(ss->ss_iters[k].wi_inner);
			free(ss->ss_iters[k].wi_error);
		}
		free(ss->ss_iters);
		free(ss->ss_ferror);
	}
	free(wr->wr_st);
	json_decref(wr->wr_ctx);
	free(wr->wr_error);
	free(wr);
}

void
wf_run_start(struct wf_run *wr)
{
	wf_run_pump(wr);
}

/* the text of a failed tool result, for .steps.X.error */
static char *
wf_result_error(json_t *result)
{
	json_t	*c = json_array_get(json_object_get(result, "content"), 0);

	if (json_is_string(json_object_get(c, "text")))
		return strdup(json_string_value(json_object_get(c, "text")));
	return strdup("the tool returned isError");
}

static void
wf_iter_done(struct wf_run *wr, size_t i, size_t k, json_t *result,
    const char *error)
{
	const struct composite_step	*cs = &wr->wr_co->co_steps[i];
	struct wf_stepst		*ss = &wr->wr_st[i];
	struct wf_iter			*wi;
	char				*why;

	if (k >= ss->ss_niters || ss->ss_iters[k].wi_state != WF_RUNNING)
		return;
	wi = &ss->ss_iters[k];
	wf_unsuspend(wr, &wi->wi_inner);
	ss->ss_running--;
	wr->wr_running--;
	if (error == NULL && !json_is_true(json_object_get(result,
	    "isError"))) {
		wi->wi_state = WF_COMPLETED;
		wi->wi_output = wf_output_of(result);
		ss->ss_ended++;
		return;
	}
	why = error != NULL ? strdup(error) : wf_result_error(result);
	if (cs->cs_onerror == COMPOSITE_RETRY &&
	    wi->wi_attempt < cs->cs_retry_count) {
		free(why);
		wi->wi_state = WF_RETRY_WAIT;
		wi->wi_attempt++;
		wr->wr_drv->wd_timer(wr->wr_arg, wf_call_id(i, k + 1),
		    wf_backoff(cs, wi->wi_attempt));
		return;
	}
	wi->wi_state = WF_FAILED;
	wi->wi_error = why;
	ss->ss_ended++;
	if (cs->cs_onerror != COMPOSITE_CONTINUE && !ss->ss_failed) {
		/* no new iteration; the step fails once these end */
		ss->ss_failed = 1;
		if (why != NULL && (ss->ss_ferror = malloc(strlen(why) +
		    32)) != NULL)
			(void)sprintf(ss->ss_ferror, "iteration %zu: %s", k,
			    why);
	}
}

void
wf_run_call_done(struct wf_run *wr, uint64_t call, json_t *result,
    const char *error)
{
	size_t				 i = (size_t)(call >> 32);
	size_t				 k = (size_t)(call & 0xffffffff);
	const struct composite_step	*cs;
	struct wf_stepst		*ss;
	char				*why;

	if (wr->wr_finished || i >= wr->wr_co->co_nsteps)
		return;
	cs = &wr->wr_co->co_steps[i];
	ss = &wr->wr_st[i];
	if (k != WF_ITER_NONE) {
		wf_iter_done(wr, i, k - 1, result, error);
		wf_run_pump(wr);
		return;
	}
	if (ss->ss_state != WF_RUNNING || cs->cs_kind != COMPOSITE_TOOL)
		return;
	wf_unsuspend(wr, &ss->ss_inner);
	wr->wr_running--;
	if (error == NULL && !json_is_true(json_object_get(result,
	    "isError"))) {
		wf_step_end(wr, i, WF_COMPLETED, wf_output_of(result), NULL);
		(void)json_object_set_new(json_object_get(wr->wr_steps,
		    cs->cs_id), "content", wf_content_map(result));
	} else if (cs->cs_onerror == COMPOSITE_RETRY &&
	    ss->ss_attempt < cs->cs_retry_count) {
		ss->ss_state = WF_RETRY_WAIT;
		ss->ss_attempt++;
		wr->wr_drv->wd_timer(wr->wr_arg, call,
		    wf_backoff(cs, ss->ss_attempt));
	} else {
		/* retries spent abort, as the reference does */
		why = error != NULL ? strdup(error) : wf_result_error(result);
		wf_step_failed(wr, i, why != NULL ? why : "failed");
		free(why);
	}
	wf_run_pump(wr);
}

/* a step's timeout fired: if that attempt still runs, it failed (an
 * elicitation is cancelled, as the reference treats a timeout) */
static void
wf_timeout(struct wf_run *wr, uint64_t token)
{
	uint64_t			 call = token & WF_CALL_MASK;
	unsigned int			 attempt;
	size_t				 i = (size_t)(call >> 32);
	size_t				 k = (size_t)(call & 0xffffffff);
	const struct composite_step	*cs;
	struct wf_stepst		*ss;
	char				 why[64];

	attempt = (unsigned int)((token & ~WF_TIMEOUT) >> WF_ATTEMPT_SHIFT);
	if (wr->wr_finished || i >= wr->wr_co->co_nsteps)
		return;
	cs = &wr->wr_co->co_steps[i];
	ss = &wr->wr_st[i];
	if (ss->ss_state != WF_RUNNING)
		return;
	if (k != WF_ITER_NONE) {
		if (k - 1 >= ss->ss_niters || ss->ss_iters[k - 1].wi_state !=
		    WF_RUNNING || ss->ss_iters[k - 1].wi_attempt != attempt)
			return;
		cs = cs->cs_inner;
	} else if (ss->ss_attempt != attempt)
		return;
	wf_cancel(wr, call);
	if (cs->cs_kind == COMPOSITE_ELICITATION) {
		wf_run_elicit_done(wr, call, "cancel", NULL);
		return;
	}
	if (cs->cs_timeout_ms % 1000 == 0)
		(void)snprintf(why, sizeof(why), "timed out after %llus",
		    (unsigned long long)(cs->cs_timeout_ms / 1000));
	else
		(void)snprintf(why, sizeof(why), "timed out after %llums",
		    (unsigned long long)cs->cs_timeout_ms);
	wf_run_call_done(wr, call, NULL, why);
}

void
wf_run_timer(struct wf_run *wr, uint64_t token)
{
	size_t				 i = (size_t)(token >> 32);
	size_t				 k = (size_t)(token & 0xffffffff);
	const struct composite_step	*cs;
	struct wf_stepst		*ss;

	if (token & WF_TIMEOUT) {
		wf_timeout(wr, token);
		return;
	}
	if (wr->wr_finished || i >= wr->wr_co->co_nsteps)
		return;
	cs = &wr->wr_co->co_steps[i];
	ss = &wr->wr_st[i];
	/* a driver may answer within wd_call(): the pump below, not a
	 * nested one, ends the run, so nothing runs after wd_done() */
	wr->wr_in_pump = 1;
	if (k != WF_ITER_NONE) {
		/* a retry takes its slot again, past maxParallel if full */
		if (ss->ss_state == WF_RUNNING && k - 1 < ss->ss_niters &&
		    ss->ss_iters[k - 1].wi_state == WF_RETRY_WAIT)
			wf_iter_start(wr, i, k - 1);
	} else if (ss->ss_state == WF_RETRY_WAIT) {
		ss->ss_state = WF_RUNNING;
		wr->wr_running++;
		wf_arm_timeout(wr, token, ss->ss_attempt, cs->cs_timeout_ms);
		wr->wr_drv->wd_call(wr->wr_arg, token, cs,
		    json_incref(ss->ss_args));
	}
	wr->wr_in_pump = 0;
	wf_run_pump(wr);
}

/* skip_remaining: every step that has not started is skipped */
static void
wf_skip_remaining(struct wf_run *wr)
{
	size_t	 i;

	for (i = 0; i < wr->wr_co->co_nsteps; i++)
		if (wr->wr_st[i].ss_state == WF_WAITING)
			wf_step_end(wr, i, WF_SKIPPED, NULL, NULL);
}

void
wf_run_elicit_done(struct wf_run *wr, uint64_t call, const char *action,
    json_t *content)
{
	size_t				 i = (size_t)(call >> 32);
	const struct composite_step	*cs;
	enum composite_onerror		 policy;
	json_t				*out;
	char				 why[256], msg[320];

	if (wr->wr_finished || i >= wr->wr_co->co_nsteps ||
	    wr->wr_st[i].ss_state != WF_RUNNING)
		return;
	cs = &wr->wr_co->co_steps[i];
	if (cs->cs_kind != COMPOSITE_ELICITATION)
		return;
	if (strcmp(action, "accept") == 0) {
		/* the user's answer is input like the client's arguments */
		content = content != NULL ? json_deep_copy(content) :
		    json_object();
		if (content == NULL ||
		    composite_json_depth(content) > COMPOSITE_ANSWER_DEPTH ||
		    composite_json_size(content) > COMPOSITE_ANSWER_MAX) {
			json_decref(content);
			wf_step_failed(wr, i, "the answer is too large or "
			    "nested too deep");
			wf_run_pump(wr);
			return;
		}
		if (composite_schema_check(cs->cs_schema, content, why,
		    sizeof(why)) == -1) {
			json_decref(content);
			if (snprintf(msg, sizeof(msg), "the answer does not "
			    "match the schema: %s", why) < 0)
				msg[0] = '\0';
			wf_step_failed(wr, i, msg);
			wf_run_pump(wr);
			return;
		}
		out = json_pack("{s:s, s:o}", "action", "accept", "content",
		    content);
		wf_step_end(wr, i, WF_COMPLETED, out, NULL);
		wf_run_pump(wr);
		return;
	}
	policy = strcmp(action, "decline") == 0 ? cs->cs_ondecline :
	    cs->cs_oncancel;
	if (policy == COMPOSITE_ABORT) {
		wf_step_end(wr, i, WF_FAILED, NULL, action);
		wf_run_fail(wr, cs->cs_id, strcmp(action, "decline") == 0 ?
		    "the user declined" : "the user cancelled");
	} else {
		wf_step_end(wr, i, WF_COMPLETED, json_pack("{s:s}", "action",
		    action), NULL);
		if (policy == COMPOSITE_SKIP_REMAINING)
			wf_skip_remaining(wr);
	}
	wf_run_pump(wr);
}

void
wf_run_abort(struct wf_run *wr, const char *why)
{
	wf_run_fail(wr, NULL, why);
	wf_run_pump(wr);
}

enum wf_state
wf_run_step_state(const struct wf_run *wr, size_t i)
{
	return wr->wr_st[i].ss_state;
}

int
wf_run_finished(const struct wf_run *wr)
{
	return wr->wr_finished;
}

/* content items by kind and count: text, text_1, image_0, resource, ... */
json_t *
wf_content_map(json_t *result)
{
	json_t		*out, *item, *v;
	const char	*type;
	char		 key[64];
	size_t		 i, j, ntext = 0, nres = 0, nimage = 0, nother = 0;

	if ((out = json_object()) == NULL)
		return NULL;
	json_array_foreach(json_object_get(result, "content"), i, item) {
		type = json_string_value(json_object_get(item, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0) {
			v = json_incref(json_object_get(item, "text"));
			j = ntext++;
			if (j == 0)
				(void)snprintf(key, sizeof(key), "text");
			else
				(void)snprintf(key, sizeof(key), "text_%zu", j);
		} else if (strcmp(type, "resource") == 0) {
			v = json_incref(json_object_get(item, "resource"));
			j = nres++;
			if (j == 0)
				(void)snprintf(key, sizeof(key), "resource");
			else
				(void)snprintf(key, sizeof(key), "resource_%zu",
				    j);
		} else {
			v = json_incref(item);
			(void)snprintf(key, sizeof(key), "%.32s_%zu", type,
			    strcmp(type, "image") == 0 ? nimage++ : nother++);
		}
		if (v != NULL)
			(void)json_object_set_new(out, key, v);
	}
	return out;
}

json_t *
wf_output_of(json_t *result)
{
	json_t	*sc = json_object_get(result, "structuredContent");

	return json_is_object(sc) ? json_incref(sc) : wf_content_map(result);
}
