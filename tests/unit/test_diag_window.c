/*
 * A backend's last seconds (worker/diag/diag_window.c) over fake slots:
 * the seconds before the current one summed across the workers' and
 * the builder's slots, oldest first per second, an entry of another
 * second (a ring's older lap) or one being cleared (its second 0) left
 * out; quantiles interpolated within the latency buckets; and the
 * ring written by counters.c's diag_backend_done().  The latest
 * denials ring read whole (diag_note_denial()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/config.h"
#include "shared/stats.h"
#include "worker/diag/diag.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

#include "unit_slots.h"

/* the monotonic second, as counters.c numbers it */
static uint64_t
now_sec(void)
{
	return diag_now_us() / 1000000 + 1;
}

/* the ring entry of backend bi in slot s for the second ago seconds
 * before the current one (numbered as counters.c numbers them) */
static struct diag_sec *
sec(int s, size_t bi, uint64_t ago)
{
	uint64_t	n = now_sec() - ago;

	return &diag_stats_slot(w.w_stats, &conf, s)->ds_backends[bi].
	    db_secs[n % DIAG_SECS];
}

static void
put(int s, size_t bi, uint64_t ago, int bucket, uint32_t n, uint32_t err)
{
	struct diag_sec	*dc = sec(s, bi, ago);

	dc->dc_sec = now_sec() - ago;
	dc->dc_lat[bucket] += n;
	dc->dc_errors += err;
}

/* the rings filled and read within one second (a few tries: one that
 * straddles a second's turn reads them a second on) */
static void
window_fill(struct diag_window *sum, struct diag_window per[5],
    struct diag_window *other)
{
	uint64_t	 s0;
	int		 i, tries = 0;

	do {
		for (i = 0; i <= w.w_nstats; i++)
			memset(diag_stats_slot(w.w_stats, &conf, i)->ds_backends,
			    0, conf.cf_nbackends * sizeof(struct diag_backend));
		s0 = now_sec();
		/* 2 s ago: 10 answers under 5 ms in worker 0, 2 failures
		 * in the builder's slot; 1 s ago: 4 answers of 25-50 ms in
		 * worker 1 */
		put(0, 0, 2, 0, 10, 0);
		put(2, 0, 2, 0, 0, 2);
		put(1, 0, 1, 3, 4, 0);
		/* the other backend's are its own */
		put(0, 1, 1, 5, 7, 0);
		/* 3 s ago: an entry of an older lap (DIAG_SECS earlier),
		 * and one being cleared: neither is counted */
		put(0, 0, 3, 0, 100, 0);
		sec(0, 0, 3)->dc_sec -= DIAG_SECS;
		put(1, 0, 4, 0, 100, 0);
		sec(1, 0, 4)->dc_sec = 0;
		diag_window(&w, 0, 5, sum, per);
		diag_window(&w, 1, 5, other, NULL);
	} while (now_sec() != s0 && ++tries < 5);
}

static void
test_window(void **state)
{
	struct diag_window	 sum, per[5], other;

	(void)state;
	window_fill(&sum, per, &other);
	assert_int_equal(diag_window_answers(&sum), 14);
	assert_int_equal(sum.dw_errors, 2);
	assert_int_equal(diag_window_answers(&per[0]), 0);	/* 5 s ago */
	assert_int_equal(diag_window_answers(&per[1]), 0);
	assert_int_equal(diag_window_answers(&per[2]), 0);
	assert_int_equal(diag_window_answers(&per[3]), 10);	/* 2 s ago */
	assert_int_equal(per[3].dw_errors, 2);
	assert_int_equal(diag_window_answers(&per[4]), 4);	/* 1 s ago */
	assert_int_equal(diag_window_answers(&other), 7);
	/* no more than the ring holds, less the current second */
	diag_window(&w, 0, 10 * DIAG_SECS, &sum, NULL);
	assert_true(diag_window_answers(&sum) <= 14);
}

static void
test_quantile(void **state)
{
	struct diag_window	 dw;

	(void)state;
	memset(&dw, 0, sizeof(dw));
	assert_true(diag_window_quantile(&dw, 0.5) < 0);
	/* 10 under 5 ms, 10 in 25-50 ms */
	dw.dw_lat[0] = 10;
	dw.dw_lat[3] = 10;
	/* rank 10: the first bucket's top */
	assert_true(diag_window_quantile(&dw, 0.5) == 5.0);
	/* rank 19.8: 9.8 of 10 into 25..50 ms */
	assert_true(diag_window_quantile(&dw, 0.99) > 49.4 &&
	    diag_window_quantile(&dw, 0.99) < 49.6);
	/* past the last bound: its lower bound, 30 s */
	memset(&dw, 0, sizeof(dw));
	dw.dw_lat[DIAG_LAT_BUCKETS - 1] = 3;
	assert_true(diag_window_quantile(&dw, 0.99) == 30000.0);
}

/* counters.c writes the current second: seen once it has passed */
static void
test_counted(void **state)
{
	struct diag_sec	*dc;
	uint64_t	 start;

	(void)state;
	start = diag_backend_start("tools/call");
	diag_backend_done(&w, &bes[1], start, 0, 200, NULL);
	diag_backend_done(&w, &bes[1], start, -1, 0, "refused");
	dc = sec(1, 1, 0);
	/* a second may have turned between the two: then both moved on */
	if (dc->dc_sec != now_sec())
		skip();
	assert_int_equal(dc->dc_lat[0] + dc->dc_lat[1], 1);
	assert_int_equal(dc->dc_errors, 1);
}

static void
test_denials(void **state)
{
	const struct diag_slot	*ds;
	int			 i;

	(void)state;
	for (i = 0; i < DIAG_DENIALS + 3; i++)
		diag_note_denial(&w, 403, "alice", "tools/call", i % 2 ?
		    "odd" : "even", NULL);
	ds = diag_stats_slot(w.w_stats, &conf, 1);
	assert_int_equal(ds->ds_ndenials, DIAG_DENIALS + 3);
	/* the ring's oldest overwritten: slot 0 holds the 9th (even) */
	assert_int_equal(ds->ds_denials[0].dd_seq % 2, 0);
	assert_string_equal(ds->ds_denials[0].dd_name, "even");
	assert_string_equal(ds->ds_denials[1].dd_name, "odd");
	assert_string_equal(ds->ds_denials[0].dd_backend, "");
	assert_int_equal(ds->ds_denials[0].dd_status, 403);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_counted),
		cmocka_unit_test(test_denials),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
