/*
 * What a 2025-11-25 client and a backend ask each other through vmcpd
 * during a call (the codec's relay of input, legacy.c): a backend's
 * request sent on the call's SSE stream under an id of vmcpd's and the
 * client's answer sent back to the backend that asked, from any worker
 * or node (the pending record); and a 2026-07-28 backend's
 * input_required, which vmcpd, the client of that backend, fulfils by
 * asking the client over its session (mrtr.c) and retrying the call.
 */
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "proto/mrequest.h"
#include "worker/http/http_reply.h"
#include "worker/pipeline/pipeline.h"
#include "worker/relay/mrtr.h"
#include "worker/relay/pending_redis.h"
#include "worker/request/legacy_req.h"
#include "worker/upstream/upstream.h"

#define LEGACY_MRTR_SHEDS	3

/*
 * The backend asks the client something mid-call: relay it on this
 * request's SSE stream under an id of vmcpd's.  The answer may come
 * to any worker: the pending record in the store tells that worker
 * where it goes.
 */
int
legacy_relay_request(struct mcp_req *mr, json_t *msg, const char *bsid,
    const char *version, char *why, size_t whylen)
{
	struct worker	*w = mr->mr_r.r_w;
	const char	*method, *cap;
	json_t		*out = NULL, *rec = NULL;
	char		 id[64], *buf = NULL;
	unsigned char	 r[16];
	size_t		 len, i;
	uint64_t	 now = store_now_ms();
	int		 rc = -1;

	method = json_string_value(json_object_get(msg, "method"));
	if (method == NULL || (cap = proto_request_capability(method)) ==
	    NULL) {
		(void)snprintf(why, whylen, "vmcpd does not relay %s to "
		    "clients", method != NULL ? method : "this request");
		return -1;
	}
	if (!json_is_object(json_object_get(mr->mr_r.r_caps, cap))) {
		(void)snprintf(why, whylen, "the client did not declare the "
		    "%s capability", cap);
		return -1;
	}
	if (mr->mr_r.r_req == NULL || getrandom(r, sizeof(r), 0) !=
	    (ssize_t)sizeof(r)) {
		(void)snprintf(why, whylen, "the client is gone");
		return -1;
	}
	(void)snprintf(id, sizeof(id), "vmcpd-r-");
	for (i = 0; i < sizeof(r); i++)
		(void)snprintf(id + 8 + 2 * i, 3, "%02x", r[i]);
	rec = json_pack("{s:s, s:s, s:s*, s:s*, s:O}", "sid", mr->mr_sid,
	    "b", mr->mr_r.r_be->cb_name, "bsid", bsid, "pv", version,
	    "id", json_object_get(msg, "id"));
	if (rec == NULL || (buf = jsonrpc_dump(rec, &len)) == NULL ||
	    store_put(w->w_store, STORE_PENDING, id, strlen(id), buf, len,
	    now + w->w_conf->cf_pending_timeout_ms, now) == -1) {
		(void)snprintf(why, whylen, "vmcpd could not record the "
		    "request");
		goto done;
	}
	/* with Redis, the answer may reach another node */
	if (pend_redis_on())
		pend_redis_put(mr->mr_sid, id, buf, len,
		    w->w_conf->cf_pending_timeout_ms);
	if ((out = json_copy(msg)) == NULL ||
	    json_object_set_new(out, "id", json_string(id)) == -1) {
		(void)snprintf(why, whylen, "out of memory");
		goto done;
	}
	(void)legacy_stream_open(mr);
	(void)legacy_stream_send(mr, out);
	log_debug("relayed %s from %s to session %.8s... as %s", method,
	    mr->mr_r.r_be->cb_name, mr->mr_sid, id);
	rc = 0;
done:
	free(buf);
	json_decref(rec);
	json_decref(out);
	return rc;
}

/*
 * The pending record p answered by out (the client's answer, without
 * its id): sent to the backend that asked, under the backend's own id.
 * -1: p is not sid's.
 */
static int
legacy_relay_answer(struct worker *w, const char *sid, json_t *p, json_t *out)
{
	const char			*psid, *b, *bsid = NULL, *pv = NULL;
	json_t				*bid;
	const struct config_backend	*be;

	if (p == NULL || json_unpack(p, "{s:s, s:s, s?s, s?s, s:o}", "sid",
	    &psid, "b", &b, "bsid", &bsid, "pv", &pv, "id", &bid) == -1 ||
	    strcmp(psid, sid) != 0 ||
	    (be = config_backend_find(w->w_conf, b)) == NULL) {
		/* another session's request: not this client's to answer */
		log_warnx("session %.8s... answered a request that is not "
		    "its own", sid);
		return -1;
	}
	if (json_object_set(out, "id", bid) == 0)
		upstream_post(w, be, bsid, pv, out);
	return 0;
}

/* a client's answer waiting for its record from Redis (the POST held) */
struct legacy_rtake {
	struct worker		*lt_w;
	struct httpd_req	*lt_req;
	json_t			*lt_out;
	char			 lt_sid[SESSION_ID_LEN + 1];
};

