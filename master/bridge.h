/*
 * The bridge: one supervised process per stdio or HTTP+SSE backend.
 * It runs the MCP server command on pipes, or holds a 2024-11-05
 * HTTP+SSE connection to the server's URL, and serves it to every
 * worker as a stateful Streamable HTTP endpoint (MCP 2025-11-25) on a
 * Unix socket.
 *
 * The master needs bridge_spec and bridge_main() only (here); the rest
 * is the bridge's own, shared by its files (bridge_int.h):
 *	bridge.c	the process: its loop, signals, the master's
 *			channel, the upstream's restarts
 *	bridge_relay.c	callers' requests relayed to the server, and what
 *			the server writes routed back to them
 *	bridge_http.c	the Unix-socket Streamable HTTP side: sessions,
 *			GET streams, POST and DELETE
 *	bridge_stdio.c	the upstream as a process on pipes
 *	bridge_sse.c	the upstream as a 2024-11-05 HTTP+SSE connection
 */
#ifndef VMCPD_BRIDGE_H
#define VMCPD_BRIDGE_H

#include <stdint.h>

struct bridge_spec {			/* one stdio or SSE backend */
	const char	 *bs_name;	/* backend name, for logs */
	const char	 *bs_url;	/* SSE: the http(s) URL to GET
					 * (command to cwd NULL); or NULL */
	const char	 *bs_command;	/* executable (PATH lookup) */
	char *const	 *bs_argv;	/* NULL-terminated; argv[0] */
	char *const	 *bs_env;	/* "K=V" added to the environment,
					 * NULL-terminated, or NULL */
	const char	 *bs_cwd;	/* or NULL */
	const char	 *bs_socket;	/* Unix socket to listen on */
	uint64_t	  bs_timeout_ms;/* per-request timeout */
};

/*
 * Runs after child_setup(): serves until IPC_DRAIN, SIGTERM or SIGQUIT
 * (finish what is in flight), IPC_STOP or the channel's EOF, then stops
 * the server process group (or closes the connection) and exits 0.
 */
void	bridge_main(const struct bridge_spec *, int chan_fd)
	    __attribute__((noreturn));

#endif /* VMCPD_BRIDGE_H */
