/*
 * A lean HTTP/1.1 client for plain http:// and Unix-socket targets,
 * used by the HTTP client (http_client_h1.c) in place of libcurl where
 * no TLS or name resolution is needed: libcurl's per-transfer setup was
 * most of the cost of a proxied call.  Keep-alive connections are
 * pooled per target.  Internal to the HTTP client; callers use http_client.h.
 */
#ifndef VMCPD_HTTP_H1_H
#define VMCPD_HTTP_H1_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct h1_client;
struct h1_conn;

/* a callback's answer: go on, abort (hx_done(-1)), or the caller
 * cancelled the exchange (then hx_dropped, not hx_done) */
#define H1_GO		0
#define H1_ABORT	(-1)
#define H1_CANCELLED	(-2)

struct h1_cbs {
	/* a head line without its CRLF; NULL: forget the head so far
	 * (an interim 1xx response).  -1: too large, abort */
	int	(*hx_line)(void *arg, const char *line, size_t len);
	int	(*hx_head)(void *arg, long status);
	int	(*hx_data)(void *arg, const char *buf, size_t len);
	void	(*hx_done)(void *arg, int result, const char *errmsg);
	/* the engine let go of an exchange cancelled in a callback */
	void	(*hx_dropped)(void *arg);
};

struct h1_exchange {
	/* set by the caller before h1_exchange_start() */
	struct sockaddr_storage	 hx_addr;
	socklen_t		 hx_addrlen;
	const char		*hx_target;	/* pool key and for messages */
	struct iovec		 hx_out[2];	/* request head, body */
	int			 hx_head_only;	/* a HEAD request */
	uint64_t		 hx_timeout_ms;	/* 0: none */
	const struct h1_cbs	*hx_cbs;
	void			*hx_arg;

	/* the engine's */
	struct h1_conn		*hx_conn;
	int			 hx_queued;	/* failure waiting to be told */
	int			 hx_retried;	/* once, after a stale reuse */
	struct h1_exchange	*hx_next;	/* on the failure queue */
	char			 hx_err[320];
};

struct h1_client *h1_client_new(struct event_base *);
/* closes every connection; exchanges in flight are dropped silently */
void	 h1_client_free(struct h1_client *);
/* 0, or -1 (no callbacks then) */
int	 h1_exchange_start(struct h1_client *, struct h1_exchange *);
/* outside this exchange's callbacks: stop it, no callback after */
void	 h1_exchange_cancel(struct h1_client *, struct h1_exchange *);

#endif
