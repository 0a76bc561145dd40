/*
 * The master process: owns the parsed configuration, the listening
 * sockets and the children (workers, keeper).  It never serves and
 * never opens the store while children run.
 */
#ifndef VMCPD_MASTER_H
#define VMCPD_MASTER_H

#include <stdint.h>

struct config;

/* listen.c */
int	 listen_open(const char *host, uint16_t port, uint16_t *bound);

/* master.c */
int	 master_run(struct config *, int debug) __attribute__((noreturn));
int	 master_check_audit(const struct config *, int create);

/* keeper.c: the LMDB upkeep process */
void	 keeper_main(const struct config *, unsigned int gen, int chan_fd)
	    __attribute__((noreturn));

/* child.c: what every child does first after fork */
void	 child_setup(const char *procname, int chan_fd);

uint64_t mono_ms(void);

#endif
