/*
 * The OTLP encoder (shared/otlp.h): the exact protobuf bytes of a small
 * span and a small histogram, worked out by hand from
 * opentelemetry-proto's field numbers, and their OTLP/JSON text; strings
 * that are not UTF-8, empty requests, lengths past one byte, values
 * JSON cannot carry, a buffer out of memory.  The official decoder reads
 * a larger request in tests/interop/otlp_codec.test.mjs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/otlp.h"
#include "shared/otlp_int.h"

/* the text or bytes lit somewhere in buffer b */
#define HAS(b, lit) \
	(memmem((b)->ob_buf, (b)->ob_len, (lit), sizeof(lit) - 1) != NULL)

static const struct otlp_attr res_attrs[] = {
	{ "k", OTLP_V_STR, "v", 1, 0, 0 },
};
static const struct otlp_resource res = { res_attrs, 1, "s", NULL };
static const struct otlp_attr span_attrs[] = {
	{ "i", OTLP_V_INT, NULL, 0, 5, 0 },
};

/* b holds exactly want (len bytes); emptied for the next */
static void
expect(struct otlp_buf *b, const void *want, size_t len)
{
	assert_int_equal(b->ob_len, len);
	assert_memory_equal(b->ob_buf, want, len);
	otlp_buf_reset(b);
}

static void
small_span(struct otlp_span *s)
{
	memset(s, 0, sizeof(*s));
	memset(s->os_trace_id, 0x11, sizeof(s->os_trace_id));
	memset(s->os_span_id, 0x22, sizeof(s->os_span_id));
	s->os_flags = 1;
	s->os_name = "n";
	s->os_kind = OTLP_KIND_SERVER;
	s->os_start_ns = 1;
	s->os_end_ns = 2;
	s->os_attrs = span_attrs;
	s->os_nattrs = 1;
	s->os_status = OTLP_STATUS_ERROR;
}

/* Resource{attributes: [{"k": "v"}]} as ResourceSpans.resource (1),
 * then the InstrumentationScope{name: "s"} header of ScopeSpans.scope */
#define RESOURCE_BYTES \
	0x0a, 0x0a,			/* resource, 10 */		\
	    0x0a, 0x08,			/* attributes, 8 */		\
		0x0a, 0x01, 'k',	/* key */			\
		0x12, 0x03,		/* value: AnyValue, 3 */	\
		    0x0a, 0x01, 'v'	/* string_value */
#define SCOPE_BYTES \
	0x0a, 0x03,			/* scope, 3 */			\
	    0x0a, 0x01, 's'		/* name */

static const uint8_t span_pb[] = {
	0x0a, 0x5b,		/* ExportTraceServiceRequest.resource_spans */
	RESOURCE_BYTES,
	0x12, 0x4d,		/* ResourceSpans.scope_spans, 77 */
	SCOPE_BYTES,
	0x12, 0x46,		/* ScopeSpans.spans, 70 */
	0x0a, 0x10,		/* trace_id */
	0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
	0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
	0x12, 0x08,		/* span_id */
	0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
	0x2a, 0x01, 'n',	/* name (5) */
	0x30, 0x02,		/* kind (6): SERVER */
	0x39, 1, 0, 0, 0, 0, 0, 0, 0,	/* start_time_unix_nano (7) */
	0x41, 2, 0, 0, 0, 0, 0, 0, 0,	/* end_time_unix_nano (8) */
	0x4a, 0x07,		/* attributes (9) */
	    0x0a, 0x01, 'i',
	    0x12, 0x02, 0x18, 0x05,	/* int_value (3): 5 */
	0x7a, 0x02,		/* status (15) */
	    0x18, 0x02,		/* code (3): ERROR */
	0x85, 0x01, 1, 0, 0, 0,	/* flags (16, fixed32) */
};

static const char span_json[] =
	"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"k\","
	"\"value\":{\"stringValue\":\"v\"}}]},\"scopeSpans\":[{\"scope\":"
	"{\"name\":\"s\"},\"spans\":[{\"traceId\":"
	"\"11111111111111111111111111111111\",\"spanId\":\"2222222222222222\","
	"\"name\":\"n\",\"kind\":2,\"startTimeUnixNano\":\"1\","
	"\"endTimeUnixNano\":\"2\",\"attributes\":[{\"key\":\"i\",\"value\":"
	"{\"intValue\":\"5\"}}],\"status\":{\"code\":2},\"flags\":1}]}]}]}";

static void
test_span(void **state)
{
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_buf		 b = { 0 };

	(void)state;
	small_span(&s);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    0);
	expect(&b, span_pb, sizeof(span_pb));
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), 0);
	expect(&b, span_json, strlen(span_json));
	otlp_buf_free(&b);

	assert_string_equal(otlp_content_type(OTLP_PROTOBUF),
	    "application/x-protobuf");
	assert_string_equal(otlp_content_type(OTLP_JSON), "application/json");
}

