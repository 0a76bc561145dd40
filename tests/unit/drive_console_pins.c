/*
 * Driver of tests/interop/console.test.mjs: stores pending pinned
 * changes in the state directory argv[1] as the builder's check would
 * (shared/pin_db.h), before vmcpd starts, so that the console shows
 * what a backend's changed definitions hold.  Each further argument is
 * one change, a JSON object {"backend", "kind": "tool" | "prompt" |
 * "template", "pinned": item, "new": item} (the items as the backend
 * listed them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/pin_db.h"
#include "shared/pin_rec.h"
#include "shared/store.h"

static int
drive_one(struct store *s, const char *arg)
{
	struct pin_rec	 pr;
	json_t		*o;
	char		 name[PIN_NAME_MAX + 1];
	int		 rc = -1;

	memset(&pr, 0, sizeof(pr));
	if ((o = json_loads(arg, 0, NULL)) == NULL ||
	    pin_kind_parse(json_string_value(json_object_get(o, "kind")),
	    &pr.pr_kind) == -1 ||
	    json_string_value(json_object_get(o, "backend")) == NULL ||
	    pin_digest(pr.pr_kind, json_object_get(o, "pinned"), pr.pr_name,
	    pr.pr_hash, &pr.pr_text) == -1 ||
	    pin_digest(pr.pr_kind, json_object_get(o, "new"), name,
	    pr.pr_new, &pr.pr_new_text) == -1 || strcmp(name, pr.pr_name) != 0)
		goto done;
	(void)snprintf(pr.pr_backend, sizeof(pr.pr_backend), "%s",
	    json_string_value(json_object_get(o, "backend")));
	pr.pr_state = PIN_PENDING;
	pr.pr_pinned_ms = store_now_ms() - 3600 * 1000;
	pr.pr_new_ms = store_now_ms();
	rc = pin_db_put(s, &pr);
done:
	pin_rec_clear(&pr);
	json_decref(o);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct store	*s;
	int		 i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: drive_console_pins statedir change ...\n");
		return 2;
	}
	if (store_open(&s, argv[1], 64 << 20, 126, 0) == -1)
		return 1;
	for (i = 2; i < argc; i++)
		if (drive_one(s, argv[i]) == -1) {
			fprintf(stderr, "drive_console_pins: %s: not stored\n", argv[i]);
			rc = 1;
		}
	store_close(s);
	return rc;
}
