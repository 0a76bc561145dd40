/*
 * A request the upstream edge sends, traced (worker/trace/trace.h): its
 * CLIENT span made before its body, so that the body's params._meta
 * carries the span's context (traceparent, tracestate; baggage only
 * with propagateBaggage) as the headers do: a stdio backend reads
 * only _meta, and an MCP server may read either (MCP 2026-07-28,
 * _meta: the keys reserved for W3C Trace Context).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonrpc.h"
#include "proto/jsonspan.h"
#include "proto/meta_trace.h"
#include "proto/method.h"
#include "shared/trace_ref.h"
#include "worker/trace/trace.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/upstream_int.h"

/* the backend's own name of the request's target (Mcp-Name's, the
 * tree's, or the params text's route member), or NULL */
static const char *
upstream_trace_target(const struct upstream_params *p, json_t *tree,
    const char *ptext, size_t plen, const struct mcp_method *mm,
    size_t *lenp)
{
	const json_t	*v;
	const char	*t;
	size_t		 vlen;

	if (p != NULL && p->up_name != NULL) {
		*lenp = p->up_namelen;
		return p->up_name;
	}
	if (mm == NULL || mm->mm_route_key == NULL)
		return NULL;
	if (json_is_string(v = json_object_get(tree, mm->mm_route_key))) {
		*lenp = json_string_length(v);
		return json_string_value(v);
	}
	/* a string without escapes, as a name or URI usually is */
	if (ptext != NULL && (t = proto_json_value(ptext, plen,
	    mm->mm_route_key, &vlen)) != NULL && vlen >= 2 && t[0] == '"' &&
	    memchr(t, '\\', vlen) == NULL) {
		*lenp = vlen - 2;
		return t + 1;
	}
	return NULL;
}

char *
upstream_trace_body(struct upstream *u, const char *method,
    const struct upstream_params *p, json_t *tree, const char *ptext,
    size_t plen, size_t *lenp, struct trace_span **spanp)
{
	const struct mcp_method	*mm = NULL;
	struct trace_ref	 ref;
	const char		*target;
	char			 tp[TRACECTX_HEADER_LEN + 1];
	char			*dumped = NULL, *spliced, *body;
	size_t			 tlen = 0, slen;

	*spanp = NULL;
	/* a stream open for good (subscriptions/listen) is no span */
	if (!trace_enabled || u->u_stream)
		return upstream_body(u->u_id, method, tree, ptext, plen, lenp);
	*spanp = backend_trace_begin(u->u_be, &u->u_trace, method, NULL,
	    NULL, 0);
	/* its target looked for only when it is recorded */
	if (*spanp != NULL && (target = upstream_trace_target(p, tree, ptext,
	    plen, mm = mcp_method_find(method), &tlen)) != NULL) {
		trace_set_name(*spanp, method, target, tlen);
		if (trace_target_key(mm) != NULL)
			trace_set_str(*spanp, trace_target_key(mm), target,
			    tlen);
	}
	trace_ref_of(&ref, *spanp, &u->u_trace);
	if (trace_ref_header(&ref, tp) == -1) {
		trace_ref_clear(&ref);
		return upstream_body(u->u_id, method, tree, ptext, plen, lenp);
	}
	if (ptext == NULL && tree != NULL) {
		if ((dumped = jsonrpc_dump(tree, &plen)) == NULL)
			goto fail;
		ptext = dumped;
	}
	spliced = proto_params_trace_text(ptext, ptext != NULL ? plen : 0,
	    tp, ref.tr_state, ref.tr_baggage, &slen);
	free(dumped);
	trace_ref_clear(&ref);
	if (spliced == NULL)
		goto fail_span;
	body = upstream_body(u->u_id, method, NULL, spliced, slen, lenp);
	free(spliced);
	if (body == NULL)
		goto fail_span;
	return body;
fail:
	trace_ref_clear(&ref);
fail_span:
	trace_discard(*spanp);
	*spanp = NULL;
	return NULL;
}
