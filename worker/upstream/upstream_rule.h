/*
 * The backend edge's decisions, pure (upstream_rule.c), for the edge
 * and for unit tests (test_upstream.c).
 */
#ifndef VMCPD_UPSTREAM_RULE_H
#define VMCPD_UPSTREAM_RULE_H

#include <stddef.h>

#include <jansson.h>

#include "proto/proto.h"
#include "worker/upstream/upstream_result.h"

enum upstream_next {
	UPSTREAM_DELIVER = 0,	/* the outcome goes to the caller */
	UPSTREAM_REOPEN,	/* the session was lost: open anew, resend */
	UPSTREAM_REPROBE	/* not 2026-07-28 after all: probe, resend */
};
enum upstream_next upstream_next_step(enum proto_era era, int failed,
	    int flags, const json_t *response, int retried);
enum upstream_status upstream_classify(enum proto_era era, int failed,
	    const json_t *response, const char *kind, const char *rtype,
	    size_t rtlen, const char *method, int *was_legacy,
	    const char **invalid);

#endif /* VMCPD_UPSTREAM_RULE_H */
