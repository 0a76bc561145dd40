/*
 * Inside the tracer (worker/trace/): what trace.c and trace_export.c
 * share.
 */
#ifndef VMCPD_TRACE_INT_H
#define VMCPD_TRACE_INT_H

#include <stdint.h>

struct worker;

/* an attribute value or a status message past this is cut */
#define TRACE_VALUE_MAX		1024
/* baggage passed on (W3C Baggage: 8192 bytes at most) */
#define TRACE_BAGGAGE_MAX	8192

struct config_telemetry;
struct http_call;
struct http_call_cbs;
struct otlp_buf;

uint64_t trace_now_ns(void);
/* a started POST of body to the collector's url, with telemetry's
 * headers, CA and timeout; NULL: not sent (cbs never called) */
struct http_call *trace_export_call(struct worker *,
	    const struct config_telemetry *, const char *url,
	    const struct otlp_buf *body, const struct http_call_cbs *,
	    void *arg);
int	 trace_export_init(struct worker *, const char *role);
void	 trace_export_fini(void);

#endif /* VMCPD_TRACE_INT_H */
