/*
 * The HTTP requests to a backend (backend.h), made on the worker's
 * shared/http_client.c: an http_call to its URL, or to its bridge's
 * Unix socket (stdio and legacy SSE backends), with its CA bundle and
 * outgoingAuth credential (backend_http_setup()) and the MCP headers of
 * a POST; the POSTs whose answer nobody reads (a response to the
 * backend's request, a notification), the standalone GET stream, the
 * DELETE of a session.  A call whose answer is read is backend.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/paths.h"
#include "worker/process/process.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_int.h"


/*
 * What every request to a streamable-http backend gets (they all start
 * here or in the era probe): its caBundlePath for https:// (else the
 * system's; certificates are always verified), and the header of
 * outgoingAuth header_injection (config_outauth.c allows it only for
 * these backends).
 */
static const char *backend_cred;

/*
 * The Authorization of the next request made (token_exchange's, per
 * principal: the upstream edge sets it around each call it makes, and
 * clears it).  Taken by that request: a request to a token_exchange
 * backend without one is not made at all.
 */
void
backend_cred_set(const char *authz)
{
	backend_cred = authz;
}

const char *
backend_cred_get(void)
{
	return backend_cred;
}

int
backend_http_setup(struct http_call *hc, const struct config_backend *be)
{
	const char	*cred = backend_cred;

	backend_cred = NULL;
	if (be->cb_ca_bundle != NULL &&
	    http_call_set_ca_file(hc, be->cb_ca_bundle) == -1)
		return -1;
	if (be->cb_outauth == NULL)
		return 0;
	switch (be->cb_outauth->oa_type) {
	case CONFIG_OUTAUTH_HEADER:
		return http_call_add_header(hc,
		    be->cb_outauth->oa_header_name,
		    be->cb_outauth->oa_header_value);
	case CONFIG_OUTAUTH_EXCHANGE:
		if (cred == NULL)
			return -1;
		return http_call_add_header(hc, "Authorization", cred);
	case CONFIG_OUTAUTH_CODE:
		/* a principal's link (upstream_authz() refuses a call
		 * without one); the shared scope's lists go without */
		if (cred == NULL)
			return 0;
		return http_call_add_header(hc, "Authorization", cred);
	default:
		return 0;
	}
}

/* an HTTP call to the backend: its URL, or (stdio, legacy SSE) its
 * bridge's Unix socket */
static struct http_call *
backend_http_new(struct worker *w, const struct config_backend *be,
    const char *method)
{
	struct http_call	*hc;
	char			 path[256];

	if (be->cb_transport == TRANSPORT_STREAMABLE_HTTP) {
		if ((hc = http_call_new(w->w_hc, method, be->cb_url)) == NULL)
			return NULL;
		if (backend_http_setup(hc, be) == -1) {
			http_call_cancel(hc);
			return NULL;
		}
		return hc;
	}
	if (paths_bridge_socket(w->w_conf, be->cb_name, path,
	    sizeof(path)) == -1 ||
	    (hc = http_call_new(w->w_hc, method, "http://bridge/mcp")) == NULL)
		return NULL;
	if (http_call_set_unix_socket(hc, path) == -1) {
		http_call_cancel(hc);
		return NULL;
	}
	return hc;
}

struct http_call *
backend_get_stream(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, const char *last_event_id)
{
	struct http_call *hc;

	if ((hc = backend_http_new(w, be, "GET")) == NULL)
		return NULL;
	(void)http_call_add_header(hc, "Accept", "text/event-stream");
	if (bsid != NULL)
		(void)http_call_add_header(hc, "Mcp-Session-Id", bsid);
	if (version != NULL)
		(void)http_call_add_header(hc, "MCP-Protocol-Version", version);
	if (last_event_id != NULL)
		(void)http_call_add_header(hc, "Last-Event-ID", last_event_id);
	http_call_set_timeout(hc, 0);
	return hc;
}

