/*
 * The one backend edge.  A call walks:
 *
 *   resolve   the revision it goes in (eras.c: the record, the pin and
 *             the client's era, proto_era_pick(); probed if unknown)
 *   session   2025-11-25: the client session's backend session, or the
 *             identity scope's (backend_session.c), opened if there is none;
 *             one open per (session or scope, backend) in a worker,
 *             however many calls wait for it
 *   create    the caller's params for that revision (uc_params), in
 *             that revision's envelope and headers (upstream_ops)
 *   process   the answer classified (complete, input_required, error,
 *             failed), the era record corrected when the backend
 *             answered as the other era, and resent once when nothing
 *             ran (upstream_next_step())
 *   finalize  one uc_done; every outcome passes upstream_deliver()
 *
 * A call can be cancelled in every state; abort also tells the backend,
 * as its revision has it.  Streams (the notification listener's) walk
 * the same resolve and session steps.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/http_client.h"
#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/jsonspan.h"
#include "shared/version.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/upstream_stream.h"
#include "worker/upstream/upstream_hooks.h"
#include "worker/upstream/upstream_rule.h"
#include "worker/view/view_get.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/upstream_int.h"
#include "worker/upstream/health_store.h"

struct upstream_hooks	 upstream_hooks;

static TAILQ_HEAD(, upstream) upstreams = TAILQ_HEAD_INITIALIZER(upstreams);

static void	upstream_resolve(struct upstream *);


static void
upstream_free(struct upstream *u)
{
	TAILQ_REMOVE(&upstreams, u, u_entry);
	if (u->u_defer != NULL)
		event_free(u->u_defer);
	json_decref(u->u_sparams);
	json_decref(u->u_scaps);
	json_decref(u->u_info);
	free(u->u_refused);
	if (u->u_authz != NULL) {
		OPENSSL_cleanse(u->u_authz, strlen(u->u_authz));
		free(u->u_authz);
	}
	free(u->u_own[0]);
	free(u->u_own[1]);
	trace_ref_clear(&u->u_trace);
	free(u);
}

/*
 * Every outcome passes here, once: the place that sees each backend's
 * outcomes, so the circuit breaker counts them.  No answer (no
 * connection, a reset, a timeout, an HTTP error, garbage) is a failure;
 * a JSON-RPC error is a live backend's answer.  A cached description,
 * a call the breaker refused and a stream send nothing to count.
 */
static void
upstream_deliver(struct upstream *u, const struct upstream_result *r)
{
	const struct config_health	*ch = &u->u_w->w_conf->cf_health;
	int				 st, reset;

	if (ch->ch_cb_enabled && !u->u_stream && u->u_refused == NULL &&
	    !u->u_budget && u->u_state != US_DEFERRED &&
	    !(u->u_flags & UPSTREAM_F_PROBE)) {
		st = health_breaker_record(u->u_w->w_store, u->u_be->cb_name,
		    ch, r->ur_status == UPSTREAM_FAILED, u->u_trial,
		    store_now_ms(), &reset);
		/* the backend's part of the view goes or comes back */
		if (st == BREAKER_OPEN || st == BREAKER_CLOSED)
			view_changed_soon(u->u_w, u->u_be);
		/* the fleet's breaker (provider redis): each failure, and a
		 * success that resets failures (rare: not on the hot path) */
		if (r->ur_status == UPSTREAM_FAILED || reset)
			health_store->hs_breaker(u->u_be->cb_name,
			    r->ur_status == UPSTREAM_FAILED);
	} else if (u->u_trial && u->u_refused == NULL)
		health_breaker_release(u->u_w->w_store, u->u_be->cb_name, ch,
		    store_now_ms());
	u->u_state = US_DONE;
	u->u_delivering = 1;
	if (u->u_stream) {
		/* the caller ends it with upstream_stream_ended() */
		u->u_delivering = 0;
		u->u_hcbs->hc_done(u->u_arg, NULL, -1, r->ur_errmsg);
		return;
	}
	u->u_cbs->uc_done(u->u_arg, r);
	upstream_free(u);
}

