/*
 * The backend edge's per-revision hooks (as nginx's upstream module
 * takes create_request / process_header from each protocol module):
 * how a request, a description, a stream and a subscription go to a
 * 2025-11-25 backend (over its session) and to a 2026-07-28 one (no
 * session; this hop's _meta and headers).  upstream.c walks the call.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/http_client.h"
#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/mheaders.h"
#include "proto/mrequest.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/upstream_stream.h"
#include "worker/upstream/upstream_hooks.h"
#include "worker/upstream/upstream_int.h"

/* --- 2025-11-25: over a backend session --------------------------- */

static int
legacy_ops_send(struct upstream *u, const struct upstream_params *p)
{
	struct backend_req	 br;
	const char		*ptext = p->up_text != NULL ? p->up_text :
				    p->up_owned;
	char			*body;
	size_t			 len;

	backend_next_id(u->u_w, u->u_id, sizeof(u->u_id));
	memset(&br, 0, sizeof(br));
	if ((body = upstream_trace_body(u, u->u_method, p, p->up_tree, ptext,
	    p->up_len, &len, &br.br_span)) == NULL)
		return -1;
	br.br_trace = &u->u_trace;
	br.br_spanned = 1;
	br.br_method = u->u_method;
	br.br_id = u->u_id;
	br.br_body = body;
	br.br_len = len;
	br.br_bsid = u->u_bsid;
	br.br_version = u->u_bver;
	/* per-principal credentials (token_exchange) */
	upstream_cred_note(u);
	backend_cred_set(u->u_authz);
	u->u_call = backend_post(u->u_w, u->u_be, &br, upstream_bcbs_of(u), u);
	backend_cred_set(NULL);
	free(body);
	return u->u_call != NULL ? 0 : -1;
}

/* its description: the initialize result (cached, or the open's) */
static void
legacy_ops_describe(struct upstream *u)
{
	if (u->u_info == NULL) {
		upstream_fail(u, "backend %s: no initialize result",
		    u->u_be->cb_name);
		return;
	}
	upstream_defer(u);
}

static int
legacy_ops_stream(struct upstream *u)
{
	backend_cred_set(u->u_authz);
	u->u_http = backend_get_stream(u->u_w, u->u_be, u->u_bsid,
	    u->u_bver, NULL);
	backend_cred_set(NULL);
	if (u->u_http == NULL)
		return -1;
	if (http_call_start(u->u_http, u->u_hcbs, u->u_arg) == -1) {
		u->u_http = NULL;	/* freed by the client */
		return -1;
	}
	return 0;
}

static enum upstream_stream_end
legacy_ops_stream_end(struct upstream *u, long status)
{
	if (status == 404 || status == 400) {
		/* the backend forgot the session: a new one next time */
		bsession_forget(u->u_w, u->u_scope, u->u_be);
		return UPSTREAM_END_RETRY;
	}
	if (status == 405) {
		log_info("backend %s offers no notification stream",
		    u->u_be->cb_name);
		return UPSTREAM_END_NO_STREAM;
	}
	return UPSTREAM_END_RETRY;
}

/* --- 2026-07-28: no session; this hop's _meta and headers --------- */

#define UPSTREAM_PHDRS_MAX	32

/* a 2026-07-28 request as sent: its body, its headers and their text */
struct modern_out {
	struct backend_req	 mo_br;
	struct backend_hdr	 mo_hdrs[UPSTREAM_PHDRS_MAX + 2];
	char			 mo_names[UPSTREAM_PHDRS_MAX][128];
	char			 mo_name[256];	/* Mcp-Name sent as it is */
	char			*mo_body;
	char			*mo_enc;	/* Mcp-Name encoded */
};

static void
modern_out_clear(struct modern_out *o)
{
	free(o->mo_body);
	free(o->mo_enc);
}

/*
 * The body and headers of a 2026-07-28 request: params text as given
 * (this hop's _meta in it), or the tree with this hop's _meta set; the
 * headers that mirror the body (MCP 2026-07-28, Transports: Mcp-Method,
 * Mcp-Name and the Mcp-Param-* of the tool's schema).  Written out
 * without a tree: this is the hot path.
 */
