/*
 * The daemon's figures in shared memory: one slot per worker of a
 * generation and one for its view builder, mapped by the master before
 * it forks them (master/master.c sizes it and records pids and
 * restarts), counted by each process in its own slot and read across
 * all of them by worker/diag.c for /status and /metrics.
 */
#ifndef VMCPD_STATS_H
#define VMCPD_STATS_H

#include <stddef.h>
#include <stdint.h>

struct config;

/* backend answer latency buckets (seconds): diag.c's diag_lat_le[] */
#define DIAG_LAT_BUCKETS	13	/* the last one is +Inf */
#define DIAG_METHODS		28	/* diag.c's diag_methods[] */

enum diag_outcome {
	DIAG_OK,		/* 2xx with a result (or accepted) */
	DIAG_RPC_ERROR,		/* a JSON-RPC error answer */
	DIAG_REJECTED,		/* a 4xx: refused before or by the edge */
	DIAG_FAILED,		/* a 5xx */
	DIAG_ABORTED,		/* no answer written: the client left */
	DIAG_NOUTCOMES
};

enum diag_berr {
	DIAG_BERR_TRANSPORT,	/* refused, reset, unreachable */
	DIAG_BERR_TIMEOUT,
	DIAG_BERR_HTTP,		/* a non-2xx status */
	DIAG_BERR_PROTOCOL,	/* a 2xx without a usable answer */
	DIAG_NBERR
};

/*
 * The MCP operation durations (mcp_server_operation_duration_seconds,
 * mcp_client_operation_duration_seconds and their OTLP twins): the
 * bounds the OpenTelemetry MCP semantic conventions advise, 0.01 s to
 * 300 s (counters_op.c's diag_op_us[]); by the methods of diag_methods[]
 * and "other" (DIAG_OP_OTHER), not response, stream, delete, invalid.
 */
#define DIAG_OP_BOUNDS		14
#define DIAG_OP_METHODS		(DIAG_METHODS - 4)
#define DIAG_OP_OTHER		(DIAG_OP_METHODS - 1)

struct diag_hist {
	uint64_t	 dh_n[DIAG_OP_BOUNDS + 1];	/* not cumulative */
	uint64_t	 dh_sum_us;
};

/*
 * A tool or prompt of the view a client called (diag_tag_target()),
 * with its backend: its calls' durations by outcome.  A slot has
 * DIAG_TARGETS of them, found by a hash of the key and probed on
 * (never removed: a respawned worker finds its predecessor's); one
 * past the table or a name longer than DIAG_TARGET_NAME - 1 is counted
 * under "_other" of its kind with no backend.
 */
#define DIAG_TARGETS		128
#define DIAG_TARGET_NAME	64
#define DIAG_TARGET_TOOL	0
#define DIAG_TARGET_PROMPT	1

struct diag_target {
	uint32_t	 dt_ready;	/* the key is written (release) */
	uint16_t	 dt_kind;	/* DIAG_TARGET_* */
	uint16_t	 dt_backend;	/* its index + 1; 0: none */
	char		 dt_name[DIAG_TARGET_NAME];
	struct diag_hist dt_ops[DIAG_NOUTCOMES];
};

/*
 * One second of a backend's answers in one slot (the console's chart
 * and /status's last minute): a ring of DIAG_SECS of them, indexed by
 * the monotonic second.  dc_sec is 0 while the slot's one writer
 * clears the entry for a new second; a reader takes an entry whose
 * dc_sec it finds the same before and after reading it.
 */
#define DIAG_SECS		180	/* three minutes */
struct diag_sec {
	uint64_t	 dc_sec;			/* monotonic s */
	uint32_t	 dc_lat[DIAG_LAT_BUCKETS];	/* answers */
	uint32_t	 dc_errors;			/* failures */
};

