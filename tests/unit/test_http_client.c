/*
 * http_client against an in-process evhttp server on 127.0.0.1 (and a
 * Unix socket), both on the event_base the client runs on.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "shared/http_client.h"

#define SSE_CHUNKS	3
#define N_CONCURRENT	50

static const char *sse_chunk[SSE_CHUNKS] = {
	"event: message\ndata: {\"n\":1}\n\n",
	"data: {\"n\":2}\n\n",
	": comment\ndata: {\"n\":3}\n\n",
};

struct fx {
	struct event_base	*f_base;
	struct evhttp		*f_http;
	struct http_client	*f_hc;
	int			 f_port;
	int			 f_nconns;	/* connections accepted */
	int			 f_nreqs;

	/* /sse */
	struct evhttp_request	*f_sse_req;
	struct event		*f_sse_timer;
	int			 f_sse_sent;
	int			 f_sse_ended;

	/* /close */
	struct evhttp_request	*f_close_req;
	struct event		*f_close_timer;

	/* /hang */
	struct evhttp_request	*f_hang_req[4];
	int			 f_nhang;

	/* /echo: what the server saw */
	char			 f_method[16];
	char			 f_xtest[64];
	char			 f_ctype[64];
	int			 f_saw_expect;
	int			 f_saw_ctype;
	char			*f_body;
	size_t			 f_bodylen;

	/* raw server: one canned response per connection */
	struct evconnlistener	*f_raw;
	int			 f_raw_port;
	const char		*f_raw_resp;
	size_t			 f_raw_len;	/* 0: strlen(f_raw_resp) */
	struct bufferevent	*f_raw_bev;
	char			 f_raw_head[512];	/* the last one read */

	char			 f_dir[64];
	char			 f_sock[96];
};

static struct fx *fx;

struct res {
	struct http_call	*r_call;
	int			 r_heads;
	long			 r_status;
	char			 r_hdr[64];
	int			 r_head_sent;	/* server chunks sent then */
	char			 r_fold[64];
	int			 r_has_link;
	int			 r_has_empty;
	char			 r_hdr_done[64];
	int			 r_ndata;
	char			 r_buf[16384];
	size_t			 r_len;
	size_t			 r_piece_len[16];
	int			 r_piece_sent[16];	/* server chunks sent */
	int			 r_piece_ended[16];	/* stream over then */
	int			 r_done;
	int			 r_result;
	char			 r_err[512];
	int			 r_errnull;
	/* behaviour */
	int			 r_cancel_in_head;
	int			 r_cancel_in_data;
	int			 r_abort_in_head;
	int			 r_abort_in_data;
	int			 r_cancel_in_done;	/* a no-op */
	struct http_call	*r_cancel_other;	/* from hc_data */
	struct http_call	*r_cancel_other_done;	/* from hc_done */
	struct res		*r_start_in_data;	/* by hc_data */
	struct res		*r_start_in_done;	/* by hc_done */
	int			*r_counter;	/* bumped in hc_done */
};

/* ---- server side ---- */

static struct bufferevent *
srv_bevcb(struct event_base *base, void *arg)
{
	(void)arg;
	fx->f_nconns++;
	return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
}

static void
srv_sse_tick(evutil_socket_t fd, short what, void *arg)
{
	struct evbuffer		*b;
	struct timeval		 tv = { 0, 60 * 1000 };

	(void)fd;
	(void)what;
	(void)arg;
	if (fx->f_sse_sent == SSE_CHUNKS) {
		evhttp_send_reply_end(fx->f_sse_req);
		fx->f_sse_req = NULL;
		fx->f_sse_ended = 1;
		return;
	}
	b = evbuffer_new();
	assert_non_null(b);
	evbuffer_add(b, sse_chunk[fx->f_sse_sent],
	    strlen(sse_chunk[fx->f_sse_sent]));
	evhttp_send_reply_chunk(fx->f_sse_req, b);
	evbuffer_free(b);
	fx->f_sse_sent++;
	evtimer_add(fx->f_sse_timer, &tv);
}

static void
srv_close_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	/* frees the request with it */
	evhttp_connection_free(evhttp_request_get_connection(fx->f_close_req));
	fx->f_close_req = NULL;
}

static const char *
srv_method(struct evhttp_request *req)
{
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	default:
		return "OTHER";
	}
}

static void
srv_handle(struct evhttp_request *req, void *arg)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	struct evkeyvalq	*out = evhttp_request_get_output_headers(req);
	struct evbuffer		*body, *b;
	const char		*path = evhttp_request_get_uri(req), *v;
	struct timeval		 tv = { 0, 60 * 1000 };
	size_t			 n;

	(void)arg;
	fx->f_nreqs++;
	if (strcmp(path, "/json") == 0) {
		evhttp_add_header(out, "Content-Type", "application/json");
		evhttp_add_header(out, "X-Reply", "first");
		evhttp_add_header(out, "x-reply", "yes");
		b = evbuffer_new();
		evbuffer_add_printf(b, "{\"ok\":true}");
		evhttp_send_reply(req, 200, "OK", b);
		evbuffer_free(b);
	} else if (strcmp(path, "/empty") == 0) {
		evhttp_send_reply(req, 204, "No Content", NULL);
	} else if (strcmp(path, "/sse") == 0) {
		assert_null(fx->f_sse_req);
		evhttp_add_header(out, "Content-Type", "text/event-stream");
		evhttp_send_reply_start(req, 200, "OK");
		fx->f_sse_req = req;
		fx->f_sse_sent = 0;
		fx->f_sse_ended = 0;
		evtimer_add(fx->f_sse_timer, &tv);
	} else if (strcmp(path, "/close") == 0) {
		evhttp_send_reply_start(req, 200, "OK");
		b = evbuffer_new();
		evbuffer_add_printf(b, "partial");
		evhttp_send_reply_chunk(req, b);
		evbuffer_free(b);
		fx->f_close_req = req;
		evtimer_add(fx->f_close_timer, &tv);
	} else if (strcmp(path, "/hang") == 0) {
		assert_true(fx->f_nhang < 4);
		fx->f_hang_req[fx->f_nhang++] = req;
	} else if (strcmp(path, "/echo") == 0) {
		snprintf(fx->f_method, sizeof(fx->f_method), "%s",
		    srv_method(req));
		v = evhttp_find_header(in, "X-Test");
		snprintf(fx->f_xtest, sizeof(fx->f_xtest), "%s",
		    v != NULL ? v : "(none)");
		fx->f_saw_expect = evhttp_find_header(in, "Expect") != NULL;
		v = evhttp_find_header(in, "Content-Type");
		fx->f_saw_ctype = v != NULL;
		snprintf(fx->f_ctype, sizeof(fx->f_ctype), "%s",
		    v != NULL ? v : "");
		body = evhttp_request_get_input_buffer(req);
		n = evbuffer_get_length(body);
		free(fx->f_body);
		fx->f_body = malloc(n + 1);
		assert_non_null(fx->f_body);
		evbuffer_copyout(body, fx->f_body, n);
		fx->f_body[n] = '\0';
		fx->f_bodylen = n;
		b = evbuffer_new();
		evbuffer_add_printf(b, "%s %s %zu", fx->f_method, fx->f_xtest,
		    n);
		evhttp_send_reply(req, 201, "Created", b);
		evbuffer_free(b);
	} else
		evhttp_send_reply(req, 404, "Not Found", NULL);
}

