/*
 * /status (diag.c routes it): the daemon's state as JSON, read by
 * operators, vmcpctl's peers and the console's page (console.c), which
 * renders the same object (console_page.c) and refreshes from it.
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
#include "worker/auth/ratelimit.h"
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

/* a latency in ms, null for none (< 0) */
static json_t *
diag_ms(double ms)
{
	return ms < 0 ? json_null() : json_real(ms);
}

/*
 * A backend's last minute (its answers' p50 and p99, failures over
 * all requests) and its series, a point a second, oldest first, for
 * the console's chart: requests (answers and failures) and the p99.
 */
static int
diag_backend_recent(struct worker *w, size_t bi, json_t *o)
{
	struct diag_window	 sum, per[DIAG_SECS - 1];
	json_t			*calls, *p99;
	uint64_t		 n;
	unsigned int		 s, nper = DIAG_SECS - 1;

	diag_window(w, bi, 60, &sum, NULL);
	n = diag_window_answers(&sum) + sum.dw_errors;
	if (json_object_set_new(o, "lastMinute", json_pack("{s:I, s:I, s:o,"
	    " s:o, s:o}", "requests", (json_int_t)n, "failures",
	    (json_int_t)sum.dw_errors, "errorRate", n == 0 ? json_null() :
	    json_real((double)sum.dw_errors / (double)n), "p50Ms",
	    diag_ms(diag_window_quantile(&sum, 0.5)), "p99Ms",
	    diag_ms(diag_window_quantile(&sum, 0.99)))) == -1)
		return -1;
	diag_window(w, bi, nper, &sum, per);
	calls = json_array();
	p99 = json_array();
	for (s = 0; calls != NULL && p99 != NULL && s < nper; s++) {
		if (json_array_append_new(calls, json_integer((json_int_t)
		    (diag_window_answers(&per[s]) + per[s].dw_errors))) ==
		    -1 || json_array_append_new(p99, diag_ms(
		    diag_window_quantile(&per[s], 0.99))) == -1)
			break;
	}
	if (s < nper) {
		json_decref(calls);
		json_decref(p99);
		return -1;
	}
	/* the series ends with the last whole second */
	return json_object_set_new(o, "series", json_pack("{s:i, s:o, s:o,"
	    " s:o}", "seconds", (int)nper, "end", diag_time(store_now_ms() /
	    1000 * 1000), "requests", calls, "p99Ms", p99));
}

/* a backend's lists as last listed (the newest count of any slot) */
static json_t *
diag_backend_lists(const struct worker *w, size_t bi)
{
	const struct diag_backend	*db, *best = NULL;
	uint64_t			 ms, best_ms = 0;
	int				 i;

	for (i = 0; w->w_stats != NULL && i <= w->w_nstats; i++) {
		db = &diag_slot_at(w, i)->ds_backends[bi];
		if ((ms = __atomic_load_n(&db->db_lists_ms,
		    __ATOMIC_ACQUIRE)) > best_ms) {
			best_ms = ms;
			best = db;
		}
	}
	if (best == NULL)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:o}", "tools", (json_int_t)
	    diag_load(&best->db_lists[DIAG_LIST_TOOLS]), "prompts",
	    (json_int_t)diag_load(&best->db_lists[DIAG_LIST_PROMPTS]),
	    "resources", (json_int_t)diag_load(
	    &best->db_lists[DIAG_LIST_RESOURCES]), "resourceTemplates",
	    (json_int_t)diag_load(&best->db_lists[DIAG_LIST_TEMPLATES]),
	    "at", diag_time(best_ms));
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
	json_t				*errs, *last, *o;
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
	o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:s, s:i,"
	    " s:I, s:o, s:o?, s:o, s:o, s:o, s:o}", "name", be->cb_name,
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
	    "lastAnswerAt", diag_time(bs.bs_last_ms),
	    "lists", diag_backend_lists(w, bi));
	if (o != NULL && diag_backend_recent(w, bi, o) == -1) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* one slot's denial, if it reads whole */
static int
diag_denial_read(const struct diag_denial *dd, struct diag_denial *out)
{
	uint64_t	seq;

	seq = __atomic_load_n(&dd->dd_seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return -1;
	memcpy(out, dd, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&dd->dd_seq, __ATOMIC_RELAXED) != seq ||
	    out->dd_ms == 0)
		return -1;
	out->dd_user[sizeof(out->dd_user) - 1] = '\0';
	out->dd_method[sizeof(out->dd_method) - 1] = '\0';
	out->dd_name[sizeof(out->dd_name) - 1] = '\0';
	out->dd_backend[sizeof(out->dd_backend) - 1] = '\0';
	return 0;
}

