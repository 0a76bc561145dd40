/*
 * proto/era.c, mheaders.c, cursor.c and meta.c: the MCP 2026-07-28
 * classification table row by row, header values, x-mcp-header rules,
 * Mcp-Param-* checks, cursors and reserved _meta keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"
#include "proto/mheaders.h"
#include "proto/mrequest.h"
#include "proto/probe.h"
#include "proto/cursor.h"
#include "proto/meta.h"
#include "proto/jsonspan.h"

#define M	"2026-07-28"
#define L	"2025-11-25"
#define ENV(v)	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\"" \
		":\"" v "\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define REQ(m, p) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" m \
		"\",\"params\":{" p "}}"
#define NOTE(m, p) "{\"jsonrpc\":\"2.0\",\"method\":\"" m "\",\"params\":{" \
		p "}}"
#define INIT_P	"\"protocolVersion\":\"" L "\",\"capabilities\":{}," \
		"\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}"
#define OK	0
#define NO	(-1)
#define LEG	PROTO_ERA_LEGACY
#define MOD	PROTO_ERA_MODERN

/* Mcp-Param-* headers for the callback: pairs, NULL-terminated */
struct params {
	const char *p_kv[16][2];
};

static const char *
param_cb(void *arg, const char *name)
{
	struct params	*p = arg;
	size_t		 i;

	for (i = 0; i < 16 && p->p_kv[i][0] != NULL; i++)
		if (strcasecmp(p->p_kv[i][0], name) == 0)
			return p->p_kv[i][1];
	return NULL;
}

static struct jsonrpc_msg
parse(const char *json)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	if (jsonrpc_parse(json, strlen(json), &m, &e) == -1)
		fail_msg("test body does not parse: %s: %s", json, e.je_msg);
	return m;
}

/* ------------------------------------------------------------------ */
/* classification */

struct row {
	const char	*r_what;
	const char	*r_json;
	const char	*r_pv;		/* MCP-Protocol-Version */
	const char	*r_method;	/* Mcp-Method */
	const char	*r_name;	/* Mcp-Name */
	const char	*r_session;	/* Mcp-Session-Id */
	int		 r_rc;
	enum proto_era	 r_era;
	int		 r_http;
	int		 r_code;
};