void
upstream_fail(struct upstream *u, const char *fmt, ...)
{
	struct upstream_result	r;
	va_list			ap;
	char			msg[600];

	if (u->u_starting) {
		u->u_failed = 1;	/* upstream_call() returns NULL */
		return;
	}
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memset(&r, 0, sizeof(r));
	r.ur_status = UPSTREAM_FAILED;
	r.ur_era = u->u_era;
	r.ur_errmsg = msg;
	upstream_deliver(u, &r);
}

static void
upstream_on_defer(evutil_socket_t fd, short ev, void *arg)
{
	struct upstream		*u = arg;
	struct upstream_result	 r;

	(void)fd;
	(void)ev;
	memset(&r, 0, sizeof(r));
	r.ur_status = u->u_refused != NULL ? UPSTREAM_FAILED :
	    UPSTREAM_COMPLETE;
	r.ur_era = u->u_era;
	r.ur_response = u->u_info;
	r.ur_errmsg = u->u_refused;
	upstream_deliver(u, &r);
}

/* an answer known now (a cached description), delivered next turn */
void
upstream_defer(struct upstream *u)
{
	struct timeval tv = { 0, 0 };

	if ((u->u_defer = evtimer_new(u->u_w->w_base, upstream_on_defer,
	    u)) == NULL || evtimer_add(u->u_defer, &tv) == -1) {
		upstream_fail(u, "backend %s: out of memory",
		    u->u_be->cb_name);
		return;
	}
	u->u_state = US_DEFERRED;
}

/* vmcpd as the client of a backend */
json_t *
upstream_client_info(void)
{
	return json_pack("{s:s, s:s}", "name", "vmcpd", "version",
	    VMCPD_VERSION);
}

json_t *
upstream_response(const struct upstream_result *r)
{
	json_t		*v;
	json_error_t	 jerr;

	if (r->ur_response != NULL)
		return json_incref(r->ur_response);
	if (r->ur_text == NULL || (v = json_loadb(r->ur_text, r->ur_len,
	    JSON_ALLOW_NUL, &jerr)) == NULL)
		return NULL;
	return json_pack("{s:o}", r->ur_kind, v);
}

/*
 * The request's text, written around the text of its params instead of
 * dumped whole: jansson's dump costs more than the rest of sending a
 * call.  NULL: a method that needs escaping, or no memory; the caller
 * dumps the request then.
 */
static char *
upstream_envelope(const char *id, const char *method, const char *ptext,
    size_t plen, size_t *lenp)
{
	static const char	 h1[] = "{\"jsonrpc\":\"2.0\",\"id\":\"";
	static const char	 h2[] = "\",\"method\":\"";
	static const char	 h3[] = "\",\"params\":";
	char			*out, *o;
	const char		*c;
	size_t			 idlen = strlen(id), mlen = strlen(method);

	for (c = method; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == '"' || *c == '\\')
			return NULL;
	if ((out = malloc(sizeof(h1) + idlen + sizeof(h2) + mlen +
	    sizeof(h3) + plen + 2)) == NULL)
		return NULL;
	o = out;
	memcpy(o, h1, sizeof(h1) - 1);
	o += sizeof(h1) - 1;
	memcpy(o, id, idlen);
	o += idlen;
	memcpy(o, h2, sizeof(h2) - 1);
	o += sizeof(h2) - 1;
	memcpy(o, method, mlen);
	o += mlen;
	if (ptext != NULL) {
		memcpy(o, h3, sizeof(h3) - 1);
		o += sizeof(h3) - 1;
		memcpy(o, ptext, plen);
		o += plen;
	} else
		*o++ = '"';
	*o++ = '}';
	*o = '\0';
	*lenp = (size_t)(o - out);
	return out;
}

