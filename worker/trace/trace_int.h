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

#include "shared/otlp.h"

struct config_telemetry;
struct http_call;
struct http_call_cbs;
struct otlp_buf;

/* the Resource every span and metric of this process is under */
#define TRACE_RES_ATTRS	(5 + 128)	/* ours, customAttributes (128) */
struct trace_resource {
	struct otlp_attr	 tr_attrs[TRACE_RES_ATTRS];
	struct otlp_resource	 tr_res;
	char			 tr_instance[300];
};
void	 trace_resource_init(struct trace_resource *, struct worker *,
	    const char *role);

uint64_t trace_now_ns(void);
/* a started POST of body to the collector's url, with telemetry's
 * headers, CA and timeout; NULL: not sent (cbs never called) */
struct http_call *trace_export_call(struct worker *,
	    const struct config_telemetry *, const char *url,
	    const struct otlp_buf *body, const struct http_call_cbs *,
	    void *arg);
int	 trace_export_init(struct worker *, const char *role);
/* trace_metrics.c: metricsEnabled's exporter */
int	 trace_metrics_init(struct worker *, const char *role);
void	 trace_metrics_fini(void);
void	 trace_export_fini(void);

#endif /* VMCPD_TRACE_INT_H */
