/*
 * The HTTP/1.1 server's replies (httpd.h): the status line and headers
 * built in one buffer, a whole reply or a chunked stream added to the
 * connection's output and written at once from the owner's own call
 * (only what the socket cannot take waits for EV_WRITE), and the
 * request ended once its reply is out.  A request refused before its
 * owner saw it is answered here too.  The connections are httpd.c's.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "proto/headers.h"
#include "shared/log.h"
#include "worker/http/httpd.h"
#include "worker/http/httpd_int.h"

static void	 conn_head(struct httpd_conn *, int, size_t,
		    enum reply_framing);
static const char *httpd_reason(int);
static const char *httpd_date(struct httpd *);

/* a request refused before its owner saw it: answer and close */
void
httpd_conn_refuse(struct httpd_conn *c, int status, const char *why)
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
	httpd_conn_timer(c, 0);
	conn_head(c, status, len, FRAME_LENGTH);
	/* why is one of http_req.c's fixed texts: nothing to escape */
	evbuffer_add(c->c_out, "Content-Type: application/json\r\n\r\n", 34);
	evbuffer_add(c->c_out, pre, strlen(pre));
	evbuffer_add(c->c_out, why, strlen(why));
	evbuffer_add(c->c_out, "\"}}", 3);
	c->c_state = CONN_SENDING;
	httpd_conn_flush(c);
}

void
httpd_conn_flush(struct httpd_conn *c)
{
	size_t	left;
	int	n = 0;

	if (c->c_fd == -1)
		return;
	if ((left = evbuffer_get_length(c->c_out)) > 0) {
		n = evbuffer_write(c->c_out, c->c_fd);
		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			httpd_conn_gone(c);
			return;
		}
		left = evbuffer_get_length(c->c_out);
	}
	if (left > 0) {
		/* the timeout is for a reader that stalls, not a slow one */
		if (!c->c_wpending || n > 0)
			httpd_conn_timer(c, 1);
		if (!c->c_wpending) {
			(void)event_add(c->c_wev, NULL);
			c->c_wpending = 1;
		}
		return;
	}
	if (c->c_wpending) {
		event_del(c->c_wev);
		c->c_wpending = 0;
		httpd_conn_timer(c, c->c_state == CONN_READING);
	}
	if (c->c_state == CONN_SENDING)
		httpd_conn_finish(c);
}

/* the reply is out, or cannot be: the request ends here */
void
httpd_conn_finish(struct httpd_conn *c)
{
	struct httpd_req	*req = &c->c_req;
	httpd_req_cb		 done = req->r_dispatched ? req->r_done_cb :
				    NULL;
	void			*done_arg = req->r_done_arg;
	int			 keep = c->c_fd != -1 && !req->r_close;
	size_t			 used = req->r_len;

	httpd_conn_hold(c);
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
	req->r_rpc_code = 0;
	req->r_trace = NULL;
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
			httpd_conn_timer(c, 1);
		}
		httpd_conn_unhold(c);
		return;
	}
	if (used < c->c_inlen)
		memmove(c->c_in, c->c_in + used, c->c_inlen - used);
	c->c_inlen -= used;
	c->c_idle = httpd_now_ms();
	c->c_served = 1;
	c->c_start = c->c_inlen > 0 ? c->c_idle : 0;
	httpd_conn_timer(c, 1);
	/* a pipelined request: served from the loop, not from inside the
	 * owner's call that ended this one */
	if (c->c_inlen > 0 && !c->c_inproc)
		event_active(c->c_rev, EV_READ, 0);
	httpd_conn_unhold(c);
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
	httpd_conn_hold(c);
	if (c->c_fd == -1) {
		httpd_conn_finish(c);
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
	httpd_conn_flush(c);
done:
	if (body != NULL)
		(void)evbuffer_drain(body, evbuffer_get_length(body));
	httpd_conn_unhold(c);
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
	httpd_conn_hold(c);
	/* HTTP/1.0 has no chunks: the stream ends with the connection */
	if (req->r_head.hh_minor == 0)
		req->r_close = 1;
	conn_head(c, status, 0, req->r_head.hh_minor >= 1 ? FRAME_CHUNKED :
	    FRAME_CLOSE);
	evbuffer_add(c->c_out, "\r\n", 2);
	c->c_state = CONN_STREAMING;
	httpd_conn_flush(c);
	httpd_conn_unhold(c);
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
	httpd_conn_hold(c);
	if (req->r_head.hh_minor >= 1) {
		num[sizeof(num) - 2] = '\r';
		num[sizeof(num) - 1] = '\n';
		s = proto_utoa(num + sizeof(num) - 2, len, 16);
		evbuffer_add(c->c_out, s, (size_t)(num + sizeof(num) - s));
		evbuffer_add(c->c_out, data, len);
		evbuffer_add(c->c_out, "\r\n", 2);
	} else
		evbuffer_add(c->c_out, data, len);
	httpd_conn_flush(c);
	httpd_conn_unhold(c);
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
	httpd_conn_hold(c);
	if (c->c_fd == -1)
		httpd_conn_finish(c);
	else {
		if (req->r_head.hh_minor >= 1 && !req->r_nobody)
			evbuffer_add(c->c_out, "0\r\n\r\n", 5);
		c->c_state = CONN_SENDING;
		httpd_conn_flush(c);
	}
	httpd_conn_unhold(c);
}
