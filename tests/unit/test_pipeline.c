/*
 * pipeline.c on its own: the order of its phases and each phase's
 * contract (worker/pipeline/pipeline.h), one table row per contract.
 * The client codec is a fake that writes what it is asked into a trace,
 * as are the neighbours (the view, the gate, the rate limit, the core,
 * the upstream edge, the HTTP exchange), which answer as the row says:
 * at once, later (the test fires the callback) or not at all.  Every
 * request is finalized exactly once (its r_free writes "free") and
 * leaves every reference it was given as it found it.
 *
 * The fakes replace their archive members (unit.a) whole: everything
 * pipeline.c calls outside request.c is defined here, so the link takes
 * pipeline.o, request.o and the proto and log objects only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "proto/jsonrpc.h"
#include "proto/method.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/auth/ratelimit.h"
#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"
#include "worker/pipeline/pipeline.h"
#include "worker/process/process.h"
#include "worker/process/request.h"
#include "worker/process/counters.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"
#include "unit.h"
#include "trace_fake.h"

static const char CALL[] = "{\"jsonrpc\":\"2.0\",\"id\":7,"
    "\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
    "\"arguments\":{\"x\":1}}}";
static const char LIST[] = "{\"jsonrpc\":\"2.0\",\"id\":7,"
    "\"method\":\"tools/list\",\"params\":{}}";
static const char PING[] = "{\"jsonrpc\":\"2.0\",\"id\":7,"
    "\"method\":\"ping\"}";
/* the hot path's spans (as the front's scan leaves them) */
static const char FAST_PARAMS[] = "{\"name\":\"echo\",\"arguments\":{\"x\":1}}";
static const char PAGE[] = "{\"tools\":[]}";

#define PAGE_SIZE	17
#define RETRY_S		7

/* what a fake codec op or a neighbour does */
enum opmode {
	OP_NONE = 0,		/* the op is NULL */
	OP_NEXT,
	OP_DONE			/* answers (finalizes) the request */
};

/* how view_get_scope() answers */
enum vmode {
	V_SYNC = 0,		/* inside the call, from the stored view */
	V_LATER,		/* the test fires the callback */
	V_FAIL,			/* -1 */
	V_SYNC_ERR		/* inside the call, with an error */
};

struct row {
	const char		*name;
	const char		*body;		/* NULL: CALL */
	int			 fast;		/* the hot path's spans set */
	int			 routed;	/* r_be set already */
	int			 step;		/* a composite's step: no
						   connection, principal and
						   view set */
	int			 legacy;	/* the codec's era */
	int			 close_cancels;
	int			 authz;		/* authz_on() */
	int			 deny;		/* the gate denies */
	enum vmode		 view;
	enum ratelimit_verdict	 rl;		/* ratelimit_call() first */
	enum ratelimit_verdict	 rl2;		/* ... after a PENDING */
	enum opmode		 authorize, session, ratelimit, composite,
				 route_fast, check, upstream;
	int			 local;		/* rc_local */
	int			 list_info;	/* rc_list_info */
	const char		*incomplete;	/* view_incomplete() */
	int			 list_fail, route_fail, params_fail, up_fail;
	/* a wait: the trace then; the callback fired with an error, or
	 * the connection closed instead */
	const char		*waits;
	const char		*fire_err;
	int			 close;
	const char		*trace;		/* the whole trace */
	const char		*msg;		/* the error's message */
	int			 up_cancels;	/* upstream_cancel()s of a call */
};

/* what the fakes were asked */
static struct {
	const struct row	*f_row;
	char			 f_trace[1024];
	char			 f_msg[600];
	int			 f_frees;
	int			 f_inflight;
	/* the HTTP exchange */
	httpd_req_cb		 f_close_cb;
	void			*f_close_arg;
	void			*f_watched;	/* the first close cb's arg */
	char			 f_reply[64];
	const json_t		*f_reply_id;
	char			 f_audit[32];
	/* the waits */
	view_cb			 f_view_cb;
	void			*f_view_arg;
	int			 f_view_gets;
	void			*f_view_cancelled;
	ratelimit_resume_fn	 f_rl_cb;
	void			*f_rl_arg;
	int			 f_rl_calls;
	void			*f_rl_cancelled;
	/* the core */
	int			 f_listed;
	size_t			 f_pagesize;
	const json_t		*f_list_info;
	struct authz_filter	*f_filter_given, *f_filter_seen;
	int			 f_routed;
	const json_t		*f_route_params;
	const json_t		*f_phdrs_bparams;
	/* the upstream edge */
	int			 f_up_calls;
	struct upstream_req	 f_uq;
	char			 f_uq_method[32];
	char			 f_uq_scope[32];
	const struct upstream_cbs *f_uq_cbs;
	void			*f_uq_arg;
	const struct config_backend *f_uq_be;
	const struct principal	*f_bs_p;
	enum bsession_use	 f_bs_use;
	int			 f_up_cancels, f_up_aborts;
} F;