static void
raw_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	(void)arg;
	bufferevent_free(bev);
	if (fx->f_raw_bev == bev)
		fx->f_raw_bev = NULL;
}

static void
raw_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 p;

	(void)arg;
	p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (p.pos < 0)
		return;
	memset(fx->f_raw_head, 0, sizeof(fx->f_raw_head));
	evbuffer_copyout(in, fx->f_raw_head, (size_t)p.pos <
	    sizeof(fx->f_raw_head) - 1 ? (size_t)p.pos :
	    sizeof(fx->f_raw_head) - 1);
	evbuffer_drain(in, evbuffer_get_length(in));
	fx->f_nreqs++;
	bufferevent_write(bev, fx->f_raw_resp, fx->f_raw_len != 0 ?
	    fx->f_raw_len : strlen(fx->f_raw_resp));
}

static void
raw_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent	*bev;

	(void)l;
	(void)sa;
	(void)salen;
	(void)arg;
	fx->f_nconns++;
	if (fx->f_raw_bev != NULL)
		bufferevent_free(fx->f_raw_bev);
	bev = bufferevent_socket_new(fx->f_base, fd, BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(bev);
	fx->f_raw_bev = bev;
	bufferevent_setcb(bev, raw_read_cb, NULL, raw_event_cb, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void
raw_listen(const char *resp)
{
	struct sockaddr_in	 sin;
	socklen_t		 slen = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fx->f_raw = evconnlistener_new_bind(fx->f_base, raw_accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&sin, sizeof(sin));
	assert_non_null(fx->f_raw);
	assert_int_equal(getsockname(evconnlistener_get_fd(fx->f_raw),
	    (struct sockaddr *)&sin, &slen), 0);
	fx->f_raw_port = ntohs(sin.sin_port);
	fx->f_raw_resp = resp;
}

static int
setup(void **state)
{
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 slen = sizeof(sin);

	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	fx->f_base = event_base_new();
	assert_non_null(fx->f_base);
	fx->f_http = evhttp_new(fx->f_base);
	assert_non_null(fx->f_http);
	evhttp_set_gencb(fx->f_http, srv_handle, NULL);
	evhttp_set_bevcb(fx->f_http, srv_bevcb, NULL);
	bs = evhttp_bind_socket_with_handle(fx->f_http, "127.0.0.1", 0);
	assert_non_null(bs);
	assert_int_equal(getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sin, &slen), 0);
	fx->f_port = ntohs(sin.sin_port);
	fx->f_sse_timer = evtimer_new(fx->f_base, srv_sse_tick, NULL);
	fx->f_close_timer = evtimer_new(fx->f_base, srv_close_tick, NULL);
	assert_non_null(fx->f_sse_timer);
	assert_non_null(fx->f_close_timer);
	fx->f_hc = http_client_new(fx->f_base);
	assert_non_null(fx->f_hc);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	int	i;

	(void)state;
	http_client_free(fx->f_hc);
	/* hand back requests the server still holds (attached or not) */
	if (fx->f_sse_req != NULL)
		evhttp_send_reply_end(fx->f_sse_req);
	for (i = 0; i < fx->f_nhang; i++)
		evhttp_send_reply(fx->f_hang_req[i], 503, "Gone", NULL);
	if (fx->f_close_req != NULL)
		evhttp_send_reply_end(fx->f_close_req);
	event_free(fx->f_sse_timer);
	event_free(fx->f_close_timer);
	if (fx->f_raw_bev != NULL)
		bufferevent_free(fx->f_raw_bev);
	if (fx->f_raw != NULL)
		evconnlistener_free(fx->f_raw);
	evhttp_free(fx->f_http);
	event_base_free(fx->f_base);
	if (fx->f_sock[0] != '\0')
		unlink(fx->f_sock);
	if (fx->f_dir[0] != '\0')
		rmdir(fx->f_dir);
	free(fx->f_body);
	free(fx);
	fx = NULL;
	return 0;
}

/* ---- loop helpers ---- */

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(int *)arg = 1;
}

/* run the loop until *v >= want or ms pass; returns 0 if reached */
static int
run_until(const int *v, int want, int ms)
{
	struct event	*t;
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	int		 expired = 0;

	t = evtimer_new(fx->f_base, expire_cb, &expired);
	assert_non_null(t);
	evtimer_add(t, &tv);
	while (*v < want && !expired)
		event_base_loop(fx->f_base, EVLOOP_ONCE);
	event_free(t);
	return *v >= want ? 0 : -1;
}

static void
run_for(int ms)
{
	int	never = 0;

	(void)run_until(&never, 1, ms);
}

/* ---- client callbacks ---- */

static int
on_head(void *arg, struct http_call *call, long status)
{
	struct res	*r = arg;
	const char	*v;

	assert_ptr_equal(call, r->r_call);
	r->r_heads++;
	r->r_status = status;
	assert_int_equal(http_call_status(call), status);
	r->r_head_sent = fx->f_sse_sent;
	v = http_call_header(call, "X-REPLY");
	snprintf(r->r_hdr, sizeof(r->r_hdr), "%s", v != NULL ? v : "");
	v = http_call_header(call, "x-fold");
	snprintf(r->r_fold, sizeof(r->r_fold), "%s", v != NULL ? v : "");
	r->r_has_link = http_call_header(call, "Link") != NULL;
	v = http_call_header(call, "X-Empty");
	r->r_has_empty = v != NULL && *v == '\0';
	if (r->r_cancel_in_head) {
		http_call_cancel(call);
		return 0;
	}
	return r->r_abort_in_head;
}

