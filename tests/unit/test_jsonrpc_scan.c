/*
 * jsonrpc_scan(): the fast path's look at a request.  What it accepts,
 * jsonrpc_parse() must accept as the same message; everything it is not
 * sure of (and everything jsonrpc_parse() refuses) it must leave to
 * jsonrpc_parse() by answering 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"

#define BENCH "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," \
	"\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":" \
	"\"vmcpd-bench-7f3a\"}}}"

static int
span_eq(const char *s, size_t len, const char *want)
{
	if (s == NULL || want == NULL)
		return s == NULL && want == NULL;
	return strlen(want) == len && memcmp(s, want, len) == 0;
}

/*
 * The scan accepts body, finds these (id NULL: a notification; params
 * and name NULL: absent), and jsonrpc_parse() agrees.
 */
static void
expect_scan(const char *body, int idkind, const char *id, const char *method,
    const char *params, const char *name)
{
	struct jsonrpc_scan	 s;
	struct jsonrpc_msg	 m;
	json_t			*p;

	if (jsonrpc_scan(body, strlen(body), &s) != 1)
		fail_msg("not accepted: %s", body);
	assert_int_equal(s.js_idkind, idkind);
	if (!span_eq(s.js_id, s.js_idlen, id) ||
	    !span_eq(s.js_method, s.js_methodlen, method) ||
	    !span_eq(s.js_params, s.js_paramslen, params) ||
	    !span_eq(s.js_name, s.js_namelen, name))
		fail_msg("wrong spans for %s", body);

	assert_int_equal(jsonrpc_parse(body, strlen(body), &m, NULL), 0);
	assert_int_equal(m.jm_kind, id == NULL ? JSONRPC_NOTIFICATION :
	    JSONRPC_REQUEST);
	assert_string_equal(m.jm_method, method);
	if (idkind == JSONRPC_SCAN_ID_INT)
		assert_int_equal(json_integer_value(m.jm_id),
		    strtoll(id, NULL, 10));
	else if (idkind == JSONRPC_SCAN_ID_STRING)
		assert_string_equal(json_string_value(m.jm_id), id);
	if (params != NULL) {
		p = json_loads(params, JSON_REJECT_DUPLICATES |
		    JSON_ALLOW_NUL, NULL);
		assert_true(json_equal(p, m.jm_params));
		json_decref(p);
	} else
		assert_null(m.jm_params);
	jsonrpc_msg_clear(&m);
}

/* the scan is not sure, and says so with a zeroed result */
static void
expect_fallback_len(const char *body, size_t len)
{
	static const struct jsonrpc_scan zero;
	struct jsonrpc_scan s;

	memset(&s, 0xa5, sizeof(s));
	if (jsonrpc_scan(body, len, &s) != 0)
		fail_msg("accepted: %.*s", (int)len, body);
	assert_memory_equal(&s, &zero, sizeof(s));
}

static void
expect_fallback(const char *body)
{
	expect_fallback_len(body, strlen(body));
}

#define NCASES(a)	(sizeof(a) / sizeof((a)[0]))

static void
expect_fallbacks(const char *const *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		expect_fallback(cases[i]);
}

/* head, then n members "k0":0,"k1":0,..., then tail */
static const char *
many_members(char *buf, size_t size, const char *head, size_t n,
    const char *tail)
{
	size_t	i, len;

	len = (size_t)snprintf(buf, size, "%s", head);
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s\"k%zu\":0",
		    i > 0 ? "," : "", i);
	if (len < size)
		(void)snprintf(buf + len, size - len, "%s", tail);
	return buf;
}

static void
test_bench(void **state)
{
	(void)state;
	expect_scan(BENCH, JSONRPC_SCAN_ID_INT, "1", "tools/call",
	    "{\"name\":\"echo\",\"arguments\":{\"message\":"
	    "\"vmcpd-bench-7f3a\"}}", "echo");
}

