/*
 * Serialised list pages of the current view, for either era: a page is
 * the same for every request until the view changes, and serialising a
 * list costs more than the rest of answering it.  An entry holds a
 * reference to its view, so a new view can never be mistaken for an old
 * one.  Only pages asked for with no cursor or a string cursor are kept.
 */
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define PAGES_MAX	16

struct page {
	json_t		*pg_view;
	enum proto_era	 pg_era;
	char		*pg_method;
	int		 pg_has_cursor;	/* absent and "" are two cursors */
	char		*pg_cursor;
	char		*pg_data;
	size_t		 pg_len;
};

static struct page	pages[PAGES_MAX];
static unsigned int	pages_next;

static void
pages_clear(struct page *pg)
{
	json_decref(pg->pg_view);
	free(pg->pg_method);
	free(pg->pg_cursor);
	free(pg->pg_data);
	memset(pg, 0, sizeof(*pg));
}

void
pages_free(void)
{
	size_t i;

	for (i = 0; i < PAGES_MAX; i++)
		pages_clear(&pages[i]);
}

const char *
pages_find(json_t *view, enum proto_era era, const char *method,
    const json_t *cursor, size_t *len)
{
	const char	*c = json_is_string(cursor) ? json_string_value(cursor) :
			    "";
	size_t		 i;

	if (cursor != NULL && !json_is_string(cursor))
		return NULL;
	for (i = 0; i < PAGES_MAX; i++) {
		struct page *pg = &pages[i];

		if (pg->pg_view == view && pg->pg_era == era &&
		    pg->pg_has_cursor == (cursor != NULL) &&
		    strcmp(pg->pg_method, method) == 0 &&
		    strcmp(pg->pg_cursor, c) == 0) {
			*len = pg->pg_len;
			return pg->pg_data;
		}
	}
	return NULL;
}

const char *
pages_put(json_t *view, enum proto_era era, const char *method,
    const json_t *cursor, json_t *result, size_t *len)
{
	struct page	*pg;
	const char	*c = json_is_string(cursor) ? json_string_value(cursor) :
			    "";

	if (cursor != NULL && !json_is_string(cursor)) {
		json_decref(result);
		return NULL;
	}
	pg = &pages[pages_next++ % PAGES_MAX];
	pages_clear(pg);
	pg->pg_data = jsonrpc_dump(result, &pg->pg_len);
	json_decref(result);
	if (pg->pg_data == NULL || (pg->pg_method = strdup(method)) == NULL ||
	    (pg->pg_cursor = strdup(c)) == NULL) {
		pages_clear(pg);
		return NULL;
	}
	pg->pg_view = json_incref(view);
	pg->pg_era = era;
	pg->pg_has_cursor = cursor != NULL;
	*len = pg->pg_len;
	return pg->pg_data;
}
