/*
 * MRTR for Legacy clients (MCP 2026-07-28, Multi Round-Trip Requests;
 * docs/ARCHITECTURE.md, MRTR): a 2026-07-28
 * backend answers input_required, and vmcpd asks the 2025-11-25 client
 * itself, as ordinary server-to-client requests on the POST's SSE
 * stream.  The client may answer on any worker: the pending record in
 * the store names the worker waiting for it, which the answering
 * worker wakes (WAKE_MRTR, wake.h) after writing the answer into the
 * record.  Once every input request is answered the caller retries the
 * backend with inputResponses.  Only a request that may carry a round
 * (tools/call, prompts/get, resources/read: MCP_MF_MRTR) gets here: the
 * upstream edge takes input_required to any other as an invalid answer
 * (upstream_classify()).
 */
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/http/httpd.h"
#include "worker/relay/pending_redis.h"
#include "worker/process/wake.h"
#include "proto/jsonrpc.h"
#include "proto/mrequest.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/relay/mrtr.h"
#include "worker/state/session.h"

#define MRTR_PREFIX	"vmcpd-m-"
#define MRTR_ID_LEN	(8 + 32)

struct mrtr_ask {
	char	 ma_id[MRTR_ID_LEN + 1];
	char	*ma_key;		/* the backend's inputRequests key */
	int	 ma_done;
};

struct mrtr_wait {
	TAILQ_ENTRY(mrtr_wait)	 mw_entry;
	struct worker		*mw_w;
	char			 mw_sid[SESSION_ID_LEN + 1];
	struct mrtr_ask		*mw_asks;
	size_t			 mw_nasks;
	size_t			 mw_left;
	json_t			*mw_responses;
	struct event		*mw_timer;	/* each second */
	uint64_t		 mw_deadline;
	mrtr_done_cb		 mw_cb;
	void			*mw_arg;
};

static TAILQ_HEAD(, mrtr_wait) mrtr_waits = TAILQ_HEAD_INITIALIZER(mrtr_waits);

/*
 * Where asks are shared (sessionStorage.provider), chosen once by
 * mrtr_init(): nowhere beyond this host's store, or Redis, so that the
 * client's answer may reach any node (pending_redis.h).  ms_ask: an ask
 * this host recorded, told; ms_forget: an ask ended here, its shared
 * copy gone; ms_poll: an answer given on another node, read (its
 * wake-up lost); ms_answer: an answer to an id not in this host's
 * store, mrtr_answer()'s 0 or 2.
 */
struct mrtr_store {
	void	(*ms_ask)(const char *sid, const char *id, uint64_t ttl_ms);
	void	(*ms_forget)(const char *sid, const char *id);
	void	(*ms_poll)(struct worker *, const char *id);
	int	(*ms_answer)(struct worker *, struct httpd_req *,
		    const char *sid, const char *id,
		    const struct jsonrpc_msg *);
};
static const struct mrtr_store mrtr_store_lmdb, mrtr_store_redis;
static const struct mrtr_store *mrtr_store = &mrtr_store_lmdb;

static void
mrtr_free(struct mrtr_wait *mw)
{
	size_t i;

	TAILQ_REMOVE(&mrtr_waits, mw, mw_entry);
	for (i = 0; i < mw->mw_nasks; i++) {
		if (!mw->mw_asks[i].ma_done && mw->mw_asks[i].ma_id[0]) {
			(void)store_del(mw->mw_w->w_store, STORE_PENDING,
			    mw->mw_asks[i].ma_id, strlen(mw->mw_asks[i].ma_id));
			mrtr_store->ms_forget(mw->mw_sid,
			    mw->mw_asks[i].ma_id);
		}
		free(mw->mw_asks[i].ma_key);
	}
	free(mw->mw_asks);
	json_decref(mw->mw_responses);
	if (mw->mw_timer != NULL)
		event_free(mw->mw_timer);
	free(mw);
}

