/*
 * The tracer (worker/trace/trace.c, trace_export.c) on its own: the
 * parent-based sampler, what an unsampled request carries on, a span's
 * attributes and ids, a phase's INTERNAL span, and the export queue's
 * bounds: drop-oldest counted, a collector that refuses counted, and
 * no span sent twice.  The collector is a closed loopback port.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/stats.h"
#include "shared/tracectx.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "unit.h"

#define PARENT_SAMPLED	"00-0af7651916cd43dd8448eb211c80319c-" \
			"b7ad6b7169203331-01"
#define PARENT_DROPPED	"00-0af7651916cd43dd8448eb211c80319c-" \
			"b7ad6b7169203331-00"

struct fixture {
	struct config		 conf;
	struct diag_slot	*stats;
};

static struct fixture	 fx;

/* a worker whose telemetry is rate, queue and batch as given */
static struct worker *
tracer(double rate, unsigned int queue, unsigned int batch)
{
	struct worker			*w = worker_self();
	struct config_telemetry		*ct = &fx.conf.cf_telemetry;
	size_t				 sz;

	memset(&fx, 0, sizeof(fx));
	fx.conf.cf_name = "vmcpd-test";
	ct->ct_enabled = ct->ct_tracing = 1;
	/* nothing listens on port 1 of loopback: every export fails */
	ct->ct_url = "http://127.0.0.1:1";
	ct->ct_sampling_rate = rate;
	ct->ct_queue_max = queue;
	ct->ct_batch_max = batch;
	ct->ct_interval_ms = 3600 * 1000;	/* flushed by the batch */
	ct->ct_timeout_ms = 2000;
	sz = diag_stats_size(&fx.conf, 1);
	fx.stats = calloc(1, sz);
	assert_non_null(fx.stats);
	memset(w, 0, sizeof(*w));
	w->w_conf = &fx.conf;
	w->w_base = event_base_new();
	assert_non_null(w->w_base);
	w->w_hc = http_client_new(w->w_base);
	assert_non_null(w->w_hc);
	w->w_stats = fx.stats;
	w->w_nstats = 1;
	w->w_stat_slot = 0;
	assert_int_equal(trace_init(w, "worker"), 0);
	assert_true(trace_enabled);
	return w;
}

static void
tracer_free(struct worker *w)
{
	trace_fini();
	assert_false(trace_enabled);
	http_client_free(w->w_hc);
	event_base_free(w->w_base);
	free(fx.stats);
}

static const struct otlp_attr *
attr(const struct trace_span *s, const char *key)
{
	size_t	 i;

	for (i = 0; i < s->ts_os.os_nattrs; i++)
		if (strcmp(s->ts_attrs[i].oa_key, key) == 0)
			return &s->ts_attrs[i];
	return NULL;
}

/* a sampled caller: a recording SERVER span, its child in the trace */
static void
test_sampled_parent(void **state)
{
	struct worker		*w = tracer(0, 16, 16);
	struct trace_span	*s;
	struct tracectx		 p;
	char			 tid[33], sid[17], hdr[TRACECTX_HEADER_LEN + 1];
	struct trace_ref	 ref;

	(void)state;
	assert_int_equal(tracectx_parse(&p, PARENT_SAMPLED,
	    strlen(PARENT_SAMPLED)), 0);
	s = trace_server_begin(PARENT_SAMPLED, strlen(PARENT_SAMPLED),
	    "k=v", 3, NULL, 0);
	assert_non_null(s);
	assert_true(s->ts_recording);
	assert_int_equal(s->ts_os.os_kind, OTLP_KIND_SERVER);
	assert_memory_equal(s->ts_os.os_trace_id, p.tc_trace, 16);
	assert_true(s->ts_os.os_has_parent);
	assert_memory_equal(s->ts_os.os_parent_id, p.tc_span, 8);
	assert_memory_not_equal(s->ts_os.os_span_id, p.tc_span, 8);
	assert_string_equal(s->ts_os.os_trace_state, "k=v");
	assert_int_equal(trace_ids(s, tid, sid), 0);
	assert_string_equal(tid, "0af7651916cd43dd8448eb211c80319c");
	assert_int_equal(strlen(sid), 16);
	/* what a backend request under it carries: this span as parent */
	trace_ref_of(&ref, s, NULL);
	assert_int_equal(trace_ref_header(&ref, hdr), 0);
	assert_memory_equal(hdr, "00-0af7651916cd43dd8448eb211c80319c-", 36);
	assert_memory_equal(hdr + 36, sid, 16);
	assert_string_equal(hdr + 52, "-01");
	assert_string_equal(ref.tr_state, "k=v");
	trace_ref_clear(&ref);
	trace_discard(s);
	tracer_free(w);
}

/* an unsampled caller: nothing recorded, its context passed on as is;
 * no caller at rate 0: nothing at all */