static struct config		 conf;
static struct worker		 wk = { .w_conf = &conf };
static struct config_backend	 backend = { .cb_name = "b1" };
static struct principal		 principal, step_principal;
static long			 hr_obj, up_obj;
#define HR	((struct httpd_req *)(void *)&hr_obj)
#define UP	((struct upstream *)(void *)&up_obj)
static const struct upstream_cbs fake_cbs;

/* the references the fakes hand out; each ends as it began, at 1 */
static json_t	*view_obj, *info_obj, *params_obj, *bparams_obj,
		*phdrs_obj, *caps_obj;

static void	tr(const char *, ...) __attribute__((format(printf, 1, 2)));

static void
tr(const char *fmt, ...)
{
	size_t	n = strlen(F.f_trace);
	va_list	ap;

	if (n > 0 && n < sizeof(F.f_trace) - 1)
		F.f_trace[n++] = ' ';
	va_start(ap, fmt);
	(void)vsnprintf(F.f_trace + n, sizeof(F.f_trace) - n, fmt, ap);
	va_end(ap);
}

/* ---- the fake neighbours ---- */

void
worker_request_hold(struct worker *w)
{
	(void)w;
	F.f_inflight++;
}

void
worker_request_release(struct worker *w, const char *where)
{
	(void)w;
	(void)where;
	F.f_inflight--;
}

const struct principal *
auth_principal(const struct httpd_req *req)
{
	assert_ptr_equal(req, HR);
	return &principal;
}

const char *
texch_view_scope(const struct httpd_req *req)
{
	(void)req;
	return "view-scope";
}

int
authz_on(const struct worker *w)
{
	(void)w;
	return F.f_row->authz;
}

int
authz_gate(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const json_t *params, json_t *view)
{
	(void)w;
	(void)req;
	assert_non_null(mm);
	assert_non_null(params);
	assert_ptr_equal(view, view_obj);	/* on the view */
	tr("gate");
	return F.f_row->deny ? -1 : 0;
}

int
authz_gate_text(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const char *name, size_t namelen,
    const char *params, size_t plen, json_t *view)
{
	(void)w;
	(void)req;
	assert_non_null(mm);
	assert_ptr_equal(params, FAST_PARAMS);
	assert_int_equal(plen, sizeof(FAST_PARAMS) - 1);
	assert_int_equal(namelen, 4);
	assert_memory_equal(name, "echo", 4);
	assert_ptr_equal(view, view_obj);
	tr("gate_text");
	return F.f_row->deny ? -1 : 0;
}

const char *
authz_message(const struct mcp_method *mm, const json_t *params)
{
	(void)mm;
	(void)params;
	return "Forbidden: test";
}

struct authz_filter *
authz_list_filter(struct worker *w, struct httpd_req *req,
    struct authz_filter *f)
{
	(void)w;
	(void)req;
	F.f_filter_given = f;
	return f;
}

void
audit_set_backend(struct worker *w, struct httpd_req *req,
    const char *name)
{
	(void)w;
	assert_ptr_equal(req, HR);
	(void)snprintf(F.f_audit, sizeof(F.f_audit), "%s", name);
}

int
view_get_scope(struct worker *w, const char *scope, view_cb cb, void *arg)
{
	(void)w;
	assert_string_equal(scope, "view-scope");
	F.f_view_gets++;
	tr("view");
	switch (F.f_row->view) {
	case V_SYNC:
		cb(arg, view_obj, NULL);
		return 0;
	case V_SYNC_ERR:
		cb(arg, NULL, "no view");
		return 0;
	case V_FAIL:
		return -1;
	case V_LATER:
		F.f_view_cb = cb;
		F.f_view_arg = arg;
		return 0;
	}
	return -1;
}

void
view_get_cancel(struct worker *w, void *arg)
{
	(void)w;
	F.f_view_cancelled = arg;
	if (arg == F.f_view_arg)
		F.f_view_cb = NULL;
}

