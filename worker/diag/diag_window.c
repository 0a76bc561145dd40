/*
 * A backend's last seconds, read from every slot's ring (struct
 * diag_sec, shared/stats.h): the console's chart and /status's last
 * minute (p50, p99, error rate).  A second being written is read as it
 * stands; an entry cleared for a new second meanwhile is skipped.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shared/config.h"
#include "shared/stats.h"
#include "worker/diag/diag.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

/* one ring entry into w if it is of second sec */
static void
diag_window_add(const struct diag_sec *dc, uint64_t sec,
    struct diag_window *w)
{
	uint32_t	 lat[DIAG_LAT_BUCKETS], err;
	int		 k;

	if (__atomic_load_n(&dc->dc_sec, __ATOMIC_ACQUIRE) != sec)
		return;
	for (k = 0; k < DIAG_LAT_BUCKETS; k++)
		lat[k] = __atomic_load_n(&dc->dc_lat[k], __ATOMIC_RELAXED);
	err = __atomic_load_n(&dc->dc_errors, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&dc->dc_sec, __ATOMIC_RELAXED) != sec)
		return;
	for (k = 0; k < DIAG_LAT_BUCKETS; k++)
		w->dw_lat[k] += lat[k];
	w->dw_errors += err;
}

void
diag_window(const struct worker *w, size_t bi, unsigned int n,
    struct diag_window *sum, struct diag_window *per)
{
	const struct diag_backend	*db;
	struct diag_window		 one;
	uint64_t			 now, sec;
	unsigned int			 s;
	int				 i, k;

	memset(sum, 0, sizeof(*sum));
	if (n > DIAG_SECS - 1)
		n = DIAG_SECS - 1;	/* the current second's entry aside */
	if (per != NULL)
		memset(per, 0, n * sizeof(*per));
	if (w->w_stats == NULL || bi >= w->w_conf->cf_nbackends)
		return;
	/* as counters.c numbers them: never 0 */
	now = diag_now_us() / 1000000 + 1;
	for (s = 0; s < n; s++) {
		if ((sec = now - n + s) == 0)
			continue;
		memset(&one, 0, sizeof(one));
		/* the workers' slots and the builder's */
		for (i = 0; i <= w->w_nstats; i++) {
			db = &diag_slot_at(w, i)->ds_backends[bi];
			diag_window_add(&db->db_secs[sec % DIAG_SECS], sec,
			    &one);
		}
		for (k = 0; k < DIAG_LAT_BUCKETS; k++)
			sum->dw_lat[k] += one.dw_lat[k];
		sum->dw_errors += one.dw_errors;
		if (per != NULL)
			per[s] = one;
	}
}

uint64_t
diag_window_answers(const struct diag_window *dw)
{
	uint64_t	n = 0;
	int		k;

	for (k = 0; k < DIAG_LAT_BUCKETS; k++)
		n += dw->dw_lat[k];
	return n;
}

/*
 * Within the bucket the quantile falls in, linear between its bounds
 * (Prometheus's histogram_quantile() does the same); in the last,
 * unbounded one, its lower bound.
 */
double
diag_window_quantile(const struct diag_window *dw, double q)
{
	uint64_t	 n = diag_window_answers(dw), cum = 0;
	double		 rank, lo, hi;
	int		 k;

	if (n == 0)
		return -1;
	rank = q * (double)n;
	for (k = 0; k < DIAG_LAT_BUCKETS; k++) {
		if (dw->dw_lat[k] == 0 || (double)(cum + dw->dw_lat[k]) < rank) {
			cum += dw->dw_lat[k];
			continue;
		}
		lo = k == 0 ? 0 : (double)diag_lat_us[k - 1];
		if (k == DIAG_LAT_BUCKETS - 1)
			return lo / 1000.0;
		hi = (double)diag_lat_us[k];
		return (lo + (hi - lo) * (rank - (double)cum) /
		    (double)dw->dw_lat[k]) / 1000.0;
	}
	return (double)diag_lat_us[DIAG_LAT_BUCKETS - 2] / 1000.0;
}
