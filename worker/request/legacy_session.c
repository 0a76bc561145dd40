/*
 * The Legacy edge's sessions (MCP 2025-11-25, Transports, Session
 * Management): initialize answered by vmcpd and the session minted, a
 * request's session looked up and its sliding expiry written (at most
 * once a second, retried when the store fails), the MCP-Protocol-Version
 * header checked, and the session's GET stream and DELETE.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store_limit.h"
#include "worker/auth/auth.h"
#include "worker/upstream/token_exchange.h"
#include "worker/http/httpd.h"
#include "proto/headers.h"
#include "proto/http_req.h"
#include "shared/version.h"
#include "worker/events/stream.h"
#include "worker/http/http_reply.h"
#include "worker/upstream/backend_session_close.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"
#include "worker/request/legacy_req.h"
#include "worker/pipeline/pipeline.h"
#include "worker/state/session_redis.h"
#include "worker/events/subs.h"

#define SESSION_TOUCH_MS	1000	/* write last-seen at most this often */

/*
 * Sessions whose sliding expiry could not be written: retried on the
 * worker's next requests (the session's own next request retries it
 * anyway), so a store that fails for a moment does not end a busy
 * session early.
 */
#define LEGACY_TOUCH_RETRIES	32

static struct legacy_touch {
	char		lt_sid[SESSION_ID_LEN + 1];
	uint64_t	lt_seen_ms;
	uint64_t	lt_next_ms;
} legacy_touches[LEGACY_TOUCH_RETRIES];

static int
legacy_session_refresh(struct worker *w, const char *sid, uint64_t seen_ms)
{
	struct session	 s;
	int		 rc;

	memset(&s, 0, sizeof(s));
	if ((rc = session_load(w->w_store, sid, store_now_ms(), &s)) != 0)
		return rc == STORE_NOTFOUND ? 0 : -1;	/* gone: done */
	if (s.s_seen_ms < seen_ms) {
		s.s_seen_ms = seen_ms;
		rc = session_save(w->w_store, &s, w->w_conf->cf_session_ttl_ms,
		    store_now_ms());
	}
	session_clear(&s);
	return rc;
}

static void
legacy_touch_retry(struct worker *w, uint64_t now)
{
	struct legacy_touch	*lt;
	size_t			 i;

	for (i = 0; i < LEGACY_TOUCH_RETRIES; i++) {
		lt = &legacy_touches[i];
		if (lt->lt_sid[0] == '\0' || now < lt->lt_next_ms)
			continue;
		if (legacy_session_refresh(w, lt->lt_sid,
		    lt->lt_seen_ms) == 0) {
			log_info("session %.8s...: expiry refreshed on retry",
			    lt->lt_sid);
			lt->lt_sid[0] = '\0';
		} else
			lt->lt_next_ms = now + SESSION_TOUCH_MS;
	}
}

static void
legacy_touch_later(struct session *s, uint64_t seen_ms, uint64_t now)
{
	struct legacy_touch	*lt, *slot = NULL;
	size_t			 i;

	for (i = 0; i < LEGACY_TOUCH_RETRIES; i++) {
		lt = &legacy_touches[i];
		if (strcmp(lt->lt_sid, s->s_id) == 0) {
			slot = lt;
			break;
		}
		if (slot == NULL && lt->lt_sid[0] == '\0')
			slot = lt;
	}
	if (slot == NULL) {
		log_warnx("session %.8s...: expiry not refreshed, and too many "
		    "retries pending", s->s_id);
		return;
	}
	memcpy(slot->lt_sid, s->s_id, sizeof(slot->lt_sid));
	slot->lt_seen_ms = seen_ms;
	slot->lt_next_ms = now + SESSION_TOUCH_MS / 4;
}

/* touch the session: sliding expiry, written at most once a second */
static void
legacy_session_touch(struct worker *w, struct session *s)
{
	uint64_t now = store_now_ms(), seen = s->s_seen_ms;

	legacy_touch_retry(w, now);
	if (now - s->s_seen_ms < SESSION_TOUCH_MS)
		return;
	s->s_seen_ms = now;
	if (session_save(w->w_store, s, w->w_conf->cf_session_ttl_ms,
	    now) == -1) {
		log_warnx("session %.8s...: cannot refresh its expiry (%s); "
		    "retrying", s->s_id, strerror(errno));
		legacy_touch_later(s, now, now);
		/* what the store holds: the next request tries again */
		s->s_seen_ms = seen;
	}
}

