/*
 * worker/http/httpd_send.c: the replies as they go on the wire, byte
 * for byte.  A real server on 127.0.0.1; each test's owner answers the
 * request its own way and the client reads the reply until the server
 * closes (every request here asks it to, or is HTTP/1.0).  The Date
 * header's value is checked for its form and then left out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "worker/http/httpd.h"
#include "unit.h"

struct t_send {
	void			(*ts_owner)(struct httpd_req *,
				    struct t_send *);
	int			 ts_requests;
	int			 ts_done;	/* done callbacks */
	int			 ts_done_status;
	int			 ts_rc[8];	/* what the owner's calls said */
	size_t			 ts_left;	/* an evbuffer body's, after */
};

static void
t_on_done(struct httpd_req *req, void *arg)
{
	struct t_send *ts = arg;

	ts->ts_done++;
	ts->ts_done_status = httpd_req_status(req);
}

static void
t_on_request(struct httpd_req *req, void *arg)
{
	struct t_send *ts = arg;

	ts->ts_requests++;
	httpd_req_set_done_cb(req, t_on_done, ts);
	ts->ts_owner(req, ts);
}

/* each Date header's value: "Sun, 06 Dec 2026 12:00:00 GMT", then "D" */
static void
t_date_out(char *resp)
{
	char	*d = resp, *end;

	if (strstr(resp, "\r\nDate: ") == NULL)
		fail_msg("no Date header: %s", resp);
	while ((d = strstr(d, "\r\nDate: ")) != NULL) {
		d += 8;
		if ((end = strstr(d, "\r\n")) == NULL || end - d != 29 ||
		    d[3] != ',' || memcmp(end - 4, " GMT", 4) != 0)
			fail_msg("a bad Date header: %s", resp);
		*d = 'D';
		memmove(d + 1, end, strlen(end) + 1);
	}
}

/*
 * The reply to request (one or more, in one write) on a new connection,
 * read until the server closes it: a string the caller frees.
 */
static char *
t_exchange(const char *request, void (*owner)(struct httpd_req *,
    struct t_send *), struct t_send *ts)
{
	struct httpd_limits	 lim = { 16384, 1 << 20, 10000, 10000, 10000,
				    16, 16 };
	struct timespec		 pause = { 0, 1000 * 1000 };
	struct event_base	*base;
	struct httpd		*h;
	char			*resp;
	size_t			 len = 0, cap = 65536;
	ssize_t			 n;
	uint16_t		 port;
	int			 lfd, fd, i, eof = 0;

	memset(ts, 0, sizeof(*ts));
	ts->ts_owner = owner;
	(void)signal(SIGPIPE, SIG_IGN);
	assert_non_null(resp = malloc(cap));
	assert_non_null(base = event_base_new());
	lfd = unit_listen_loopback(&port);
	assert_non_null(h = httpd_new(base, lfd, &lim, t_on_request, ts));
	fd = unit_connect_loopback(port);
	if (write(fd, request, strlen(request)) != (ssize_t)strlen(request))
		fail_msg("client write");
	for (i = 0; i < 5000 && !eof; i++) {
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
		while ((n = recv(fd, resp + len, cap - 1 - len,
		    MSG_DONTWAIT)) > 0)
			len += (size_t)n;
		if (n == 0)
			eof = 1;
		else if (errno != EAGAIN && errno != EWOULDBLOCK)
			fail_msg("client read: %s", strerror(errno));
		else
			(void)nanosleep(&pause, NULL);
	}
	assert_true(eof);
	resp[len] = '\0';
	close(fd);
	httpd_free(h);
	close(lfd);
	event_base_free(base);
	t_date_out(resp);
	return resp;
}

static void
t_check(const char *request, void (*owner)(struct httpd_req *,
    struct t_send *), struct t_send *ts, const char *want)
{
	char	*got = t_exchange(request, owner, ts);

