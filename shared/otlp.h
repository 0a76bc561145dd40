/*
 * OTLP (https://opentelemetry.io/docs/specs/otlp/), pure: an export
 * request of spans (ExportTraceServiceRequest) or of histograms
 * (ExportMetricsServiceRequest) written from caller's structures, as
 * protobuf (opentelemetry-proto's trace.proto, metrics.proto,
 * common.proto, resource.proto) or as OTLP/JSON (ids as hex, enums as
 * numbers, 64-bit integers as strings).  Written by hand: the few
 * write-only messages are smaller than a protobuf runtime and its
 * generated code (see otlp.c).  No I/O; every string is the caller's
 * and borrowed.
 */
#ifndef VMCPD_OTLP_H
#define VMCPD_OTLP_H

#include <stddef.h>
#include <stdint.h>

enum otlp_format {
	OTLP_PROTOBUF = 0,	/* application/x-protobuf */
	OTLP_JSON		/* application/json */
};

enum otlp_vtype {
	OTLP_V_STR = 1,
	OTLP_V_INT,
	OTLP_V_BOOL,
	OTLP_V_DOUBLE
};

/* a KeyValue: oa_key a NUL-terminated name; a string value oa_len
 * bytes (UTF-8; one that is not is written with U+FFFD for each bad
 * byte), an integer or a bool in oa_int, a double in oa_dbl */
struct otlp_attr {
	const char	*oa_key;
	enum otlp_vtype	 oa_type;
	const char	*oa_str;
	size_t		 oa_len;
	int64_t		 oa_int;
	double		 oa_dbl;
};

/* Span.SpanKind */
enum otlp_span_kind {
	OTLP_KIND_INTERNAL = 1,
	OTLP_KIND_SERVER = 2,
	OTLP_KIND_CLIENT = 3
};

/* Status.StatusCode */
enum otlp_status {
	OTLP_STATUS_UNSET = 0,
	OTLP_STATUS_OK = 1,
	OTLP_STATUS_ERROR = 2
};

struct otlp_span {
	uint8_t			 os_trace_id[16];
	uint8_t			 os_span_id[8];
	uint8_t			 os_parent_id[8];
	int			 os_has_parent;	/* else no parent_span_id */
	const char		*os_trace_state;	/* or NULL */
	uint32_t		 os_flags;	/* Span.flags: W3C trace-flags */
	const char		*os_name;
	enum otlp_span_kind	 os_kind;
	uint64_t		 os_start_ns;	/* Unix epoch, ns */
	uint64_t		 os_end_ns;
	const struct otlp_attr	*os_attrs;
	size_t			 os_nattrs;
	enum otlp_status	 os_status;
	const char		*os_status_msg;	/* or NULL */
};

/* the Resource and the InstrumentationScope every span or metric of
 * one request is under */
struct otlp_resource {
	const struct otlp_attr	*or_attrs;
	size_t			 or_nattrs;
	const char		*or_scope_name;
	const char		*or_scope_version;	/* or NULL */
};

/* one HistogramDataPoint: hp_nbounds explicit bounds, hp_nbounds + 1
 * bucket counts (not cumulative, as OTLP has them) */
struct otlp_hist_point {
	const struct otlp_attr	*hp_attrs;
	size_t			 hp_nattrs;
	uint64_t		 hp_start_ns;
	uint64_t		 hp_time_ns;
	uint64_t		 hp_count;
	double			 hp_sum;
	const uint64_t		*hp_buckets;
	const double		*hp_bounds;
	size_t			 hp_nbounds;
};

/* a Metric with a Histogram of cumulative temporality */
struct otlp_histogram {
	const char			*oh_name;
	const char			*oh_desc;	/* or NULL */
	const char			*oh_unit;	/* or NULL */
	const struct otlp_hist_point	*oh_points;
	size_t				 oh_npoints;
};

/* a growing output buffer; ob_failed: out of memory, ob_buf not whole */
struct otlp_buf {
	uint8_t		*ob_buf;
	size_t		 ob_len;
	size_t		 ob_cap;
	int		 ob_failed;
};

void	otlp_buf_reset(struct otlp_buf *);	/* empty, memory kept */
void	otlp_buf_free(struct otlp_buf *);

/*
 * One export request appended to out: 0, or -1 (out of memory, or a
 * span or point the format cannot carry; out then holds a part).
 */
int	otlp_encode_traces(struct otlp_buf *out, const struct otlp_resource *,
	    const struct otlp_span *const *spans, size_t nspans,
	    enum otlp_format);
int	otlp_encode_metrics(struct otlp_buf *out, const struct otlp_resource *,
	    const struct otlp_histogram *, size_t nhist, enum otlp_format);
/* the Content-Type of a format */
const char *otlp_content_type(enum otlp_format);

#endif /* VMCPD_OTLP_H */
