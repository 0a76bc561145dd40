/*
 * The MCP method table (method.h) and its lookup: a switch on the
 * name's length, then one fixed-length compare per method of that
 * length, most often one.  It runs once per request, on the front's hot
 * path.
 */
#include <string.h>

#include "method.h"

#define REQ	MCP_KIND_REQUEST
#define NOTE	MCP_KIND_NOTIFICATION
#define C2S	MCP_DIR_C2S
#define S2C	MCP_DIR_S2C
#define BOTH	(MCP_DIR_C2S | MCP_DIR_S2C)
#define L	MCP_REV_LEGACY
#define MO	MCP_REV_MODERN
#define LM	(MCP_REV_LEGACY | MCP_REV_MODERN)

#define E(id, name, kind, dir, revs, served, cap, route, rkey, lists, \
    hname, action, audit, flags) \
	[id] = { name, sizeof(name) - 1, id, kind, dir, revs, served, \
	    cap, route, rkey, lists, hname, action, audit, flags }

/*
 * revs: the revisions that define the method (MCP 2025-11-25 and
 * 2026-07-28, Schema; tasks/update and notifications/tasks are the
 * 2026-07-28 tasks extension's); served: those vmcpd answers it in when
 * a client sends it.  2026-07-28 has no server-to-client requests: its
 * sampling, elicitation and roots travel as input requests (MRTR) under
 * the same method names.
 */
