/*
 * Synthesized backend sessions (worker/upstream/backend_session.c): the scope a request
 * goes under, when a principal's last use is stamped, the group its
 * sessions are counted in, the closing queue's keys and records; and
 * the store's parts of their bounds (shared/store_write.c): the cap
 * that evicts the least recently used of a group (store_add_evict())
 * and the use that pushes a record's expiry on (store_touch()), in an
 * LMDB store in a mkdtemp(3) directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "shared/store_stat.h"
#include "shared/store_sweep.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/backend_session_store.h"
#include "worker/view/view_int.h"

#define NOW		1000000ULL
#define PSCOPE		"0123456789abcdef0123456789abcdef"

static void
test_scope(void **state)
{
	(void)state;
	/* the view's anonymous scope is the backend sessions' (the view
	 * sits below the edge and spells it on its own) */
	assert_string_equal(VIEW_SCOPE_ANON, BSESSION_SCOPE_ANON);
	/* a principal's own requests: its scope, whatever the backend */
	assert_string_equal(bsession_scope_pick(PSCOPE, 0, BSESSION_FOR_USER),
	    PSCOPE);
	assert_string_equal(bsession_scope_pick(PSCOPE, 1, BSESSION_FOR_USER),
	    PSCOPE);
	/* lists, notifications, subscriptions: shared, but for a
	 * token_exchange backend, which needs the principal's token */
	assert_string_equal(bsession_scope_pick(PSCOPE, 0,
	    BSESSION_FOR_SHARED), BSESSION_SCOPE_ANON);
	assert_string_equal(bsession_scope_pick(PSCOPE, 1,
	    BSESSION_FOR_SHARED), PSCOPE);
	/* anonymous clients share the shared scope */
	assert_string_equal(bsession_scope_pick(NULL, 0, BSESSION_FOR_USER),
	    BSESSION_SCOPE_ANON);
	assert_string_equal(bsession_scope_pick("", 1, BSESSION_FOR_USER),
	    BSESSION_SCOPE_ANON);
	assert_true(bsession_per_principal(PSCOPE));
	assert_false(bsession_per_principal(BSESSION_SCOPE_ANON));
}

static void
test_touch_due(void **state)
{
	(void)state;
	/* at most once a second per session */
	assert_false(bsession_touch_due(NOW, NOW));
	assert_false(bsession_touch_due(NOW, NOW + BSESSION_TOUCH_MS - 1));
	assert_true(bsession_touch_due(NOW, NOW + BSESSION_TOUCH_MS));
	/* a clock that went back: stamped anew */
	assert_true(bsession_touch_due(NOW, NOW - 1));
}

static void
test_group(void **state)
{
	char	 a[BSESSION_GROUP_MAX + 1], b[BSESSION_GROUP_MAX + 1];
	char	 name[65];

	(void)state;
	assert_int_equal(bsession_group(a, sizeof(a), "mem"), 5);
	assert_string_equal(a, "p|mem");
	/* the longest backend names fit, told apart by a hash */
	memset(name, 'x', 64);
	name[64] = '\0';
	assert_int_equal(bsession_group(a, sizeof(a), name),
	    BSESSION_GROUP_MAX);
	name[63] = 'y';
	assert_int_equal(bsession_group(b, sizeof(b), name),
	    BSESSION_GROUP_MAX);
	assert_string_not_equal(a, b);
	assert_int_equal(strncmp(a, "p|xxx", 5), 0);
	assert_int_equal(bsession_group(a, 4, "mem"), 0);
}