/* a parent, a trace state, a status message */
static void
test_span_parent(void **state)
{
	static const uint8_t	 want[] = {
		0x1a, 0x03, 'a', '=', 'b',	/* trace_state (3) */
		0x22, 0x08,			/* parent_span_id (4) */
		0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33,
		0x2a, 0x01, 'n',
	};
	static const uint8_t	 status[] = {
		0x7a, 0x06, 0x12, 0x02, 'n', 'o', 0x18, 0x02,
	};
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_buf		 b = { 0 };
	json_t			*j;

	(void)state;
	small_span(&s);
	s.os_has_parent = 1;
	memset(s.os_parent_id, 0x33, sizeof(s.os_parent_id));
	s.os_trace_state = "a=b";
	s.os_status_msg = "no";
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_non_null(memmem(b.ob_buf, b.ob_len, want, sizeof(want)));
	assert_non_null(memmem(b.ob_buf, b.ob_len, status, sizeof(status)));
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), 0);
	assert_true(HAS(&b,
	    "\"traceState\":\"a=b\",\"parentSpanId\":\"3333333333333333\""));
	assert_true(HAS(&b, "\"status\":{\"message\":\"no\",\"code\":2}"));
	assert_non_null(j = json_loadb((const char *)b.ob_buf, b.ob_len, 0,
	    NULL));
	json_decref(j);
	otlp_buf_free(&b);
}

static const uint64_t	hbuckets[] = { 1, 1 };
static const double	hbounds[] = { 1.0 };

static void
small_histogram(struct otlp_histogram *h, struct otlp_hist_point *p)
{
	memset(p, 0, sizeof(*p));
	p->hp_time_ns = 3;
	p->hp_count = 2;
	p->hp_sum = 1.5;
	p->hp_buckets = hbuckets;
	p->hp_bounds = hbounds;
	p->hp_nbounds = 1;
	memset(h, 0, sizeof(*h));
	h->oh_name = "m";
	h->oh_points = p;
	h->oh_npoints = 1;
}

static const uint8_t hist_pb[] = {
	0x0a, 0x55,	/* ExportMetricsServiceRequest.resource_metrics, 85 */
	RESOURCE_BYTES,
	0x12, 0x47,	/* ResourceMetrics.scope_metrics, 71 */
	SCOPE_BYTES,
	0x12, 0x40,	/* ScopeMetrics.metrics, 64 */
	0x0a, 0x01, 'm',	/* name */
	0x4a, 0x3b,	/* histogram (9), 59 */
	0x0a, 0x37,	/* data_points, 55 */
	0x19, 3, 0, 0, 0, 0, 0, 0, 0,	/* time_unix_nano (3) */
	0x21, 2, 0, 0, 0, 0, 0, 0, 0,	/* count (4) */
	0x29, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,	/* sum (5): 1.5 */
	0x32, 0x10,	/* bucket_counts (6), packed */
	1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
	0x3a, 0x08,	/* explicit_bounds (7), packed */
	0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
	0x10, 0x02,	/* aggregation_temporality (2): CUMULATIVE */
};

static const char hist_json[] =
	"{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"k\","
	"\"value\":{\"stringValue\":\"v\"}}]},\"scopeMetrics\":[{\"scope\":"
	"{\"name\":\"s\"},\"metrics\":[{\"name\":\"m\",\"histogram\":"
	"{\"dataPoints\":[{\"timeUnixNano\":\"3\",\"count\":\"2\","
	"\"sum\":1.5,\"bucketCounts\":[\"1\",\"1\"],\"explicitBounds\":[1]}],"
	"\"aggregationTemporality\":2}}]}]}]}";

static void
test_histogram(void **state)
{
	struct otlp_histogram	 h;
	struct otlp_hist_point	 p;
	struct otlp_buf		 b = { 0 };

	(void)state;
	small_histogram(&h, &p);
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_PROTOBUF),
	    0);
	expect(&b, hist_pb, sizeof(hist_pb));
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_JSON), 0);
	expect(&b, hist_json, strlen(hist_json));
	otlp_buf_free(&b);
}

