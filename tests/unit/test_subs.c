/*
 * Resource subscriptions' records (shared/subs_rec.c) and their writes
 * (shared/store_subs.c) on an LMDB store in a mkdtemp(3) directory: the
 * keys, the values, the reconciler's decisions and batch sizes, a
 * /proc/PID/stat start time, and the holdings' counting: a pair's mark
 * when its first holder comes and its last goes (never for the others),
 * the per-principal cap (all or nothing), release by holder and by
 * holder and URI, in bounded batches, and a swept holding's closing.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_limit.h"
#include "shared/store_stat.h"
#include "shared/store_subs.h"
#include "shared/subs_rec.h"

#define MAP_SIZE	(8ULL * 1024 * 1024)
#define NOW		1000000ULL

struct fixture {
	char		 f_dir[64];
	struct store	*f_st;
};

static int
setup(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	if (unit_store_dir_make("test_subs", f->f_dir, sizeof(f->f_dir)) ==
	    -1 ||
	    store_open(&f->f_st, f->f_dir, MAP_SIZE, 16, 0) == -1) {
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

/* --- pure --- */

static void
test_keys(void **state)
{
	char	 uk[SUBS_UK_LEN + 1], uk2[SUBS_UK_LEN + 1];
	char	 bk[SUBS_BK_LEN + 1], bk2[SUBS_BK_LEN + 1];
	char	 h[SUBS_HOLDER_MAX + 1], key[SUBS_KEY_MAX + 1];
	char	 kkey[SUBS_KEY_MAX + 1], dkey[SUBS_KEY_MAX + 1];
	char	 pre[SUBS_KEY_MAX + 1], exp[SUBS_KEY_MAX + 1];
	size_t	 klen, kl, pl, dl;

	(void)state;
	subs_uri_key("test://a", uk);
	subs_uri_key("test://b", uk2);
	assert_int_equal(strlen(uk), SUBS_UK_LEN);
	assert_string_not_equal(uk, uk2);
	/* a backend name with '|' makes no key another one's prefix */
	subs_backend_key("a", bk);
	subs_backend_key("a|b", bk2);
	assert_int_equal(strlen(bk), SUBS_BK_LEN);
	assert_string_not_equal(bk, bk2);

	assert_int_equal(subs_holder_session("SID", h, sizeof(h)), 0);
	assert_string_equal(h, "sSID");
	assert_int_equal(subs_holder_session("S|D", h, sizeof(h)), -1);
	klen = subs_key_hold(key, "sSID", uk, bk);
	assert_int_equal(klen, strlen(key));
	(void)snprintf(exp, sizeof(exp), "h|sSID|%s|%s", uk, bk);
	assert_string_equal(key, exp);

	/* the holding's index entry, its prefix and the pair's mark */
	assert_int_equal(subs_key_of_hold(key, klen, kkey, &kl, &pl, dkey,
	    &dl), 0);
	(void)snprintf(exp, sizeof(exp), "k|%s|%s|sSID", bk, uk);
	assert_string_equal(kkey, exp);
	assert_int_equal(kl, strlen(exp));
	assert_int_equal(subs_prefix_want(pre, bk, uk), pl);
	assert_memory_equal(pre, kkey, pl);
	(void)snprintf(exp, sizeof(exp), "d|%s|%s", bk, uk);
	assert_string_equal(dkey, exp);
	assert_int_equal(subs_key_pair(pre, SUBS_DIRTY, bk, uk), dl);
	assert_string_equal(pre, exp);
	/* not a holding's key */
	assert_int_equal(subs_key_of_hold(dkey, dl, kkey, &kl, &pl, pre,
	    &dl), -1);
	assert_int_equal(subs_key_of_hold("h|x", 3, kkey, &kl, &pl, pre,
	    &dl), -1);

	/* a pair key's parts */
	assert_int_equal(subs_key_split(exp, strlen(exp), bk2, uk2), 0);
	assert_string_equal(bk2, bk);
	assert_string_equal(uk2, uk);
	assert_int_equal(subs_key_split(kkey, kl, bk2, uk2), 0);
	assert_string_equal(uk2, uk);
	assert_int_equal(subs_key_split("d|zz", 4, bk2, uk2), -1);

	assert_int_equal(subs_prefix_holder(pre, "sSID"), 7);
	assert_string_equal(pre, "h|sSID|");
	assert_int_equal(subs_prefix_backend(pre, SUBS_MADE, bk),
	    3 + SUBS_BK_LEN);
	/* the longest holder fits */
	memset(h, 'x', sizeof(h) - 1);
	h[sizeof(h) - 1] = '\0';
	assert_int_equal(subs_key_hold(key, h, uk, bk), SUBS_KEY_MAX);
}

