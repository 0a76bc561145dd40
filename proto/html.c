/*
 * HTML escaping (html.h).
 */
#include <string.h>

#include "proto/html.h"
#include "proto/jsonw.h"

void
html_escape(struct jsonw *jw, const char *s)
{
	const char	*p, *run, *e;

	for (p = run = s; p != NULL && *p != '\0'; p++) {
		switch (*p) {
		case '&':
			e = "&amp;";
			break;
		case '<':
			e = "&lt;";
			break;
		case '>':
			e = "&gt;";
			break;
		case '"':
			e = "&quot;";
			break;
		case '\'':
			e = "&#39;";
			break;
		default:
			continue;
		}
		jsonw_bytes(jw, run, (size_t)(p - run));
		jsonw_bytes(jw, e, strlen(e));
		run = p + 1;
	}
	if (p != NULL)
		jsonw_bytes(jw, run, (size_t)(p - run));
}
