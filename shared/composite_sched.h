/*
 * A composite's run (composite_sched.c, and composite_snap.c for its
 * suspension and snapshots): a state machine with no I/O.
 */
#ifndef VMCPD_COMPOSITE_SCHED_H
#define VMCPD_COMPOSITE_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/composite.h"

/*
 * composite_sched.c: one run.  The driver starts calls and timers and
 * hears about the end; the run hears about finished calls and timers.
 * Calls are named by a call id the run picks; a driver that cannot
 * start a call reports it finished with an error.  The run keeps each
 * step's timeout itself (a timer per call) and cancels what is in
 * flight when it fails.
 */
struct wf_run;

enum wf_state {
	WF_WAITING,
	WF_RUNNING,
	WF_RETRY_WAIT,
	WF_COMPLETED,
	WF_FAILED,
	WF_SKIPPED
};

struct wf_driver {
	/* start a tool call of step (the inner step of a forEach) */
	void	(*wd_call)(void *, uint64_t call, const struct composite_step *,
		    json_t *args);
	/* ask the user (an elicitation step); message is expanded */
	void	(*wd_elicit)(void *, uint64_t call,
		    const struct composite_step *, const char *message);
	/* call wf_run_timer(run, token) after ms (retry delays and each
	 * call's timeout; wf_run_free() is the driver's cue to drop them) */
	void	(*wd_timer)(void *, uint64_t token, uint64_t ms);
	/* forget a call (timed out, or the run failed): no report is
	 * wanted after this; may be NULL */
	void	(*wd_cancel)(void *, uint64_t call);
	/* a step started or ended (progress), or NULL */
	void	(*wd_step)(void *, size_t step, enum wf_state);
	/* the end: the context (params, steps, workflow) or an error */
	void	(*wd_done)(void *, json_t *ctx, const char *error);
};

struct wf_run	*wf_run_new(const struct composite *, json_t *params,
		    const char *run_id, unsigned int max_parallel,
		    const struct wf_driver *, void *arg);
void		 wf_run_free(struct wf_run *);
void		 wf_run_start(struct wf_run *);
/* result: a CallToolResult (isError counts as failure) or NULL and error */
void		 wf_run_call_done(struct wf_run *, uint64_t call,
		    json_t *result, const char *error);
/* action: "accept" (content), "decline" or "cancel" */
void		 wf_run_elicit_done(struct wf_run *, uint64_t call,
		    const char *action, json_t *content);
void		 wf_run_timer(struct wf_run *, uint64_t token);
/* the workflow's own timeout, or its caller gone */
void		 wf_run_abort(struct wf_run *, const char *why);
enum wf_state	 wf_run_step_state(const struct wf_run *, size_t step);
int		 wf_run_finished(const struct wf_run *);

/*
 * composite_snap.c: suspend and resume (MCP 2026-07-28, Multi
 * Round-Trip Requests).  A run waits for input at an elicitation step,
 * or at a tool call whose backend answered input_required: the driver
 * hands that answer to wf_run_call_suspend() (the run keeps the
 * backend's requestState and inputRequests: they stay in vmcpd's
 * record, never in the client's hands).  Once wf_run_suspendable(), no
 * call is in flight but suspended ones, and wf_run_snapshot() is the
 * whole run as JSON; wf_run_restore() makes it a run again, under the
 * same composite definition only, its pending calls' timeouts and its
 * retry delays armed anew (wd_timer) and nothing started: the driver
 * then answers the elicitations (wf_run_elicit_done()) and retries the
 * suspended calls (wf_run_call_resume(), then wf_run_call_done() or
 * wf_run_call_suspend() again).
 */
int		 wf_run_call_suspend(struct wf_run *, uint64_t call,
		    json_t *result);
/* the suspended call's inner state, taken (the call is in flight
 * again: report its end as usual); NULL if it is not suspended */
json_t		*wf_run_call_resume(struct wf_run *, uint64_t call);
int		 wf_run_suspendable(const struct wf_run *);
/*
 * What the run waits for, an array in call order of
 * {call, key, step, kind: "elicitation", message, requestedSchema} and
 * {call, key, step, kind: "tool", tool, arguments, requestState?,
 * inputRequests?}; key is unique in the run (the step id, with
 * "[index]" for a forEach iteration).  NULL when out of memory.
 */
json_t		*wf_run_pending(const struct wf_run *);
/*
 * MRTR's inputRequests for what a run waits for (wf_run_pending()): an
 * elicitation step's request under its key, a suspended call's own
 * requests under "<key>/<the backend's key>".  NULL if out of memory.
 */
json_t		*wf_input_requests(const json_t *pending);
/*
 * The answer in a client's inputResponses to one entry of
 * wf_run_pending(): an elicitation's ({action, content?}), or for a
 * suspended call its backend's inputResponses (under the backend's own
 * keys).  NULL if one is missing or malformed: ask again.
 */
json_t		*wf_input_response(const json_t *entry, const json_t *responses);
/* the snapshot or NULL (not suspendable, or out of memory) */
json_t		*wf_run_snapshot(const struct wf_run *);
struct wf_run	*wf_run_restore(const struct composite *, const json_t *snap,
		    const struct wf_driver *, void *arg, char *err,
		    size_t errlen);
/* the workflow's deadline (wall clock ms, 0: none), kept by a snapshot
 * for the driver that restores it */
void		 wf_run_set_deadline(struct wf_run *, uint64_t ms);
uint64_t	 wf_run_deadline(const struct wf_run *);

/* a tool result as a step's output: structuredContent, else a map of
 * its content items (text, text_1, image_0, resource, ...) */
json_t		*wf_output_of(json_t *result);
/* the content map alone: .steps.<id>.content, as the reference has it */
json_t		*wf_content_map(json_t *result);

#endif /* VMCPD_COMPOSITE_SCHED_H */
