/*
 * worker/upstream/flow.c: the list-change gate (one run under way and one
 * pending, runs an interval apart, the interval growing in a storm and
 * coming back after it; a change is never lost) and the answer budget
 * (the worker's and each backend's limit, refusals take nothing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/upstream/flow.h"

#define MIN	1000
#define MAX	30000
#define STORM	8

/* one step of a table: a change, a run's start or its end, at a time */
struct step {
	char		 s_what;	/* 'c'hange, 's'tart, 'd'one */
	uint64_t	 s_at;
	int		 s_act;		/* the act (c, d), or start's return */
	uint64_t	 s_due;		/* for LCGATE_LATER */
	unsigned int	 s_interval;	/* after a start; 0: not checked */
};

static void
run_table(const struct step *t, size_t n)
{
	struct lcgate	g;
	uint64_t	due;
	size_t		i;
	int		act;

	lcgate_init(&g, MIN, MAX, STORM);
	for (i = 0; i < n; i++) {
		due = 0;
		switch (t[i].s_what) {
		case 'c':
			act = lcgate_change(&g, t[i].s_at, &due);
			break;
		case 'd':
			act = lcgate_done(&g, t[i].s_at, &due);
			break;
		default:
			act = lcgate_start(&g, t[i].s_at);
			if (t[i].s_interval != 0)
				assert_int_equal(g.lg_interval,
				    t[i].s_interval);
			break;
		}
		if (act != t[i].s_act)
			fail_msg("step %zu (%c at %llu): %d, not %d", i,
			    t[i].s_what, (unsigned long long)t[i].s_at, act,
			    t[i].s_act);
		if (act == LCGATE_LATER && t[i].s_what != 's')
			assert_int_equal(due, t[i].s_due);
	}
}

static void
test_gate_table(void **state)
{
	static const struct step t[] = {
		/* the first change runs at once */
		{ 'c', 0, LCGATE_NOW, 0, 0 },
		{ 's', 0, 0, 0, MIN },
		/* one while it runs: pending; the next ones fold */
		{ 'c', 5, LCGATE_QUEUED, 0, 0 },
		{ 'c', 6, LCGATE_FOLDED, 0, 0 },
		/* done: the pending one waits for the interval */
		{ 'd', 10, LCGATE_LATER, MIN, 0 },
		{ 'c', 11, LCGATE_FOLDED, 0, 0 },
		{ 's', MIN, 0, 0, MIN },	/* 2 folds: calm */
		{ 'd', MIN + 10, LCGATE_IDLE, 0, 0 },
		/* a change past the interval runs at once */
		{ 'c', 2 * MIN + 1, LCGATE_NOW, 0, 0 },
		{ 's', 2 * MIN + 1, 0, 0, MIN },
		{ 'd', 2 * MIN + 5, LCGATE_IDLE, 0, 0 },
		/* one inside it, with nothing under way, waits for it */
		{ 'c', 2 * MIN + 100, LCGATE_LATER, 3 * MIN + 1, 0 },
		{ 'c', 2 * MIN + 101, LCGATE_FOLDED, 0, 0 },
		{ 's', 3 * MIN + 1, 0, 0, MIN },
		/* pending at the end of a run, its interval over: now */
		{ 'c', 3 * MIN + 2, LCGATE_QUEUED, 0, 0 },
		{ 'd', 4 * MIN + 2, LCGATE_NOW, 0, 0 },
		{ 's', 4 * MIN + 2, 0, 0, MIN },
		{ 'd', 4 * MIN + 3, LCGATE_IDLE, 0, 0 },
	};

	(void)state;
	run_table(t, sizeof(t) / sizeof(t[0]));
}

/* a wall clock set back does not hold a change for as long */
static void
test_gate_clock_back(void **state)
{
	struct lcgate	g;
	uint64_t	due = 0;

	(void)state;
	lcgate_init(&g, MIN, MAX, STORM);
	assert_int_equal(lcgate_change(&g, 100000, &due), LCGATE_NOW);
	(void)lcgate_start(&g, 100000);
	assert_int_equal(lcgate_done(&g, 100001, &due), LCGATE_IDLE);
	assert_int_equal(lcgate_change(&g, 5000, &due), LCGATE_NOW);
}

