/*
 * The console's page (worker/diag/console_page.c) from any JSON at all
 * in place of /status's object: it renders whole, and no text of it
 * becomes markup (the page's one script is its own; no other element
 * a text could make).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonw.h"
#include "worker/diag/console.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static size_t
count(const char *s, const char *what)
{
	size_t	 n = 0;

	for (; (s = strstr(s, what)) != NULL; s++)
		n++;
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jsonw	 jw;
	json_t		*st;
	int		 admin = size > 0 && (data[0] & 1);

	if ((st = json_loadb((const char *)data, size, JSON_DECODE_ANY,
	    NULL)) == NULL)
		return 0;
	memset(&jw, 0, sizeof(jw));
	if (console_page_render(&jw, st, admin ? "<csrf>" : NULL, 1) == 0) {
		if (jw.jw_buf == NULL || strstr(jw.jw_buf, "</html>") == NULL ||
		    count(jw.jw_buf, "<script") != 1 ||
		    strstr(jw.jw_buf, "<img") != NULL ||
		    strstr(jw.jw_buf, "<iframe") != NULL ||
		    strstr(jw.jw_buf, "<csrf>") != NULL ||
		    strlen(jw.jw_buf) != jw.jw_len)
			abort();
	}
	jsonw_free(&jw);
	json_decref(st);
	return 0;
}
