/*
 * What otlp.c (protobuf) and otlp_json.c (OTLP/JSON) share.
 */
#ifndef VMCPD_OTLP_INT_H
#define VMCPD_OTLP_INT_H

#include "shared/otlp.h"

/* AggregationTemporality: every histogram is cumulative */
#define OTLP_CUMULATIVE	2

/* room for n more bytes, or -1 (ob_failed) */
int	otlp_buf_room(struct otlp_buf *, size_t n);
void	otlp_buf_add(struct otlp_buf *, const void *, size_t len);
/* s (len bytes) with each byte that is no part of a well-formed UTF-8
 * sequence (RFC 3629 4) written as U+FFFD */
void	otlp_buf_add_utf8(struct otlp_buf *, const char *s, size_t len);

int	otlp_json_traces(struct otlp_buf *, const struct otlp_resource *,
	    const struct otlp_span *const *, size_t);
int	otlp_json_metrics(struct otlp_buf *, const struct otlp_resource *,
	    const struct otlp_histogram *, size_t);

#endif /* VMCPD_OTLP_INT_H */
