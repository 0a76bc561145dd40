/*
 * W3C Trace Context (shared/tracectx.c): traceparent read as Level 1
 * and 2 have it, tracestate's list rules (3.3.1), and the ratio
 * sampler on the trace id's 56 low bits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/hex.h"
#include "shared/tracectx.h"

#define TP	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static int
parse(const char *s, struct tracectx *tc)
{
	return tracectx_parse(tc, s, strlen(s));
}

static void
test_parse_valid(void **state)
{
	static const uint8_t	trace[16] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77,
				    0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d,
				    0x0e, 0x0e, 0x47, 0x36 };
	static const uint8_t	span[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b,
				    0xa9, 0x02, 0xb7 };
	struct tracectx		tc;
	char			out[TRACECTX_HEADER_LEN + 1];

	(void)state;
	assert_int_equal(parse(TP, &tc), 0);
	assert_memory_equal(tc.tc_trace, trace, 16);
	assert_memory_equal(tc.tc_span, span, 8);
	assert_int_equal(tc.tc_flags, 0x01);
	tracectx_format(&tc, out);
	assert_string_equal(out, TP);

	/* no NUL needed: a length in the middle of a longer buffer */
	assert_int_equal(tracectx_parse(&tc, TP "zzz", TRACECTX_HEADER_LEN),
	    0);
}

#define IDS	"-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-"

static void
test_parse_versions(void **state)
{
	static const struct {
		const char	*s;
		int		 rc;
		int		 flags;
	} cases[] = {
		/* OWS around the value */
		{ " \t" TP "\t ", 0, 1 },
		/* flags other than sampled kept as read (Level 2: random) */
		{ "00" IDS "03", 0, 3 },
		{ "00" IDS "00", 0, 0 },
		/* a later version: its first 55 bytes, then the end or '-' */
		{ "cc" IDS "01", 0, 1 },
		{ "01" IDS "09-what-comes-next", 0, 9 },
		{ "01" IDS "01-", 0, 1 },
		{ "01" IDS "01x", -1, 0 },
		{ "01" IDS "0", -1, 0 },
		/* version 00 is exactly 55 bytes */
		{ TP "-", -1, 0 },
		{ TP "-00", -1, 0 },
		/* ff is forbidden */
		{ "ff" IDS "01", -1, 0 },
		{ "ff" IDS "01-00", -1, 0 },
	};
	struct tracectx	tc;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (parse(cases[i].s, &tc) != cases[i].rc)
			fail_msg("\"%s\": not %d", cases[i].s, cases[i].rc);
		if (cases[i].rc == 0 && (tc.tc_flags != cases[i].flags ||
		    tc.tc_trace[15] != 0x36 || tc.tc_span[7] != 0xb7))
			fail_msg("\"%s\": flags %02x", cases[i].s,
			    tc.tc_flags);
	}
}

static void
test_parse_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"   ",
		"00",
		/* upper-case hex, anywhere */
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
		"0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		/* all-zero ids */
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		/* wrong delimiters, lengths, characters */
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
		"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bx-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
		"0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		/* inner whitespace is no OWS */
		"00- 4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
		/* a newline is no OWS either */
		"\n00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	};
	struct tracectx	tc;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &tc) != -1)
			fail_msg("accepted: \"%s\"", bad[i]);
	/* a NUL inside the length is a bad byte, not an end */
	assert_int_equal(tracectx_parse(&tc, "00-4bf92f3577b34da6a3ce929d0e0e"
	    "4736-00f067aa0ba902b7-01\0", TRACECTX_HEADER_LEN + 1), -1);
	assert_int_equal(tracectx_parse(&tc, NULL, 0), -1);
}