static const struct mcp_method mcp_methods[MCP_M_COUNT] = {
	/* id, name, kind, dir, revs, served, capability,
	 *   route, its member, what a list lists, Mcp-Name's member,
	 *   Cedar action, audit event, flags */
	E(MCP_M_INITIALIZE, "initialize", REQ, C2S, L, L, MCP_CAP_NONE,
	    MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, "mcp_initialize", MCP_MF_LOCAL),
	E(MCP_M_PING, "ping", REQ, BOTH, L, L, MCP_CAP_NONE,
	    MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, "mcp_ping", MCP_MF_LOCAL),
	E(MCP_M_SERVER_DISCOVER, "server/discover", REQ, C2S, MO, MO,
	    MCP_CAP_NONE, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, "mcp_discover", MCP_MF_CACHEABLE | MCP_MF_LOCAL),
	E(MCP_M_TOOLS_LIST, "tools/list", REQ, C2S, LM, LM, MCP_CAP_TOOLS,
	    MCP_ROUTE_NONE, NULL, "tools", NULL,
	    MCP_ACTION_NONE, "mcp_tools_list", MCP_MF_CACHEABLE),
	E(MCP_M_TOOLS_CALL, "tools/call", REQ, C2S, LM, LM, MCP_CAP_TOOLS,
	    MCP_ROUTE_TOOL, "name", NULL, "name",
	    MCP_ACTION_CALL_TOOL, "mcp_tool_call",
	    MCP_MF_METERED | MCP_MF_MRTR | MCP_MF_BACKEND),
	E(MCP_M_PROMPTS_LIST, "prompts/list", REQ, C2S, LM, LM,
	    MCP_CAP_PROMPTS, MCP_ROUTE_NONE, NULL, "prompts", NULL,
	    MCP_ACTION_NONE, "mcp_prompts_list", MCP_MF_CACHEABLE),
	E(MCP_M_PROMPTS_GET, "prompts/get", REQ, C2S, LM, LM,
	    MCP_CAP_PROMPTS, MCP_ROUTE_PROMPT, "name", NULL, "name",
	    MCP_ACTION_GET_PROMPT, "mcp_prompt_get",
	    MCP_MF_MRTR | MCP_MF_BACKEND),
	E(MCP_M_RESOURCES_LIST, "resources/list", REQ, C2S, LM, LM,
	    MCP_CAP_RESOURCES, MCP_ROUTE_NONE, NULL, "resources", NULL,
	    MCP_ACTION_NONE, "mcp_resources_list", MCP_MF_CACHEABLE),
	E(MCP_M_RESOURCES_TEMPLATES_LIST, "resources/templates/list", REQ,
	    C2S, LM, LM, MCP_CAP_RESOURCES, MCP_ROUTE_NONE, NULL,
	    "resourceTemplates", NULL,
	    MCP_ACTION_NONE, "mcp_resource_templates_list", MCP_MF_CACHEABLE),
	E(MCP_M_RESOURCES_READ, "resources/read", REQ, C2S, LM, LM,
	    MCP_CAP_RESOURCES, MCP_ROUTE_URI, "uri", NULL, "uri",
	    MCP_ACTION_READ_RESOURCE, "mcp_resource_read",
	    MCP_MF_MRTR | MCP_MF_CACHEABLE | MCP_MF_BACKEND),
	E(MCP_M_RESOURCES_SUBSCRIBE, "resources/subscribe", REQ, C2S, L, L,
	    MCP_CAP_RESOURCES, MCP_ROUTE_URI, "uri", NULL, NULL,
	    MCP_ACTION_READ_RESOURCE, "mcp_resource_subscribe",
	    MCP_MF_SESSION | MCP_MF_BACKEND),
	E(MCP_M_RESOURCES_UNSUBSCRIBE, "resources/unsubscribe", REQ, C2S, L,
	    L, MCP_CAP_RESOURCES, MCP_ROUTE_URI, "uri", NULL, NULL,
	    MCP_ACTION_READ_RESOURCE, "mcp_resource_unsubscribe",
	    MCP_MF_SESSION | MCP_MF_BACKEND),
	E(MCP_M_COMPLETION_COMPLETE, "completion/complete", REQ, C2S, LM,
	    LM, MCP_CAP_COMPLETIONS, MCP_ROUTE_REF, "ref", NULL, NULL,
	    MCP_ACTION_OF_REF, "mcp_completion", MCP_MF_BACKEND),
	/*
	 * Not gated: the level is set on the session's own backend
	 * sessions (each opened for a call the gate let through) and
	 * names no item; the backends' answers are dropped, and what the
	 * level lets through (log messages) comes on the streams of calls
	 * the gate allowed.
	 */
	E(MCP_M_LOGGING_SET_LEVEL, "logging/setLevel", REQ, C2S, L, L,
	    MCP_CAP_LOGGING, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, "mcp_logging_set_level",
	    MCP_MF_SESSION | MCP_MF_BACKEND | MCP_MF_NOGATE),
	/*
	 * Not by authz_gate(): it names many URIs, each authorized as
	 * read_resource where the listen starts (worker/events/listen_stream.c).
	 */
	E(MCP_M_SUBSCRIPTIONS_LISTEN, "subscriptions/listen", REQ, C2S, MO,
	    MO, MCP_CAP_NONE, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, "mcp_subscriptions_listen",
	    MCP_MF_BACKEND | MCP_MF_NOGATE),
	/*
	 * The tasks extension's methods (2026-07-28): routed by the task's
	 * record, not by a name, and authorized there as the call of the
	 * tool that made the task (worker/request/modern_task.c), so not
	 * by authz_gate().  The 2025-11-25 experimental tasks are not
	 * served: -32601.
	 */
	E(MCP_M_TASKS_GET, "tasks/get", REQ, BOTH, LM, MO, MCP_CAP_TASKS,
	    MCP_ROUTE_NONE, NULL, NULL, "taskId",
	    MCP_ACTION_NONE, "mcp_task_get", MCP_MF_BACKEND | MCP_MF_NOGATE),
	E(MCP_M_TASKS_RESULT, "tasks/result", REQ, BOTH, L, 0,
	    MCP_CAP_TASKS, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, "mcp_task_result", 0),
	E(MCP_M_TASKS_LIST, "tasks/list", REQ, BOTH, L, 0, MCP_CAP_TASKS,
	    MCP_ROUTE_NONE, NULL, "tasks", NULL,
	    MCP_ACTION_NONE, "mcp_tasks_list", 0),
	E(MCP_M_TASKS_CANCEL, "tasks/cancel", REQ, BOTH, LM, MO,
	    MCP_CAP_TASKS, MCP_ROUTE_NONE, NULL, NULL, "taskId",
	    MCP_ACTION_NONE, "mcp_task_cancel", MCP_MF_BACKEND | MCP_MF_NOGATE),
	E(MCP_M_TASKS_UPDATE, "tasks/update", REQ, C2S, MO, MO,
	    MCP_CAP_TASKS, MCP_ROUTE_NONE, NULL, NULL, "taskId",
	    MCP_ACTION_NONE, "mcp_task_update", MCP_MF_BACKEND | MCP_MF_NOGATE),

	E(MCP_M_SAMPLING_CREATE_MESSAGE, "sampling/createMessage", REQ, S2C,
	    LM, 0, MCP_CAP_SAMPLING, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_ELICITATION_CREATE, "elicitation/create", REQ, S2C, LM, 0,
	    MCP_CAP_ELICITATION, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_ROOTS_LIST, "roots/list", REQ, S2C, LM, 0, MCP_CAP_ROOTS,
	    MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),

	E(MCP_M_N_INITIALIZED, "notifications/initialized", NOTE, C2S, L, L,
	    MCP_CAP_NONE, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, MCP_MF_SESSION | MCP_MF_LOCAL),
	/*
	 * 2026-07-28: on stdio only (over HTTP, closing the stream).  Not
	 * gated: it ends the session's own request, gated when it came.
	 */
	E(MCP_M_N_CANCELLED, "notifications/cancelled", NOTE, BOTH, LM, L,
	    MCP_CAP_NONE, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL,
	    MCP_MF_SESSION | MCP_MF_BACKEND | MCP_MF_NOGATE),
	E(MCP_M_N_PROGRESS, "notifications/progress", NOTE, BOTH, LM, 0,
	    MCP_CAP_NONE, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	/* not gated: it goes to the session's own backend sessions, which
	 * then ask the session for its roots; it names no item */
	E(MCP_M_N_ROOTS_LIST_CHANGED, "notifications/roots/list_changed",
	    NOTE, C2S, L, L, MCP_CAP_ROOTS, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL,
	    MCP_MF_SESSION | MCP_MF_BACKEND | MCP_MF_NOGATE),
	E(MCP_M_N_MESSAGE, "notifications/message", NOTE, S2C, LM, 0,
	    MCP_CAP_LOGGING, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_TOOLS_LIST_CHANGED, "notifications/tools/list_changed",
	    NOTE, S2C, LM, 0, MCP_CAP_TOOLS, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_PROMPTS_LIST_CHANGED, "notifications/prompts/list_changed",
	    NOTE, S2C, LM, 0, MCP_CAP_PROMPTS, MCP_ROUTE_NONE, NULL, NULL,
	    NULL, MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_RESOURCES_LIST_CHANGED,
	    "notifications/resources/list_changed", NOTE, S2C, LM, 0,
	    MCP_CAP_RESOURCES, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_RESOURCES_UPDATED, "notifications/resources/updated", NOTE,
	    S2C, LM, 0, MCP_CAP_RESOURCES, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_ELICITATION_COMPLETE, "notifications/elicitation/complete",
	    NOTE, S2C, L, 0, MCP_CAP_ELICITATION, MCP_ROUTE_NONE, NULL, NULL,
	    NULL, MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_TASKS_STATUS, "notifications/tasks/status", NOTE, BOTH, L,
	    0, MCP_CAP_TASKS, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_SUBSCRIPTIONS_ACKNOWLEDGED,
	    "notifications/subscriptions/acknowledged", NOTE, S2C, MO, 0,
	    MCP_CAP_NONE, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
	E(MCP_M_N_TASKS, "notifications/tasks", NOTE, S2C, MO, 0,
	    MCP_CAP_TASKS, MCP_ROUTE_NONE, NULL, NULL, NULL,
	    MCP_ACTION_NONE, NULL, 0),
};

static const char *const mcp_cap_names[] = {
	[MCP_CAP_NONE] = NULL,
	[MCP_CAP_TOOLS] = "tools",
	[MCP_CAP_PROMPTS] = "prompts",
	[MCP_CAP_RESOURCES] = "resources",
	[MCP_CAP_COMPLETIONS] = "completions",
	[MCP_CAP_LOGGING] = "logging",
	[MCP_CAP_TASKS] = "tasks",
	[MCP_CAP_SAMPLING] = "sampling",
	[MCP_CAP_ELICITATION] = "elicitation",
	[MCP_CAP_ROOTS] = "roots",
};

/* each case's length is its names' own: memcmp of a constant size */
#define M(id, s) do {							\
	if (memcmp(name, s, sizeof(s) - 1) == 0)			\
		return &mcp_methods[id];				\
} while (0)

const struct mcp_method *
mcp_method_lookup(const char *name, size_t len)
{
	if (name == NULL)
		return NULL;
	switch (len) {
	case 4:
		M(MCP_M_PING, "ping");
		break;
	case 9:
		M(MCP_M_TASKS_GET, "tasks/get");
		break;
	case 10:
		M(MCP_M_TOOLS_CALL, "tools/call");
		M(MCP_M_TOOLS_LIST, "tools/list");
		M(MCP_M_INITIALIZE, "initialize");
		M(MCP_M_TASKS_LIST, "tasks/list");
		M(MCP_M_ROOTS_LIST, "roots/list");
		break;
	case 11:
		M(MCP_M_PROMPTS_GET, "prompts/get");
		break;
	case 12:
		M(MCP_M_PROMPTS_LIST, "prompts/list");
		M(MCP_M_TASKS_RESULT, "tasks/result");
		M(MCP_M_TASKS_CANCEL, "tasks/cancel");
		M(MCP_M_TASKS_UPDATE, "tasks/update");
		break;
	case 14:
		M(MCP_M_RESOURCES_LIST, "resources/list");
		M(MCP_M_RESOURCES_READ, "resources/read");
		break;
	case 15:
		M(MCP_M_SERVER_DISCOVER, "server/discover");
		break;
	case 16:
		M(MCP_M_LOGGING_SET_LEVEL, "logging/setLevel");
		break;
	case 18:
		M(MCP_M_ELICITATION_CREATE, "elicitation/create");
		break;
	case 19:
		M(MCP_M_RESOURCES_SUBSCRIBE, "resources/subscribe");
		M(MCP_M_COMPLETION_COMPLETE, "completion/complete");
		M(MCP_M_N_TASKS, "notifications/tasks");
		break;
	case 20:
		M(MCP_M_SUBSCRIPTIONS_LISTEN, "subscriptions/listen");
		break;
	case 21:
		M(MCP_M_RESOURCES_UNSUBSCRIBE, "resources/unsubscribe");
		M(MCP_M_N_MESSAGE, "notifications/message");
		break;
	case 22:
		M(MCP_M_SAMPLING_CREATE_MESSAGE, "sampling/createMessage");
		M(MCP_M_N_PROGRESS, "notifications/progress");
		break;
	case 23:
		M(MCP_M_N_CANCELLED, "notifications/cancelled");
		break;
	case 24:
		M(MCP_M_RESOURCES_TEMPLATES_LIST, "resources/templates/list");
		break;
	case 25:
		M(MCP_M_N_INITIALIZED, "notifications/initialized");
		break;
	case 26:
		M(MCP_M_N_TASKS_STATUS, "notifications/tasks/status");
		break;
	case 31:
		M(MCP_M_N_RESOURCES_UPDATED, "notifications/resources/updated");
		break;
	case 32:
		M(MCP_M_N_ROOTS_LIST_CHANGED,
		    "notifications/roots/list_changed");
		M(MCP_M_N_TOOLS_LIST_CHANGED,
		    "notifications/tools/list_changed");
		break;
	case 34:
		M(MCP_M_N_PROMPTS_LIST_CHANGED,
		    "notifications/prompts/list_changed");
		M(MCP_M_N_ELICITATION_COMPLETE,
		    "notifications/elicitation/complete");
		break;
	case 36:
		M(MCP_M_N_RESOURCES_LIST_CHANGED,
		    "notifications/resources/list_changed");
		break;
	case 40:
		M(MCP_M_N_SUBSCRIPTIONS_ACKNOWLEDGED,
		    "notifications/subscriptions/acknowledged");
		break;
	default:
		break;
	}
	return NULL;
}

#undef M

const struct mcp_method *
mcp_method_find(const char *name)
{
	return name != NULL ? mcp_method_lookup(name, strlen(name)) : NULL;
}

const struct mcp_method *
mcp_method_get(enum mcp_method_id id)
{
	return (unsigned int)id < MCP_M_COUNT ? &mcp_methods[id] : NULL;
}

const char *
mcp_cap_name(enum mcp_cap cap)
{
	return (unsigned int)cap < sizeof(mcp_cap_names) /
	    sizeof(mcp_cap_names[0]) ? mcp_cap_names[cap] : NULL;
}
