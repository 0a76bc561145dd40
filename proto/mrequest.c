/*
 * A request to a 2026-07-28 backend (MCP 2026-07-28, Overview, section
 * _meta): the
 * per-request _meta of this hop, with the client's capabilities
 * mirrored so that the backend only asks what the client can answer
 * (Multi Round-Trip Requests, server requirement 7), and the value of
 * the Mcp-Name header.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"
#include "proto/mrequest.h"
#include "proto/meta.h"

json_t *
proto_modern_caps(const json_t *caps)
{
	static const char *const keep[] = { "elicitation", "sampling",
	    "experimental", "extensions" };
	json_t	*out, *v;
	size_t	 i;

	if ((out = json_object()) == NULL)
		return NULL;
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (json_is_object(v = json_object_get(caps, keep[i])) &&
		    json_object_set_new(out, keep[i], json_deep_copy(v)) == -1)
			goto fail;
	/* 2026-07-28 roots have no listChanged; tasks is no capability */
	if (json_is_object(json_object_get(caps, "roots")) &&
	    json_object_set_new(out, "roots", json_object()) == -1)
		goto fail;
	return out;
fail:
	json_decref(out);
	return NULL;
}

json_t *
proto_modern_params(const json_t *params, const json_t *caps,
    const json_t *client_info, const char *log_level)
{
	json_t	*p, *meta;

	p = json_is_object(params) ? json_deep_copy(params) : json_object();
	if (p == NULL)
		return NULL;
	meta = json_object_get(p, "_meta");
	if (!json_is_object(meta)) {
		if ((meta = json_object()) == NULL ||
		    json_object_set_new(p, "_meta", meta) == -1)
			goto fail;
	}
	proto_meta_strip(meta);
	if (json_object_set_new(meta, MCP_META_PROTOCOL_VERSION,
	    json_string(MCP_VERSION_MODERN)) == -1 ||
	    json_object_set_new(meta, MCP_META_CLIENT_CAPABILITIES,
	    caps != NULL ? proto_modern_caps(caps) : json_object()) == -1)
		goto fail;
	if (client_info != NULL && json_object_set_new(meta,
	    MCP_META_CLIENT_INFO, json_deep_copy(client_info)) == -1)
		goto fail;
	if (log_level != NULL && json_object_set_new(meta,
	    "io.modelcontextprotocol/logLevel", json_string(log_level)) == -1)
		goto fail;
	return p;
fail:
	json_decref(p);
	return NULL;
}

/* this hop's _meta alone, as text: what proto_modern_params sets */
char *
proto_modern_meta_text(const json_t *params, const json_t *caps,
    const json_t *client_info, const char *log_level, size_t *len)
{
	json_t	*only, *hop = NULL;
	char	*text = NULL;

	/* params may have lost an emptied _meta: then this hop's alone */
	if ((only = json_object()) == NULL ||
	    (json_object_get(params, "_meta") != NULL && json_object_set(only,
	    "_meta", json_object_get(params, "_meta")) == -1) ||
	    (hop = proto_modern_params(only, caps, client_info,
	    log_level)) == NULL)
		goto done;
	text = jsonrpc_dump(json_object_get(hop, "_meta"), len);
done:
	json_decref(hop);
	json_decref(only);
	return text;
}

int
proto_caps_tasks(const json_t *caps)
{
	return json_is_object(json_object_get(json_object_get(caps,
	    "extensions"), MCP_TASKS_EXTENSION));
}

json_t *
proto_caps_without_tasks(const json_t *caps)
{
	json_t *c, *ext;

	if ((c = json_deep_copy(caps)) == NULL)
		return NULL;
	if ((ext = json_object_get(c, "extensions")) != NULL)
		(void)json_object_del(ext, MCP_TASKS_EXTENSION);
	return c;
}

const char *
proto_modern_name(const char *method, const json_t *params)
{
	const struct mcp_method *mm = mcp_method_find(method);

	/* a routed call's name or URI, a task's id (the tasks extension:
	 * Mcp-Name is params.taskId); completion/complete has none */
	if (mm == NULL || mm->mm_route == MCP_ROUTE_REF ||
	    mm->mm_hname == NULL)
		return NULL;
	return json_string_value(json_object_get(params, mm->mm_hname));
}

const char *
proto_request_capability(const char *method)
{
	const struct mcp_method *mm = mcp_method_find(method);

	/* a server's request: the client capability it needs */
	if (mm == NULL || mm->mm_kind != MCP_KIND_REQUEST ||
	    mm->mm_dir != MCP_DIR_S2C)
		return NULL;
	return mcp_cap_name(mm->mm_cap);
}
