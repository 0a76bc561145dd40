/*
 * The diagnostics listener (daemon.diagnostics): /status and /metrics
 * on an address of their own, which the master opens beside the main
 * one and every worker accepts on.  The main port serves only /mcp and
 * /healthz.  Nothing here is authenticated: the address is meant to be
 * a loopback or private one.
 *
 * Per-worker figures live in memory the master maps shared before it
 * forks a generation (struct diag_slot, one per worker slot): each
 * worker writes its own slot, any worker reads them all, so a scrape
 * answered by any worker shows the whole daemon.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/log.h"
#include "shared/store.h"
#include "httpd.h"
#include "worker.h"

static struct httpd	*diag_httpd;

void
diag_count_request(struct worker *w, int mcp)
{
	struct diag_slot *ds;

	if (w->w_stats == NULL || w->w_slot < 0 || w->w_slot >= w->w_nstats)
		return;
	ds = &w->w_stats[w->w_slot];
	__atomic_fetch_add(&ds->ds_requests, 1, __ATOMIC_RELAXED);
	if (mcp)
		__atomic_fetch_add(&ds->ds_mcp_requests, 1, __ATOMIC_RELAXED);
}

static uint64_t
diag_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* the workers' figures as a JSON array, or NULL */
static json_t *
diag_workers_json(const struct worker *w)
{
	const struct diag_slot	*ds;
	json_t			*a, *o;
	int			 i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; w->w_stats != NULL && i < w->w_nstats; i++) {
		ds = &w->w_stats[i];
		o = json_pack("{s:i, s:I, s:I, s:I, s:I}", "slot", i,
		    "pid", (json_int_t)diag_load(&ds->ds_pid),
		    "requests", (json_int_t)diag_load(&ds->ds_requests),
		    "mcpRequests", (json_int_t)diag_load(&ds->ds_mcp_requests),
		    "restarts", (json_int_t)diag_load(&ds->ds_restarts));
		if (json_array_append_new(a, o) == -1) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* a backend's circuit breaker: its state's name ("disabled" when off)
 * and its consecutive failures */
static const char *
diag_breaker(struct worker *w, const struct config_backend *be, int *fails)
{
	struct breaker bk;

	*fails = 0;
	if (!w->w_conf->cf_health.ch_cb_enabled)
		return "disabled";
	if (health_breaker_get(w->w_store, be->cb_name, store_now_ms(),
	    &bk) == -1)
		return "unknown";
	*fails = bk.bk_fails > INT_MAX ? INT_MAX : (int)bk.bk_fails;
	return breaker_state_name((enum breaker_state)bk.bk_state);
}

/* /status: the backends and their eras, the workers, the sessions */
static void
diag_status(struct worker *w, struct httpd_req *req)
{
	const struct config_backend	*be;
	struct store_envstat		 es;
	json_t				*body, *bes, *b, *wks;
	const char			*cb;
	size_t				 i;
	int				 fails;

	if ((bes = json_array()) == NULL)
		goto fail;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		cb = diag_breaker(w, be, &fails);
		b = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "name",
		    be->cb_name, "transport",
		    config_transport_name(be->cb_transport),
		    "eraSetting", config_era_name(be->cb_era),
		    "mcpRevision", proto_era_version(era_get(w, be)),
		    "circuitBreaker", cb,
		    "consecutiveFailures", fails);
		if (b == NULL || json_array_append_new(bes, b) == -1) {
			json_decref(bes);
			goto fail;
		}
	}
	if ((wks = diag_workers_json(w)) == NULL) {
		json_decref(bes);
		goto fail;
	}
	body = json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:o}", "name",
	    w->w_conf->cf_name, "version", VMCPD_VERSION, "generation",
	    (int)w->w_gen, "worker", w->w_slot, "pid", (int)w->w_pid,
	    "workers", wks, "backends", bes);
	if (body == NULL)
		goto fail;
	if (store_envstat(w->w_store, &es) == 0 && json_object_set_new(body,
	    "sessions", json_integer((json_int_t)
	    es.se_db[STORE_SESSIONS].sd_entries)) == -1) {
		json_decref(body);
		goto fail;
	}
	front_reply_json(req, 200, body, NULL);
	json_decref(body);
	return;
fail:
	front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory");
}

/* one metric family: HELP and TYPE lines */
static int
diag_family(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	return evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name,
	    help, name, type) < 0 ? -1 : 0;
}

static int
diag_sample(struct evbuffer *b, const char *name, uint64_t v)
{
	return evbuffer_add_printf(b, "%s %llu\n", name,
	    (unsigned long long)v) < 0 ? -1 : 0;
}

/* a gauge or counter without labels */
static int
diag_metric(struct evbuffer *b, const char *name, const char *type,
    const char *help, uint64_t v)
{
	return diag_family(b, name, type, help) == -1 ||
	    diag_sample(b, name, v) == -1 ? -1 : 0;
}

