/*
 * Inside the tracer (worker/trace/): what its files share.
 */
#ifndef VMCPD_TRACE_INT_H
#define VMCPD_TRACE_INT_H

#include <stdint.h>

#include <event2/util.h>

#include "shared/otlp.h"

struct worker;

/* an attribute value or a status message past this is cut */
#define TRACE_VALUE_MAX		1024
/* baggage passed on (W3C Baggage: 8192 bytes at most) */
#define TRACE_BAGGAGE_MAX	8192

struct config_telemetry;
struct event;
struct http_call;

/* the Resource every span and metric of this process is under */
#define TRACE_RES_ATTRS	(5 + 128)	/* ours, customAttributes (128) */
struct trace_resource {
	struct otlp_attr	 tr_attrs[TRACE_RES_ATTRS];
	struct otlp_resource	 tr_res;
	char			 tr_instance[300];
};

/*
 * One export stream to the collector (trace_post.c): the request in
 * tp_buf, encoded under tp_res in tp_format, goes to tp_url; tp_done
 * hears whether the collector took it (2xx).  One in flight.
 */
struct trace_post {
	struct worker		*tp_w;
	const struct config_telemetry *tp_ct;
	const char		*tp_kind;	/* "spans", "metrics" (logs) */
	char			*tp_url;	/* the endpoint's + path */
	enum otlp_format	 tp_format;
	struct trace_resource	 tp_res;
	struct otlp_buf		 tp_buf;
	struct http_call	*tp_call;	/* the request in flight */
	int			 tp_failing;	/* the last one failed */
	char			 tp_what[48];	/* what it holds (logs) */
	int			 tp_lossy;	/* lost if not taken (logs) */
	void			(*tp_done)(void *arg, int taken);
	void			*tp_arg;
};
/* 0, or -1: no memory */
int	 trace_post_init(struct trace_post *, struct worker *,
	    const char *role, const char *path, const char *kind,
	    void (*done)(void *, int), void *arg);
/* the request in flight cancelled (no tp_done), memory freed */
void	 trace_post_fini(struct trace_post *);
/* tp_buf sent: 0 (tp_done follows), or -1: not sent */
int	 trace_post_send(struct trace_post *);
/* an event every ms (0: dflt_ms) on w's loop, added; NULL: none */
struct event *trace_tick_new(struct worker *, uint64_t ms, uint64_t dflt_ms,
	    void (*)(evutil_socket_t, short, void *), void *arg);

/* telemetry.propagateBaggage */
extern int	 trace_baggage;

uint64_t trace_now_ns(void);
/* trace_export.c: the spans' exporter */
int	 trace_export_init(struct worker *, const char *role);
void	 trace_export_fini(void);
void	 trace_export_drain(void);
/* trace_metrics.c: metricsEnabled's exporter */
int	 trace_metrics_init(struct worker *, const char *role);
void	 trace_metrics_fini(void);

#endif /* VMCPD_TRACE_INT_H */