static void
test_hex_format(void **state)
{
	static const uint8_t	b[3] = { 0x00, 0xab, 0xff };
	struct tracectx		tc;
	char			out[TRACECTX_HEADER_LEN + 1], h[7];

	(void)state;
	proto_hex(b, 3, h);
	assert_string_equal(h, "00abff");
	memset(&tc, 0, sizeof(tc));
	tc.tc_trace[0] = 0x80;
	tc.tc_trace[15] = 0x01;
	tc.tc_span[7] = 0xfe;
	tc.tc_flags = TRACECTX_SAMPLED;
	tracectx_format(&tc, out);
	assert_int_equal(strlen(out), TRACECTX_HEADER_LEN);
	assert_string_equal(out, "00-80000000000000000000000000000001-"
	    "00000000000000fe-01");
}

static int
state_ok(const char *s)
{
	return tracectx_state_check(s, strlen(s));
}

/* tracestate_check() on head, n times c, then tail (in buf) */
static int
state_run(char *buf, const char *head, char c, size_t n, const char *tail)
{
	size_t hl = strlen(head);

	memcpy(buf, head, hl);
	memset(buf + hl, c, n);
	(void)strcpy(buf + hl + n, tail);
	return state_ok(buf);
}

static void
test_state(void **state)
{
	static const char *const good[] = {
		"congo=t61rcWkgMzE",
		"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
		" rojo=1 , congo=2 ",
		"rojo=1,,congo=2",		/* empty member */
		"rojo=1, \t ,congo=2",		/* OWS-only member */
		",rojo=1,",
		"a=b", "a1_-*/=x", "0tenant@sys=1", "t@s=1",
		"a-b*c/d@x1_-*/=1",
		"k= leading space kept",	/* value: 0*255(chr) nblk */
		"k=!\"#$%&'()*+-./09:;<>?@AZ[\\]^_`az{|}~",
		"k=a b c",
	};
	static const char *const bad[] = {
		"", " ", ",", " , ,",		/* nothing to pass on */
		"Congo=1",			/* upper case key */
		"1abc=1",			/* simple key starts lcalpha */
		"_a=1", "a b=1", "a.b=1", "a=",
		"=1", "a", "a=1=2", "a=1,b",
		"a=x\ty",			/* tab inside a value */
		"a=\x7f", "a=\xc3\xa9",
		"@sys=1", "t@=1", "t@1sys=1", "t@s@x=1", "T@s=1",
		"t@s.x=1",
		"a=1,a=2",			/* one entry per key */
		"a=1,b=2, a=3",
	};
	char	buf[1024];
	size_t	i, n;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (state_ok(good[i]) != 0)
			fail_msg("refused: \"%s\"", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (state_ok(bad[i]) != -1)
			fail_msg("accepted: \"%s\"", bad[i]);
	assert_int_equal(tracectx_state_check(NULL, 0), -1);
	/* a length, not a NUL: a comma past it is not read */
	assert_int_equal(tracectx_state_check("a=1,", 3), 0);
	assert_int_equal(tracectx_state_check("a=1\0b=2", 7), -1);

	/* 32 members, empty ones counted; not 33 */
	n = 0;
	for (i = 0; i < 32; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%sk%zu=v",
		    i > 0 ? "," : "", i);
	assert_int_equal(tracectx_state_check(buf, n), 0);
	memcpy(buf + n, ",", 2);
	assert_int_equal(tracectx_state_check(buf, n + 1), -1);
	memcpy(buf + n, ",k32=v", 7);
	assert_int_equal(tracectx_state_check(buf, n + 6), -1);

	/* keys: simple 256, tenant 241 and system 14 at most */
	assert_int_equal(state_run(buf, "", 'a', 256, "=v"), 0);
	assert_int_equal(state_run(buf, "", 'a', 257, "=v"), -1);
	assert_int_equal(state_run(buf, "", '1', 241, "@abcdefghijklmn=v"), 0);
	assert_int_equal(state_run(buf, "", '1', 242, "@s=v"), -1);
	assert_int_equal(state_run(buf, "t@", 'a', 15, "=v"), -1);
	/* values: 256 at most */
	assert_int_equal(state_run(buf, "k=", 'v', 256, ""), 0);
	assert_int_equal(state_run(buf, "k=", 'v', 257, ""), -1);

	/* TRACECTX_STATE_MAX bytes in all, OWS too */
	memset(buf, ' ', 600);
	memcpy(buf, "a=1", 3);
	assert_int_equal(tracectx_state_check(buf, TRACECTX_STATE_MAX), 0);
	assert_int_equal(tracectx_state_check(buf, TRACECTX_STATE_MAX + 1),
	    -1);
}

/* a trace id whose 56 low bits are v */
static void
trace_low(uint8_t trace[16], uint64_t v)
{
	int i;

	memset(trace, 0xa5, 16);
	for (i = 15; i >= 9; i--) {
		trace[i] = (uint8_t)v;
		v >>= 8;
	}
}

static void
test_ratio(void **state)
{
	uint8_t		t[16];
	uint64_t	one = UINT64_C(1) << 56, th, i, n;

	(void)state;
	assert_int_equal(tracectx_ratio_threshold(0), 0);
	assert_int_equal(tracectx_ratio_threshold(-0.5), 0);
	assert_int_equal(tracectx_ratio_threshold(NAN), 0);
	assert_int_equal(tracectx_ratio_threshold(-INFINITY), 0);
	assert_int_equal(tracectx_ratio_threshold(1), one);
	assert_int_equal(tracectx_ratio_threshold(7.5), one);
	assert_int_equal(tracectx_ratio_threshold(INFINITY), one);
	assert_int_equal(tracectx_ratio_threshold(0.5), one / 2);
	assert_int_equal(tracectx_ratio_threshold(0.25), one / 4);
	/* the double nearest 0.05 times 2^56 is a whole number; that of
	 * 0.001 is 72057594037927.9375: rounded to the nearest */
	assert_int_equal(tracectx_ratio_threshold(0.05),
	    UINT64_C(3602879701896397));
	assert_int_equal(tracectx_ratio_threshold(0.001),
	    UINT64_C(72057594037928));
	assert_int_equal(tracectx_ratio_threshold(ldexp(3, -58)), 1);
	/* the smallest rates round to one trace id value, or to none */
	assert_int_equal(tracectx_ratio_threshold(ldexp(1, -56)), 1);
	assert_int_equal(tracectx_ratio_threshold(ldexp(1, -58)), 0);

	/* sampled iff the low 56 bits are below the threshold */
	th = tracectx_ratio_threshold(0.5);
	trace_low(t, th - 1);
	assert_true(tracectx_ratio_sampled(t, th));
	trace_low(t, th);
	assert_false(tracectx_ratio_sampled(t, th));
	/* bytes 0..8 do not count */
	trace_low(t, 0);
	memset(t, 0xff, 9);
	assert_true(tracectx_ratio_sampled(t, 1));
	assert_false(tracectx_ratio_sampled(t, 0));
	/* rate 1 takes the largest value, rate 0 not the smallest */
	trace_low(t, one - 1);
	memset(t, 0xff, 16);
	assert_true(tracectx_ratio_sampled(t, tracectx_ratio_threshold(1)));
	memset(t, 0, 16);
	assert_false(tracectx_ratio_sampled(t, tracectx_ratio_threshold(0)));
	/* big-endian: byte 9 is the high one */
	memset(t, 0, 16);
	t[9] = 0x80;
	assert_false(tracectx_ratio_sampled(t, one / 2));
	t[9] = 0x7f;
	memset(t + 10, 0xff, 6);
	assert_true(tracectx_ratio_sampled(t, one / 2));

	/* evenly spread ids: the share sampled is the rate */
	th = tracectx_ratio_threshold(0.1);
	for (i = n = 0; i < 1000; i++) {
		trace_low(t, i * (one / 1000) + 12345);
		n += (uint64_t)tracectx_ratio_sampled(t, th);
	}
	assert_int_equal(n, 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_versions),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_hex_format),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_ratio),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