/* the JSON-RPC request: params as text if given, else the tree's */
char *
upstream_body(const char *id, const char *method, json_t *tree,
    const char *ptext, size_t plen, size_t *lenp)
{
	json_t	*req, *jid;
	char	*dumped = NULL, *body;

	if (ptext == NULL && tree != NULL) {
		if ((dumped = jsonrpc_dump(tree, &plen)) == NULL)
			return NULL;
		ptext = dumped;
	}
	body = upstream_envelope(id, method, ptext, plen, lenp);
	free(dumped);
	if (body != NULL)
		return body;
	if ((jid = json_string(id)) == NULL)
		return NULL;
	req = jsonrpc_request_new(jid, method, json_incref(tree));
	json_decref(jid);
	body = req != NULL ? jsonrpc_dump(req, lenp) : NULL;
	json_decref(req);
	return body;
}

/* what the backend sends mid-call, to the caller's one hook */
static void
upstream_on_message(void *arg, json_t *msg)
{
	struct upstream	*u = arg;
	char		 why[8];

	if (u->u_cbs->uc_push != NULL)
		(void)u->u_cbs->uc_push(u->u_arg, msg, NULL, u->u_bver, why,
		    sizeof(why));
}

static int
upstream_on_request(void *arg, json_t *msg, const char *bsid, char *why,
    size_t whylen)
{
	struct upstream *u = arg;

	/* 2026-07-28 asks by input_required, never mid-call */
	if (u->u_cbs->uc_push == NULL || !upstream_ops_of(u->u_era)->
	    uo_requests)
		return -1;
	return u->u_cbs->uc_push(u->u_arg, msg, bsid, u->u_bver, why, whylen);
}

/* a result the backend may not give: a failure that names it */
static void
upstream_invalid(struct upstream *u, const char *why)
{
	log_warnx("backend %s answered %s with %s", u->u_be->cb_name,
	    u->u_method, why);
	upstream_fail(u, "backend %s sent an invalid result to %s: %s",
	    u->u_be->cb_name, u->u_method, why);
}

static void
upstream_on_done(void *arg, int rc, json_t *response, int flags,
    const char *errmsg)
{
	struct upstream		*u = arg;
	struct upstream_result	 r;
	json_t			*result;
	const char		*invalid;
	int			 was_legacy;

	u->u_call = NULL;
	u->u_budget = (flags & BACKEND_F_BUDGET) != 0;
	switch (upstream_next_step(u->u_era, rc == -1, flags, response,
	    u->u_retried)) {
	case UPSTREAM_REOPEN:
		log_info("backend %s lost a session; reopening",
		    u->u_be->cb_name);
		u->u_retried = u->u_reopen = 1;
		if (u->u_onscope)
			bsession_forget(u->u_w, u->u_scope, u->u_be);
		upstream_acquire(u);
		return;
	case UPSTREAM_REPROBE:
		u->u_retried = 1;
		era_forget(u->u_w, u->u_be, errmsg);
		upstream_resolve(u);
		return;
	case UPSTREAM_DELIVER:
		break;
	}
	memset(&r, 0, sizeof(r));
	r.ur_status = upstream_classify(u->u_era, rc == -1, response, NULL,
	    NULL, 0, u->u_method, &was_legacy, &invalid);
	if (invalid != NULL) {
		upstream_invalid(u, invalid);
		return;
	}
	if (was_legacy)
		era_set(u->u_w, u->u_be, PROTO_ERA_LEGACY, "answered a "
		    "2026-07-28 request without resultType");
	result = json_object_get(response, "result");
	if ((u->u_flags & UPSTREAM_F_DESCRIBE) &&
	    r.ur_status == UPSTREAM_COMPLETE && json_is_object(result))
		backend_info_put(u->u_w, u->u_be, MCP_VERSION_MODERN, result);
	r.ur_era = u->u_era;
	r.ur_response = response;
	r.ur_errmsg = errmsg;
	upstream_deliver(u, &r);
}

/*
 * A result's members are read here (a 2026-07-28 backend's resultType)
 * or by a 2026-07-28 client's edge (modern.c); a 2025-11-25 client's
 * from a 2025-11-25 backend passes on whole.
 */
