/*
 * The trace context a child span is made under and a backend request
 * carries (worker/trace/trace.h), by value: a copy of its parent's, so
 * the parent may end (its client gone) while the work under it goes
 * on.  Its own header so that a request (worker/process/request.h) can
 * hold one without the tracer.
 */
#ifndef VMCPD_TRACE_REF_H
#define VMCPD_TRACE_REF_H

#include <stdlib.h>
#include <string.h>

#include "shared/tracectx.h"

struct trace_ref {
	struct tracectx	 tr_ctx;
	char		*tr_state;	/* tracestate (owned), or NULL */
	char		*tr_baggage;	/* passed on (owned), or NULL */
	int		 tr_set;	/* a context to pass on */
	/* none, and none wanted: the request it is made for was not
	 * sampled (work under it starts no trace of its own) */
	int		 tr_unsampled;
};

/* what r holds freed, r emptied */
static inline void
trace_ref_clear(struct trace_ref *r)
{
	free(r->tr_state);
	free(r->tr_baggage);
	memset(r, 0, sizeof(*r));
}

#endif /* VMCPD_TRACE_REF_H */
