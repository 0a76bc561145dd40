/*
 * The tasks db's record (shared/task_rec.c): what is written reads back,
 * what is not a record is refused, ids are vmcpd's shape only, the TTL
 * bounds, and a dump never shows a whole id.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/mrequest.h"
#include "shared/task_rec.h"

static void
rec_fill(struct task_rec *tr, const char *owner, const char *bid)
{
	memset(tr, 0, sizeof(*tr));
	strcpy(tr->tr_owner, owner);
	strcpy(tr->tr_backend, "b1");
	strcpy(tr->tr_tool, "slow_compute");
	strcpy(tr->tr_bid, bid);
}

static void
test_task_rec_round_trip(void **state)
{
	struct task_rec	 in, out;
	char		*buf;
	size_t		 len;

	(void)state;
	rec_fill(&in, "0123456789abcdef", "786512e2-\"quoted\"");
	assert_non_null(buf = task_rec_encode(&in, &len));
	assert_int_equal(len, strlen(buf));
	assert_int_equal(task_rec_decode(buf, len, &out), 0);
	assert_memory_equal(&in, &out, sizeof(in));
	free(buf);

	/* anonymous: an empty owner is one */
	in.tr_owner[0] = '\0';
	assert_non_null(buf = task_rec_encode(&in, &len));
	assert_int_equal(task_rec_decode(buf, len, &out), 0);
	assert_string_equal(out.tr_owner, "");
	free(buf);
}

static void
test_task_rec_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"owner\":\"o\",\"backend\":\"b\",\"tool\":\"t\"}",
		"{\"owner\":\"o\",\"backend\":\"\",\"tool\":\"t\","
		    "\"taskId\":\"x\"}",
		"{\"owner\":1,\"backend\":\"b\",\"tool\":\"t\","
		    "\"taskId\":\"x\"}",
		"{\"owner\":\"o\",\"backend\":\"b\",\"tool\":\"t\","
		    "\"taskId\":\"a\\u0000b\"}",
		"{\"owner\":\"o\",\"owner\":\"p\",\"backend\":\"b\","
		    "\"tool\":\"t\",\"taskId\":\"x\"}",
	};
	struct task_rec	tr;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(task_rec_decode(bad[i], strlen(bad[i]), &tr),
		    -1);
	assert_int_equal(task_rec_decode(NULL, 0, &tr), -1);
}

static void
test_task_id(void **state)
{
	(void)state;
	assert_true(task_id_valid(TASK_PREFIX
	    "0123456789abcdef0123456789abcdef", TASK_ID_LEN));
	assert_false(task_id_valid(TASK_PREFIX
	    "0123456789ABCDEF0123456789abcdef", TASK_ID_LEN));
	assert_false(task_id_valid("vmcpd-h-0123456789abcdef0123456789abcdef",
	    TASK_ID_LEN));
	assert_false(task_id_valid(TASK_PREFIX "0123", 12));
	assert_false(task_id_valid(NULL, 0));
}

static void
test_task_ttl(void **state)
{
	json_t *v;

	(void)state;
	assert_true(task_ttl_ms(NULL) == TASK_TTL_DEFAULT_MS);
	assert_true(task_ttl_ms(v = json_null()) == TASK_TTL_DEFAULT_MS);
	json_decref(v);
	assert_true(task_ttl_ms(v = json_integer(60000)) == 60000);
	json_decref(v);
	assert_true(task_ttl_ms(v = json_integer(-5)) == TASK_TTL_DEFAULT_MS);
	json_decref(v);
	assert_true(task_ttl_ms(v = json_integer(INT64_MAX)) ==
	    TASK_TTL_MAX_MS);
	json_decref(v);
	assert_true(task_ttl_ms(v = json_real(1.5)) == TASK_TTL_DEFAULT_MS);
	json_decref(v);
}

static void	wf_fill(struct task_rec *, enum task_status, json_t *);

static void
test_task_dump(void **state)
{
	static const char id[] = TASK_PREFIX "0123456789abcdef0123456789abcdef";
	struct task_rec	 tr;
	json_t		*o;
	char		*buf, *s;
	size_t		 len;

	(void)state;
	rec_fill(&tr, "scope", "backend-task-id-that-is-long");
	assert_non_null(buf = task_rec_encode(&tr, &len));
	assert_non_null(o = task_rec_dump(id, strlen(id), buf, len));
	assert_non_null(s = json_dumps(o, JSON_COMPACT));
	assert_null(strstr(s, id));
	assert_null(strstr(s, tr.tr_bid));
	assert_non_null(strstr(s, "\"backend\":\"b1\""));
	free(s);
	json_decref(o);
	assert_non_null(o = task_rec_dump(id, strlen(id), "junk", 4));
	assert_true(json_is_false(json_object_get(o, "valid")));
	json_decref(o);
	free(buf);

	/* a composite's task shows its status, never its outcome; its
	 * cancel mark shows as one */
	wf_fill(&tr, TASK_ST_COMPLETED, json_pack("{s:s}", "secret", "s3"));
	assert_non_null(buf = task_rec_encode(&tr, &len));
	assert_non_null(o = task_rec_dump(id, strlen(id), buf, len));
	assert_non_null(s = json_dumps(o, JSON_COMPACT));
	assert_non_null(strstr(s, "\"status\":\"completed\""));
	assert_null(strstr(s, "s3"));
	free(s);
	json_decref(o);
	free(buf);
	task_rec_clear(&tr);
	assert_non_null(o = task_rec_dump(TASK_PREFIX "0123456789abcdef"
	    "0123456789abcdef" TASK_MARK_SUFFIX, TASK_ID_LEN +
	    strlen(TASK_MARK_SUFFIX), "1", 1));
	assert_true(json_is_true(json_object_get(o, "cancelled")));
	json_decref(o);
}

