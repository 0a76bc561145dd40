/*
 * The front's HTTP/1.1 server, on the listener the master shares.
 *
 * Written for the hot path of a gateway: a request is read with one
 * read(2) into the connection's buffer and parsed there in place
 * (proto/http_req.c); its reply is written with one writev(2) from the
 * handler's own call, not a loop pass later; the read interest stays
 * registered for the life of the connection, so a keep-alive request
 * costs no epoll_ctl.  Only a reply the socket cannot take at once
 * waits for EV_WRITE.  (evhttp, used before, spent a malloc per header,
 * printf'd every header, asked FIONREAD before each read and turned
 * the interest set over three times per request.)
 *
 * One request per connection is served at a time; bytes a client
 * pipelines behind it wait in the buffer.  While a request is out, the
 * connection is still read, so a client that goes away is noticed and
 * the request's owner told (the close callback).  It is told from a
 * loop turn of its own, never from inside a call it made: a write that
 * finds the connection reset (on loopback the peer's RST comes back
 * inside the write(2) after its close) would otherwise run the callback,
 * which frees the owner's state, under the owner's own frames.
 *
 * A slow client is bounded three ways: http.timeout between reads, a
 * deadline for the whole head (http.headerTimeout) and one for the
 * whole request (http.requestTimeout), both from its first byte; a
 * reply being streamed is not a request being read, so SSE streams
 * have none of these.  A connection that has sent nothing has
 * http.headerTimeout to begin its first request, and an idle
 * keep-alive one to begin its next once a worker holds more than half
 * of http.maxConnections (else http.timeout, as Keep-Alive announces):
 * idle connections held open cost an attacker a reconnect every few
 * seconds.  Past the connection caps (per client: its address, an
 * IPv6 one by its /64) a client is answered 503 and closed.
 *
 * Draining (a reload) loses no request: the connections open are still
 * served, a reply says "Connection: close" and closes its connection
 * after it (unless requests pipelined behind it are in: the last one's
 * does), and an idle one is closed only when its idle time (announced
 * in Keep-Alive) is up, never while a request may be on its way.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "proto/headers.h"
#include "proto/http_req.h"
#include "shared/log.h"
#include "shared/http_client.h"
#include "worker/http/httpd.h"

#define HTTPD_IN_MIN		8192		/* first buffer of a connection */
#define HTTPD_IN_KEEP		(64 * 1024)	/* kept between requests */
#define HTTPD_FRAMING_SLACK	(16 * 1024)	/* chunk lines not yet decoded */
#define HTTPD_ACCEPT_BURST	32
#define HTTPD_LINGER_MS		2000		/* reading past a closing reply */
#define HTTPD_ACCEPT_PAUSE_MS	100		/* out of descriptors: wait */

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

static void	 httpd_on_accept(evutil_socket_t, short, void *);
static void	 httpd_on_reap(evutil_socket_t, short, void *);
static void	 httpd_on_resume(evutil_socket_t, short, void *);
static void	 httpd_pause(struct httpd *);
static void	 conn_new(struct httpd *, int, const struct sockaddr_storage *);
static int	 conn_over_cap(struct httpd *, struct httpd_conn *);
static uint64_t	 httpd_now_ms(void);
static void	 conn_free(struct httpd_conn *);
static void	 conn_hold(struct httpd_conn *);
static void	 conn_unhold(struct httpd_conn *);
static void	 conn_timer(struct httpd_conn *, int);
static void	 conn_on_read(evutil_socket_t, short, void *);
static void	 conn_on_write(evutil_socket_t, short, void *);
static void	 conn_on_timeout(evutil_socket_t, short, void *);
static int	 conn_read(struct httpd_conn *);
static void	 conn_process(struct httpd_conn *);
static int	 conn_take(struct httpd_conn *);
static void	 conn_refuse(struct httpd_conn *, int, const char *);
static void	 conn_flush(struct httpd_conn *);
static void	 conn_finish(struct httpd_conn *);
static void	 conn_gone(struct httpd_conn *);
static void	 conn_tell_later(struct httpd_conn *);
static void	 conn_tell(struct httpd_conn *);
static void	 conn_linger(struct httpd_conn *);
static void	 conn_head(struct httpd_conn *, int, size_t,
		    enum reply_framing);
static const char *httpd_reason(int);
static const char *httpd_date(struct httpd *);

struct httpd *
httpd_new(struct event_base *base, int listen_fd,
    const struct httpd_limits *lim, httpd_req_cb cb, void *arg)
{
	struct httpd	*h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->h_base = base;
	h->h_lim = *lim;
	h->h_incap_max = lim->hl_max_head + lim->hl_max_body +
	    HTTPD_FRAMING_SLACK;
	h->h_cb = cb;
	h->h_arg = arg;
	if (lim->hl_timeout_ms >= 1000)
		h->h_kalen = (size_t)snprintf(h->h_keepalive,
		    sizeof(h->h_keepalive), "Keep-Alive: timeout=%d\r\n",
		    lim->hl_timeout_ms / 1000);
	TAILQ_INIT(&h->h_conns);
	TAILQ_INIT(&h->h_reap);
	if ((h->h_reapev = event_new(base, -1, 0, httpd_on_reap, h)) == NULL ||
	    (h->h_pauseev = evtimer_new(base, httpd_on_resume, h)) == NULL ||
	    (h->h_lev = event_new(base, listen_fd, EV_READ | EV_PERSIST,
	    httpd_on_accept, h)) == NULL || event_add(h->h_lev, NULL) == -1) {
		httpd_free(h);
		return NULL;
	}
	return h;
}