/* NaN and the infinities: protobuf carries them, JSON has no number */
static void
test_nonfinite(void **state)
{
	struct otlp_histogram	 h;
	struct otlp_hist_point	 p;
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_attr	 a = { "d", OTLP_V_DOUBLE, NULL, 0, 0, 0 };
	struct otlp_buf		 b = { 0 };
	double			 bound[1] = { INFINITY };

	(void)state;
	small_histogram(&h, &p);
	p.hp_sum = NAN;
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_PROTOBUF),
	    0);
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_JSON), -1);
	p.hp_sum = 0;
	p.hp_bounds = bound;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_JSON), -1);

	small_span(&s);
	s.os_attrs = &a;
	s.os_nattrs = 1;
	a.oa_dbl = -INFINITY;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), -1);
	/* a finite double: the shortest text that reads back the same */
	a.oa_dbl = 0.1;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), 0);
	assert_true(HAS(&b, "{\"doubleValue\":0.1}"));
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_true(HAS(&b, "\x12\x09\x21\x9a\x99\x99\x99\x99\x99\xb9\x3f"));
	otlp_buf_free(&b);
}

static void
test_utf8(void **state)
{
#define CASE(in, out) { in, sizeof(in) - 1, out, sizeof(out) - 1 }
	static const struct {
		const char	*in;
		size_t		 len;
		const char	*out;
		size_t		 outlen;
	} cases[] = {
		CASE("a\xff" "b", "a\xef\xbf\xbd" "b"),
		/* overlong */
		CASE("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"),
		/* a surrogate */
		CASE("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
		/* cut short */
		CASE("x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd"),
		/* past U+10FFFF */
		CASE("\xf4\x90\x80\x80",
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
		CASE("\xc3\xa9\xf0\x9f\x98\x80", "\xc3\xa9\xf0\x9f\x98\x80"),
		CASE("n\0ul", "n\0ul"),
	};
#undef CASE
	struct otlp_attr	 a = { "x", OTLP_V_STR, NULL, 0, 0, 0 };
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_buf		 b = { 0 };
	json_t			*j;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		otlp_buf_reset(&b);
		otlp_buf_add_utf8(&b, cases[i].in, cases[i].len);
		assert_int_equal(b.ob_len, cases[i].outlen);
		assert_memory_equal(b.ob_buf, cases[i].out, cases[i].outlen);
	}

	/* as a span's string value: protobuf with U+FFFD, JSON with \uFFFD */
	small_span(&s);
	s.os_attrs = &a;
	s.os_nattrs = 1;
	a.oa_str = "a\xff" "b";
	a.oa_len = 3;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_true(HAS(&b, "\x12\x07\x0a\x05" "a\xef\xbf\xbd" "b"));
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), 0);
	assert_true(HAS(&b, "{\"stringValue\":\"a\\uFFFDb\"}"));
	assert_non_null(j = json_loadb((const char *)b.ob_buf, b.ob_len, 0,
	    NULL));
	json_decref(j);
	/* a name too */
	s.os_name = "\x80";
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_true(HAS(&b, "\x2a\x03\xef\xbf\xbd"));
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), 0);
	assert_true(HAS(&b, "\"name\":\"\\uFFFD\""));
	otlp_buf_free(&b);
}

static void
test_empty(void **state)
{
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_histogram	 h;
	struct otlp_buf		 b = { 0 };
	struct otlp_attr	 nul = { "k", OTLP_V_STR, NULL, 0, 0, 0 };
	static const uint8_t	 bare[] = {
		0x0a, 0x26,		/* resource_spans, 38 */
		0x0a, 0x00,		/* resource: empty */
		0x12, 0x22,		/* scope_spans, 34 */
		0x0a, 0x00,		/* scope: empty */
		0x12, 0x1e,		/* spans, 30: ids and kind only */
		0x0a, 0x10,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x12, 0x08, 0, 0, 0, 0, 0, 0, 0, 0,
	};

	(void)state;
	/* no spans, no metrics: an empty request */
	assert_int_equal(otlp_encode_traces(&b, &res, NULL, 0, OTLP_PROTOBUF),
	    0);
	assert_int_equal(b.ob_len, 0);
	assert_int_equal(otlp_encode_metrics(&b, &res, NULL, 0,
	    OTLP_PROTOBUF), 0);
	assert_int_equal(b.ob_len, 0);
	assert_int_equal(otlp_encode_traces(&b, &res, NULL, 0, OTLP_JSON), 0);
	assert_int_equal(b.ob_len, strlen("{\"resourceSpans\":[]}"));
	assert_memory_equal(b.ob_buf, "{\"resourceSpans\":[]}", b.ob_len);
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_metrics(&b, &res, NULL, 0, OTLP_JSON), 0);
	assert_memory_equal(b.ob_buf, "{\"resourceMetrics\":[]}", b.ob_len);

	/* a span of zeroes and empty strings, no resource: what is left */
	memset(&s, 0, sizeof(s));
	s.os_kind = OTLP_KIND_INTERNAL;
	s.os_name = "";
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, NULL, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_int_equal(b.ob_len, sizeof(bare) + 2);
	assert_memory_equal(b.ob_buf, bare, sizeof(bare));
	assert_memory_equal(b.ob_buf + sizeof(bare), "\x30\x01", 2);
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, NULL, &sp, 1, OTLP_JSON), 0);
	assert_true(HAS(&b,
	    "{\"resource\":{},\"scopeSpans\":[{\"scope\":{},\"spans\":"));

	/* a string value of no bytes, NULL: "" (the oneof's value) */
	s.os_attrs = &nul;
	s.os_nattrs = 1;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, NULL, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_true(HAS(&b, "\x4a\x07\x0a\x01k\x12\x02\x0a\x00"));
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, NULL, &sp, 1, OTLP_JSON), 0);
	assert_true(HAS(&b,
	    "{\"key\":\"k\",\"value\":{\"stringValue\":\"\"}}"));

	/* a histogram without points */
	memset(&h, 0, sizeof(h));
	h.oh_name = "h";
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_JSON), 0);
	assert_true(HAS(&b,
	    "{\"name\":\"h\",\"histogram\":{\"aggregationTemporality\":2}}"));
	otlp_buf_free(&b);
}

