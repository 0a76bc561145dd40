/*
 * Backend eras: which MCP revision each backend speaks.  Probed
 * 2026-07-28 first with server/discover (proto_probe_outcome() has the
 * table), recorded in the store's "eras" db so every worker shares one
 * probe, and corrected in band when a backend answers as the other era
 * (era_set, era_forget).  Inconclusive probes (authentication, transient
 * failures) are not recorded: the request goes Legacy and the next one
 * after a short hold-off probes again.
 *
 * A backend found 2026-07-28 is then sent a 2025-11-25 initialize (whose
 * session is deleted at once): if it negotiates a 2025 revision, it is
 * recorded as speaking both, and each request goes in its client's era
 * (proto_era_pick()).  Every request waits for the probe, bounded by the
 * backend's timeout, before it is routed: the revision it goes in never
 * depends on how fast the probe is.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/http_client.h"
#include "worker/trace/trace.h"
#include "worker/upstream/backend.h"
#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/headers.h"
#include "proto/sse.h"
#include "proto/classify.h"
#include "proto/probe.h"
#include "shared/version.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/upstream/eras.h"

#define ERAS_TTL_MS		(60 * 60 * 1000)	/* re-probe hourly */
#define ERAS_RECHECK_MS		1000	/* local copy of the store's */
#define ERAS_HOLD_MS		5000	/* after an inconclusive probe */
#define ERAS_BODY_MAX		(1024 * 1024)

struct era_waiter {
	TAILQ_ENTRY(era_waiter)	 ew_entry;
	era_cb			 ew_cb;
	void			*ew_arg;
	enum proto_era		 ew_client;
};

struct era_probe {
	struct worker			*ep_w;
	const struct config_backend	*ep_be;
	struct http_call		*ep_http;
	char				*ep_body;
	size_t				 ep_len;
	long				 ep_status;
	int				 ep_sse;
	int				 ep_init;	/* the initialize */
	char				*ep_cred;	/* token_exchange's */
	char				*ep_sid;	/* its session */
	struct trace_span		*ep_span;	/* its request's */
	TAILQ_HEAD(, era_waiter)	 ep_waiters;
};

struct era_slot {
	enum proto_era		 es_era;
	uint64_t		 es_checked;	/* store read at */
	uint64_t		 es_hold;	/* es_hold_era until, unprobed */
	enum proto_era		 es_hold_era;
	struct era_probe	*es_probe;
};

static int	 era_probe_post(struct era_probe *, const char *method,
		    json_t *params);

/* one per configured backend, made on first use (a worker's
 * configuration is fixed for its life: a reload forks new workers) */
static struct era_slot	*slots;
static size_t		 nslots;

static struct era_slot *
era_slot(struct worker *w, const struct config_backend *be)
{
	size_t i = (size_t)(be - w->w_conf->cf_backends);

	if (i >= w->w_conf->cf_nbackends)
		return NULL;
	if (slots == NULL) {
		if ((slots = calloc(w->w_conf->cf_nbackends,
		    sizeof(*slots))) == NULL)
			return NULL;
		nslots = w->w_conf->cf_nbackends;
	}
	return i < nslots ? &slots[i] : NULL;
}

/* what the store says, if it is about this URL (as stored: redacted) */
static enum proto_era
era_load(struct worker *w, const struct config_backend *be)
{
	struct store_rec	 rec;
	json_t			*o;
	json_error_t		 jerr;
	const char		*era, *url;
	enum proto_era		 e = PROTO_ERA_UNKNOWN;

	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_ERAS, be->cb_name, strlen(be->cb_name),
	    store_now_ms(), &rec) != 0)
		return PROTO_ERA_UNKNOWN;
	o = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
	store_rec_clear(&rec);
	era = json_string_value(json_object_get(o, "era"));
	url = json_string_value(json_object_get(o, "url"));
	if (era != NULL && url != NULL && be->cb_url_shown != NULL &&
	    strcmp(url, be->cb_url_shown) == 0)
		e = strcmp(era, proto_era_version(PROTO_ERA_BOTH)) == 0 ?
		    PROTO_ERA_BOTH : proto_era_of_version(era);
	json_decref(o);
	return e;
}