static void
test_ids(void **state)
{
	(void)state;
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":\"abc-1\","
	    "\"method\":\"ping\"}",
	    JSONRPC_SCAN_ID_STRING, "abc-1", "ping", NULL, NULL);
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}",
	    JSONRPC_SCAN_ID_STRING, "", "ping", NULL, NULL);
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":\"caf\xc3\xa9\","
	    "\"method\":\"ping\"}", JSONRPC_SCAN_ID_STRING, "caf\xc3\xa9",
	    "ping", NULL, NULL);
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}",
	    JSONRPC_SCAN_ID_INT, "0", "ping", NULL, NULL);
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":-42,\"method\":\"ping\"}",
	    JSONRPC_SCAN_ID_INT, "-42", "ping", NULL, NULL);
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,"
	    "\"method\":\"ping\"}", JSONRPC_SCAN_ID_INT,
	    "9223372036854775807", "ping", NULL, NULL);
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,"
	    "\"method\":\"ping\"}", JSONRPC_SCAN_ID_INT,
	    "-9223372036854775808", "ping", NULL, NULL);
	/* a notification, with and without params */
	expect_scan("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}", JSONRPC_SCAN_ID_NONE, NULL,
	    "notifications/initialized", NULL, NULL);
	expect_scan("{\"method\":\"notifications/cancelled\",\"params\":"
	    "{\"requestId\":7},\"jsonrpc\":\"2.0\"}", JSONRPC_SCAN_ID_NONE,
	    NULL, "notifications/cancelled", "{\"requestId\":7}", NULL);

	/* ids jsonrpc_parse() refuses, or that are not plain */
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\","
	    "\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":\"\\u0041\","
	    "\"method\":\"a\"}");
	/* jansson takes -0 as 0 and would write "0" back */
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775808,"
	    "\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775809,"
	    "\"method\":\"a\"}");
	expect_fallback("{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,"
	    "\"method\":\"a\"}");
}

static void
test_whitespace(void **state)
{
	(void)state;
	expect_scan(" \t\r\n{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\"\r: 7 , "
	    "\"method\" : \"tools/call\" , \"params\" : { \"name\" : "
	    "\"echo\" , \"arguments\" : { } } , \"x\" : [ 1 , { } ] } \n",
	    JSONRPC_SCAN_ID_INT, "7", "tools/call",
	    "{ \"name\" : \"echo\" , \"arguments\" : { } }", "echo");
	/* unknown members are allowed, in any order, and params may
	 * lack a name or have one in any position */
	expect_scan("{\"params\":{\"arguments\":{\"name\":1},\"name\":\"x\"},"
	    "\"_x\":{\"jsonrpc\":1},\"method\":\"m\",\"id\":\"1\","
	    "\"jsonrpc\":\"2.0\"}", JSONRPC_SCAN_ID_STRING, "1", "m",
	    "{\"arguments\":{\"name\":1},\"name\":\"x\"}", "x");
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	    "\"params\":{}}", JSONRPC_SCAN_ID_INT, "1", "tools/list", "{}",
	    NULL);
	/* escapes in values other than method, id and name are fine */
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"m\":"
	    "\"a\\n\\u00e9\\ud83d\\ude00\\/\",\"n\":[-0.5e-3,1E+2,0]}}}",
	    JSONRPC_SCAN_ID_INT, "1", "tools/call",
	    "{\"name\":\"echo\",\"arguments\":{\"m\":"
	    "\"a\\n\\u00e9\\ud83d\\ude00\\/\",\"n\":[-0.5e-3,1E+2,0]}}",
	    "echo");
	/* "\u0000" is valid JSON: an argument holding it takes the fast
	 * path and goes on as the client's text */
	expect_scan("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"m\":"
	    "\"a\\u0000b\"}}}", JSONRPC_SCAN_ID_INT, "1", "tools/call",
	    "{\"name\":\"echo\",\"arguments\":{\"m\":\"a\\u0000b\"}}",
	    "echo");
}

