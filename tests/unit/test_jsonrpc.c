/*
 * proto/jsonrpc.c and proto/headers.c: message classification, every
 * rejection with its code and message, builders, header rules.
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
#include "proto/headers.h"

#define SZ ((size_t)-1)	/* expect_parse_error(): use strlen() */
#define BATCH_MSG "batches are not supported (JSON-RPC batching was " \
	"removed in MCP 2025-06-18)"

static int
parse_str(const char *s, struct jsonrpc_msg *m, struct jsonrpc_err *e)
{
	return jsonrpc_parse(s, strlen(s), m, e);
}

/* parse must fail with exactly this code, status 400 and message */
static void
expect_reject(const char *s, int code, const char *msg)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	if (parse_str(s, &m, &e) != -1)
		fail_msg("accepted: %s", s);
	assert_int_equal(e.je_code, code);
	assert_int_equal(e.je_http, 400);
	if (strcmp(e.je_msg, msg) != 0)
		fail_msg("input %s\n  got  \"%s\"\n  want \"%s\"", s, e.je_msg,
		    msg);
	assert_null(m.jm_root);
	assert_null(m.jm_id);
	assert_null(m.jm_method);
}

/* a parse error: -32700, "Parse error: <what> ... at line L column C" */
static void
expect_parse_error(const char *buf, size_t len, const char *what)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	if (len == SZ)
		len = strlen(buf);
	assert_int_equal(jsonrpc_parse(buf, len, &m, &e), -1);
	assert_int_equal(e.je_code, JSONRPC_PARSE_ERROR);
	assert_int_equal(e.je_http, 400);
	if (strncmp(e.je_msg, "Parse error: ", 13) != 0 ||
	    strstr(e.je_msg, " at line ") == NULL ||
	    strstr(e.je_msg, " column ") == NULL ||
	    (what != NULL && strstr(e.je_msg, what) == NULL))
		fail_msg("unexpected message \"%s\" (want \"%s\")", e.je_msg,
		    what != NULL ? what : "");
	assert_null(m.jm_root);
}

static void
test_request(void **state)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	(void)state;
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}", &m, &e),
	    0);
	assert_int_equal(m.jm_kind, JSONRPC_REQUEST);
	assert_non_null(m.jm_root);
	assert_true(json_is_integer(m.jm_id));
	assert_int_equal(json_integer_value(m.jm_id), 7);
	assert_string_equal(m.jm_method, "tools/call");
	assert_true(json_is_object(m.jm_params));
	assert_string_equal(json_string_value(json_object_get(m.jm_params,
	    "name")), "x");
	assert_null(m.jm_result);
	assert_null(m.jm_error);
	jsonrpc_msg_clear(&m);
	assert_null(m.jm_root);
	assert_null(m.jm_method);

	/* string id, no params, whitespace all around */
	assert_int_equal(parse_str(" \n\t{ \"method\" : \"ping\", \"id\" : "
	    "\"abc-1\", \"jsonrpc\" : \"2.0\" }\r\n ", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_REQUEST);
	assert_string_equal(json_string_value(m.jm_id), "abc-1");
	assert_string_equal(m.jm_method, "ping");
	assert_null(m.jm_params);
	jsonrpc_msg_clear(&m);

	/* empty string id is a string; unknown members are ignored */
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":\"\","
	    "\"method\":\"m\",\"x-extra\":[1,2]}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_REQUEST);
	assert_string_equal(json_string_value(m.jm_id), "");
	jsonrpc_msg_clear(&m);

	/* non-ASCII method and params */
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"caf\\u00e9\",\"params\":{\"k\":\"\xe2\x82\xac\"}}",
	    &m, &e), 0);
	assert_string_equal(m.jm_method, "caf\xc3\xa9");
	jsonrpc_msg_clear(&m);
}

static void
test_ids(void **state)
{
	static const struct {
		const char	*text;
		json_int_t	 value;
	} ints[] = {
		{ "0", 0 },
		{ "-1", -1 },
		{ "-42", -42 },
		{ "2147483648", 2147483648LL },
		{ "9007199254740993", 9007199254740993LL },
		{ "9223372036854775807", INT64_MAX },
		{ "-9223372036854775808", INT64_MIN },
	};
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;
	char			buf[256];
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"method\":\"m\"}", ints[i].text);
		assert_int_equal(parse_str(buf, &m, &e), 0);
		assert_true(json_is_integer(m.jm_id));
		if (json_integer_value(m.jm_id) != ints[i].value)
			fail_msg("id %s parsed wrong", ints[i].text);
		jsonrpc_msg_clear(&m);
	}

	/* too big for json_int_t: jansson refuses it as a parse error */
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775808,"
	    "\"method\":\"m\"}", SZ, "too big");
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"id\":"
	    "-99999999999999999999,\"method\":\"m\"}", SZ, "too big");

	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not null");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not a float");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not a float");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not a float");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not a boolean");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not an object");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not an array");
	/* responses: null only for errors */
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not null");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":2.5,\"result\":{}}",
	    JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not a float");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":false,\"error\":"
	    "{\"code\":1,\"message\":\"m\"}}", JSONRPC_INVALID_REQUEST,
	    "\"id\" must be a string or an integer, not a boolean");
}

