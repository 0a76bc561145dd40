/*
 * OTLP export requests as OTLP/JSON (otlp.h): the protobuf JSON mapping
 * with OTLP's exceptions (OTLP 1.x, "JSON Protobuf Encoding"): field
 * names in lowerCamelCase, trace and span ids as lower-case hex, enums
 * as numbers, 64-bit integers as decimal strings.  The same messages and
 * the same left-out defaults as otlp.c.  A double that JSON has no
 * number for (NaN, an infinity) makes the request fail.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/hex.h"
#include "proto/jsonw.h"
#include "shared/otlp.h"
#include "shared/otlp_int.h"

struct oj {
	struct jsonw	 oj_w;
	struct otlp_buf	 oj_fix;	/* a string made UTF-8 */
};

/* jsonw has objects only: an array is opened as raw text */
static void
oj_arr(struct oj *j, const char *key)
{
	jsonw_raw(&j->oj_w, key, "[", 1);
	j->oj_w.jw_comma = 0;
}

static void
oj_arr_end(struct oj *j)
{
	jsonw_bytes(&j->oj_w, "]", 1);
	j->oj_w.jw_comma = 1;
}

/* a string; one that is not UTF-8 with U+FFFD for each bad byte */
static void
oj_strn(struct oj *j, const char *key, const char *s, size_t len)
{
	if (len == 0)
		s = "";		/* may have been NULL */
	if (jsonw_strn(&j->oj_w, key, s, len) == 0 || j->oj_w.jw_failed)
		return;
	otlp_buf_reset(&j->oj_fix);
	otlp_buf_add_utf8(&j->oj_fix, s, len);
	if (j->oj_fix.ob_failed ||
	    jsonw_strn(&j->oj_w, key, (const char *)j->oj_fix.ob_buf,
	    j->oj_fix.ob_len) == -1)
		j->oj_w.jw_failed = 1;
}

/* left out when NULL or empty, as otlp.c leaves it out */
static void
oj_cstr(struct oj *j, const char *key, const char *s)
{
	if (s != NULL && *s != '\0')
		oj_strn(j, key, s, strlen(s));
}

/* a 64-bit integer (v, negative if neg) as a JSON string */
static void
oj_int64(struct oj *j, const char *key, uint64_t v, int neg)
{
	char	 b[24], *o = b + sizeof(b);

	*--o = '"';
	do {
		*--o = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	if (neg)
		*--o = '-';
	*--o = '"';
	jsonw_raw(&j->oj_w, key, o, (size_t)(b + sizeof(b) - o));
}

static void
oj_u64(struct oj *j, const char *key, uint64_t v)
{
	oj_int64(j, key, v, 0);
}

/* a double as the shortest of %.15g, %.16g, %.17g that reads back the
 * same; -1 for NaN and the infinities */
static int
oj_double(struct oj *j, const char *key, double d)
{
	char	 b[32];
	int	 prec, n = 0;

	if (!isfinite(d))
		return -1;
	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(b, sizeof(b), "%.*g", prec, d);
		if (strtod(b, NULL) == d)
			break;
	}
	jsonw_raw(&j->oj_w, key, b, (size_t)n);
	return 0;
}

static void
oj_hex(struct oj *j, const char *key, const uint8_t *p, size_t len)
{
	char		 b[2 * 16 + 3];

	b[0] = '"';
	proto_hex(p, len, b + 1);
	b[1 + 2 * len] = '"';
	jsonw_raw(&j->oj_w, key, b, 2 * len + 2);
}