#define NUL_IN_STRING	"{\"jsonrpc\":\"2.0\",\"method\":\"a\0\"}"
#define NUL_AFTER	"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\0"

/* params._meta, on which the era turns, is found as text */
static void
test_meta(void **state)
{
	const char		*b;
	struct jsonrpc_scan	 s;

	(void)state;
	b = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"_meta\":"
	    "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
	assert_int_equal(jsonrpc_scan(b, strlen(b), &s), 1);
	assert_true(span_eq(s.js_meta, s.js_metalen,
	    "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}"));
	assert_int_equal(jsonrpc_scan(BENCH, strlen(BENCH), &s), 1);
	assert_null(s.js_meta);
	/* not an object: still reported, jsonrpc_parse() accepts it too */
	b = "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"_meta\":7}}";
	assert_int_equal(jsonrpc_scan(b, strlen(b), &s), 1);
	assert_true(span_eq(s.js_meta, s.js_metalen, "7"));
	/* _meta deeper down is not params._meta */
	b = "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":"
	    "{\"_meta\":{}}},\"_meta\":{}}";
	assert_int_equal(jsonrpc_scan(b, strlen(b), &s), 1);
	assert_null(s.js_meta);
}

/* params.task (2025-11-25's experimental tasks) is flagged, deeper
 * ones are not: the front's hot path declines the first */
static void
test_task(void **state)
{
	const char		*b;
	struct jsonrpc_scan	 s;

	(void)state;
	b = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"task\":{\"ttl\":1000}}}";
	assert_int_equal(jsonrpc_scan(b, strlen(b), &s), 1);
	assert_int_equal(s.js_task, 1);
	b = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"task\":1}}}";
	assert_int_equal(jsonrpc_scan(b, strlen(b), &s), 1);
	assert_int_equal(s.js_task, 0);
	assert_int_equal(jsonrpc_scan(BENCH, strlen(BENCH), &s), 1);
	assert_int_equal(s.js_task, 0);
}

/* not JSON as jansson sees it */
static void
test_not_json(void **state)
{
	static const char *const cases[] = {
		"", " ", "{", "}", "{\"jsonrpc\":\"2.0\",\"method\":\"a\"",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\"} x",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}{}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",}",
		"{\"jsonrpc\":\"2.0\" \"method\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":01}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":1.}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":-}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":+1}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":tru}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"x\":NaN}}",
		/* control characters, bad escapes, bad UTF-8 */
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\t\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\\x\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\\ud800\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\\udc00\\ud800\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\\ud800\\u0041\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\xc0\xaf\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\xed\xa0\x80\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":\"\xff\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\xe2\x82\"}",
		"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"a\"}",
		/* \u0000 in a method jsonrpc_parse() refuses */
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\\u0000\"}",
		/* integers and reals jansson overflows on */
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":9223372036854775808}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":[-9223372036854775809]}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":1e400}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
		    "{\"x\":-1.5E+309}}",
	};
	(void)state;
	expect_fallbacks(cases, NCASES(cases));
	/* a NUL byte in the buffer */
	expect_fallback_len(NUL_IN_STRING, sizeof(NUL_IN_STRING) - 1);
	expect_fallback_len(NUL_AFTER, sizeof(NUL_AFTER) - 1);
	expect_fallback_len(NULL, 0);
}

static void
test_depth(void **state)
{
	char	buf[8192];
	size_t	i, n;

	(void)state;
	n = (size_t)snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"a\",\"params\":{\"x\":");
	for (i = 0; i < 600; i++)
		buf[n++] = '[';
	for (i = 0; i < 600; i++)
		buf[n++] = ']';
	buf[n++] = '}';
	buf[n++] = '}';
	/* jansson takes this (its limit is 2048); ours is lower */
	expect_fallback_len(buf, n);
}

