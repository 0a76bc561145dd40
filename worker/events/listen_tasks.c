/*
 * notifications/tasks on a subscriptions/listen stream (the tasks
 * extension, io.modelcontextprotocol/tasks, Task Status Notifications):
 * a 2026-07-28 client names vmcpd's task ids in
 * params.notifications.taskIds.  Each is looked up in the task store
 * (worker/state/task_store.h) and kept only if it is a live task of the
 * client's principal, as tasks/get has it (modern_task.c): an unknown,
 * expired or another principal's id is left out of the acknowledgement
 * alike, and no backend hears of it.  The ones kept are grouped by
 * backend, and for each backend concerned this worker opens a
 * subscriptions/listen stream of the client's own (its identity scope,
 * so its credential under token_exchange), 2026-07-28 backends only,
 * declaring the extension and naming the backend's ids; each
 * notifications/tasks of one of them is passed to the client's stream
 * with its taskId vmcpd's.  Nothing else the backend sends there is.
 *
 * A backend stream that fails or ends is opened again with backoff
 * while the client's stream lasts (what changed in between is not sent
 * again: tasks/get has it); one whose tasks all reached a terminal
 * status is closed.  They all close with the client's stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "proto/jsonrpc.h"
#include "proto/meta.h"
#include "proto/method.h"
#include "proto/mrequest.h"
#include "proto/proto.h"
#include "proto/sse.h"
#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/events/bstream.h"
#include "worker/events/listen_tasks.h"
#include "worker/process/process.h"
#include "worker/state/task_store.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_stream.h"

/* one backend's stream for a listen's tasks */
struct ltask_be {
	struct listen_tasks		*b_lt;
	const struct config_backend	*b_be;
	struct bstream			 b_bs;	/* its stream */
	json_t				*b_ids;	/* the backend's -> vmcpd's */
	char				 b_scope[UPSTREAM_SCOPE_MAX + 1];
};

struct listen_tasks {
	struct worker		*lt_w;
	json_t			*lt_asked;	/* distinct ids asked */
	size_t			 lt_next;
	json_t			*lt_ids;	/* honoured */
	struct ltask_be		*lt_bes;
	size_t			 lt_nbes;
	/* while the ids are looked up */
	struct httpd_req	*lt_req;
	json_t			*lt_view;
	ltask_done_cb		 lt_done;
	ltask_send_cb		 lt_send;
	void			*lt_arg;
	int			 lt_waiting;	/* a store read under way */
	int			 lt_insync;	/* ... inside ts_get() */
	int			 lt_have;	/* its answer, below */
	int			 lt_rc;
	struct task_rec		 lt_rec;
	const struct principal	*lt_p;
	char			 lt_owner[TASK_OWNER_MAX + 1];
};

static void
ltask_err(struct ltask_err *e, int status, int code, json_t *data,
    const char *msg)
{
	e->le_status = status;
	e->le_code = code;
	e->le_data = data;
	(void)snprintf(e->le_msg, sizeof(e->le_msg), "%s", msg);
}

int
listen_tasks_new(struct worker *w, const json_t *want, const json_t *caps,
    struct listen_tasks **ltp, struct ltask_err *e)
{
	const json_t		*ids = json_object_get(want, "taskIds");
	struct listen_tasks	*lt;
	json_t			*seen, *v;
	size_t			 i;

