/*
 * Unit tests for shared/composite_config.c: compositeTools as the
 * reference writes them (its worked example, adapted), each load error
 * with its exact file:line:col message, and argument expansion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/composite_io.h"
#include "unit.h"

/* the reference's worked example (reference §2), its tools renamed */
static const char TRIAGE[] =
"compositeTools:\n"
"  - name: triage_issue\n"
"    description: Fetch an issue, label related issues, optionally announce\n"
"    timeout: 10m\n"
"    parameters:\n"
"      type: object\n"
"      properties:\n"
"        repo: {type: string}\n"
"        issue_number: {type: integer}\n"
"        notify: {type: boolean, default: true}\n"
"      required: [repo, issue_number]\n"
"    annotations:\n"
"      title: Triage issue\n"
"    steps:\n"
"      - id: fetch_issue\n"
"        tool: github.get_issue\n"
"        arguments:\n"
"          repo: \"{{.params.repo}}\"\n"
"          issue_number: \"{{.params.issue_number}}\"\n"
"          fixed: 3\n"
"          big: 100000000000000000000\n"
"          quoted: \"5\"\n"
"          t: true\n"
"          nil: ~\n"
"        timeout: 30s\n"
"        onError: {action: retry, retryCount: 3, retryDelay: 2s}\n"
"      - id: related\n"
"        tool: github.search_issues\n"
"        dependsOn: [fetch_issue]\n"
"        arguments:\n"
"          query: \"repo:{{.params.repo}} {{.steps.fetch_issue.output.title}}\"\n"
"        onError: {action: continue}\n"
"        defaultResults: {items: []}\n"
"      - id: label_each\n"
"        type: forEach\n"
"        dependsOn: [related]\n"
"        collection: \"{{json .steps.related.output.items}}\"\n"
"        itemVar: issue\n"
"        maxParallel: 5\n"
"        maxIterations: 50\n"
"        onError: {action: continue}\n"
"        defaultResults: {count: 0, completed: 0}\n"
"        step:\n"
"          type: tool\n"
"          tool: github.add_label\n"
"          arguments:\n"
"            repo: \"{{.params.repo}}\"\n"
"            issue_number: \"{{.forEach.issue.number}}\"\n"
"            labels: [\"related-to-{{.params.issue_number}}\", \"{{.forEach.index}}\"]\n"
"      - id: confirm\n"
"        type: elicitation\n"
"        dependsOn: [fetch_issue]\n"
"        condition: \"{{.params.notify}}\"\n"
"        message: \"Post a summary for #{{.params.issue_number}}?\"\n"
"        schema:\n"
"          type: object\n"
"          properties:\n"
"            channel: {type: string, enum: [\"#triage\", \"#eng\"]}\n"
"          required: [channel]\n"
"        timeout: 5m\n"
"        onDecline: {action: continue}\n"
"        onCancel: {action: abort}\n"
"        defaultResults: {action: skipped, content: {channel: \"\"}}\n"
"      - id: notify\n"
"        tool: slack.post_message\n"
"        dependsOn: [confirm, label_each]\n"
"        condition: '{{eq .steps.confirm.output.action \"accept\"}}'\n"
"        arguments:\n"
"          channel: \"{{.steps.confirm.output.content.channel}}\"\n"
"          text: \"#{{.params.issue_number}} {{.steps.fetch_issue.output.title}}: {{.steps.label_each.output.completed}} labelled\"\n"
"    output:\n"
"      properties:\n"
"        title: {type: string, description: Issue title, value: \"{{.steps.fetch_issue.output.title}}\"}\n"
"        related_labelled: {type: integer, value: \"{{.steps.label_each.output.completed}}\", default: 0}\n"
"        notified: {type: boolean, value: '{{eq .steps.confirm.output.action \"accept\"}}', default: false}\n"
"      required: [title]\n";

static void
load_ok(const char *yaml, struct composite_list *cl)
{
	char	 err[512];

	memset(cl, 0, sizeof(*cl));
	if (composite_load_buffer("t.yaml", yaml, strlen(yaml), cl, err,
	    sizeof(err)) == -1)
		fail_msg("unexpected error: %s", err);
}

static void
load_bad(const char *yaml, const char *msg)
{
	struct composite_list	 cl;
	char			 err[512];
	int			 rc;

	memset(&cl, 0, sizeof(cl));
	rc = composite_load_buffer("t.yaml", yaml, strlen(yaml), &cl, err,
	    sizeof(err));
	composite_list_free(&cl);
	if (rc == 0)
		fail_msg("loaded, expected: %s", msg);
	assert_string_equal(err, msg);
}

static void
test_triage(void **state)
{
	struct composite_list	 cl;
	struct composite	*co;
	struct composite_step	*cs;

	(void)state;
	load_ok(TRIAGE, &cl);
	assert_int_equal(cl.cl_n, 1);
	co = cl.cl_items[0];
	assert_string_equal(co->co_name, "triage_issue");
	assert_int_equal(co->co_timeout_ms, 600000);
	assert_int_equal(co->co_nsteps, 5);
	assert_string_equal(json_string_value(json_object_get(
	    co->co_annotations, "title")), "Triage issue");
	cs = &co->co_steps[0];
	assert_int_equal(cs->cs_kind, COMPOSITE_TOOL);
	assert_string_equal(cs->cs_tool, "github.get_issue");
	assert_int_equal(cs->cs_onerror, COMPOSITE_RETRY);
	assert_int_equal(cs->cs_retry_count, 3);
	assert_int_equal(cs->cs_retry_delay_ms, 2000);
	assert_int_equal(cs->cs_timeout_ms, 30000);
	assert_int_equal(cs->cs_args.ct_ntmpl, 3);
	cs = &co->co_steps[2];
	assert_int_equal(cs->cs_kind, COMPOSITE_FOREACH);
	assert_string_equal(cs->cs_itemvar, "issue");
	assert_int_equal(cs->cs_max_parallel, 5);
	assert_int_equal(cs->cs_max_iterations, 50);
	assert_int_equal(cs->cs_ndeps, 1);
	assert_int_equal(cs->cs_deps[0], 1);
	assert_int_equal(cs->cs_inner->cs_args.ct_ntmpl, 4);
	cs = &co->co_steps[3];
	assert_int_equal(cs->cs_kind, COMPOSITE_ELICITATION);
	assert_int_equal(cs->cs_ondecline, COMPOSITE_CONTINUE);
	assert_int_equal(cs->cs_oncancel, COMPOSITE_ABORT);
	assert_non_null(cs->cs_cond);
	cs = &co->co_steps[4];
	assert_int_equal(cs->cs_ndeps, 2);
	assert_int_equal(cs->cs_deps[0], 3);
	assert_int_equal(cs->cs_deps[1], 2);
	assert_int_equal(cs->cs_timeout_ms, 300000);	/* the default */
	assert_non_null(co->co_output);
	assert_int_equal(co->co_output->cp_nprops, 3);
	assert_string_equal(co->co_output->cp_props[1].cp_type, "integer");
	assert_int_equal(json_integer_value(
	    co->co_output->cp_props[1].cp_default), 0);
	assert_int_equal(co->co_output->cp_nrequired, 1);
	composite_list_free(&cl);
}

