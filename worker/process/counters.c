/*
 * The diagnostics counters (counters.h): what every part of a worker
 * counts, written into this worker's own slot of the memory the master
 * maps shared (struct diag_slot, shared/stats.h).  Counting costs a load
 * and a store in the worker's own cache line, never a store write.  The
 * listener that reads every slot and answers /status and /metrics is
 * diag.c, above everything it reports on; this file is below all of it.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/method.h"
#include "shared/config.h"
#include "shared/stats.h"
#include "shared/store.h"
#include "worker/http/httpd.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

/* the MCP methods counted by name (DIAG_METHODS of them); the last
 * five name what is not a request of a known method */
const char *const diag_methods[DIAG_METHODS] = {
	"initialize", "ping", "tools/list", "tools/call", "prompts/list",
	"prompts/get", "resources/list", "resources/templates/list",
	"resources/read", "resources/subscribe", "resources/unsubscribe",
	"completion/complete", "logging/setLevel", "server/discover",
	"subscriptions/listen", "tasks/get", "tasks/list", "tasks/result",
	"tasks/cancel", "notifications/initialized", "notifications/cancelled",
	"notifications/progress", "notifications/roots/list_changed",
	"response", "stream", "delete", "invalid", "other",
};

const char *const diag_outcomes[DIAG_NOUTCOMES] = {
	"ok", "rpc_error", "rejected", "failed", "aborted",
};

const char *const diag_berrs[DIAG_NBERR] = {
	"transport", "timeout", "http", "protocol",
};

/* upper bounds of the latency buckets: microseconds and their text */
const uint64_t diag_lat_us[DIAG_LAT_BUCKETS - 1] = {
	5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
	2500000, 5000000, 10000000, 30000000,
};
const char *const diag_lat_le[DIAG_LAT_BUCKETS] = {
	"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
	"5", "10", "30", "+Inf",
};

#define DIAG_TAG_METHOD	0xffffu		/* method index + 1 */

const struct diag_slot *
diag_slot_at(const struct worker *w, int slot)
{
	return diag_stats_slot(w->w_stats, w->w_conf, slot);
}

/* this worker's own slot, or NULL */
static struct diag_slot *
diag_self(struct worker *w)
{
	if (w->w_stats == NULL || w->w_stat_slot < 0 ||
	    w->w_stat_slot > w->w_nstats)
		return NULL;
	return diag_stats_slot(w->w_stats, w->w_conf, w->w_stat_slot);
}

/* the same for counters_op.c */
struct diag_slot *
diag_slot_self(struct worker *w)
{
	return diag_self(w);
}

uint64_t
diag_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* one writer per slot: no locked add needed, only untorn words */
void
diag_add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n,
	    __ATOMIC_RELAXED);
}

void
diag_count_request(struct worker *w, int mcp)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) == NULL)
		return;
	diag_add(&ds->ds_requests, 1);
	if (mcp)
		diag_add(&ds->ds_mcp_requests, 1);
}

void
diag_count_view_build(struct worker *w)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_view_builds, 1);
}

void
diag_count_pin_change(struct worker *w)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_pin_changes, 1);
}

void
diag_count_era_change(struct worker *w)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_era_changes, 1);
}

void
diag_count_ratelimit_fail_open(struct worker *w)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_rl_fail_open, 1);
}

void
diag_count_otel(struct worker *w, uint64_t exported, uint64_t dropped,
    uint64_t failures)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) == NULL)
		return;
	diag_add(&ds->ds_otel_exported, exported);
	diag_add(&ds->ds_otel_dropped, dropped);
	diag_add(&ds->ds_otel_failures, failures);
}

void
diag_count_redis_error(struct worker *w)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_redis_errors, 1);
}

void
diag_count_session_check(struct worker *w, int sent)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(sent ? &ds->ds_sess_checks : &ds->ds_sess_local, 1);
}

