/*
 * tasks/get, tasks/update and tasks/cancel of a composite tool run as a
 * task (worker/composite/composite_task.c): vmcpd answers them itself
 * from the task's record (task_store.h), read by modern_task_route()
 * on whichever worker the call lands, owner and authorization checked
 * there.  tasks/get: the record as a DetailedTask (task_rec_detailed():
 * a run whose worker stopped reads failed once its lease ran out).
 * tasks/cancel: a mark beside the record, which the runner reads at its
 * next tick and cancels the steps; a task already terminal is left as
 * it is (the cancel is cooperative: an empty acknowledgement either
 * way).  tasks/update of a task waiting for its client's input
 * (input_required: the workflow suspended on a handle) resumes it here,
 * detached as it ran before (composite_task_resume()); of any other,
 * it is acknowledged and changes nothing.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonrpc.h"
#include "proto/method.h"
#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/composite/composite_run.h"
#include "worker/request/modern_req.h"
#include "worker/state/task_store.h"

/* an internal error for the client: -1 */
static int
modern_ctask_fail(struct modern_task_err *te, const char *msg)
{
	te->te_status = 200;
	te->te_code = JSONRPC_INTERNAL_ERROR;
	(void)snprintf(te->te_msg, sizeof(te->te_msg), "Internal error: %s",
	    msg);
	te->te_data = NULL;
	return -1;
}

/* a resumed task's acknowledgement (or why it could not resume) */
static void
modern_ctask_resumed(void *arg, json_t *result, int code,
    const char *message)
{
	struct mreq *m = arg;

	m->m_ctask = NULL;
	modern_task_local(m, result, code, message);
}

/*
 * The workflow's retry: its handle, the client's answers, and the
 * update's capabilities (a later elicitation step asks only a client
 * that declared it).  0 going on, -1 and te.
 */
static int
modern_ctask_update(struct mreq *m, struct modern_task_err *te)
{
	struct request		*r = &m->m_r;
	const struct task_rec	*tr = m->m_trec;
	const struct composite	*co;
	json_t			*p, *in = r->r_msg.jm_params, *resp, *meta;

	co = composite_routed(r->r_w, r->r_view, tr->tr_tool,
	    strlen(tr->tr_tool));
	if (co == NULL) {
		/* the composite is gone from the view: nothing resumes */
		modern_task_local(m, json_object(), 0, NULL);
		return 0;
	}
	resp = json_object_get(in, "inputResponses");
	meta = json_object_get(in, "_meta");
	/* missing answers: asked again (input_required, a new handle) */
	if ((p = json_pack("{s:s, s:s, s:O*, s:O*}", "name", tr->tr_tool,
	    "requestState", tr->tr_bid, "inputResponses",
	    json_is_object(resp) ? resp : NULL, "_meta",
	    json_is_object(meta) ? meta : NULL)) == NULL)
		return modern_ctask_fail(te, "out of memory");
	composite_task_resume(r->r_w, r->r_view, r->r_req, co, m->m_task, tr,
	    p, modern_ctask_resumed, m, &m->m_ctask);
	json_decref(p);
	return 0;
}

/* the cancel's mark written */
static void
modern_ctask_marked(void *arg, int rc)
{
	struct mreq *m = arg;

	if (rc != 0) {
		modern_task_local(m, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: the task's cancel could not be recorded");
		return;
	}
	modern_task_local(m, json_object(), 0, NULL);
}

int
modern_ctask(struct mreq *m, struct modern_task_err *te)
{
	struct request		*r = &m->m_r;
	const struct task_rec	*tr = m->m_trec;
	uint64_t		 now = store_now_ms();
	enum task_status	 st = task_rec_status(tr, now);
	json_t			*res;

	switch (r->r_msg.jm_mm->mm_id) {
	case MCP_M_TASKS_GET:
		if ((res = task_rec_detailed(tr, m->m_task, now)) == NULL)
			return modern_ctask_fail(te, "out of memory");
		modern_task_local(m, res, 0, NULL);
		return 0;
	case MCP_M_TASKS_CANCEL:
		if (st != TASK_ST_WORKING && st != TASK_ST_INPUT) {
			modern_task_local(m, json_object(), 0, NULL);
			return 0;
		}
		if (task_store->ts_mark(r->r_w, m->m_task, tr->tr_ttl_ms,
		    modern_ctask_marked, m) == -1)
			return modern_ctask_fail(te, "the task's cancel could "
			    "not be recorded");
		return 0;	/* answered by modern_ctask_marked() */
	default:
		if (st == TASK_ST_INPUT)
			return modern_ctask_update(m, te);
		/* unknown or answered keys are ignored */
		modern_task_local(m, json_object(), 0, NULL);
		return 0;
	}
}
