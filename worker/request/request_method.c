/*
 * The method table's handlers (request.h): each method vmcpd serves to
 * clients, with its Legacy and its Modern handler.  The rows follow
 * mm_served of proto/method.c, which tests/unit/test_request.c holds
 * them to: a handler in a column exactly where the method is served in
 * that revision.
 */
#include <stddef.h>

#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "worker/events/listen_stream.h"
#include "worker/request/modern.h"
#include "worker/request/legacy_req.h"
#include "worker/process/request.h"

#define LEGACY_ONLY(fn)		{ fn, NULL, 0 }
/* the pipeline's: its session phase finds a Legacy client's session */
#define VIEWED			{ legacy_viewed, modern_viewed, \
				    REQUEST_M_NO_SESSION }

static const struct request_method request_methods[MCP_M_COUNT] = {
	[MCP_M_INITIALIZE] = { legacy_initialize, NULL,
	    REQUEST_M_NO_SESSION },
	[MCP_M_PING] = LEGACY_ONLY(legacy_ping),
	[MCP_M_SERVER_DISCOVER] = { NULL, modern_viewed, 0 },
	/* the lists and the routed calls: on the view */
	[MCP_M_TOOLS_LIST] = VIEWED,
	[MCP_M_TOOLS_CALL] = VIEWED,
	[MCP_M_PROMPTS_LIST] = VIEWED,
	[MCP_M_PROMPTS_GET] = VIEWED,
	[MCP_M_RESOURCES_LIST] = VIEWED,
	[MCP_M_RESOURCES_TEMPLATES_LIST] = VIEWED,
	[MCP_M_RESOURCES_READ] = VIEWED,
	[MCP_M_RESOURCES_SUBSCRIBE] = { legacy_viewed, NULL,
	    REQUEST_M_NO_SESSION },
	[MCP_M_RESOURCES_UNSUBSCRIBE] = { legacy_viewed, NULL,
	    REQUEST_M_NO_SESSION },
	[MCP_M_COMPLETION_COMPLETE] = VIEWED,
	[MCP_M_LOGGING_SET_LEVEL] = LEGACY_ONLY(legacy_set_level),
	[MCP_M_SUBSCRIPTIONS_LISTEN] = { NULL, listen_start, 0 },
	/* the tasks extension: on the view, routed by the task's record */
	[MCP_M_TASKS_GET] = { NULL, modern_viewed, 0 },
	[MCP_M_TASKS_UPDATE] = { NULL, modern_viewed, 0 },
	[MCP_M_TASKS_CANCEL] = { NULL, modern_viewed, 0 },
	[MCP_M_N_INITIALIZED] = LEGACY_ONLY(legacy_initialized),
	[MCP_M_N_CANCELLED] = LEGACY_ONLY(legacy_cancelled),
	[MCP_M_N_ROOTS_LIST_CHANGED] = LEGACY_ONLY(legacy_roots_changed),
};

static const struct request_method request_method_none;

const struct request_method *
request_method_of(const struct jsonrpc_msg *msg)
{
	const struct mcp_method *mm = msg->jm_mm;

	if (mm == NULL || (msg->jm_kind == JSONRPC_REQUEST ?
	    MCP_KIND_REQUEST : msg->jm_kind == JSONRPC_NOTIFICATION ?
	    MCP_KIND_NOTIFICATION : 0) != mm->mm_kind)
		return &request_method_none;
	return &request_methods[mm->mm_id];
}
