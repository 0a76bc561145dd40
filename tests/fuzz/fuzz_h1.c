/*
 * libFuzzer: shared/http_h1.c's response parser, through the real
 * client on a libevent loop against an in-process Unix-socket server.
 *
 * Input: byte 0 picks where the response is cut into two writes (the
 * client reads and parses between them); byte 1 is a set of F_ flags;
 * the rest is the response, repeated up to a length if F_PAD says so.
 *
 * Every exchange must end in exactly one hx_done (0 or -1) or, once
 * cancelled in a callback, one hx_dropped, with no callback after; the
 * body handed to hx_data must be, piece by piece and in order, bytes
 * the server wrote, and as long as a Content-Length said.  The
 * exchange is freed in hx_done as http_client_h1.c does, so ASan catches
 * any later use.  The server side always closes, so the client must
 * never need its timeout.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <linux/sockios.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/http_h1.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define F_HEAD		0x01	/* a HEAD request */
#define F_REUSE		0x02	/* after a success, a second exchange */
#define F_CANCEL	0x04	/* h1_exchange_cancel() between the writes */
#define F_VERDICT	0x08	/* a callback says stop ... */
#define F_CANCELLED	0x10	/* ... with H1_CANCELLED, not H1_ABORT */
#define F_PAD(f)	(((f) >> 5) & 3)	/* repeated up to pad[] bytes */
#define F_RETRY		0x80	/* the reused connection dies first */

/* where F_VERDICT strikes: byte 0 % 3 */
#define ON_LINE		0	/* hx_line's -1, an abort */
#define ON_HEAD		1
#define ON_DATA		2

#define TIMEOUT_MS	1000	/* never reached unless the client hangs */

static const char	 req[] = "GET / HTTP/1.1\r\nHost: fuzz\r\n\r\n";
/* past the first buffer, the head limit, the buffer limit */
static const size_t	 pad[] = { 0, 17 * 1024, 65 * 1024, 81 * 1024 };

static struct event_base	*base;
static int			 lfd = -1;
static struct sockaddr_un	 laddr;
static socklen_t		 laddrlen;

/* what one exchange told us */
struct rec {
	struct h1_exchange	*r_x;		/* freed in hx_done */
	const char		*r_stream;	/* what the server wrote */
	size_t			 r_len;
	size_t			 r_cursor;	/* hx_data's end in r_stream */
	int			 r_verdict;	/* H1_ABORT, H1_CANCELLED, 0 */
	int			 r_on;		/* at which callback: ON_ */
	int			 r_fired;	/* the verdict was given */
	int			 r_head_only;
	int			 r_ended;	/* hx_done or hx_dropped seen */
	int			 r_cancelled;	/* by us, from outside */
	int			 r_done;
	int			 r_dropped;
	int			 r_result;
	int			 r_heads;
	long			 r_status;
	size_t			 r_data;
	/* Content-Length as the head's lines gave it, to check the body */
	int			 r_nlen;
	int			 r_te;
	uint64_t		 r_clen;
};

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_h1: %s\n", what);
		abort();
	}
}

static void
rec_alive(const struct rec *r)
{
	check(!r->r_cancelled, "callback after h1_exchange_cancel");
	check(!r->r_ended, "callback after hx_done or hx_dropped");
}

/* the framing headers seen by the caller, as the caller would see them */
static int
cb_line(void *arg, const char *line, size_t len)
{
	struct rec	*r = arg;
	const char	*v, *e;
	uint64_t	 n = 0;

	rec_alive(r);
	check(r->r_heads == 0, "hx_line after hx_head");
	if (line == NULL) {
		r->r_nlen = r->r_te = 0;
		return 0;
	}
	if (r->r_verdict != 0 && r->r_on == ON_LINE) {
		r->r_fired = 1;
		r->r_verdict = H1_ABORT;
		return -1;
	}
	check(memchr(line, '\n', len) == NULL, "hx_line with a newline");
	if (len >= 18 && strncasecmp(line, "Transfer-Encoding:", 18) == 0)
		r->r_te = 1;
	if (len < 15 || strncasecmp(line, "Content-Length:", 15) != 0)
		return 0;
	v = line + 15;
	e = line + len;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (; v < e && *v >= '0' && *v <= '9'; v++)
		n = n * 10 + (uint64_t)(*v - '0');
	r->r_nlen++;
	r->r_clen = n;
	return 0;
}

static int
cb_head(void *arg, long status)
{
	struct rec	*r = arg;

	rec_alive(r);
	check(r->r_heads++ == 0, "hx_head twice");
	check(status >= 200 && status <= 599 && status != 101,
	    "hx_head with an interim or bad status");
	r->r_status = status;
	if (r->r_verdict != 0 && r->r_on == ON_HEAD) {
		r->r_fired = 1;
		return r->r_verdict;
	}
	return H1_GO;
}

