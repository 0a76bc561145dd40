/*
 * libFuzzer: a suspended run's snapshot (wf_run_restore()) and a
 * handle's record (handle_rec_meta(), handle_rec_dump()) on arbitrary
 * bytes.  The records come from vmcpd's own store, but a damaged or
 * older one must be an error, never a crash.
 *
 * Checked: a snapshot that restores is a suspended run (something waits
 * for input, nothing else runs), its own snapshot restores to the same
 * snapshot, and driven on (every wait answered, every call and timer
 * too) it ends exactly once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/handle_rec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define Q_MAX	4096

static const char YAML[] =
"compositeTools:\n"
"  - name: snap\n"
"    description: every kind of step\n"
"    parameters: {type: object, properties: {n: {type: integer}}}\n"
"    steps:\n"
"      - {id: a, tool: x.a, onError: {action: retry, retryCount: 3, retryDelay: 10ms}}\n"
"      - id: ask\n"
"        dependsOn: [a]\n"
"        message: \"go {{.workflow.id}}?\"\n"
"        schema: {type: object, properties: {c: {type: string}}}\n"
"        onDecline: {action: skip_remaining}\n"
"      - id: each\n"
"        dependsOn: [a]\n"
"        collection: '[1, 2, 3, 4]'\n"
"        maxParallel: 2\n"
"        onError: {action: retry, retryCount: 2, retryDelay: 10ms}\n"
"        step: {tool: x.e, arguments: {n: \"{{.forEach.item}}\"}}\n"
"      - {id: b, tool: x.b, dependsOn: [ask, each]}\n";

struct drive {
	struct wf_run	*d_run;
	uint64_t	 d_q[Q_MAX];
	int		 d_timer[Q_MAX];
	size_t		 d_n;
	int		 d_done;
};

static void
push(struct drive *d, uint64_t id, int timer)
{
	if (d->d_n == Q_MAX)
		abort();
	d->d_q[d->d_n] = id;
	d->d_timer[d->d_n++] = timer;
}

static void
d_call(void *arg, uint64_t id, const struct composite_step *cs, json_t *a)
{
	(void)cs;
	if (!json_is_object(a))
		abort();
	json_decref(a);
	push(arg, id, 0);
}

static void
d_elicit(void *arg, uint64_t id, const struct composite_step *cs,
    const char *message)
{
	(void)arg;
	(void)id;
	(void)cs;
	(void)message;
}

static void
d_timer(void *arg, uint64_t token, uint64_t ms)
{
	(void)ms;
	push(arg, token, 1);
}

static void
d_done(void *arg, json_t *ctx, const char *error)
{
	struct drive	*d = arg;

	(void)error;
	if (!json_is_object(ctx) || d->d_done++)
		abort();
}

static const struct wf_driver drv = {
	.wd_call = d_call,
	.wd_elicit = d_elicit,
	.wd_timer = d_timer,
	.wd_done = d_done
};

static void
answer_pending(struct drive *d)
{
	json_t		*pending, *p, *inner, *r, *req;
	uint64_t	 call;
	size_t		 i;

	if ((pending = wf_run_pending(d->d_run)) == NULL ||
	    (req = wf_input_requests(pending)) == NULL)
		abort();
	json_array_foreach(pending, i, p) {
		/* the requests as answers: the shapes seldom fit */
		json_decref(wf_input_response(p, req));
		call = (uint64_t)json_integer_value(json_object_get(p, "call"));
		if (strcmp(json_string_value(json_object_get(p, "kind")),
		    "elicitation") == 0) {
			wf_run_elicit_done(d->d_run, call, i % 2 ? "decline" :
			    "accept", NULL);
		} else {
			if ((inner = wf_run_call_resume(d->d_run, call)) == NULL)
				continue;	/* ended meanwhile */
			json_decref(inner);
			r = json_pack("{s:[]}", "content");
			wf_run_call_done(d->d_run, call, r, NULL);
			json_decref(r);
		}
		if (d->d_done)
			break;
	}
	json_decref(req);
	json_decref(pending);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct composite_list	 cl;
	static int			 loaded;
	struct handle_meta		 hm;
	struct drive			 d;
	struct wf_run			*again;
	json_t				*snap, *s1, *s2, *r;
	json_error_t			 je;
	char				 err[256];
	size_t				 slen, i;

	if (!loaded) {
		if (composite_load_buffer("fuzz.yaml", YAML, strlen(YAML), &cl,
		    err, sizeof(err)) == -1)
			abort();
		loaded = 1;
	}
	/* the record's line, the state after it, the dump */
	(void)handle_rec_meta(data, size, &hm);
	(void)handle_rec_state(data, size, &slen);
	json_decref(handle_rec_dump(data, size < 64 ? size : 64, data, size));

	if ((snap = json_loadb((const char *)data, size, 0, &je)) == NULL)
		return 0;
	memset(&d, 0, sizeof(d));
	d.d_run = wf_run_restore(cl.cl_items[0], snap, &drv, &d, err,
	    sizeof(err));
	json_decref(snap);
	if (d.d_run == NULL)
		return 0;
	if (!wf_run_suspendable(d.d_run))
		abort();
	/* its own snapshot restores to itself */
	if ((s1 = wf_run_snapshot(d.d_run)) == NULL)
		abort();
	again = wf_run_restore(cl.cl_items[0], s1, &drv, &d, err,
	    sizeof(err));
	if (again == NULL || (s2 = wf_run_snapshot(again)) == NULL ||
	    !json_equal(s1, s2))
		abort();
	json_decref(s1);
	json_decref(s2);
	wf_run_free(again);
	d.d_n = 0;
	answer_pending(&d);
	/* then every call answered and every timer fired, in order */
	for (i = 0; i < d.d_n && !d.d_done; i++) {
		if (d.d_timer[i]) {
			wf_run_timer(d.d_run, d.d_q[i]);
		} else {
			r = json_pack("{s:[], s:b}", "content", "isError",
			    i % 3 == 0);
			wf_run_call_done(d.d_run, d.d_q[i], r, NULL);
			json_decref(r);
		}
		if (!d.d_done && i + 1 == d.d_n && wf_run_suspendable(d.d_run))
			answer_pending(&d);
	}
	wf_run_free(d.d_run);
	return 0;
}
