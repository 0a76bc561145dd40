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
 * way).  tasks/update: acknowledged; the input it carries is for a
 * suspended workflow (not resumed through tasks/update yet).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonrpc.h"
#include "proto/method.h"
#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/request/modern_req.h"
#include "worker/state/task_store.h"

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
	const struct task_rec	*tr = &m->m_trec;
	uint64_t		 now = store_now_ms();
	enum task_status	 st = task_rec_status(tr, now);
	json_t			*res;

	switch (r->r_msg.jm_mm->mm_id) {
	case MCP_M_TASKS_GET:
		if ((res = task_rec_detailed(tr, m->m_task, now)) == NULL)
			goto oom;
		modern_task_local(m, res, 0, NULL);
		return 0;
	case MCP_M_TASKS_CANCEL:
		if (st != TASK_ST_WORKING && st != TASK_ST_INPUT) {
			modern_task_local(m, json_object(), 0, NULL);
			return 0;
		}
		if (task_store->ts_mark(r->r_w, m->m_task, tr->tr_ttl_ms,
		    modern_ctask_marked, m) == -1) {
			te->te_status = 200;
			te->te_code = JSONRPC_INTERNAL_ERROR;
			(void)snprintf(te->te_msg, sizeof(te->te_msg),
			    "Internal error: the task's cancel could not be "
			    "recorded");
			te->te_data = NULL;
			return -1;
		}
		return 0;	/* answered by modern_ctask_marked() */
	default:
		/* tasks/update: unknown or answered keys are ignored */
		modern_task_local(m, json_object(), 0, NULL);
		return 0;
	}
oom:
	te->te_status = 200;
	te->te_code = JSONRPC_INTERNAL_ERROR;
	(void)snprintf(te->te_msg, sizeof(te->te_msg),
	    "Internal error: out of memory");
	te->te_data = NULL;
	return -1;
}
