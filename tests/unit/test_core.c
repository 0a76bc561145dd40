/*
 * worker/view/core.c: the era-free core on a fixed view, table-driven: which
 * methods it serves, list paging with cursors that name their list,
 * routing of advertised names to a backend and its own name (tools,
 * prompts, completion refs), resources by exact URI then by template,
 * hidden tools not callable, routes to a backend no longer configured,
 * the capabilities offered, and the Mcp-Param-* headers of a call.
 *
 * The view is written out in the shape worker/view/view.h documents, so these
 * tests do not depend on how view_build() names things; it is laid out
 * (view_layout_json()) and stored, as the core reads it in place.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "shared/config.h"
#include "shared/store.h"
#include "shared/cedar.h"
#include "worker/auth/authz_rule.h"
#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/view/core.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"
#include "worker/view/view_get.h"
#include "unit.h"

/*
 * Backends alpha and beta; "ghost" routes to a backend the configuration
 * no longer has.  a_echo and b_echo are both "echo" to their backends;
 * "secret" is hidden (routable for composites, not for clients).
 */
static const char VIEW[] =
	"{\"tools\":["
	"{\"name\":\"a_echo\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"b_echo\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"ghost\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"lookup\",\"inputSchema\":{\"type\":\"object\","
	"\"properties\":{\"region\":{\"type\":\"string\","
	"\"x-mcp-header\":\"Region\"},\"q\":{\"type\":\"string\"}}}},"
	"{\"name\":\"sum\",\"inputSchema\":{\"type\":\"object\"}}],"
	"\"resources\":["
	"{\"uri\":\"file:///a.txt\",\"name\":\"a\"},"
	"{\"uri\":\"file:///b.txt\",\"name\":\"b\"},"
	"{\"uri\":\"file:///c.txt\",\"name\":\"c\"}],"
	"\"resourceTemplates\":["
	"{\"uriTemplate\":\"db://{+path}\",\"name\":\"db\"},"
	"{\"uriTemplate\":\"file:///logs/{day}\",\"name\":\"logs\"}],"
	"\"prompts\":[{\"name\":\"greet\"}],"
	"\"routes\":{"
	"\"tools\":{"
	"\"a_echo\":{\"b\":\"alpha\",\"n\":\"echo\",\"hidden\":false},"
	"\"b_echo\":{\"b\":\"beta\",\"n\":\"echo\",\"hidden\":false},"
	"\"ghost\":{\"b\":\"gone\",\"n\":\"ghost\",\"hidden\":false},"
	"\"lookup\":{\"b\":\"beta\",\"n\":\"find\",\"hidden\":false},"
	"\"sum\":{\"b\":\"beta\",\"n\":\"sum\",\"hidden\":false},"
	"\"secret\":{\"b\":\"alpha\",\"n\":\"secret\",\"hidden\":true}},"
	"\"prompts\":{\"greet\":{\"b\":\"alpha\",\"n\":\"hello\"}},"
	"\"resources\":{\"file:///a.txt\":\"alpha\","
	"\"file:///b.txt\":\"beta\",\"file:///c.txt\":\"beta\","
	"\"db://exact\":\"beta\"},"
	"\"templates\":["
	"{\"t\":\"db://{+path}\",\"b\":\"alpha\"},"
	"{\"t\":\"file:///logs/{day}\",\"b\":\"beta\"}]},"
	"\"capabilities\":{\"resources\":{\"subscribe\":true},"
	"\"prompts\":{},\"logging\":{}}}";

static struct config_backend	backends[2];
/* the filter of list_json()'s lists (test_list_filtered()), or NULL */
static struct authz_filter	*list_authz;
static struct config		conf;
static char			statedir[] = "/tmp/test_core.XXXXXX";

/*
 * The core reads lists and routes in place from the view's layout in
 * the store (worker/view/view_store.c), stored as shards: the fixture is laid out
 * one entry per shard (so that pages run across shards and routes are
 * found in the shard the header's directory points to), and the view
 * the tests pass is its header, naming the layout and its shards.
 */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
shard_put(struct store *st, json_t *view, json_t *sub, enum view_kind k,
    const char *first, size_t *n)
{
	json_t	*ent;
	char	*lay, key[32];
	size_t	 len, listed, modern;

	assert_int_equal(view_layout_json(sub, 1, &lay, &len, NULL), 0);
	assert_int_equal(view_layout_counts(lay, len, k, &listed, &modern), 0);
	(void)snprintf(key, sizeof(key), "vdata|test.%zu", *n);
	assert_int_equal(store_put(st, STORE_VIEWS, key, strlen(key), lay, len,
	    0, store_now_ms()), 0);
	free(lay);
	ent = json_pack("[I s I I]", (json_int_t)*n, first, (json_int_t)listed,
	    (json_int_t)modern);
	assert_non_null(ent);
	assert_int_equal(json_array_append_new(json_object_get(json_object_get(
	    view, "shards"), view_kind_field(k)), ent), 0);
	json_decref(sub);
	(*n)++;
}