enum proto_era
era_get(struct worker *w, const struct config_backend *be)
{
	struct era_slot	*es;
	uint64_t	 now;

	if (be->cb_era == PROTO_ERA_LEGACY ||
	    be->cb_transport != TRANSPORT_STREAMABLE_HTTP)
		return PROTO_ERA_LEGACY;
	if (be->cb_era == PROTO_ERA_MODERN)
		return PROTO_ERA_MODERN;
	if ((es = era_slot(w, be)) == NULL)
		return PROTO_ERA_LEGACY;
	now = store_now_ms();
	if (es->es_era == PROTO_ERA_UNKNOWN || now - es->es_checked >=
	    ERAS_RECHECK_MS) {
		es->es_era = era_load(w, be);
		es->es_checked = now;
	}
	if (es->es_era == PROTO_ERA_UNKNOWN && now < es->es_hold)
		return es->es_hold_era;
	return es->es_era;
}

enum proto_era
era_for(struct worker *w, const struct config_backend *be,
    enum proto_era client)
{
	return proto_era_pick(be->cb_era, era_get(w, be), client);
}

void
era_set(struct worker *w, const struct config_backend *be,
    enum proto_era era, const char *why)
{
	struct era_slot	*es;
	enum proto_era	 was;
	json_t		*o;
	char		*buf;
	size_t		 len;
	uint64_t	 now = store_now_ms();

	if (be->cb_era != PROTO_ERA_UNKNOWN ||
	    be->cb_transport != TRANSPORT_STREAMABLE_HTTP ||
	    (es = era_slot(w, be)) == NULL)
		return;
	if ((was = era_load(w, be)) != era) {
		log_info("backend %s speaks %s: %s", be->cb_name,
		    proto_era_version(era), why);
		if (was != PROTO_ERA_UNKNOWN)
			diag_count_era_change(w);
	}
	es->es_era = era;
	es->es_checked = now;
	o = json_pack("{s:s, s:s, s:s, s:I}", "era", proto_era_version(era),
	    "url", be->cb_url_shown, "why", why, "at", (json_int_t)now);
	if (o != NULL && (buf = jsonrpc_dump(o, &len)) != NULL) {
		if (store_put(w->w_store, STORE_ERAS, be->cb_name,
		    strlen(be->cb_name), buf, len, now + ERAS_TTL_MS,
		    now) == -1)
			log_warnx("cannot record the era of backend %s",
			    be->cb_name);
		free(buf);
	}
	json_decref(o);
}

void
era_forget(struct worker *w, const struct config_backend *be,
    const char *why)
{
	struct era_slot *es;

	/* a configured era is never probed: nothing to forget */
	if (be->cb_era != PROTO_ERA_UNKNOWN || (es = era_slot(w, be)) == NULL)
		return;
	/* a worker that probed it meanwhile found it Legacy: that verdict
	 * is fresher than the Modern belief the caller acted on */
	if (era_load(w, be) == PROTO_ERA_LEGACY) {
		es->es_era = PROTO_ERA_LEGACY;
		es->es_checked = store_now_ms();
		return;
	}
	log_info("backend %s: era to be probed again: %s", be->cb_name, why);
	diag_count_era_change(w);
	(void)store_del(w->w_store, STORE_ERAS, be->cb_name,
	    strlen(be->cb_name));
	es->es_era = PROTO_ERA_UNKNOWN;
	es->es_checked = store_now_ms();
	es->es_hold = 0;
}

