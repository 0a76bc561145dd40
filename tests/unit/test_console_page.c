/*
 * The console's page (worker/diag/console_page.c): /status's object as
 * HTML, every text from it escaped, the state classes only the page's
 * own, the forms only for an admin, the chart drawn from the series;
 * and the HTML escape it shares with the consent pages (proto/html.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "proto/html.h"
#include "proto/jsonw.h"
#include "worker/diag/console.h"

#define EVIL	"<script>alert(1)</script>\"'&"
#define EVIL_E	"&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"

/* a /status object: one backend with markup everywhere a text can be */
static json_t *
status(void)
{
	json_t		*st;
	json_error_t	 err;

	st = json_pack_ex(&err, 0, "{s:s, s:s, s:i, s:s, s:i, s:i, s:[{s:i}],"
	    " s:[{s:s, s:s, s:s, s:s, s:s, s:{s:s}, s:{s:i, s:i, s:f, s:f,"
	    " s:f}, s:{s:i, s:i, s:i, s:i}, s:{s:[i, i, i, i], s:[n, f, f, n]}}],"
	    " s:[{s:s, s:i, s:s, s:s, s:s}],"
	    " s:{s:i, s:[{s:s, s:s, s:s, s:s, s:s, s:s, s:s}]}}",
	    "name", EVIL, "version", EVIL, "generation", 3, "now", EVIL,
	    "sessions", 12, "principals", 4, "workers", "slot", 0,
	    "backends", "name", EVIL, "transport", EVIL, "mcpRevision", EVIL,
	    "health", EVIL, "breaker", "open",
	    "lastError", "message", EVIL,
	    "lastMinute", "requests", 40, "failures", 2, "errorRate", 0.05,
	    "p50Ms", 12.25, "p99Ms", 250.0,
	    "lists", "tools", 7, "prompts", 1, "resources", 2,
	    "resourceTemplates", 0,
	    "series", "requests", 0, 2, 4, 1, "p99Ms", 10.0, 20.0,
	    "denials", "at", EVIL, "status", 403, "user", EVIL, "method",
	    EVIL, "name", EVIL,
	    "pins", "pending", 1, "changes", "backend", EVIL, "kind", "tool",
	    "name", EVIL, "state", "pending", "since", EVIL, "pinned", EVIL,
	    "new", EVIL);
	if (st == NULL)
		fail_msg("json_pack: %s", err.text);
	return st;
}

static char *
render(const json_t *st, const char *csrf, int login)
{
	struct jsonw	 jw;

	memset(&jw, 0, sizeof(jw));
	assert_int_equal(console_page_render(&jw, st, csrf, login), 0);
	assert_non_null(jw.jw_buf);
	return jw.jw_buf;
}

static size_t
count(const char *s, const char *what)
{
	size_t	 n = 0;

	for (; (s = strstr(s, what)) != NULL; s++)
		n++;
	return n;
}

static void
test_escaped(void **state)
{
	json_t	*st = status();
	char	*h;

	(void)state;
	h = render(st, NULL, 0);
	/* the only script is the page's own, loaded from /console.js */
	assert_int_equal(count(h, "<script"), 1);
	assert_non_null(strstr(h, "<script src=\"/console.js\" defer>"));
	assert_null(strstr(h, "alert(1)</script>"));
	assert_null(strstr(h, "\"'&<"));
	/* every text: title, header, the row, its error, a denial, a pin */
	assert_true(count(h, EVIL_E) >= 14);
	/* how to decide, for who may not act here */
	assert_non_null(strstr(h, "<code>vmcpctl pins approve " EVIL_E " "
	    EVIL_E "</code>"));
	/* a state's class is one of the page's: markup is "unknown" */
	assert_non_null(strstr(h, "<tr data-i=\"0\" class=\"h-unknown\">"));
	assert_non_null(strstr(h, "<span class=\"st open\">open</span>"));
	assert_non_null(strstr(h, "<tr class=\"p-pending\">"));
	/* the figures */
	assert_non_null(strstr(h, "<td data-k=\"p50\">12.2 ms</td>"));
	assert_non_null(strstr(h, "<td data-k=\"p99\">250.0 ms</td>"));
	assert_non_null(strstr(h, "<td data-k=\"errorRate\">5.0%</td>"));
	assert_non_null(strstr(h, "<td data-k=\"lists\">7 / 1 / 2</td>"));
	assert_non_null(strstr(h, "<dd data-k=\"sessions\">12</dd>"));
	assert_non_null(strstr(h, "data-generation=\"3\""));
	/* read-only: no form, no login link */
	assert_null(strstr(h, "<form"));
	assert_null(strstr(h, CONSOLE_LOGIN_PATH));
	assert_non_null(strstr(h, "read-only"));
	free(h);
	json_decref(st);
}