static void on_done(void *, struct http_call *, int, const char *);

static const struct http_call_cbs cbs = { on_head, NULL, on_done };
static int on_data(void *, struct http_call *, const char *, size_t);
static const struct http_call_cbs cbs_data = { on_head, on_data, on_done };

static struct http_call *
start(struct res *r, const char *method, const char *path)
{
	char	 url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", fx->f_port, path);
	r->r_call = http_call_new(fx->f_hc, method, url);
	assert_non_null(r->r_call);
	assert_int_equal(http_call_start(r->r_call, &cbs_data, r), 0);
	return r->r_call;
}

static int
on_data(void *arg, struct http_call *call, const char *buf, size_t len)
{
	struct res	*r = arg;

	assert_ptr_equal(call, r->r_call);
	assert_int_equal(r->r_heads, 1);	/* head always first */
	assert_true(r->r_len + len < sizeof(r->r_buf));
	memcpy(r->r_buf + r->r_len, buf, len);
	r->r_len += len;
	r->r_buf[r->r_len] = '\0';
	if (r->r_ndata < 16) {
		r->r_piece_len[r->r_ndata] = len;
		r->r_piece_sent[r->r_ndata] = fx->f_sse_sent;
		r->r_piece_ended[r->r_ndata] = fx->f_sse_ended;
	}
	r->r_ndata++;
	if (r->r_cancel_other != NULL) {
		http_call_cancel(r->r_cancel_other);
		r->r_cancel_other = NULL;
	}
	if (r->r_start_in_data != NULL) {
		(void)start(r->r_start_in_data, "GET", "/json");
		r->r_start_in_data = NULL;
	}
	if (r->r_cancel_in_data) {
		http_call_cancel(call);
		return 0;
	}
	return r->r_abort_in_data;
}

static void
on_done(void *arg, struct http_call *call, int result, const char *err)
{
	struct res	*r = arg;
	const char	*v;

	assert_ptr_equal(call, r->r_call);
	r->r_done++;
	v = http_call_header(call, "x-reply");
	snprintf(r->r_hdr_done, sizeof(r->r_hdr_done), "%s",
	    v != NULL ? v : "");
	r->r_result = result;
	r->r_errnull = err == NULL;
	snprintf(r->r_err, sizeof(r->r_err), "%s", err != NULL ? err : "");
	if (r->r_counter != NULL)
		(*r->r_counter)++;
	if (r->r_cancel_in_done)
		http_call_cancel(call);
	if (r->r_cancel_other_done != NULL)
		http_call_cancel(r->r_cancel_other_done);
	if (r->r_start_in_done != NULL) {
		(void)start(r->r_start_in_done, "GET", "/json");
		r->r_start_in_done = NULL;
	}
}

/* ---- tests ---- */

static void
test_json(void **state)
{
	struct res	r = { 0 };

	(void)state;
	start(&r, "GET", "/json");
	assert_int_equal(http_client_active(fx->f_hc), 1);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);
	assert_true(r.r_errnull);
	assert_int_equal(r.r_heads, 1);
	assert_int_equal(r.r_status, 200);
	assert_string_equal(r.r_hdr, "yes");	/* last one wins */
	assert_string_equal(r.r_buf, "{\"ok\":true}");
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
test_no_body(void **state)
{
	struct res	r = { 0 };

	(void)state;
	start(&r, "GET", "/empty");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);
	assert_int_equal(r.r_heads, 1);
	assert_int_equal(r.r_status, 204);
	assert_int_equal(r.r_ndata, 0);
}

static void
test_status_404(void **state)
{
	struct res	r = { 0 };

	(void)state;
	start(&r, "GET", "/nothing");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);	/* any status completes */
	assert_int_equal(r.r_status, 404);
}

static void
test_sse_streaming(void **state)
{
	struct res	r = { 0 };
	char		all[512] = "";
	int		i;

	(void)state;
	start(&r, "GET", "/sse");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);
	assert_int_equal(r.r_status, 200);
	/* the head is reported as soon as it is in, before any body */
	assert_int_equal(r.r_head_sent, 0);
	for (i = 0; i < SSE_CHUNKS; i++)
		strcat(all, sse_chunk[i]);
	assert_string_equal(r.r_buf, all);
	/* each chunk left 60 ms apart: one piece per chunk, in order */
	assert_int_equal(r.r_ndata, SSE_CHUNKS);
	for (i = 0; i < SSE_CHUNKS; i++) {
		assert_int_equal(r.r_piece_len[i], strlen(sse_chunk[i]));
		assert_int_equal(r.r_piece_sent[i], i + 1);
		assert_false(r.r_piece_ended[i]);
	}
	assert_true(fx->f_sse_ended);
}

static void
test_echo(void **state)
{
	struct res	 r = { 0 }, r2 = { 0 }, r3 = { 0 };
	char		 url[128], *big;
	/* above libcurl's Expect: 100-continue threshold (1 MiB) */
	size_t		 n = 1536 * 1024, i;

	(void)state;
	big = malloc(n);
	assert_non_null(big);
	for (i = 0; i < n; i++)
		big[i] = 'a' + (char)(i % 26);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/echo", fx->f_port);
	r.r_call = http_call_new(fx->f_hc, "POST", url);
	assert_non_null(r.r_call);
	assert_int_equal(http_call_add_header(r.r_call, "X-Test", "hello"),
	    0);
	assert_int_equal(http_call_add_header(r.r_call, "Content-Type",
	    "application/json"), 0);
	assert_int_equal(http_call_set_body(r.r_call, big, n), 0);
	big[0] = '!';	/* the body was copied */
	http_call_set_timeout(r.r_call, 5000);
	assert_int_equal(http_call_start(r.r_call, &cbs_data, &r), 0);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);
	assert_int_equal(r.r_status, 201);
	assert_string_equal(fx->f_method, "POST");
	assert_string_equal(fx->f_xtest, "hello");
	assert_string_equal(fx->f_ctype, "application/json");
	assert_false(fx->f_saw_expect);
	assert_int_equal(fx->f_bodylen, n);
	assert_int_equal(fx->f_body[0], 'a');
	assert_memory_equal(fx->f_body + 1, big + 1, n - 1);
	assert_string_equal(r.r_buf, "POST hello 1572864");

	/* another method with a body, no Content-Type given: none sent */
	r2.r_call = http_call_new(fx->f_hc, "PUT", url);
	assert_non_null(r2.r_call);
	assert_int_equal(http_call_set_body(r2.r_call, "xyz", 3), 0);
	assert_int_equal(http_call_start(r2.r_call, &cbs, &r2), 0);
	assert_int_equal(run_until(&r2.r_done, 1, 5000), 0);
	assert_int_equal(r2.r_result, 0);
	assert_string_equal(fx->f_method, "PUT");
	assert_string_equal(fx->f_xtest, "(none)");
	assert_false(fx->f_saw_ctype);
	assert_string_equal(fx->f_body, "xyz");

	/* DELETE without a body; empty header value is sent as empty */
	r3.r_call = http_call_new(fx->f_hc, "DELETE", url);
	assert_non_null(r3.r_call);
	assert_int_equal(http_call_add_header(r3.r_call, "X-Test", ""), 0);
	assert_int_equal(http_call_start(r3.r_call, &cbs, &r3), 0);
	assert_int_equal(run_until(&r3.r_done, 1, 5000), 0);
	assert_int_equal(r3.r_result, 0);
	assert_string_equal(fx->f_method, "DELETE");
	assert_string_equal(fx->f_xtest, "");
	assert_int_equal(fx->f_bodylen, 0);
	free(big);
}