static void
era_probe_free(struct era_probe *ep)
{
	struct era_waiter *ew;

	while ((ew = TAILQ_FIRST(&ep->ep_waiters)) != NULL) {
		TAILQ_REMOVE(&ep->ep_waiters, ew, ew_entry);
		free(ew);
	}
	if (ep->ep_http != NULL)
		http_call_cancel(ep->ep_http);
	backend_trace_end(ep->ep_span, 0);	/* still out: cancelled */
	/* the initialize's session: not wanted, whatever came of it */
	if (ep->ep_sid != NULL) {
		backend_cred_set(ep->ep_cred);
		(void)backend_session_delete(ep->ep_w, ep->ep_be, ep->ep_sid,
		    MCP_VERSION_LEGACY, ep->ep_be->cb_timeout_ms, NULL, NULL);
		backend_cred_set(NULL);
	}
	free(ep->ep_sid);
	free(ep->ep_body);
	if (ep->ep_cred != NULL) {
		explicit_bzero(ep->ep_cred, strlen(ep->ep_cred));
		free(ep->ep_cred);
	}
	free(ep);
}

static int
era_on_sse(void *arg, const struct sse_event *ev)
{
	json_t		**msg = arg;
	json_error_t	 jerr;
	json_t		*o;

	if (*msg != NULL || (ev->se_event[0] != '\0' &&
	    strcmp(ev->se_event, "message") != 0))
		return 0;
	if ((o = json_loadb(ev->se_data, ev->se_data_len, JSON_ALLOW_NUL,
	    &jerr)) == NULL)
		return 0;
	/* the answer, not a notification sent before it */
	if (json_object_get(o, "result") != NULL ||
	    json_object_get(o, "error") != NULL)
		*msg = o;
	else
		json_decref(o);
	return 0;
}

/* the JSON-RPC answer in the body, JSON or an SSE stream, or NULL */
static json_t *
era_answer(struct era_probe *ep)
{
	struct sse_parser	*p;
	json_t			*msg = NULL;
	json_error_t		 jerr;

	if (ep->ep_body == NULL)
		return NULL;
	if (!ep->ep_sse)
		return json_loadb(ep->ep_body, ep->ep_len, JSON_ALLOW_NUL,
		    &jerr);
	if ((p = sse_parser_new(ERAS_BODY_MAX, era_on_sse, &msg)) == NULL)
		return NULL;
	(void)sse_parser_feed(p, ep->ep_body, ep->ep_len);
	(void)sse_parser_feed(p, "\n\n", 2);
	sse_parser_free(p);
	return msg;
}

static int
era_on_head(void *arg, struct http_call *hc, long status)
{
	struct era_probe	*ep = arg;
	const char		*ct, *sid;

	ep->ep_status = status;
	ct = http_call_header(hc, "Content-Type");
	ep->ep_sse = ct != NULL && strncasecmp(ct, "text/event-stream",
	    17) == 0;
	if (ep->ep_init && (sid = http_call_header(hc, "Mcp-Session-Id")) !=
	    NULL && proto_session_id_valid(sid) && ep->ep_sid == NULL &&
	    (ep->ep_sid = strdup(sid)) == NULL)
		return -1;
	return 0;
}

static int
era_on_data(void *arg, struct http_call *hc, const char *buf, size_t len)
{
	struct era_probe	*ep = arg;

	(void)hc;
	return http_body_add(&ep->ep_body, &ep->ep_len, buf, len,
	    ERAS_BODY_MAX);
}