static int
upstream_wants_members(const struct upstream *u)
{
	return u->u_era == PROTO_ERA_MODERN || u->u_client == PROTO_ERA_MODERN;
}

/* the common case, as text: a result's members, scanned with the answer
 * (backend.c) if it could, for the caller to pass on */
static void
upstream_on_raw(void *arg, const char *kind, const char *json, size_t len,
    const struct proto_span *mem, size_t n)
{
	struct upstream		*u = arg;
	struct upstream_result	 r;
	struct proto_span	 own[BACKEND_RESULT_MEMBERS];
	const struct proto_span	*rt = NULL;
	json_t			*v, *resp;
	json_error_t		 jerr;
	const char		*invalid;
	int			 was_legacy, result = strcmp(kind, "result") == 0;

	u->u_call = NULL;
	memset(&r, 0, sizeof(r));
	if (!result)
		mem = NULL;
	else if (mem == NULL && upstream_wants_members(u) &&
	    proto_json_members(json, len, own, BACKEND_RESULT_MEMBERS, &n) == 0)
		mem = own;
	if (u->u_era == PROTO_ERA_MODERN && result) {
		if (mem == NULL) {
			/* more than the scan holds: as a tree */
			v = json_loadb(json, len, JSON_ALLOW_NUL, &jerr);
			resp = v != NULL ? json_pack("{s:o}", kind, v) : NULL;
			upstream_on_done(u, resp != NULL ? 0 : -1, resp, 0,
			    "the backend's answer could not be read");
			json_decref(resp);
			return;
		}
		rt = proto_json_member(mem, n, "resultType");
	}
	r.ur_members = mem;
	r.ur_nmembers = mem != NULL ? n : 0;
	r.ur_status = upstream_classify(u->u_era, 0, NULL, kind,
	    rt != NULL ? rt->ps_val : NULL, rt != NULL ? rt->ps_vallen : 0,
	    u->u_method, &was_legacy, &invalid);
	if (invalid != NULL) {
		upstream_invalid(u, invalid);
		return;
	}
	if (was_legacy)
		era_set(u->u_w, u->u_be, PROTO_ERA_LEGACY, "answered a "
		    "2026-07-28 request without resultType");
	r.ur_era = u->u_era;
	r.ur_kind = kind;
	r.ur_text = json;
	r.ur_len = len;
	upstream_deliver(u, &r);
}

/* the backend ended its stream early: the caller may do likewise */
static void
upstream_on_cut(void *arg, long retry_ms)
{
	struct upstream *u = arg;

	if (u->u_cut != NULL)
		u->u_cut(u->u_arg, retry_ms);
}

static const struct backend_call_cbs upstream_bcbs = {
	upstream_on_message, upstream_on_request, upstream_on_done, NULL, 0,
	upstream_on_cut
};
static const struct backend_call_cbs upstream_bcbs_text = {
	upstream_on_message, upstream_on_request, upstream_on_done,
	upstream_on_raw, 0, upstream_on_cut
};
static const struct backend_call_cbs upstream_bcbs_members = {
	upstream_on_message, upstream_on_request, upstream_on_done,
	upstream_on_raw, 1, upstream_on_cut
};

const struct backend_call_cbs *
upstream_bcbs_of(const struct upstream *u)
{
	if (!(u->u_flags & UPSTREAM_F_TEXT))
		return &upstream_bcbs;
	return upstream_wants_members(u) ? &upstream_bcbs_members :
	    &upstream_bcbs_text;
}


/* --- the walk ---------------------------------------------------------- */

