/*
 * libFuzzer: compositeTools[] (composite_load_buffer()) on arbitrary
 * YAML, then each composite that loads is run by the scheduler with a
 * driver that answers every call at once (alternately a result and an
 * isError result, elicitations declined, timers fired), its result
 * built and its annotations derived; the step arguments are coerced.
 *
 * Checked: a failed load says why; a run ends exactly once and only
 * after every started call was answered or the run failed; no step is
 * left waiting in a run that completed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/composite_io.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct drive {
	struct wf_run	*d_run;
	uint64_t	 d_pending[4096];
	int		 d_kind[4096];	/* 0 call, 1 elicit, 2 timer */
	size_t		 d_n;
	size_t		 d_calls;
	size_t		 d_sync;
	int		 d_done;
	int		 d_failed;
};

static void
push(struct drive *d, uint64_t id, int kind)
{
	if (d->d_n == sizeof(d->d_pending) / sizeof(d->d_pending[0]))
		abort();
	d->d_pending[d->d_n] = id;
	d->d_kind[d->d_n++] = kind;
}

static void
d_call(void *arg, uint64_t id, const struct composite_step *cs, json_t *a)
{
	struct drive	*d = arg;
	json_t		*schema;

	(void)cs;
	if (!json_is_object(a))
		abort();
	/* the arguments are the caller's to change: coerce them */
	schema = json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}}", "type",
	    "object", "properties", "v", "type", "integer", "n", "type",
	    "object", "repo", "type", "array");
	composite_coerce_args(a, schema);
	json_decref(schema);
	json_decref(a);
	/* now and then a call fails at once, inside wd_call() */
	if (++d->d_sync % 5 == 0) {
		wf_run_call_done(d->d_run, id, NULL, "refused");
		return;
	}
	push(arg, id, 0);
}

static void
d_elicit(void *arg, uint64_t id, const struct composite_step *cs,
    const char *msg)
{
	(void)cs;
	if (msg == NULL)
		abort();
	push(arg, id, 1);
}

static void
d_timer(void *arg, uint64_t id, uint64_t ms)
{
	if (ms == 0)
		abort();
	push(arg, id, 2);
}

static void
d_done(void *arg, json_t *ctx, const char *error)
{
	struct drive	*d = arg;

	if (d->d_done++ || ctx == NULL)
		abort();
	d->d_failed = error != NULL;
}

static const struct wf_driver drv = {
	.wd_call = d_call,
	.wd_elicit = d_elicit,
	.wd_timer = d_timer,
	.wd_done = d_done
};

static json_t *
lookup(void *arg, const char *tool)
{
	(void)arg;
	return strchr(tool, 'r') != NULL ? json_pack("{s:b}", "readOnlyHint",
	    1) : NULL;
}

static void
run(const struct composite *co)
{
	struct drive	 d;
	json_t		*params, *ok, *bad, *ctx, *r;
	char		 err[256];
	size_t		 steps = 0, i;
	uint64_t	 id;
	int		 kind;

	memset(&d, 0, sizeof(d));
	ok = json_pack("{s:[], s:{s:[1,2], s:s, s:i}}", "content",
	    "structuredContent", "items", "text", "t", "n", 1);
	bad = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	    "text", "boom", "isError", 1);
	r = json_pack("{s:s, s:i}", "repo", "o/r", "n", 2);
	if ((params = composite_params(co, r, err, sizeof(err))) == NULL)
		params = json_object();
	json_decref(r);
	if ((d.d_run = wf_run_new(co, params, "f", 3, &drv, &d)) == NULL)
		abort();
	wf_run_start(d.d_run);
	/* answer the oldest first, so that retries interleave */
	while (d.d_n > 0 && !d.d_done && steps++ < 5000) {
		id = d.d_pending[0];
		kind = d.d_kind[0];
		d.d_n--;
		memmove(d.d_pending, d.d_pending + 1, d.d_n *
		    sizeof(d.d_pending[0]));
		memmove(d.d_kind, d.d_kind + 1, d.d_n * sizeof(d.d_kind[0]));
		if (kind == 0)
			wf_run_call_done(d.d_run, id, ++d.d_calls % 3 ? ok :
			    bad, NULL);
		else if (kind == 1)
			wf_run_elicit_done(d.d_run, id, d.d_calls++ % 2 ?
			    "decline" : "accept", NULL);
		else
			wf_run_timer(d.d_run, id);
	}
	if (!d.d_done && steps < 5000)
		abort();	/* nothing pending, yet not ended */
	if (d.d_done && !d.d_failed) {
		for (i = 0; i < co->co_nsteps; i++)
			if (wf_run_step_state(d.d_run, i) == WF_WAITING)
				abort();
		ctx = json_pack("{s:{}}", "steps");
		r = composite_result(co, ctx, err, sizeof(err));
		json_decref(r);
		json_decref(ctx);
	}
	if ((r = composite_annotations(co, lookup, NULL, err,
	    sizeof(err))) != NULL)
		json_decref(r);
	json_decref(composite_output_schema(co));
	json_decref(composite_input_schema(co));
	wf_run_free(d.d_run);
	json_decref(params);
	json_decref(ok);
	json_decref(bad);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct composite_list	 cl;
	char			 err[512];
	size_t			 i;

	memset(&cl, 0, sizeof(cl));
	err[0] = '\0';
	if (composite_load_buffer("f.yaml", (const char *)data, size, &cl,
	    err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();
	} else
		for (i = 0; i < cl.cl_n; i++)
			run(cl.cl_items[i]);
	composite_list_free(&cl);
	return 0;
}
