/*
 * Composite tools (workflows over many backends): their definition as
 * loaded from compositeTools[] (composite_config.c), the dataflow
 * scheduler that runs one (composite_sched.c: a state machine with no
 * I/O, driven by "call finished" events and asking its driver to start
 * calls), and the pure pieces around a run (composite_io.c: parameter
 * validation, the result, the derived safety annotations).
 */
#ifndef VMCPD_COMPOSITE_H
#define VMCPD_COMPOSITE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "template.h"

#define COMPOSITE_STEPS_MAX		100
#define COMPOSITE_RETRY_MAX		10
#define COMPOSITE_PARALLEL_MAX		50
#define COMPOSITE_ITERATIONS_MAX	1000
#define COMPOSITE_OUTPUT_DEPTH		10
#define COMPOSITE_TIMEOUT_MS		(30 * 60 * 1000ULL)
#define COMPOSITE_STEP_TIMEOUT_MS	(5 * 60 * 1000ULL)
#define COMPOSITE_ELICIT_TIMEOUT_MAX_MS	(10 * 60 * 1000ULL)
#define COMPOSITE_RETRY_DELAY_MS	1000ULL
#define COMPOSITE_BACKOFF_CAP		60	/* x retryDelay */
#define COMPOSITE_SCHEMA_MAX		(100 * 1024)	/* elicitation */
#define COMPOSITE_SCHEMA_DEPTH		10
#define COMPOSITE_ANSWER_MAX		(1024 * 1024)
#define COMPOSITE_ANSWER_DEPTH		10
#define COMPOSITE_FP_LEN		64	/* hex SHA-256 */

/* a composite's route in the view: never a backend name (config_sections.c
 * allows no ':' in those) */
#define COMPOSITE_ROUTE			":composite"

enum composite_kind {
	COMPOSITE_TOOL,
	COMPOSITE_ELICITATION,
	COMPOSITE_FOREACH
};

enum composite_onerror {
	COMPOSITE_ABORT,
	COMPOSITE_CONTINUE,
	COMPOSITE_RETRY,
	COMPOSITE_SKIP_REMAINING	/* elicitation onDecline/onCancel */
};

/* a templated JSON value: its string leaves compiled, in the order
 * composite_tvalue_expand() walks them (jansson keeps insertion order) */
struct composite_tvalue {
	json_t		 *ct_json;
	struct tmpl	**ct_tmpl;
	size_t		  ct_ntmpl;
};

struct composite_step {
	char			 *cs_id;
	enum composite_kind	  cs_kind;
	size_t			  cs_line;	/* of the step, for messages */
	size_t			  cs_col;

	size_t			 *cs_deps;	/* indexes of dependsOn */
	size_t			  cs_ndeps;
	struct tmpl		 *cs_cond;	/* or NULL */
	enum composite_onerror	  cs_onerror;
	unsigned int		  cs_retry_count;
	uint64_t		  cs_retry_delay_ms;
	json_t			 *cs_defaults;	/* defaultResults or NULL */
	uint64_t		  cs_timeout_ms;

	/* tool */
	char			 *cs_tool;	/* "backend.tool" or a name */
	struct composite_tvalue	  cs_args;

	/* elicitation */
	struct tmpl		 *cs_message;
	json_t			 *cs_schema;
	enum composite_onerror	  cs_ondecline;
	enum composite_onerror	  cs_oncancel;

	/* forEach */
	struct tmpl		 *cs_collection;
	char			 *cs_itemvar;
	unsigned int		  cs_max_parallel;
	unsigned int		  cs_max_iterations;
	struct composite_step	 *cs_inner;
};

struct composite_prop {
	char			 *cp_name;
	char			 *cp_type;	/* string integer ... array */
	char			 *cp_desc;
	struct tmpl		 *cp_value;	/* or NULL */
	json_t			 *cp_default;	/* or NULL */
	struct composite_prop	 *cp_props;	/* nested object properties */
	size_t			  cp_nprops;
	char			**cp_required;
	size_t			  cp_nrequired;
};

struct composite {
	char			*co_name;
	char			*co_desc;
	json_t			*co_params;	/* a JSON Schema object */
	uint64_t		 co_timeout_ms;
	json_t			*co_annotations; /* as written, or NULL */
	struct composite_step	*co_steps;
	size_t			 co_nsteps;
	struct composite_prop	*co_output;	/* the root, or NULL */
	size_t			 co_line;
	size_t			 co_col;
	/* of the definition as written: a handle minted before a reload
	 * that changed it is refused (composite_snap.c) */
	char			 co_fp[COMPOSITE_FP_LEN + 1];
};

struct composite_list {
	struct composite	**cl_items;
	size_t			  cl_n;
};

void	 composite_free(struct composite *);
void	 composite_list_free(struct composite_list *);
/* compositeTools of a YAML document alone (the unit tests' way in) */
int	 composite_load_buffer(const char *name, const char *buf, size_t len,
	    struct composite_list *, char *err, size_t errlen);
struct config;
/* the configuration's composite of that name (len bytes), or NULL */
const struct composite *composite_find(const struct config *,
	    const char *name, size_t len);
void	 composite_tvalue_free(struct composite_tvalue *);
json_t	*composite_tvalue_expand(const struct composite_tvalue *, json_t *ctx,
	    char *err, size_t errlen);

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

/*
 * composite_io.c.  composite_params(): the client's arguments checked
 * against parameters with defaults applied (a new object), or NULL and
 * err naming the argument (the caller's -32602).
 */
json_t		*composite_params(const struct composite *, json_t *args,
		    char *err, size_t errlen);
/* the CallToolResult of a finished run's context: structuredContent
 * plus the same as one JSON text item; NULL and err if a required
 * output has no value */
json_t		*composite_result(const struct composite *, json_t *ctx,
		    char *err, size_t errlen);
int		 composite_type_ok(const char *type, const json_t *);
/* v against a JSON Schema (the subset composite_params() checks),
 * defaults filled in; 0, or -1 and err */
int		 composite_schema_check(const json_t *schema, json_t *v,
		    char *err, size_t errlen);
size_t		 composite_json_depth(const json_t *);
size_t		 composite_json_size(const json_t *);	/* compact text */
/* a step's expanded arguments coerced in place to its tool's
 * inputSchema (a string where it wants an integer, number, boolean,
 * object or array is parsed if it can be), hidden tools included (the
 * reference coerces advertised tools only) */
void		 composite_coerce_args(json_t *args, const json_t *schema);
json_t		*composite_input_schema(const struct composite *);
json_t		*composite_output_schema(const struct composite *);	/* or NULL */
/*
 * The advertised annotations: the safety floor over the tool steps
 * (forEach inner steps included; lookup gives a step tool's annotations
 * as a new reference, NULL when unknown), the explicit ones merged over
 * it; NULL and err when an explicit hint claims safer than the floor.
 */
json_t		*composite_annotations(const struct composite *,
		    json_t *(*lookup)(void *, const char *tool), void *,
		    char *err, size_t errlen);

#endif /* VMCPD_COMPOSITE_H */
