/*
 * A backend request as a CLIENT span (worker/trace/trace.h): named
 * "{mcp.method.name} {target}" with the backend's own name of its
 * target, its backend, address and revision; its context carried as
 * the traceparent and tracestate headers (and baggage, when
 * propagateBaggage passes it); ended with the call, with its HTTP
 * status and, on failure, error.type.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "worker/trace/trace.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_int.h"

/* a backend's server.address and server.port, its URL read once */
struct backend_addr {
	const struct config_backend	*ba_be;
	char				 ba_host[256];
	size_t				 ba_hostlen;
	unsigned long			 ba_port;
};

static const struct backend_addr *
backend_trace_addr(const struct config_backend *be)
{
	static struct backend_addr	 cache[16];
	struct backend_addr		*a;
	struct http_url			 u;
	const char			*h;
	size_t				 n;

	a = &cache[((uintptr_t)be >> 4) % (sizeof(cache) / sizeof(cache[0]))];
	if (a->ba_be == be)
		return a;
	if (be->cb_url == NULL || http_url_split(be->cb_url, &u) == -1)
		return NULL;
	/* the host as written, brackets of an IPv6 one off */
	h = u.hu_auth;
	n = u.hu_hostlen;
	if (n >= 2 && h[0] == '[') {
		h++;
		n -= 2;
	}
	if (n >= sizeof(a->ba_host))
		return NULL;
	memcpy(a->ba_host, h, n);
	a->ba_hostlen = n;
	a->ba_port = u.hu_port;
	a->ba_be = be;
	return a;
}

struct trace_span *
backend_trace_begin(const struct config_backend *be,
    const struct trace_ref *parent, const char *method, const char *key,
    const char *target, size_t tlen)
{
	struct trace_span		*s;
	const struct backend_addr	*a;

	if ((s = trace_begin(parent, OTLP_KIND_CLIENT, NULL)) == NULL)
		return NULL;
	trace_set_name(s, method, target, tlen);
	trace_set_str(s, "mcp.method.name", method, strlen(method));
	if (key != NULL && target != NULL)
		trace_set_str(s, key, target, tlen);
	trace_set_str(s, "vmcpd.backend.name", be->cb_name,
	    strlen(be->cb_name));
	if (be->cb_transport == TRANSPORT_STDIO)
		trace_set_str(s, "network.transport", "pipe", 4);
	else if ((a = backend_trace_addr(be)) != NULL) {
		trace_set_str(s, "server.address", a->ba_host, a->ba_hostlen);
		trace_set_int(s, "server.port", (int64_t)a->ba_port);
	}
	return s;
}

void
backend_trace_note(struct trace_span *s, const struct backend_req *br)
{
	if (s == NULL)
		return;
	if (br->br_version != NULL)
		trace_set_str(s, "mcp.protocol.version", br->br_version,
		    strlen(br->br_version));
	if (br->br_bsid != NULL)
		trace_set_str(s, "mcp.session.id", br->br_bsid,
		    strlen(br->br_bsid));
	if (br->br_id != NULL)
		trace_set_str(s, "jsonrpc.request.id", br->br_id,
		    strlen(br->br_id));
}

int
backend_trace_headers(struct http_call *hc, const struct trace_span *s,
    const struct trace_ref *parent)
{
	struct trace_ref	 ref;
	char			 tp[TRACECTX_HEADER_LEN + 1];
	int			 rc = 0;

	trace_ref_of(&ref, s, parent);
	if (trace_ref_header(&ref, tp) == 0 &&
	    (http_call_add_header(hc, "traceparent", tp) == -1 ||
	    (ref.tr_state != NULL &&
	    http_call_add_header(hc, "tracestate", ref.tr_state) == -1) ||
	    (ref.tr_baggage != NULL &&
	    http_call_add_header(hc, "baggage", ref.tr_baggage) == -1)))
		rc = -1;
	trace_ref_clear(&ref);
	return rc;
}

void
backend_trace_done(struct trace_span *s, int rc, long status,
    const char *errmsg)
{
	char	 t[24];

	if (s == NULL)
		return;
	if (status != 0)
		trace_set_int(s, "http.response.status_code", status);
	if (rc != 0)
		trace_set_error(s, status >= 400 ? (snprintf(t, sizeof(t),
		    "%ld", status), t) : "transport", errmsg);
}

void
backend_trace_end(struct trace_span *s, int finished)
{
	if (s != NULL && !finished)
		trace_set_error(s, "cancelled", NULL);
	trace_end(s);
}