/* arguments keep their shape and types; templates are typed */
static void
test_expand(void **state)
{
	struct composite_list	 cl;
	json_t			*ctx, *args, *want;
	char			 err[TMPL_ERR_MAX];

	(void)state;
	load_ok(TRIAGE, &cl);
	ctx = jparse("{\"params\": {\"repo\": \"o/r\", \"issue_number\": 7},"
	    "\"forEach\": {\"issue\": {\"number\": 12}, \"index\": 0}}");
	args = composite_tvalue_expand(&cl.cl_items[0]->co_steps[0].cs_args,
	    ctx, err, sizeof(err));
	assert_non_null(args);
	want = jparse("{\"repo\": \"o/r\", \"issue_number\": 7, \"fixed\": 3, "
	    "\"big\": 1e20, \"quoted\": \"5\", \"t\": true, \"nil\": null}");
	assert_true(json_equal(args, want));
	json_decref(args);
	json_decref(want);
	args = composite_tvalue_expand(
	    &cl.cl_items[0]->co_steps[2].cs_inner->cs_args, ctx, err,
	    sizeof(err));
	assert_non_null(args);
	want = jparse("{\"repo\": \"o/r\", \"issue_number\": 12, \"labels\": "
	    "[\"related-to-7\", 0]}");
	assert_true(json_equal(args, want));
	json_decref(args);
	json_decref(want);
	json_decref(ctx);
	composite_list_free(&cl);
}

#define HEAD \
	"compositeTools:\n" \
	"  - name: c\n" \
	"    description: d\n"