static int
diag_denial_cmp(const void *a, const void *b)
{
	const struct diag_denial *x = a, *y = b;

	return x->dd_ms < y->dd_ms ? 1 : x->dd_ms > y->dd_ms ? -1 : 0;
}

/*
 * The requests the audit found denied lately, newest first: the
 * slots' rings merged, DIAG_DENIALS at most (audit on; none else).
 */
static json_t *
diag_denials_json(const struct worker *w)
{
	struct diag_denial	*all, *d;
	json_t			*a, *o;
	size_t			 n = 0, i, cap;
	int			 s, k;

	cap = (size_t)(w->w_nstats + 1) * DIAG_DENIALS;
	if ((a = json_array()) == NULL)
		return NULL;
	if (w->w_stats == NULL)
		return a;
	if ((all = calloc(cap, sizeof(*all))) == NULL)
		goto fail;
	for (s = 0; s <= w->w_nstats; s++)
		for (k = 0; k < DIAG_DENIALS; k++)
			if (diag_denial_read(&diag_slot_at(w, s)->
			    ds_denials[k], &all[n]) == 0)
				n++;
	qsort(all, n, sizeof(*all), diag_denial_cmp);
	for (i = 0; i < n && i < DIAG_DENIALS; i++) {
		d = &all[i];
		o = json_pack("{s:o, s:i, s:s, s:s?, s:s?, s:s?}", "at",
		    diag_time(d->dd_ms), "status", (int)d->dd_status, "user",
		    d->dd_user, "method", d->dd_method[0] == '\0' ? NULL :
		    d->dd_method, "name", d->dd_name[0] == '\0' ? NULL :
		    d->dd_name, "backend", d->dd_backend[0] == '\0' ? NULL :
		    d->dd_backend);
		if (json_array_append_new(a, o) == -1) {
			free(all);
			goto fail;
		}
	}
	free(all);
	return a;
fail:
	json_decref(a);
	return NULL;
}

/*
 * The pending (and rejected) pinned changes, for the console: the
 * first DIAG_PINS_SHOWN of them, each with its pinned and its new
 * definition cut at DIAG_PIN_TEXT bytes (on a character's start).
 */
#define DIAG_PINS_SHOWN		50
#define DIAG_PIN_TEXT		2048

struct diag_pins {
	json_t	*dp_changes;
	long	 dp_pending;
};

static json_t *
diag_pin_text(const char *text)
{
	size_t	len;

	if (text == NULL)
		return json_null();
	if ((len = strlen(text)) > DIAG_PIN_TEXT) {
		len = DIAG_PIN_TEXT;
		while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--;
	}
	return json_stringn(text, len);
}

static int
diag_pin_one(void *arg, const struct pin_rec *pr)
{
	struct diag_pins	*dp = arg;

	if (pr->pr_state == PIN_PINNED)
		return 0;
	if (json_array_size(dp->dp_changes) >= DIAG_PINS_SHOWN)
		return 1;
	(void)json_array_append_new(dp->dp_changes, json_pack("{s:s, s:s, "
	    "s:s, s:s, s:o, s:o, s:o?, s:o?}", "backend", pr->pr_backend,
	    "kind", pin_kind_name(pr->pr_kind), "name", pr->pr_name,
	    "state", pin_state_name(pr->pr_state), "since",
	    diag_time(pr->pr_new_ms), "pinnedAt", diag_time(pr->pr_pinned_ms),
	    "pinned", diag_pin_text(pr->pr_text), "new",
	    diag_pin_text(pr->pr_new_text)));
	return 0;
}

/* pins: the mode, how many changes are pending, the first of them */
static json_t *
diag_pins_json(struct worker *w)
{
	static const char *const modes[] = { "off", "warn", "enforce" };
	struct diag_pins	 dp;
	enum config_pin_mode	 m = w->w_conf->cf_agg.ca_pin_mode;

	memset(&dp, 0, sizeof(dp));
	if ((dp.dp_changes = json_array()) == NULL)
		return NULL;
	/* the changes only (pinned records are not parsed), the count
	 * one read: a refresh costs the same with 20,000 pins */
	if (pin_db_list_changes(w->w_store, NULL, diag_pin_one, &dp) == -1 ||
	    (dp.dp_pending = pin_db_pending(w->w_store, NULL)) < 0) {
		json_decref(dp.dp_changes);
		return json_null();
	}
	return json_pack("{s:s, s:I, s:o}", "mode", (size_t)m <
	    sizeof(modes) / sizeof(modes[0]) ? modes[m] : "unknown",
	    "pending", (json_int_t)dp.dp_pending, "changes", dp.dp_changes);
}

