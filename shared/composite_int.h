/*
 * The insides of a composite run (composite_sched.h), shared by the scheduler
 * (composite_sched.c) and its snapshot and restore (composite_snap.c)
 * alone: nothing else looks into a struct wf_run.
 */
#ifndef VMCPD_COMPOSITE_INT_H
#define VMCPD_COMPOSITE_INT_H

#include "shared/composite.h"
#include "shared/composite_sched.h"

#define WF_ITER_NONE	0	/* call ids: step << 32 | (iteration + 1) */
/* a timeout's timer token: the flag, the attempt it is for, the call */
#define WF_TIMEOUT	(1ULL << 63)
#define WF_ATTEMPT_SHIFT 48
#define WF_CALL_MASK	((1ULL << WF_ATTEMPT_SHIFT) - 1)

struct wf_iter {
	enum wf_state	 wi_state;
	unsigned int	 wi_attempt;
	json_t		*wi_args;
	json_t		*wi_output;
	char		*wi_error;
	json_t		*wi_inner;	/* suspended: the backend's state */
};

struct wf_stepst {
	enum wf_state	 ss_state;
	unsigned int	 ss_attempt;
	json_t		*ss_args;	/* kept for retries */
	json_t		*ss_coll;	/* forEach: the items */
	struct wf_iter	*ss_iters;
	size_t		 ss_niters;
	size_t		 ss_next;	/* next iteration to start */
	size_t		 ss_running;
	size_t		 ss_ended;
	int		 ss_failed;	/* forEach: an iteration aborts */
	char		*ss_ferror;
	json_t		*ss_inner;	/* suspended: the backend's state */
};

struct wf_run {
	const struct composite	*wr_co;
	const struct wf_driver	*wr_drv;
	void			*wr_arg;
	json_t			*wr_ctx;
	json_t			*wr_steps;	/* wr_ctx.steps */
	struct wf_stepst	*wr_st;
	unsigned int		 wr_maxpar;
	unsigned int		 wr_running;	/* tool calls in flight */
	unsigned int		 wr_suspended;	/* of those, input_required */
	size_t			 wr_left;	/* steps not ended */
	int			 wr_in_pump;
	int			 wr_again;
	int			 wr_finished;
	int			 wr_reported;
	char			*wr_error;
	uint64_t		 wr_deadline_ms; /* the engine's, or 0 */
};

static inline uint64_t
wf_call_id(size_t step, size_t iter)
{
	return (uint64_t)step << 32 | (uint64_t)iter;
}

/* composite_sched.c */
void		 wf_arm_timeout(struct wf_run *, uint64_t call,
		    unsigned int attempt, uint64_t ms);
uint64_t	 wf_backoff(const struct composite_step *, unsigned int);
const char	*wf_state_name(enum wf_state);

/* composite_snap.c: a call that ends is no longer suspended */
void		 wf_unsuspend(struct wf_run *, json_t **inner);

#endif /* VMCPD_COMPOSITE_INT_H */
