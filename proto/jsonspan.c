/*
 * A validating JSON scanner that allocates nothing: it checks that a
 * text is one JSON object (RFC 8259, UTF-8) and reports where each
 * top-level member's key and value lie in it.  The relay uses it to
 * pass a backend's result on byte for byte, under the client's id,
 * instead of parsing it into a tree and serialising it again.
 */
#include <stddef.h>
#include <string.h>

#include "proto.h"

#define SPAN_DEPTH_MAX	512

struct scan {
	const unsigned char	*s_p;
	const unsigned char	*s_end;
	int			 s_depth;
};

static void
scan_ws(struct scan *sc)
{
	while (sc->s_p < sc->s_end && (*sc->s_p == ' ' || *sc->s_p == '\t' ||
	    *sc->s_p == '\n' || *sc->s_p == '\r'))
		sc->s_p++;
}

/* one UTF-8 sequence at s_p (s_p < s_end, *s_p >= 0x80) */
static int
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

/* a string; *escaped tells whether it held an escape */
static int
scan_string(struct scan *sc, int *escaped)
{
	unsigned int u, lo;

	if (escaped != NULL)
		*escaped = 0;
	if (sc->s_p >= sc->s_end || *sc->s_p != '"')
		return -1;
	sc->s_p++;
	while (sc->s_p < sc->s_end) {
		if (*sc->s_p == '"') {
			sc->s_p++;
			return 0;
		}
		if (*sc->s_p < 0x20)
			return -1;
		if (*sc->s_p == '\\') {
			if (escaped != NULL)
				*escaped = 1;
			if (sc->s_end - sc->s_p < 2)
				return -1;
			switch (sc->s_p[1]) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				sc->s_p += 2;
				break;
			case 'u':
				if (sc->s_end - sc->s_p < 6 ||
				    scan_hex4(sc->s_p + 2, &u) == -1)
					return -1;
				sc->s_p += 6;
				/* a lone surrogate is not text */
				if (u >= 0xdc00 && u <= 0xdfff)
					return -1;
				if (u >= 0xd800 && u <= 0xdbff) {
					if (sc->s_end - sc->s_p < 6 ||
					    sc->s_p[0] != '\\' ||
					    sc->s_p[1] != 'u' ||
					    scan_hex4(sc->s_p + 2, &lo) == -1 ||
					    lo < 0xdc00 || lo > 0xdfff)
						return -1;
					sc->s_p += 6;
				}
				if (u == 0)
					return -1;	/* jansson refuses NUL */
				break;
			default:
				return -1;
			}
			continue;
		}
		if (*sc->s_p >= 0x80) {
			if (scan_utf8(sc) == -1)
				return -1;
			continue;
		}
		sc->s_p++;
	}
	return -1;
}

static int
scan_digits(struct scan *sc)
{
	const unsigned char *start = sc->s_p;

	while (sc->s_p < sc->s_end && *sc->s_p >= '0' && *sc->s_p <= '9')
		sc->s_p++;
	return sc->s_p > start ? 0 : -1;
}

static int
scan_number(struct scan *sc)
{
	if (sc->s_p < sc->s_end && *sc->s_p == '-')
		sc->s_p++;
	if (sc->s_p >= sc->s_end)
		return -1;
	if (*sc->s_p == '0')
		sc->s_p++;
	else if (scan_digits(sc) == -1)
		return -1;
	if (sc->s_p < sc->s_end && *sc->s_p == '.') {
		sc->s_p++;
		if (scan_digits(sc) == -1)
			return -1;
	}
	if (sc->s_p < sc->s_end && (*sc->s_p == 'e' || *sc->s_p == 'E')) {
		sc->s_p++;
		if (sc->s_p < sc->s_end && (*sc->s_p == '+' || *sc->s_p == '-'))
			sc->s_p++;
		if (scan_digits(sc) == -1)
			return -1;
	}
	return 0;
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

static int
scan_container(struct scan *sc, unsigned char close)
{
	int first = 1;

	if (++sc->s_depth > SPAN_DEPTH_MAX)
		return -1;
	sc->s_p++;
	for (;;) {
		scan_ws(sc);
		if (sc->s_p >= sc->s_end)
			return -1;
		if (*sc->s_p == close && first) {
			sc->s_p++;
			break;
		}
		if (close == '}') {
			if (scan_string(sc, NULL) == -1)
				return -1;
			scan_ws(sc);
			if (sc->s_p >= sc->s_end || *sc->s_p != ':')
				return -1;
			sc->s_p++;
		}
		if (scan_value(sc) == -1)
			return -1;
		scan_ws(sc);
		if (sc->s_p >= sc->s_end)
			return -1;
		if (*sc->s_p == close) {
			sc->s_p++;
			break;
		}
		if (*sc->s_p != ',')
			return -1;
		sc->s_p++;
		first = 0;
	}
	sc->s_depth--;
	return 0;
}

static int
scan_value(struct scan *sc)
{
	scan_ws(sc);
	if (sc->s_p >= sc->s_end)
		return -1;
	switch (*sc->s_p) {
	case '{':
		return scan_container(sc, '}');
	case '[':
		return scan_container(sc, ']');
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

int
proto_json_members(const char *buf, size_t len, struct proto_span *out,
    size_t max, size_t *n)
{
	struct scan		 sc;
	const unsigned char	*k, *v;
	int			 escaped;

	*n = 0;
	sc.s_p = (const unsigned char *)buf;
	sc.s_end = sc.s_p + len;
	sc.s_depth = 1;
	scan_ws(&sc);
	if (sc.s_p >= sc.s_end || *sc.s_p != '{')
		return -1;
	sc.s_p++;
	scan_ws(&sc);
	if (sc.s_p < sc.s_end && *sc.s_p == '}') {
		sc.s_p++;
		goto end;
	}
	for (;;) {
		scan_ws(&sc);
		k = sc.s_p;
		if (scan_string(&sc, &escaped) == -1)
			return -1;
		if (*n < max) {
			/* keys with escapes are reported as unusable */
			out[*n].ps_key = escaped ? NULL : (const char *)k + 1;
			out[*n].ps_keylen = escaped ? 0 :
			    (size_t)(sc.s_p - k) - 2;
		}
		scan_ws(&sc);
		if (sc.s_p >= sc.s_end || *sc.s_p != ':')
			return -1;
		sc.s_p++;
		scan_ws(&sc);
		v = sc.s_p;
		if (scan_value(&sc) == -1)
			return -1;
		if (*n < max) {
			out[*n].ps_val = (const char *)v;
			out[*n].ps_vallen = (size_t)(sc.s_p - v);
		}
		(*n)++;
		scan_ws(&sc);
		if (sc.s_p >= sc.s_end)
			return -1;
		if (*sc.s_p == '}') {
			sc.s_p++;
			break;
		}
		if (*sc.s_p != ',')
			return -1;
		sc.s_p++;
	}
end:
	scan_ws(&sc);
	return sc.s_p == sc.s_end && *n <= max ? 0 : -1;
}

const struct proto_span *
proto_json_member(const struct proto_span *m, size_t n, const char *key)
{
	size_t i, kl = strlen(key);

	for (i = 0; i < n; i++)
		if (m[i].ps_key != NULL && m[i].ps_keylen == kl &&
		    memcmp(m[i].ps_key, key, kl) == 0)
			return &m[i];
	return NULL;
}