static int
cb_data(void *arg, const char *buf, size_t len)
{
	struct rec	*r = arg;
	const char	*at;

	rec_alive(r);
	check(r->r_heads == 1, "hx_data before hx_head");
	check(len > 0, "hx_data with nothing");
	check(!r->r_head_only && r->r_status != 204 && r->r_status != 304,
	    "hx_data for a response without a body");
	/* the earliest match keeps the most room for the pieces after */
	at = memmem(r->r_stream + r->r_cursor, r->r_len - r->r_cursor, buf,
	    len);
	check(at != NULL, "hx_data delivered bytes the server did not send");
	r->r_cursor = (size_t)(at - r->r_stream) + len;
	r->r_data += len;
	if (r->r_verdict != 0 && r->r_on == ON_DATA) {
		r->r_fired = 1;
		return r->r_verdict;
	}
	return H1_GO;
}

static void
cb_done(void *arg, int result, const char *errmsg)
{
	struct rec	*r = arg;

	rec_alive(r);
	check(result == 0 || result == -1, "hx_done result not 0 or -1");
	check(result == 0 || (errmsg != NULL && *errmsg != '\0'),
	    "hx_done(-1) without a message");
	check(result == -1 || r->r_heads == 1, "hx_done(0) without a head");
	check(result == 0 || strncmp(errmsg, "timed out", 9) != 0,
	    "the client waited on a closed connection");
	check(!r->r_fired || r->r_verdict == H1_ABORT,
	    "hx_done after H1_CANCELLED");
	check(!r->r_fired || result == -1, "hx_done(0) after H1_ABORT");
	r->r_ended = r->r_done = 1;
	r->r_result = result;
	free(r->r_x);
	r->r_x = NULL;
}

static void
cb_dropped(void *arg)
{
	struct rec	*r = arg;

	rec_alive(r);
	check(r->r_fired && r->r_verdict == H1_CANCELLED,
	    "hx_dropped without a cancel");
	r->r_ended = r->r_dropped = 1;
	free(r->r_x);
	r->r_x = NULL;
}

static const struct h1_cbs cbs = {
	cb_line, cb_head, cb_data, cb_done, cb_dropped
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if ((base = event_base_new()) == NULL)
		abort();
	/* abstract: nothing to unlink, and one per process */
	memset(&laddr, 0, sizeof(laddr));
	laddr.sun_family = AF_UNIX;
	laddrlen = offsetof(struct sockaddr_un, sun_path) + 1 +
	    (socklen_t)snprintf(laddr.sun_path + 1, sizeof(laddr.sun_path) - 1,
	    "vmcpd-fuzz-h1-%ld", (long)getpid());
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&laddr, laddrlen) == -1 ||
	    listen(lfd, 64) == -1) {
		perror("fuzz_h1: listen");
		abort();
	}
	return 0;
}

/* the request: the client writes it whole before we get here */
static void
serve_drain(int fd)
{
	char	buf[512];

	/* unread, it would turn our close into ECONNRESET */
	while (fd != -1 && read(fd, buf, sizeof(buf)) > 0)
		;
}

/* a connection the client made, its request read; -1: none */
static int
serve_accept(void)
{
	int	fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1)
		return -1;
	serve_drain(fd);
	return fd;
}

/* let the client read all it will of what we wrote */
static void
pump(int fd)
{
	int	i, q = 0;

	for (i = 0; i < 256; i++) {
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
		if (fd == -1 || ioctl(fd, SIOCOUTQ, &q) == -1 || q == 0)
			break;
	}
}

/* as much as the client takes: it may close while we write */
static void
serve_write(int fd, const char *p, size_t n)
{
	ssize_t	w;
	int	stuck = 0;

	while (n > 0 && fd != -1) {
		if ((w = send(fd, p, n, MSG_NOSIGNAL)) == -1) {
			if (errno != EAGAIN || ++stuck > 256)
				return;
			pump(fd);
			continue;
		}
		p += w;
		n -= (size_t)w;
	}
	pump(fd);
}

/* new connections (a retry): the first gets the answer, if any */
static void
serve_retry(const char *p, size_t n, int *fdp)
{
	int	fd;

	while ((fd = serve_accept()) != -1) {
		if (p == NULL || *fdp != -1) {
			(void)close(fd);
			continue;
		}
		*fdp = fd;
		serve_write(fd, p, n);
		(void)shutdown(fd, SHUT_WR);
	}
}

/* until the exchange ends; the server side is shut by now */
static void
run_out(struct rec *r, const char *p, size_t n, int *fdp)
{
	while (!r->r_ended) {
		serve_retry(p, n, fdp);
		check(event_base_loop(base, EVLOOP_ONCE) == 0,
		    "exchange lost: no event left and no hx_done");
	}
}

