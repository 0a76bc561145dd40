/*
 * /metrics (diag.c routes it): the Prometheus text exposition format
 * (version 0.0.4), read from the shared slots and the store.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/health_probe.h"
#include "shared/log.h"
#include "shared/pin_db.h"
#include "shared/stats.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "worker/http/httpd.h"
#include "worker/upstream/token_exchange.h"
#include "worker/process/counters.h"
#include "proto/proto.h"
#include "shared/version.h"
#include "worker/diag/console.h"
#include "worker/diag/diag.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"

/* one metric family: HELP and TYPE lines */
int
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
		p = (const uint64_t *)((const char *)diag_slot_at(w, i) +
		    off);
		if (evbuffer_add_printf(b, "%s{worker=\"%d\"} %llu\n", name, i,
		    (unsigned long long)diag_load(p)) < 0)
			return -1;
	}
	return 0;
}

/* vmcpd_link_consents_total and vmcpd_link_refreshes_total{outcome}:
 * users' links (outgoingAuth authorization_code), in enum link_count's
 * order */
static int
diag_links(struct evbuffer *b, const struct worker *w)
{
	static const char *const outcome[DIAG_LINKC] = { "started",
	    "completed", "refused", "ok", "refused", "failed" };
	size_t	 i;

	for (i = 0; i < DIAG_LINKC; i++) {
		if ((i == 0 && diag_family(b, "vmcpd_link_consents_total",
		    "counter", "Users' consents to link an upstream account "
		    "(outgoingAuth authorization_code): started (a client "
		    "sent to the consent URL), completed (a link stored), "
		    "refused (denied, another person, a bad or spent "
		    "state).") == -1) ||
		    (i == 3 && diag_family(b, "vmcpd_link_refreshes_total",
		    "counter", "Linked upstream tokens refreshed: ok, refused "
		    "by the authorization server (the user consents again), "
		    "failed (it was down or answered garbage).") == -1))
			return -1;
		if (evbuffer_add_printf(b, "%s{outcome=\"%s\"} %llu\n", i < 3 ?
		    "vmcpd_link_consents_total" : "vmcpd_link_refreshes_total",
		    outcome[i], (unsigned long long)diag_slots_sum(w,
		    offsetof(struct diag_slot, ds_links) + i *
		    sizeof(uint64_t))) < 0)
			return -1;
	}
	return 0;
}

/*
 * Pinned definitions (aggregation.pinning): vmcpd_pins_pending{backend}
 * from this host's copy, vmcpd_pin_changes_total (the builders' count of
 * new pending changes), vmcpd_pin_decisions_total{decision} (the store's
 * count: the console's and vmcpctl's, on this host).
 */
static int
diag_pins(struct evbuffer *b, struct worker *w)
{
	static const char *const gauge[2] = { PIN_DB_APPROVED,
	    PIN_DB_REJECTED };
	static const char *const word[2] = { "approved", "rejected" };
	const char	*name;
	uint64_t	 n;
	long		 p;
	size_t		 i;

	if (w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_OFF)
		return 0;
	if (diag_family(b, "vmcpd_pins_pending", "gauge",
	    "Pinned definitions of a backend whose change awaits an "
	    "operator's word (vmcpctl pins).") == -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		name = w->w_conf->cf_backends[i].cb_name;
		if ((p = pin_db_pending(w->w_store, name)) >= 0 &&
		    evbuffer_add_printf(b, "vmcpd_pins_pending{backend=\"%s\"} "
		    "%ld\n", name, p) < 0)
			return -1;
	}
	if (diag_metric(b, "vmcpd_pin_changes_total", "counter",
	    "Pinned definitions seen changed (each new definition once).",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_pin_changes))) ==
	    -1 || diag_family(b, "vmcpd_pin_decisions_total", "counter",
	    "Operators' words on pending changes taken on this host (the "
	    "console, vmcpctl pins): approved, rejected.") == -1)
		return -1;
	for (i = 0; i < 2; i++)
		if (evbuffer_add_printf(b, "vmcpd_pin_decisions_total"
		    "{decision=\"%s\"} %llu\n", word[i],
		    store_gauge_get(w->w_store, gauge[i], &n) == 0 ?
		    (unsigned long long)n : 0ULL) < 0)
			return -1;
	return 0;
}