static void
test_holders(void **state)
{
	char		 h[SUBS_HOLDER_MAX + 1], w[SUBS_KEY_MAX + 1];
	char		 pre[SUBS_KEY_MAX + 1];
	pid_t		 pid;
	uint64_t	 start;
	size_t		 wl;

	(void)state;
	assert_int_equal(subs_holder_listen(4242, 123456789, 7, h,
	    sizeof(h)), 0);
	assert_string_equal(h, "l4242.123456789.7");
	assert_int_equal(subs_holder_worker(h, strlen(h), &pid, &start), 0);
	assert_int_equal(pid, 4242);
	assert_int_equal(start, 123456789);
	assert_int_equal(subs_holder_worker("sABC", 4, &pid, &start), -1);
	assert_int_equal(subs_holder_worker("l0.1.2", 6, &pid, &start), -1);
	assert_int_equal(subs_holder_worker("l12.x.2", 7, &pid, &start), -1);
	assert_int_equal(subs_holder_worker("l12", 3, &pid, &start), -1);

	/* a worker's record and the prefix of its holdings: 12 is not 123 */
	wl = subs_key_worker(w, 12, 99);
	assert_string_equal(w, "p|12.99");
	assert_int_equal(subs_prefix_worker_holds(pre, w, wl), 9);
	assert_string_equal(pre, "h|l12.99.");
	assert_int_equal(subs_prefix_worker_holds(pre, "h|x", 3), 0);
}

static void
test_values(void **state)
{
	struct subs_val	 sv;
	char		*buf;
	size_t		 len;

	(void)state;
	assert_int_equal(subs_val_encode("be", "test://x\n\"y\"", NULL, &buf,
	    &len), 0);
	assert_int_equal(subs_val_decode(buf, len, &sv), 0);
	assert_string_equal(sv.sv_backend, "be");
	assert_string_equal(sv.sv_uri, "test://x\n\"y\"");
	assert_null(sv.sv_bsid);
	subs_val_clear(&sv);
	free(buf);
	assert_int_equal(subs_val_encode("be", "u", "SESS", &buf, &len), 0);
	assert_int_equal(subs_val_decode(buf, len, &sv), 0);
	assert_string_equal(sv.sv_bsid, "SESS");
	subs_val_clear(&sv);
	free(buf);
	assert_int_equal(subs_val_decode("[\"a\"]", 5, &sv), -1);
	assert_int_equal(subs_val_decode("[\"a\",1]", 7, &sv), -1);
	assert_int_equal(subs_val_decode("{}", 2, &sv), -1);
	assert_int_equal(subs_val_decode("[\"a\",\"b\",\"c\",\"d\"]", 17,
	    &sv), -1);
}

static void
test_stat_start(void **state)
{
	const char	*ok = "4242 (vmcpd-worker) S 1 4242 4242 0 -1 4194560 "
			    "100 0 0 0 5 3 0 0 20 0 1 0 987654 12345678 300\n";
	/* a comm with a space and a ')' */
	const char	*odd = "7 (a) b) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
			    "1 0 55 1 1";
	uint64_t	 start;

	(void)state;
	assert_int_equal(subs_stat_start(ok, strlen(ok), &start), 0);
	assert_int_equal(start, 987654);
	assert_int_equal(subs_stat_start(odd, strlen(odd), &start), 0);
	assert_int_equal(start, 55);
	assert_int_equal(subs_stat_start("1 (x) S 1", 9, &start), -1);
	assert_int_equal(subs_stat_start("garbage", 7, &start), -1);
}

static void
test_decide(void **state)
{
	(void)state;
	assert_int_equal(subs_decide(1, NULL, "S1"), SUBS_ACT_SUBSCRIBE);
	assert_int_equal(subs_decide(1, "S1", "S1"), SUBS_ACT_NONE);
	/* made on a session the backend forgot: made again */
	assert_int_equal(subs_decide(1, "S0", "S1"), SUBS_ACT_SUBSCRIBE);
	assert_int_equal(subs_decide(0, NULL, "S1"), SUBS_ACT_NONE);
	assert_int_equal(subs_decide(0, "S1", "S1"), SUBS_ACT_UNSUBSCRIBE);
	assert_int_equal(subs_decide(0, "S0", "S1"), SUBS_ACT_FORGET);
}

