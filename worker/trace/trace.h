/*
 * Tracing (vmcpd.yaml telemetry:, docs/ARCHITECTURE.md, Tracing): the
 * spans of one process, per the OpenTelemetry semantic conventions for
 * MCP.  A client's POST /mcp gets a SERVER span (front.c), the phases
 * that wait get INTERNAL ones, each request sent to a backend a CLIENT
 * one (backend.c), whose context the backend request carries
 * (traceparent and tracestate as headers and in params._meta).
 *
 * Sampling is parent-based: a caller's sampled flag decides; with no
 * caller context, samplingRate on the trace id.  An unsampled request
 * builds no span: with a caller context it carries a non-recording one
 * that only passes the caller's traceparent on, without one nothing.
 * Ended spans wait in the process's queue (trace_export.c) for the
 * exporter; a span is never shared between processes.
 *
 * A child is made under a struct trace_ref, a copy of its parent's
 * context: the parent may end (its client gone) while a backend call
 * made under it goes on.
 */
#ifndef VMCPD_TRACE_H
#define VMCPD_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "shared/otlp.h"
#include "shared/trace_ref.h"
#include "shared/tracectx.h"

struct worker;

#define TRACE_ATTRS_MAX	20

struct trace_span {
	struct otlp_span	 ts_os;
	struct otlp_attr	 ts_attrs[TRACE_ATTRS_MAX];
	uint32_t		 ts_owned;	/* attrs whose value is owned */
	uint32_t		 ts_keys;	/* a filter of the keys set */
	int			 ts_recording;	/* else only passes tr on */
	struct trace_ref	 ts_ref;	/* children's context */
	char			*ts_name;	/* owned, or NULL */
	char			*ts_msg;
	size_t			 ts_buflen;
	char			 ts_buf[512];	/* its strings, mostly */
	/* a SERVER span's INTERNAL child of the phase that waits now */
	struct trace_span	*ts_phase;
};

/* tracing on in this process: callers test it before any work */
extern int trace_enabled;

/* this process's tracer and span exporter, and its metrics exporter,
 * from cf_telemetry (role: its vmcpd.process attribute); 0, or -1
 * (logged: tracing stays off) */
int	trace_init(struct worker *, const char *role);
/* spans not yet sent dropped, the exporters stopped */
void	trace_fini(void);
/* the process drains: the spans queued, and those of the requests
 * still to end, are sent before it exits (it is held while any wait or
 * one is in flight, within the drain's deadline) */
void	trace_drain(void);

/*
 * A client request's SERVER span, under the caller's traceparent and
 * tracestate (header values or params._meta's, any bytes; NULL: none)
 * and baggage (kept only with propagateBaggage): a recording span, a
 * non-recording one (unsampled, with a context to pass on), or NULL.
 */
struct trace_span *trace_server_begin(const char *traceparent,
	    size_t tplen, const char *tracestate, size_t tslen,
	    const char *baggage, size_t bglen);
/* a POST /mcp's SERVER span begun and kept on req, and ended once its
 * reply is written (trace_req.c) */
struct httpd_req;
void	trace_request_begin(struct httpd_req *);
void	trace_request_end(struct httpd_req *);
/* its method, once the front knows it (the pipeline adds the target) */
struct mcp_method;
void	trace_request_method(struct httpd_req *, const struct mcp_method *);
/*
 * An INTERNAL span name under a SERVER span s for a phase that waits
 * (authentication's key fetch, token exchange, a rate limit's Redis
 * verdict), and its end (error: why it failed, or NULL): one at a
 * time.  s may be NULL.
 */
void	trace_phase_begin(struct trace_span *s, const char *name);
void	trace_phase_end(struct trace_span *s, const char *error);
/*
 * A span of kind under parent (NULL or unset: a new trace, sampled by
 * samplingRate), named name: recording, or NULL (not sampled; then
 * a non-recording parent's context still passes on: trace_ref_of()).
 */
struct trace_span *trace_begin(const struct trace_ref *parent,
	    enum otlp_span_kind, const char *name);
/* its span name: "method target" (target tlen bytes, may be NULL) */
void	trace_set_name(struct trace_span *, const char *method,
	    const char *target, size_t tlen);
/* attributes; a span already full drops the rest.  s copied. */
void	trace_set_str(struct trace_span *, const char *key, const char *s,
	    size_t len);
void	trace_set_int(struct trace_span *, const char *key, int64_t);
/* status ERROR with error.type type (copied) and message (or NULL) */
void	trace_set_error(struct trace_span *, const char *type,
	    const char *message);
/* ended: queued for export (recording) or freed; NULL: nothing */
void	trace_end(struct trace_span *);
/* a recording span ended as if never started (nothing exported) */
void	trace_discard(struct trace_span *);

/*
 * The context to make children under and to pass on (a copy of s's,
 * or of parent's when s is NULL), into out (cleared first); both may
 * be NULL.
 */
void	trace_ref_of(struct trace_ref *out, const struct trace_span *s,
	    const struct trace_ref *parent);
/* the traceparent a backend request carries under r (NUL-terminated);
 * 0, or -1: r has no context to pass on */
int	trace_ref_header(const struct trace_ref *,
	    char out[TRACECTX_HEADER_LEN + 1]);

/* v in decimal into out, NUL-terminated: its length (an attribute's
 * number as a string, without printf's cost) */
size_t	trace_itoa(char out[24], int64_t v);

/* s's trace id and, recording, its span id (else ""), in hex; -1:
 * s is NULL */
int	trace_ids(const struct trace_span *, char trace[33], char span[17]);

/* the attribute a method's target is named by (gen_ai.tool.name,
 * gen_ai.prompt.name, mcp.resource.uri), or NULL: it has none */
const char *trace_target_key(const struct mcp_method *);

/* the exporter's figures (trace_export.c), for /metrics */
struct trace_stats {
	uint64_t	tst_exported;	/* spans a collector took */
	uint64_t	tst_dropped;	/* spans dropped: queue full, or a
					 * failed export's */
	uint64_t	tst_failures;	/* exports that failed */
};
/* queue an ended recording span (trace.c); the queue frees it */
void	trace_export_push(struct trace_span *);
void	trace_span_free(struct trace_span *);

#endif /* VMCPD_TRACE_H */
