/*
 * legacy.c's client codec (legacy_codec, 2025-11-25) on its own, with a
 * fake upstream: a request made as the edge makes it (legacy_req_new())
 * on a parsed tools/call gets its backend's answers (struct
 * upstream_result, from either revision, as a tree and as text) through
 * rc_cbs->uc_done, and the HTTP reply functions are faked to record
 * what the client gets.  Also rc_error, rc_limited and the params each
 * backend revision gets (uc_params).
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
#include "shared/config.h"
#include "worker/auth/ratelimit.h"
#include "worker/link/link.h"
#include "worker/pipeline/pipeline.h"
#include "worker/process/process.h"
#include "worker/request/legacy_req.h"
#include "worker/upstream/upstream_result.h"

#include "codec_fake.h"

#define SI	MCP_META_SERVER_INFO

static struct worker	w;

static struct mcp_req *
mr_new_method(const char *method, const char *params)
{
	char			 body[2048];
	struct jsonrpc_msg	 msg;
	struct mcp_req		*mr;

	(void)snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":"
	    "\"c-7\",\"method\":\"%s\",\"params\":%s}", method, params);
	assert_int_equal(jsonrpc_parse(body, strlen(body), &msg, NULL), 0);
	TAILQ_INIT(&w.w_reqs);
	w.w_inflight = 0;
	fake_reset();
	assert_non_null(mr = legacy_req_new(&w, FAKE_REQ, &msg));
	assert_int_equal(w.w_inflight, 1);
	return mr;
}

static struct mcp_req *
mr_new(const char *params)
{
	return mr_new_method("tools/call", params);
}

#define CALL_P	"{\"name\":\"echo\",\"arguments\":{\"x\":1}}"

#define done_tree(mr, era, st, resp) \
	fake_done_tree(legacy_codec.rc_cbs, (mr), (era), (st), (resp))

/* the request answered once and freed */
static json_t *
expect_reply(int status)
{
	assert_int_equal(fake.f_replies, 1);
	assert_int_equal(fake.f_status, status);
	assert_true(fake.f_close_cleared);
	assert_int_equal(w.w_inflight, 0);
	assert_true(TAILQ_EMPTY(&w.w_reqs));
	assert_string_equal(json_string_value(json_object_get(fake.f_body,
	    "id")), "c-7");
	return fake.f_body;
}

static json_t *
expect_error(int status, int code)
{
	json_t *e;

	assert_null(json_object_get(expect_reply(status), "result"));
	assert_non_null(e = json_object_get(fake.f_body, "error"));
	assert_int_equal(json_integer_value(json_object_get(e, "code")), code);
	return e;
}

#define LEG_RES	"{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]," \
	"\"_meta\":{\"" SI "\":{\"name\":\"b\"},\"k\":1},\"resultType\":\"x\"}"

/* a 2025-11-25 backend's result or error: under the client's id, as it
 * is, from a tree or from text */
static void
test_legacy_legacy_passes(void **state)
{
	static const char *const resp[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":" LEG_RES "}",
		"{\"jsonrpc\":\"2.0\",\"id\":99,\"error\":{\"code\":-32002,"
		    "\"message\":\"Resource not found\",\"data\":{\"u\":1}}}",
	};
	struct upstream_result	 ur;
	struct mcp_req		*mr;
	json_t			*want, *body;
	size_t			 i;
	int			 text;

	(void)state;
	for (i = 0; i < 2; i++)
		for (text = 0; text < 2; text++) {
			assert_non_null(want = json_loads(resp[i], 0, NULL));
			mr = mr_new(CALL_P);
			if (text) {
				const char *kind = i == 0 ? "result" : "error";
				char *s = json_dumps(json_object_get(want,
				    kind), JSON_COMPACT);

				memset(&ur, 0, sizeof(ur));
				ur.ur_status = i == 0 ? UPSTREAM_COMPLETE :
				    UPSTREAM_ERROR;
				ur.ur_era = PROTO_ERA_LEGACY;
				ur.ur_kind = kind;
				ur.ur_text = s;
				ur.ur_len = strlen(s);
				legacy_codec.rc_cbs->uc_done(mr, &ur);
				free(s);
				assert_int_equal(fake.f_text_replies, 1);
			} else
				done_tree(mr, PROTO_ERA_LEGACY, i == 0 ?
				    UPSTREAM_COMPLETE : UPSTREAM_ERROR,
				    resp[i]);
			body = expect_reply(200);
			assert_null(fake.f_session);
			json_object_set_new(want, "id", json_string("c-7"));
			assert_true(json_equal(body, want));
			json_decref(want);
			fake_reset();
		}
}

/* a 2026-07-28 backend's complete result loses its envelope and its
 * reserved _meta keys; a _meta left empty goes */