static const struct row rows[] = {
	/* 1.2 step 3: a posted response is Legacy */
	{ "response", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	    NULL, NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "response with Modern headers",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	    M, "x", NULL, NULL, OK, LEG, 0, 0 },
	{ "error response",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,"
	    "\"message\":\"m\"}}", M, NULL, NULL, NULL, OK, LEG, 0, 0 },

	/* step 4: initialize */
	{ "initialize, no header", REQ("initialize", INIT_P),
	    NULL, NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "initialize, Legacy header", REQ("initialize", INIT_P),
	    L, "initialize", NULL, NULL, OK, LEG, 0, 0 },
	{ "initialize, Modern header, no claim", REQ("initialize", INIT_P),
	    M, NULL, NULL, NULL, NO, MOD, 400, -32020 },
	{ "initialize, later Modern header, no claim",
	    REQ("initialize", INIT_P), " 2030-01-01\t", "initialize", NULL,
	    NULL, NO, MOD, 400, -32020 },
	{ "initialize, Modern claim", REQ("initialize", INIT_P "," ENV(M)),
	    M, "initialize", NULL, NULL, NO, MOD, 404, -32601 },
	{ "initialize, Modern claim, no headers",
	    REQ("initialize", INIT_P "," ENV(M)),
	    NULL, NULL, NULL, NULL, NO, MOD, 400, -32020 },
	{ "initialize, unserved Modern-era claim",
	    REQ("initialize", ENV("v999.0.0")),
	    "v999.0.0", "initialize", NULL, NULL, NO, MOD, 400, -32022 },
	{ "initialize, Legacy claim", REQ("initialize", INIT_P "," ENV(L)),
	    NULL, NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "initialize, malformed Modern claim",
	    REQ("initialize", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\"}"),
	    NULL, NULL, NULL, NULL, OK, LEG, 0, 0 },

	/* step 5: the claim, well-formed */
	{ "discover", REQ("server/discover", ENV(M)),
	    M, "server/discover", NULL, NULL, OK, MOD, 0, 0 },
	{ "discover with clientInfo",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/"
	    "clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}"),
	    M, "server/discover", NULL, NULL, OK, MOD, 0, 0 },
	{ "unknown method is the dispatcher's", REQ("ping", ENV(M)),
	    M, "ping", NULL, NULL, OK, MOD, 0, 0 },
	{ "header values trimmed", REQ("tools/list", ENV(M)),
	    "\t" M " ", "  tools/list\t", NULL, NULL, OK, MOD, 0, 0 },

	/* step 5: the envelope */
	{ "claim without clientCapabilities",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\"}"),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32602 },
	{ "claim not a string",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":20260728,\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}"),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32602 },
	{ "clientCapabilities not an object",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":[]}"),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32602 },
	{ "clientInfo not an Implementation",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{},\"io.modelcontextprotocol/clientInfo\":"
	    "{\"name\":\"c\"}}"),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32602 },
	{ "envelope before headers",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\"}"),
	    NULL, NULL, NULL, NULL, NO, MOD, 400, -32602 },

	/* step 6: a Modern header without a claim */
	{ "Modern header, params {}", REQ("server/discover", ""),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32602 },
	{ "Modern header, no params",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
	    M, "tools/list", NULL, NULL, NO, MOD, 400, -32602 },
	{ "Modern header, _meta without the version",
	    REQ("server/discover", "\"_meta\":{\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}"),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32602 },
	{ "Modern header, _meta not an object",
	    REQ("tools/list", "\"_meta\":[]"),
	    M, "tools/list", NULL, NULL, NO, MOD, 400, -32602 },
	{ "later Modern header, no claim", REQ("tools/list", ""),
	    "2027-01-01", "tools/list", NULL, NULL, NO, MOD, 400, -32602 },
	{ "Modern header and session, no claim", REQ("tools/list", ""),
	    M, "tools/list", NULL, "sid-1", NO, MOD, 400, -32602 },

	/* Streamable HTTP, section Server Validation: headers before the
	 * version */
	{ "header 2026-07-28, claim v999.0.0 is -32020 not -32022",
	    REQ("server/discover", ENV("v999.0.0")),
	    M, "server/discover", NULL, NULL, NO, MOD, 400, -32020 },
	{ "header and claim v999.0.0",
	    REQ("server/discover", ENV("v999.0.0")),
	    "v999.0.0", "server/discover", NULL, NULL, NO, MOD, 400, -32022 },
	{ "Legacy version in the claim",
	    REQ("tools/list", ENV(L)),
	    L, "tools/list", NULL, NULL, NO, MOD, 400, -32022 },
	{ "Legacy claim, no headers: -32020 first",
	    REQ("tools/list", ENV(L)),
	    NULL, NULL, NULL, NULL, NO, MOD, 400, -32020 },
	{ "Legacy header, Modern claim", REQ("tools/list", ENV(M)),
	    "2025-06-18", "tools/list", NULL, NULL, NO, MOD, 400, -32020 },
	{ "MCP-Protocol-Version missing", REQ("tools/list", ENV(M)),
	    NULL, "tools/list", NULL, NULL, NO, MOD, 400, -32020 },
	{ "Mcp-Method missing", REQ("tools/list", ENV(M)),
	    M, NULL, NULL, NULL, NO, MOD, 400, -32020 },
	{ "Mcp-Method mismatched", REQ("tools/list", ENV(M)),
	    M, "prompts/list", NULL, NULL, NO, MOD, 400, -32020 },
	{ "Mcp-Method TOOLS/LIST (values are case-sensitive)",
	    REQ("tools/list", ENV(M)),
	    M, "TOOLS/LIST", NULL, NULL, NO, MOD, 400, -32020 },
	{ "Mcp-Method empty", REQ("tools/list", ENV(M)),
	    M, "", NULL, NULL, NO, MOD, 400, -32020 },
	{ "version header with junk", REQ("tools/list", ENV("2026-07-28")),
	    "2026-07-28 x", "tools/list", NULL, NULL, NO, MOD, 400, -32020 },

	/* Mcp-Name */
	{ "tools/call with Mcp-Name",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "echo", NULL, OK, MOD, 0, 0 },
	{ "tools/call, Mcp-Name with whitespace",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "  echo \t", NULL, OK, MOD, 0, 0 },
	{ "tools/call, Mcp-Name missing",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", NULL, NULL, NO, MOD, 400, -32020 },
	{ "tools/call, Mcp-Name wrong",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "wrong_tool_name", NULL, NO, MOD, 400, -32020 },
	{ "tools/call, Mcp-Name differs in case",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "Echo", NULL, NO, MOD, 400, -32020 },
	{ "tools/call, Mcp-Name base64",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "=?base64?ZWNobw==?=", NULL, OK, MOD, 0, 0 },
	{ "tools/call, Mcp-Name base64 with whitespace",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", " =?base64?ZWNobw==?= ", NULL, OK, MOD, 0, 0 },
	{ "tools/call, Mcp-Name base64 of another name",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "=?base64?ZWNobzI=?=", NULL, NO, MOD, 400,
	    -32020 },
	{ "tools/call, Mcp-Name bad base64 padding",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "=?base64?ZWNobw?=", NULL, NO, MOD, 400, -32020 },
	{ "tools/call, Mcp-Name bad base64 characters",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "=?base64?ZW!!bw==?=", NULL, NO, MOD, 400,
	    -32020 },
	{ "tools/call, non-ASCII name base64",
	    REQ("tools/call", "\"name\":\"h\\u00e9llo\"," ENV(M)),
	    M, "tools/call", "=?base64?aMOpbGxv?=", NULL, OK, MOD, 0, 0 },
	{ "tools/call, non-ASCII name sent raw",
	    REQ("tools/call", "\"name\":\"h\\u00e9llo\"," ENV(M)),
	    M, "tools/call", "h\xc3\xa9llo", NULL, NO, MOD, 400, -32020 },
	{ "tools/call, control character in Mcp-Name",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/call", "ec\x01ho", NULL, NO, MOD, 400, -32020 },
	{ "tools/call without a name is left to the dispatcher",
	    REQ("tools/call", ENV(M)), M, "tools/call", NULL, NULL,
	    OK, MOD, 0, 0 },
	{ "prompts/get", REQ("prompts/get", "\"name\":\"p1\"," ENV(M)),
	    M, "prompts/get", "p1", NULL, OK, MOD, 0, 0 },
	{ "prompts/get, Mcp-Name wrong",
	    REQ("prompts/get", "\"name\":\"p1\"," ENV(M)),
	    M, "prompts/get", "p2", NULL, NO, MOD, 400, -32020 },
	{ "resources/read",
	    REQ("resources/read", "\"uri\":\"test://static-text\"," ENV(M)),
	    M, "resources/read", "test://static-text", NULL, OK, MOD, 0, 0 },
	{ "resources/read, Mcp-Name missing",
	    REQ("resources/read", "\"uri\":\"test://static-text\"," ENV(M)),
	    M, "resources/read", NULL, NULL, NO, MOD, 400, -32020 },
	{ "resources/read, Mcp-Name is the name, not the uri",
	    REQ("resources/read", "\"uri\":\"test://a\",\"name\":\"n\","
	    ENV(M)), M, "resources/read", "n", NULL, NO, MOD, 400, -32020 },
	{ "tasks/get", REQ("tasks/get", "\"taskId\":\"t-1\"," ENV(M)),
	    M, "tasks/get", "t-1", NULL, OK, MOD, 0, 0 },
	{ "tasks/update, Mcp-Name missing",
	    REQ("tasks/update", "\"taskId\":\"t-1\"," ENV(M)),
	    M, "tasks/update", NULL, NULL, NO, MOD, 400, -32020 },
	{ "tasks/cancel, Mcp-Name wrong",
	    REQ("tasks/cancel", "\"taskId\":\"t-1\"," ENV(M)),
	    M, "tasks/cancel", "t-2", NULL, NO, MOD, 400, -32020 },
	{ "tools/list ignores Mcp-Name", REQ("tools/list", ENV(M)),
	    M, "tools/list", "whatever", NULL, OK, MOD, 0, 0 },
	{ "Mcp-Name checked after Mcp-Method",
	    REQ("tools/call", "\"name\":\"echo\"," ENV(M)),
	    M, "tools/list", "echo", NULL, NO, MOD, 400, -32020 },
	{ "Mcp-Name checked before the version",
	    REQ("tools/call", "\"name\":\"echo\"," ENV("v999.0.0")),
	    "v999.0.0", "tools/call", "nope", NULL, NO, MOD, 400, -32020 },

	/* step 7 and 1.3: sessions */
	{ "session, no claim", REQ("tools/list", ""),
	    L, NULL, NULL, "sid-1", OK, LEG, 0, 0 },
	{ "session, no claim, no header", REQ("tools/list", ""),
	    NULL, NULL, NULL, "sid-1", OK, LEG, 0, 0 },
	{ "session and claim: body first", REQ("tools/list", ENV(M)),
	    M, "tools/list", NULL, "sid-1", OK, MOD, 0, 0 },
	{ "no claim, Legacy header", REQ("tools/list", ""),
	    L, NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "no claim, no header", REQ("tools/list", ""),
	    NULL, NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "no claim, unknown old header", REQ("tools/list", ""),
	    "1999-01-01", NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "no claim, progressToken only",
	    REQ("tools/list", "\"_meta\":{\"progressToken\":1}"),
	    NULL, NULL, NULL, NULL, OK, LEG, 0, 0 },

	/* notifications */
	{ "notification, no claim, Modern header",
	    NOTE("notifications/initialized", ""),
	    M, NULL, NULL, NULL, OK, LEG, 0, 0 },
	{ "notification, claim, no headers",
	    NOTE("notifications/cancelled", "\"requestId\":1,"
	    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" M
	    "\"}"), NULL, NULL, NULL, NULL, OK, MOD, 0, 0 },
	{ "notification, claim, matching headers",
	    NOTE("notifications/cancelled", ENV(M)),
	    M, "notifications/cancelled", NULL, NULL, OK, MOD, 0, 0 },
	{ "notification, claim, wrong Mcp-Method",
	    NOTE("notifications/cancelled", ENV(M)),
	    NULL, "notifications/progress", NULL, NULL, NO, MOD, 400,
	    -32020 },
	{ "notification, claim, wrong version header",
	    NOTE("notifications/cancelled", ENV(M)),
	    L, NULL, NULL, NULL, NO, MOD, 400, -32020 },
	{ "notification, unserved claim",
	    NOTE("notifications/cancelled", ENV("v999.0.0")),
	    NULL, NULL, NULL, NULL, NO, MOD, 400, -32022 },
	{ "notification, claim not a string",
	    NOTE("notifications/cancelled", "\"_meta\":{\"io."
	    "modelcontextprotocol/protocolVersion\":null}"),
	    NULL, NULL, NULL, NULL, NO, MOD, 400, -32602 },
};

static void
test_classify_table(void **state)
{
	struct proto_reqhdrs	h;
	struct proto_verdict	v;
	struct jsonrpc_msg	m;
	size_t			i;
	int			rc;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		memset(&h, 0, sizeof(h));
		h.rh_protocol_version = r->r_pv;
		h.rh_method = r->r_method;
		h.rh_name = r->r_name;
		h.rh_session = r->r_session;
		m = parse(r->r_json);
		rc = proto_classify(&m, &h, &v);
		jsonrpc_msg_clear(&m);
		if (rc != r->r_rc || v.pv_era != r->r_era ||
		    v.pv_http != r->r_http || v.pv_code != r->r_code)
			fail_msg("row %zu \"%s\": got rc %d era %d http %d "
			    "code %d (\"%s\"), want rc %d era %d http %d "
			    "code %d", i + 1, r->r_what, rc, (int)v.pv_era,
			    v.pv_http, v.pv_code, v.pv_msg, r->r_rc,
			    (int)r->r_era, r->r_http, r->r_code);
		if (rc == 0 && v.pv_msg[0] != '\0')
			fail_msg("row %zu: message on success", i + 1);
		if (rc == -1 && strlen(v.pv_msg) < 20)
			fail_msg("row %zu: unhelpful message \"%s\"", i + 1,
			    v.pv_msg);
		if ((v.pv_data != NULL) != (v.pv_code == -32022))
			fail_msg("row %zu: data only for -32022", i + 1);
		proto_verdict_clear(&v);
	}
}

/* -32022 data: {supported: ["2026-07-28"], requested: <claim>} */
static void
test_classify_version_data(void **state)
{
	struct proto_reqhdrs	h = { .rh_protocol_version = L,
				    .rh_method = "server/discover" };
	struct proto_verdict	v;
	struct jsonrpc_msg	m;
	json_t			*sup;

	(void)state;
	m = parse(REQ("server/discover", ENV(L)));
	assert_int_equal(proto_classify(&m, &h, &v), -1);
	jsonrpc_msg_clear(&m);
	assert_int_equal(v.pv_code, MCP_ERR_UNSUPPORTED_VERSION);
	assert_int_equal(v.pv_http, 400);
	assert_non_null(v.pv_data);
	sup = json_object_get(v.pv_data, "supported");
	assert_int_equal(json_array_size(sup), 1);
	assert_string_equal(json_string_value(json_array_get(sup, 0)), M);
	assert_string_equal(json_string_value(json_object_get(v.pv_data,
	    "requested")), L);
	assert_int_equal(json_object_size(v.pv_data), 2);
	assert_non_null(strstr(v.pv_msg, L));
	proto_verdict_clear(&v);
	assert_null(v.pv_data);
	assert_int_equal(v.pv_http, 0);
	proto_verdict_clear(NULL);
}

/* the message says which header is wrong; a peer's bytes stay ASCII */
static void
test_classify_messages(void **state)
{
	struct proto_reqhdrs	h = { .rh_protocol_version = M,
				    .rh_method = "tools/call" };
	struct proto_verdict	v;
	struct jsonrpc_msg	m;
	char			junk[600];
	size_t			i;

	(void)state;
	m = parse(REQ("tools/call", "\"name\":\"echo\"," ENV(M)));
	assert_int_equal(proto_classify(&m, &h, &v), -1);
	assert_non_null(strstr(v.pv_msg, "Mcp-Name"));
	assert_non_null(strstr(v.pv_msg, "missing"));
	assert_non_null(strstr(v.pv_msg, "echo"));
	proto_verdict_clear(&v);

	h.rh_method = "TOOLS/CALL";
	assert_int_equal(proto_classify(&m, &h, &v), -1);
	assert_non_null(strstr(v.pv_msg, "Mcp-Method"));
	assert_non_null(strstr(v.pv_msg, "TOOLS/CALL"));
	proto_verdict_clear(&v);

	/* a long header full of bytes that are not printable ASCII */
	memset(junk, 0, sizeof(junk));
	for (i = 0; i + 1 < sizeof(junk); i++)
		junk[i] = (char)(0x80 + i % 0x7f);
	h.rh_method = "tools/call";
	h.rh_protocol_version = junk;
	assert_int_equal(proto_classify(&m, &h, &v), -1);
	assert_int_equal(v.pv_code, MCP_ERR_HEADER_MISMATCH);
	assert_true(strlen(v.pv_msg) < sizeof(v.pv_msg));
	for (i = 0; v.pv_msg[i] != '\0'; i++)
		assert_true(v.pv_msg[i] >= 0x20 && v.pv_msg[i] < 0x7f);
	assert_non_null(strstr(v.pv_msg, "..."));
	proto_verdict_clear(&v);
	jsonrpc_msg_clear(&m);

	/* no headers at all (NULL) and no message */
	m = parse(REQ("tools/list", ENV(M)));
	assert_int_equal(proto_classify(&m, NULL, &v), -1);
	assert_int_equal(v.pv_code, MCP_ERR_HEADER_MISMATCH);
	assert_non_null(strstr(v.pv_msg, "MCP-Protocol-Version"));
	proto_verdict_clear(&v);
	jsonrpc_msg_clear(&m);
	m = parse(REQ("tools/list", ""));
	assert_int_equal(proto_classify(&m, NULL, &v), 0);
	assert_int_equal(v.pv_era, PROTO_ERA_LEGACY);
	jsonrpc_msg_clear(&m);
	assert_int_equal(proto_classify(NULL, NULL, &v), -1);
	assert_int_equal(v.pv_code, JSONRPC_INVALID_REQUEST);
	proto_verdict_clear(&v);
}

/* ------------------------------------------------------------------ */
/* header values */

static void
expect_decode(const char *raw, const char *want)
{
	char *out = (char *)0x1;

	if (want == NULL) {
		if (proto_hdr_decode(raw, &out) != -1)
			fail_msg("accepted \"%s\" as \"%s\"", raw, out);
		assert_null(out);
		/* nothing, not even the value itself, matches it */
		assert_int_equal(proto_hdr_is(raw, raw != NULL ? raw : "",
		    raw != NULL ? strlen(raw) : 0), 0);
		return;
	}
	if (proto_hdr_decode(raw, &out) != 0)
		fail_msg("refused \"%s\"", raw);
	assert_string_equal(out, want);
	free(out);
	/* the copy-free compare says the same */
	assert_int_equal(proto_hdr_is(raw, want, strlen(want)), 1);
	assert_int_equal(proto_hdr_is(raw, raw, strlen(raw)),
	    strcmp(raw, want) == 0);
	if (*want != '\0')
		assert_int_equal(proto_hdr_is(raw, want, strlen(want) - 1), 0);
}

static void
test_hdr_decode(void **state)
{
	(void)state;
	expect_decode("foo", "foo");
	expect_decode("  foo\t ", "foo");
	expect_decode("a b\tc", "a b\tc");
	expect_decode("", "");
	expect_decode("   ", "");
	expect_decode("=?base64?SGVsbG8=?=", "Hello");
	expect_decode(" =?base64?SGVsbG8=?=\t", "Hello");
	expect_decode("=?base64?aMOpbGxv?=", "h\xc3\xa9llo");
	expect_decode("=?base64?" "?=", "");
	expect_decode("=?base64?IGxlYWQ=?=", " lead");
	expect_decode("=?base64?bGluZQpicmVhaw==?=", "line\nbreak");
	/* not the sentinel: literal */
	expect_decode("SGVsbG8=", "SGVsbG8=");
	expect_decode("=?base64?SGVsbG8=", "=?base64?SGVsbG8=");
	expect_decode("SGVsbG8=?=", "SGVsbG8=?=");
	expect_decode("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=");
	/* refused */
	expect_decode(NULL, NULL);
	expect_decode("=?base64?SGVsbG8?=", NULL);	/* padding */
	expect_decode("=?base64?SGVsbG8==?=", NULL);
	expect_decode("=?base64?SGVs!!!bG8=?=", NULL);	/* alphabet */
	expect_decode("=?base64?SGVs bG8=?=", NULL);
	expect_decode("=?base64?SGVsbG9=?=", NULL);	/* pad bits */
	expect_decode("=?base64?S===?=", NULL);
	expect_decode("=?base64?SGVsbG8-?=", NULL);	/* url alphabet */
	expect_decode("=?base64?/w==?=", NULL);		/* not UTF-8 */
	expect_decode("=?base64?wK8=?=", NULL);		/* overlong */
	expect_decode("=?base64?7aCA?=", NULL);		/* surrogate */
	expect_decode("=?base64?AA==?=", NULL);		/* NUL */
	expect_decode("=?base64?=", NULL);		/* markers overlap */
	expect_decode("a\x01" "b", NULL);
	expect_decode("a\rb", NULL);
	expect_decode("a\nb", NULL);
	expect_decode("a\x7f", NULL);
	expect_decode("h\xc3\xa9llo", NULL);		/* raw UTF-8 */
}

static void
expect_encode(const char *value, const char *want)
{
	char *enc, *dec;

	assert_non_null(enc = proto_hdr_encode(value));
	if (want != NULL && strcmp(enc, want) != 0)
		fail_msg("encode \"%s\": got \"%s\", want \"%s\"", value, enc,
		    want);
	assert_int_equal(proto_hdr_decode(enc, &dec), 0);
	assert_string_equal(dec, value);
	free(dec);
	free(enc);
}

static void
test_hdr_encode(void **state)
{
	char	 s[4];
	char	*enc;
	int	 c;

	(void)state;
	expect_encode("echo", "echo");
	expect_encode("a b\tc", "a b\tc");
	expect_encode("test://static-text", "test://static-text");
	expect_encode("h\xc3\xa9llo", "=?base64?aMOpbGxv?=");
	expect_encode(" lead", "=?base64?IGxlYWQ=?=");
	expect_encode("trail\t", "=?base64?dHJhaWwJ?=");
	expect_encode("line\nbreak", "=?base64?bGluZQpicmVhaw==?=");
	expect_encode("", "=?base64?" "?=");
	/* a plain value that looks like the sentinel is encoded itself */
	expect_encode("=?base64?SGVsbG8=?=",
	    "=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?=");
	expect_encode("=?base64?=", "=?base64?PT9iYXNlNjQ/PQ==?=");
	expect_encode("=?base64?x", "=?base64?x");
	expect_encode("\x7f", "=?base64?fw==?=");
	assert_null(proto_hdr_encode(NULL));

	/* every one- and two-byte string that is valid UTF-8 round-trips */
	for (c = 1; c < 0x80; c++) {
		s[0] = (char)c;
		s[1] = '\0';
		expect_encode(s, NULL);
		s[1] = 'x';
		s[2] = '\0';
		expect_encode(s, NULL);
	}
	for (c = 0x80; c < 0x800; c++) {
		s[0] = (char)(0xc0 | c >> 6);
		s[1] = (char)(0x80 | (c & 0x3f));
		s[2] = '\0';
		expect_encode(s, NULL);
	}
	/* an encoded value never needs trimming or escaping itself */
	assert_non_null(enc = proto_hdr_encode(" \t "));
	assert_string_equal(enc, "=?base64?IAkg?=");
	free(enc);
}

static void
test_b64(void **state)
{
	static const unsigned char bin[] = { 0xfb, 0xff, 0x00, 0x3e, 0x3f };
	unsigned char	*out;
	char		*enc;
	size_t		 n, len;

	(void)state;
	for (n = 0; n <= sizeof(bin); n++) {
		assert_non_null(enc = proto_b64_encode(bin, n, 1));
		assert_null(strchr(enc, '='));
		assert_null(strpbrk(enc, "+/"));
		assert_int_equal(proto_b64_decode(enc, strlen(enc), 1, &out,
		    &len), 0);
		assert_int_equal(len, n);
		assert_memory_equal(out, bin, n);
		free(out);
		assert_int_equal(proto_b64_decode(enc, strlen(enc), 0, &out,
		    &len), n % 3 == 0 && strpbrk(enc, "-_") == NULL ? 0 : -1);
		free(out);
		free(enc);
	}
	assert_non_null(enc = proto_b64_encode(bin, sizeof(bin), 0));
	assert_string_equal(enc, "+/8APj8=");
	free(enc);
	assert_int_equal(proto_b64_decode("A", 1, 1, &out, &len), -1);
	assert_null(out);
	assert_int_equal(proto_b64_decode("AB", 2, 1, &out, &len), -1);
	assert_int_equal(proto_b64_decode("AA==", 4, 1, &out, &len), -1);
	assert_int_equal(proto_b64_decode("AA", 2, 1, &out, &len), 0);
	assert_int_equal(len, 1);
	free(out);
	assert_int_equal(proto_b64_decode("A=A=", 4, 0, &out, &len), -1);
	assert_int_equal(proto_b64_decode("====", 4, 0, &out, &len), -1);
}

/* ------------------------------------------------------------------ */
/* x-mcp-header */

static json_t *
load(const char *s)
{
	json_error_t	 e;
	json_t		*j = json_loads(s, 0, &e);

	if (j == NULL)
		fail_msg("test JSON: %s: %s", s, e.text);
	return j;
}

static const char good_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
    "\"count\":{\"type\":\"integer\",\"x-mcp-header\":\"Count\"},"
    "\"note\":{\"type\":\"string\"},"
    "\"opts\":{\"type\":\"object\",\"properties\":{"
    "\"dry\":{\"type\":\"boolean\",\"x-mcp-header\":\"Dry-Run\"}}},"
    "\"x-mcp-header\":{\"type\":\"string\"}},"
    "\"required\":[\"region\"]}";

static void
test_x_mcp_headers_good(void **state)
{
	json_t	*schema, *map, *want;
	char	 why[256];

	(void)state;
	schema = load(good_schema);
	assert_int_equal(proto_x_mcp_headers(schema, &map, why, sizeof(why)),
	    0);
	want = load("{\"Region\":[\"region\"],\"Count\":[\"count\"],"
	    "\"Dry-Run\":[\"opts\",\"dry\"]}");
	if (!json_equal(map, want))
		fail_msg("map %s", json_dumps(map, 0));
	json_decref(want);
	json_decref(map);
	json_decref(schema);

	/* nothing annotated: an empty map; no schema at all likewise */
	schema = load("{\"type\":\"object\",\"properties\":{\"a\":{}}}");
	assert_int_equal(proto_x_mcp_headers(schema, &map, NULL, 0), 0);
	assert_true(json_is_object(map) && json_object_size(map) == 0);
	json_decref(map);
	json_decref(schema);
	assert_int_equal(proto_x_mcp_headers(NULL, &map, why, sizeof(why)),
	    0);
	assert_int_equal(json_object_size(map), 0);
	json_decref(map);
}

struct bad_schema {
	const char	*bs_what;
	const char	*bs_json;
	const char	*bs_why;	/* a word the reason must hold */
};

static const struct bad_schema bad_schemas[] = {
	{ "empty name", "{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"\"}}}", "non-empty" },
	{ "not a string", "{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":42}}}", "non-empty string" },
	{ "space", "{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"My Region\"}}}", "token" },
	{ "delimiter", "{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"a:b\"}}}", "token" },
	{ "control", "{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"a\\u0001b\"}}}", "token" },
	{ "non-ASCII", "{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"r\\u00e9gion\"}}}", "token" },
	{ "duplicate, other case", "{\"properties\":{"
	    "\"a\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
	    "\"b\":{\"type\":\"string\",\"x-mcp-header\":\"region\"}}}",
	    "case-insensitively" },
	{ "duplicate at depth", "{\"properties\":{"
	    "\"a\":{\"type\":\"string\",\"x-mcp-header\":\"R\"},"
	    "\"o\":{\"type\":\"object\",\"properties\":{\"b\":{\"type\":"
	    "\"integer\",\"x-mcp-header\":\"r\"}}}}}", "repeats" },
	{ "number", "{\"properties\":{\"a\":{\"type\":\"number\","
	    "\"x-mcp-header\":\"A\"}}}", "number" },
	{ "object", "{\"properties\":{\"a\":{\"type\":\"object\","
	    "\"x-mcp-header\":\"A\"}}}", "object" },
	{ "array", "{\"properties\":{\"a\":{\"type\":\"array\","
	    "\"x-mcp-header\":\"A\"}}}", "array" },
	{ "untyped", "{\"properties\":{\"a\":{\"x-mcp-header\":\"A\"}}}",
	    "untyped" },
	{ "type list", "{\"properties\":{\"a\":{\"type\":[\"string\","
	    "\"null\"],\"x-mcp-header\":\"A\"}}}", "untyped" },
	{ "at the root", "{\"type\":\"string\",\"x-mcp-header\":\"A\"}",
	    "<root>" },
	{ "under items", "{\"properties\":{\"l\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}}}}}", "properties" },
	{ "under items (array form)", "{\"properties\":{\"l\":{\"items\":"
	    "[{\"type\":\"string\",\"x-mcp-header\":\"A\"}]}}}",
	    "properties" },
	{ "under anyOf", "{\"anyOf\":[{\"properties\":{\"a\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}}]}", "properties" },
	{ "under oneOf", "{\"properties\":{\"a\":{\"oneOf\":[{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}]}}}", "properties" },
	{ "under allOf", "{\"allOf\":[{\"properties\":{\"a\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}}]}", "properties" },
	{ "under not", "{\"properties\":{\"a\":{\"not\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}}}", "properties" },
	{ "under if", "{\"if\":{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"A\"}}}}", "properties" },
	{ "under then", "{\"then\":{\"properties\":{\"a\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}}}", "properties" },
	{ "under else", "{\"else\":{\"properties\":{\"a\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}}}", "properties" },
	{ "under $defs (a $ref target)", "{\"properties\":{\"a\":{\"$ref\":"
	    "\"#/$defs/r\"}},\"$defs\":{\"r\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"A\"}}}", "properties" },
	{ "under definitions", "{\"definitions\":{\"r\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"A\"}}}", "properties" },
	{ "under additionalProperties", "{\"additionalProperties\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}}", "properties" },
	{ "under patternProperties", "{\"patternProperties\":{\"^a\":{"
	    "\"type\":\"string\",\"x-mcp-header\":\"A\"}}}", "properties" },
	{ "under dependentSchemas", "{\"dependentSchemas\":{\"a\":{"
	    "\"properties\":{\"b\":{\"type\":\"string\",\"x-mcp-header\":"
	    "\"B\"}}}}}", "properties" },
	{ "one bad among good", "{\"properties\":{"
	    "\"a\":{\"type\":\"string\",\"x-mcp-header\":\"A\"},"
	    "\"b\":{\"type\":\"number\",\"x-mcp-header\":\"B\"}}}", "b:" },
};

