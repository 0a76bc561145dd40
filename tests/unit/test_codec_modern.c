/*
 * modern.c's client codec (modern_codec, 2026-07-28) on its own, with a
 * fake upstream: a request started on a parsed tools/call gets its
 * backend's answers (struct upstream_result, from either revision, as a
 * tree and as text) through rc_cbs->uc_done, and the HTTP reply
 * functions are faked to record what the client gets.  Also rc_error,
 * rc_limited and the params each backend revision gets (uc_params).
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
#include "proto/meta.h"
#include "shared/config.h"
#include "shared/link_rec.h"
#include "shared/seal.h"
#include "worker/auth/auth.h"
#include "worker/auth/ratelimit.h"
#include "worker/link/link.h"
#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"
#include "worker/pipeline/pipeline.h"
#include "worker/process/process.h"
#include "worker/process/request.h"
#include "worker/request/modern_req.h"
#include "worker/upstream/upstream_result.h"

#include "codec_fake.h"

extern const struct request_codec modern_codec;

#define SI	MCP_META_SERVER_INFO

static struct config	conf;
static struct worker	w;
static int		destroyed;

static void
mreq_destroy(struct request *r)
{
	struct mreq *m = (struct mreq *)r;

	pipeline_clear(&m->m_r);
	free(m);
	destroyed++;
}

/* a 2026-07-28 tools/call (or method), started as modern_viewed() does */
static struct mreq *
mreq_new(const char *method, const char *params)
{
	char			 body[2048];
	struct jsonrpc_msg	 msg;
	struct mreq		*m;
	json_t			*meta;

	(void)snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":42,"
	    "\"method\":\"%s\",\"params\":%s}", method, params);
	assert_int_equal(jsonrpc_parse(body, strlen(body), &msg, NULL), 0);
	assert_non_null(m = calloc(1, sizeof(*m)));
	conf.cf_name = "vmcpd-test";
	w.w_conf = &conf;
	fake_reset();
	destroyed = 0;
	request_start(&m->m_r, &w, FAKE_REQ, &msg, mreq_destroy);
	meta = json_object_get(m->m_r.r_msg.jm_params, "_meta");
	m->m_r.r_caps = json_incref(json_object_get(meta,
	    MCP_META_CLIENT_CAPABILITIES));
	return m;
}

#define CALL_P	"{\"name\":\"echo\",\"arguments\":{\"x\":1},\"_meta\":{" \
	"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}}"

/* the backend's response as a tree, passed as uc_done gets it */
#define done_tree(m, era, st, resp) \
	fake_done_tree(modern_codec.rc_cbs, (m), (era), (st), (resp))

/* the backend's result as text (the fast path) */
static void
done_text(struct mreq *m, enum proto_era era, const char *result)
{
	struct upstream_result ur;

	memset(&ur, 0, sizeof(ur));
	ur.ur_status = UPSTREAM_COMPLETE;
	ur.ur_era = era;
	ur.ur_kind = "result";
	ur.ur_text = result;
	ur.ur_len = strlen(result);
	modern_codec.rc_cbs->uc_done(m, &ur);
}

static json_t *
expect_result(void)
{
	json_t *res;

	assert_int_equal(fake.f_replies, 1);
	assert_int_equal(fake.f_status, 200);
	assert_true(fake.f_close_cleared);
	assert_int_equal(destroyed, 1);
	assert_int_equal(json_integer_value(json_object_get(fake.f_body,
	    "id")), 42);
	assert_null(json_object_get(fake.f_body, "error"));
	assert_non_null(res = json_object_get(fake.f_body, "result"));
	return res;
}

static json_t *
expect_error(int status, int code)
{
	json_t *e;

	assert_int_equal(fake.f_replies, 1);
	assert_int_equal(fake.f_status, status);
	assert_int_equal(destroyed, 1);
	assert_int_equal(json_integer_value(json_object_get(fake.f_body,
	    "id")), 42);
	assert_null(json_object_get(fake.f_body, "result"));
	assert_non_null(e = json_object_get(fake.f_body, "error"));
	assert_int_equal(json_integer_value(json_object_get(e, "code")), code);
	return e;
}