static void
test_chart(void **state)
{
	json_t	*st = status();
	char	*h;

	(void)state;
	h = render(st, NULL, 0);
	/* three bars (a 0 draws none), the tallest the whole height less
	 * 2; the p99 line through the two seconds that have one */
	assert_int_equal(count(h, "<rect class=\"rq\""), 3);
	assert_non_null(strstr(h, "viewBox=\"0 0 4 36\""));
	assert_non_null(strstr(h, "<title>peak 4 requests/s, p99 up to 20.0 "
	    "ms</title>"));
	assert_non_null(strstr(h, "<rect class=\"rq\" x=\"2\" y=\"2.0\" "
	    "width=\"1\" height=\"34.0\"/>"));
	assert_non_null(strstr(h, "<polyline class=\"p99\" points=\"1.5,18.0 "
	    "2.5,1.0\"/>"));
	free(h);
	json_decref(st);
}

static void
test_forms(void **state)
{
	json_t	*st = status();
	char	*h;

	(void)state;
	/* an admin: each backend's and each pin's forms carry the token */
	h = render(st, "tok\"en", 0);
	assert_null(strstr(h, "vmcpctl pins"));
	assert_int_equal(count(h, "<form method=\"post\" action=\""
	    CONSOLE_ACTION_PATH "\">"), 5);
	assert_int_equal(count(h, "name=\"csrf\" value=\"tok&quot;en\""), 5);
	assert_int_equal(count(h, "name=\"action\" value=\""
	    CONSOLE_ACT_APPROVE_ALL "\"><input type=\"hidden\" "
	    "name=\"backend\" value=\"" EVIL_E "\">"), 1);
	assert_non_null(strstr(h, "name=\"action\" value=\"" CONSOLE_ACT_REPROBE
	    "\""));
	assert_non_null(strstr(h, "name=\"action\" value=\"" CONSOLE_ACT_DROP
	    "\""));
	assert_non_null(strstr(h, "name=\"action\" value=\""
	    CONSOLE_ACT_APPROVE "\"><input type=\"hidden\" name=\"backend\" "
	    "value=\"" EVIL_E "\"><input type=\"hidden\" name=\"kind\" "
	    "value=\"tool\"><input type=\"hidden\" name=\"name\" value=\""
	    EVIL_E "\">"));
	assert_non_null(strstr(h, "name=\"action\" value=\"" CONSOLE_ACT_REJECT
	    "\""));
	free(h);
	/* actions configured, no admin: a login link, no form */
	h = render(st, NULL, 1);
	assert_null(strstr(h, "<form"));
	assert_non_null(strstr(h, "<a href=\"" CONSOLE_LOGIN_PATH "\">"));
	free(h);
	json_decref(st);
}

/* anything at all, even no object: a page, never a crash */
static void
test_garbage(void **state)
{
	json_t	*v;
	char	*h;

	(void)state;
	h = render(NULL, NULL, 0);
	assert_non_null(strstr(h, "</html>"));
	free(h);
	v = json_loads("{\"backends\": [1, null, {\"series\": {\"requests\": "
	    "[\"x\", -5, 1e308], \"p99Ms\": {}}}], \"pins\": {\"changes\": 3},"
	    " \"denials\": \"no\", \"rateLimits\": [[]]}", 0, NULL);
	assert_non_null(v);
	h = render(v, NULL, 0);
	assert_non_null(strstr(h, "</html>"));
	free(h);
	json_decref(v);
}

static void
test_html_escape(void **state)
{
	struct jsonw	 jw;

	(void)state;
	memset(&jw, 0, sizeof(jw));
	html_escape(&jw, "a" EVIL "b");
	assert_string_equal(jw.jw_buf, "a" EVIL_E "b");
	html_escape(&jw, NULL);
	html_escape(&jw, "");
	assert_string_equal(jw.jw_buf, "a" EVIL_E "b");
	jsonw_free(&jw);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_chart),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_html_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