static void
test_x_mcp_headers_bad(void **state)
{
	json_t	*schema, *map;
	char	 why[256];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(bad_schemas) / sizeof(bad_schemas[0]); i++) {
		const struct bad_schema *b = &bad_schemas[i];

		schema = load(b->bs_json);
		map = (json_t *)0x1;
		why[0] = '\0';
		if (proto_x_mcp_headers(schema, &map, why, sizeof(why)) != -1)
			fail_msg("%s: accepted", b->bs_what);
		assert_null(map);
		if (strstr(why, b->bs_why) == NULL)
			fail_msg("%s: reason \"%s\" lacks \"%s\"", b->bs_what,
			    why, b->bs_why);
		/* no room for a reason is fine */
		assert_int_equal(proto_x_mcp_headers(schema, &map, NULL, 0),
		    -1);
		json_decref(schema);
	}
}

static void
test_x_mcp_headers_deep(void **state)
{
	json_t	*schema, *node, *map;
	char	 why[128];
	int	 i;

	(void)state;
	/* 300 levels of properties: refused, and no stack trouble */
	schema = json_object();
	node = schema;
	for (i = 0; i < 300; i++) {
		json_t *props = json_object(), *child = json_object();

		json_object_set_new(node, "properties", props);
		json_object_set_new(props, "p", child);
		node = child;
	}
	assert_int_equal(proto_x_mcp_headers(schema, &map, why, sizeof(why)),
	    -1);
	assert_non_null(strstr(why, "deep"));
	json_decref(schema);
}