static void
era_on_done(void *arg, struct http_call *hc, int result, const char *errmsg)
{
	struct era_probe	*ep = arg;
	struct era_slot		*es;
	struct era_waiter	*ew;
	enum proto_era		 era;
	json_t			*msg;
	char			 why[160];

	(void)hc;
	ep->ep_http = NULL;
	backend_trace_done(ep->ep_span, result, ep->ep_status, errmsg);
	backend_trace_end(ep->ep_span, 1);
	ep->ep_span = NULL;
	msg = result == 0 ? era_answer(ep) : NULL;
	era = ep->ep_init ? proto_probe_initialize(result == 0, ep->ep_status,
	    msg, why, sizeof(why)) : proto_probe_outcome(result == 0,
	    ep->ep_status, msg, why, sizeof(why));
	/* the discover result says what the backend offers: keep it */
	if (!ep->ep_init && era != PROTO_ERA_UNKNOWN &&
	    era != PROTO_ERA_LEGACY && json_is_object(json_object_get(msg,
	    "result")))
		backend_info_put(ep->ep_w, ep->ep_be, MCP_VERSION_MODERN,
		    json_object_get(msg, "result"));
	json_decref(msg);
	/* Modern: does it speak 2025-11-25 too?  The waiters wait on */
	if (!ep->ep_init && era == PROTO_ERA_MODERN) {
		ep->ep_init = 1;
		free(ep->ep_body);
		ep->ep_body = NULL;
		ep->ep_len = 0;
		ep->ep_status = 0;
		if (era_probe_post(ep, "initialize", json_pack("{s:s, s:{}, "
		    "s:{s:s, s:s}}", "protocolVersion", MCP_VERSION_LEGACY,
		    "capabilities", "clientInfo", "name", "vmcpd", "version",
		    VMCPD_VERSION)) == 0)
			return;
		(void)snprintf(why, sizeof(why), "server/discover lists "
		    MCP_VERSION_MODERN "; cannot send initialize");
	}
	es = era_slot(ep->ep_w, ep->ep_be);
	if (era == PROTO_ERA_UNKNOWN) {
		/* what the discover showed stands for now, unrecorded */
		era = ep->ep_init ? PROTO_ERA_MODERN : PROTO_ERA_LEGACY;
		log_warnx("backend %s: era probe inconclusive (%s%s%s); "
		    "using %s for now", ep->ep_be->cb_name, why,
		    result == -1 ? ": " : "", result == -1 ? errmsg : "",
		    proto_era_version(era));
		if (es != NULL) {
			es->es_hold = store_now_ms() + ERAS_HOLD_MS;
			es->es_hold_era = era;
		}
	} else
		era_set(ep->ep_w, ep->ep_be, era, why);
	/* a waiter may cancel others: take them one at a time, with the
	 * probe still findable by era_resolve_cancel() */
	while ((ew = TAILQ_FIRST(&ep->ep_waiters)) != NULL) {
		TAILQ_REMOVE(&ep->ep_waiters, ew, ew_entry);
		ew->ew_cb(ew->ew_arg, proto_era_pick(ep->ep_be->cb_era, era,
		    ew->ew_client));
		free(ew);
	}
	if (es != NULL)
		es->es_probe = NULL;
	era_probe_free(ep);
}

/* one probe request: 2026-07-28 server/discover, or the 2025-11-25
 * initialize after it (params taken); 0, or -1 and nothing sent */
static int
era_probe_post(struct era_probe *ep, const char *method, json_t *params)
{
	static const struct http_call_cbs hcbs = {
		era_on_head, era_on_data, era_on_done
	};
	static unsigned long long seq;
	const struct config_backend *be = ep->ep_be;
	struct worker	*w = ep->ep_w;
	json_t		*req = NULL, *id;
	char		*body = NULL, idbuf[64];
	size_t		 len;
	int		 modern = !ep->ep_init;

	(void)snprintf(idbuf, sizeof(idbuf), "vmcpd-probe-%d-%llu",
	    (int)w->w_pid, ++seq);
	if (params == NULL || (id = json_string(idbuf)) == NULL) {
		json_decref(params);
		return -1;
	}
	req = jsonrpc_request_new(id, method, params);	/* steals params */
	json_decref(id);
	if (req == NULL || (body = jsonrpc_dump(req, &len)) == NULL ||
	    (ep->ep_http = http_call_new(w->w_hc, "POST", be->cb_url)) ==
	    NULL)
		goto fail;
	/* a new trace: a probe serves every call waiting on it */
	if (trace_enabled && (ep->ep_span = backend_trace_begin(be, NULL,
	    method, NULL, NULL, 0)) != NULL &&
	    backend_trace_headers(ep->ep_http, ep->ep_span, NULL) == -1)
		goto fail;
	/* initialize goes without MCP-Protocol-Version (2025-11-25) */
	backend_cred_set(ep->ep_cred);
	if (backend_http_setup(ep->ep_http, be) == -1 ||
	    http_call_add_header(ep->ep_http, "Content-Type",
	    "application/json") == -1 ||
	    http_call_add_header(ep->ep_http, "Accept",
	    "application/json, text/event-stream") == -1 ||
	    (modern && http_call_add_header(ep->ep_http,
	    "MCP-Protocol-Version", MCP_VERSION_MODERN) == -1) ||
	    (modern && http_call_add_header(ep->ep_http, "Mcp-Method",
	    method) == -1) ||
	    http_call_set_body(ep->ep_http, body, len) == -1)
		goto fail;
	http_call_set_timeout(ep->ep_http, be->cb_timeout_ms);
	if (http_call_start(ep->ep_http, &hcbs, ep) == -1) {
		ep->ep_http = NULL;	/* freed by the client */
		goto fail;
	}
	log_debug("backend %s: probing its era (%s)", be->cb_name, method);
	free(body);
	json_decref(req);
	return 0;
fail:
	if (ep->ep_http != NULL)
		http_call_cancel(ep->ep_http);
	ep->ep_http = NULL;
	trace_discard(ep->ep_span);
	ep->ep_span = NULL;
	free(body);
	json_decref(req);
	return -1;
}