static void
expect_server_info(json_t *res)
{
	json_t *si;

	si = json_object_get(json_object_get(res, "_meta"), SI);
	assert_string_equal(json_string_value(json_object_get(si, "name")),
	    "vmcpd-test");
}

#define LEG_RESULT "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":" \
	"[{\"type\":\"text\",\"text\":\"hi\"}],\"_meta\":{\"" SI "\":" \
	"{\"name\":\"backend\",\"version\":\"1\"},\"" \
	MCP_META_PROTOCOL_VERSION "\":\"2025-11-25\",\"mine\":7}}}"

/* a 2025-11-25 backend's result: complete, vmcpd's serverInfo, the
 * backend's reserved _meta keys gone, its own kept */
static void
test_modern_legacy_complete(void **state)
{
	struct mreq	*m;
	json_t		*res, *meta;

	(void)state;
	m = mreq_new("tools/call", CALL_P);
	done_tree(m, PROTO_ERA_LEGACY, UPSTREAM_COMPLETE, LEG_RESULT);
	res = expect_result();
	assert_string_equal(json_string_value(json_object_get(res,
	    "resultType")), "complete");
	expect_server_info(res);
	meta = json_object_get(res, "_meta");
	assert_null(json_object_get(meta, MCP_META_PROTOCOL_VERSION));
	assert_int_equal(json_integer_value(json_object_get(meta, "mine")), 7);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "content"), 0), "text")), "hi");
	/* tools/call is not cacheable: no cache hints */
	assert_null(json_object_get(res, "ttlMs"));
	assert_null(json_object_get(res, "cacheScope"));
	fake_reset();
}

/* the text fast path renders what the tree path does */
static void
test_modern_text_equals_tree(void **state)
{
	static const char *const results[] = {
		"{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],"
		    "\"_meta\":{\"" SI "\":{\"name\":\"b\"},\""
		    MCP_META_PROTOCOL_VERSION "\":\"2026-07-28\",\"k\":1}}",
		"{\"content\":[],\"isError\":true}",
		"{\"resultType\":\"complete\",\"ttlMs\":5,\"cacheScope\":"
		    "\"private\",\"content\":[]}",
		"{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":"
		    "{\"method\":\"roots/list\"}},\"requestState\":\"s\"}",
	};
	enum proto_era	 eras[] = { PROTO_ERA_LEGACY, PROTO_ERA_MODERN };
	json_t		*text, *tree;
	char		 resp[1024];
	size_t		 i, e;
	struct mreq	*m;

	(void)state;
	for (e = 0; e < 2; e++)
		for (i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
			/* a 2025-11-25 backend has no input_required */
			if (eras[e] == PROTO_ERA_LEGACY && i == 3)
				continue;
			m = mreq_new("tools/call", CALL_P);
			done_text(m, eras[e], results[i]);
			assert_int_equal(fake.f_text_replies, 1);
			text = json_incref(expect_result());
			fake_reset();
			(void)snprintf(resp, sizeof(resp), "{\"jsonrpc\":"
			    "\"2.0\",\"id\":9,\"result\":%s}", results[i]);
			m = mreq_new("tools/call", CALL_P);
			done_tree(m, eras[e], UPSTREAM_COMPLETE, resp);
			assert_int_equal(fake.f_text_replies, 0);
			tree = expect_result();
			if (!json_equal(text, tree)) {
				char *a = json_dumps(text, JSON_SORT_KEYS);
				char *b = json_dumps(tree, JSON_SORT_KEYS);

				fail_msg("era %zu row %zu: text %s, tree %s",
				    e, i, a, b);
			}
			json_decref(text);
			fake_reset();
		}
}

/* a 2026-07-28 backend's input_required goes on as it is */
static void
test_modern_input_required(void **state)
{
	struct mreq	*m;
	json_t		*res;

	(void)state;
	m = mreq_new("tools/call", CALL_P);
	done_tree(m, PROTO_ERA_MODERN, UPSTREAM_INPUT_REQUIRED,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"resultType\":"
	    "\"input_required\",\"inputRequests\":{\"r1\":{\"method\":"
	    "\"elicitation/create\",\"params\":{\"message\":\"m\"}}},"
	    "\"requestState\":\"opaque-\\u00e9\"}}");
	res = expect_result();
	assert_string_equal(json_string_value(json_object_get(res,
	    "resultType")), "input_required");
	assert_string_equal(json_string_value(json_object_get(res,
	    "requestState")), "opaque-\xc3\xa9");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(res, "inputRequests"), "r1"), "method")),
	    "elicitation/create");
	expect_server_info(res);
	fake_reset();
}

