/*
 * Composite tools at run time (composite_view.c, composite_run.c): the
 * builder adds each composite whose steps all resolve to the view's
 * tools, routed to COMPOSITE_ROUTE; a worker's tools/call of one, on
 * either edge, starts a run (shared/composite_sched.c) whose driver
 * calls the steps' backends through the upstream edge.
 */
#ifndef VMCPD_COMPOSITE_RUN_H
#define VMCPD_COMPOSITE_RUN_H

#include <stddef.h>

#include <jansson.h>

#include "proto/proto.h"
#include "proto/method.h"

struct worker;
struct config;
struct composite;
struct principal;
struct httpd_req;
struct view_resolved;
struct crun;

/* composite_view.c: the builder's; 0, or -1 (no memory) */
int	 composite_view_add(const struct config *, struct view_resolved *);

/*
 * The composite a tools/call names (len bytes) if the view advertises
 * it, else NULL (then it is routed as any tool: a backend's, or none).
 */
const struct composite *composite_routed(struct worker *, json_t *view,
	    const char *name, size_t len);

/*
 * The client codecs' hook (rc_composite of legacy.c, modern.c): the
 * composite a tools/call request calls on its view, by the fast path's
 * name or its params' name, or NULL when it is not a call of one.
 */
struct request;
const struct composite *composite_of_request(const struct request *);

/* what a run tells the edge that started it */
struct composite_client {
	/* a notification for the client (progress), taken */
	void	(*cc_notify)(void *arg, json_t *msg);
	/* a request for a 2025-11-25 client (an elicitation step's), on
	 * the call's stream: 0 or -1 (mrtr.c's send); NULL: none */
	int	(*cc_request)(void *arg, json_t *msg);
	/* the end: a CallToolResult (taken), or a JSON-RPC error */
	void	(*cc_done)(void *arg, json_t *result, int code,
		    const char *message);
	void	 *cc_arg;
	/* the 2025-11-25 client's session and capabilities, or NULL */
	const char	*cc_sid;
	const json_t	*cc_caps;
	/* a suspended run restored from its handle (NULL: not told) */
	void	(*cc_resumed)(void *arg);
};

/*
 * Start a run of co for the tools/call params (borrowed) of req, in
 * the client's revision era.  cc_done comes once, maybe from in here
 * (bad params: -32602 naming the argument; no memory), unless
 * composite_run_cancel() comes first.  *slot holds the run while it
 * runs: NULL again before cc_done.
 */
void	 composite_run_start(struct worker *, json_t *view,
	    struct httpd_req *req, enum proto_era era,
	    const struct composite *co, json_t *params,
	    const struct composite_client *, struct crun **slot);
/* the client cancelled or went away (NULL: nothing) */
void	 composite_run_cancel(struct crun *, const char *why);

/*
 * composite_task.c: a composite run as a task (tasks extension) for a
 * 2026-07-28 call that declared it.  composite_task_wanted(): co is
 * one (longRunning, or its timeout) and params are no handle's retry.
 * composite_task_start(): the task's record written, the run started
 * detached, and answer called once (maybe from in here) with the
 * CreateTaskResult (taken) or a JSON-RPC error; *slot holds the task
 * until then, and composite_task_detach() forgets a request that went
 * first.
 */
struct ctask;
typedef void	(*composite_task_answer)(void *arg, json_t *result, int code,
		    const char *message);
int	 composite_task_wanted(const struct composite *, const json_t *params);
/* the view advertises a composite that runs as a task */
int	 composite_tasks_offered(struct worker *, json_t *view);
void	 composite_task_start(struct worker *, json_t *view,
	    struct httpd_req *req, const struct composite *co, json_t *params,
	    composite_task_answer, void *arg, struct ctask **slot);
void	 composite_task_detach(struct ctask *);
/*
 * A task suspended for its client's input (rec, status input_required,
 * its handle in tr_bid) resumed by a tasks/update: params are the
 * composite's retry (requestState the handle, inputResponses, _meta);
 * the record says working again, the run goes on detached as
 * composite_task_start()'s, and answer gets the update's empty result.
 */
struct task_rec;
void	 composite_task_resume(struct worker *, json_t *view,
	    struct httpd_req *req, const struct composite *co, const char *id,
	    const struct task_rec *rec, json_t *params,
	    composite_task_answer, void *arg, struct ctask **slot);

/*
 * The authorization of one step under the run's principal (NULL:
 * anonymous), before its call, as a call_tool of its tool with its
 * arguments (docs/ARCHITECTURE.md, Composite tools): the advertised
 * name (the step's tool name when the view routes it to this very
 * tool) with the view's annotations, else the tool's own name under
 * parent MCP::"<backend>" with the backend's annotations (entry, its
 * tools/list entry, or NULL).  1 allowed (always with authz off), 0
 * denied and why for the log.
 */
int	 composite_step_allowed(struct worker *, const struct principal *,
	    json_t *view, const char *name, const char *backend,
	    const char *own, const json_t *entry, const json_t *args,
	    char *why, size_t whylen);

#endif /* VMCPD_COMPOSITE_RUN_H */
