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
		cmocka_unit_test(test_caps_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
