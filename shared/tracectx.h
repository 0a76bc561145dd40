/*
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), pure: the
 * traceparent header's value parsed and written, tracestate checked,
 * and the ratio sampler's decision on a trace id.  What a client sends
 * is read here (the traceparent header, or params._meta.traceparent
 * of MCP 2026-07-28), so every function takes bytes of any content.
 */
#ifndef VMCPD_TRACECTX_H
#define VMCPD_TRACECTX_H

#include <stddef.h>
#include <stdint.h>

#define TRACECTX_TRACE_LEN	16	/* trace-id bytes */
#define TRACECTX_SPAN_LEN	8	/* parent-id / span-id bytes */
/* "00-" 32 hex "-" 16 hex "-" 2 hex */
#define TRACECTX_HEADER_LEN	55
#define TRACECTX_STATE_MAX	512	/* tracestate: longer is dropped */
#define TRACECTX_SAMPLED	0x01	/* trace-flags */

struct tracectx {
	uint8_t		tc_trace[TRACECTX_TRACE_LEN];
	uint8_t		tc_span[TRACECTX_SPAN_LEN];
	uint8_t		tc_flags;
};

/*
 * traceparent (len bytes, no NUL needed; surrounding OWS allowed) into
 * tc: 0, or -1 (tc unspecified): not version 00's form (lower-case hex
 * only), an all-zero trace-id or parent-id, version ff, or a version
 * above 00 whose first 55 bytes do not parse or that goes on with
 * anything but '-' (Level 2, 3.2.4: a later version is read as 00).
 */
int	tracectx_parse(struct tracectx *, const char *s, size_t len);
/* tc as version 00's traceparent, NUL-terminated */
void	tracectx_format(const struct tracectx *,
	    char out[TRACECTX_HEADER_LEN + 1]);
/*
 * 0 if tracestate (len bytes) is a list vmcpd may pass on: at most 32
 * members of key=value (empty and OWS-only members allowed, counted),
 * keys and values per 3.3.1, no key twice, at least one key=value, at
 * most TRACECTX_STATE_MAX bytes; -1: drop it.
 */
int	tracectx_state_check(const char *s, size_t len);
/*
 * The ratio sampler (OpenTelemetry TraceIdRatioBased, on the trace
 * id's 56 low bits as W3C Level 2's random flag has them): the
 * threshold for rate (0..1; NaN or below 0 as 0, above 1 as 1), and
 * whether trace falls under it.  Rate 1 samples every trace, 0 none.
 */
uint64_t tracectx_ratio_threshold(double rate);
int	tracectx_ratio_sampled(const uint8_t trace[TRACECTX_TRACE_LEN],
	    uint64_t threshold);

#endif /* VMCPD_TRACECTX_H */