/* a 2026-07-28 backend's cache hints are its own: vmcpd's replace them */
static void
test_modern_modern_hints_dropped(void **state)
{
	struct mreq	*m;
	json_t		*res;

	(void)state;
	m = mreq_new("tools/call", CALL_P);
	done_tree(m, PROTO_ERA_MODERN, UPSTREAM_COMPLETE,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"resultType\":"
	    "\"complete\",\"ttlMs\":60000,\"cacheScope\":\"public\","
	    "\"content\":[]}}");
	res = expect_result();
	assert_null(json_object_get(res, "ttlMs"));
	assert_null(json_object_get(res, "cacheScope"));
	fake_reset();
}

struct err_row {
	enum proto_era	 e_era;
	const char	*e_response;
	int		 e_status;
	int		 e_code;
	const char	*e_msg;		/* a part of the message */
	int		 e_data;	/* data passed on */
};

/* the backend's errors as the client gets them */
static void
test_modern_errors(void **state)
{
	static const struct err_row rows[] = {
		/* 2026-07-28 has no -32002: -32602 */
		{ PROTO_ERA_LEGACY, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32002,\"message\":\"Resource not found\","
		    "\"data\":{\"uri\":\"x:/a\"}}}", 200, JSONRPC_INVALID_PARAMS,
		    "Resource not found", 1 },
		{ PROTO_ERA_MODERN, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32002,\"message\":\"gone\"}}", 200,
		    JSONRPC_INVALID_PARAMS, "gone", 0 },
		/* the client's capabilities were mirrored: its own 400 */
		{ PROTO_ERA_MODERN, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32021,\"message\":\"need it\",\"data\":"
		    "{\"requiredCapabilities\":{\"sampling\":{}}}}}", 400,
		    MCP_ERR_MISSING_CAPABILITY, "need it", 1 },
		/* vmcpd's own request refused: vmcpd's fault, named */
		{ PROTO_ERA_MODERN, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32020,\"message\":\"Mcp-Name mismatch\"}}", 200,
		    JSONRPC_INTERNAL_ERROR, "backend alpha refused vmcpd's "
		    "request: Mcp-Name mismatch", 0 },
		{ PROTO_ERA_MODERN, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32022,\"message\":\"Unsupported\"}}", 200,
		    JSONRPC_INTERNAL_ERROR, "backend alpha refused", 0 },
		/* other errors pass on */
		{ PROTO_ERA_MODERN, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32602,\"message\":\"bad x\",\"data\":1}}", 200,
		    JSONRPC_INVALID_PARAMS, "bad x", 1 },
		{ PROTO_ERA_LEGACY, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
		    "{\"code\":-32601,\"message\":\"nope\"}}", 200,
		    JSONRPC_METHOD_NOT_FOUND, "nope", 0 },
		/* no result at all */
		{ PROTO_ERA_LEGACY, "{\"jsonrpc\":\"2.0\",\"id\":9}", 200,
		    JSONRPC_INTERNAL_ERROR, "the backend sent no result", 0 },
	};
	struct config_backend	 be;
	struct mreq		*m;
	json_t			*e;
	size_t			 i;

	(void)state;
	memset(&be, 0, sizeof(be));
	be.cb_name = "alpha";
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		m = mreq_new("tools/call", CALL_P);
		m->m_r.r_be = &be;
		done_tree(m, rows[i].e_era, UPSTREAM_ERROR,
		    rows[i].e_response);
		e = expect_error(rows[i].e_status, rows[i].e_code);
		if (strstr(json_string_value(json_object_get(e, "message")),
		    rows[i].e_msg) == NULL)
			fail_msg("row %zu: message %s", i, json_string_value(
			    json_object_get(e, "message")));
		assert_int_equal(json_object_get(e, "data") != NULL,
		    rows[i].e_data);
		fake_reset();
	}
}

