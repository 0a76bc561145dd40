/*
 * A Legacy client's notifications/cancelled (MCP 2025-11-25,
 * Cancellation; docs/ARCHITECTURE.md, Cancellation): the request it
 * names may be held by any worker.  Held here, it is cancelled here;
 * else every other worker is told (WAKE_CANCEL) and the one holding
 * it, if any, cancels it.  Nothing is recorded per call for this: a
 * call costs nothing more, a cancellation one datagram per worker.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "worker/process/wake.h"
#include "proto/jsonrpc.h"
#include "worker/process/process.h"
#include "worker/request/cancel.h"
#include "worker/request/legacy.h"

#define CANCEL_REASON_MAX	512	/* a longer reason is not passed on */

/* the client's reason, if it is one worth passing on */
static const char *
cancel_reason(const json_t *params)
{
	json_t *r = json_object_get(params, "reason");

	if (!json_is_string(r) || json_string_length(r) > CANCEL_REASON_MAX)
		return NULL;
	return json_string_value(r);
}

void
cancel_request(struct worker *w, const char *sid, const json_t *params)
{
	json_t		*id = json_object_get(params, "requestId"), *p;
	const char	*reason = cancel_reason(params);
	char		*text = NULL;
	size_t		 len = 0;

	if (!json_is_string(id) && !json_is_integer(id)) {
		log_debug("session %.8s... cancelled no request", sid);
		return;
	}
	if (legacy_cancel(w, sid, id, reason))
		return;
	/* held by another worker, or by none (answered, or never seen) */
	if ((p = json_pack("{s:O, s:s*}", "requestId", id, "reason",
	    reason)) != NULL && (text = jsonrpc_dump(p, &len)) != NULL &&
	    len + strlen(sid) <= WAKE_ARG_MAX)
		wake_broadcast(WAKE_CANCEL, sid, text);
	else
		log_warnx("session %.8s...: cannot pass on a cancellation",
		    sid);
	free(text);
	json_decref(p);
}

void
cancel_wake(struct worker *w, const char *sid, const char *params)
{
	json_t		*p;
	json_error_t	 jerr;

	if ((p = json_loads(params, 0, &jerr)) == NULL)
		return;
	(void)legacy_cancel(w, sid, json_object_get(p, "requestId"),
	    cancel_reason(p));
	json_decref(p);
}
