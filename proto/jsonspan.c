/*
 * A validating JSON scanner that allocates nothing: it checks that a
 * text is one JSON object (RFC 8259, UTF-8) and reports where each
 * top-level member's key and value lie in it.  The relay uses it to
 * pass a backend's result on byte for byte, under the client's id,
 * instead of parsing it into a tree and serialising it again.
 *
 * Its strict mode answers another question, for fast paths that then
 * skip jansson: would json_loadb() with JSON_REJECT_DUPLICATES and
 * JSON_ALLOW_NUL (as jsonrpc_parse() loads) surely load this text?
 * It also says no to what it cannot decide cheaply (escaped keys, many
 * keys, numbers near the limits of jansson's types), so a "no" means
 * "ask jansson", never "jansson refuses".
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <jansson.h>

#include "proto/headers.h"
#include "proto/jsonspan.h"

#define SPAN_DEPTH_MAX		512	/* jansson's own limit is 2048 */
#define SPAN_KEYS_MAX		64	/* keys of all open objects, strict */
#define SPAN_REAL_DIGITS_MAX	300	/* reals below 1e300 fit a double */
#define SPAN_INT_DIGITS		19	/* as many as INT64_MAX has */

/* jansson 2.14 on this platform: json_int_t is long long */
_Static_assert(sizeof(json_int_t) == 8, "json_int_t is not 64 bits");

struct scan_key {
	const unsigned char	*sk_p;
	size_t			 sk_len;
};

struct scan {
	const unsigned char	*s_p;
	const unsigned char	*s_end;
	int			 s_depth;
	int			 s_strict;
	size_t			 s_nkeys;
	struct scan_key		 s_keys[SPAN_KEYS_MAX];	/* strict only */
};

/*
 * Byte classes, so the loops that run over most of a text test one bit
 * per byte: W is JSON whitespace; S ends a run of plain string bytes
 * (control characters, quote, backslash and non-ASCII).
 */
#define W	1
#define S	2
static const unsigned char scan_class[256] = {
	S, S, S, S, S, S, S, S, S, S|W, S|W, S, S, S|W, S, S,	/* 0x00 */
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	W, 0, S, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* 0x20 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* 0x40 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, S, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* 0x60 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,	/* 0x80 */
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,	/* 0xc0 */
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,
};
#undef W
#undef S
#define SCAN_WS		1
#define SCAN_STOP	2

static void
scan_ws(struct scan *sc)
{
	const unsigned char *p = sc->s_p;

	while (p < sc->s_end && (scan_class[*p] & SCAN_WS))
		p++;
	sc->s_p = p;
}

/* one UTF-8 sequence at s_p (s_p < s_end, *s_p >= 0x80) */
static int __attribute__((noinline))
scan_utf8(struct scan *sc)
{
	const unsigned char	*p = sc->s_p;
	unsigned int		 c = *p, need, cp, i;

	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		cp = c & 0x07;
	} else
		return -1;
	if ((size_t)(sc->s_end - p) <= need)
		return -1;
	for (i = 1; i <= need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	sc->s_p += need + 1;
	return 0;
}

static int
scan_hex4(const unsigned char *p, unsigned int *v)
{
	int		d;
	unsigned int	i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		if ((d = proto_hex_digit(p[i])) == -1)
			return -1;
		*v = *v << 4 | (unsigned int)d;
	}
	return 0;
}

/* one escape sequence at s_p (s_p < s_end, *s_p == '\\') */
static int __attribute__((noinline))
scan_escape(struct scan *sc)
{
	unsigned int u, lo;

	if (sc->s_end - sc->s_p < 2)
		return -1;
	switch (sc->s_p[1]) {
	case '"': case '\\': case '/': case 'b': case 'f':
	case 'n': case 'r': case 't':
		sc->s_p += 2;
		return 0;
	case 'u':
		break;
	default:
		return -1;
	}
	if (sc->s_end - sc->s_p < 6 || scan_hex4(sc->s_p + 2, &u) == -1)
		return -1;
	sc->s_p += 6;
	/* a lone surrogate is not text */
	if (u >= 0xdc00 && u <= 0xdfff)
		return -1;
	if (u >= 0xd800 && u <= 0xdbff) {
		if (sc->s_end - sc->s_p < 6 || sc->s_p[0] != '\\' ||
		    sc->s_p[1] != 'u' || scan_hex4(sc->s_p + 2, &lo) == -1 ||
		    lo < 0xdc00 || lo > 0xdfff)
			return -1;
		sc->s_p += 6;
	}
	return 0;	/* "\u0000" too: loaded with JSON_ALLOW_NUL */
}

