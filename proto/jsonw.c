/*
 * The JSON text writer (jsonw.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "proto/jsonspan.h"

void
jsonw_reset(struct jsonw *jw)
{
	jw->jw_len = 0;
	jw->jw_comma = 0;
	jw->jw_failed = 0;
	if (jw->jw_buf != NULL)
		jw->jw_buf[0] = '\0';
}

void
jsonw_free(struct jsonw *jw)
{
	free(jw->jw_buf);
	memset(jw, 0, sizeof(*jw));
}

/* the buffer grown for n more bytes and the NUL, or -1 (jw_failed) */
static int
jsonw_grow(struct jsonw *jw, size_t n)
{
	size_t	 cap;
	char	*b;

	if (jw->jw_failed)
		return -1;
	if (n > SIZE_MAX / 2 - jw->jw_len - 1) {
		jw->jw_failed = 1;
		return -1;
	}
	cap = jw->jw_cap > 256 ? jw->jw_cap : 256;
	while (cap <= jw->jw_len + n)
		cap *= 2;
	if ((b = realloc(jw->jw_buf, cap)) == NULL) {
		jw->jw_failed = 1;
		return -1;
	}
	jw->jw_buf = b;
	jw->jw_cap = cap;
	return 0;
}

/* room for n more bytes and the NUL, or -1: inline, as every value asks */
static inline int
jsonw_room(struct jsonw *jw, size_t n)
{
	if (n < jw->jw_cap - jw->jw_len && !jw->jw_failed)
		return 0;
	return jsonw_grow(jw, n);
}

void
jsonw_bytes(struct jsonw *jw, const char *s, size_t len)
{
	if (jsonw_room(jw, len) == -1)
		return;
	memcpy(jw->jw_buf + jw->jw_len, s, len);
	jw->jw_len += len;
	jw->jw_buf[jw->jw_len] = '\0';
}

/*
 * The code point of the UTF-8 sequence at p (before end), its length in
 * *n; -1 if it is no well-formed one (RFC 3629 4, as jansson's utf8.c).
 */
static int32_t
jsonw_utf8(const unsigned char *p, const unsigned char *end, size_t *n)
{
	int32_t	 cp;
	size_t	 len, i;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return -1;	/* a continuation, an overlong lead, too high */
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if ((size_t)(end - p) < len)
		return -1;
	cp = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*n = len;
	return cp;
}

static char *
jsonw_u(char *o, uint32_t u)
{
	static const char hex[] = "0123456789ABCDEF";

	*o++ = '\\';
	*o++ = 'u';
	*o++ = hex[(u >> 12) & 0xf];
	*o++ = hex[(u >> 8) & 0xf];
	*o++ = hex[(u >> 4) & 0xf];
	*o++ = hex[u & 0xf];
	return o;
}

/* s as a JSON string at the end; -1, nothing kept, if not UTF-8 */
static int
jsonw_string(struct jsonw *jw, const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s, *end = p + len;
	const unsigned char	*run;
	char			*o;
	int32_t			 cp;
	size_t			 n;
	unsigned char		 c;

	/* at most 6 bytes out per byte in (a control character) */
	if (len > SIZE_MAX / 8 || jsonw_room(jw, 6 * len + 2) == -1)
		return -1;
	o = jw->jw_buf + jw->jw_len;
	*o++ = '"';
	while (p < end) {
		/* a run written as it is: printable ASCII but '"', '\\' */
		run = p;
		p = proto_json_plain(p, end);
		memcpy(o, run, (size_t)(p - run));
		o += p - run;
		if (p == end)
			break;
		c = *p;
		if (c >= 0x80) {
			if ((cp = jsonw_utf8(p, end, &n)) == -1)
				return -1;
			p += n;
			if (cp >= 0x10000) {
				cp -= 0x10000;
				o = jsonw_u(o, 0xd800 | ((uint32_t)cp >> 10));
				o = jsonw_u(o, 0xdc00 | ((uint32_t)cp & 0x3ff));
			} else
				o = jsonw_u(o, (uint32_t)cp);
			continue;
		}
		p++;
		*o++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*o++ = (char)c;
			break;
		case '\b':
			*o++ = 'b';
			break;
		case '\f':
			*o++ = 'f';
			break;
		case '\n':
			*o++ = 'n';
			break;
		case '\r':
			*o++ = 'r';
			break;
		case '\t':
			*o++ = 't';
			break;
		default:
			o = jsonw_u(o - 1, c);
			break;
		}
	}
	*o++ = '"';
	*o = '\0';
	jw->jw_len = (size_t)(o - jw->jw_buf);
	return 0;
}

/* the member's "key": (with the "," before it); key is the caller's
 * name, written as it is */
static void
jsonw_key(struct jsonw *jw, const char *key)
{
	size_t	 klen = key != NULL ? strlen(key) : 0;
	char	*o;

	if (jsonw_room(jw, klen + 4) == -1)
		return;
	o = jw->jw_buf + jw->jw_len;
	if (jw->jw_comma)
		*o++ = ',';
	if (key != NULL) {
		*o++ = '"';
		memcpy(o, key, klen);
		o += klen;
		*o++ = '"';
		*o++ = ':';
	}
	*o = '\0';
	jw->jw_len = (size_t)(o - jw->jw_buf);
}

void
jsonw_obj(struct jsonw *jw, const char *key)
{
	jsonw_key(jw, key);
	jsonw_bytes(jw, "{", 1);
	jw->jw_comma = 0;
}

void
jsonw_end(struct jsonw *jw)
{
	jsonw_bytes(jw, "}", 1);
	jw->jw_comma = 1;
}

/* as "%lld" writes it, by hand: snprintf costs a line hundreds of
 * instructions */
void
jsonw_int(struct jsonw *jw, const char *key, long long v)
{
	char			 b[24], *o = b + sizeof(b);
	unsigned long long	 u;

	jsonw_key(jw, key);
	u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		*--o = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		*--o = '-';
	jsonw_bytes(jw, o, (size_t)(b + sizeof(b) - o));
	jw->jw_comma = 1;
}

void
jsonw_mark(const struct jsonw *jw, struct jsonw_mark *m)
{
	m->jm_len = jw->jw_len;
	m->jm_comma = jw->jw_comma;
}

void
jsonw_undo(struct jsonw *jw, const struct jsonw_mark *m)
{
	jw->jw_len = m->jm_len;
	jw->jw_comma = m->jm_comma;
	if (jw->jw_buf != NULL)
		jw->jw_buf[m->jm_len] = '\0';
}

int
jsonw_strn(struct jsonw *jw, const char *key, const char *s, size_t len)
{
	struct jsonw_mark m;

	jsonw_mark(jw, &m);
	jsonw_key(jw, key);
	if (jsonw_string(jw, s, len) == -1) {
		/* as if never asked */
		jsonw_undo(jw, &m);
		return -1;
	}
	jw->jw_comma = 1;
	return 0;
}

int
jsonw_str(struct jsonw *jw, const char *key, const char *s)
{
	return jsonw_strn(jw, key, s, strlen(s));
}

void
jsonw_raw(struct jsonw *jw, const char *key, const char *text, size_t len)
{
	jsonw_key(jw, key);
	jsonw_bytes(jw, text, len);
	jw->jw_comma = 1;
}