static void
test_notification(void **state)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	(void)state;
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_NOTIFICATION);
	assert_null(m.jm_id);
	assert_string_equal(m.jm_method, "notifications/initialized");
	assert_null(m.jm_params);
	jsonrpc_msg_clear(&m);

	assert_int_equal(parse_str("{\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":3},\"jsonrpc\":\"2.0\"}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_NOTIFICATION);
	assert_null(m.jm_id);
	assert_int_equal(json_integer_value(json_object_get(m.jm_params,
	    "requestId")), 3);
	jsonrpc_msg_clear(&m);
}

static void
test_response(void **state)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	(void)state;
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":\"s1\","
	    "\"result\":{\"tools\":[]}}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_RESPONSE);
	assert_string_equal(json_string_value(m.jm_id), "s1");
	assert_true(json_is_array(json_object_get(m.jm_result, "tools")));
	assert_null(m.jm_error);
	assert_null(m.jm_method);
	jsonrpc_msg_clear(&m);

	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":-5,"
	    "\"result\":{}}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_RESPONSE);
	assert_int_equal(json_integer_value(m.jm_id), -5);
	jsonrpc_msg_clear(&m);
}

static void
test_error_response(void **state)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;

	(void)state;
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":"
	    "{\"code\":-32601,\"message\":\"Method not found\",\"data\":"
	    "[1]}}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_ERROR);
	assert_int_equal(json_integer_value(m.jm_id), 3);
	assert_int_equal(json_integer_value(json_object_get(m.jm_error,
	    "code")), -32601);
	assert_null(m.jm_result);
	jsonrpc_msg_clear(&m);

	/* id null: the peer could not read the id; no id at all: 2025-11-25 */
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32700,\"message\":\"x\"}}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_ERROR);
	assert_null(m.jm_id);
	assert_non_null(m.jm_error);
	jsonrpc_msg_clear(&m);
	assert_int_equal(parse_str("{\"jsonrpc\":\"2.0\",\"error\":"
	    "{\"code\":-32000,\"message\":\"\"}}", &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_ERROR);
	assert_null(m.jm_id);
	jsonrpc_msg_clear(&m);

	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}",
	    JSONRPC_INVALID_REQUEST, "\"error\" must be an object with an "
	    "integer \"code\" and a string \"message\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
	    "{\"message\":\"m\"}}", JSONRPC_INVALID_REQUEST,
	    "\"error\" must be an object with an integer \"code\" and a "
	    "string \"message\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
	    "{\"code\":1.5,\"message\":\"m\"}}", JSONRPC_INVALID_REQUEST,
	    "\"error\" must be an object with an integer \"code\" and a "
	    "string \"message\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
	    "{\"code\":\"-32600\",\"message\":\"m\"}}",
	    JSONRPC_INVALID_REQUEST, "\"error\" must be an object with an "
	    "integer \"code\" and a string \"message\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
	    "{\"code\":1}}", JSONRPC_INVALID_REQUEST,
	    "\"error\" must be an object with an integer \"code\" and a "
	    "string \"message\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
	    "{\"code\":1,\"message\":null}}", JSONRPC_INVALID_REQUEST,
	    "\"error\" must be an object with an integer \"code\" and a "
	    "string \"message\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":null}",
	    JSONRPC_INVALID_REQUEST, "\"error\" must be an object with an "
	    "integer \"code\" and a string \"message\"");
}