	if (strcmp(got, want) != 0)
		fail_msg("for\n%s\nwant\n%s\ngot\n%s", request, want, got);
	free(got);
}

#define GET_CLOSE	"GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"

/* a body of pieces, none typed: JSON; the owner's headers after ours */
static void
o_iov(struct httpd_req *req, struct t_send *ts)
{
	struct iovec	iov[2] = {
		{ "{\"a\":", 5 }, { "1}", 2 }
	};

	ts->ts_rc[0] = httpd_add_header(req, "X-One", "1");
	httpd_send_reply_iov(req, 200, iov, 2);
}

/* an evbuffer body, typed: moved out of the owner's buffer */
static void
o_evbuffer(struct httpd_req *req, struct t_send *ts)
{
	struct evbuffer	*b = evbuffer_new();

	assert_non_null(b);
	evbuffer_add(b, "hi", 2);
	ts->ts_rc[0] = httpd_add_header(req, "Content-Type", "text/plain");
	httpd_send_reply(req, 404, b);
	ts->ts_left = evbuffer_get_length(b);
	evbuffer_free(b);
}

static void
test_send_whole(void **state)
{
	struct t_send	ts;

	(void)state;
	t_check(GET_CLOSE, o_iov, &ts, "HTTP/1.1 200 OK\r\nDate: D\r\n"
	    "Content-Length: 7\r\nContent-Type: application/json\r\n"
	    "Connection: close\r\nX-One: 1\r\n\r\n{\"a\":1}");
	assert_int_equal(ts.ts_rc[0], 0);
	assert_int_equal(ts.ts_done, 1);
	assert_int_equal(ts.ts_done_status, 200);
	t_check(GET_CLOSE, o_evbuffer, &ts, "HTTP/1.1 404 Not Found\r\n"
	    "Date: D\r\nContent-Length: 2\r\nConnection: close\r\n"
	    "Content-Type: text/plain\r\n\r\nhi");
	assert_int_equal(ts.ts_left, 0);
	/* kept alive, with the idle time said, then the one asking closed */
	t_check("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n" GET_CLOSE, o_iov, &ts,
	    "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 7\r\n"
	    "Content-Type: application/json\r\nKeep-Alive: timeout=10\r\n"
	    "X-One: 1\r\n\r\n{\"a\":1}"
	    "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 7\r\n"
	    "Content-Type: application/json\r\nConnection: close\r\n"
	    "X-One: 1\r\n\r\n{\"a\":1}");
	assert_int_equal(ts.ts_requests, 2);
}

/* "abc" under the status asked */
static int o_status;

static void
o_abc(struct httpd_req *req, struct t_send *ts)
{
	struct iovec	iov = { "abc", 3 };

	(void)ts;
	httpd_send_reply_iov(req, o_status, &iov, 1);
}

/* no body where the status or method has none; an unknown status */
static void
test_send_no_body(void **state)
{
	struct t_send	ts;

	(void)state;
	o_status = 204;
	t_check(GET_CLOSE, o_abc, &ts, "HTTP/1.1 204 No Content\r\n"
	    "Date: D\r\nConnection: close\r\n\r\n");
	o_status = 304;
	t_check(GET_CLOSE, o_abc, &ts, "HTTP/1.1 304 Not Modified\r\n"
	    "Date: D\r\nConnection: close\r\n\r\n");
	o_status = 200;
	t_check("HEAD /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	    o_abc, &ts, "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 3\r\n"
	    "Content-Type: application/json\r\nConnection: close\r\n\r\n");
	o_status = 299;
	t_check(GET_CLOSE, o_abc, &ts, "HTTP/1.1 299 Unknown\r\nDate: D\r\n"
	    "Content-Length: 3\r\nContent-Type: application/json\r\n"
	    "Connection: close\r\n\r\nabc");
}