int
mrtr_input_required(const json_t *result, json_t **irp, json_t **statep)
{
	json_t	*ir, *state;

	*irp = ir = json_object_get(result, "inputRequests");
	*statep = state = json_object_get(result, "requestState");
	if ((ir != NULL && !json_is_object(ir)) || (state != NULL &&
	    !json_is_string(state)) || (json_object_size(ir) == 0 &&
	    state == NULL))
		return -1;
	return 0;
}

void
mrtr_cancel(struct mrtr_wait *mw)
{
	if (mw != NULL)
		mrtr_free(mw);
}

/* the outcome, once; mw is gone afterwards */
static void
mrtr_finish(struct mrtr_wait *mw, json_t *responses, const char *err)
{
	mrtr_done_cb	 cb = mw->mw_cb;
	void		*arg = mw->mw_arg;

	json_incref(responses);
	mrtr_free(mw);
	cb(arg, responses, err);
	json_decref(responses);
}

static void	mrtr_take(struct worker *, const char *);
static struct mrtr_wait *mrtr_find(const char *, size_t *);

/*
 * Each second: the store, in case a wake-up datagram was lost, and the
 * deadline.  Ids are copied first, as taking an answer may end the wait.
 */
static void
mrtr_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct mrtr_wait	*mw = arg;
	struct worker		*w = mw->mw_w;
	char			(*ids)[MRTR_ID_LEN + 1];
	size_t			 i, n = 0;

	(void)fd;
	(void)ev;
	if (store_now_ms() >= mw->mw_deadline) {
		mrtr_finish(mw, NULL, "the client did not answer the "
		    "backend's input requests in time (pendingTimeout)");
		return;
	}
	if ((ids = calloc(mw->mw_nasks, sizeof(*ids))) == NULL)
		return;
	for (i = 0; i < mw->mw_nasks; i++)
		if (!mw->mw_asks[i].ma_done)
			memcpy(ids[n++], mw->mw_asks[i].ma_id,
			    sizeof(ids[0]));
	for (i = 0; i < n; i++)
		mrtr_take(w, ids[i]);
	/* answered on another node, its wake-up lost */
	for (i = 0; i < n; i++)
		mrtr_store->ms_poll(w, ids[i]);
	free(ids);
}

