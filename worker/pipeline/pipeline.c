/*
 * The request pipeline (pipeline.h): the phase table and its driver,
 * and the phases both revisions share.  What a revision does its own
 * way is its codec's (legacy.c, modern.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "proto/method.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/auth/ratelimit.h"
#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/pipeline/pipeline.h"
#include "worker/pipeline/pipeline_int.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/upstream.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"

typedef enum pipeline_rc (*pipeline_phase_fn)(struct request *);

/* r_stepping: inside a phase, or a callback inside it failed */
#define PIPELINE_STEP_IN	1
#define PIPELINE_STEP_FAILED	2

static enum pipeline_rc	pipeline_authorize(struct request *);
static enum pipeline_rc	pipeline_session(struct request *);
static enum pipeline_rc	pipeline_view(struct request *);
static enum pipeline_rc	pipeline_ratelimit(struct request *);
static enum pipeline_rc	pipeline_resolve(struct request *);
static enum pipeline_rc	pipeline_credential(struct request *);
static enum pipeline_rc	pipeline_upstream(struct request *);

/* in the order they run (pipeline.h) */
static const pipeline_phase_fn pipeline_phases[PIPELINE_NPHASES] = {
	[PIPELINE_AUTHORIZE] = pipeline_authorize,
	[PIPELINE_SESSION] = pipeline_session,
	[PIPELINE_VIEW] = pipeline_view,
	[PIPELINE_RATELIMIT] = pipeline_ratelimit,
	[PIPELINE_RESOLVE] = pipeline_resolve,
	[PIPELINE_CREDENTIAL] = pipeline_credential,
	[PIPELINE_UPSTREAM] = pipeline_upstream,
};

/* the phases from r's own on, until one answers, hands r on or waits */
static void
pipeline_step(struct request *r)
{
	enum pipeline_rc rc;

	while (r->r_phase < PIPELINE_NPHASES) {
		r->r_stepping = PIPELINE_STEP_IN;
		if ((rc = pipeline_phases[r->r_phase](r)) == PIPELINE_DONE)
			return;		/* r may be gone */
		r->r_stepping = 0;
		if (rc == PIPELINE_WAIT)
			return;
		r->r_phase++;
	}
}

static void
pipeline_on_close(struct httpd_req *hr, void *arg)
{
	struct request *r = arg;

	log_debug("%s client went away during %s", r->r_codec != NULL ?
	    r->r_codec->rc_name : "a", r->r_msg.jm_method);
	/* asked while the request can still be read */
	if (r->r_codec != NULL && r->r_codec->rc_detach != NULL &&
	    r->r_codec->rc_detach(r)) {
		r->r_req = NULL;
		httpd_send_end(hr);
		return;
	}
	r->r_req = NULL;
	httpd_send_end(hr);	/* frees it */
	/* closing the stream cancels the call in 2026-07-28 (Streamable
	 * HTTP, section Cancellation), and a 2025-11-25 backend is told
	 * so; in 2025-11-25 it does not (MCP 2025-11-25, Cancellation) */
	if (r->r_codec != NULL && r->r_codec->rc_close_cancels) {
		upstream_abort(r->r_up, "the client closed the connection");
		r->r_up = NULL;
	}
	(void)request_finalize(r, __func__);
}

void
pipeline_watch(struct request *r)
{
	if (r->r_req != NULL)
		httpd_req_set_close_cb(r->r_req, pipeline_on_close, r);
}

void
pipeline_run(struct request *r, const struct request_codec *codec)
{
	r->r_codec = codec;
	r->r_phase = 0;
	if (r->r_req != NULL)
		r->r_principal = auth_principal(r->r_req);
	pipeline_trace_start(r);
	pipeline_watch(r);
	pipeline_step(r);
}

void
pipeline_resume(void *arg, json_t *view, const char *err)
{
	struct request	*r = arg;
	char		 msg[600];

	if (r->r_stepping) {
		/* called back inside the phase's own call: it goes on */
		if (view == NULL)
			r->r_stepping = PIPELINE_STEP_FAILED;
		else if (r->r_view == NULL)
			r->r_view = json_incref(view);
		return;
	}
	r->r_stepping = 0;
	pipeline_trace_resumed(r, view == NULL ? err : NULL);
	if (view == NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", err);
		r->r_codec->rc_error(r, 200, JSONRPC_INTERNAL_ERROR, msg,
		    NULL);
		return;
	}
	if (r->r_view == NULL)
		r->r_view = json_incref(view);
	pipeline_step(r);
}

