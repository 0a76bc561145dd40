/*
 * The OTLP encoder (shared/otlp.c, shared/otlp_json.c) on spans and
 * histogram points cut out of the input: its strings are any bytes
 * (often not UTF-8), its numbers any bits (NaN, infinities, INT64_MIN).
 * The protobuf is walked back with the messages' field numbers and wire
 * types: every tag known, every length within its message, every string
 * UTF-8, as many spans or points as were given.  The OTLP/JSON parses
 * with jansson to as many spans or points; it fails only for a double
 * JSON cannot carry.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/otlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAXSPANS	6
#define MAXATTRS	5
#define MAXHIST		3
#define MAXPOINTS	3
#define MAXBOUNDS	5

struct in {
	const uint8_t	*i_p;
	size_t		 i_len;
};

static uint64_t
take(struct in *in, size_t n)
{
	uint64_t v = 0;

	while (n-- > 0 && in->i_len > 0) {
		v = v << 8 | *in->i_p++;
		in->i_len--;
	}
	return v;
}

static const char *
take_str(struct in *in, size_t *len)
{
	const char	*s = (const char *)in->i_p;

	*len = take(in, 1) % 24;
	if (*len > in->i_len)
		*len = in->i_len;
	in->i_p += *len;
	in->i_len -= *len;
	return s;
}

static double
take_double(struct in *in)
{
	uint64_t u = take(in, 8);
	double	 d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* a NUL-terminated copy for the fields otlp.h takes as C strings */
static char *
take_cstr(struct in *in, char *buf, size_t size)
{
	size_t		 len;
	const char	*s = take_str(in, &len);

	if (len >= size)
		len = size - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

static int
take_attrs(struct in *in, struct otlp_attr *a, char keys[][32], size_t *n)
{
	size_t	 i;
	int	 bad = 0;

	*n = take(in, 1) % (MAXATTRS + 1);
	for (i = 0; i < *n; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].oa_key = take_cstr(in, keys[i], sizeof(keys[i]));
		a[i].oa_type = (enum otlp_vtype)(1 + take(in, 1) % 4);
		switch (a[i].oa_type) {
		case OTLP_V_STR:
			a[i].oa_str = take_str(in, &a[i].oa_len);
			break;
		case OTLP_V_DOUBLE:
			a[i].oa_dbl = take_double(in);
			bad |= !isfinite(a[i].oa_dbl);
			break;
		default:
			a[i].oa_int = (int64_t)take(in, 8);
			break;
		}
	}
	return bad;
}

/* which message each length-delimited field holds (0: a string, 1:
 * bytes or packed numbers), and the wire type of the others */
enum pb_msg {
	M_LEAF_STR = 0, M_LEAF_BYTES, M_TREQ, M_RSPANS, M_RES, M_SSPANS,
	M_SCOPE, M_SPAN, M_KV, M_ANY, M_STATUS, M_MREQ, M_RMET, M_SMET,
	M_METRIC, M_HIST, M_POINT
};

static const struct pb_field {
	enum pb_msg	 f_in;
	unsigned	 f_no;
	unsigned	 f_wt;
	enum pb_msg	 f_msg;		/* when f_wt is 2 */
} pb_fields[] = {
	{ M_TREQ, 1, 2, M_RSPANS },
	{ M_RSPANS, 1, 2, M_RES }, { M_RSPANS, 2, 2, M_SSPANS },
	{ M_RES, 1, 2, M_KV },
	{ M_SSPANS, 1, 2, M_SCOPE }, { M_SSPANS, 2, 2, M_SPAN },
	{ M_SCOPE, 1, 2, M_LEAF_STR }, { M_SCOPE, 2, 2, M_LEAF_STR },
	{ M_SPAN, 1, 2, M_LEAF_BYTES }, { M_SPAN, 2, 2, M_LEAF_BYTES },
	{ M_SPAN, 3, 2, M_LEAF_STR }, { M_SPAN, 4, 2, M_LEAF_BYTES },
	{ M_SPAN, 5, 2, M_LEAF_STR }, { M_SPAN, 6, 0, 0 },
	{ M_SPAN, 7, 1, 0 }, { M_SPAN, 8, 1, 0 }, { M_SPAN, 9, 2, M_KV },
	{ M_SPAN, 15, 2, M_STATUS }, { M_SPAN, 16, 5, 0 },
	{ M_STATUS, 2, 2, M_LEAF_STR }, { M_STATUS, 3, 0, 0 },
	{ M_KV, 1, 2, M_LEAF_STR }, { M_KV, 2, 2, M_ANY },
	{ M_ANY, 1, 2, M_LEAF_STR }, { M_ANY, 2, 0, 0 }, { M_ANY, 3, 0, 0 },
	{ M_ANY, 4, 1, 0 },
	{ M_MREQ, 1, 2, M_RMET },
	{ M_RMET, 1, 2, M_RES }, { M_RMET, 2, 2, M_SMET },
	{ M_SMET, 1, 2, M_SCOPE }, { M_SMET, 2, 2, M_METRIC },
	{ M_METRIC, 1, 2, M_LEAF_STR }, { M_METRIC, 2, 2, M_LEAF_STR },
	{ M_METRIC, 3, 2, M_LEAF_STR }, { M_METRIC, 9, 2, M_HIST },
	{ M_HIST, 1, 2, M_POINT }, { M_HIST, 2, 0, 0 },
	{ M_POINT, 2, 1, 0 }, { M_POINT, 3, 1, 0 }, { M_POINT, 4, 1, 0 },
	{ M_POINT, 5, 1, 0 }, { M_POINT, 6, 2, M_LEAF_BYTES },
	{ M_POINT, 7, 2, M_LEAF_BYTES }, { M_POINT, 9, 2, M_KV },
};