/* no answer from the backend: -32603 with why, for either revision */
static void
test_modern_failed(void **state)
{
	enum proto_era	 eras[] = { PROTO_ERA_LEGACY, PROTO_ERA_MODERN };
	struct mreq	*m;
	json_t		*e;
	size_t		 i;

	(void)state;
	for (i = 0; i < 2; i++) {
		m = mreq_new("tools/call", CALL_P);
		done_tree(m, eras[i], UPSTREAM_FAILED, NULL);
		e = expect_error(200, JSONRPC_INTERNAL_ERROR);
		assert_string_equal(json_string_value(json_object_get(e,
		    "message")), "Internal error: the backend went away");
		fake_reset();
	}
}

/* rc_error: the status as given, -32002 as -32602; rc_limited: 429 with
 * the retry at HTTP 200 */
static void
test_modern_codec_errors(void **state)
{
	struct mreq	*m;
	json_t		*e;

	(void)state;
	m = mreq_new("tools/call", CALL_P);
	modern_codec.rc_error(&m->m_r, 403, -32600, "Forbidden: no",
	    json_pack("{s:s}", "why", "policy"));
	e = expect_error(403, -32600);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
	    "Forbidden: no");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    e, "data"), "why")), "policy");
	assert_null(fake.f_session);
	fake_reset();

	m = mreq_new("resources/read", "{\"uri\":\"x:/a\"}");
	modern_codec.rc_error(&m->m_r, 200, MCP_ERR_RESOURCE_NOT_FOUND,
	    "Resource not found", NULL);
	(void)expect_error(200, JSONRPC_INVALID_PARAMS);
	fake_reset();

	m = mreq_new("tools/call", CALL_P);
	modern_codec.rc_limited(&m->m_r, 7);
	e = expect_error(200, RATELIMIT_CODE);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
	    RATELIMIT_MESSAGE);
	{
		json_t *want = ratelimit_data(7);

		assert_true(json_equal(json_object_get(e, "data"), want));
		json_decref(want);
	}
	fake_reset();
}

/* an answer on the request's SSE stream once progress opened it */
static void
test_modern_streamed(void **state)
{
	struct mreq	*m;
	json_t		*note;
	char		 why[128];

	(void)state;
	m = mreq_new("tools/call", "{\"name\":\"echo\",\"_meta\":{"
	    "\"progressToken\":\"t\"}}");
	assert_non_null(note = json_pack("{s:s, s:s, s:{s:s, s:i}}",
	    "jsonrpc", "2.0", "method", "notifications/progress", "params",
	    "progressToken", "t", "progress", 1));
	assert_int_equal(modern_codec.rc_cbs->uc_push(m, note, NULL,
	    "2025-11-25", why, sizeof(why)), 0);
	json_decref(note);
	assert_int_equal(fake.f_sse_started, 1);
	assert_int_equal(fake.f_sse_sent, 1);
	done_text(m, PROTO_ERA_LEGACY, "{\"content\":[]}");
	assert_int_equal(fake.f_sse_sent, 2);
	assert_int_equal(fake.f_sse_ended, 1);
	assert_int_equal(fake.f_replies, 0);
	assert_int_equal(destroyed, 1);
	assert_true(json_is_string(json_object_get(json_object_get(
	    fake.f_body, "result"), "resultType")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    fake.f_body, "result"), "resultType")), "complete");
	fake_reset();
}

/* a 2025-11-25 backend asks for sampling mid-call, the client has no
 * such capability: refused, and the failed call answered 400 -32021 */
static void
test_modern_missing_capability(void **state)
{
	struct mreq	*m;
	json_t		*ask, *e;
	char		 why[128];

	(void)state;
	m = mreq_new("tools/call", CALL_P);
	assert_non_null(ask = json_pack("{s:s, s:i, s:s, s:{}}", "jsonrpc",
	    "2.0", "id", 3, "method", "sampling/createMessage", "params"));
	assert_int_equal(modern_codec.rc_cbs->uc_push(m, ask, "bs",
	    "2025-11-25", why, sizeof(why)), -1);
	json_decref(ask);
	assert_non_null(strstr(why, "sampling/createMessage"));
	done_tree(m, PROTO_ERA_LEGACY, UPSTREAM_COMPLETE,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[],"
	    "\"isError\":true}}");
	e = expect_error(400, MCP_ERR_MISSING_CAPABILITY);
	assert_non_null(json_object_get(json_object_get(json_object_get(e,
	    "data"), "requiredCapabilities"), "sampling"));
	fake_reset();
}

