/*
 * HTTP header rules of the Streamable HTTP transport (MCP 2025-11-25,
 * Transports, Streamable HTTP): Accept, Content-Type, session ids,
 * protocol versions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "proto/proto.h"
#include "proto/headers.h"

/* Legacy versions served, newest first: the first is the default pick */
static const char *const proto_legacy_versions[] = {
	MCP_VERSION_LEGACY,
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
};
#define NLEGACY (sizeof(proto_legacy_versions) / \
	sizeof(proto_legacy_versions[0]))

/* how closely a media range matches: exact beats type/x beats x/x */
enum proto_match {
	MATCH_NONE = 0,
	MATCH_ANY,		/* x/x (any type, any subtype) */
	MATCH_TYPE,		/* type/x */
	MATCH_EXACT
};

static int	 proto_is_ows(char);
static const char *proto_skip_ows(const char *);
static const char *proto_token(const char *, size_t *);
static int	 proto_qvalue_zero(const char *, size_t);
static const char *proto_range_parse(const char *, const char *,
		    size_t, const char *, size_t, enum proto_match *,
		    int *);

static int
proto_is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* RFC 9110 tchar: a table, as the front tests every byte of a head */
const unsigned char proto_tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1,
	['\''] = 1, ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,
	['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
	['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1,
	['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
	['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1,
	['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
	['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1,
	['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1,
	['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1,
	['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
	['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1,
	['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

static const char *
proto_skip_ows(const char *p)
{
	while (proto_is_ows(*p))
		p++;
	return p;
}

/* a token at p; its length in *len (0 if none) */
static const char *
proto_token(const char *p, size_t *len)
{
	const char *s = p;

	while (proto_is_tchar(*p))
		p++;
	*len = (size_t)(p - s);
	return s;
}

/*
 * RFC 9110 qvalue: "0" [ "." 0*3DIGIT ] / "1" [ "." 0*3("0") ].
 * 1 only for a well-formed zero.  A malformed q is ignored (the range
 * stays acceptable): being lenient here avoids a needless 406.
 */
static int
proto_qvalue_zero(const char *v, size_t n)
{
	size_t i;

	if (n == 0 || v[0] != '0')
		return 0;
	if (n == 1)
		return 1;
	if (v[1] != '.' || n > 5)
		return 0;
	for (i = 2; i < n; i++)
		if (v[i] != '0')
			return 0;
	return 1;
}

/*
 * Parse one media range starting at p (after OWS) and match it against
 * type/sub.  Returns where the next range starts (past the comma, or at
 * the NUL); *match and *zero describe the range.  A malformed range
 * matches nothing and is skipped up to the next comma outside quotes.
 */
static const char *
proto_range_parse(const char *p, const char *type, size_t tlen,
    const char *sub, size_t slen, enum proto_match *match, int *zero)
{
	const char	*t, *s, *name, *val;
	size_t		 tl, sl, nl, vl;
	int		 bad = 0;

	*match = MATCH_NONE;
	*zero = 0;
	t = proto_token(p, &tl);
	p = t + tl;
	if (tl == 0 || *p != '/') {
		bad = 1;
		goto skip;
	}
	s = proto_token(p + 1, &sl);
	p = s + sl;
	if (sl == 0) {
		bad = 1;
		goto skip;
	}
	if (tl == 1 && t[0] == '*') {
		if (sl == 1 && s[0] == '*')
			*match = MATCH_ANY;
		else
			bad = 1;	/* "x/json" is not a media range */
	} else if (tl == tlen && strncasecmp(t, type, tl) == 0) {
		if (sl == 1 && s[0] == '*')
			*match = MATCH_TYPE;
		else if (sl == slen && strncasecmp(s, sub, sl) == 0)
			*match = MATCH_EXACT;
	}

	/* parameters: OWS ";" OWS name "=" ( token / quoted-string ) */
	for (;;) {
		p = proto_skip_ows(p);
		if (*p != ';')
			break;
		p = proto_skip_ows(p + 1);
		name = proto_token(p, &nl);
		p = proto_skip_ows(name + nl);
		if (nl == 0) {
			/* a stray ";" ("a/b;" or "a/b;;c=d") is tolerated */
			continue;
		}
		if (*p != '=') {
			bad = 1;
			goto skip;
		}
		p = proto_skip_ows(p + 1);
		if (*p == '"') {
			for (p++; *p != '\0' && *p != '"'; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			if (*p != '"') {
				bad = 1;
				goto skip;
			}
			p++;
			continue;
		}
		val = proto_token(p, &vl);
		p = val + vl;
		if (nl == 1 && (name[0] == 'q' || name[0] == 'Q') &&
		    proto_qvalue_zero(val, vl))
			*zero = 1;
	}

skip:
	/* find the comma that ends this range, honouring quotes */
	while (*p != '\0' && *p != ',') {
		if (*p == '"') {
			bad = 1;
			for (p++; *p != '\0' && *p != '"'; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			if (*p == '\0')
				break;
		} else if (!bad && !proto_is_ows(*p))
			bad = 1;	/* junk after the range */
		p++;
	}
	if (bad)
		*match = MATCH_NONE;
	return *p == ',' ? p + 1 : p;
}

/* *p moved to the next range of a list (past OWS and empty elements):
 * 1, or 0 at its end */
static int
proto_range_next(const char **p)
{
	for (;;) {
		*p = proto_skip_ows(*p);
		if (**p != ',')
			return **p != '\0';
		(*p)++;
	}
}

int
proto_accept_has(const char *accept, const char *type)
{
	const char	*slash, *p;
	enum proto_match best = MATCH_NONE, m;
	int		 zero, best_ok = 0;
	size_t		 tlen;

	if (accept == NULL || type == NULL ||
	    (slash = strchr(type, '/')) == NULL)
		return 0;
	tlen = (size_t)(slash - type);
	/*
	 * RFC 9110 12.5.1: the most specific matching range decides;
	 * among equally specific ones any q > 0 makes it acceptable.
	 */
	for (p = accept; proto_range_next(&p);) {
		p = proto_range_parse(p, type, tlen, slash + 1,
		    strlen(slash + 1), &m, &zero);
		if (m == MATCH_NONE || m < best)
			continue;
		if (m > best) {
			best = m;
			best_ok = 0;
		}
		if (!zero)
			best_ok = 1;
	}
	return best != MATCH_NONE && best_ok;
}

/*
 * Does an Accept value name type before other?  The first range of the
 * two exact types acceptable (q > 0) that is listed decides; vmcpd goes
 * by order, not by q-value (RFC 9110 12.5.1 leaves a tie to the server).
 */
int
proto_accept_prefers(const char *accept, const char *type, const char *other)
{
	const char		*p, *q, *s1, *s2;
	enum proto_match	 m;
	int			 zero;
	size_t			 t1, t2;

	if (accept == NULL || (s1 = strchr(type, '/')) == NULL ||
	    (s2 = strchr(other, '/')) == NULL)
		return 0;
	t1 = (size_t)(s1 - type);
	t2 = (size_t)(s2 - other);
	for (p = accept; proto_range_next(&p);) {
		q = proto_range_parse(p, type, t1, s1 + 1, strlen(s1 + 1), &m,
		    &zero);
		if (m == MATCH_EXACT && !zero)
			return 1;
		(void)proto_range_parse(p, other, t2, s2 + 1, strlen(s2 + 1),
		    &m, &zero);
		if (m == MATCH_EXACT && !zero)
			return 0;
		p = q;
	}
	return 0;
}

int
proto_content_type_is_json(const char *ctype)
{
	static const char	 json[] = "application/json";
	const char		*p;

	if (ctype == NULL)
		return 0;
	p = proto_skip_ows(ctype);
	if (strncasecmp(p, json, sizeof(json) - 1) != 0)
		return 0;
	p = proto_skip_ows(p + sizeof(json) - 1);
	return *p == '\0' || *p == ';';
}

int
proto_tool_name_valid(const char *name, size_t len)
{
	size_t	i;

	if (len == 0 || len > PROTO_TOOL_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '_' || name[i] == '-' || name[i] == '.'))
			return 0;
	return 1;
}

int
proto_session_id_valid(const char *sid)
{
	const uint64_t	 ones = 0x0101010101010101ULL;
	const uint64_t	 high = 0x8080808080808080ULL;
	uint64_t	 x;
	size_t		 n, i;

	if (sid == NULL || (n = strnlen(sid, 129)) == 0 || n > 128)
		return 0;
	if (n < 8) {
		for (i = 0; i < n; i++)
			if (sid[i] < 0x21 || sid[i] > 0x7e)
				return 0;
		return 1;
	}
	/*
	 * Eight bytes at a time, the last word overlapping: a byte below
	 * 0x21 borrows, 0x7f and up carry into or hold the high bit (a
	 * false flag needs a true one below it).
	 */
	for (i = 0;; i += 8) {
		if (i + 8 > n)
			i = n - 8;
		memcpy(&x, sid + i, 8);
		if (((((x - ones * 0x21) & ~x) | (x + ones) | x) & high) != 0)
			return 0;
		if (i + 8 == n)
			return 1;
	}
}

/* always a static string: the requested version if served, else ours */
const char *
proto_legacy_version_pick(const char *requested)
{
	size_t i;

	if (requested != NULL)
		for (i = 0; i < NLEGACY; i++)
			if (strcmp(requested, proto_legacy_versions[i]) == 0)
				return proto_legacy_versions[i];
	return proto_legacy_versions[0];
}

int
proto_version_known(const char *version)
{
	return proto_era_of_version(version) != PROTO_ERA_UNKNOWN;
}

const char *
proto_era_version(enum proto_era era)
{
	switch (era) {
	case PROTO_ERA_LEGACY:
		return MCP_VERSION_LEGACY;
	case PROTO_ERA_MODERN:
		return MCP_VERSION_MODERN;
	case PROTO_ERA_BOTH:
		return "both";
	case PROTO_ERA_UNKNOWN:
		break;
	}
	return "unknown";
}

enum proto_era
proto_era_of_version(const char *version)
{
	size_t i;

	if (version == NULL)
		return PROTO_ERA_UNKNOWN;
	if (strcmp(version, MCP_VERSION_MODERN) == 0)
		return PROTO_ERA_MODERN;
	for (i = 0; i < NLEGACY; i++)
		if (strcmp(version, proto_legacy_versions[i]) == 0)
			return PROTO_ERA_LEGACY;
	return PROTO_ERA_UNKNOWN;
}

/* a field value's span without its leading and trailing OWS */
void
proto_ows_trim(const char **v, const char **e)
{
	while (*v < *e && proto_is_ows(**v))
		(*v)++;
	while (*e > *v && proto_is_ows((*e)[-1]))
		(*e)--;
}

/* RFC 9112 section 5 (obs-fold: 5.2), RFC 9110 section 5.5 */
const char *
proto_field_line_problem(const char *line, size_t len)
{
	size_t	n = 0;

	/* obs-fold continues the value before: taken as one SP */
	if (len == 0 || !proto_is_ows(line[0])) {
		while (n < len && line[n] != ':')
			if (!proto_is_tchar(line[n++]))
				return "a header name that is not a token";
		if (n == len || n == 0)
			return "a header line without a name and a colon";
	}
	if (proto_value_stop(line + n, line + len) != line + len)
		return "a control character in a header value";
	return NULL;
}

/* proto_value_stop()'s answer, as a pointer or NULL */
const char *
proto_value_ctl(const char *v, size_t n)
{
	const char *e = proto_value_stop(v, v + n);

	return e == v + n ? NULL : e;
}

/*
 * Sixteen bytes at a time with SSE2 (every x86-64): an unsigned min
 * finds the bytes up to 0x1f, HTAB is let through, DEL added.
 */
const char *
proto_value_stop(const char *p, const char *end)
{
	unsigned char	 c;
#ifdef __SSE2__
	const __m128i	 c1f = _mm_set1_epi8(0x1f);
	const __m128i	 tab = _mm_set1_epi8('\t');
	const __m128i	 del = _mm_set1_epi8(0x7f);
	__m128i		 x, m;
	int		 bits;

	while (end - p >= 16) {
		x = _mm_loadu_si128((const __m128i *)(const void *)p);
		m = _mm_andnot_si128(_mm_cmpeq_epi8(x, tab),
		    _mm_cmpeq_epi8(_mm_min_epu8(x, c1f), x));
		m = _mm_or_si128(m, _mm_cmpeq_epi8(x, del));
		if ((bits = _mm_movemask_epi8(m)) != 0)
			return p + __builtin_ctz((unsigned int)bits);
		p += 16;
	}
#endif
	for (; p < end; p++) {
		c = (unsigned char)*p;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			break;
	}
	return p;
}

/*
 * A bearer token is ~800 bytes a request: sixteen at a time with SSE2,
 * each range [lo, hi] tested by one add and one signed compare (x +
 * 0x80 - lo < -0x80 + hi - lo + 1); bytes past 0x7f fall out of every
 * range, as they should.
 */
#define B64T_RANGE(x, lo, hi)	_mm_cmplt_epi8(_mm_add_epi8((x),	\
	    _mm_set1_epi8((char)(0x80 - (lo)))),				\
	    _mm_set1_epi8((char)(-0x80 + (hi) - (lo) + 1)))

const char *
proto_b64token_stop(const char *p, const char *end)
{
	unsigned char	 c;
#ifdef __SSE2__
	__m128i		 x, ok;
	int		 bits;

	while (end - p >= 16) {
		x = _mm_loadu_si128((const __m128i *)(const void *)p);
		ok = _mm_or_si128(_mm_or_si128(B64T_RANGE(x, 'A', 'Z'),
		    B64T_RANGE(x, 'a', 'z')), _mm_or_si128(B64T_RANGE(x, '0',
		    '9'), B64T_RANGE(x, '-', '/')));
		ok = _mm_or_si128(ok, _mm_or_si128(_mm_or_si128(
		    _mm_cmpeq_epi8(x, _mm_set1_epi8('_')),
		    _mm_cmpeq_epi8(x, _mm_set1_epi8('~'))),
		    _mm_cmpeq_epi8(x, _mm_set1_epi8('+'))));
		if ((bits = _mm_movemask_epi8(ok)) != 0xffff)
			return p + __builtin_ctz((unsigned int)~bits);
		p += 16;
	}
#endif
	for (; p < end; p++) {
		c = (unsigned char)*p;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || (c >= '-' && c <= '/') ||
		    c == '_' || c == '~' || c == '+'))
			break;
	}
	return p;
}

char *
proto_utoa(char *end, uint64_t v, int base)
{
	do {
		*--end = "0123456789abcdef"[v % (unsigned int)base];
		v /= (unsigned int)base;
	} while (v != 0);
	return end;
}

int
proto_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
