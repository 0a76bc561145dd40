/*
 * The span exporter of one process (trace.h): ended spans wait in a
 * bounded ring, the oldest dropped (and counted) when it is full; every
 * exportInterval, or as soon as maxExportBatchSize wait, one batch is
 * encoded (shared/otlp.c) and POSTed to the collector's /v1/traces.
 * One export is in flight at a time, bounded by exportTimeout; its
 * spans are freed once encoded, so a slow or dead collector costs the
 * ring and one encoded batch, never the calls.  The collector's answer
 * is judged by its status alone: its body is read and discarded, so a
 * collector that answers garbage is one that took the batch or not.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/otlp.h"
#include "shared/version.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/trace/trace_int.h"

struct trace_export {
	struct worker		*te_w;
	const struct config_telemetry *te_ct;
	struct trace_span	**te_q;		/* ring of ended spans */
	unsigned int		 te_head;
	unsigned int		 te_n;
	unsigned int		 te_cap;
	unsigned int		 te_batch;
	struct event		*te_tick;	/* every exportInterval */
	struct event		*te_kick;	/* a batch is waiting */
	struct http_call	*te_call;	/* the export in flight */
	unsigned int		 te_sending;	/* its spans */
	int			 te_failing;	/* the last one failed */
	char			*te_url;	/* .../v1/traces */
	struct otlp_buf		 te_buf;
	struct trace_resource	 te_res;
};

static struct trace_export	*te;

static void	trace_export_flush(struct trace_export *);

static void
trace_export_count(struct trace_export *e, uint64_t exported,
    uint64_t dropped, uint64_t failures)
{
	diag_count_otel(e->te_w, exported, dropped, failures);
}

static void
trace_resource_attr(struct trace_resource *r, const char *key, const char *v)
{
	struct otlp_attr	*a;

	if (r->tr_res.or_nattrs >= TRACE_RES_ATTRS || v == NULL)
		return;
	a = &r->tr_attrs[r->tr_res.or_nattrs++];
	memset(a, 0, sizeof(*a));
	a->oa_key = key;
	a->oa_type = OTLP_V_STR;
	a->oa_str = v;
	a->oa_len = strlen(v);
}

void
trace_resource_init(struct trace_resource *r, struct worker *w,
    const char *role)
{
	const struct config_telemetry	*ct = &w->w_conf->cf_telemetry;
	char				 host[256];
	struct otlp_attr		*a;
	size_t				 i;

	memset(r, 0, sizeof(*r));
	if (gethostname(host, sizeof(host)) == -1)
		(void)snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(r->tr_instance, sizeof(r->tr_instance), "%s:%ld",
	    host, (long)getpid());
	r->tr_res.or_attrs = r->tr_attrs;
	r->tr_res.or_scope_name = "vmcpd";
	r->tr_res.or_scope_version = VMCPD_VERSION;
	trace_resource_attr(r, "service.name", ct->ct_service_name != NULL ?
	    ct->ct_service_name : w->w_conf->cf_name);
	trace_resource_attr(r, "service.version", ct->ct_service_version !=
	    NULL ? ct->ct_service_version : VMCPD_VERSION);
	trace_resource_attr(r, "service.instance.id", r->tr_instance);
	trace_resource_attr(r, "vmcpd.process", role);
	if (r->tr_res.or_nattrs < TRACE_RES_ATTRS) {
		a = &r->tr_attrs[r->tr_res.or_nattrs++];
		memset(a, 0, sizeof(*a));
		a->oa_key = "process.pid";
		a->oa_type = OTLP_V_INT;
		a->oa_int = (int64_t)getpid();
	}
	for (i = 0; i < ct->ct_nattrs; i++)
		trace_resource_attr(r, ct->ct_attrs[i].oa_key,
		    ct->ct_attrs[i].oa_value);
}

static void
trace_export_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	trace_export_flush(arg);
}

int
trace_export_init(struct worker *w, const char *role)
{
	const struct config_telemetry	*ct = &w->w_conf->cf_telemetry;
	struct trace_export		*e;
	struct timeval			 tv;

	if ((e = calloc(1, sizeof(*e))) == NULL)
		return -1;
	e->te_w = w;
	e->te_ct = ct;
	e->te_cap = ct->ct_queue_max > 0 ? ct->ct_queue_max : 2048;
	e->te_batch = ct->ct_batch_max > 0 ? ct->ct_batch_max : 512;
	if (e->te_batch > e->te_cap)
		e->te_batch = e->te_cap;
	if ((e->te_q = calloc(e->te_cap, sizeof(*e->te_q))) == NULL ||
	    asprintf(&e->te_url, "%s/v1/traces", ct->ct_url) == -1 ||
	    (e->te_tick = event_new(w->w_base, -1, EV_PERSIST,
	    trace_export_on_tick, e)) == NULL ||
	    (e->te_kick = event_new(w->w_base, -1, 0, trace_export_on_tick,
	    e)) == NULL)
		goto fail;
	tv.tv_sec = ct->ct_interval_ms / 1000;
	tv.tv_usec = (ct->ct_interval_ms % 1000) * 1000;
	if (ct->ct_interval_ms == 0)
		tv.tv_sec = 1;
	if (event_add(e->te_tick, &tv) == -1)
		goto fail;
	trace_resource_init(&e->te_res, w, role);
	te = e;
	return 0;
fail:
	if (e->te_tick != NULL)
		event_free(e->te_tick);
	if (e->te_kick != NULL)
		event_free(e->te_kick);
	free(e->te_url);
	free(e->te_q);
	free(e);
	return -1;
}