static void
test_closing(void **state)
{
	char	 name[65], *sid, *ver;
	char	 id[] = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde";
	const char *rec1 = "{\"sid\":\"s1\",\"pv\":\"2025-11-25\"}";
	const char *rec2 = "{\"pv\":\"2025-11-25\"}";

	(void)state;
	/* a principal's record ("scope|backend") or a client session's */
	assert_int_equal(bsession_closing_key(PSCOPE "|mem",
	    strlen(PSCOPE "|mem"), name, sizeof(name)), 1);
	assert_string_equal(name, "mem");
	assert_int_equal(bsession_closing_key(id, strlen(id), name,
	    sizeof(name)), 0);
	assert_int_equal(bsession_closing_key(PSCOPE "|", strlen(PSCOPE "|"),
	    name, sizeof(name)), 0);
	assert_int_equal(bsession_closing_key(PSCOPE "|mem", strlen(PSCOPE
	    "|mem"), name, 3), 0);

	assert_int_equal(bsession_decode(rec1, strlen(rec1), &sid, &ver), 0);
	assert_string_equal(sid, "s1");
	assert_string_equal(ver, "2025-11-25");
	free(sid);
	free(ver);
	/* a backend that gave no session id */
	assert_int_equal(bsession_decode(rec2, strlen(rec2), &sid, &ver), 0);
	assert_null(sid);
	free(ver);
	assert_int_equal(bsession_decode("{\"sid\":\"s1\"}", 12, &sid, &ver),
	    -1);
	assert_int_equal(bsession_decode("nope", 4, &sid, &ver), -1);
	assert_null(sid);
	assert_null(ver);
}

/* the nodes' record of a principal's session (provider redis) */
static void
test_redis_key(void **state)
{
	char	 k[BSESSION_RKEY_MAX], small[16];

	(void)state;
	assert_int_equal(bsession_redis_key(k, sizeof(k), "thv:vmcp:session:",
	    PSCOPE, "mem"), strlen("thv:vmcp:session:bs:" PSCOPE ":mem"));
	assert_string_equal(k, "thv:vmcp:session:bs:" PSCOPE ":mem");
	assert_int_equal(bsession_redis_key(k, sizeof(k), NULL, PSCOPE, "m"),
	    strlen("bs:" PSCOPE ":m"));
	/* too long: refused, never cut */
	assert_int_equal(bsession_redis_key(small, sizeof(small), "p:",
	    PSCOPE, "mem"), 0);
}

/* --- the store's parts ---------------------------------------------- */

struct fixture {
	char		 f_dir[64];
	struct store	*f_st;
};

static int
setup_store(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	if (unit_store_dir_make("test_bsession", f->f_dir,
	    sizeof(f->f_dir)) == -1 ||
	    store_open(&f->f_st, f->f_dir, 8ULL * 1024 * 1024, 64, 0) == -1) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	store_close(f->f_st);
	unit_store_dir_remove(f->f_dir);
	free(f);
	return 0;
}

/* a record of group g (cap max, evicting), payload its key */
static int
add(struct store *st, const char *key, const char *g, size_t max,
    uint64_t exp, uint64_t now, char *evicted, size_t len)
{
	struct store_limit	 lim;
	struct store_rec	 ev;
	int			 rc;

	memset(&lim, 0, sizeof(lim));
	lim.sl_group = g;
	lim.sl_glen = strlen(g);
	lim.sl_group_max = max;
	rc = store_add_evict(st, STORE_BSESSIONS, key, strlen(key), key,
	    strlen(key), exp, now, STORE_F_CLOSE, &lim, &ev);
	(void)snprintf(evicted, len, "%s", ev.sr_data != NULL ? ev.sr_data :
	    "");
	store_rec_clear(&ev);
	return rc;
}

static size_t
count(struct store *st, const char *g)
{
	size_t n;

	assert_int_equal(store_group_count(st, STORE_BSESSIONS, g, strlen(g),
	    &n), 0);
	return n;
}

static size_t
entries(struct store *st, enum store_db db)
{
	struct store_envstat es;

	assert_int_equal(store_envstat(st, &es), 0);
	return es.se_db[db].sd_entries;
}

static int
live(struct store *st, const char *key, uint64_t now)
{
	struct store_rec	rec;
	int			rc;

	rc = store_get(st, STORE_BSESSIONS, key, strlen(key), now, &rec);
	store_rec_clear(&rec);
	return rc == 0;
}