static void
test_timeout(void **state)
{
	struct res	 r = { 0 };
	struct timeval	 t0, t1;
	char		 url[128];
	long		 ms;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hang", fx->f_port);
	r.r_call = http_call_new(fx->f_hc, "GET", url);
	assert_non_null(r.r_call);
	http_call_set_timeout(r.r_call, 200);
	gettimeofday(&t0, NULL);
	assert_int_equal(http_call_start(r.r_call, &cbs_data, &r), 0);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	assert_int_equal(r.r_result, -1);
	assert_non_null(strstr(r.r_err, "timed out after 200 ms"));
	assert_true(ms >= 190 && ms < 3000);
	assert_int_equal(fx->f_nhang, 1);
	assert_int_equal(r.r_heads, 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
test_close_mid_response(void **state)
{
	struct res	r = { 0 };

	(void)state;
	start(&r, "GET", "/close");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, -1);
	assert_false(r.r_errnull);
	assert_true(strlen(r.r_err) > 0);
	assert_int_equal(r.r_status, 200);
	assert_string_equal(r.r_buf, "partial");
}

static void
test_refused(void **state)
{
	struct res		 r = { 0 };
	struct sockaddr_in	 sin;
	socklen_t		 slen = sizeof(sin);
	char			 url[128], want[128];
	int			 s, port;

	(void)state;
	/* bound but not listening: connects are refused */
	s = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sin, &slen), 0);
	port = ntohs(sin.sin_port);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/json", port);
	r.r_call = http_call_new(fx->f_hc, "GET", url);
	assert_non_null(r.r_call);
	assert_int_equal(http_call_start(r.r_call, &cbs_data, &r), 0);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	close(s);
	assert_int_equal(r.r_result, -1);
	snprintf(want, sizeof(want), "connect to 127.0.0.1:%d failed: %s",
	    port, strerror(ECONNREFUSED));
	assert_string_equal(r.r_err, want);
	assert_int_equal(r.r_heads, 0);
}

static void
test_cancel_in_data(void **state)
{
	struct res	r = { 0 };

	(void)state;
	r.r_cancel_in_data = 1;
	start(&r, "GET", "/sse");
	assert_int_equal(run_until(&r.r_ndata, 1, 5000), 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);
	/* let the server finish its stream: nothing more reaches us */
	assert_int_equal(run_until(&fx->f_sse_ended, 1, 5000), 0);
	run_for(50);
	assert_int_equal(r.r_ndata, 1);
	assert_int_equal(r.r_done, 0);
	assert_string_equal(r.r_buf, sse_chunk[0]);
}