void
httpd_stop_accepting(struct httpd *h)
{
	if (h->h_pauseev != NULL)
		event_del(h->h_pauseev);
	if (h->h_lev != NULL) {
		event_free(h->h_lev);
		h->h_lev = NULL;
	}
}

void
httpd_drain(struct httpd *h, httpd_idle_cb cb, void *arg)
{
	httpd_stop_accepting(h);
	h->h_draining = 1;
	h->h_idle_cb = cb;
	h->h_idle_arg = arg;
	/* no connection left to wait for: say so from the loop */
	if (h->h_nall == 0)
		event_active(h->h_reapev, 0, 0);
}

void
httpd_close_idle(struct httpd *h)
{
	struct httpd_conn	*c, *next;

	for (c = TAILQ_FIRST(&h->h_conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, c_entry);
		if (c->c_state == CONN_READING && c->c_inlen == 0)
			conn_gone(c);
	}
}

size_t
httpd_nconns(const struct httpd *h)
{
	return h->h_nall;
}

void
httpd_free(struct httpd *h)
{
	struct httpd_conn	*c;

	if (h == NULL)
		return;
	httpd_stop_accepting(h);
	while ((c = TAILQ_FIRST(&h->h_conns)) != NULL)
		conn_free(c);
	while ((c = TAILQ_FIRST(&h->h_reap)) != NULL)
		conn_free(c);
	if (h->h_reapev != NULL)
		event_free(h->h_reapev);
	if (h->h_pauseev != NULL)
		event_free(h->h_pauseev);
	free(h);
}

/*
 * Every worker watches the listener; the one whose accept4() wins takes
 * the connection, the others see EAGAIN.
 */
static void
httpd_on_accept(evutil_socket_t lfd, short ev, void *arg)
{
	struct httpd		*h = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	int			 fd, i;
	time_t			 now;

	(void)ev;
	for (i = 0; i < HTTPD_ACCEPT_BURST; i++) {
		sslen = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		fd = accept4(lfd, (struct sockaddr *)&ss, &sslen,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if ((now = time(NULL)) != h->h_acceptlog) {
				h->h_acceptlog = now;
				log_warn("accept");
			}
			/*
			 * Out of descriptors or memory: the connection stays
			 * queued and the listener readable, so watching it
			 * now would spin.  Try again a little later.
			 */
			httpd_pause(h);
			return;
		}
		conn_new(h, fd, &ss);
	}
}

/*
 * Connections are freed here, after the callback that ended them has
 * returned: an owner may still look at a request it has just answered.
 */
static void
httpd_on_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct httpd		*h = arg;
	struct httpd_conn	*c;

	(void)fd;
	(void)ev;
	while ((c = TAILQ_FIRST(&h->h_reap)) != NULL)
		conn_free(c);
	if (h->h_draining && h->h_nall == 0 && h->h_idle_cb != NULL)
		h->h_idle_cb(h->h_idle_arg);
}

static void
httpd_pause(struct httpd *h)
{
	struct timeval tv = { 0, HTTPD_ACCEPT_PAUSE_MS * 1000 };

	if (h->h_lev == NULL)
		return;
	event_del(h->h_lev);
	(void)evtimer_add(h->h_pauseev, &tv);
}

static void
httpd_on_resume(evutil_socket_t fd, short ev, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)ev;
	if (h->h_lev != NULL)
		(void)event_add(h->h_lev, NULL);
}

