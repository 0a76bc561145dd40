/*
 * The diagnostics counters (counters.c): written by the part that counts
 * into this worker's own slot; read by the listener (diag.c).
 */
#ifndef VMCPD_COUNTERS_H
#define VMCPD_COUNTERS_H

#include <stdint.h>

#include "shared/stats.h"

struct config_backend;
struct diag_slot;
struct httpd_req;
struct mcp_method;
struct worker;

/* the names the counters are reported under, in their index's order */
extern const char *const diag_methods[DIAG_METHODS];
extern const char *const diag_outcomes[DIAG_NOUTCOMES];
extern const char *const diag_berrs[DIAG_NBERR];
extern const uint64_t diag_lat_us[DIAG_LAT_BUCKETS - 1];
extern const char *const diag_lat_le[DIAG_LAT_BUCKETS];

/* once per process, before the first diag_tag_method() */
void	 diag_counters_init(void);
const struct diag_slot *diag_slot_at(const struct worker *, int slot);
uint64_t diag_load(const uint64_t *);
uint64_t diag_now_us(void);	/* monotonic */
void	 diag_count_request(struct worker *, int mcp);
void	 diag_count_mcp(struct worker *, struct httpd_req *);
void	 diag_tag_method(struct httpd_req *, const struct mcp_method *);
void	 diag_tag_method_header(struct httpd_req *, const char *name);
void	 diag_tag_kind(struct httpd_req *, const char *kind);
void	 diag_count_view_build(struct worker *);
void	 diag_count_era_change(struct worker *);
void	 diag_count_ratelimit_fail_open(struct worker *);
void	 diag_count_redis_error(struct worker *);
/* the span exporter's: spans exported and dropped, exports failed */
void	 diag_count_otel(struct worker *, uint64_t exported,
	    uint64_t dropped, uint64_t failures);
void	 diag_count_session_check(struct worker *, int sent);
void	 diag_count_session_inval(struct worker *);
/* a principal's backend session closed: evicted by the cap, or idle */
void	 diag_count_bsession_end(struct worker *,
	    const struct config_backend *, int evicted);
uint64_t diag_backend_start(void);
void	 diag_count_list_changed(struct worker *,
	    const struct config_backend *);
uint64_t diag_list_changes(struct worker *, const struct config_backend *);
void	 diag_count_relist(struct worker *, const struct config_backend *,
	    int storm, unsigned int interval_ms);
void	 diag_answer_bytes(struct worker *, const struct config_backend *,
	    size_t);
void	 diag_count_answer_refused(struct worker *,
	    const struct config_backend *, int budget);
void	 diag_backend_done(struct worker *, const struct config_backend *,
	    uint64_t start, int rc, long status, const char *errmsg);

#endif
