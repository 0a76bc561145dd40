/*
 * The upstream edge's decisions (worker/upstream/upstream_rule.c), table-driven:
 * the revision a call goes in (the era policy, proto_era_pick()) for
 * each pin, backend record and client era, crossed with what the
 * backend answered and whether the call was resent already: deliver,
 * reopen the session and resend, or probe the era again and resend;
 * and what an answer is (complete, input_required, error, failed, and
 * whether the era record was wrong).
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
#include "worker/upstream/backend.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/upstream_rule.h"

#define U	PROTO_ERA_UNKNOWN
#define L	PROTO_ERA_LEGACY
#define M	PROTO_ERA_MODERN
#define B	PROTO_ERA_BOTH

#define LOST	BACKEND_F_LOST
#define REF	BACKEND_F_REFUSED

/* what the backend said: nothing, or a JSON-RPC error with this code */
enum answer { A_NONE, A_OTHER, A_HDR, A_VERSION, A_CAP };

static json_t *
answer_new(enum answer a)
{
	static const int codes[] = { 0, -32600, MCP_ERR_HEADER_MISMATCH,
	    MCP_ERR_UNSUPPORTED_VERSION, MCP_ERR_MISSING_CAPABILITY };

	if (a == A_NONE)
		return NULL;
	return json_pack("{s:s, s:s, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    "vmcpd-1-1", "error", "code", codes[a], "message", "no");
}

static void
test_next_step(void **state)
{
	static const struct {
		enum proto_era	 pin, record, client;
		int		 failed, flags;
		enum answer	 answer;
		int		 retried;
		enum upstream_next want;
	} t[] = {
		/* a Legacy backend: a lost session is reopened, once */
		{ U, L, L, 1, LOST, A_NONE, 0, UPSTREAM_REOPEN },
		{ U, L, M, 1, LOST, A_NONE, 0, UPSTREAM_REOPEN },
		{ U, L, U, 1, LOST, A_NONE, 0, UPSTREAM_REOPEN },
		{ U, L, L, 1, LOST, A_NONE, 1, UPSTREAM_DELIVER },
		{ L, M, M, 1, LOST | REF, A_NONE, 0, UPSTREAM_REOPEN },
		/* ... anything else reached it, or may have: delivered */
		{ U, L, L, 1, REF, A_OTHER, 0, UPSTREAM_DELIVER },
		{ U, L, L, 1, 0, A_NONE, 0, UPSTREAM_DELIVER },
		{ U, L, L, 0, 0, A_OTHER, 0, UPSTREAM_DELIVER },
		/* a Modern backend turning the request away unrun, not in
		 * 2026-07-28 terms: the record was wrong, probe again */
		{ U, M, M, 1, REF, A_NONE, 0, UPSTREAM_REPROBE },
		{ U, M, L, 1, REF, A_OTHER, 0, UPSTREAM_REPROBE },
		{ U, M, U, 1, REF, A_VERSION, 0, UPSTREAM_REPROBE },
		{ M, L, L, 1, REF, A_NONE, 0, UPSTREAM_REPROBE },
		{ U, M, M, 1, REF, A_NONE, 1, UPSTREAM_DELIVER },
		/* ... in 2026-07-28 terms: its answer, delivered */
		{ U, M, M, 1, REF, A_HDR, 0, UPSTREAM_DELIVER },
		{ U, M, M, 1, REF, A_CAP, 0, UPSTREAM_DELIVER },
		/* ... 408, 429, 5xx, a cut: it may have run */
		{ U, M, M, 1, 0, A_NONE, 0, UPSTREAM_DELIVER },
		{ U, M, M, 1, LOST, A_NONE, 0, UPSTREAM_DELIVER },
		{ U, M, M, 0, 0, A_OTHER, 0, UPSTREAM_DELIVER },
		/* a backend of both: each client's era, each era's rule */
		{ U, B, L, 1, LOST, A_NONE, 0, UPSTREAM_REOPEN },
		{ U, B, M, 1, LOST, A_NONE, 0, UPSTREAM_DELIVER },
		{ U, B, M, 1, REF, A_OTHER, 0, UPSTREAM_REPROBE },
		{ U, B, U, 1, REF, A_OTHER, 0, UPSTREAM_REPROBE },
		{ U, B, L, 1, REF, A_OTHER, 0, UPSTREAM_DELIVER },
	};
	size_t			 i;
	enum proto_era		 era;
	enum upstream_next	 got;
	json_t			*resp;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		era = proto_era_pick(t[i].pin, t[i].record, t[i].client);
		resp = answer_new(t[i].answer);
		got = upstream_next_step(era, t[i].failed, t[i].flags, resp,
		    t[i].retried);
		json_decref(resp);
		if (got != t[i].want)
			fail_msg("case %zu: got %d, want %d", i, (int)got,
			    (int)t[i].want);
	}
}

