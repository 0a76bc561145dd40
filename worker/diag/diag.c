/*
 * The diagnostics listener (daemon.diagnostics): /status and /metrics
 * on an address of their own, which the master opens beside the main
 * one and every worker accepts on.  The main port serves only /mcp and
 * /healthz.  Nothing here is authenticated: the address is meant to be
 * a loopback or private one.
 *
 * Per-worker figures live in memory the master maps shared before it
 * forks a generation (struct diag_slot, one per worker slot, with one
 * struct diag_backend per backend): each worker writes its own slot,
 * any worker reads them all, so a scrape answered by any worker shows
 * the whole daemon.  Counting costs a load and a store in the worker's
 * own cache line, never a store write: the hot path does not notice.
 * The figures start at zero with each generation (a reload), which a
 * Prometheus rate() takes as a counter reset.
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

static struct httpd	*diag_httpd;

/* one backend's figures, summed over the slots */
struct diag_bsum {
	uint64_t	 bs_lat[DIAG_LAT_BUCKETS];
	uint64_t	 bs_lat_sum_us;
	uint64_t	 bs_count;
	uint64_t	 bs_errors[DIAG_NBERR];
	uint64_t	 bs_last_ms;
	uint64_t	 bs_last_us;
	uint64_t	 bs_err_ms;
	char		 bs_err[160];
	uint64_t	 bs_lc_notes;
	uint64_t	 bs_lc_relists;
	uint64_t	 bs_lc_storms;
	uint64_t	 bs_lc_interval_ms;
	uint64_t	 bs_ans_bytes;
	uint64_t	 bs_ans_refused[2];
};

static void
diag_backend_sum(const struct worker *w, size_t bi, struct diag_bsum *bs)
{
	const struct diag_backend	*db;
	uint64_t			 seq, ms, at, last_at = 0, mono;
	char				 msg[sizeof(bs->bs_err)];
	int				 i, k, tries;

	memset(bs, 0, sizeof(*bs));
	/* the workers' slots and the builder's, which lists backends */
	for (i = 0; w->w_stats != NULL && i <= w->w_nstats; i++) {
		db = &diag_slot_at(w, i)->ds_backends[bi];
		for (k = 0; k < DIAG_LAT_BUCKETS; k++) {
			bs->bs_lat[k] += diag_load(&db->db_lat[k]);
			bs->bs_count += diag_load(&db->db_lat[k]);
		}
		bs->bs_lat_sum_us += diag_load(&db->db_lat_sum_us);
		for (k = 0; k < DIAG_NBERR; k++)
			bs->bs_errors[k] += diag_load(&db->db_errors[k]);
		bs->bs_lc_notes += diag_load(&db->db_lc_notes);
		bs->bs_lc_relists += diag_load(&db->db_lc_relists);
		bs->bs_lc_storms += diag_load(&db->db_lc_storms);
		if (diag_load(&db->db_lc_interval_ms) > bs->bs_lc_interval_ms)
			bs->bs_lc_interval_ms = diag_load(
			    &db->db_lc_interval_ms);
		bs->bs_ans_bytes += diag_load(&db->db_ans_bytes);
		for (k = 0; k < 2; k++)
			bs->bs_ans_refused[k] += diag_load(
			    &db->db_ans_refused[k]);
		if ((at = diag_load(&db->db_last_at)) > last_at) {
			last_at = at;
			bs->bs_last_us = diag_load(&db->db_last_us);
		}
		for (tries = 0; tries < 3; tries++) {
			seq = __atomic_load_n(&db->db_err_seq,
			    __ATOMIC_ACQUIRE);
			if (seq & 1)
				continue;
			ms = diag_load(&db->db_err_ms);
			memcpy(msg, db->db_err, sizeof(msg));
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&db->db_err_seq,
			    __ATOMIC_RELAXED) == seq)
				break;
		}
		if (tries < 3 && ms > bs->bs_err_ms) {
			bs->bs_err_ms = ms;
			msg[sizeof(msg) - 1] = '\0';
			memcpy(bs->bs_err, msg, sizeof(msg));
		}
	}
	/* the last answer's wall time: now, less how long ago it was */
	if (last_at != 0 && (mono = diag_now_us()) >= last_at)
		bs->bs_last_ms = store_now_ms() - (mono - last_at) / 1000;
}

