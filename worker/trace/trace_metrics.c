/*
 * The OTLP metrics exporter of one process (telemetry.metricsEnabled):
 * every metricsInterval, this process's own MCP operation histograms
 * (worker/process/counters.c: mcp.server.operation.duration and
 * mcp.client.operation.duration, cumulative) POSTed to the collector's
 * /v1/metrics, under the same Resource as its spans (its instance and
 * pid tell the processes' series apart).  One export in flight; one
 * that fails is logged once until one succeeds, and the next interval
 * sends the totals again, so nothing is lost but resolution.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/otlp.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/trace/trace_int.h"

struct trace_metrics {
	struct worker		*tm_w;
	const struct config_telemetry *tm_ct;
	struct event		*tm_tick;
	struct http_call	*tm_call;
	int			 tm_failing;
	char			*tm_url;	/* .../v1/metrics */
	struct otlp_buf		 tm_buf;
	struct trace_resource	 tm_res;
};

static struct trace_metrics	*tm;

static int
trace_metrics_on_data(void *arg, struct http_call *hc, const char *buf,
    size_t len)
{
	(void)arg;
	(void)hc;
	(void)buf;
	(void)len;
	return 0;	/* the collector's body: read and dropped */
}

static void
trace_metrics_on_done(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct trace_metrics	*m = arg;
	long			 status = result == 0 ? http_call_status(hc) : 0;

	m->tm_call = NULL;
	if (status >= 200 && status < 300) {
		if (m->tm_failing)
			log_info("telemetry: the collector takes metrics "
			    "again");
		m->tm_failing = 0;
		return;
	}
	if (!m->tm_failing) {
		if (result == 0)
			log_warnx("telemetry: the collector answered HTTP %ld "
			    "to the metrics", status);
		else
			log_warnx("telemetry: exporting the metrics failed: %s",
			    errmsg != NULL ? errmsg : "transport error");
	}
	m->tm_failing = 1;
	diag_count_otel(m->tm_w, 0, 0, 1);
}

static const struct http_call_cbs trace_metrics_cbs = {
	NULL, trace_metrics_on_data, trace_metrics_on_done
};

static void
trace_metrics_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct trace_metrics	*m = arg;
	struct diag_otlp	 d;
	int			 rc;

	(void)fd;
	(void)ev;
	if (m->tm_call != NULL)
		return;		/* the last one still out */
	memset(&d, 0, sizeof(d));
	if (diag_otlp_collect(m->tm_w, &d) == -1)
		return;
	if (d.do_npoints == 0) {
		diag_otlp_free(&d);
		return;		/* nothing measured yet */
	}
	otlp_buf_reset(&m->tm_buf);
	rc = otlp_encode_metrics(&m->tm_buf, &m->tm_res.tr_res, d.do_hist, 2,
	    m->tm_ct->ct_protocol == CONFIG_OTLP_JSON ? OTLP_JSON :
	    OTLP_PROTOBUF);
	diag_otlp_free(&d);
	if (rc == -1 || m->tm_buf.ob_failed) {
		log_warnx("telemetry: the metrics cannot be encoded");
		diag_count_otel(m->tm_w, 0, 0, 1);
		return;
	}
	if ((m->tm_call = trace_export_call(m->tm_w, m->tm_ct, m->tm_url,
	    &m->tm_buf, &trace_metrics_cbs, m)) == NULL)
		diag_count_otel(m->tm_w, 0, 0, 1);
}

int
trace_metrics_init(struct worker *w, const char *role)
{
	const struct config_telemetry	*ct = &w->w_conf->cf_telemetry;
	struct trace_metrics		*m;
	struct timeval			 tv;
	uint64_t			 ms = ct->ct_metrics_interval_ms;

	if (!ct->ct_enabled || !ct->ct_metrics)
		return 0;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -1;
	m->tm_w = w;
	m->tm_ct = ct;
	if (ms == 0)
		ms = 60000;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if (asprintf(&m->tm_url, "%s/v1/metrics", ct->ct_url) == -1) {
		m->tm_url = NULL;
		goto fail;
	}
	if ((m->tm_tick = event_new(w->w_base, -1, EV_PERSIST,
	    trace_metrics_on_tick, m)) == NULL ||
	    event_add(m->tm_tick, &tv) == -1)
		goto fail;
	trace_resource_init(&m->tm_res, w, role);
	tm = m;
	return 0;
fail:
	if (m->tm_tick != NULL)
		event_free(m->tm_tick);
	free(m->tm_url);
	free(m);
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
	if (m->tm_call != NULL)
		http_call_cancel(m->tm_call);
	event_free(m->tm_tick);
	otlp_buf_free(&m->tm_buf);
	free(m->tm_url);
	free(m);
}