static void
test_legacy_modern_complete(void **state)
{
	struct mcp_req	*mr;
	json_t		*res;

	(void)state;
	mr = mr_new(CALL_P);
	done_tree(mr, PROTO_ERA_MODERN, UPSTREAM_COMPLETE,
	    "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"resultType\":"
	    "\"complete\",\"ttlMs\":10,\"cacheScope\":\"public\",\"content\":"
	    "[],\"_meta\":{\"" SI "\":{\"name\":\"b\"},\""
	    MCP_META_PROTOCOL_VERSION "\":\"2026-07-28\",\"mine\":2}}}");
	res = json_object_get(expect_reply(200), "result");
	assert_non_null(json_object_get(res, "content"));
	assert_null(json_object_get(res, "resultType"));
	assert_null(json_object_get(res, "ttlMs"));
	assert_null(json_object_get(res, "cacheScope"));
	assert_null(json_object_get(json_object_get(res, "_meta"), SI));
	assert_null(json_object_get(json_object_get(res, "_meta"),
	    MCP_META_PROTOCOL_VERSION));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    res, "_meta"), "mine")), 2);
	fake_reset();

	mr = mr_new(CALL_P);
	done_tree(mr, PROTO_ERA_MODERN, UPSTREAM_COMPLETE,
	    "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"resultType\":"
	    "\"complete\",\"content\":[],\"_meta\":{\"" SI "\":{}}}}");
	res = json_object_get(expect_reply(200), "result");
	assert_null(json_object_get(res, "_meta"));
	assert_null(json_object_get(res, "resultType"));
	fake_reset();
}

/* a 2026-07-28 backend's error passes under the client's id */
static void
test_legacy_modern_error(void **state)
{
	struct mcp_req	*mr;
	json_t		*e;

	(void)state;
	mr = mr_new(CALL_P);
	done_tree(mr, PROTO_ERA_MODERN, UPSTREAM_ERROR,
	    "{\"jsonrpc\":\"2.0\",\"id\":99,\"error\":{\"code\":-32602,"
	    "\"message\":\"bad x\"}}");
	e = expect_error(200, JSONRPC_INVALID_PARAMS);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
	    "bad x");
	fake_reset();
}

/* no answer: -32603 "Internal error: why", for either revision; a
 * 2026-07-28 answer with no result too */
static void
test_legacy_failed(void **state)
{
	enum proto_era	 eras[] = { PROTO_ERA_LEGACY, PROTO_ERA_MODERN };
	struct mcp_req	*mr;
	json_t		*e;
	size_t		 i;

	(void)state;
	for (i = 0; i < 2; i++) {
		mr = mr_new(CALL_P);
		done_tree(mr, eras[i], UPSTREAM_FAILED, NULL);
		e = expect_error(200, JSONRPC_INTERNAL_ERROR);
		assert_string_equal(json_string_value(json_object_get(e,
		    "message")), "Internal error: the backend went away");
		fake_reset();
	}
	mr = mr_new(CALL_P);
	done_tree(mr, PROTO_ERA_MODERN, UPSTREAM_COMPLETE,
	    "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":3}");
	e = expect_error(200, JSONRPC_INTERNAL_ERROR);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
	    "Internal error: the backend sent no result");
	fake_reset();
}

/* rc_error: another status than 200 never carries the session id (an
 * initialize's 200 does); rc_limited: a tool result with isError */
static void
test_legacy_codec_errors(void **state)
{
	struct mcp_req	*mr;
	json_t		*e, *want;

	(void)state;
	mr = mr_new(CALL_P);
	mr->mr_initialize = 1;
	(void)snprintf(mr->mr_sess.s_id, sizeof(mr->mr_sess.s_id), "sid-1");
	legacy_codec.rc_error(&mr->mr_r, 403, -32600, "Forbidden: policy",
	    json_pack("{s:s}", "why", "p"));
	e = expect_error(403, -32600);
	assert_null(fake.f_session);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
	    "Forbidden: policy");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    e, "data"), "why")), "p");
	fake_reset();

	/* the same at 200: the session id goes (the contrast) */
	mr = mr_new(CALL_P);
	mr->mr_initialize = 1;
	(void)snprintf(mr->mr_sess.s_id, sizeof(mr->mr_sess.s_id), "sid-1");
	legacy_codec.rc_error(&mr->mr_r, 200, JSONRPC_INVALID_PARAMS, "bad",
	    NULL);
	(void)expect_error(200, JSONRPC_INVALID_PARAMS);
	assert_string_equal(fake.f_session, "sid-1");
	fake_reset();

	mr = mr_new(CALL_P);
	legacy_codec.rc_limited(&mr->mr_r, 9);
	assert_null(json_object_get(expect_reply(200), "error"));
	want = ratelimit_result(9);
	assert_true(json_equal(json_object_get(fake.f_body, "result"), want));
	assert_true(json_is_true(json_object_get(want, "isError")));
	json_decref(want);
	fake_reset();
}

