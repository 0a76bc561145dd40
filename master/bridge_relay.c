/*
 * The bridge's relay: callers' requests written to the server under
 * bridge ids, and what the server writes routed back to its callers
 * (bridge.c describes the ids and the routing).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>

#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "shared/log.h"
#include "bridge_int.h"

static void	bridge_breq_free(struct breq *);

/*
 * Writing to the server
 */

int
bridge_server_write(struct bridge *b, const json_t *msg)
{
	char	*s;
	size_t	 len;
	int	 rc;

	if (b->b_state != SRV_STARTING && b->b_state != SRV_READY)
		return -1;
	if ((s = jsonrpc_dump(msg, &len)) == NULL)
		return -1;
	rc = b->b_up->up_write(b, s, len);
	free(s);
	return rc;
}

static void
bridge_server_answer(struct bridge *b, json_t *id, json_t *result)
{
	json_t *m;

	if ((m = jsonrpc_result_new(id, result)) == NULL)
		return;
	(void)bridge_server_write(b, m);
	json_decref(m);
}

void
bridge_server_error(struct bridge *b, json_t *id, int code, const char *msg)
{
	json_t *m;

	if ((m = jsonrpc_error_new(id, code, msg, NULL)) == NULL)
		return;
	(void)bridge_server_write(b, m);
	json_decref(m);
}

/*
 * Server requests awaiting a caller's answer
 */

void
bridge_srvreq_free(struct bridge *b, struct bsrvreq *sr)
{
	TAILQ_REMOVE(&b->b_srvreqs, sr, sr_entry);
	b->b_nsrvreqs--;
	json_decref(sr->sr_server_id);
	free(sr);
}

/* the owner ends: forget it; if the caller is gone, answer the server */
static void
bridge_srvreqs_orphan(struct bridge *b, struct breq *owner, int answer)
{
	struct bsrvreq *sr, *next;

	for (sr = TAILQ_FIRST(&b->b_srvreqs); sr != NULL; sr = next) {
		next = TAILQ_NEXT(sr, sr_entry);
		if (sr->sr_owner != owner)
			continue;
		sr->sr_owner = NULL;
		if (answer) {
			bridge_server_error(b, sr->sr_server_id,
			    JSONRPC_INTERNAL_ERROR, "the client is gone");
			bridge_srvreq_free(b, sr);
		}
	}
}

/*
 * Callers' requests
 */

static struct breq *
bridge_breq_by_bid(struct bridge *b, json_int_t bid)
{
	struct breq *r;

	TAILQ_FOREACH(r, &b->b_reqs, r_entry)
		if (r->r_bid != 0 && (json_int_t)r->r_bid == bid)
			return r;
	return NULL;
}

/* answer (final may be NULL: no answer) and forget the request */
static void
bridge_breq_end(struct breq *r, const json_t *final)
{
	if (r->r_req != NULL) {
		if (r->r_init) {
			if (final != NULL)
				bridge_reply_json(r->r_req, 200, final, NULL);
			else
				evhttp_send_error(r->r_req, 503,
				    "Service Unavailable");
		} else {
			if (final != NULL)
				(void)bridge_http_sse_send(r->r_req, final);
			bridge_http_sse_end(r->r_req);
		}
		r->r_req = NULL;
	}
	bridge_breq_free(r);
}

void
bridge_breq_fail(struct breq *r, int code, const char *message)
{
	json_t *e;

	e = jsonrpc_error_new(r->r_id, code, message, NULL);
	bridge_breq_end(r, e);
	json_decref(e);
}

/* the caller is gone or gave up: no answer, the server's is dropped */
void
bridge_breq_abandon(struct breq *r)
{
	bridge_srvreqs_orphan(r->r_b, r, 1);
	bridge_breq_end(r, NULL);
}

static void
bridge_breq_free(struct breq *r)
{
	struct bridge *b = r->r_b;

	bridge_srvreqs_orphan(b, r, 0);
	if (r->r_timer != NULL)
		event_free(r->r_timer);
	json_decref(r->r_msg);
	json_decref(r->r_id);
	json_decref(r->r_token);
	free(r->r_method);
	TAILQ_REMOVE(&b->b_reqs, r, r_entry);
	b->b_nreqs--;
	free(r);
	if (b->b_draining && b->b_nreqs == 0)
		bridge_stop(b, "drained");
}