static uint64_t
httpd_now_ms(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Connections are scarce once a worker holds more than half of
 * http.maxConnections: then an idle keep-alive connection, too, has
 * http.headerTimeout to begin its next request, not http.timeout.  Said
 * to those idle already as it turns so; over again below a quarter (one
 * walk of the connections per turn, not per accept).
 */
static void
httpd_scarce_check(struct httpd *h)
{
	struct httpd_conn	*c;
	unsigned int		 cap = h->h_lim.hl_max_conns;

	if (cap == 0 || h->h_lim.hl_head_ms <= 0)
		return;
	if (h->h_scarce && h->h_nconns <= cap / 4)
		h->h_scarce = 0;
	else if (!h->h_scarce && h->h_nconns > cap / 2) {
		h->h_scarce = 1;
		TAILQ_FOREACH(c, &h->h_conns, c_entry)
			if (c->c_fd != -1 && c->c_state == CONN_READING &&
			    c->c_start == 0)
				conn_timer(c, 1);
	}
}

/* 1 past http.maxConnections, 2 past the cap per address (its group: an
 * IPv6 /64, as sessions.maxPerAddress); else 0, and c is counted */
static int
conn_over_cap(struct httpd *h, struct httpd_conn *c)
{
	struct httpd_conn	*o;
	unsigned int		 n = 0, cap = h->h_lim.hl_max_conns_client;

	if (h->h_lim.hl_max_conns > 0 && h->h_nconns >= h->h_lim.hl_max_conns)
		return 1;
	if (cap > 0 && h->h_nconns >= cap && c->c_gfamily != AF_UNSPEC)
		TAILQ_FOREACH(o, &h->h_conns, c_entry)
			if (o->c_counted && o->c_fd != -1 &&
			    o->c_gfamily == c->c_gfamily &&
			    memcmp(o->c_group, c->c_group,
			    HTTP_GROUP_LEN) == 0 && ++n >= cap)
				return 2;
	c->c_counted = 1;
	h->h_nconns++;
	return 0;
}

static void
conn_new(struct httpd *h, int fd, const struct sockaddr_storage *ss)
{
	struct httpd_conn	*c;
	int			 one = 1, over;
	time_t			 now;

	/* replies go out whole; SSE events must not wait for an ACK */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	c->c_httpd = h;
	c->c_fd = fd;
	c->c_req.r_conn = c;
	c->c_family = ss->ss_family;
	if (ss->ss_family == AF_INET)
		memcpy(c->c_addr, &((const struct sockaddr_in *)ss)->sin_addr,
		    4);
	else if (ss->ss_family == AF_INET6)
		memcpy(c->c_addr,
		    &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	else
		c->c_family = AF_UNSPEC;
	if (http_addr_group((const struct sockaddr *)ss, sizeof(*ss),
	    &c->c_gfamily, c->c_group) == -1)
		c->c_gfamily = AF_UNSPEC;
	c->c_idle = httpd_now_ms();
	if ((c->c_out = evbuffer_new()) == NULL ||
	    (c->c_rev = event_new(h->h_base, fd, EV_READ | EV_PERSIST,
	    conn_on_read, c)) == NULL ||
	    (c->c_wev = event_new(h->h_base, fd, EV_WRITE | EV_PERSIST,
	    conn_on_write, c)) == NULL ||
	    (c->c_tev = evtimer_new(h->h_base, conn_on_timeout, c)) == NULL ||
	    event_add(c->c_rev, NULL) == -1)
		goto fail;
	over = conn_over_cap(h, c);
	TAILQ_INSERT_TAIL(&h->h_conns, c, c_entry);
	h->h_nall++;
	if (over) {
		if ((now = time(NULL)) != h->h_caplog) {
			h->h_caplog = now;
			log_warnx("refusing connections: %s reached",
			    over == 1 ? "http.maxConnections" :
			    "http.maxConnectionsPerClient");
		}
		conn_refuse(c, 503, over == 1 ? "Service Unavailable: too "
		    "many connections (http.maxConnections)" : "Service "
		    "Unavailable: too many connections from this address "
		    "(http.maxConnectionsPerClient)");
		return;
	}
	conn_timer(c, 1);
	httpd_scarce_check(h);
	return;
fail:
	log_warnx("out of memory for a connection");
	if (c != NULL) {
		if (c->c_rev != NULL)
			event_free(c->c_rev);
		if (c->c_wev != NULL)
			event_free(c->c_wev);
		if (c->c_tev != NULL)
			event_free(c->c_tev);
		if (c->c_out != NULL)
			evbuffer_free(c->c_out);
		free(c);
	}
	close(fd);
}

static void
conn_free(struct httpd_conn *c)
{
	if (c->c_freeme == 2)
		TAILQ_REMOVE(&c->c_httpd->h_reap, c, c_entry);
	else
		TAILQ_REMOVE(&c->c_httpd->h_conns, c, c_entry);
	if (c->c_counted) {
		c->c_httpd->h_nconns--;
		httpd_scarce_check(c->c_httpd);
	}
	c->c_httpd->h_nall--;
	event_free(c->c_rev);
	event_free(c->c_wev);
	event_free(c->c_tev);
	if (c->c_fd != -1)
		close(c->c_fd);
	evbuffer_free(c->c_out);
	free(c->c_in);
	free(c->c_req.r_oh);
	httpd_req_set_data(&c->c_req, NULL, NULL);
	free(c);
}

/* a connection is freed only once no httpd frame is using it */
static void
conn_hold(struct httpd_conn *c)
{
	c->c_busy++;
}

static void
conn_unhold(struct httpd_conn *c)
{
	struct httpd *h = c->c_httpd;

	if (--c->c_busy > 0 || c->c_freeme != 1)
		return;
	event_del(c->c_rev);
	event_del(c->c_wev);
	event_del(c->c_tev);
	c->c_armed = c->c_deadline = 0;
	c->c_freeme = 2;
	TAILQ_REMOVE(&h->h_conns, c, c_entry);
	TAILQ_INSERT_TAIL(&h->h_reap, c, c_entry);
	event_active(h->h_reapev, 0, 0);
}

/*
 * The timeout at deadline (ms).  Each request moves it two or three
 * times: c_tev is only added again when it would fire after the new
 * deadline; one that fires first is armed again for what is left
 * (conn_on_timeout()), so the deadline is kept exactly.
 */
static void
conn_timer_arm(struct httpd_conn *c, uint64_t now, uint64_t deadline)
{
	struct timeval	 tv;
	uint64_t	 ms;

	c->c_deadline = deadline;
	if (c->c_armed != 0 && c->c_armed <= deadline)
		return;
	ms = deadline > now ? deadline - now : 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	(void)event_add(c->c_tev, &tv);
	c->c_armed = deadline > now ? deadline : now;
}

/*
 * Idle time, or the time left for a stalled reader, or, while a request
 * is coming in, the lesser of the idle time and its deadline's.  A
 * connection that has not begun a request has http.headerTimeout to
 * begin one, from its accept or its last answer, when it is new (a
 * client connects to send) or connections are scarce; else the idle
 * time its Keep-Alive header announced.
 */
static void
conn_timer(struct httpd_conn *c, int on)
{
	const struct httpd_limits *lim = &c->c_httpd->h_lim;
	int		 ms = lim->hl_timeout_ms, limit = 0;
	uint64_t	 used, now, since = 0;

	if (c->c_state == CONN_LINGER && on && (ms <= 0 ||
	    ms > HTTPD_LINGER_MS))
		ms = HTTPD_LINGER_MS;
	now = httpd_now_ms();
	if (on && c->c_state == CONN_READING) {
		if (c->c_start != 0) {
			limit = c->c_req.r_headed ? lim->hl_request_ms :
			    lim->hl_head_ms;
			since = c->c_start;
		} else if (!c->c_served || c->c_httpd->h_scarce) {
			limit = lim->hl_head_ms;
			since = c->c_idle;
		}
	}
	if (limit > 0) {
		used = now - since;
		if (ms <= 0 || (uint64_t)limit < used + (uint64_t)ms)
			ms = used >= (uint64_t)limit ? 0 :
			    limit - (int)used;
		if (ms == 0) {
			conn_timer_arm(c, now, now);
			return;
		}
	}
	/* off lazily: c_tev, if armed, fires and finds nothing due */
	if (!on || ms <= 0) {
		c->c_deadline = 0;
		return;
	}
	conn_timer_arm(c, now, now + (uint64_t)ms);
}

static void
conn_on_read(evutil_socket_t fd, short ev, void *arg)
{
	struct httpd_conn *c = arg;

	(void)fd;
	(void)ev;
	conn_hold(c);
	if (c->c_state == CONN_LINGER)
		conn_linger(c);
	else if (conn_read(c) == 0 && c->c_state == CONN_READING)
		conn_process(c);
	conn_unhold(c);
}

static void
conn_on_write(evutil_socket_t fd, short ev, void *arg)
{
	struct httpd_conn *c = arg;

	(void)fd;
	(void)ev;
	conn_hold(c);
	conn_flush(c);
	conn_unhold(c);
}

/* an idle or slow client, or one that stopped reading its reply */
static void
conn_on_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct httpd_conn *c = arg;
	uint64_t	   now;

	(void)fd;
	(void)ev;
	if (c->c_tell) {
		conn_tell(c);
		return;
	}
	c->c_armed = 0;
	if (c->c_deadline == 0)
		return;		/* turned off since it was armed */
	if ((now = httpd_now_ms()) < c->c_deadline) {
		conn_timer_arm(c, now, c->c_deadline);	/* moved later */
		return;
	}
	c->c_deadline = 0;
	conn_hold(c);
	if (c->c_state == CONN_READING && c->c_start != 0)
		conn_refuse(c, 408, c->c_req.r_headed ? "Request Timeout: the "
		    "request was not in within http.requestTimeout, or "
		    "stalled for http.timeout" : "Request Timeout: the head "
		    "was not in within http.headerTimeout, or stalled for "
		    "http.timeout");
	else
		conn_gone(c);
	conn_unhold(c);
}

/* drop what a closing client still sends, so that our close does not
 * reset the connection before it has read the reply */
static void
conn_linger(struct httpd_conn *c)
{
	char	buf[4096];
	ssize_t	n;
	int	i;

	for (i = 0; i < 4; i++) {
		n = read(c->c_fd, buf, sizeof(buf));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			conn_gone(c);
			return;
		}
	}
}

