/*
 * A backend's notification stream for a scope: the standalone GET of
 * its scope session (2025-11-25), or a subscriptions/listen POST with
 * params (2026-07-28).  cbs get the HTTP call's events as they come;
 * upstream_stream_ended() reads the outcome (a session the backend
 * forgot is forgotten, a refused listen has its era probed again).
 */
#ifndef VMCPD_UPSTREAM_STREAM_H
#define VMCPD_UPSTREAM_STREAM_H

#include <jansson.h>

#include "proto/proto.h"

struct worker;
struct config_backend;
struct http_call_cbs;
struct upstream;

enum upstream_stream_end {
	UPSTREAM_END_RETRY = 0,		/* back off and reconnect */
	UPSTREAM_END_NO_STREAM		/* the backend offers none (405, 404) */
};
/* NULL: failed at once; later failures come to hc_done (hc NULL) */
struct upstream *upstream_stream(struct worker *,
	    const struct config_backend *, const char *scope,
	    const json_t *params, const struct http_call_cbs *, void *arg);
/* the same, to a 2026-07-28 backend only (any other fails), declaring
 * caps (kept) in the listen's clientCapabilities */
struct upstream *upstream_stream_modern(struct worker *,
	    const struct config_backend *, const char *scope,
	    const json_t *params, const json_t *caps,
	    const struct http_call_cbs *, void *arg);
/* from hc_done: what the end means; frees the stream's upstream */
enum upstream_stream_end upstream_stream_ended(struct upstream *,
	    long status);
/* a stream's era (PROTO_ERA_UNKNOWN until it is known) */
enum proto_era upstream_era(const struct upstream *);
/* answer a request that came on the stream, on its session */
void	 upstream_stream_reply(struct upstream *, json_t *msg);

#endif /* VMCPD_UPSTREAM_STREAM_H */
