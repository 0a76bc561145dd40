/*
 * application/x-www-form-urlencoded (proto/form.h): the unreserved
 * characters of RFC 3986 2.3 as they are, a space as '+', every other
 * byte %XX (RFC 6749 appendix B).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/form.h"

/* s encoded at out (room for strlen(s) * 3 + 1); the end written */
static char *
form_encode(char *out, const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			*p = out;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c) != NULL)
			*p++ = (char)c;
		else if (c == ' ')
			*p++ = '+';
		else {
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	*p = '\0';
	return p;
}

char *
proto_form_escape(const char *s)
{
	char	*o;

	if ((o = malloc(strlen(s) * 3 + 1)) == NULL)
		return NULL;
	(void)form_encode(o, s);
	return o;
}

int
proto_form_add(char **body, size_t *len, const char *name,
    const char *value)
{
	size_t	 n = strlen(name);
	char	*b, *p;

	if ((b = realloc(*body, *len + n + 2 + strlen(value) * 3 + 1)) ==
	    NULL)
		return -1;
	*body = b;
	p = b + *len;
	if (*len > 0)
		*p++ = '&';
	memcpy(p, name, n);
	p += n;
	*p++ = '=';
	p = form_encode(p, value);
	*len = (size_t)(p - b);
	return 0;
}
