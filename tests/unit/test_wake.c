/*
 * worker/process/wake.c's datagram codec: every type round-trips, and what is
 * not one well-formed datagram of a known type is refused (table-driven).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/process/wake.h"

struct enc_case {
	enum wake_type	 type;
	const char	*a;
	const char	*b;
	int		 ok;
};

static void
test_roundtrip(void **state)
{
	static const struct enc_case c[] = {
		{ WAKE_STREAM, "0123456789abcdef", NULL, 1 },
		{ WAKE_LISTEN, "tools", NULL, 1 },
		{ WAKE_LISTEN, "updated", "file:///a b?c", 1 },
		{ WAKE_MRTR, "vmcpd-mrtr-42", NULL, 1 },
		{ WAKE_RESUBSCRIBE, "weather", NULL, 1 },
		{ WAKE_CANCEL, "sid", "{\"requestId\":7}", 1 },
		{ WAKE_VIEW_BUILD, "view|1.2|anon|", NULL, 1 },
		{ WAKE_VIEW_BUILD, "view|1.2|anon|", "weather", 1 },
		{ WAKE_VIEW_READY, "view|1.2|anon|", NULL, 1 },
		/* an empty b is no b */
		{ WAKE_LISTEN, "tools", "", 1 },
		{ WAKE_STREAM, "sid", "", 1 },
		/* refused: no a, a b where the type takes none, no type */
		{ WAKE_STREAM, "", NULL, 0 },
		{ WAKE_STREAM, NULL, NULL, 0 },
		{ WAKE_STREAM, "sid", "0123456789abcdef", 1 },	/* a POST's */
		{ WAKE_MRTR, "id", "extra", 0 },
		{ WAKE_RESUBSCRIBE, "be", "extra", 0 },
		{ WAKE_VIEW_READY, "view|1.2|anon|", "extra", 0 },
		/* WAKE_CANCEL always names the request */
		{ WAKE_CANCEL, "sid", NULL, 0 },
		{ WAKE_CANCEL, "sid", "", 0 },
		{ (enum wake_type)0, "x", NULL, 0 },
		{ (enum wake_type)99, "x", NULL, 0 },
	};
	unsigned char	 buf[WAKE_MSG_MAX];
	struct wake_msg	 m;
	size_t		 i, len;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		len = wake_encode(c[i].type, c[i].a, c[i].b, buf);
		if (!c[i].ok) {
			if (len != 0)
				fail_msg("case %zu: encoded, want refused", i);
			continue;
		}
		if (len == 0)
			fail_msg("case %zu: refused", i);
		assert_int_equal(wake_decode(buf, len, &m), 0);
		assert_int_equal(m.wm_type, c[i].type);
		assert_string_equal(m.wm_a, c[i].a);
		assert_string_equal(m.wm_b, c[i].b != NULL ? c[i].b : "");
		/* any prefix is not a datagram */
		assert_int_equal(wake_decode(buf, len - 1, &m), -1);
	}
}

static void
test_limits(void **state)
{
	unsigned char	 buf[WAKE_MSG_MAX];
	struct wake_msg	 m;
	char		*big;

	(void)state;
	big = malloc(WAKE_ARG_MAX + 2);
	assert_non_null(big);
	memset(big, 'u', WAKE_ARG_MAX + 1);
	big[WAKE_ARG_MAX + 1] = '\0';
	assert_int_equal(wake_encode(WAKE_STREAM, big, NULL, buf), 0);
	big[WAKE_ARG_MAX] = '\0';
	assert_int_equal(wake_encode(WAKE_STREAM, big, NULL, buf),
	    WAKE_MSG_MAX);
	assert_int_equal(wake_decode(buf, WAKE_MSG_MAX, &m), 0);
	assert_int_equal(strlen(m.wm_a), WAKE_ARG_MAX);
	/* a and b together must fit too */
	assert_int_equal(wake_encode(WAKE_LISTEN, "updated", big, buf), 0);
	big[WAKE_ARG_MAX - 7] = '\0';
	assert_int_equal(wake_encode(WAKE_LISTEN, "updated", big, buf),
	    WAKE_MSG_MAX);
	free(big);
}

/* a well-formed datagram, then one field broken at a time */
static void
test_malformed(void **state)
{
	unsigned char	 buf[WAKE_MSG_MAX + 8], bad[WAKE_MSG_MAX + 8];
	struct wake_hdr	 h;
	struct wake_msg	 m;
	size_t		 len;

	(void)state;
	len = wake_encode(WAKE_LISTEN, "updated", "res://x", buf);
	assert_true(len > sizeof(h));
	assert_int_equal(wake_decode(buf, len, &m), 0);

	/* too short for a header; longer than its lengths say */
	assert_int_equal(wake_decode(buf, sizeof(h) - 1, &m), -1);
	memcpy(bad, buf, len);
	bad[len] = 'x';
	assert_int_equal(wake_decode(bad, len + 1, &m), -1);
	/* the old text form */
	assert_int_equal(wake_decode((const unsigned char *)"L tools", 7, &m),
	    -1);

#define BREAK(field, value) do {					\
	memcpy(bad, buf, len);						\
	memcpy(&h, bad, sizeof(h));					\
	h.field = (value);						\
	memcpy(bad, &h, sizeof(h));					\
	assert_int_equal(wake_decode(bad, len, &m), -1);		\
} while (0)
	BREAK(wh_version, WAKE_VERSION + 1);
	BREAK(wh_type, 0);
	BREAK(wh_type, WAKE_VIEW_READY + 1);
	BREAK(wh_type, WAKE_MRTR);	/* takes no b */
	BREAK(wh_pad, 1);
	BREAK(wh_alen, 0);
#undef BREAK

	/* a NUL inside an argument */
	memcpy(bad, buf, len);
	bad[sizeof(h) + 2] = '\0';
	assert_int_equal(wake_decode(bad, len, &m), -1);
	memcpy(bad, buf, len);
	bad[len - 1] = '\0';
	assert_int_equal(wake_decode(bad, len, &m), -1);
	/* over the size of a datagram */
	memset(bad, 0, sizeof(bad));
	assert_int_equal(wake_decode(bad, WAKE_MSG_MAX + 1, &m), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