const char *
view_incomplete(struct worker *w, json_t *view)
{
	(void)w;
	assert_ptr_equal(view, view_obj);
	return F.f_row->incomplete;
}

size_t
views_page_size(struct worker *w)
{
	(void)w;
	return PAGE_SIZE;
}

enum ratelimit_verdict
ratelimit_call(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const char *fast, size_t fastlen,
    const json_t *params, unsigned int *retry_s, ratelimit_resume_fn resume,
    void *arg, json_t *view)
{
	enum ratelimit_verdict v;

	(void)w;
	(void)req;
	(void)mm;
	(void)params;
	assert_ptr_equal(view, view_obj);
	/* the hot path's tool by its name */
	if (F.f_row->fast) {
		assert_int_equal(fastlen, 4);
		assert_memory_equal(fast, "echo", 4);
	} else
		assert_null(fast);
	tr("rl");
	v = F.f_rl_calls++ == 0 ? F.f_row->rl : F.f_row->rl2;
	if (v == RATELIMIT_PENDING) {
		F.f_rl_cb = resume;
		F.f_rl_arg = arg;
	} else if (v == RATELIMIT_LIMITED)
		*retry_s = RETRY_S;
	return v;
}

void
ratelimit_cancel(void *arg)
{
	F.f_rl_cancelled = arg;
	if (arg == F.f_rl_arg)
		F.f_rl_cb = NULL;
}

int
core_list(json_t *view, const char *method, json_t *params, size_t pagesize,
    const json_t *server_info, struct authz_filter *authz, char **text,
    size_t *len, struct core_err *cerr)
{
	assert_ptr_equal(view, view_obj);
	assert_string_equal(method, "tools/list");
	(void)params;
	tr("list");
	F.f_listed++;
	F.f_pagesize = pagesize;
	F.f_list_info = server_info;
	F.f_filter_seen = authz;
	if (F.f_row->list_fail) {
		cerr->ce_code = JSONRPC_INVALID_PARAMS;
		(void)snprintf(cerr->ce_msg, sizeof(cerr->ce_msg),
		    "Invalid cursor");
		return -1;
	}
	if ((*text = strdup(PAGE)) == NULL)
		return -1;
	*len = sizeof(PAGE) - 1;
	return 0;
}

int
core_route(json_t *view, const struct config *cf, const char *method,
    json_t *params, const struct config_backend **be, json_t **bparams,
    struct core_err *cerr)
{
	assert_ptr_equal(view, view_obj);
	assert_ptr_equal(cf, &conf);
	assert_non_null(method);
	tr("route");
	F.f_routed++;
	F.f_route_params = params;
	if (F.f_row->route_fail) {
		cerr->ce_code = JSONRPC_INVALID_PARAMS;
		(void)snprintf(cerr->ce_msg, sizeof(cerr->ce_msg),
		    "Unknown tool: echo");
		return -1;
	}
	*be = &backend;
	*bparams = json_incref(bparams_obj);
	return 0;
}

json_t *
core_param_headers(json_t *view, const char *method, const json_t *params,
    const json_t *bparams)
{
	assert_ptr_equal(view, view_obj);
	(void)method;
	(void)params;
	F.f_phdrs_bparams = bparams;
	return json_incref(phdrs_obj);
}

const char *
bsession_scope(const struct principal *p, const struct config_backend *be,
    enum bsession_use use)
{
	assert_ptr_equal(be, &backend);
	F.f_bs_p = p;
	F.f_bs_use = use;
	return use == BSESSION_FOR_SHARED ? "scope-shared" : "scope-user";
}

struct upstream *
upstream_call(struct worker *w, const struct config_backend *be,
    const struct upstream_req *uq, const struct upstream_cbs *cbs,
    void *arg)
{
	(void)w;
	tr("up");
	F.f_up_calls++;
	F.f_uq = *uq;
	(void)snprintf(F.f_uq_method, sizeof(F.f_uq_method), "%s",
	    uq->uq_method);
	(void)snprintf(F.f_uq_scope, sizeof(F.f_uq_scope), "%s",
	    uq->uq_scope);
	F.f_uq_cbs = cbs;
	F.f_uq_arg = arg;
	F.f_uq_be = be;
	return F.f_row->up_fail ? NULL : UP;
}

void
upstream_cancel(struct upstream *u)
{
	if (u != NULL)
		F.f_up_cancels++;
}