static void
shards_put(struct store *st, json_t *view)
{
	static const char *const rkey[VIEW_KIND_N] = { "tools", "resources",
	    "templates", "prompts" };
	static const char *const key[VIEW_KIND_N] = { "name", "uri",
	    "uriTemplate", "name" };
	json_t		*routes, *r, *it, *list, *sub;
	const char	*names[16], *name;
	size_t		 i, j, m, n = 0;
	int		 k;

	(void)json_object_set_new(view, "shards", json_object());
	for (k = 0; k < VIEW_KIND_N; k++) {
		(void)json_object_set_new(json_object_get(view, "shards"),
		    view_kind_field(k), json_array());
		routes = json_object_get(json_object_get(view, "routes"),
		    rkey[k]);
		list = json_object_get(view, view_kind_field(k));
		if (k == VIEW_KIND_TEMPLATES) {
			json_array_foreach(routes, i, r) {
				sub = json_pack("{s:[], s:{s:[O]}}",
				    view_kind_field(k), "routes", rkey[k], r);
				json_array_foreach(list, j, it)
					if (json_equal(json_object_get(it,
					    key[k]), json_object_get(r, "t")))
						(void)json_array_append(
						    json_object_get(sub,
						    view_kind_field(k)), it);
				shard_put(st, view, sub, k, json_string_value(
				    json_object_get(r, "t")), &n);
			}
			continue;
		}
		m = 0;
		json_object_foreach(routes, name, r)
			if (m < 16)
				names[m++] = name;
		qsort(names, m, sizeof(*names), name_cmp);
		for (i = 0; i < m; i++) {
			sub = json_pack("{s:[], s:{s:{s:O}}}",
			    view_kind_field(k), "routes", rkey[k], names[i],
			    json_object_get(routes, names[i]));
			json_array_foreach(list, j, it)
				if (json_is_string(json_object_get(it,
				    key[k])) && strcmp(json_string_value(
				    json_object_get(it, key[k])), names[i]) ==
				    0)
					(void)json_array_append(json_object_get(
					    sub, view_kind_field(k)), it);
			shard_put(st, view, sub, k, names[i], &n);
		}
	}
}

static int
setup(void **state)
{
	struct store	*st;
	json_t		*view;

	backends[0].cb_name = "alpha";
	backends[1].cb_name = "beta";
	conf.cf_backends = backends;
	conf.cf_nbackends = 2;
	view = jparse(VIEW);
	if (mkdtemp(statedir) == NULL || store_open(&st, statedir, 1 << 24,
	    16, 0) == -1)
		fail_msg("cannot open a store in %s", statedir);
	shards_put(st, view);
	worker_self()->w_store = st;
	(void)json_object_set_new(view, "layout", json_string("vdata|test"));
	*state = view;
	return 0;
}

static int
teardown(void **state)
{
	json_decref(*state);
	list_authz = NULL;
	core_free();
	store_close(worker_self()->w_store);
	worker_self()->w_store = NULL;
	unit_store_dir_remove(statedir);
	memcpy(statedir + sizeof(statedir) - 7, "XXXXXX", 6);
	return 0;
}

/* core_list()'s Legacy page, parsed: result NULL on an error */
static int
list_json(json_t *view, const char *method, json_t *params, size_t pagesize,
    json_t **result, struct core_err *err)
{
	char	*text;
	size_t	 len;

	*result = NULL;
	if (core_list(view, method, params, pagesize, NULL, list_authz, &text,
	    &len, err) == -1)
		return -1;
	*result = json_loadb(text, len, 0, NULL);
	free(text);
	assert_non_null(*result);
	return 0;
}

