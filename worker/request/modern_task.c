/*
 * The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) for
 * 2026-07-28 clients: a tools/call a backend answers with a task
 * (CreateTaskResult, resultType "task") gets a task id of vmcpd's own,
 * 128 random bits, mapped in the store's tasks db (shared/task_rec.h) to
 * the backend, the backend's id, the owner (the identity scope, as a
 * workflow handle's) and the tool, before the client has the answer:
 * tasks/get, tasks/update and tasks/cancel then work on any worker (and
 * any node, with the records in Redis: worker/state/task_store.h).
 * Those three are resolved here (modern.c's rc_check): the request must
 * declare the extension (-32021), the id must be a live task of this
 * principal (-32602, the same answer for an unknown, an expired and
 * another principal's id, and no backend asked), the call is authorized
 * as the call of the tool that made the task, then sent to the backend
 * under the backend's id (Mcp-Name follows params.taskId), and the
 * answer's id mapped back.  The extension is declared to a backend only
 * if it advertises it (the view's taskBackends).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/classify.h"
#include "proto/jsonrpc.h"
#include "proto/method.h"
#include "proto/mrequest.h"
#include "proto/proto.h"
#include "shared/config.h"
#include "shared/config_backend.h"
#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/http/httpd.h"
#include "worker/pipeline/pipeline.h"
#include "worker/process/process.h"
#include "worker/request/modern_req.h"
#include "worker/state/task_store.h"

int
modern_task_declared(struct mreq *m)
{
	const struct modern_fast	*f = &m->m_fast;
	json_t				*caps;
	int				 rc;

	if (m->m_r.r_caps != NULL || f->mf_caps == NULL)
		return proto_caps_tasks(m->m_r.r_caps);
	/* the hot path's text: parsed only if it names the extension */
	if (memmem(f->mf_caps, f->mf_capslen, MCP_TASKS_EXTENSION,
	    sizeof(MCP_TASKS_EXTENSION) - 1) == NULL)
		return 0;
	caps = json_loadb(f->mf_caps, f->mf_capslen, JSON_ALLOW_NUL, NULL);
	rc = proto_caps_tasks(caps);
	json_decref(caps);
	return rc;
}

int
modern_task_backend(json_t *view, const char *backend)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(view, "taskBackends"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    backend) == 0)
			return 1;
	return 0;
}

static void
modern_task_fail(struct modern_task_err *te, int status, int code,
    const char *msg, json_t *data)
{
	te->te_status = status;
	te->te_code = code;
	(void)snprintf(te->te_msg, sizeof(te->te_msg), "%s", msg);
	te->te_data = data;
}

json_t *
modern_task_required(void)
{
	return json_pack("{s:{s:{s:{}}}}", "requiredCapabilities",
	    "extensions", MCP_TASKS_EXTENSION);
}

/* the record read (task_store.h): at once, or later (Redis), when the
 * resolve phase runs again */
static void
modern_task_got(void *arg, int rc, const struct task_rec *tr)
{
	struct mreq *m = arg;

	/* kept apart: a record is large, and most requests have none */
	if (rc == 0 && (m->m_trec = malloc(sizeof(*tr))) == NULL)
		rc = -1;
	if (rc == 0) {
		*m->m_trec = *tr;
		m->m_trec->tr_out = json_incref(tr->tr_out);
	}
	m->m_tgot = rc;
	m->m_tstate = MODERN_TASK_GOT;
	pipeline_resume(&m->m_r, m->m_r.r_view, NULL);
}

