/*
 * The diagnostics listener (daemon.diagnostics): the console
 * (console.c), /status (diag_status.c) and /metrics (diag_metrics.c)
 * on an address of their own, which the master opens beside the main
 * one and every worker accepts on.  The main port serves only /mcp and
 * /healthz.  Who may read the listener is console_auth_read()'s say.
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

void
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
json_t *
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

/* a counter summed over the slots, at offset off of struct diag_slot */
uint64_t
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

/* a backend's circuit breaker: its state's name ("disabled" when off)
 * and its consecutive failures */
const char *
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
enum probe_state
diag_health(struct worker *w, const struct config_backend *be,
    struct probe_rec *pr, char *node, size_t nodelen)
{
	if (health_verdict_get(w->w_store, be->cb_name, store_now_ms(), pr,
	    node, nodelen) == -1)
		memset(pr, 0, sizeof(*pr));
	return (enum probe_state)pr->pr_state;
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
	lim.hl_max_body = 4096;	/* GETs, and the console's small forms */
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
