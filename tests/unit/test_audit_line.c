/*
 * worker/auth/audit_line.c and proto/jsonw.c: an audit line written without
 * a tree is, byte for byte, the line json_dumps() gave the tree the
 * event was built as before (ref_line() below is that builder), for
 * hostile strings in every field taken from a request or a token
 * (names, URIs, headers, claims): quotes, backslashes, newlines, every
 * control character, non-ASCII, strings that are not UTF-8; and each
 * line is one line that jansson reads back to the same values.
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

#include "proto/jsonw.h"
#include "worker/auth/audit.h"

#define DUMP_FLAGS	(JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)

/* the event as the tree audit.c built until the writer took over */
static char *
ref_line(const struct audit_line *al)
{
	json_t	*ev, *subj, *target, *extra, *data;
	char	*s, *line = NULL;

	subj = json_object();
	if (al->al_user_id != NULL)
		(void)json_object_set_new(subj, "user_id",
		    json_string(al->al_user_id));
	(void)json_object_set_new(subj, "user", json_string(al->al_user));
	if (al->al_target_raw != NULL) {
		target = json_loadb(al->al_target_raw, al->al_target_rawlen, 0,
		    NULL);
		extra = json_loadb(al->al_extra_raw, al->al_extra_rawlen, 0,
		    NULL);
		ev = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:s},s:o,s:o,"
		    "s:{s:o}}", "audit_id", al->al_id, "type", al->al_type,
		    "logged_at", al->al_when, "outcome", al->al_outcome,
		    "component", al->al_component, "source", "type",
		    al->al_source_type, "value", al->al_source_value,
		    "subjects", subj, "target", target, "metadata", "extra",
		    extra);
		goto dump;
	}
	target = json_pack("{s:s,s:s}", "endpoint", "/mcp", "method",
	    al->al_method);
	if (al->al_target_type != NULL)
		(void)json_object_set_new(target, "type",
		    json_string(al->al_target_type));
	if (al->al_name != NULL)
		(void)json_object_set_new(target, "name",
		    json_string(al->al_name));
	extra = json_pack("{s:I,s:s,s:i}", "duration_ms",
	    (json_int_t)al->al_duration_ms, "transport", "streamable-http",
	    "status_code", al->al_status);
	if (al->al_backend != NULL)
		(void)json_object_set_new(extra, "backend_name",
		    json_string(al->al_backend));
	ev = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:s,s:{}},s:o,s:o,"
	    "s:{s:o}}", "audit_id", al->al_id, "type", al->al_type,
	    "logged_at", al->al_when, "outcome", al->al_outcome, "component",
	    al->al_component, "source", "type", al->al_source_type, "value",
	    al->al_source_value, "extra", "subjects", subj, "target", target,
	    "metadata", "extra", extra);
	if (ev == NULL)
		return NULL;
	if (al->al_ua != NULL)
		(void)json_object_set_new(json_object_get(json_object_get(ev,
		    "source"), "extra"), "user_agent", json_string(al->al_ua));
	if (al->al_reqid != NULL)
		(void)json_object_set_new(json_object_get(json_object_get(ev,
		    "source"), "extra"), "request_id",
		    json_string(al->al_reqid));
	if (al->al_data != NULL) {
		data = json_pack("{s:s%}", "request", al->al_data,
		    al->al_datalen);
		(void)json_object_set_new(ev, "data", data);
	}
dump:
	if (ev == NULL)
		return NULL;
	if ((s = json_dumps(ev, DUMP_FLAGS)) != NULL &&
	    asprintf(&line, "%s\n", s) == -1)
		line = NULL;
	free(s);
	json_decref(ev);
	return line;
}

static void
base_event(struct audit_line *al)
{
	memset(al, 0, sizeof(*al));
	al->al_id = "0c6b0a5e-3f7e-4d52-9a1e-2b9f8c7d6e5f";
	al->al_type = "mcp_tool_call";
	al->al_when = "2026-01-02T03:04:05.000006Z";
	al->al_outcome = "success";
	al->al_component = "vmcpd";
	al->al_source_type = "network";
	al->al_source_value = "127.0.0.1";
	al->al_source_extra = 1;
	al->al_ua = "node";
	al->al_reqid = "r-1";
	al->al_user = "Alice";
	al->al_user_id = "alice";
	al->al_method = "tools/call";
	al->al_target_type = "tool";
	al->al_name = "echo";
	al->al_duration_ms = 12;
	al->al_status = 200;
	al->al_backend = "a";
}