/* the view, fetched for the phase that needs it (it resumes then) */
static enum pipeline_rc
pipeline_view_fetch(struct request *r)
{
	if (r->r_view != NULL)
		return PIPELINE_NEXT;
	if (view_get_scope(r->r_w, texch_view_scope(r->r_req),
	    pipeline_resume, r) == -1) {
		r->r_codec->rc_error(r, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return PIPELINE_DONE;
	}
	if (r->r_stepping == PIPELINE_STEP_FAILED) {
		r->r_codec->rc_error(r, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: the view can't be read", NULL);
		return PIPELINE_DONE;
	}
	/* answered at once from the stored view, as a rule (inside
	 * view_get_scope(): pipeline_resume() only kept it): then on */
	return r->r_view != NULL ? PIPELINE_NEXT : PIPELINE_WAIT;
}

/*
 * The authorization gate (authz.c), on the view, before the session and
 * the rate limit: a call it denies learns nothing of sessions and takes
 * no token.  The hot path's call is read off its params' text.
 */
static enum pipeline_rc
pipeline_authorize(struct request *r)
{
	const struct mcp_method	*mm = r->r_msg.jm_mm;
	enum pipeline_rc	 rc;
	int			 allow;

	if (r->r_codec->rc_authorize != NULL)
		return r->r_codec->rc_authorize(r);
	if (!authz_on(r->r_w) || mm->mm_action == MCP_ACTION_NONE)
		return PIPELINE_NEXT;
	if ((rc = pipeline_view_fetch(r)) != PIPELINE_NEXT)
		return rc;
	if (r->r_fast.rf_params != NULL)
		allow = authz_gate_text(r->r_w, r->r_req, mm,
		    r->r_fast.rf_name, r->r_fast.rf_namelen,
		    r->r_fast.rf_params, r->r_fast.rf_plen, r->r_view);
	else
		allow = authz_gate(r->r_w, r->r_req, mm, r->r_msg.jm_params,
		    r->r_view);
	if (allow == -1) {
		r->r_codec->rc_error(r, AUTHZ_HTTP, AUTHZ_CODE,
		    authz_message(mm, r->r_msg.jm_params), NULL);
		return PIPELINE_DONE;
	}
	return PIPELINE_NEXT;
}

static enum pipeline_rc
pipeline_session(struct request *r)
{
	if (r->r_codec->rc_session == NULL)
		return PIPELINE_NEXT;
	return r->r_codec->rc_session(r);
}

static enum pipeline_rc
pipeline_view(struct request *r)
{
	return pipeline_view_fetch(r);
}

/* a rejection is the codec's: 2025-11-25 a tool result, 2026-07-28 an
 * error with data (as the reference vMCP sends them) */
static enum pipeline_rc
pipeline_ratelimit(struct request *r)
{
	unsigned int retry;

	if (r->r_codec->rc_ratelimit != NULL)
		return r->r_codec->rc_ratelimit(r);
	switch (ratelimit_call(r->r_w, r->r_req, r->r_msg.jm_mm,
	    r->r_fast.rf_params != NULL ? r->r_fast.rf_name : NULL,
	    r->r_fast.rf_namelen, r->r_msg.jm_params, &retry,
	    pipeline_resume, r, r->r_view)) {
	case RATELIMIT_PENDING:
		pipeline_trace_wait(r, "vmcpd.ratelimit");
		return PIPELINE_WAIT;
	case RATELIMIT_LIMITED:
		r->r_codec->rc_limited(r, retry);
		return PIPELINE_DONE;
	default:
		return PIPELINE_NEXT;
	}
}

/* a page of a list, copied out of the shared view */
static enum pipeline_rc
pipeline_list(struct request *r)
{
	struct core_err		 cerr;
	struct authz_filter	 af;
	json_t			*info;
	char			*page;
	size_t			 len;
	int			 rc;

	info = r->r_codec->rc_list_info != NULL ?
	    r->r_codec->rc_list_info(r->r_w) : NULL;
	rc = core_list(r->r_view, r->r_msg.jm_method, r->r_msg.jm_params,
	    views_page_size(r->r_w), info, authz_list_filter(r->r_w, r->r_req,
	    &af), &page, &len, &cerr);
	json_decref(info);
	if (rc == -1) {
		r->r_codec->rc_error(r, 200, cerr.ce_code, cerr.ce_msg, NULL);
		return PIPELINE_DONE;
	}
	pipeline_answer_text(r, page, len);
	free(page);
	return PIPELINE_DONE;
}

/*
 * What the request is for: a composite tool (run here), the hot path's
 * tool by its name, a method the view answers, a list's page, or a
 * backend.
 */
static enum pipeline_rc
pipeline_resolve(struct request *r)
{
	const struct request_codec	*c = r->r_codec;
	const struct mcp_method		*mm = r->r_msg.jm_mm;
	struct core_err			 cerr;
	enum pipeline_rc		 rc;
	json_t				*params;
	const char			*err;
	char				 msg[600];

	if (r->r_be != NULL)
		return PIPELINE_NEXT;	/* routed already */
	if (c->rc_composite != NULL && (rc = c->rc_composite(r)) !=
	    PIPELINE_NEXT)
		return rc;
	if (r->r_fast.rf_params != NULL &&
	    ((rc = c->rc_route_fast(r)) != PIPELINE_NEXT || r->r_be != NULL))
		return rc;
	if ((mm->mm_flags & MCP_MF_LOCAL) && c->rc_local != NULL) {
		c->rc_local(r);
		return PIPELINE_DONE;
	}
	/* a list needs every backend; the missing one's capabilities too */
	if (mm->mm_lists != NULL &&
	    (err = view_incomplete(r->r_w, r->r_view)) != NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", err);
		c->rc_error(r, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
		return PIPELINE_DONE;
	}
	if (c->rc_check != NULL && (rc = c->rc_check(r)) != PIPELINE_NEXT)
		return rc;
	if (mm->mm_lists != NULL)
		return pipeline_list(r);
	if ((params = c->rc_route_params(r)) == NULL) {
		c->rc_error(r, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return PIPELINE_DONE;
	}
	rc = PIPELINE_NEXT;
	if (core_route(r->r_view, r->r_w->w_conf, r->r_msg.jm_method, params,
	    &r->r_be, &r->r_bparams, &cerr) == -1) {
		/* a resource no backend serves: its URI in the error's
		 * data (MCP 2025-11-25 and 2026-07-28, Resources, Error
		 * Handling); the codec words the code for its revision */
		c->rc_error(r, 200, cerr.ce_code, cerr.ce_msg,
		    cerr.ce_code == MCP_ERR_RESOURCE_NOT_FOUND ?
		    json_pack("{s:O}", "uri", json_object_get(params, "uri")) :
		    NULL);
		rc = PIPELINE_DONE;
	} else
		/* what a 2026-07-28 backend needs (the view is here) */
		r->r_phdrs = core_param_headers(r->r_view, r->r_msg.jm_method,
		    r->r_msg.jm_params, r->r_bparams);
	json_decref(params);
	return rc;
}

/* the credential phase's, set from above (pipeline_credential_set()) */
static enum pipeline_rc (*pipeline_cred_phase)(struct request *);
static void	(*pipeline_cred_cancel)(struct request *);

void
pipeline_credential_set(enum pipeline_rc (*phase)(struct request *),
    void (*cancel)(struct request *))
{
	pipeline_cred_phase = phase;
	pipeline_cred_cancel = cancel;
}

/* a backend acting as each user: the principal's link (link_phase.c) */
static enum pipeline_rc
pipeline_credential(struct request *r)
{
	enum pipeline_rc rc;

	if (pipeline_cred_phase == NULL)
		return PIPELINE_NEXT;
	/* the store (Redis) or a refresh: a span while it waits */
	if ((rc = pipeline_cred_phase(r)) == PIPELINE_WAIT)
		pipeline_trace_wait(r, "vmcpd.link");
	return rc;
}

static enum pipeline_rc
pipeline_upstream(struct request *r)
{
	pipeline_forward(r, 0);
	return PIPELINE_DONE;
}

/* to the backend, in the revision the upstream edge picks for it */
void
pipeline_forward(struct request *r, int flags)
{
	struct upstream_req uq;

	diag_tag_route(r);
	memset(&uq, 0, sizeof(uq));
	uq.uq_method = r->r_msg.jm_method;
	/* the principal's backend session; a subscription over the shared
	 * scope's (backend_session.h) */
	uq.uq_scope = bsession_scope(r->r_principal, r->r_be,
	    (flags & UPSTREAM_F_SUBSCRIPTION) ? BSESSION_FOR_SHARED :
	    BSESSION_FOR_USER);
	uq.uq_client = (flags & UPSTREAM_F_SUBSCRIPTION) ? ERA_LISTING :
	    r->r_codec->rc_era;
	uq.uq_flags = UPSTREAM_F_TEXT | flags;
	uq.uq_trace = &r->r_trace;
	if (r->r_codec->rc_upstream != NULL &&
	    r->r_codec->rc_upstream(r, &uq) == PIPELINE_DONE)
		return;
	if (r->r_req != NULL)
		audit_set_backend(r->r_w, r->r_req, r->r_be->cb_name);
	pipeline_trace_backend(r);
	if ((r->r_up = upstream_call(r->r_w, r->r_be, &uq, r->r_codec->rc_cbs,
	    r)) == NULL)
		r->r_codec->rc_error(r, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot send the request to the backend",
		    NULL);
}

void
pipeline_answer_text(struct request *r, const char *text, size_t len)
{
	if (r->r_codec->rc_answer_text != NULL) {
		r->r_codec->rc_answer_text(r, text, len);
		return;
	}
	if (r->r_req != NULL) {		/* a composite's step has none */
		httpd_req_set_close_cb(r->r_req, NULL, NULL);
		front_reply_result(r->r_req, r->r_msg.jm_id, text, len);
		r->r_req = NULL;
	}
	(void)request_finalize(r, __func__);
}

void
pipeline_clear(struct request *r)
{
	if (r->r_req != NULL)
		httpd_req_set_close_cb(r->r_req, NULL, NULL);
	upstream_cancel(r->r_up);
	view_get_cancel(r->r_w, r);
	ratelimit_cancel(r);
	if (pipeline_cred_cancel != NULL)
		pipeline_cred_cancel(r);
	json_decref(r->r_view);
	json_decref(r->r_bparams);
	json_decref(r->r_phdrs);
	json_decref(r->r_caps);
}
