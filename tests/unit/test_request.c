/*
 * request.c: a client request's one finalize point.  The last hold
 * frees the owner's state once, then the message and the worker's
 * hold; a release with nothing held is refused (a double release),
 * frees nothing twice and leaves the worker's count alone.  A message
 * taken by a request is left empty for its giver.  The method table's
 * handlers are where proto/method.c says each method is served.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "worker/process/process.h"
#include "worker/process/request.h"
#include "worker/request/legacy_req.h"

static int	frees;

static void
count_free(struct request *r)
{
	(void)r;
	frees++;
}

/* r started on a tools/call, its giver's message left empty */
static void
request_begin(struct worker *w, struct request *r)
{
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}";
	struct jsonrpc_msg m;

	memset(w, 0, sizeof(*w));
	frees = 0;
	assert_int_equal(jsonrpc_parse(body, sizeof(body) - 1, &m, NULL), 0);
	request_start(r, w, NULL, &m, count_free);
	/* taken: the giver's copy is empty, its release frees nothing */
	assert_null(m.jm_root);
	request_msg_release(&m);
	assert_int_equal(w->w_inflight, 1);
}

static void
test_request_finalize_once(void **state)
{
	struct worker	w;
	struct request	r;

	(void)state;
	request_begin(&w, &r);
	assert_non_null(r.r_msg.jm_mm);
	assert_int_equal(r.r_msg.jm_mm->mm_id, MCP_M_TOOLS_CALL);

	request_hold(&r);
	assert_int_equal(request_finalize(&r, "test"), 0);
	assert_int_equal(frees, 0);
	assert_int_equal(w.w_inflight, 1);
	assert_int_equal(request_finalize(&r, "test"), 1);
	assert_int_equal(frees, 1);
	assert_int_equal(w.w_inflight, 0);
	/* a double release: refused, nothing freed again */
	assert_int_equal(request_finalize(&r, "test"), -1);
	assert_int_equal(frees, 1);
	assert_int_equal(w.w_inflight, 0);
}

static void
test_request_reparse(void **state)
{
	static const char again[] = "{\"jsonrpc\":\"2.0\",\"id\":8,"
	    "\"method\":\"prompts/get\",\"params\":{\"name\":\"p\"}}";
	struct worker	w;
	struct request	r;

	(void)state;
	request_begin(&w, &r);
	/* a body that does not parse leaves the message as it was */
	assert_int_equal(request_msg_reparse(&r, "{", 1), -1);
	assert_int_equal(r.r_msg.jm_mm->mm_id, MCP_M_TOOLS_CALL);
	assert_int_equal(request_msg_reparse(&r, again, sizeof(again) - 1),
	    0);
	assert_int_equal(r.r_msg.jm_mm->mm_id, MCP_M_PROMPTS_GET);
	assert_int_equal(json_integer_value(r.r_msg.jm_id), 8);
	assert_int_equal(request_finalize(&r, "test"), 1);
	assert_int_equal(frees, 1);
}

/* each row against proto/method.c: a handler in a column exactly where
 * the method is served in that revision, for a message of its kind */
static void
test_request_method_rows(void **state)
{
	const struct request_method	*rm;
	const struct mcp_method		*mm;
	struct jsonrpc_msg		 msg;
	int				 id;

	(void)state;
	memset(&msg, 0, sizeof(msg));
	for (id = 0; id < MCP_M_COUNT; id++) {
		mm = mcp_method_get((enum mcp_method_id)id);
		msg.jm_mm = mm;
		msg.jm_kind = mm->mm_kind == MCP_KIND_REQUEST ?
		    JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
		rm = request_method_of(&msg);
		assert_non_null(rm);
		if ((rm->rm_legacy != NULL) !=
		    MCP_METHOD_SERVED(mm, MCP_REV_LEGACY) ||
		    (rm->rm_modern != NULL) !=
		    MCP_METHOD_SERVED(mm, MCP_REV_MODERN))
			fail_msg("%s: its handlers are not where it is served",
			    mm->mm_name);
		/* no session looked up first: initialize, and the requests
		 * the pipeline takes (its session phase finds it, after the
		 * authorization gate) */
		assert_int_equal((rm->rm_flags & REQUEST_M_NO_SESSION) != 0,
		    id == MCP_M_INITIALIZE || (rm->rm_legacy != NULL &&
		    rm->rm_legacy == legacy_viewed));
		/* the other kind (a request named as a notification, and
		 * the reverse) has none */
		msg.jm_kind = msg.jm_kind == JSONRPC_REQUEST ?
		    JSONRPC_NOTIFICATION : JSONRPC_REQUEST;
		rm = request_method_of(&msg);
		assert_null(rm->rm_legacy);
		assert_null(rm->rm_modern);
	}
	/* a method vmcpd does not know, and a response */
	msg.jm_mm = NULL;
	msg.jm_kind = JSONRPC_REQUEST;
	assert_null(request_method_of(&msg)->rm_legacy);
	msg.jm_mm = mcp_method_get(MCP_M_PING);
	msg.jm_kind = JSONRPC_RESPONSE;
	assert_null(request_method_of(&msg)->rm_legacy);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_finalize_once),
		cmocka_unit_test(test_request_reparse),
		cmocka_unit_test(test_request_method_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