/* duplicate keys at any depth, and keys that could hide one */
static void
test_duplicates(void **state)
{
	static const char *const cases[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"method\":\"b\"}",
		"{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"method\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{},"
		    "\"params\":{}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"x\":1,\"x\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"echo\",\"name\":\"rm\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"echo\",\"arguments\":"
		    "{\"m\":1,\"m\":2}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"echo\",\"arguments\":"
		    "{\"a\":[{\"b\":{\"c\":[{\"d\":1,\"e\":2,\"d\":3}]}}]}}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"x\":{\"\":1,\"\":2}}",
		/* the same key after a sibling object closed is caught too */
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"x\":{\"k\":{\"k\":1},"
		    "\"k\":2}}",
		/* escaped keys: maybe equal to another once decoded */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"n\\u0061me\":\"rm\",\"name\":\"echo\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"meth\\u006fd\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{\"args\":"
		    "{\"a\\nb\":1}}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"x\":[{\"\\\"\":1}]}",
	};
	char buf[4096];

	(void)state;
	expect_fallbacks(cases, NCASES(cases));
	/* the same keys in sibling objects are no duplicates */
	expect_scan("{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":"
	    "{\"x\":{\"k\":1},\"y\":{\"k\":1},\"k\":[{\"k\":1},{\"k\":2}]}}",
	    JSONRPC_SCAN_ID_NONE, NULL, "a", "{\"x\":{\"k\":1},\"y\":{\"k\":1},"
	    "\"k\":[{\"k\":1},{\"k\":2}]}", NULL);

	/* more keys than checked cheaply: jansson would take it */
	expect_fallback(many_members(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"a\",\"params\":{\"arguments\":{", 70, "}}}"));
}

/* the envelope rules of jsonrpc_parse(), and what the scan leaves to it */
static void
test_envelope(void **state)
{
	static const char *const cases[] = {
		/* not an object: a batch, scalars */
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "[]",
		"1", "\"x\"", "null", "true",
		/* jsonrpc */
		"{\"id\":1,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
		"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0 \",\"id\":1,\"method\":\"ping\"}",
		"{\"jsonrpc\":null,\"id\":1,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2\\u002e0\",\"id\":1,\"method\":\"ping\"}",
		/* method */
		"{\"jsonrpc\":\"2.0\",\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"ping\"]}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools\\/call\"}",
		/* params */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":[]}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
		    "\"params\":\"\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
		    "\"params\":null}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":1}",
		/* params.name that is not a plain string */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":1}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":null}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":{\"x\":1}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"ec\\u0068o\"}}",
		/* responses, and requests that claim to be one */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,"
		    "\"message\":\"x\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
		    "\"error\":null}",
	};
	char buf[4096];

	(void)state;
	expect_fallbacks(cases, NCASES(cases));
	/* more top-level members, or params members, than the scan keeps */
	expect_fallback(many_members(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"a\",", 15, "}"));
	expect_fallback(many_members(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"a\",\"params\":{", 17, "}}"));
	/* up to the limits it is sure */
	expect_scan(many_members(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"a\",", 14, "}"), JSONRPC_SCAN_ID_NONE, NULL, "a",
	    NULL, NULL);
}

/*
 * proto_modern_scan_call(): the Modern hot path.  Whatever it is sure
 * of, jsonrpc_parse(), proto_classify() and jsonrpc_params_check()
 * accept as the same 2026-07-28 tools/call; whatever any of them
 * refuses, it is not sure of.
 */
#define MMETA "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" \
	"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define MCALL(meta, rest) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":" \
	"\"tools/call\",\"params\":{" meta ",\"name\":\"echo\"" rest "}}"
#define MBENCH MCALL(MMETA, ",\"arguments\":{\"message\":\"m\"}")
/* a _meta with these members besides the claim */
#define MWITH(members) "\"_meta\":{\"io.modelcontextprotocol/" \
	"protocolVersion\":\"2026-07-28\"," members "}"
