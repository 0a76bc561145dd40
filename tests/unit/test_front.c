/*
 * front.c: the JSON-RPC envelope the front writes around a member
 * text it already has.  The common ids are written in place; every id
 * must come out exactly as jansson writes it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/config.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"

static void
check_compose(json_t *id, const char *kind)
{
	static const char	 member[] = "{\"content\":[]}";
	char			*want, *got, *idtext;
	size_t			 len;

	if ((idtext = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY)) ==
	    NULL || asprintf(&want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"%s\":%s}",
	    idtext, kind, member) == -1)
		fail_msg("out of memory");
	got = front_compose(id, kind, member, sizeof(member) - 1, &len);
	assert_non_null(got);
	assert_int_equal(len, strlen(got));
	if (strcmp(got, want) != 0)
		fail_msg("id %s: got %s", idtext, got);
	free(idtext);
	free(want);
	free(got);
	json_decref(id);
}

static void
test_front_envelope(void **state)
{
	static const char *const strings[] = {
		"", "a", "vmcpd-r-1", "with space", "quote\"inside",
		"back\\slash", "tab\there", "nl\n", "h\xc3\xa9llo", "del\x7f",
		"0123456789012345678901234567890123456789012345678",
		"012345678901234567890123456789012345678901234567",
		"/slash/",
	};
	static const json_int_t ints[] = {
		0, 1, -1, 42, 9007199254740993LL, INT64_MAX, INT64_MIN,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		check_compose(json_integer(ints[i]), "result");
		check_compose(json_integer(ints[i]), "error");
	}
	for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		check_compose(json_string(strings[i]), "result");
	check_compose(json_stringn("nul\0inside", 10), "result");
	check_compose(json_null(), "error");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_front_envelope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
