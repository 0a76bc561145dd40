/*
 * worker/http/httpd.c's close callback contract (httpd.h): it comes from a
 * loop turn of its own, never from inside a send of the owner's that
 * finds the client gone, and a callback set once the client is gone is
 * told the same way.  A real listener on 127.0.0.1 and a client that
 * closes right after its request: on loopback the first write after
 * its close is taken and its reset makes the next one fail.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "worker/http/httpd.h"
#include "unit.h"

enum when {
	CB_BEFORE,		/* set before the writes */
	CB_AFTER,		/* set once the writes found the client gone */
	CB_NONE			/* no writes: the client's close is read */
};

struct t_state {
	enum when		 when;
	struct httpd_req	*req;
	int			 requests;
	int			 closed;	/* close callbacks */
	int			 closed_in_send;
	int			 gone_after_send;
};

static void
t_on_close(struct httpd_req *req, void *arg)
{
	struct t_state *st = arg;

	assert_ptr_equal(req, st->req);
	st->closed++;
	httpd_send_end(req);	/* frees it */
}

static void
t_on_request(struct httpd_req *req, void *arg)
{
	static const char	 ev[] = "data: x\n\n";
	struct t_state		*st = arg;
	int			 i;

	st->req = req;
	st->requests++;
	if (st->when == CB_NONE) {
		httpd_req_set_close_cb(req, t_on_close, st);
		return;
	}
	if (st->when == CB_BEFORE)
		httpd_req_set_close_cb(req, t_on_close, st);
	httpd_send_start(req, 200);
	for (i = 0; i < 4; i++)
		(void)httpd_send_chunk(req, ev, sizeof(ev) - 1);
	st->closed_in_send = st->closed;
	st->gone_after_send = httpd_req_gone(req);
	if (st->when == CB_AFTER) {
		httpd_req_set_close_cb(req, t_on_close, st);
		st->closed_in_send += st->closed;
	}
}

/* a GET, then the client closes at once */
static void
t_client(uint16_t port)
{
	static const char	 get[] = "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n";
	int			 fd = unit_connect_loopback(port);

	if (write(fd, get, sizeof(get) - 1) != (ssize_t)(sizeof(get) - 1))
		fail_msg("client");
	close(fd);
}

static void
t_run(enum when when)
{
	struct httpd_limits	 lim = { 16384, 1 << 20, 10000, 10000, 10000,
				    16, 16 };
	struct t_state		 st;
	struct event_base	*base;
	struct httpd		*h;
	uint16_t		 port;
	int			 lfd, i;

	memset(&st, 0, sizeof(st));
	st.when = when;
	(void)signal(SIGPIPE, SIG_IGN);
	assert_non_null(base = event_base_new());
	lfd = unit_listen_loopback(&port);
	assert_non_null(h = httpd_new(base, lfd, &lim, t_on_request, &st));
	t_client(port);
	assert_true(unit_loop_until(base, &st.requests, 1));
	if (when != CB_NONE) {
		assert_int_equal(st.closed_in_send, 0);
		assert_int_equal(st.gone_after_send, 1);
	}
	assert_true(unit_loop_until(base, &st.closed, 1));
	/* once: the request ended in the callback; the connection goes */
	for (i = 0; i < 10; i++)
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(st.closed, 1);
	assert_int_equal(httpd_nconns(h), 0);
	httpd_free(h);
	close(lfd);
	event_base_free(base);
}

static void
test_close_cb_not_in_send(void **state)
{
	(void)state;
	t_run(CB_BEFORE);
}

static void
test_close_cb_set_once_gone(void **state)
{
	(void)state;
	t_run(CB_AFTER);
}

static void
test_close_cb_read(void **state)
{
	(void)state;
	t_run(CB_NONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_cb_not_in_send),
		cmocka_unit_test(test_close_cb_set_once_gone),
		cmocka_unit_test(test_close_cb_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