static void
test_errors(void **state)
{
	(void)state;
	load_bad("compositeTools: {}\n", "t.yaml:1:17: compositeTools: "
	    "expected a sequence of composite tools, found a mapping");
	load_bad(HEAD "    steps: []\n", "t.yaml:4:12: compositeTools[0].steps: "
	    "expected at least one step, found an empty sequence");
	load_bad(HEAD "    stepz: []\n", "t.yaml:4:5: compositeTools[0].stepz: "
	    "unknown key, did you mean \"steps\"?");
	load_bad(HEAD "    steps:\n      - tool: a.b\n",
	    "t.yaml:5:9: compositeTools[0].steps[0]: missing required key \"id\"");
	load_bad(HEAD "    steps:\n      - {id: a, tool: \"a b\"}\n",
	    "t.yaml:5:23: compositeTools[0].steps[0].tool: expected a tool "
	    "name (<backend>.<tool> or an advertised name: letters, digits, "
	    "\".\", \"_\", \"-\"), found \"a b\"");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y}\n"
	    "      - {id: a, tool: x.y}\n",
	    "t.yaml:6:14: compositeTools[0].steps[1].id: duplicate step id "
	    "\"a\" (first in compositeTools[0].steps[0])");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y, dependsOn: [b]}\n",
	    "t.yaml:5:40: compositeTools[0].steps[0].dependsOn[0]: no step "
	    "\"b\" in this composite");
	load_bad(HEAD "    steps:\n"
	    "      - {id: a, tool: x.y, dependsOn: [c]}\n"
	    "      - {id: b, tool: x.y, dependsOn: [a]}\n"
	    "      - {id: c, tool: x.y, dependsOn: [b]}\n",
	    "t.yaml:5:39: compositeTools[0].steps[0].dependsOn: step \"a\" is "
	    "in a dependency cycle");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y, dependsOn: [a]}\n",
	    "t.yaml:5:40: compositeTools[0].steps[0].dependsOn[0]: a step "
	    "cannot depend on itself");
	/* a template reading a step it does not wait for */
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y}\n"
	    "      - id: b\n        tool: x.y\n"
	    "        arguments: {q: \"{{.steps.a.output.x}}\"}\n",
	    "t.yaml:8:24: compositeTools[0].steps[1].arguments.q: .steps.a: "
	    "not among the step's dependencies (dependsOn)");
	load_bad(HEAD "    steps:\n      - id: a\n        tool: x.y\n"
	    "        arguments: {q: \"x {{.params.nope\"}\n",
	    "t.yaml:7:41: compositeTools[0].steps[0].arguments.q: template: "
	    "unclosed action (missing \"}}\")");
	load_bad(HEAD "    steps:\n      - id: a\n        tool: x.y\n"
	    "        arguments: {q: \"{{.params.nope}}\"}\n",
	    "t.yaml:7:24: compositeTools[0].steps[0].arguments.q: "
	    ".params.nope: not a property of parameters");
	load_bad(HEAD "    steps:\n"
	    "      - {id: a, tool: x.y, condition: \"{{true}}\"}\n"
	    "      - id: b\n        tool: x.y\n        dependsOn: [a]\n"
	    "        arguments: {q: \"{{.steps.a.output.x}}\"}\n",
	    "t.yaml:9:24: compositeTools[0].steps[1].arguments.q: "
	    ".steps.a.output.x: step \"a\" may be skipped, so its "
	    "defaultResults needs \"x\"");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y, message: hi}\n",
	    "t.yaml:5:9: compositeTools[0].steps[0]: both tool and message: "
	    "say which with type: tool or type: elicitation");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y, maxParallel: 3}\n",
	    "t.yaml:5:28: compositeTools[0].steps[0].maxParallel: not a key "
	    "of tool steps");
	load_bad(HEAD "    steps:\n      - id: a\n        tool: x.y\n"
	    "        onError: {action: retry}\n",
	    "t.yaml:7:27: compositeTools[0].steps[0].onError: action: retry "
	    "needs retryCount (1 to 10)");
	load_bad(HEAD "    steps:\n      - id: a\n        tool: x.y\n"
	    "        onError: {action: retry, retryCount: 11}\n",
	    "t.yaml:7:46: compositeTools[0].steps[0].onError.retryCount: "
	    "expected an integer from 1 to 10, found \"11\"");
	load_bad(HEAD "    steps:\n      - id: a\n        collection: \"[]\"\n"
	    "        itemVar: index\n        step: {tool: x.y}\n",
	    "t.yaml:7:18: compositeTools[0].steps[0].itemVar: expected an "
	    "identifier other than \"index\", found \"index\"");
	load_bad(HEAD "    steps:\n      - id: a\n        collection: \"[]\"\n"
	    "        step: {tool: x.y, arguments: {i: \"{{.forEach.it}}\"}}\n",
	    "t.yaml:7:42: compositeTools[0].steps[0].step.arguments.i: "
	    ".forEach.it: expected .forEach.item or .forEach.index");
	load_bad(HEAD "    steps:\n      - id: a\n        tool: x.y\n"
	    "        arguments: {i: \"{{.forEach.index}}\"}\n",
	    "t.yaml:7:24: compositeTools[0].steps[0].arguments.i: .forEach: "
	    "only inside a forEach step's step");
	load_bad(HEAD "    steps:\n      - id: a\n        collection: \"[]\"\n"
	    "        step: {id: x, tool: x.y}\n",
	    "t.yaml:7:16: compositeTools[0].steps[0].step.id: not a key of "
	    "forEach inner steps");
	load_bad(HEAD "    steps:\n      - id: a\n        collection: \"[]\"\n"
	    "        step: {tool: x.y, onError: {action: continue}}\n",
	    "t.yaml:7:27: compositeTools[0].steps[0].step.onError: not a key "
	    "of forEach inner steps");
	load_bad(HEAD "    steps:\n      - id: a\n        type: elicitation\n"
	    "        message: m\n        schema: {type: object, properties: "
	    "{a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {}}}}}}}}}}}}\n",
	    "t.yaml:8:17: compositeTools[0].steps[0].schema: a schema nested "
	    "deeper than 10 or larger than 100 KiB");
	load_bad(HEAD "    parameters: {type: array}\n"
	    "    steps:\n      - {id: a, tool: x.y}\n",
	    "t.yaml:4:17: compositeTools[0].parameters: expected a JSON "
	    "Schema with type: object");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y}\n"
	    "    output:\n      properties:\n        n: {type: integer}\n",
	    "t.yaml:8:12: compositeTools[0].output.properties.n: missing required key "
	    "\"value\"");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y}\n"
	    "    output:\n      properties:\n"
	    "        n: {type: integer, value: \"{{.steps.a.output.n}}\", "
	    "default: x}\n",
	    "t.yaml:8:69: compositeTools[0].output.properties.n.default: "
	    "expected an integer, found \"x\"");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y}\n"
	    "    output:\n      properties:\n"
	    "        n: {type: string, value: \"{{.steps.a.output.n}}\"}\n"
	    "      required: [m]\n",
	    "t.yaml:9:18: compositeTools[0].output.required[0]: \"m\" is not "
	    "among output.properties");
	load_bad(HEAD "    steps:\n      - {id: a, tool: x.y}\n"
	    "  - name: c\n    description: e\n"
	    "    steps:\n      - {id: a, tool: x.y}\n",
	    "t.yaml:6:11: compositeTools[1].name: composite \"c\" is already "
	    "defined by compositeTools[0]");
	load_bad(HEAD "    steps:\n      - id: a\n        type: elicitation\n"
	    "        message: m\n        schema: {type: object}\n"
	    "        timeout: 11m\n",
	    "t.yaml:9:18: compositeTools[0].steps[0].timeout: at most 10m "
	    "for an elicitation step");
	load_bad(HEAD "    longRunning: yes please\n"
	    "    steps:\n      - {id: a, tool: x.y}\n",
	    "t.yaml:4:18: compositeTools[0].longRunning: expected true or "
	    "false, found \"yes please\"");
}

/* a task for a client that declared the tasks extension: longRunning,
 * or else a timeout written of at least a minute */
static void
test_composite_long_running(void **state)
{
	static const struct {
		const char	*yaml;
		int		 want;
	} cases[] = {
		{ HEAD "    steps:\n      - {id: a, tool: x.y}\n", 0 },
		{ HEAD "    longRunning: true\n"
		    "    steps:\n      - {id: a, tool: x.y}\n", 1 },
		{ HEAD "    timeout: 59s\n"
		    "    steps:\n      - {id: a, tool: x.y}\n", 0 },
		{ HEAD "    timeout: 60s\n"
		    "    steps:\n      - {id: a, tool: x.y}\n", 1 },
		{ HEAD "    timeout: 2h\n    longRunning: false\n"
		    "    steps:\n      - {id: a, tool: x.y}\n", 0 },
	};
	struct composite_list	cl;
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		load_ok(cases[i].yaml, &cl);
		assert_int_equal(cl.cl_items[0]->co_long, cases[i].want);
		composite_list_free(&cl);
	}
}


/* the scheduler, driven by a fake driver that logs what it is asked */
struct fake {
	const struct composite	*f_co;
	struct wf_run		*f_run;
	char			 f_log[2048];
	uint64_t		 f_calls[64];
	size_t			 f_ncalls;
	uint64_t		 f_timers[16];
	size_t			 f_ntimers;
	uint64_t		 f_tmo[64];	/* timeouts: not logged */
	uint64_t		 f_tmo_ms[64];
	size_t			 f_ntmo;
	json_t			*f_ctx;
	char			*f_err;
	int			 f_done;
};

