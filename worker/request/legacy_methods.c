/*
 * The Legacy edge's entry and its column of the method table
 * (request_method.c): a POST classified as Legacy is dispatched once,
 * through its method's row, to initialize (before any session), the
 * requests vmcpd answers itself (ping, logging/setLevel), the lists and
 * routed calls (on the view: legacy.c), or the notifications that
 * change something; a client's answer to a relayed request goes to
 * legacy_client_answer().
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/http/httpd.h"
#include "proto/headers.h"
#include "proto/method.h"
#include "proto/http_req.h"
#include "worker/http/http_reply.h"
#include "worker/request/cancel.h"
#include "worker/upstream/upstream.h"
#include "worker/request/legacy_req.h"

static const char *const legacy_log_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency"
};

/* ping: answered here */
void
legacy_ping(struct worker *w, struct httpd_req *req, struct jsonrpc_msg *msg,
    const struct request_fast *fast, struct session *s)
{
	json_t *resp;

	(void)w;
	(void)fast;
	(void)s;
	resp = jsonrpc_result_new(msg->jm_id, json_object());
	front_reply_json(req, 200, resp, NULL);
	json_decref(resp);
}

/* logging/setLevel: the session's level, passed to its backends */
void
legacy_set_level(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, const struct request_fast *fast,
    struct session *s)
{
	const char	*level;
	json_t		*resp;
	size_t		 i, n = sizeof(legacy_log_levels) /
			    sizeof(legacy_log_levels[0]);
	const struct config_backend *be;

	(void)fast;
	level = json_string_value(json_object_get(msg->jm_params, "level"));
	for (i = 0; level != NULL && i < n; i++)
		if (strcmp(level, legacy_log_levels[i]) == 0)
			break;
	if (level == NULL || i == n) {
		front_reply_error(req, 200, msg->jm_id,
		    JSONRPC_INVALID_PARAMS, "Invalid params: \"level\" must be "
		    "one of debug, info, notice, warning, error, critical, "
		    "alert, emergency");
		return;
	}
	session_str_free(s, s->s_log_level);
	s->s_log_level = strdup(level);
	if (session_save(w->w_store, s, w->w_conf->cf_session_ttl_ms,
	    store_now_ms()) == -1)
		log_warnx("cannot save session %.8s...", s->s_id);
	/* backend sessions open now get it; later ones when opened */
	for (i = 0; i < s->s_nbackends; i++)
		if ((be = config_backend_find(w->w_conf,
		    s->s_backends[i].sb_name)) != NULL)
			(void)upstream_request_nowait(w, be,
			    s->s_backends[i].sb_sid,
			    s->s_backends[i].sb_version, msg->jm_method,
			    msg->jm_params);
	resp = jsonrpc_result_new(msg->jm_id, json_object());
	front_reply_json(req, 200, resp, NULL);
	json_decref(resp);
}

void
legacy_initialized(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, const struct request_fast *fast,
    struct session *s)
{
	(void)req;
	(void)msg;
	(void)fast;
	if (s->s_initialized)
		return;
	s->s_initialized = 1;
	s->s_seen_ms = store_now_ms();
	if (session_save(w->w_store, s, w->w_conf->cf_session_ttl_ms,
	    s->s_seen_ms) == -1)
		log_warnx("cannot save session %.8s...", s->s_id);
}

void
legacy_cancelled(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, const struct request_fast *fast,
    struct session *s)
{
	(void)req;
	(void)fast;
	cancel_request(w, s->s_id, msg->jm_params);
}

/* passed to the session's backend sessions, which then ask for roots */
void
legacy_roots_changed(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, const struct request_fast *fast,
    struct session *s)
{
	const struct config_backend	*be;
	size_t				 i;

	(void)req;
	(void)fast;
	for (i = 0; i < s->s_nbackends; i++)
		if ((be = config_backend_find(w->w_conf,
		    s->s_backends[i].sb_name)) != NULL)
			(void)upstream_notify(w, be, s->s_backends[i].sb_sid,
			    s->s_backends[i].sb_version, msg->jm_method, NULL);
}

/* MCP-Protocol-Version, when present, must be one vmcpd serves */
static int
legacy_version_header(struct httpd_req *req, json_t *id)
{
	const char	*v = httpd_req_known(req,
	    HTTP_H_MCP_PROTOCOL_VERSION);
	char		 msg[300];

	if (v == NULL)
		return 0;
	if (proto_legacy_version_pick(v) == NULL ||
	    strcmp(proto_legacy_version_pick(v), v) != 0) {
		(void)snprintf(msg, sizeof(msg), "Bad Request: unsupported "
		    "MCP-Protocol-Version: %.64s (supported: 2025-11-25, "
		    "2025-06-18, 2025-03-26, 2024-11-05)", v);
		front_reply_error(req, 400, id, MCP_ERR_TRANSPORT, msg);
		return -1;
	}
	return 0;
}

/*
 * A POST the front classified as Legacy (or any era's response or
 * notification): msg and fast are the front's; a request that goes on
 * takes msg (request_start()), else the front releases it.
 */
void
legacy_post(struct worker *w, struct httpd_req *req, struct jsonrpc_msg *msg,
    const struct request_fast *fast)
{
	const struct request_method	*rm = request_method_of(msg);
	struct session			 s;
	char				 emsg[300];

	if (legacy_version_header(req, msg->jm_id) == -1)
		return;
	if (rm->rm_flags & REQUEST_M_NO_SESSION) {
		rm->rm_legacy(w, req, msg, fast, NULL);
		return;
	}
	memset(&s, 0, sizeof(s));
	if (legacy_session(w, req, msg->jm_id, &s,
	    msg->jm_kind == JSONRPC_REQUEST) == -1)
		return;
	switch (msg->jm_kind) {
	case JSONRPC_REQUEST:
		if (rm->rm_legacy != NULL) {
			rm->rm_legacy(w, req, msg, fast, &s);
			break;
		}
		/* not a request of 2025-11-25 that vmcpd serves; the
		 * experimental tasks, by name (legacy_params_legacy()) */
		(void)snprintf(emsg, sizeof(emsg), "Method not found: %.150s%s",
		    msg->jm_method, msg->jm_mm != NULL &&
		    msg->jm_mm->mm_cap == MCP_CAP_TASKS ? " (vmcpd does not "
		    "serve the experimental 2025-11-25 tasks; a call asking "
		    "for a task runs as a plain one)" : "");
		front_reply_error(req, 200, msg->jm_id,
		    JSONRPC_METHOD_NOT_FOUND, emsg);
		break;
	case JSONRPC_NOTIFICATION:
		/* any other notification changes nothing here */
		if (rm->rm_legacy != NULL)
			rm->rm_legacy(w, req, msg, fast, &s);
		front_reply_empty(req, 202);
		break;
	default:
		/* an answer to a request vmcpd relayed to this client */
		if (legacy_client_answer(w, req, msg, &s) == 0)
			front_reply_empty(req, 202);
		break;
	}
	session_clear(&s);
}
