/*
 * A Legacy session's resources/subscribe and resources/unsubscribe
 * (MCP 2025-11-25, Resources, Subscriptions), routed and authorized
 * on the view by the pipeline (worker/pipeline/).  The session lists
 * its URIs (s_subs: what it asked for, bounded by
 * sessions.maxSubscriptions) and holds
 * each (backend, URI) in the store (subs.c), where every stream and
 * session that wants one counts, under the principal's cap: the one
 * backend subscription of a pair is made once, on the backend's scope
 * session worker 0 listens to, and ended when its last holder goes.
 *
 * An unsubscribe ends the caller's own subscription only: one the
 * session never made is answered with success (the state it asks for
 * is the state it is in, as a server's set of subscriptions answers)
 * and reaches no backend, so one client cannot end another's.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/request/legacy_req.h"
#include "worker/pipeline/pipeline.h"
#include "worker/events/subs.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/upstream.h"

static size_t
legacy_subs_find(const struct session *s, const char *uri)
{
	size_t i;

	for (i = 0; i < json_array_size(s->s_subs); i++)
		if (strcmp(json_string_value(json_array_get(s->s_subs, i)),
		    uri) == 0)
			break;
	return i;
}

static void
legacy_subs_refuse(struct mcp_req *mr, enum subs_cap cap, size_t n)
{
	char	 msg[300];
	json_t	*data;
	int	 code;

	data = subs_refusal(mr->mr_r.r_w, cap, n, &code, msg, sizeof(msg));
	legacy_req_refuse(mr, 200, code, msg, data);	/* data taken */
}

static int
legacy_subs_save(struct mcp_req *mr, struct session *s)
{
	struct worker *w = mr->mr_r.r_w;

	if (session_save(w->w_store, s, w->w_conf->cf_session_ttl_ms,
	    store_now_ms()) == 0)
		return 0;
	legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
	    "Internal error: cannot save the session");
	return -1;
}

void
legacy_subscribe(struct mcp_req *mr, struct session *s)
{
	struct worker		*w = mr->mr_r.r_w;
	struct subs_want	 sw;
	const char		*uri;
	char			 holder[SUBS_HOLDER_MAX + 1];
	char			 group[SUBS_GROUP_MAX + 1];
	size_t			 i, n;

	uri = json_string_value(json_object_get(mr->mr_r.r_bparams, "uri"));
	if (uri == NULL || subs_holder_session(s->s_id, holder,
	    sizeof(holder)) == -1 || (s->s_subs == NULL &&
	    (s->s_subs = json_array()) == NULL)) {
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	n = json_array_size(s->s_subs);
	i = legacy_subs_find(s, uri);
	if (mr->mr_r.r_msg.jm_mm->mm_id == MCP_M_RESOURCES_UNSUBSCRIBE) {
		if (i < n) {
			(void)json_array_remove(s->s_subs, i);
			if (legacy_subs_save(mr, s) == -1)
				return;
		}
		/* its own holding only: another's stays */
		subs_release(w, holder, uri);
		legacy_req_answer(mr, jsonrpc_result_new(mr->mr_r.r_msg.jm_id,
		    json_object()));
		return;
	}
	if (i == n && n >= w->w_conf->cf_subs_cap) {
		legacy_subs_refuse(mr, SUBS_CAP_SESSION, n);
		return;
	}
	sw.sw_be = mr->mr_r.r_be;
	sw.sw_uri = uri;
	if (subs_group(mr->mr_r.r_req, group, sizeof(group)) == -1)
		(void)snprintf(group, sizeof(group), "a");
	/* it ends at the latest with the session's last possible moment */
	switch (subs_hold(w, holder, group, &sw, 1, s->s_max_ms)) {
	case 0:
		break;
	case SUBS_LIMITED:
		legacy_subs_refuse(mr, SUBS_CAP_PRINCIPAL, 1);
		return;
	default:
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot record the subscription");
		return;
	}
	if (i == n && json_array_append_new(s->s_subs, json_string(uri)) ==
	    -1) {
		subs_release(w, holder, uri);
		legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	if (i == n && legacy_subs_save(mr, s) == -1) {
		subs_release(w, holder, uri);
		return;
	}
	/* made already on the session worker 0 hears: nothing to send */
	if (subs_made(w, mr->mr_r.r_be, uri)) {
		legacy_req_answer(mr, jsonrpc_result_new(mr->mr_r.r_msg.jm_id,
		    json_object()));
		return;
	}
	/*
	 * Made now, where the listener listens (upstream.c), so that the
	 * answer means it is in place; recorded first, so that worker 0,
	 * woken by the mark, does not make it again.
	 */
	subs_made_now(w, mr->mr_r.r_be, uri);
	pipeline_forward(&mr->mr_r, UPSTREAM_F_SUBSCRIPTION);
}
