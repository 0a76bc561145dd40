/*
 * Driver of tests/interop/links_ctl.test.mjs's Redis case: worker/state/
 * link_redis.c against a real Redis (argv[1] its port, argv[2] a state
 * directory), on one event loop as a worker runs it.  A consent is put
 * and taken by two takers sent back to back (GETDEL: one has it); a
 * link is put, read back (the host's copy made current, so that
 * link_credential() gives its token), then dropped (gone from both).
 * One line a step; exit 0 if every step went as it should.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/redis/redis.h"
#include "worker/state/link_store.h"
#include "drive_redis.h"

#define SCOPE	"0123456789abcdef0123456789abcdef"

static struct worker		 w;
static struct config_backend	 be;
static struct consent_rec	 cr;
static int			 step, taken, missed;

static void	drive_next(void);

static void
on_done(void *arg, int rc)
{
	drive_check(rc == 0, arg);
	drive_next();
}

static void
on_take(void *arg, int rc, const struct consent_rec *got)
{
	(void)arg;
	if (rc == 0 && got != NULL && strcmp(got->cr_id, cr.cr_id) == 0 &&
	    strcmp(got->cr_verifier, cr.cr_verifier) == 0)
		taken++;
	else if (rc == STORE_NOTFOUND)
		missed++;
	if (taken + missed == 2) {
		drive_check(taken == 1 && missed == 1,
		    "two takers of one consent: one has it");
		drive_next();
	}
}

static void
on_get(void *arg, int rc, const struct link_rec *lr)
{
	char	 authz[256], why[256];

	(void)arg;
	drive_check(rc == 0 && lr != NULL && strcmp(lr->lr_access,
	    "gho_redis") == 0, "the link read back from Redis");
	drive_check(link_credential(&w, &be, SCOPE, authz, sizeof(authz),
	    why, sizeof(why)) == 0 && strcmp(authz, "Bearer gho_redis") == 0,
	    "the host's copy gives its token");
	drive_next();
}

static void
on_gone(void *arg, int rc, const struct link_rec *lr)
{
	char	 authz[256], why[256];

	(void)arg;
	(void)lr;
	drive_check(rc == STORE_NOTFOUND, "the link gone from Redis");
	drive_check(link_credential(&w, &be, SCOPE, authz, sizeof(authz),
	    why, sizeof(why)) == -1, "and from the host's copy");
	drive_next();
}

static void
drive_next(void)
{
	struct link_rec	 lr;
	int		 rc = 0;

	switch (step++) {
	case 0:
		memset(&cr, 0, sizeof(cr));
		(void)consent_id_new(cr.cr_id);
		(void)snprintf(cr.cr_scope, sizeof(cr.cr_scope), SCOPE);
		(void)snprintf(cr.cr_backend, sizeof(cr.cr_backend), "github");
		cr.cr_created_ms = store_now_ms();
		cr.cr_expires_ms = cr.cr_created_ms + CONSENT_TTL_MS;
		(void)link_random(cr.cr_nonce, CONSENT_NONCE_LEN);
		(void)link_random(cr.cr_verifier, CONSENT_VERIFIER_LEN);
		printf("consent %s\n", cr.cr_id);
		rc = link_store->ls_cput(&w, &cr, on_done, "consent put");
		break;
	case 1:
		rc = link_store->ls_ctake(&w, cr.cr_id, on_take, NULL) |
		    link_store->ls_ctake(&w, cr.cr_id, on_take, NULL);
		break;
	case 2:
		memset(&lr, 0, sizeof(lr));
		(void)snprintf(lr.lr_backend, sizeof(lr.lr_backend), "github");
		(void)snprintf(lr.lr_sub, sizeof(lr.lr_sub), "alice");
		lr.lr_linked_ms = store_now_ms();
		(void)snprintf(lr.lr_access, sizeof(lr.lr_access), "gho_redis");
		(void)snprintf(lr.lr_refresh, sizeof(lr.lr_refresh), "ghr_r");
		rc = link_store->ls_put(&w, SCOPE, &lr, on_done, "link put");
		break;
	case 3:
		/* drop the host's copy: the read makes it again */
		(void)store_del(w.w_store, STORE_LINKS, SCOPE "|github",
		    strlen(SCOPE "|github"));
		rc = link_store->ls_get(&w, SCOPE, "github", on_get, NULL);
		break;
	case 4:
		rc = link_store->ls_del(&w, SCOPE, "github", on_done,
		    "link dropped");
		break;
	case 5:
		rc = link_store->ls_get(&w, SCOPE, "github", on_gone, NULL);
		break;
	default:
		(void)event_base_loopexit(w.w_base, NULL);
		return;
	}
	if (rc != 0) {
		drive_check(0, "a command sent");
		(void)event_base_loopexit(w.w_base, NULL);
	}
}

int
main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: drive_links_redis port statedir\n");
		return 2;
	}
	be.cb_name = "github";
	if (seal_key_generate() == -1 ||
	    drive_redis_open(&w, "github", argv[1], argv[2]) == -1)
		return 1;
	link_redis_init(&w);
	drive_redis_run(&w, drive_next, NULL);
	if (step < 6)
		drive_check(0, "every step done in time");
	return drive_bad;
}