/*
 * The first byte in [p, end) that ends a run of plain string bytes, or
 * end.  With SSE2 (every x86-64) sixteen bytes are tested at once where
 * sixteen remain, which covers most keys and short values in one step:
 * a signed compare below 0x20 also takes 0x80-0xff, as SCAN_STOP does.
 */
static inline const unsigned char *
scan_plain(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i	 quote = _mm_set1_epi8('"');
	const __m128i	 bslash = _mm_set1_epi8('\\');
	const __m128i	 space = _mm_set1_epi8(0x20);
	__m128i		 x, stop;
	int		 bits;

	while (end - p >= 16) {
		x = _mm_loadu_si128((const __m128i *)(const void *)p);
		stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
		    _mm_cmpeq_epi8(x, bslash)), _mm_cmplt_epi8(x, space));
		if ((bits = _mm_movemask_epi8(stop)) != 0)
			return p + __builtin_ctz((unsigned int)bits);
		p += 16;
	}
#endif
	while (p < end && !(scan_class[*p] & SCAN_STOP))
		p++;
	return p;
}

const unsigned char *
proto_json_plain(const unsigned char *p, const unsigned char *end)
{
	return scan_plain(p, end);
}

/*
 * A string; *escaped tells whether it held an escape.  Escapes and
 * UTF-8 are rare: they are checked out of line, which keeps this loop
 * cheap for the plain ASCII of keys, methods and ids.
 */
static int
scan_string(struct scan *sc, int *escaped)
{
	const unsigned char	*p;
	int			 rc;

	if (escaped != NULL)
		*escaped = 0;
	if (sc->s_p >= sc->s_end || *sc->s_p != '"')
		return -1;
	sc->s_p++;
	for (;;) {
		/* most bytes are plain ASCII: skip a run of them at once */
		p = scan_plain(sc->s_p, sc->s_end);
		sc->s_p = p;
		if (p >= sc->s_end || *p < 0x20)
			return -1;
		if (*p == '"') {
			sc->s_p++;
			return 0;
		}
		if (*p == '\\') {
			if (escaped != NULL)
				*escaped = 1;
			rc = scan_escape(sc);
		} else
			rc = scan_utf8(sc);
		if (rc == -1)
			return -1;
	}
}

static int
scan_digits(struct scan *sc)
{
	const unsigned char *start = sc->s_p;

	while (sc->s_p < sc->s_end && *sc->s_p >= '0' && *sc->s_p <= '9')
		sc->s_p++;
	return sc->s_p > start ? 0 : -1;
}

/*
 * Strict mode also refuses what jansson would overflow on: integers
 * beyond long long (strtoll's ERANGE) and reals that strtod() could
 * round to HUGE_VAL; underflow to zero jansson accepts.
 */
static int
scan_number(struct scan *sc)
{
	const unsigned char	*d, *e;
	size_t			 ndig, exp = 0;
	int			 neg = 0, real = 0, expneg = 0;

	if (sc->s_p < sc->s_end && *sc->s_p == '-') {
		neg = 1;
		sc->s_p++;
	}
	if (sc->s_p >= sc->s_end)
		return -1;
	d = sc->s_p;
	if (*sc->s_p == '0')
		sc->s_p++;
	else if (scan_digits(sc) == -1)
		return -1;
	ndig = (size_t)(sc->s_p - d);
	if (sc->s_p < sc->s_end && *sc->s_p == '.') {
		real = 1;
		sc->s_p++;
		if (scan_digits(sc) == -1)
			return -1;
	}
	if (sc->s_p < sc->s_end && (*sc->s_p == 'e' || *sc->s_p == 'E')) {
		real = 1;
		sc->s_p++;
		if (sc->s_p < sc->s_end && (*sc->s_p == '+' ||
		    *sc->s_p == '-'))
			expneg = *sc->s_p++ == '-';
		e = sc->s_p;
		if (scan_digits(sc) == -1)
			return -1;
		/* saturates above the limit: only "too big" matters */
		for (; e < sc->s_p; e++)
			if (exp <= SPAN_REAL_DIGITS_MAX)
				exp = exp * 10 + (size_t)(*e - '0');
	}
	if (!sc->s_strict)
		return 0;
	if (real)
		return ndig + (expneg ? 0 : exp) <= SPAN_REAL_DIGITS_MAX ?
		    0 : -1;
	if (ndig != SPAN_INT_DIGITS)
		return ndig < SPAN_INT_DIGITS ? 0 : -1;
	/* digits and limits are the same length: memcmp orders them */
	return memcmp(d, neg ? "9223372036854775808" : "9223372036854775807",
	    SPAN_INT_DIGITS) <= 0 ? 0 : -1;
}

