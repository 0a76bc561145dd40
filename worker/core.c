/*
 * The era-free core: what a request means against the aggregated view,
 * whichever edge it came through.  Lists are paged out of the view;
 * calls, gets and reads are routed to a backend under the backend's own
 * name.  Pure functions on JSON: no I/O, unit-tested.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uritemplate.h"
#include "shared/config.h"
#include "view.h"
#include "worker.h"

#define CORE_CURSOR_MAX	64

static const struct {
	const char	*cm_method;
	enum core_kind	 cm_kind;
	const char	*cm_field;	/* list field, or the routed param */
} core_methods[] = {
	{ "tools/list", CORE_LIST, "tools" },
	{ "resources/list", CORE_LIST, "resources" },
	{ "resources/templates/list", CORE_LIST, "resourceTemplates" },
	{ "prompts/list", CORE_LIST, "prompts" },
	{ "tools/call", CORE_ROUTE, "name" },
	{ "prompts/get", CORE_ROUTE, "name" },
	{ "resources/read", CORE_ROUTE, "uri" },
	{ "resources/subscribe", CORE_ROUTE, "uri" },
	{ "resources/unsubscribe", CORE_ROUTE, "uri" },
	{ "completion/complete", CORE_ROUTE, "ref" },
};

enum core_kind
core_method_kind(const char *method)
{
	size_t i;

	for (i = 0; i < sizeof(core_methods) / sizeof(core_methods[0]); i++)
		if (strcmp(core_methods[i].cm_method, method) == 0)
			return core_methods[i].cm_kind;
	return CORE_OTHER;
}

static const char *
core_list_field(const char *method)
{
	size_t i;

	for (i = 0; i < sizeof(core_methods) / sizeof(core_methods[0]); i++)
		if (strcmp(core_methods[i].cm_method, method) == 0)
			return core_methods[i].cm_field;
	return NULL;
}

static int core_route_name(json_t *, const char *, const char *, size_t,
    const char **, const char **, struct core_err *, int);
