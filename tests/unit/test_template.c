/*
 * Unit tests for shared/template_parse.c and template_eval.c: the
 * reference's template forms, typed results, strict missing keys, compile
 * errors with their offsets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/template.h"
#include "unit.h"

static const char CTX[] =
    "{\"params\": {\"repo\": \"o/r\", \"n\": 42, \"ratio\": 0.5, "
    "\"notify\": true, \"empty\": \"\"},"
    " \"steps\": {\"fetch\": {\"status\": \"completed\", \"output\": "
    "{\"title\": \"Crash \\\"x\\\"\", \"items\": [{\"number\": 1}, "
    "{\"number\": 2}], \"total\": 150, \"text\": \"{\\\"id\\\": 7}\"}},"
    " \"confirm\": {\"output\": {\"action\": \"accept\"}}},"
    " \"forEach\": {\"issue\": {\"number\": 9}, \"index\": 3},"
    " \"workflow\": {\"id\": \"wf-1\", \"step_count\": 4}}";

static json_t *
eval(const char *src, char *err, size_t errlen)
{
	struct tmpl	*t;
	json_t		*ctx, *v;
	size_t		 off;

	if ((t = tmpl_compile(src, strlen(src), err, errlen, &off)) == NULL)
		fail_msg("compile %s: %s at %zu", src, err, off);
	ctx = jparse(CTX);
	v = tmpl_eval(t, ctx, err, errlen);
	json_decref(ctx);
	tmpl_free(t);
	return v;
}

/* src evaluates to the JSON value want */
static void
check(const char *src, const char *want)
{
	char	 err[TMPL_ERR_MAX];
	json_t	*v, *w;
	char	*got;

	if ((v = eval(src, err, sizeof(err))) == NULL)
		fail_msg("eval %s: %s", src, err);
	w = jparse(want);
	if (!json_equal(v, w) || json_typeof(v) != json_typeof(w)) {
		got = json_dumps(v, JSON_ENCODE_ANY);
		fail_msg("%s gave %s, want %s", src, got, want);
	}
	json_decref(v);
	json_decref(w);
}

static void
check_eval_error(const char *src, const char *msg)
{
	char	 err[TMPL_ERR_MAX];
	json_t	*v;

	if ((v = eval(src, err, sizeof(err))) != NULL)
		fail_msg("%s evaluated, expected error %s", src, msg);
	assert_string_equal(err, msg);
}

static void
check_compile_error(const char *src, size_t want_off, const char *msg)
{
	char		 err[TMPL_ERR_MAX];
	struct tmpl	*t;
	size_t		 off = 9999;

	if ((t = tmpl_compile(src, strlen(src), err, sizeof(err), &off)) !=
	    NULL) {
		tmpl_free(t);
		fail_msg("%s compiled, expected %s", src, msg);
	}
	assert_string_equal(err, msg);
	assert_int_equal(off, want_off);
}

static void
test_paths_typed(void **state)
{
	(void)state;
	check("{{.params.repo}}", "\"o/r\"");
	check("{{.params.n}}", "42");		/* an integer stays one */
	check("{{ .params.ratio }}", "0.5");
	check("{{.params.notify}}", "true");
	check("{{.steps.fetch.output.items}}", "[{\"number\":1},{\"number\":2}]");
	check("{{.forEach.issue.number}}", "9");
	check("{{.forEach.index}}", "3");
	check("{{.workflow.id}}", "\"wf-1\"");
	check("plain text", "\"plain text\"");
	check("", "\"\"");
	check("#{{.params.n}} in {{.params.repo}}", "\"#42 in o/r\"");
	check("{{.params.ratio}}/{{.params.notify}}", "\"0.5/true\"");
}

static void
test_functions(void **state)
{
	(void)state;
	check("{{json .steps.fetch.output.items}}",
	    "\"[{\\\"number\\\":1},{\\\"number\\\":2}]\"");
	check("{{quote .steps.fetch.output.title}}",
	    "\"\\\"Crash \\\\\\\"x\\\\\\\"\\\"\"");
	check("{{(fromJson .steps.fetch.output.text).id}}", "7");
	check("{{fromJson \"[1, 2]\"}}", "[1, 2]");
	check("{{eq .steps.confirm.output.action \"accept\"}}", "true");
	check("{{ne .params.n 42}}", "false");
	check("{{gt .steps.fetch.output.total 100}}", "true");	/* no 100.0 */
	check("{{gt .steps.fetch.output.total 100.5}}", "true");
	check("{{lt .params.ratio 1}}", "true");
	check("{{le .params.n 42}}", "true");
	check("{{ge \"b\" \"a\"}}", "true");
	check("{{eq .params.n 1 2 42}}", "true");
	check("{{and .params.notify .params.n}}", "42");
	check("{{or .params.empty \"dflt\"}}", "\"dflt\"");
	check("{{not .params.empty}}", "true");
	check("{{index .steps.fetch.output.items 1 \"number\"}}", "2");
	check("{{len .steps.fetch.output.items}}", "2");
	check("{{.steps.fetch.output.items | json}}",
	    "\"[{\\\"number\\\":1},{\\\"number\\\":2}]\"");
	check("{{.params.n | eq 42}}", "true");
	check("{{eq (len .steps.fetch.output.items) 2}}", "true");
	check("{{`raw \\n`}}", "\"raw \\\\n\"");
}