static void
bridge_breq_deliver(struct breq *r, const json_t *msg)
{
	if (bridge_http_sse_send(r->r_req, msg) == -1) {
		log_warnx("%s: the caller of %s is gone or too slow",
		    r->r_b->b_name, r->r_method);
		bridge_breq_abandon(r);
	}
}

void
bridge_breq_on_close(struct evhttp_connection *evcon, void *arg)
{
	struct breq *r = arg;

	(void)evcon;
	log_debug("%s: the caller of %s went away", r->r_b->b_name,
	    r->r_method);
	bridge_req_release(r->r_req);
	r->r_req = NULL;
	bridge_breq_abandon(r);
}

static void
bridge_breq_on_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct breq	*r = arg;
	struct bridge	*b = r->r_b;
	json_t		*params, *m;
	char		 msg[BRIDGE_MSG_MAX];

	(void)fd;
	(void)ev;
	if (r->r_bid == 0) {
		if (b->b_exit_msg[0] != '\0')
			(void)snprintf(msg, sizeof(msg), "%s", b->b_exit_msg);
		else
			(void)snprintf(msg, sizeof(msg), "backend timeout: "
			    "the server was not ready within %llu ms",
			    (unsigned long long)b->b_timeout_ms);
	} else {
		(void)snprintf(msg, sizeof(msg), "backend timeout: no "
		    "response within %llu ms",
		    (unsigned long long)b->b_timeout_ms);
		/* the server may stop working on it */
		params = json_pack("{s:I, s:s}", "requestId",
		    (json_int_t)r->r_bid, "reason", "timeout");
		if ((m = jsonrpc_notification_new("notifications/cancelled",
		    params)) != NULL) {
			(void)bridge_server_write(b, m);
			json_decref(m);
		}
	}
	log_warnx("%s: %s: %s", b->b_name, r->r_method, msg);
	if (r->r_init) {
		bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	bridge_srvreqs_orphan(b, r, 1);
	bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR, msg);
}

struct breq *
bridge_breq_new(struct bridge *b, struct evhttp_request *req,
    const struct jsonrpc_msg *m, const char *sid)
{
	struct breq	*r;
	struct timeval	 tv;
	json_t		*meta, *tok;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->r_b = b;
	r->r_req = req;
	if (sid != NULL)
		(void)snprintf(r->r_sid, sizeof(r->r_sid), "%s", sid);
	if ((r->r_method = strdup(m->jm_method)) == NULL) {
		free(r);
		return NULL;
	}
	r->r_msg = json_incref(m->jm_root);
	r->r_id = json_incref(m->jm_id);
	meta = json_object_get(m->jm_params, "_meta");
	tok = json_object_get(meta, "progressToken");
	if (json_is_string(tok) || json_is_integer(tok))
		r->r_token = json_incref(tok);
	TAILQ_INSERT_TAIL(&b->b_reqs, r, r_entry);
	b->b_nreqs++;
	bridge_tv(&tv, b->b_timeout_ms);
	if ((r->r_timer = evtimer_new(b->b_base, bridge_breq_on_timeout,
	    r)) == NULL || evtimer_add(r->r_timer, &tv) == -1) {
		r->r_req = NULL;
		bridge_breq_free(r);
		return NULL;
	}
	return r;
}

/* write a request to the server under a bridge id */
void
bridge_breq_send(struct bridge *b, struct breq *r)
{
	json_t *meta;

	r->r_bid = ++b->b_seq;
	if (json_object_set_new(r->r_msg, "id",
	    json_integer((json_int_t)r->r_bid)) == -1)
		goto fail;
	if (r->r_token != NULL) {
		meta = json_object_get(json_object_get(r->r_msg, "params"),
		    "_meta");
		if (json_object_set_new(meta, "progressToken",
		    json_integer((json_int_t)r->r_bid)) == -1)
			goto fail;
	}
	if (bridge_server_write(b, r->r_msg) == -1)
		goto fail;
	return;
fail:
	bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
	    "cannot write to the backend process");
}