/* what each backend revision gets */
static void
test_legacy_params(void **state)
{
	struct upstream_params	 up;
	struct mcp_req		*mr;
	json_t			*p, *caps;

	(void)state;
	mr = mr_new("{\"name\":\"echo\",\"arguments\":{\"x\":1},\"_meta\":"
	    "{\"progressToken\":\"t\"}}");
	mr->mr_r.r_bparams = legacy_codec.rc_route_params(&mr->mr_r);
	assert_ptr_equal(mr->mr_r.r_bparams, mr->mr_r.r_msg.jm_params);

	/* 2025-11-25: the client's params as they are */
	memset(&up, 0, sizeof(up));
	assert_int_equal(legacy_codec.rc_cbs->uc_params(mr, PROTO_ERA_LEGACY,
	    &up), 0);
	assert_ptr_equal(up.up_tree, mr->mr_r.r_msg.jm_params);
	json_decref(up.up_tree);

	/* 2026-07-28: a copy with the last round's input, the client's
	 * capabilities and log level for this hop's _meta */
	assert_non_null(caps = json_pack("{s:{}}", "elicitation"));
	mr->mr_r.r_caps = caps;
	mr->mr_sess.s_log_level = strdup("info");
	mr->mr_state = json_string("st-1");
	mr->mr_responses = json_pack("{s:{s:s}}", "r1", "action", "accept");
	memset(&up, 0, sizeof(up));
	assert_int_equal(legacy_codec.rc_cbs->uc_params(mr, PROTO_ERA_MODERN,
	    &up), 0);
	assert_non_null(p = up.up_tree);
	assert_ptr_not_equal(p, mr->mr_r.r_msg.jm_params);
	assert_string_equal(json_string_value(json_object_get(p, "name")),
	    "echo");
	assert_string_equal(json_string_value(json_object_get(p,
	    "requestState")), "st-1");
	assert_non_null(json_object_get(json_object_get(p, "inputResponses"),
	    "r1"));
	assert_null(json_object_get(mr->mr_r.r_msg.jm_params,
	    "requestState"));
	assert_ptr_equal(up.up_caps, caps);
	assert_string_equal(up.up_level, "info");
	json_decref(up.up_tree);

	legacy_codec.rc_error(&mr->mr_r, 200, JSONRPC_INTERNAL_ERROR, "x",
	    NULL);
	fake_reset();
}


/*
 * rc_consent (the credential phase's): -32042 with the elicitation for
 * a session that declared elicitation.url; else a tool result with
 * isError (tools/call) or -32000 (another method), naming the backend
 * and the URL
 */
#define CONSENT_URL	"https://v.example/oauth/start?consent=" CONSENT_ID
#define CONSENT_ID	"vmcpd-e-0123456789abcdef0123456789abcdef"

static void
test_legacy_consent(void **state)
{
	static struct config_backend	 be = { .cb_name = "github" };
	struct mcp_req			*mr;
	json_t				*e, *el, *res;
	const char			*text;

	(void)state;
	mr = mr_new(CALL_P);
	mr->mr_r.r_be = &be;
	mr->mr_r.r_caps = json_pack("{s:{s:{}}}", "elicitation", "url");
	legacy_codec.rc_consent(&mr->mr_r, CONSENT_ID, CONSENT_URL, 1);
	e = expect_error(200, MCP_ERR_URL_ELICITATION);
	assert_int_equal(json_array_size(json_object_get(json_object_get(e,
	    "data"), "elicitations")), 1);
	el = json_array_get(json_object_get(json_object_get(e, "data"),
	    "elicitations"), 0);
	assert_string_equal(json_string_value(json_object_get(el, "mode")),
	    "url");
	assert_string_equal(json_string_value(json_object_get(el,
	    "elicitationId")), CONSENT_ID);
	assert_string_equal(json_string_value(json_object_get(el, "url")),
	    CONSENT_URL);
	assert_string_equal(json_string_value(json_object_get(el, "message")),
	    "github needs your consent: open the link to connect your "
	    "account");
	fake_reset();

	/* elicitation without url: form mode only, no URL elicitation */
	mr = mr_new(CALL_P);
	mr->mr_r.r_be = &be;
	mr->mr_r.r_caps = json_pack("{s:{}}", "elicitation");
	legacy_codec.rc_consent(&mr->mr_r, CONSENT_ID, CONSENT_URL, 1);
	res = json_object_get(expect_reply(200), "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	text = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "content"), 0), "text"));
	assert_non_null(strstr(text, "Backend github "));
	assert_non_null(strstr(text, "open " CONSENT_URL " to connect"));
	fake_reset();

	mr = mr_new_method("resources/read", "{\"uri\":\"gh://x\"}");
	mr->mr_r.r_be = &be;
	legacy_codec.rc_consent(&mr->mr_r, CONSENT_ID, CONSENT_URL, 1);
	e = expect_error(200, MCP_ERR_TRANSPORT);
	text = json_string_value(json_object_get(e, "message"));
	assert_non_null(strstr(text, "Backend github "));
	assert_non_null(strstr(text, CONSENT_URL));
	fake_reset();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legacy_legacy_passes),
		cmocka_unit_test(test_legacy_modern_complete),
		cmocka_unit_test(test_legacy_modern_error),
		cmocka_unit_test(test_legacy_failed),
		cmocka_unit_test(test_legacy_codec_errors),
		cmocka_unit_test(test_legacy_params),
		cmocka_unit_test(test_legacy_consent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