static int
oj_attrs(struct oj *j, const char *key, const struct otlp_attr *a,
    size_t n)
{
	size_t	 i;

	if (n == 0)
		return 0;
	oj_arr(j, key);
	for (i = 0; i < n; i++, a++) {
		if (a->oa_key == NULL)
			return -1;
		jsonw_obj(&j->oj_w, NULL);
		oj_strn(j, "key", a->oa_key, strlen(a->oa_key));
		jsonw_obj(&j->oj_w, "value");
		switch (a->oa_type) {
		case OTLP_V_STR:
			oj_strn(j, "stringValue", a->oa_str, a->oa_len);
			break;
		case OTLP_V_BOOL:
			jsonw_raw(&j->oj_w, "boolValue",
			    a->oa_int ? "true" : "false", a->oa_int ? 4 : 5);
			break;
		case OTLP_V_INT:
			oj_int64(j, "intValue", a->oa_int < 0 ?
			    0 - (uint64_t)a->oa_int : (uint64_t)a->oa_int,
			    a->oa_int < 0);
			break;
		case OTLP_V_DOUBLE:
			if (oj_double(j, "doubleValue", a->oa_dbl) == -1)
				return -1;
			break;
		default:
			return -1;
		}
		jsonw_end(&j->oj_w);
		jsonw_end(&j->oj_w);
	}
	oj_arr_end(j);
	return 0;
}

/* "resource": {...}, "scopeX": [{"scope": {...}, then the caller's
 * array named key */
static int
oj_head(struct oj *j, const char *top, const struct otlp_resource *r,
    const char *scopes, const char *key)
{
	oj_arr(j, top);
	jsonw_obj(&j->oj_w, NULL);
	jsonw_obj(&j->oj_w, "resource");
	if (oj_attrs(j, "attributes", r->or_attrs, r->or_nattrs) == -1)
		return -1;
	jsonw_end(&j->oj_w);
	oj_arr(j, scopes);
	jsonw_obj(&j->oj_w, NULL);
	jsonw_obj(&j->oj_w, "scope");
	oj_cstr(j, "name", r->or_scope_name);
	oj_cstr(j, "version", r->or_scope_version);
	jsonw_end(&j->oj_w);
	oj_arr(j, key);
	return 0;
}

/* the caller's array, the scope's, the resource's and the request's
 * closed, the text appended to out */
static int
oj_finish(struct oj *j, struct otlp_buf *out, int rc, int opened)
{
	if (rc == 0 && opened) {
		oj_arr_end(j);
		jsonw_end(&j->oj_w);
		oj_arr_end(j);
		jsonw_end(&j->oj_w);
		oj_arr_end(j);
	}
	if (rc == 0)
		jsonw_end(&j->oj_w);
	if (j->oj_w.jw_failed || j->oj_fix.ob_failed)
		rc = -1;
	if (rc == 0)
		otlp_buf_add(out, j->oj_w.jw_buf, j->oj_w.jw_len);
	if (out->ob_failed)
		rc = -1;
	jsonw_free(&j->oj_w);
	otlp_buf_free(&j->oj_fix);
	return rc;
}

static int
oj_span(struct oj *j, const struct otlp_span *s)
{
	struct jsonw	*w = &j->oj_w;

	if (s == NULL)
		return -1;
	jsonw_obj(w, NULL);
	oj_hex(j, "traceId", s->os_trace_id, sizeof(s->os_trace_id));
	oj_hex(j, "spanId", s->os_span_id, sizeof(s->os_span_id));
	oj_cstr(j, "traceState", s->os_trace_state);
	if (s->os_has_parent)
		oj_hex(j, "parentSpanId", s->os_parent_id,
		    sizeof(s->os_parent_id));
	oj_cstr(j, "name", s->os_name);
	if (s->os_kind != 0)
		jsonw_int(w, "kind", s->os_kind);
	if (s->os_start_ns != 0)
		oj_u64(j, "startTimeUnixNano", s->os_start_ns);
	if (s->os_end_ns != 0)
		oj_u64(j, "endTimeUnixNano", s->os_end_ns);
	if (oj_attrs(j, "attributes", s->os_attrs, s->os_nattrs) == -1)
		return -1;
	if (s->os_status != OTLP_STATUS_UNSET ||
	    (s->os_status_msg != NULL && *s->os_status_msg != '\0')) {
		jsonw_obj(w, "status");
		oj_cstr(j, "message", s->os_status_msg);
		if (s->os_status != OTLP_STATUS_UNSET)
			jsonw_int(w, "code", s->os_status);
		jsonw_end(w);
	}
	if (s->os_flags != 0)
		jsonw_int(w, "flags", s->os_flags);
	jsonw_end(w);
	return 0;
}