/* ------------------------------------------------------------------ */
/* Mcp-Param-* */

static int
param_check(const char *args, struct params *p, struct proto_verdict *v)
{
	struct proto_reqhdrs	 h = { .rh_param = param_cb, .rh_arg = p };
	json_t			*schema, *map, *a;
	int			 rc;

	schema = load(good_schema);
	assert_int_equal(proto_x_mcp_headers(schema, &map, NULL, 0), 0);
	a = args != NULL ? load(args) : NULL;
	rc = proto_param_headers_check(map, a, &h, v);
	json_decref(a);
	json_decref(map);
	json_decref(schema);
	if (rc == -1) {
		assert_int_equal(v->pv_http, 400);
		assert_int_equal(v->pv_code, MCP_ERR_HEADER_MISMATCH);
		assert_int_equal(v->pv_era, PROTO_ERA_MODERN);
		assert_non_null(strstr(v->pv_msg, "Mcp-Param-"));
	} else
		assert_int_equal(v->pv_http, 0);
	return rc;
}

static void
test_param_headers(void **state)
{
	struct params		p;
	struct proto_verdict	v;
	const char		*full = "{\"region\":\"us-west1\","
				    "\"count\":42,\"opts\":{\"dry\":true}}";

	(void)state;
#define P(...) do {							\
	memset(&p, 0, sizeof(p));					\
	const char *kv[] = { __VA_ARGS__, NULL, NULL };			\
	for (size_t i_ = 0; kv[2 * i_] != NULL; i_++) {			\
		p.p_kv[i_][0] = kv[2 * i_];				\
		p.p_kv[i_][1] = kv[2 * i_ + 1];				\
	}								\
} while (0)
	P("Region", "us-west1", "Count", "42", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), 0);
	/* header names are case-insensitive (the callback's job) */
	P("region", "us-west1", "COUNT", "42", "dry-run", "true");
	assert_int_equal(param_check(full, &p, &v), 0);
	/* values trimmed and base64-decoded */
	P("Region", " =?base64?dXMtd2VzdDE=?= ", "Count", "\t42 ",
	    "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), 0);
	/* integers numerically */
	P("Region", "us-west1", "Count", "042", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), 0);
	P("Region", "us-west1", "Count", "42.000", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), 0);
	P("Region", "us-west1", "Count", "42.5", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	P("Region", "us-west1", "Count", "43", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	P("Region", "us-west1", "Count", "4x", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	P("Region", "us-west1", "Count", "", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	P("Region", "us-west1", "Count", "99999999999999999999",
	    "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	P("Region", "x", "Count", "-0", "Dry-Run", "false");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":0,"
	    "\"opts\":{\"dry\":false}}", &p, &v), 0);
	P("Region", "x", "Count", "-7");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":-7}", &p,
	    &v), 0);
	/* a real in the body against a decimal header */
	P("Region", "x", "Count", "42");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":42.0}", &p,
	    &v), 0);
	P("Region", "x", "Count", "42.5");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":42.5}", &p,
	    &v), 0);
	P("Region", "x", "Count", "1e3");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":1000.0}",
	    &p, &v), -1);
	/* beyond 2^53-1 the client sends nothing; nothing is checked */
	P("Region", "x");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":"
	    "9007199254740992}", &p, &v), 0);
	/* booleans as true/false only */
	P("Region", "us-west1", "Count", "42", "Dry-Run", "True");
	assert_int_equal(param_check(full, &p, &v), -1);
	P("Region", "us-west1", "Count", "42", "Dry-Run", "1");
	assert_int_equal(param_check(full, &p, &v), -1);
	/* strings exactly */
	P("Region", "US-WEST1", "Count", "42", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	assert_non_null(strstr(v.pv_msg, "Region"));
	/* a header missing for a present argument */
	P("Region", "us-west1", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	assert_non_null(strstr(v.pv_msg, "Count"));
	assert_non_null(strstr(v.pv_msg, "missing"));
	/* malformed values */
	P("Region", "=?base64?dXMtd2VzdDE?=", "Count", "42", "Dry-Run",
	    "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	assert_non_null(strstr(v.pv_msg, "malformed"));
	P("Region", "us-west1\x01", "Count", "42", "Dry-Run", "true");
	assert_int_equal(param_check(full, &p, &v), -1);
	/* null or absent argument: no header expected, none allowed */
	P("Region", "x");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":null}", &p,
	    &v), 0);
	P("Region", "x", "Count", "1");
	assert_int_equal(param_check("{\"region\":\"x\",\"count\":null}", &p,
	    &v), -1);
	assert_non_null(strstr(v.pv_msg, "absent or null"));
	P("Region", "x", "Dry-Run", "true");
	assert_int_equal(param_check("{\"region\":\"x\"}", &p, &v), -1);
	P("Region", "x", "Dry-Run", "true");
	assert_int_equal(param_check("{\"region\":\"x\",\"opts\":7}", &p,
	    &v), -1);
	/* no arguments at all */
	P(NULL, NULL);
	assert_int_equal(param_check(NULL, &p, &v), 0);
	assert_int_equal(param_check("{}", &p, &v), 0);
	P("Region", "x");
	assert_int_equal(param_check(NULL, &p, &v), -1);
	/* an object where a string was declared is the tool's problem */
	P(NULL, NULL);
	assert_int_equal(param_check("{\"region\":{\"a\":1}}", &p, &v), 0);
	/* non-ASCII argument through base64 */
	P("Region", "=?base64?w6lhc3Q=?=");
	assert_int_equal(param_check("{\"region\":\"\\u00e9ast\"}", &p, &v),
	    0);
#undef P
	/* no map, no header source */
	assert_int_equal(proto_param_headers_check(NULL, NULL, NULL, &v), 0);
}