static void
test_cancel_in_head(void **state)
{
	struct res	r = { 0 };

	(void)state;
	r.r_cancel_in_head = 1;
	start(&r, "GET", "/json");
	assert_int_equal(run_until(&r.r_heads, 1, 5000), 0);
	run_for(100);
	assert_int_equal(r.r_heads, 1);
	assert_int_equal(r.r_ndata, 0);
	assert_int_equal(r.r_done, 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);

	/* a head with no body to follow */
	memset(&r, 0, sizeof(r));
	r.r_cancel_in_head = 1;
	start(&r, "GET", "/empty");
	assert_int_equal(run_until(&r.r_heads, 1, 5000), 0);
	run_for(100);
	assert_int_equal(r.r_heads, 1);
	assert_int_equal(r.r_done, 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);

	/* cancelling from hc_done is harmless: the call goes anyway */
	memset(&r, 0, sizeof(r));
	r.r_cancel_in_done = 1;
	start(&r, "GET", "/json");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	run_for(50);
	assert_int_equal(r.r_done, 1);
	assert_int_equal(r.r_result, 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
test_cancel_other_in_data(void **state)
{
	struct res	a = { 0 }, b = { 0 };

	(void)state;
	start(&b, "GET", "/hang");
	assert_int_equal(run_until(&fx->f_nreqs, 1, 5000), 0);
	a.r_cancel_other = b.r_call;
	start(&a, "GET", "/sse");
	assert_int_equal(run_until(&a.r_done, 1, 5000), 0);
	assert_int_equal(a.r_result, 0);
	assert_int_equal(a.r_ndata, SSE_CHUNKS);
	run_for(50);
	assert_int_equal(b.r_heads + b.r_ndata + b.r_done, 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
test_cancel_other_in_done(void **state)
{
	struct res	 a = { 0 }, b = { 0 };
	char		 url[128];
	int		 ndone = 0;

	(void)state;
	/* same deadline: both usually finish in one pass of the loop */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hang", fx->f_port);
	a.r_call = http_call_new(fx->f_hc, "GET", url);
	b.r_call = http_call_new(fx->f_hc, "GET", url);
	assert_non_null(a.r_call);
	assert_non_null(b.r_call);
	http_call_set_timeout(a.r_call, 100);
	http_call_set_timeout(b.r_call, 100);
	a.r_counter = b.r_counter = &ndone;
	a.r_cancel_other_done = b.r_call;
	b.r_cancel_other_done = a.r_call;
	assert_int_equal(http_call_start(a.r_call, &cbs, &a), 0);
	assert_int_equal(http_call_start(b.r_call, &cbs, &b), 0);
	assert_int_equal(run_until(&ndone, 1, 5000), 0);
	run_for(200);
	/* whichever is reported first cancels the other */
	assert_int_equal(ndone, 1);
	assert_int_equal(a.r_done + b.r_done, 1);
	assert_int_equal(a.r_done ? a.r_result : b.r_result, -1);
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
cancel_cb(evutil_socket_t fd, short what, void *arg)
{
	struct res	*r = arg;

	(void)fd;
	(void)what;
	http_call_cancel(r->r_call);
	r->r_done = 100;	/* marks the cancel */
}

static void
test_cancel_outside(void **state)
{
	struct res	 r = { 0 };
	struct event	*ev;
	struct timeval	 tv = { 0, 50 * 1000 };

	(void)state;
	start(&r, "GET", "/hang");
	ev = evtimer_new(fx->f_base, cancel_cb, &r);
	assert_non_null(ev);
	evtimer_add(ev, &tv);
	assert_int_equal(run_until(&r.r_done, 100, 5000), 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);
	run_for(100);
	assert_int_equal(r.r_done, 100);
	assert_int_equal(r.r_heads + r.r_ndata, 0);
	event_free(ev);

	/* and right after start, before the loop ran at all */
	memset(&r, 0, sizeof(r));
	start(&r, "GET", "/json");
	http_call_cancel(r.r_call);
	assert_int_equal(http_client_active(fx->f_hc), 0);
	run_for(100);
	assert_int_equal(r.r_heads + r.r_ndata + r.r_done, 0);
}

static void
test_cancel_before_start(void **state)
{
	struct http_call	*call;
	char			 url[128];

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/json", fx->f_port);
	call = http_call_new(fx->f_hc, "POST", url);
	assert_non_null(call);
	assert_int_equal(http_call_add_header(call, "X-A", "b"), 0);
	assert_int_equal(http_call_set_body(call, "{}", 2), 0);
	assert_int_equal(http_call_set_unix_socket(call, "/nonexistent"), 0);
	http_call_cancel(call);
	assert_int_equal(http_client_active(fx->f_hc), 0);
	run_for(50);
	assert_int_equal(fx->f_nreqs, 0);
}

static void
test_abort(void **state)
{
	struct res	r = { 0 };

	(void)state;
	r.r_abort_in_data = 1;
	start(&r, "GET", "/sse");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, -1);
	assert_string_equal(r.r_err, "aborted");
	assert_int_equal(r.r_ndata, 1);

	memset(&r, 0, sizeof(r));
	r.r_abort_in_head = 1;
	start(&r, "GET", "/json");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, -1);
	assert_string_equal(r.r_err, "aborted");
	assert_int_equal(r.r_heads, 1);
	assert_int_equal(r.r_ndata, 0);

	memset(&r, 0, sizeof(r));
	r.r_abort_in_head = 1;
	start(&r, "GET", "/empty");
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, -1);
	assert_string_equal(r.r_err, "aborted");
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
test_reuse(void **state)
{
	struct res	a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	a.r_start_in_done = &b;
	start(&a, "GET", "/json");
	assert_int_equal(run_until(&b.r_done, 1, 5000), 0);
	assert_int_equal(a.r_result, 0);
	assert_int_equal(b.r_result, 0);
	assert_string_equal(b.r_buf, "{\"ok\":true}");
	start(&c, "POST", "/echo");
	assert_int_equal(run_until(&c.r_done, 1, 5000), 0);
	assert_int_equal(c.r_result, 0);
	assert_int_equal(fx->f_nreqs, 3);
	assert_int_equal(fx->f_nconns, 1);
}

static void
test_start_in_data(void **state)
{
	struct res	a = { 0 }, b = { 0 };

	(void)state;
	a.r_start_in_data = &b;
	start(&a, "GET", "/sse");
	assert_int_equal(http_client_active(fx->f_hc), 1);
	assert_int_equal(run_until(&b.r_done, 1, 5000), 0);
	assert_int_equal(b.r_result, 0);
	assert_string_equal(b.r_buf, "{\"ok\":true}");
	assert_int_equal(run_until(&a.r_done, 1, 5000), 0);
	assert_int_equal(a.r_result, 0);
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

static void
test_concurrent(void **state)
{
	struct res	*r;
	int		 i, ndone = 0;

	(void)state;
	r = calloc(N_CONCURRENT, sizeof(*r));
	assert_non_null(r);
	for (i = 0; i < N_CONCURRENT; i++) {
		r[i].r_counter = &ndone;
		start(&r[i], "GET", "/json");
	}
	assert_int_equal(http_client_active(fx->f_hc), N_CONCURRENT);
	assert_int_equal(run_until(&ndone, N_CONCURRENT, 10000), 0);
	for (i = 0; i < N_CONCURRENT; i++) {
		assert_int_equal(r[i].r_done, 1);
		assert_int_equal(r[i].r_result, 0);
		assert_int_equal(r[i].r_status, 200);
		assert_string_equal(r[i].r_buf, "{\"ok\":true}");
	}
	assert_int_equal(fx->f_nreqs, N_CONCURRENT);
	assert_true(fx->f_nconns >= 1 && fx->f_nconns <= N_CONCURRENT);
	assert_int_equal(http_client_active(fx->f_hc), 0);
	free(r);
}

static void
test_unix_socket(void **state)
{
	struct sockaddr_un	 sun;
	struct res		 r = { 0 };
	int			 s;

	(void)state;
	snprintf(fx->f_dir, sizeof(fx->f_dir), "/tmp/test_hc.XXXXXX");
	assert_non_null(mkdtemp(fx->f_dir));
	snprintf(fx->f_sock, sizeof(fx->f_sock), "%s/s", fx->f_dir);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", fx->f_sock);
	assert_int_equal(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(s, 16), 0);
	assert_int_equal(evutil_make_socket_nonblocking(s), 0);
	assert_non_null(evhttp_accept_socket_with_handle(fx->f_http, s));

	/* the port in the URL is ignored: only the socket counts */
	r.r_call = http_call_new(fx->f_hc, "GET", "http://localhost:1/json");
	assert_non_null(r.r_call);
	assert_int_equal(http_call_set_unix_socket(r.r_call, fx->f_sock), 0);
	assert_int_equal(http_call_start(r.r_call, &cbs_data, &r), 0);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);
	assert_string_equal(r.r_buf, "{\"ok\":true}");

	/* a missing socket names it */
	memset(&r, 0, sizeof(r));
	r.r_call = http_call_new(fx->f_hc, "GET", "http://localhost/json");
	assert_non_null(r.r_call);
	assert_int_equal(http_call_set_unix_socket(r.r_call,
	    "/nonexistent/sock"), 0);
	assert_int_equal(http_call_start(r.r_call, &cbs_data, &r), 0);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, -1);
	assert_non_null(strstr(r.r_err, "/nonexistent/sock"));
}

/* a GET of the raw server's answer (url gets its URL), done and fine */
static void
raw_get(struct res *r, char *url, size_t len)
{
	snprintf(url, len, "http://127.0.0.1:%d/", fx->f_raw_port);
	r->r_call = http_call_new(fx->f_hc, "GET", url);
	assert_non_null(r->r_call);
	assert_int_equal(http_call_start(r->r_call, &cbs_data, r), 0);
	assert_int_equal(run_until(&r->r_done, 1, 5000), 0);
	assert_int_equal(r->r_result, 0);
}

/*
 * The request line and Host of each URL, sent again and again (the
 * split cache's lines) and past what it keeps (built per call): the
 * path as written, "/" before a bare query or none.
 */
static void
test_request_lines(void **state)
{
	static const struct {
		const char	*tail;	/* after host:port */
		const char	*target;
	} urls[] = {
		{ "", "/" },
		{ "?q=1", "/?q=1" },
		{ "/a/b?x=1&y", "/a/b?x=1&y" },
		{ "/p0", "/p0" }, { "/p1", "/p1" }, { "/p2", "/p2" },
		{ "/p3", "/p3" }, { "/p4", "/p4" }, { "/p5", "/p5" },
		{ "/p6", "/p6" }, { "/p7", "/p7" },
	};
	struct res	 r;
	char		 url[128], want[256];
	size_t		 i, round;

	(void)state;
	raw_listen("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	for (round = 0; round < 2; round++)
		for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
			memset(&r, 0, sizeof(r));
			snprintf(url, sizeof(url), "http://127.0.0.1:%d%s",
			    fx->f_raw_port, urls[i].tail);
			r.r_call = http_call_new(fx->f_hc, round ? "POST" :
			    "GET", url);
			assert_non_null(r.r_call);
			assert_int_equal(http_call_start(r.r_call, &cbs_data,
			    &r), 0);
			assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
			if (r.r_result != 0)
				fail_msg("%s: %s", url, r.r_err);
			snprintf(want, sizeof(want), "%s %s HTTP/1.1\r\nHost: "
			    "127.0.0.1:%d\r\n", round ? "POST" : "GET",
			    urls[i].target, fx->f_raw_port);
			assert_memory_equal(fx->f_raw_head, want,
			    strlen(want));
		}
}

/*
 * A head past the first 1024 bytes and 16 fields of the header store:
 * what was stored before it grew is still found, and a fold at the end
 * extends the last value.
 */
static void
test_many_headers(void **state)
{
	static char	 resp[8192];
	struct res	 r = { 0 };
	char		 url[128];
	size_t		 n;
	int		 i;

	(void)state;
	n = (size_t)snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 0\r\nX-Reply: first\r\nX-Empty:\r\n");
	for (i = 0; i < 60; i++)
		n += (size_t)snprintf(resp + n, sizeof(resp) - n,
		    "X-Filler-%02d: %060d\r\n", i, i);
	(void)snprintf(resp + n, sizeof(resp) - n, "X-Fold: a\r\n b\r\n"
	    "\t c\r\n\r\n");
	raw_listen(resp);
	raw_get(&r, url, sizeof(url));
	assert_int_equal(r.r_status, 200);
	assert_string_equal(r.r_hdr, "first");
	assert_string_equal(r.r_hdr_done, "first");
	assert_true(r.r_has_empty);
	assert_string_equal(r.r_fold, "a b c");
}

static void
test_interim_and_trailers(void **state)
{
	struct res	r = { 0 };
	char		url[128];

	(void)state;
	raw_listen("HTTP/1.1 103 Early Hints\r\n"
	    "X-Reply: early\r\n"
	    "Link: </style.css>; rel=preload\r\n"
	    "\r\n"
	    "HTTP/1.1 200 OK\r\n"
	    "X-Reply: final\r\n"
	    "X-Fold: a\r\n"
	    " b\r\n"
	    "Transfer-Encoding: chunked\r\n"
	    "Trailer: X-Reply\r\n"
	    "\r\n"
	    "2\r\nok\r\n"
	    "0\r\n"
	    "X-Reply: trailer\r\n"
	    "\r\n");
	raw_get(&r, url, sizeof(url));
	assert_int_equal(r.r_heads, 1);		/* not for the 103 */
	assert_int_equal(r.r_status, 200);
	assert_string_equal(r.r_hdr, "final");
	assert_string_equal(r.r_hdr_done, "final");	/* no trailer */
	assert_false(r.r_has_link);		/* 103 head forgotten */
	assert_string_equal(r.r_fold, "a b");
	assert_string_equal(r.r_buf, "ok");
}

static void
test_head_headers(void **state)
{
	struct res	 r = { 0 };
	char		 url[128];

	(void)state;
	raw_listen("HTTP/1.1 200 OK\r\n"
	    "Content-Length: 0\r\n"
	    "X-Fold:  a\r\n"
	    "\t b \r\n"
	    "X-Empty:\r\n"
	    "x-reply: one\r\n"
	    "X-Reply:  two  \r\n"
	    "\r\n");
	raw_get(&r, url, sizeof(url));
	assert_string_equal(r.r_hdr, "two");
	assert_string_equal(r.r_fold, "a b");
	assert_true(r.r_has_empty);
	assert_int_equal(r.r_ndata, 0);
}

/* an idle connection the server closed under us: retried on a new one */
static void
test_stale_reuse(void **state)
{
	struct res	r = { 0 };
	char		url[128];

	(void)state;
	raw_listen("HTTP/1.1 200 OK\r\n"
	    "Content-Length: 2\r\n"
	    "\r\n"
	    "ok");
	raw_get(&r, url, sizeof(url));
	assert_int_equal(fx->f_nconns, 1);

	/* closed by the server; the client has not seen it yet */
	assert_non_null(fx->f_raw_bev);
	bufferevent_free(fx->f_raw_bev);
	fx->f_raw_bev = NULL;
	memset(&r, 0, sizeof(r));
	r.r_call = http_call_new(fx->f_hc, "POST", url);
	assert_non_null(r.r_call);
	assert_int_equal(http_call_set_body(r.r_call, "{}", 2), 0);
	assert_int_equal(http_call_start(r.r_call, &cbs_data, &r), 0);
	assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
	assert_int_equal(r.r_result, 0);
	assert_string_equal(r.r_buf, "ok");
	assert_int_equal(fx->f_nconns, 2);
	assert_int_equal(fx->f_nreqs, 2);
	assert_int_equal(http_client_active(fx->f_hc), 0);
}

/*
 * What the front refuses in a request, the client refuses in an answer,
 * by the lean client (an IP address) and by libcurl (a host name).
 */
static void
test_refused_heads(void **state)
{
#define H(s)	s, sizeof(s) - 1
	static const struct {
		const char	*h_resp;
		size_t		 h_len;
		const char	*h_why;
		const char	*h_curl_why;	/* NULL: h_why */
	} heads[] = {
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
		    "both Content-Length and Transfer-Encoding", NULL },
		{ H("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		    "Content-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
		    "both Content-Length and Transfer-Encoding", NULL },
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "Content-Length: 3\r\n\r\nok!"), "Content-Length", NULL },
		/* libcurl refuses a NUL itself ("Nul byte in header") */
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "X-Reply: a\0b\r\n\r\nok"),
		    "a control character in a header value", "Nul byte" },
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "X-Reply: a\x01b\r\n\r\nok"),
		    "a control character in a header value", NULL },
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "X-Reply: a\rb\r\n\r\nok"),
		    "a control character in a header value", NULL },
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "X-Reply: a\x7f\r\n\r\nok"),
		    "a control character in a header value", NULL },
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "X-Fold: a\r\n b\x01\r\n\r\nok"),
		    "a control character in a header value", NULL },
		{ H("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "X-Reply : a\r\n\r\nok"), "not a token", NULL },
	};
#undef H
	struct res	 r;
	char		 url[128];
	const char	*why;
	size_t		 i, u;

	(void)state;
	raw_listen("");
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		fx->f_raw_resp = heads[i].h_resp;
		fx->f_raw_len = heads[i].h_len;
		for (u = 0; u < 2; u++) {
			memset(&r, 0, sizeof(r));
			snprintf(url, sizeof(url), "http://%s:%d/",
			    u == 0 ? "127.0.0.1" : "localhost",
			    fx->f_raw_port);
			r.r_call = http_call_new(fx->f_hc, "GET", url);
			assert_non_null(r.r_call);
			assert_int_equal(http_call_start(r.r_call, &cbs_data,
			    &r), 0);
			assert_int_equal(run_until(&r.r_done, 1, 5000), 0);
			why = u == 1 && heads[i].h_curl_why != NULL ?
			    heads[i].h_curl_why : heads[i].h_why;
			if (r.r_result != -1 || strstr(r.r_err, why) == NULL)
				fail_msg("case %zu via %s: %d \"%s\"", i, url,
				    r.r_result, r.r_err);
			assert_int_equal(r.r_heads, 0);
		}
	}
	/* a tab in a value is no control character to refuse */
	fx->f_raw_resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "X-Reply: a\tb\r\n\r\nok";
	fx->f_raw_len = 0;
	memset(&r, 0, sizeof(r));
	raw_get(&r, url, sizeof(url));
	assert_string_equal(r.r_hdr, "a\tb");
}