/* the cap evicts the group's least recently used, and only the group's */
static void
test_evict(void **state)
{
	struct fixture	*f = *state;
	struct store	*st = f->f_st;
	char		 ev[64];

	/* another group's, older than all: never evicted for this one */
	assert_int_equal(add(st, "o|b", "p|other", 9, NOW + 50, NOW, ev,
	    sizeof(ev)), 0);
	assert_int_equal(store_put(st, STORE_BSESSIONS, "lock|x", 6, "1", 1,
	    NOW + 10, NOW), 0);
	assert_int_equal(add(st, "a|b", "p|b", 2, NOW + 1000, NOW, ev,
	    sizeof(ev)), 0);
	assert_string_equal(ev, "");
	assert_int_equal(add(st, "c|b", "p|b", 2, NOW + 2000, NOW, ev,
	    sizeof(ev)), 0);
	/* a's use moves it after c */
	assert_int_equal(store_touch(st, STORE_BSESSIONS, "a|b", 3,
	    NOW + 3000, NOW + 10), 0);
	assert_int_equal(add(st, "d|b", "p|b", 2, NOW + 4000, NOW + 20, ev,
	    sizeof(ev)), 0);
	assert_string_equal(ev, "c|b");
	assert_false(live(st, "c|b", NOW + 20));
	assert_true(live(st, "a|b", NOW + 20));
	assert_true(live(st, "d|b", NOW + 20));
	assert_true(live(st, "o|b", NOW + 20));
	assert_int_equal(count(st, "p|b"), 2);
	assert_int_equal(count(st, "p|other"), 1);
	/* evicted at once, not queued to close (its caller closes it) */
	assert_int_equal(entries(st, STORE_CLOSING), 0);
	/* a live key is not replaced, and nothing is evicted for it */
	assert_int_equal(add(st, "a|b", "p|b", 2, NOW + 5000, NOW + 30, ev,
	    sizeof(ev)), STORE_EXISTS);
	assert_string_equal(ev, "");
	assert_int_equal(count(st, "p|b"), 2);
	/* expired ones are reclaimed (queued to close) before any is
	 * evicted */
	assert_int_equal(add(st, "e|b", "p|b", 2, NOW + 9000, NOW + 3500, ev,
	    sizeof(ev)), 0);
	assert_string_equal(ev, "");
	assert_false(live(st, "a|b", NOW + 3500));
	assert_int_equal(count(st, "p|b"), 2);
	assert_int_equal(entries(st, STORE_CLOSING), 2);	/* a and o */
	/* without evicting, the cap refuses */
	{
		struct store_limit lim = { .sl_group = "p|b", .sl_glen = 3,
		    .sl_group_max = 2 };

		assert_int_equal(store_add_limited(st, STORE_BSESSIONS, "g|b",
		    3, "g", 1, NOW + 9000, NOW + 3600, &lim),
		    STORE_LIMIT_GROUP);
	}
}

/* a use pushes the expiry on, keeping the payload, flags and group;
 * a record gone stays gone */
static void
test_touch(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct store_rec	 rec;
	char			 ev[64];

	assert_int_equal(add(st, "a|b", "p|b", 5, NOW + 100, NOW, ev,
	    sizeof(ev)), 0);
	assert_int_equal(store_touch(st, STORE_BSESSIONS, "a|b", 3, NOW + 500,
	    NOW + 50), 0);
	assert_int_equal(store_get(st, STORE_BSESSIONS, "a|b", 3, NOW + 200,
	    &rec), 0);
	assert_string_equal(rec.sr_data, "a|b");
	assert_int_equal(rec.sr_expires_ms, NOW + 500);
	assert_int_equal(rec.sr_updated_ms, NOW + 50);
	assert_int_equal(rec.sr_flags, STORE_F_CLOSE);
	store_rec_clear(&rec);
	assert_int_equal(count(st, "p|b"), 1);
	/* one index entry: the sweep at the old expiry leaves it */
	assert_int_equal(store_sweep(st, NOW + 200, 100, NULL), 0);
	assert_true(live(st, "a|b", NOW + 200));
	/* expired, or deleted: not brought back */
	assert_int_equal(store_touch(st, STORE_BSESSIONS, "a|b", 3, NOW + 900,
	    NOW + 600), STORE_NOTFOUND);
	assert_int_equal(store_del(st, STORE_BSESSIONS, "a|b", 3), 0);
	assert_int_equal(store_touch(st, STORE_BSESSIONS, "a|b", 3, NOW + 900,
	    NOW + 100), STORE_NOTFOUND);
	assert_false(live(st, "a|b", NOW + 100));
	assert_int_equal(count(st, "p|b"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_touch_due),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_closing),
		cmocka_unit_test(test_redis_key),
		cmocka_unit_test_setup_teardown(test_evict, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_touch, setup_store,
		    teardown),
	};

	log_init(1, "test_bsession");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