/* ------------------------------------------------------------------ */
/* cursors */

static const char *const kinds[] = {
	"tools", "prompts", "resources", "resourceTemplates",
};

static void
test_cursor_roundtrip(void **state)
{
	static const char *const keys[] = {
		"", "echo", "test://template/{id}/data", "h\xc3\xa9llo",
		"with space/and?query=1&x",
	};
	static const size_t dups[] = { 0, 1, 2, 127, 128, 300, 16384,
	    (size_t)1 << 40, SIZE_MAX };
	char	*c, *k, big[PROTO_CURSOR_KEY_MAX + 2];
	size_t	 ki, di, ti, d, j;

	(void)state;
	for (ti = 0; ti < 4; ti++)
		for (ki = 0; ki < sizeof(keys) / sizeof(keys[0]); ki++)
			for (di = 0; di < sizeof(dups) / sizeof(dups[0]);
			    di++) {
				c = proto_cursor_encode(kinds[ti], keys[ki],
				    dups[di]);
				assert_non_null(c);
				assert_true(strlen(c) <= PROTO_CURSOR_MAX);
				assert_int_equal(strspn(c, "ABCDEFGHIJKLMNOP"
				    "QRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789-_"), strlen(c));
				assert_int_equal(proto_cursor_decode(c,
				    kinds[ti], &k, &d), 0);
				assert_string_equal(k, keys[ki]);
				assert_int_equal(d, dups[di]);
				free(k);
				/* another kind's cursor is refused */
				for (j = 0; j < 4; j++)
					if (j != ti)
						assert_int_equal(
						    proto_cursor_decode(c,
						    kinds[j], &k, &d), -1);
				free(c);
			}

	/* the longest key fits within the bound; one more byte does not */
	memset(big, 'k', sizeof(big));
	big[PROTO_CURSOR_KEY_MAX] = '\0';
	assert_non_null(c = proto_cursor_encode("resources", big, SIZE_MAX));
	assert_true(strlen(c) <= PROTO_CURSOR_MAX);
	assert_int_equal(proto_cursor_decode(c, "resources", &k, &d), 0);
	assert_string_equal(k, big);
	free(k);
	free(c);
	big[PROTO_CURSOR_KEY_MAX] = 'k';
	big[PROTO_CURSOR_KEY_MAX + 1] = '\0';
	assert_null(proto_cursor_encode("resources", big, 1));

	assert_null(proto_cursor_encode("tasks", "a", 1));
	assert_null(proto_cursor_encode(NULL, "a", 1));
	assert_null(proto_cursor_encode("tools", NULL, 1));
}

/* a cursor with every field chosen, checksum computed as vmcpd does */
static char *
craft(const unsigned char *body, size_t n, int good_sum)
{
	unsigned char	buf[600];
	uint32_t	h = 2166136261U;
	size_t		i;

	memcpy(buf, body, n);
	for (i = 0; i < n; i++) {
		h ^= buf[i];
		h *= 16777619U;
	}
	if (!good_sum)
		h ^= 1;
	buf[n] = (unsigned char)(h >> 24);
	buf[n + 1] = (unsigned char)(h >> 16);
	buf[n + 2] = (unsigned char)(h >> 8);
	buf[n + 3] = (unsigned char)h;
	return proto_b64_encode(buf, n + 4, 1);
}

static void
expect_cursor_bad(const char *c, const char *kind)
{
	char	*k = (char *)0x1;
	size_t	 d = 7;

	if (proto_cursor_decode(c, kind, &k, &d) != -1)
		fail_msg("accepted cursor \"%s\"", c);
	assert_null(k);
	assert_int_equal(d, 0);
}

static void
test_cursor_bad(void **state)
{
	static const char alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	static const unsigned char ok[] = { 1, 1, 2, 'a', 'b' };
	static const unsigned char v2[] = { 2, 1, 2, 'a', 'b' };
	static const unsigned char k9[] = { 1, 9, 2, 'a', 'b' };
	static const unsigned char longvar[] = { 1, 1, 0x82, 0x00, 'a' };
	static const unsigned char nul[] = { 1, 1, 1, 'a', 0, 'b' };
	static const unsigned char novar[] = { 1, 1 };
	static const unsigned char huge[] = { 1, 1, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	static const unsigned char runon[] = { 1, 1, 0x80, 0x80, 0x80, 0x80,
	    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	char	*c, *t, *k, big[PROTO_CURSOR_MAX + 8];
	size_t	 i, j, d, n;

	(void)state;
	/* a crafted cursor decodes when it is well formed */
	assert_non_null(c = craft(ok, sizeof(ok), 1));
	assert_int_equal(proto_cursor_decode(c, "tools", &k, &d), 0);
	assert_string_equal(k, "ab");
	assert_int_equal(d, 2);
	free(k);
	free(c);
#define BAD(body, sum) do {						\
	assert_non_null(c = craft(body, sizeof(body), sum));		\
	expect_cursor_bad(c, "tools");					\
	free(c);							\
} while (0)
	BAD(ok, 0);		/* checksum */
	BAD(v2, 1);		/* version */
	BAD(k9, 1);		/* kind */
	BAD(longvar, 1);	/* a count with a trailing zero group */
	BAD(nul, 1);		/* NUL in the key */
	BAD(novar, 1);		/* no count */
	BAD(huge, 1);		/* past 64 bits */
	BAD(runon, 1);		/* more than 10 groups */
#undef BAD
	expect_cursor_bad("", "tools");
	expect_cursor_bad(NULL, "tools");
	expect_cursor_bad("!!!!", "tools");
	expect_cursor_bad("AQEBYWI", "tools");
	expect_cursor_bad("AQEBYWKTmPx9==", "tools");

	/* every single-character change of a real cursor is refused */
	assert_non_null(c = proto_cursor_encode("tools", "get_weather", 3));
	n = strlen(c);
	assert_non_null(t = strdup(c));
	for (i = 0; i < n; i++) {
		for (j = 0; j < sizeof(alpha) - 1; j++) {
			if (alpha[j] == c[i])
				continue;
			t[i] = alpha[j];
			expect_cursor_bad(t, "tools");
		}
		t[i] = c[i];
	}
	/* truncated or extended */
	for (i = 0; i < n; i++) {
		t[i] = '\0';
		expect_cursor_bad(t, "tools");
		t[i] = c[i];
	}
	free(t);
	assert_non_null(t = malloc(n + 2));
	memcpy(t, c, n);
	t[n] = 'A';
	t[n + 1] = '\0';
	expect_cursor_bad(t, "tools");
	free(t);
	/* an unknown kind to decode against */
	expect_cursor_bad(c, "tasks");
	expect_cursor_bad(c, NULL);
	free(c);

	/* oversize: refused before decoding */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_cursor_bad(big, "tools");
	big[PROTO_CURSOR_MAX + 1] = '\0';
	expect_cursor_bad(big, "tools");
}

static json_t *
items(const char *const *names, size_t n)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s,s:i}", "name",
		    names[i], "i", (int)i));
	return a;
}

