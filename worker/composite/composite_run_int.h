/*
 * A composite run's insides (worker/composite/composite_run.c, _resume.c), shared
 * by those two files alone; composite_run.h is the public header and
 * shared/composite_int.h the pure scheduler's.
 */
#ifndef VMCPD_COMPOSITE_RUN_INT_H
#define VMCPD_COMPOSITE_RUN_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include <jansson.h>

#include "shared/composite.h"
#include "shared/composite_sched.h"
#include "shared/trace_ref.h"
#include "worker/auth/auth.h"
#include "worker/auth/ratelimit.h"
#include "worker/composite/composite_run.h"
#include "worker/process/request.h"

struct event;
struct mrtr_wait;
struct ratelimit_wait;
struct upstream;
struct config_backend;

/* a tool call of the run: a request of the pipeline (composite_step.c) */
struct crun_call {
	struct request			 cc_r;		/* r_be, r_up, r_view */
	TAILQ_ENTRY(crun_call)		 cc_entry;
	struct crun			*cc_run;
	uint64_t			 cc_id;
	char				*cc_tool;	/* as the step names it */
	json_t				*cc_args;	/* the step's arguments */
	json_t				*cc_extra;	/* a resumed call's */
	json_t				*cc_params;	/* name, arguments */
	int				 cc_rounds;	/* of input asked */
	int				 cc_retry;	/* sent before */
	struct ratelimit_wait		*cc_rl;		/* waits on Redis */
	int				 cc_decided;	/* ... answered: */
	enum ratelimit_verdict		 cc_verdict;
	unsigned int			 cc_retry_s;
	struct session			*cc_sess;	/* a Legacy caller's */
};

/*
 * An elicitation step put to a 2025-11-25 client (mrtr.c), or a
 * backend step's input requests relayed to it (ce_be set: the call is
 * retried with ce_params, its requestState, and the answers).
 */
struct crun_elicit {
	TAILQ_ENTRY(crun_elicit)	 ce_entry;
	struct crun			*ce_run;
	uint64_t			 ce_id;
	struct mrtr_wait		*ce_wait;
	const struct config_backend	*ce_be;
	json_t				*ce_params;
	int				 ce_rounds;
};

struct crun_timer {
	TAILQ_ENTRY(crun_timer)		 ct_entry;
	struct crun			*ct_run;
	struct event			*ct_ev;
	uint64_t			 ct_token;
};

struct crun {
	struct worker			*cr_w;
	const struct composite		*cr_co;
	struct wf_run			*cr_run;
	struct composite_client		 cr_cc;
	struct principal		*cr_p;
	enum proto_era			 cr_era;
	json_t				*cr_view;
	json_t				*cr_token;	/* progressToken */
	json_t				*cr_caps;	/* a 2026-07-28 call's */
	json_int_t			 cr_progress;
	json_t				*cr_raw;	/* backend -> its lists */
	struct event			*cr_deadline;
	TAILQ_HEAD(, crun_call)		 cr_calls;
	TAILQ_HEAD(, crun_elicit)	 cr_elicits;
	TAILQ_HEAD(, crun_timer)	 cr_timers;
	uint64_t			 cr_start_ms;
	struct crun			**cr_slot;	/* the edge's, or NULL */
	json_t				*cr_params;	/* a claim's wait */
	struct httpd_req		*cr_req;	/* the same */
	int				 cr_elicit;	/* ended at one */
	int				 cr_depth;	/* in the run's calls */
	int				 cr_ended;	/* cd_done came */
	char				 cr_id[33];
	char				 cr_owner[AUTH_SCOPE_LEN + 1];
	/* its spans (composite_trace.c): the workflow's, its steps', and
	 * the step whose call is being started */
	struct trace_span		*cr_span;
	struct trace_ref		 cr_ref;	/* untraced: the
							 * caller's context */
	struct trace_span		**cr_steps;
	const struct composite_step	*cr_calling;
};

/* composite_trace.c */
struct request;
void	crun_trace_begin(struct crun *, struct httpd_req *);
void	crun_trace_step(struct crun *, size_t, enum wf_state);
void	crun_trace_call(struct crun *, struct request *);
/* error NULL: completed */
void	crun_trace_end(struct crun *, const char *error);

/* composite_run.c */
extern const struct wf_driver crun_driver;
struct crun *crun_new(struct worker *, json_t *view, struct httpd_req *,
	    enum proto_era, const struct composite *, json_t *params,
	    const struct composite_client *);
int	 crun_arm_deadline(struct crun *, uint64_t ms);
void	 crun_free(struct crun *, const char *abort_why);
void	 crun_elicit_free(struct crun *, struct crun_elicit *);
void	 crun_enter(struct crun *);
void	 crun_leave(struct crun *);
void	 crun_audit(struct crun *, const char *type, const char *outcome,
	    const struct composite_step *, const char *tool,
	    const char *error);
/* composite_step.c: the run's tool calls */
void	 crun_call_free(struct crun *, struct crun_call *,
	    const char *abort_why);
void	 crun_call_send(struct crun *, uint64_t call,
	    const struct config_backend *, json_t *params, int rounds);
void	 crun_call_start(struct crun *, uint64_t call, const char *tool,
	    json_t *args, const json_t *extra);

/* composite_resume.c: waiting for the client's input */
void	 cd_elicit(void *arg, uint64_t call, const struct composite_step *,
	    const char *message);
int	 crun_relay(struct crun *, const struct crun_call *, json_t *result,
	    char *why, size_t whylen);
void	 crun_suspend(struct crun *);
void	 crun_resume(struct worker *, json_t *view, struct httpd_req *,
	    const struct composite *, json_t *params,
	    const struct composite_client *, struct crun **slot);

#endif /* VMCPD_COMPOSITE_RUN_INT_H */
