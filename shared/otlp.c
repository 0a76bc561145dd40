/*
 * OTLP export requests as protobuf (otlp.h), written by hand: vmcpd
 * only ever writes these fifteen messages, never reads one, and the wire
 * format of that is a varint, a fixed-width number and a
 * length-delimited field.  libprotobuf-c would need protoc-c's generated
 * code for opentelemetry-proto's .proto files, kept in step with them,
 * and a runtime besides.  Field numbers: opentelemetry-proto v1
 * (collector/{trace,metrics}/v1, trace/v1/trace.proto,
 * metrics/v1/metrics.proto, common/v1/common.proto,
 * resource/v1/resource.proto).  Proto3 defaults (0, "") are left out,
 * as a protobuf library leaves them, except in AnyValue's oneof, where
 * a 0 or "" is the value.
 *
 * A length-delimited field is written with a one-byte length before its
 * body, which is moved up after when the body is 128 bytes or more:
 * no size pass, and each byte moves at most once per enclosing message
 * (six deep at most).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/otlp.h"
#include "shared/otlp_int.h"

/* wire types (protobuf encoding: "Message Structure") */
#define PB_VARINT	0
#define PB_I64		1
#define PB_LEN		2
#define PB_I32		5

/* a NULL resource: no attributes, a scope without a name */
static const struct otlp_resource otlp_no_resource;

void
otlp_buf_reset(struct otlp_buf *b)
{
	b->ob_len = 0;
	b->ob_failed = 0;
}

void
otlp_buf_free(struct otlp_buf *b)
{
	free(b->ob_buf);
	memset(b, 0, sizeof(*b));
}

int
otlp_buf_grow(struct otlp_buf *b, size_t n)
{
	size_t	 cap;
	uint8_t	*p;

	if (b->ob_failed)
		return -1;
	if (n <= b->ob_cap - b->ob_len)
		return 0;
	if (n > SIZE_MAX / 4 - b->ob_len) {
		b->ob_failed = 1;
		return -1;
	}
	cap = b->ob_cap > 256 ? b->ob_cap : 256;
	while (cap - b->ob_len < n)
		cap *= 2;
	if ((p = realloc(b->ob_buf, cap)) == NULL) {
		b->ob_failed = 1;
		return -1;
	}
	b->ob_buf = p;
	b->ob_cap = cap;
	return 0;
}