#define MCAPS "\"io.modelcontextprotocol/clientCapabilities\":{}"

/* -1 if the full path refuses body with these headers, else the era */
static int
mfull(const char *body, const struct proto_reqhdrs *h)
{
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 err;
	struct proto_verdict	 v;
	int			 rc;

	if (jsonrpc_parse(body, strlen(body), &m, &err) == -1)
		return -1;
	rc = proto_classify(&m, h, &v) == -1 ? -1 : (int)v.pv_era;
	proto_verdict_clear(&v);
	if (rc != -1 && m.jm_kind == JSONRPC_REQUEST &&
	    jsonrpc_params_check(&m, &err) == -1)
		rc = -1;
	jsonrpc_msg_clear(&m);
	return rc;
}

static void
mexpect(const char *body, const char *pv, const char *method,
    const char *name, int sure, int full)
{
	static const struct proto_mcall zero;
	struct proto_reqhdrs	 h = { pv, method, name, NULL, NULL, NULL };
	struct proto_mcall	 mc;
	int			 got;

	memset(&mc, 0xa5, sizeof(mc));
	got = proto_modern_scan_call(body, strlen(body), &h, &mc);
	if (got != sure)
		fail_msg("%s: %s (pv %s, method %s, name %s)", sure ? "not "
		    "sure" : "sure", body, pv, method, name);
	if (!sure)
		assert_memory_equal(&mc, &zero, sizeof(mc));
	else if (!span_eq(mc.mc_scan.js_name, mc.mc_scan.js_namelen,
	    "echo") || !span_eq(mc.mc_caps, mc.mc_capslen, "{}"))
		fail_msg("wrong spans for %s", body);
	if (mfull(body, &h) != full)
		fail_msg("the full path %s %s", full == -1 ? "accepts" :
		    "refuses", body);
}

/* sure, and the full path takes it as Modern */
static void
msure(const char *body, const char *pv, const char *method,
    const char *name)
{
	mexpect(body, pv, method, name, 1, PROTO_ERA_MODERN);
}

/* not sure: the full path refuses it */
static void
mrefused(const char *body, const char *pv, const char *method,
    const char *name)
{
	mexpect(body, pv, method, name, 0, -1);
}

/* not sure, though the full path takes it (as era) */
static void
munsure(const char *body, const char *pv, const char *method,
    const char *name, int era)
{
	mexpect(body, pv, method, name, 0, era);
}

static void
test_modern_sure(void **state)
{
	(void)state;
	msure(MBENCH, "2026-07-28", "tools/call", "echo");
	/* headers are read without their OWS; Mcp-Name may be encoded */
	msure(MBENCH, " 2026-07-28\t", "\ttools/call ", " echo ");
	msure(MBENCH, "2026-07-28", "tools/call", "=?base64?ZWNobw==?=");
	msure("{\"id\":\"r-1\",\"params\":{\"name\":\"echo\"," MMETA "},"
	    "\"method\":\"tools/call\",\"jsonrpc\":\"2.0\",\"x\":1}",
	    "2026-07-28", "tools/call", "echo");
	msure(MCALL(MWITH(MCAPS ",\"io.modelcontextprotocol/clientInfo\":"
	    "{\"name\":\"c\",\"version\":\"1\",\"title\":\"T\"},"
	    "\"progressToken\":\"p\",\"traceparent\":\"00-ab\""), ""),
	    "2026-07-28", "tools/call", "echo");
	msure(MCALL(MWITH(MCAPS ",\"progressToken\":-7"), ",\"task\":{}"),
	    "2026-07-28", "tools/call", "echo");
}

