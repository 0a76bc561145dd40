/*
 * A lean HTTP/1.1 client on raw non-blocking sockets and libevent
 * events, for plain http:// and Unix-socket targets.  libevent's own
 * evhttp client (2.1.12) cannot connect to a Unix socket, has only a
 * per-connection timeout and reports errors without a reason, so this
 * is a small request writer and response parser instead.
 *
 * One exchange per connection at a time (no pipelining).  Finished
 * connections go to their target's idle list (LIFO) with their read
 * event left armed, so a close by the server is noticed while idle
 * and a reuse costs no epoll_ctl.  The request is written straight
 * from h1_exchange_start(); a failure found there is reported from
 * the loop later, never from inside the caller.  A reused connection
 * that dies before any byte of the answer (the server's idle close
 * racing our request) is retried once on a fresh one, as libcurl does.
 */
#include <sys/queue.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "proto/headers.h"
#include "shared/http_h1.h"

#define H1_BUF_INIT	(16 * 1024)
#define H1_HEAD_MAX	(64 * 1024)
#define H1_BUF_MAX	(H1_HEAD_MAX + 16 * 1024)
#define H1_IDLE_MAX	64	/* idle connections kept per target */
#define H1_IDLE_MS	4000	/* below Node's keepAliveTimeout (5 s) */
#define H1_CONNECT_MS	10000

/* parse results */
#define HP_MORE		0
#define HP_COMPLETE	1
#define HP_ERROR	(-1)
#define HP_STOPPED	(-2)	/* cancelled in a callback */

enum h1_pstate {
	HP_STATUS,
	HP_HEADERS,
	HP_BODY_LEN,
	HP_BODY_EOF,
	HP_CHUNK_SIZE,
	HP_CHUNK_DATA,
	HP_CHUNK_END,
	HP_TRAILER
};

struct h1_target {
	LIST_ENTRY(h1_target)	 ht_entry;
	char			*ht_key;
	TAILQ_HEAD(, h1_conn)	 ht_idle;
	int			 ht_nidle;
};

struct h1_conn {
	TAILQ_ENTRY(h1_conn)	 hn_entry;	/* target's idle list */
	LIST_ENTRY(h1_conn)	 hn_all;
	struct h1_client	*hn_client;
	struct h1_target	*hn_target;
	struct h1_exchange	*hn_x;
	int			 hn_fd;
	struct event		*hn_rev;
	struct event		*hn_wev;
	struct event		*hn_timer;
	int			 hn_connecting;
	int			 hn_wev_on;
	int			 hn_idle;
	int			 hn_reused;
	int			 hn_got;	/* answer bytes seen */
	uint64_t		 hn_since;	/* idle since, or bound at */
	size_t			 hn_sent;
	/* the response parser */
	enum h1_pstate		 hn_ps;
	long			 hn_status;
	int			 hn_interim;
	int			 hn_keep;
	int			 hn_chunked;
	int			 hn_has_len;
	int			 hn_has_te;
	uint64_t		 hn_remain;
	size_t			 hn_headbytes;
	char			*hn_buf;
	size_t			 hn_off;
	size_t			 hn_len;
	size_t			 hn_cap;
};

struct h1_client {
	struct event_base	*hk_base;
	struct event		*hk_settle;
	LIST_HEAD(, h1_target)	 hk_targets;
	LIST_HEAD(, h1_conn)	 hk_conns;
	struct h1_exchange	*hk_failq;
};

static void	h1_conn_read_cb(evutil_socket_t, short, void *);
static void	h1_conn_write_cb(evutil_socket_t, short, void *);
static void	h1_conn_timer_cb(evutil_socket_t, short, void *);
static int	h1_exchange_bind(struct h1_client *, struct h1_exchange *,
		    int);