struct mrtr_wait *
mrtr_ask(struct worker *w, const char *sid, const json_t *client_caps,
    const json_t *input_requests, mrtr_send_cb send, mrtr_done_cb cb,
    void *arg, char *why, size_t whylen)
{
	struct mrtr_wait	*mw;
	struct mrtr_ask		*ma;
	struct timeval		 tv;
	const char		*key, *method, *cap;
	json_t			*ir, *rec = NULL, *out = NULL;
	unsigned char		 r[16];
	char			*buf;
	size_t			 i, len;
	uint64_t		 now = store_now_ms();

	if ((mw = calloc(1, sizeof(*mw))) == NULL ||
	    (mw->mw_asks = calloc(json_object_size(input_requests) + 1,
	    sizeof(*mw->mw_asks))) == NULL ||
	    (mw->mw_responses = json_object()) == NULL) {
		if (mw != NULL) {
			free(mw->mw_asks);
			free(mw);
		}
		(void)snprintf(why, whylen, "out of memory");
		return NULL;
	}
	mw->mw_w = w;
	(void)snprintf(mw->mw_sid, sizeof(mw->mw_sid), "%s", sid);
	mw->mw_cb = cb;
	mw->mw_arg = arg;
	TAILQ_INSERT_TAIL(&mrtr_waits, mw, mw_entry);
	json_object_foreach((json_t *)input_requests, key, ir) {
		method = json_string_value(json_object_get(ir, "method"));
		if ((cap = proto_request_capability(method)) == NULL) {
			(void)snprintf(why, whylen, "the backend sent an input "
			    "request that is not elicitation, sampling or "
			    "roots (%.64s)", method != NULL ? method : "none");
			goto fail;
		}
		/* rule 7: mirrored capabilities make this the backend's
		 * fault, but the client must not get what it cannot do */
		if (!json_is_object(json_object_get(client_caps, cap))) {
			(void)snprintf(why, whylen, "the backend asked for %s, "
			    "which the client did not declare", cap);
			goto fail;
		}
		ma = &mw->mw_asks[mw->mw_nasks];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r) ||
		    (ma->ma_key = strdup(key)) == NULL) {
			(void)snprintf(why, whylen, "out of memory");
			goto fail;
		}
		mw->mw_nasks++;
		(void)snprintf(ma->ma_id, sizeof(ma->ma_id), MRTR_PREFIX);
		for (i = 0; i < sizeof(r); i++)
			(void)snprintf(ma->ma_id + 8 + 2 * i, 3, "%02x", r[i]);
		rec = json_pack("{s:s, s:b, s:i}", "sid", sid, "mrtr", 1,
		    "pid", (int)w->w_pid);
		if (rec == NULL || (buf = jsonrpc_dump(rec, &len)) == NULL) {
			json_decref(rec);
			(void)snprintf(why, whylen, "out of memory");
			goto fail;
		}
		json_decref(rec);
		if (store_put(w->w_store, STORE_PENDING, ma->ma_id,
		    strlen(ma->ma_id), buf, len,
		    now + w->w_conf->cf_pending_timeout_ms, now) == -1) {
			free(buf);
			(void)snprintf(why, whylen, "vmcpd could not record "
			    "the input request");
			goto fail;
		}
		free(buf);
		/* shared, the answer may reach another node */
		mrtr_store->ms_ask(sid, ma->ma_id,
		    w->w_conf->cf_pending_timeout_ms);
		out = json_pack("{s:s, s:s, s:s, s:O*}", "jsonrpc", "2.0", "id",
		    ma->ma_id, "method", method, "params",
		    json_object_get(ir, "params"));
		if (out == NULL || send(arg, out) == -1) {
			json_decref(out);
			(void)snprintf(why, whylen, "the client is gone");
			goto fail;
		}
		json_decref(out);
	}
	if ((mw->mw_left = mw->mw_nasks) == 0) {
		(void)snprintf(why, whylen, "no input requests");
		goto fail;
	}
	mw->mw_deadline = now + w->w_conf->cf_pending_timeout_ms;
	tv.tv_sec = 1;
	tv.tv_usec = 0;
	if ((mw->mw_timer = event_new(w->w_base, -1, EV_PERSIST, mrtr_on_tick,
	    mw)) == NULL || event_add(mw->mw_timer, &tv) == -1) {
		(void)snprintf(why, whylen, "out of memory");
		goto fail;
	}
	return mw;
fail:
	mrtr_free(mw);
	return NULL;
}

/* this worker's wait for an id, and which of its asks */
static struct mrtr_wait *
mrtr_find(const char *id, size_t *idx)
{
	struct mrtr_wait	*mw;
	size_t			 i;

	TAILQ_FOREACH(mw, &mrtr_waits, mw_entry)
		for (i = 0; i < mw->mw_nasks; i++)
			if (!mw->mw_asks[i].ma_done &&
			    strcmp(mw->mw_asks[i].ma_id, id) == 0) {
				*idx = i;
				return mw;
			}
	return NULL;
}

/*
 * The answer p ({result} or {error}) to ask i of mw: taken, and the
 * backend retried once all are in.  0, or -1 (p holds no answer).
 */
static int
mrtr_apply(struct mrtr_wait *mw, size_t i, json_t *p)
{
	json_t		*result, *error;
	char		 why[300];
	const char	*m;

	result = json_object_get(p, "result");
	error = json_object_get(p, "error");
	if (result == NULL && error == NULL)
		return -1;	/* not answered yet: a stray wake-up */
	(void)store_del(mw->mw_w->w_store, STORE_PENDING, mw->mw_asks[i].ma_id,
	    strlen(mw->mw_asks[i].ma_id));
	mw->mw_asks[i].ma_done = 1;
	if (error != NULL) {
		m = json_string_value(json_object_get(error, "message"));
		(void)snprintf(why, sizeof(why), "the client refused the "
		    "backend's input request: %.200s", m != NULL ? m : "error");
		mrtr_finish(mw, NULL, why);
		return 0;
	}
	if (json_object_set(mw->mw_responses, mw->mw_asks[i].ma_key,
	    result) == -1) {
		mrtr_finish(mw, NULL, "out of memory");
		return 0;
	}
	if (--mw->mw_left == 0)
		mrtr_finish(mw, mw->mw_responses, NULL);
	return 0;
}

