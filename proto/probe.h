/*
 * What a backend's answers tell of its revision (probe.c).
 */
#ifndef VMCPD_PROBE_H
#define VMCPD_PROBE_H

#include <jansson.h>

#include "proto/proto.h"

/*
 * A backend's revision from its answer to a 2026-07-28 server/discover
 * (Streamable HTTP, section Backward Compatibility): answered 0 when no
 * HTTP answer came (refused, reset, timeout); status the HTTP status;
 * msg the JSON-RPC response in
 * the body, or NULL.  Authentication refusals and transient failures
 * are inconclusive: PROTO_ERA_UNKNOWN (use Legacy, cache nothing).  A
 * reason goes in why.
 */
enum proto_era proto_probe_outcome(int answered, long status,
	    const json_t *msg, char *why, size_t whylen);
/*
 * A backend found 2026-07-28 by server/discover (which lists only that
 * revision when its 2025-11-25 side is served apart, as the SDK's
 * servers do) is then sent a 2025-11-25 initialize: PROTO_ERA_BOTH when
 * it negotiates a 2025 revision, PROTO_ERA_MODERN when it answers
 * anything else, PROTO_ERA_UNKNOWN when that is inconclusive (as
 * above).  A reason goes in why.
 */
enum proto_era proto_probe_initialize(int answered, long status,
	    const json_t *msg, char *why, size_t whylen);
/* 1 if a JSON-RPC response is one of 2026-07-28's own errors (-3202x):
 * the backend speaks it and refused this request on its terms */
int	 proto_modern_error(const json_t *msg);

#endif /* VMCPD_PROBE_H */
