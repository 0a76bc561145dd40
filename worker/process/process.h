/*
 * The worker process (process.c): the one struct worker of this process,
 * its set-up after fork, the requests in flight a drain waits for.
 */
#ifndef VMCPD_PROCESS_H
#define VMCPD_PROCESS_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct config;
struct diag_slot;
struct event;
struct event_base;
struct http_client;
struct httpd;
struct store;
struct wake_msg;

struct worker {
	struct event_base		*w_base;
	struct httpd			*w_httpd;
	struct http_client		*w_hc;
	struct store			*w_store;
	const struct config		*w_conf;
	int				 w_slot;
	unsigned int			 w_gen;
	pid_t				 w_pid;
	int				 w_chan;
	int				 w_listen_fd;
	int				 w_diag_fd;	/* -1: none */
	struct diag_slot		*w_stats;	/* shared, per slot */
	int				 w_nstats;	/* workers' slots */
	int				 w_stat_slot;	/* the one written: the
							 * builder's is w_nstats */
	struct event			*w_chan_ev;
	struct event			*w_sig_term;
	struct event			*w_sig_usr1;
	struct event			*w_drain_ev;
	int				 w_draining;
	size_t				 w_inflight;	/* requests held */
	size_t				 w_unflushed;	/* replies not yet written */
	uint64_t			 w_rpc_seq;	/* backend request ids */
	TAILQ_HEAD(, mcp_req)		 w_reqs;
	/* the front's open connections (a drain waits for none), set by
	 * front_init(); NULL: none */
	size_t				(*w_nconns)(struct worker *);
};

/*
 * Requests in flight, counted as nginx counts r->main->count: the front
 * holds each /mcp request while its handler runs and releases it when
 * the handler returns; whatever carries the request on past that call
 * (an mcp_req, an mreq, a GET or listen stream) takes its own hold when
 * it is made and releases it when it is freed.  So a synchronous answer
 * releases nothing itself.  A release with nothing held is a bug: it is
 * logged with the place (where), not clamped away.  A draining worker
 * exits when nothing is held and every reply is written.
 */
void	 worker_request_hold(struct worker *);
void	 worker_request_release(struct worker *, const char *where);
void	 worker_reply_flushed(struct worker *);
void	 worker_exit_if_idle(struct worker *);
struct worker *worker_self(void);	/* one worker per process */
/* a zeroed request-sized object: calloc() bypasses malloc's per-thread
 * cache (tcache), malloc() does not */
void	*worker_zalloc(size_t);
void	 worker_process_init(struct worker *, const struct config *,
	    unsigned int gen, int chan_fd, int base_flags,
	    void (*on_signal)(int, short, void *),
	    void (*on_wake)(void *, const struct wake_msg *));

#endif
