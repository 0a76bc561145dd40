/*
 * Trace context in params._meta (proto/meta_trace.c): found in a
 * request's text only where it belongs (params' own _meta), and
 * written into the params vmcpd sends on with everything else kept,
 * checked byte for byte where the text path applies and by loading
 * the result with jansson everywhere.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/meta_trace.h"
#include "unit.h"

#define TP	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TP2	"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
#define TPJ	"\"traceparent\":\"" TP "\""

static int
find(const char *body, struct proto_trace_meta *tm)
{
	return proto_meta_trace_find(body, strlen(body), tm);
}

static void
span_is(const char *s, size_t len, const char *want)
{
	if (want == NULL) {
		assert_null(s);
		return;
	}
	assert_non_null(s);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(s, want, len);
}

static void
tm_is(const struct proto_trace_meta *tm, const char *parent,
    const char *state, const char *baggage)
{
	span_is(tm->tm_parent, tm->tm_parentlen, parent);
	span_is(tm->tm_state, tm->tm_statelen, state);
	span_is(tm->tm_baggage, tm->tm_baggagelen, baggage);
}

static void
test_find(void **state)
{
	struct proto_trace_meta tm;

	(void)state;
	/* all three, in a tools/call */
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{},"
	    "\"_meta\":{\"progressToken\":3,\"traceparent\":\"" TP "\","
	    "\"tracestate\":\"congo=t61rcWkgMzE\",\"baggage\":"
	    "\"user=alice,k=v\"}}}", &tm), 0);
	tm_is(&tm, TP, "congo=t61rcWkgMzE", "user=alice,k=v");

	/* whitespace anywhere, params before method */
	assert_int_equal(find(" {\n \"params\" : { \"_meta\" : {\n"
	    "  \"traceparent\" :\t\"" TP "\" } } ,\"jsonrpc\":\"2.0\","
	    "\"method\":\"ping\" } ", &tm), 0);
	tm_is(&tm, TP, NULL, NULL);

	/* none of them, or no _meta at all */
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"method\":\"ping\","
	    "\"params\":{\"_meta\":{\"progressToken\":\"t\"}}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
	    &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	/* no "_meta" in the text: not even read */
	assert_int_equal(find("not json", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	assert_int_equal(proto_meta_trace_find(NULL, 0, &tm), 0);

	/* a _meta deeper than params' own is not the request's */
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"x\",\"arguments\":{\"_meta\":"
	    "{\"traceparent\":\"" TP "\"}}}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	/* nor one at the top, beside params */
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"method\":\"x\","
	    "\"_meta\":{\"traceparent\":\"" TP "\"},\"params\":{}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	/* nor params of a result */
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"params\":{\"_meta\":{\"traceparent\":\"" TP "\"}}}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	/* nor text that says "_meta" inside a string */
	assert_int_equal(find("{\"jsonrpc\":\"2.0\",\"method\":\"x\","
	    "\"params\":{\"q\":\"\\\"_meta\\\":{\\\"traceparent\\\":\\\""
	    TP "\\\"}\"}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);

	/* escaped or no strings: declined, member by member */
	assert_int_equal(find("{\"params\":{\"_meta\":{\"traceparent\":"
	    "\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0\\u0031\","
	    "\"tracestate\":\"a=1\",\"baggage\":42}}}", &tm), 0);
	tm_is(&tm, NULL, "a=1", NULL);
	/* a key with an escape is not matched */
	assert_int_equal(find("{\"params\":{\"_meta\":{\"trace\\u0070arent\":"
	    "\"" TP "\"}}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	/* _meta that is no object */
	assert_int_equal(find("{\"params\":{\"_meta\":\"" TP "\"}}", &tm), 0);
	tm_is(&tm, NULL, NULL, NULL);
	/* an empty string is a string */
	assert_int_equal(find("{\"params\":{\"_meta\":{\"traceparent\":"
	    "\"\"}}}", &tm), 0);
	tm_is(&tm, "", NULL, NULL);

	/* not JSON (with "_meta" in it), or no object */
	assert_int_equal(find("{\"params\":{\"_meta\":{}}", &tm), -1);
	tm_is(&tm, NULL, NULL, NULL);
	assert_int_equal(find("[{\"params\":{\"_meta\":{}}}]", &tm), -1);
	assert_int_equal(find("\"_meta\"", &tm), -1);
}

/* count members "k<i>":[<i>], after buf[0..n): the new length */
static size_t
members(char *buf, size_t size, size_t n, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		n += (size_t)snprintf(buf + n, size - n, "\"k%zu\":[%zu],", i,
		    i);
	return n;
}

static void
test_find_limits(void **state)
{
	struct proto_trace_meta	 tm;
	char			 buf[4096];
	size_t			 n, i;

	(void)state;
	/* many params members before _meta: still found */
	n = (size_t)snprintf(buf, sizeof(buf), "{\"params\":{");
	n = members(buf, sizeof(buf), n, 100);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
	    "\"_meta\":{\"traceparent\":\"" TP "\"}}}");
	assert_int_equal(proto_meta_trace_find(buf, n, &tm), 0);
	tm_is(&tm, TP, NULL, NULL);

	/* 32 _meta members are read, 33 are not */
	for (i = 31; i <= 32; i++) {
		n = (size_t)snprintf(buf, sizeof(buf),
		    "{\"params\":{\"_meta\":{");
		n = members(buf, sizeof(buf), n, i);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
		    "\"traceparent\":\"" TP "\"}}}");
		assert_int_equal(proto_meta_trace_find(buf, n, &tm),
		    i == 31 ? 0 : -1);
		tm_is(&tm, i == 31 ? TP : NULL, NULL, NULL);
	}

	/* a length, not a NUL */
	n = (size_t)snprintf(buf, sizeof(buf), "{\"params\":{\"_meta\":{"
	    "\"traceparent\":\"" TP "\"}}}trailing");
	assert_int_equal(proto_meta_trace_find(buf, n - 8, &tm), 0);
	tm_is(&tm, TP, NULL, NULL);
	assert_int_equal(proto_meta_trace_find(buf, n, &tm), -1);

	/* on _meta's own text */
	n = (size_t)snprintf(buf, sizeof(buf), "{\"baggage\":\"a=1\","
	    "\"traceparent\":\"" TP "\"}");
	assert_int_equal(proto_meta_trace_members(buf, n, &tm), 0);
	tm_is(&tm, TP, NULL, "a=1");
	assert_int_equal(proto_meta_trace_members("[]", 2, &tm), -1);
	assert_int_equal(proto_meta_trace_members(NULL, 0, &tm), -1);
}

/*
 * proto_params_trace_text() on params: the text it gives is exactly
 * want_text when that is not NULL, and equal to want as JSON, loaded
 * the way jsonrpc_parse() loads a request (duplicate keys refused).
 */
static void
text_is(const char *params, const char *ts, const char *bg,
    const char *want_text, const char *want)
{
	json_error_t	 e;
	json_t		*got, *exp;
	char		*out;
	size_t		 len = 0;

	out = proto_params_trace_text(params, params != NULL ?
	    strlen(params) : 0, TP, ts, bg, &len);
	if (out == NULL)
		fail_msg("NULL for %s", params != NULL ? params : "NULL");
	assert_int_equal(len, strlen(out));
	if (want_text != NULL && strcmp(out, want_text) != 0)
		fail_msg("params %s\n  gave %s\n  want %s", params, out,
		    want_text);
	if ((got = json_loadb(out, len, JSON_REJECT_DUPLICATES |
	    JSON_ALLOW_NUL, &e)) == NULL)
		fail_msg("not JSON (%s): %s", e.text, out);
	if ((exp = json_loads(want, JSON_ALLOW_NUL, &e)) == NULL)
		fail_msg("bad test JSON (%s): %s", e.text, want);
	if (!json_equal(got, exp))
		fail_msg("params %s\n  gave %s\n  want %s", params, out, want);
	json_decref(got);
	json_decref(exp);
	free(out);
}

static void
test_text_no_meta(void **state)
{
	(void)state;
	/* no params */
	text_is(NULL, NULL, NULL, "{\"_meta\":{" TPJ "}}",
	    "{\"_meta\":{" TPJ "}}");
	text_is("", NULL, NULL, "{\"_meta\":{" TPJ "}}",
	    "{\"_meta\":{" TPJ "}}");
	text_is(" \n", "a=1", "k=v", "{\"_meta\":{" TPJ ",\"tracestate\":"
	    "\"a=1\",\"baggage\":\"k=v\"}}", "{\"_meta\":{" TPJ
	    ",\"tracestate\":\"a=1\",\"baggage\":\"k=v\"}}");
	/* empty params: no comma */
	text_is("{}", NULL, NULL, "{\"_meta\":{" TPJ "}}",
	    "{\"_meta\":{" TPJ "}}");
	text_is(" { \n } ", NULL, NULL, " {\"_meta\":{" TPJ "} \n } ",
	    "{\"_meta\":{" TPJ "}}");
	/* members: spliced in first, the rest as it was */
	text_is("{\"name\":\"echo\",\"arguments\":{\"a\":[1,2.50,null]}}",
	    NULL, NULL, "{\"_meta\":{" TPJ "},\"name\":\"echo\","
	    "\"arguments\":{\"a\":[1,2.50,null]}}", "{\"_meta\":{" TPJ "},"
	    "\"name\":\"echo\",\"arguments\":{\"a\":[1,2.5,null]}}");
	text_is("{\"a\":1}", NULL, NULL, "{\"_meta\":{" TPJ "},\"a\":1}",
	    "{\"_meta\":{" TPJ "},\"a\":1}");
	/* whitespace kept; a _meta deeper down is not params' own */
	text_is("{ \"name\" : \"x\" ,\n \"arguments\" : { \"_meta\" : "
	    "{\"traceparent\":\"" TP2 "\"} } }", "a=1", NULL,
	    "{\"_meta\":{" TPJ ",\"tracestate\":\"a=1\"}, \"name\" : \"x\" ,\n"
	    " \"arguments\" : { \"_meta\" : {\"traceparent\":\"" TP2 "\"} } }",
	    "{\"_meta\":{" TPJ ",\"tracestate\":\"a=1\"},\"name\":\"x\","
	    "\"arguments\":{\"_meta\":{\"traceparent\":\"" TP2 "\"}}}");
	/* "_meta" in a string, as a value and inside one */
	text_is("{\"q\":\"\\\"_meta\\\":{}\",\"name\":\"_meta\"}", NULL, NULL,
	    "{\"_meta\":{" TPJ "},\"q\":\"\\\"_meta\\\":{}\","
	    "\"name\":\"_meta\"}", "{\"_meta\":{" TPJ "},"
	    "\"q\":\"\\\"_meta\\\":{}\",\"name\":\"_meta\"}");
	/* strings that need escaping: escaped */
	text_is("{}", "a=x\"y\\z", "k=\xc3\xa9\n", "{\"_meta\":{" TPJ ","
	    "\"tracestate\":\"a=x\\\"y\\\\z\",\"baggage\":\"k=\\u00E9\\n\"}}",
	    "{\"_meta\":{" TPJ ",\"tracestate\":\"a=x\\\"y\\\\z\","
	    "\"baggage\":\"k=\\u00e9\\n\"}}");
}

static void
test_text_meta(void **state)
{
	(void)state;
	/* other _meta members kept as they were, after the trace */
	text_is("{\"name\":\"t\",\"_meta\":{\"progressToken\":5,"
	    "\"x.y/z\":{ \"a\" : [1, 2] }},\"arguments\":{}}", "s=1", "b=2",
	    "{\"name\":\"t\",\"_meta\":{" TPJ ",\"tracestate\":\"s=1\","
	    "\"baggage\":\"b=2\",\"progressToken\":5,"
	    "\"x.y/z\":{ \"a\" : [1, 2] }},\"arguments\":{}}",
	    "{\"name\":\"t\",\"_meta\":{" TPJ ",\"tracestate\":\"s=1\","
	    "\"baggage\":\"b=2\",\"progressToken\":5,"
	    "\"x.y/z\":{\"a\":[1,2]}},\"arguments\":{}}");
	/* the client's trace members replaced, or dropped when NULL */
	text_is("{ \"_meta\" : { \"baggage\":\"old=1\", \"traceparent\" : \""
	    TP2 "\", \"k\":1, \"tracestate\":\"old=2\" } , \"a\":1 }",
	    NULL, NULL,
	    "{ \"_meta\" : {" TPJ ",\"k\":1} , \"a\":1 }",
	    "{\"_meta\":{" TPJ ",\"k\":1},\"a\":1}");
	text_is("{\"_meta\":{\"baggage\":\"old=1\",\"traceparent\":\"" TP2
	    "\",\"tracestate\":\"old=2\"}}", "new=2", "new=1",
	    "{\"_meta\":{" TPJ ",\"tracestate\":\"new=2\","
	    "\"baggage\":\"new=1\"}}",
	    "{\"_meta\":{" TPJ ",\"tracestate\":\"new=2\","
	    "\"baggage\":\"new=1\"}}");
	/* an empty _meta, and one that is no object */
	text_is("{\"_meta\":{},\"a\":{}}", NULL, NULL,
	    "{\"_meta\":{" TPJ "},\"a\":{}}", "{\"_meta\":{" TPJ "},\"a\":{}}");
	text_is("{\"a\":1,\"_meta\":null}", NULL, NULL,
	    "{\"a\":1,\"_meta\":{" TPJ "}}", "{\"a\":1,\"_meta\":{" TPJ "}}");
	text_is("{\"_meta\":[\"traceparent\"]}", NULL, NULL,
	    "{\"_meta\":{" TPJ "}}", "{\"_meta\":{" TPJ "}}");
	/* a deeper _meta beside params' own stays */
	text_is("{\"_meta\":{\"a\":{\"_meta\":{\"traceparent\":\"x\"}}},"
	    "\"b\":{\"_meta\":{}}}", NULL, NULL,
	    "{\"_meta\":{" TPJ ",\"a\":{\"_meta\":{\"traceparent\":\"x\"}}},"
	    "\"b\":{\"_meta\":{}}}",
	    "{\"_meta\":{" TPJ ",\"a\":{\"_meta\":{\"traceparent\":\"x\"}}},"
	    "\"b\":{\"_meta\":{}}}");
	/* an escaped string value in _meta is text like any other */
	text_is("{\"_meta\":{\"v\":\"\\u0000\\\"\"}}", NULL, NULL,
	    "{\"_meta\":{" TPJ ",\"v\":\"\\u0000\\\"\"}}",
	    "{\"_meta\":{" TPJ ",\"v\":\"\\u0000\\\"\"}}");
}

static void
test_text_tree(void **state)
{
	json_t	*want, *meta;
	char	 buf[4096], *w;
	size_t	 n;

	(void)state;
	/* escaped keys: "_meta" and "traceparent" once decoded */
	text_is("{\"\\u005fmeta\":{\"traceparent\":\"old\",\"k\":1},\"a\":2}",
	    NULL, NULL, NULL, "{\"_meta\":{" TPJ ",\"k\":1},\"a\":2}");
	text_is("{\"_meta\":{\"trace\\u0070arent\":\"old\",\"k\":1,"
	    "\"bag\\u0067age\":\"x\"}}", "a=1", NULL, NULL,
	    "{\"_meta\":{" TPJ ",\"tracestate\":\"a=1\",\"k\":1}}");
	text_is("{\"\\u0061\":1}", NULL, NULL, NULL,
	    "{\"_meta\":{" TPJ "},\"a\":1}");

	/* more params members than the text path holds */
	buf[0] = '{';
	n = members(buf, sizeof(buf), 1, 40);
	(void)snprintf(buf + n, sizeof(buf) - n, "\"z\":0}");
	want = jparse(buf);
	assert_int_equal(json_object_set_new(want, "_meta",
	    jparse("{" TPJ "}")), 0);
	w = json_dumps(want, JSON_COMPACT);
	text_is(buf, NULL, NULL, NULL, w);
	free(w);
	json_decref(want);

	/* and more _meta members: the last one's trace key goes too */
	n = (size_t)snprintf(buf, sizeof(buf), "{\"_meta\":{");
	n = members(buf, sizeof(buf), n, 40);
	(void)snprintf(buf + n, sizeof(buf) - n, "\"baggage\":\"x\"}}");
	want = jparse(buf);
	meta = json_object_get(want, "_meta");
	assert_int_equal(json_object_del(meta, "baggage"), 0);
	assert_int_equal(json_object_set_new(meta, "traceparent",
	    json_string(TP)), 0);
	w = json_dumps(want, JSON_COMPACT);
	text_is(buf, NULL, NULL, NULL, w);
	free(w);
	json_decref(want);
}

static void
test_text_refused(void **state)
{
	static const char *const bad[] = {
		"[]", "1", "\"x\"", "null", "{", "{\"a\":}", "{}}", "x",
		/* two _meta: jansson refuses it as a request */
		"{\"_meta\":{},\"_meta\":{}}",
		"{\"_meta\":{},\"\\u005fmeta\":{}}",
	};
	size_t	 i, len;
	char	*out;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		out = proto_params_trace_text(bad[i], strlen(bad[i]), TP,
		    NULL, NULL, &len);
		if (out != NULL)
			fail_msg("%s gave %s", bad[i], out);
	}
	/* no traceparent; a value that is not UTF-8 */
	assert_null(proto_params_trace_text("{}", 2, NULL, NULL, NULL, &len));
	assert_null(proto_params_trace_text("{}", 2, TP, NULL, "k=\xff",
	    &len));
	assert_null(proto_params_trace_text("{\"_meta\":{}}", 12, TP,
	    "a=\xc0\x80", NULL, &len));
	assert_null(proto_params_trace_text(NULL, 0, TP, NULL, "\xe9",
	    &len));
	/* the same, on the jansson route */
	assert_null(proto_params_trace_text("{\"\\u0061\":1}", 12, TP, NULL,
	    "\xe9", &len));
}

static void
test_tree(void **state)
{
	json_t	*p, *old, *want;

	(void)state;
	p = jparse("{\"name\":\"x\"}");
	assert_int_equal(proto_params_trace(p, TP, "a=1", "b=2"), 0);
	want = jparse("{\"name\":\"x\",\"_meta\":{" TPJ ",\"tracestate\":"
	    "\"a=1\",\"baggage\":\"b=2\"}}");
	assert_true(json_equal(p, want));
	json_decref(want);
	json_decref(p);

	/* replaced, dropped, kept; the old _meta object not changed */
	p = jparse("{\"_meta\":{\"traceparent\":\"" TP2 "\",\"tracestate\":"
	    "\"o=1\",\"baggage\":\"o=2\",\"progressToken\":1}}");
	old = json_incref(json_object_get(p, "_meta"));
	assert_int_equal(proto_params_trace(p, TP, NULL, NULL), 0);
	want = jparse("{\"_meta\":{" TPJ ",\"progressToken\":1}}");
	assert_true(json_equal(p, want));
	json_decref(want);
	want = jparse("{\"traceparent\":\"" TP2 "\",\"tracestate\":"
	    "\"o=1\",\"baggage\":\"o=2\",\"progressToken\":1}");
	assert_true(json_equal(old, want));
	json_decref(want);
	json_decref(old);
	json_decref(p);

	/* a _meta that is no object is replaced */
	p = jparse("{\"_meta\":7}");
	assert_int_equal(proto_params_trace(p, TP, NULL, NULL), 0);
	want = jparse("{\"_meta\":{" TPJ "}}");
	assert_true(json_equal(p, want));
	json_decref(want);
	json_decref(p);

	/* no object, no traceparent, no UTF-8 */
	p = jparse("[]");
	assert_int_equal(proto_params_trace(p, TP, NULL, NULL), -1);
	json_decref(p);
	assert_int_equal(proto_params_trace(NULL, TP, NULL, NULL), -1);
	p = jparse("{}");
	assert_int_equal(proto_params_trace(p, NULL, NULL, NULL), -1);
	assert_int_equal(proto_params_trace(p, TP, "\xff", NULL), -1);
	assert_int_equal(proto_params_trace(p, TP, NULL, "\xff"), -1);
	/* a failure leaves params as it was */
	assert_int_equal(json_object_size(p), 0);
	json_decref(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_limits),
		cmocka_unit_test(test_text_no_meta),
		cmocka_unit_test(test_text_meta),
		cmocka_unit_test(test_text_tree),
		cmocka_unit_test(test_text_refused),
		cmocka_unit_test(test_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