/* vmcpd_backend_health{backend,state}: 1 for its state, 0 for others */
static int
diag_healths(struct worker *w, struct evbuffer *b)
{
	const struct config_backend	*be;
	struct probe_rec		 pr;
	enum probe_state		 hs;
	size_t				 i;
	int				 k;

	if (diag_family(b, "vmcpd_backend_health", "gauge",
	    "1 for the backend's health state as its health checks found "
	    "it (with sessionStorage redis, maybe another node's), 0 for "
	    "the other states.") == -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		hs = diag_health(w, be, &pr, NULL, 0);
		for (k = 0; k < PROBE_NSTATES; k++)
			if (evbuffer_add_printf(b, "vmcpd_backend_health"
			    "{backend=\"%s\",state=\"%s\"} %d\n",
			    be->cb_name, probe_state_name((enum probe_state)k),
			    (int)hs == k) < 0)
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

/* a principal's backend sessions of backend bi closed, summed */
static uint64_t
diag_bsession_ended(const struct worker *w, size_t bi, int evicted)
{
	uint64_t	n = 0;
	int		i;

	for (i = 0; w->w_stats != NULL && i <= w->w_nstats; i++)
		n += diag_load(&diag_slot_at(w, i)->ds_backends[bi].
		    db_bs_ended[evicted]);
	return n;
}

/*
 * The backend sessions vmcpd holds open at each backend: the client
 * sessions' (a gauge in the store, backend_session_close.c), the shared scope's and
 * the principals' (bsessions records, counted per backend by the
 * store, backend_session.c); and the principals' closed, by why.
 */
static int
diag_backend_sessions(struct worker *w, struct evbuffer *b)
{
	const struct config_backend	*be;
	char				 g[BSESSION_GROUP_MAX + 1];
	uint64_t			 client;
	size_t				 scope, mine, i, glen;

	if (diag_family(b, "vmcpd_backend_sessions", "gauge",
	    "Backend sessions open, by backend and holder: client sessions', "
	    "the shared scope's or principals'.") == -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		if (store_gauge_get(w->w_store, be->cb_name, &client) == -1 ||
		    store_group_count(w->w_store, STORE_BSESSIONS, be->cb_name,
		    strlen(be->cb_name), &scope) == -1 ||
		    (glen = bsession_group(g, sizeof(g), be->cb_name)) == 0 ||
		    store_group_count(w->w_store, STORE_BSESSIONS, g, glen,
		    &mine) == -1)
			continue;
		if (evbuffer_add_printf(b, "vmcpd_backend_sessions"
		    "{backend=\"%s\",holder=\"client\"} %llu\n", be->cb_name,
		    (unsigned long long)client) < 0 ||
		    evbuffer_add_printf(b, "vmcpd_backend_sessions"
		    "{backend=\"%s\",holder=\"scope\"} %zu\n", be->cb_name,
		    scope) < 0 ||
		    evbuffer_add_printf(b, "vmcpd_backend_sessions"
		    "{backend=\"%s\",holder=\"principal\"} %zu\n",
		    be->cb_name, mine) < 0)
			return -1;
	}
	if (diag_family(b, "vmcpd_principal_sessions_closed_total", "counter",
	    "Principals' backend sessions closed at the backend, by backend "
	    "and why: idle (sessions.backendSessionTtl) or evicted "
	    "(sessions.maxBackendSessions).") == -1)
		return -1;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		if (evbuffer_add_printf(b,
		    "vmcpd_principal_sessions_closed_total"
		    "{backend=\"%s\",reason=\"idle\"} %llu\n", be->cb_name,
		    (unsigned long long)diag_bsession_ended(w, i, 0)) < 0 ||
		    evbuffer_add_printf(b,
		    "vmcpd_principal_sessions_closed_total"
		    "{backend=\"%s\",reason=\"evicted\"} %llu\n",
		    be->cb_name,
		    (unsigned long long)diag_bsession_ended(w, i, 1)) < 0)
			return -1;
	}
	return 0;
}

/* requests to /mcp by method and outcome, summed over the slots */
static int
diag_requests_by_method(struct evbuffer *b, const struct worker *w)
{
	uint64_t	n;
	int		m, o, i;

	if (diag_family(b, "vmcpd_requests_total", "counter",
	    "Requests to /mcp by MCP method (response: a client's answer, "
	    "stream: a GET, delete: a DELETE, invalid: unreadable, other: "
	    "a method not listed) and outcome (ok, rpc_error: a JSON-RPC "
	    "error answer, rejected: 4xx, failed: 5xx, aborted: the client "
	    "left first).") == -1)
		return -1;
	for (m = 0; m < DIAG_METHODS; m++)
		for (o = 0; o < DIAG_NOUTCOMES; o++) {
			for (n = 0, i = 0; w->w_stats != NULL &&
			    i < w->w_nstats; i++)
				n += diag_load(&diag_slot_at(w, i)->
				    ds_calls[m][o]);
			if (evbuffer_add_printf(b, "vmcpd_requests_total"
			    "{method=\"%s\",outcome=\"%s\"} %llu\n",
			    diag_methods[m], diag_outcomes[o],
			    (unsigned long long)n) < 0)
				return -1;
		}
	return 0;
}

/* per backend: the answer latency histogram and the errors by kind */
static int
diag_backend_metrics(struct evbuffer *b, const struct worker *w)
{
	const char	*name;
	struct diag_bsum bs[1];
	uint64_t	 cum;
	size_t		 bi;
	int		 k;

	if (diag_family(b, "vmcpd_backend_request_duration_seconds",
	    "histogram", "Time from sending a request to a backend to its "
	    "answer (JSON-RPC errors included, failures not), by backend.") ==
	    -1)
		return -1;
	for (bi = 0; bi < w->w_conf->cf_nbackends; bi++) {
		name = w->w_conf->cf_backends[bi].cb_name;
		diag_backend_sum(w, bi, bs);
		for (cum = 0, k = 0; k < DIAG_LAT_BUCKETS; k++) {
			cum += bs->bs_lat[k];
			if (evbuffer_add_printf(b,
			    "vmcpd_backend_request_duration_seconds_bucket"
			    "{backend=\"%s\",le=\"%s\"} %llu\n", name,
			    diag_lat_le[k], (unsigned long long)cum) < 0)
				return -1;
		}
		if (evbuffer_add_printf(b,
		    "vmcpd_backend_request_duration_seconds_sum"
		    "{backend=\"%s\"} %llu.%06llu\n"
		    "vmcpd_backend_request_duration_seconds_count"
		    "{backend=\"%s\"} %llu\n", name,
		    (unsigned long long)(bs->bs_lat_sum_us / 1000000),
		    (unsigned long long)(bs->bs_lat_sum_us % 1000000), name,
		    (unsigned long long)bs->bs_count) < 0)
			return -1;
	}
	if (diag_family(b, "vmcpd_backend_errors_total", "counter",
	    "Backend requests that failed, by backend and kind (transport: "
	    "refused, reset or unreachable; timeout; http: a non-2xx "
	    "status; protocol: no usable answer).") == -1)
		return -1;
	for (bi = 0; bi < w->w_conf->cf_nbackends; bi++) {
		name = w->w_conf->cf_backends[bi].cb_name;
		diag_backend_sum(w, bi, bs);
		for (k = 0; k < DIAG_NBERR; k++)
			if (evbuffer_add_printf(b, "vmcpd_backend_errors_total"
			    "{backend=\"%s\",kind=\"%s\"} %llu\n", name,
			    diag_berrs[k],
			    (unsigned long long)bs->bs_errors[k]) < 0)
				return -1;
	}
	return 0;
}

/*
 * per backend: its list changes (received, relists, storms, the
 * interval between relists now) and its answers buffered and refused
 */
static int
diag_backend_flow(struct evbuffer *b, const struct worker *w)
{
	static const struct {
		const char	*f_name;
		const char	*f_type;
		const char	*f_help;
		size_t		 f_off;
		int		 f_ms;	/* a value in ms, shown in s */
	} fam[] = {
		{ "vmcpd_backend_list_changed_total", "counter",
		    "list_changed notifications the backend sent.",
		    offsetof(struct diag_bsum, bs_lc_notes), 0 },
		{ "vmcpd_backend_relists_total", "counter",
		    "Times the backend was listed again for its list changes "
		    "(coalesced: one under way and one pending at most).",
		    offsetof(struct diag_bsum, bs_lc_relists), 0 },
		{ "vmcpd_backend_list_changed_storms_total", "counter",
		    "Times the backend sent list_changed in a storm and its "
		    "relists were spaced out.",
		    offsetof(struct diag_bsum, bs_lc_storms), 0 },
		{ "vmcpd_backend_relist_interval_seconds", "gauge",
		    "The least time between two relists of the backend now "
		    "(1 s; longer while it storms).",
		    offsetof(struct diag_bsum, bs_lc_interval_ms), 1 },
		{ "vmcpd_backend_buffered_answer_bytes", "gauge",
		    "Bytes of the backend's answers the workers buffer now "
		    "(operational.answerBuffer).",
		    offsetof(struct diag_bsum, bs_ans_bytes), 0 },
	};
	static const char *const budgets[] = { "worker", "backend" };
	struct diag_bsum	*bs;
	const char		*name;
	uint64_t		 v;
	size_t			 f, bi, n = w->w_conf->cf_nbackends;
	int			 k, rc = -1;

	if (n == 0)
		return 0;
	if ((bs = calloc(n, sizeof(*bs))) == NULL)
		return -1;
	for (bi = 0; bi < n; bi++)
		diag_backend_sum(w, bi, &bs[bi]);
	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		if (diag_family(b, fam[f].f_name, fam[f].f_type,
		    fam[f].f_help) == -1)
			goto done;
		for (bi = 0; bi < n; bi++) {
			name = w->w_conf->cf_backends[bi].cb_name;
			memcpy(&v, (const char *)&bs[bi] + fam[f].f_off,
			    sizeof(v));
			if ((fam[f].f_ms ? evbuffer_add_printf(b,
			    "%s{backend=\"%s\"} %llu.%03llu\n", fam[f].f_name,
			    name, (unsigned long long)(v / 1000),
			    (unsigned long long)(v % 1000)) :
			    evbuffer_add_printf(b, "%s{backend=\"%s\"} %llu\n",
			    fam[f].f_name, name, (unsigned long long)v)) < 0)
				goto done;
		}
	}
	if (diag_family(b, "vmcpd_backend_answers_refused_total", "counter",
	    "Backend answers refused because buffering them would pass a "
	    "budget (operational.answerBuffer): the worker's (perWorker) "
	    "or the backend's (perBackend).") == -1)
		goto done;
	for (bi = 0; bi < n; bi++)
		for (k = 0; k < 2; k++)
			if (evbuffer_add_printf(b,
			    "vmcpd_backend_answers_refused_total"
			    "{backend=\"%s\",budget=\"%s\"} %llu\n",
			    w->w_conf->cf_backends[bi].cb_name, budgets[k],
			    (unsigned long long)bs[bi].bs_ans_refused[k]) < 0)
				goto done;
	rc = 0;
done:
	free(bs);
	return rc;
}