static void
test_modern_refused(void **state)
{
	(void)state;
	/* the headers: missing, different, malformed */
	mrefused(MBENCH, NULL, "tools/call", "echo");
	mrefused(MBENCH, "2025-11-25", "tools/call", "echo");
	mrefused(MBENCH, "2026-07-28x", "tools/call", "echo");
	mrefused(MBENCH, "2026-07-28", NULL, "echo");
	mrefused(MBENCH, "2026-07-28", "tools/list", "echo");
	mrefused(MBENCH, "2026-07-28", "Tools/call", "echo");
	mrefused(MBENCH, "2026-07-28", "tools/call", NULL);
	mrefused(MBENCH, "2026-07-28", "tools/call", "ECHO");
	mrefused(MBENCH, "2026-07-28", "tools/call", "ech\xc3\xb6");
	mrefused(MBENCH, "2026-07-28", "tools/call", "=?base64?!!?=");
	mrefused(MBENCH, "2026-07-28", "tools/call", "=?base64?ZWNobw?=");
	/* the envelope */
	mrefused(MCALL("\"_meta\":{\"io.modelcontextprotocol/protocolVersion\""
	    ":\"2026-07-28\"}", ""), "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH("\"io.modelcontextprotocol/clientCapabilities\":"
	    "[]"), ""), "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH("\"io.modelcontextprotocol/clientCapabilities\":"
	    "null"), ""), "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH(MCAPS ",\"io.modelcontextprotocol/clientInfo\":"
	    "\"c\""), ""), "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH(MCAPS ",\"io.modelcontextprotocol/clientInfo\":"
	    "{\"name\":\"c\"}"), ""), "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH(MCAPS ",\"io.modelcontextprotocol/clientInfo\":"
	    "{\"name\":1,\"version\":\"1\"}"), ""), "2026-07-28", "tools/call",
	    "echo");
	mrefused(MCALL("\"_meta\":{\"io.modelcontextprotocol/protocolVersion\""
	    ":1," MCAPS "}", ""), "2026-07-28", "tools/call", "echo");
	/* a version other than 2026-07-28, the headers agreeing */
	mrefused(MCALL("\"_meta\":{\"io.modelcontextprotocol/protocolVersion\""
	    ":\"2026-07-29\"," MCAPS "}", ""), "2026-07-29", "tools/call",
	    "echo");
	/* jsonrpc_params_check() */
	mrefused(MCALL(MWITH(MCAPS ",\"progressToken\":1.5"), ""),
	    "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH(MCAPS ",\"progressToken\":null"), ""),
	    "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH(MCAPS ",\"progressToken\":\"a\\u0000\""), ""),
	    "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MWITH(MCAPS ",\"io.modelcontextprotocol/x\":"
	    "\"a\\u0000\""), ""), "2026-07-28", "tools/call", "echo");
	mrefused(MCALL(MMETA, ",\"uri\":\"a\\u0000\""), "2026-07-28",
	    "tools/call", "echo");
	/* the envelope itself */
	mrefused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{" MMETA ",\"name\":\"echo\",\"name\":\"echo\"}}",
	    "2026-07-28", "tools/call", "echo");
	mrefused("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"tools/call\","
	    "\"params\":{" MMETA ",\"name\":\"echo\"}}", "2026-07-28",
	    "tools/call", "echo");
}

