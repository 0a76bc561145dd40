/*
 * httpd: the front's HTTP/1.1 server on the inherited listener.
 *
 * A request stays valid from the request callback until the owner ends
 * it: httpd_send_reply(), or httpd_send_end() after httpd_send_start().
 * If the client goes away first, the close callback (if set) says so;
 * the owner still ends the request, which then only frees it.  The close
 * callback is called from the event loop on a turn of its own, never
 * from inside an httpd call (a send that finds the client gone returns,
 * and httpd_req_gone() says so at once); one set on a request whose
 * client is gone already is called the same way.  The reply's sends
 * may call the done callback before they return.
 */
#ifndef VMCPD_HTTPD_H
#define VMCPD_HTTPD_H

#include <sys/socket.h>
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evbuffer;
struct httpd;
struct httpd_req;

struct httpd_limits {
	size_t		 hl_max_head;	/* request line and headers */
	uint64_t	 hl_max_body;
	int		 hl_timeout_ms;	/* idle, slow request, stalled reader */
	int		 hl_head_ms;	/* a whole head, from its first byte */
	int		 hl_request_ms;	/* a whole request, head and body */
	unsigned int	 hl_max_conns;	/* open at once */
	unsigned int	 hl_max_conns_client;	/* from one address */
};

typedef void	(*httpd_req_cb)(struct httpd_req *, void *);
typedef void	(*httpd_idle_cb)(void *);

struct httpd	*httpd_new(struct event_base *, int listen_fd,
		    const struct httpd_limits *, httpd_req_cb, void *);
void		 httpd_stop_accepting(struct httpd *);
/* stop accepting; every reply closes its connection; cb once none is left */
void		 httpd_drain(struct httpd *, httpd_idle_cb, void *);
/* close the connections with no request out or coming in */
void		 httpd_close_idle(struct httpd *);
size_t		 httpd_nconns(const struct httpd *);
void		 httpd_free(struct httpd *);

/* the request */
int		 httpd_req_method(const struct httpd_req *);	/* http_method */
const char	*httpd_req_path(const struct httpd_req *);
/* the authority asked for: an absolute-form target's, else Host; or NULL */
const char	*httpd_req_host(const struct httpd_req *);
const char	*httpd_req_header(const struct httpd_req *, const char *);
/* by enum http_field_id (proto/http_req.h), the hot path's */
const char	*httpd_req_known(const struct httpd_req *, int);
const char	*httpd_req_body(const struct httpd_req *, size_t *);
int		 httpd_req_gone(const struct httpd_req *);
int		 httpd_req_peer(const struct httpd_req *,
		    struct sockaddr_storage *, socklen_t *);
void		 httpd_req_set_close_cb(struct httpd_req *, httpd_req_cb,
		    void *);
void		 httpd_req_set_done_cb(struct httpd_req *, httpd_req_cb,
		    void *);
/* the done callback's argument; the status of the reply (0: none yet) */
void		*httpd_req_done_arg(const struct httpd_req *);
int		 httpd_req_status(const struct httpd_req *);
/* when the request was read whole and handed over: CLOCK_MONOTONIC, us */
uint64_t	 httpd_req_arrived(const struct httpd_req *);
/* the target's query (after '?', up to a '#'), or NULL */
const char	*httpd_req_query(const struct httpd_req *);
/* what the owner hangs on the request (the caller's identity): freed
 * with free_fn when the request ends, or replaced */
void		 httpd_req_set_data(struct httpd_req *, void *,
		    void (*free_fn)(void *));
void		*httpd_req_data(const struct httpd_req *);
/* the peer's uid on a Unix socket (SO_PEERCRED): 0, or -1 */
int		 httpd_req_peer_uid(const struct httpd_req *, uid_t *);

/* the reply; a header with CR, LF or NUL is refused (-1) */
int		 httpd_add_header(struct httpd_req *, const char *,
		    const char *);
void		 httpd_send_reply(struct httpd_req *, int status,
		    struct evbuffer *body);	/* body drained; may be NULL */
/* the same with a body of n pieces, copied: no evbuffer of its own
 * (a body of no Content-Type given is sent as application/json) */
void		 httpd_send_reply_iov(struct httpd_req *, int status,
		    const struct iovec *, int n);
void		 httpd_send_start(struct httpd_req *, int status);
int		 httpd_send_chunk(struct httpd_req *, const void *, size_t);
void		 httpd_send_end(struct httpd_req *);
size_t		 httpd_req_unsent(const struct httpd_req *);
/* the status sent (0: none yet), and a tag the owner keeps on the
 * request until its done callback has returned; HTTPD_TAG_ERROR is the
 * reply helpers' mark of a JSON-RPC error answered, the rest the owner's */
#define HTTPD_TAG_ERROR	0x10000u
/* a tools/call result with isError true answered (noted only while
 * the request carries a span: httpd_req_trace()) */
#define HTTPD_TAG_TOOL_ERROR	0x20000u
unsigned int	 httpd_req_tag(const struct httpd_req *);
void		 httpd_req_set_tag(struct httpd_req *, unsigned int);
/* a JSON-RPC error answered: its code (0: not known) */
void		 httpd_req_tag_error(struct httpd_req *, int code);
int		 httpd_req_error_code(const struct httpd_req *);
/* the owner's span (worker/trace/), kept until its done callback has
 * returned: the owner ends it there */
void		*httpd_req_trace(const struct httpd_req *);
void		 httpd_req_set_trace(struct httpd_req *, void *);

#endif