/* the session known (or none needed): on with the request */
void
upstream_ready(struct upstream *u)
{
	const struct upstream_ops	*ops = upstream_ops_of(u->u_era);
	struct upstream_params		 p;

	if (u->u_flags & UPSTREAM_F_DESCRIBE) {
		ops->uo_describe(u);
		return;
	}
	if (u->u_stream) {
		u->u_state = US_STREAMING;
		if (ops->uo_stream(u) == -1)
			upstream_fail(u, "backend %s: cannot open its stream",
			    u->u_be->cb_name);
		return;
	}
	if ((u->u_flags & UPSTREAM_F_SUBSCRIPTION) &&
	    ops->uo_subscribe != NULL) {
		ops->uo_subscribe(u);
		return;
	}
	memset(&p, 0, sizeof(p));
	u->u_state = US_SENDING;
	if ((u->u_flags & UPSTREAM_F_PROBE) && u->u_era == PROTO_ERA_MODERN)
		u->u_method = "server/discover";
	if (u->u_cbs->uc_params(u->u_arg, u->u_era, &p) == -1) {
		json_decref(p.up_tree);
		free(p.up_owned);
		upstream_fail(u, "cannot make the request for backend %s",
		    u->u_be->cb_name);
		return;
	}
	if (ops->uo_send(u, &p) == -1)
		upstream_fail(u, "cannot send the request to backend %s",
		    u->u_be->cb_name);
	json_decref(p.up_tree);
	free(p.up_owned);
}

static void
upstream_on_era(void *arg, enum proto_era era)
{
	struct upstream *u = arg;

	u->u_era = era == PROTO_ERA_MODERN ? PROTO_ERA_MODERN :
	    PROTO_ERA_LEGACY;
	if (u->u_modern_only && u->u_era != PROTO_ERA_MODERN) {
		upstream_fail(u, "backend %s is no 2026-07-28 server",
		    u->u_be->cb_name);
		return;
	}
	if (upstream_ops_of(u->u_era)->uo_session)
		upstream_acquire(u);
	else
		upstream_ready(u);
}

static void
upstream_resolve(struct upstream *u)
{
	int era;

	u->u_state = US_RESOLVING;
	/* a probe started here goes with this call's credential */
	backend_cred_set(u->u_authz);
	era = era_resolve(u->u_w, u->u_be, u->u_client, upstream_on_era, u);
	backend_cred_set(NULL);
	if (era == 0)
		return;
	if (era == -1) {
		upstream_fail(u, "out of memory");
		return;
	}
	upstream_on_era(u, (enum proto_era)era);
}

static struct upstream *
upstream_new(struct worker *w, const struct config_backend *be,
    const char *scope, void *arg)
{
	struct upstream *u;
	size_t		 n;

	if (scope == NULL)
		scope = BSESSION_SCOPE_ANON;
	if ((n = strlen(scope)) >= sizeof(u->u_scope) ||
	    (u = worker_zalloc(sizeof(*u))) == NULL)
		return NULL;
	/* a copy: a principal's scope goes with its request */
	memcpy(u->u_scope, scope, n + 1);
	TAILQ_INSERT_TAIL(&upstreams, u, u_entry);
	u->u_w = w;
	u->u_be = be;
	u->u_arg = arg;
	u->u_starting = 1;
	return u;
}

/* the end of upstream_call() and upstream_stream(): NULL if it failed */
static struct upstream *
upstream_started(struct upstream *u)
{
	u->u_starting = 0;
	if (u->u_failed) {
		upstream_cancel(u);
		return NULL;
	}
	return u;
}

/*
 * The circuit breaker's word on a call: 0 go on (u_trial if it is the
 * half-open trial), -1 refused, failed next turn with why.  The trial's
 * lease lasts the call's timeout and a little.
 */