static void
rec_start(struct h1_client *k, struct rec *r, int head_only)
{
	struct h1_exchange	*x;

	if ((x = calloc(1, sizeof(*x) + sizeof(req) + 16)) == NULL)
		abort();
	/* in the exchange's allocation so a use after hx_done shows */
	memcpy(x + 1, req, sizeof(req));
	memcpy((char *)(x + 1) + sizeof(req), "fuzz", 5);
	memcpy(&x->hx_addr, &laddr, laddrlen);
	x->hx_addrlen = laddrlen;
	x->hx_target = (char *)(x + 1) + sizeof(req);
	x->hx_out[0].iov_base = x + 1;
	x->hx_out[0].iov_len = sizeof(req) - 1;
	x->hx_head_only = head_only;
	x->hx_timeout_ms = TIMEOUT_MS;
	x->hx_cbs = &cbs;
	x->hx_arg = r;
	r->r_x = x;
	r->r_head_only = head_only;
	/* only out of memory */
	check(h1_exchange_start(k, x) == 0, "h1_exchange_start failed");
}

static void
rec_end(const struct rec *r)
{
	check(r->r_ended, "no hx_done");
	check(r->r_done + r->r_dropped == (r->r_cancelled ? 0 : 1),
	    "not one hx_done or hx_dropped");
	check(r->r_data <= r->r_len, "more body than bytes sent");
	/* a complete Content-Length body is exactly that long */
	if (r->r_done && r->r_result == 0 && r->r_nlen > 0 && !r->r_te &&
	    !r->r_head_only && r->r_status != 204 && r->r_status != 304)
		check(r->r_data == r->r_clen, "body not Content-Length long");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct h1_client	*k;
	struct rec		 r1, r2;
	char			*stream;
	const char		*body;
	size_t			 blen, slen, split, i, n;
	int			 s1, s2, s3 = -1, flags;

	if (size < 2)
		return 0;
	flags = data[1];
	body = (const char *)data + 2;
	blen = size - 2;
	split = blen * data[0] / 255;
	for (n = 1; blen > 0 && n * blen < pad[F_PAD(flags)]; n++)
		;
	slen = n * blen;
	if ((stream = malloc(slen + 1)) == NULL)
		abort();
	for (i = 0; i < n; i++)
		memcpy(stream + i * blen, body, blen);
	if ((k = h1_client_new(base)) == NULL)
		abort();

	memset(&r1, 0, sizeof(r1));
	r1.r_stream = stream;
	r1.r_len = slen;
	if (flags & F_VERDICT) {
		r1.r_verdict = flags & F_CANCELLED ? H1_CANCELLED : H1_ABORT;
		r1.r_on = data[0] % 3;
	}
	rec_start(k, &r1, flags & F_HEAD);
	s1 = serve_accept();
	serve_write(s1, stream, split);
	if ((flags & F_CANCEL) && !r1.r_ended) {
		h1_exchange_cancel(k, r1.r_x);
		free(r1.r_x);
		r1.r_x = NULL;
		r1.r_cancelled = r1.r_ended = 1;
	}
	serve_write(s1, stream + split, slen - split);
	if (!r1.r_ended) {
		if (s1 != -1)
			(void)shutdown(s1, SHUT_WR);
		run_out(&r1, NULL, 0, NULL);
	}
	rec_end(&r1);

	/* the same answer again, on the kept connection if there is one */
	if ((flags & F_REUSE) && r1.r_done && r1.r_result == 0) {
		memset(&r2, 0, sizeof(r2));
		r2.r_stream = stream;
		r2.r_len = slen;
		/* closed unnoticed: the request's send fails */
		if ((flags & F_RETRY) && (data[0] & 2) && s1 != -1) {
			(void)close(s1);
			s1 = -1;
		}
		rec_start(k, &r2, flags & F_HEAD);
		if ((s2 = serve_accept()) == -1) {
			/* no new connection: the kept one was reused */
			s2 = s1;
			s1 = -1;
			serve_drain(s2);
			/* closed as the request came: nothing read, retried */
			if ((flags & F_RETRY) && s2 != -1) {
				(void)close(s2);
				s2 = -1;
			}
		}
		serve_write(s2, stream, slen);
		if (!r2.r_ended) {
			if (s2 != -1)
				(void)shutdown(s2, SHUT_WR);
			run_out(&r2, stream, slen, &s3);
		}
		rec_end(&r2);
		if (s2 != -1)
			(void)close(s2);
		if (s3 != -1)
			(void)close(s3);
	}

	h1_client_free(k);
	if (s1 != -1)
		(void)close(s1);
	serve_retry(NULL, 0, NULL);
	/* the client's closes, before the next input's first read */
	(void)event_base_loop(base, EVLOOP_NONBLOCK);
	free(stream);
	return 0;
}