static void
test_if(void **state)
{
	(void)state;
	check("{{if gt .steps.fetch.output.total 100}}true{{else}}false"
	    "{{end}}", "\"true\"");
	check("{{if .params.empty}}a{{else if .params.n}}b{{else}}c{{end}}",
	    "\"b\"");
	check("{{if .params.empty}}a{{end}}", "\"\"");
	check("x {{- if .params.notify -}} y {{- end}}", "\"xy\"");
	check("{{if .params.notify}}{{if .params.empty}}1{{else}}2{{end}}"
	    "{{end}}", "\"2\"");
}

static void
test_eval_errors(void **state)
{
	(void)state;
	/* the reference renders "<no value>" and carries on */
	check_eval_error("{{.params.missing}}", ".params.missing: no such key");
	check_eval_error("x {{.steps.fetch.output.nope}}",
	    ".steps.fetch.output.nope: no such key");
	check_eval_error("{{.params.repo.x}}",
	    ".params.repo is a string, not an object with key \"x\"");
	check_eval_error("{{lt .params.repo 3}}",
	    "cannot compare a string with an integer");
	check_eval_error("{{eq .params.repo 3}}",
	    "cannot compare a string with an integer");
	check_eval_error("{{fromJson .params.n}}",
	    "fromJson: expected a string, found an integer");
	check_eval_error("{{index .steps.fetch.output.items 5}}",
	    "index 5 out of range (2 items)");
	check_eval_error("{{(fromJson \"{}\").id}}", "(...).id: no such key");
}

static void
test_compile_errors(void **state)
{
	(void)state;
	check_compile_error("ab {{.x", 7, "unclosed action (missing \"}}\")");
	check_compile_error("{{nosuch .x}}", 2, "unknown function \"nosuch\"");
	check_compile_error("{{eq .x}}", 2, "eq takes 2 or more arguments, "
	    "found 1");
	check_compile_error("{{json}}", 2, "json takes 1 argument, found 0");
	check_compile_error("{{if .x}}a", 0, "{{if}} without {{end}}");
	check_compile_error("a{{end}}", 1, "{{end}} without {{if}}");
	check_compile_error("{{.x .y}}", 5, "unexpected operand after a value "
	    "(a function call starts with its name)");
	check_compile_error("{{\"abc}}", 2, "unterminated string");
	check_compile_error("{{}}", 2, "missing value");
	check_compile_error("{{.a | .b}}", 7, "only a function can follow "
	    "\"|\"");
	check_compile_error("{{1x}}", 2, "bad number");
	check_compile_error("{{ # }}", 3, "unexpected character '#'");
	check_compile_error("{{(json .x}}", 10, "expected \")\"");
	{
		/* stages nest: a long pipeline is as deep as many () */
		char	 src[1024] = "{{.x";
		int	 i;

		for (i = 0; i <= TMPL_DEPTH_MAX; i++)
			strcat(src, " | len");
		strcat(src, "}}");
		check_compile_error(src, 4 + TMPL_DEPTH_MAX * 6 + 1,
		    "nested too deep");
	}
}

static int
collect(const char *const *segs, size_t n, void *arg)
{
	char	*buf = arg;
	size_t	 i;

	for (i = 0; i < n; i++) {
		strcat(buf, ".");
		strcat(buf, segs[i]);
	}
	strcat(buf, " ");
	return 0;
}

static void
test_walk(void **state)
{
	char		 err[TMPL_ERR_MAX], buf[256] = "";
	const char	*src = "{{if .params.a}}{{json .steps.s.output.x}}{{end}}"
	    "{{(fromJson .steps.t.output.text).id}}";
	struct tmpl	*t;

	(void)state;
	t = tmpl_compile(src, strlen(src), err, sizeof(err), NULL);
	assert_non_null(t);
	assert_int_equal(tmpl_is_literal(t), 0);
	assert_int_equal(tmpl_walk_paths(t, collect, buf), 0);
	assert_string_equal(buf, ".params.a .steps.s.output.x "
	    ".steps.t.output.text ");
	tmpl_free(t);
}

static void
test_bool(void **state)
{
	char		 err[TMPL_ERR_MAX];
	struct tmpl	*t;
	json_t		*ctx = jparse(CTX);
	int		 b = -1;
	const char	*src;

	(void)state;
	src = "{{.params.notify}}";
	t = tmpl_compile(src, strlen(src), err, sizeof(err), NULL);
	assert_int_equal(tmpl_eval_bool(t, ctx, &b, err, sizeof(err)), 0);
	assert_int_equal(b, 1);
	tmpl_free(t);
	src = "False";
	t = tmpl_compile(src, strlen(src), err, sizeof(err), NULL);
	assert_int_equal(tmpl_eval_bool(t, ctx, &b, err, sizeof(err)), 0);
	assert_int_equal(b, 0);
	tmpl_free(t);
	src = "{{.params.n}}";
	t = tmpl_compile(src, strlen(src), err, sizeof(err), NULL);
	assert_int_equal(tmpl_eval_bool(t, ctx, &b, err, sizeof(err)), -1);
	assert_string_equal(err, "condition is an integer, not true or false");
	tmpl_free(t);
	json_decref(ctx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_typed),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_if),
		cmocka_unit_test(test_eval_errors),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_bool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
