/*
 * Where the Unix sockets between vmcpd's processes live, all in the
 * state directory: one function per socket, so the side that listens
 * and the side that connects build the same path.
 */
#ifndef VMCPD_PATHS_H
#define VMCPD_PATHS_H

#include <sys/types.h>

#include <stddef.h>

struct config;

/* a stdio or legacy SSE backend's bridge: 0, or -1 if buf is too small */
int	paths_bridge_socket(const struct config *, const char *name,
	    char *buf, size_t len);
/* a worker's wake socket (worker/process/wake.c): 0, or -1 if buf is too small */
int	paths_wake_socket(const struct config *, pid_t pid, char *buf,
	    size_t len);

#endif
