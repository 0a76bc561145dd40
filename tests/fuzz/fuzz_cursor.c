/*
 * libFuzzer: list cursors on arbitrary strings.  A cursor that decodes
 * must be the one encoding of what it names (re-encoding gives the same
 * text) and resume within the list; any short key must round-trip.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mheaders.h"
#include "proto/cursor.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const kinds[] = {
	"tools", "prompts", "resources", "resourceTemplates",
};

static json_t *
sample_list(void)
{
	static const char *const names[] = { "", "a", "b", "b", "b", "c",
	    "h\xc3\xa9llo", "zz" };
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		abort();
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (json_array_append_new(a, json_pack("{s:s}", "name",
		    names[i])) == -1)
			abort();
	return a;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t	*list;
	unsigned char	*raw;
	char		*s, *k, *c;
	size_t		 i, d, start, n, okinds = 0, rlen, dup;

	if (list == NULL)
		list = sample_list();
	/* exact-size copy so ASan sees any read past the NUL */
	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	n = strlen(s);

	for (i = 0; i < 4; i++) {
		if (proto_cursor_decode(s, kinds[i], &k, &d) == -1) {
			if (k != NULL)
				abort();
			continue;
		}
		okinds++;
		if (n > PROTO_CURSOR_MAX || strlen(k) > PROTO_CURSOR_KEY_MAX)
			abort();
		if ((c = proto_cursor_encode(kinds[i], k, d)) == NULL ||
		    strcmp(c, s) != 0)
			abort();
		free(c);
		if (proto_cursor_resume(list, "name", k, d, &start) == -1 ||
		    start > json_array_size(list))
			abort();
		free(k);
	}
	if (okinds > 1)
		abort();	/* a cursor names one kind */

	/* the input as a key: what fits must come back unchanged */
	dup = size > 0 ? (size_t)data[0] << (data[size - 1] % 57) : 0;
	for (i = 0; i < 4; i++) {
		c = proto_cursor_encode(kinds[i], s, dup);
		if (c == NULL) {
			if (n <= PROTO_CURSOR_KEY_MAX)
				abort();
			continue;
		}
		if (strlen(c) > PROTO_CURSOR_MAX ||
		    proto_cursor_decode(c, kinds[i], &k, &d) == -1 ||
		    strcmp(k, s) != 0 || d != dup)
			abort();
		free(k);
		free(c);
	}

	/* base64 both ways on the raw bytes */
	for (i = 0; i < 2; i++) {
		if ((c = proto_b64_encode(data, size, (int)i)) == NULL)
			abort();
		if (proto_b64_decode(c, strlen(c), (int)i, &raw, &rlen) ==
		    -1 || rlen != size || (size > 0 &&
		    memcmp(raw, data, size) != 0))
			abort();
		free(raw);
		free(c);
		if (proto_b64_decode(s, n, (int)i, &raw, &rlen) == 0) {
			/* strict: the decoded bytes encode back to s */
			if ((c = proto_b64_encode(raw, rlen, (int)i)) == NULL ||
			    strcmp(c, s) != 0)
				abort();
			free(c);
		}
		free(raw);
	}
	free(s);
	return 0;
}