/* a body of 128 bytes or more: its length in two bytes, three past
 * 16,383, the enclosing lengths grown to match */
static void
test_long_lengths(void **state)
{
	struct otlp_attr	 a = { "k", OTLP_V_STR, NULL, 0, 0, 0 };
	struct otlp_resource	 r = { &a, 1, "s", NULL };
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_buf		 b = { 0 };
	char			*big;

	(void)state;
	assert_non_null(big = malloc(20000));
	memset(big, 'z', 20000);
	a.oa_str = big;
	a.oa_len = 200;
	small_span(&s);
	assert_int_equal(otlp_encode_traces(&b, &r, &sp, 1, OTLP_PROTOBUF),
	    0);
	/* resource_spans 294 (215 + scope_spans 79, as in test_span),
	 * resource 212, attributes 209, AnyValue 203, string 200 */
	assert_memory_equal(b.ob_buf, "\x0a\xa6\x02\x0a\xd4\x01\x0a\xd1\x01"
	    "\x0a\x01k\x12\xcb\x01\x0a\xc8\x01zz", 20);
	assert_int_equal(b.ob_len, 3 + 294);
	otlp_buf_reset(&b);
	a.oa_len = 20000;
	assert_int_equal(otlp_encode_traces(&b, &r, &sp, 1, OTLP_PROTOBUF),
	    0);
	/* 20098, 20015, 20011, 20004, 20000; resource_spans' length past
	 * PB_MOVE_MAX is padded to its placeholder's five bytes (an
	 * overlong varint) rather than its body moved */
	assert_memory_equal(b.ob_buf, "\x0a\x82\x9d\x81\x80\x00"
	    "\x0a\xaf\x9c\x01"
	    "\x0a\xab\x9c\x01\x0a\x01k\x12\xa4\x9c\x01\x0a\xa0\x9c\x01z", 26);
	assert_int_equal(b.ob_len, 6 + 20098);
	otlp_buf_free(&b);
	free(big);
}

/* out of memory: a buffer already failed stays failed, and a size past
 * what can be allocated fails it */
static void
test_oom(void **state)
{
	struct otlp_span	 s;
	const struct otlp_span	*sp = &s;
	struct otlp_histogram	 h;
	struct otlp_hist_point	 p;
	struct otlp_buf		 b = { 0 };
	struct otlp_attr	 a = { "k", OTLP_V_STR, "v", 1, 0, 0 };

	(void)state;
	assert_int_equal(otlp_buf_room(&b, SIZE_MAX - 8), -1);
	assert_true(b.ob_failed);
	small_span(&s);
	small_histogram(&h, &p);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    -1);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), -1);
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_PROTOBUF),
	    -1);
	assert_int_equal(otlp_encode_metrics(&b, &res, &h, 1, OTLP_JSON), -1);
	assert_int_equal(otlp_encode_traces(&b, &res, NULL, 0, OTLP_PROTOBUF),
	    -1);
	assert_int_equal(b.ob_len, 0);
	/* reset: usable again, the request appended to what is there */
	otlp_buf_reset(&b);
	otlp_buf_add(&b, "pre", 3);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    0);
	assert_int_equal(b.ob_len, 3 + sizeof(span_pb));
	assert_memory_equal(b.ob_buf + 3, span_pb, sizeof(span_pb));
	/* a value type the encoder does not know, a key missing */
	a.oa_type = (enum otlp_vtype)99;
	s.os_attrs = &a;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    -1);
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_JSON), -1);
	a.oa_type = OTLP_V_STR;
	a.oa_key = NULL;
	otlp_buf_reset(&b);
	assert_int_equal(otlp_encode_traces(&b, &res, &sp, 1, OTLP_PROTOBUF),
	    -1);
	otlp_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_span_parent),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_nonfinite),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_long_lengths),
		cmocka_unit_test(test_oom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
