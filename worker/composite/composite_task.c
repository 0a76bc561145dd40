/*
 * A composite tool run as a task (the tasks extension,
 * io.modelcontextprotocol/tasks, SEP-2663; docs/ARCHITECTURE.md,
 * "Composite tools as tasks"): for a 2026-07-28 client that declared
 * the extension, a composite marked longRunning (or with a timeout of
 * COMPOSITE_TASK_TIMEOUT_MS) gets a task id of vmcpd's own, its record
 * written (task_store.h: owner, the composite, status working, the
 * runner's lease) before the client is answered its CreateTaskResult.
 * The run then goes on here, detached from the request (it holds the
 * worker as a request does, so a drain waits for it), and its outcome
 * is written into the record: completed and the result it would have
 * answered (a failed step is a result with isError), failed and a
 * JSON-RPC error, or input_required and the inputRequests while it is
 * suspended on a workflow handle (composite_resume.c).  Every
 * CTASK_TICK_MS the runner reads the record: a cancel asked
 * (tasks/cancel on any worker: the record's mark) cancels its steps as
 * a client's cancel does; else its lease is renewed, so a task whose
 * worker died (kill -9) reads failed once the lease runs out instead of
 * working for ever (task_rec_detailed()).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "proto/jsonrpc.h"
#include "shared/composite.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/auth/auth.h"
#include "worker/composite/composite_run.h"
#include "worker/composite/handle.h"
#include "worker/process/process.h"
#include "worker/state/task_store.h"

#define CTASK_TICK_MS	1000
/* a lease renewed each tick outlives a few missed ones */
#define CTASK_LEASE_MS	(5 * CTASK_TICK_MS)
/* a finished task is kept this long past its workflow's timeout */
#define CTASK_KEEP_MS	(60 * 60 * 1000ULL)

struct ctask {
	struct worker		*ct_w;
	const struct composite	*ct_co;
	struct crun		*ct_run;	/* while it runs here */
	struct task_rec		 ct_rec;
	char			 ct_id[TASK_ID_LEN + 1];
	uint64_t		 ct_expires_ms;
	struct event		*ct_tick;
	/* until the client has its task */
	composite_task_answer	 ct_answer;
	void			*ct_arg;
	struct ctask		**ct_slot;
	json_t			*ct_view;
	json_t			*ct_params;
	struct httpd_req	*ct_req;
	int			 ct_busy;	/* a store call out */
	int			 ct_starting;	/* in composite_run_start() */
	int			 ct_ended;	/* nothing more to write */
	int			 ct_resumed;	/* by a tasks/update */
};

int
composite_task_wanted(const struct composite *co, const json_t *params)
{
	/* a handle's retry is a suspended call's (MRTR), never a task */
	return co->co_long > 0 &&
	    json_object_get(params, "requestState") == NULL;
}

int
composite_tasks_offered(struct worker *w, json_t *view)
{
	const struct composite_list	*cl = w->w_conf->cf_composites;
	const struct composite		*co;
	size_t				 i;

	for (i = 0; cl != NULL && i < cl->cl_n; i++) {
		co = cl->cl_items[i];
		if (co->co_long > 0 && composite_routed(w, view, co->co_name,
		    strlen(co->co_name)) != NULL)
			return 1;
	}
	return 0;
}

static uint64_t
ctask_ttl_left(const struct ctask *ct)
{
	uint64_t now = store_now_ms();

	return ct->ct_expires_ms > now ? ct->ct_expires_ms - now : 1;
}

/* freed once nothing is out: no run, no store call, no answer owed */
static void
ctask_settle(struct ctask *ct)
{
	if (ct->ct_run != NULL || ct->ct_busy || ct->ct_starting ||
	    ct->ct_answer != NULL || !ct->ct_ended)
		return;
	task_store->ts_cancel(ct);
	if (ct->ct_tick != NULL)
		event_free(ct->ct_tick);
	task_rec_clear(&ct->ct_rec);
	json_decref(ct->ct_view);
	json_decref(ct->ct_params);
	worker_request_release(ct->ct_w, __func__);
	free(ct);
}

