/*
 * The worker's entry point: the only worker/ header master/ includes.
 * The master forks a worker and calls worker_main() in the child after
 * child_setup(); everything else about a worker is in worker.h.
 */
#ifndef VMCPD_WORKER_MAIN_H
#define VMCPD_WORKER_MAIN_H

struct config;

/*
 * Serves /mcp on listen_fd (shared by every worker) with one libevent
 * loop until told to drain or stop on chan_fd (shared/ipc.h); slot and
 * gen name the worker in the master's table and its config generation.
 */
void	 worker_main(const struct config *, int slot, unsigned int gen,
	    int listen_fd, int chan_fd) __attribute__((noreturn));

#endif
