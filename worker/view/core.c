/*
 * The era-free core: what a request means against the aggregated view,
 * whichever edge it came through.  Lists are paged out of the view;
 * calls, gets and reads are routed to a backend under the backend's own
 * name.  No I/O: lists and routes are read in place from the view's
 * layout in the map (view_store.c, view_layout.c), the rest is on the
 * view's small header.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uritemplate.h"
#include "shared/config.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/mheaders.h"
#include "proto/cursor.h"
#include "proto/meta.h"
#include "worker/process/process.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"

#define CORE_CURSOR_MAX	64

/* what the core does with a method vmcpd serves (method.c's table) */
enum core_kind
core_method_kind(const char *method)
{
	const struct mcp_method *mm = mcp_method_find(method);

	if (mm == NULL || mm->mm_served == 0)
		return CORE_OTHER;
	if (mm->mm_lists != NULL)
		return CORE_LIST;
	if (mm->mm_route != MCP_ROUTE_NONE)
		return CORE_ROUTE;
	return CORE_OTHER;
}

/* the result member of a list vmcpd serves, or NULL */
/* the list filter of authorization (authz_filter_item()), set by it: the
 * view sits below authorization and never calls it by name */
static int	(*core_item_filter)(void *, enum view_kind, const char *,
		    size_t, const char *, size_t);

void
core_set_filter(int (*fn)(void *, enum view_kind, const char *, size_t,
    const char *, size_t))
{
	core_item_filter = fn;
}