static size_t
resume(const json_t *a, const char *key, size_t dup)
{
	size_t start = 999;

	assert_int_equal(proto_cursor_resume(a, "name", key, dup, &start), 0);
	return start;
}

static void
test_cursor_resume(void **state)
{
	static const char *const names[] = { "a", "b", "b", "b", "c" };
	static const char *const fewer[] = { "a", "b", "b", "c" };
	static const char *const gone[] = { "a", "c" };
	json_t	*a, *f, *g;
	size_t	 s;

	(void)state;
	a = items(names, 5);
	assert_int_equal(resume(a, "a", 1), 1);
	assert_int_equal(resume(a, "b", 0), 1);
	assert_int_equal(resume(a, "b", 1), 2);
	assert_int_equal(resume(a, "b", 2), 3);
	assert_int_equal(resume(a, "b", 3), 4);
	assert_int_equal(resume(a, "b", 9), 4);
	assert_int_equal(resume(a, "c", 1), 5);
	assert_int_equal(resume(a, "0", 1), 0);	/* before everything */
	assert_int_equal(resume(a, "bb", 1), 4);	/* between b and c */
	assert_int_equal(resume(a, "z", 1), 5);
	assert_int_equal(resume(a, "", 1), 0);
	/* the list changed: one "b" fewer, or every "b" gone */
	f = items(fewer, 4);
	assert_int_equal(resume(f, "b", 3), 3);
	assert_int_equal(resume(f, "b", 1), 2);
	g = items(gone, 2);
	assert_int_equal(resume(g, "b", 2), 1);
	/* an item without a key sorts as "" */
	json_array_insert_new(g, 0, json_object());
	assert_int_equal(resume(g, "", 1), 1);
	assert_int_equal(resume(g, "a", 1), 2);
	/* bad input */
	assert_int_equal(proto_cursor_resume(NULL, "name", "a", 1, &s), -1);
	assert_int_equal(proto_cursor_resume(a, NULL, "a", 1, &s), -1);
	assert_int_equal(proto_cursor_resume(a, "name", NULL, 1, &s), -1);
	json_decref(a);
	json_decref(f);
	json_decref(g);
}

/* page through lists with runs of equal keys, any page size */
static void
test_cursor_paging(void **state)
{
	static const char *const names[] = { "a", "a", "b", "c", "c", "c",
	    "c", "d", "e", "e" };
	json_t	*a;
	char	*c, *k;
	size_t	 n = 10, page, start, end, d, seen, e;

	(void)state;
	a = items(names, n);
	for (page = 1; page <= n; page++) {
		start = 0;
		seen = 0;
		while (start < n) {
			end = start + page < n ? start + page : n;
			/* this page is items [start, end) */
			assert_int_equal(json_integer_value(json_object_get(
			    json_array_get(a, start), "i")), (json_int_t)seen);
			seen = end;
			if (end == n)
				break;
			assert_non_null(c = proto_cursor_next(a, "name",
			    "prompts", end));
			assert_int_equal(proto_cursor_decode(c, "prompts", &k,
			    &d), 0);
			assert_int_equal(proto_cursor_resume(a, "name", k, d,
			    &start), 0);
			assert_int_equal(start, end);
			free(k);
			free(c);
		}
		assert_int_equal(seen, n);
	}
	/* every cut point names the item after it */
	for (e = 1; e <= n; e++) {
		assert_non_null(c = proto_cursor_next(a, "name", "tools", e));
		assert_int_equal(proto_cursor_decode(c, "tools", &k, &d), 0);
		assert_string_equal(k, names[e - 1]);
		assert_int_equal(proto_cursor_resume(a, "name", k, d, &start),
		    0);
		assert_int_equal(start, e);
		free(k);
		free(c);
	}
	assert_null(proto_cursor_next(a, "name", "tools", 0));
	assert_null(proto_cursor_next(a, "name", "tools", n + 1));
	assert_null(proto_cursor_next(a, "name", "nope", 1));
	assert_null(proto_cursor_next(NULL, "name", "tools", 1));
	json_decref(a);
}

/* ------------------------------------------------------------------ */
/* _meta */

static void
test_meta_reserved(void **state)
{
	(void)state;
	assert_true(proto_meta_reserved("io.modelcontextprotocol/serverInfo"));
	assert_true(proto_meta_reserved("io.modelcontextprotocol/x/y"));
	assert_true(proto_meta_reserved("dev.mcp/x"));
	assert_true(proto_meta_reserved("com.mcp.tools/x"));
	assert_true(proto_meta_reserved("org.modelcontextprotocol.a.b/x"));
	assert_true(proto_meta_reserved("io.mcp/"));
	assert_false(proto_meta_reserved("com.example.mcp/x"));
	assert_false(proto_meta_reserved("com.example/mcp"));
	assert_false(proto_meta_reserved("mcp/x"));
	assert_false(proto_meta_reserved("modelcontextprotocol/x"));
	assert_false(proto_meta_reserved("io.mcpx/x"));
	assert_false(proto_meta_reserved("io.MCP/x"));
	assert_false(proto_meta_reserved("io.modelcontextprotocol"));
	assert_false(proto_meta_reserved("progressToken"));
	assert_false(proto_meta_reserved("traceparent"));
	assert_false(proto_meta_reserved("a/b.mcp.c"));
	assert_false(proto_meta_reserved(""));
	assert_false(proto_meta_reserved(NULL));
}

/*
 * A _meta text proto_meta_strip() would empty is known so without a
 * tree; whenever the scan says so, the tree path agrees.
 */
static void
test_meta_text_dropped(void **state)
{
	static const struct {
		const char	*text;
		int		 dropped;
	} t[] = {
		{ "{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"x\","
		    "\"version\":\"1\"}}", 1 },
		{ "{}", 1 },
		{ " { \"dev.mcp/x\" : 1 , \"io.mcp/y\":[2]} ", 1 },
		{ "{\"io.modelcontextprotocol/serverInfo\":{},"
		    "\"traceparent\":\"00\"}", 0 },
		{ "{\"io.modelcontextprotocol/related-task\":{}}", 0 },
		{ "{\"io.modelcontextprotocol/model-immediate-response\":1}",
		    0 },
		{ "{\"io.modelcontextprotocol/related-taskx\":{}}", 1 },
		{ "{\"com.example.mcp/y\":1}", 0 },
		{ "{\"progressToken\":1}", 0 },
		/* not sure: an escaped key, not an object, too many */
		{ "{\"io.modelcontextprotocol\\/serverInfo\":{}}", 0 },
		{ "[]", 0 },
		{ "\"io.mcp/x\"", 0 },
		{ "{\"io.mcp/x\":1", 0 },
		{ "{\"io.mcp/a\":1,\"io.mcp/b\":1,\"io.mcp/c\":1,"
		    "\"io.mcp/d\":1,\"io.mcp/e\":1,\"io.mcp/f\":1,"
		    "\"io.mcp/g\":1,\"io.mcp/h\":1,\"io.mcp/i\":1}", 0 },
	};
	json_t	*meta;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (proto_meta_text_dropped(t[i].text, strlen(t[i].text)) !=
		    t[i].dropped)
			fail_msg("case %zu (%s): want %d", i, t[i].text,
			    t[i].dropped);
		if (!t[i].dropped)
			continue;
		meta = load(t[i].text);
		proto_meta_strip(meta);
		assert_int_equal(json_object_size(meta), 0);
		json_decref(meta);
	}
}

static void
test_meta_strip(void **state)
{
	json_t *meta, *want;

	(void)state;
	meta = load("{\"progressToken\":7,"
	    "\"io.modelcontextprotocol/protocolVersion\":\"" M "\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/clientInfo\":{},"
	    "\"io.modelcontextprotocol/logLevel\":\"info\","
	    "\"io.modelcontextprotocol/related-task\":{\"taskId\":\"t\"},"
	    "\"dev.mcp/x\":1,\"com.mcp.tools/y\":2,"
	    "\"traceparent\":\"00-abc-def-01\",\"tracestate\":\"k=v\","
	    "\"baggage\":\"a=b\",\"com.example/x\":3,"
	    "\"com.example.mcp/y\":4,\"plain\":5}");
	proto_meta_strip(meta);
	/* the end-to-end task key travels */
	want = load("{\"progressToken\":7,\"traceparent\":\"00-abc-def-01\","
	    "\"io.modelcontextprotocol/related-task\":{\"taskId\":\"t\"},"
	    "\"tracestate\":\"k=v\",\"baggage\":\"a=b\",\"com.example/x\":3,"
	    "\"com.example.mcp/y\":4,\"plain\":5}");
	if (!json_equal(meta, want))
		fail_msg("stripped to %s", json_dumps(meta, JSON_SORT_KEYS));
	json_decref(want);
	json_decref(meta);
	proto_meta_strip(NULL);
	meta = json_string("x");
	proto_meta_strip(meta);
	json_decref(meta);
}