static uint64_t
h1_now_ms(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
h1_conn_close(struct h1_conn *hn)
{
	if (hn->hn_idle) {
		TAILQ_REMOVE(&hn->hn_target->ht_idle, hn, hn_entry);
		hn->hn_target->ht_nidle--;
	}
	LIST_REMOVE(hn, hn_all);
	if (hn->hn_rev != NULL)
		event_free(hn->hn_rev);
	if (hn->hn_wev != NULL)
		event_free(hn->hn_wev);
	if (hn->hn_timer != NULL)
		event_free(hn->hn_timer);
	if (hn->hn_fd != -1)
		(void)close(hn->hn_fd);
	free(hn->hn_buf);
	free(hn);
}

static struct h1_target *
h1_target_get(struct h1_client *k, const char *key)
{
	struct h1_target	*t;

	LIST_FOREACH(t, &k->hk_targets, ht_entry)
		if (strcmp(t->ht_key, key) == 0)
			return t;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((t->ht_key = strdup(key)) == NULL) {
		free(t);
		return NULL;
	}
	TAILQ_INIT(&t->ht_idle);
	LIST_INSERT_HEAD(&k->hk_targets, t, ht_entry);
	return t;
}

/* A new connection, connected or connecting; NULL with errno set. */
static struct h1_conn *
h1_conn_new(struct h1_client *k, struct h1_target *t,
    const struct h1_exchange *x)
{
	struct h1_conn	*hn;
	int		 one = 1, fam = x->hx_addr.ss_family, saved;

	if ((hn = calloc(1, sizeof(*hn))) == NULL)
		return NULL;
	hn->hn_client = k;
	hn->hn_target = t;
	hn->hn_fd = -1;
	LIST_INSERT_HEAD(&k->hk_conns, hn, hn_all);
	if ((hn->hn_buf = malloc(H1_BUF_INIT)) == NULL)
		goto fail;
	hn->hn_cap = H1_BUF_INIT;
	if ((hn->hn_fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		goto fail;
	/* requests are written whole: no reason to wait for more */
	if (fam != AF_UNIX)
		(void)setsockopt(hn->hn_fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	if (connect(hn->hn_fd, (const struct sockaddr *)&x->hx_addr,
	    x->hx_addrlen) == -1) {
		if (errno != EINPROGRESS)
			goto fail;
		hn->hn_connecting = 1;
	}
	if ((hn->hn_rev = event_new(k->hk_base, hn->hn_fd,
	    EV_READ | EV_PERSIST, h1_conn_read_cb, hn)) == NULL ||
	    (hn->hn_wev = event_new(k->hk_base, hn->hn_fd,
	    EV_WRITE | EV_PERSIST, h1_conn_write_cb, hn)) == NULL ||
	    (hn->hn_timer = evtimer_new(k->hk_base, h1_conn_timer_cb,
	    hn)) == NULL || event_add(hn->hn_rev, NULL) == -1) {
		errno = ENOMEM;
		goto fail;
	}
	if (hn->hn_connecting) {
		if (event_add(hn->hn_wev, NULL) == -1) {
			errno = ENOMEM;
			goto fail;
		}
		hn->hn_wev_on = 1;
	}
	return hn;
 fail:
	saved = errno;
	h1_conn_close(hn);
	errno = saved;
	return NULL;
}

static void
h1_timer_arm(struct h1_conn *hn, uint64_t ms)
{
	struct timeval	tv;

	if (ms == 0) {
		(void)evtimer_del(hn->hn_timer);
		return;
	}
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	(void)evtimer_add(hn->hn_timer, &tv);
}

static void
h1_wev_set(struct h1_conn *hn, int on)
{
	if (on == hn->hn_wev_on)
		return;
	if (on)
		(void)event_add(hn->hn_wev, NULL);
	else
		(void)event_del(hn->hn_wev);
	hn->hn_wev_on = on;
}

/* Writes what the socket takes.  0 (all out or would block) or -1. */
static int
h1_conn_send(struct h1_conn *hn)
{
	struct h1_exchange	*x = hn->hn_x;
	struct iovec		 iov[2];
	struct msghdr		 mh;
	size_t			 total, skip;
	ssize_t			 n;
	int			 i, niov;

	total = x->hx_out[0].iov_len + x->hx_out[1].iov_len;
	while (hn->hn_sent < total) {
		skip = hn->hn_sent;
		niov = 0;
		for (i = 0; i < 2; i++) {
			if (skip >= x->hx_out[i].iov_len) {
				skip -= x->hx_out[i].iov_len;
				continue;
			}
			iov[niov].iov_base = (char *)x->hx_out[i].iov_base +
			    skip;
			iov[niov].iov_len = x->hx_out[i].iov_len - skip;
			skip = 0;
			niov++;
		}
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)niov;
		/* MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE */
		if ((n = sendmsg(hn->hn_fd, &mh, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				h1_wev_set(hn, 1);
				return 0;
			}
			return -1;
		}
		hn->hn_sent += (size_t)n;
	}
	h1_wev_set(hn, 0);
	return 0;
}

/* the exchange leaves its connection, which is closed */
static void
h1_conn_drop(struct h1_conn *hn)
{
	if (hn->hn_x != NULL)
		hn->hn_x->hx_conn = NULL;
	hn->hn_x = NULL;
	h1_conn_close(hn);
}

/* from the loop: the exchange failed */
static void
h1_fail_now(struct h1_conn *hn, const char *msg)
{
	struct h1_exchange	*x = hn->hn_x;

	if (msg != x->hx_err)
		(void)snprintf(x->hx_err, sizeof(x->hx_err), "%s", msg);
	h1_conn_drop(hn);
	x->hx_cbs->hx_done(x->hx_arg, -1, x->hx_err);
}

/* from the caller's stack: report the failure from the loop */
static void
h1_fail_later(struct h1_client *k, struct h1_exchange *x)
{
	struct h1_exchange	**pp;

	if (x->hx_conn != NULL)
		h1_conn_drop(x->hx_conn);
	x->hx_queued = 1;
	x->hx_next = NULL;
	for (pp = &k->hk_failq; *pp != NULL; pp = &(*pp)->hx_next)
		;
	*pp = x;
	event_active(k->hk_settle, EV_TIMEOUT, 0);
}

static void
h1_settle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct h1_client	*k = arg;
	struct h1_exchange	*x;

	(void)fd;
	(void)what;
	/* hx_done may cancel other queued exchanges: take one at a time */
	while ((x = k->hk_failq) != NULL) {
		k->hk_failq = x->hx_next;
		x->hx_queued = 0;
		x->hx_cbs->hx_done(x->hx_arg, -1, x->hx_err);
	}
}

/*
 * The connection died under the exchange.  A reused one that had not
 * answered anything was most likely closed idle by the server just as
 * we wrote: try once more on a fresh connection.
 */
static void
h1_conn_lost(struct h1_conn *hn, const char *msg)
{
	struct h1_client	*k = hn->hn_client;
	struct h1_exchange	*x = hn->hn_x;

	if (hn->hn_reused && !hn->hn_got && !x->hx_retried) {
		x->hx_retried = 1;
		h1_conn_drop(hn);
		if (h1_exchange_bind(k, x, 1) == -1) {
			(void)snprintf(x->hx_err, sizeof(x->hx_err),
			    "cannot reconnect to %s", x->hx_target);
			h1_fail_later(k, x);
		}
		return;
	}
	h1_fail_now(hn, msg);
}

static int
h1_token_has(const char *v, size_t len, const char *tok)
{
	size_t	tl = strlen(tok), i = 0, s;

	while (i < len) {
		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < len && v[i] != ',' && v[i] != ';')
			i++;
		while (i > s && (v[i - 1] == ' ' || v[i - 1] == '\t'))
			i--;
		if (i - s == tl && strncasecmp(v + s, tok, tl) == 0)
			return 1;
		while (i < len && v[i] != ',')
			i++;
	}
	return 0;
}

/* the framing headers; -1 on a Content-Length we cannot trust */
static int
h1_frame_header(struct h1_conn *hn, const char *line, size_t len)
{
	const char	*colon, *v, *e;
	size_t		 nlen, vlen, i;
	uint64_t	 n = 0;

	if ((colon = memchr(line, ':', len)) == NULL)
		return 0;
	nlen = (size_t)(colon - line);
	v = colon + 1;
	e = line + len;
	proto_ows_trim(&v, &e);
	vlen = (size_t)(e - v);
	if (nlen == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
		if (vlen == 0 || vlen > 18)
			return -1;
		for (i = 0; i < vlen; i++) {
			if (v[i] < '0' || v[i] > '9')
				return -1;
			n = n * 10 + (uint64_t)(v[i] - '0');
		}
		if (hn->hn_has_len && n != hn->hn_remain)
			return -1;
		hn->hn_has_len = 1;
		hn->hn_remain = n;
	} else if (nlen == 17 &&
	    strncasecmp(line, "Transfer-Encoding", 17) == 0) {
		hn->hn_has_te = 1;
		/* anything but chunked: the body runs to the close */
		if (h1_token_has(v, vlen, "chunked"))
			hn->hn_chunked = 1;
		else
			hn->hn_keep = 0;
	} else if (nlen == 10 && strncasecmp(line, "Connection", 10) == 0) {
		if (h1_token_has(v, vlen, "close"))
			hn->hn_keep = 0;
	}
	return 0;
}

static int
h1_status_line(struct h1_conn *hn, const char *p, size_t len)
{
	if (len < 12 || memcmp(p, "HTTP/1.", 7) != 0 ||
	    (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
	    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' ||
	    p[11] < '0' || p[11] > '9' || (len > 12 && p[12] != ' '))
		return -1;
	hn->hn_status = (p[9] - '0') * 100 + (p[10] - '0') * 10 +
	    (p[11] - '0');
	hn->hn_keep = p[7] == '1';
	hn->hn_chunked = 0;
	hn->hn_has_len = 0;
	hn->hn_has_te = 0;
	hn->hn_remain = 0;
	hn->hn_interim = hn->hn_status < 200;
	return hn->hn_status == 101 ? -1 : 0;
}

/* a callback's answer as a parse result */
static int
h1_cb_result(struct h1_conn *hn, int r)
{
	if (r == H1_CANCELLED)
		return HP_STOPPED;
	if (r != H1_GO) {
		(void)snprintf(hn->hn_x->hx_err, sizeof(hn->hn_x->hx_err),
		    "aborted");
		return HP_ERROR;
	}
	return HP_MORE;
}

static int
h1_deliver(struct h1_conn *hn, const char *p, size_t n)
{
	struct h1_exchange	*x = hn->hn_x;

	hn->hn_off += n;
	if (n == 0 || x->hx_cbs->hx_data == NULL)
		return HP_MORE;
	return h1_cb_result(hn, x->hx_cbs->hx_data(x->hx_arg, p, n));
}

/* the head is complete: how the body is framed */
static int
h1_head_end(struct h1_conn *hn)
{
	struct h1_exchange	*x = hn->hn_x;
	int			 r, nobody;

	if (hn->hn_interim) {
		hn->hn_ps = HP_STATUS;
		return HP_MORE;
	}
	/* which one frames the body is the smuggler's question: neither */
	if (hn->hn_has_len && hn->hn_has_te) {
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "both Content-Length and Transfer-Encoding from %s",
		    x->hx_target);
		return HP_ERROR;
	}
	nobody = x->hx_head_only || hn->hn_status == 204 ||
	    hn->hn_status == 304;
	if (nobody)
		;
	else if (hn->hn_chunked)
		hn->hn_ps = HP_CHUNK_SIZE;
	else if (hn->hn_has_len)
		hn->hn_ps = HP_BODY_LEN;
	else {
		hn->hn_ps = HP_BODY_EOF;
		hn->hn_keep = 0;
	}
	if (x->hx_cbs->hx_head != NULL &&
	    (r = h1_cb_result(hn, x->hx_cbs->hx_head(x->hx_arg,
	    hn->hn_status))) != HP_MORE)
		return r;
	if (nobody || (hn->hn_ps == HP_BODY_LEN && hn->hn_remain == 0))
		return HP_COMPLETE;
	return HP_MORE;
}

static int
h1_chunk_size(struct h1_conn *hn, const char *p, size_t len)
{
	uint64_t	n = 0;
	size_t		i;
	int		d;

	for (i = 0; i < len; i++) {
		if ((d = proto_hex_digit(p[i])) == -1)
			break;
		if (n > (UINT64_MAX >> 4))
			return -1;
		n = (n << 4) | (uint64_t)d;
	}
	if (i == 0 || (i < len && p[i] != ';' && p[i] != ' ' &&
	    p[i] != '\t'))
		return -1;
	hn->hn_remain = n;
	hn->hn_ps = n == 0 ? HP_TRAILER : HP_CHUNK_DATA;
	return 0;
}

/* what the buffer holds, as far as it goes */
static int
h1_parse(struct h1_conn *hn)
{
	struct h1_exchange	*x = hn->hn_x;
	const char		*p, *nl, *why;
	size_t			 avail, llen, n;
	int			 r;

	for (;;) {
		p = hn->hn_buf + hn->hn_off;
		avail = hn->hn_len - hn->hn_off;
		switch (hn->hn_ps) {
		case HP_BODY_LEN:
		case HP_CHUNK_DATA:
			if (avail == 0)
				return HP_MORE;
			n = avail < hn->hn_remain ? avail :
			    (size_t)hn->hn_remain;
			hn->hn_remain -= n;
			if ((r = h1_deliver(hn, p, n)) != HP_MORE)
				return r;
			if (hn->hn_remain > 0)
				continue;
			if (hn->hn_ps == HP_BODY_LEN)
				return HP_COMPLETE;
			hn->hn_ps = HP_CHUNK_END;
			continue;
		case HP_BODY_EOF:
			if (avail == 0)
				return HP_MORE;
			if ((r = h1_deliver(hn, p, avail)) != HP_MORE)
				return r;
			continue;
		default:
			break;
		}

		/* the line-based states */
		if ((nl = memchr(p, '\n', avail)) == NULL) {
			if (avail > H1_HEAD_MAX)
				goto toolarge;
			return HP_MORE;
		}
		llen = (size_t)(nl - p);
		hn->hn_off += llen + 1;
		if (llen > 0 && p[llen - 1] == '\r')
			llen--;
		switch (hn->hn_ps) {
		case HP_STATUS:
			hn->hn_headbytes += llen;
			if (hn->hn_headbytes > H1_HEAD_MAX)
				goto toolarge;
			if (h1_status_line(hn, p, llen) == -1) {
				(void)snprintf(x->hx_err, sizeof(x->hx_err),
				    "invalid response from %s", x->hx_target);
				return HP_ERROR;
			}
			if (!hn->hn_interim && x->hx_cbs->hx_line != NULL &&
			    x->hx_cbs->hx_line(x->hx_arg, NULL, 0) != 0)
				goto toolarge;
			hn->hn_ps = HP_HEADERS;
			break;
		case HP_HEADERS:
			hn->hn_headbytes += llen;
			if (hn->hn_headbytes > H1_HEAD_MAX)
				goto toolarge;
			if (llen == 0) {
				if ((r = h1_head_end(hn)) != HP_MORE)
					return r;
				break;
			}
			if (hn->hn_interim)
				break;
			if ((why = proto_field_line_problem(p, llen)) !=
			    NULL) {
				(void)snprintf(x->hx_err, sizeof(x->hx_err),
				    "invalid response head from %s: %s",
				    x->hx_target, why);
				return HP_ERROR;
			}
			if (h1_frame_header(hn, p, llen) == -1) {
				(void)snprintf(x->hx_err, sizeof(x->hx_err),
				    "invalid Content-Length from %s",
				    x->hx_target);
				return HP_ERROR;
			}
			if (x->hx_cbs->hx_line != NULL &&
			    x->hx_cbs->hx_line(x->hx_arg, p, llen) != 0)
				goto toolarge;
			break;
		case HP_CHUNK_SIZE:
			if (h1_chunk_size(hn, p, llen) == -1) {
				(void)snprintf(x->hx_err, sizeof(x->hx_err),
				    "invalid chunk from %s", x->hx_target);
				return HP_ERROR;
			}
			break;
		case HP_CHUNK_END:
			if (llen != 0) {
				(void)snprintf(x->hx_err, sizeof(x->hx_err),
				    "invalid chunk from %s", x->hx_target);
				return HP_ERROR;
			}
			hn->hn_ps = HP_CHUNK_SIZE;
			break;
		case HP_TRAILER:
			/* trailers are not part of the head */
			if (llen == 0)
				return HP_COMPLETE;
			break;
		default:
			break;
		}
	}
 toolarge:
	(void)snprintf(x->hx_err, sizeof(x->hx_err),
	    "response head from %s too large", x->hx_target);
	return HP_ERROR;
}

/* the answer is complete: keep the connection if we may, report */
static void
h1_conn_complete(struct h1_conn *hn)
{
	struct h1_exchange	*x = hn->hn_x;
	struct h1_target	*t = hn->hn_target;

	x->hx_conn = NULL;
	hn->hn_x = NULL;
	/* bytes past the answer: the server is confused, do not reuse */
	if (hn->hn_keep && hn->hn_off == hn->hn_len &&
	    t->ht_nidle < H1_IDLE_MAX) {
		hn->hn_off = hn->hn_len = 0;
		hn->hn_idle = 1;
		hn->hn_reused = 1;
		hn->hn_since = h1_now_ms();
		(void)evtimer_del(hn->hn_timer);
		TAILQ_INSERT_HEAD(&t->ht_idle, hn, hn_entry);
		t->ht_nidle++;
	} else
		h1_conn_close(hn);
	x->hx_cbs->hx_done(x->hx_arg, 0, NULL);
}

static void
h1_parse_result(struct h1_conn *hn, int r)
{
	struct h1_exchange	*x = hn->hn_x;

	switch (r) {
	case HP_MORE:
		if (hn->hn_off == hn->hn_len)
			hn->hn_off = hn->hn_len = 0;
		break;
	case HP_COMPLETE:
		h1_conn_complete(hn);
		break;
	case HP_ERROR:
		h1_fail_now(hn, x->hx_err);
		break;
	case HP_STOPPED:
		h1_conn_drop(hn);
		x->hx_cbs->hx_dropped(x->hx_arg);
		break;
	}
}

static void
h1_conn_connected(struct h1_conn *hn)
{
	struct h1_exchange	*x = hn->hn_x;
	socklen_t		 slen = sizeof(int);
	uint64_t		 spent;
	int			 err = 0;

	if (getsockopt(hn->hn_fd, SOL_SOCKET, SO_ERROR, &err, &slen) == -1)
		err = errno;
	if (err != 0) {
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "connect to %s failed: %s", x->hx_target, strerror(err));
		h1_fail_now(hn, x->hx_err);
		return;
	}
	hn->hn_connecting = 0;
	if (x->hx_timeout_ms != 0) {
		spent = h1_now_ms() - hn->hn_since;
		h1_timer_arm(hn, spent < x->hx_timeout_ms ?
		    x->hx_timeout_ms - spent : 1);
	} else
		h1_timer_arm(hn, 0);
	if (h1_conn_send(hn) == -1) {
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "send to %s failed: %s", x->hx_target, strerror(errno));
		h1_fail_now(hn, x->hx_err);
	}
}

