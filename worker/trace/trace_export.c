/*
 * The span exporter of one process (trace.h): ended spans wait in a
 * bounded ring, the oldest dropped (and counted) when it is full; every
 * exportInterval, or as soon as maxExportBatchSize wait, one batch is
 * encoded (shared/otlp.c) and POSTed to the collector's /v1/traces
 * (trace_post.c).  One export is in flight at a time, bounded by
 * exportTimeout; its spans are freed once encoded, so a slow or dead
 * collector costs the ring and one encoded batch, never the calls.
 * A draining process is held (as a request holds it) while spans wait
 * or a batch is in flight, so the last calls' spans are sent before it
 * exits; the drain's deadline bounds that as it bounds the requests.
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

struct trace_export {
	struct worker		*te_w;
	struct trace_span	**te_q;		/* ring of ended spans */
	unsigned int		 te_head;
	unsigned int		 te_n;
	unsigned int		 te_cap;
	unsigned int		 te_batch;
	struct event		*te_tick;	/* every exportInterval */
	struct event		*te_kick;	/* a batch is waiting */
	unsigned int		 te_sending;	/* spans in flight */
	int			 te_draining;
	int			 te_held;	/* the worker, while draining */
	struct trace_post	 te_post;	/* to /v1/traces */
};

static struct trace_export	*te;

static void	trace_export_flush(struct trace_export *);
static void	trace_export_batch(struct trace_export *);
static void	trace_export_hold(struct trace_export *);

static void
trace_export_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	trace_export_flush(arg);
}

/* the collector took the batch in flight, or not (it is lost) */
static void
trace_export_done(void *arg, int taken)
{
	struct trace_export	*e = arg;
	unsigned int		 n = e->te_sending;

	e->te_sending = 0;
	if (taken)
		diag_count_otel(e->te_w, n, 0, 0);
	else
		diag_count_otel(e->te_w, 0, n, 1);
	if (e->te_n >= e->te_batch || (e->te_draining && e->te_n > 0))
		event_active(e->te_kick, 0, 0);
	trace_export_hold(e);
}

/* draining: the worker held while spans wait or are in flight, let go
 * once none do */
static void
trace_export_hold(struct trace_export *e)
{
	int	 busy = e->te_n > 0 || e->te_post.tp_call != NULL;

	if (!e->te_draining || busy == e->te_held)
		return;
	e->te_held = busy;
	if (busy)
		worker_request_hold(e->te_w);
	else
		worker_request_release(e->te_w, "trace_export");
}

void
trace_export_drain(void)
{
	struct trace_export	*e = te;

	if (e == NULL || e->te_draining)
		return;
	e->te_draining = 1;
	trace_export_hold(e);
	if (e->te_n > 0 && e->te_post.tp_call == NULL)
		event_active(e->te_kick, 0, 0);
}

int
trace_export_init(struct worker *w, const char *role)
{
	const struct config_telemetry	*ct = &w->w_conf->cf_telemetry;
	struct trace_export		*e;

	if ((e = calloc(1, sizeof(*e))) == NULL)
		return -1;
	e->te_w = w;
	e->te_cap = ct->ct_queue_max > 0 ? ct->ct_queue_max : 2048;
	e->te_batch = ct->ct_batch_max > 0 ? ct->ct_batch_max : 512;
	if (e->te_batch > e->te_cap)
		e->te_batch = e->te_cap;
	if (trace_post_init(&e->te_post, w, role, "/v1/traces", "spans",
	    trace_export_done, e) == -1) {
		free(e);
		return -1;
	}
	if ((e->te_q = calloc(e->te_cap, sizeof(*e->te_q))) == NULL ||
	    (e->te_tick = trace_tick_new(w, ct->ct_interval_ms, 1000,
	    trace_export_on_tick, e)) == NULL ||
	    (e->te_kick = event_new(w->w_base, -1, 0, trace_export_on_tick,
	    e)) == NULL)
		goto fail;
	te = e;
	return 0;
fail:
	if (e->te_tick != NULL)
		event_free(e->te_tick);
	trace_post_fini(&e->te_post);
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
	trace_post_fini(&e->te_post);
	while (e->te_n > 0) {
		trace_span_free(e->te_q[e->te_head]);
		e->te_head = (e->te_head + 1) % e->te_cap;
		e->te_n--;
	}
	event_free(e->te_tick);
	event_free(e->te_kick);
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
		diag_count_otel(e->te_w, 0, 1, 0);
	}
	e->te_q[(e->te_head + e->te_n) % e->te_cap] = s;
	e->te_n++;
	if ((e->te_n >= e->te_batch || e->te_draining) &&
	    e->te_post.tp_call == NULL)
		event_active(e->te_kick, 0, 0);
	trace_export_hold(e);
}

static void
trace_export_flush(struct trace_export *e)
{
	trace_export_batch(e);
	/* draining: batch after batch, whatever became of this one */
	if (e->te_draining && e->te_n > 0 && e->te_post.tp_call == NULL)
		event_active(e->te_kick, 0, 0);
	trace_export_hold(e);
}

static void
trace_export_batch(struct trace_export *e)
{
	const struct otlp_span	*batch[1024];
	struct trace_post	*p = &e->te_post;
	struct trace_span	*s;
	unsigned int		 n, i;
	int			 rc;

	if (p->tp_call != NULL || e->te_n == 0)
		return;
	n = e->te_n < e->te_batch ? e->te_n : e->te_batch;
	if (n > sizeof(batch) / sizeof(batch[0]))
		n = sizeof(batch) / sizeof(batch[0]);
	for (i = 0; i < n; i++)
		batch[i] = &e->te_q[(e->te_head + i) % e->te_cap]->ts_os;
	otlp_buf_reset(&p->tp_buf);
	rc = otlp_encode_traces(&p->tp_buf, &p->tp_res.tr_res, batch, n,
	    p->tp_format);
	for (i = 0; i < n; i++) {
		s = e->te_q[e->te_head];
		e->te_q[e->te_head] = NULL;
		e->te_head = (e->te_head + 1) % e->te_cap;
		e->te_n--;
		trace_span_free(s);
	}
	if (rc == -1 || p->tp_buf.ob_failed) {
		log_warnx("telemetry: %u spans cannot be encoded (dropped)",
		    n);
		diag_count_otel(e->te_w, 0, n, 1);
		return;
	}
	(void)snprintf(p->tp_what, sizeof(p->tp_what), "%u spans", n);
	p->tp_lossy = 1;
	if (trace_post_send(p) == -1) {
		diag_count_otel(e->te_w, 0, n, 1);
		return;
	}
	e->te_sending = n;	/* its answer kicks the next batch */
}