static void
backend_add_headers(struct http_call *hc, const char *bsid,
    const char *version)
{
	/* MCP 2025-11-25, Transports: a POST's two fixed headers, in one;
	 * a 2026-07-28 one's version with them */
	static const char lines[] = "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n";
	static const char modern[] = "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: " MCP_VERSION_MODERN "\r\n";

	if (bsid == NULL && version != NULL &&
	    strcmp(version, MCP_VERSION_MODERN) == 0) {
		(void)http_call_add_lines(hc, modern, sizeof(modern) - 1,
		    HTTP_LINES_CTYPE | HTTP_LINES_ACCEPT);
		return;
	}
	(void)http_call_add_lines(hc, lines, sizeof(lines) - 1,
	    HTTP_LINES_CTYPE | HTTP_LINES_ACCEPT);
	if (bsid != NULL)
		(void)http_call_add_header(hc, "Mcp-Session-Id", bsid);
	if (version != NULL)
		(void)http_call_add_header(hc, "MCP-Protocol-Version", version);
}

/* a POST of one message whose answer carries nothing for us; cbs
 * (if any) learn when it is through */
struct http_call *
backend_post_start(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, json_t *msg,
    const struct http_call_cbs *cbs, void *arg)
{
	struct http_call	*hc;
	char			*body;
	size_t			 len;

	if ((body = jsonrpc_dump(msg, &len)) == NULL)
		return NULL;
	if ((hc = backend_http_new(w, be, "POST")) == NULL) {
		free(body);
		return NULL;
	}
	backend_add_headers(hc, bsid, version);
	if (http_call_set_body(hc, body, len) == -1) {
		free(body);
		http_call_cancel(hc);
		return NULL;
	}
	free(body);
	http_call_set_timeout(hc, be->cb_timeout_ms);
	if (http_call_start(hc, cbs, arg) == -1)
		return NULL;	/* freed by the client */
	return hc;
}

/* fire and forget: a response to a backend's request, a notification */
void
backend_post_nowait(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, json_t *msg)
{
	(void)backend_post_start(w, be, bsid, version, msg, NULL, NULL);
}

/* a POST with its headers; the credentials of later issues go here */
struct http_call *
backend_post_new(struct worker *w, const struct config_backend *be,
    const struct backend_req *br)
{
	struct http_call	*hc;
	size_t			 i;

	if ((hc = backend_http_new(w, be, "POST")) == NULL)
		return NULL;
	backend_add_headers(hc, br->br_bsid, br->br_version);
	for (i = 0; i < br->br_nhdrs; i++)
		if (http_call_add_header(hc, br->br_hdrs[i].bh_name,
		    br->br_hdrs[i].bh_value) == -1)
			goto fail;
	if (http_call_set_body(hc, br->br_body, br->br_len) == -1)
		goto fail;
	return hc;
fail:
	http_call_cancel(hc);
	return NULL;
}

struct http_call *
backend_post_stream(struct worker *w, const struct config_backend *be,
    const struct backend_req *br)
{
	struct http_call *hc;

	if ((hc = backend_post_new(w, be, br)) != NULL)
		http_call_set_timeout(hc, 0);
	return hc;
}

int
backend_notify(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, const char *method,
    json_t *params)
{
	json_t *n;

	if ((n = jsonrpc_notification_new(method, json_incref(params))) ==
	    NULL)
		return -1;
	backend_post_nowait(w, be, bsid, version, n);
	json_decref(n);
	return 0;
}

/* 0 once started: then cbs->hc_done (if any) runs exactly once */
int
backend_session_delete(struct worker *w, const struct config_backend *be,
    const char *bsid, const char *version, uint64_t timeout_ms,
    const struct http_call_cbs *cbs, void *arg)
{
	struct http_call *hc;

	if (bsid == NULL)
		return -1;
	if ((hc = backend_http_new(w, be, "DELETE")) == NULL)
		return -1;
	(void)http_call_add_header(hc, "Mcp-Session-Id", bsid);
	if (version != NULL)
		(void)http_call_add_header(hc, "MCP-Protocol-Version", version);
	http_call_set_timeout(hc, timeout_ms);
	return http_call_start(hc, cbs, arg);
}