static int
oj_point(struct oj *j, const struct otlp_hist_point *p)
{
	struct jsonw	*w = &j->oj_w;
	size_t		 i;

	jsonw_obj(w, NULL);
	if (p->hp_start_ns != 0)
		oj_u64(j, "startTimeUnixNano", p->hp_start_ns);
	if (p->hp_time_ns != 0)
		oj_u64(j, "timeUnixNano", p->hp_time_ns);
	if (p->hp_count != 0)
		oj_u64(j, "count", p->hp_count);
	if (oj_double(j, "sum", p->hp_sum) == -1)
		return -1;
	if (p->hp_buckets != NULL) {
		oj_arr(j, "bucketCounts");
		for (i = 0; i <= p->hp_nbounds; i++)
			oj_u64(j, NULL, p->hp_buckets[i]);
		oj_arr_end(j);
	}
	if (p->hp_nbounds > 0 && p->hp_bounds != NULL) {
		oj_arr(j, "explicitBounds");
		for (i = 0; i < p->hp_nbounds; i++)
			if (oj_double(j, NULL, p->hp_bounds[i]) == -1)
				return -1;
		oj_arr_end(j);
	}
	if (oj_attrs(j, "attributes", p->hp_attrs, p->hp_nattrs) == -1)
		return -1;
	jsonw_end(w);
	return 0;
}

static int
oj_histogram(struct oj *j, const struct otlp_histogram *h)
{
	struct jsonw	*w = &j->oj_w;
	size_t		 i;

	jsonw_obj(w, NULL);
	oj_cstr(j, "name", h->oh_name);
	oj_cstr(j, "description", h->oh_desc);
	oj_cstr(j, "unit", h->oh_unit);
	jsonw_obj(w, "histogram");
	if (h->oh_npoints > 0) {
		oj_arr(j, "dataPoints");
		for (i = 0; i < h->oh_npoints; i++)
			if (oj_point(j, &h->oh_points[i]) == -1)
				return -1;
		oj_arr_end(j);
	}
	jsonw_int(w, "aggregationTemporality", OTLP_CUMULATIVE);
	jsonw_end(w);
	jsonw_end(w);
	return 0;
}

static int
oj_span_at(struct oj *j, const void *items, size_t i)
{
	return oj_span(j, ((const struct otlp_span *const *)items)[i]);
}

static int
oj_histogram_at(struct oj *j, const void *items, size_t i)
{
	return oj_histogram(j, (const struct otlp_histogram *)items + i);
}

/* as pb_request() in otlp.c; names: the request's array, the scopes'
 * array, the items' array */
static int
oj_request(struct otlp_buf *out, const struct otlp_resource *r,
    const char *const names[3], const void *items, size_t n,
    int (*item)(struct oj *, const void *, size_t))
{
	struct oj	 j;
	size_t		 i;
	int		 rc;

	memset(&j, 0, sizeof(j));
	jsonw_obj(&j.oj_w, NULL);
	if (n == 0) {
		oj_arr(&j, names[0]);
		oj_arr_end(&j);
		return oj_finish(&j, out, 0, 0);
	}
	rc = oj_head(&j, names[0], r, names[1], names[2]);
	for (i = 0; rc == 0 && i < n; i++)
		rc = item(&j, items, i);
	return oj_finish(&j, out, rc, 1);
}

int
otlp_json_traces(struct otlp_buf *out, const struct otlp_resource *r,
    const struct otlp_span *const *spans, size_t nspans)
{
	static const char *const names[3] = {
		"resourceSpans", "scopeSpans", "spans"
	};

	return oj_request(out, r, names, spans, nspans, oj_span_at);
}

int
otlp_json_metrics(struct otlp_buf *out, const struct otlp_resource *r,
    const struct otlp_histogram *h, size_t nhist)
{
	static const char *const names[3] = {
		"resourceMetrics", "scopeMetrics", "metrics"
	};

	return oj_request(out, r, names, h, nhist, oj_histogram_at);
}
