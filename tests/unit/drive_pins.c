/*
 * Driver of tests/interop/console_actions.test.mjs: a pinned tool's
 * record in the state directory, as vmcpd's builder writes it
 * (shared/pin_db.c), so that the console's approve and reject are run
 * against what vmcpd keeps.
 *
 *	drive_pins DIR pend BACKEND TOOL	pinned, and a pending change
 *	drive_pins DIR show BACKEND TOOL	its state and hashes, printed
 *						"state pin new"
 */
#include <stdio.h>
#include <string.h>

#include "shared/pin_db.h"
#include "shared/store.h"

#define DRIVE_MAP	(1024ULL * 1024 * 1024)	/* vmcpd's default */

int
main(int argc, char *argv[])
{
	struct store	*st;
	struct pin_rec	 pr;
	uint64_t	 now;
	int		 rc = 1;

	if (argc != 5 || (strcmp(argv[2], "pend") != 0 &&
	    strcmp(argv[2], "show") != 0)) {
		fprintf(stderr, "usage: drive_pins dir pend|show backend "
		    "tool\n");
		return 2;
	}
	if (store_open(&st, argv[1], DRIVE_MAP, 512, 0) == -1)
		return 1;
	memset(&pr, 0, sizeof(pr));
	if (strcmp(argv[2], "show") == 0) {
		if (pin_db_get(st, argv[3], PIN_TOOL, argv[4], &pr) == 0) {
			printf("%s %s %s\n", pin_state_name(pr.pr_state),
			    pr.pr_hash, pr.pr_new[0] != '\0' ? pr.pr_new : "-");
			pin_rec_clear(&pr);
			rc = 0;
		}
		store_close(st);
		return rc;
	}
	now = store_now_ms();
	(void)snprintf(pr.pr_backend, sizeof(pr.pr_backend), "%s", argv[3]);
	pr.pr_kind = PIN_TOOL;
	(void)snprintf(pr.pr_name, sizeof(pr.pr_name), "%s", argv[4]);
	pr.pr_state = PIN_PENDING;
	memset(pr.pr_hash, 'a', PIN_HASH_LEN);
	memset(pr.pr_new, 'b', PIN_HASH_LEN);
	pr.pr_text = (char *)"{\"description\":\"old\",\"name\":\"x\"}";
	pr.pr_new_text = (char *)"{\"description\":\"new\",\"name\":\"x\"}";
	pr.pr_pinned_ms = now - 60000;
	pr.pr_new_ms = now;
	if (pin_db_put(st, &pr) == 0)
		rc = 0;
	store_close(st);
	return rc;
}