static void
test_gate_storm_table(void **state)
{
	struct lcgate	g;
	uint64_t	due, t = 0;
	int		i, r;

	(void)state;
	lcgate_init(&g, MIN, MAX, STORM);
	assert_int_equal(lcgate_change(&g, t, &due), LCGATE_NOW);
	assert_int_equal(lcgate_start(&g, t), 0);
	assert_int_equal(lcgate_done(&g, t + 1, &due), LCGATE_IDLE);
	/* STORM folds in an interval: the next one is twice as long,
	 * once, however many more come; the storm's start is said once */
	for (i = 0; i <= STORM; i++)
		(void)lcgate_change(&g, t + 2 + i, &due);
	assert_int_equal(lcgate_start(&g, MIN), 1);
	assert_int_equal(g.lg_interval, 2 * MIN);
	assert_int_equal(lcgate_done(&g, MIN + 1, &due), LCGATE_IDLE);
	for (i = 0; i <= 10 * STORM; i++)
		assert_int_not_equal(lcgate_change(&g, MIN + 2 + i, &due),
		    LCGATE_NOW);
	assert_int_equal(due, 3 * MIN);
	assert_int_equal(lcgate_start(&g, 3 * MIN), 0);	/* no news */
	assert_int_equal(g.lg_interval, 4 * MIN);
	/* capped */
	for (t = 3 * MIN, i = 0; i < 10; i++) {
		(void)lcgate_done(&g, t + 1, &due);
		for (r = 0; r < STORM + 1; r++)
			(void)lcgate_change(&g, t + 2 + r, &due);
		t += g.lg_interval;
		(void)lcgate_start(&g, t);
		assert_true(g.lg_interval <= MAX);
	}
	assert_int_equal(g.lg_interval, MAX);
	/* fewer folds: halved; none for long: calm again, said once */
	(void)lcgate_done(&g, t + 1, &due);
	(void)lcgate_change(&g, t + 2, &due);
	t += MAX;
	assert_int_equal(lcgate_start(&g, t), 0);
	assert_int_equal(g.lg_interval, MAX / 2);
	(void)lcgate_done(&g, t + 1, &due);
	t += 10 * MAX;
	assert_int_equal(lcgate_change(&g, t, &due), LCGATE_NOW);
	assert_int_equal(lcgate_start(&g, t), -1);
	assert_int_equal(g.lg_interval, MIN);
}

/* a simulated backend and its runs, one tick a millisecond */
struct sim {
	struct lcgate	 s_g;
	uint64_t	 s_timer;	/* 0: none armed */
	uint64_t	 s_ends;	/* 0: nothing running */
	uint64_t	 s_run;		/* how long a run lasts */
	uint64_t	 s_last_start;
	int		 s_runs;
	int		 s_storms;
};

static void
sim_act(struct sim *s, enum lcgate_act act, uint64_t now, uint64_t due)
{
	if (act == LCGATE_LATER) {
		s->s_timer = due;
		return;
	}
	if (act != LCGATE_NOW)
		return;
	assert_int_equal(s->s_ends, 0);
	if (lcgate_start(&s->s_g, now) == 1)
		s->s_storms++;
	s->s_ends = now + s->s_run;
	s->s_last_start = now;
	s->s_runs++;
}

/*
 * A backend sends per_ms changes a millisecond (or one every `every`
 * ms) for len ms, each run lasting run ms; after quiet ms, one last
 * change.  The runs; *storms, the storms said.
 */
static int
simulate(int per_ms, int every, uint64_t len, uint64_t run, uint64_t quiet,
    int *storms)
{
	struct sim	s;
	enum lcgate_act	act;
	uint64_t	now, due = 0, last_change = 0;
	int		i, n;

	memset(&s, 0, sizeof(s));
	lcgate_init(&s.s_g, MIN, MAX, STORM);
	s.s_run = run;
	for (now = 1; now < len + quiet + 10 * MAX; now++) {
		if (s.s_ends != 0 && now >= s.s_ends) {
			s.s_ends = 0;
			act = lcgate_done(&s.s_g, now, &due);
			sim_act(&s, act, now, due);
		}
		if (s.s_timer != 0 && now >= s.s_timer) {
			s.s_timer = 0;
			sim_act(&s, LCGATE_NOW, now, 0);
		}
		if (now < len)
			n = per_ms > 0 ? per_ms : now % every == 0;
		else
			n = now == len + quiet;
		for (i = 0; i < n; i++) {
			last_change = now;
			act = lcgate_change(&s.s_g, now, &due);
			sim_act(&s, act, now, due);
		}
	}
	/* the last change was listed by a run that started after it */
	assert_true(s.s_last_start >= last_change);
	assert_false(s.s_g.lg_pending);
	*storms = s.s_storms;
	return s.s_runs;
}