/*
 * /metrics: the Prometheus text exposition format (version 0.0.4):
 * what is cheap to read now; store figures only when it can be read.
 */
static int
diag_metrics_text(struct worker *w, struct evbuffer *b)
{
	struct store_envstat	es;
	size_t			n;
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
	    diag_metric(b, "vmcpd_view_builds_total", "counter",
	    "Aggregated views built (lists merged and stored).",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_view_builds))) ==
	    -1 || diag_metric(b, "vmcpd_era_reclassifications_total",
	    "counter", "Backends found speaking another MCP revision than "
	    "recorded, or sent to be probed again.",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_era_changes))) ==
	    -1 || diag_metric(b, "vmcpd_ratelimit_fail_open_total", "counter",
	    "Rate-limited calls let through unchecked: the bucket store "
	    "(LMDB, or Redis with sessionStorage.provider redis) failed.",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_rl_fail_open))) ==
	    -1 || diag_metric(b, "vmcpd_redis_errors_total", "counter",
	    "Redis commands that failed: not connected, lost, timed out or "
	    "refused.",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_redis_errors))) ==
	    -1 || diag_metric(b, "vmcpd_session_checks_total", "counter",
	    "Legacy session copies checked against Redis before a request "
	    "(sessionStorage.provider redis).",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_sess_checks))) ==
	    -1 || diag_metric(b, "vmcpd_session_checks_skipped_total",
	    "counter", "Legacy session copies taken as Redis's without a "
	    "check: Redis has sent no invalidation since the last one.",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_sess_local))) ==
	    -1 || diag_metric(b, "vmcpd_redis_invalidations_total", "counter",
	    "Keys Redis said were written since this node read them "
	    "(client-side caching; a flush counts one).",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_sess_invals))) ==
	    -1 || diag_metric(b, "vmcpd_otel_spans_exported_total", "counter",
	    "Spans an OpenTelemetry collector took (telemetry:).",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_otel_exported))) ==
	    -1 || diag_metric(b, "vmcpd_otel_spans_dropped_total", "counter",
	    "Spans dropped: the export queue full, or their export failed.",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_otel_dropped))) ==
	    -1 || diag_metric(b, "vmcpd_otel_export_failures_total", "counter",
	    "Exports to the collector that failed: refused, timed out, or "
	    "answered other than 2xx.",
	    diag_slots_sum(w, offsetof(struct diag_slot, ds_otel_failures))) ==
	    -1 || diag_links(b, w) == -1 || diag_pins(b, w) == -1 ||
	    diag_requests_by_method(b, w) == -1 ||
	    diag_op_metrics(b, w) == -1 ||
	    diag_backend_metrics(b, w) == -1 ||
	    diag_backend_flow(b, w) == -1 || diag_breakers(w, b) == -1 ||
	    diag_healths(w, b) == -1)
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
	    "close.", es.se_db[STORE_CLOSING].sd_entries) == -1 ||
	    diag_metric(b, "vmcpd_pending_relays", "gauge",
	    "Backend requests relayed to a client and awaiting its answer.",
	    es.se_db[STORE_PENDING].sd_entries) == -1 ||
	    diag_metric(b, "vmcpd_workflow_handles", "gauge",
	    "Suspended composite runs' handles, used ones until they "
	    "expire.", es.se_db[STORE_HANDLES].sd_entries) == -1)
		return -1;
	if (store_group_count(w->w_store, STORE_TOKENS, TEXCH_PRINCIPALS,
	    strlen(TEXCH_PRINCIPALS), &n) == -1)
		n = 0;
	if (diag_metric(b, "vmcpd_principals", "gauge",
	    "Principals holding their own views, backend sessions and "
	    "tokens (token_exchange).", n) == -1 ||
	    diag_metric(b, "vmcpd_principals_max", "gauge",
	    "The cap on them (sessions.maxPrincipals).",
	    w->w_conf->cf_principal_cap) == -1)
		return -1;
	return diag_backend_sessions(w, b);
}

void
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