/* 0 if bytes came in (or none yet), -1 if the connection is gone */
static int
conn_read(struct httpd_conn *c)
{
	struct httpd	*h = c->c_httpd;
	size_t		 cap;
	ssize_t		 n;
	char		*p, peek;

	/* a big request's buffer is not kept for the idle time after it */
	if (c->c_state == CONN_READING && c->c_inlen == 0 &&
	    c->c_incap > HTTPD_IN_KEEP) {
		free(c->c_in);
		c->c_in = NULL;
		c->c_incap = 0;
	}
	if (c->c_inlen == c->c_incap) {
		if (c->c_state != CONN_READING) {
			/*
			 * The request out lives in this buffer, which must
			 * not move: look whether the client is still there,
			 * and read no more until the reply is out.
			 */
			n = recv(c->c_fd, &peek, 1, MSG_PEEK);
			if (n > 0 || (n == -1 && (errno == EAGAIN ||
			    errno == EINTR))) {
				if (n > 0) {
					event_del(c->c_rev);
					c->c_rpaused = 1;
				}
				return 0;
			}
			conn_gone(c);
			return -1;
		}
		if (c->c_incap >= h->h_incap_max) {
			conn_refuse(c, 413, "Payload Too Large: the request "
			    "is over http.maxBodySize");
			return -1;
		}
		cap = c->c_incap == 0 ? HTTPD_IN_MIN : c->c_incap * 2;
		if (cap > h->h_incap_max)
			cap = h->h_incap_max;
		if ((p = realloc(c->c_in, cap)) == NULL) {
			conn_refuse(c, 500, "Internal error: out of memory");
			return -1;
		}
		c->c_in = p;
		c->c_incap = cap;
	}
	n = read(c->c_fd, c->c_in + c->c_inlen, c->c_incap - c->c_inlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		conn_gone(c);
		return -1;
	}
	if (c->c_inlen == 0 && c->c_state == CONN_READING)
		c->c_start = httpd_now_ms();
	c->c_inlen += (size_t)n;
	if (c->c_state == CONN_READING)
		conn_timer(c, 1);
	return 0;
}

