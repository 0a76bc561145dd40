/*
 * A backend's notification stream held open (bstream.c): worker 0's
 * listener of each backend (notify.c) and a client's task listens
 * (listen_tasks.c).  The opener starts the stream with
 * upstream_stream*() and bstream_cbs, bs as their arg, into bs_up; each
 * message event's JSON-RPC message goes to bo_message (parsed here, once,
 * and released when it returns; one that does not parse is logged and
 * skipped); when it ends, or never started, bo_down
 * says whether it is opened again (bo_open) after a backoff of 0.5 to 30
 * s, or 60 s if the backend offers none.
 */
#ifndef VMCPD_BSTREAM_H
#define VMCPD_BSTREAM_H

#include "proto/sse.h"

struct jsonrpc_msg;

struct worker;
struct config_backend;
struct upstream;
struct http_call_cbs;
struct event;

struct bstream_ops {
	void	(*bo_open)(void *arg);		/* upstream_stream*() */
	void	(*bo_message)(void *arg, const struct jsonrpc_msg *);
	void	(*bo_up)(void *arg);		/* or NULL */
	/* ended or failed (the upstream not yet freed): 1 again, 0 not */
	int	(*bo_down)(void *arg);
};

struct bstream {
	struct worker			*bs_w;
	const struct config_backend	*bs_be;
	const struct bstream_ops	*bs_ops;
	void				*bs_arg;
	const char			*bs_what;	/* for the log */
	struct upstream			*bs_up;		/* its stream */
	struct sse_parser		*bs_sse;
	struct event			*bs_timer;
	long				 bs_status;
	int				 bs_fails;
};

extern const struct http_call_cbs bstream_cbs;

/* 0, or -1 (no memory for its timer) */
int	 bstream_init(struct bstream *, struct worker *,
	    const struct config_backend *, const char *what,
	    const struct bstream_ops *, void *arg);
/* bo_open after ms (< 0: the next backoff) */
void	 bstream_retry(struct bstream *, int ms);
/* the stream, if any, closed without a callback; its timer stays */
void	 bstream_hangup(struct bstream *);
/* closed, and its timer gone */
void	 bstream_free(struct bstream *);

#endif /* VMCPD_BSTREAM_H */