static void core_error(struct core_err *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
core_error(struct core_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->ce_code = code;
	va_start(ap, fmt);
	(void)vsnprintf(e->ce_msg, sizeof(e->ce_msg), fmt, ap);
	va_end(ap);
}

/*
 * Legacy list cursors: "<field>:<offset>", opaque to clients.  They name
 * the list so that a cursor of one list is refused by another.
 */
static int
core_cursor_decode(const char *field, const char *cursor, size_t *offset)
{
	size_t		 flen = strlen(field);
	char		*end;
	unsigned long	 v;

	if (strlen(cursor) > CORE_CURSOR_MAX ||
	    strncmp(cursor, field, flen) != 0 || cursor[flen] != ':' ||
	    cursor[flen + 1] < '0' || cursor[flen + 1] > '9')
		return -1;
	v = strtoul(cursor + flen + 1, &end, 10);
	if (*end != '\0' || v == 0)
		return -1;
	*offset = v;
	return 0;
}

int
core_list(json_t *view, const char *method, json_t *params, size_t pagesize,
    json_t **result, struct core_err *err)
{
	const char	*field = core_list_field(method);
	json_t		*all, *page, *res, *cur;
	size_t		 offset = 0, i, n;
	char		 next[CORE_CURSOR_MAX + 1];

	*result = NULL;
	cur = json_object_get(params, "cursor");
	if (cur != NULL) {
		if (!json_is_string(cur) || core_cursor_decode(field,
		    json_string_value(cur), &offset) == -1) {
			core_error(err, JSONRPC_INVALID_PARAMS,
			    "Invalid params: unknown cursor for %s", method);
			return -1;
		}
	}
	all = json_object_get(view, field);
	n = json_array_size(all);
	if (offset > n) {
		core_error(err, JSONRPC_INVALID_PARAMS,
		    "Invalid params: cursor past the end of %s", method);
		return -1;
	}
	if ((page = json_array()) == NULL)
		goto oom;
	for (i = offset; i < n && i - offset < pagesize; i++)
		(void)json_array_append(page, json_array_get(all, i));
	if ((res = json_object()) == NULL) {
		json_decref(page);
		goto oom;
	}
	(void)json_object_set_new(res, field, page);
	if (i < n) {
		(void)snprintf(next, sizeof(next), "%s:%zu", field, i);
		(void)json_object_set_new(res, "nextCursor", json_string(next));
	}
	*result = res;
	return 0;
oom:
	core_error(err, JSONRPC_INTERNAL_ERROR, "Internal error: %s",
	    "out of memory");
	return -1;
}

/* the backend serving a resource URI: exact, else a template match */
static const char *
core_route_uri(json_t *view, const char *uri)
{
	json_t		*routes = json_object_get(view, "routes");
	json_t		*tmpls, *t;
	const char	*b;
	size_t		 i;

	b = json_string_value(json_object_get(json_object_get(routes,
	    "resources"), uri));
	if (b != NULL)
		return b;
	tmpls = json_object_get(routes, "templates");
	json_array_foreach(tmpls, i, t) {
		const char *tmpl = json_string_value(json_object_get(t, "t"));

		if (tmpl != NULL && uritemplate_match(tmpl, uri))
			return json_string_value(json_object_get(t, "b"));
	}
	return NULL;
}

/* a completion ref for a resource names a template or a resource */
static const char *
core_route_ref_uri(json_t *view, const char *uri)
{
	json_t		*tmpls = json_object_get(json_object_get(view,
			    "routes"), "templates");
	json_t		*t;
	size_t		 i;

	json_array_foreach(tmpls, i, t)
		if (json_is_string(json_object_get(t, "t")) &&
		    strcmp(json_string_value(json_object_get(t, "t")), uri) == 0)
			return json_string_value(json_object_get(t, "b"));
	return core_route_uri(view, uri);
}

static int
core_route_named(json_t *view, const char *kind, json_t *params,
    const char *key, const char **backend, const char **own,
    struct core_err *err, int tools)
{
	json_t *name = json_object_get(params, key);

	if (!json_is_string(name)) {
		core_error(err, JSONRPC_INVALID_PARAMS,
		    "Invalid params: \"%s\" must be a string", key);
		return -1;
	}
	return core_route_name(view, kind, json_string_value(name),
	    json_string_length(name), backend, own, err, tools);
}

/* name need not be NUL-terminated: the fast path has it in the body */
static int
core_route_name(json_t *view, const char *kind, const char *name,
    size_t namelen, const char **backend, const char **own,
    struct core_err *err, int tools)
{
	json_t *r;

	r = json_object_getn(json_object_get(json_object_get(view, "routes"),
	    kind), name, namelen);
	/* a hidden tool is routable for composites, not for clients */
	if (r == NULL || (tools && json_is_true(json_object_get(r,
	    "hidden")))) {
		core_error(err, JSONRPC_INVALID_PARAMS, "Unknown %s: %.*s",
		    tools ? "tool" : "prompt", namelen > 200 ? 200 :
		    (int)namelen, name);
		return -1;
	}
	*backend = json_string_value(json_object_get(r, "b"));
	*own = json_string_value(json_object_get(r, "n"));
	if (*backend == NULL || *own == NULL) {
		core_error(err, JSONRPC_INTERNAL_ERROR,
		    "Internal error: bad route for %.*s", namelen > 200 ? 200 :
		    (int)namelen, name);
		return -1;
	}
	return 0;
}

int
core_route_tool(json_t *view, const struct config *conf, const char *name,
    size_t namelen, const struct config_backend **be, const char **own,
    struct core_err *err)
{
	const char *backend;

	*be = NULL;
	if (core_route_name(view, "tools", name, namelen, &backend, own, err,
	    1) == -1)
		return -1;
	if ((*be = config_backend_find(conf, backend)) == NULL) {
		core_error(err, JSONRPC_INTERNAL_ERROR,
		    "Internal error: backend %s is not configured", backend);
		return -1;
	}
	return 0;
}

int
core_route(json_t *view, const struct config *conf, const char *method,
    json_t *params, const struct config_backend **be, json_t **bparams,
    struct core_err *err)
{
	const char	*backend = NULL, *own = NULL, *uri, *type;
	json_t		*p = NULL, *ref;

	*be = NULL;
	*bparams = NULL;
	if (params != NULL && !json_is_object(params)) {
		core_error(err, JSONRPC_INVALID_PARAMS,
		    "Invalid params: %s needs an object", method);
		return -1;
	}
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0) {
		int tools = method[0] == 't';

		if (core_route_named(view, tools ? "tools" : "prompts", params,
		    "name", &backend, &own, err, tools) == -1)
			return -1;
		/* the backend's own name: a copy only when it differs */
		if (strcmp(own, json_string_value(json_object_get(params,
		    "name"))) == 0)
			p = json_incref(params);
		else if ((p = json_copy(params)) == NULL ||
		    json_object_set_new(p, "name", json_string(own)) == -1)
			goto oom;
	} else if (strcmp(method, "completion/complete") == 0) {
		ref = json_object_get(params, "ref");
		type = json_string_value(json_object_get(ref, "type"));
		if (type != NULL && strcmp(type, "ref/prompt") == 0) {
			if (core_route_named(view, "prompts", ref, "name",
			    &backend, &own, err, 0) == -1)
				return -1;
			if ((p = json_deep_copy(params)) == NULL ||
			    json_object_set_new(json_object_get(p, "ref"),
			    "name", json_string(own)) == -1)
				goto oom;
		} else if (type != NULL && strcmp(type, "ref/resource") == 0) {
			uri = json_string_value(json_object_get(ref, "uri"));
			if (uri == NULL) {
				core_error(err, JSONRPC_INVALID_PARAMS,
				    "Invalid params: %s", "ref.uri must be a "
				    "string");
				return -1;
			}
			if ((backend = core_route_ref_uri(view, uri)) == NULL) {
				core_error(err, JSONRPC_INVALID_PARAMS,
				    "Unknown resource: %s", uri);
				return -1;
			}
			p = json_incref(params);
		} else {
			core_error(err, JSONRPC_INVALID_PARAMS,
			    "Invalid params: %s", "ref.type must be "
			    "\"ref/prompt\" or \"ref/resource\"");
			return -1;
		}
	} else {
		/* resources/read, subscribe, unsubscribe: URI forwarded as is */
		uri = json_string_value(json_object_get(params, "uri"));
		if (uri == NULL) {
			core_error(err, JSONRPC_INVALID_PARAMS,
			    "Invalid params: %s", "\"uri\" must be a string");
			return -1;
		}
		if ((backend = core_route_uri(view, uri)) == NULL) {
			core_error(err, MCP_ERR_RESOURCE_NOT_FOUND,
			    "Resource not found: %s", uri);
			return -1;
		}
		p = json_incref(params);
	}
	if ((*be = config_backend_find(conf, backend)) == NULL) {
		json_decref(p);
		core_error(err, JSONRPC_INTERNAL_ERROR,
		    "Internal error: backend %s is not configured", backend);
		return -1;
	}
	*bparams = p;
	return 0;
oom:
	json_decref(p);
	core_error(err, JSONRPC_INTERNAL_ERROR, "Internal error: %s",
	    "out of memory");
	return -1;
}