void
upstream_abort(struct upstream *u, const char *reason)
{
	assert_non_null(reason);
	if (u != NULL) {
		tr("abort");
		F.f_up_aborts++;
	}
}

void
httpd_req_set_close_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	assert_ptr_equal(req, HR);
	if (cb != NULL && F.f_watched == NULL)
		F.f_watched = arg;
	F.f_close_cb = cb;
	F.f_close_arg = arg;
}

/* the figures are counters_op.c's, with httpd's own request */
void
diag_tag_route(struct request *r)
{
	(void)r;
}

void
httpd_send_end(struct httpd_req *req)
{
	assert_ptr_equal(req, HR);
	tr("send_end");
	F.f_close_cb = NULL;	/* the exchange is gone */
}

void
front_reply_result(struct httpd_req *req, const json_t *id,
    const char *result, size_t len)
{
	assert_ptr_equal(req, HR);
	/* the close callback is off before the answer */
	assert_null(F.f_close_cb);
	tr("reply");
	F.f_reply_id = id;
	(void)snprintf(F.f_reply, sizeof(F.f_reply), "%.*s", (int)len,
	    result);
}

/* ---- the fake codec ---- */

/* the request answered: as the codecs' own answers do */
static void
fake_answer(struct request *r)
{
	if (r->r_req != NULL)
		httpd_req_set_close_cb(r->r_req, NULL, NULL);
	r->r_req = NULL;
	(void)request_finalize(r, __func__);
}

static enum pipeline_rc
fake_op(struct request *r, enum opmode m, const char *what)
{
	if (m == OP_DONE) {
		tr("%s!", what);
		fake_answer(r);
		return PIPELINE_DONE;
	}
	tr("%s", what);
	return PIPELINE_NEXT;
}

