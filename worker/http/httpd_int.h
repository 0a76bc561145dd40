/*
 * The HTTP/1.1 server's insides, shared by its pieces and by nothing
 * else (its callers have httpd.h): httpd.c accepts, reads, parses and
 * times the connections; httpd_send.c writes the replies and ends a
 * request; httpd_req.c is the request as its owner reads it.  What one
 * piece calls in another carries the httpd_ prefix.
 */
#ifndef VMCPD_HTTPD_INT_H
#define VMCPD_HTTPD_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/http_req.h"
#include "shared/http_client.h"
#include "worker/http/httpd.h"

struct event;
struct event_base;
struct evbuffer;

enum conn_state {
	CONN_READING,		/* no request out: reading the next one */
	CONN_ACTIVE,		/* the owner has the request */
	CONN_STREAMING,		/* the reply is started, chunk by chunk */
	CONN_SENDING,		/* the reply is whole; writing it out */
	CONN_LINGER		/* replied and closing: input is dropped */
};

enum reply_framing {
	FRAME_LENGTH,		/* Content-Length */
	FRAME_CHUNKED,		/* Transfer-Encoding: chunked */
	FRAME_CLOSE		/* HTTP/1.0: the body ends at the close */
};

struct httpd_req {
	struct httpd_conn	*r_conn;
	struct http_head	 r_head;
	int			 r_headed;	/* r_head is parsed */
	struct http_chunked	 r_chunk;
	size_t			 r_body;	/* offset of the body */
	size_t			 r_bodylen;
	size_t			 r_len;		/* the request's bytes */
	int			 r_dispatched;	/* the owner got it */
	uint64_t		 r_arrived;	/* monotonic us: handed over */
	int			 r_close;	/* close after the reply */
	int			 r_ctype;	/* a Content-Type was given */
	int			 r_nobody;	/* HEAD: no body bytes */
	char			*r_oh;		/* the owner's headers */
	size_t			 r_ohlen;
	size_t			 r_ohcap;
	httpd_req_cb		 r_close_cb;
	void			*r_close_arg;
	httpd_req_cb		 r_done_cb;
	void			*r_done_arg;
	void			*r_data;	/* httpd_req_set_data() */
	int			 r_status;	/* the reply's, for the audit */
	void			(*r_data_free)(void *);
	unsigned int		 r_tag;		/* the owner's, for its done cb */
	int			 r_rpc_code;	/* a JSON-RPC error's, or 0 */
	void			*r_trace;	/* the owner's span */
};

struct httpd_conn {
	TAILQ_ENTRY(httpd_conn)	 c_entry;
	struct httpd		*c_httpd;
	int			 c_fd;		/* -1 once gone */
	int			 c_family;	/* the client's address */
	unsigned char		 c_addr[16];
	int			 c_gfamily;	/* and its group: */
	unsigned char		 c_group[HTTP_GROUP_LEN]; /* a v6 /64 */
	int			 c_counted;	/* within the caps */
	int			 c_served;	/* a request was answered */
	uint64_t		 c_start;	/* ms: a request's first byte */
	uint64_t		 c_idle;	/* ms: accepted, or last answered */
	struct event		*c_rev;
	struct event		*c_wev;
	struct event		*c_tev;
	uint64_t		 c_deadline;	/* ms: the timeout's, 0: none */
	uint64_t		 c_armed;	/* ms: c_tev fires, 0: off */
	char			*c_in;
	size_t			 c_inlen;
	size_t			 c_incap;
	struct evbuffer		*c_out;
	enum conn_state		 c_state;
	int			 c_rpaused;	/* c_rev is off */
	int			 c_wpending;	/* c_wev is on */
	int			 c_busy;	/* httpd frames on the stack */
	int			 c_freeme;
	int			 c_inproc;	/* in conn_process */
	int			 c_tell;	/* close callback owed: c_tev */
	struct httpd_req	 c_req;
};

struct httpd {
	struct event_base	*h_base;
	struct event		*h_lev;
	struct event		*h_pauseev;	/* accepting again after EMFILE */
	struct httpd_limits	 h_lim;
	size_t			 h_incap_max;
	httpd_req_cb		 h_cb;
	void			*h_arg;
	time_t			 h_acceptlog;
	time_t			 h_caplog;	/* a refusal last logged */
	struct event		*h_reapev;
	unsigned int		 h_nconns;	/* counted in the caps */
	int			 h_scarce;	/* over half of them */
	size_t			 h_nall;
	int			 h_draining;
	httpd_idle_cb		 h_idle_cb;
	void			*h_idle_arg;
	char			 h_keepalive[48];	/* Keep-Alive: ... */
	size_t			 h_kalen;
	TAILQ_HEAD(, httpd_conn) h_conns;
	TAILQ_HEAD(, httpd_conn) h_reap;	/* freed on the next pass */
};

/* httpd.c */
uint64_t httpd_now_ms(void);
uint64_t httpd_now_us(void);
/* a connection is freed only once no httpd frame is using it */
void	 httpd_conn_hold(struct httpd_conn *);
void	 httpd_conn_unhold(struct httpd_conn *);
/* the connection's timeout for its state (on), or none */
void	 httpd_conn_timer(struct httpd_conn *, int on);
void	 httpd_conn_gone(struct httpd_conn *);
/* the close callback owed: from the loop, on a turn of its own */
void	 httpd_conn_tell_later(struct httpd_conn *);

/* httpd_send.c */
/* answer (status, why) a request its owner has not seen, and close */
void	 httpd_conn_refuse(struct httpd_conn *, int status, const char *why);
/* write what the output holds; a reply all out ends its request */
void	 httpd_conn_flush(struct httpd_conn *);
/* the request ends: its done callback, then the next one or the close */
void	 httpd_conn_finish(struct httpd_conn *);

#endif /* VMCPD_HTTPD_INT_H */