/* the answer is in the store: take it */
static void
mrtr_take(struct worker *w, const char *id)
{
	struct mrtr_wait	*mw;
	struct store_rec	 rec;
	json_t			*p;
	json_error_t		 jerr;
	size_t			 i;

	if ((mw = mrtr_find(id, &i)) == NULL)
		return;
	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_PENDING, id, strlen(id),
	    store_now_ms(), &rec) != 0)
		return;
	p = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
	store_rec_clear(&rec);
	/* answered here: the shared copy of the ask goes too */
	if (json_object_get(p, "result") != NULL ||
	    json_object_get(p, "error") != NULL)
		mrtr_store->ms_forget(mw->mw_sid, id);
	(void)mrtr_apply(mw, i, p);
	json_decref(p);
}

/* an answer read from Redis, for the id in the argument */
struct mrtr_rtake {
	struct worker	*rt_w;
	char		 rt_id[MRTR_ID_LEN + 1];
};

static void
mrtr_redis_taken(void *arg, const char *rec, size_t len, int err)
{
	struct mrtr_rtake	*rt = arg;
	struct mrtr_wait	*mw;
	json_t			*p;
	json_error_t		 jerr;
	size_t			 i;

	/* Redis down: the next tick reads again */
	if (err == 0 && rec != NULL && (mw = mrtr_find(rt->rt_id, &i)) !=
	    NULL) {
		p = json_loadb(rec, len, JSON_ALLOW_NUL, &jerr);
		if (mrtr_apply(mw, i, p) == -1)
			log_warnx("an answer to %s in redis is not one",
			    rt->rt_id);
		json_decref(p);
	}
	free(rt);
}

void
mrtr_redis_wake(struct worker *w, const char *id)
{
	struct mrtr_wait	*mw;
	struct mrtr_rtake	*rt;
	size_t			 i;

	if ((mw = mrtr_find(id, &i)) == NULL ||
	    (rt = calloc(1, sizeof(*rt))) == NULL)
		return;
	rt->rt_w = w;
	(void)snprintf(rt->rt_id, sizeof(rt->rt_id), "%s", id);
	if (pend_redis_take_answer(mw->mw_sid, id, mrtr_redis_taken, rt) == -1)
		free(rt);
}

/* a client's answer given to Redis for another node: the POST waits */
struct mrtr_rans {
	struct worker		*ra_w;
	struct httpd_req	*ra_req;
	char			 ra_sid[SESSION_ID_LEN + 1];
};

static void
mrtr_redis_answered(void *arg, int rc)
{
	struct mrtr_rans	*ra = arg;
	struct worker		*w = ra->ra_w;

	if (rc == -2)
		pend_redis_unavailable(ra->ra_req);
	else {
		if (rc != 1)
			log_warnx("session %.8s... answered an input request "
			    "that is not its own, or twice", ra->ra_sid);
		front_reply_empty(ra->ra_req, 202);
	}
	free(ra);
	worker_request_release(w, __func__);
}

/* not in this host's store: another node may have asked (2), or not */
static int
mrtr_answer_redis(struct worker *w, struct httpd_req *req, const char *sid,
    const char *id, const struct jsonrpc_msg *msg)
{
	struct mrtr_rans	*ra;
	json_t			*p;
	char			*buf = NULL;
	size_t			 len;

	if ((p = json_pack("{s:O}", msg->jm_kind == JSONRPC_ERROR ? "error" :
	    "result", msg->jm_kind == JSONRPC_ERROR ? msg->jm_error :
	    msg->jm_result)) == NULL || (buf = jsonrpc_dump(p, &len)) == NULL ||
	    (ra = calloc(1, sizeof(*ra))) == NULL) {
		json_decref(p);
		free(buf);
		return 0;
	}
	json_decref(p);
	ra->ra_w = w;
	ra->ra_req = req;
	(void)snprintf(ra->ra_sid, sizeof(ra->ra_sid), "%s", sid);
	if (pend_redis_answer(sid, id, buf, len, mrtr_redis_answered,
	    ra) == -1) {
		free(buf);
		free(ra);
		pend_redis_unavailable(req);
		return 2;
	}
	free(buf);
	worker_request_hold(w);
	return 2;
}