static int
upstream_admit(struct upstream *u)
{
	const struct config_health	*ch = &u->u_w->w_conf->cf_health;
	const char			*name = u->u_be->cb_name;
	struct breaker			 b;
	uint64_t			 now = store_now_ms(), left;
	int				 n;

	if (!ch->ch_cb_enabled)
		return 0;
	switch (health_breaker_admit(u->u_w->w_store, name, ch,
	    u->u_be->cb_timeout_ms + 1000, now, &b)) {
	case BREAKER_PASS:
		return 0;
	case BREAKER_TRIAL:
		u->u_trial = 1;
		return 0;
	case BREAKER_REJECT:
		break;
	}
	if (b.bk_state == BREAKER_OPEN) {
		left = b.bk_opened_ms + ch->ch_cb_timeout_ms > now ?
		    b.bk_opened_ms + ch->ch_cb_timeout_ms - now : 0;
		n = asprintf(&u->u_refused, "backend %s is unavailable "
		    "(circuit open after %u failures; retry in %llu s)", name,
		    b.bk_fails, (unsigned long long)((left + 999) / 1000));
	} else
		n = asprintf(&u->u_refused, "backend %s is unavailable "
		    "(circuit half-open: a trial request is in flight)", name);
	if (n == -1) {
		u->u_refused = NULL;
		upstream_fail(u, "backend %s: out of memory", name);
		return -1;
	}
	upstream_defer(u);
	return -1;
}

/*
 * outgoingAuth token_exchange: the scope's exchanged token (token_exchange.c);
 * authorization_code: the principal's link (worker/link/): or the call
 * fails (u_refused says why): never sent without it
 */
static int
upstream_authz(struct upstream *u)
{
	char	 why[256];

	if (!upstream_cred_needed(u->u_be, u->u_scope))
		return 0;
	if ((u->u_authz = malloc(UPSTREAM_AUTHZ_MAX)) != NULL &&
	    upstream_cred_of(u->u_w, u->u_be, u->u_scope, u->u_authz,
	    UPSTREAM_AUTHZ_MAX, why, sizeof(why)) == 0)
		return 0;
	if (u->u_authz == NULL)
		(void)snprintf(why, sizeof(why), "backend %s: out of memory",
		    u->u_be->cb_name);
	free(u->u_authz);
	u->u_authz = NULL;
	if ((u->u_refused = strdup(why)) == NULL)
		return -1;
	return -1;
}

struct upstream *
upstream_call(struct worker *w, const struct config_backend *be,
    const struct upstream_req *uq, const struct upstream_cbs *cbs,
    void *arg)
{
	struct upstream *u;

	if ((u = upstream_new(w, be, uq->uq_scope, arg)) == NULL)
		return NULL;
	u->u_cbs = cbs;
	u->u_method = uq->uq_method;
	u->u_sess = uq->uq_sess;
	u->u_caps = uq->uq_caps;
	u->u_client = uq->uq_client;
	u->u_flags = uq->uq_flags;
	u->u_cut = uq->uq_cut;
	if (trace_enabled)
		trace_ref_of(&u->u_trace, NULL, uq->uq_trace);
	if (upstream_authz(u) == -1)
		upstream_defer(u);
	else if ((u->u_flags & UPSTREAM_F_PROBE) || upstream_admit(u) == 0)
		upstream_resolve(u);
	return upstream_started(u);
}

static struct upstream *
upstream_stream_open(struct worker *w, const struct config_backend *be,
    const char *scope, const json_t *params, const json_t *caps,
    const struct http_call_cbs *cbs, void *arg)
{
	struct upstream *u;

	if ((u = upstream_new(w, be, scope, arg)) == NULL)
		return NULL;
	u->u_stream = 1;
	u->u_hcbs = cbs;
	u->u_sparams = json_incref((json_t *)params);
	if (caps != NULL) {
		u->u_modern_only = 1;
		u->u_scaps = json_incref((json_t *)caps);
	}
	u->u_client = ERA_LISTING;
	if (upstream_authz(u) == -1)
		upstream_fail(u, "%s", u->u_refused);
	else
		upstream_resolve(u);
	return upstream_started(u);
}

struct upstream *
upstream_stream(struct worker *w, const struct config_backend *be,
    const char *scope, const json_t *params, const struct http_call_cbs *cbs,
    void *arg)
{
	return upstream_stream_open(w, be, scope, params, NULL, cbs, arg);
}

struct upstream *
upstream_stream_modern(struct worker *w, const struct config_backend *be,
    const char *scope, const json_t *params, const json_t *caps,
    const struct http_call_cbs *cbs, void *arg)
{
	return upstream_stream_open(w, be, scope, params, caps, cbs, arg);
}