static void
fake_log(struct fake *f, const char *what, uint64_t id, const char *more)
{
	char	 buf[128];
	size_t	 i = (size_t)(id >> 32), k = (size_t)(id & 0xffffffff);

	if (k == 0)
		(void)snprintf(buf, sizeof(buf), "%s:%s%s ", what,
		    f->f_co->co_steps[i].cs_id, more);
	else
		(void)snprintf(buf, sizeof(buf), "%s:%s.%zu%s ", what,
		    f->f_co->co_steps[i].cs_id, k - 1, more);
	strncat(f->f_log, buf, sizeof(f->f_log) - strlen(f->f_log) - 1);
}

static void
fake_call(void *arg, uint64_t id, const struct composite_step *cs,
    json_t *args)
{
	struct fake	*f = arg;
	char		 more[96], *a;

	(void)cs;
	a = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	(void)snprintf(more, sizeof(more), "%s", json_object_size(args) ?
	    a : "");
	free(a);
	json_decref(args);
	f->f_calls[f->f_ncalls++] = id;
	fake_log(f, "call", id, more);
}

static void
fake_elicit(void *arg, uint64_t id, const struct composite_step *cs,
    const char *message)
{
	struct fake	*f = arg;
	char		 more[96];

	(void)cs;
	(void)snprintf(more, sizeof(more), "(%s)", message);
	f->f_calls[f->f_ncalls++] = id;
	fake_log(f, "ask", id, more);
}

static void
fake_timer(void *arg, uint64_t id, uint64_t ms)
{
	struct fake	*f = arg;
	char		 more[32];

	if (id >> 63) {
		f->f_tmo_ms[f->f_ntmo] = ms;
		f->f_tmo[f->f_ntmo++] = id;
		return;
	}
	(void)snprintf(more, sizeof(more), "=%llu", (unsigned long long)ms);
	f->f_timers[f->f_ntimers++] = id;
	fake_log(f, "timer", id, more);
}

static void
fake_step(void *arg, size_t step, enum wf_state st)
{
	struct fake	*f = arg;

	if (st == WF_SKIPPED)
		fake_log(f, "skip", (uint64_t)step << 32, "");
}

static void
fake_done(void *arg, json_t *ctx, const char *error)
{
	struct fake	*f = arg;

	f->f_done++;
	f->f_ctx = json_incref(ctx);
	f->f_err = error != NULL ? strdup(error) : NULL;
	strncat(f->f_log, "done", sizeof(f->f_log) - strlen(f->f_log) - 1);
}

static void
fake_cancel(void *arg, uint64_t id)
{
	fake_log(arg, "cancel", id, "");
}

static const struct wf_driver fake_driver = {
	.wd_call = fake_call,
	.wd_elicit = fake_elicit,
	.wd_timer = fake_timer,
	.wd_cancel = fake_cancel,
	.wd_step = fake_step,
	.wd_done = fake_done
};

static struct composite_list	 fake_cl;

static void
fake_start_with(struct fake *f, const char *yaml, const char *params,
    unsigned int maxpar, const struct wf_driver *drv)
{
	json_t	*p = jparse(params);

	memset(f, 0, sizeof(*f));
	load_ok(yaml, &fake_cl);
	f->f_co = fake_cl.cl_items[0];
	f->f_run = wf_run_new(f->f_co, p, "wf-1", maxpar, drv, f);
	json_decref(p);
	assert_non_null(f->f_run);
	wf_run_start(f->f_run);
}

static void
fake_start(struct fake *f, const char *yaml, const char *params,
    unsigned int maxpar)
{
	fake_start_with(f, yaml, params, maxpar, &fake_driver);
}

static void
fake_end(struct fake *f)
{
	wf_run_free(f->f_run);
	json_decref(f->f_ctx);
	free(f->f_err);
	composite_list_free(&fake_cl);
}

/* the log since the last call, then forgotten */
static void
expect(struct fake *f, const char *want)
{
	char	 got[sizeof(f->f_log)];
	size_t	 n;

	(void)snprintf(got, sizeof(got), "%s", f->f_log);
	n = strlen(got);
	if (n > 0 && got[n - 1] == ' ')
		got[n - 1] = '\0';
	f->f_log[0] = '\0';
	assert_string_equal(got, want);
}

/* the reply to the n-th call started: a result, or an error */
static void
reply(struct fake *f, size_t n, const char *result, const char *error)
{
	json_t	*r = result != NULL ? jparse(result) : NULL;

	wf_run_call_done(f->f_run, f->f_calls[n], r, error);
	json_decref(r);
}

#define OK(x)	"{\"content\": [], \"structuredContent\": " x "}"
#define BAD	"{\"content\": [{\"type\": \"text\", \"text\": \"boom\"}], " \
		"\"isError\": true}"

static const char DIAMOND[] =
"compositeTools:\n"
"  - name: diamond\n"
"    description: a, then b and c, then d after c and e after b\n"
"    steps:\n"
"      - {id: a, tool: x.a}\n"
"      - {id: b, tool: x.b, dependsOn: [a], arguments: {v: \"{{.steps.a.output.n}}\"}}\n"
"      - {id: c, tool: x.c, dependsOn: [a]}\n"
"      - {id: d, tool: x.d, dependsOn: [c, b]}\n"
"      - {id: e, tool: x.e, dependsOn: [b]}\n";

static void
test_sched_diamond(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, DIAMOND, "{}", 10);
	expect(&f, "call:a");
	reply(&f, 0, OK("{\"n\": 5}"), NULL);
	expect(&f, "call:b{\"v\":5} call:c");
	/* e waits for b only: no barrier behind c */
	reply(&f, 1, OK("{}"), NULL);
	expect(&f, "call:e");
	reply(&f, 3, "{\"content\": [{\"type\": \"text\", \"text\": \"hi\"}]}",
	    NULL);
	expect(&f, "");
	reply(&f, 2, OK("{}"), NULL);
	expect(&f, "call:d");
	assert_int_equal(wf_run_finished(f.f_run), 0);
	reply(&f, 4, OK("{\"last\": true}"), NULL);
	expect(&f, "done");
	assert_null(f.f_err);
	assert_int_equal(f.f_done, 1);
	/* the steps in declaration order, not in the order they ended */
	{
		const char	*k;
		json_t		*v;
		char		 order[32] = "";

		json_object_foreach(json_object_get(f.f_ctx, "steps"), k, v)
			strcat(order, k);
		assert_string_equal(order, "abcde");
	}
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    f.f_ctx, "workflow"), "status")), "completed");
	/* without structuredContent, output and content are the map */
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(json_object_get(f.f_ctx, "steps"), "e"),
	    "content"), "text")), "hi");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(json_object_get(f.f_ctx, "steps"), "e"),
	    "output"), "text")), "hi");
	fake_end(&f);
}