static int
scan_word(struct scan *sc, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(sc->s_end - sc->s_p) < n || memcmp(sc->s_p, w, n) != 0)
		return -1;
	sc->s_p += n;
	return 0;
}

static int	scan_value(struct scan *);

/*
 * Strict mode: remember a key of the object whose keys start at base.
 * A key with an escape could equal another one once decoded, and the
 * key stack is bounded, so both are "not sure"; a duplicate jansson
 * refuses at any depth.
 */
static int
scan_key_add(struct scan *sc, size_t base, const unsigned char *k,
    size_t len, int escaped)
{
	size_t i;

	if (escaped || sc->s_nkeys == SPAN_KEYS_MAX)
		return -1;
	for (i = base; i < sc->s_nkeys; i++)
		if (sc->s_keys[i].sk_len == len &&
		    memcmp(sc->s_keys[i].sk_p, k, len) == 0)
			return -1;
	sc->s_keys[sc->s_nkeys].sk_p = k;
	sc->s_keys[sc->s_nkeys].sk_len = len;
	sc->s_nkeys++;
	return 0;
}

/* 1 if an object member's key is m's pm_subkey and its value an object */
static int
scan_is_sub(const struct scan *sc, const struct proto_members *m,
    const unsigned char *k, size_t len, int escaped)
{
	return m != NULL && m->pm_sub != NULL && sc->s_p < sc->s_end &&
	    *sc->s_p == '{' && !escaped && len > 0 &&
	    m->pm_subkey[0] == (char)k[0] &&
	    strncmp(m->pm_subkey, (const char *)k, len) == 0 &&
	    m->pm_subkey[len] == '\0';
}

/* an object or array at s_p; an object's members go in m if not NULL */
static int
scan_container(struct scan *sc, unsigned char close, struct proto_members *m)
{
	const unsigned char	*k = NULL, *v;
	size_t			 base = sc->s_nkeys, klen = 0;
	int			 escaped = 0, rc;

	if (++sc->s_depth > SPAN_DEPTH_MAX)
		return -1;
	sc->s_p++;
	scan_ws(sc);
	if (sc->s_p < sc->s_end && *sc->s_p == close)
		goto end;
	for (;;) {
		if (close == '}') {
			k = sc->s_p + 1;
			if (scan_string(sc, &escaped) == -1)
				return -1;
			klen = (size_t)(sc->s_p - k) - 1;
			if (sc->s_strict &&
			    scan_key_add(sc, base, k, klen, escaped) == -1)
				return -1;
			/* compact text, the usual: the colon right after */
			if (sc->s_p >= sc->s_end || *sc->s_p != ':') {
				scan_ws(sc);
				if (sc->s_p >= sc->s_end || *sc->s_p != ':')
					return -1;
			}
			sc->s_p++;
			if (sc->s_p < sc->s_end && *sc->s_p <= ' ')
				scan_ws(sc);
		}
		v = sc->s_p;
		if (scan_is_sub(sc, m, k, klen, escaped)) {
			m->pm_sub->pm_n = 0;
			rc = scan_container(sc, '}', m->pm_sub);
		} else
			rc = scan_value(sc);
		if (rc == -1)
			return -1;
		if (m != NULL) {
			if (m->pm_n < m->pm_max) {
				/* keys with escapes are reported as unusable */
				m->pm_span[m->pm_n].ps_key = escaped ? NULL :
				    (const char *)k;
				m->pm_span[m->pm_n].ps_keylen = escaped ? 0 :
				    klen;
				m->pm_span[m->pm_n].ps_val = (const char *)v;
				m->pm_span[m->pm_n].ps_vallen =
				    (size_t)(sc->s_p - v);
			}
			m->pm_n++;
		}
		if (sc->s_p < sc->s_end && *sc->s_p <= ' ')
			scan_ws(sc);
		if (sc->s_p >= sc->s_end)
			return -1;
		if (*sc->s_p == close)
			break;
		if (*sc->s_p != ',')
			return -1;
		sc->s_p++;
		if (sc->s_p < sc->s_end && *sc->s_p <= ' ')
			scan_ws(sc);
	}
end:
	sc->s_p++;
	sc->s_nkeys = base;
	sc->s_depth--;
	return 0;
}