/* the store refused a new session: say which limit, 503 */
static void
legacy_initialize_refused(struct mcp_req *mr, int rc, int err)
{
	static time_t		 logged;
	const struct config	*cf = mr->mr_r.r_w->w_conf;
	char			 msg[256];
	const char		*limit;
	unsigned int		 max = 0;

	if (rc == STORE_LIMIT_DB) {
		limit = "sessions.maxSessions";
		max = cf->cf_session_cap;
		(void)snprintf(msg, sizeof(msg), "Service Unavailable: too "
		    "many sessions (%s is %u); try again later", limit, max);
	} else if (rc == STORE_LIMIT_GROUP) {
		limit = "sessions.maxPerAddress";
		max = cf->cf_session_cap_addr;
		(void)snprintf(msg, sizeof(msg), "Service Unavailable: too "
		    "many sessions from this client address (%s is %u); end "
		    "some (DELETE) or try again later", limit, max);
	} else if (rc == -1 && err == ENOSPC) {
		limit = "daemon.mapSize";
		(void)snprintf(msg, sizeof(msg), "Service Unavailable: the "
		    "session store is full (%s); try again later", limit);
	} else {
		legacy_req_refuse(mr, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot store the session", NULL);
		return;
	}
	/* refusals come in floods: a line a second per worker */
	if (time(NULL) != logged) {
		logged = time(NULL);
		log_warnx("initialize refused: %s", msg);
	}
	legacy_req_refuse(mr, 503, MCP_ERR_TRANSPORT, msg, max > 0 ?
	    json_pack("{s:s, s:I}", "limit", limit, "max", (json_int_t)max) :
	    json_pack("{s:s}", "limit", limit));
}

static void
legacy_initialize_answer(struct mcp_req *mr, json_t *result)
{
	json_t *resp;

	resp = jsonrpc_result_new(mr->mr_r.r_msg.jm_id, result);
	legacy_req_reply(mr, resp);
	json_decref(resp);
	legacy_req_free(mr);
}

/* the new session is in Redis (rc 0), or could not be put there */
static void
legacy_initialize_stored(void *arg, int rc)
{
	struct mcp_req	*mr = arg;
	json_t		*result = mr->mr_result;

	mr->mr_result = NULL;
	if (rc == 0) {
		legacy_initialize_answer(mr, result);
		return;
	}
	json_decref(result);
	(void)session_delete(mr->mr_r.r_w->w_store, mr->mr_sess.s_id);
	mr->mr_sess.s_id[0] = '\0';	/* no session: no id goes out */
	legacy_req_refuse(mr, 503, MCP_ERR_TRANSPORT, SESSION_REDIS_DOWN,
	    NULL);
}

static void
legacy_initialize_reply(struct mcp_req *mr, json_t *view)
{
	struct worker		*w = mr->mr_r.r_w;
	struct session		*s = &mr->mr_sess;
	struct store_limit	 lim;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	json_t			*caps, *result;
	char			 group[SESSION_GROUP_MAX];
	uint64_t		 now = store_now_ms();
	int			 rc, err;

	caps = core_capabilities(view, 1);
	result = json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion",
	    s->s_version, "capabilities", caps, "serverInfo", "name",
	    w->w_conf->cf_name, "version", VMCPD_VERSION);
	if (result == NULL) {
		legacy_req_refuse(mr, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return;
	}
	s->s_created_ms = s->s_seen_ms = now;
	s->s_max_ms = now + w->w_conf->cf_session_max_ms;
	if (session_mint_id(s->s_id) == -1) {
		json_decref(result);
		s->s_id[0] = '\0';
		legacy_req_refuse(mr, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot create a session", NULL);
		return;
	}
	memset(&lim, 0, sizeof(lim));
	lim.sl_max = w->w_conf->cf_session_cap;
	lim.sl_group_max = w->w_conf->cf_session_cap_addr;
	if (httpd_req_peer(mr->mr_r.r_req, &ss, &sslen) == 0 &&
	    session_client_group((struct sockaddr *)&ss, sslen, group,
	    sizeof(group)) == 0) {
		lim.sl_group = group;
		lim.sl_glen = strlen(group);
	}
	rc = session_create(w->w_store, s, w->w_conf->cf_session_ttl_ms, now,
	    &lim);
	err = errno;
	if (rc != 0) {
		/* no session: no id goes out */
		json_decref(result);
		s->s_id[0] = '\0';
		legacy_initialize_refused(mr, rc, err);
		return;
	}
	log_debug("session %.8s... created (%s)", s->s_id, s->s_version);
	/* answered once every node knows the id (shared: Redis has it) */
	mr->mr_result = result;
	if (session_store->ss_publish(s, w->w_conf->cf_session_ttl_ms, now,
	    legacy_initialize_stored, mr) == -1)
		legacy_initialize_stored(mr, -1);
}

static void
legacy_initialize_view(void *arg, json_t *view, const char *err)
{
	struct mcp_req	*mr = arg;

	/* a backend down (partialFailureMode fail) fails the lists, not
	 * the session: the client learns which backend from them */
	if (view == NULL)
		log_warnx("initialize without a view: %s", err);
	legacy_initialize_reply(mr, view);
}

/* initialize: a new session (the method table's row: before any) */
void
legacy_initialize(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, const struct request_fast *fast,
    struct session *none)
{
	struct mcp_req	*mr;
	struct session	*s;
	json_t		*pv, *info;

	(void)fast;
	(void)none;
	if (front_header(req, "Mcp-Session-Id") != NULL) {
		front_reply_error(req, 400, msg->jm_id,
		    JSONRPC_INVALID_REQUEST, "Invalid Request: this "
		    "session is already initialized; send initialize "
		    "without Mcp-Session-Id to start a new session");
		return;
	}
	pv = json_object_get(msg->jm_params, "protocolVersion");
	if (!json_is_string(pv)) {
		front_reply_error(req, 200, msg->jm_id, JSONRPC_INVALID_PARAMS,
		    "Invalid params: initialize needs params.protocolVersion "
		    "(a string such as \"2025-11-25\")");
		return;
	}
	if ((mr = legacy_req_new(w, req, msg)) == NULL)
		return;
	mr->mr_initialize = 1;
	s = &mr->mr_sess;
	s->s_version = strdup(proto_legacy_version_pick(json_string_value(pv)));
	s->s_owner = strdup(auth_scope(req));	/* bound to the principal */
	s->s_client_caps = json_incref(json_object_get(
	    mr->mr_r.r_msg.jm_params, "capabilities"));
	if (!json_is_object(s->s_client_caps)) {
		json_decref(s->s_client_caps);
		s->s_client_caps = json_object();
	}
	info = json_object_get(mr->mr_r.r_msg.jm_params, "clientInfo");
	s->s_client_info = json_is_object(info) ? json_incref(info) : NULL;
	if (s->s_version == NULL || s->s_owner == NULL ||
	    s->s_client_caps == NULL) {
		legacy_req_refuse(mr, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return;
	}
	pipeline_watch(&mr->mr_r);
	if (view_get_scope(w, texch_view_scope(req), legacy_initialize_view,
	    mr) == -1)
		legacy_req_refuse(mr, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
}

/*
 * The session named by the request, or an answer and -1; touched (its
 * sliding expiry) for a request.
 */
int
legacy_session(struct worker *w, struct httpd_req *req, json_t *id,
    struct session *s, int touch)
{
	const char	*sid = httpd_req_known(req,
	    HTTP_H_MCP_SESSION_ID);
	int		 rc;

	if (sid == NULL) {
		front_reply_error(req, 400, id, MCP_ERR_TRANSPORT,
		    "Bad Request: Mcp-Session-Id header is required "
		    "(send initialize first to get one)");
		return -1;
	}
	if (!proto_session_id_valid(sid) ||
	    (rc = session_load(w->w_store, sid, store_now_ms(), s)) ==
	    STORE_NOTFOUND) {
		front_reply_error(req, 404, id, MCP_ERR_SESSION_NOT_FOUND,
		    "Session not found: it expired or was terminated; send "
		    "initialize without Mcp-Session-Id to start a new one");
		return -1;
	}
	if (rc == -1) {
		front_reply_error(req, 500, id, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot read the session store");
		return -1;
	}
	/* another principal's session is answered as one that does not
	 * exist: no oracle for session ids (MCP 2025-11-25, security best
	 * practices, session hijacking) */
	if (!auth_scope_eq(s->s_owner != NULL ? s->s_owner : "",
	    auth_scope(req))) {
		session_clear(s);
		front_reply_error(req, 404, id, MCP_ERR_SESSION_NOT_FOUND,
		    "Session not found: it expired or was terminated; send "
		    "initialize without Mcp-Session-Id to start a new one");
		return -1;
	}
	if (touch)
		legacy_session_touch(w, s);
	return 0;
}

/* the session ends here: its backend sessions closed, its stream */
static int
legacy_delete_end(struct worker *w, struct httpd_req *req, struct session *s)
{
	if (session_delete(w->w_store, s->s_id) == -1) {
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot delete the session");
		return -1;
	}
	bclose_session(w, s);
	subs_session_end(w, s->s_id);
	stream_terminate(w, s->s_id);
	log_debug("session %.8s... terminated by the client", s->s_id);
	front_reply_empty(req, 200);
	return 0;
}

/*
 * Shared (sessionStorage redis): the 200 waits for Redis to have
 * deleted it, so that no node serves it once the client has the
 * answer; Redis down, a 503 and nothing ended.  The wait is never
 * cancelled: Redis answers every command, or the connection's
 * timeout does.
 */
struct legacy_del {
	struct worker		*ld_w;
	struct httpd_req	*ld_req;
	char			 ld_sid[SESSION_ID_LEN + 1];
};

static void
legacy_delete_done(void *arg, int rc)
{
	struct legacy_del	*ld = arg;
	struct worker		*w = ld->ld_w;
	struct session		 s;

	memset(&s, 0, sizeof(s));
	if (rc == -1)
		front_reply_error(ld->ld_req, 503, NULL, MCP_ERR_TRANSPORT,
		    SESSION_REDIS_DOWN);
	else if (session_load(w->w_store, ld->ld_sid, store_now_ms(),
	    &s) != 0)
		front_reply_empty(ld->ld_req, 200);	/* ended meanwhile */
	else
		(void)legacy_delete_end(w, ld->ld_req, &s);
	session_clear(&s);
	free(ld);
	worker_request_release(w, __func__);
}

/* a DELETE: the client ends its session */
void
legacy_delete(struct worker *w, struct httpd_req *req)
{
	struct session		 s;
	struct legacy_del	*ld;

	memset(&s, 0, sizeof(s));
	if (legacy_session(w, req, NULL, &s, 0) == -1)
		return;
	if ((ld = calloc(1, sizeof(*ld))) == NULL) {
		session_clear(&s);
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	ld->ld_w = w;
	ld->ld_req = req;
	memcpy(ld->ld_sid, s.s_id, sizeof(ld->ld_sid));
	session_clear(&s);
	/* a client that goes away meanwhile: the DELETE is seen through
	 * and answered to no one (httpd ends the request) */
	worker_request_hold(w);
	if (session_store->ss_unpublish(ld->ld_sid, legacy_delete_done,
	    ld) == -1) {
		free(ld);
		front_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT,
		    SESSION_REDIS_DOWN);
		worker_request_release(w, __func__);
	}
}

/* a GET the front let through: the session's standalone stream */
void
legacy_get(struct worker *w, struct httpd_req *req)
{
	struct session	 s;

	memset(&s, 0, sizeof(s));
	if (legacy_session(w, req, NULL, &s, 0) == -1)
		return;
	stream_get(w, req, &s);
	session_clear(&s);
}
