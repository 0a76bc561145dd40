/*
 * worker/auth/ratelimit.c's leases on one host: a generous per-user bucket
 * is leased as shared ones are (a 64th of what it holds goes to the
 * worker, spent without a store txn), a small one stays exact, and a
 * lease dropped unspent gives its tokens back with the worker's next
 * take.  The "other worker" is the store itself: store_buckets_take()
 * on the same bucket key, as every worker's exact take is.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "worker/auth/auth.h"
#include "worker/auth/ratelimit.h"
#include "worker/process/process.h"
#include "unit.h"

#define PERIOD_MS	(100ULL * 3600 * 1000)	/* no refill to speak of */

static char		 dir[64];
static struct store	*st;
static struct config	 cf;
static struct worker	 w;

static int
setup(void **state)
{
	(void)state;
	(void)snprintf(dir, sizeof(dir), "/tmp/vmcpd-rll-XXXXXX");
	if (mkdtemp(dir) == NULL ||
	    store_open(&st, dir, 8 * 1024 * 1024, 64, 0) == -1)
		return -1;
	memset(&cf, 0, sizeof(cf));
	cf.cf_ratelimit.crl_enabled = 1;
	cf.cf_ratelimit.crl_per_user.cb_period_ms = PERIOD_MS;
	memset(&w, 0, sizeof(w));
	w.w_conf = &cf;
	w.w_store = st;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	store_close(st);
	unit_store_dir_remove(dir);
	return 0;
}

static void
principal_of(struct principal *p, char c)
{
	memset(p, 0, sizeof(*p));
	memset(p->p_scope, c, AUTH_SCOPE_LEN);
	p->p_scope[AUTH_SCOPE_LEN] = '\0';
}

/* the calls another worker gets through on p's bucket, exact, until
 * it is empty */
static unsigned int
other_worker_drains(const struct principal *p, unsigned int max)
{
	struct store_bucket	 b;
	uint8_t			 key[RATELIMIT_KEY_MAX];
	uint64_t		 retry;
	unsigned int		 n = 0;

	memset(&b, 0, sizeof(b));
	b.sb_key = key;
	b.sb_klen = ratelimit_key(key, sizeof(key), 'U', p->p_scope, NULL, 0);
	assert_true(b.sb_klen > 0);
	b.sb_max = max;
	b.sb_period_ms = PERIOD_MS;
	while (n <= max && store_buckets_take(st, &b, 1, store_now_ms(),
	    &retry) == 0)
		n++;
	return n;
}

static enum ratelimit_verdict
call(const struct principal *p)
{
	unsigned int retry;

	return ratelimit_check(&w, p, "echo", 4, &retry);
}

/* 6400 tokens: the first call leases 100, the store keeps 6300 */
static void
test_lease_per_user(void **state)
{
	struct principal	 p;
	int			 i;

	(void)state;
	cf.cf_ratelimit.crl_per_user.cb_max = 6400;
	principal_of(&p, 'a');
	assert_int_equal(call(&p), RATELIMIT_OK);
	assert_int_equal(other_worker_drains(&p, 6400), 6300);
	/* the lease's 99 go on without the store, then no more */
	for (i = 0; i < 99; i++)
		assert_int_equal(call(&p), RATELIMIT_OK);
	assert_int_equal(call(&p), RATELIMIT_LIMITED);
}

/* 10 tokens: never leased, every call's token is in the store at once */
static void
test_small_per_user_exact(void **state)
{
	struct principal	 p;

	(void)state;
	cf.cf_ratelimit.crl_per_user.cb_max = 10;
	principal_of(&p, 'b');
	assert_int_equal(call(&p), RATELIMIT_OK);
	assert_int_equal(call(&p), RATELIMIT_OK);
	assert_int_equal(other_worker_drains(&p, 10), 8);
	assert_int_equal(call(&p), RATELIMIT_LIMITED);
}

/* a lease dropped after a second unused gives its tokens back with the
 * next take: nothing lost to a user who calls now and then */
static void
test_lease_given_back(void **state)
{
	struct principal	 p;
	struct timespec		 ts = { 1, 200 * 1000 * 1000 };

	(void)state;
	cf.cf_ratelimit.crl_per_user.cb_max = 6400;
	principal_of(&p, 'c');
	assert_int_equal(call(&p), RATELIMIT_OK);	/* 6300 + 99 leased */
	(void)nanosleep(&ts, NULL);
	/* 6300 + 99 back = 6399; a 64th of that leased anew: 99 */
	assert_int_equal(call(&p), RATELIMIT_OK);
	assert_int_equal(other_worker_drains(&p, 6400), 6300);
}

/* more users than the table has slots: one without a slot is exact,
 * none loses the tokens a lease would have held */
static void
test_lease_table_full(void **state)
{
	struct principal	 p[300];
	size_t			 i;
	unsigned int		 n, leased = 0;

	(void)state;
	cf.cf_ratelimit.crl_per_user.cb_max = 128;
	for (i = 0; i < 300; i++) {
		principal_of(&p[i], 'd');
		(void)snprintf(p[i].p_scope, sizeof(p[i].p_scope), "%032zx",
		    i);
		assert_int_equal(call(&p[i]), RATELIMIT_OK);
	}
	for (i = 0; i < 300; i++) {
		/* 128 / 64: 2 taken, 1 leased; or 1 taken, exact */
		n = other_worker_drains(&p[i], 128);
		assert_true(n == 126 || n == 127);
		leased += n == 126;
	}
	assert_true(leased > 0 && leased < 300);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_per_user),
		cmocka_unit_test(test_small_per_user_exact),
		cmocka_unit_test(test_lease_given_back),
		cmocka_unit_test(test_lease_table_full),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