enum upstream_stream_end
upstream_stream_ended(struct upstream *u, long status)
{
	enum upstream_stream_end end = UPSTREAM_END_RETRY;

	if (u == NULL)
		return end;
	u->u_http = NULL;	/* freed by the client after hc_done */
	if (u->u_state == US_STREAMING)
		end = upstream_ops_of(u->u_era)->uo_stream_end(u, status);
	upstream_free(u);
	return end;
}

enum proto_era
upstream_era(const struct upstream *u)
{
	return u != NULL ? u->u_era : PROTO_ERA_UNKNOWN;
}

void
upstream_stream_reply(struct upstream *u, json_t *msg)
{
	/* 2026-07-28 servers send no requests: nothing to answer */
	if (u != NULL && u->u_era == PROTO_ERA_LEGACY) {
		backend_cred_set(u->u_authz);
		backend_post_nowait(u->u_w, u->u_be, u->u_bsid, u->u_bver,
		    msg);
		backend_cred_set(NULL);
	}
}

void
upstream_cancel(struct upstream *u)
{
	if (u == NULL || u->u_delivering)
		return;
	switch (u->u_state) {
	case US_RESOLVING:
		era_resolve_cancel(u->u_w, u);
		break;
	case US_OPENING:
		upstream_open_leave(u);
		break;
	case US_SENDING:
		backend_call_cancel(u->u_call);
		break;
	case US_STREAMING:
		if (u->u_http != NULL)
			http_call_cancel(u->u_http);
		break;
	default:
		break;
	}
	upstream_free(u);
}

void
upstream_abort(struct upstream *u, const char *reason)
{
	const struct upstream_ops *ops;

	if (u == NULL || u->u_delivering)
		return;
	ops = upstream_ops_of(u->u_era);
	if (u->u_state == US_SENDING && u->u_call != NULL &&
	    ops->uo_abort != NULL) {
		/* its notifications/cancelled goes with the call's
		 * credential (token_exchange) */
		backend_cred_set(u->u_authz);
		ops->uo_abort(u->u_call, reason);
		backend_cred_set(NULL);
		u->u_call = NULL;
	}
	upstream_cancel(u);
}

/* at exit: what is still waiting goes without a callback */
void
upstream_free_all(struct worker *w)
{
	struct upstream	*u;

	(void)w;
	upstream_cred_free();
	upstream_open_free_all();
	while ((u = TAILQ_FIRST(&upstreams)) != NULL) {
		if (u->u_state == US_RESOLVING)
			era_resolve_cancel(u->u_w, u);
		upstream_free(u);
	}
}

void
upstream_post(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, json_t *msg)
{
	upstream_cred_for(w, be, bsid);
	backend_post_nowait(w, be, bsid, version, msg);
	upstream_cred_done();
}

int
upstream_notify(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, const char *method,
    json_t *params)
{
	int	 rc;

	upstream_cred_for(w, be, bsid);
	rc = backend_notify(w, be, bsid, version, method, params);
	upstream_cred_done();
	return rc;
}

int
upstream_request_nowait(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, const char *method,
    json_t *params)
{
	struct backend_req	 br;
	char			 id[BACKEND_ID_MAX], *body;
	size_t			 len;
	int			 rc = -1;

	backend_next_id(w, id, sizeof(id));
	if ((body = upstream_body(id, method, params, NULL, 0, &len)) ==
	    NULL)
		return -1;
	memset(&br, 0, sizeof(br));
	br.br_id = id;
	br.br_body = body;
	br.br_len = len;
	br.br_bsid = bsid;
	br.br_version = version;
	br.br_method = method;
	br.br_spanned = 1;	/* nobody waits: no span */
	upstream_cred_for(w, be, bsid);
	if (backend_post(w, be, &br, NULL, NULL) != NULL)
		rc = 0;
	upstream_cred_done();
	free(body);
	return rc;
}
