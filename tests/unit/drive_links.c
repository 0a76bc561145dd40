/*
 * Driver of tests/interop/links_ctl.test.mjs: stores two users' links
 * (alice's for github, bob's for linear, each with an access and a
 * refresh token) in the state directory argv[1] as vmcpd's workers do
 * (worker/state/link.c), so that vmcpctl links, revoke and dump are
 * run against what vmcpd writes.  Prints the tokens it sealed, so the
 * test can look for them in vmcpctl's output.
 */
#include <stdio.h>
#include <string.h>

#include "shared/seal.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/state/link_store.h"

static int	 drive_rc;

static void
drive_done(void *arg, int rc)
{
	(void)arg;
	if (rc != 0)
		drive_rc = 1;
}

static int
drive_put(struct worker *w, const char *scope, const char *backend,
    const char *sub, const char *tok)
{
	struct link_rec	 lr;

	memset(&lr, 0, sizeof(lr));
	(void)snprintf(lr.lr_backend, sizeof(lr.lr_backend), "%s", backend);
	(void)snprintf(lr.lr_iss, sizeof(lr.lr_iss), "https://idp.example");
	(void)snprintf(lr.lr_sub, sizeof(lr.lr_sub), "%s", sub);
	lr.lr_linked_ms = store_now_ms();
	lr.lr_expires_ms = lr.lr_linked_ms + 3600 * 1000;
	(void)snprintf(lr.lr_access, sizeof(lr.lr_access), "%s-access", tok);
	(void)snprintf(lr.lr_refresh, sizeof(lr.lr_refresh), "%s-refresh",
	    tok);
	printf("%s\n%s\n", lr.lr_access, lr.lr_refresh);
	return link_store->ls_put(w, scope, &lr, drive_done, NULL);
}

int
main(int argc, char *argv[])
{
	struct worker	 w;

	if (argc != 2) {
		fprintf(stderr, "usage: drive_links statedir\n");
		return 2;
	}
	memset(&w, 0, sizeof(w));
	if (seal_key_generate() == -1 ||
	    store_open(&w.w_store, argv[1], 16 << 20, 126, 0) == -1)
		return 1;
	if (drive_put(&w, "0123456789abcdef0123456789abcdef", "github",
	    "alice", "gho_S3cr3tAlice") == -1 ||
	    drive_put(&w, "fedcba9876543210fedcba9876543210", "linear", "bob",
	    "lin_S3cr3tBob") == -1)
		drive_rc = 1;
	store_close(w.w_store);
	return drive_rc;
}