/* one per-worker counter family */
static int
diag_worker_counter(struct evbuffer *b, const struct worker *w,
    const char *name, const char *help, size_t off)
{
	const uint64_t	*p;
	int		 i;

	if (diag_family(b, name, "counter", help) == -1)
		return -1;
	for (i = 0; w->w_stats != NULL && i < w->w_nstats; i++) {
		p = (const uint64_t *)((const char *)&w->w_stats[i] + off);
		if (evbuffer_add_printf(b, "%s{worker=\"%d\"} %llu\n", name, i,
		    (unsigned long long)diag_load(p)) < 0)
			return -1;
	}
	return 0;
}

/* vmcpd_backend_circuit_open and _failures, by backend */
static int
diag_breakers(struct worker *w, struct evbuffer *b)
{
	const struct config_backend	*be;
	const char			*st;
	size_t				 i;
	int				 fails;

	if (!w->w_conf->cf_health.ch_cb_enabled)
		return 0;
	if (diag_family(b, "vmcpd_backend_circuit_open", "gauge",
	    "1 while the backend's circuit breaker is open or half-open: "
	    "its requests fail at once and it is out of the lists.") == -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		st = diag_breaker(w, be, &fails);
		if (evbuffer_add_printf(b, "vmcpd_backend_circuit_open"
		    "{backend=\"%s\"} %d\n", be->cb_name,
		    strcmp(st, "closed") != 0) < 0)
			return -1;
	}
	if (diag_family(b, "vmcpd_backend_consecutive_failures", "gauge",
	    "Requests to the backend that failed in a row (no answer).") ==
	    -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		(void)diag_breaker(w, be, &fails);
		if (evbuffer_add_printf(b, "vmcpd_backend_consecutive_failures"
		    "{backend=\"%s\"} %d\n", be->cb_name, fails) < 0)
			return -1;
	}
	return 0;
}

/*
 * The backend sessions vmcpd holds open at each backend: the client
 * sessions' (a gauge in the store, bclose.c) and the identity scopes'
 * (bsessions records, counted per backend by the store).
 */
static int
diag_backend_sessions(struct worker *w, struct evbuffer *b)
{
	const struct config_backend	*be;
	uint64_t			 client;
	size_t				 scope, i;

	if (diag_family(b, "vmcpd_backend_sessions", "gauge",
	    "Backend sessions open, by backend and holder: client sessions' "
	    "or identity scopes'.") == -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		if (store_gauge_get(w->w_store, be->cb_name, &client) == -1 ||
		    store_group_count(w->w_store, STORE_BSESSIONS, be->cb_name,
		    strlen(be->cb_name), &scope) == -1)
			continue;
		if (evbuffer_add_printf(b, "vmcpd_backend_sessions"
		    "{backend=\"%s\",holder=\"client\"} %llu\n", be->cb_name,
		    (unsigned long long)client) < 0 ||
		    evbuffer_add_printf(b, "vmcpd_backend_sessions"
		    "{backend=\"%s\",holder=\"scope\"} %zu\n", be->cb_name,
		    scope) < 0)
			return -1;
	}
	return 0;
}

/*
 * /metrics: the Prometheus text exposition format (version 0.0.4):
 * what is cheap to read now; store figures only when it can be read.
 */