/* the client's answer, once (result taken) */
static void
ctask_answer(struct ctask *ct, json_t *result, int code, const char *msg)
{
	composite_task_answer	 answer = ct->ct_answer;

	if (answer == NULL) {
		json_decref(result);
		return;
	}
	ct->ct_answer = NULL;
	if (ct->ct_slot != NULL)
		*ct->ct_slot = NULL;
	ct->ct_slot = NULL;
	ct->ct_req = NULL;
	answer(ct->ct_arg, result, code, msg);
}

static void
ctask_written(void *arg, int rc)
{
	struct ctask *ct = arg;

	ct->ct_busy = 0;
	if (rc != 0)
		log_warnx("composite %s: task %.16s...: its state not written",
		    ct->ct_co->co_name, ct->ct_id);
	ctask_settle(ct);
}

/* the record rewritten (its state); final: the last write */
static void
ctask_write(struct ctask *ct, int final)
{
	/* a tick's call still out is overtaken (Redis keeps the order) */
	task_store->ts_cancel(ct);
	ct->ct_busy = 1;
	if (final)
		ct->ct_ended = 1;
	if (task_store->ts_set(ct->ct_w, ct->ct_id, &ct->ct_rec,
	    ctask_ttl_left(ct), ctask_written, ct) == -1)
		ctask_written(ct, -1);
}

