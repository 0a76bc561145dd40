/*
 * A client's POST /mcp as a SERVER span (trace.h): begun when the
 * request arrives, before its authentication, under the caller's
 * context (the traceparent header, else params._meta.traceparent: a
 * 2026-07-28 client may send only that); ended when its reply is
 * written, with the HTTP status and, on error, error.type.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "proto/meta_trace.h"
#include "proto/method.h"
#include "worker/http/httpd.h"
#include "worker/trace/trace.h"
#include "worker/trace/trace_int.h"

/* client.address: the peer's IP address (a Unix socket's: none) */
static void
trace_request_peer(struct httpd_req *req, struct trace_span *s)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	char			 a[INET6_ADDRSTRLEN];
	const void		*p;

	if (!s->ts_recording || httpd_req_peer(req, &ss, &sl) == -1)
		return;
	if (ss.ss_family == AF_INET) {
		/* dotted quad by hand: inet_ntop() goes through sprintf */
		const uint8_t	*q = (const uint8_t *)
				    &((struct sockaddr_in *)&ss)->sin_addr;
		size_t		 n = 0, i;

		for (i = 0; i < 4; i++) {
			if (i > 0)
				a[n++] = '.';
			n += trace_itoa(a + n, q[i]);
		}
		trace_set_str(s, "client.address", a, n);
		return;
	}
	if (ss.ss_family == AF_INET6)
		p = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	else
		return;
	if (inet_ntop(ss.ss_family, p, a, sizeof(a)) != NULL)
		trace_set_str(s, "client.address", a, strlen(a));
}

void
trace_request_begin(struct httpd_req *req)
{
	struct proto_trace_meta	 tm;
	struct tracectx		 ctx;
	struct trace_span	*s;
	const char		*tp, *ts = NULL, *bg, *body;
	size_t			 tplen = 0, tslen = 0, bglen = 0, blen;

	memset(&tm, 0, sizeof(tm));
	/* a header that does not parse gives way to _meta's */
	if ((tp = httpd_req_header(req, "traceparent")) != NULL &&
	    tracectx_parse(&ctx, tp, strlen(tp)) == -1)
		tp = NULL;
	bg = trace_baggage ? httpd_req_header(req, "baggage") : NULL;
	/* the body's _meta only when a header does not say it already,
	 * and only if the body names a member it could be (a 2026-07-28
	 * request always has a _meta: no scan of it for nothing) */
	if ((tp == NULL || (bg == NULL && trace_baggage)) &&
	    (body = httpd_req_body(req, &blen)) != NULL &&
	    (memmem(body, blen, "\"traceparent\"", 13) != NULL ||
	    (trace_baggage && memmem(body, blen, "\"baggage\"", 9) != NULL)) &&
	    proto_meta_trace_find(body, blen, &tm) == -1)
		memset(&tm, 0, sizeof(tm));
	if (tp != NULL) {
		tplen = strlen(tp);
		if ((ts = httpd_req_header(req, "tracestate")) != NULL)
			tslen = strlen(ts);
	} else if ((tp = tm.tm_parent) != NULL) {
		tplen = tm.tm_parentlen;
		ts = tm.tm_state;
		tslen = tm.tm_statelen;
	}
	if (bg != NULL)
		bglen = strlen(bg);
	else if ((bg = tm.tm_baggage) != NULL)
		bglen = tm.tm_baggagelen;
	if ((s = trace_server_begin(tp, tplen, ts, tslen, bg, bglen)) == NULL)
		return;
	trace_set_name(s, "mcp", NULL, 0);
	trace_set_str(s, "network.protocol.name", "http", 4);
	trace_request_peer(req, s);
	httpd_req_set_trace(req, s);
}

void
trace_request_method(struct httpd_req *req, const struct mcp_method *mm)
{
	struct trace_span	*s = httpd_req_trace(req);

	if (s == NULL || mm == NULL)
		return;
	trace_set_name(s, mm->mm_name, NULL, 0);
	trace_set_str(s, "mcp.method.name", mm->mm_name, mm->mm_len);
}

void
trace_request_end(struct httpd_req *req)
{
	struct trace_span	*s = httpd_req_trace(req);
	unsigned int		 tag = httpd_req_tag(req);
	int			 st = httpd_req_status(req), code;
	char			 t[16];

	if (s == NULL)
		return;
	/* a phase the answer cut short (a refusal) ends with it */
	trace_phase_end(s, s->ts_phase != NULL ? "answered before it "
	    "ended" : NULL);
	httpd_req_set_trace(req, NULL);
	if (st != 0)
		trace_set_int(s, "http.response.status_code", st);
	if (tag & HTTPD_TAG_ERROR) {
		code = httpd_req_error_code(req);
		(void)snprintf(t, sizeof(t), "%d", code != 0 ? code : st);
		trace_set_error(s, t, NULL);
	} else if (st == 0)
		trace_set_error(s, "aborted", "the client left before the "
		    "answer");
	else if (st >= 400) {
		(void)snprintf(t, sizeof(t), "%d", st);
		trace_set_error(s, t, NULL);
	} else if (tag & HTTPD_TAG_TOOL_ERROR)
		trace_set_error(s, "tool_error", NULL);
	trace_end(s);
}