static int
diag_metrics_text(struct worker *w, struct evbuffer *b)
{
	struct store_envstat	es;
	int			i;

	if (diag_family(b, "vmcpd_build_info", "gauge",
	    "The version of vmcpd serving, as a label.") == -1 ||
	    evbuffer_add_printf(b, "vmcpd_build_info{version=\"%s\"} 1\n",
	    VMCPD_VERSION) < 0 ||
	    diag_metric(b, "vmcpd_config_generation", "gauge",
	    "The configuration generation serving (1 at start, +1 per "
	    "reload).", w->w_gen) == -1 ||
	    diag_metric(b, "vmcpd_workers", "gauge",
	    "Worker processes of the serving generation.",
	    (uint64_t)w->w_nstats) == -1 ||
	    diag_metric(b, "vmcpd_backends", "gauge",
	    "Configured backends.", w->w_conf->cf_nbackends) == -1 ||
	    diag_worker_counter(b, w, "vmcpd_http_requests_total",
	    "HTTP requests read on the main port, by worker slot.",
	    offsetof(struct diag_slot, ds_requests)) == -1 ||
	    diag_worker_counter(b, w, "vmcpd_mcp_requests_total",
	    "HTTP requests to /mcp, by worker slot.",
	    offsetof(struct diag_slot, ds_mcp_requests)) == -1 ||
	    diag_worker_counter(b, w, "vmcpd_worker_restarts_total",
	    "Workers respawned after they died, by worker slot.",
	    offsetof(struct diag_slot, ds_restarts)) == -1 ||
	    diag_breakers(w, b) == -1)
		return -1;
	if (store_envstat(w->w_store, &es) == -1)
		return 0;
	if (diag_metric(b, "vmcpd_lmdb_map_size_bytes", "gauge",
	    "The size of the LMDB map (daemon.mapSize).", es.se_map_size) ==
	    -1 || diag_metric(b, "vmcpd_lmdb_map_used_bytes", "gauge",
	    "Bytes of the LMDB map in use (up to its last page).",
	    es.se_used_bytes) == -1 ||
	    diag_metric(b, "vmcpd_lmdb_readers", "gauge",
	    "LMDB reader slots in use.", es.se_num_readers) == -1 ||
	    diag_metric(b, "vmcpd_lmdb_readers_max", "gauge",
	    "LMDB reader slots (daemon.maxReaders).", es.se_max_readers) ==
	    -1 || diag_metric(b, "vmcpd_sessions", "gauge",
	    "Legacy client sessions stored (expired ones until swept).",
	    es.se_db[STORE_SESSIONS].sd_entries) == -1 ||
	    diag_metric(b, "vmcpd_sessions_max", "gauge",
	    "The cap on live sessions (sessions.maxSessions).",
	    w->w_conf->cf_session_cap) == -1 ||
	    diag_metric(b, "vmcpd_sessions_per_address_max", "gauge",
	    "The cap on one client address's sessions "
	    "(sessions.maxPerAddress).", w->w_conf->cf_session_cap_addr) ==
	    -1 || diag_metric(b, "vmcpd_lmdb_map_free_bytes", "gauge",
	    "Bytes of freed LMDB pages that new writes may reuse.",
	    es.se_free_bytes) == -1 ||
	    diag_metric(b, "vmcpd_lmdb_headroom_bytes", "gauge",
	    "Bytes kept free for deletes: no new record may take them.",
	    es.se_headroom_bytes) == -1 ||
	    diag_family(b, "vmcpd_lmdb_entries", "gauge",
	    "Records in each LMDB database.") == -1)
		return -1;
	for (i = 0; i < STORE_NDB; i++)
		if (es.se_db[i].sd_name != NULL && evbuffer_add_printf(b,
		    "vmcpd_lmdb_entries{db=\"%s\"} %zu\n", es.se_db[i].sd_name,
		    es.se_db[i].sd_entries) < 0)
			return -1;
	if (diag_metric(b, "vmcpd_lmdb_expiry_index_entries", "gauge",
	    "Entries of the expiry index the keeper sweeps by.",
	    es.se_expiry_entries) == -1 ||
	    diag_metric(b, "vmcpd_backend_sessions_closing", "gauge",
	    "Ended client sessions whose backend sessions are queued to "
	    "close.", es.se_db[STORE_CLOSING].sd_entries) == -1)
		return -1;
	return diag_backend_sessions(w, b);
}

static void
diag_metrics(struct worker *w, struct httpd_req *req)
{
	struct evbuffer *b;

	if ((b = evbuffer_new()) == NULL || diag_metrics_text(w, b) == -1) {
		if (b != NULL)
			evbuffer_free(b);
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	(void)httpd_add_header(req, "Content-Type",
	    "text/plain; version=0.0.4; charset=utf-8");
	httpd_send_reply(req, 200, b);
	evbuffer_free(b);
}

static void
diag_on_request(struct httpd_req *req, void *arg)
{
	struct worker	*w = arg;
	const char	*path = httpd_req_path(req);

	if (strcmp(path, "/status") == 0) {
		if (front_get_only(req) == 0)
			diag_status(w, req);
		return;
	}
	if (strcmp(path, "/metrics") == 0) {
		if (front_get_only(req) == 0)
			diag_metrics(w, req);
		return;
	}
	front_reply_error(req, 404, NULL, JSONRPC_INVALID_REQUEST,
	    "Not Found: the diagnostics are /status and /metrics");
}

int
diag_init(struct worker *w)
{
	struct httpd_limits	 lim;

	if (w->w_diag_fd == -1)
		return 0;
	front_limits(w->w_conf, &lim);
	lim.hl_max_body = 1024;	/* GET and HEAD only */
	if ((diag_httpd = httpd_new(w->w_base, w->w_diag_fd, &lim,
	    diag_on_request, w)) == NULL)
		return -1;
	return 0;
}

/* the new generation's workers take the diagnostics over */
void
diag_drain(struct worker *w)
{
	(void)w;
	if (diag_httpd != NULL)
		httpd_stop_accepting(diag_httpd);
}

void
diag_free(struct worker *w)
{
	(void)w;
	httpd_free(diag_httpd);
	diag_httpd = NULL;
}