static int
modern_ops_build(struct upstream *u, const struct upstream_params *p,
    const char *method, struct modern_out *o)
{
	struct backend_req	*br = &o->mo_br;
	struct backend_hdr	*hdrs = o->mo_hdrs;
	const json_t		*v;
	json_t			*info, *tree = NULL;
	const char		*ptext = p->up_text != NULL ? p->up_text :
				    p->up_owned;
	const char		*k, *name = NULL;
	char			*dumped = NULL, *nbuf = NULL;
	size_t			 plen = p->up_len, n = 0, np = 0;
	int			 rc = -1;

	memset(br, 0, sizeof(*br));
	o->mo_body = o->mo_enc = NULL;
	if (ptext == NULL) {
		if ((info = upstream_client_info()) == NULL)
			return -1;
		tree = proto_modern_params(p->up_tree, p->up_caps, info,
		    p->up_level);
		json_decref(info);
		if (tree == NULL || (dumped = jsonrpc_dump(tree, &plen)) ==
		    NULL)
			goto done;
		ptext = dumped;
	}
	backend_next_id(u->u_w, u->u_id, sizeof(u->u_id));
	if ((o->mo_body = upstream_trace_body(u, method, p, tree != NULL ?
	    tree : p->up_tree, ptext, plen, &br->br_len, &br->br_span)) ==
	    NULL)
		goto done;
	br->br_trace = &u->u_trace;
	br->br_spanned = 1;
	br->br_method = method;
	hdrs[n].bh_name = "Mcp-Method";
	hdrs[n++].bh_value = method;
	if (p->up_name != NULL && p->up_namelen < sizeof(o->mo_name) &&
	    proto_hdr_plain(p->up_name, p->up_namelen)) {
		/* the usual name, sent as it is: no copy on the heap */
		memcpy(o->mo_name, p->up_name, p->up_namelen);
		o->mo_name[p->up_namelen] = '\0';
		hdrs[n].bh_name = "Mcp-Name";
		hdrs[n++].bh_value = o->mo_name;
	} else {
		if (p->up_name != NULL)
			name = nbuf = strndup(p->up_name, p->up_namelen);
		else
			name = proto_modern_name(method, p->up_tree);
		if (name != NULL) {
			if ((o->mo_enc = proto_hdr_encode(name)) == NULL)
				goto done;
			hdrs[n].bh_name = "Mcp-Name";
			hdrs[n++].bh_value = o->mo_enc;
		}
	}
	json_object_foreach((json_t *)p->up_phdrs, k, v) {
		if (np >= UPSTREAM_PHDRS_MAX || !json_is_string(v) ||
		    (size_t)snprintf(o->mo_names[np], sizeof(o->mo_names[0]),
		    "Mcp-Param-%s", k) >= sizeof(o->mo_names[0]))
			goto done;
		hdrs[n].bh_name = o->mo_names[np++];
		hdrs[n++].bh_value = json_string_value(v);
	}
	br->br_id = u->u_id;
	br->br_body = o->mo_body;
	br->br_version = MCP_VERSION_MODERN;
	br->br_hdrs = hdrs;
	br->br_nhdrs = n;
	/* (later, per-principal credentials: their headers go in br) */
	rc = 0;
done:
	if (rc == -1) {
		trace_discard(br->br_span);	/* never sent */
		br->br_span = NULL;
	}
	free(nbuf);
	free(dumped);
	json_decref(tree);
	return rc;
}

static int
modern_ops_send(struct upstream *u, const struct upstream_params *p)
{
	struct modern_out	 o;
	int			 rc = -1;

	backend_cred_set(u->u_authz);
	if (modern_ops_build(u, p, u->u_method, &o) == 0 &&
	    (u->u_call = backend_post(u->u_w, u->u_be, &o.mo_br,
	    upstream_bcbs_of(u), u)) != NULL)
		rc = 0;
	backend_cred_set(NULL);
	modern_out_clear(&o);
	return rc;
}