static void
test_method_kind(void **state)
{
	static const struct {
		const char	*method;
		enum core_kind	 kind;
	} t[] = {
		{ "tools/list", CORE_LIST },
		{ "resources/list", CORE_LIST },
		{ "resources/templates/list", CORE_LIST },
		{ "prompts/list", CORE_LIST },
		{ "tools/call", CORE_ROUTE },
		{ "prompts/get", CORE_ROUTE },
		{ "resources/read", CORE_ROUTE },
		{ "resources/subscribe", CORE_ROUTE },
		{ "resources/unsubscribe", CORE_ROUTE },
		{ "completion/complete", CORE_ROUTE },
		/* answered by the edges, or nobody's */
		{ "initialize", CORE_OTHER },
		{ "ping", CORE_OTHER },
		{ "logging/setLevel", CORE_OTHER },
		{ "server/discover", CORE_OTHER },
		{ "subscriptions/listen", CORE_OTHER },
		{ "tools/List", CORE_OTHER },
		{ "tools/list ", CORE_OTHER },
		{ "", CORE_OTHER },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (core_method_kind(t[i].method) != t[i].kind)
			fail_msg("\"%s\": kind %d, want %d", t[i].method,
			    (int)core_method_kind(t[i].method), (int)t[i].kind);
}

/* one page: the names (or URIs) it lists, "|"-joined, and its cursor */
static int
list_page(json_t *view, const char *method, const char *field,
    json_t *cursor, size_t pagesize, char *names, size_t nameslen,
    char *next, size_t nextlen, struct core_err *err)
{
	json_t		*params, *result, *it, *key;
	size_t		 i, o = 0;
	int		 rc;

	params = json_object();
	if (cursor != NULL)
		(void)json_object_set(params, "cursor", cursor);
	memset(err, 0, sizeof(*err));
	rc = list_json(view, method, params, pagesize, &result, err);
	json_decref(params);
	names[0] = next[0] = '\0';
	if (rc == -1) {
		assert_null(result);
		return -1;
	}
	assert_int_equal(json_object_size(result),
	    json_object_get(result, "nextCursor") != NULL ? 2 : 1);
	json_array_foreach(json_object_get(result, field), i, it) {
		key = json_object_get(it, "name");
		if (json_object_get(it, "uri") != NULL)
			key = json_object_get(it, "uri");
		if (json_object_get(it, "uriTemplate") != NULL)
			key = json_object_get(it, "uriTemplate");
		o += (size_t)snprintf(names + o, nameslen - o, "%s%s",
		    i > 0 ? "|" : "", json_string_value(key));
		assert_true(o < nameslen);
	}
	if (json_object_get(result, "nextCursor") != NULL) {
		assert_true(json_is_string(json_object_get(result,
		    "nextCursor")));
		(void)snprintf(next, nextlen, "%s", json_string_value(
		    json_object_get(result, "nextCursor")));
	}
	json_decref(result);
	return 0;
}

static void
test_list_pages(void **state)
{
	static const struct {
		const char	*method;
		const char	*field;
		const char	*cursor;	/* NULL: none */
		size_t		 pagesize;
		const char	*names;
		const char	*next;		/* "": the last page */
	} t[] = {
		{ "tools/list", "tools", NULL, 2, "a_echo|b_echo",
		    "tools:2" },
		{ "tools/list", "tools", "tools:2", 2, "ghost|lookup",
		    "tools:4" },
		{ "tools/list", "tools", "tools:4", 2, "sum", "" },
		{ "tools/list", "tools", NULL, 5,
		    "a_echo|b_echo|ghost|lookup|sum", "" },
		{ "tools/list", "tools", NULL, 100,
		    "a_echo|b_echo|ghost|lookup|sum", "" },
		{ "tools/list", "tools", "tools:1", 3,
		    "b_echo|ghost|lookup", "tools:4" },
		/* a cursor at the end: an empty last page */
		{ "tools/list", "tools", "tools:5", 2, "", "" },
		{ "resources/list", "resources", NULL, 2,
		    "file:///a.txt|file:///b.txt", "resources:2" },
		{ "resources/list", "resources", "resources:2", 2,
		    "file:///c.txt", "" },
		{ "resources/templates/list", "resourceTemplates", NULL, 1,
		    "db://{+path}", "resourceTemplates:1" },
		{ "resources/templates/list", "resourceTemplates",
		    "resourceTemplates:1", 1, "file:///logs/{day}", "" },
		{ "prompts/list", "prompts", NULL, 1, "greet", "" },
	};
	json_t		*view = *state, *cur;
	struct core_err	 err;
	char		 names[512], next[128];
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cur = t[i].cursor != NULL ? json_string(t[i].cursor) : NULL;
		if (list_page(view, t[i].method, t[i].field, cur,
		    t[i].pagesize, names, sizeof(names), next, sizeof(next),
		    &err) == -1)
			fail_msg("case %zu (%s %s): %s", i, t[i].method,
			    t[i].cursor != NULL ? t[i].cursor : "-",
			    err.ce_msg);
		json_decref(cur);
		if (strcmp(names, t[i].names) != 0 ||
		    strcmp(next, t[i].next) != 0)
			fail_msg("case %zu (%s %s): [%s] next \"%s\", want "
			    "[%s] next \"%s\"", i, t[i].method,
			    t[i].cursor != NULL ? t[i].cursor : "-", names,
			    next, t[i].names, t[i].next);
	}
}

/* following nextCursor gives every item once, in order, for any size */
static void
test_list_walk(void **state)
{
	static const char *const methods[][3] = {
		{ "tools/list", "tools", "a_echo|b_echo|ghost|lookup|sum" },
		{ "resources/list", "resources",
		    "file:///a.txt|file:///b.txt|file:///c.txt" },
		{ "resources/templates/list", "resourceTemplates",
		    "db://{+path}|file:///logs/{day}" },
		{ "prompts/list", "prompts", "greet" },
	};
	json_t		*view = *state, *cur;
	struct core_err	 err;
	char		 all[1024], names[512], next[128];
	size_t		 m, size, pages, o;

	for (m = 0; m < 4; m++) {
		for (size = 1; size <= 6; size++) {
			all[0] = '\0';
			o = 0;
			cur = NULL;
			for (pages = 0; pages < 10; pages++) {
				assert_int_equal(list_page(view,
				    methods[m][0], methods[m][1], cur, size,
				    names, sizeof(names), next, sizeof(next),
				    &err), 0);
				json_decref(cur);
				cur = NULL;
				o += (size_t)snprintf(all + o, sizeof(all) - o,
				    "%s%s", o > 0 && names[0] != '\0' ? "|" :
				    "", names);
				if (next[0] == '\0')
					break;
				cur = json_string(next);
			}
			json_decref(cur);
			if (strcmp(all, methods[m][2]) != 0)
				fail_msg("%s by %zu: [%s], want [%s]",
				    methods[m][0], size, all, methods[m][2]);
		}
	}
}

