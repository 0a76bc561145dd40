/*
 * The OTLP encoder on a known request, for tests/interop/otlp_codec.test.mjs
 * (which decodes what it writes with the OpenTelemetry JS packages):
 *
 *	drive_otlp DIR
 *
 * writes DIR/traces.pb, DIR/traces.json, DIR/metrics.pb and
 * DIR/metrics.json: three spans (a root SERVER span with an attribute of
 * each type, one that is not UTF-8 and two long enough for lengths of two
 * and three bytes; a CLIENT child; an INTERNAL one) and two histograms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/otlp.h"

static char	long300[300], long20k[20000];

static const struct otlp_attr res_attrs[] = {
	{ "service.name", OTLP_V_STR, "vmcpd-test", 10, 0, 0 },
	{ "process.pid", OTLP_V_INT, NULL, 0, 4242, 0 },
};

static const struct otlp_resource res = {
	res_attrs, 2, "vmcpd", "1.2.3"
};

static struct otlp_attr span1_attrs[] = {
	{ "mcp.method.name", OTLP_V_STR, "tools/call", 10, 0, 0 },
	{ "http.response.status_code", OTLP_V_INT, NULL, 0, 200, 0 },
	{ "yes", OTLP_V_BOOL, NULL, 0, 1, 0 },
	{ "no", OTLP_V_BOOL, NULL, 0, 0, 0 },
	{ "neg", OTLP_V_INT, NULL, 0, -5, 0 },
	{ "zero", OTLP_V_INT, NULL, 0, 0, 0 },
	{ "big", OTLP_V_INT, NULL, 0, INT64_MIN, 0 },
	{ "ratio", OTLP_V_DOUBLE, NULL, 0, 0, 0.25 },
	{ "bad", OTLP_V_STR, "a\xff" "b\xc3", 4, 0, 0 },
	{ "empty", OTLP_V_STR, "", 0, 0, 0 },
	{ "long300", OTLP_V_STR, long300, sizeof(long300), 0, 0 },
	{ "long20k", OTLP_V_STR, long20k, sizeof(long20k), 0, 0 },
	{ "uni", OTLP_V_STR, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, 0,
	    0 },
};

static const struct otlp_attr span2_attrs[] = {
	{ "vmcpd.backend.name", OTLP_V_STR, "alpha", 5, 0, 0 },
};

static const struct otlp_attr pt_attrs[] = {
	{ "method", OTLP_V_STR, "tools/call", 10, 0, 0 },
};

static const uint64_t	buckets[] = { 1, 2, 3, 0, 4 };
static const double	bounds[] = { 0.005, 0.01, 0.1, 1 };

static int
put(const char *dir, const char *name, const struct otlp_buf *b)
{
	char	 path[4096];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL)
		return -1;
	if (fwrite(b->ob_buf, 1, b->ob_len, f) != b->ob_len) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

int
main(int argc, char *argv[])
{
	struct otlp_span	 s1, s2, s3;
	const struct otlp_span	*spans[] = { &s1, &s2, &s3 };
	struct otlp_hist_point	 pts[2];
	struct otlp_histogram	 h[2];
	struct otlp_buf		 b;
	size_t			 i;
	int			 f;
	static const char *const names[2][2] = {
		{ "traces.pb", "metrics.pb" },
		{ "traces.json", "metrics.json" },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: drive_otlp DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(long300); i++)
		long300[i] = (char)('a' + i % 26);
	memset(long20k, 'z', sizeof(long20k));

	memset(&s1, 0, sizeof(s1));
	for (i = 0; i < 16; i++)
		s1.os_trace_id[i] = (uint8_t)(i + 1);
	for (i = 0; i < 8; i++)
		s1.os_span_id[i] = (uint8_t)(0xa1 + i);
	s1.os_trace_state = "vendor=abc,x=1";
	s1.os_flags = 0x101;
	s1.os_name = "tools/call echo";
	s1.os_kind = OTLP_KIND_SERVER;
	s1.os_start_ns = 1765000000123456789ULL;
	s1.os_end_ns = 1765000000223456789ULL;
	s1.os_attrs = span1_attrs;
	s1.os_nattrs = sizeof(span1_attrs) / sizeof(span1_attrs[0]);
	s1.os_status = OTLP_STATUS_ERROR;
	s1.os_status_msg = "boom";

	s2 = s1;
	s2.os_span_id[7] = 0xff;
	memcpy(s2.os_parent_id, s1.os_span_id, 8);
	s2.os_has_parent = 1;
	s2.os_trace_state = NULL;
	s2.os_flags = 0x301;
	s2.os_name = "tools/call echo_backend";
	s2.os_kind = OTLP_KIND_CLIENT;
	s2.os_start_ns = 1765000000133456789ULL;
	s2.os_end_ns = 1765000000213456789ULL;
	s2.os_attrs = span2_attrs;
	s2.os_nattrs = 1;
	s2.os_status = OTLP_STATUS_UNSET;
	s2.os_status_msg = NULL;

	s3 = s2;
	s3.os_span_id[7] = 0xee;
	s3.os_flags = 0;
	s3.os_name = "vmcpd.ratelimit";
	s3.os_kind = OTLP_KIND_INTERNAL;
	s3.os_attrs = NULL;
	s3.os_nattrs = 0;
	s3.os_status = OTLP_STATUS_OK;

	memset(pts, 0, sizeof(pts));
	pts[0].hp_attrs = pt_attrs;
	pts[0].hp_nattrs = 1;
	pts[0].hp_start_ns = 1765000000000000000ULL;
	pts[0].hp_time_ns = 1765000060000000001ULL;
	pts[0].hp_count = 10;
	pts[0].hp_sum = 3.75;
	pts[0].hp_buckets = buckets;
	pts[0].hp_bounds = bounds;
	pts[0].hp_nbounds = 4;
	pts[1].hp_time_ns = 1765000060000000001ULL;

	memset(h, 0, sizeof(h));
	h[0].oh_name = "mcp.server.operation.duration";
	h[0].oh_desc = "MCP request duration";
	h[0].oh_unit = "s";
	h[0].oh_points = pts;
	h[0].oh_npoints = 2;
	h[1].oh_name = "empty";

	memset(&b, 0, sizeof(b));
	for (f = 0; f < 2; f++) {
		otlp_buf_reset(&b);
		if (otlp_encode_traces(&b, &res, spans, 3,
		    f ? OTLP_JSON : OTLP_PROTOBUF) == -1 ||
		    put(argv[1], names[f][0], &b) == -1)
			goto fail;
		otlp_buf_reset(&b);
		if (otlp_encode_metrics(&b, &res, h, 2,
		    f ? OTLP_JSON : OTLP_PROTOBUF) == -1 ||
		    put(argv[1], names[f][1], &b) == -1)
			goto fail;
	}
	otlp_buf_free(&b);
	return 0;
fail:
	fprintf(stderr, "drive_otlp: failed\n");
	otlp_buf_free(&b);
	return 1;
}
