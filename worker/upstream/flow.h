/*
 * Flow control, pure (no I/O, no clock of its own, no store), so that
 * its decisions are tested as tables (tests/unit/test_flow.c):
 *
 *  - the list-change gate: a backend's list_changed notifications
 *    folded into at most one relist under way and one pending, the
 *    relists of one backend at least an interval apart, the interval
 *    growing while the backend storms (notify.c, in worker 0 and in
 *    the builder);
 *  - the answer budget: the bytes of backend answers a worker buffers
 *    at once, in all and per backend (backend.c).
 */
#ifndef VMCPD_FLOW_H
#define VMCPD_FLOW_H

#include <stddef.h>
#include <stdint.h>

/* what to do with a change, or at the end of the run under way */
enum lcgate_act {
	LCGATE_IDLE,	/* nothing pending */
	LCGATE_NOW,	/* start a run now (then lcgate_start()) */
	LCGATE_LATER,	/* start one at *due (ms): arm a timer */
	LCGATE_QUEUED,	/* pending behind the run under way */
	LCGATE_FOLDED	/* folded into the one already pending */
};

struct lcgate {
	uint64_t	 lg_last;	/* ms: the last run's start */
	unsigned int	 lg_min;	/* ms: the interval when calm */
	unsigned int	 lg_max;	/* ms: the interval at most */
	unsigned int	 lg_interval;	/* ms: between starts, now */
	unsigned int	 lg_storm;	/* folds in one interval: a storm
					 * (0: the interval never grows) */
	unsigned int	 lg_folds;	/* changes since the last start, but
					 * the one that made it pending */
	int		 lg_started;	/* lg_last is set */
	int		 lg_running;
	int		 lg_pending;
	int		 lg_storming;
};

void	lcgate_init(struct lcgate *, unsigned int min_ms, unsigned int max_ms,
	    unsigned int storm_folds);
enum lcgate_act lcgate_change(struct lcgate *, uint64_t now, uint64_t *due);
/* a run starts (the pending one, if any): 1 when a storm begins (the
 * interval grew past its minimum), -1 when one ends, else 0 */
int	lcgate_start(struct lcgate *, uint64_t now);
enum lcgate_act lcgate_done(struct lcgate *, uint64_t now, uint64_t *due);

/* which limit refused a charge */
enum abudget_limit {
	ABUDGET_OK = 0,
	ABUDGET_WORKER,		/* the worker's, all backends together */
	ABUDGET_BACKEND		/* one backend's */
};

struct abudget {
	size_t	 ab_max;	/* the worker's: bytes */
	size_t	 ab_max_be;	/* each backend's: bytes */
	size_t	 ab_used;
	size_t	*ab_used_be;	/* [ab_nbe] */
	size_t	 ab_nbe;
};

int	abudget_init(struct abudget *, size_t nbackends, size_t max,
	    size_t max_backend);
void	abudget_free(struct abudget *);
/*
 * A call of backend be holds *held bytes and wants to hold want: a
 * smaller want is always given back; a larger one is refused (nothing
 * changes) when it passes a limit, else taken.  *held is updated.
 */
enum abudget_limit abudget_charge(struct abudget *, size_t be, size_t *held,
	    size_t want);

#endif /* VMCPD_FLOW_H */