/* a workflow's task: its state written reads back */
static void
wf_fill(struct task_rec *tr, enum task_status st, json_t *out)
{
	rec_fill(tr, "scope", "run");
	strcpy(tr->tr_backend, TASK_WORKFLOW);
	strcpy(tr->tr_tool, "build");
	tr->tr_status = st;
	tr->tr_created_ms = 1786000000000ULL;
	tr->tr_updated_ms = 1786000000500ULL;
	tr->tr_lease_ms = 1786000005000ULL;
	tr->tr_ttl_ms = 3600000;
	tr->tr_out = out;
}

static void
test_task_rec_workflow(void **state)
{
	struct task_rec	 in, out;
	char		*buf;
	size_t		 len;

	(void)state;
	wf_fill(&in, TASK_ST_COMPLETED, json_pack("{s:s, s:[{s:s, s:s}]}",
	    "resultType", "complete", "content", "type", "text", "text",
	    "done"));
	assert_non_null(buf = task_rec_encode(&in, &len));
	assert_int_equal(task_rec_decode(buf, len, &out), 0);
	assert_int_equal(out.tr_status, TASK_ST_COMPLETED);
	assert_string_equal(out.tr_backend, TASK_WORKFLOW);
	assert_true(out.tr_created_ms == in.tr_created_ms);
	assert_true(out.tr_updated_ms == in.tr_updated_ms);
	assert_true(out.tr_lease_ms == in.tr_lease_ms);
	assert_true(out.tr_ttl_ms == in.tr_ttl_ms);
	assert_true(json_equal(out.tr_out, in.tr_out));
	assert_int_equal(out.tr_cancel, 0);
	task_rec_clear(&out);
	assert_null(out.tr_out);
	free(buf);
	task_rec_clear(&in);

	/* a backend's task has no state: none written, none read */
	rec_fill(&in, "o", "x");
	assert_non_null(buf = task_rec_encode(&in, &len));
	assert_null(strstr(buf, "status"));
	assert_int_equal(task_rec_decode(buf, len, &out), 0);
	assert_int_equal(out.tr_status, TASK_ST_NONE);
	assert_null(out.tr_out);
	free(buf);
}

static void
test_task_rec_workflow_refused(void **state)
{
	static const char *const bad[] = {
		/* an unknown status, or none with a state's name */
		"{\"owner\":\"o\",\"backend\":\":composite\",\"tool\":\"t\","
		    "\"taskId\":\"r\",\"status\":\"done\",\"created\":1,"
		    "\"updated\":1,\"lease\":1,\"ttl\":1}",
		"{\"owner\":\"o\",\"backend\":\":composite\",\"tool\":\"t\","
		    "\"taskId\":\"r\",\"status\":7,\"created\":1,"
		    "\"updated\":1,\"lease\":1,\"ttl\":1}",
		/* a stamp missing, negative, or not an integer */
		"{\"owner\":\"o\",\"backend\":\":composite\",\"tool\":\"t\","
		    "\"taskId\":\"r\",\"status\":\"working\",\"created\":1,"
		    "\"updated\":1,\"lease\":1}",
		"{\"owner\":\"o\",\"backend\":\":composite\",\"tool\":\"t\","
		    "\"taskId\":\"r\",\"status\":\"working\",\"created\":-1,"
		    "\"updated\":1,\"lease\":1,\"ttl\":1}",
		"{\"owner\":\"o\",\"backend\":\":composite\",\"tool\":\"t\","
		    "\"taskId\":\"r\",\"status\":\"working\",\"created\":1.5,"
		    "\"updated\":1,\"lease\":1,\"ttl\":1}",
		/* an outcome that is no object */
		"{\"owner\":\"o\",\"backend\":\":composite\",\"tool\":\"t\","
		    "\"taskId\":\"r\",\"status\":\"failed\",\"created\":1,"
		    "\"updated\":1,\"lease\":1,\"ttl\":1,\"out\":[1]}",
	};
	struct task_rec	tr;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(task_rec_decode(bad[i], strlen(bad[i]), &tr),
		    -1);
		assert_null(tr.tr_out);
	}
}