/* serve what the buffer holds, one request after another */
static void
conn_process(struct httpd_conn *c)
{
	struct httpd		*h = c->c_httpd;
	struct httpd_req	*req = &c->c_req;

	if (c->c_inproc)
		return;
	c->c_inproc = 1;
	while (c->c_state == CONN_READING && c->c_fd != -1 &&
	    c->c_inlen > 0 && conn_take(c) == 1) {
		c->c_state = CONN_ACTIVE;
		req->r_dispatched = 1;
		conn_timer(c, 0);
		h->h_cb(req, h->h_arg);
	}
	c->c_inproc = 0;
}

/* 1 when a whole request is in, 0 for more bytes, -1 if refused */
static int
conn_take(struct httpd_conn *c)
{
	struct httpd		*h = c->c_httpd;
	struct httpd_req	*req = &c->c_req;
	struct http_head	*hh = &req->r_head;
	struct http_chunked	*ch = &req->r_chunk;
	size_t			 need, gap;
	char			*p;
	int			 r, fresh = 0;

	if (!req->r_headed) {
		r = http_head_parse(c->c_in, c->c_inlen, h->h_lim.hl_max_head,
		    h->h_lim.hl_max_body, hh);
		if (r == 0)
			return 0;
		if (r == -1) {
			conn_refuse(c, hh->hh_status, hh->hh_why);
			return -1;
		}
		req->r_headed = fresh = 1;
		req->r_body = hh->hh_len;
		req->r_close = hh->hh_close;
		req->r_nobody = hh->hh_method == HTTP_M_HEAD;
		memset(ch, 0, sizeof(*ch));
		need = req->r_body + (size_t)hh->hh_clen;
		if (!hh->hh_chunked && need > c->c_incap) {
			/* the body's size is known: one allocation */
			if ((p = realloc(c->c_in, need)) == NULL) {
				conn_refuse(c, 500, "Internal error: out of "
				    "memory");
				return -1;
			}
			c->c_in = p;
			c->c_incap = need;
		}
		if (hh->hh_continue && (hh->hh_chunked ||
		    c->c_inlen < need)) {
			evbuffer_add(c->c_out, "HTTP/1.1 100 Continue\r\n\r\n",
			    25);
			conn_flush(c);
		}
	}
	if (hh->hh_chunked) {
		r = http_chunked_decode(ch, c->c_in + req->r_body,
		    c->c_inlen - req->r_body, h->h_lim.hl_max_body, hh);
		if (r == -1) {
			conn_refuse(c, hh->hh_status, hh->hh_why);
			return -1;
		}
		/* drop the framing read past, so it never fills the buffer */
		if ((gap = ch->hc_in - ch->hc_out) > 0) {
			memmove(c->c_in + req->r_body + ch->hc_out,
			    c->c_in + req->r_body + ch->hc_in,
			    c->c_inlen - req->r_body - ch->hc_in);
			c->c_inlen -= gap;
			ch->hc_in = ch->hc_out;
		}
		if (r == 0)
			goto more;
		req->r_bodylen = ch->hc_out;
	} else {
		if (c->c_inlen - req->r_body < hh->hh_clen)
			goto more;
		req->r_bodylen = (size_t)hh->hh_clen;
	}
	req->r_len = req->r_body + req->r_bodylen;
	return 1;
more:
	/* the head is in: from here the whole request's deadline */
	if (fresh)
		conn_timer(c, 1);
	return 0;
}

/* a request refused before its owner saw it: answer and close */
static void
conn_refuse(struct httpd_conn *c, int status, const char *why)
{
	struct httpd_req	*req = &c->c_req;
	const char		*pre = "{\"jsonrpc\":\"2.0\",\"id\":null,"
				    "\"error\":{\"code\":-32600,\"message\":\"";
	size_t			 len = strlen(pre) + strlen(why) + 3;

	log_debug("HTTP request refused: %d %s", status, why);
	req->r_close = 1;
	req->r_nobody = 0;
	req->r_ohlen = 0;
	req->r_ctype = 1;
	event_del(c->c_rev);
	c->c_rpaused = 1;
	conn_timer(c, 0);
	conn_head(c, status, len, FRAME_LENGTH);
	/* why is one of http_req.c's fixed texts: nothing to escape */
	evbuffer_add(c->c_out, "Content-Type: application/json\r\n\r\n", 34);
	evbuffer_add(c->c_out, pre, strlen(pre));
	evbuffer_add(c->c_out, why, strlen(why));
	evbuffer_add(c->c_out, "\"}}", 3);
	c->c_state = CONN_SENDING;
	conn_flush(c);
}

static void
conn_flush(struct httpd_conn *c)
{
	size_t	left;
	int	n = 0;

	if (c->c_fd == -1)
		return;
	if ((left = evbuffer_get_length(c->c_out)) > 0) {
		n = evbuffer_write(c->c_out, c->c_fd);
		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			conn_gone(c);
			return;
		}
		left = evbuffer_get_length(c->c_out);
	}
	if (left > 0) {
		/* the timeout is for a reader that stalls, not a slow one */
		if (!c->c_wpending || n > 0)
			conn_timer(c, 1);
		if (!c->c_wpending) {
			(void)event_add(c->c_wev, NULL);
			c->c_wpending = 1;
		}
		return;
	}
	if (c->c_wpending) {
		event_del(c->c_wev);
		c->c_wpending = 0;
		conn_timer(c, c->c_state == CONN_READING);
	}
	if (c->c_state == CONN_SENDING)
		conn_finish(c);
}

