/*
 * The feature seams' LMDB implementations on their own (the defaults,
 * before any *_redis_init() installs Redis's): each stateful concern
 * that may be shared by the nodes answers through one interface, and
 * on one host it decides at once, in this host's store, and tells no
 * one.  Sessions (worker/state/session_store.h), handles (worker/composite/handle.h),
 * exchanged tokens (worker/upstream/token_exchange_store.h), principals' backend
 * sessions (worker/upstream/backend_session.h), health verdicts
 * (worker/upstream/health_store.h), and rate-limit buckets (ratelimit_step()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "shared/config.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "worker/auth/auth.h"
#include "worker/composite/handle.h"
#include "worker/upstream/health_store.h"
#include "worker/auth/ratelimit.h"
#include "worker/state/session_store.h"
#include "worker/upstream/token_exchange_store.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend_session_store.h"
#include "unit.h"

#define NOW	1000000ULL
#define TTL	10000ULL

static char		 dir[64];
static struct store	*st;

static int
setup(void **state)
{
	(void)state;
	if (unit_store_dir_make("test_seams", dir, sizeof(dir)) == -1 ||
	    store_open(&st, dir, 16 * 1024 * 1024, 126, 0) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	session_cache_free();
	store_close(st);
	unit_store_dir_remove(dir);
	return 0;
}

/* a callback's calls: how many, and the last verdict */
struct seen {
	int	sn_calls;
	int	sn_rc;
	json_t	*sn_snap;
};

static void
seen_rc(void *arg, int rc)
{
	struct seen *sn = arg;

	sn->sn_calls++;
	sn->sn_rc = rc;
}

static void
seen_cont(struct worker *w, struct httpd_req *req)
{
	(void)w;
	(void)req;
	fail_msg("ss_sync ran cont: this host's copy is the session");
}

static void
session_of(struct session *s, const char *id)
{
	memset(s, 0, sizeof(*s));
	(void)snprintf(s->s_id, sizeof(s->s_id), "%s", id);
	assert_non_null(s->s_version = strdup("2025-11-25"));
	assert_non_null(s->s_owner = strdup(""));
	s->s_client_caps = json_object();
	s->s_client_info = json_object();
	s->s_created_ms = NOW;
	s->s_seen_ms = NOW;
	s->s_max_ms = NOW + 60000;
}