/* framing is the server's: refused, or (Connection) taken as a wish */
static void
o_headers(struct httpd_req *req, struct t_send *ts)
{
	ts->ts_rc[0] = httpd_add_header(req, "Bad\rName", "v");
	ts->ts_rc[1] = httpd_add_header(req, "X-Split", "a\nb");
	ts->ts_rc[2] = httpd_add_header(req, "X:Y", "v");
	ts->ts_rc[3] = httpd_add_header(req, "Content-Length", "5");
	ts->ts_rc[4] = httpd_add_header(req, "transfer-encoding", "chunked");
	ts->ts_rc[5] = httpd_add_header(req, "Connection", "keep-alive");
	ts->ts_rc[6] = httpd_add_header(req, "connection", "Close");
	httpd_send_reply(req, 200, NULL);
}

static void
test_send_header_rules(void **state)
{
	static const int	want[7] = { -1, -1, -1, -1, -1, 0, 0 };
	struct t_send		ts;
	int			i;

	(void)state;
	/* a keep-alive request: the owner's Connection: close closes it */
	t_check("GET /x HTTP/1.1\r\nHost: h\r\n\r\n", o_headers, &ts,
	    "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n");
	for (i = 0; i < 7; i++)
		assert_int_equal(ts.ts_rc[i], want[i]);
}

/* a stream: chunks in hex, an empty one writes nothing, the last 0 */
static void
o_stream(struct httpd_req *req, struct t_send *ts)
{
	static const char	 az[] = "abcdefghijklmnopqrstuvwxyz";

	ts->ts_rc[0] = httpd_send_chunk(req, "early", 5);
	ts->ts_rc[1] = httpd_add_header(req, "Content-Type",
	    "text/event-stream");
	httpd_send_start(req, 200);
	ts->ts_rc[2] = httpd_send_chunk(req, "hello", 5);
	ts->ts_rc[3] = httpd_send_chunk(req, az, sizeof(az) - 1);
	ts->ts_rc[4] = httpd_send_chunk(req, "", 0);
	httpd_send_end(req);
}

static void
test_send_stream(void **state)
{
	struct t_send	ts;

	(void)state;
	t_check(GET_CLOSE, o_stream, &ts, "HTTP/1.1 200 OK\r\nDate: D\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: close\r\n"
	    "Content-Type: text/event-stream\r\n\r\n"
	    "5\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n");
	assert_int_equal(ts.ts_rc[0], -1);	/* not started */
	assert_int_equal(ts.ts_rc[2], 0);
	assert_int_equal(ts.ts_rc[3], 0);
	assert_int_equal(ts.ts_rc[4], 0);
	assert_int_equal(ts.ts_done, 1);
	/* HTTP/1.0 has no chunks: the body as it is, ended by the close */
	t_check("GET /x HTTP/1.0\r\n\r\n", o_stream, &ts, "HTTP/1.1 200 OK\r\n"
	    "Date: D\r\nConnection: close\r\n"
	    "Content-Type: text/event-stream\r\n\r\n"
	    "helloabcdefghijklmnopqrstuvwxyz");
	/* HEAD: the head only, no chunk and no last one */
	t_check("HEAD /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	    o_stream, &ts, "HTTP/1.1 200 OK\r\nDate: D\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: close\r\n"
	    "Content-Type: text/event-stream\r\n\r\n");
}

/* ended without a reply: the client gets a 500, the done callback too */
static void
o_end(struct httpd_req *req, struct t_send *ts)
{
	(void)ts;
	httpd_send_end(req);
}

static void
test_send_end_unanswered(void **state)
{
	struct t_send	ts;

	(void)state;
	t_check(GET_CLOSE, o_end, &ts, "HTTP/1.1 500 Internal Server Error\r\n"
	    "Date: D\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	assert_int_equal(ts.ts_done, 1);
	assert_int_equal(ts.ts_done_status, 500);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_whole),
		cmocka_unit_test(test_send_no_body),
		cmocka_unit_test(test_send_header_rules),
		cmocka_unit_test(test_send_stream),
		cmocka_unit_test(test_send_end_unanswered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