static void
test_sched_bound(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - {id: a, tool: x.a}\n"
	    "      - {id: b, tool: x.b}\n      - {id: c, tool: x.c}\n",
	    "{}", 2);
	expect(&f, "call:a call:b");
	reply(&f, 1, OK("{}"), NULL);
	expect(&f, "call:c");
	reply(&f, 0, OK("{}"), NULL);
	reply(&f, 2, OK("{}"), NULL);
	expect(&f, "done");
	fake_end(&f);
}

static const char FOREACH[] =
"compositeTools:\n"
"  - name: fe\n"
"    description: label each item, some fail\n"
"    steps:\n"
"      - {id: list, tool: x.list}\n"
"      - id: each\n"
"        dependsOn: [list]\n"
"        collection: \"{{.steps.list.output.items}}\"\n"
"        itemVar: it\n"
"        maxParallel: 2\n"
"        onError: {action: continue}\n"
"        defaultResults: {completed: 0}\n"
"        step: {tool: x.label, arguments: {n: \"{{.forEach.it.n}}\", i: \"{{.forEach.index}}\"}}\n"
"      - {id: after, tool: x.after, dependsOn: [each], arguments: {done: \"{{.steps.each.output.completed}}\"}}\n";

static void
test_sched_foreach_partial(void **state)
{
	struct fake	 f;
	json_t		*out;

	(void)state;
	fake_start(&f, FOREACH, "{}", 10);
	expect(&f, "call:list");
	reply(&f, 0, OK("{\"items\": [{\"n\": 7}, {\"n\": 8}, {\"n\": 9}]}"),
	    NULL);
	expect(&f, "call:each.0{\"i\":0,\"n\":7} call:each.1{\"i\":1,\"n\":8}");
	reply(&f, 1, BAD, NULL);		/* iteration 0 fails */
	expect(&f, "call:each.2{\"i\":2,\"n\":9}");
	reply(&f, 3, OK("{\"ok\": 9}"), NULL);
	expect(&f, "");
	reply(&f, 2, OK("{\"ok\": 8}"), NULL);
	expect(&f, "call:after{\"done\":2}");
	reply(&f, 4, OK("{}"), NULL);
	expect(&f, "done");
	assert_null(f.f_err);
	out = json_object_get(json_object_get(json_object_get(f.f_ctx,
	    "steps"), "each"), "output");
	assert_int_equal(json_integer_value(json_object_get(out, "count")), 3);
	assert_int_equal(json_integer_value(json_object_get(out, "failed")),
	    1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(out, "iterations"), 0), "error")), "boom");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(out, "iterations"), 0), "status")), "failed");
	fake_end(&f);
}

static void
test_sched_foreach_abort(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: each\n        collection: '[1, 2, 3]'\n"
	    "        maxParallel: 2\n        step: {tool: x.y}\n", "{}", 10);
	expect(&f, "call:each.0 call:each.1");
	reply(&f, 0, NULL, "connection refused");
	expect(&f, "");			/* no new iteration; 1 still runs */
	reply(&f, 1, OK("{}"), NULL);
	expect(&f, "done");
	assert_string_equal(f.f_err, "step each: iteration 0: connection "
	    "refused");
	fake_end(&f);
}

static void
test_sched_retry(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: a\n        tool: x.flaky\n"
	    "        onError: {action: retry, retryCount: 2, retryDelay: 100ms}\n",
	    "{}", 10);
	expect(&f, "call:a");
	reply(&f, 0, BAD, NULL);
	expect(&f, "timer:a=100");
	wf_run_timer(f.f_run, f.f_timers[0]);
	expect(&f, "call:a");
	reply(&f, 1, NULL, "timed out");
	expect(&f, "timer:a=200");
	wf_run_timer(f.f_run, f.f_timers[1]);
	reply(&f, 2, BAD, NULL);
	expect(&f, "call:a done");
	assert_string_equal(f.f_err, "step a: boom");
	fake_end(&f);

	/* success on the second attempt; the backoff is capped at 60x */
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: a\n        tool: x.flaky\n"
	    "        onError: {action: retry, retryCount: 10, retryDelay: 1s}\n",
	    "{}", 10);
	reply(&f, 0, BAD, NULL);
	wf_run_timer(f.f_run, f.f_timers[0]);
	reply(&f, 1, OK("{\"x\": 1}"), NULL);
	expect(&f, "call:a timer:a=1000 call:a done");
	assert_null(f.f_err);
	fake_end(&f);
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: a\n        tool: x.flaky\n"
	    "        onError: {action: retry, retryCount: 8, retryDelay: 1s}\n",
	    "{}", 10);
	{
		size_t	 n;

		for (n = 0; n < 8; n++) {
			reply(&f, n, BAD, NULL);
			wf_run_timer(f.f_run, f.f_timers[n]);
		}
	}
	expect(&f, "call:a timer:a=1000 call:a timer:a=2000 call:a "
	    "timer:a=4000 call:a timer:a=8000 call:a timer:a=16000 call:a "
	    "timer:a=32000 call:a timer:a=60000 call:a timer:a=60000 call:a");
	fake_end(&f);
}

static const char COND[] =
"compositeTools:\n"
"  - name: w\n"
"    description: d\n"
"    parameters:\n"
"      type: object\n"
"      properties: {go: {type: boolean}}\n"
"    steps:\n"
"      - id: maybe\n"
"        tool: x.maybe\n"
"        condition: \"{{.params.go}}\"\n"
"        defaultResults: {v: none}\n"
"      - {id: next, tool: x.next, dependsOn: [maybe], arguments: {v: \"{{.steps.maybe.output.v}}\"}}\n";