static void
test_take_count(void **state)
{
	(void)state;
	/* room in the queue while calls may start */
	assert_int_equal(subs_take_count(0, 8, 0, 64), 64);
	assert_int_equal(subs_take_count(3, 8, 60, 64), 4);
	/* every call out, or a full queue: nothing taken now */
	assert_int_equal(subs_take_count(8, 8, 0, 64), 0);
	assert_int_equal(subs_take_count(0, 8, 64, 64), 0);
}

/* --- the store --- */

struct hold {
	char		 key[SUBS_KEY_MAX + 1];
	char		*val;
	size_t		 vlen;
};

static void
hold_make(struct hold *h, const char *holder, const char *backend,
    const char *uri)
{
	char uk[SUBS_UK_LEN + 1], bk[SUBS_BK_LEN + 1];

	subs_uri_key(uri, uk);
	subs_backend_key(backend, bk);
	assert_true(subs_key_hold(h->key, holder, uk, bk) > 0);
	assert_int_equal(subs_val_encode(backend, uri, NULL, &h->val,
	    &h->vlen), 0);
}

static int
hold_n(struct store *st, const char *holder, const char *backend,
    const char **uris, size_t n, const char *group, size_t max,
    size_t *marked)
{
	struct store_hold	*sh;
	struct hold		*h;
	struct store_limit	 lim;
	size_t			 i;
	int			 rc;

	sh = calloc(n, sizeof(*sh));
	h = calloc(n, sizeof(*h));
	assert_non_null(sh);
	assert_non_null(h);
	for (i = 0; i < n; i++) {
		hold_make(&h[i], holder, backend, uris[i]);
		sh[i].sh_key = h[i].key;
		sh[i].sh_klen = strlen(h[i].key);
		sh[i].sh_val = h[i].val;
		sh[i].sh_vlen = h[i].vlen;
	}
	memset(&lim, 0, sizeof(lim));
	lim.sl_group = group;
	lim.sl_glen = strlen(group);
	lim.sl_group_max = max;
	rc = store_subs_hold(st, sh, n, &lim, 0, NOW, marked);
	for (i = 0; i < n; i++)
		free(h[i].val);
	free(h);
	free(sh);
	return rc;
}

/* the marks taken (and so removed): how many */
static int
count_cb(void *arg, const void *key, size_t klen, const struct store_rec *r)
{
	(void)key;
	(void)klen;
	(void)r;
	(*(size_t *)arg)++;
	return 0;
}

static size_t
marks_take(struct store *st)
{
	size_t n = 0;

	assert_true(store_take_prefix(st, STORE_SUBS, "d|", 2, 256, NOW,
	    count_cb, &n) >= 0);
	return n;
}

static int
wanted(struct store *st, const char *backend, const char *uri)
{
	char	uk[SUBS_UK_LEN + 1], bk[SUBS_BK_LEN + 1];
	char	pre[SUBS_KEY_MAX + 1];
	size_t	plen;

	subs_uri_key(uri, uk);
	subs_backend_key(backend, bk);
	plen = subs_prefix_want(pre, bk, uk);
	return store_prefix_any(st, STORE_SUBS, pre, plen, NOW);
}

static size_t
group_count(struct store *st, const char *group)
{
	size_t n = 0;

	assert_int_equal(store_group_count(st, STORE_SUBS, group,
	    strlen(group), &n), 0);
	return n;
}

/* release holder's holdings (of uri, if not NULL): 0 or -1 */
static int
release(struct store *st, const char *holder, const char *uri, size_t max,
    size_t *released, size_t *marked, int *more)
{
	char	pre[SUBS_KEY_MAX + 1];
	size_t	plen;

	plen = subs_prefix_release(pre, holder, uri);
	return store_subs_release(st, pre, plen, max, NOW, released, marked,
	    more);
}