/*
 * What vmcpd offers a client, from what the view's backends offer.
 * List changes reach Legacy sessions through worker 0's listeners and
 * Modern clients through subscriptions/listen; logging is offered to
 * Legacy clients only (2026-07-28 deprecates it and vmcpd does not
 * map logLevel onto Legacy backends).
 */
json_t *
core_capabilities(json_t *view, int logging)
{
	json_t	*caps, *bc = json_object_get(view, "capabilities");

	if ((caps = json_object()) == NULL)
		return NULL;
	(void)json_object_set_new(caps, "tools", json_pack("{s:b}",
	    "listChanged", 1));
	if (json_is_object(json_object_get(bc, "resources")))
		(void)json_object_set_new(caps, "resources", json_pack(
		    "{s:b, s:b}", "listChanged", 1, "subscribe",
		    json_is_true(json_object_get(json_object_get(bc,
		    "resources"), "subscribe"))));
	if (json_is_object(json_object_get(bc, "prompts")))
		(void)json_object_set_new(caps, "prompts", json_pack("{s:b}",
		    "listChanged", 1));
	if (json_is_object(json_object_get(bc, "completions")))
		(void)json_object_set_new(caps, "completions", json_object());
	if (logging && json_is_object(json_object_get(bc, "logging")))
		(void)json_object_set_new(caps, "logging", json_object());
	return caps;
}

/*
 * The x-mcp-header map of each tool, worked out once per view: the
 * view is immutable and a worker keeps one decoded copy, so a cache
 * keyed by that copy (held, so its address cannot be reused) holds.
 */
static json_t	*core_hdr_view;
static json_t	*core_hdr_maps;	/* tool name -> map, or null for none */

/* the x-mcp-header map of a tool in the view, or NULL if it has none */
json_t *
core_tool_headers(json_t *view, const char *name)
{
	json_t		*tools, *tool = NULL, *it, *map = NULL, *tn;
	char		 why[256];
	size_t		 i;

	if (name == NULL)
		return NULL;
	if (view != core_hdr_view) {
		json_decref(core_hdr_view);
		json_decref(core_hdr_maps);
		core_hdr_view = json_incref(view);
		core_hdr_maps = json_object();
	}
	if ((map = json_object_get(core_hdr_maps, name)) != NULL)
		return json_is_null(map) ? NULL : json_incref(map);
	map = NULL;
	tools = json_object_get(view, "tools");
	json_array_foreach(tools, i, it) {
		tn = json_object_get(it, "name");
		if (json_is_string(tn) && strcmp(json_string_value(tn),
		    name) == 0) {
			tool = it;
			break;
		}
	}
	if (tool == NULL || proto_x_mcp_headers(json_object_get(tool,
	    "inputSchema"), &map, why, sizeof(why)) == -1 ||
	    json_object_size(map) == 0) {
		json_decref(map);
		map = NULL;
	}
	/* unknown names are not kept: a client could grow the cache */
	if (tool != NULL)
		(void)json_object_set(core_hdr_maps, name, map != NULL ? map :
		    json_null());
	return map;
}

void
core_free(void)
{
	json_decref(core_hdr_view);
	json_decref(core_hdr_maps);
	core_hdr_view = core_hdr_maps = NULL;
}

/*
 * The Mcp-Param-* values a 2026-07-28 backend expects with a tools/call
 * routed to it (bparams: under its own name), or NULL.  The schema is
 * the backend's: renaming a tool leaves its inputSchema alone.
 */
json_t *
core_param_headers(json_t *view, const char *method, const json_t *params,
    const json_t *bparams)
{
	json_t *map, *hdrs = NULL;

	if (strcmp(method, "tools/call") != 0 ||
	    (map = core_tool_headers(view, json_string_value(
	    json_object_get(params, "name")))) == NULL)
		return NULL;
	(void)proto_param_headers_build(map, json_object_get(bparams,
	    "arguments"), &hdrs);
	json_decref(map);
	return hdrs;
}