/* what tasks/get shows by status: cancel asked, lease run out, outcome */
static void
test_task_rec_detailed(void **state)
{
	static const char id[] = TASK_PREFIX "0123456789abcdef0123456789abcdef";
	struct task_rec	 tr;
	json_t		*o;
	uint64_t	 now = 1786000001000ULL;

	(void)state;
	wf_fill(&tr, TASK_ST_WORKING, NULL);
	assert_non_null(o = task_rec_detailed(&tr, id, now));
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "working");
	assert_string_equal(json_string_value(json_object_get(o, "taskId")),
	    id);
	assert_string_equal(json_string_value(json_object_get(o,
	    "createdAt")), "2026-08-06T07:06:40.000Z");
	assert_string_equal(json_string_value(json_object_get(o,
	    "lastUpdatedAt")), "2026-08-06T07:06:40.500Z");
	assert_int_equal(json_integer_value(json_object_get(o, "ttlMs")),
	    3600000);
	assert_int_equal(json_integer_value(json_object_get(o,
	    "pollIntervalMs")), TASK_POLL_MS);
	assert_null(json_object_get(o, "result"));
	json_decref(o);

	/* its runner's lease ran out: failed, the worker gone */
	assert_int_equal(task_rec_status(&tr, tr.tr_lease_ms + 1),
	    TASK_ST_FAILED);
	assert_non_null(o = task_rec_detailed(&tr, id, tr.tr_lease_ms + 1));
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "failed");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    o, "error"), "message")), TASK_LOST_MESSAGE);
	json_decref(o);

	/* a cancel asked of a live task reads cancelled */
	tr.tr_cancel = 1;
	assert_int_equal(task_rec_status(&tr, now), TASK_ST_CANCELLED);
	tr.tr_status = TASK_ST_INPUT;
	assert_int_equal(task_rec_status(&tr, now), TASK_ST_CANCELLED);
	/* ... but not of a finished one */
	tr.tr_status = TASK_ST_COMPLETED;
	tr.tr_out = json_pack("{s:s}", "resultType", "complete");
	assert_int_equal(task_rec_status(&tr, now), TASK_ST_COMPLETED);
	assert_non_null(o = task_rec_detailed(&tr, id, now));
	assert_true(json_equal(json_object_get(o, "result"), tr.tr_out));
	json_decref(o);
	task_rec_clear(&tr);

	/* failed: the error as written; input_required: its requests */
	wf_fill(&tr, TASK_ST_FAILED, json_pack("{s:i, s:s}", "code", -32602,
	    "message", "bad"));
	assert_non_null(o = task_rec_detailed(&tr, id, now));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    o, "error"), "code")), -32602);
	json_decref(o);
	task_rec_clear(&tr);
	wf_fill(&tr, TASK_ST_INPUT, json_pack("{s:{s:{s:s}}}",
	    "inputRequests", "confirm", "method", "elicitation/create"));
	assert_non_null(o = task_rec_detailed(&tr, id, now));
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "input_required");
	assert_non_null(json_object_get(json_object_get(o, "inputRequests"),
	    "confirm"));
	json_decref(o);
	task_rec_clear(&tr);
}

/* the extension declared, and taken out of a copy (the rest kept) */
static void
test_caps_tasks(void **state)
{
	json_t *caps, *c;

	(void)state;
	caps = json_loads("{\"elicitation\":{},\"extensions\":{"
	    "\"io.modelcontextprotocol/tasks\":{},\"x/y\":{}}}", 0, NULL);
	assert_non_null(caps);
	assert_true(proto_caps_tasks(caps));
	assert_non_null(c = proto_caps_without_tasks(caps));
	assert_false(proto_caps_tasks(c));
	assert_true(proto_caps_tasks(caps));	/* a copy */
	assert_non_null(json_object_get(json_object_get(c, "extensions"),
	    "x/y"));
	assert_non_null(json_object_get(c, "elicitation"));
	json_decref(c);
	json_decref(caps);
	assert_false(proto_caps_tasks(NULL));
	caps = json_loads("{\"extensions\":{\"io.modelcontextprotocol/"
	    "tasks\":true}}", 0, NULL);
	assert_false(proto_caps_tasks(caps));
	json_decref(caps);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_rec_round_trip),
		cmocka_unit_test(test_task_rec_refused),
		cmocka_unit_test(test_task_id),
		cmocka_unit_test(test_task_ttl),
		cmocka_unit_test(test_task_dump),
		cmocka_unit_test(test_task_rec_workflow),
		cmocka_unit_test(test_task_rec_workflow_refused),
		cmocka_unit_test(test_task_rec_detailed),
		cmocka_unit_test(test_caps_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
