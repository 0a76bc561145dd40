/*
 * The rules a backend's entries keep before vmcpd advertises them
 * (view_rules.h): a name with a newline, terminal escapes or 100,000
 * characters, or a description of megabytes, would otherwise go to
 * every client as it came.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/view/view_rules.h"

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

/* o[key] is a string of more than max characters */
static int
vr_long(json_t *o, const char *key, size_t max)
{
	json_t	*v = json_object_get(o, key);
	size_t	 cut, n;

	/* bytes bound characters: the common case costs no scan */
	return json_is_string(v) && json_string_length(v) > max &&
	    view_text_cut(json_string_value(v), json_string_length(v), max,
	    &cut, &n);
}

/* o[key] (o a copy) cut to max characters, and said; -1: no memory */
static int
vr_cut(json_t *o, const char *key, const char *field, size_t max,
    const char *setting, view_said_fn said, void *arg)
{
	const char	*s = json_string_value(json_object_get(o, key));
	size_t		 len = json_string_length(json_object_get(o, key));
	size_t		 cut, n;
	char		*t;
	int		 rc;

	(void)view_text_cut(s, len, max, &cut, &n);
	if ((t = malloc(cut + 3)) == NULL)
		return -1;
	memcpy(t, s, cut);
	memcpy(t + cut, "\xe2\x80\xa6", 3);	/* U+2026 */
	rc = json_object_set_new(o, key, json_stringn(t, cut + 3));
	free(t);
	said(arg, field, max, n, setting);
	return rc;
}

json_t *
view_texts_cut(json_t *obj, int tool, size_t max_desc, size_t max_title,
    view_said_fn said, void *arg)
{
	json_t	*o, *ann = NULL;
	int	 d, t, a = 0;

	d = vr_long(obj, "description", max_desc);
	t = vr_long(obj, "title", max_title);
	if (tool) {
		ann = json_object_get(obj, "annotations");
		a = json_is_object(ann) && vr_long(ann, "title", max_title);
	}
	if (!d && !t && !a)
		return json_incref(obj);
	if ((o = json_copy(obj)) == NULL)
		return NULL;
	if ((a && json_object_set_new(o, "annotations", json_copy(ann)) ==
	    -1) ||
	    (d && vr_cut(o, "description", "description", max_desc,
	    "maxDescriptionLength", said, arg) == -1) ||
	    (t && vr_cut(o, "title", "title", max_title, "maxTitleLength",
	    said, arg) == -1) ||
	    (a && vr_cut(json_object_get(o, "annotations"), "title",
	    "annotations.title", max_title, "maxTitleLength", said,
	    arg) == -1)) {
		json_decref(o);
		return NULL;
	}
	return o;
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