/* the reply is out, or cannot be: the request ends here */
static void
conn_finish(struct httpd_conn *c)
{
	struct httpd_req	*req = &c->c_req;
	httpd_req_cb		 done = req->r_dispatched ? req->r_done_cb :
				    NULL;
	void			*done_arg = req->r_done_arg;
	int			 keep = c->c_fd != -1 && !req->r_close;
	size_t			 used = req->r_len;

	conn_hold(c);
	req->r_headed = 0;
	req->r_dispatched = 0;
	req->r_close = req->r_ctype = req->r_nobody = 0;
	req->r_ohlen = 0;
	req->r_close_cb = req->r_done_cb = NULL;
	req->r_close_arg = req->r_done_arg = NULL;
	req->r_len = req->r_body = req->r_bodylen = 0;
	c->c_state = CONN_READING;
	if (done != NULL)
		done(req, done_arg);
	req->r_status = 0;
	httpd_req_set_data(req, NULL, NULL);
	req->r_tag = 0;
	if (c->c_rpaused && c->c_fd != -1) {
		(void)event_add(c->c_rev, NULL);
		c->c_rpaused = 0;
	}
	if (!keep) {
		if (c->c_fd == -1)
			c->c_freeme = 1;
		else {
			/* a FIN after the reply, then input is dropped a while */
			(void)shutdown(c->c_fd, SHUT_WR);
			c->c_state = CONN_LINGER;
			c->c_inlen = 0;
			conn_timer(c, 1);
		}
		conn_unhold(c);
		return;
	}
	if (used < c->c_inlen)
		memmove(c->c_in, c->c_in + used, c->c_inlen - used);
	c->c_inlen -= used;
	c->c_idle = httpd_now_ms();
	c->c_served = 1;
	c->c_start = c->c_inlen > 0 ? c->c_idle : 0;
	conn_timer(c, 1);
	/* a pipelined request: served from the loop, not from inside the
	 * owner's call that ended this one */
	if (c->c_inlen > 0 && !c->c_inproc)
		event_active(c->c_rev, EV_READ, 0);
	conn_unhold(c);
}

/* the client went away, failed or timed out */
static void
conn_gone(struct httpd_conn *c)
{
	struct httpd_req	*req = &c->c_req;

	if (c->c_fd == -1)
		return;
	conn_hold(c);
	event_del(c->c_rev);
	event_del(c->c_wev);
	event_del(c->c_tev);
	c->c_armed = c->c_deadline = 0;
	close(c->c_fd);
	c->c_fd = -1;
	(void)evbuffer_drain(c->c_out, evbuffer_get_length(c->c_out));
	switch (c->c_state) {
	case CONN_READING:
	case CONN_LINGER:
		c->c_freeme = 1;
		break;
	case CONN_SENDING:
		conn_finish(c);
		break;
	case CONN_ACTIVE:
	case CONN_STREAMING:
		/* the owner still holds the request and ends it */
		if (req->r_close_cb != NULL)
			conn_tell_later(c);
		break;
	}
	conn_unhold(c);
}

/*
 * The close callback, from the loop: this may be a write of the owner's
 * (the callback would free what the writer goes on using), or a close
 * found while it iterates its requests.  c_tev is free for it: a gone
 * connection has no timeout.
 */
static void
conn_tell_later(struct httpd_conn *c)
{
	c->c_tell = 1;
	event_active(c->c_tev, EV_TIMEOUT, 0);
}

/* the request still out, and a callback (the owner's at this turn) */
static void
conn_tell(struct httpd_conn *c)
{
	struct httpd_req	*req = &c->c_req;

	c->c_tell = 0;
	if ((c->c_state != CONN_ACTIVE && c->c_state != CONN_STREAMING) ||
	    req->r_close_cb == NULL)
		return;
	conn_hold(c);
	req->r_close_cb(req, req->r_close_arg);
	conn_unhold(c);
}

static const char *
httpd_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	}
	return "Unknown";
}

/* the Date header's value, formatted once a second */
static const char *
httpd_date(struct httpd *h)
{
	static char	 date[40];
	static time_t	 when = -1;
	struct timeval	 tv;
	struct tm	 tm;

	if (event_base_gettimeofday_cached(h->h_base, &tv) == -1)
		tv.tv_sec = time(NULL);
	if (tv.tv_sec != when && gmtime_r(&tv.tv_sec, &tm) != NULL &&
	    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT",
	    &tm) > 0)
		when = tv.tv_sec;
	return date;
}

/*
 * The status line and the server's own headers; the owner's headers
 * follow, then the blank line (the caller's).  clen is used for
 * FRAME_LENGTH unless the status has no body.
 */
static void
conn_head(struct httpd_conn *c, int status, size_t clen,
    enum reply_framing framing)
{
	struct httpd_req	*req = &c->c_req;
	char			 buf[320], num[24], *p = buf, *s;
	const char		*reason = httpd_reason(status), *date;
	size_t			 n;

