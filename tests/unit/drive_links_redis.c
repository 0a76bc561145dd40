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

#define SCOPE	"0123456789abcdef0123456789abcdef"

static struct worker		 w;
static struct config_backend	 be;
static struct consent_rec	 cr;
static struct event		*tick;
static int			 step, taken, missed, bad;

static void	drive_next(void);

static void
drive_check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		bad = 1;
}

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

/* wait for the connection, then go */
static void
on_tick(evutil_socket_t fd, short ev, void *arg)
{
	static int	 n;
	struct timeval	 tv = { 0, 50000 };

	(void)fd;
	(void)ev;
	(void)arg;
	if (redis_up()) {
		drive_next();
		return;
	}
	if (++n > 100) {
		drive_check(0, "connected to Redis");
		(void)event_base_loopexit(w.w_base, NULL);
		return;
	}
	(void)evtimer_add(tick, &tv);
}

int
main(int argc, char *argv[])
{
	struct config	*cf;
	char		 yaml[512], err[CONFIG_ERR_MAX];
	struct timeval	 tv = { 0, 0 }, limit = { 20, 0 };

	if (argc != 3) {
		fprintf(stderr, "usage: drive_links_redis port statedir\n");
		return 2;
	}
	(void)snprintf(yaml, sizeof(yaml), "backends:\n  - {name: github, "
	    "url: http://127.0.0.1:9/mcp, transport: streamable-http}\n"
	    "sessionStorage: {provider: redis, address: \"127.0.0.1:%s\"}\n",
	    argv[1]);
	if ((cf = config_load_buffer("drive.yaml", yaml, strlen(yaml), err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	memset(&w, 0, sizeof(w));
	w.w_conf = cf;
	be.cb_name = "github";
	if (seal_key_generate() == -1 ||
	    (w.w_base = event_base_new()) == NULL ||
	    store_open(&w.w_store, argv[2], 16 << 20, 126, 0) == -1 ||
	    redis_init(&w) == -1)
		return 1;
	link_redis_init(&w);
	tick = evtimer_new(w.w_base, on_tick, NULL);
	(void)evtimer_add(tick, &tv);
	(void)event_base_loopexit(w.w_base, &limit);
	(void)event_base_dispatch(w.w_base);
	if (step < 6)
		drive_check(0, "every step done in time");
	redis_free();
	event_free(tick);
	store_close(w.w_store);
	event_base_free(w.w_base);
	config_free(cf);
	return bad;
}