/* one backend's figures in one worker slot */
struct diag_backend {
	uint64_t	 db_lat[DIAG_LAT_BUCKETS];	/* not cumulative */
	uint64_t	 db_lat_sum_us;
	uint64_t	 db_errors[DIAG_NBERR];
	uint64_t	 db_last_at;	/* monotonic us, the last answer */
	uint64_t	 db_last_us;	/* and its latency */
	uint64_t	 db_err_seq;	/* odd while db_err is written */
	uint64_t	 db_err_ms;	/* wall time of the last error */
	char		 db_err[160];
	/* its list_changed: received (worker 0), relists for them and
	 * storms (the builder), the interval between relists now (ms) */
	uint64_t	 db_lc_notes;
	uint64_t	 db_lc_relists;
	uint64_t	 db_lc_storms;
	uint64_t	 db_lc_interval_ms;
	/* its answers: bytes buffered now, answers refused by a budget
	 * (DIAG_BUDGET_*: the worker's, the backend's) */
	uint64_t	 db_ans_bytes;
	uint64_t	 db_ans_refused[2];
	/* a principal's backend sessions closed: [0] idle, [1] evicted */
	uint64_t	 db_bs_ended[2];
	/* every request's time to its answer or failure, by method */
	struct diag_hist db_ops[DIAG_OP_METHODS];
	/* its answers and failures by the second */
	struct diag_sec	 db_secs[DIAG_SECS];
	/* its lists' lengths as this process last listed them (the
	 * builder, a worker's own build): wall ms (0: never), and the
	 * counts of DIAG_LIST_* */
	uint64_t	 db_lists_ms;
	uint64_t	 db_lists[4];
};

#define DIAG_LIST_TOOLS		0
#define DIAG_LIST_PROMPTS	1
#define DIAG_LIST_RESOURCES	2
#define DIAG_LIST_TEMPLATES	3

/*
 * A request the audit found denied (401, 403, or refused by a
 * policy), for the console's recent denials: a ring of DIAG_DENIALS a
 * slot, the next at ds_ndenials % DIAG_DENIALS, each under its own
 * sequence count (odd while written).
 */
#define DIAG_DENIALS		8
struct diag_denial {
	uint64_t	 dd_seq;
	uint64_t	 dd_ms;		/* wall time */
	uint64_t	 dd_status;	/* HTTP */
	char		 dd_user[64];
	char		 dd_method[40];
	char		 dd_name[64];
	char		 dd_backend[64];
};

#define DIAG_BUDGET_WORKER	0
#define DIAG_BUDGET_BACKEND	1

/* consents started, completed, refused; refreshes ok, refused, failed */
#define DIAG_LINKC		6

/*
 * One worker slot's figures, in memory the master maps shared before
 * forking a generation: the worker counts, the master sets the pid and
 * the restarts, any worker reads them all (relaxed atomics; a slot has
 * one writer, so counting is a plain load and store, no locked add).
 * A slot is sizeof(struct diag_slot) plus one struct diag_backend per
 * configured backend: diag_stats_size() and diag_stats_slot().
 */
struct diag_slot {
	uint64_t	 ds_pid;
	uint64_t	 ds_restarts;		/* respawns after a death */
	uint64_t	 ds_requests;		/* HTTP requests, main port */
	uint64_t	 ds_mcp_requests;	/* of them, to /mcp */
	uint64_t	 ds_view_builds;	/* views built and stored */
	uint64_t	 ds_era_changes;	/* backends in another era */
	uint64_t	 ds_rl_fail_open;	/* limits not enforced */
	uint64_t	 ds_redis_errors;	/* Redis commands failed */
	uint64_t	 ds_sess_local;		/* session checks not sent */
	uint64_t	 ds_sess_checks;	/* session checks sent */
	uint64_t	 ds_sess_invals;	/* Redis's invalidations */
	/* the span exporter's (worker/trace/trace_export.c) */
	uint64_t	 ds_otel_exported;	/* spans a collector took */
	uint64_t	 ds_otel_dropped;	/* spans dropped */
	uint64_t	 ds_otel_failures;	/* exports failed */
	/* users' links (worker/link/link.h's enum link_count) */
	uint64_t	 ds_links[DIAG_LINKC];
	/* pinned definitions (worker/state/pin_store.h): changes seen by
	 * the builder (decisions are counted in the store, vmcpctl's too) */
	uint64_t	 ds_pin_changes;
	uint64_t	 ds_calls[DIAG_METHODS][DIAG_NOUTCOMES];
	/* requests to /mcp with no target tagged, by method, outcome */
	struct diag_hist ds_ops[DIAG_OP_METHODS][DIAG_NOUTCOMES];
	uint64_t	 ds_ntargets;	/* of ds_targets[] in use */
	struct diag_target ds_targets[DIAG_TARGETS];
	uint64_t	 ds_ndenials;	/* written so far */
	struct diag_denial ds_denials[DIAG_DENIALS];
	struct diag_backend ds_backends[];	/* one per backend */
};

size_t		  diag_stats_size(const struct config *, int nslots);
struct diag_slot *diag_stats_slot(struct diag_slot *, const struct config *,
		    int slot);

#endif
