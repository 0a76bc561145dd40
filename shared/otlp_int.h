/*
 * What otlp.c (protobuf) and otlp_json.c (OTLP/JSON) share.
 */
#ifndef VMCPD_OTLP_INT_H
#define VMCPD_OTLP_INT_H

#include <string.h>

#include "shared/otlp.h"

/* AggregationTemporality: every histogram is cumulative */
#define OTLP_CUMULATIVE	2

/* the buffer grown for n more bytes, or -1 (ob_failed) */
int	otlp_buf_grow(struct otlp_buf *, size_t n);

/* room for n more bytes, or -1 (ob_failed): inline, as every field
 * written asks */
static inline int
otlp_buf_room(struct otlp_buf *b, size_t n)
{
	if (!b->ob_failed && n <= b->ob_cap - b->ob_len)
		return 0;
	return otlp_buf_grow(b, n);
}

static inline void
otlp_buf_add(struct otlp_buf *b, const void *p, size_t len)
{
	if (len == 0 || otlp_buf_room(b, len) == -1)
		return;
	memcpy(b->ob_buf + b->ob_len, p, len);
	b->ob_len += len;
}
/* s (len bytes) with each byte that is no part of a well-formed UTF-8
 * sequence (RFC 3629 4) written as U+FFFD */
void	otlp_buf_add_utf8(struct otlp_buf *, const char *s, size_t len);

int	otlp_json_traces(struct otlp_buf *, const struct otlp_resource *,
	    const struct otlp_span *const *, size_t);
int	otlp_json_metrics(struct otlp_buf *, const struct otlp_resource *,
	    const struct otlp_histogram *, size_t);

#endif /* VMCPD_OTLP_INT_H */
