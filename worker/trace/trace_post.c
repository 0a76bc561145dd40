/*
 * One export stream to the collector (trace_int.h), what the span and
 * the metrics exporters share: its URL, Resource and request buffer,
 * one POST in flight with telemetry's headers, CA and timeout, and its
 * answer judged by status alone (the body is read and dropped, so a
 * collector that answers garbage is one that took the request or not),
 * a failure logged once until one succeeds.  And the exporters' ticks.
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
#include "worker/process/process.h"
#include "worker/trace/trace_int.h"

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

/* the Resource every span and metric of this process is under */
static void
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

int
trace_post_init(struct trace_post *p, struct worker *w, const char *role,
    const char *path, const char *kind, void (*done)(void *, int),
    void *arg)
{
	const struct config_telemetry *ct = &w->w_conf->cf_telemetry;

	memset(p, 0, sizeof(*p));
	if (asprintf(&p->tp_url, "%s%s", ct->ct_url, path) == -1) {
		p->tp_url = NULL;
		return -1;
	}
	p->tp_w = w;
	p->tp_ct = ct;
	p->tp_kind = kind;
	p->tp_format = ct->ct_protocol == CONFIG_OTLP_JSON ? OTLP_JSON :
	    OTLP_PROTOBUF;
	p->tp_done = done;
	p->tp_arg = arg;
	trace_resource_init(&p->tp_res, w, role);
	return 0;
}

void
trace_post_fini(struct trace_post *p)
{
	if (p->tp_call != NULL)
		http_call_cancel(p->tp_call);
	otlp_buf_free(&p->tp_buf);
	free(p->tp_url);
	memset(p, 0, sizeof(*p));
}

static int
trace_post_on_data(void *arg, struct http_call *hc, const char *buf,
    size_t len)
{
	(void)arg;
	(void)hc;
	(void)buf;
	(void)len;
	return 0;	/* the collector's body: read and dropped */
}

static void
trace_post_on_done(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct trace_post	*p = arg;
	long			 status = result == 0 ? http_call_status(hc) : 0;
	int			 taken = status >= 200 && status < 300;

	p->tp_call = NULL;
	if (taken && p->tp_failing)
		log_info("telemetry: the collector takes %s again",
		    p->tp_kind);
	else if (!taken && !p->tp_failing) {
		if (result == 0)
			log_warnx("telemetry: the collector answered HTTP %ld "
			    "to %s%s", status, p->tp_what, p->tp_lossy ?
			    " (dropped)" : "");
		else
			log_warnx("telemetry: exporting %s failed%s: %s",
			    p->tp_what, p->tp_lossy ? " (dropped)" : "",
			    errmsg != NULL ? errmsg : "transport error");
	}
	p->tp_failing = !taken;
	p->tp_done(p->tp_arg, taken);
}

int
trace_post_send(struct trace_post *p)
{
	static const struct http_call_cbs cbs = {
		NULL, trace_post_on_data, trace_post_on_done
	};
	const struct config_telemetry	*ct = p->tp_ct;
	struct http_call		*hc;
	size_t				 i;

	if ((hc = http_call_new(p->tp_w->w_hc, "POST", p->tp_url)) == NULL)
		return -1;
	if (http_call_add_header(hc, "Content-Type",
	    otlp_content_type(p->tp_format)) == -1)
		goto fail;
	for (i = 0; i < ct->ct_nheaders; i++)
		if (http_call_add_header(hc, ct->ct_headers[i].oh_name,
		    ct->ct_headers[i].oh_value) == -1)
			goto fail;
	if (ct->ct_ca_file != NULL &&
	    http_call_set_ca_file(hc, ct->ct_ca_file) == -1)
		goto fail;
	if (http_call_set_body(hc, p->tp_buf.ob_buf, p->tp_buf.ob_len) == -1)
		goto fail;
	http_call_set_timeout(hc, ct->ct_timeout_ms > 0 ? ct->ct_timeout_ms :
	    10000);
	if (http_call_start(hc, &cbs, p) == -1)
		return -1;	/* freed by the client */
	p->tp_call = hc;
	return 0;
fail:
	http_call_cancel(hc);
	return -1;
}

struct event *
trace_tick_new(struct worker *w, uint64_t ms, uint64_t dflt_ms,
    void (*cb)(evutil_socket_t, short, void *), void *arg)
{
	struct event	*ev;
	struct timeval	 tv;

	if (ms == 0)
		ms = dflt_ms;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if ((ev = event_new(w->w_base, -1, EV_PERSIST, cb, arg)) == NULL)
		return NULL;
	if (event_add(ev, &tv) == -1) {
		event_free(ev);
		return NULL;
	}
	return ev;
}