static void
test_bad_input(void **state)
{
	struct http_call	*call;

	(void)state;
	assert_null(http_call_new(fx->f_hc, "GET", "not a url"));
	assert_null(http_call_new(fx->f_hc, "GET", "ftp://127.0.0.1/x"));
	assert_null(http_call_new(fx->f_hc, "GET", "file:///etc/passwd"));
	assert_null(http_call_new(fx->f_hc, "GE T", "http://127.0.0.1/"));
	assert_null(http_call_new(fx->f_hc, "", "http://127.0.0.1/"));
	call = http_call_new(fx->f_hc, "GET", "http://127.0.0.1/");
	assert_non_null(call);
	assert_int_equal(http_call_add_header(call, "X-A", "b\r\nX-B: c"),
	    -1);
	assert_int_equal(http_call_add_header(call, "X A", "b"), -1);
	assert_int_equal(http_call_add_header(call, "", "b"), -1);
	assert_int_equal(http_call_set_body(call, NULL, 3), -1);
	assert_null(http_call_header(call, "X-A"));
	assert_int_equal(http_call_status(call), 0);
	http_call_cancel(call);
}

static void
test_free_in_flight(void **state)
{
	struct res	a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	start(&a, "GET", "/hang");
	start(&b, "GET", "/sse");
	assert_int_equal(run_until(&b.r_ndata, 1, 5000), 0);
	start(&c, "GET", "/json");
	assert_int_equal(http_client_active(fx->f_hc), 3);
	http_client_free(fx->f_hc);
	fx->f_hc = NULL;
	/* the server goes on; no client event may fire any more */
	assert_int_equal(run_until(&fx->f_sse_ended, 1, 5000), 0);
	run_for(50);
	assert_int_equal(a.r_heads + a.r_done, 0);
	assert_int_equal(b.r_ndata, 1);
	assert_int_equal(b.r_done, 0);
	assert_int_equal(c.r_heads + c.r_done, 0);
}