static void
h1_conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct h1_conn		*hn = arg;
	struct h1_exchange	*x = hn->hn_x;
	char			*nb;
	ssize_t			 n;
	size_t			 ncap;

	(void)what;
	if (x == NULL) {
		/* idle: the server closed it, or sent what nobody asked */
		h1_conn_close(hn);
		return;
	}
	if (hn->hn_connecting) {
		h1_conn_connected(hn);
		return;
	}
	if (hn->hn_len == hn->hn_cap) {
		if (hn->hn_off > 0) {
			memmove(hn->hn_buf, hn->hn_buf + hn->hn_off,
			    hn->hn_len - hn->hn_off);
			hn->hn_len -= hn->hn_off;
			hn->hn_off = 0;
		} else {
			ncap = hn->hn_cap * 2;
			if (ncap > H1_BUF_MAX ||
			    (nb = realloc(hn->hn_buf, ncap)) == NULL) {
				(void)snprintf(x->hx_err, sizeof(x->hx_err),
				    "response head from %s too large",
				    x->hx_target);
				h1_fail_now(hn, x->hx_err);
				return;
			}
			hn->hn_buf = nb;
			hn->hn_cap = ncap;
		}
	}
	n = read(fd, hn->hn_buf + hn->hn_len, hn->hn_cap - hn->hn_len);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "receive from %s failed: %s", x->hx_target,
		    strerror(errno));
		h1_conn_lost(hn, x->hx_err);
		return;
	}
	if (n == 0) {
		if (hn->hn_ps == HP_BODY_EOF) {
			h1_conn_complete(hn);
			return;
		}
		(void)snprintf(x->hx_err, sizeof(x->hx_err), "%s closed the "
		    "connection %s", x->hx_target, hn->hn_got ?
		    "mid-response" : "without a response");
		h1_conn_lost(hn, x->hx_err);
		return;
	}
	hn->hn_got = 1;
	hn->hn_len += (size_t)n;
	h1_parse_result(hn, h1_parse(hn));
}

