/*
 * libFuzzer: the header helpers on arbitrary strings.  The input is cut
 * at its first NUL into a header value and a media type; the whole of
 * it is also a field line and a value to find the end of.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "proto/proto.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
sid_ref(const char *s)
{
	size_t n;

	for (n = 0; s[n] != '\0'; n++)
		if ((unsigned char)s[n] < 0x21 || (unsigned char)s[n] > 0x7e)
			return 0;
	return n >= 1 && n <= 128;
}

/* the first byte a field value may not hold, or n */
static size_t
value_stop_ref(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (((unsigned char)p[i] < 0x20 && p[i] != '\t') ||
		    p[i] == 0x7f)
			break;
	return i;
}

static int
field_ref(const char *p, size_t n)
{
	if (value_stop_ref(p, n) != n)
		return 0;
	return n > 0 && (p[0] == ' ' || p[0] == '\t' ||
	    (memchr(p, ':', n) != NULL && p[0] != ':'));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*pick;
	char		*a, *t, *nul, *both;
	size_t		 alen;
	int		 r;

	/* exact-size copies so ASan sees any read past the NUL */
	if ((a = malloc(size + 1)) == NULL)
		abort();
	memcpy(a, data, size);
	a[size] = '\0';
	alen = strlen(a);
	if ((nul = memchr(data, '\0', size)) != NULL) {
		size_t tl = size - (size_t)(nul - (const char *)data) - 1;

		if ((t = malloc(tl + 1)) == NULL)
			abort();
		memcpy(t, nul + 1, tl);
		t[tl] = '\0';
	} else if ((t = strdup("text/event-stream")) == NULL)
		abort();

	r = proto_accept_has(a, t);
	if (r != 0 && r != 1)
		abort();
	/* listed first, exactly and acceptable: acceptable */
	r = proto_accept_prefers(a, "text/event-stream", "application/json");
	if (r != 0 && r != 1)
		abort();
	if (r == 1 && !proto_accept_has(a, "text/event-stream"))
		abort();
	r = proto_accept_has(a, t);
	/* an added any-type range is the least specific: it can only add */
	if ((both = malloc(alen + 6)) == NULL)
		abort();
	memcpy(both, a, alen);
	memcpy(both + alen, ", */*", 6);
	if (proto_accept_has(both, t) < r)
		abort();
	free(both);
	r = proto_accept_has(a, "application/json");
	if (r != 0 && r != 1)
		abort();

	r = proto_content_type_is_json(a);
	if (r != 0 && r != 1)
		abort();
	if (proto_session_id_valid(a) != sid_ref(a))
		abort();
	pick = proto_legacy_version_pick(a);
	if (pick == NULL || !proto_version_known(pick))
		abort();
	if (proto_version_known(a) && strcmp(a, MCP_VERSION_MODERN) != 0 &&
	    strcmp(pick, a) != 0)
		abort();	/* a known Legacy version is echoed */
	/* a response's field line, NULs and all: accepted only when the
	 * name is a token and no byte but HTAB is a control character */
	if (proto_field_line_problem((const char *)data, size) == NULL &&
	    !field_ref((const char *)data, size))
		abort();
	/* where a value stops: the first byte the rule refuses, or the end
	 * (data is a copy of exactly size bytes, as ASan needs) */
	if (proto_value_stop((const char *)data, (const char *)data + size) !=
	    (const char *)data + value_stop_ref((const char *)data, size))
		abort();
	free(a);
	free(t);
	return 0;
}