static void
legacy_rtake_done(void *arg, const char *rec, size_t len, int err)
{
	struct legacy_rtake	*lt = arg;
	struct worker		*w = lt->lt_w;
	json_t			*p;
	json_error_t		 jerr;

	if (err == -1)
		pend_redis_unavailable(lt->lt_req);
	else {
		if (rec == NULL)
			log_debug("session %.8s... answered an unknown "
			    "request", lt->lt_sid);
		else {
			p = json_loadb(rec, len, JSON_ALLOW_NUL, &jerr);
			(void)legacy_relay_answer(w, lt->lt_sid, p,
			    lt->lt_out);
			json_decref(p);
		}
		front_reply_empty(lt->lt_req, 202);
	}
	json_decref(lt->lt_out);
	free(lt);
	worker_request_release(w, __func__);
}

/*
 * The client answers a relayed request: send it to the backend that
 * asked, from whichever worker, or node (the record from Redis then).
 * 0: the caller answers 202; 1: answered here, later.
 */
int
legacy_client_answer(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, struct session *s)
{
	struct store_rec	 rec;
	struct legacy_rtake	*lt;
	json_t			*p, *out;
	json_error_t		 jerr;
	const char		*id;
	int			 found;

	switch (mrtr_answer(w, req, s->s_id, msg)) {
	case 0:
		return 0;	/* for a 2026-07-28 backend's input request */
	case 2:
		return 1;	/* the same, answered once Redis has it */
	}
	id = json_string_value(msg->jm_id);
	if (id == NULL || strncmp(id, "vmcpd-r-", 8) != 0) {
		log_debug("session %.8s... answered an unknown request",
		    s->s_id);
		return 0;
	}
	if ((out = json_pack("{s:s, s:O}", "jsonrpc", "2.0",
	    msg->jm_kind == JSONRPC_ERROR ? "error" : "result",
	    msg->jm_kind == JSONRPC_ERROR ? msg->jm_error :
	    msg->jm_result)) == NULL)
		return 0;
	memset(&rec, 0, sizeof(rec));
	found = store_get(w->w_store, STORE_PENDING, id, strlen(id),
	    store_now_ms(), &rec) == 0;
	if (found) {
		p = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
		store_rec_clear(&rec);
		if (legacy_relay_answer(w, s->s_id, p, out) == 0) {
			(void)store_del(w->w_store, STORE_PENDING, id,
			    strlen(id));
			if (pend_redis_on())
				pend_redis_del(s->s_id, id);
		}
		json_decref(p);
		json_decref(out);
		return 0;
	}
	if (!pend_redis_on()) {
		log_debug("session %.8s... answered an unknown request",
		    s->s_id);
		json_decref(out);
		return 0;
	}
	/* relayed by another node, perhaps: its record is in Redis */
	if ((lt = calloc(1, sizeof(*lt))) == NULL) {
		json_decref(out);
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return 1;
	}
	lt->lt_w = w;
	lt->lt_req = req;
	lt->lt_out = out;
	(void)snprintf(lt->lt_sid, sizeof(lt->lt_sid), "%s", s->s_id);
	if (pend_redis_take(s->s_id, id, legacy_rtake_done, lt) == -1) {
		json_decref(out);
		free(lt);
		pend_redis_unavailable(req);
		return 1;
	}
	worker_request_hold(w);
	return 1;
}

/* an input request for the client, on this request's SSE stream */
int
legacy_mrtr_send(void *arg, json_t *msg)
{
	struct mcp_req *mr = arg;

	if (legacy_stream_open(mr) == -1 || mr->mr_cut)
		return -1;
	return legacy_stream_send(mr, msg);
}

static void
legacy_mrtr_answered(void *arg, json_t *responses, const char *err)
{
	struct mcp_req	*mr = arg;
	char		 msg[600];

	mr->mr_wait = NULL;
	if (responses == NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", err);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	json_decref(mr->mr_responses);
	mr->mr_responses = json_incref(responses);
	pipeline_forward(&mr->mr_r, 0);
}

/*
 * input_required: vmcpd is the client of the backend here, so it
 * fulfils the input requests over the Legacy session and retries, a
 * bounded number of times.
 */
void
legacy_mrtr_round(struct mcp_req *mr, json_t *result)
{
	json_t	*ir, *state;
	char	 why[300], msg[600];

	if (++mr->mr_rounds > MRTR_ROUNDS) {
		(void)snprintf(msg, sizeof(msg), "Internal error: backend %s "
		    "still asks for input after %d rounds", mr->mr_r.r_be->cb_name,
		    MRTR_ROUNDS);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	if (mrtr_input_required(result, &ir, &state) == -1) {
		(void)snprintf(msg, sizeof(msg), "Internal error: backend %s "
		    "sent an invalid input_required result", mr->mr_r.r_be->cb_name);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	json_decref(mr->mr_state);
	mr->mr_state = json_incref(state);
	if (json_object_size(ir) == 0) {
		/* load shedding: retry with the state alone, a few times */
		if (++mr->mr_sheds > LEGACY_MRTR_SHEDS) {
			(void)snprintf(msg, sizeof(msg), "Internal error: "
			    "backend %s kept deferring the request (%d rounds "
			    "without input requests)", mr->mr_r.r_be->cb_name,
			    LEGACY_MRTR_SHEDS);
			legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
			return;
		}
		json_decref(mr->mr_responses);
		mr->mr_responses = NULL;
		pipeline_forward(&mr->mr_r, 0);
		return;
	}
	if ((mr->mr_wait = mrtr_ask(mr->mr_r.r_w, mr->mr_sid, mr->mr_r.r_caps,
	    ir, legacy_mrtr_send, legacy_mrtr_answered, mr, why,
	    sizeof(why))) == NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: backend %s: "
		    "%s", mr->mr_r.r_be->cb_name, why);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR, msg);
	}
}