static void
h1_conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct h1_conn		*hn = arg;
	struct h1_exchange	*x = hn->hn_x;

	(void)fd;
	(void)what;
	if (x == NULL) {
		h1_wev_set(hn, 0);
		return;
	}
	if (hn->hn_connecting) {
		h1_conn_connected(hn);
		return;
	}
	if (h1_conn_send(hn) == -1) {
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "send to %s failed: %s", x->hx_target, strerror(errno));
		h1_conn_lost(hn, x->hx_err);
	}
}

static void
h1_conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct h1_conn		*hn = arg;
	struct h1_exchange	*x = hn->hn_x;
	uint64_t		 ms;

	(void)fd;
	(void)what;
	if (x == NULL)
		return;
	if (hn->hn_connecting) {
		ms = H1_CONNECT_MS;
		if (x->hx_timeout_ms != 0 && x->hx_timeout_ms < ms)
			ms = x->hx_timeout_ms;
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "connect to %s timed out after %llu ms", x->hx_target,
		    (unsigned long long)ms);
	} else
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "timed out after %llu ms",
		    (unsigned long long)x->hx_timeout_ms);
	h1_fail_now(hn, x->hx_err);
}

/*
 * Gives the exchange a connection (an idle one unless fresh) and
 * writes the request.  A failure is queued for the loop; -1 only when
 * not even that was possible.
 */
