/*
 * The diagnostics listener (diag.c): the console (console.h), /status
 * (diag_status.c) and /metrics (diag_metrics.c), read from the shared
 * slots (shared/stats.h) and the store.
 */
#ifndef VMCPD_DIAG_H
#define VMCPD_DIAG_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/health_probe.h"
#include "shared/stats.h"

struct config_backend;
struct evbuffer;
struct httpd_req;
struct worker;

/* diag.c: the diagnostics listener, /status and /metrics */
int	 diag_init(struct worker *);
void	 diag_drain(struct worker *);
void	 diag_free(struct worker *);

/* one backend's figures, summed over the slots (diag_backend_sum()) */
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
void	 diag_backend_sum(const struct worker *, size_t bi,
	    struct diag_bsum *);
/* a counter summed over the slots, at offset off of struct diag_slot */
uint64_t diag_slots_sum(const struct worker *, size_t off);
/* a wall-clock time in ms as RFC 3339 UTC text, or null for 0 */
json_t	*diag_time(uint64_t ms);
/* a backend's breaker state's name ("disabled" when off), its failures */
const char *diag_breaker(struct worker *, const struct config_backend *,
	    int *fails);
/* its health verdict (node: who found it, with provider redis) */
enum probe_state diag_health(struct worker *, const struct config_backend *,
	    struct probe_rec *, char *node, size_t nodelen);

/* diag_status.c: /status, and its object for the console (NULL: no
 * memory) */
json_t	*diag_status_json(struct worker *);
void	 diag_status(struct worker *, struct httpd_req *);

/* diag_window.c: a backend's last seconds from the slots' rings */
struct diag_window {
	uint64_t	 dw_lat[DIAG_LAT_BUCKETS];	/* answers */
	uint64_t	 dw_errors;			/* failures */
};
/* the last n seconds (up to DIAG_SECS) before the current one, summed
 * into *sum, and per second (oldest first) into per[n] if not NULL */
void	 diag_window(const struct worker *, size_t bi, unsigned int n,
	    struct diag_window *sum, struct diag_window *per);
/* the q-quantile (0..1) of the answers' latency, ms; -1: no answer */
double	 diag_window_quantile(const struct diag_window *, double q);
uint64_t diag_window_answers(const struct diag_window *);

/* diag_metrics.c: /metrics */
void	 diag_metrics(struct worker *, struct httpd_req *);
/* a metric family's HELP and TYPE lines */
int	 diag_family(struct evbuffer *, const char *name, const char *type,
	    const char *help);
/* diag_op.c: the MCP operation duration histograms */
int	 diag_op_metrics(struct evbuffer *, const struct worker *);

#endif