	if (status < 100 || status > 999)
		status = 500;
	req->r_status = status;
	memcpy(p, "HTTP/1.1 ", 9);
	p += 9;
	*p++ = (char)('0' + status / 100);
	*p++ = (char)('0' + status / 10 % 10);
	*p++ = (char)('0' + status % 10);
	*p++ = ' ';
	n = strlen(reason);
	memcpy(p, reason, n);
	p += n;
	memcpy(p, "\r\nDate: ", 8);
	p += 8;
	date = httpd_date(c->c_httpd);
	n = strlen(date);
	memcpy(p, date, n);
	p += n;
	memcpy(p, "\r\n", 2);
	p += 2;
	if (framing == FRAME_CHUNKED) {
		memcpy(p, "Transfer-Encoding: chunked\r\n", 28);
		p += 28;
	} else if (framing == FRAME_LENGTH && status >= 200 &&
	    status != 204 && status != 304) {
		memcpy(p, "Content-Length: ", 16);
		p += 16;
		s = proto_utoa(num + sizeof(num), clen, 10);
		n = (size_t)(num + sizeof(num) - s);
		memcpy(p, s, n);
		p += n;
		memcpy(p, "\r\n", 2);
		p += 2;
		/* a body of no stated type is JSON: no header list walk */
		if (clen > 0 && !req->r_ctype) {
			memcpy(p, "Content-Type: application/json\r\n", 32);
			p += 32;
		}
	}
	/* draining: a reply closes, unless a request is in behind it */
	if (c->c_httpd->h_draining && c->c_inlen <= req->r_len)
		req->r_close = 1;
	if (req->r_close) {
		memcpy(p, "Connection: close\r\n", 19);
		p += 19;
	} else {
		if (req->r_head.hh_minor == 0) {
			memcpy(p, "Connection: keep-alive\r\n", 24);
			p += 24;
		}
		/* clients drop an idle connection before we do */
		memcpy(p, c->c_httpd->h_keepalive, c->c_httpd->h_kalen);
		p += c->c_httpd->h_kalen;
	}
	evbuffer_add(c->c_out, buf, (size_t)(p - buf));
	if (req->r_ohlen > 0)
		evbuffer_add(c->c_out, req->r_oh, req->r_ohlen);
}

int
httpd_req_method(const struct httpd_req *req)
{
	return req->r_head.hh_method;
}

const char *
httpd_req_path(const struct httpd_req *req)
{
	return req->r_conn->c_in + req->r_head.hh_path;
}

const char *
httpd_req_host(const struct httpd_req *req)
{
	return req->r_head.hh_host != 0 ? req->r_conn->c_in +
	    req->r_head.hh_host : NULL;
}

const char *
httpd_req_header(const struct httpd_req *req, const char *name)
{
	return http_head_header(req->r_conn->c_in, &req->r_head, name);
}

const char *
httpd_req_known(const struct httpd_req *req, int id)
{
	return http_head_known(req->r_conn->c_in, &req->r_head, id);
}

const char *
httpd_req_body(const struct httpd_req *req, size_t *len)
{
	*len = req->r_bodylen;
	return req->r_conn->c_in + req->r_body;
}

int
httpd_req_gone(const struct httpd_req *req)
{
	return req->r_conn->c_fd == -1;
}

/* the client's address as accepted (no port): no syscall per request */
int
httpd_req_peer(const struct httpd_req *req, struct sockaddr_storage *ss,
    socklen_t *len)
{
	const struct httpd_conn	*c = req->r_conn;
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	switch (c->c_family) {
	case AF_INET:
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, c->c_addr, 4);
		*len = sizeof(*sin);
		return 0;
	case AF_INET6:
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, c->c_addr, 16);
		*len = sizeof(*sin6);
		return 0;
	default:
		*len = 0;
		return -1;
	}
}

void
httpd_req_set_close_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	struct httpd_conn *c = req->r_conn;

	req->r_close_cb = cb;
	req->r_close_arg = arg;
	/* set on a request whose client is gone: told from the loop too */
	if (cb != NULL && c->c_fd == -1 && (c->c_state == CONN_ACTIVE ||
	    c->c_state == CONN_STREAMING))
		conn_tell_later(c);
}

void
httpd_req_set_done_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	req->r_done_cb = cb;
	req->r_done_arg = arg;
}

void *
httpd_req_done_arg(const struct httpd_req *req)
{
	return req->r_done_arg;
}

int
httpd_req_status(const struct httpd_req *req)
{
	return req->r_status;
}

unsigned int
httpd_req_tag(const struct httpd_req *req)
{
	return req->r_tag;
}

void
httpd_req_set_tag(struct httpd_req *req, unsigned int tag)
{
	req->r_tag = tag;
}

void
httpd_req_tag_error(struct httpd_req *req)
{
	httpd_req_set_tag(req, httpd_req_tag(req) | HTTPD_TAG_ERROR);
}

size_t
httpd_req_unsent(const struct httpd_req *req)
{
	return evbuffer_get_length(req->r_conn->c_out);
}

int
httpd_add_header(struct httpd_req *req, const char *name, const char *value)
{
	size_t	 nl = strlen(name), vl = strlen(value), need;
	char	*p;

	if (strpbrk(name, "\r\n:") != NULL || strpbrk(value, "\r\n") != NULL)
		return -1;
	/* framing is the server's to say */
	if (strcasecmp(name, "Connection") == 0) {
		if (strcasecmp(value, "close") == 0)
			req->r_close = 1;
		return 0;
	}
	if (strcasecmp(name, "Content-Length") == 0 ||
	    strcasecmp(name, "Transfer-Encoding") == 0)
		return -1;
	if (strcasecmp(name, "Content-Type") == 0)
		req->r_ctype = 1;
	need = req->r_ohlen + nl + vl + 4;
	if (need > req->r_ohcap) {
		if ((p = realloc(req->r_oh, need + 256)) == NULL)
			return -1;
		req->r_oh = p;
		req->r_ohcap = need + 256;
	}
	p = req->r_oh + req->r_ohlen;
	memcpy(p, name, nl);
	p[nl] = ':';
	p[nl + 1] = ' ';
	memcpy(p + nl + 2, value, vl);
	memcpy(p + nl + 2 + vl, "\r\n", 2);
	req->r_ohlen = need;
	return 0;
}