/* what each backend revision gets: the client's params under the
 * backend's names; a 2025-11-25 one without the 2026-07-28 envelope */
static void
test_modern_params(void **state)
{
	struct upstream_params	 up;
	struct mreq		*m;
	json_t			*p;

	(void)state;
	m = mreq_new("tools/call", "{\"name\":\"echo\",\"arguments\":"
	    "{\"x\":1},\"requestState\":\"rs\",\"inputResponses\":{\"r1\":"
	    "{\"action\":\"accept\"}},\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{\"roots\":{}},"
	    "\"io.modelcontextprotocol/logLevel\":\"debug\",\"mine\":1}}");
	assert_non_null(m->m_r.r_bparams = modern_codec.rc_route_params(
	    &m->m_r));
	json_object_set_new(m->m_r.r_bparams, "name", json_string("be_echo"));

	memset(&up, 0, sizeof(up));
	assert_int_equal(modern_codec.rc_cbs->uc_params(m, PROTO_ERA_MODERN,
	    &up), 0);
	assert_non_null(p = up.up_tree);
	assert_null(up.up_owned);
	assert_string_equal(json_string_value(json_object_get(p, "name")),
	    "be_echo");
	assert_string_equal(json_string_value(json_object_get(p,
	    "requestState")), "rs");
	assert_non_null(json_object_get(p, "inputResponses"));
	assert_ptr_equal(up.up_caps, m->m_r.r_caps);
	assert_non_null(json_object_get(up.up_caps, "roots"));
	assert_string_equal(up.up_level, "debug");
	json_decref(up.up_tree);

	memset(&up, 0, sizeof(up));
	assert_int_equal(modern_codec.rc_cbs->uc_params(m, PROTO_ERA_LEGACY,
	    &up), 0);
	assert_non_null(p = up.up_tree);
	assert_string_equal(json_string_value(json_object_get(p, "name")),
	    "be_echo");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p,
	    "arguments"), "x")), 1);
	assert_null(json_object_get(p, "requestState"));
	assert_null(json_object_get(p, "inputResponses"));
	assert_null(json_object_get(json_object_get(p, "_meta"),
	    MCP_META_PROTOCOL_VERSION));
	assert_null(json_object_get(json_object_get(p, "_meta"),
	    MCP_META_CLIENT_CAPABILITIES));
	json_decref(up.up_tree);

	modern_codec.rc_error(&m->m_r, 200, JSONRPC_INTERNAL_ERROR, "x", NULL);
	fake_reset();
}

/*
 * rc_consent with URL mode declared in the request: input_required, a
 * URL-mode elicitation/create (no elicitationId) and a sealed
 * requestState; rc_consent_answer on its retry: accepted (the state and
 * the answers taken off the params), declined (a tool error), altered
 * (-32602); no URL mode on another method: 400 -32021
 */
#define CONSENT_ID	"vmcpd-e-0123456789abcdef0123456789abcdef"
#define CONSENT_URL	"https://v.example/oauth/start?consent=" CONSENT_ID
#define URL_CAPS	"\"io.modelcontextprotocol/clientCapabilities\":" \
	"{\"elicitation\":{\"url\":{}}}"

static struct config_backend	 consent_be = { .cb_name = "github" };
static struct principal		 consent_p = { .p_scope = "scope-a" };

static struct mreq *
consent_req(const char *method, const char *params)
{
	struct mreq *m;

	m = mreq_new(method, params);
	m->m_r.r_be = &consent_be;
	m->m_r.r_principal = &consent_p;
	return m;
}

/* a retry of the call with state and answer action */
static struct mreq *
consent_retry(const char *state, const char *action)
{
	char body[LINK_STATE_MAX + 512];

	(void)snprintf(body, sizeof(body), "{\"name\":\"echo\","
	    "\"requestState\":\"%s\",\"inputResponses\":{\"" LINK_INPUT_KEY
	    "\":{\"action\":\"%s\"}},\"_meta\":{" URL_CAPS "}}", state,
	    action);
	return consent_req("tools/call", body);
}

