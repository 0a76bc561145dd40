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
	assert_int_equal(cs->cs_args.ct_ntmpl, 2);
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
	want = jparse("{\"repo\": \"o/r\", \"issue_number\": 7, \"fixed\": 3}");
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
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triage),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