/* the text path against the tree: params with _meta stripped as a
 * 2025-11-25 backend gets them (the tree path's modern_backend_params),
 * under its own name if not NULL (core_route) */
static void
expect_strip_text_as(const char *params, const char *own)
{
	json_t	*p, *got;
	char	*out, *ownj = NULL;
	size_t	 len;

	p = load(params);
	if (own != NULL) {
		got = json_string(own);
		assert_non_null(ownj = json_dumps(got, JSON_ENCODE_ANY));
		json_decref(got);
		if (json_object_get(p, "name") != NULL)
			json_object_set_new(p, "name", json_string(own));
	}
	assert_int_equal(proto_params_strip_meta(p), 0);
	if ((out = proto_params_strip_meta_text(params, strlen(params),
	    ownj, ownj != NULL ? strlen(ownj) : 0, &len)) == NULL)
		fail_msg("not sure of %s", params);
	free(ownj);
	assert_int_equal(strlen(out), len);
	got = load(out);
	if (!json_equal(got, p))
		fail_msg("%s stripped to %s", params, out);
	json_decref(got);
	json_decref(p);
	free(out);
}

static void
expect_strip_text(const char *params)
{
	expect_strip_text_as(params, NULL);
}

static void
test_meta_strip_text(void **state)
{
	char	 big[2048];
	size_t	 i, n, len;

	(void)state;
	/* the bench's call: nothing travels, no _meta at all */
	expect_strip_text("{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"" M "\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}},\"name\":\"echo\",\"arguments\":"
	    "{\"message\":\"m\"}}");
	/* what travels stays, with the text it came in */
	expect_strip_text("{ \"name\" : \"echo\" , \"_meta\" : { \"progressToken"
	    "\" : 7 , \"io.modelcontextprotocol/clientInfo\":{\"name\":\"c\","
	    "\"version\":\"1\"}, \"traceparent\":\"00-a\\u0041\", "
	    "\"io.modelcontextprotocol/related-task\":{\"taskId\":\"t\"}, "
	    "\"io.modelcontextprotocol/model-immediate-response\":true, "
	    "\"dev.mcp/x\":1 } , \"arguments\" : [ 1 , 2 ] }");
	expect_strip_text("{\"name\":\"echo\"}");
	expect_strip_text("{}");
	expect_strip_text("{\"_meta\":{}}");
	/* a _meta that is no object goes, as the tree has it */
	expect_strip_text("{\"_meta\":\"x\",\"name\":\"echo\"}");
	/* renamed, with what the new name's JSON text needs */
	expect_strip_text_as("{\"_meta\":{\"a\":1},\"name\":\"echo\","
	    "\"arguments\":{\"name\":\"inner\"}}", "a_echo");
	expect_strip_text_as("{\"name\":\"echo\"}", "q\"uo\\te\u00e9");
	/* not sure: escaped keys, a long key, too many members */
	assert_null(proto_params_strip_meta_text("{\"n\\u0061me\":1}", 15,
	    NULL, 0, &len));
	assert_null(proto_params_strip_meta_text("{\"_meta\":{\"\\u0061\":1}}",
	    22, NULL, 0, &len));
	n = (size_t)snprintf(big, sizeof(big), "{\"_meta\":{\"");
	for (i = 0; i < 256; i++)
		big[n++] = 'k';
	n += (size_t)snprintf(big + n, sizeof(big) - n, "\":1}}");
	assert_null(proto_params_strip_meta_text(big, n, NULL, 0, &len));
	n = (size_t)snprintf(big, sizeof(big), "{");
	for (i = 0; i < 17; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"k%zu\":%zu",
		    i > 0 ? "," : "", i, i);
	n += (size_t)snprintf(big + n, sizeof(big) - n, "}");
	assert_null(proto_params_strip_meta_text(big, n, NULL, 0, &len));
}

static void
test_modern_result(void **state)
{
	json_t *si, *r, *want;

	(void)state;
	si = load("{\"name\":\"vmcpd\",\"version\":\"1.0\"}");
	r = proto_modern_result(load("{\"content\":[]}"), NULL, si, -1, NULL);
	want = load("{\"content\":[],\"resultType\":\"complete\",\"_meta\":"
	    "{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"vmcpd\","
	    "\"version\":\"1.0\"}}}");
	assert_true(json_equal(r, want));
	/* a copy: changing ours leaves the result alone */
	json_object_set_new(si, "name", json_string("other"));
	assert_true(json_equal(r, want));
	json_decref(want);
	json_decref(r);

	r = proto_modern_result(NULL, "complete", NULL, 60000, "public");
	want = load("{\"resultType\":\"complete\",\"ttlMs\":60000,"
	    "\"cacheScope\":\"public\"}");
	assert_true(json_equal(r, want));
	json_decref(want);
	json_decref(r);

	r = proto_modern_result(load("{\"tools\":[]}"), NULL, NULL, 0,
	    "private");
	assert_int_equal(json_integer_value(json_object_get(r, "ttlMs")), 0);
	assert_string_equal(json_string_value(json_object_get(r,
	    "cacheScope")), "private");
	json_decref(r);

	/* an existing _meta keeps its other keys; serverInfo replaced */
	r = proto_modern_result(load("{\"_meta\":{\"com.example/k\":1,"
	    "\"io.modelcontextprotocol/serverInfo\":{\"name\":\"backend\","
	    "\"version\":\"9\"}}}"), "input_required", si, -5, NULL);
	want = load("{\"_meta\":{\"com.example/k\":1,\"io.modelcontextprotocol"
	    "/serverInfo\":{\"name\":\"other\",\"version\":\"1.0\"}},"
	    "\"resultType\":\"input_required\"}");
	assert_true(json_equal(r, want));
	json_decref(want);
	json_decref(r);

	/* a _meta that is not an object is replaced */
	r = proto_modern_result(load("{\"_meta\":5}"), NULL, si, -1, NULL);
	assert_true(json_is_object(json_object_get(json_object_get(r,
	    "_meta"), MCP_META_SERVER_INFO)));
	json_decref(r);

	/* not an object: refused, and freed (ASan would tell) */
	assert_null(proto_modern_result(json_array(), NULL, si, -1, NULL));
	json_decref(si);
}


/* the probe outcome table (docs/ARCHITECTURE.md, Backend eras) */
static void
test_probe_outcome(void **state)
{
	static const struct {
		int		 answered;
		long		 status;
		const char	*msg;
		enum proto_era	 want;
	} t[] = {
		/* no HTTP answer, auth, transient: inconclusive */
		{ 0, 0, NULL, PROTO_ERA_UNKNOWN },
		{ 1, 401, NULL, PROTO_ERA_UNKNOWN },
		{ 1, 403, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32020,\"message\":\"x\"}}", PROTO_ERA_UNKNOWN },
		{ 1, 407, NULL, PROTO_ERA_UNKNOWN },
		{ 1, 408, NULL, PROTO_ERA_UNKNOWN },
		{ 1, 429, NULL, PROTO_ERA_UNKNOWN },
		{ 1, 500, NULL, PROTO_ERA_UNKNOWN },
		{ 1, 503, NULL, PROTO_ERA_UNKNOWN },
		/* discover lists 2026-07-28; and a 2025 one: both */
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"supportedVersions\":[\"" M "\"]}}", PROTO_ERA_MODERN },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"supportedVersions\":[\"2025-11-25\",\"" M "\"]}}",
		    PROTO_ERA_BOTH },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"supportedVersions\":[\"2025-06-18\"]}}",
		    PROTO_ERA_LEGACY },
		/* a discover result without it: Legacy */
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"supportedVersions\":[\"2026-99-99\"]}}",
		    PROTO_ERA_LEGACY },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		    PROTO_ERA_LEGACY },
		/* a Modern envelope that is not complete */
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"resultType\":\"input_required\"}}", PROTO_ERA_MODERN },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"resultType\":\"complete\"}}", PROTO_ERA_LEGACY },
		/* Modern errors */
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32020,\"message\":\"x\"}}", PROTO_ERA_MODERN },
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32021,\"message\":\"x\"}}", PROTO_ERA_MODERN },
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32022,\"message\":\"x\",\"data\":{\"supported\":[\"" M
		    "\"],\"requested\":\"" M "\"}}}", PROTO_ERA_MODERN },
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32022,\"message\":\"x\",\"data\":{\"supported\":[\"" M
		    "\",\"2025-11-25\"]}}}", PROTO_ERA_BOTH },
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32022,\"message\":\"x\",\"data\":{\"supported\":"
		    "[\"2027-01-01\"]}}}", PROTO_ERA_LEGACY },
		/* what Legacy servers answer */
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
		    "-32000,\"message\":\"Bad Request: Server not "
		    "initialized\"}}", PROTO_ERA_LEGACY },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32601,\"message\":\"Method not found\"}}",
		    PROTO_ERA_LEGACY },
		{ 1, 404, NULL, PROTO_ERA_LEGACY },
		{ 1, 405, NULL, PROTO_ERA_LEGACY },
		{ 1, 406, NULL, PROTO_ERA_LEGACY },
		/* garbage in a 200 */
		{ 1, 200, "[1,2]", PROTO_ERA_LEGACY },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "\"x\"}}", PROTO_ERA_LEGACY },
	};
	char		 why[160];
	json_t		*msg;
	size_t		 i;
	enum proto_era	 got;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		msg = t[i].msg != NULL ? load(t[i].msg) : NULL;
		why[0] = '\0';
		got = proto_probe_outcome(t[i].answered, t[i].status, msg, why,
		    sizeof(why));
		if (got != t[i].want)
			fail_msg("case %zu (HTTP %ld %s): got %d, want %d (%s)",
			    i, t[i].status, t[i].msg ? t[i].msg : "-", (int)got,
			    (int)t[i].want, why);
		assert_true(why[0] != '\0');
		json_decref(msg);
	}
	msg = load("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32021,"
	    "\"message\":\"x\"}}");
	assert_int_equal(proto_modern_error(msg), 1);
	json_decref(msg);
	msg = load("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,"
	    "\"message\":\"x\"}}");
	assert_int_equal(proto_modern_error(msg), 0);
	json_decref(msg);
	assert_int_equal(proto_modern_error(NULL), 0);
}