	*ltp = NULL;
	memset(e, 0, sizeof(*e));
	if (ids == NULL)
		return 0;
	if (!proto_caps_tasks(caps)) {
		ltask_err(e, 400, MCP_ERR_MISSING_CAPABILITY, json_pack(
		    "{s:{s:{s:{}}}}", "requiredCapabilities", "extensions",
		    MCP_TASKS_EXTENSION), "Missing required client capability: "
		    "notifications.taskIds needs the " MCP_TASKS_EXTENSION
		    " extension declared on the request");
		return -1;
	}
	if (!json_is_array(ids)) {
		ltask_err(e, 200, JSONRPC_INVALID_PARAMS, NULL, "Invalid "
		    "params: notifications.taskIds must be an array of task "
		    "ids");
		return -1;
	}
	if ((lt = calloc(1, sizeof(*lt))) == NULL ||
	    (lt->lt_asked = json_array()) == NULL ||
	    (lt->lt_ids = json_array()) == NULL ||
	    (seen = json_object()) == NULL) {
		listen_tasks_free(lt);
		ltask_err(e, 500, JSONRPC_INTERNAL_ERROR, NULL,
		    "Internal error: out of memory");
		return -1;
	}
	lt->lt_w = w;
	json_array_foreach(ids, i, v) {
		if (!json_is_string(v)) {
			ltask_err(e, 200, JSONRPC_INVALID_PARAMS, NULL, "");
			(void)snprintf(e->le_msg, sizeof(e->le_msg), "Invalid "
			    "params: notifications.taskIds[%zu] is not a task "
			    "id", i);
			goto fail;
		}
		if (json_object_get(seen, json_string_value(v)) != NULL)
			continue;
		(void)json_object_set_new(seen, json_string_value(v),
		    json_true());
		(void)json_array_append(lt->lt_asked, v);
	}
	/* as many as the URIs a listen may name */
	if (json_array_size(lt->lt_asked) > w->w_conf->cf_subs_cap) {
		ltask_err(e, 200, JSONRPC_INVALID_PARAMS, json_pack("{s:s, s:I}",
		    "limit", "sessions.maxSubscriptions", (json_int_t)
		    w->w_conf->cf_subs_cap), "");
		(void)snprintf(e->le_msg, sizeof(e->le_msg), "Invalid params: "
		    "this subscriptions/listen names %zu tasks; "
		    "sessions.maxSubscriptions is %u",
		    json_array_size(lt->lt_asked), w->w_conf->cf_subs_cap);
		goto fail;
	}
	json_decref(seen);
	*ltp = lt;
	return 0;
fail:
	json_decref(seen);
	listen_tasks_free(lt);
	return -1;
}

/* the backend's entry of this listen, made on first use */
static struct ltask_be *
ltask_be_of(struct listen_tasks *lt, const struct config_backend *be)
{
	struct ltask_be	*b;
	size_t		 i;

	for (i = 0; i < lt->lt_nbes; i++)
		if (lt->lt_bes[i].b_be == be)
			return &lt->lt_bes[i];
	if ((b = reallocarray(lt->lt_bes, lt->lt_nbes + 1, sizeof(*b))) ==
	    NULL)
		return NULL;
	lt->lt_bes = b;
	b = &lt->lt_bes[lt->lt_nbes];
	memset(b, 0, sizeof(*b));
	if ((b->b_ids = json_object()) == NULL)
		return NULL;
	lt->lt_nbes++;
	b->b_be = be;
	(void)snprintf(b->b_scope, sizeof(b->b_scope), "%s",
	    bsession_scope(lt->lt_p, be, BSESSION_FOR_USER));
	return b;
}

/*
 * The record of the id at lt_next: kept, left out (0), or the listen
 * refused (-1, e filled).
 */