static int
h1_exchange_bind(struct h1_client *k, struct h1_exchange *x, int fresh)
{
	struct h1_target	*t;
	struct h1_conn		*hn = NULL;
	uint64_t		 now = h1_now_ms(), ms;

	if ((t = h1_target_get(k, x->hx_target)) == NULL)
		return -1;
	while (!fresh && (hn = TAILQ_FIRST(&t->ht_idle)) != NULL) {
		TAILQ_REMOVE(&t->ht_idle, hn, hn_entry);
		t->ht_nidle--;
		hn->hn_idle = 0;
		if (now - hn->hn_since <= H1_IDLE_MS)
			break;
		h1_conn_close(hn);
	}
	if (hn == NULL && (hn = h1_conn_new(k, t, x)) == NULL) {
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "connect to %s failed: %s", x->hx_target,
		    strerror(errno));
		h1_fail_later(k, x);
		return 0;
	}
	hn->hn_x = x;
	x->hx_conn = hn;
	hn->hn_since = now;
	hn->hn_sent = 0;
	hn->hn_got = 0;
	hn->hn_ps = HP_STATUS;
	hn->hn_headbytes = 0;
	hn->hn_off = hn->hn_len = 0;
	ms = x->hx_timeout_ms;
	if (hn->hn_connecting && (ms == 0 || ms > H1_CONNECT_MS))
		ms = H1_CONNECT_MS;
	h1_timer_arm(hn, ms);
	if (hn->hn_connecting)
		return 0;
	if (h1_conn_send(hn) == -1) {
		(void)snprintf(x->hx_err, sizeof(x->hx_err),
		    "send to %s failed: %s", x->hx_target, strerror(errno));
		if (hn->hn_reused && !x->hx_retried) {
			x->hx_retried = 1;
			h1_conn_drop(hn);
			return h1_exchange_bind(k, x, 1);
		}
		h1_fail_later(k, x);
	}
	return 0;
}