/* a value at s_p, whitespace before it skipped */
static int
scan_value(struct scan *sc)
{
	if (sc->s_p >= sc->s_end)
		return -1;
	switch (*sc->s_p) {
	case '{':
		return scan_container(sc, '}', NULL);
	case '[':
		return scan_container(sc, ']', NULL);
	case '"':
		return scan_string(sc, NULL);
	case 't':
		return scan_word(sc, "true");
	case 'f':
		return scan_word(sc, "false");
	case 'n':
		return scan_word(sc, "null");
	default:
		return scan_number(sc);
	}
}

/* buf is exactly one object, with at most m->pm_max members */
static int
scan_object_text(struct scan *sc, const char *buf, size_t len,
    struct proto_members *m)
{
	sc->s_p = (const unsigned char *)buf;
	sc->s_end = sc->s_p + len;
	sc->s_depth = 0;
	sc->s_nkeys = 0;
	m->pm_n = 0;
	if (m->pm_sub != NULL)
		m->pm_sub->pm_n = 0;
	scan_ws(sc);
	if (sc->s_p >= sc->s_end || *sc->s_p != '{' ||
	    scan_container(sc, '}', m) == -1)
		return -1;
	scan_ws(sc);
	return sc->s_p == sc->s_end && m->pm_n <= m->pm_max ? 0 : -1;
}

int
proto_json_members(const char *buf, size_t len, struct proto_span *out,
    size_t max, size_t *n)
{
	struct scan		sc;
	struct proto_members	m = { out, max, 0, NULL, NULL };
	int			rc;

	sc.s_strict = 0;
	rc = scan_object_text(&sc, buf, len, &m);
	*n = m.pm_n;
	return rc;
}

int
proto_json_members_sub(const char *buf, size_t len, struct proto_members *m)
{
	struct scan sc;

	sc.s_strict = 0;
	return scan_object_text(&sc, buf, len, m);
}

int
proto_json_check(const char *buf, size_t len, struct proto_members *m)
{
	struct scan sc;

	sc.s_strict = 1;
	if (buf == NULL || scan_object_text(&sc, buf, len, m) == -1)
		return -1;
	if (m->pm_sub != NULL && m->pm_sub->pm_n > m->pm_sub->pm_max)
		return -1;
	return 0;
}

const char *
proto_json_value(const char *buf, size_t len, const char *key, size_t *vlen)
{
	struct proto_span	 m[32];
	const struct proto_span	*p;
	size_t			 n;

	if (proto_json_members(buf, len, m, 32, &n) == -1 ||
	    (p = proto_json_member(m, n, key)) == NULL)
		return NULL;
	*vlen = p->ps_vallen;
	return p->ps_val;
}

char *
proto_text_edit(const char *text, size_t len, const struct proto_edit *e,
    size_t n, size_t *outlen)
{
	const struct proto_edit	*order[PROTO_EDITS_MAX], *t;
	const char		*at = text;
	char			*out;
	size_t			 i, j, olen = len;

	if (n > PROTO_EDITS_MAX)
		return NULL;
	for (i = 0; i < n; i++) {
		/* in text order, for one pass */
		for (j = i; j > 0 && order[j - 1]->pe_at > e[i].pe_at; j--)
			order[j] = order[j - 1];
		order[j] = &e[i];
		olen = olen - e[i].pe_atlen + e[i].pe_wlen;
	}
	for (i = 1; i < n; i++)
		if (order[i - 1]->pe_at + order[i - 1]->pe_atlen >
		    order[i]->pe_at)
			return NULL;	/* overlapping */
	if ((out = malloc(olen + 1)) == NULL)
		return NULL;
	*outlen = 0;
	for (i = 0; i < n; i++) {
		t = order[i];
		memcpy(out + *outlen, at, (size_t)(t->pe_at - at));
		*outlen += (size_t)(t->pe_at - at);
		memcpy(out + *outlen, t->pe_with, t->pe_wlen);
		*outlen += t->pe_wlen;
		at = t->pe_at + t->pe_atlen;
	}
	memcpy(out + *outlen, at, (size_t)(text + len - at));
	*outlen += (size_t)(text + len - at);
	out[*outlen] = '\0';
	return out;
}

char *
proto_text_replace(const char *text, size_t len, const char *at,
    size_t atlen, const char *with, size_t wlen, size_t *outlen)
{
	struct proto_edit e = { at, atlen, with, wlen };

	return proto_text_edit(text, len, &e, 1, outlen);
}