static int
ltask_take(struct listen_tasks *lt, struct ltask_err *e)
{
	const struct task_rec		*tr = &lt->lt_rec;
	const struct config_backend	*be;
	struct ltask_be			*b;
	json_t				*id;

	id = json_array_get(lt->lt_asked, lt->lt_next);
	if (lt->lt_rc == -1) {
		ltask_err(e, 200, JSONRPC_INTERNAL_ERROR, NULL, "Internal "
		    "error: the task store did not answer");
		return -1;
	}
	/* unknown, expired, another's, or its backend gone: alike */
	if (lt->lt_rc != 0 || !auth_scope_eq(tr->tr_owner, lt->lt_owner) ||
	    (be = config_backend_find(lt->lt_w->w_conf, tr->tr_backend)) ==
	    NULL)
		return 0;
	/* as a tasks/get of it */
	switch (authz_gate_task(lt->lt_w, lt->lt_req, tr->tr_tool,
	    lt->lt_view)) {
	case -2:
		goto oom;
	case -1:
		ltask_err(e, AUTHZ_HTTP, AUTHZ_CODE, NULL, authz_message(
		    mcp_method_get(MCP_M_TOOLS_CALL), NULL));
		return -1;
	}
	if ((b = ltask_be_of(lt, be)) == NULL ||
	    json_object_set(b->b_ids, tr->tr_bid, id) == -1 ||
	    json_array_append(lt->lt_ids, id) == -1)
		goto oom;
	return 0;
oom:
	ltask_err(e, 500, JSONRPC_INTERNAL_ERROR, NULL,
	    "Internal error: out of memory");
	return -1;
}

static void
ltask_finish(struct listen_tasks *lt, int rc, struct ltask_err *e)
{
	json_decref(lt->lt_view);
	lt->lt_view = NULL;
	lt->lt_req = NULL;
	lt->lt_p = NULL;
	lt->lt_done(lt->lt_arg, rc, e);	/* lt may be gone */
}

static void	ltask_step(struct listen_tasks *);

static void
ltask_got(void *arg, int rc, const struct task_rec *tr)
{
	struct listen_tasks *lt = arg;

	lt->lt_waiting = 0;
	lt->lt_have = 1;
	lt->lt_rc = rc;
	if (rc == 0)
		lt->lt_rec = *tr;
	if (!lt->lt_insync)
		ltask_step(lt);
}

/* one id after the other: this host's store answers at once, Redis
 * later (ltask_got() goes on then) */
static void
ltask_step(struct listen_tasks *lt)
{
	struct ltask_err	 e;
	const char		*id;
	int			 rc;

	memset(&e, 0, sizeof(e));
	for (;;) {
		if (lt->lt_have) {
			lt->lt_have = 0;
			if (ltask_take(lt, &e) == -1) {
				ltask_finish(lt, -1, &e);
				return;
			}
			lt->lt_next++;
		}
		if (lt->lt_next >= json_array_size(lt->lt_asked))
			break;
		id = json_string_value(json_array_get(lt->lt_asked,
		    lt->lt_next));
		if (!task_id_valid(id, strlen(id))) {
			lt->lt_next++;	/* none of vmcpd's: unknown */
			continue;
		}
		lt->lt_waiting = lt->lt_insync = 1;
		rc = task_store->ts_get(lt->lt_w, id, ltask_got, lt);
		lt->lt_insync = 0;
		if (rc == -1) {
			lt->lt_waiting = 0;
			ltask_err(&e, 200, JSONRPC_INTERNAL_ERROR, NULL,
			    "Internal error: the task store can't be read");
			ltask_finish(lt, -1, &e);
			return;
		}
		if (lt->lt_waiting)
			return;
	}
	ltask_finish(lt, 0, &e);
}

void
listen_tasks_resolve(struct listen_tasks *lt, struct httpd_req *req,
    json_t *view, ltask_done_cb done, void *arg)
{
	lt->lt_req = req;
	lt->lt_p = auth_principal(req);
	lt->lt_view = json_incref(view);
	lt->lt_done = done;
	lt->lt_arg = arg;
	(void)snprintf(lt->lt_owner, sizeof(lt->lt_owner), "%s",
	    auth_scope(req));
	ltask_step(lt);
}

const json_t *
listen_tasks_ids(const struct listen_tasks *lt)
{
	return lt->lt_ids;
}

/* --- the backend streams --------------------------------------------- */

static int
ltask_terminal(const char *status)
{
	return status != NULL && (strcmp(status, "completed") == 0 ||
	    strcmp(status, "failed") == 0 || strcmp(status, "cancelled") == 0);
}