/* a wall-clock time in ms as RFC 3339 UTC text, or null for 0 */
static json_t *
diag_time(uint64_t ms)
{
	char		buf[40];
	struct tm	tm;
	time_t		t = (time_t)(ms / 1000);

	if (ms == 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return json_null();
	(void)snprintf(buf + 19, sizeof(buf) - 19, ".%03uZ",
	    (unsigned int)(ms % 1000));
	return json_string(buf);
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
		ds = diag_slot_at(w, i);
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

/* a counter summed over the slots, at offset off of struct diag_slot */
static uint64_t
diag_slots_sum(const struct worker *w, size_t off)
{
	uint64_t	n = 0;
	int		i;

	/* the builder's slot too: its view builds and era corrections */
	for (i = 0; w->w_stats != NULL && i <= w->w_nstats; i++)
		n += diag_load((const uint64_t *)((const char *)
		    diag_slot_at(w, i) + off));
	return n;
}

/* the era record of a backend (which revision, why, since when), or null */
static json_t *
diag_era_record(struct worker *w, const struct config_backend *be)
{
	struct store_rec	 rec;
	json_t			*o, *r;
	json_error_t		 jerr;

	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_ERAS, be->cb_name, strlen(be->cb_name),
	    store_now_ms(), &rec) != 0)
		return json_null();
	o = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
	store_rec_clear(&rec);
	r = json_pack("{s:O?, s:O?, s:o}", "era", json_object_get(o, "era"),
	    "why", json_object_get(o, "why"), "at", diag_time((uint64_t)
	    json_integer_value(json_object_get(o, "at"))));
	json_decref(o);
	return r != NULL ? r : json_null();
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

/* a backend's health record (healthcheck.c): unknown when there is none;
 * with provider redis the fleet's verdict this node follows, if any
 * (node: who found it) */
static enum probe_state
diag_health(struct worker *w, const struct config_backend *be,
    struct probe_rec *pr, char *node, size_t nodelen)
{
	if (health_verdict_get(w->w_store, be->cb_name, store_now_ms(), pr,
	    node, nodelen) == -1)
		memset(pr, 0, sizeof(*pr));
	return (enum probe_state)pr->pr_state;
}

/* the last health check: when, its latency, the last failure's error */
static json_t *
diag_health_json(const struct probe_rec *pr)
{
	json_t *r;

	if (pr->pr_at_ms == 0)
		return json_null();
	r = json_pack("{s:o, s:o, s:i, s:o}", "at", diag_time(pr->pr_at_ms),
	    "latencyMs", pr->pr_latency_us == 0 ? json_null() :
	    json_real((double)pr->pr_latency_us / 1000.0),
	    "consecutiveFailures", (int)(pr->pr_fails > INT_MAX ? INT_MAX :
	    pr->pr_fails), "lastError", pr->pr_err[0] == '\0' ? json_null() :
	    json_string(pr->pr_err));
	return r != NULL ? r : json_null();
}

/*
 * One backend in /status.  health is its health checks' verdict
 * (healthcheck.c; "unknown" until one is done), healthCheck the last one;
 * healthFrom the node whose verdict this one follows (provider redis),
 * null when its own; breaker is its circuit breaker's state.
 */
static json_t *
diag_backend_json(struct worker *w, size_t bi)
{
	const struct config_backend	*be = &w->w_conf->cf_backends[bi];
	struct diag_bsum		 bs;
	json_t				*errs, *last;
	struct probe_rec		 pr;
	enum probe_state		 hs;
	const char			*cb;
	char				 node[PROBE_NODE_MAX];
	int				 k, fails;

	cb = diag_breaker(w, be, &fails);
	hs = diag_health(w, be, &pr, node, sizeof(node));
	diag_backend_sum(w, bi, &bs);
	if ((errs = json_object()) == NULL)
		return NULL;
	for (k = 0; k < DIAG_NBERR; k++)
		if (json_object_set_new(errs, diag_berrs[k], json_integer(
		    (json_int_t)bs.bs_errors[k])) == -1) {
			json_decref(errs);
			return NULL;
		}
	last = bs.bs_err_ms == 0 ? json_null() : json_pack("{s:s, s:o}",
	    "message", bs.bs_err, "at", diag_time(bs.bs_err_ms));
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:s, s:i,"
	    " s:I, s:o, s:o?, s:o, s:o, s:o}", "name", be->cb_name,
	    "transport", config_transport_name(be->cb_transport),
	    "eraSetting", config_era_name(be->cb_era),
	    "mcpRevision", proto_era_version(era_get(w, be)),
	    "era", diag_era_record(w, be),
	    "health", probe_state_name(hs), "healthCheck",
	    diag_health_json(&pr), "healthFrom", node[0] == '\0' ?
	    json_null() : json_string(node),
	    "breaker", cb, "consecutiveFailures", fails,
	    "requests", (json_int_t)bs.bs_count, "errors", errs,
	    "lastError", last,
	    "latencyMs", bs.bs_last_ms == 0 ? json_null() :
	    json_real((double)bs.bs_last_us / 1000.0),
	    "meanLatencyMs", bs.bs_count == 0 ? json_null() :
	    json_real((double)bs.bs_lat_sum_us / 1000.0 / (double)bs.bs_count),
	    "lastAnswerAt", diag_time(bs.bs_last_ms));
}

