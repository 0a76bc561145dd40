/*
 * The rules a backend's entries keep before vmcpd advertises them
 * (view_rules.h): a name with a newline, terminal escapes or 100,000
 * characters, or a description of megabytes, would otherwise go to
 * every client as it came.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "view_rules.h"

/*
 * The code point at *p, *p moved past it; -1 for a byte sequence that
 * is not UTF-8 (overlong, a surrogate, past U+10FFFF, cut short).
 */
static int
vr_next(const unsigned char **pp, uint32_t *cp)
{
	const unsigned char	*p = *pp;
	int			 n, i;

	if (*p < 0x80) {
		*cp = *p;
		*pp = p + 1;
		return 0;
	}
	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 1;
		*cp = *p & 0x1f;
	} else if (*p >= 0xe0 && *p <= 0xef) {
		n = 2;
		*cp = *p & 0x0f;
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 3;
		*cp = *p & 0x07;
	} else
		return -1;
	for (i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && *cp < 0x800) || (n == 3 && *cp < 0x10000) ||
	    (*cp >= 0xd800 && *cp <= 0xdfff) || *cp > 0x10ffff)
		return -1;
	*pp = p + n + 1;
	return 0;
}

int
view_utf8_valid(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	uint32_t		 cp;

	while (*p != '\0')
		if (vr_next(&p, &cp) == -1)
			return 0;
	return 1;
}

/* a character no label shows: controls, separators, bidi formatting */
static int
vr_unshown(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x61c ||
	    cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int
view_label_ok(const char *s, size_t max)
{
	const unsigned char	*p = (const unsigned char *)s;
	uint32_t		 cp;
	size_t			 n = 0;

	if (*p == '\0')
		return 0;
	while (*p != '\0') {
		if (vr_next(&p, &cp) == -1 || vr_unshown(cp) || ++n > max)
			return 0;
	}
	return 1;
}

int
view_text_cut(const char *s, size_t len, size_t max, size_t *cut,
    size_t *chars)
{
	size_t	i, n = 0;

	*cut = 0;
	/* a character starts at every byte but a continuation byte */
	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (++n == max)
			*cut = i;
	}
	*chars = n;
	return n > max;
}

const char *
view_quote(char *buf, size_t buflen, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s, *q;
	uint32_t		 cp;
	size_t			 o = 0, n = 0, more = 0;
	int			 w, raw;

	if (buflen < VIEW_QUOTE_LEN) {
		if (buflen > 0)
			buf[0] = '\0';
		return buf;
	}
	while (*p != '\0') {
		q = p;
		raw = vr_next(&p, &cp) == -1;
		if (raw) {
			cp = *q;	/* shown as the byte it is */
			p = q + 1;
		}
		if (n == VIEW_QUOTE_MAX) {
			more++;
			continue;
		}
		n++;
		if (cp == '\n')
			w = snprintf(buf + o, buflen - o, "\\n");
		else if (cp == '"' || cp == '\\')
			w = snprintf(buf + o, buflen - o, "\\%c", (char)cp);
		else if (cp >= 0x20 && cp < 0x7f)
			w = snprintf(buf + o, buflen - o, "%c", (char)cp);
		else if (raw || cp < 0x80)
			w = snprintf(buf + o, buflen - o, "\\x%02x",
			    (unsigned int)cp);
		else
			w = snprintf(buf + o, buflen - o, "\\u%04x",
			    (unsigned int)cp);
		if (w > 0)
			o += (size_t)w;
	}
	if (more > 0)
		(void)snprintf(buf + o, buflen - o, "...(%zu more)", more);
	return buf;
}