static uint64_t
pb_varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift;

	for (shift = 0; shift < 70; shift += 7) {
		if (*p >= end)
			abort();	/* a varint past its message */
		v |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0)
			return v;
	}
	abort();			/* more than ten bytes */
}

/* a message of type m in [p, end): every field known and within it;
 * spans and points counted */
static void
pb_walk(const uint8_t *p, const uint8_t *end, enum pb_msg m,
    size_t *nspans, size_t *npoints)
{
	const struct pb_field	*f;
	uint64_t		 tag, len;
	size_t			 i;
	json_t			*s;

	while (p < end) {
		tag = pb_varint(&p, end);
		f = NULL;
		for (i = 0; i < sizeof(pb_fields) / sizeof(pb_fields[0]); i++)
			if (pb_fields[i].f_in == m &&
			    pb_fields[i].f_no == tag >> 3)
				f = &pb_fields[i];
		if (f == NULL || f->f_wt != (tag & 7))
			abort();
		switch (f->f_wt) {
		case 0:
			(void)pb_varint(&p, end);
			continue;
		case 1:
		case 5:
			if ((size_t)(end - p) < (f->f_wt == 1 ? 8u : 4u))
				abort();
			p += f->f_wt == 1 ? 8 : 4;
			continue;
		}
		len = pb_varint(&p, end);
		if (len > (uint64_t)(end - p))
			abort();	/* the length past its message */
		if (f->f_msg == M_LEAF_STR) {
			/* protobuf strings are UTF-8 */
			if ((s = json_stringn((const char *)p, len)) == NULL)
				abort();
			json_decref(s);
		} else if (f->f_msg == M_SPAN)
			++*nspans;
		else if (f->f_msg == M_POINT)
			++*npoints;
		if (f->f_msg != M_LEAF_STR && f->f_msg != M_LEAF_BYTES)
			pb_walk(p, p + len, f->f_msg, nspans, npoints);
		p += len;
	}
}

/* n items under the arrays at path (each an array of objects) */
static size_t
json_count(const json_t *v, const char *const *path, size_t depth)
{
	const json_t	*a = json_object_get(v, path[0]);
	size_t		 i, n = 0;

	if (a == NULL)
		return 0;
	if (json_is_object(a) && depth > 1)	/* Metric.histogram */
		return json_count(a, path + 1, depth - 1);
	if (!json_is_array(a))
		abort();
	if (depth == 1)
		return json_array_size(a);
	for (i = 0; i < json_array_size(a); i++)
		n += json_count(json_array_get(a, i), path + 1, depth - 1);
	return n;
}