void
trace_export_fini(void)
{
	struct trace_export	*e = te;

	if (e == NULL)
		return;
	te = NULL;
	if (e->te_call != NULL)
		http_call_cancel(e->te_call);
	while (e->te_n > 0) {
		trace_span_free(e->te_q[e->te_head]);
		e->te_head = (e->te_head + 1) % e->te_cap;
		e->te_n--;
	}
	event_free(e->te_tick);
	event_free(e->te_kick);
	otlp_buf_free(&e->te_buf);
	free(e->te_url);
	free(e->te_q);
	free(e);
}

void
trace_export_push(struct trace_span *s)
{
	struct trace_export	*e = te;

	if (e == NULL) {
		trace_span_free(s);
		return;
	}
	if (e->te_n == e->te_cap) {
		/* full: the oldest goes (a collector behind loses the
		 * past, not the present) */
		trace_span_free(e->te_q[e->te_head]);
		e->te_head = (e->te_head + 1) % e->te_cap;
		e->te_n--;
		trace_export_count(e, 0, 1, 0);
	}
	e->te_q[(e->te_head + e->te_n) % e->te_cap] = s;
	e->te_n++;
	if (e->te_n >= e->te_batch && e->te_call == NULL)
		event_active(e->te_kick, 0, 0);
}

/* the collector's body: read and dropped */
static int
trace_export_on_data(void *arg, struct http_call *hc, const char *buf,
    size_t len)
{
	(void)arg;
	(void)hc;
	(void)buf;
	(void)len;
	return 0;
}

static void
trace_export_on_done(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct trace_export	*e = arg;
	long			 status = result == 0 ? http_call_status(hc) : 0;
	unsigned int		 n = e->te_sending;

	e->te_call = NULL;
	e->te_sending = 0;
	if (status >= 200 && status < 300) {
		trace_export_count(e, n, 0, 0);
		if (e->te_failing)
			log_info("telemetry: the collector takes spans again");
		e->te_failing = 0;
	} else {
		trace_export_count(e, 0, n, 1);
		if (!e->te_failing) {
			if (result == 0)
				log_warnx("telemetry: the collector answered "
				    "HTTP %ld to %u spans (dropped)", status, n);
			else
				log_warnx("telemetry: exporting %u spans "
				    "failed (dropped): %s", n, errmsg != NULL ?
				    errmsg : "transport error");
		}
		e->te_failing = 1;
	}
	if (e->te_n >= e->te_batch)
		event_active(e->te_kick, 0, 0);
}

static const struct http_call_cbs trace_export_cbs = {
	NULL, trace_export_on_data, trace_export_on_done
};

/* a call to the collector at url with body, its headers set */
struct http_call *
trace_export_call(struct worker *w, const struct config_telemetry *ct,
    const char *url, const struct otlp_buf *body,
    const struct http_call_cbs *cbs, void *arg)
{
	struct http_call	*hc;
	char			 ctype[64];
	size_t			 i;

	if ((hc = http_call_new(w->w_hc, "POST", url)) == NULL)
		return NULL;
	(void)snprintf(ctype, sizeof(ctype), "%s",
	    otlp_content_type(ct->ct_protocol == CONFIG_OTLP_JSON ?
	    OTLP_JSON : OTLP_PROTOBUF));
	if (http_call_add_header(hc, "Content-Type", ctype) == -1)
		goto fail;
	for (i = 0; i < ct->ct_nheaders; i++)
		if (http_call_add_header(hc, ct->ct_headers[i].oh_name,
		    ct->ct_headers[i].oh_value) == -1)
			goto fail;
	if (ct->ct_ca_file != NULL &&
	    http_call_set_ca_file(hc, ct->ct_ca_file) == -1)
		goto fail;
	if (http_call_set_body(hc, body->ob_buf, body->ob_len) == -1)
		goto fail;
	http_call_set_timeout(hc, ct->ct_timeout_ms > 0 ? ct->ct_timeout_ms :
	    10000);
	if (http_call_start(hc, cbs, arg) == -1)
		return NULL;	/* freed by the client */
	return hc;
fail:
	http_call_cancel(hc);
	return NULL;
}

static void
trace_export_flush(struct trace_export *e)
{
	const struct otlp_span	*batch[1024];
	struct trace_span	*s;
	unsigned int		 n, i;
	int			 rc;

	if (e->te_call != NULL || e->te_n == 0)
		return;
	n = e->te_n < e->te_batch ? e->te_n : e->te_batch;
	if (n > sizeof(batch) / sizeof(batch[0]))
		n = sizeof(batch) / sizeof(batch[0]);
	for (i = 0; i < n; i++)
		batch[i] = &e->te_q[(e->te_head + i) % e->te_cap]->ts_os;
	otlp_buf_reset(&e->te_buf);
	rc = otlp_encode_traces(&e->te_buf, &e->te_res.tr_res, batch, n,
	    e->te_ct->ct_protocol == CONFIG_OTLP_JSON ? OTLP_JSON :
	    OTLP_PROTOBUF);
	for (i = 0; i < n; i++) {
		s = e->te_q[e->te_head];
		e->te_q[e->te_head] = NULL;
		e->te_head = (e->te_head + 1) % e->te_cap;
		e->te_n--;
		trace_span_free(s);
	}
	if (rc == -1 || e->te_buf.ob_failed) {
		log_warnx("telemetry: %u spans cannot be encoded (dropped)",
		    n);
		trace_export_count(e, 0, n, 1);
		return;
	}
	e->te_call = trace_export_call(e->te_w, e->te_ct, e->te_url,
	    &e->te_buf, &trace_export_cbs, e);
	if (e->te_call == NULL) {
		trace_export_count(e, 0, n, 1);
		return;
	}
	e->te_sending = n;	/* its answer kicks the next batch */
}