static struct era_probe *
era_probe_start(struct worker *w, const struct config_backend *be)
{
	struct era_probe	*ep;

	if ((ep = calloc(1, sizeof(*ep))) == NULL)
		return NULL;
	TAILQ_INIT(&ep->ep_waiters);
	ep->ep_w = w;
	ep->ep_be = be;
	/* both of its requests go with the credential of the call that
	 * started it (token_exchange), if any */
	if (backend_cred_get() != NULL &&
	    (ep->ep_cred = strdup(backend_cred_get())) == NULL) {
		free(ep);
		return NULL;
	}
	if (era_probe_post(ep, "server/discover", json_pack("{s:{s:s, s:{}, "
	    "s:{s:s, s:s}}}", "_meta", MCP_META_PROTOCOL_VERSION,
	    MCP_VERSION_MODERN, MCP_META_CLIENT_CAPABILITIES,
	    MCP_META_CLIENT_INFO, "name", "vmcpd", "version",
	    VMCPD_VERSION)) == -1) {
		era_probe_free(ep);
		return NULL;
	}
	return ep;
}

int
era_resolve(struct worker *w, const struct config_backend *be,
    enum proto_era client, era_cb cb, void *arg)
{
	struct era_slot		*es;
	struct era_waiter	*ew;
	enum proto_era		 era;

	if ((era = era_for(w, be, client)) != PROTO_ERA_UNKNOWN)
		return (int)era;
	if ((es = era_slot(w, be)) == NULL)
		return PROTO_ERA_LEGACY;
	if ((ew = calloc(1, sizeof(*ew))) == NULL)
		return -1;
	ew->ew_cb = cb;
	ew->ew_arg = arg;
	ew->ew_client = client;
	/* one probe per backend in this worker, however many wait */
	if (es->es_probe == NULL &&
	    (es->es_probe = era_probe_start(w, be)) == NULL) {
		free(ew);
		log_warnx("backend %s: cannot probe its era; using %s",
		    be->cb_name, MCP_VERSION_LEGACY);
		return PROTO_ERA_LEGACY;
	}
	TAILQ_INSERT_TAIL(&es->es_probe->ep_waiters, ew, ew_entry);
	return 0;
}

void
era_resolve_cancel(struct worker *w, void *arg)
{
	struct era_waiter	*ew, *next;
	size_t			 i;

	(void)w;
	for (i = 0; i < nslots; i++) {
		if (slots[i].es_probe == NULL)
			continue;
		for (ew = TAILQ_FIRST(&slots[i].es_probe->ep_waiters);
		    ew != NULL; ew = next) {
			next = TAILQ_NEXT(ew, ew_entry);
			if (ew->ew_arg != arg)
				continue;
			TAILQ_REMOVE(&slots[i].es_probe->ep_waiters, ew,
			    ew_entry);
			free(ew);
		}
	}
}

void
eras_free(void)
{
	size_t i;

	for (i = 0; i < nslots; i++)
		if (slots[i].es_probe != NULL)
			era_probe_free(slots[i].es_probe);
	free(slots);
	slots = NULL;
	nslots = 0;
}