/* the default is this host's store, and it is what ss_* write */
static void
test_session_store_lmdb(void **state)
{
	struct store_limit	 lim;
	struct session		 s, d;
	struct seen		 sn;

	(void)state;
	assert_ptr_equal(session_store, &session_store_lmdb);
	session_of(&s, "sess-a");
	memset(&lim, 0, sizeof(lim));
	lim.sl_max = 1;
	assert_int_equal(session_store->ss_put(st, &s, TTL, NOW, &lim), 0);
	/* at the cap, a second new one is refused as store_add_limited()
	 * refuses it */
	(void)snprintf(s.s_id, sizeof(s.s_id), "sess-b");
	assert_int_equal(session_store->ss_put(st, &s, TTL, NOW, &lim),
	    STORE_LIMIT_DB);
	(void)snprintf(s.s_id, sizeof(s.s_id), "sess-a");
	/* a save (no limit) of the same one, a later touch */
	s.s_seen_ms = NOW + 5;
	assert_int_equal(session_save(st, &s, TTL, NOW + 5), 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(session_load(st, "sess-a", NOW + 6, &d), 0);
	assert_int_equal(d.s_seen_ms, NOW + 5);
	assert_int_equal(d.s_rstamp, 0);
	session_clear(&d);
	/* every node knows it at once: done within the call, with 0 */
	memset(&sn, 0, sizeof(sn));
	assert_int_equal(session_store->ss_publish(&s, TTL, NOW, seen_rc,
	    &sn), 0);
	assert_int_equal(sn.sn_calls, 1);
	assert_int_equal(sn.sn_rc, 0);
	memset(&sn, 0, sizeof(sn));
	assert_int_equal(session_store->ss_unpublish("sess-a", seen_rc,
	    &sn), 0);
	assert_int_equal(sn.sn_calls, 1);
	assert_int_equal(sn.sn_rc, 0);
	/* no check before a request: it goes on, cont not called */
	assert_int_equal(session_store->ss_sync(NULL, NULL, seen_cont),
	    SESSION_SYNC_GO);
	/* deleted: gone from the host's store */
	assert_int_equal(session_delete(st, "sess-a"), 0);
	assert_int_equal(session_load(st, "sess-a", NOW + 7, &d),
	    STORE_NOTFOUND);
	session_clear(&s);
}

static const char YAML[] =
"compositeTools:\n"
"  - name: w\n"
"    description: d\n"
"    steps:\n"
"      - {id: a, tool: x.a}\n";

static void
seen_claim(void *arg, enum handle_err he, json_t *snap)
{
	struct seen *sn = arg;

	sn->sn_calls++;
	sn->sn_rc = (int)he;
	json_decref(sn->sn_snap);
	sn->sn_snap = snap;
}

static void
minted_elsewhere(void)
{
	/* told no one: a no-op that takes anything */
	handle_store->hs_minted("h", "o", "w", "fp", "{}", 2, 1000);
}

/* a handle minted here is claimed at once, and only once */
static void
test_handle_store_lmdb(void **state)
{
	struct composite_list	 cl;
	struct seen		 sn;
	json_t			*snap;
	char			 id[HANDLE_ID_LEN + 1], err[256];
	const char		*owner = "0123456789abcdef0123456789abcdef";

	(void)state;
	memset(&cl, 0, sizeof(cl));
	assert_int_equal(composite_load_buffer("t.yaml", YAML, strlen(YAML),
	    &cl, err, sizeof(err)), 0);
	snap = jparse("{\"v\": 1}");
	assert_int_equal(handle_mint(st, owner, cl.cl_items[0], snap, NOW,
	    NOW + 60000, id), HANDLE_OK);
	minted_elsewhere();
	memset(&sn, 0, sizeof(sn));
	assert_int_equal(handle_store->hs_claim(st, id, owner, cl.cl_items[0],
	    NOW + 1, seen_claim, &sn), 0);
	assert_int_equal(sn.sn_calls, 1);
	assert_int_equal(sn.sn_rc, HANDLE_OK);
	assert_true(json_equal(sn.sn_snap, snap));
	/* the replay: refused, within the call too */
	assert_int_equal(handle_store->hs_claim(st, id, owner, cl.cl_items[0],
	    NOW + 2, seen_claim, &sn), 0);
	assert_int_equal(sn.sn_calls, 2);
	assert_int_equal(sn.sn_rc, HANDLE_REPLAYED);
	assert_null(sn.sn_snap);
	/* forged: unknown */
	assert_int_equal(handle_store->hs_claim(st, "nope", owner,
	    cl.cl_items[0], NOW + 3, seen_claim, &sn), 0);
	assert_int_equal(sn.sn_rc, HANDLE_UNKNOWN);
	json_decref(snap);
	composite_list_free(&cl);
}

static void
never_fetched(void *arg, enum texch_rget got, const char *tok, size_t len,
    uint64_t ttl)
{
	(void)arg;
	(void)got;
	(void)tok;
	(void)len;
	(void)ttl;
	fail_msg("tt_fetch's cb ran on one host");
}

/* no token asked of anyone: the exchange is made here */
static void
test_texch_store_lmdb(void **state)
{
	(void)state;
	assert_null(texch_store->tt_fetch("s|b|a|h", never_fetched, NULL));
	texch_store->tt_cancel(NULL);
	texch_store->tt_done("s|b|a|h", "tok", 3, 1000);
	texch_store->tt_done("s|b|a|h", NULL, 0, 0);
}

static void
never_opened(void *arg, enum redis_flight_got got, const char *rec,
    size_t len, uint64_t ttl)
{
	(void)arg;
	(void)got;
	(void)rec;
	(void)len;
	(void)ttl;
	fail_msg("bs_fetch's cb ran on one host");
}

/* a principal's backend session: opened here, its record left alone */
static void
test_bsession_store_lmdb(void **state)
{
	struct store_rec	 rec;
	struct config_backend	 be;
	const char		*scope = "0123456789abcdef0123456789abcdef";

	(void)state;
	memset(&be, 0, sizeof(be));
	be.cb_name = "b";
	assert_null(bsession_store->bs_fetch(scope, &be, never_opened, NULL));
	bsession_store->bs_touch(scope, &be);
	bsession_store->bs_done(scope, &be, "r", 1);
	bsession_store->bs_drop(scope, &be, "r", 1);
	/* forget leaves the host's record to its caller's store_del() */
	assert_int_equal(store_put(st, STORE_BSESSIONS, "k", 1, "v", 1,
	    NOW + 1000, NOW), 0);
	bsession_store->bs_forget(st, scope, &be, "k", 1);
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(store_get(st, STORE_BSESSIONS, "k", 1, NOW, &rec), 0);
	store_rec_clear(&rec);
}

/* verdicts and breakers stay this host's: the calls do nothing */
static void
test_health_store_lmdb(void **state)
{
	struct probe_rec	pr;
	struct config_backend	be;

	(void)state;
	memset(&pr, 0, sizeof(pr));
	memset(&be, 0, sizeof(be));
	health_store->hs_breaker("b", 1);
	health_store->hs_breaker("b", 0);
	health_store->hs_pull();
	health_store->hs_verdict(&be, &pr, PROBE_OK);
}

static void
never_done(void *arg, enum ratelimit_verdict v, unsigned int retry_s)
{
	(void)arg;
	(void)v;
	(void)retry_s;
	fail_msg("ratelimit_step's done ran on one host");
}

/* a composite's step: decided at once in the host's buckets, no wait */
static void
test_ratelimit_step_lmdb(void **state)
{
	struct config		 cf;
	struct worker		 w;
	struct principal	 p;
	struct ratelimit_wait	*wait = (struct ratelimit_wait *)&w;
	unsigned int		 retry;

	(void)state;
	memset(&cf, 0, sizeof(cf));
	cf.cf_ratelimit.crl_enabled = 1;
	cf.cf_ratelimit.crl_per_user.cb_max = 2;	/* exact: no lease */
	cf.cf_ratelimit.crl_per_user.cb_period_ms = 3600 * 1000;
	memset(&w, 0, sizeof(w));
	w.w_conf = &cf;
	w.w_store = st;
	memset(&p, 0, sizeof(p));
	memset(p.p_scope, 'a', AUTH_SCOPE_LEN);
	assert_int_equal(ratelimit_step(&w, &p, "t", 1, &retry, never_done,
	    NULL, &wait), RATELIMIT_OK);
	assert_null(wait);
	assert_int_equal(ratelimit_step(&w, &p, "t", 1, &retry, never_done,
	    NULL, &wait), RATELIMIT_OK);
	assert_int_equal(ratelimit_step(&w, &p, "t", 1, &retry, never_done,
	    NULL, &wait), RATELIMIT_LIMITED);
	assert_null(wait);
	assert_true(retry > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session_store_lmdb, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_store_lmdb, setup,
		    teardown),
		cmocka_unit_test(test_texch_store_lmdb),
		cmocka_unit_test_setup_teardown(test_bsession_store_lmdb,
		    setup, teardown),
		cmocka_unit_test(test_health_store_lmdb),
		cmocka_unit_test_setup_teardown(test_ratelimit_step_lmdb,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
