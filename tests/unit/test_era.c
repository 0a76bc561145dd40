/*
 * The era policy (proto_era_pick()): the revision a backend request goes
 * in, for each backend setting, what is recorded of the backend and the
 * client's era; and the second probe that finds a backend speaking both
 * (proto_probe_initialize()).  Table-driven.
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
#include "proto/probe.h"

#define U	PROTO_ERA_UNKNOWN
#define L	PROTO_ERA_LEGACY
#define M	PROTO_ERA_MODERN
#define B	PROTO_ERA_BOTH

static void
test_pick(void **state)
{
	static const struct {
		enum proto_era	 pin, record, client, want;
	} t[] = {
		/* auto, a one-revision backend: its own, whoever asks */
		{ U, L, L, L }, { U, L, M, L }, { U, L, U, L },
		{ U, M, L, M }, { U, M, M, M }, { U, M, U, M },
		/* auto, both: the client's; lists and notifications Modern */
		{ U, B, L, L }, { U, B, M, M }, { U, B, U, M },
		/* auto, not known yet: probe first */
		{ U, U, L, U }, { U, U, M, U }, { U, U, U, U },
		/* a pin wins over any record and any client */
		{ L, U, M, L }, { L, M, M, L }, { L, B, M, L }, { L, B, U, L },
		{ M, U, L, M }, { M, L, L, M }, { M, B, L, M }, { M, B, U, M },
	};
	size_t		 i;
	enum proto_era	 got;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got = proto_era_pick(t[i].pin, t[i].record, t[i].client);
		if (got != t[i].want)
			fail_msg("case %zu (pin %d, record %d, client %d): "
			    "got %d, want %d", i, (int)t[i].pin,
			    (int)t[i].record, (int)t[i].client, (int)got,
			    (int)t[i].want);
	}
	assert_string_equal(proto_era_version(B), "both");
	/* "both" is a record, never a protocol version */
	assert_int_equal(proto_era_of_version("both"), U);
}

static void
test_probe_initialize(void **state)
{
	static const struct {
		int		 answered;
		long		 status;
		const char	*msg;
		enum proto_era	 want;
	} t[] = {
		{ 0, 0, NULL, U },
		{ 1, 401, NULL, U },
		{ 1, 503, NULL, U },
		{ 1, 429, NULL, U },
		/* negotiates a 2025 revision: speaks both */
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}",
		    B },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"protocolVersion\":\"2025-06-18\"}}", B },
		/* anything else: 2026-07-28 only */
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
		    "\"protocolVersion\":\"2026-07-28\"}}", M },
		{ 1, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", M },
		{ 1, 400, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
		    "-32022,\"message\":\"x\",\"data\":{\"supported\":"
		    "[\"2026-07-28\"]}}}", M },
		{ 1, 404, NULL, M },
		{ 1, 200, "[1]", M },
	};
	json_error_t	 jerr;
	json_t		*msg;
	char		 why[160];
	size_t		 i;
	enum proto_era	 got;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		msg = t[i].msg != NULL ? json_loads(t[i].msg, 0, &jerr) : NULL;
		if (t[i].msg != NULL)
			assert_non_null(msg);
		why[0] = '\0';
		got = proto_probe_initialize(t[i].answered, t[i].status, msg,
		    why, sizeof(why));
		if (got != t[i].want)
			fail_msg("case %zu: got %d, want %d (%s)", i, (int)got,
			    (int)t[i].want, why);
		assert_true(why[0] != '\0');
		json_decref(msg);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_probe_initialize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