int
modern_task_route(struct mreq *m, struct modern_task_err *te)
{
	struct request		*r = &m->m_r;
	const struct task_rec	*tr;
	const json_t		*idv;
	json_t			*p;
	const char		*id;
	char			 msg[300];
	int			 wf;

	if (m->m_tstate == MODERN_TASK_NONE) {
		if (!modern_task_declared(m)) {
			(void)snprintf(msg, sizeof(msg), "Missing required "
			    "client capability: %s needs the %s extension "
			    "declared on the request", r->r_msg.jm_method,
			    MCP_TASKS_EXTENSION);
			modern_task_fail(te, 400, MCP_ERR_MISSING_CAPABILITY,
			    msg, modern_task_required());
			return -1;
		}
		idv = json_object_get(r->r_msg.jm_params, "taskId");
		if ((id = json_string_value(idv)) == NULL ||
		    !task_id_valid(id, json_string_length(idv)))
			goto unknown;
		(void)snprintf(m->m_task, sizeof(m->m_task), "%s", id);
		m->m_tstate = MODERN_TASK_WAIT;
		if (task_store->ts_get(r->r_w, m->m_task, modern_task_got,
		    m) == -1) {
			m->m_tstate = MODERN_TASK_NONE;
			modern_task_fail(te, 200, JSONRPC_INTERNAL_ERROR,
			    "Internal error: the task store can't be read",
			    NULL);
			return -1;
		}
		if (m->m_tstate == MODERN_TASK_WAIT)
			return 1;
	}
	if (m->m_tgot == -1) {
		modern_task_fail(te, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: the task store did not answer", NULL);
		return -1;
	}
	/* unknown, expired, another's, or its backend gone: alike; a
	 * composite's task is vmcpd's own (modern_ctask.c) */
	tr = m->m_trec;
	if (m->m_tgot != 0 || !auth_scope_eq(tr->tr_owner,
	    auth_scope(r->r_req)))
		goto unknown;
	wf = strcmp(tr->tr_backend, TASK_WORKFLOW) == 0;
	if (wf ? tr->tr_status == TASK_ST_NONE : (r->r_be =
	    config_backend_find(r->r_w->w_conf, tr->tr_backend)) == NULL)
		goto unknown;
	switch (authz_gate_task(r->r_w, r->r_req, tr->tr_tool, r->r_view)) {
	case -2:
		goto oom;
	case -1:
		modern_task_fail(te, AUTHZ_HTTP, AUTHZ_CODE, authz_message(
		    mcp_method_get(MCP_M_TOOLS_CALL), NULL), NULL);
		r->r_be = NULL;
		return -1;
	}
	if (wf)
		return modern_ctask(m, te) == -1 ? -1 : MODERN_TASK_ANSWERED;
	if ((p = json_copy(r->r_msg.jm_params)) == NULL ||
	    json_object_del(p, "_meta") == -1 ||
	    json_object_set_new(p, "taskId", json_string(tr->tr_bid)) == -1) {
		json_decref(p);
		goto oom;
	}
	json_decref(r->r_bparams);
	r->r_bparams = p;
	return 0;
unknown:
	r->r_be = NULL;
	modern_task_fail(te, 200, JSONRPC_INVALID_PARAMS,
	    "Invalid params: unknown taskId", NULL);
	return -1;
oom:
	r->r_be = NULL;
	modern_task_fail(te, 200, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory", NULL);
	return -1;
}

/* the new task's record written (or not): the client's answer */
static void
modern_task_put(void *arg, int rc)
{
	struct mreq	*m = arg;
	json_t		*result = m->m_tresult;

	m->m_tresult = NULL;
	if (rc == 0 && json_object_set_new(result, "taskId",
	    json_string(m->m_tnew)) == 0) {
		modern_task_answer(m, result, NULL);
		return;
	}
	json_decref(result);
	modern_task_answer(m, NULL, rc == 0 ? "out of memory" :
	    "the task could not be recorded");
}

/* a backend's CreateTaskResult: mapped (the record written first),
 * then its id is vmcpd's: 1, answered by modern_task_put() */
static int
modern_task_created(struct mreq *m, json_t *result, char *err,
    size_t errlen)
{
	struct request		*r = &m->m_r;
	struct task_rec		 tr;
	const char		*bid, *tool;

	if (!modern_task_declared(m)) {
		(void)snprintf(err, errlen, "backend %s answered with a task "
		    "a request that did not declare the %s extension",
		    r->r_be->cb_name, MCP_TASKS_EXTENSION);
		return -1;
	}
	bid = json_string_value(json_object_get(result, "taskId"));
	tool = json_string_value(json_object_get(r->r_msg.jm_params, "name"));
	if (tool == NULL)
		tool = r->r_fast.rf_name;
	memset(&tr, 0, sizeof(tr));
	if (bid == NULL || *bid == '\0' || strlen(bid) > TASK_BID_MAX ||
	    tool == NULL || strlen(tool) > TASK_NAME_MAX) {
		(void)snprintf(err, errlen, "backend %s answered with a task "
		    "without a usable taskId", r->r_be->cb_name);
		return -1;
	}
	(void)snprintf(tr.tr_owner, sizeof(tr.tr_owner), "%s",
	    auth_scope(r->r_req));
	(void)snprintf(tr.tr_backend, sizeof(tr.tr_backend), "%s",
	    r->r_be->cb_name);
	(void)snprintf(tr.tr_tool, sizeof(tr.tr_tool), "%s", tool);
	(void)snprintf(tr.tr_bid, sizeof(tr.tr_bid), "%s", bid);
	if (task_id_new(m->m_tnew) == -1) {
		(void)snprintf(err, errlen, "no random bits for a task id");
		return -1;
	}
	m->m_tresult = result;
	if (task_store->ts_put(r->r_w, m->m_tnew, &tr, task_ttl_ms(
	    json_object_get(result, "ttlMs")), modern_task_put, m) == -1) {
		m->m_tresult = NULL;
		(void)snprintf(err, errlen, "the task of backend %s could "
		    "not be recorded", r->r_be->cb_name);
		return -1;
	}
	return 1;	/* m may be gone */
}

int
modern_task_result(struct mreq *m, json_t *result, const char *type,
    char *err, size_t errlen)
{
	if (m->m_task[0] != '\0') {
		/* a tasks/get, update or cancel answer: the backend's id
		 * is not the client's */
		if (json_object_get(result, "taskId") != NULL &&
		    json_object_set_new(result, "taskId",
		    json_string(m->m_task)) == -1) {
			(void)snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	if (strcmp(type, "task") == 0)
		return modern_task_created(m, result, err, errlen);
	return 0;
}