static void
test_sched_condition(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, COND, "{\"go\": false}", 10);
	expect(&f, "skip:maybe call:next{\"v\":\"none\"}");
	reply(&f, 0, OK("{}"), NULL);
	expect(&f, "done");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(f.f_ctx, "steps"), "maybe"), "status")),
	    "skipped");
	fake_end(&f);
	fake_start(&f, COND, "{\"go\": true}", 10);
	expect(&f, "call:maybe");
	reply(&f, 0, OK("{\"v\": \"real\"}"), NULL);
	expect(&f, "call:next{\"v\":\"real\"}");
	reply(&f, 1, OK("{}"), NULL);
	fake_end(&f);
	/* a condition that is no boolean fails its step */
	fake_start(&f, COND, "{\"go\": 3}", 10);
	expect(&f, "done");
	assert_string_equal(f.f_err, "step maybe: condition is an integer, "
	    "not true or false");
	fake_end(&f);
}

static void
test_sched_abort_continue(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - {id: a, tool: x.a, onError: {action: continue}}\n"
	    "      - {id: b, tool: x.b}\n"
	    "      - {id: c, tool: x.c, dependsOn: [a, b]}\n", "{}", 10);
	expect(&f, "call:a call:b");
	reply(&f, 0, BAD, NULL);
	expect(&f, "");
	reply(&f, 1, BAD, NULL);		/* b aborts the workflow */
	expect(&f, "done");
	assert_string_equal(f.f_err, "step b: boom");
	assert_int_equal(wf_run_step_state(f.f_run, 0), WF_FAILED);
	assert_int_equal(wf_run_step_state(f.f_run, 2), WF_WAITING);
	reply(&f, 1, OK("{}"), NULL);		/* late: ignored */
	assert_int_equal(f.f_done, 1);
	fake_end(&f);
}

static void
test_sched_elicit(void **state)
{
	static const char yaml[] =
	    "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: ask\n        message: \"go {{.workflow.id}}?\"\n"
	    "        schema: {type: object, properties: {channel: {type: string}}}\n"
	    "        onDecline: {action: skip_remaining}\n"
	    "        onCancel: {action: abort}\n"
	    "      - {id: b, tool: x.b, dependsOn: [ask]}\n"
	    "      - {id: c, tool: x.c}\n";
	struct fake	 f;
	json_t		*content = jparse("{\"channel\": \"#eng\"}");
	json_t		*wrong = jparse("{\"channel\": 5}");

	(void)state;
	fake_start(&f, yaml, "{}", 10);
	expect(&f, "ask:ask(go wf-1?) call:c");
	wf_run_elicit_done(f.f_run, f.f_calls[0], "decline", NULL);
	expect(&f, "skip:b");
	reply(&f, 1, OK("{}"), NULL);
	expect(&f, "done");
	assert_null(f.f_err);
	fake_end(&f);
	fake_start(&f, yaml, "{}", 10);
	wf_run_elicit_done(f.f_run, f.f_calls[0], "accept", content);
	expect(&f, "ask:ask(go wf-1?) call:c call:b");
	fake_end(&f);
	fake_start(&f, yaml, "{}", 10);
	wf_run_elicit_done(f.f_run, f.f_calls[0], "cancel", NULL);
	expect(&f, "ask:ask(go wf-1?) call:c cancel:c done");
	assert_string_equal(f.f_err, "step ask: the user cancelled");
	fake_end(&f);
	/* an answer that does not fit the schema fails the step */
	fake_start(&f, yaml, "{}", 10);
	wf_run_elicit_done(f.f_run, f.f_calls[0], "accept", wrong);
	expect(&f, "ask:ask(go wf-1?) call:c cancel:c done");
	assert_string_equal(f.f_err, "step ask: the answer does not match "
	    "the schema: channel: expected type string, found an integer");
	fake_end(&f);
	json_decref(content);
	json_decref(wrong);
}

static void
test_output_of(void **state)
{
	json_t	*r, *o, *w;

	(void)state;
	r = jparse("{\"content\": [{\"type\": \"text\", \"text\": \"a\"}, "
	    "{\"type\": \"image\", \"data\": \"AA==\", \"mimeType\": "
	    "\"image/png\"}, {\"type\": \"text\", \"text\": \"b\"}]}");
	o = wf_output_of(r);
	w = jparse("{\"text\": \"a\", \"image_0\": {\"type\": \"image\", "
	    "\"data\": \"AA==\", \"mimeType\": \"image/png\"}, "
	    "\"text_1\": \"b\"}");
	assert_true(json_equal(o, w));
	json_decref(r);
	json_decref(o);
	json_decref(w);
}


static void
check_params(const struct composite *co, const char *args, const char *want)
{
	char	 err[256];
	json_t	*a = jparse(args), *v, *w;

	v = composite_params(co, a, err, sizeof(err));
	json_decref(a);
	if (want[0] != '{') {
		if (v != NULL)
			fail_msg("%s accepted, expected %s", args, want);
		assert_string_equal(err, want);
		return;
	}
	if (v == NULL)
		fail_msg("%s: %s", args, err);
	w = jparse(want);
	assert_true(json_equal(v, w));
	json_decref(v);
	json_decref(w);
}

static void
test_params(void **state)
{
	struct composite_list	 cl;
	const struct composite	*co;

	(void)state;
	load_ok(TRIAGE, &cl);
	co = cl.cl_items[0];
	check_params(co, "{\"repo\": \"o/r\", \"issue_number\": 3}",
	    "{\"repo\": \"o/r\", \"issue_number\": 3, \"notify\": true}");
	check_params(co, "{\"repo\": \"o/r\", \"issue_number\": 3, \"notify\": "
	    "false}", "{\"repo\": \"o/r\", \"issue_number\": 3, \"notify\": "
	    "false}");
	check_params(co, "{\"repo\": \"o/r\"}", "issue_number: missing "
	    "(required)");
	check_params(co, "{\"repo\": 5, \"issue_number\": 3}",
	    "repo: expected type string, found an integer");
	check_params(co, "{\"repo\": \"o/r\", \"issue_number\": \"3\"}",
	    "issue_number: expected type integer, found a string");
	check_params(co, "[]", "arguments: expected an object, found an "
	    "array");
	composite_list_free(&cl);
}

