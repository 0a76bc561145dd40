/*
 * The request's span (worker/trace/trace.h), as the pipeline knows it:
 * the SERVER span the front began named and given the MCP semantic
 * conventions' attributes once the request is parsed and its principal
 * known, and the context its backend requests are made under.  With
 * tracing off, or a request not sampled, one test each.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/method.h"
#include "proto/proto.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "worker/pipeline/pipeline.h"
#include "worker/pipeline/pipeline_int.h"
#include "worker/trace/trace.h"
#include "shared/config.h"

/* the span's name and attributes: method, target, id, revision, who */
static void
pipeline_trace_name(struct request *r, struct trace_span *s)
{
	const struct mcp_method	*mm = r->r_msg.jm_mm;
	const char		*key, *target = NULL;
	const json_t		*v;
	size_t			 tlen = 0;
	char			 id[32];

	if (mm != NULL && (key = trace_target_key(mm)) != NULL) {
		if (r->r_fast.rf_name != NULL) {
			target = r->r_fast.rf_name;
			tlen = r->r_fast.rf_namelen;
		} else if (mm->mm_route_key != NULL && json_is_string(v =
		    json_object_get(r->r_msg.jm_params, mm->mm_route_key))) {
			target = json_string_value(v);
			tlen = json_string_length(v);
		}
		if (target != NULL)
			trace_set_str(s, key, target, tlen);
		if (mm->mm_id == MCP_M_TOOLS_CALL)
			trace_set_str(s, "gen_ai.operation.name",
			    "execute_tool", 12);
	}
	trace_set_name(s, r->r_msg.jm_method, target, tlen);
	trace_set_str(s, "mcp.method.name", r->r_msg.jm_method,
	    strlen(r->r_msg.jm_method));
	if (json_is_string(r->r_msg.jm_id))
		trace_set_str(s, "jsonrpc.request.id",
		    json_string_value(r->r_msg.jm_id),
		    json_string_length(r->r_msg.jm_id));
	else if (json_is_integer(r->r_msg.jm_id))
		trace_set_str(s, "jsonrpc.request.id", id, trace_itoa(id,
		    json_integer_value(r->r_msg.jm_id)));
	if (r->r_codec != NULL)
		trace_set_str(s, "mcp.protocol.version",
		    r->r_codec->rc_era == PROTO_ERA_MODERN ?
		    MCP_VERSION_MODERN : MCP_VERSION_LEGACY,
		    strlen(MCP_VERSION_MODERN));
	/* who, never how: the subject alone, no token or claim */
	if (r->r_principal != NULL && r->r_principal->p_sub != NULL)
		trace_set_str(s, "enduser.id", r->r_principal->p_sub,
		    strlen(r->r_principal->p_sub));
}

void
pipeline_trace_start(struct request *r)
{
	struct trace_span	*s;

	if (!trace_enabled || r->r_req == NULL)
		return;		/* a composite's step has its context */
	trace_ref_clear(&r->r_trace);
	if ((s = httpd_req_trace(r->r_req)) == NULL) {
		/* not sampled: its backend requests start no trace */
		r->r_trace.tr_unsampled = 1;
		return;
	}
	trace_ref_of(&r->r_trace, s, NULL);
	if (s->ts_recording)
		pipeline_trace_name(r, s);
}

void
pipeline_trace_backend(struct request *r)
{
	struct trace_span	*s;

	if (trace_enabled && r->r_req != NULL && r->r_be != NULL &&
	    (s = httpd_req_trace(r->r_req)) != NULL)
		trace_set_str(s, "vmcpd.backend.name", r->r_be->cb_name,
		    strlen(r->r_be->cb_name));
}

/* a Legacy request's session, once its session phase found it */
void
pipeline_trace_session(struct request *r, const char *sid)
{
	struct trace_span	*s;

	if (trace_enabled && r->r_req != NULL && sid != NULL &&
	    (s = httpd_req_trace(r->r_req)) != NULL)
		trace_set_str(s, "mcp.session.id", sid, strlen(sid));
}

void
pipeline_trace_wait(struct request *r, const char *name)
{
	if (trace_enabled && r->r_req != NULL)
		trace_phase_begin(httpd_req_trace(r->r_req), name);
}

void
pipeline_trace_resumed(struct request *r, const char *err)
{
	if (trace_enabled && r->r_req != NULL)
		trace_phase_end(httpd_req_trace(r->r_req), err);
}