/* /status: the backends and their eras, the workers, the sessions */
static void
diag_status(struct worker *w, struct httpd_req *req)
{
	struct store_envstat	 es;
	json_t			*body, *bes, *b, *wks;
	size_t			 i;

	if ((bes = json_array()) == NULL)
		goto fail;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		b = diag_backend_json(w, i);
		if (b == NULL || json_array_append_new(bes, b) == -1) {
			json_decref(bes);
			goto fail;
		}
	}
	if ((wks = diag_workers_json(w)) == NULL) {
		json_decref(bes);
		goto fail;
	}
	body = json_pack("{s:s, s:s, s:i, s:i, s:i, s:I, s:I, s:o, s:o}",
	    "name", w->w_conf->cf_name, "version", VMCPD_VERSION,
	    "generation", (int)w->w_gen, "worker", w->w_slot,
	    "pid", (int)w->w_pid,
	    "viewBuilds", (json_int_t)diag_slots_sum(w,
	    offsetof(struct diag_slot, ds_view_builds)),
	    "eraChanges", (json_int_t)diag_slots_sum(w,
	    offsetof(struct diag_slot, ds_era_changes)),
	    "workers", wks, "backends", bes);
	if (body == NULL)
		goto fail;
	if (store_envstat(w->w_store, &es) == 0 && (json_object_set_new(body,
	    "sessions", json_integer((json_int_t)
	    es.se_db[STORE_SESSIONS].sd_entries)) == -1 ||
	    json_object_set_new(body, "pendingRelays", json_integer(
	    (json_int_t)es.se_db[STORE_PENDING].sd_entries)) == -1 ||
	    json_object_set_new(body, "lmdb", json_pack("{s:I, s:I, s:i, s:i}",
	    "mapSize", (json_int_t)es.se_map_size,
	    "usedBytes", (json_int_t)es.se_used_bytes,
	    "readers", (int)es.se_num_readers,
	    "maxReaders", (int)es.se_max_readers)) == -1)) {
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

	/* a page that rebinds its name to this address reads nothing */
	if (!front_host_check(w->w_conf, req))
		return;
	if (console_on_request(w, req))
		return;
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

	diag_counters_init();
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
	console_free();
}