static json_t *
lookup(void *arg, const char *tool)
{
	(void)arg;
	if (strcmp(tool, "x.read") == 0)
		return jparse("{\"readOnlyHint\": true, \"destructiveHint\": "
		    "false, \"openWorldHint\": false}");
	if (strcmp(tool, "x.write") == 0)
		return jparse("{\"destructiveHint\": false, "
		    "\"openWorldHint\": false}");
	return NULL;
}

static void
check_annot(const char *yaml, const char *want)
{
	struct composite_list	 cl;
	char			 err[256];
	json_t			*a, *w;

	load_ok(yaml, &cl);
	a = composite_annotations(cl.cl_items[0], lookup, NULL, err,
	    sizeof(err));
	if (want[0] != '{') {
		assert_null(a);
		assert_string_equal(err, want);
	} else {
		assert_non_null(a);
		w = jparse(want);
		if (!json_equal(a, w))
			fail_msg("got %s", json_dumps(a, 0));
		json_decref(w);
	}
	json_decref(a);
	composite_list_free(&cl);
}

#define ANN(steps, ann) \
	"compositeTools:\n  - name: w\n    description: d\n" ann \
	"    steps:\n" steps

static void
test_annotations(void **state)
{
	(void)state;
	check_annot(ANN("      - {id: a, tool: x.read}\n", ""),
	    "{\"readOnlyHint\": true, \"destructiveHint\": false, "
	    "\"openWorldHint\": false}");
	check_annot(ANN("      - {id: a, tool: x.read}\n"
	    "      - {id: b, collection: '[]', step: {tool: x.write}}\n",
	    "    annotations: {title: T, idempotentHint: true}\n"),
	    "{\"readOnlyHint\": false, \"destructiveHint\": false, "
	    "\"openWorldHint\": false, \"title\": \"T\", "
	    "\"idempotentHint\": true}");
	/* an unknown tool is the least safe */
	check_annot(ANN("      - {id: a, tool: x.read}\n"
	    "      - {id: b, tool: y.unknown}\n", ""),
	    "{\"readOnlyHint\": false, \"destructiveHint\": true, "
	    "\"openWorldHint\": true}");
	/* the reference drops such a composite silently */
	check_annot(ANN("      - {id: a, tool: x.write}\n",
	    "    annotations: {readOnlyHint: true}\n"),
	    "composite w claims readOnlyHint: true, but its step tool "
	    "x.write is not read-only");
	check_annot(ANN("      - {id: a, tool: x.read}\n      - {id: b, tool: z.z}\n",
	    "    annotations: {destructiveHint: false}\n"),
	    "composite w claims destructiveHint: false, but its step tool "
	    "z.z may be destructive");
	/* elicitation only: no floor */
	check_annot(ANN("      - {id: a, message: m, schema: {type: object}}\n",
	    ""), "{}");
}

static void
test_result(void **state)
{
	struct composite_list	 cl;
	char			 err[256];
	json_t			*ctx, *r, *w;

	(void)state;
	load_ok(TRIAGE, &cl);
	ctx = jparse("{\"steps\": {\"fetch_issue\": {\"output\": {\"title\": "
	    "\"T\"}}, \"label_each\": {\"output\": {\"completed\": \"4\"}}, "
	    "\"confirm\": {\"output\": {\"action\": \"decline\"}}}}");
	r = composite_result(cl.cl_items[0], ctx, err, sizeof(err));
	assert_non_null(r);
	w = jparse("{\"title\": \"T\", \"related_labelled\": 4, "
	    "\"notified\": false}");
	assert_true(json_equal(json_object_get(r, "structuredContent"), w));
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(r, "content"), 0), "text")),
	    "{\"title\":\"T\",\"related_labelled\":4,\"notified\":false}");
	json_decref(r);
	json_decref(w);
	json_decref(ctx);
	/* a required output without a value fails; others take default */
	ctx = jparse("{\"steps\": {\"fetch_issue\": {\"output\": {}}, "
	    "\"label_each\": {\"output\": {}}, \"confirm\": {\"output\": {}}}}");
	assert_null(composite_result(cl.cl_items[0], ctx, err, sizeof(err)));
	assert_string_equal(err, "output title: .steps.fetch_issue.output."
	    "title: no such key");
	json_decref(ctx);
	w = composite_output_schema(cl.cl_items[0]);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(w, "properties"), "related_labelled"), "type")),
	    "integer");
	assert_null(json_object_get(json_object_get(json_object_get(w,
	    "properties"), "title"), "value"));
	json_decref(w);
	composite_list_free(&cl);
	/* without output: the leaves, in declaration order */
	load_ok(DIAMOND, &cl);
	ctx = jparse("{\"steps\": {\"a\": {\"output\": 1}, \"b\": {\"output\": "
	    "2}, \"c\": {\"output\": 3}, \"e\": {\"output\": 5}, \"d\": "
	    "{\"output\": 4}}}");
	r = composite_result(cl.cl_items[0], ctx, err, sizeof(err));
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(r, "content"), 0), "text")), "{\"d\":4,\"e\":5}");
	json_decref(r);
	json_decref(ctx);
	composite_list_free(&cl);
}

static void
test_coerce(void **state)
{
	json_t	*args, *schema, *want;

	(void)state;
	args = jparse("{\"n\": \"42\", \"r\": \"0.5\", \"b\": \"true\", "
	    "\"s\": \"7\", \"o\": \"{\\\"k\\\": 1}\", \"bad\": \"x\", "
	    "\"nest\": {\"m\": \"3\"}, \"l\": [\"1\", \"2\"], \"free\": \"9\"}");
	schema = jparse("{\"type\": \"object\", \"properties\": {"
	    "\"n\": {\"type\": \"integer\"}, \"r\": {\"type\": \"number\"}, "
	    "\"b\": {\"type\": \"boolean\"}, \"s\": {\"type\": \"string\"}, "
	    "\"o\": {\"type\": \"object\"}, \"bad\": {\"type\": \"integer\"}, "
	    "\"nest\": {\"type\": \"object\", \"properties\": {\"m\": "
	    "{\"type\": \"integer\"}}}, \"l\": {\"type\": \"array\", "
	    "\"items\": {\"type\": \"integer\"}}}}");
	want = jparse("{\"n\": 42, \"r\": 0.5, \"b\": true, \"s\": \"7\", "
	    "\"o\": {\"k\": 1}, \"bad\": \"x\", \"nest\": {\"m\": 3}, "
	    "\"l\": [1, 2], \"free\": \"9\"}");
	composite_coerce_args(args, schema);
	if (!json_equal(args, want))
		fail_msg("got %s", json_dumps(args, JSON_COMPACT));
	json_decref(args);
	json_decref(schema);
	json_decref(want);
}