static void
test_list_bad_cursors(void **state)
{
	static const struct {
		const char	*method;
		const char	*cursor;	/* JSON */
		const char	*msg;
	} t[] = {
		/* a cursor names its list: no other list takes it */
		{ "tools/list", "\"prompts:1\"", "unknown cursor" },
		{ "tools/list", "\"resources:2\"", "unknown cursor" },
		{ "resources/list", "\"tools:2\"", "unknown cursor" },
		{ "resources/list", "\"resourceTemplates:1\"",
		    "unknown cursor" },
		{ "resources/templates/list", "\"resources:1\"",
		    "unknown cursor" },
		{ "prompts/list", "\"tools:1\"", "unknown cursor" },
		/* not one of vmcpd's */
		{ "tools/list", "\"tools:0\"", "unknown cursor" },
		{ "tools/list", "\"tools:\"", "unknown cursor" },
		{ "tools/list", "\"tools\"", "unknown cursor" },
		{ "tools/list", "\"tools:x\"", "unknown cursor" },
		{ "tools/list", "\"tools:2x\"", "unknown cursor" },
		{ "tools/list", "\"tools:-1\"", "unknown cursor" },
		{ "tools/list", "\"tools: 2\"", "unknown cursor" },
		{ "tools/list", "\"Tools:2\"", "unknown cursor" },
		{ "tools/list", "\"tools:2:2\"", "unknown cursor" },
		{ "tools/list", "\"\"", "unknown cursor" },
		{ "tools/list", "\"tools:0000000000000000000000000000000000000"
		    "000000000000000000000000000002\"", "unknown cursor" },
		{ "tools/list", "2", "unknown cursor" },
		{ "tools/list", "null", "unknown cursor" },
		{ "tools/list", "{\"tools\":2}", "unknown cursor" },
		/* past the end of the list */
		{ "tools/list", "\"tools:6\"", "past the end" },
		{ "prompts/list", "\"prompts:99\"", "past the end" },
	};
	json_t		*view = *state, *params, *result;
	struct core_err	 err;
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		params = json_object();
		(void)json_object_set_new(params, "cursor",
		    jparse(t[i].cursor));
		memset(&err, 0, sizeof(err));
		result = (json_t *)1;
		if (list_json(view, t[i].method, params, 2, &result, &err) !=
		    -1)
			fail_msg("case %zu (%s %s): accepted", i,
			    t[i].method, t[i].cursor);
		json_decref(params);
		assert_null(result);
		assert_int_equal(err.ce_code, JSONRPC_INVALID_PARAMS);
		if (strstr(err.ce_msg, t[i].msg) == NULL ||
		    strstr(err.ce_msg, t[i].method) == NULL)
			fail_msg("case %zu: \"%s\"", i, err.ce_msg);
	}
}

/*
 * Routing: the backend and the params it gets.  bparams NULL: the
 * client's params go as they are (the same object, not a copy).
 */
struct route_case {
	const char	*method;
	const char	*params;
	const char	*backend;	/* NULL: refused */
	const char	*bparams;	/* NULL: the client's own */
	int		 code;		/* when refused */
	const char	*msg;		/* when refused: a part of it */
};