/* the length of the well-formed UTF-8 sequence at p (before end), or 0 */
static size_t
otlp_utf8_seq(const uint8_t *p, const uint8_t *end)
{
	size_t	 len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;	/* a continuation, an overlong lead, too high */
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if ((size_t)(end - p) < len)
		return 0;
	cp = p[0] & (0x7fu >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* the first byte at or past p (before end) that is not ASCII: eight at
 * a time (names, ids and URIs are ASCII as a rule) */
static const uint8_t *
otlp_ascii_end(const uint8_t *p, const uint8_t *end)
{
	uint64_t	 w;

	while (end - p >= 8) {
		memcpy(&w, p, sizeof(w));
		if (w & 0x8080808080808080ULL)
			break;
		p += 8;
	}
	while (p < end && *p < 0x80)
		p++;
	return p;
}

void
otlp_buf_add_utf8(struct otlp_buf *b, const char *s, size_t len)
{
	const uint8_t	*p, *end, *run;
	size_t		 n;

	if (len == 0)
		return;		/* s may be NULL */
	p = run = (const uint8_t *)s;
	end = p + len;
	while ((p = otlp_ascii_end(p, end)) < end) {
		if ((n = otlp_utf8_seq(p, end)) > 0) {
			p += n;
			continue;
		}
		otlp_buf_add(b, run, (size_t)(p - run));
		otlp_buf_add(b, "\xef\xbf\xbd", 3);
		run = ++p;
	}
	otlp_buf_add(b, run, (size_t)(p - run));
}

const char *
otlp_content_type(enum otlp_format f)
{
	return f == OTLP_JSON ? "application/json" : "application/x-protobuf";
}

static void
pb_varint(struct otlp_buf *b, uint64_t v)
{
	uint8_t	*o;

	if (otlp_buf_room(b, 10) == -1)
		return;
	o = b->ob_buf + b->ob_len;
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	b->ob_len = (size_t)(o - b->ob_buf);
}

static void
pb_tag(struct otlp_buf *b, unsigned field, unsigned wtype)
{
	pb_varint(b, (uint64_t)field << 3 | wtype);
}

/* little-endian, n bytes */
static void
pb_le(struct otlp_buf *b, uint64_t v, size_t n)
{
	uint8_t	 t[8];
	size_t	 i;

	for (i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	otlp_buf_add(b, t, n);
}

static void
pb_fixed64(struct otlp_buf *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, PB_I64);
	pb_le(b, v, 8);
}

static uint64_t
pb_dbits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/*
 * A length-delimited field opened: where its body starts, for
 * pb_close(), after a placeholder of width bytes for its length.  A
 * message that usually passes 127 bytes (a span, the lists of them)
 * gets a wider one, so that its body need not move once written.
 */
#define PB_MOVE_MAX	4096	/* moved down to a short length below */

static size_t
pb_open_w(struct otlp_buf *b, unsigned field, size_t width)
{
	static const uint8_t	 zero[5];

	pb_tag(b, field, PB_LEN);
	otlp_buf_add(b, zero, width);
	return b->ob_len;
}

static size_t
pb_open(struct otlp_buf *b, unsigned field)
{
	return pb_open_w(b, field, 1);
}

/*
 * Its length written into the placeholder of width bytes before body:
 * the body moved up when the length needs more, down when it needs
 * fewer and is short, else the length padded to the placeholder's
 * width (an overlong varint, which protobuf parsers read: it spares
 * moving a whole batch).
 */
static void
pb_close_w(struct otlp_buf *b, size_t body, size_t width)
{
	size_t	 len, k, v, i;
	uint8_t	*o;

	if (b->ob_failed)
		return;
	len = b->ob_len - body;
	for (k = 1, v = len; v >= 0x80; v >>= 7)
		k++;
	if (k > width) {
		if (otlp_buf_room(b, k - width) == -1)
			return;
		memmove(b->ob_buf + body + k - width, b->ob_buf + body, len);
		b->ob_len += k - width;
	} else if (k < width && len <= PB_MOVE_MAX) {
		memmove(b->ob_buf + body - (width - k), b->ob_buf + body, len);
		b->ob_len -= width - k;
	} else
		k = width;	/* padded */
	o = b->ob_buf + body - width;
	for (i = 1, v = len; i < k; i++, v >>= 7)
		*o++ = (uint8_t)((v & 0x7f) | 0x80);
	*o = (uint8_t)v;
}

static void
pb_close(struct otlp_buf *b, size_t body)
{
	pb_close_w(b, body, 1);
}

static void
pb_bytes(struct otlp_buf *b, unsigned field, const void *p, size_t len)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	otlp_buf_add(b, p, len);
}

static void
pb_string(struct otlp_buf *b, unsigned field, const char *s, size_t len)
{
	const uint8_t	*p = (const uint8_t *)s;
	size_t		 body;

	/* ASCII (the rule): its length known, no placeholder to fix */
	if (len == 0 || otlp_ascii_end(p, p + len) == p + len) {
		pb_tag(b, field, PB_LEN);
		pb_varint(b, len);
		otlp_buf_add(b, s, len);
		return;
	}
	body = pb_open(b, field);
	otlp_buf_add_utf8(b, s, len);
	pb_close(b, body);
}

/* a string field left out when NULL or empty (proto3's default) */
static void
pb_cstr(struct otlp_buf *b, unsigned field, const char *s)
{
	if (s != NULL && *s != '\0')
		pb_string(b, field, s, strlen(s));
}

/* repeated KeyValue, each {key = 1, value = 2: AnyValue} */
/* a varint's length */
static size_t
pb_vlen(uint64_t v)
{
	size_t	 n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * A KeyValue of an ASCII key and a string or integer value, written at
 * once: its lengths are known before, so nothing is opened and fixed
 * after (the common attribute).  -1: not such an attribute, nothing
 * written.
 */
static int
pb_attr_direct(struct otlp_buf *b, unsigned field, const struct otlp_attr *a)
{
	const uint8_t	*k = (const uint8_t *)a->oa_key;
	const uint8_t	*v = (const uint8_t *)a->oa_str;
	size_t		 klen = strlen(a->oa_key), av, kv;

	if (klen == 0 || otlp_ascii_end(k, k + klen) != k + klen)
		return -1;
	switch (a->oa_type) {
	case OTLP_V_STR:
		if (a->oa_len > 0 &&
		    otlp_ascii_end(v, v + a->oa_len) != v + a->oa_len)
			return -1;
		av = pb_vlen(1 << 3 | PB_LEN) + pb_vlen(a->oa_len) +
		    a->oa_len;
		break;
	case OTLP_V_INT:
		av = pb_vlen(3 << 3 | PB_VARINT) + pb_vlen((uint64_t)a->oa_int);
		break;
	default:
		return -1;
	}
	kv = pb_vlen(1 << 3 | PB_LEN) + pb_vlen(klen) + klen +
	    pb_vlen(2 << 3 | PB_LEN) + pb_vlen(av) + av;
	pb_tag(b, field, PB_LEN);
	pb_varint(b, kv);
	pb_tag(b, 1, PB_LEN);
	pb_varint(b, klen);
	otlp_buf_add(b, k, klen);
	pb_tag(b, 2, PB_LEN);
	pb_varint(b, av);
	if (a->oa_type == OTLP_V_STR) {
		pb_tag(b, 1, PB_LEN);
		pb_varint(b, a->oa_len);
		otlp_buf_add(b, v, a->oa_len);
	} else {
		pb_tag(b, 3, PB_VARINT);
		pb_varint(b, (uint64_t)a->oa_int);
	}
	return 0;
}

static int
pb_attrs(struct otlp_buf *b, unsigned field, const struct otlp_attr *a,
    size_t n)
{
	size_t	 i, kv, av;

	for (i = 0; i < n; i++, a++) {
		if (a->oa_key == NULL)
			return -1;
		if (pb_attr_direct(b, field, a) == 0)
			continue;
		kv = pb_open(b, field);
		pb_cstr(b, 1, a->oa_key);
		av = pb_open(b, 2);
		switch (a->oa_type) {
		case OTLP_V_STR:
			pb_string(b, 1, a->oa_str, a->oa_len);
			break;
		case OTLP_V_BOOL:
			pb_tag(b, 2, PB_VARINT);
			pb_varint(b, a->oa_int != 0);
			break;
		case OTLP_V_INT:
			pb_tag(b, 3, PB_VARINT);
			pb_varint(b, (uint64_t)a->oa_int);
			break;
		case OTLP_V_DOUBLE:
			pb_fixed64(b, 4, pb_dbits(a->oa_dbl));
			break;
		default:
			return -1;
		}
		pb_close(b, av);
		pb_close(b, kv);
	}
	return 0;
}

/* Resource (field 1 of ResourceSpans and ResourceMetrics) and the
 * InstrumentationScope (field 1 of ScopeSpans and ScopeMetrics) */
static int
pb_resource(struct otlp_buf *b, const struct otlp_resource *r)
{
	size_t	 m;

	m = pb_open(b, 1);
	if (pb_attrs(b, 1, r->or_attrs, r->or_nattrs) == -1)
		return -1;
	pb_close(b, m);
	return 0;
}

static void
pb_scope(struct otlp_buf *b, const struct otlp_resource *r)
{
	size_t	 m;

	m = pb_open(b, 1);
	pb_cstr(b, 1, r->or_scope_name);
	pb_cstr(b, 2, r->or_scope_version);
	pb_close(b, m);
}

static int
pb_span(struct otlp_buf *b, const struct otlp_span *s)
{
	size_t	 m, st;

	if (s == NULL)
		return -1;
	m = pb_open_w(b, 2, 2);		/* ScopeSpans.spans */
	pb_bytes(b, 1, s->os_trace_id, sizeof(s->os_trace_id));
	pb_bytes(b, 2, s->os_span_id, sizeof(s->os_span_id));
	pb_cstr(b, 3, s->os_trace_state);
	if (s->os_has_parent)
		pb_bytes(b, 4, s->os_parent_id, sizeof(s->os_parent_id));
	pb_cstr(b, 5, s->os_name);
	if (s->os_kind != 0) {
		pb_tag(b, 6, PB_VARINT);
		pb_varint(b, (uint64_t)s->os_kind);
	}
	if (s->os_start_ns != 0)
		pb_fixed64(b, 7, s->os_start_ns);
	if (s->os_end_ns != 0)
		pb_fixed64(b, 8, s->os_end_ns);
	if (pb_attrs(b, 9, s->os_attrs, s->os_nattrs) == -1)
		return -1;
	if (s->os_status != OTLP_STATUS_UNSET ||
	    (s->os_status_msg != NULL && *s->os_status_msg != '\0')) {
		st = pb_open(b, 15);
		pb_cstr(b, 2, s->os_status_msg);
		if (s->os_status != OTLP_STATUS_UNSET) {
			pb_tag(b, 3, PB_VARINT);
			pb_varint(b, (uint64_t)s->os_status);
		}
		pb_close(b, st);
	}
	if (s->os_flags != 0) {
		pb_tag(b, 16, PB_I32);
		pb_le(b, s->os_flags, 4);
	}
	pb_close_w(b, m, 2);
	return 0;
}

static int
pb_point(struct otlp_buf *b, const struct otlp_hist_point *p)
{
	size_t	 m, f, i;

	if (p->hp_nbounds > SIZE_MAX / 16)
		return -1;
	m = pb_open(b, 1);		/* Histogram.data_points */
	if (p->hp_start_ns != 0)
		pb_fixed64(b, 2, p->hp_start_ns);
	if (p->hp_time_ns != 0)
		pb_fixed64(b, 3, p->hp_time_ns);
	if (p->hp_count != 0)
		pb_fixed64(b, 4, p->hp_count);
	/* optional double: present even when 0 */
	pb_fixed64(b, 5, pb_dbits(p->hp_sum));
	if (p->hp_buckets != NULL) {
		f = pb_open(b, 6);	/* packed fixed64 */
		for (i = 0; i <= p->hp_nbounds; i++)
			pb_le(b, p->hp_buckets[i], 8);
		pb_close(b, f);
	}
	if (p->hp_nbounds > 0 && p->hp_bounds != NULL) {
		f = pb_open(b, 7);	/* packed double */
		for (i = 0; i < p->hp_nbounds; i++)
			pb_le(b, pb_dbits(p->hp_bounds[i]), 8);
		pb_close(b, f);
	}
	if (pb_attrs(b, 9, p->hp_attrs, p->hp_nattrs) == -1)
		return -1;
	pb_close(b, m);
	return 0;
}

static int
pb_histogram(struct otlp_buf *b, const struct otlp_histogram *h)
{
	size_t	 m, hm, i;

	m = pb_open(b, 2);		/* ScopeMetrics.metrics */
	pb_cstr(b, 1, h->oh_name);
	pb_cstr(b, 2, h->oh_desc);
	pb_cstr(b, 3, h->oh_unit);
	hm = pb_open(b, 9);		/* Metric.histogram */
	for (i = 0; i < h->oh_npoints; i++)
		if (pb_point(b, &h->oh_points[i]) == -1)
			return -1;
	pb_tag(b, 2, PB_VARINT);
	pb_varint(b, OTLP_CUMULATIVE);
	pb_close(b, hm);
	pb_close(b, m);
	return 0;
}

static int
pb_span_at(struct otlp_buf *b, const void *items, size_t i)
{
	return pb_span(b, ((const struct otlp_span *const *)items)[i]);
}

static int
pb_histogram_at(struct otlp_buf *b, const void *items, size_t i)
{
	return pb_histogram(b, (const struct otlp_histogram *)items + i);
}

/* an Export{Trace,Metrics}ServiceRequest of one Resource{Spans,Metrics}
 * with one Scope{Spans,Metrics} of n items, each written by item();
 * nothing for none */
static int
pb_request(struct otlp_buf *out, const struct otlp_resource *r,
    const void *items, size_t n,
    int (*item)(struct otlp_buf *, const void *, size_t))
{
	size_t	 rs, ss, i;

	if (n == 0)
		return out->ob_failed ? -1 : 0;
	rs = pb_open_w(out, 1, 5);	/* resource_{spans,metrics} */
	if (pb_resource(out, r) == -1)
		return -1;
	ss = pb_open_w(out, 2, 5);	/* scope_{spans,metrics} */
	pb_scope(out, r);
	for (i = 0; i < n; i++)
		if (item(out, items, i) == -1)
			return -1;
	pb_close_w(out, ss, 5);
	pb_close_w(out, rs, 5);
	return out->ob_failed ? -1 : 0;
}

int
otlp_encode_traces(struct otlp_buf *out, const struct otlp_resource *r,
    const struct otlp_span *const *spans, size_t nspans,
    enum otlp_format f)
{
	if (r == NULL)
		r = &otlp_no_resource;
	if (f == OTLP_JSON)
		return otlp_json_traces(out, r, spans, nspans);
	return pb_request(out, r, spans, nspans, pb_span_at);
}

int
otlp_encode_metrics(struct otlp_buf *out, const struct otlp_resource *r,
    const struct otlp_histogram *h, size_t nhist, enum otlp_format f)
{
	if (r == NULL)
		r = &otlp_no_resource;
	if (f == OTLP_JSON)
		return otlp_json_metrics(out, r, h, nhist);
	return pb_request(out, r, h, nhist, pb_histogram_at);
}