static void
test_unsampled(void **state)
{
	struct worker		*w = tracer(0, 16, 16);
	struct trace_span	*s, *c;
	struct trace_ref	 ref;
	char			 hdr[TRACECTX_HEADER_LEN + 1];

	(void)state;
	s = trace_server_begin(PARENT_DROPPED, strlen(PARENT_DROPPED), NULL,
	    0, NULL, 0);
	assert_non_null(s);
	assert_false(s->ts_recording);
	trace_set_str(s, "mcp.method.name", "tools/call", 10);
	assert_int_equal(s->ts_os.os_nattrs, 0);
	trace_ref_of(&ref, s, NULL);
	assert_int_equal(trace_ref_header(&ref, hdr), 0);
	assert_string_equal(hdr, PARENT_DROPPED);
	/* its children are not sampled either */
	c = trace_begin(&ref, OTLP_KIND_CLIENT, "x");
	assert_null(c);
	trace_ref_clear(&ref);
	trace_end(s);
	assert_null(trace_server_begin(NULL, 0, NULL, 0, NULL, 0));
	/* a traceparent that does not parse is no parent */
	assert_null(trace_server_begin("00-zz", 5, NULL, 0, NULL, 0));
	assert_int_equal(fx.stats->ds_otel_dropped +
	    fx.stats->ds_otel_exported, 0);
	tracer_free(w);
}

/* rate 1 with no caller: a new sampled trace; attributes set, reset,
 * bounded */
static void
test_root_and_attrs(void **state)
{
	struct worker		*w = tracer(1.0, 16, 16);
	struct trace_span	*s;
	const struct otlp_attr	*a;
	char			 key[TRACE_ATTRS_MAX + 4][16];
	int			 i;

	(void)state;
	s = trace_server_begin(NULL, 0, NULL, 0, NULL, 0);
	assert_non_null(s);
	assert_true(s->ts_recording);
	assert_false(s->ts_os.os_has_parent);
	assert_int_equal(s->ts_os.os_flags, TRACECTX_SAMPLED);
	trace_set_name(s, "tools/call", "echo", 4);
	assert_string_equal(s->ts_os.os_name, "tools/call echo");
	trace_set_str(s, "gen_ai.tool.name", "echo", 4);
	trace_set_str(s, "gen_ai.tool.name", "other", 5);
	a = attr(s, "gen_ai.tool.name");
	assert_non_null(a);
	assert_int_equal(a->oa_len, 5);
	assert_memory_equal(a->oa_str, "other", 5);
	trace_set_int(s, "http.response.status_code", 200);
	assert_int_equal(attr(s, "http.response.status_code")->oa_int, 200);
	for (i = 0; i < TRACE_ATTRS_MAX + 4; i++) {
		(void)snprintf(key[i], sizeof(key[i]), "k%d", i);
		trace_set_str(s, key[i], "v", 1);
	}
	assert_int_equal(s->ts_os.os_nattrs, TRACE_ATTRS_MAX);
	trace_set_error(s, "-32602", "bad params");
	assert_int_equal(s->ts_os.os_status, OTLP_STATUS_ERROR);
	assert_string_equal(s->ts_os.os_status_msg, "bad params");
	trace_discard(s);
	tracer_free(w);
}

/* a phase's INTERNAL span: a child of the SERVER span, one at a time */
static void
test_phase(void **state)
{
	struct worker		*w = tracer(1.0, 16, 16);
	struct trace_span	*s, *ph;

	(void)state;
	s = trace_server_begin(PARENT_SAMPLED, strlen(PARENT_SAMPLED), NULL,
	    0, NULL, 0);
	trace_phase_begin(s, "vmcpd.authenticate");
	ph = s->ts_phase;
	assert_non_null(ph);
	assert_int_equal(ph->ts_os.os_kind, OTLP_KIND_INTERNAL);
	assert_memory_equal(ph->ts_os.os_parent_id, s->ts_os.os_span_id, 8);
	assert_memory_equal(ph->ts_os.os_trace_id, s->ts_os.os_trace_id, 16);
	trace_phase_begin(s, "vmcpd.ratelimit");
	assert_ptr_equal(s->ts_phase, ph);
	trace_phase_end(s, NULL);
	assert_null(s->ts_phase);
	trace_phase_end(NULL, NULL);
	trace_discard(s);
	tracer_free(w);
}

/* the queue: past its size the oldest go, counted; a full batch is
 * sent at once, and a refused export drops its spans, counted */
static void
test_queue_bounds(void **state)
{
	struct worker		*w = tracer(1.0, 4, 4);
	struct trace_span	*s;
	struct timeval		 tv = { 3, 0 };
	int			 i;

	(void)state;
	/* six spans, one loop turn between none: the batch of four is
	 * kicked but not yet sent when the fifth and sixth come */
	for (i = 0; i < 6; i++) {
		s = trace_begin(NULL, OTLP_KIND_CLIENT, "ping");
		assert_non_null(s);
		trace_end(s);
	}
	assert_int_equal(fx.stats->ds_otel_dropped, 2);
	/* the loop sends the batch to a closed port: refused */
	(void)event_base_loopexit(w->w_base, &tv);
	while (fx.stats->ds_otel_failures == 0 &&
	    event_base_loop(w->w_base, EVLOOP_ONCE) == 0)
		;
	assert_int_equal(fx.stats->ds_otel_failures, 1);
	assert_int_equal(fx.stats->ds_otel_dropped, 6);
	assert_int_equal(fx.stats->ds_otel_exported, 0);
	tracer_free(w);
}

/* tracing off: nothing made, one test */
static void
test_off(void **state)
{
	(void)state;
	assert_false(trace_enabled);
	assert_null(trace_begin(NULL, OTLP_KIND_CLIENT, "x"));
	trace_end(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_sampled_parent),
		cmocka_unit_test(test_unsampled),
		cmocka_unit_test(test_root_and_attrs),
		cmocka_unit_test(test_phase),
		cmocka_unit_test(test_queue_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