/* the writer's line is the tree's, and reads back to the same values */
static void
check_same(const struct audit_line *al, struct jsonw *jw)
{
	char		*ref = ref_line(al);
	json_t		*got, *want;
	json_error_t	 e;
	int		 rc;

	jsonw_reset(jw);
	rc = audit_line_write(jw, al);

	if (ref == NULL) {
		assert_int_equal(rc, -1);
		return;
	}
	assert_int_equal(rc, 0);
	if (strcmp(jw->jw_buf, ref) != 0)
		fail_msg("writer: %s\ntree:   %s", jw->jw_buf, ref);
	assert_int_equal(jw->jw_len, strlen(ref));
	/* one line: its only newline is its end */
	assert_ptr_equal(strchr(jw->jw_buf, '\n'), jw->jw_buf + jw->jw_len -
	    1);
	got = json_loadb(jw->jw_buf, jw->jw_len, JSON_ALLOW_NUL, &e);
	if (got == NULL)
		fail_msg("%s: %s", e.text, jw->jw_buf);
	want = json_loads(ref, JSON_ALLOW_NUL, NULL);
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);
	free(ref);
}

static const char *const hostile[] = {
	"",
	"plain",
	"a\"b",
	"x\",\"outcome\":\"success",
	"x\"},\"subjects\":{\"user\":\"root\"},\"y\":{\"z\":\"",
	"back\\slash\\",
	"line\none",
	"line\r\n{\"audit_id\":\"forged\"}",
	"\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f"
	    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
	"del\x7f",
	"</script><!--",
	"/slash/",
	"caf\xc3\xa9",
	"\xe2\x82\xac euro",
	"\xe2\x80\xa8 line separator \xe2\x80\xa9",
	"\xef\xbb\xbf bom",
	"\xef\xbf\xbf",
	"emoji \xf0\x9f\x98\x80",
	"\xf4\x8f\xbf\xbf",		/* U+10FFFF */
	/* not UTF-8: each must leave its member (or line) out as before */
	"\xff",
	"bad \xc3",			/* cut short */
	"\xc0\xaf",			/* overlong */
	"\xe0\x80\xaf",
	"\xf0\x80\x80\xaf",
	"\xed\xa0\x80",			/* a surrogate */
	"\xf4\x90\x80\x80",		/* past U+10FFFF */
	"\xf8\x88\x80\x80\x80",
	"\x80 lone continuation",
	"ok \xe2\x82\xac then \xfe",
};

#define NHOSTILE	(sizeof(hostile) / sizeof(hostile[0]))

static void
test_audit_line_hostile(void **state)
{
	struct audit_line	 al;
	struct jsonw		 jw;
	const char		**field[] = { &al.al_ua, &al.al_reqid,
	    &al.al_user, &al.al_user_id, &al.al_name, &al.al_backend,
	    &al.al_method, &al.al_component, &al.al_source_value,
	    &al.al_type };
	size_t			 i, f;

	(void)state;
	memset(&jw, 0, sizeof(jw));
	for (f = 0; f < sizeof(field) / sizeof(field[0]); f++)
		for (i = 0; i < NHOSTILE; i++) {
			base_event(&al);
			*field[f] = hostile[i];
			check_same(&al, &jw);
		}
	/* the request's params as text */
	for (i = 0; i < NHOSTILE; i++) {
		base_event(&al);
		al.al_data = hostile[i];
		al.al_datalen = strlen(hostile[i]);
		check_same(&al, &jw);
	}
	jsonw_free(&jw);
}