/* http_url_split(): what http_h1.c takes, in parts */
static void
test_url_split(void **state)
{
	static const char *const refused[] = { "https://127.0.0.1/",
	    "http://", "http:///x", "http://u@127.0.0.1/", "http://h:0/",
	    "http://h:65536/", "http://h:1234567/", "http://h:/",
	    "http://h:8x/", "http://[::1/", "http://h/a b", "http://h/\x7f",
	    "ftp://h/" };
	struct http_url	 u;
	size_t		 i;

	(void)state;
	assert_int_equal(http_url_split("http://127.0.0.1:8080/mcp?x#f", &u),
	    0);
	assert_int_equal(u.hu_authlen, 14);
	assert_memory_equal(u.hu_auth, "127.0.0.1:8080", 14);
	assert_int_equal(u.hu_hostlen, 9);
	assert_int_equal(u.hu_port, 8080);
	assert_int_equal(u.hu_pathlen, 6);
	assert_memory_equal(u.hu_path, "/mcp?x", 6);
	assert_int_equal(u.hu_addrlen, sizeof(struct sockaddr_in));
	assert_int_equal(u.hu_addr.ss_family, AF_INET);
	assert_int_equal(http_url_split("HTTP://[::1]/", &u), 0);
	assert_int_equal(u.hu_port, 80);
	assert_int_equal(u.hu_hostlen, 5);
	assert_int_equal(u.hu_addrlen, sizeof(struct sockaddr_in6));
	assert_int_equal(http_url_split("http://example.com", &u), 0);
	assert_int_equal(u.hu_addrlen, 0);
	assert_int_equal(u.hu_pathlen, 0);
	assert_int_equal(u.hu_authlen, 11);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (http_url_split(refused[i], &u) != -1)
			fail_msg("%s taken", refused[i]);
}