/* its description: server/discover, unless one is cached */
static void
modern_ops_describe(struct upstream *u)
{
	struct upstream_params	 p;
	json_t			*info;

	info = backend_info_get(u->u_w, u->u_be);
	if (proto_era_of_version(json_string_value(json_object_get(info,
	    "pv"))) == PROTO_ERA_MODERN) {
		u->u_info = json_pack("{s:O}", "result",
		    json_object_get(info, "result"));
		json_decref(info);
		if (u->u_info == NULL)
			upstream_fail(u, "backend %s: out of memory",
			    u->u_be->cb_name);
		else
			upstream_defer(u);
		return;
	}
	json_decref(info);
	memset(&p, 0, sizeof(p));
	u->u_method = "server/discover";
	u->u_state = US_SENDING;
	if (modern_ops_send(u, &p) == -1)
		upstream_fail(u, "backend %s: cannot send server/discover",
		    u->u_be->cb_name);
}

/* subscriptions/listen: its stream stays open */
static int
modern_ops_stream(struct upstream *u)
{
	struct upstream_params	 p;
	struct modern_out	 o;
	int			 rc = -1;

	memset(&p, 0, sizeof(p));
	p.up_tree = u->u_sparams;
	p.up_caps = u->u_scaps;
	backend_cred_set(u->u_authz);
	if (modern_ops_build(u, &p, "subscriptions/listen", &o) == 0 &&
	    (u->u_http = backend_post_stream(u->u_w, u->u_be, &o.mo_br)) !=
	    NULL) {
		backend_cred_set(NULL);
		if (http_call_start(u->u_http, u->u_hcbs, u->u_arg) == 0)
			rc = 0;
		else
			u->u_http = NULL;	/* freed by the client */
	}
	backend_cred_set(NULL);
	modern_out_clear(&o);
	return rc;
}

/*
 * A 2026-07-28 server answers a method it does not serve with 404 and
 * -32601 (MCP 2026-07-28, Transports): no listen stream, as a 405 to a
 * Legacy GET says.  Any other 4xx may be a Legacy server now at that
 * URL: its era is probed again on reconnect.
 */
static enum upstream_stream_end
modern_ops_stream_end(struct upstream *u, long status)
{
	if (status == 404) {
		log_info("backend %s offers no notification stream "
		    "(subscriptions/listen not found)", u->u_be->cb_name);
		return UPSTREAM_END_NO_STREAM;
	}
	if (status >= 400 && status < 500)
		era_forget(u->u_w, u->u_be, "subscriptions/listen refused");
	return UPSTREAM_END_RETRY;
}

/* no resources/subscribe in 2026-07-28: the listen stream asks anew */
static void
modern_ops_subscribe(struct upstream *u)
{
	if (upstream_hooks.uh_resubscribe != NULL)
		upstream_hooks.uh_resubscribe(u->u_w, u->u_be);
	if ((u->u_info = json_pack("{s:{}}", "result")) == NULL) {
		upstream_fail(u, "out of memory");
		return;
	}
	upstream_defer(u);
}

static const struct upstream_ops upstream_legacy_ops = {
	MCP_VERSION_LEGACY, 1, 1, legacy_ops_send, legacy_ops_describe,
	legacy_ops_stream, legacy_ops_stream_end, backend_call_abort, NULL
};

/* closing a 2026-07-28 request's stream is what cancels it (MCP
 * 2026-07-28, Transports) */
static const struct upstream_ops upstream_modern_ops = {
	MCP_VERSION_MODERN, 0, 0, modern_ops_send, modern_ops_describe,
	modern_ops_stream, modern_ops_stream_end, NULL, modern_ops_subscribe
};

const struct upstream_ops *
upstream_ops_of(enum proto_era era)
{
	return era == PROTO_ERA_MODERN ? &upstream_modern_ops :
	    &upstream_legacy_ops;
}
