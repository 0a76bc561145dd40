/*
 * The worker's entry points: the only worker/ header master/ includes.
 * The master forks a worker (or the view builder) and calls
 * worker_main() (builder_main()) in the child after child_setup();
 * everything else about a worker is in worker.h.
 */
#ifndef VMCPD_WORKER_MAIN_H
#define VMCPD_WORKER_MAIN_H

struct config;

struct diag_slot;	/* shared/stats.h */

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
 * The view builder of generation gen (worker/builder/builder.c): builds and
 * stores the views the workers serve, with its own loop and backend
 * client, no listener, until told to drain or stop on chan_fd.
 */
void	 builder_main(const struct config *, unsigned int gen,
	    struct diag_slot *stats, int nworkers, int chan_fd)
	    __attribute__((noreturn));

#endif