/* the run ended (composite_client's cc_done): its outcome recorded */
static void
ctask_done(void *arg, json_t *result, int code, const char *message)
{
	struct ctask	*ct = arg;
	struct task_rec	*tr = &ct->ct_rec;
	const char	*type, *state;
	json_t		*out;

	ct->ct_run = NULL;	/* the run cleared its slot */
	if (ct->ct_tick != NULL)
		evtimer_del(ct->ct_tick);
	/* a tasks/update not acknowledged yet: whatever its claim's
	 * verdict, the record tells the outcome */
	if (ct->ct_resumed)
		ctask_answer(ct, json_object(), JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
	if (ct->ct_resumed && result == NULL && code ==
	    JSONRPC_INVALID_PARAMS && message != NULL &&
	    strcmp(message, HANDLE_CLIENT_MESSAGE) == 0) {
		/* its handle taken by another tasks/update, whose run
		 * writes the outcome */
		ct->ct_ended = 1;
		ctask_settle(ct);
		return;
	}
	type = json_string_value(json_object_get(result, "resultType"));
	state = json_string_value(json_object_get(result, "requestState"));
	task_rec_clear(tr);
	if (result != NULL && type != NULL &&
	    strcmp(type, "input_required") == 0 && state != NULL &&
	    strlen(state) <= TASK_BID_MAX) {
		/* suspended on a handle: the client's tasks/update resumes
		 * it, on any worker */
		tr->tr_status = TASK_ST_INPUT;
		(void)snprintf(tr->tr_bid, sizeof(tr->tr_bid), "%s", state);
		out = result;
	} else if (result != NULL && (type == NULL ||
	    strcmp(type, "complete") == 0) && json_object_set_new(result,
	    "resultType", json_string("complete")) == 0) {
		tr->tr_status = TASK_ST_COMPLETED;
		out = result;
	} else {
		json_decref(result);
		tr->tr_status = TASK_ST_FAILED;
		out = result != NULL ? json_pack("{s:i, s:s}", "code",
		    JSONRPC_INTERNAL_ERROR, "message", "Internal error: the "
		    "workflow answered what a task cannot hold") :
		    json_pack("{s:i, s:s}", "code", code, "message",
		    message != NULL ? message : "");
	}
	tr->tr_out = out;
	tr->tr_updated_ms = store_now_ms();
	log_debug("composite %s: task %.16s... %s", ct->ct_co->co_name,
	    ct->ct_id, task_status_name(tr->tr_status));
	ctask_write(ct, 1);
}

/* a tasks/update's run restored from its handle: acknowledged (the
 * request is needed no more) */
static void
ctask_resumed(void *arg)
{
	struct ctask *ct = arg;

	ctask_answer(ct, json_object(), JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory");
}

static void
ctask_drop_notify(void *arg, json_t *msg)
{
	/* progress is not sent for tasks (SEP-2663): tasks/get polls */
	(void)arg;
	json_decref(msg);
}

/* a tick's read: a cancel asked, or the lease renewed */
static void
ctask_ticked(void *arg, int rc, const struct task_rec *tr)
{
	struct ctask	*ct = arg;
	struct crun	*run = ct->ct_run;

	ct->ct_busy = 0;
	if (run == NULL) {
		ctask_settle(ct);
		return;
	}
	if (rc == 0 && tr->tr_cancel) {
		log_debug("composite %s: task %.16s... cancelled",
		    ct->ct_co->co_name, ct->ct_id);
		ct->ct_run = NULL;
		if (ct->ct_tick != NULL)
			evtimer_del(ct->ct_tick);
		composite_run_cancel(run, "the task was cancelled");
		task_rec_clear(&ct->ct_rec);
		ct->ct_rec.tr_status = TASK_ST_CANCELLED;
		ct->ct_rec.tr_updated_ms = store_now_ms();
		ctask_write(ct, 1);
		return;
	}
	ct->ct_rec.tr_lease_ms = store_now_ms() + CTASK_LEASE_MS;
	ctask_write(ct, 0);
}

static void
ctask_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct ctask *ct = arg;

	(void)fd;
	(void)ev;
	if (ct->ct_busy || ct->ct_run == NULL)
		return;
	ct->ct_busy = 1;
	if (task_store->ts_get(ct->ct_w, ct->ct_id, ctask_ticked, ct) == -1)
		ctask_ticked(ct, -1, NULL);
}

/* the record written: the run starts, the client gets its task */
static void
ctask_recorded(void *arg, int rc)
{
	static const struct composite_client cc0 = {
		ctask_drop_notify, NULL, ctask_done, NULL, NULL, NULL,
		ctask_resumed
	};
	struct ctask		*ct = arg;
	struct composite_client	 cc = cc0;
	struct timeval		 tv = { CTASK_TICK_MS / 1000,
				    (CTASK_TICK_MS % 1000) * 1000 };
	json_t			*res;

	ct->ct_busy = 0;
	if (rc != 0 || ct->ct_answer == NULL) {
		/* not written, or its client went first: no run */
		ct->ct_ended = 1;
		ctask_answer(ct, NULL, JSONRPC_INTERNAL_ERROR, "Internal "
		    "error: the task could not be recorded");
		ctask_settle(ct);
		return;
	}
	cc.cc_arg = ct;
	if ((ct->ct_tick = event_new(ct->ct_w->w_base, -1, EV_PERSIST,
	    ctask_on_tick, ct)) != NULL)
		(void)evtimer_add(ct->ct_tick, &tv);
	ct->ct_starting = 1;
	if (ct->ct_resumed) {
		/* acknowledged once the handle's claim restored the run
		 * (ctask_resumed()), or it ended (ctask_done()): the
		 * claim, later with Redis, needs the request */
		composite_run_start(ct->ct_w, ct->ct_view, ct->ct_req,
		    PROTO_ERA_MODERN, ct->ct_co, ct->ct_params, &cc,
		    &ct->ct_run);
		ct->ct_starting = 0;
		ctask_settle(ct);
		return;
	}
	/* the task as created; a run that ends at once has written its
	 * outcome by the time a tasks/get comes */
	res = task_rec_detailed(&ct->ct_rec, ct->ct_id, store_now_ms());
	composite_run_start(ct->ct_w, ct->ct_view, ct->ct_req,
	    PROTO_ERA_MODERN, ct->ct_co, ct->ct_params, &cc, &ct->ct_run);
	ct->ct_starting = 0;
	if (res != NULL)
		(void)json_object_set_new(res, "resultType",
		    json_string("task"));
	ctask_answer(ct, res, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory");
	ctask_settle(ct);
}

/* a task's shell, working under the runner's lease from now */
static struct ctask *
ctask_new(struct worker *w, json_t *view, struct httpd_req *req,
    const struct composite *co, json_t *params, composite_task_answer answer,
    void *arg)
{
	struct ctask	*ct;

	if ((ct = calloc(1, sizeof(*ct))) == NULL) {
		answer(arg, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return NULL;
	}
	worker_request_hold(w);
	ct->ct_w = w;
	ct->ct_co = co;
	ct->ct_answer = answer;
	ct->ct_arg = arg;
	ct->ct_view = json_incref(view);
	ct->ct_params = json_incref(params);
	ct->ct_req = req;
	return ct;
}

/* the record written (put: a new one), then the run started */
static void
ctask_record(struct ctask *ct, int put, struct ctask **slot)
{
	struct task_rec	*tr = &ct->ct_rec;
	uint64_t	 now = store_now_ms();

	tr->tr_status = TASK_ST_WORKING;
	tr->tr_updated_ms = now;
	tr->tr_lease_ms = now + CTASK_LEASE_MS;
	(void)snprintf(tr->tr_bid, sizeof(tr->tr_bid), "run");
	task_rec_clear(tr);
	ct->ct_slot = slot;
	*slot = ct;
	ct->ct_busy = 1;
	if ((put ? task_store->ts_put : task_store->ts_set)(ct->ct_w,
	    ct->ct_id, tr, ctask_ttl_left(ct), ctask_recorded, ct) == -1)
		ctask_recorded(ct, -1);
}

void
composite_task_start(struct worker *w, json_t *view, struct httpd_req *req,
    const struct composite *co, json_t *params, composite_task_answer answer,
    void *arg, struct ctask **slot)
{
	struct ctask	*ct;
	struct task_rec	*tr;
	uint64_t	 now = store_now_ms(), ttl;

	if ((ct = ctask_new(w, view, req, co, params, answer, arg)) == NULL)
		return;
	ttl = co->co_timeout_ms + CTASK_KEEP_MS;
	if (ttl > TASK_TTL_MAX_MS)
		ttl = TASK_TTL_MAX_MS;
	ct->ct_expires_ms = now + ttl;
	tr = &ct->ct_rec;
	(void)snprintf(tr->tr_owner, sizeof(tr->tr_owner), "%s",
	    auth_scope(req));
	(void)snprintf(tr->tr_backend, sizeof(tr->tr_backend), "%s",
	    TASK_WORKFLOW);
	(void)snprintf(tr->tr_tool, sizeof(tr->tr_tool), "%s", co->co_name);
	tr->tr_created_ms = now;
	tr->tr_ttl_ms = ttl;
	if (task_id_new(ct->ct_id) == -1) {
		ct->ct_ended = 1;
		ctask_answer(ct, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: no random bits for a task id");
		ctask_settle(ct);
		return;
	}
	ctask_record(ct, 1, slot);
}

void
composite_task_resume(struct worker *w, json_t *view, struct httpd_req *req,
    const struct composite *co, const char *id, const struct task_rec *rec,
    json_t *params, composite_task_answer answer, void *arg,
    struct ctask **slot)
{
	struct ctask	*ct;

	if ((ct = ctask_new(w, view, req, co, params, answer, arg)) == NULL)
		return;
	ct->ct_resumed = 1;
	(void)snprintf(ct->ct_id, sizeof(ct->ct_id), "%s", id);
	ct->ct_rec = *rec;
	ct->ct_rec.tr_out = NULL;	/* the caller's */
	ct->ct_rec.tr_cancel = 0;
	ct->ct_expires_ms = rec->tr_created_ms + rec->tr_ttl_ms;
	ctask_record(ct, 0, slot);
}

void
composite_task_detach(struct ctask *ct)
{
	struct crun *run;

	if (ct == NULL)
		return;
	/* the request is gone before its answer: a run not yet started
	 * never starts, and a tasks/update's claim still out (it reads
	 * the request) is dropped: its record reads failed once the
	 * lease runs out */
	ct->ct_answer = NULL;
	ct->ct_slot = NULL;
	ct->ct_req = NULL;
	if (ct->ct_run != NULL) {
		run = ct->ct_run;
		ct->ct_run = NULL;
		ct->ct_ended = 1;
		composite_run_cancel(run, "the request ended");
	}
	ctask_settle(ct);
}