/* the text path of a request to a 2026-07-28 backend, as modern.c
 * composes it: the client's _meta value replaced by this hop's */
static char *
params_text(const char *text, size_t len, const json_t *p, const json_t *caps,
    const json_t *info, const char *level, size_t *outlen)
{
	const char	*cmeta;
	char		*mt, *out;
	size_t		 cmlen, mlen;

	if ((cmeta = proto_json_value(text, len, "_meta", &cmlen)) == NULL ||
	    (mt = proto_modern_meta_text(p, caps, info, level, &mlen)) == NULL)
		return NULL;
	out = proto_text_replace(text, len, cmeta, cmlen, mt, mlen, outlen);
	free(mt);
	return out;
}

/* a request to a 2026-07-28 backend: this hop's _meta, the client's
 * capabilities mirrored in 2026-07-28 terms */
static void
test_modern_params(void **state)
{
	json_t *p, *caps, *info, *want, *out;

	(void)state;
	p = load("{\"name\":\"t\",\"arguments\":{\"a\":1},\"requestState\":"
	    "\"s\",\"inputResponses\":{\"k\":{\"action\":\"accept\"}},"
	    "\"_meta\":{\"progressToken\":7,\"traceparent\":\"00-a-b-01\","
	    "\"io.modelcontextprotocol/protocolVersion\":\"" L "\","
	    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c\"},"
	    "\"com.example/k\":1}}");
	caps = load("{\"roots\":{\"listChanged\":true},\"sampling\":{\"tools\":"
	    "{}},\"elicitation\":{\"form\":{}},\"tasks\":{\"list\":{}},"
	    "\"experimental\":{\"x\":{}}}");
	info = load("{\"name\":\"vmcpd\",\"version\":\"1\"}");
	out = proto_modern_params(p, caps, info, "info");
	want = load("{\"name\":\"t\",\"arguments\":{\"a\":1},\"requestState\":"
	    "\"s\",\"inputResponses\":{\"k\":{\"action\":\"accept\"}},"
	    "\"_meta\":{\"progressToken\":7,\"traceparent\":\"00-a-b-01\","
	    "\"com.example/k\":1,"
	    "\"io.modelcontextprotocol/protocolVersion\":\"" M "\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{\"roots\":{},"
	    "\"sampling\":{\"tools\":{}},\"elicitation\":{\"form\":{}},"
	    "\"experimental\":{\"x\":{}}},"
	    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"vmcpd\","
	    "\"version\":\"1\"},"
	    "\"io.modelcontextprotocol/logLevel\":\"info\"}}");
	if (!json_equal(out, want))
		fail_msg("got %s", json_dumps(out, JSON_SORT_KEYS));
	/* the caller's params are left alone */
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    p, "_meta"), MCP_META_PROTOCOL_VERSION)), L);
	json_decref(want);
	json_decref(out);

	/* no params, no caps: an envelope with {} */
	out = proto_modern_params(NULL, NULL, NULL, NULL);
	want = load("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"" M "\",\"io.modelcontextprotocol/clientCapabilities\":{}}}");
	assert_true(json_equal(out, want));
	json_decref(want);
	json_decref(out);

	/* the same from the text: only _meta is rebuilt, the rest copied
	 * byte for byte (the spacing shows it) */
	{
		static const char text[] = "{ \"name\" : \"t\", "
		    "\"arguments\":{\"a\": 1},\"requestState\":\"s\","
		    "\"inputResponses\":{\"k\":{\"action\":\"accept\"}},"
		    "\"_meta\" : {\"progressToken\":7,\"traceparent\":"
		    "\"00-a-b-01\",\"io.modelcontextprotocol/protocolVersion\":"
		    "\"" L "\",\"io.modelcontextprotocol/clientInfo\":"
		    "{\"name\":\"c\"},\"com.example/k\":1} }";
		char	*t;
		size_t	 tlen;
		json_t	*back, *again = proto_modern_params(p, caps, info,
			    "info");

		t = params_text(text, sizeof(text) - 1, p, caps,
		    info, "info", &tlen);
		assert_non_null(t);
		assert_int_equal(strlen(t), tlen);
		assert_true(strncmp(t, "{ \"name\" : \"t\", \"arguments\":"
		    "{\"a\": 1}", 28) == 0);
		back = load(t);
		if (!json_equal(back, again))
			fail_msg("text gave %s", t);
		json_decref(back);
		json_decref(again);
		free(t);
		/* a _meta left empty by the strip is gone from the tree:
		 * this hop's alone replaces the text's */
		{
			static const char t2[] = "{\"name\":\"t\",\"_meta\":"
			    "{\"io.modelcontextprotocol/protocolVersion\":\""
			    M "\"}}";
			json_t *p2 = load("{\"name\":\"t\"}");

			again = proto_modern_params(p2, NULL, info, NULL);
			t = params_text(t2, sizeof(t2) - 1, p2,
			    NULL, info, NULL, &tlen);
			assert_non_null(t);
			back = load(t);
			if (!json_equal(back, again))
				fail_msg("text gave %s", t);
			json_decref(back);
			json_decref(again);
			json_decref(p2);
			free(t);
		}
		/* no _meta in the text: the tree must be used */
		assert_null(params_text("{\"name\":\"t\"}", 12,
		    p, caps, info, NULL, &tlen));
		assert_null(params_text("{\"name\":", 8, p,
		    caps, info, NULL, &tlen));
	}

	assert_string_equal(proto_modern_name("tools/call", p), "t");
	json_object_set_new(p, "uri", json_string("file:///x"));
	assert_string_equal(proto_modern_name("resources/read", p),
	    "file:///x");
	assert_null(proto_modern_name("tools/list", p));
	json_decref(p);
	json_decref(caps);
	json_decref(info);
}

/* a header lookup over a {"Name": value} object, names case-blind */
static const char *
hdr_lookup(void *arg, const char *name)
{
	const char	*k;
	json_t		*v;

	json_object_foreach((json_t *)arg, k, v)
		if (strcasecmp(k, name) == 0)
			return json_string_value(v);
	return NULL;
}

/* the Mcp-Param-* vmcpd sends pass its own check */
static void
test_param_headers_build(void **state)
{
	struct proto_reqhdrs	 h;
	struct proto_verdict	 v;
	json_t			*schema, *map, *args, *out, *want;
	char			 why[256];

	(void)state;
	schema = load("{\"type\":\"object\",\"properties\":{"
	    "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
	    "\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N\"},"
	    "\"on\":{\"type\":\"boolean\",\"x-mcp-header\":\"On\"},"
	    "\"q\":{\"type\":\"string\",\"x-mcp-header\":\"Q\"},"
	    "\"z\":{\"type\":\"string\",\"x-mcp-header\":\"Z\"}}}");
	assert_int_equal(proto_x_mcp_headers(schema, &map, why, sizeof(why)),
	    0);
	args = load("{\"region\":\"us-west\",\"n\":-42,\"on\":false,"
	    "\"q\":\"caf\\u00e9\",\"z\":null}");
	assert_int_equal(proto_param_headers_build(map, args, &out), 0);
	want = load("{\"Region\":\"us-west\",\"N\":\"-42\",\"On\":\"false\","
	    "\"Q\":\"=?base64?Y2Fmw6k=?=\"}");
	if (!json_equal(out, want))
		fail_msg("got %s", json_dumps(out, JSON_SORT_KEYS));
	memset(&h, 0, sizeof(h));
	h.rh_param = hdr_lookup;
	h.rh_arg = out;
	assert_int_equal(proto_param_headers_check(map, args, &h, &v), 0);
	proto_verdict_clear(&v);
	json_decref(want);
	json_decref(out);
	json_decref(args);
	json_decref(map);
	json_decref(schema);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_classify_version_data),
		cmocka_unit_test(test_classify_messages),
		cmocka_unit_test(test_hdr_decode),
		cmocka_unit_test(test_hdr_encode),
		cmocka_unit_test(test_b64),
		cmocka_unit_test(test_x_mcp_headers_good),
		cmocka_unit_test(test_x_mcp_headers_bad),
		cmocka_unit_test(test_x_mcp_headers_deep),
		cmocka_unit_test(test_param_headers),
		cmocka_unit_test(test_cursor_roundtrip),
		cmocka_unit_test(test_cursor_bad),
		cmocka_unit_test(test_cursor_resume),
		cmocka_unit_test(test_cursor_paging),
		cmocka_unit_test(test_meta_reserved),
		cmocka_unit_test(test_meta_text_dropped),
		cmocka_unit_test(test_meta_strip),
		cmocka_unit_test(test_meta_strip_text),
		cmocka_unit_test(test_modern_result),
		cmocka_unit_test(test_probe_outcome),
		cmocka_unit_test(test_modern_params),
		cmocka_unit_test(test_param_headers_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