/* a notifications/tasks of one of this listen's: relayed, vmcpd's id */
static void
ltask_relay(struct ltask_be *b, const json_t *params)
{
	struct listen_tasks	*lt = b->b_lt;
	const char		*bid;
	json_t			*id, *p, *meta;

	if ((bid = json_string_value(json_object_get(params, "taskId"))) ==
	    NULL || (id = json_object_get(b->b_ids, bid)) == NULL)
		return;
	if ((p = json_deep_copy(params)) == NULL ||
	    json_object_set(p, "taskId", id) == -1) {
		json_decref(p);
		return;
	}
	/* the backend's hop (its subscription id) is not the client's */
	if (json_is_object(meta = json_object_get(p, "_meta")))
		proto_meta_strip(meta);
	lt->lt_send(lt->lt_arg, p);	/* p taken */
	if (ltask_terminal(json_string_value(json_object_get(params,
	    "status"))) && json_object_del(b->b_ids, bid) == 0 &&
	    json_object_size(b->b_ids) == 0)
		bstream_retry(&b->b_bs, 0);	/* closed there, not in its
						 * callback */
}

static void
ltask_on_message(void *arg, const struct jsonrpc_msg *m)
{
	struct ltask_be	*b = arg;

	if (m->jm_kind == JSONRPC_NOTIFICATION &&
	    MCP_METHOD_IS(m->jm_mm, MCP_M_N_TASKS))
		ltask_relay(b, m->jm_params);
}

/* ended or never started: the client's stream goes on; again later,
 * unless no task of it is left to hear of */
static int
ltask_down(void *arg)
{
	struct ltask_be *b = arg;

	return json_object_size(b->b_ids) > 0;
}

/* the stream opened, or closed once every task of it is over */
static void
ltask_open(void *arg)
{
	struct ltask_be	*b = arg;
	json_t		*ids, *params, *caps;
	const char	*bid;
	json_t		*v;

	if (json_object_size(b->b_ids) == 0) {
		bstream_hangup(&b->b_bs);
		return;
	}
	if (b->b_bs.bs_up != NULL)
		return;
	ids = json_array();
	json_object_foreach(b->b_ids, bid, v)
		(void)json_array_append_new(ids, json_string(bid));
	params = json_pack("{s:{s:o}}", "notifications", "taskIds", ids);
	caps = json_pack("{s:{s:{}}}", "extensions", MCP_TASKS_EXTENSION);
	if (params == NULL || caps == NULL ||
	    (b->b_bs.bs_up = upstream_stream_modern(b->b_lt->lt_w, b->b_be,
	    b->b_scope, params, caps, &bstream_cbs, &b->b_bs)) == NULL)
		bstream_retry(&b->b_bs, -1);
	json_decref(params);
	json_decref(caps);
}

static const struct bstream_ops ltask_bs_ops = {
	ltask_open, ltask_on_message, NULL, ltask_down
};

void
listen_tasks_open(struct listen_tasks *lt, ltask_send_cb send, void *arg)
{
	size_t i;

	lt->lt_send = send;
	lt->lt_arg = arg;
	for (i = 0; i < lt->lt_nbes; i++) {
		lt->lt_bes[i].b_lt = lt;
		if (bstream_init(&lt->lt_bes[i].b_bs, lt->lt_w,
		    lt->lt_bes[i].b_be, "task listen", &ltask_bs_ops,
		    &lt->lt_bes[i]) == 0)
			ltask_open(&lt->lt_bes[i]);
	}
}

void
listen_tasks_free(struct listen_tasks *lt)
{
	size_t i;

	if (lt == NULL)
		return;
	if (lt->lt_waiting)
		task_store->ts_cancel(lt);
	for (i = 0; i < lt->lt_nbes; i++) {
		bstream_free(&lt->lt_bes[i].b_bs);
		json_decref(lt->lt_bes[i].b_ids);
	}
	free(lt->lt_bes);
	json_decref(lt->lt_asked);
	json_decref(lt->lt_ids);
	json_decref(lt->lt_view);
	free(lt);
}
