/*
 * The diagnostics counters (counters.c): written by the part that counts
 * into this worker's own slot; read by the listener (diag.c).
 */
#ifndef VMCPD_COUNTERS_H
#define VMCPD_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/method_id.h"
#include "shared/otlp.h"
#include "shared/stats.h"

struct config_backend;
struct diag_slot;
struct httpd_req;
struct mcp_method;
struct request;
struct worker;

/* the names the counters are reported under, in their index's order */
extern const char *const diag_methods[DIAG_METHODS];
extern const char *const diag_outcomes[DIAG_NOUTCOMES];
extern const char *const diag_berrs[DIAG_NBERR];
extern const uint64_t diag_lat_us[DIAG_LAT_BUCKETS - 1];
extern const char *const diag_lat_le[DIAG_LAT_BUCKETS];

/* once per process, before the first diag_tag_method() */
/* per-user accounts (worker/link/): what /metrics counts as
 * vmcpd_link_*_total{outcome} */
enum link_count {
	LINKC_CONSENT_STARTED = 0,	/* an elicitation sent */
	LINKC_CONSENT_COMPLETED,	/* a link stored */
	LINKC_CONSENT_REFUSED,		/* denied, wrong person, bad state */
	LINKC_REFRESH_OK,
	LINKC_REFRESH_REFUSED,		/* invalid_grant: consent anew */
	LINKC_REFRESH_FAILED,		/* the server down or garbled */
	LINKC_N
};
void	 link_count(struct worker *, enum link_count);

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
/* a pinned definition's new pending change (ds_pin_changes) */
void	 diag_count_pin_change(struct worker *);
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
/* a backend request of this method (NULL: not known) leaves: its
 * start and method, for diag_backend_done() */
uint64_t diag_backend_start(const char *method);
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
/* the lengths of a backend's lists as this process listed them (the
 * console's counts) */
void	 diag_count_lists(struct worker *, const struct config_backend *,
	    size_t tools, size_t prompts, size_t resources, size_t templates);
/* a request the audit found denied (the console's recent denials) */
void	 diag_note_denial(struct worker *, int status, const char *user,
	    const char *method, const char *name, const char *backend);

/*
 * The MCP operation durations (counters_op.c).  diag_tag_target(): the
 * request (a tools/call or prompts/get) was routed to the view's tool
 * or prompt name (len bytes) of backend be (NULL: vmcpd's own, a
 * composite tool); diag_tag_route() the same for a routed request.
 */
extern const uint64_t diag_op_us[DIAG_OP_BOUNDS];
extern const char *const diag_op_le[DIAG_OP_BOUNDS + 1];
void	 diag_tag_target(struct worker *, struct httpd_req *,
	    const char *name, size_t len, const struct config_backend *be);
void	 diag_tag_route(struct request *);
/* the name of an operation method index ("other" for DIAG_OP_OTHER) */
const char *diag_op_method_name(int);
uint64_t diag_hist_count(const struct diag_hist *);

/*
 * This process's own operation durations as OTLP histograms
 * (shared/otlp.h): do_hist[0] mcp.server.operation.duration,
 * do_hist[1] mcp.client.operation.duration, cumulative since the
 * first collect (its start time), the series with a count only;
 * attributes mcp.method.name, gen_ai.tool.name or gen_ai.prompt.name
 * and vmcpd.backend.name when known, error.type (the outcome's name:
 * rpc_error, rejected, failed, aborted) when not ok.
 * Everything they point to is out's: diag_otlp_free().  0, or -1 (out
 * of memory: out empty).
 */
#define DIAG_OTLP_ATTRS	4
struct diag_otlp {
	struct otlp_histogram	 do_hist[2];
	struct otlp_hist_point	*do_points;
	size_t			 do_npoints;
	size_t			 do_nserver;	/* of them, do_hist[0]'s */
	struct otlp_attr	*do_attrs;	/* DIAG_OTLP_ATTRS a point */
	uint64_t		*do_buckets;	/* DIAG_OP_BOUNDS + 1 a point */
	char			*do_names;	/* DIAG_TARGET_NAME a target */
};
int	 diag_otlp_collect(struct worker *, struct diag_otlp *out);
void	 diag_otlp_free(struct diag_otlp *);

/* counters.c and counters_op.c only */
struct diag_slot *diag_slot_self(struct worker *);
void	 diag_add(uint64_t *, uint64_t);
void	 diag_hist_add(struct diag_hist *, uint64_t us);
int	 diag_op_method(const struct mcp_method *);
int	 diag_tag_is(unsigned int tag, enum mcp_method_id);
void	 diag_op_done(struct diag_slot *, struct httpd_req *, unsigned int m,
	    enum diag_outcome);
uint64_t diag_backend_started(uint64_t start, int *m);

#endif
