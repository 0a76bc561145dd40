/*
 * The Legacy edge's authorization gate: a request whose method has a
 * Cedar action in the method table (tools/call, prompts/get,
 * resources/read, resources/subscribe and unsubscribe, completion/
 * complete by its ref) is authorized on the view before its session is
 * looked up ("403 before 404": a client learns nothing of sessions by a
 * denied call), then the session is validated and the request goes on
 * on that same view (legacy_on_view()), so the item authorized is the
 * item routed.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>

#include "shared/config.h"
#include "worker/http/httpd.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "worker/process/process.h"
#include "worker/request/legacy.h"
#include "worker/state/session.h"
#include "worker/view/view_get.h"
#include "worker/request/legacy_req.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/upstream/token_exchange.h"

static void
legacy_gate_on_view(void *arg, json_t *view, const char *err)
{
	struct mcp_req		*mr = arg;
	struct worker		*w = mr->mr_r.r_w;
	const struct mcp_method	*mm = mr->mr_r.r_msg.jm_mm;
	struct session		 s;
	json_t			*e;
	char			 msg[600];
	size_t			 n;

	if (view == NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", err);
		e = jsonrpc_error_new(mr->mr_r.r_msg.jm_id, JSONRPC_INTERNAL_ERROR,
		    msg, NULL);
		legacy_req_reply(mr, e);
		json_decref(e);
		legacy_req_free(mr);
		return;
	}
	/* the hot path's call is read off its params' text */
	if ((mr->mr_fast.lf_params != NULL ? authz_gate_text(w, mr->mr_r.r_req,
	    mm, mr->mr_fast.lf_name, mr->mr_fast.lf_namelen,
	    mr->mr_fast.lf_params, mr->mr_fast.lf_plen, view) :
	    authz_gate(w, mr->mr_r.r_req, mm, mr->mr_r.r_msg.jm_params, view)) == -1) {
		legacy_req_refuse(mr, AUTHZ_HTTP, AUTHZ_CODE,
		    authz_message(mm, mr->mr_r.r_msg.jm_params), NULL);
		return;
	}
	/* as legacy_post() does it: legacy_session() answers a refusal */
	httpd_req_set_close_cb(mr->mr_r.r_req, NULL, NULL);
	memset(&s, 0, sizeof(s));
	if (legacy_session(w, mr->mr_r.r_req, mr->mr_r.r_msg.jm_id, &s) == -1) {
		mr->mr_r.r_req = NULL;
		legacy_req_free(mr);
		return;
	}
	legacy_session_touch(w, &s);
	legacy_req_watch(mr);
	/* as snprintf("%s") would, without its cost on every call */
	n = strnlen(s.s_id, sizeof(mr->mr_sid) - 1);
	memcpy(mr->mr_sid, s.s_id, n);
	mr->mr_sid[n] = '\0';
	mr->mr_sess = s;
	legacy_on_view(mr, view, NULL);
}

int
legacy_gate(struct worker *w, struct httpd_req *req, struct jsonrpc_msg *msg,
    const struct legacy_fast *fast)
{
	const struct mcp_method	*mm = msg->jm_mm;
	struct mcp_req		*mr;

	if (!authz_on(w) || !MCP_METHOD_SERVED(mm, MCP_REV_LEGACY) ||
	    mm->mm_kind != MCP_KIND_REQUEST ||
	    mm->mm_action == MCP_ACTION_NONE)
		return -1;
	if ((mr = legacy_req_new(w, req, msg)) == NULL)
		return 0;
	mr->mr_fast = *fast;
	legacy_req_watch(mr);
	if (view_get_scope(w, texch_view_scope(req), legacy_gate_on_view,
	    mr) == -1) {
		legacy_req_refuse(mr, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
	}
	return 0;
}