void
diag_count_session_inval(struct worker *w)
{
	struct diag_slot *ds;

	if ((ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_sess_invals, 1);
}

_Static_assert(LINKC_N == DIAG_LINKC, "link counts and their slots");

void
link_count(struct worker *w, enum link_count c)
{
	struct diag_slot *ds;

	if ((unsigned int)c < LINKC_N && (ds = diag_self(w)) != NULL)
		diag_add(&ds->ds_links[c], 1);
}

/*
 * The method a request to /mcp is counted under; a later tag replaces
 * an earlier one (the body's method is surer than the Mcp-Method
 * header).  NULL: a response of the client's.
 */
/*
 * diag_methods[] index + 1 of each method of the table (proto/method.c),
 * 0: counted as "other"; made once, so tagging a request is a load
 */
static uint8_t	diag_method_slot[MCP_M_COUNT];
static int	diag_method_made;

void
diag_counters_init(void)
{
	const struct mcp_method	*mm;
	size_t			 i;

	for (i = 0; i < DIAG_METHODS - 5; i++)
		if ((mm = mcp_method_find(diag_methods[i])) != NULL)
			diag_method_slot[mm->mm_id] = (uint8_t)(i + 1);
	diag_method_made = 1;
}

/* a method's index in the operation figures (DIAG_OP_OTHER: not one
 * of diag_methods[], or NULL) */
int
diag_op_method(const struct mcp_method *mm)
{
	if (!diag_method_made)
		diag_counters_init();	/* the builder's first */
	return mm != NULL && diag_method_slot[mm->mm_id] != 0 ?
	    diag_method_slot[mm->mm_id] - 1 : DIAG_OP_OTHER;
}

/* the request's method tag is this method's */
int
diag_tag_is(unsigned int tag, enum mcp_method_id id)
{
	unsigned int	i = diag_method_slot[id];

	return i != 0 && (tag & DIAG_TAG_METHOD) == i;
}

/*
 * The method a request to /mcp is counted under; a later tag replaces
 * an earlier one (the body's method is surer than the Mcp-Method
 * header).  NULL: a method not in the table.
 */
void
diag_tag_method(struct httpd_req *req, const struct mcp_method *mm)
{
	unsigned int	i = mm != NULL ? diag_method_slot[mm->mm_id] : 0;

	if (i == 0)
		i = DIAG_METHODS;		/* other */
	httpd_req_set_tag(req, (httpd_req_tag(req) & ~DIAG_TAG_METHOD) | i);
}

void
diag_tag_method_header(struct httpd_req *req, const char *name)
{
	if (name != NULL)
		diag_tag_method(req, mcp_method_find(name));
}

/* what is not a request, by its diag_methods[] name */
void
diag_tag_kind(struct httpd_req *req, const char *kind)
{
	size_t	i;

	for (i = DIAG_METHODS - 5; i < DIAG_METHODS; i++)
		if (strcmp(diag_methods[i], kind) == 0)
			httpd_req_set_tag(req, (httpd_req_tag(req) &
			    ~DIAG_TAG_METHOD) | (unsigned int)(i + 1));
}

/* a request to /mcp is done: counted by method and outcome */
void
diag_count_mcp(struct worker *w, struct httpd_req *req)
{
	struct diag_slot	*ds;
	unsigned int		 tag = httpd_req_tag(req), m;
	int			 st = httpd_req_status(req);
	enum diag_outcome	 o;

	if ((ds = diag_self(w)) == NULL)
		return;
	m = tag & DIAG_TAG_METHOD;
	m = m == 0 || m > DIAG_METHODS ? DIAG_METHODS - 2 : m - 1;
	if (st == 0)
		o = DIAG_ABORTED;
	else if (st >= 500)
		o = DIAG_FAILED;
	else if (st >= 400)
		o = DIAG_REJECTED;
	else if (tag & HTTPD_TAG_ERROR)
		o = DIAG_RPC_ERROR;
	else
		o = DIAG_OK;
	diag_add(&ds->ds_calls[m][o], 1);
	diag_op_done(ds, req, m, o);
}

uint64_t
diag_now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static struct diag_backend *
diag_backend_self(struct worker *w, const struct config_backend *be)
{
	struct diag_slot	*ds;
	size_t			 i;

	i = (size_t)(be - w->w_conf->cf_backends);
	if ((ds = diag_self(w)) == NULL || i >= w->w_conf->cf_nbackends)
		return NULL;
	return &ds->ds_backends[i];
}

/* worker 0: a list_changed from the backend */
void
diag_count_list_changed(struct worker *w, const struct config_backend *be)
{
	struct diag_backend *db;

	if ((db = diag_backend_self(w, be)) != NULL)
		diag_add(&db->db_lc_notes, 1);
}

/* the list_changed worker 0 heard from the backend, in all */
uint64_t
diag_list_changes(struct worker *w, const struct config_backend *be)
{
	const struct diag_backend	*db;
	uint64_t			 n = 0;
	size_t				 bi;
	int				 i;

	bi = (size_t)(be - w->w_conf->cf_backends);
	if (bi >= w->w_conf->cf_nbackends)
		return 0;
	for (i = 0; w->w_stats != NULL && i <= w->w_nstats; i++) {
		db = &diag_slot_at(w, i)->ds_backends[bi];
		n += diag_load(&db->db_lc_notes);
	}
	return n;
}

/* the builder: a relist for the backend's changes, at that interval */
void
diag_count_relist(struct worker *w, const struct config_backend *be,
    int storm, unsigned int interval_ms)
{
	struct diag_backend *db;

	if ((db = diag_backend_self(w, be)) == NULL)
		return;
	diag_add(&db->db_lc_relists, 1);
	if (storm)
		diag_add(&db->db_lc_storms, 1);
	__atomic_store_n(&db->db_lc_interval_ms, interval_ms,
	    __ATOMIC_RELAXED);
}

/* the bytes of the backend's answers this process buffers now */
void
diag_answer_bytes(struct worker *w, const struct config_backend *be,
    size_t bytes)
{
	struct diag_backend *db;

	if ((db = diag_backend_self(w, be)) != NULL)
		__atomic_store_n(&db->db_ans_bytes, bytes, __ATOMIC_RELAXED);
}

/* an answer refused by a budget (DIAG_BUDGET_*) */
void
diag_count_answer_refused(struct worker *w, const struct config_backend *be,
    int budget)
{
	struct diag_backend *db;

	if ((db = diag_backend_self(w, be)) != NULL &&
	    (budget == DIAG_BUDGET_WORKER || budget == DIAG_BUDGET_BACKEND))
		diag_add(&db->db_ans_refused[budget], 1);
}

void
diag_count_bsession_end(struct worker *w, const struct config_backend *be,
    int evicted)
{
	struct diag_backend *db;

	if ((db = diag_backend_self(w, be)) != NULL)
		diag_add(&db->db_bs_ended[evicted ? 1 : 0], 1);
}

/*
 * The second of now (monotonic us) in the backend's ring: an answer in
 * latency bucket i, or a failure (i DIAG_LAT_BUCKETS).  The entry of an
 * older second is cleared first, its dc_sec 0 meanwhile so that no
 * reader mixes the two seconds.
 */
static void
diag_sec_count(struct diag_backend *db, uint64_t now, size_t i)
{
	struct diag_sec	*dc;
	uint64_t	 sec = now / 1000000 + 1;	/* never 0 */
	uint32_t	*p;

	dc = &db->db_secs[sec % DIAG_SECS];
	if (__atomic_load_n(&dc->dc_sec, __ATOMIC_RELAXED) != sec) {
		__atomic_store_n(&dc->dc_sec, 0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		for (p = dc->dc_lat; p < dc->dc_lat + DIAG_LAT_BUCKETS; p++)
			__atomic_store_n(p, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&dc->dc_errors, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&dc->dc_sec, sec, __ATOMIC_RELEASE);
	}
	p = i < DIAG_LAT_BUCKETS ? &dc->dc_lat[i] : &dc->dc_errors;
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1,
	    __ATOMIC_RELAXED);
}

/* the lengths of the backend's lists, as this process listed them */
void
diag_count_lists(struct worker *w, const struct config_backend *be,
    size_t tools, size_t prompts, size_t resources, size_t templates)
{
	struct diag_backend	*db;

	if ((db = diag_backend_self(w, be)) == NULL)
		return;
	__atomic_store_n(&db->db_lists[DIAG_LIST_TOOLS], tools,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&db->db_lists[DIAG_LIST_PROMPTS], prompts,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&db->db_lists[DIAG_LIST_RESOURCES], resources,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&db->db_lists[DIAG_LIST_TEMPLATES], templates,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&db->db_lists_ms, store_now_ms(), __ATOMIC_RELEASE);
}

/* a request the audit found denied: into the slot's ring */
void
diag_note_denial(struct worker *w, int status, const char *user,
    const char *method, const char *name, const char *backend)
{
	struct diag_slot	*ds;
	struct diag_denial	*dd;
	uint64_t		 n, seq;

	if ((ds = diag_self(w)) == NULL)
		return;
	n = __atomic_load_n(&ds->ds_ndenials, __ATOMIC_RELAXED);
	dd = &ds->ds_denials[n % DIAG_DENIALS];
	seq = __atomic_load_n(&dd->dd_seq, __ATOMIC_RELAXED);
	__atomic_store_n(&dd->dd_seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	(void)snprintf(dd->dd_user, sizeof(dd->dd_user), "%s",
	    user != NULL ? user : "");
	(void)snprintf(dd->dd_method, sizeof(dd->dd_method), "%s",
	    method != NULL ? method : "");
	(void)snprintf(dd->dd_name, sizeof(dd->dd_name), "%s",
	    name != NULL ? name : "");
	(void)snprintf(dd->dd_backend, sizeof(dd->dd_backend), "%s",
	    backend != NULL ? backend : "");
	__atomic_store_n(&dd->dd_status, (uint64_t)status, __ATOMIC_RELAXED);
	__atomic_store_n(&dd->dd_ms, store_now_ms(), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&dd->dd_seq, seq + 2, __ATOMIC_RELAXED);
	__atomic_store_n(&ds->ds_ndenials, n + 1, __ATOMIC_RELEASE);
}

/*
 * A backend request ended: rc 0 with an answer (a JSON-RPC error is
 * an answer), or -1 with the HTTP status seen (0: none) and why.
 */
void
diag_backend_done(struct worker *w, const struct config_backend *be,
    uint64_t start, int rc, long status, const char *errmsg)
{
	struct diag_backend	*db;
	enum diag_berr		 k;
	uint64_t		 now, us, seq;
	size_t			 i;
	int			 m;

	if ((db = diag_backend_self(w, be)) == NULL || start == 0)
		return;
	start = diag_backend_started(start, &m);
	now = diag_now_us();
	us = now > start ? now - start : 0;
	diag_hist_add(&db->db_ops[m], us);
	if (rc == 0) {
		for (i = 0; i < DIAG_LAT_BUCKETS - 1 && us > diag_lat_us[i];
		    i++)
			;
		diag_add(&db->db_lat[i], 1);
		diag_add(&db->db_lat_sum_us, us);
		diag_sec_count(db, now, i);
		__atomic_store_n(&db->db_last_us, us, __ATOMIC_RELAXED);
		/* monotonic, one clock read per answer: made wall time when
		 * read (diag_backend_sum()) */
		__atomic_store_n(&db->db_last_at, now, __ATOMIC_RELAXED);
		return;
	}
	if (status >= 200 && status < 300)
		k = DIAG_BERR_PROTOCOL;
	else if (status != 0)
		k = DIAG_BERR_HTTP;
	else if (errmsg != NULL && strstr(errmsg, "timed out") != NULL)
		k = DIAG_BERR_TIMEOUT;
	else
		k = DIAG_BERR_TRANSPORT;
	diag_add(&db->db_errors[k], 1);
	diag_sec_count(db, now, DIAG_LAT_BUCKETS);
	/* the message under a sequence count: a reader retries a torn one */
	seq = __atomic_load_n(&db->db_err_seq, __ATOMIC_RELAXED);
	__atomic_store_n(&db->db_err_seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	(void)snprintf(db->db_err, sizeof(db->db_err), "%s",
	    errmsg != NULL ? errmsg : diag_berrs[k]);
	__atomic_store_n(&db->db_err_ms, store_now_ms(), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&db->db_err_seq, seq + 2, __ATOMIC_RELAXED);
}