/* progress: every step's start and end reach the driver */
static char	 progress_log[256];

static void
progress_step(void *arg, size_t step, enum wf_state st)
{
	struct fake	*f = arg;
	char		 buf[32];

	(void)snprintf(buf, sizeof(buf), "%s=%d ",
	    f->f_co->co_steps[step].cs_id, (int)st);
	strcat(progress_log, buf);
}

static void
test_sched_progress_abort(void **state)
{
	struct wf_driver	 drv = fake_driver;
	struct fake		 f;

	(void)state;
	drv.wd_step = progress_step;
	progress_log[0] = '\0';
	fake_start_with(&f, DIAMOND, "{}", 10, &drv);
	reply(&f, 0, OK("{\"n\": 1}"), NULL);
	assert_string_equal(progress_log, "a=1 a=3 b=1 c=1 ");
	/* the workflow's own timeout ends it; late replies are ignored */
	wf_run_abort(f.f_run, "the workflow timed out after 10m");
	reply(&f, 1, OK("{}"), NULL);
	expect(&f, "call:a call:b{\"v\":1} call:c cancel:b cancel:c done");
	assert_string_equal(f.f_err, "the workflow timed out after 10m");
	assert_int_equal(f.f_done, 1);
	fake_end(&f);
}

/* each call's timeout: a failure the onError policy handles; a stale
 * one (the call ended, or another attempt runs) does nothing */
static void
test_sched_timeout(void **state)
{
	struct fake	 f;

	(void)state;
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: a\n        tool: x.slow\n"
	    "        timeout: 1500ms\n"
	    "        onError: {action: retry, retryCount: 1, retryDelay: 1s}\n"
	    "      - {id: b, tool: x.fast, timeout: 2s}\n", "{}", 10);
	expect(&f, "call:a call:b");
	assert_int_equal(f.f_ntmo, 2);
	assert_int_equal(f.f_tmo_ms[0], 1500);
	assert_int_equal(f.f_tmo_ms[1], 2000);
	reply(&f, 1, OK("{}"), NULL);
	wf_run_timer(f.f_run, f.f_tmo[1]);	/* b ended: stale */
	wf_run_timer(f.f_run, f.f_tmo[0]);	/* a times out: retried */
	expect(&f, "cancel:a timer:a=1000");
	wf_run_timer(f.f_run, f.f_tmo[0]);	/* the same, again: stale */
	wf_run_timer(f.f_run, f.f_timers[0]);
	expect(&f, "call:a");
	assert_int_equal(f.f_ntmo, 3);
	wf_run_timer(f.f_run, f.f_tmo[0]);	/* attempt 0's: stale */
	expect(&f, "");
	wf_run_timer(f.f_run, f.f_tmo[2]);
	expect(&f, "cancel:a done");
	assert_string_equal(f.f_err, "step a: timed out after 1500ms");
	fake_end(&f);

	/* an elicitation that times out is cancelled */
	fake_start(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: ask\n        message: m\n"
	    "        schema: {type: object}\n        timeout: 1m\n"
	    "        onCancel: {action: continue}\n", "{}", 10);
	assert_int_equal(f.f_tmo_ms[0], 60000);
	wf_run_timer(f.f_run, f.f_tmo[0]);
	expect(&f, "ask:ask(m) cancel:ask done");
	assert_null(f.f_err);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(json_object_get(f.f_ctx, "steps"), "ask"),
	    "output"), "action")), "cancel");
	fake_end(&f);
}

/* a driver that fails a call inside wd_call() and frees the run in
 * wd_done(): nothing of the run may be touched after wd_done() */
static int	sync_calls;

static void
sync_call(void *arg, uint64_t id, const struct composite_step *cs,
    json_t *args)
{
	struct fake	*f = arg;

	if (++sync_calls == 1) {
		fake_call(arg, id, cs, args);
		return;
	}
	json_decref(args);
	wf_run_call_done(f->f_run, id, NULL, "refused");
}

static void
sync_done(void *arg, json_t *ctx, const char *error)
{
	struct fake	*f = arg;

	fake_done(arg, ctx, error);
	json_decref(f->f_ctx);
	f->f_ctx = NULL;
	wf_run_free(f->f_run);
	f->f_run = NULL;
}

static void
test_sched_sync_free(void **state)
{
	struct wf_driver	 drv = fake_driver;
	struct fake		 f;

	(void)state;
	drv.wd_call = sync_call;
	drv.wd_done = sync_done;
	sync_calls = 0;
	fake_start_with(&f, "compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - id: a\n        tool: x.flaky\n"
	    "        onError: {action: retry, retryCount: 1, retryDelay: 1s}\n",
	    "{}", 10, &drv);
	reply(&f, 0, BAD, NULL);
	wf_run_timer(f.f_run, f.f_timers[0]);	/* refused at once: done */
	assert_null(f.f_run);
	expect(&f, "call:a timer:a=1000 done");
	assert_string_equal(f.f_err, "step a: refused");
	free(f.f_err);
	composite_list_free(&fake_cl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triage),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_composite_long_running),
		cmocka_unit_test(test_sched_diamond),
		cmocka_unit_test(test_sched_bound),
		cmocka_unit_test(test_sched_foreach_partial),
		cmocka_unit_test(test_sched_foreach_abort),
		cmocka_unit_test(test_sched_retry),
		cmocka_unit_test(test_sched_condition),
		cmocka_unit_test(test_sched_abort_continue),
		cmocka_unit_test(test_sched_elicit),
		cmocka_unit_test(test_output_of),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_annotations),
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_coerce),
		cmocka_unit_test(test_sched_progress_abort),
		cmocka_unit_test(test_sched_timeout),
		cmocka_unit_test(test_sched_sync_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