static void
check(const struct otlp_buf *pb, int pbrc, const struct otlp_buf *js,
    int jsrc, int bad, enum pb_msg top, const char *const *path,
    size_t depth, size_t want, int points)
{
	size_t	 nspans = 0, npoints = 0;
	json_t	*v;

	if (pbrc != 0 || (jsrc != 0) != bad)
		abort();
	if (pb->ob_len > 0)
		pb_walk(pb->ob_buf, pb->ob_buf + pb->ob_len, top, &nspans,
		    &npoints);
	if ((points ? npoints : nspans) != want)
		abort();
	if (jsrc != 0)
		return;
	/* a string may hold U+0000, which JSON allows and jansson only
	 * when asked */
	if ((v = json_loadb((const char *)js->ob_buf, js->ob_len,
	    JSON_ALLOW_NUL, NULL)) == NULL || json_count(v, path, depth) !=
	    want)
		abort();
	json_decref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const tpath[] = {
		"resourceSpans", "scopeSpans", "spans"
	};
	static const char *const mpath[] = {
		"resourceMetrics", "scopeMetrics", "metrics", "histogram",
		"dataPoints"
	};
	struct in		 in = { data, size };
	struct otlp_attr	 rattrs[MAXATTRS], attrs[MAXSPANS][MAXATTRS];
	char			 rkeys[MAXATTRS][32];
	char			 keys[MAXSPANS][MAXATTRS][32];
	char			 names[MAXSPANS][32], states[MAXSPANS][32];
	char			 scope[2][32], hnames[MAXHIST][32];
	struct otlp_resource	 r;
	struct otlp_span	 sp[MAXSPANS];
	const struct otlp_span	*spp[MAXSPANS];
	struct otlp_hist_point	 pt[MAXHIST][MAXPOINTS];
	struct otlp_attr	 pattrs[MAXHIST][MAXPOINTS][MAXATTRS];
	char			 pkeys[MAXHIST][MAXPOINTS][MAXATTRS][32];
	struct otlp_histogram	 h[MAXHIST];
	uint64_t		 buckets[MAXHIST][MAXPOINTS][MAXBOUNDS + 1];
	double			 bounds[MAXHIST][MAXPOINTS][MAXBOUNDS];
	struct otlp_buf		 pb = { 0 }, js = { 0 };
	size_t			 n, nh, i, k, npts = 0, len;
	int			 bad, tbad = 0, mbad = 0;

	memset(&r, 0, sizeof(r));
	tbad = take_attrs(&in, rattrs, rkeys, &r.or_nattrs);
	r.or_attrs = rattrs;
	r.or_scope_name = take_cstr(&in, scope[0], sizeof(scope[0]));
	r.or_scope_version = take(&in, 1) & 1 ? NULL :
	    take_cstr(&in, scope[1], sizeof(scope[1]));
	mbad = tbad;

	n = take(&in, 1) % (MAXSPANS + 1);
	for (i = 0; i < n; i++) {
		memset(&sp[i], 0, sizeof(sp[i]));
		for (k = 0; k < 16; k++)
			sp[i].os_trace_id[k] = (uint8_t)take(&in, 1);
		for (k = 0; k < 8; k++)
			sp[i].os_span_id[k] = (uint8_t)take(&in, 1);
		sp[i].os_has_parent = take(&in, 1) & 1;
		for (k = 0; k < 8; k++)
			sp[i].os_parent_id[k] = (uint8_t)take(&in, 1);
		sp[i].os_trace_state = take(&in, 1) & 1 ? NULL :
		    take_cstr(&in, states[i], sizeof(states[i]));
		sp[i].os_flags = (uint32_t)take(&in, 4);
		sp[i].os_name = take_cstr(&in, names[i], sizeof(names[i]));
		sp[i].os_kind = (enum otlp_span_kind)(take(&in, 1) % 4);
		sp[i].os_start_ns = take(&in, 8);
		sp[i].os_end_ns = take(&in, 8);
		tbad |= take_attrs(&in, attrs[i], keys[i], &sp[i].os_nattrs);
		sp[i].os_attrs = attrs[i];
		sp[i].os_status = (enum otlp_status)(take(&in, 1) % 3);
		sp[i].os_status_msg = sp[i].os_trace_state;
		spp[i] = &sp[i];
	}
	check(&pb, otlp_encode_traces(&pb, &r, spp, n, OTLP_PROTOBUF), &js,
	    otlp_encode_traces(&js, &r, spp, n, OTLP_JSON), tbad && n > 0,
	    M_TREQ, tpath, 3, n, 0);

	nh = take(&in, 1) % (MAXHIST + 1);
	for (i = 0; i < nh; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i].oh_name = take_cstr(&in, hnames[i], sizeof(hnames[i]));
		h[i].oh_desc = take(&in, 1) & 1 ? NULL : "d\xff";
		h[i].oh_unit = take(&in, 1) & 1 ? NULL : "s";
		h[i].oh_points = pt[i];
		h[i].oh_npoints = take(&in, 1) % (MAXPOINTS + 1);
		for (k = 0; k < h[i].oh_npoints; k++) {
			struct otlp_hist_point *p = &pt[i][k];

			memset(p, 0, sizeof(*p));
			p->hp_start_ns = take(&in, 8);
			p->hp_time_ns = take(&in, 8);
			p->hp_count = take(&in, 8);
			p->hp_sum = take_double(&in);
			bad = !isfinite(p->hp_sum);
			p->hp_nbounds = take(&in, 1) % (MAXBOUNDS + 1);
			for (len = 0; len <= p->hp_nbounds; len++)
				buckets[i][k][len] = take(&in, 2);
			for (len = 0; len < p->hp_nbounds; len++) {
				bounds[i][k][len] = take_double(&in);
				bad |= !isfinite(bounds[i][k][len]);
			}
			p->hp_buckets = take(&in, 1) & 1 ? NULL :
			    buckets[i][k];
			p->hp_bounds = bounds[i][k];
			bad |= take_attrs(&in, pattrs[i][k], pkeys[i][k],
			    &p->hp_nattrs);
			p->hp_attrs = pattrs[i][k];
			mbad |= bad;
			npts++;
		}
	}
	otlp_buf_reset(&pb);
	otlp_buf_reset(&js);
	check(&pb, otlp_encode_metrics(&pb, &r, h, nh, OTLP_PROTOBUF), &js,
	    otlp_encode_metrics(&js, &r, h, nh, OTLP_JSON), mbad && nh > 0,
	    M_MREQ, mpath, 5, npts, 1);
	otlp_buf_free(&pb);
	otlp_buf_free(&js);
	return 0;
}