/* the server is ready: send what waited for it */
static void
bridge_breqs_flush(struct bridge *b)
{
	struct breq *r, *next;

	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_bid != 0)
			continue;
		if (r->r_init) {
			bridge_answer_initialize(b, r->r_req, r->r_id);
			r->r_req = NULL;
			bridge_breq_free(r);
		} else
			bridge_breq_send(b, r);
	}
}

/*
 * Routing what the server writes
 */

static int
bridge_is_user_call(const char *method)
{
	return bridge_streq(method, "tools/call") ||
	    bridge_streq(method, "prompts/get") ||
	    bridge_streq(method, "resources/read");
}

/* the caller a server request or log message belongs to, or NULL */
static struct breq *
bridge_route(struct bridge *b, int user_calls)
{
	struct breq	*r, *only = NULL, *best = NULL;
	int		 n = 0;

	TAILQ_FOREACH(r, &b->b_reqs, r_entry) {
		if (r->r_bid == 0 || r->r_req == NULL)
			continue;
		n++;
		only = r;
		if (bridge_is_user_call(r->r_method) &&
		    (best == NULL || r->r_bid > best->r_bid))
			best = r;
	}
	if (n == 1)
		return only;
	return user_calls ? best : NULL;
}

static void
bridge_server_initialized(struct bridge *b, const struct jsonrpc_msg *m)
{
	json_t		*note, *v;
	const char	*version = NULL;

	evtimer_del(b->b_init_ev);
	if (m->jm_kind != JSONRPC_RESPONSE) {
		v = json_object_get(m->jm_error, "message");
		log_warnx("%s: the server refused initialize: %s", b->b_name,
		    json_is_string(v) ? json_string_value(v) : "?");
		b->b_up->up_stop(b, "initialize failed");
		return;
	}
	json_decref(b->b_init_result);
	b->b_init_result = json_incref(m->jm_result);
	v = json_object_get(m->jm_result, "protocolVersion");
	if (json_is_string(v))
		version = json_string_value(v);
	/* for the MCP-Protocol-Version header: a token, or nothing */
	b->b_conn.bc_version[0] = '\0';
	if (version != NULL && strlen(version) < sizeof(b->b_conn.bc_version) &&
	    strspn(version, "0123456789-") == strlen(version))
		memcpy(b->b_conn.bc_version, version, strlen(version) + 1);
	if ((note = jsonrpc_notification_new("notifications/initialized",
	    NULL)) == NULL || bridge_server_write(b, note) == -1) {
		json_decref(note);
		b->b_up->up_stop(b, "cannot write to it");
		return;
	}
	json_decref(note);
	b->b_state = SRV_READY;
	if (b->b_conn.bc_url != NULL)
		log_info("%s: server ready (%s, protocol %s)", b->b_name,
		    b->b_conn.bc_url, version != NULL ? version : "?");
	else
		log_info("%s: server ready (pid %d, protocol %s)", b->b_name,
		    (int)b->b_proc.bp_pid, version != NULL ? version : "?");
	bridge_breqs_flush(b);
}