/* the buckets near empty: a few, of the first records read */
#define DIAG_LIMITS_SHOWN	20
#define DIAG_LIMITS_READ	4096

static int
diag_limit_one(void *arg, char kind, const char *tool, size_t toollen,
    unsigned int tokens, unsigned int max)
{
	json_t		*a = arg, *t;
	const char	*bucket;

	if (json_array_size(a) >= DIAG_LIMITS_SHOWN)
		return 1;
	bucket = kind == 'S' ? "shared" : kind == 'U' ? "perUser" :
	    kind == 'T' ? "tool" : "toolPerUser";
	/* a tool's name as configured (null if it were no UTF-8) */
	if (tool == NULL || (t = json_stringn(tool, toollen)) == NULL)
		t = json_null();
	return json_array_append_new(a, json_pack("{s:s, s:o, s:i, s:i}",
	    "bucket", bucket, "tool", t, "tokens", (int)tokens, "max",
	    (int)max)) == -1;
}

/* rateLimits: the buckets near empty, null when none are read here
 * (no limit set, or Redis holds them) */
static json_t *
diag_limits_json(struct worker *w)
{
	json_t	*a;

	if ((a = json_array()) == NULL)
		return NULL;
	if (ratelimit_scan(w, DIAG_LIMITS_READ, diag_limit_one, a) == -1) {
		json_decref(a);
		return json_null();
	}
	return a;
}

/* the store's figures: sessions, relays, principals, the LMDB map */
static int
diag_status_store(struct worker *w, json_t *body)
{
	struct store_envstat	 es;
	size_t			 n;

	if (store_group_count(w->w_store, STORE_TOKENS, TEXCH_PRINCIPALS,
	    strlen(TEXCH_PRINCIPALS), &n) == -1)
		n = 0;
	if (json_object_set_new(body, "principals", json_integer(
	    (json_int_t)n)) == -1 || json_object_set_new(body, "rateLimits",
	    diag_limits_json(w)) == -1 || json_object_set_new(body, "pins",
	    diag_pins_json(w)) == -1)
		return -1;
	if (store_envstat(w->w_store, &es) == -1)
		return 0;
	if (json_object_set_new(body, "sessions", json_integer((json_int_t)
	    es.se_db[STORE_SESSIONS].sd_entries)) == -1 ||
	    json_object_set_new(body, "pendingRelays", json_integer(
	    (json_int_t)es.se_db[STORE_PENDING].sd_entries)) == -1 ||
	    json_object_set_new(body, "lmdb", json_pack("{s:I, s:I, s:i, s:i}",
	    "mapSize", (json_int_t)es.se_map_size,
	    "usedBytes", (json_int_t)es.se_used_bytes,
	    "readers", (int)es.se_num_readers,
	    "maxReaders", (int)es.se_max_readers)) == -1)
		return -1;
	return 0;
}

/* /status's object: the backends and their eras, the workers, the
 * sessions and principals, the recent denials */
json_t *
diag_status_json(struct worker *w)
{
	json_t	*body, *bes, *b, *wks, *den;
	size_t	 i;

	if ((bes = json_array()) == NULL)
		return NULL;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		b = diag_backend_json(w, i);
		if (b == NULL || json_array_append_new(bes, b) == -1) {
			json_decref(bes);
			return NULL;
		}
	}
	wks = diag_workers_json(w);
	den = diag_denials_json(w);
	body = json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:I, s:I, s:o, s:o,"
	    " s:o}", "name", w->w_conf->cf_name, "version", VMCPD_VERSION,
	    "generation", (int)w->w_gen, "worker", w->w_slot,
	    "pid", (int)w->w_pid, "now", diag_time(store_now_ms()),
	    "viewBuilds", (json_int_t)diag_slots_sum(w,
	    offsetof(struct diag_slot, ds_view_builds)),
	    "eraChanges", (json_int_t)diag_slots_sum(w,
	    offsetof(struct diag_slot, ds_era_changes)),
	    "workers", wks, "backends", bes, "denials", den);
	if (body == NULL)
		return NULL;
	if (diag_status_store(w, body) == -1) {
		json_decref(body);
		return NULL;
	}
	return body;
}

void
diag_status(struct worker *w, struct httpd_req *req)
{
	json_t	*body;

	if ((body = diag_status_json(w)) == NULL) {
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	front_reply_json(req, 200, body, NULL);
	json_decref(body);
}