/*
 * The one reply of a request, its body either an evbuffer (moved) or
 * n pieces (copied straight into the connection's output).
 */
static void
conn_reply(struct httpd_req *req, int status, struct evbuffer *body,
    const struct iovec *iov, int n)
{
	struct httpd_conn	*c = req->r_conn;
	size_t			 len = 0;
	int			 i;

	if (c->c_state != CONN_ACTIVE) {
		log_warnx("httpd: a reply to a request already answered");
		return;
	}
	if (body != NULL)
		len = evbuffer_get_length(body);
	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	conn_hold(c);
	if (c->c_fd == -1) {
		conn_finish(c);
		goto done;
	}
	conn_head(c, status, len, FRAME_LENGTH);
	evbuffer_add(c->c_out, "\r\n", 2);
	if (len > 0 && !req->r_nobody && status >= 200 && status != 204 &&
	    status != 304) {
		if (body != NULL)
			evbuffer_add_buffer(c->c_out, body);
		for (i = 0; i < n; i++)
			evbuffer_add(c->c_out, iov[i].iov_base,
			    iov[i].iov_len);
	}
	c->c_state = CONN_SENDING;
	conn_flush(c);
done:
	if (body != NULL)
		(void)evbuffer_drain(body, evbuffer_get_length(body));
	conn_unhold(c);
}

void
httpd_send_reply(struct httpd_req *req, int status, struct evbuffer *body)
{
	conn_reply(req, status, body, NULL, 0);
}

void
httpd_send_reply_iov(struct httpd_req *req, int status,
    const struct iovec *iov, int n)
{
	conn_reply(req, status, NULL, iov, n);
}

void
httpd_send_start(struct httpd_req *req, int status)
{
	struct httpd_conn *c = req->r_conn;

	if (c->c_state != CONN_ACTIVE || c->c_fd == -1)
		return;
	conn_hold(c);
	/* HTTP/1.0 has no chunks: the stream ends with the connection */
	if (req->r_head.hh_minor == 0)
		req->r_close = 1;
	conn_head(c, status, 0, req->r_head.hh_minor >= 1 ? FRAME_CHUNKED :
	    FRAME_CLOSE);
	evbuffer_add(c->c_out, "\r\n", 2);
	c->c_state = CONN_STREAMING;
	conn_flush(c);
	conn_unhold(c);
}

int
httpd_send_chunk(struct httpd_req *req, const void *data, size_t len)
{
	struct httpd_conn	*c = req->r_conn;
	char			 num[24], *s;

	if (c->c_state != CONN_STREAMING || c->c_fd == -1)
		return -1;
	if (len == 0 || req->r_nobody)
		return 0;
	conn_hold(c);
	if (req->r_head.hh_minor >= 1) {
		num[sizeof(num) - 2] = '\r';
		num[sizeof(num) - 1] = '\n';
		s = proto_utoa(num + sizeof(num) - 2, len, 16);
		evbuffer_add(c->c_out, s, (size_t)(num + sizeof(num) - s));
		evbuffer_add(c->c_out, data, len);
		evbuffer_add(c->c_out, "\r\n", 2);
	} else
		evbuffer_add(c->c_out, data, len);
	conn_flush(c);
	conn_unhold(c);
	return 0;
}

void
httpd_send_end(struct httpd_req *req)
{
	struct httpd_conn *c = req->r_conn;

	if (c->c_state == CONN_ACTIVE && c->c_fd != -1) {
		/* ended without a reply: the client must not hang */
		httpd_send_reply(req, 500, NULL);
		return;
	}
	if (c->c_state != CONN_ACTIVE && c->c_state != CONN_STREAMING)
		return;
	conn_hold(c);
	if (c->c_fd == -1)
		conn_finish(c);
	else {
		if (req->r_head.hh_minor >= 1 && !req->r_nobody)
			evbuffer_add(c->c_out, "0\r\n\r\n", 5);
		c->c_state = CONN_SENDING;
		conn_flush(c);
	}
	conn_unhold(c);
}

const char *
httpd_req_query(const struct httpd_req *req)
{
	return req->r_head.hh_query != 0 ? req->r_conn->c_in +
	    req->r_head.hh_query : NULL;
}

void
httpd_req_set_data(struct httpd_req *req, void *data, void (*fn)(void *))
{
	void	*old = req->r_data;
	void	(*oldfn)(void *) = req->r_data_free;

	req->r_data = data;
	req->r_data_free = fn;
	if (old != NULL && oldfn != NULL)
		oldfn(old);
}

void *
httpd_req_data(const struct httpd_req *req)
{
	return req->r_data;
}

int
httpd_req_peer_uid(const struct httpd_req *req, uid_t *uid)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);

	if (req->r_conn->c_fd == -1 || getsockopt(req->r_conn->c_fd,
	    SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 || len != sizeof(cred))
		return -1;
	*uid = cred.uid;
	return 0;
}
