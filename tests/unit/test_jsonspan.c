/*
 * proto_json_members(): the allocation-free scan the relay trusts to
 * pass a backend's answer on as text.  Whatever it accepts, jansson
 * must parse as an object; whatever is not JSON, it must refuse.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonspan.h"

static void
test_members(void **state)
{
	const char		*s = " {\"jsonrpc\":\"2.0\", \"id\" : \"v-1\","
				    "\"result\":{\"content\":[{\"a\":1.5e3}],"
				    "\"x\":null}, \"k\\u0041\":true } ";
	struct proto_span	 m[8];
	const struct proto_span	*r;
	size_t			 n;

	(void)state;
	assert_int_equal(proto_json_members(s, strlen(s), m, 8, &n), 0);
	assert_int_equal(n, 4);
	r = proto_json_member(m, n, "result");
	assert_non_null(r);
	assert_int_equal(r->ps_vallen, strlen("{\"content\":[{\"a\":1.5e3}],"
	    "\"x\":null}"));
	assert_memory_equal(r->ps_val, "{\"content\"", 10);
	r = proto_json_member(m, n, "id");
	assert_non_null(r);
	assert_int_equal(r->ps_vallen, 5);
	assert_memory_equal(r->ps_val, "\"v-1\"", 5);
	/* a key with an escape is there but cannot be looked up */
	assert_null(proto_json_member(m, n, "kA"));
	assert_null(m[3].ps_key);
	/* more members than room: refused */
	assert_int_equal(proto_json_members(s, strlen(s), m, 3, &n), -1);
}

static void
test_agrees_with_jansson(void **state)
{
	static const char *const cases[] = {
		"{}", "{\"a\":[]}", "{\"a\":[1,2,{\"b\":\"c\"}]}",
		"{\"a\":-0.5E+2}", "{\"a\":\"\\ud83d\\ude00\"}",
		"{\"a\":\"\xc3\xa9\"}", "{\"a\":true,\"b\":false,\"c\":null}",
		/* not JSON, or not an object */
		"", "[]", "1", "\"x\"", "{", "{\"a\"}", "{\"a\":}",
		"{\"a\":1,}", "{,}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
		"{\"a\":-}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":nul}",
		"{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}",
		"{\"a\":\"\\udc00\"}", "{\"a\":\"\\u0000\"}",
		"{\"a\":[\"x\\u0000y\",{\"b\":\"\\u0000\"}]}",
		"{\"a\":\"\x01\"}", "{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf5\x80\x80\x80\"}",
		"{\"a\":\"\xe2\x82\"}", "{\"a\":1} {}", "{\"a\":1}x",
		"{'a':1}", "{\"a\":[1 2]}", "{\"a\":{\"b\":1,}}",
	};
	struct proto_span	 m[16];
	json_error_t		 err;
	json_t			*o;
	size_t			 i, n;
	int			 ours, theirs;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ours = proto_json_members(cases[i], strlen(cases[i]), m, 16,
		    &n) == 0;
		o = json_loadb(cases[i], strlen(cases[i]), JSON_ALLOW_NUL,
		    &err);
		theirs = o != NULL && json_is_object(o);
		json_decref(o);
		if (ours != theirs)
			fail_msg("case %zu (%s): scan %d, jansson %d", i,
			    cases[i], ours, theirs);
	}
}

static void
test_depth(void **state)
{
	char			 buf[4096];
	struct proto_span	 m[2];
	size_t			 n, i;

	(void)state;
	/* nesting is bounded: a hostile answer cannot exhaust the stack */
	memcpy(buf, "{\"a\":", 5);
	for (i = 5; i < 5 + 1000; i++)
		buf[i] = '[';
	buf[i] = '\0';
	assert_int_equal(proto_json_members(buf, strlen(buf), m, 2, &n), -1);
}

/*
 * proto_json_check(): 0 only where jansson, refusing duplicates, loads
 * an object; the lax scan above stays as it was (duplicates pass).
 */