static void
test_hold_release(void **state)
{
	struct fixture	*f = *state;
	const char	*ab[] = { "test://a", "test://b" };
	const char	*a[] = { "test://a" };
	size_t		 marked, released;
	int		 more;

	/* the first holders of a and b: two marks */
	assert_int_equal(hold_n(f->f_st, "l1.1.1", "be", ab, 2, "pA", 0,
	    &marked), 0);
	assert_int_equal(marked, 2);
	assert_int_equal(marks_take(f->f_st), 2);
	assert_int_equal(wanted(f->f_st, "be", "test://a"), 1);
	assert_int_equal(wanted(f->f_st, "other", "test://a"), 0);
	/* a second holder of a: no mark; holding it again: nothing */
	assert_int_equal(hold_n(f->f_st, "sSESSION", "be", a, 1, "pB", 0,
	    &marked), 0);
	assert_int_equal(marked, 0);
	assert_int_equal(hold_n(f->f_st, "sSESSION", "be", a, 1, "pB", 0,
	    &marked), 0);
	assert_int_equal(marked, 0);
	assert_int_equal(group_count(f->f_st, "pA"), 2);
	assert_int_equal(group_count(f->f_st, "pB"), 1);

	/* bob's session never held b: releasing it touches nothing */
	assert_int_equal(release(f->f_st, "sSESSION", "test://b", 16,
	    &released, &marked, &more), 0);
	assert_int_equal(released, 0);
	assert_int_equal(marked, 0);
	assert_int_equal(wanted(f->f_st, "be", "test://b"), 1);

	/* the stream goes: b's last holder (a mark), a still held */
	assert_int_equal(release(f->f_st, "l1.1.1", NULL, 16, &released,
	    &marked, &more), 0);
	assert_int_equal(released, 2);
	assert_int_equal(marked, 1);
	assert_int_equal(more, 0);
	assert_int_equal(wanted(f->f_st, "be", "test://b"), 0);
	assert_int_equal(wanted(f->f_st, "be", "test://a"), 1);
	assert_int_equal(group_count(f->f_st, "pA"), 0);
	assert_int_equal(marks_take(f->f_st), 1);

	/* the session unsubscribes a: the last holder, a mark */
	assert_int_equal(release(f->f_st, "sSESSION", "test://a", 16,
	    &released, &marked, &more), 0);
	assert_int_equal(released, 1);
	assert_int_equal(marked, 1);
	assert_int_equal(wanted(f->f_st, "be", "test://a"), 0);
	assert_int_equal(group_count(f->f_st, "pB"), 0);
}

static void
test_group_cap(void **state)
{
	struct fixture	*f = *state;
	const char	*three[] = { "u:1", "u:2", "u:3" };
	const char	*two[] = { "u:3", "u:4" };
	const char	*again[] = { "u:1", "u:2" };
	size_t		 marked;

	assert_int_equal(hold_n(f->f_st, "l1.1.1", "be", three, 3, "pA", 4,
	    &marked), 0);
	/* two more would make five: none is held */
	assert_int_equal(hold_n(f->f_st, "l1.1.2", "be", two, 2, "pA", 4,
	    &marked), STORE_LIMIT_GROUP);
	assert_int_equal(group_count(f->f_st, "pA"), 3);
	assert_int_equal(wanted(f->f_st, "be", "u:4"), 0);
	/* those the holder has already count nothing */
	assert_int_equal(hold_n(f->f_st, "l1.1.1", "be", again, 2, "pA", 3,
	    &marked), 0);
	/* another principal has its own count */
	assert_int_equal(hold_n(f->f_st, "l1.1.3", "be", two, 2, "pB", 2,
	    &marked), 0);
	assert_int_equal(marked, 1);	/* u:3 was held already */
}

static void
test_release_batches(void **state)
{
	struct fixture	*f = *state;
	const char	*uris[40];
	char		 buf[40][16];
	size_t		 i, marked, released, total = 0, marks = 0;
	int		 more = 1, rounds = 0;

	for (i = 0; i < 40; i++) {
		(void)snprintf(buf[i], sizeof(buf[i]), "u:%zu", i);
		uris[i] = buf[i];
	}
	assert_int_equal(hold_n(f->f_st, "l9.9.1", "be", uris, 40, "pA", 0,
	    &marked), 0);
	assert_int_equal(marked, 40);
	(void)marks_take(f->f_st);
	/* a dead worker's holdings, 16 at a time */
	while (more) {
		assert_int_equal(release(f->f_st, "l9.9.1", NULL, 16,
		    &released, &marked, &more), 0);
		assert_true(released <= 16);
		total += released;
		marks += marked;
		rounds++;
	}
	assert_int_equal(total, 40);
	assert_int_equal(marks, 40);
	assert_int_equal(rounds, 3);
	assert_int_equal(store_prefix_any(f->f_st, STORE_SUBS, "k|", 2, NOW),
	    0);
	assert_int_equal(store_prefix_any(f->f_st, STORE_SUBS, "h|", 2, NOW),
	    0);
}