int
h1_exchange_start(struct h1_client *k, struct h1_exchange *x)
{
	x->hx_conn = NULL;
	x->hx_queued = 0;
	x->hx_retried = 0;
	x->hx_err[0] = '\0';
	return h1_exchange_bind(k, x, 0);
}

void
h1_exchange_cancel(struct h1_client *k, struct h1_exchange *x)
{
	struct h1_exchange	**pp;

	if (x->hx_queued) {
		for (pp = &k->hk_failq; *pp != NULL; pp = &(*pp)->hx_next)
			if (*pp == x) {
				*pp = x->hx_next;
				break;
			}
		x->hx_queued = 0;
	}
	/* mid-answer: the connection cannot be reused */
	if (x->hx_conn != NULL)
		h1_conn_drop(x->hx_conn);
}

struct h1_client *
h1_client_new(struct event_base *base)
{
	struct h1_client	*k;

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	k->hk_base = base;
	LIST_INIT(&k->hk_targets);
	LIST_INIT(&k->hk_conns);
	if ((k->hk_settle = event_new(base, -1, 0, h1_settle_cb, k)) ==
	    NULL) {
		free(k);
		return NULL;
	}
	return k;
}

void
h1_client_free(struct h1_client *k)
{
	struct h1_conn		*hn;
	struct h1_target	*t;

	if (k == NULL)
		return;
	while ((hn = LIST_FIRST(&k->hk_conns)) != NULL) {
		if (hn->hn_x != NULL)
			hn->hn_x->hx_conn = NULL;
		h1_conn_close(hn);
	}
	while ((t = LIST_FIRST(&k->hk_targets)) != NULL) {
		LIST_REMOVE(t, ht_entry);
		free(t->ht_key);
		free(t);
	}
	event_free(k->hk_settle);
	free(k);
}