static void
test_modern_consent(void **state)
{
	struct mreq	*m;
	json_t		*res, *ir, *e;
	char		 st[LINK_STATE_MAX], id[CONSENT_ID_LEN + 1];
	int		 round = 0;

	(void)state;
	assert_int_equal(seal_key_generate(), 0);
	m = consent_req("tools/call", "{\"name\":\"echo\",\"_meta\":{"
	    URL_CAPS "}}");
	modern_codec.rc_consent(&m->m_r, CONSENT_ID, CONSENT_URL, 1);
	res = expect_result();
	assert_string_equal(json_string_value(json_object_get(res,
	    "resultType")), "input_required");
	ir = json_object_get(json_object_get(res, "inputRequests"),
	    LINK_INPUT_KEY);
	assert_string_equal(json_string_value(json_object_get(ir, "method")),
	    "elicitation/create");
	ir = json_object_get(ir, "params");
	assert_string_equal(json_string_value(json_object_get(ir, "mode")),
	    "url");
	assert_string_equal(json_string_value(json_object_get(ir, "url")),
	    CONSENT_URL);
	assert_null(json_object_get(ir, "elicitationId"));
	assert_true(link_state_ours(json_string_value(json_object_get(res,
	    "requestState"))));
	(void)snprintf(st, sizeof(st), "%s", json_string_value(
	    json_object_get(res, "requestState")));
	fake_reset();

	/* accepted: not answered here, the retry's envelope gone */
	m = consent_retry(st, "accept");
	assert_int_equal(modern_codec.rc_consent_answer(&m->m_r, id,
	    sizeof(id), &round), LINK_ANSWER_ACCEPTED);
	assert_string_equal(id, CONSENT_ID);
	assert_int_equal(round, 1);
	assert_int_equal(fake.f_replies, 0);
	assert_null(json_object_get(m->m_r.r_msg.jm_params, "requestState"));
	assert_null(json_object_get(m->m_r.r_msg.jm_params,
	    "inputResponses"));
	(void)request_finalize(&m->m_r, __func__);
	fake_reset();

	m = consent_retry(st, "decline");
	assert_int_equal(modern_codec.rc_consent_answer(&m->m_r, id,
	    sizeof(id), &round), LINK_ANSWER_DONE);
	res = expect_result();
	assert_true(json_is_true(json_object_get(res, "isError")));
	fake_reset();

	st[strlen(st) - 1] = st[strlen(st) - 1] == '0' ? '1' : '0';
	m = consent_retry(st, "accept");
	assert_int_equal(modern_codec.rc_consent_answer(&m->m_r, id,
	    sizeof(id), &round), LINK_ANSWER_DONE);
	e = expect_error(200, JSONRPC_INVALID_PARAMS);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
	    "invalid or expired requestState");
	fake_reset();

	/* another's state is no answer at all: it goes to the backend */
	m = consent_retry("backend-state", "accept");
	assert_int_equal(modern_codec.rc_consent_answer(&m->m_r, id,
	    sizeof(id), &round), LINK_ANSWER_NONE);
	(void)request_finalize(&m->m_r, __func__);
	fake_reset();

	m = consent_req("resources/read", "{\"uri\":\"gh://x\",\"_meta\":{"
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}");
	modern_codec.rc_consent(&m->m_r, CONSENT_ID, CONSENT_URL, 1);
	e = expect_error(400, MCP_ERR_MISSING_CAPABILITY);
	assert_non_null(json_object_get(json_object_get(json_object_get(
	    json_object_get(e, "data"), "requiredCapabilities"),
	    "elicitation"), "url"));
	assert_non_null(strstr(json_string_value(json_object_get(e,
	    "message")), CONSENT_URL));
	fake_reset();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modern_legacy_complete),
		cmocka_unit_test(test_modern_text_equals_tree),
		cmocka_unit_test(test_modern_input_required),
		cmocka_unit_test(test_modern_modern_hints_dropped),
		cmocka_unit_test(test_modern_errors),
		cmocka_unit_test(test_modern_failed),
		cmocka_unit_test(test_modern_codec_errors),
		cmocka_unit_test(test_modern_streamed),
		cmocka_unit_test(test_modern_missing_capability),
		cmocka_unit_test(test_modern_params),
		cmocka_unit_test(test_modern_consent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