static void
mrtr_lmdb_ask(const char *sid, const char *id, uint64_t ttl_ms)
{
	(void)sid;
	(void)id;
	(void)ttl_ms;
}

static void
mrtr_lmdb_forget(const char *sid, const char *id)
{
	(void)sid;
	(void)id;
}

static void
mrtr_lmdb_poll(struct worker *w, const char *id)
{
	(void)w;
	(void)id;
}

/* one host: an id not in its store was never asked */
static int
mrtr_lmdb_answer(struct worker *w, struct httpd_req *req, const char *sid,
    const char *id, const struct jsonrpc_msg *msg)
{
	(void)w;
	(void)req;
	(void)id;
	(void)msg;
	log_debug("session %.8s... answered an unknown input request", sid);
	return 0;
}

static const struct mrtr_store mrtr_store_lmdb = {
	mrtr_lmdb_ask,
	mrtr_lmdb_forget,
	mrtr_lmdb_poll,
	mrtr_lmdb_answer
};
static const struct mrtr_store mrtr_store_redis = {
	pend_redis_ask,
	pend_redis_del,
	mrtr_redis_wake,
	mrtr_answer_redis
};

/* after pend_redis_init(): where asks are shared */
void
mrtr_init(struct worker *w)
{
	(void)w;
	mrtr_store = pend_redis_on() ? &mrtr_store_redis : &mrtr_store_lmdb;
}

/*
 * A Legacy client's answer to an id of ours: record it for the worker
 * waiting, then wake that worker.  0 if the id was an MRTR one of this
 * session (handled), 1 if not an MRTR id at all.
 */
int
mrtr_answer(struct worker *w, struct httpd_req *req, const char *sid,
    const struct jsonrpc_msg *msg)
{
	struct store_rec	 rec;
	json_t			*p;
	json_error_t		 jerr;
	const char		*id, *psid;
	char			*buf;
	size_t			 len;
	int			 pid;
	uint64_t		 now = store_now_ms();

	id = json_string_value(msg->jm_id);
	if (id == NULL || strncmp(id, MRTR_PREFIX, 8) != 0)
		return 1;
	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_PENDING, id, strlen(id), now,
	    &rec) != 0) {
		return mrtr_store->ms_answer(w, req, sid, id, msg);
	}
	p = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
	store_rec_clear(&rec);
	psid = json_string_value(json_object_get(p, "sid"));
	pid = (int)json_integer_value(json_object_get(p, "pid"));
	if (psid == NULL || strcmp(psid, sid) != 0 ||
	    json_object_get(p, "result") != NULL ||
	    json_object_get(p, "error") != NULL) {
		log_warnx("session %.8s... answered an input request that is "
		    "not its own, or twice", sid);
		json_decref(p);
		return 0;
	}
	if (json_object_set(p, msg->jm_kind == JSONRPC_ERROR ? "error" :
	    "result", msg->jm_kind == JSONRPC_ERROR ? msg->jm_error :
	    msg->jm_result) == -1 || (buf = jsonrpc_dump(p, &len)) == NULL) {
		json_decref(p);
		return 0;
	}
	json_decref(p);
	if (store_put(w->w_store, STORE_PENDING, id, strlen(id), buf, len,
	    now + w->w_conf->cf_pending_timeout_ms, now) == -1)
		log_warnx("cannot record the answer to %s", id);
	free(buf);
	if (pid == (int)w->w_pid) {
		mrtr_take(w, id);
		return 0;
	}
	wake_send((pid_t)pid, WAKE_MRTR, id, NULL);
	return 0;
}

/* WAKE_MRTR from the worker that took the answer */
void
mrtr_wake(struct worker *w, const char *id)
{
	mrtr_take(w, id);
}

void
mrtr_free_all(void)
{
	struct mrtr_wait *mw;

	while ((mw = TAILQ_FIRST(&mrtr_waits)) != NULL)
		mrtr_free(mw);
}