static void
test_envelope_rejects(void **state)
{
	(void)state;
	/* "\u0000" is valid JSON, but not in what is read as a C string */
	expect_reject("{\"jsonrpc\":\"2.0\",\"method\":\"a\\u0000b\"}",
	    JSONRPC_INVALID_REQUEST, "\"method\" must not contain \"\\u0000\"");
	expect_reject("{\"jsonrpc\":\"2.0\\u0000\",\"method\":\"a\"}",
	    JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":\"1\\u0000\",\"method\":"
	    "\"a\"}", JSONRPC_INVALID_REQUEST,
	    "a string \"id\" must not contain \"\\u0000\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":\"\\u0000\",\"result\":{}}",
	    JSONRPC_INVALID_REQUEST,
	    "a string \"id\" must not contain \"\\u0000\"");
	expect_reject("{\"id\":1,\"method\":\"m\"}", JSONRPC_INVALID_REQUEST,
	    "\"jsonrpc\" must be \"2.0\"");
	expect_reject("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	expect_reject("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	expect_reject("{\"jsonrpc\":\"2.0 \",\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	expect_reject("{\"jsonrpc\":null,\"method\":\"m\"}",
	    JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");

	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
	    JSONRPC_INVALID_REQUEST, "\"method\" must be a non-empty string");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
	    JSONRPC_INVALID_REQUEST, "\"method\" must be a non-empty string");
	expect_reject("{\"jsonrpc\":\"2.0\",\"method\":null}",
	    JSONRPC_INVALID_REQUEST, "\"method\" must be a non-empty string");
	expect_reject("{\"jsonrpc\":\"2.0\",\"method\":[\"a\"]}",
	    JSONRPC_INVALID_REQUEST, "\"method\" must be a non-empty string");

	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
	    "\"params\":[1,2]}", JSONRPC_INVALID_REQUEST,
	    "\"params\" must be an object, not an array");
	expect_reject("{\"jsonrpc\":\"2.0\",\"method\":\"m\","
	    "\"params\":null}", JSONRPC_INVALID_REQUEST,
	    "\"params\" must be an object, not null");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
	    "\"params\":\"x\"}", JSONRPC_INVALID_REQUEST,
	    "\"params\" must be an object, not a string");

	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},"
	    "\"error\":{\"code\":1,\"message\":\"m\"}}",
	    JSONRPC_INVALID_REQUEST,
	    "a message cannot have both \"result\" and \"error\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
	    "\"result\":{}}", JSONRPC_INVALID_REQUEST,
	    "a message cannot have both \"method\" and \"result\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
	    "\"error\":{\"code\":1,\"message\":\"m\"}}",
	    JSONRPC_INVALID_REQUEST,
	    "a message cannot have both \"method\" and \"error\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"result\":{}}",
	    JSONRPC_INVALID_REQUEST, "a response must have an \"id\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}",
	    JSONRPC_INVALID_REQUEST, "\"result\" must be an object, not an "
	    "array");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}",
	    JSONRPC_INVALID_REQUEST, "\"result\" must be an object, not null");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},"
	    "\"params\":{}}", JSONRPC_INVALID_REQUEST,
	    "a response cannot have \"params\"");
	expect_reject("{\"jsonrpc\":\"2.0\",\"id\":1}", JSONRPC_INVALID_REQUEST,
	    "a message must have \"method\", \"result\" or \"error\"");
	expect_reject("{}", JSONRPC_INVALID_REQUEST,
	    "\"jsonrpc\" must be \"2.0\"");

	expect_reject("[]", JSONRPC_INVALID_REQUEST, BATCH_MSG);
	expect_reject("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}]",
	    JSONRPC_INVALID_REQUEST, BATCH_MSG);
	expect_reject(" [1, 2] ", JSONRPC_INVALID_REQUEST, BATCH_MSG);

	expect_reject("1", JSONRPC_INVALID_REQUEST,
	    "a JSON-RPC message must be a JSON object, not an integer");
	expect_reject("\"x\"", JSONRPC_INVALID_REQUEST,
	    "a JSON-RPC message must be a JSON object, not a string");
	expect_reject("null", JSONRPC_INVALID_REQUEST,
	    "a JSON-RPC message must be a JSON object, not null");
	expect_reject("true", JSONRPC_INVALID_REQUEST,
	    "a JSON-RPC message must be a JSON object, not a boolean");
}

/* jsonrpc_params_check() on text s: 0, or -1 with this message */
static void
expect_params(const char *s, const char *msg)
{
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;
	int			rc;

	if (parse_str(s, &m, &e) != 0)
		fail_msg("not parsed: %s: %s", s, e.je_msg);
	rc = jsonrpc_params_check(&m, &e);
	jsonrpc_msg_clear(&m);
	if (msg == NULL) {
		if (rc != 0)
			fail_msg("refused: %s: %s", s, e.je_msg);
		return;
	}
	if (rc != -1)
		fail_msg("accepted: %s", s);
	assert_int_equal(e.je_code, JSONRPC_INVALID_PARAMS);
	assert_int_equal(e.je_http, 200);
	if (strcmp(e.je_msg, msg) != 0)
		fail_msg("input %s\n  got  \"%s\"\n  want \"%s\"", s, e.je_msg,
		    msg);
}

#define REQ(params) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," \
	"\"params\":" params "}"