static void
test_gate_simulated(void **state)
{
	int runs, storms;

	(void)state;
	/* the attack: ~1,000 a second for 15 s, runs of 1 ms: was 900
	 * relists a second; now a handful, one storm said once */
	runs = simulate(1, 0, 15000, 1, 5000, &storms);
	assert_true(runs <= 8);
	assert_int_equal(storms, 1);
	/* ten a millisecond, slow runs: the same */
	runs = simulate(10, 0, 15000, 300, 5000, &storms);
	assert_true(runs <= 8);
	/* a calm backend, a change every 2 s: each listed at once */
	runs = simulate(0, 2000, 20000, 5, 5000, &storms);
	assert_int_equal(runs, 9 + 1);
	assert_int_equal(storms, 0);
	/* a change every 300 ms: at most one run a second, no storm */
	runs = simulate(0, 300, 15000, 5, 5000, &storms);
	assert_true(runs >= 14 && runs <= 17);
	assert_int_equal(storms, 0);
}

static void
test_budget(void **state)
{
	struct abudget	b;
	size_t		h1 = 0, h2 = 0, h3 = 0;

	(void)state;
	assert_int_equal(abudget_init(&b, 2, 100, 60), 0);
	assert_int_equal(abudget_charge(&b, 0, &h1, 50), ABUDGET_OK);
	assert_int_equal(h1, 50);
	/* backend 0's own limit: 60; a refusal takes nothing */
	assert_int_equal(abudget_charge(&b, 0, &h2, 11), ABUDGET_BACKEND);
	assert_int_equal(h2, 0);
	assert_int_equal(b.ab_used, 50);
	assert_int_equal(abudget_charge(&b, 0, &h2, 10), ABUDGET_OK);
	/* the worker's: 100 in all */
	assert_int_equal(abudget_charge(&b, 1, &h3, 41), ABUDGET_WORKER);
	assert_int_equal(h3, 0);
	assert_int_equal(abudget_charge(&b, 1, &h3, 40), ABUDGET_OK);
	assert_int_equal(b.ab_used, 100);
	/* growth of a charge counts its growth only */
	assert_int_equal(abudget_charge(&b, 1, &h3, 41), ABUDGET_WORKER);
	assert_int_equal(h3, 40);
	/* given back: room again */
	assert_int_equal(abudget_charge(&b, 0, &h1, 0), ABUDGET_OK);
	assert_int_equal(b.ab_used, 50);
	assert_int_equal(b.ab_used_be[0], 10);
	assert_int_equal(abudget_charge(&b, 1, &h3, 60), ABUDGET_OK);
	assert_int_equal(abudget_charge(&b, 1, &h3, 61), ABUDGET_BACKEND);
	/* an index past the backends: the worker's limit alone */
	h1 = 0;
	assert_int_equal(abudget_charge(&b, 7, &h1, 30), ABUDGET_OK);
	assert_int_equal(abudget_charge(&b, 7, &h1, 31), ABUDGET_WORKER);
	assert_int_equal(abudget_charge(&b, 7, &h1, 0), ABUDGET_OK);
	assert_int_equal(abudget_charge(&b, 0, &h2, 0), ABUDGET_OK);
	assert_int_equal(abudget_charge(&b, 1, &h3, 0), ABUDGET_OK);
	assert_int_equal(b.ab_used, 0);
	assert_int_equal(b.ab_used_be[0] + b.ab_used_be[1], 0);
	abudget_free(&b);
	/* no limits (0): anything */
	assert_int_equal(abudget_init(&b, 1, 0, 0), 0);
	assert_int_equal(abudget_charge(&b, 0, &h1, SIZE_MAX / 2),
	    ABUDGET_OK);
	abudget_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_table),
		cmocka_unit_test(test_gate_storm_table),
		cmocka_unit_test(test_gate_clock_back),
		cmocka_unit_test(test_gate_simulated),
		cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