/* the address a, written as inet_pton() takes it, in *ss */
static void
sa_of(const char *a, struct sockaddr_storage *ss)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &sin->sin_addr) == 1)
		sin->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1)
		sin6->sin6_family = AF_INET6;
	else
		fail_msg("bad address %s", a);
}

/* http_addr_private(): what public_only calls may not connect to */
static int
addr_private(const char *a)
{
	struct sockaddr_storage	 ss;

	sa_of(a, &ss);
	return http_addr_private((struct sockaddr *)&ss);
}

static void
test_addr_private(void **state)
{
	static const char *const priv[] = { "127.0.0.1", "127.9.9.9",
	    "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
	    "169.254.169.254", "100.64.0.1", "0.0.0.0", "::", "::1",
	    "fc00::1", "fd12::1", "fe80::1", "::ffff:127.0.0.1",
	    "::ffff:169.254.169.254", "::ffff:10.1.2.3" };
	static const char *const pub[] = { "8.8.8.8", "172.32.0.1",
	    "192.169.0.1", "100.128.0.1", "2001:db8::1", "2606:4700::1",
	    "::ffff:8.8.8.8" };
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(priv) / sizeof(priv[0]); i++)
		if (!addr_private(priv[i]))
			fail_msg("%s is private", priv[i]);
	for (i = 0; i < sizeof(pub) / sizeof(pub[0]); i++)
		if (addr_private(pub[i]))
			fail_msg("%s is public", pub[i]);
}

/* addr's group (http_addr_group()) as "family text" */
static void
group_of(const char *addr, char *out, size_t len)
{
	struct sockaddr_storage	 ss;
	unsigned char		 key[HTTP_GROUP_LEN];
	char			 text[INET6_ADDRSTRLEN];
	int			 family;

	sa_of(addr, &ss);
	assert_int_equal(http_addr_group((struct sockaddr *)&ss, sizeof(ss),
	    &family, key), 0);
	assert_non_null(inet_ntop(family, key, text, sizeof(text)));
	(void)snprintf(out, len, "%s %s", family == AF_INET ? "v4" : "v6",
	    text);
	/* past the group's bytes, zeros: keys compare whole */
	for (size_t i = family == AF_INET ? 4 : 8; i < HTTP_GROUP_LEN; i++)
		assert_int_equal(key[i], 0);
}

/*
 * The group a client counts in for per-address caps: one for both
 * http.maxConnectionsPerClient and sessions.maxPerAddress.
 */
static void
test_addr_group(void **state)
{
	static const char *const cases[][2] = {
		{ "192.0.2.7", "v4 192.0.2.7" },
		{ "::ffff:192.0.2.7", "v4 192.0.2.7" },
		{ "2001:db8:1:2:aaaa::1", "v6 2001:db8:1:2::" },
		{ "2001:db8:1:2:ffff:ffff:ffff:ffff", "v6 2001:db8:1:2::" },
		{ "2001:db8:1:3::1", "v6 2001:db8:1:3::" },
		{ "::1", "v6 ::" },
	};
	struct sockaddr_un	 sun;
	unsigned char		 key[HTTP_GROUP_LEN];
	char			 got[96];
	size_t			 i;
	int			 family;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		group_of(cases[i][0], got, sizeof(got));
		assert_string_equal(got, cases[i][1]);
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	assert_int_equal(http_addr_group((struct sockaddr *)&sun, sizeof(sun),
	    &family, key), -1);
}

/* http_url_redact(): what of a URL may be stored, logged or shown */
static void
test_url_redact(void **state)
{
	static const char *const cases[][2] = {
		{ "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp" },
		{ "https://user:s3cret@mcp.example.com/mcp",
		    "https://***@mcp.example.com/mcp" },
		{ "https://tok@h/mcp", "https://***@h/mcp" },
		/* the last '@' ends the userinfo */
		{ "https://a@b:p@ss@h:8443/x", "https://***@h:8443/x" },
		{ "https://h/mcp?api_key=K1&region=eu&flag&&x=",
		    "https://h/mcp?api_key=***&region=***&***&&x=***" },
		{ "https://h/mcp?a=1;b=2#frag", "https://h/mcp?a=***;b=***#***" },
		{ "https://u:p@h?token=t", "https://***@h?token=***" },
		/* an '@' past the authority is the path's */
		{ "https://h/a@b?k=v", "https://h/a@b?k=***" },
		{ "http://[::1]:80/p?", "http://[::1]:80/p?" },
		{ "http://h/p#", "http://h/p#" },
		{ "https://h", "https://h" },
		/* not a URL with an authority: its query still */
		{ "unix:/run/x?secret=1", "unix:/run/x?secret=***" },
		{ "", "" },
	};
	size_t	 i;
	char	*r, *r2;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_non_null(r = http_url_redact(cases[i][0]));
		if (strcmp(r, cases[i][1]) != 0)
			fail_msg("%s: got %s, want %s", cases[i][0], r,
			    cases[i][1]);
		/* redacting what is redacted changes nothing */
		assert_non_null(r2 = http_url_redact(r));
		assert_string_equal(r2, r);
		free(r);
		free(r2);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_redact),
		cmocka_unit_test(test_addr_group),
		cmocka_unit_test(test_addr_private),
		cmocka_unit_test(test_url_split),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_lines, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_many_headers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refused_heads, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_404, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sse_streaming, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_mid_response, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_in_data, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cancel_in_head, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cancel_other_in_data,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_other_in_done,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_outside, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cancel_before_start,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_in_data, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unix_socket, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_interim_and_trailers,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_head_headers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stale_reuse, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_free_in_flight, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