static const char *
core_list_field(const char *method)
{
	const struct mcp_method *mm = mcp_method_find(method);

	return mm != NULL && mm->mm_served != 0 ? mm->mm_lists : NULL;
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

/* "<field>:" items "," nextCursor "}": what jsonrpc_dump() made of it */
static int
core_list_legacy(const char *field, struct view_page *pg, char **text,
    size_t *len)
{
	char	*s = NULL;
	size_t	 n = 0;
	FILE	*f;
	int	 bad;

	if ((f = open_memstream(&s, &n)) == NULL)
		return -1;
	fprintf(f, "{\"%s\":", field);
	fwrite(pg->vp_items, 1, pg->vp_len, f);
	if (pg->vp_next > 0)
		fprintf(f, ",\"nextCursor\":\"%s:%zu\"", field, pg->vp_next);
	fputc('}', f);
	bad = ferror(f);
	if (fclose(f) == EOF || bad) {
		free(s);
		return -1;
	}
	*text = s;
	*len = n;
	return 0;
}

/*
 * The 2026-07-28 result around the items: the envelope made as ever
 * with a mark where the items go, the mark then replaced by them.  The
 * mark, "<field>":"\u0001", cannot occur inside a string of the
 * envelope (a quote in a string is escaped), so its first find is it.
 */
static int
core_list_modern(const char *field, struct view_page *pg,
    const json_t *server_info, const char *scope, char **text, size_t *len)
{
	json_t		*r;
	char		*env = NULL, *next = NULL, *mark = NULL, *at, *s;
	size_t		 elen, mlen;
	int		 rc = -1;

	if (pg->vp_next_key != NULL && (next = proto_cursor_encode(field,
	    pg->vp_next_key, pg->vp_next_dup)) == NULL)
		return -1;
	r = json_pack("{s:s, s:s*}", field, "\001", "nextCursor", next);
	if ((r = proto_modern_result(r, NULL, server_info, 0, scope)) ==
	    NULL || (env = jsonrpc_dump(r, &elen)) == NULL ||
	    asprintf(&mark, "\"%s\":\"\\u0001\"", field) == -1)
		goto done;
	mlen = strlen(mark);
	if ((at = strstr(env, mark)) == NULL ||
	    (s = malloc(elen - mlen + strlen(field) + 3 + pg->vp_len + 1)) ==
	    NULL)
		goto done;
	*len = 0;
	memcpy(s, env, (size_t)(at - env));
	*len += (size_t)(at - env);
	*len += (size_t)sprintf(s + *len, "\"%s\":", field);
	memcpy(s + *len, pg->vp_items, pg->vp_len);
	*len += pg->vp_len;
	memcpy(s + *len, at + mlen, elen - (size_t)(at - env) - mlen + 1);
	*len += elen - (size_t)(at - env) - mlen;
	*text = s;
	rc = 0;
done:
	json_decref(r);
	free(env);
	free(next);
	free(mark);
	return rc;
}

int
core_list(json_t *view, const char *method, json_t *params, size_t pagesize,
    const json_t *server_info, struct authz_filter *authz, char **text,
    size_t *len, struct core_err *err)
{
	struct view_page_req	 q;
	struct view_page	 pg;
	const char		*field = core_list_field(method);
	char			*last = NULL;
	json_t			*cur;
	int			 k, rc;

	*text = NULL;
	memset(&q, 0, sizeof(q));
	for (k = 0; k < VIEW_KIND_N; k++)
		if (strcmp(view_kind_field(k), field) == 0)
			q.vq_kind = k;
	q.vq_modern = server_info != NULL;
	q.vq_pagesize = pagesize;
	if (authz != NULL) {
		q.vq_filter = core_item_filter;
		q.vq_farg = authz;
	}
	cur = json_object_get(params, "cursor");
	if (cur != NULL && server_info == NULL && (!json_is_string(cur) ||
	    core_cursor_decode(field, json_string_value(cur),
	    &q.vq_offset) == -1)) {
		core_error(err, JSONRPC_INVALID_PARAMS,
		    "Invalid params: unknown cursor for %s", method);
		return -1;
	}
	if (cur != NULL && server_info != NULL) {
		if (!json_is_string(cur) || proto_cursor_decode(
		    json_string_value(cur), field, &last, &q.vq_dup) == -1) {
			free(last);
			core_error(err, JSONRPC_INVALID_PARAMS,
			    "Invalid params: not a cursor of this list");
			return -1;
		}
		q.vq_last = last;
	}
	rc = view_page_get(worker_self(), view, &q, &pg);
	free(last);
	if (rc == 0 && pg.vp_past_end) {
		core_error(err, JSONRPC_INVALID_PARAMS,
		    "Invalid params: cursor past the end of %s", method);
		return -1;
	}
	if (rc == 0)
		rc = server_info == NULL ? core_list_legacy(field, &pg, text,
		    len) : core_list_modern(field, &pg, server_info,
		    authz != NULL ? "private" : "public", text, len);
	view_page_clear(&pg);
	if (rc == -1) {
		core_error(err, JSONRPC_INTERNAL_ERROR, "Internal error: %s",
		    "cannot read the view");
		return -1;
	}
	return 0;
}

/*
 * Routes are copied out of the view's layout (view_store.c); the last one
 * stays here so that the names handed back live until the next route.
 */
static struct view_route	core_rt;

/* the backend serving a resource URI: exact, else a template match */
static const char *
core_route_uri(json_t *view, const char *uri)
{
	view_route_clear(&core_rt);
	if (view_route_get(worker_self(), view, VIEW_ROUTE_RESOURCE, uri,
	    strlen(uri), &core_rt) == 0 || view_template_get(worker_self(),
	    view, uri, 0, &core_rt) == 0)
		return core_rt.vr_backend;
	return NULL;
}

/* a completion ref for a resource names a template or a resource */
static const char *
core_route_ref_uri(json_t *view, const char *uri)
{
	view_route_clear(&core_rt);
	if (view_template_get(worker_self(), view, uri, 1, &core_rt) == 0)
		return core_rt.vr_backend;
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

/*
 * An unknown name; when a backend's part of the view is missing (it
 * could not be listed, e.g. its token exchange failed), the name may
 * be one of its: the message says which backend and why.  A definition
 * withheld by its pin (worker/builder/view_pins.c) has its own message,
 * written when the view was built.
 */
static void
core_unknown(struct core_err *err, json_t *view, const char *kind,
    const char *name, size_t namelen)
{
	json_t		*missing = json_object_get(view, "missing"), *why;
	const char	*be, *msg;
	void		*it;

	msg = json_string_value(json_object_get(json_object_getn(
	    json_object_get(json_object_get(view, "withheld"), strcmp(kind,
	    "tool") == 0 ? "tools" : "prompts"), name, namelen), "m"));
	if (msg != NULL) {
		core_error(err, JSONRPC_INVALID_PARAMS, "%s", msg);
		return;
	}
	if ((it = json_object_iter(missing)) == NULL) {
		core_error(err, JSONRPC_INVALID_PARAMS, "Unknown %s: %.*s",
		    kind, namelen > 200 ? 200 : (int)namelen, name);
		return;
	}
	be = json_object_iter_key(it);
	why = json_object_iter_value(it);
	/* the view's reason names the backend already */
	if (json_is_string(why))
		core_error(err, JSONRPC_INVALID_PARAMS, "Unknown %s: %.*s "
		    "(not listed now: %.200s)", kind, namelen > 200 ? 200 :
		    (int)namelen, name, json_string_value(why));
	else
		core_error(err, JSONRPC_INVALID_PARAMS, "Unknown %s: %.*s "
		    "(not listed now: backend %.64s: its lists failed)", kind,
		    namelen > 200 ? 200 : (int)namelen, name, be);
}

/* a URI no resource nor template serves: one of a template withheld
 * by its pin (worker/builder/view_pins.c) says so */
static void
core_uri_unknown(struct core_err *err, json_t *view, const char *uri)
{
	const char	*tmpl;
	json_t		*w;

	json_object_foreach(json_object_get(json_object_get(view, "withheld"),
	    "resourceTemplates"), tmpl, w)
		if (uritemplate_match(tmpl, uri) == 1 && json_is_string(
		    json_object_get(w, "m"))) {
			core_error(err, MCP_ERR_RESOURCE_NOT_FOUND, "%s",
			    json_string_value(json_object_get(w, "m")));
			return;
		}
	core_error(err, MCP_ERR_RESOURCE_NOT_FOUND, "Resource not found: %s",
	    uri);
}

/* name need not be NUL-terminated: the fast path has it in the body */
static int
core_route_name(json_t *view, const char *kind, const char *name,
    size_t namelen, const char **backend, const char **own,
    struct core_err *err, int tools)
{
	int rc;

	(void)kind;	/* tools says which */
	view_route_clear(&core_rt);
	rc = view_route_get(worker_self(), view, tools ? VIEW_ROUTE_TOOL :
	    VIEW_ROUTE_PROMPT, name, namelen, &core_rt);
	if (rc == -1) {
		core_error(err, JSONRPC_INTERNAL_ERROR,
		    "Internal error: cannot read the view");
		return -1;
	}
	/* a hidden tool is routable for composites, not for clients */
	if (rc != 0 || (tools && core_rt.vr_hidden)) {
		core_unknown(err, view, tools ? "tool" : "prompt", name,
		    namelen);
		return -1;
	}
	*backend = core_rt.vr_backend;
	*own = core_rt.vr_own;
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
core_route_has_headers(void)
{
	return core_rt.vr_map != NULL;
}

int
core_route(json_t *view, const struct config *conf, const char *method,
    json_t *params, const struct config_backend **be, json_t **bparams,
    struct core_err *err)
{
	const struct mcp_method	*mm = mcp_method_find(method);
	enum mcp_route		 route = mm != NULL ? mm->mm_route :
				    MCP_ROUTE_URI;
	const char		*backend = NULL, *own = NULL, *uri, *type;
	json_t			*p = NULL, *ref;

	*be = NULL;
	*bparams = NULL;
	if (params != NULL && !json_is_object(params)) {
		core_error(err, JSONRPC_INVALID_PARAMS,
		    "Invalid params: %s needs an object", method);
		return -1;
	}
	if (route == MCP_ROUTE_TOOL || route == MCP_ROUTE_PROMPT) {
		int tools = route == MCP_ROUTE_TOOL;

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
	} else if (route == MCP_ROUTE_REF) {
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
			core_uri_unknown(err, view, uri);
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

/* 1 if the principal of authz may see an item of kind k (-1: unknown) */
static int
core_any_shown(json_t *view, enum view_kind k, struct authz_filter *authz)
{
	struct view_page_req	 q;
	struct view_page	 pg;
	int			 rc;

	memset(&q, 0, sizeof(q));
	q.vq_kind = k;
	q.vq_pagesize = 1;
	q.vq_filter = core_item_filter;
	q.vq_farg = authz;
	if (view_page_get(worker_self(), view, &q, &pg) == -1)
		return -1;
	rc = pg.vp_count > 0;
	view_page_clear(&pg);
	return rc;
}

void
core_capabilities_shown(json_t *caps, json_t *view,
    struct authz_filter *authz)
{
	int prompts, resources;

	if (authz == NULL)
		return;
	/* a view that can't be read keeps them: the lists will say */
	prompts = json_object_get(caps, "prompts") != NULL &&
	    core_any_shown(view, VIEW_KIND_PROMPTS, authz) != 0;
	resources = json_object_get(caps, "resources") != NULL &&
	    (core_any_shown(view, VIEW_KIND_RESOURCES, authz) != 0 ||
	    core_any_shown(view, VIEW_KIND_TEMPLATES, authz) != 0);
	if (!prompts)
		(void)json_object_del(caps, "prompts");
	if (!resources)
		(void)json_object_del(caps, "resources");
	/* what completes is a prompt's or a resource's argument */
	if (!prompts && !resources)
		(void)json_object_del(caps, "completions");
}

/*
 * The x-mcp-header map of a visible tool in the view, or NULL if it
 * has none: worked out at build, kept with the tool's route.
 */
json_t *
core_tool_headers(json_t *view, const char *name)
{
	struct view_route	 r;
	json_t			*map = NULL;

	if (name == NULL || view_route_get(worker_self(), view,
	    VIEW_ROUTE_TOOL, name, strlen(name), &r) != 0)
		return NULL;
	if (!r.vr_hidden && r.vr_map != NULL)
		map = json_loads(r.vr_map, 0, NULL);
	view_route_clear(&r);
	return map;
}

void
core_free(void)
{
	view_route_clear(&core_rt);
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
	const struct mcp_method	*mm = mcp_method_find(method);
	json_t			*map, *hdrs = NULL;

	if (mm == NULL || mm->mm_id != MCP_M_TOOLS_CALL ||
	    (map = core_tool_headers(view, json_string_value(
	    json_object_get(params, "name")))) == NULL)
		return NULL;
	(void)proto_param_headers_build(map, json_object_get(bparams,
	    "arguments"), &hdrs);
	json_decref(map);
	return hdrs;
}