/* the codec's ops that answer NEXT or DONE, each as its row says */
#define FAKE_OP(op)							\
static enum pipeline_rc							\
fake_##op(struct request *r)						\
{									\
	return fake_op(r, F.f_row->op, #op);				\
}
FAKE_OP(authorize)
FAKE_OP(session)
FAKE_OP(ratelimit)
FAKE_OP(composite)
FAKE_OP(check)
#undef FAKE_OP

/* DONE: on its way, as the codecs' own route the hot path's call */
static enum pipeline_rc
fake_route_fast(struct request *r)
{
	tr("fast");
	if (F.f_row->route_fast != OP_DONE)
		return PIPELINE_NEXT;
	r->r_be = &backend;
	pipeline_forward(r, 0);
	return PIPELINE_DONE;
}

static void
fake_local(struct request *r)
{
	tr("local");
	fake_answer(r);
}

static json_t *
fake_list_info(struct worker *w)
{
	assert_ptr_equal(w, &wk);
	return json_incref(info_obj);
}

static json_t *
fake_route_params(struct request *r)
{
	(void)r;
	tr("params");
	return F.f_row->params_fail ? NULL : json_incref(params_obj);
}

static enum pipeline_rc
fake_upstream(struct request *r, struct upstream_req *uq)
{
	assert_ptr_equal(uq->uq_method, r->r_msg.jm_method);
	uq->uq_caps = caps_obj;		/* filled in: sent as filled */
	return fake_op(r, F.f_row->upstream, "rc_upstream");
}

static void
fake_error(struct request *r, int status, int code, const char *message,
    json_t *data)
{
	tr("error %d %d", status, code);
	(void)snprintf(F.f_msg, sizeof(F.f_msg), "%s", message);
	json_decref(data);
	fake_answer(r);
}

static void
fake_limited(struct request *r, unsigned int retry_s)
{
	tr("limited %u", retry_s);
	fake_answer(r);
}

static void
fake_free(struct request *r)
{
	tr("free");
	F.f_frees++;
	pipeline_clear(r);
	free(r);
}

static struct request_codec
fake_codec(const struct row *rw)
{
	struct request_codec c = {
		.rc_name = "test",
		.rc_era = rw->legacy ? PROTO_ERA_LEGACY : PROTO_ERA_MODERN,
		.rc_close_cancels = rw->close_cancels,
		.rc_authorize = rw->authorize ? fake_authorize : NULL,
		.rc_ratelimit = rw->ratelimit ? fake_ratelimit : NULL,
		.rc_session = rw->session ? fake_session : NULL,
		.rc_route_fast = fake_route_fast,
		.rc_local = rw->local ? fake_local : NULL,
		.rc_check = rw->check ? fake_check : NULL,
		.rc_list_info = rw->list_info ? fake_list_info : NULL,
		.rc_route_params = fake_route_params,
		.rc_composite = rw->composite ? fake_composite : NULL,
		.rc_upstream = rw->upstream ? fake_upstream : NULL,
		.rc_cbs = &fake_cbs,
		.rc_error = fake_error,
		.rc_limited = fake_limited,
	};

	return c;
}

/* ---- the driver ---- */

static int
setup(void **state)
{
	(void)state;
	memset(&F, 0, sizeof(F));
	view_obj = jparse("{\"tools\":{}}");
	info_obj = jparse("{\"name\":\"vmcpd\"}");
	params_obj = jparse("{\"name\":\"echo\"}");
	bparams_obj = jparse("{\"name\":\"b1_echo\"}");
	phdrs_obj = jparse("{}");
	caps_obj = jparse("{}");
	return 0;
}

/* every reference the fakes handed out is back at the test's own */
static void
refs_intact(const char *name)
{
	const json_t	*objs[] = { view_obj, info_obj, params_obj,
	    bparams_obj, phdrs_obj, caps_obj };
	size_t		 i;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		if (objs[i]->refcount != 1)
			fail_msg("%s: reference %zu held %zu times", name, i,
			    (size_t)objs[i]->refcount);
}

/* (a test that failed half-way may have left references held: each
 * test checks its own, refs_intact()) */
static int
teardown(void **state)
{
	(void)state;
	json_decref(view_obj);
	json_decref(info_obj);
	json_decref(params_obj);
	json_decref(bparams_obj);
	json_decref(phdrs_obj);
	json_decref(caps_obj);
	return 0;
}

/* a request started as the edges start one (request_start()) */
static struct request *
fake_request(const char *body, struct httpd_req *req)
{
	struct request		*r;
	struct jsonrpc_msg	 m;

	assert_non_null(r = calloc(1, sizeof(*r)));
	assert_int_equal(jsonrpc_parse(body, strlen(body), &m, NULL), 0);
	request_start(r, &wk, req, &m, fake_free);
	return r;
}

static void
row_run(const struct row *rw)
{
	struct request_codec	 codec = fake_codec(rw);
	struct request		*r;
	const char		*body = rw->body != NULL ? rw->body : CALL;
	void			*rp;

	memset(&F, 0, sizeof(F));
	F.f_row = rw;
	r = fake_request(body, rw->step ? NULL : HR);
	rp = r;
	if (rw->fast) {
		r->r_fast.rf_params = FAST_PARAMS;
		r->r_fast.rf_plen = sizeof(FAST_PARAMS) - 1;
		r->r_fast.rf_name = "echo";
		r->r_fast.rf_namelen = 4;
	}
	if (rw->routed)
		r->r_be = &backend;
	if (rw->step) {
		r->r_principal = &step_principal;
		r->r_view = json_incref(view_obj);
	}
	pipeline_run(r, &codec);

	if (rw->waits != NULL) {
		if (strcmp(F.f_trace, rw->waits) != 0)
			fail_msg("%s: waits at \"%s\", not \"%s\"", rw->name,
			    F.f_trace, rw->waits);
		assert_int_equal(F.f_frees, 0);
		if (rw->close) {
			assert_non_null(F.f_close_cb);
			assert_ptr_equal(F.f_close_arg, r);
			F.f_close_cb(HR, F.f_close_arg);
		} else if (F.f_view_cb != NULL) {
			view_cb cb = F.f_view_cb;

			F.f_view_cb = NULL;
			cb(F.f_view_arg, rw->fire_err != NULL ? NULL :
			    view_obj, rw->fire_err);
		} else if (F.f_rl_cb != NULL) {
			ratelimit_resume_fn cb = F.f_rl_cb;

			F.f_rl_cb = NULL;
			cb(F.f_rl_arg, view_obj, NULL);
		} else if (F.f_up_calls == 0)
			fail_msg("%s: nothing waits", rw->name);
	}
	if (F.f_frees == 0) {
		/* on its way: the backend's answer, as the codecs' cbs
		 * deliver it */
		assert_ptr_equal(r->r_up, UP);
		tr("done");
		r->r_up = NULL;
		fake_answer(r);
	}

	if (strcmp(F.f_trace, rw->trace) != 0)
		fail_msg("%s: trace \"%s\", not \"%s\"", rw->name, F.f_trace,
		    rw->trace);
	if (rw->msg != NULL)
		assert_string_equal(F.f_msg, rw->msg);
	refs_intact(rw->name);
	/* finalized once, its worker's hold dropped, nothing left waiting
	 * on it or watching it */
	assert_int_equal(F.f_frees, 1);
	assert_int_equal(F.f_inflight, 0);
	assert_null(F.f_view_cb);
	assert_null(F.f_rl_cb);
	assert_null(F.f_close_cb);
	assert_ptr_equal(F.f_view_cancelled, rp);
	assert_ptr_equal(F.f_rl_cancelled, rp);
	assert_int_equal(F.f_up_cancels, rw->up_cancels);
	/* a request with a connection watches it from the start */
	assert_ptr_equal(F.f_watched, rw->step ? NULL : rp);
	assert_true(F.f_view_gets <= 1);
	if (F.f_listed) {
		assert_int_equal(F.f_pagesize, PAGE_SIZE);
		assert_ptr_equal(F.f_list_info, rw->list_info ? info_obj :
		    NULL);
		assert_non_null(F.f_filter_given);
		assert_ptr_equal(F.f_filter_seen, F.f_filter_given);
	}
	if (strstr(F.f_trace, "reply") != NULL) {
		assert_string_equal(F.f_reply, PAGE);
		assert_non_null(F.f_reply_id);
	}
	if (F.f_routed) {
		/* the codec's params, routed; the headers of what core
		 * routed */
		assert_ptr_equal(F.f_route_params, params_obj);
		if (!rw->route_fail)
			assert_ptr_equal(F.f_phdrs_bparams, bparams_obj);
	}
	if (F.f_up_calls) {
		/* the codec's renderings, the principal's own scope, the
		 * codec's era, as text */
		assert_int_equal(F.f_up_calls, 1);
		assert_string_equal(F.f_uq_method, "tools/call");
		assert_ptr_equal(F.f_uq_cbs, &fake_cbs);
		assert_ptr_equal(F.f_uq_arg, rp);
		assert_ptr_equal(F.f_uq_be, &backend);
		assert_ptr_equal(F.f_bs_p, rw->step ? &step_principal :
		    &principal);
		assert_int_equal(F.f_bs_use, BSESSION_FOR_USER);
		assert_string_equal(F.f_uq_scope, "scope-user");
		assert_int_equal(F.f_uq.uq_client, rw->legacy ?
		    PROTO_ERA_LEGACY : PROTO_ERA_MODERN);
		assert_int_equal(F.f_uq.uq_flags, UPSTREAM_F_TEXT);
		assert_ptr_equal(F.f_uq.uq_caps, rw->upstream ? caps_obj :
		    NULL);
		/* audited with its backend when it has a connection */
		assert_string_equal(F.f_audit, rw->step ? "" : "b1");
	}
}

static const struct row rows[] = {
	{ .name = "authz off: session, view, rate limit, resolve, upstream",
	  .session = OP_NEXT, .composite = OP_NEXT,
	  .trace = "session view rl composite params route up done free" },
	{ .name = "authz on, a Cedar action: the view and the gate first",
	  .authz = 1, .session = OP_NEXT,
	  .trace = "view gate session rl params route up done free" },
	{ .name = "denied: 403 before 404, no session, no token",
	  .authz = 1, .deny = 1, .session = OP_NEXT,
	  .trace = "view gate error 403 403 free", .msg = "Forbidden: test" },
	{ .name = "authz on, a method without a Cedar action: no gate",
	  .body = LIST, .authz = 1, .session = OP_NEXT,
	  .trace = "session view rl list reply free" },
	{ .name = "the hot path's gate reads the params' text",
	  .fast = 1, .authz = 1,
	  .trace = "view gate_text rl fast params route up done free" },
	{ .name = "the session refuses: nothing after",
	  .session = OP_DONE, .trace = "session! free" },
	{ .name = "a view that cannot be asked for: 500",
	  .view = V_FAIL, .session = OP_NEXT,
	  .trace = "session view error 500 -32603 free" },
	{ .name = "a view that fails inside the call: 200 -32603, nothing "
	  "after",
	  .authz = 1, .view = V_SYNC_ERR, .session = OP_NEXT,
	  .trace = "view error 200 -32603 free" },
	{ .name = "a view later, for the gate: resumes at the gate",
	  .authz = 1, .view = V_LATER, .session = OP_NEXT,
	  .waits = "view",
	  .trace = "view gate session rl params route up done free" },
	{ .name = "a view later, for the view phase: resumes there",
	  .view = V_LATER, .session = OP_NEXT, .waits = "session view",
	  .trace = "session view rl params route up done free" },
	{ .name = "a view that fails later: 200 -32603 with why",
	  .view = V_LATER, .waits = "view", .fire_err = "the builder died",
	  .trace = "view error 200 -32603 free",
	  .msg = "Internal error: the builder died" },
	{ .name = "rate limited: its retry, nothing after",
	  .rl = RATELIMIT_LIMITED,
	  .trace = "view rl limited 7 free" },
	{ .name = "rate limit pending: asked again on resume, then on",
	  .rl = RATELIMIT_PENDING, .rl2 = RATELIMIT_OK,
	  .session = OP_NEXT, .waits = "session view rl",
	  .trace = "session view rl rl params route up done free" },
	{ .name = "rate limit pending, then limited",
	  .rl = RATELIMIT_PENDING, .rl2 = RATELIMIT_LIMITED,
	  .waits = "view rl", .trace = "view rl rl limited 7 free" },
	{ .name = "a composite tool: its run, nothing routed",
	  .composite = OP_DONE, .fast = 1,
	  .trace = "view rl composite! free" },
	{ .name = "the hot path routed by name: no tree route",
	  .fast = 1, .route_fast = OP_DONE,
	  .trace = "view rl fast up done free" },
	{ .name = "a method the view answers: rc_local",
	  .body = PING, .local = 1, .trace = "view rl local free" },
	{ .name = "a list: a page through front_reply_result",
	  .body = LIST, .list_info = 1,
	  .trace = "view rl list reply free" },
	{ .name = "a list on an incomplete view: -32603 with why",
	  .body = LIST, .check = OP_NEXT, .incomplete = "b2 is not listed",
	  .trace = "view rl error 200 -32603 free",
	  .msg = "Internal error: b2 is not listed" },
	{ .name = "a list core refuses: core's code",
	  .body = LIST, .list_fail = 1,
	  .trace = "view rl list error 200 -32602 free",
	  .msg = "Invalid cursor" },
	{ .name = "a list checked by the codec first",
	  .body = LIST, .check = OP_NEXT,
	  .trace = "view rl check list reply free" },
	{ .name = "the codec's check refuses: no list, no route",
	  .check = OP_DONE, .trace = "view rl check! free" },
	{ .name = "a route core refuses: core's code",
	  .route_fail = 1,
	  .trace = "view rl params route error 200 -32602 free",
	  .msg = "Unknown tool: echo" },
	{ .name = "no params to route: -32603",
	  .params_fail = 1, .trace = "view rl params error 200 -32603 free",
	  .msg = "Internal error: out of memory" },
	{ .name = "a route: upstream_call in the codec's era (2025-11-25)",
	  .legacy = 1, .session = OP_NEXT,
	  .trace = "session view rl params route up done free" },
	{ .name = "upstream_call fails: rc_error",
	  .up_fail = 1,
	  .trace = "view rl params route up error 200 -32603 free",
	  .msg = "Internal error: cannot send the request to the backend" },
	{ .name = "the codec takes the call (rc_upstream DONE): nothing sent",
	  .upstream = OP_DONE,
	  .trace = "view rl params route rc_upstream! free" },
	{ .name = "the codec fills the call in (rc_upstream NEXT)",
	  .upstream = OP_NEXT,
	  .trace = "view rl params route rc_upstream up done free" },
	{ .name = "routed already: no resolve",
	  .routed = 1, .composite = OP_NEXT, .fast = 1,
	  .trace = "view rl up done free" },
	{ .name = "rc_authorize replaces the gate",
	  .authz = 1, .authorize = OP_NEXT, .session = OP_NEXT,
	  .trace = "authorize session view rl params route up done free" },
	{ .name = "rc_authorize refuses",
	  .authz = 1, .authorize = OP_DONE, .session = OP_NEXT,
	  .trace = "authorize! free" },
	{ .name = "rc_ratelimit replaces the rate limit",
	  .ratelimit = OP_NEXT,
	  .trace = "view ratelimit params route up done free" },
	{ .name = "rc_ratelimit refuses",
	  .ratelimit = OP_DONE, .trace = "view ratelimit! free" },
	{ .name = "a composite's step: no connection, its view and principal",
	  .step = 1, .authz = 1, .authorize = OP_NEXT, .ratelimit = OP_NEXT,
	  .trace = "authorize ratelimit params route up done free" },
	{ .name = "closed while the view waits: finalized once, cancelled",
	  .close_cancels = 1, .view = V_LATER, .close = 1, .waits = "view",
	  .trace = "view send_end free" },
	{ .name = "closed while the rate limit waits",
	  .rl = RATELIMIT_PENDING, .close = 1, .waits = "view rl",
	  .trace = "view rl send_end free" },
	{ .name = "closed during the call (2026-07-28): the call aborted",
	  .close_cancels = 1, .close = 1, .waits = "view rl params route up",
	  .trace = "view rl params route up send_end abort free" },
	{ .name = "closed during the call (2025-11-25): no callback after",
	  .legacy = 1, .close = 1, .waits = "view rl params route up",
	  .trace = "view rl params route up send_end free", .up_cancels = 1 },
};

/* a row, as a test of its own (its name is the row's) */
static void
test_pipeline_row(void **state)
{
	row_run(*state);
}

/* what the request holds, released; what it waits on, cancelled */
static void
test_pipeline_clear(void **state)
{
	static const struct row	 rw;
	struct request		*r;

	(void)state;
	F.f_row = &rw;
	r = fake_request(CALL, HR);
	pipeline_watch(r);
	assert_ptr_equal(F.f_close_arg, r);
	r->r_view = json_incref(view_obj);
	r->r_bparams = json_incref(bparams_obj);
	r->r_phdrs = json_incref(phdrs_obj);
	r->r_caps = json_incref(caps_obj);
	r->r_up = UP;
	pipeline_clear(r);
	assert_null(F.f_close_cb);
	assert_int_equal(F.f_up_cancels, 1);
	assert_ptr_equal(F.f_view_cancelled, r);
	assert_ptr_equal(F.f_rl_cancelled, r);
	assert_int_equal(view_obj->refcount, 1);
	assert_int_equal(bparams_obj->refcount, 1);
	assert_int_equal(phdrs_obj->refcount, 1);
	assert_int_equal(caps_obj->refcount, 1);
	/* cleared: its finalize must not release them again */
	r->r_view = r->r_bparams = r->r_phdrs = r->r_caps = NULL;
	r->r_up = NULL;
	r->r_req = NULL;
	assert_int_equal(request_finalize(r, "test"), 1);
	assert_int_equal(F.f_frees, 1);
	assert_int_equal(F.f_inflight, 0);
	refs_intact(__func__);
}

/* a subscription goes over the shared scope's session, for listening */
static void
test_pipeline_forward_subscription(void **state)
{
	static const struct row	 rw;
	struct request		*r;
	struct request_codec	 codec = fake_codec(&rw);

	(void)state;
	F.f_row = &rw;
	r = fake_request(CALL, HR);
	r->r_codec = &codec;
	r->r_principal = &principal;
	r->r_be = &backend;
	pipeline_forward(r, UPSTREAM_F_SUBSCRIPTION);
	assert_ptr_equal(r->r_up, UP);
	assert_int_equal(F.f_bs_use, BSESSION_FOR_SHARED);
	assert_string_equal(F.f_uq_scope, "scope-shared");
	assert_int_equal(F.f_uq.uq_client, ERA_LISTING);
	assert_int_equal(F.f_uq.uq_flags,
	    UPSTREAM_F_TEXT | UPSTREAM_F_SUBSCRIPTION);
	r->r_up = NULL;
	fake_answer(r);
	assert_int_equal(F.f_frees, 1);
	refs_intact(__func__);
}

#define NROWS	(sizeof(rows) / sizeof(rows[0]))

int
main(void)
{
	static const struct CMUnitTest more[] = {
		cmocka_unit_test(test_pipeline_clear),
		cmocka_unit_test(test_pipeline_forward_subscription),
	};
	struct CMUnitTest	 tests[NROWS + sizeof(more) / sizeof(more[0])];
	size_t			 i;

	for (i = 0; i < NROWS; i++)
		tests[i] = (struct CMUnitTest){ rows[i].name,
		    test_pipeline_row, NULL, NULL, (void *)&rows[i] };
	for (i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		tests[NROWS + i] = more[i];
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		tests[i].setup_func = setup;
		tests[i].teardown_func = teardown;
	}
	return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
