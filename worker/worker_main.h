/*
 * The worker's entry points: the only worker/ header master/ includes.
 * The master forks a worker (or the view builder) and calls
 * worker_main() (builder_main()) in the child after child_setup();
 * everything else about a worker is in worker.h.
 */
#ifndef VMCPD_WORKER_MAIN_H
#define VMCPD_WORKER_MAIN_H

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
};

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
	uint64_t	 ds_calls[DIAG_METHODS][DIAG_NOUTCOMES];
	struct diag_backend ds_backends[];	/* one per backend */
};

size_t		  diag_stats_size(const struct config *, int nslots);
struct diag_slot *diag_stats_slot(struct diag_slot *, const struct config *,
		    int slot);

/*
 * Serves /mcp on listen_fd (shared by every worker), and /status and
 * /metrics on diag_fd (-1: none), with one libevent loop until told to
 * drain or stop on chan_fd (shared/ipc.h); slot and gen name the worker
 * in the master's table and its config generation; stats is the
 * generation's nstats shared slots.
 */
void	 worker_main(const struct config *, int slot, unsigned int gen,
	    int listen_fd, int diag_fd, struct diag_slot *stats, int nstats,
	    int chan_fd) __attribute__((noreturn));

/*
 * The view builder of generation gen (worker/builder.c): builds and
 * stores the views the workers serve, with its own loop and backend
 * client, no listener, until told to drain or stop on chan_fd.
 */
void	 builder_main(const struct config *, unsigned int gen,
	    struct diag_slot *stats, int nworkers, int chan_fd)
	    __attribute__((noreturn));

#endif