static void
test_closed(void **state)
{
	struct fixture		*f = *state;
	struct store_hold	 sh;
	struct store_limit	 lim;
	struct hold		 h, h2;
	size_t			 marked;

	/* a session's holding expires with the session's last moment */
	hold_make(&h, "sS1", "be", "u:x");
	hold_make(&h2, "sS2", "be", "u:x");
	memset(&lim, 0, sizeof(lim));
	lim.sl_group = "pA";
	lim.sl_glen = 2;
	sh.sh_key = h.key;
	sh.sh_klen = strlen(h.key);
	sh.sh_val = h.val;
	sh.sh_vlen = h.vlen;
	assert_int_equal(store_subs_hold(f->f_st, &sh, 1, &lim, NOW + 100,
	    NOW, &marked), 0);
	sh.sh_key = h2.key;
	sh.sh_klen = strlen(h2.key);
	assert_int_equal(store_subs_hold(f->f_st, &sh, 1, &lim, NOW + 500,
	    NOW, &marked), 0);
	assert_int_equal(marked, 0);
	(void)marks_take(f->f_st);
	/* the first one's sweep: another holder is left, no mark */
	assert_int_equal(store_subs_closed(f->f_st, h.key, strlen(h.key),
	    h.val, h.vlen, NOW + 200, &marked), 0);
	assert_int_equal(marked, 0);
	assert_int_equal(wanted(f->f_st, "be", "u:x"), 1);
	/* the last: a mark */
	assert_int_equal(store_subs_closed(f->f_st, h2.key, strlen(h2.key),
	    h2.val, h2.vlen, NOW + 600, &marked), 0);
	assert_int_equal(marked, 1);
	free(h.val);
	free(h2.val);
}

static int
key_cb(void *arg, const void *key, size_t klen, const struct store_rec *r)
{
	char *out = arg;

	(void)r;
	(void)snprintf(out + strlen(out), 64, "%.*s,", (int)klen,
	    (const char *)key);
	return 0;
}

static void
test_range(void **state)
{
	struct fixture	*f = *state;
	char		 seen[256] = "";
	int		 more, n;

	assert_int_equal(store_put(f->f_st, STORE_SUBS, "p|1", 3, "x", 1, 0,
	    NOW), 0);
	assert_int_equal(store_put(f->f_st, STORE_SUBS, "p|2", 3, "x", 1, 0,
	    NOW), 0);
	assert_int_equal(store_put(f->f_st, STORE_SUBS, "p|3", 3, "x", 1,
	    NOW - 1, NOW - 2), 0);	/* expired: never handed */
	assert_int_equal(store_put(f->f_st, STORE_SUBS, "p|4", 3, "x", 1, 0,
	    NOW), 0);
	assert_int_equal(store_put(f->f_st, STORE_SUBS, "q|1", 3, "x", 1, 0,
	    NOW), 0);
	n = store_range(f->f_st, STORE_SUBS, "p|", 2, NULL, 0, 2, NOW, key_cb,
	    seen, &more);
	assert_int_equal(n, 2);
	assert_string_equal(seen, "p|1,p|2,");
	assert_int_equal(more, 1);
	seen[0] = '\0';
	n = store_range(f->f_st, STORE_SUBS, "p|", 2, "p|2", 3, 2, NOW,
	    key_cb, seen, &more);
	assert_int_equal(n, 1);
	assert_string_equal(seen, "p|4,");
	assert_int_equal(more, 0);
	/* after a key no longer there */
	seen[0] = '\0';
	n = store_range(f->f_st, STORE_SUBS, "p|", 2, "p|25", 4, 8, NOW,
	    key_cb, seen, &more);
	assert_string_equal(seen, "p|4,");
	assert_int_equal(store_prefix_any(f->f_st, STORE_SUBS, "p|3", 3, NOW),
	    0);
	assert_int_equal(store_prefix_any(f->f_st, STORE_SUBS, "q|", 2, NOW),
	    1);
	assert_int_equal(store_prefix_any(f->f_st, STORE_SUBS, "r|", 2, NOW),
	    0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_holders),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_stat_start),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_take_count),
		cmocka_unit_test_setup_teardown(test_hold_release, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_group_cap, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_release_batches, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range, setup, teardown),
	};

	log_init(1, "test_subs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