static void
test_check(void **state)
{
	static const struct {
		const char	*c_text;
		int		 c_ok;	/* the strict scan's answer */
	} cases[] = {
		{ "{}", 1 }, { " {\"a\" : [ 1 , {\"a\":2} ] } ", 1 },
		{ "{\"a\":{\"k\":1},\"b\":{\"k\":1}}", 1 },
		{ "{\"a\":[{\"k\":1},{\"k\":1}]}", 1 },
		{ "{\"a\":\"\\ud83d\\ude00\\n\"}", 1 },
		{ "{\"a\":[9223372036854775807,-9223372036854775808]}", 1 },
		{ "{\"a\":[1e299,-1.5e-999999999999,0.0000001e299]}", 1 },
		/* duplicates, at any depth */
		{ "{\"a\":1,\"a\":1}", 0 }, { "{\"a\":{\"b\":1,\"b\":2}}", 0 },
		{ "{\"a\":[[{\"\":1,\"\":1}]]}", 0 },
		{ "{\"a\":{\"k\":{\"k\":1},\"k\":2}}", 0 },
		/* not sure: escaped keys, numbers near the limits */
		{ "{\"\\u0061\":1}", 0 }, { "{\"a\":{\"\\n\":1}}", 0 },
		{ "{\"a\":1e301}", 0 }, { "{\"a\":10000000000000000000}", 0 },
		{ "{\"a\":1.0e400}", 0 },
		/* not JSON, or not an object, to jansson */
		{ "[]", 0 }, { "1", 0 }, { "{\"a\":9223372036854775808}", 0 },
		{ "{\"a\":-9223372036854775809}", 0 }, { "{\"a\":1e400}", 0 },
		/* "\u0000" in a value is valid JSON; in a key, jansson
		 * refuses it (and the scan is not sure of escaped keys) */
		{ "{\"a\":\"\\u0000\"}", 1 }, { "{\"a\":[\"x\\u0000\"]}", 1 },
		{ "{\"a\\u0000\":1}", 0 },
		{ "{\"a\":1} x", 0 }, { "{\"a\":\"\xff\"}", 0 },
	};
	struct proto_span	 top[4], sub[4], m[4];
	struct proto_members	 ps = { sub, 4, 0, NULL, NULL };
	struct proto_members	 pm = { top, 4, 0, NULL, NULL };
	json_error_t		 err;
	json_t			*o;
	const char		*t;
	size_t			 i, n;
	int			 ours;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = cases[i].c_text;
		ours = proto_json_check(t, strlen(t), &pm) == 0;
		if (ours != cases[i].c_ok)
			fail_msg("case %zu (%s): %d", i, t, ours);
		o = json_loadb(t, strlen(t), JSON_REJECT_DUPLICATES |
		    JSON_ALLOW_NUL, &err);
		if (ours && !json_is_object(o))
			fail_msg("case %zu (%s): jansson: %s", i, t, err.text);
		json_decref(o);
	}

	/* the lax scan lets duplicates and escaped keys through */
	t = "{\"a\":{\"b\":1,\"b\":2},\"\\u0061\":1}";
	assert_int_equal(proto_json_members(t, strlen(t), m, 4, &n), 0);
	assert_int_equal(n, 2);

	/* the members of one member's object value */
	t = "{\"id\":1,\"params\":{\"name\":\"x\",\"o\":{\"p\":1}},\"z\":{}}";
	pm.pm_subkey = "params";
	pm.pm_sub = &ps;
	assert_int_equal(proto_json_check(t, strlen(t), &pm), 0);
	assert_int_equal(pm.pm_n, 3);
	assert_int_equal(ps.pm_n, 2);
	assert_int_equal(sub[0].ps_keylen, 4);
	assert_memory_equal(sub[0].ps_key, "name", 4);
	assert_int_equal(sub[1].ps_vallen, 7);
	assert_memory_equal(sub[1].ps_val, "{\"p\":1}", 7);
	/* too many members: not sure */
	t = "{\"params\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5}}";
	assert_int_equal(proto_json_check(t, strlen(t), &pm), -1);
	/* not an object: nothing there */
	t = "{\"params\":[{\"name\":1}]}";
	assert_int_equal(proto_json_check(t, strlen(t), &pm), 0);
	assert_int_equal(ps.pm_n, 0);
}

/* proto_text_edit(): spans replaced in one pass, in any order given */
static void
test_text_edit(void **state)
{
	static const char	 t[] = "{\"name\":\"echo\",\"_meta\":{\"a\":1}}";
	struct proto_edit	 e[PROTO_EDITS_MAX + 1];
	char			*out;
	size_t			 len;

	(void)state;
	/* the _meta after the name, given first */
	e[0] = (struct proto_edit){ strstr(t, "{\"a\""), 7, "{}", 2 };
	e[1] = (struct proto_edit){ strstr(t, "\"echo\""), 6, "\"b_echo\"",
	    8 };
	assert_non_null(out = proto_text_edit(t, sizeof(t) - 1, e, 2, &len));
	assert_string_equal(out, "{\"name\":\"b_echo\",\"_meta\":{}}");
	assert_int_equal(len, strlen(out));
	free(out);
	/* none, and one at the very start and end */
	assert_non_null(out = proto_text_edit(t, sizeof(t) - 1, e, 0, &len));
	assert_string_equal(out, t);
	free(out);
	e[0] = (struct proto_edit){ t, 1, "[", 1 };
	e[1] = (struct proto_edit){ t + sizeof(t) - 2, 1, "]", 1 };
	assert_non_null(out = proto_text_edit(t, sizeof(t) - 1, e, 2, &len));
	assert_int_equal(out[0], '[');
	assert_int_equal(out[len - 1], ']');
	free(out);
	assert_non_null(out = proto_text_replace(t, sizeof(t) - 1, t + 1, 6,
	    "\"x\"", 3, &len));
	assert_string_equal(out, "{\"x\":\"echo\",\"_meta\":{\"a\":1}}");
	free(out);
	/* overlapping spans, or too many, are refused */
	e[0] = (struct proto_edit){ t + 1, 6, "", 0 };
	e[1] = (struct proto_edit){ t + 5, 4, "", 0 };
	assert_null(proto_text_edit(t, sizeof(t) - 1, e, 2, &len));
	memset(e, 0, sizeof(e));
	assert_null(proto_text_edit(t, sizeof(t) - 1, e,
	    PROTO_EDITS_MAX + 1, &len));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_agrees_with_jansson),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_text_edit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