static void
test_params_check(void **state)
{
	(void)state;
	expect_params("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	    NULL);
	expect_params(REQ("{\"name\":\"a\",\"_meta\":{\"progressToken\":\"t\"}}"),
	    NULL);
	expect_params(REQ("{\"name\":\"a\",\"_meta\":{\"progressToken\":-7}}"),
	    NULL);
	expect_params(REQ("{\"name\":\"a\",\"_meta\":7}"), NULL);
	/* a progressToken is a string or an integer (MCP progress) */
	expect_params(REQ("{\"name\":\"a\",\"_meta\":{\"progressToken\":1.5}}"),
	    "Invalid params: _meta.progressToken must be a string or an "
	    "integer, not a float");
	expect_params(REQ("{\"_meta\":{\"progressToken\":null}}"),
	    "Invalid params: _meta.progressToken must be a string or an "
	    "integer, not null");
	expect_params(REQ("{\"_meta\":{\"progressToken\":{\"a\":1}}}"),
	    "Invalid params: _meta.progressToken must be a string or an "
	    "integer, not an object");
	expect_params(REQ("{\"_meta\":{\"progressToken\":[1]}}"),
	    "Invalid params: _meta.progressToken must be a string or an "
	    "integer, not an array");
	expect_params(REQ("{\"_meta\":{\"progressToken\":true}}"),
	    "Invalid params: _meta.progressToken must be a string or an "
	    "integer, not a boolean");
	/* "\u0000" passes through in arguments and unknown members ... */
	expect_params(REQ("{\"name\":\"a\",\"arguments\":{\"m\":\"x\\u0000y\","
	    "\"name\":\"\\u0000\"},\"x\":\"\\u0000\",\"_meta\":{\"k\":\"\\u0000\"}}"),
	    NULL);
	/* ... but not where vmcpd reads a C string */
	expect_params(REQ("{\"name\":\"echo\\u0000x\"}"),
	    "Invalid params: \"name\" must not contain \"\\u0000\"");
	expect_params(REQ("{\"uri\":\"a:b\\u0000\"}"),
	    "Invalid params: \"uri\" must not contain \"\\u0000\"");
	expect_params(REQ("{\"ref\":{\"type\":\"ref/prompt\",\"name\":"
	    "\"p\\u0000\"}}"),
	    "Invalid params: \"name\" must not contain \"\\u0000\"");
	expect_params(REQ("{\"_meta\":{\"progressToken\":\"t\\u0000\"}}"),
	    "Invalid params: \"progressToken\" must not contain \"\\u0000\"");
	expect_params(REQ("{\"_meta\":{\"io.modelcontextprotocol/logLevel\":"
	    "\"debug\\u0000\"}}"), "Invalid params: "
	    "\"io.modelcontextprotocol/logLevel\" must not contain \"\\u0000\"");
}

static void
test_parse_errors(void **state)
{
	static const char nulbyte[] = "{\"jsonrpc\":\"2.0\",\"method\":\"a\0b\"}";
	static const char nulafter[] = "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\0";
	struct jsonrpc_msg	m;
	struct jsonrpc_err	e;
	char			*deep;
	size_t			 i, n;

	(void)state;
	expect_parse_error("", SZ, NULL);
	expect_parse_error(NULL, 0, NULL);
	expect_parse_error("   ", SZ, NULL);
	expect_parse_error("{", SZ, NULL);
	expect_parse_error("{\"jsonrpc\":\"2.0\",}", SZ, NULL);
	expect_parse_error("{'a':1}", SZ, NULL);
	expect_parse_error("nul", SZ, NULL);

	/* exact shape: jansson's text, then its position */
	assert_int_equal(jsonrpc_parse("{\n  \"a\" 1}", 10, &m, &e), -1);
	assert_int_equal(e.je_code, JSONRPC_PARSE_ERROR);
	assert_string_equal(e.je_msg, "Parse error: ':' expected near '1' "
	    "at line 2 column 7");

	/* trailing garbage, also a second document */
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"method\":\"m\"} x", SZ,
	    "end of file expected");
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}{}", SZ,
	    "end of file expected");

	/* duplicate keys, at the top and nested */
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"method\":\"a\","
	    "\"method\":\"b\"}", SZ, "duplicate object key");
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"method\":\"a\","
	    "\"params\":{\"x\":1,\"x\":2}}", SZ, "duplicate object key");

	/* NUL: raw in a string, raw after the object (escaped: valid) */
	expect_parse_error(nulbyte, sizeof(nulbyte) - 1, NULL);
	expect_parse_error(nulafter, sizeof(nulafter) - 1, NULL);

	/* invalid UTF-8 */
	expect_parse_error("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", SZ,
	    NULL);

	/* only len bytes are read: the rest of the buffer is not JSON */
	assert_int_equal(jsonrpc_parse("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}"
	    "GARBAGE", 30, &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_NOTIFICATION);
	jsonrpc_msg_clear(&m);

	/* nesting deeper than jansson's limit */
	n = 5000;
	deep = malloc(2 * n + 64);
	assert_non_null(deep);
	i = (size_t)sprintf(deep, "{\"jsonrpc\":\"2.0\",\"method\":\"m\","
	    "\"params\":{\"a\":");
	memset(deep + i, '[', n);
	memset(deep + i + n, ']', n);
	memcpy(deep + i + 2 * n, "}}", 2);
	expect_parse_error(deep, i + 2 * n + 2, "depth");
	/* moderate depth is fine */
	i = (size_t)sprintf(deep, "{\"jsonrpc\":\"2.0\",\"method\":\"m\","
	    "\"params\":{\"a\":");
	memset(deep + i, '[', 500);
	memset(deep + i + 500, ']', 500);
	memcpy(deep + i + 1000, "}}", 2);
	assert_int_equal(jsonrpc_parse(deep, i + 1002, &m, &e), 0);
	jsonrpc_msg_clear(&m);
	free(deep);

	/* err may be NULL; out is still cleared */
	m.jm_root = (json_t *)&m;
	assert_int_equal(jsonrpc_parse("{", 1, &m, NULL), -1);
	assert_null(m.jm_root);
	jsonrpc_msg_clear(NULL);
}

