/*
 * The OTLP metrics exporter of one process (telemetry.metricsEnabled):
 * every metricsInterval, this process's own MCP operation histograms
 * (worker/process/counters_op.c: mcp.server.operation.duration and
 * mcp.client.operation.duration, cumulative) POSTed to the collector's
 * /v1/metrics (trace_post.c), under the same Resource as its spans (its
 * instance and pid tell the processes' series apart).  One export in
 * flight; one that fails is logged once until one succeeds, and the
 * next interval sends the totals again, so nothing is lost but
 * resolution.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/otlp.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/trace/trace_int.h"

struct trace_metrics {
	struct worker		*tm_w;
	struct event		*tm_tick;
	struct trace_post	 tm_post;	/* to /v1/metrics */
};

static struct trace_metrics	*tm;

static void
trace_metrics_done(void *arg, int taken)
{
	struct trace_metrics	*m = arg;

	if (!taken)
		diag_count_otel(m->tm_w, 0, 0, 1);
}

static void
trace_metrics_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct trace_metrics	*m = arg;
	struct trace_post	*p = &m->tm_post;
	struct diag_otlp	 d;
	int			 rc;

	(void)fd;
	(void)ev;
	if (p->tp_call != NULL)
		return;		/* the last one still out */
	memset(&d, 0, sizeof(d));
	if (diag_otlp_collect(m->tm_w, &d) == -1)
		return;
	if (d.do_npoints == 0) {
		diag_otlp_free(&d);
		return;		/* nothing measured yet */
	}
	otlp_buf_reset(&p->tp_buf);
	rc = otlp_encode_metrics(&p->tp_buf, &p->tp_res.tr_res, d.do_hist, 2,
	    p->tp_format);
	diag_otlp_free(&d);
	if (rc == -1 || p->tp_buf.ob_failed) {
		log_warnx("telemetry: the metrics cannot be encoded");
		diag_count_otel(m->tm_w, 0, 0, 1);
		return;
	}
	if (trace_post_send(p) == -1)
		diag_count_otel(m->tm_w, 0, 0, 1);
}

int
trace_metrics_init(struct worker *w, const char *role)
{
	const struct config_telemetry	*ct = &w->w_conf->cf_telemetry;
	struct trace_metrics		*m;

	if (!ct->ct_enabled || !ct->ct_metrics)
		return 0;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		goto fail;
	m->tm_w = w;
	if (trace_post_init(&m->tm_post, w, role, "/v1/metrics", "metrics",
	    trace_metrics_done, m) == -1) {
		free(m);
		goto fail;
	}
	(void)snprintf(m->tm_post.tp_what, sizeof(m->tm_post.tp_what),
	    "the metrics");
	if ((m->tm_tick = trace_tick_new(w, ct->ct_metrics_interval_ms, 60000,
	    trace_metrics_on_tick, m)) == NULL) {
		trace_post_fini(&m->tm_post);
		free(m);
		goto fail;
	}
	tm = m;
	return 0;
fail:
	log_warnx("telemetry: the metrics exporter cannot start");
	return -1;
}

void
trace_metrics_fini(void)
{
	struct trace_metrics	*m = tm;

	if (m == NULL)
		return;
	tm = NULL;
	trace_post_fini(&m->tm_post);
	event_free(m->tm_tick);
	free(m);
}
