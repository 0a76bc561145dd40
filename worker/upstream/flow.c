/*
 * Flow control, pure (flow.h): the list-change gate and the answer
 * budget.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/upstream/flow.h"

void
lcgate_init(struct lcgate *g, unsigned int min_ms, unsigned int max_ms,
    unsigned int storm_folds)
{
	memset(g, 0, sizeof(*g));
	g->lg_min = min_ms;
	g->lg_max = max_ms > min_ms ? max_ms : min_ms;
	g->lg_interval = min_ms;
	g->lg_storm = storm_folds;
}

/* when the next run may start, or 0: now (as for a clock set back) */
static uint64_t
lcgate_due(const struct lcgate *g, uint64_t now)
{
	uint64_t due = g->lg_last + g->lg_interval;

	return g->lg_started && now < due && now >= g->lg_last ? due : 0;
}

/*
 * A change: one run under way and one pending at most, whatever comes;
 * a change that finds one pending is folded into it (it lists what the
 * change made too, since it starts after it).
 */
enum lcgate_act
lcgate_change(struct lcgate *g, uint64_t now, uint64_t *due)
{
	if (g->lg_pending) {
		if (g->lg_folds < UINT32_MAX)
			g->lg_folds++;
		return LCGATE_FOLDED;
	}
	g->lg_pending = 1;
	if (g->lg_running)
		return LCGATE_QUEUED;
	if ((*due = lcgate_due(g, now)) == 0)
		return LCGATE_NOW;
	return LCGATE_LATER;
}

/*
 * The interval follows the changes: doubled (up to lg_max) after an
 * interval that folded lg_storm changes or more, halved after one
 * that folded fewer, back to lg_min after one with no change at all.
 */
int
lcgate_start(struct lcgate *g, uint64_t now)
{
	int		 was = g->lg_storming;
	uint64_t	 iv = g->lg_interval;

	if (g->lg_started && g->lg_storm > 0 && g->lg_folds >= g->lg_storm)
		iv = iv * 2 < g->lg_max ? iv * 2 : g->lg_max;
	else if (!g->lg_started || now >= g->lg_last + 2 * iv)
		iv = g->lg_min;
	else
		iv = iv / 2 > g->lg_min ? iv / 2 : g->lg_min;
	g->lg_interval = (unsigned int)iv;
	g->lg_storming = g->lg_interval > g->lg_min;
	g->lg_last = now;
	g->lg_started = 1;
	g->lg_running = 1;
	g->lg_pending = 0;
	g->lg_folds = 0;
	return g->lg_storming == was ? 0 : g->lg_storming ? 1 : -1;
}

enum lcgate_act
lcgate_done(struct lcgate *g, uint64_t now, uint64_t *due)
{
	g->lg_running = 0;
	if (!g->lg_pending)
		return LCGATE_IDLE;
	if ((*due = lcgate_due(g, now)) == 0)
		return LCGATE_NOW;
	return LCGATE_LATER;
}

int
abudget_init(struct abudget *b, size_t nbackends, size_t max,
    size_t max_backend)
{
	memset(b, 0, sizeof(*b));
	b->ab_max = max;
	b->ab_max_be = max_backend;
	if (nbackends > 0 && (b->ab_used_be = calloc(nbackends,
	    sizeof(*b->ab_used_be))) == NULL)
		return -1;
	b->ab_nbe = nbackends;
	return 0;
}

void
abudget_free(struct abudget *b)
{
	free(b->ab_used_be);
	memset(b, 0, sizeof(*b));
}

/* a limit of 0 is none */
static int
abudget_over(size_t used, size_t add, size_t max)
{
	return max > 0 && (used > max || add > max - used);
}

enum abudget_limit
abudget_charge(struct abudget *b, size_t be, size_t *held, size_t want)
{
	size_t	*ube = be < b->ab_nbe ? &b->ab_used_be[be] : NULL;
	size_t	 d;

	if (want <= *held) {
		d = *held - want;
		b->ab_used -= d < b->ab_used ? d : b->ab_used;
		if (ube != NULL)
			*ube -= d < *ube ? d : *ube;
		*held = want;
		return ABUDGET_OK;
	}
	d = want - *held;
	if (abudget_over(b->ab_used, d, b->ab_max))
		return ABUDGET_WORKER;
	if (ube != NULL && abudget_over(*ube, d, b->ab_max_be))
		return ABUDGET_BACKEND;
	b->ab_used += d;
	if (ube != NULL)
		*ube += d;
	*held = want;
	return ABUDGET_OK;
}