static void
bridge_server_response(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct breq	*r;
	json_int_t	 bid;

	if (!json_is_integer(m->jm_id)) {
		log_debug("%s: dropped a response to an id the bridge did "
		    "not send", b->b_name);
		return;
	}
	bid = json_integer_value(m->jm_id);
	if (b->b_state == SRV_STARTING && bid == (json_int_t)b->b_init_bid) {
		bridge_server_initialized(b, m);
		return;
	}
	if ((r = bridge_breq_by_bid(b, bid)) == NULL) {
		log_debug("%s: dropped a late response (id %lld)", b->b_name,
		    (long long)bid);
		return;
	}
	if (json_object_set(m->jm_root, "id", r->r_id) == -1) {
		bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	bridge_breq_end(r, m->jm_root);
}

static void
bridge_server_request(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct bsrvreq	*sr;
	struct breq	*owner;

	if (b->b_state == SRV_EXITED)
		return;		/* nobody left to answer */
	if (MCP_METHOD_IS(m->jm_mm, MCP_M_PING)) {
		bridge_server_answer(b, m->jm_id, json_object());
		return;
	}
	if ((owner = bridge_route(b, 1)) == NULL) {
		log_debug("%s: no client to ask %s", b->b_name, m->jm_method);
		bridge_server_error(b, m->jm_id, JSONRPC_METHOD_NOT_FOUND,
		    "no client to ask");
		return;
	}
	if (b->b_nsrvreqs >= BRIDGE_MAX_SRVREQS) {
		log_warnx("%s: too many server requests pending", b->b_name);
		bridge_server_error(b, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "too many requests pending");
		return;
	}
	if ((sr = calloc(1, sizeof(*sr))) == NULL) {
		bridge_server_error(b, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	sr->sr_server_id = json_incref(m->jm_id);
	(void)snprintf(sr->sr_id, sizeof(sr->sr_id), "bridge-%llu",
	    (unsigned long long)++b->b_seq);
	sr->sr_owner = owner;
	sr->sr_expiry_ms = bridge_now_ms() + b->b_timeout_ms;
	TAILQ_INSERT_TAIL(&b->b_srvreqs, sr, sr_entry);
	b->b_nsrvreqs++;
	if (json_object_set_new(m->jm_root, "id",
	    json_string(sr->sr_id)) == -1) {
		bridge_server_error(b, sr->sr_server_id,
		    JSONRPC_INTERNAL_ERROR, "out of memory");
		bridge_srvreq_free(b, sr);
		return;
	}
	log_debug("%s: %s goes to the caller of %s", b->b_name, m->jm_method,
	    owner->r_method);
	bridge_breq_deliver(owner, m->jm_root);
}

static void
bridge_server_notification(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct bsrvreq	*sr;
	struct breq	*r;
	json_t		*v;

	if (MCP_METHOD_IS(m->jm_mm, MCP_M_N_PROGRESS)) {
		v = json_object_get(m->jm_params, "progressToken");
		if (!json_is_integer(v) || (r = bridge_breq_by_bid(b,
		    json_integer_value(v))) == NULL || r->r_token == NULL ||
		    r->r_req == NULL) {
			log_debug("%s: dropped progress for no request",
			    b->b_name);
			return;
		}
		if (json_object_set(m->jm_params, "progressToken",
		    r->r_token) == 0)
			bridge_breq_deliver(r, m->jm_root);
		return;
	}
	if (MCP_METHOD_IS(m->jm_mm, MCP_M_N_MESSAGE)) {
		if ((r = bridge_route(b, 0)) != NULL)
			bridge_breq_deliver(r, m->jm_root);
		else
			bridge_broadcast(b, m->jm_root);
		return;
	}
	if (MCP_METHOD_IS(m->jm_mm, MCP_M_N_CANCELLED)) {
		/* the server gave up one of its own requests */
		v = json_object_get(m->jm_params, "requestId");
		TAILQ_FOREACH(sr, &b->b_srvreqs, sr_entry)
			if (json_equal(sr->sr_server_id, v))
				break;
		if (sr == NULL)
			return;
		if (sr->sr_owner != NULL && json_object_set_new(m->jm_params,
		    "requestId", json_string(sr->sr_id)) == 0) {
			r = sr->sr_owner;
			bridge_srvreq_free(b, sr);
			bridge_breq_deliver(r, m->jm_root);
		} else
			bridge_srvreq_free(b, sr);
		return;
	}
	bridge_broadcast(b, m->jm_root);
}

void
bridge_server_line(struct bridge *b, const char *line, size_t len)
{
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 err;
	size_t			 i;

	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	if (i == len)
		return;
	if (jsonrpc_parse(line, len, &m, &err) == -1) {
		bridge_log_text(b, b->b_up->up_junk, line, len);
		return;
	}
	switch (m.jm_kind) {
	case JSONRPC_RESPONSE:
	case JSONRPC_ERROR:
		bridge_server_response(b, &m);
		break;
	case JSONRPC_REQUEST:
		bridge_server_request(b, &m);
		break;
	case JSONRPC_NOTIFICATION:
		bridge_server_notification(b, &m);
		break;
	}
	jsonrpc_msg_clear(&m);
}