static void
test_modern_unsure(void **state)
{
	(void)state;
	/* what the hot path does not carry */
	munsure(MCALL(MWITH(MCAPS ",\"io.modelcontextprotocol/logLevel\":"
	    "\"info\""), ""), "2026-07-28", "tools/call", "echo",
	    PROTO_ERA_MODERN);
	munsure(MCALL(MMETA, ",\"inputResponses\":{}"), "2026-07-28",
	    "tools/call", "echo", PROTO_ERA_MODERN);
	munsure(MCALL(MMETA, ",\"requestState\":\"s\""), "2026-07-28",
	    "tools/call", "echo", PROTO_ERA_MODERN);
	munsure(MCALL(MMETA, ",\"uri\":\"u\""), "2026-07-28", "tools/call",
	    "echo", PROTO_ERA_MODERN);
	munsure(MCALL(MMETA, ",\"ref\":{}"), "2026-07-28", "tools/call",
	    "echo", PROTO_ERA_MODERN);
	/* escapes in _meta, which could hide "\u0000" */
	munsure(MCALL(MWITH(MCAPS ",\"v\":\"a\\nb\""), ""), "2026-07-28",
	    "tools/call", "echo", PROTO_ERA_MODERN);
	munsure(MCALL("\"_meta\":{\"io.modelcontextprotocol/protocolVersion\""
	    ":\"2026\\u002d07-28\"," MCAPS "}", ""), "2026-07-28",
	    "tools/call", "echo", PROTO_ERA_MODERN);
	/* not a tools/call request, or no _meta: not this path */
	munsure("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
	    "{" MMETA ",\"name\":\"echo\"}}", "2026-07-28", "tools/call",
	    "echo", PROTO_ERA_MODERN);
	munsure("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\","
	    "\"params\":{" MMETA ",\"name\":\"echo\"}}", "2026-07-28",
	    "prompts/get", "echo", PROTO_ERA_MODERN);
	munsure(BENCH, NULL, NULL, NULL, PROTO_ERA_LEGACY);
	munsure(BENCH, "2025-11-25", NULL, NULL, PROTO_ERA_LEGACY);
	/* a name with an escape: the scan of the envelope is not sure */
	munsure("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{" MMETA ",\"name\":\"ech\\u006f\"}}", "2026-07-28",
	    "tools/call", "echo", PROTO_ERA_MODERN);
}

/* the params' text under another name, and what is refused */
static void
test_rename(void **state)
{
	static const char	 body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\",\"params\":{\"arguments\":"
	    "{\"name\":\"x\"},\"name\":\"a_echo\",\"z\":[1]}}";
	struct jsonrpc_scan	 sc;
	char			*t;
	size_t			 len = 0;

	(void)state;
	assert_int_equal(jsonrpc_scan(body, sizeof(body) - 1, &sc), 1);
	t = jsonrpc_scan_rename(sc.js_params, sc.js_paramslen, sc.js_name,
	    sc.js_namelen, "echo \u00e9", &len);
	assert_non_null(t);
	assert_string_equal(t, "{\"arguments\":{\"name\":\"x\"},"
	    "\"name\":\"echo \u00e9\",\"z\":[1]}");
	assert_int_equal(len, strlen(t));
	free(t);
	t = jsonrpc_scan_rename(sc.js_params, sc.js_paramslen, sc.js_name,
	    sc.js_namelen, "", &len);
	assert_string_equal(t, "{\"arguments\":{\"name\":\"x\"},"
	    "\"name\":\"\",\"z\":[1]}");
	free(t);
	/* what would need escaping */
	assert_null(jsonrpc_scan_rename(sc.js_params, sc.js_paramslen,
	    sc.js_name, sc.js_namelen, "a\"b", &len));
	assert_null(jsonrpc_scan_rename(sc.js_params, sc.js_paramslen,
	    sc.js_name, sc.js_namelen, "a\\b", &len));
	assert_null(jsonrpc_scan_rename(sc.js_params, sc.js_paramslen,
	    sc.js_name, sc.js_namelen, "a\nb", &len));
	/* a span that is not a quoted string inside the params */
	assert_null(jsonrpc_scan_rename(sc.js_params, sc.js_paramslen,
	    sc.js_params, 3, "x", &len));
	assert_null(jsonrpc_scan_rename(sc.js_params, sc.js_paramslen,
	    sc.js_name + 1, sc.js_namelen - 1, "x", &len));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench),
		cmocka_unit_test(test_task),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_whitespace),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_modern_sure),
		cmocka_unit_test(test_modern_refused),
		cmocka_unit_test(test_modern_unsure),
		cmocka_unit_test(test_rename),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