static void
test_audit_line_shapes(void **state)
{
	struct audit_line	 al;
	struct jsonw		 jw;

	(void)state;
	memset(&jw, 0, sizeof(jw));
	/* anonymous, no headers, a GET: no name, no type, no backend */
	base_event(&al);
	al.al_type = "sse_connection";
	al.al_ua = al.al_reqid = al.al_user_id = NULL;
	al.al_user = "anonymous";
	al.al_method = "GET";
	al.al_target_type = al.al_name = al.al_backend = NULL;
	al.al_status = 405;
	check_same(&al, &jw);
	assert_string_equal(jw.jw_buf, "{\"audit_id\":"
	    "\"0c6b0a5e-3f7e-4d52-9a1e-2b9f8c7d6e5f\",\"type\":"
	    "\"sse_connection\",\"logged_at\":\"2026-01-02T03:04:05.000006Z\","
	    "\"outcome\":\"success\",\"component\":\"vmcpd\",\"source\":"
	    "{\"type\":\"network\",\"value\":\"127.0.0.1\",\"extra\":{}},"
	    "\"subjects\":{\"user\":\"anonymous\"},\"target\":{\"endpoint\":"
	    "\"/mcp\",\"method\":\"GET\"},\"metadata\":{\"extra\":"
	    "{\"duration_ms\":12,\"transport\":\"streamable-http\","
	    "\"status_code\":405}}}\n");
	/* integers at their bounds */
	base_event(&al);
	al.al_duration_ms = -1;
	al.al_status = 0;
	check_same(&al, &jw);
	al.al_duration_ms = INT64_MAX;
	check_same(&al, &jw);
	al.al_duration_ms = INT64_MIN;
	check_same(&al, &jw);
	/* a data text with a NUL inside: \u0000 */
	base_event(&al);
	al.al_data = "{\"a\":\"\0\"}";
	al.al_datalen = 9;
	check_same(&al, &jw);
	/* a workflow's: local, target and extra given as text */
	base_event(&al);
	al.al_type = "vmcp_workflow_started";
	al.al_source_type = "local";
	al.al_source_value = "vmcpd";
	al.al_source_extra = 0;
	al.al_target_raw = "{\"workflow\":\"w\\n\",\"step\":\"\\u00E9\"}";
	al.al_target_rawlen = strlen(al.al_target_raw);
	al.al_extra_raw = "{}";
	al.al_extra_rawlen = 2;
	check_same(&al, &jw);
	jsonw_free(&jw);
}

static void
test_jsonw_undo(void **state)
{
	struct jsonw		 jw;
	struct jsonw_mark	 m;

	(void)state;
	memset(&jw, 0, sizeof(jw));
	jsonw_obj(&jw, NULL);
	assert_int_equal(jsonw_str(&jw, "a", "1"), 0);
	/* a string not UTF-8 writes nothing, not even its key */
	assert_int_equal(jsonw_str(&jw, "b", "\xff"), -1);
	jsonw_mark(&jw, &m);
	jsonw_obj(&jw, "c");
	jsonw_int(&jw, "d", 2);
	jsonw_undo(&jw, &m);
	jsonw_raw(&jw, "e", "[1]", 3);
	jsonw_end(&jw);
	assert_string_equal(jw.jw_buf, "{\"a\":\"1\",\"e\":[1]}");
	assert_int_equal(jw.jw_failed, 0);
	/* reset keeps the buffer for the next text */
	jsonw_reset(&jw);
	assert_string_equal(jw.jw_buf, "");
	jsonw_int(&jw, NULL, -42);
	assert_string_equal(jw.jw_buf, "-42");
	jsonw_free(&jw);
}

/* lines append: two in a row are two lines, each whole */
static void
test_audit_line_appends(void **state)
{
	struct audit_line	 al;
	struct jsonw		 jw;
	char			*ref, *two;

	(void)state;
	memset(&jw, 0, sizeof(jw));
	base_event(&al);
	ref = ref_line(&al);
	assert_non_null(ref);
	assert_int_equal(audit_line_write(&jw, &al), 0);
	assert_int_equal(audit_line_write(&jw, &al), 0);
	assert_int_not_equal(asprintf(&two, "%s%s", ref, ref), -1);
	assert_string_equal(jw.jw_buf, two);
	free(two);
	free(ref);
	jsonw_free(&jw);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_line_hostile),
		cmocka_unit_test(test_audit_line_shapes),
		cmocka_unit_test(test_audit_line_appends),
		cmocka_unit_test(test_jsonw_undo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