static void
test_route(void **state)
{
	static const struct route_case t[] = {
		/* advertised names go out under the backend's own */
		{ "tools/call", "{\"name\":\"a_echo\",\"arguments\":"
		    "{\"m\":\"hi\"}}", "alpha", "{\"name\":\"echo\","
		    "\"arguments\":{\"m\":\"hi\"}}", 0, NULL },
		{ "tools/call", "{\"name\":\"b_echo\",\"arguments\":{},"
		    "\"_meta\":{\"progressToken\":7}}", "beta",
		    "{\"name\":\"echo\",\"arguments\":{},\"_meta\":"
		    "{\"progressToken\":7}}", 0, NULL },
		{ "tools/call", "{\"name\":\"lookup\"}", "beta",
		    "{\"name\":\"find\"}", 0, NULL },
		{ "tools/call", "{\"name\":\"sum\",\"arguments\":{\"a\":1}}",
		    "beta", NULL, 0, NULL },
		{ "prompts/get", "{\"name\":\"greet\",\"arguments\":"
		    "{\"who\":\"x\"}}", "alpha", "{\"name\":\"hello\","
		    "\"arguments\":{\"who\":\"x\"}}", 0, NULL },
		/* hidden tools are not callable; unknown names neither */
		{ "tools/call", "{\"name\":\"secret\"}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "Unknown tool: secret" },
		{ "tools/call", "{\"name\":\"echo\"}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "Unknown tool: echo" },
		{ "tools/call", "{\"name\":\"hello\"}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "Unknown tool: hello" },
		{ "prompts/get", "{\"name\":\"a_echo\"}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "Unknown prompt: a_echo" },
		{ "prompts/get", "{\"name\":\"hello\"}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "Unknown prompt: hello" },
		{ "tools/call", "{\"name\":7}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "\"name\" must be a string" },
		{ "tools/call", "{}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "\"name\" must be a string" },
		{ "tools/call", "[\"a_echo\"]", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "needs an object" },
		/* routed to a backend the configuration no longer has */
		{ "tools/call", "{\"name\":\"ghost\"}", NULL, NULL,
		    JSONRPC_INTERNAL_ERROR, "backend gone is not configured" },
		/* resources: the exact URI first, then the templates */
		{ "resources/read", "{\"uri\":\"file:///a.txt\"}", "alpha",
		    NULL, 0, NULL },
		{ "resources/read", "{\"uri\":\"file:///b.txt\"}", "beta",
		    NULL, 0, NULL },
		{ "resources/read", "{\"uri\":\"db://exact\"}", "beta",
		    NULL, 0, NULL },
		{ "resources/read", "{\"uri\":\"db://rows/7\"}", "alpha",
		    NULL, 0, NULL },
		{ "resources/read", "{\"uri\":\"file:///logs/2026-12-01\"}",
		    "beta", NULL, 0, NULL },
		{ "resources/subscribe", "{\"uri\":\"file:///logs/today\"}",
		    "beta", NULL, 0, NULL },
		{ "resources/unsubscribe", "{\"uri\":\"db://a/b\"}", "alpha",
		    NULL, 0, NULL },
		/* {day} takes no "/", and nothing else matches */
		{ "resources/read", "{\"uri\":\"file:///logs/a/b\"}", NULL,
		    NULL, MCP_ERR_RESOURCE_NOT_FOUND,
		    "Resource not found: file:///logs/a/b" },
		{ "resources/read", "{\"uri\":\"file:///logs/\"}", NULL,
		    NULL, MCP_ERR_RESOURCE_NOT_FOUND, "Resource not found" },
		{ "resources/read", "{\"uri\":\"file:///d.txt\"}", NULL, NULL,
		    MCP_ERR_RESOURCE_NOT_FOUND, "Resource not found" },
		{ "resources/read", "{\"uri\":3}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "\"uri\" must be a string" },
		{ "resources/read", "{}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "\"uri\" must be a string" },
		/* completion: a prompt ref by its advertised name */
		{ "completion/complete", "{\"ref\":{\"type\":\"ref/prompt\","
		    "\"name\":\"greet\"},\"argument\":{\"name\":\"who\","
		    "\"value\":\"a\"}}", "alpha", "{\"ref\":{\"type\":"
		    "\"ref/prompt\",\"name\":\"hello\"},\"argument\":{"
		    "\"name\":\"who\",\"value\":\"a\"}}", 0, NULL },
		/* a resource ref: a template as it is, or a URI */
		{ "completion/complete", "{\"ref\":{\"type\":"
		    "\"ref/resource\",\"uri\":\"file:///logs/{day}\"}}",
		    "beta", NULL, 0, NULL },
		{ "completion/complete", "{\"ref\":{\"type\":"
		    "\"ref/resource\",\"uri\":\"file:///a.txt\"}}", "alpha",
		    NULL, 0, NULL },
		{ "completion/complete", "{\"ref\":{\"type\":"
		    "\"ref/resource\",\"uri\":\"db://x\"}}", "alpha", NULL, 0,
		    NULL },
		{ "completion/complete", "{\"ref\":{\"type\":"
		    "\"ref/resource\",\"uri\":\"file:///nope\"}}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "Unknown resource: file:///nope" },
		{ "completion/complete", "{\"ref\":{\"type\":"
		    "\"ref/resource\"}}", NULL, NULL, JSONRPC_INVALID_PARAMS,
		    "ref.uri must be a string" },
		{ "completion/complete", "{\"ref\":{\"type\":\"ref/prompt\","
		    "\"name\":\"nope\"}}", NULL, NULL, JSONRPC_INVALID_PARAMS,
		    "Unknown prompt: nope" },
		{ "completion/complete", "{\"ref\":{\"type\":\"ref/tool\","
		    "\"name\":\"a_echo\"}}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "ref.type must be" },
		{ "completion/complete", "{}", NULL, NULL,
		    JSONRPC_INVALID_PARAMS, "ref.type must be" },
	};
	json_t				*view = *state, *params, *before;
	json_t				*bparams, *want;
	const struct config_backend	*be;
	struct core_err			 err;
	size_t				 i;
	int				 rc;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		params = jparse(t[i].params);
		before = json_deep_copy(params);
		memset(&err, 0, sizeof(err));
		be = (const struct config_backend *)1;
		bparams = (json_t *)1;
		rc = core_route(view, &conf, t[i].method, params, &be,
		    &bparams, &err);
		if (t[i].backend == NULL) {
			if (rc != -1)
				fail_msg("case %zu (%s %s): routed to %s", i,
				    t[i].method, t[i].params, be->cb_name);
			assert_null(be);
			assert_null(bparams);
			if (err.ce_code != t[i].code ||
			    strstr(err.ce_msg, t[i].msg) == NULL)
				fail_msg("case %zu (%s %s): %d \"%s\", want "
				    "%d \"%s\"", i, t[i].method, t[i].params,
				    err.ce_code, err.ce_msg, t[i].code,
				    t[i].msg);
		} else {
			if (rc != 0)
				fail_msg("case %zu (%s %s): %s", i,
				    t[i].method, t[i].params, err.ce_msg);
			assert_non_null(be);
			assert_string_equal(be->cb_name, t[i].backend);
			if (t[i].bparams == NULL)
				assert_ptr_equal(bparams, params);
			else {
				want = jparse(t[i].bparams);
				if (!json_equal(bparams, want))
					fail_msg("case %zu: %s", i,
					    json_dumps(bparams, JSON_SORT_KEYS));
				json_decref(want);
			}
			json_decref(bparams);
		}
		/* the client's params are never changed */
		assert_true(json_equal(params, before));
		json_decref(before);
		json_decref(params);
	}
}

/* the fast path: a tools/call by the name's text, not NUL-terminated */
static void
test_route_tool(void **state)
{
	static const struct {
		const char	*body;	/* the name is its first namelen */
		size_t		 namelen;
		const char	*backend;	/* NULL: refused */
		const char	*own;
		int		 code;
	} t[] = {
		{ "a_echo\",\"arguments\":{}}", 6, "alpha", "echo", 0 },
		{ "b_echo\"}", 6, "beta", "echo", 0 },
		{ "lookup", 6, "beta", "find", 0 },
		{ "sum", 3, "beta", "sum", 0 },
		{ "a_echo", 5, NULL, NULL, JSONRPC_INVALID_PARAMS },
		{ "a_echoes", 8, NULL, NULL, JSONRPC_INVALID_PARAMS },
		{ "secret\"}", 6, NULL, NULL, JSONRPC_INVALID_PARAMS },
		{ "greet", 5, NULL, NULL, JSONRPC_INVALID_PARAMS },
		{ "", 0, NULL, NULL, JSONRPC_INVALID_PARAMS },
		{ "ghost", 5, NULL, NULL, JSONRPC_INTERNAL_ERROR },
	};
	json_t				*view = *state;
	const struct config_backend	*be;
	const char			*own;
	struct core_err			 err;
	size_t				 i;
	int				 rc;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&err, 0, sizeof(err));
		own = NULL;
		rc = core_route_tool(view, &conf, t[i].body, t[i].namelen, &be,
		    &own, &err);
		if (t[i].backend == NULL) {
			if (rc != -1)
				fail_msg("case %zu (%.*s): routed", i,
				    (int)t[i].namelen, t[i].body);
			assert_null(be);
			assert_int_equal(err.ce_code, t[i].code);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu (%.*s): %s", i, (int)t[i].namelen,
			    t[i].body, err.ce_msg);
		assert_string_equal(be->cb_name, t[i].backend);
		assert_string_equal(own, t[i].own);
	}
	/* the message names the tool as it was asked, and only that */
	memset(&err, 0, sizeof(err));
	assert_int_equal(core_route_tool(view, &conf, "secret\"}", 6, &be,
	    &own, &err), -1);
	assert_string_equal(err.ce_msg, "Unknown tool: secret");
}

/*
 * A name the view lacks while a backend's lists failed: the message
 * gives the view's reason, which names the backend, once.
 */
static void
test_unknown_missing(void **state)
{
	json_t				*view = *state;
	const struct config_backend	*be;
	const char			*own;
	struct core_err			 err;

	assert_int_equal(json_object_set_new(view, "missing", json_pack(
	    "{s:s}", "gamma", "backend gamma: connect to 127.0.0.1:1 failed")),
	    0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(core_route_tool(view, &conf, "nope\"}", 4, &be,
	    &own, &err), -1);
	assert_int_equal(err.ce_code, JSONRPC_INVALID_PARAMS);
	assert_string_equal(err.ce_msg, "Unknown tool: nope (not listed now: "
	    "backend gamma: connect to 127.0.0.1:1 failed)");
	/* a reason that is not a string: the backend is named here */
	assert_int_equal(json_object_set_new(view, "missing", json_pack(
	    "{s:i}", "gamma", 1)), 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(core_route_tool(view, &conf, "nope\"}", 4, &be,
	    &own, &err), -1);
	assert_string_equal(err.ce_msg, "Unknown tool: nope (not listed now: "
	    "backend gamma: its lists failed)");
	/* a listed name still routes */
	assert_int_equal(core_route_tool(view, &conf, "a_echo\"}", 6, &be,
	    &own, &err), 0);
	assert_string_equal(be->cb_name, "alpha");
}

/*
 * A definition withheld by its pin (worker/builder/view_pins.c): a call
 * by its advertised name, a prompts/get, a read of a URI of its template
 * answer the error the view's header keeps for it; other unknown names
 * and URIs keep theirs.
 */
static void
test_unknown_withheld(void **state)
{
	json_t				*view = *state, *params, *bp;
	const struct config_backend	*be;
	const char			*own;
	struct core_err			 err;

	assert_int_equal(json_object_set_new(view, "withheld", json_pack(
	    "{s:{s:{s:s, s:s, s:s}}, s:{s:{s:s, s:s, s:s}},"
	    " s:{s:{s:s, s:s, s:s}}}",
	    "tools", "a_calc", "b", "alpha", "n", "calc", "m", "Tool calc of "
	    "backend alpha changed since it was pinned",
	    "prompts", "ask", "b", "beta", "n", "ask", "m", "Prompt ask of "
	    "backend beta changed",
	    "resourceTemplates", "notes://{id}", "b", "beta", "n",
	    "notes://{id}", "m", "Resource template notes://{id} changed")), 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(core_route_tool(view, &conf, "a_calc\"}", 6, &be,
	    &own, &err), -1);
	assert_int_equal(err.ce_code, JSONRPC_INVALID_PARAMS);
	assert_string_equal(err.ce_msg, "Tool calc of backend alpha changed "
	    "since it was pinned");
	/* its name cut short is another name */
	assert_int_equal(core_route_tool(view, &conf, "a_calc\"}", 5, &be,
	    &own, &err), -1);
	assert_string_equal(err.ce_msg, "Unknown tool: a_cal");
	params = json_pack("{s:s}", "name", "ask");
	assert_int_equal(core_route(view, &conf, "prompts/get", params, &be,
	    &bp, &err), -1);
	assert_string_equal(err.ce_msg, "Prompt ask of backend beta changed");
	json_decref(params);
	params = json_pack("{s:s}", "uri", "notes://7");
	assert_int_equal(core_route(view, &conf, "resources/read", params,
	    &be, &bp, &err), -1);
	assert_int_equal(err.ce_code, MCP_ERR_RESOURCE_NOT_FOUND);
	assert_string_equal(err.ce_msg, "Resource template notes://{id} "
	    "changed");
	json_decref(params);
	params = json_pack("{s:s}", "uri", "other://7");
	assert_int_equal(core_route(view, &conf, "resources/read", params,
	    &be, &bp, &err), -1);
	assert_string_equal(err.ce_msg, "Resource not found: other://7");
	json_decref(params);
}

/* hidden tools: routed for nobody, listed to nobody */
static void
test_hidden(void **state)
{
	json_t		*view = *state, *result, *it;
	struct core_err	 err;
	size_t		 i;

	assert_int_equal(list_json(view, "tools/list", NULL, 100, &result,
	    &err), 0);
	json_array_foreach(json_object_get(result, "tools"), i, it)
		assert_string_not_equal(json_string_value(json_object_get(it,
		    "name")), "secret");
	json_decref(result);
	assert_null(core_tool_headers(view, "secret"));
}

static void
test_capabilities(void **state)
{
	static const struct {
		const char	*bcaps;		/* the view's backends' */
		int		 logging;
		const char	*want;
	} t[] = {
		{ "{}", 1, "{\"tools\":{\"listChanged\":true}}" },
		{ "{\"resources\":{\"subscribe\":true},\"prompts\":{},"
		    "\"logging\":{},\"completions\":{}}", 1,
		    "{\"tools\":{\"listChanged\":true},\"resources\":"
		    "{\"listChanged\":true,\"subscribe\":true},\"prompts\":"
		    "{\"listChanged\":true},\"completions\":{},\"logging\":"
		    "{}}" },
		/* no logging for a 2026-07-28 client */
		{ "{\"resources\":{},\"logging\":{}}", 0,
		    "{\"tools\":{\"listChanged\":true},\"resources\":"
		    "{\"listChanged\":true,\"subscribe\":false}}" },
		/* not objects: not offered */
		{ "{\"resources\":true,\"prompts\":null,\"logging\":1}", 1,
		    "{\"tools\":{\"listChanged\":true}}" },
	};
	json_t	*view, *caps, *want;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		view = json_pack("{s:o}", "capabilities", jparse(t[i].bcaps));
		caps = core_capabilities(view, t[i].logging);
		want = jparse(t[i].want);
		if (!json_equal(caps, want))
			fail_msg("case %zu: %s", i, json_dumps(caps,
			    JSON_SORT_KEYS));
		json_decref(want);
		json_decref(caps);
		json_decref(view);
	}
}

/* the Mcp-Param-* headers of a tools/call, from the advertised tool */
static void
test_param_headers(void **state)
{
	json_t	*view = *state, *params, *bparams, *h;

	params = jparse("{\"name\":\"lookup\",\"arguments\":{\"region\":"
	    "\"eu-west\",\"q\":\"x\"}}");
	bparams = jparse("{\"name\":\"find\",\"arguments\":{\"region\":"
	    "\"eu-west\",\"q\":\"x\"}}");
	h = core_param_headers(view, "tools/call", params, bparams);
	assert_non_null(h);
	assert_string_equal(json_string_value(json_object_get(h, "Region")),
	    "eu-west");
	assert_int_equal(json_object_size(h), 1);
	json_decref(h);
	/* twice: from the per-view cache */
	h = core_param_headers(view, "tools/call", params, bparams);
	assert_non_null(h);
	json_decref(h);
	/* only tools/call; a tool with no annotations has none */
	assert_null(core_param_headers(view, "prompts/get", params,
	    bparams));
	json_decref(params);
	params = jparse("{\"name\":\"sum\",\"arguments\":{\"a\":1}}");
	assert_null(core_param_headers(view, "tools/call", params, params));
	json_decref(params);
	json_decref(bparams);
	assert_null(core_tool_headers(view, "nope"));
	assert_null(core_tool_headers(view, NULL));
}

/*
 * Lists filtered per principal, over shards (one item each): a page
 * holds the items that pass, its cursor points past the last item
 * examined, in both revisions; and a listed item by its key.
 */
static void
test_list_filtered(void **state)
{
	static const char pol[] =
	    "permit(principal, action == Action::\"call_tool\", resource)\n"
	    "    when { resource.name like \"*echo\" };\n"
	    "permit(principal, action == Action::\"read_resource\",\n"
	    "    resource == Resource::\"file:///c.txt\");\n";
	static const struct {
		const char	*method, *field, *cursor, *names, *next;
	} t[] = {
		{ "tools/list", "tools", NULL, "a_echo", "tools:1" },
		{ "tools/list", "tools", "tools:1", "b_echo", "tools:2" },
		/* the rest examined, none shown: the last page */
		{ "tools/list", "tools", "tools:2", "", "" },
		/* a, b examined and left out on the way to c */
		{ "resources/list", "resources", NULL, "file:///c.txt", "" },
	};
	json_t			*view = *state, *claims, *si, *r, *params;
	struct config		 cf;
	struct authz_conf	 ac;
	struct authz_cache	*c;
	struct authz_filter	 af;
	struct core_err		 err;
	char			 names[256], next[64], e[CEDAR_ERRLEN], *text;
	char			 all[256] = "";
	size_t			 len, i, pages = 0;

	memset(&cf, 0, sizeof(cf));
	cf.cf_name = "gw";
	cf.cf_inauth.ci_authz.az_cedar = 1;
	assert_non_null(cf.cf_inauth.ci_authz.az_policies = cedar_parse("t",
	    pol, strlen(pol), e, sizeof(e)));
	assert_int_equal(authz_conf_init(&ac, &cf), 0);
	assert_non_null(c = authz_cache_new(4, 64));
	core_set_filter(authz_filter_item);	/* authz_init()'s part */
	claims = jparse("{\"sub\":\"u\"}");
	assert_non_null(af.af_who = authz_cache_who(c, &ac, 1, "s", claims));
	list_authz = &af;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		r = t[i].cursor != NULL ? json_string(t[i].cursor) : NULL;
		assert_int_equal(list_page(view, t[i].method, t[i].field, r, 1,
		    names, sizeof(names), next, sizeof(next), &err), 0);
		json_decref(r);
		assert_string_equal(names, t[i].names);
		assert_string_equal(next, t[i].next);
	}
	/* 2026-07-28: a private list, walked by its cursors */
	si = json_pack("{s:s}", "name", "gw");
	params = json_object();
	do {
		assert_int_equal(core_list(view, "tools/list", params, 1, si,
		    &af, &text, &len, &err), 0);
		r = json_loadb(text, len, 0, NULL);
		free(text);
		assert_string_equal(json_string_value(json_object_get(r,
		    "cacheScope")), "private");
		for (i = 0; i < json_array_size(json_object_get(r, "tools"));
		    i++)
			(void)snprintf(all + strlen(all), sizeof(all) -
			    strlen(all), "%s%s", all[0] != '\0' ? "|" : "",
			    json_string_value(json_object_get(json_array_get(
			    json_object_get(r, "tools"), i), "name")));
		if (json_object_get(r, "nextCursor") != NULL)
			(void)json_object_set(params, "cursor",
			    json_object_get(r, "nextCursor"));
		else
			(void)json_object_del(params, "cursor");
		json_decref(r);
		assert_true(++pages < 10);
	} while (json_is_string(json_object_get(params, "cursor")));
	assert_string_equal(all, "a_echo|b_echo");
	json_decref(params);
	json_decref(si);
	list_authz = NULL;
	/* a listed item by its key, from its shard; a hidden one is unlisted */
	assert_int_equal(view_item_get(worker_self(), view, VIEW_KIND_TOOLS,
	    "lookup", 6, &text, &len), 0);
	assert_non_null(strstr(text, "\"x-mcp-header\":\"Region\""));
	free(text);
	assert_int_equal(view_item_get(worker_self(), view, VIEW_KIND_TOOLS,
	    "secret", 6, &text, &len), VIEW_NO_ROUTE);
	assert_null(text);
	json_decref(claims);
	authz_cache_free(c);
	cedar_policyset_free(cf.cf_inauth.ci_authz.az_policies);
}

/* store_read()'s callback: the record copied out */
struct copied {
	char	*c_data;
	size_t	 c_len;
};

static int
copy_out(void *arg, const void *data, size_t len)
{
	struct copied *c = arg;

	if ((c->c_data = malloc(len)) != NULL)
		memcpy(c->c_data, data, len);
	c->c_len = len;
	return 0;
}

/*
 * An item looked up once is kept for its layout (a layout is never
 * rewritten): read again, it comes from the cache, not the store; a
 * view naming another layout does not get it.
 */
static void
test_item_cache(void **state)
{
	struct store	*st = worker_self()->w_store;
	json_t		*view = *state, *ent = NULL, *arr;
	struct copied	 rec = { NULL, 0 };
	char		*text, *at, key[32];
	size_t		 len, i;

	assert_int_equal(view_item_get(worker_self(), view, VIEW_KIND_TOOLS,
	    "lookup", 6, &text, &len), 0);
	assert_non_null(strstr(text, "\"Region\""));
	free(text);
	/* the shard rewritten under the same layout (never done): unseen */
	arr = json_object_get(json_object_get(view, "shards"), "tools");
	json_array_foreach(arr, i, ent)
		if (strcmp(json_string_value(json_array_get(ent, 1)),
		    "lookup") == 0)
			break;
	assert_true(i < json_array_size(arr));
	(void)snprintf(key, sizeof(key), "vdata|test.%lld",
	    (long long)json_integer_value(json_array_get(ent, 0)));
	assert_int_equal(store_read(st, STORE_VIEWS, key, strlen(key),
	    store_now_ms(), copy_out, &rec), 0);
	assert_non_null(at = memmem(rec.c_data, rec.c_len, "\"Region\"", 8));
	memcpy(at, "\"Zone12\"", 8);
	assert_int_equal(store_put(st, STORE_VIEWS, key, strlen(key),
	    rec.c_data, rec.c_len, 0, store_now_ms()), 0);
	free(rec.c_data);
	assert_int_equal(view_item_get(worker_self(), view, VIEW_KIND_TOOLS,
	    "lookup", 6, &text, &len), 0);
	assert_non_null(strstr(text, "\"Region\""));
	free(text);
	/* another layout (none stored): not the cached item */
	(void)json_object_set_new(view, "layout", json_string("vdata|gone"));
	assert_int_equal(view_item_get(worker_self(), view, VIEW_KIND_TOOLS,
	    "lookup", 6, &text, &len), -1);
	assert_null(text);
	/* back to the first: read anew from the store */
	(void)json_object_set_new(view, "layout", json_string("vdata|test"));
	assert_int_equal(view_item_get(worker_self(), view, VIEW_KIND_TOOLS,
	    "lookup", 6, &text, &len), 0);
	assert_null(strstr(text, "\"Region\""));
	assert_non_null(strstr(text, "\"Zone12\""));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_kind),
		cmocka_unit_test_setup_teardown(test_list_pages, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list_filtered, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_item_cache, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list_walk, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list_bad_cursors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route, setup, teardown),
		cmocka_unit_test_setup_teardown(test_route_tool, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unknown_missing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unknown_withheld, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hidden, setup, teardown),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test_setup_teardown(test_param_headers, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
