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
 *
 * This file is the server and its connections: accepting, reading,
 * parsing, timing out, going away.  The replies are written in
 * httpd_send.c, the request is read by its owner through httpd_req.c;
 * what the three share is httpd_int.h.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "proto/http_req.h"
#include "shared/log.h"
#include "shared/http_client.h"
#include "worker/http/httpd.h"
#include "worker/http/httpd_int.h"

#define HTTPD_IN_MIN		8192		/* first buffer of a connection */
#define HTTPD_IN_KEEP		(64 * 1024)	/* kept between requests */
#define HTTPD_FRAMING_SLACK	(16 * 1024)	/* chunk lines not yet decoded */
#define HTTPD_ACCEPT_BURST	32
#define HTTPD_LINGER_MS		2000		/* reading past a closing reply */
#define HTTPD_ACCEPT_PAUSE_MS	100		/* out of descriptors: wait */

static void	 httpd_on_accept(evutil_socket_t, short, void *);
static void	 httpd_on_reap(evutil_socket_t, short, void *);
static void	 httpd_on_resume(evutil_socket_t, short, void *);
static void	 httpd_pause(struct httpd *);
static void	 conn_new(struct httpd *, int, const struct sockaddr_storage *);
static int	 conn_over_cap(struct httpd *, struct httpd_conn *);
static void	 conn_free(struct httpd_conn *);
static void	 conn_on_read(evutil_socket_t, short, void *);
static void	 conn_on_write(evutil_socket_t, short, void *);
static void	 conn_on_timeout(evutil_socket_t, short, void *);
static int	 conn_read(struct httpd_conn *);
static void	 conn_process(struct httpd_conn *);
static int	 conn_take(struct httpd_conn *);
static void	 conn_tell(struct httpd_conn *);
static void	 conn_linger(struct httpd_conn *);

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
			httpd_conn_gone(c);
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

uint64_t
httpd_now_us(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t
httpd_now_ms(void)
{
	return httpd_now_us() / 1000;
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
				httpd_conn_timer(c, 1);
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
		httpd_conn_refuse(c, 503, over == 1 ? "Service Unavailable: too "
		    "many connections (http.maxConnections)" : "Service "
		    "Unavailable: too many connections from this address "
		    "(http.maxConnectionsPerClient)");
		return;
	}
	httpd_conn_timer(c, 1);
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
void
httpd_conn_hold(struct httpd_conn *c)
{
	c->c_busy++;
}

void
httpd_conn_unhold(struct httpd_conn *c)
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
void
httpd_conn_timer(struct httpd_conn *c, int on)
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
	httpd_conn_hold(c);
	if (c->c_state == CONN_LINGER)
		conn_linger(c);
	else if (conn_read(c) == 0 && c->c_state == CONN_READING)
		conn_process(c);
	httpd_conn_unhold(c);
}

static void
conn_on_write(evutil_socket_t fd, short ev, void *arg)
{
	struct httpd_conn *c = arg;

	(void)fd;
	(void)ev;
	httpd_conn_hold(c);
	httpd_conn_flush(c);
	httpd_conn_unhold(c);
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
	httpd_conn_hold(c);
	if (c->c_state == CONN_READING && c->c_start != 0)
		httpd_conn_refuse(c, 408, c->c_req.r_headed ? "Request Timeout: the "
		    "request was not in within http.requestTimeout, or "
		    "stalled for http.timeout" : "Request Timeout: the head "
		    "was not in within http.headerTimeout, or stalled for "
		    "http.timeout");
	else
		httpd_conn_gone(c);
	httpd_conn_unhold(c);
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
			httpd_conn_gone(c);
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
			httpd_conn_gone(c);
			return -1;
		}
		if (c->c_incap >= h->h_incap_max) {
			httpd_conn_refuse(c, 413, "Payload Too Large: the request "
			    "is over http.maxBodySize");
			return -1;
		}
		cap = c->c_incap == 0 ? HTTPD_IN_MIN : c->c_incap * 2;
		if (cap > h->h_incap_max)
			cap = h->h_incap_max;
		if ((p = realloc(c->c_in, cap)) == NULL) {
			httpd_conn_refuse(c, 500, "Internal error: out of memory");
			return -1;
		}
		c->c_in = p;
		c->c_incap = cap;
	}
	n = read(c->c_fd, c->c_in + c->c_inlen, c->c_incap - c->c_inlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		httpd_conn_gone(c);
		return -1;
	}
	if (c->c_inlen == 0 && c->c_state == CONN_READING)
		c->c_start = httpd_now_ms();
	c->c_inlen += (size_t)n;
	if (c->c_state == CONN_READING)
		httpd_conn_timer(c, 1);
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
		req->r_arrived = httpd_now_us();
		httpd_conn_timer(c, 0);
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
			httpd_conn_refuse(c, hh->hh_status, hh->hh_why);
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
				httpd_conn_refuse(c, 500, "Internal error: out of "
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
			httpd_conn_flush(c);
		}
	}
	if (hh->hh_chunked) {
		r = http_chunked_decode(ch, c->c_in + req->r_body,
		    c->c_inlen - req->r_body, h->h_lim.hl_max_body, hh);
		if (r == -1) {
			httpd_conn_refuse(c, hh->hh_status, hh->hh_why);
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
		httpd_conn_timer(c, 1);
	return 0;
}

/* the client went away, failed or timed out */
void
httpd_conn_gone(struct httpd_conn *c)
{
	struct httpd_req	*req = &c->c_req;

	if (c->c_fd == -1)
		return;
	httpd_conn_hold(c);
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
		httpd_conn_finish(c);
		break;
	case CONN_ACTIVE:
	case CONN_STREAMING:
		/* the owner still holds the request and ends it */
		if (req->r_close_cb != NULL)
			httpd_conn_tell_later(c);
		break;
	}
	httpd_conn_unhold(c);
}

/*
 * The close callback, from the loop: this may be a write of the owner's
 * (the callback would free what the writer goes on using), or a close
 * found while it iterates its requests.  c_tev is free for it: a gone
 * connection has no timeout.
 */
void
httpd_conn_tell_later(struct httpd_conn *c)
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
	httpd_conn_hold(c);
	req->r_close_cb(req, req->r_close_arg);
	httpd_conn_unhold(c);
}