static void
test_classify(void **state)
{
	static const struct {
		enum proto_era	 era;
		int		 failed;
		const char	*response;	/* a tree, or NULL */
		const char	*kind;		/* or text of this kind */
		const char	*rtype;
		const char	*method;	/* NULL: tools/call */
		enum upstream_status want;
		int		 was_legacy;
		int		 invalid;
	} t[] = {
		{ L, 0, NULL, "result", NULL, NULL, UPSTREAM_COMPLETE, 0, 0 },
		{ L, 0, NULL, "error", NULL, NULL, UPSTREAM_ERROR, 0, 0 },
		{ M, 0, NULL, "result", "\"complete\"", NULL,
		    UPSTREAM_COMPLETE, 0, 0 },
		{ M, 0, NULL, "result", "\"input_required\"", NULL,
		    UPSTREAM_INPUT_REQUIRED, 0, 0 },
		{ M, 0, NULL, "result", "\"input_required\"", "prompts/get",
		    UPSTREAM_INPUT_REQUIRED, 0, 0 },
		{ M, 0, NULL, "result", "\"input_required\"",
		    "resources/read", UPSTREAM_INPUT_REQUIRED, 0, 0 },
		/* no MRTR round on any other method (2026-07-28, MRTR) */
		{ M, 0, NULL, "result", "\"input_required\"",
		    "completion/complete", UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "\"input_required\"", "tools/list",
		    UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "\"input_required\"",
		    "server/discover", UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "\"input_required\"", "no/such",
		    UPSTREAM_FAILED, 0, 1 },
		/* a resultType vmcpd does not know is no complete result */
		{ M, 0, NULL, "result", "\"bogus\"", NULL, UPSTREAM_FAILED, 0,
		    1 },
		/* a task (the tasks extension) is a tools/call's final answer */
		{ M, 0, NULL, "result", "\"task\"", NULL, UPSTREAM_COMPLETE, 0,
		    0 },
		{ M, 0, NULL, "result", "\"task\"", "prompts/get",
		    UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "\"Complete\"", NULL, UPSTREAM_FAILED,
		    0, 1 },
		{ M, 0, NULL, "result", "\"complete \"", NULL,
		    UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "\"\"", NULL, UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "\"\\u0063omplete\"", NULL,
		    UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "null", NULL, UPSTREAM_FAILED, 0, 1 },
		{ M, 0, NULL, "result", "1", NULL, UPSTREAM_FAILED, 0, 1 },
		/* 2026-07-28 asked, 2025-11-25 answered: the record is wrong */
		{ M, 0, NULL, "result", NULL, NULL, UPSTREAM_COMPLETE, 1, 0 },
		{ M, 0, NULL, "error", NULL, NULL, UPSTREAM_ERROR, 0, 0 },
		/* a 2025-11-25 backend's answer has no resultType to read */
		{ L, 0, NULL, "result", "\"bogus\"", NULL, UPSTREAM_COMPLETE, 0,
		    0 },
		{ L, 0, "{\"result\":{}}", NULL, NULL, NULL, UPSTREAM_COMPLETE,
		    0, 0 },
		{ L, 0, "{\"result\":{\"resultType\":\"bogus\"}}", NULL, NULL,
		    NULL, UPSTREAM_COMPLETE, 0, 0 },
		{ L, 0, "{\"error\":{\"code\":1}}", NULL, NULL, NULL,
		    UPSTREAM_ERROR, 0, 0 },
		{ M, 0, "{\"result\":{\"resultType\":\"input_required\"}}",
		    NULL, NULL, NULL, UPSTREAM_INPUT_REQUIRED, 0, 0 },
		{ M, 0, "{\"result\":{\"resultType\":\"input_required\"}}",
		    NULL, NULL, "completion/complete", UPSTREAM_FAILED, 0, 1 },
		{ M, 0, "{\"result\":{\"resultType\":\"complete\"}}", NULL,
		    NULL, NULL, UPSTREAM_COMPLETE, 0, 0 },
		{ M, 0, "{\"result\":{\"resultType\":\"bogus\"}}", NULL,
		    NULL, NULL, UPSTREAM_FAILED, 0, 1 },
		{ M, 0, "{\"result\":{\"resultType\":null}}", NULL, NULL,
		    NULL, UPSTREAM_FAILED, 0, 1 },
		{ M, 0, "{\"result\":{\"resultType\":\"complete\\u0000\"}}",
		    NULL, NULL, NULL, UPSTREAM_FAILED, 0, 1 },
		{ M, 0, "{\"result\":{\"content\":[]}}", NULL, NULL, NULL,
		    UPSTREAM_COMPLETE, 1, 0 },
		/* a 2026-07-28 error at HTTP 400 is the backend's error; a
		 * 2025-11-25 one's is a failure */
		{ M, 1, "{\"error\":{\"code\":-32021}}", NULL, NULL, NULL,
		    UPSTREAM_ERROR, 0, 0 },
		{ L, 1, "{\"error\":{\"code\":-32600}}", NULL, NULL, NULL,
		    UPSTREAM_FAILED, 0, 0 },
		{ M, 1, NULL, NULL, NULL, NULL, UPSTREAM_FAILED, 0, 0 },
	};
	size_t			 i;
	json_t			*resp;
	enum upstream_status	 got;
	const char		*invalid;
	int			 was;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		resp = t[i].response != NULL ? json_loads(t[i].response,
		    JSON_ALLOW_NUL, NULL) : NULL;
		assert_true(t[i].response == NULL || resp != NULL);
		got = upstream_classify(t[i].era, t[i].failed, resp, t[i].kind,
		    t[i].rtype, t[i].rtype != NULL ? strlen(t[i].rtype) : 0,
		    t[i].method != NULL ? t[i].method : "tools/call", &was,
		    &invalid);
		json_decref(resp);
		if (got != t[i].want || was != t[i].was_legacy ||
		    (invalid != NULL) != t[i].invalid)
			fail_msg("case %zu: got %d (%d, %s), want %d (%d, %d)",
			    i, (int)got, was, invalid != NULL ? invalid :
			    "valid", (int)t[i].want, t[i].was_legacy,
			    t[i].invalid);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_step),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
