/*
 * W3C trace context in an MCP message's params._meta (traceparent,
 * tracestate, baggage: reserved _meta keys without a prefix, MCP
 * 2026-07-28, Overview, section _meta), read from a request's text and
 * written into the params vmcpd sends a backend (meta_trace.c).
 */
#ifndef VMCPD_META_TRACE_H
#define VMCPD_META_TRACE_H

#include <stddef.h>

#include <jansson.h>

/*
 * Spans into the message's text, inside the quotes, or NULL when the
 * member is absent, no string, or a string with an escape (a valid
 * traceparent has none; tracestate and baggage with one are not passed
 * on by this route).  Not checked: see tracectx_parse().
 */
struct proto_trace_meta {
	const char	*tm_parent;	/* traceparent */
	size_t		 tm_parentlen;
	const char	*tm_state;	/* tracestate */
	size_t		 tm_statelen;
	const char	*tm_baggage;	/* baggage */
	size_t		 tm_baggagelen;
};

/*
 * params._meta's trace members of a JSON-RPC message's text (only the
 * top-level params' own _meta): 0 with out filled (all NULL when the
 * text has no "_meta" at all, which costs one memmem()), or -1 when
 * the text is no JSON object, has more than 16 members at the top or
 * more than 32 in that _meta: the caller then has no _meta trace.
 */
int	 proto_meta_trace_find(const char *body, size_t len,
	    struct proto_trace_meta *out);
/* the same on a _meta object's own text (jsonrpc_scan()'s js_meta) */
int	 proto_meta_trace_members(const char *meta, size_t len,
	    struct proto_trace_meta *out);
/*
 * params (plen bytes; NULL or only whitespace: no params) as a new
 * text, malloc'd and NUL-terminated, whose _meta has traceparent set,
 * tracestate and baggage set when not NULL and removed when NULL
 * (whatever the client had there); _meta's other members and params'
 * other members are kept byte for byte, a _meta that is no object is
 * replaced.  Text that the allocation-free scan does not take whole
 * (escaped keys, many members, deep nesting) goes through jansson.
 * NULL: params is no object, a value is not UTF-8, or out of memory.
 */
char	*proto_params_trace_text(const char *params, size_t plen,
	    const char *traceparent, const char *tracestate,
	    const char *baggage, size_t *outlen);
/* the same on a tree (a new _meta where there is none or it is no
 * object; the old one is not changed, as it may be shared): 0, or -1 */
int	 proto_params_trace(json_t *params, const char *traceparent,
	    const char *tracestate, const char *baggage);

#endif /* VMCPD_META_TRACE_H */
