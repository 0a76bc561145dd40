/*
 * W3C Trace Context (tracectx.h): traceparent (Level 1 section 3.2,
 * Level 2 section 3.2 with its versioning rules, 3.2.4), tracestate's
 * list (Level 1 3.3.1: keys in their simple and multi-tenant forms,
 * values, at most 32 members) and the ratio sampler.  Pure, no
 * allocation: what a client sends is read here.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/hex.h"
#include "shared/tracectx.h"

#define TC_STATE_MEMBERS	32	/* list-member 0*31(...) */
#define TC_KEY_MAX		256	/* simple-key: lcalpha 0*255(...) */
#define TC_TENANT_MAX		241	/* tenant-id: 1 + 0*240 */
#define TC_SYSTEM_MAX		14	/* system-id: 1 + 0*13 */
#define TC_VALUE_MAX		256	/* value: 0*255(chr) nblk-chr */
#define TC_RATIO_ONE		(UINT64_C(1) << 56)

/* a lower-case hex digit's value (HEXDIGLC), or -1 */
static int
tc_hexlc(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* 2 * n HEXDIGLC at s into b[n]: 0, or -1 */
static int
tc_unhex(const char *s, uint8_t *b, size_t n)
{
	size_t	i;
	int	hi, lo;

	for (i = 0; i < n; i++) {
		if ((hi = tc_hexlc((unsigned char)s[2 * i])) == -1 ||
		    (lo = tc_hexlc((unsigned char)s[2 * i + 1])) == -1)
			return -1;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int
tc_zero(const uint8_t *b, size_t n)
{
	size_t	i;
	uint8_t	any = 0;

	for (i = 0; i < n; i++)
		any |= b[i];
	return any == 0;
}

static int
tc_ows(char c)
{
	return c == ' ' || c == '\t';
}

int
tracectx_parse(struct tracectx *tc, const char *s, size_t len)
{
	uint8_t	version;

	if (s == NULL)
		return -1;
	while (len > 0 && tc_ows(s[0])) {
		s++;
		len--;
	}
	while (len > 0 && tc_ows(s[len - 1]))
		len--;
	if (len < TRACECTX_HEADER_LEN || tc_unhex(s, &version, 1) == -1 ||
	    version == 0xff)
		return -1;
	/* version 00 is exactly 55 bytes; a later one may go on after a
	 * dash with fields this version does not know */
	if (version == 0 ? len != TRACECTX_HEADER_LEN :
	    len > TRACECTX_HEADER_LEN && s[TRACECTX_HEADER_LEN] != '-')
		return -1;
	if (s[2] != '-' || s[35] != '-' || s[52] != '-' ||
	    tc_unhex(s + 3, tc->tc_trace, TRACECTX_TRACE_LEN) == -1 ||
	    tc_unhex(s + 36, tc->tc_span, TRACECTX_SPAN_LEN) == -1 ||
	    tc_unhex(s + 53, &tc->tc_flags, 1) == -1)
		return -1;
	if (tc_zero(tc->tc_trace, TRACECTX_TRACE_LEN) ||
	    tc_zero(tc->tc_span, TRACECTX_SPAN_LEN))
		return -1;
	return 0;
}

void
tracectx_format(const struct tracectx *tc, char out[TRACECTX_HEADER_LEN + 1])
{
	out[0] = '0';
	out[1] = '0';
	out[2] = '-';
	proto_hex(tc->tc_trace, TRACECTX_TRACE_LEN, out + 3);
	out[35] = '-';
	proto_hex(tc->tc_span, TRACECTX_SPAN_LEN, out + 36);
	out[52] = '-';
	proto_hex(&tc->tc_flags, 1, out + 53);
}

static int
tc_lcalpha(char c)
{
	return c >= 'a' && c <= 'z';
}

/* lcalpha / DIGIT / "_" / "-" / "*" / "/" */
static int
tc_keychar(char c)
{
	return tc_lcalpha(c) || (c >= '0' && c <= '9') || c == '_' ||
	    c == '-' || c == '*' || c == '/';
}

/* a key part of 1..max characters: lcalpha (or a DIGIT, if
 * digit_first) first, then lcalpha / DIGIT / "_" / "-" / "*" / "/" */
static int
tc_keypart(const char *k, size_t n, size_t max, int digit_first)
{
	size_t	i;

	if (n == 0 || n > max || !(tc_lcalpha(k[0]) ||
	    (digit_first && k[0] >= '0' && k[0] <= '9')))
		return -1;
	for (i = 1; i < n; i++)
		if (!tc_keychar(k[i]))
			return -1;
	return 0;
}

/* simple-key, or multi-tenant-key = tenant-id "@" system-id */
static int
tc_state_key(const char *k, size_t n)
{
	const char	*at;
	size_t		 tn;

	if ((at = memchr(k, '@', n)) == NULL)
		return tc_keypart(k, n, TC_KEY_MAX, 0);
	tn = (size_t)(at - k);
	if (tc_keypart(k, tn, TC_TENANT_MAX, 1) == -1)
		return -1;
	return tc_keypart(at + 1, n - tn - 1, TC_SYSTEM_MAX, 0);
}

/* value = 0*255(chr) nblk-chr; trailing OWS is already cut */
static int
tc_state_value(const char *v, size_t n)
{
	size_t	i;

	if (n == 0 || n > TC_VALUE_MAX || v[n - 1] == ' ')
		return -1;
	for (i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
			return -1;
	return 0;
}

int
tracectx_state_check(const char *s, size_t len)
{
	struct {
		const char	*k;
		size_t		 n;
	}		 keys[TC_STATE_MEMBERS];
	const char	*end, *m, *me, *eq;
	size_t		 nmembers = 0, nkeys = 0, i, kn;

	if (s == NULL || len > TRACECTX_STATE_MAX)
		return -1;
	end = s + len;
	for (m = s; ; m = me + 1) {
		if ((me = memchr(m, ',', (size_t)(end - m))) == NULL)
			me = end;
		if (++nmembers > TC_STATE_MEMBERS)
			return -1;
		/* OWS around a member, or a member of OWS alone */
		while (m < me && tc_ows(*m))
			m++;
		while (me > m && tc_ows(me[-1]))
			me--;
		if (m < me) {
			if ((eq = memchr(m, '=', (size_t)(me - m))) == NULL)
				return -1;
			kn = (size_t)(eq - m);
			if (tc_state_key(m, kn) == -1 ||
			    tc_state_value(eq + 1, (size_t)(me - eq - 1)) == -1)
				return -1;
			/* one entry per key (3.3.1.5) */
			for (i = 0; i < nkeys; i++)
				if (keys[i].n == kn &&
				    memcmp(keys[i].k, m, kn) == 0)
					return -1;
			keys[nkeys].k = m;
			keys[nkeys].n = kn;
			nkeys++;
		}
		/* back to the comma that ended this member */
		if ((me = memchr(me, ',', (size_t)(end - me))) == NULL)
			break;
	}
	/* nothing to pass on: an empty list is not sent (3.3.1) */
	return nkeys > 0 ? 0 : -1;
}

uint64_t
tracectx_ratio_threshold(double rate)
{
	/* NaN fails both compares */
	if (!(rate > 0))
		return 0;
	if (rate >= 1)
		return TC_RATIO_ONE;
	/* rate * 2^56 is exact (a power of two), then to the nearest */
	return (uint64_t)(rate * (double)TC_RATIO_ONE + 0.5);
}

int
tracectx_ratio_sampled(const uint8_t trace[TRACECTX_TRACE_LEN],
    uint64_t threshold)
{
	uint64_t	v = 0;
	size_t		i;

	/* the 56 low bits: bytes 9..15, big-endian */
	for (i = 9; i < TRACECTX_TRACE_LEN; i++)
		v = v << 8 | trace[i];
	return v < threshold;
}
