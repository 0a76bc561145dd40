/*
 * libFuzzer: uritemplate_match() on arbitrary bytes.
 *
 * Input: a URI template, a NUL, a URI (without the NUL: the whole input
 * is the template and the URI is empty).  Checked: the answer is 0 or 1
 * and the same when asked twice; a template without braces matches
 * exactly itself; a template whose expressions are all simple ({name})
 * matches its expansion with "x" for every variable; {+x} matches any
 * non-empty URI within the limit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uritemplate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
is_varchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/* t's expansion with "x" per variable, if every expression is {name} */
static char *
simple_expansion(const char *t)
{
	char	*out, *o;
	size_t	 n;

	if ((out = malloc(strlen(t) + 1)) == NULL)
		abort();
	for (o = out; *t != '\0'; t++) {
		if (*t == '}')
			goto no;
		if (*t != '{') {
			*o++ = *t;
			continue;
		}
		for (n = 1; is_varchar(t[n]); n++)
			;
		if (n == 1 || t[n] != '}')
			goto no;
		*o++ = 'x';
		t += n;
	}
	*o = '\0';
	return out;
no:
	free(out);
	return NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*buf, *t, *u, *x;
	size_t		 tlen, ulen;
	int		 m;

	/* exact-size copies so ASan sees any read past the NUL */
	if ((buf = malloc(size + 1)) == NULL)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	tlen = strlen(buf);
	t = strndup(buf, tlen);
	u = strdup(tlen < size ? buf + tlen + 1 : "");
	free(buf);
	if (t == NULL || u == NULL)
		abort();
	ulen = strlen(u);

	m = uritemplate_match(t, u);
	if ((m != 0 && m != 1) || uritemplate_match(t, u) != m)
		abort();
	if (strpbrk(t, "{}") == NULL && tlen <= URITEMPLATE_TMPL_MAX &&
	    ulen <= URITEMPLATE_URI_MAX && m != (strcmp(t, u) == 0))
		abort();
	if (tlen <= URITEMPLATE_TMPL_MAX && (x = simple_expansion(t)) != NULL) {
		if (!uritemplate_match(t, x))
			abort();
		free(x);
	}
	if (ulen > 0 && ulen <= URITEMPLATE_URI_MAX &&
	    !uritemplate_match("{+x}", u))
		abort();
	free(t);
	free(u);
	return 0;
}