static char *
dump_str(json_t *v)
{
	size_t	 len = 0;
	char	*s;

	assert_non_null(v);
	s = jsonrpc_dump(v, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen(s));
	json_decref(v);
	return s;
}

static void
expect_dump(json_t *v, const char *want)
{
	char *s;

	s = dump_str(v);
	assert_string_equal(s, want);
	free(s);
}

static void
test_builders(void **state)
{
	json_t	*id, *sid;

	(void)state;
	id = json_integer(42);
	sid = json_string("req-1");
	assert_non_null(id);
	assert_non_null(sid);

	expect_dump(jsonrpc_error_new(id, JSONRPC_METHOD_NOT_FOUND,
	    "Method not found: foo", NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32601,"
	    "\"message\":\"Method not found: foo\"}}");
	expect_dump(jsonrpc_error_new(NULL, JSONRPC_PARSE_ERROR, NULL, NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"Parse error\"}}");
	expect_dump(jsonrpc_error_new(sid, MCP_ERR_UNSUPPORTED_VERSION,
	    "Unsupported protocol version", json_pack("{s:[s],s:s}",
	    "supported", "2026-07-28", "requested", "1999-01-01")),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"error\":{\"code\":-32022,"
	    "\"message\":\"Unsupported protocol version\",\"data\":"
	    "{\"supported\":[\"2026-07-28\"],\"requested\":\"1999-01-01\"}}}");
	/* a message that is not UTF-8 falls back to the code's name */
	expect_dump(jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS, "bad \xff",
	    NULL), "{\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32602,"
	    "\"message\":\"Invalid params\"}}");
	expect_dump(jsonrpc_error_new(id, -32099, NULL, NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32099,"
	    "\"message\":\"Error\"}}");

	expect_dump(jsonrpc_result_new(id, json_pack("{s:[]}", "tools")),
	    "{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"tools\":[]}}");
	expect_dump(jsonrpc_result_new(sid, NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"result\":{}}");
	assert_null(jsonrpc_result_new(NULL, json_object()));

	expect_dump(jsonrpc_request_new(id, "tools/list", NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/list\"}");
	expect_dump(jsonrpc_request_new(sid, "tools/call", json_pack(
	    "{s:s,s:{}}", "name", "echo", "arguments")),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{}}}");
	assert_null(jsonrpc_request_new(NULL, "m", json_object()));
	assert_null(jsonrpc_request_new(id, NULL, json_object()));

	expect_dump(jsonrpc_notification_new("notifications/initialized",
	    NULL), "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
	expect_dump(jsonrpc_notification_new("notifications/progress",
	    json_pack("{s:i,s:i}", "progressToken", 1, "progress", 50)),
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":1,\"progress\":50}}");

	/* id was borrowed every time */
	assert_int_equal(id->refcount, 1);
	assert_int_equal(sid->refcount, 1);
	json_decref(id);
	json_decref(sid);
	assert_null(jsonrpc_dump(NULL, NULL));
}

/* builder output parses back into the same kind and fields */
static void
test_roundtrip(void **state)
{
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 e;
	json_t			*id;
	char			*s;

	(void)state;
	id = json_integer(-9);
	s = dump_str(jsonrpc_request_new(id, "prompts/get",
	    json_pack("{s:s}", "name", "p")));
	assert_int_equal(parse_str(s, &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_REQUEST);
	assert_true(json_equal(m.jm_id, id));
	assert_string_equal(m.jm_method, "prompts/get");
	assert_string_equal(json_string_value(json_object_get(m.jm_params,
	    "name")), "p");
	jsonrpc_msg_clear(&m);
	free(s);

	s = dump_str(jsonrpc_notification_new("notifications/message", NULL));
	assert_int_equal(parse_str(s, &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_NOTIFICATION);
	jsonrpc_msg_clear(&m);
	free(s);

	s = dump_str(jsonrpc_result_new(id, json_pack("{s:b}", "ok", 1)));
	assert_int_equal(parse_str(s, &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_RESPONSE);
	assert_true(json_equal(m.jm_id, id));
	assert_true(json_is_true(json_object_get(m.jm_result, "ok")));
	jsonrpc_msg_clear(&m);
	free(s);

	s = dump_str(jsonrpc_error_new(id, JSONRPC_INTERNAL_ERROR, "x",
	    json_string("d")));
	assert_int_equal(parse_str(s, &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_ERROR);
	assert_int_equal(json_integer_value(json_object_get(m.jm_error,
	    "code")), JSONRPC_INTERNAL_ERROR);
	jsonrpc_msg_clear(&m);
	free(s);

	s = dump_str(jsonrpc_error_new(NULL, JSONRPC_PARSE_ERROR, "x", NULL));
	assert_int_equal(parse_str(s, &m, &e), 0);
	assert_int_equal(m.jm_kind, JSONRPC_ERROR);
	assert_null(m.jm_id);
	jsonrpc_msg_clear(&m);
	free(s);
	json_decref(id);

	/* parsed input dumps compactly in its own key order */
	assert_int_equal(parse_str("{ \"params\" : {\"z\":1, \"a\":[1, 2]},"
	    " \"method\":\"m\", \"id\":\"q\", \"jsonrpc\":\"2.0\" }", &m, &e),
	    0);
	s = jsonrpc_dump(m.jm_root, NULL);
	assert_non_null(s);
	assert_string_equal(s, "{\"params\":{\"z\":1,\"a\":[1,2]},"
	    "\"method\":\"m\",\"id\":\"q\",\"jsonrpc\":\"2.0\"}");
	free(s);
	jsonrpc_msg_clear(&m);
}

static void
test_accept(void **state)
{
	static const struct {
		const char	*accept;
		const char	*type;
		int		 want;
	} t[] = {
		{ "application/json, text/event-stream", "application/json", 1 },
		{ "application/json, text/event-stream", "text/event-stream",
		    1 },
		{ "application/json,text/event-stream", "text/event-stream", 1 },
		{ "application/json", "text/event-stream", 0 },
		{ "text/event-stream", "application/json", 0 },
		{ "*/*", "application/json", 1 },
		{ "*/*", "text/event-stream", 1 },
		{ "text/*", "text/event-stream", 1 },
		{ "text/*", "application/json", 0 },
		{ "application/*", "application/json", 1 },
		{ "APPLICATION/JSON", "application/json", 1 },
		{ "Text/Event-Stream", "text/event-stream", 1 },
		{ "application/json;q=0", "application/json", 0 },
		{ "application/json; q=0.0", "application/json", 0 },
		{ "application/json;q=0.000", "application/json", 0 },
		{ "application/json;Q=0", "application/json", 0 },
		{ "application/json;q=0.001", "application/json", 1 },
		{ "application/json;q=0.5", "application/json", 1 },
		{ "application/json;q=1", "application/json", 1 },
		{ "application/json;q=1.000", "application/json", 1 },
		/* a malformed q is ignored, not taken as zero */
		{ "application/json;q=zero", "application/json", 1 },
		/* the most specific range decides */
		{ "text/event-stream;q=0, */*", "text/event-stream", 0 },
		{ "*/*;q=0, text/event-stream", "text/event-stream", 1 },
		{ "*/*;q=0, text/event-stream", "application/json", 0 },
		{ "text/*;q=0, text/event-stream", "text/event-stream", 1 },
		{ "text/*;q=0, */*", "text/event-stream", 0 },
		{ "text/*;q=0, */*", "application/json", 1 },
		{ "application/json;q=0, application/json", "application/json",
		    1 },
		/* parameters, whitespace, empty elements */
		{ "application/json ; charset=utf-8 , text/event-stream;q=0.9",
		    "application/json", 1 },
		{ "application/json ; charset=utf-8 , text/event-stream;q=0.9",
		    "text/event-stream", 1 },
		{ "\t application/json\t,\ttext/event-stream \t",
		    "text/event-stream", 1 },
		{ ",, ,application/json,,", "application/json", 1 },
		{ "application/json;", "application/json", 1 },
		{ "application/json;charset=\"utf-8\"", "application/json", 1 },
		/* a comma inside a quoted parameter does not split */
		{ "text/html;x=\"a,b\", application/json", "application/json",
		    1 },
		{ "text/html;x=\"a,application/json\"", "application/json", 0 },
		{ "text/html;x=\"a\\\",application/json\"", "application/json",
		    0 },
		/* not matches */
		{ "application/jsonx", "application/json", 0 },
		{ "application/json-seq", "application/json", 0 },
		{ "application/vnd.api+json", "application/json", 0 },
		{ "application", "application/json", 0 },
		{ "*/json", "application/json", 0 },
		{ "json", "application/json", 0 },
		{ "application/json garbage", "application/json", 0 },
		{ "application/json;q", "application/json", 0 },
		{ "application/json;charset=\"utf-8", "application/json", 0 },
		{ "", "application/json", 0 },
		{ " ", "application/json", 0 },
		{ "application/json", "json", 0 },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (proto_accept_has(t[i].accept, t[i].type) != t[i].want)
			fail_msg("accept \"%s\" has \"%s\": want %d",
			    t[i].accept, t[i].type, t[i].want);
	assert_int_equal(proto_accept_has(NULL, "application/json"), 0);
	assert_int_equal(proto_accept_has("*/*", NULL), 0);
}

/* which of the two a client lists first (the SSE answers' choice) */
static void
test_accept_prefers(void **state)
{
	static const struct {
		const char	*accept;
		int		 want;
	} t[] = {
		{ "text/event-stream, application/json", 1 },
		{ "application/json, text/event-stream", 0 },
		{ "TEXT/EVENT-STREAM;charset=utf-8 ,application/json", 1 },
		{ "text/event-stream", 1 },
		{ "application/json", 0 },
		/* only exact, acceptable ranges count */
		{ "text/*, application/json, text/event-stream", 0 },
		{ "text/event-stream;q=0, application/json, text/event-stream",
		    0 },
		{ "*/*, text/event-stream", 1 },
		{ "text/event-streamx, application/json", 0 },
		{ "text/html;x=\"text/event-stream\", application/json", 0 },
		{ "", 0 },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (proto_accept_prefers(t[i].accept, "text/event-stream",
		    "application/json") != t[i].want)
			fail_msg("accept \"%s\" prefers SSE: want %d",
			    t[i].accept, t[i].want);
	assert_int_equal(proto_accept_prefers(NULL, "text/event-stream",
	    "application/json"), 0);
}

static void
test_content_type(void **state)
{
	static const struct {
		const char	*ct;
		int		 want;
	} t[] = {
		{ "application/json", 1 },
		{ "application/json; charset=utf-8", 1 },
		{ "application/json;charset=UTF-8", 1 },
		{ "Application/JSON", 1 },
		{ "APPLICATION/JSON; CHARSET=UTF-8", 1 },
		{ "  application/json  ", 1 },
		{ "application/json ;charset=utf-8", 1 },
		{ "\tapplication/json\t; x=y", 1 },
		{ "application/json;", 1 },
		{ "application/json-seq", 0 },
		{ "application/jsonp", 0 },
		{ "application/json x", 0 },
		{ "application/json,text/plain", 0 },
		{ "application/vnd.api+json", 0 },
		{ "text/json", 0 },
		{ "text/plain", 0 },
		{ "application/", 0 },
		{ "application", 0 },
		{ "", 0 },
		{ " ", 0 },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (proto_content_type_is_json(t[i].ct) != t[i].want)
			fail_msg("content-type \"%s\": want %d", t[i].ct,
			    t[i].want);
	assert_int_equal(proto_content_type_is_json(NULL), 0);
}

static void
test_session_id(void **state)
{
	char	buf[200];
	int	c;

	(void)state;
	assert_int_equal(proto_session_id_valid("a"), 1);
	assert_int_equal(proto_session_id_valid(
	    "0f8fad5b-d9cb-469f-a165-70867728950e"), 1);
	assert_int_equal(proto_session_id_valid("Zm9v+/=_-.~!"), 1);
	assert_int_equal(proto_session_id_valid(NULL), 0);
	assert_int_equal(proto_session_id_valid(""), 0);
	assert_int_equal(proto_session_id_valid("a b"), 0);
	assert_int_equal(proto_session_id_valid(" a"), 0);
	assert_int_equal(proto_session_id_valid("abc\t"), 0);
	assert_int_equal(proto_session_id_valid("a\x7f"), 0);
	assert_int_equal(proto_session_id_valid("a\x80"), 0);
	assert_int_equal(proto_session_id_valid("caf\xc3\xa9"), 0);
	assert_int_equal(proto_session_id_valid("a\r\nX: y"), 0);

	/* every visible ASCII character, in one id of 94 */
	for (c = 0x21; c <= 0x7e; c++)
		buf[c - 0x21] = (char)c;
	buf[0x7e - 0x21 + 1] = '\0';
	assert_int_equal(proto_session_id_valid(buf), 1);

	memset(buf, 'x', 128);
	buf[128] = '\0';
	assert_int_equal(proto_session_id_valid(buf), 1);
	buf[128] = 'x';
	buf[129] = '\0';
	assert_int_equal(proto_session_id_valid(buf), 0);
}

static void
test_versions(void **state)
{
	static const char *legacy[] = {
		"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"
	};
	char	buf[16];
	size_t	i;

	(void)state;
	for (i = 0; i < 4; i++) {
		/* echoed, as a static string, not the caller's pointer */
		snprintf(buf, sizeof(buf), "%s", legacy[i]);
		assert_string_equal(proto_legacy_version_pick(buf), legacy[i]);
		assert_ptr_not_equal(proto_legacy_version_pick(buf), buf);
		assert_int_equal(proto_version_known(legacy[i]), 1);
	}
	assert_string_equal(proto_legacy_version_pick(NULL), "2025-11-25");
	assert_string_equal(proto_legacy_version_pick(""), "2025-11-25");
	assert_string_equal(proto_legacy_version_pick("2026-07-28"),
	    "2025-11-25");
	assert_string_equal(proto_legacy_version_pick("2024-10-07"),
	    "2025-11-25");
	assert_string_equal(proto_legacy_version_pick("2025-06-18 "),
	    "2025-11-25");
	assert_string_equal(proto_legacy_version_pick("2099-01-01"),
	    "2025-11-25");
	assert_string_equal(proto_legacy_version_pick("garbage"),
	    MCP_VERSION_LEGACY);

	assert_int_equal(proto_version_known("2026-07-28"), 1);
	assert_int_equal(proto_version_known(MCP_VERSION_MODERN), 1);
	assert_int_equal(proto_version_known("2024-10-07"), 0);
	assert_int_equal(proto_version_known("2026-07-28x"), 0);
	assert_int_equal(proto_version_known("2025-11-2"), 0);
	assert_int_equal(proto_version_known("2099-01-01"), 0);
	assert_int_equal(proto_version_known(""), 0);
	assert_int_equal(proto_version_known(NULL), 0);
}

/* the one era enum, to and from the protocol version string */
static void
test_era_versions(void **state)
{
	static const struct {
		const char	*version;
		enum proto_era	 era;
	} t[] = {
		{ "2026-07-28", PROTO_ERA_MODERN },
		{ "2025-11-25", PROTO_ERA_LEGACY },
		{ "2025-06-18", PROTO_ERA_LEGACY },
		{ "2025-03-26", PROTO_ERA_LEGACY },
		{ "2024-11-05", PROTO_ERA_LEGACY },
		{ "2024-10-07", PROTO_ERA_UNKNOWN },
		{ "2026-07-28 ", PROTO_ERA_UNKNOWN },
		{ "2099-01-01", PROTO_ERA_UNKNOWN },
		{ "unknown", PROTO_ERA_UNKNOWN },
		{ "", PROTO_ERA_UNKNOWN },
		{ NULL, PROTO_ERA_UNKNOWN },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (proto_era_of_version(t[i].version) != t[i].era)
			fail_msg("case %zu (%s): got %d, want %d", i,
			    t[i].version != NULL ? t[i].version : "NULL",
			    (int)proto_era_of_version(t[i].version),
			    (int)t[i].era);
		assert_int_equal(proto_version_known(t[i].version),
		    t[i].era != PROTO_ERA_UNKNOWN);
	}
	/* what vmcpd speaks in each era, and back */
	assert_string_equal(proto_era_version(PROTO_ERA_LEGACY),
	    MCP_VERSION_LEGACY);
	assert_string_equal(proto_era_version(PROTO_ERA_MODERN),
	    MCP_VERSION_MODERN);
	assert_string_equal(proto_era_version(PROTO_ERA_UNKNOWN), "unknown");
	assert_int_equal(proto_era_of_version(proto_era_version(
	    PROTO_ERA_LEGACY)), PROTO_ERA_LEGACY);
	assert_int_equal(proto_era_of_version(proto_era_version(
	    PROTO_ERA_MODERN)), PROTO_ERA_MODERN);
	assert_int_equal(proto_era_of_version(proto_era_version(
	    PROTO_ERA_UNKNOWN)), PROTO_ERA_UNKNOWN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_notification),
		cmocka_unit_test(test_response),
		cmocka_unit_test(test_error_response),
		cmocka_unit_test(test_envelope_rejects),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_builders),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_accept_prefers),
		cmocka_unit_test(test_content_type),
		cmocka_unit_test(test_session_id),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_era_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
