/*
 * worker/view/view_resolve.c: naming strategies, overrides, visibility,
 * prompts, resources, determinism, malformed input (RFC 6570 matching:
 * test_uritemplate.c); worker/view/view_layout.c: the layout read in place.
 *
 * Every build frees its inputs before the view is inspected, so a view
 * that borrowed from its input shows up under ASan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"
#include "worker/view/view_rules.h"
#include "unit.h"

/* realistic tools: a schema, a description, some annotations */
#define TOOL(n) "{\"name\":\"" n "\",\"description\":\"Does " n "\"," \
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"q\":" \
	"{\"type\":\"string\"}},\"required\":[\"q\"]}}"
#define TOOLA(n) "{\"name\":\"" n "\",\"description\":\"Does " n "\"," \
	"\"inputSchema\":{\"type\":\"object\"},\"annotations\":" \
	"{\"title\":\"Old\",\"readOnlyHint\":true,\"openWorldHint\":false}}"
#define PROMPT(n) "{\"name\":\"" n "\",\"description\":\"Prompt " n "\"," \
	"\"arguments\":[{\"name\":\"topic\",\"required\":true}]}"
#define RES(u) "{\"uri\":\"" u "\",\"name\":\"" u "\",\"mimeType\":" \
	"\"text/plain\"}"
#define TMPL(t) "{\"uriTemplate\":\"" t "\",\"name\":\"t\"}"

struct tb {
	const char	*b;
	const char	*tools;
	const char	*prompts;
	const char	*resources;
	const char	*templates;
};

static json_t *
jopt(const char *s)
{
	return s != NULL ? jparse(s) : NULL;
}

static struct view_input *
inputs_make(struct view_input *in, const struct tb *tb, size_t n)
{
	size_t i;

	assert_true(n <= 16);
	memset(in, 0, 16 * sizeof(*in));
	for (i = 0; i < n; i++) {
		in[i].vi_backend = tb[i].b;
		in[i].vi_tools = jopt(tb[i].tools);
		in[i].vi_prompts = jopt(tb[i].prompts);
		in[i].vi_resources = jopt(tb[i].resources);
		in[i].vi_templates = jopt(tb[i].templates);
	}
	return in;
}

static void
inputs_free(struct view_input *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_decref(in[i].vi_tools);
		json_decref(in[i].vi_prompts);
		json_decref(in[i].vi_resources);
		json_decref(in[i].vi_templates);
	}
}

/* build from JSON text; the inputs are gone when the view is returned */
static json_t *
build(const struct view_policy *pol, const struct tb *tb, size_t n)
{
	struct view_input	in[16];
	json_t			*v;

	v = view_build(pol, inputs_make(in, tb, n), n);
	inputs_free(in, n);
	assert_non_null(v);
	return v;
}

static void
expect_json(json_t *got, const char *want)
{
	json_t	*w = jparse(want);
	char	*g;

	if (!json_equal(got, w)) {
		g = got != NULL ? json_dumps(got, JSON_COMPACT |
		    JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
		fail_msg("\n  got  %s\n  want %s", g != NULL ? g : "(null)",
		    want);
	}
	json_decref(w);
}

static json_t *
route(json_t *v, const char *kind)
{
	return json_object_get(json_object_get(v, "routes"), kind);
}

/* the "name" (or "uri"/"uriTemplate") of each advertised item, in order */
static void
expect_names(json_t *v, const char *list, const char *want)
{
	json_t	*names = json_array(), *e, *n;
	size_t	 i;

	json_array_foreach(json_object_get(v, list), i, e) {
		n = json_object_get(e, "name");
		if (strcmp(list, "resources") == 0)
			n = json_object_get(e, "uri");
		else if (strcmp(list, "resourceTemplates") == 0)
			n = json_object_get(e, "uriTemplate");
		json_array_append(names, n);
	}
	expect_json(names, want);
	json_decref(names);
}

/* the error strings, exactly and in order; the list ends with NULL */
static void
expect_errors(json_t *v, ...)
{
	json_t		*want = json_array(), *got;
	const char	*s;
	char		*g, *w;
	va_list		 ap;

	va_start(ap, v);
	while ((s = va_arg(ap, const char *)) != NULL)
		json_array_append_new(want, json_string(s));
	va_end(ap);
	got = json_object_get(v, "errors");
	if (!json_equal(got, want)) {
		g = json_dumps(got, JSON_INDENT(1) | JSON_ENCODE_ANY);
		w = json_dumps(want, JSON_INDENT(1));
		fail_msg("errors\n  got  %s\n  want %s", g, w);
	}
	json_decref(want);
}

static struct view_policy
policy(enum view_conflict c, enum view_prefix_mode m)
{
	struct view_policy	p;

	memset(&p, 0, sizeof(p));
	p.vp_conflict = c;
	p.vp_prefix_mode = m;
	p.vp_prefix_format = "{workload}_";
	return p;
}

static const struct tb gh_jira[] = {
	{ "github", "[" TOOL("create_pr") "," TOOL("list_issues") "]",
	    NULL, NULL, NULL },
	{ "jira", "[" TOOL("list_issues") "," TOOL("create_issue") "]",
	    NULL, NULL, NULL },
};

/* ---- prefix ---- */

static void
test_prefix_always(void **state)
{
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v, *t;

	(void)state;
	v = build(&p, gh_jira, 2);
	expect_names(v, "tools", "[\"github_create_pr\","
	    "\"github_list_issues\",\"jira_create_issue\","
	    "\"jira_list_issues\"]");
	expect_json(route(v, "tools"), "{"
	    "\"github_create_pr\":{\"b\":\"github\",\"n\":\"create_pr\","
	    "\"hidden\":false},"
	    "\"github_list_issues\":{\"b\":\"github\",\"n\":\"list_issues\","
	    "\"hidden\":false},"
	    "\"jira_create_issue\":{\"b\":\"jira\",\"n\":\"create_issue\","
	    "\"hidden\":false},"
	    "\"jira_list_issues\":{\"b\":\"jira\",\"n\":\"list_issues\","
	    "\"hidden\":false}}");
	/* the advertised object is the backend's with only the name changed */
	t = json_array_get(json_object_get(v, "tools"), 0);
	expect_json(t, "{\"name\":\"github_create_pr\",\"description\":"
	    "\"Does create_pr\",\"inputSchema\":{\"type\":\"object\","
	    "\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":"
	    "[\"q\"]}}");
	expect_errors(v, NULL);
	expect_json(json_object_get(v, "resources"), "[]");
	expect_json(json_object_get(v, "prompts"), "[]");
	expect_json(json_object_get(v, "resourceTemplates"), "[]");
	expect_json(route(v, "templates"), "[]");
	json_decref(v);
}

static void
test_prefix_on_conflict(void **state)
{
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v;

	(void)state;
	v = build(&p, gh_jira, 2);
	expect_names(v, "tools", "[\"create_issue\",\"create_pr\","
	    "\"github_list_issues\",\"jira_list_issues\"]");
	expect_json(route(v, "tools"), "{"
	    "\"create_pr\":{\"b\":\"github\",\"n\":\"create_pr\","
	    "\"hidden\":false},"
	    "\"github_list_issues\":{\"b\":\"github\",\"n\":\"list_issues\","
	    "\"hidden\":false},"
	    "\"create_issue\":{\"b\":\"jira\",\"n\":\"create_issue\","
	    "\"hidden\":false},"
	    "\"jira_list_issues\":{\"b\":\"jira\",\"n\":\"list_issues\","
	    "\"hidden\":false}}");
	expect_errors(v, NULL);
	json_decref(v);
}

/* every {workload} is replaced; the rest of the format is literal */
static void
test_prefix_format(void **state)
{
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	p.vp_prefix_format = "{workload}.{workload}-";
	v = build(&p, gh_jira, 1);
	expect_names(v, "tools", "[\"github.github-create_pr\","
	    "\"github.github-list_issues\"]");
	json_decref(v);

	/* NULL and "" mean the default */
	p.vp_prefix_format = NULL;
	v = build(&p, gh_jira, 1);
	expect_names(v, "tools", "[\"github_create_pr\","
	    "\"github_list_issues\"]");
	json_decref(v);
	p.vp_prefix_format = "";
	v = build(&p, gh_jira, 1);
	expect_names(v, "tools", "[\"github_create_pr\","
	    "\"github_list_issues\"]");
	json_decref(v);

	/* the default policy (NULL) is prefix, always, "{workload}_" */
	v = build(NULL, gh_jira, 2);
	expect_names(v, "tools", "[\"github_create_pr\","
	    "\"github_list_issues\",\"jira_create_issue\","
	    "\"jira_list_issues\"]");
	json_decref(v);
}

/* ---- priority ---- */

static const struct tb search3[] = {
	{ "alpha", "[" TOOL("search") "," TOOL("alpha_only") "]",
	    NULL, NULL, NULL },
	{ "beta", "[" TOOL("search") "," TOOL("beta_only") "]",
	    NULL, NULL, NULL },
	{ "gamma", "[" TOOL("search") "]", NULL, NULL, NULL },
};

static void
test_priority_listed(void **state)
{
	static const char *const order[] = { "beta", "alpha" };
	struct view_policy	p = policy(VIEW_CONFLICT_PRIORITY,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	p.vp_priority = order;
	p.vp_npriority = 2;
	p.vp_prefix_format = "{workload}__";
	v = build(&p, search3, 3);
	/* beta wins the bare name, alpha is dropped, gamma is prefixed */
	expect_names(v, "tools", "[\"alpha_only\",\"beta_only\","
	    "\"gamma__search\",\"search\"]");
	expect_json(route(v, "tools"), "{"
	    "\"alpha_only\":{\"b\":\"alpha\",\"n\":\"alpha_only\","
	    "\"hidden\":false},"
	    "\"beta_only\":{\"b\":\"beta\",\"n\":\"beta_only\","
	    "\"hidden\":false},"
	    "\"search\":{\"b\":\"beta\",\"n\":\"search\",\"hidden\":false},"
	    "\"gamma__search\":{\"b\":\"gamma\",\"n\":\"search\","
	    "\"hidden\":false}}");
	expect_errors(v,
	    "tool \"search\" of backend \"alpha\" dropped: the name "
	    "\"search\" goes to backend \"beta\", earlier in priorityOrder",
	    NULL);
	json_decref(v);
}

/* an unlisted backend is never annexed by a listed one (#6097) */
static void
test_priority_unlisted_kept(void **state)
{
	static const char *const order[] = { "gamma" };
	struct view_policy	p = policy(VIEW_CONFLICT_PRIORITY,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v;

	(void)state;
	p.vp_priority = order;
	p.vp_npriority = 1;
	v = build(&p, search3, 3);
	expect_names(v, "tools", "[\"alpha_only\",\"alpha_search\","
	    "\"beta_only\",\"beta_search\",\"search\"]");
	expect_json(json_object_get(route(v, "tools"), "search"),
	    "{\"b\":\"gamma\",\"n\":\"search\",\"hidden\":false}");
	expect_json(json_object_get(route(v, "tools"), "alpha_search"),
	    "{\"b\":\"alpha\",\"n\":\"search\",\"hidden\":false}");
	expect_errors(v, NULL);
	json_decref(v);
}

/* none of the claimants listed: all prefixed with the configured format */
static void
test_priority_none_listed(void **state)
{
	static const char *const order[] = { "zeta", "gamma" };
	struct view_policy	p = policy(VIEW_CONFLICT_PRIORITY,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	p.vp_priority = order;
	p.vp_npriority = 2;
	p.vp_prefix_format = "{workload}-";
	v = build(&p, search3, 2);
	expect_names(v, "tools", "[\"alpha-search\",\"alpha_only\","
	    "\"beta-search\",\"beta_only\"]");
	expect_errors(v, NULL);
	json_decref(v);
}

/* ---- manual ---- */

static void
test_manual_unresolved(void **state)
{
	struct view_policy	p = policy(VIEW_CONFLICT_MANUAL,
				    VIEW_PREFIX_ALWAYS);
	struct tb		tb[3];
	json_t			*v;

	(void)state;
	memcpy(tb, search3, sizeof(tb));
	tb[0].resources = "[" RES("file:///a.txt") "]";
	tb[1].prompts = "[" PROMPT("summarize") "]";
	v = build(&p, tb, 3);
	/* only the conflicting tools fail; the rest of the view stands */
	expect_names(v, "tools", "[\"alpha_only\",\"beta_only\"]");
	expect_json(route(v, "tools"), "{"
	    "\"alpha_only\":{\"b\":\"alpha\",\"n\":\"alpha_only\","
	    "\"hidden\":false},"
	    "\"beta_only\":{\"b\":\"beta\",\"n\":\"beta_only\","
	    "\"hidden\":false}}");
	expect_names(v, "resources", "[\"file:///a.txt\"]");
	/* manual does not affect prompts: they follow the prefix rules */
	expect_names(v, "prompts", "[\"beta_summarize\"]");
	expect_errors(v,
	    "tool \"search\" of backend \"alpha\" dropped: the name "
	    "\"search\" is claimed by backends \"alpha\", \"beta\", \"gamma\" "
	    "and conflictResolution is manual; add an override that renames it",
	    "tool \"search\" of backend \"beta\" dropped: the name \"search\" "
	    "is claimed by backends \"alpha\", \"beta\", \"gamma\" and "
	    "conflictResolution is manual; add an override that renames it",
	    "tool \"search\" of backend \"gamma\" dropped: the name "
	    "\"search\" is claimed by backends \"alpha\", \"beta\", \"gamma\" "
	    "and conflictResolution is manual; add an override that renames it",
	    NULL);
	json_decref(v);
}

static void
test_manual_resolved(void **state)
{
	static const struct view_override ob[] = {
		{ "search", "beta_search", NULL, NULL } };
	static const struct view_override oc[] = {
		{ "search", "web_search", "Search the web", NULL } };
	struct view_workload	wl[2];
	struct view_policy	p = policy(VIEW_CONFLICT_MANUAL,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	memset(wl, 0, sizeof(wl));
	wl[0].vw_name = "beta";
	wl[0].vw_overrides = ob;
	wl[0].vw_noverrides = 1;
	wl[1].vw_name = "gamma";
	wl[1].vw_overrides = oc;
	wl[1].vw_noverrides = 1;
	p.vp_workloads = wl;
	p.vp_nworkloads = 2;
	v = build(&p, search3, 3);
	expect_names(v, "tools", "[\"alpha_only\",\"beta_only\","
	    "\"beta_search\",\"search\",\"web_search\"]");
	expect_json(route(v, "tools"), "{"
	    "\"alpha_only\":{\"b\":\"alpha\",\"n\":\"alpha_only\","
	    "\"hidden\":false},"
	    "\"beta_only\":{\"b\":\"beta\",\"n\":\"beta_only\","
	    "\"hidden\":false},"
	    "\"search\":{\"b\":\"alpha\",\"n\":\"search\",\"hidden\":false},"
	    "\"beta_search\":{\"b\":\"beta\",\"n\":\"search\","
	    "\"hidden\":false},"
	    "\"web_search\":{\"b\":\"gamma\",\"n\":\"search\","
	    "\"hidden\":false}}");
	expect_json(json_object_get(json_array_get(json_object_get(v,
	    "tools"), 4), "description"), "\"Search the web\"");
	expect_errors(v, NULL);
	json_decref(v);

	/* only one of the three resolved: the other two still fail */
	p.vp_nworkloads = 1;
	v = build(&p, search3, 3);
	expect_names(v, "tools", "[\"alpha_only\",\"beta_only\","
	    "\"beta_search\"]");
	expect_errors(v,
	    "tool \"search\" of backend \"alpha\" dropped: the name "
	    "\"search\" is claimed by backends \"alpha\", \"gamma\" and "
	    "conflictResolution is manual; add an override that renames it",
	    "tool \"search\" of backend \"gamma\" dropped: the name "
	    "\"search\" is claimed by backends \"alpha\", \"gamma\" and "
	    "conflictResolution is manual; add an override that renames it",
	    NULL);
	json_decref(v);
}

/* ---- generated-name collisions ---- */

static void
test_collision_prefix(void **state)
{
	static const struct tb tb[] = {
		{ "a", "[" TOOL("b_x") "," TOOL("y") "]", NULL, NULL, NULL },
		{ "a_b", "[" TOOL("x") "]", NULL, NULL, NULL },
	};
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	v = build(&p, tb, 2);
	expect_names(v, "tools", "[\"a_y\"]");
	expect_json(route(v, "tools"), "{\"a_y\":{\"b\":\"a\",\"n\":\"y\","
	    "\"hidden\":false}}");
	expect_errors(v,
	    "tool \"b_x\" of backend \"a\" dropped: its advertised name "
	    "\"a_b_x\" is also generated for tool \"x\" of backend \"a_b\"",
	    "tool \"x\" of backend \"a_b\" dropped: its advertised name "
	    "\"a_b_x\" is also generated for tool \"b_x\" of backend \"a\"",
	    NULL);
	json_decref(v);
}

/* a prefixed name equal to another backend's bare name */
#define E_AX1 "tool \"x\" of backend \"a\" dropped: its advertised name " \
	"\"a_x\" is also generated for tool \"a_x\" of backend \"b\""
#define E_AX2 "tool \"a_x\" of backend \"b\" dropped: its advertised name " \
	"\"a_x\" is also generated for tool \"x\" of backend \"a\""

static void
test_collision_bare(void **state)
{
	static const struct tb tb[] = {
		{ "a", "[" TOOL("x") "]", NULL, NULL, NULL },
		{ "b", "[" TOOL("x") "," TOOL("a_x") "]", NULL, NULL, NULL },
	};
	static const char *const order[] = { "b" };
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v;

	(void)state;
	v = build(&p, tb, 2);
	expect_names(v, "tools", "[\"b_x\"]");
	expect_errors(v, E_AX1, E_AX2, NULL);
	json_decref(v);

	/* priority: unlisted a is prefixed onto b's bare a_x: same rule */
	p = policy(VIEW_CONFLICT_PRIORITY, VIEW_PREFIX_ALWAYS);
	p.vp_priority = order;
	p.vp_npriority = 1;
	v = build(&p, tb, 2);
	expect_names(v, "tools", "[\"x\"]");
	expect_json(json_object_get(route(v, "tools"), "x"),
	    "{\"b\":\"b\",\"n\":\"x\",\"hidden\":false}");
	expect_errors(v, E_AX1, E_AX2, NULL);
	json_decref(v);
}

/* two tools of one backend renamed onto one name: both dropped */
static void
test_collision_same_backend(void **state)
{
	static const struct view_override ov[] = {
		{ "fetch_url", "fetch", NULL, NULL } };
	static const struct tb tb[] = {
		{ "web", "[" TOOL("fetch") "," TOOL("fetch_url") ","
		    TOOL("ping") "]", NULL, NULL, NULL },
	};
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_MANUAL,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "web";
	wl.vw_overrides = ov;
	wl.vw_noverrides = 1;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, tb, 1);
	expect_names(v, "tools", "[\"ping\"]");
	expect_errors(v,
	    "tool \"fetch\" of backend \"web\" dropped: its advertised name "
	    "\"fetch\" is also generated for tool \"fetch_url\" of backend "
	    "\"web\"",
	    "tool \"fetch_url\" of backend \"web\" dropped: its advertised "
	    "name \"fetch\" is also generated for tool \"fetch\" of backend "
	    "\"web\"",
	    NULL);
	json_decref(v);
}

/* many claimants of one name: each error names three, counts the rest */
static void
test_collision_many(void **state)
{
	static const struct tb tb[] = {
		{ "s", "[" TOOL("dup") "," TOOL("dup") "," TOOL("dup") ","
		    TOOL("dup") "," TOOL("dup") "," TOOL("dup") "]",
		    NULL, NULL, NULL },
		{ "t", "[" TOOL("dup") "," TOOL("dup") "]", NULL, NULL, NULL },
	};
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	v = build(&p, tb, 2);
	expect_json(json_object_get(v, "tools"), "[]");
	expect_json(route(v, "tools"), "{}");
#define E_DUP(b, rest) "tool \"dup\" of backend \"" b "\" dropped: its " \
	"advertised name \"" b "_dup\" is also generated for tool \"dup\" " \
	"of backend \"" b "\", tool \"dup\" of backend \"" b "\", " \
	"tool \"dup\" of backend \"" b "\"" rest
	expect_errors(v,
	    E_DUP("s", " and 2 more"), E_DUP("s", " and 2 more"),
	    E_DUP("s", " and 2 more"), E_DUP("s", " and 2 more"),
	    E_DUP("s", " and 2 more"), E_DUP("s", " and 2 more"),
	    "tool \"dup\" of backend \"t\" dropped: its advertised name "
	    "\"t_dup\" is also generated for tool \"dup\" of backend \"t\"",
	    "tool \"dup\" of backend \"t\" dropped: its advertised name "
	    "\"t_dup\" is also generated for tool \"dup\" of backend \"t\"",
	    NULL);
#undef E_DUP
	json_decref(v);
}

/* ---- overrides ---- */

static void
test_overrides(void **state)
{
	static const struct tb tb[] = {
		{ "github", "[" TOOLA("create_pr") "," TOOL("list_issues") ","
		    TOOLA("merge") "]", NULL, NULL, NULL },
	};
	struct view_override	ov[3];
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v, *a1, *a2, *a3;

	(void)state;
	a1 = jparse("{\"readOnlyHint\":false,\"destructiveHint\":true}");
	a2 = jparse("{\"title\":\"List issues\",\"idempotentHint\":true}");
	a3 = jparse("{\"openWorldHint\":\"yes\",\"colour\":\"red\","
	    "\"title\":\"Merge\"}");
	memset(ov, 0, sizeof(ov));
	ov[0].vo_tool = "create_pr";
	ov[0].vo_name = "gh_create_pr";
	ov[0].vo_description = "Open a pull request";
	ov[0].vo_annotations = a1;
	ov[1].vo_tool = "list_issues";		/* annotations only */
	ov[1].vo_annotations = a2;
	ov[2].vo_tool = "merge";
	ov[2].vo_annotations = a3;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "github";
	wl.vw_overrides = ov;
	wl.vw_noverrides = 3;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, tb, 1);
	json_decref(a1);
	json_decref(a2);
	json_decref(a3);
	expect_json(json_object_get(v, "tools"), "["
	    "{\"name\":\"github_gh_create_pr\",\"description\":"
	    "\"Open a pull request\",\"inputSchema\":{\"type\":\"object\"},"
	    "\"annotations\":{\"title\":\"Old\",\"readOnlyHint\":false,"
	    "\"openWorldHint\":false,\"destructiveHint\":true}},"
	    "{\"name\":\"github_list_issues\",\"description\":"
	    "\"Does list_issues\",\"inputSchema\":{\"type\":\"object\","
	    "\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":"
	    "[\"q\"]},\"annotations\":{\"title\":\"List issues\","
	    "\"idempotentHint\":true}},"
	    "{\"name\":\"github_merge\",\"description\":\"Does merge\","
	    "\"inputSchema\":{\"type\":\"object\"},\"annotations\":"
	    "{\"title\":\"Merge\",\"readOnlyHint\":true,"
	    "\"openWorldHint\":false}}]");
	expect_json(route(v, "tools"), "{"
	    "\"github_gh_create_pr\":{\"b\":\"github\",\"n\":\"create_pr\","
	    "\"hidden\":false},"
	    "\"github_list_issues\":{\"b\":\"github\",\"n\":\"list_issues\","
	    "\"hidden\":false},"
	    "\"github_merge\":{\"b\":\"github\",\"n\":\"merge\","
	    "\"hidden\":false}}");
	/* JSON object key order is the override's insertion order */
	expect_errors(v,
	    "backend \"github\": override of tool \"merge\": annotation "
	    "\"openWorldHint\" must be a boolean; ignored",
	    "backend \"github\": override of tool \"merge\": unknown "
	    "annotation \"colour\"; ignored",
	    NULL);
	json_decref(v);
}

/* an override's name is what the other rules see */
static void
test_override_conflicts(void **state)
{
	static const struct view_override ov[] = {
		{ "list_issues", "create_issue", NULL, NULL } };
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "github";
	wl.vw_overrides = ov;
	wl.vw_noverrides = 1;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, gh_jira, 2);
	/* github's list_issues now claims create_issue with jira */
	expect_names(v, "tools", "[\"create_pr\",\"github_create_issue\","
	    "\"jira_create_issue\",\"list_issues\"]");
	expect_json(json_object_get(route(v, "tools"), "github_create_issue"),
	    "{\"b\":\"github\",\"n\":\"list_issues\",\"hidden\":false}");
	expect_json(json_object_get(route(v, "tools"), "list_issues"),
	    "{\"b\":\"jira\",\"n\":\"list_issues\",\"hidden\":false}");
	expect_errors(v, NULL);
	json_decref(v);
}

static void
test_override_invalid(void **state)
{
	static const struct tb tb[] = {
		{ "s", "[" TOOL("t") "]", NULL, NULL, NULL },
	};
	struct view_override	ov;
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v, *a;

	(void)state;
	a = jparse("[true]");
	memset(&ov, 0, sizeof(ov));
	ov.vo_tool = "t";
	ov.vo_name = "";
	ov.vo_description = "bad \xff utf-8";
	ov.vo_annotations = a;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "s";
	wl.vw_overrides = &ov;
	wl.vw_noverrides = 1;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, tb, 1);
	json_decref(a);
	expect_json(json_object_get(v, "tools"), "[" TOOL("t") "]");
	expect_errors(v,
	    "backend \"s\": override of tool \"t\": the new name is empty or "
	    "not UTF-8; ignored",
	    "backend \"s\": override of tool \"t\": the description is not "
	    "UTF-8; ignored",
	    "backend \"s\": override of tool \"t\": annotations must be an "
	    "object; ignored",
	    NULL);
	json_decref(v);

	/* wrongly typed hints are ignored one by one; the rest applies */
	a = jparse("{\"title\":5,\"readOnlyHint\":null,"
	    "\"destructiveHint\":false}");
	ov.vo_name = "t2";
	ov.vo_description = NULL;
	ov.vo_annotations = a;
	v = build(&p, tb, 1);
	json_decref(a);
	expect_json(json_object_get(v, "tools"), "[{\"name\":\"t2\","
	    "\"description\":\"Does t\",\"inputSchema\":{\"type\":"
	    "\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},"
	    "\"required\":[\"q\"]},\"annotations\":"
	    "{\"destructiveHint\":false}}]");
	expect_errors(v,
	    "backend \"s\": override of tool \"t\": annotation \"title\" must "
	    "be a non-empty string; ignored",
	    "backend \"s\": override of tool \"t\": annotation "
	    "\"readOnlyHint\" must be a boolean; ignored",
	    NULL);
	json_decref(v);
}

/* ---- visibility ---- */

/* the filter lists post-override, pre-prefix names */
static void
test_filter_post_override(void **state)
{
	static const struct view_override ov[] = {
		{ "create_pr", "gh_create_pr", NULL, NULL } };
	static const char *const filter[] = { "gh_create_pr", "create_issue" };
	static const char *const f2[] = { "create_pr" };
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "github";
	wl.vw_overrides = ov;
	wl.vw_noverrides = 1;
	wl.vw_filter = filter;
	wl.vw_nfilter = 2;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, gh_jira, 2);
	/* jira has no filter; github keeps only gh_create_pr */
	expect_names(v, "tools", "[\"github_gh_create_pr\","
	    "\"jira_create_issue\",\"jira_list_issues\"]");
	expect_json(json_object_get(route(v, "tools"), "github_list_issues"),
	    "{\"b\":\"github\",\"n\":\"list_issues\",\"hidden\":true}");
	expect_errors(v, NULL);
	json_decref(v);

	/* filtering on the original name does not advertise the renamed */
	wl.vw_filter = f2;
	wl.vw_nfilter = 1;
	v = build(&p, gh_jira, 2);
	expect_names(v, "tools", "[\"jira_create_issue\","
	    "\"jira_list_issues\"]");
	expect_json(json_object_get(route(v, "tools"), "github_gh_create_pr"),
	    "{\"b\":\"github\",\"n\":\"create_pr\",\"hidden\":true}");
	json_decref(v);
}

static void
test_exclude_all(void **state)
{
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "jira";
	wl.vw_exclude_all = 1;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, gh_jira, 2);
	/* jira's tools still claim list_issues: github's is prefixed */
	expect_names(v, "tools", "[\"create_pr\",\"github_list_issues\"]");
	expect_json(route(v, "tools"), "{"
	    "\"create_pr\":{\"b\":\"github\",\"n\":\"create_pr\","
	    "\"hidden\":false},"
	    "\"github_list_issues\":{\"b\":\"github\",\"n\":\"list_issues\","
	    "\"hidden\":false},"
	    "\"create_issue\":{\"b\":\"jira\",\"n\":\"create_issue\","
	    "\"hidden\":true},"
	    "\"jira_list_issues\":{\"b\":\"jira\",\"n\":\"list_issues\","
	    "\"hidden\":true}}");
	json_decref(v);
}

static void
test_exclude_all_tools(void **state)
{
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	struct tb		tb[2];
	json_t			*v;

	(void)state;
	memcpy(tb, gh_jira, sizeof(tb));
	tb[0].resources = "[" RES("gh://readme") "]";
	tb[1].prompts = "[" PROMPT("triage") "]";
	p.vp_exclude_all_tools = 1;
	v = build(&p, tb, 2);
	expect_json(json_object_get(v, "tools"), "[]");
	expect_json(route(v, "tools"), "{"
	    "\"github_create_pr\":{\"b\":\"github\",\"n\":\"create_pr\","
	    "\"hidden\":true},"
	    "\"github_list_issues\":{\"b\":\"github\",\"n\":\"list_issues\","
	    "\"hidden\":true},"
	    "\"jira_create_issue\":{\"b\":\"jira\",\"n\":\"create_issue\","
	    "\"hidden\":true},"
	    "\"jira_list_issues\":{\"b\":\"jira\",\"n\":\"list_issues\","
	    "\"hidden\":true}}");
	expect_names(v, "resources", "[\"gh://readme\"]");
	expect_names(v, "prompts", "[\"jira_triage\"]");
	json_decref(v);
}

static void
test_default_deny(void **state)
{
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	struct tb		tb[2];
	json_t			*v;

	(void)state;
	memcpy(tb, gh_jira, sizeof(tb));
	tb[1].resources = "[" RES("jira://board") "]";
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "github";			/* an entry, nothing else */
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	p.vp_default_deny = 1;
	v = build(&p, tb, 2);
	expect_names(v, "tools", "[\"github_create_pr\","
	    "\"github_list_issues\"]");
	expect_json(json_object_get(route(v, "tools"), "jira_create_issue"),
	    "{\"b\":\"jira\",\"n\":\"create_issue\",\"hidden\":true}");
	expect_json(json_object_get(route(v, "tools"), "jira_list_issues"),
	    "{\"b\":\"jira\",\"n\":\"list_issues\",\"hidden\":true}");
	/* deny gates tools only */
	expect_names(v, "resources", "[\"jira://board\"]");
	expect_errors(v, NULL);
	json_decref(v);
}

/* ---- prompts ---- */

static const struct tb prompts3[] = {
	{ "alpha", NULL, "[" PROMPT("review") "," PROMPT("alpha_p") "]",
	    NULL, NULL },
	{ "beta", NULL, "[" PROMPT("review") "]", NULL, NULL },
	{ "gamma", NULL, "[" PROMPT("review") "," PROMPT("gamma_p") "]",
	    NULL, NULL },
};

static void
test_prompts_prefix(void **state)
{
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	p.vp_prefix_format = "{workload}/";
	v = build(&p, prompts3, 3);
	expect_names(v, "prompts", "[\"alpha/alpha_p\",\"alpha/review\","
	    "\"beta/review\",\"gamma/gamma_p\",\"gamma/review\"]");
	expect_json(route(v, "prompts"), "{"
	    "\"alpha/alpha_p\":{\"b\":\"alpha\",\"n\":\"alpha_p\"},"
	    "\"alpha/review\":{\"b\":\"alpha\",\"n\":\"review\"},"
	    "\"beta/review\":{\"b\":\"beta\",\"n\":\"review\"},"
	    "\"gamma/gamma_p\":{\"b\":\"gamma\",\"n\":\"gamma_p\"},"
	    "\"gamma/review\":{\"b\":\"gamma\",\"n\":\"review\"}}");
	expect_json(json_array_get(json_object_get(v, "prompts"), 1),
	    "{\"name\":\"alpha/review\",\"description\":\"Prompt review\","
	    "\"arguments\":[{\"name\":\"topic\",\"required\":true}]}");
	json_decref(v);

	p.vp_prefix_mode = VIEW_PREFIX_ON_CONFLICT;
	v = build(&p, prompts3, 3);
	expect_names(v, "prompts", "[\"alpha/review\",\"alpha_p\","
	    "\"beta/review\",\"gamma/review\",\"gamma_p\"]");
	expect_errors(v, NULL);
	json_decref(v);

	/* manual treats prompts like prefix */
	p.vp_conflict = VIEW_CONFLICT_MANUAL;
	v = build(&p, prompts3, 3);
	expect_names(v, "prompts", "[\"alpha/review\",\"alpha_p\","
	    "\"beta/review\",\"gamma/review\",\"gamma_p\"]");
	expect_errors(v, NULL);
	json_decref(v);
}

static void
test_prompts_priority(void **state)
{
	static const char *const order[] = { "gamma", "alpha" };
	struct view_policy	p = policy(VIEW_CONFLICT_PRIORITY,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	p.vp_priority = order;
	p.vp_npriority = 2;
	v = build(&p, prompts3, 3);
	/* listed keep bare names, gamma outranks alpha, beta is prefixed */
	expect_names(v, "prompts", "[\"alpha_p\",\"beta_review\","
	    "\"gamma_p\",\"review\"]");
	expect_json(route(v, "prompts"), "{"
	    "\"alpha_p\":{\"b\":\"alpha\",\"n\":\"alpha_p\"},"
	    "\"beta_review\":{\"b\":\"beta\",\"n\":\"review\"},"
	    "\"gamma_p\":{\"b\":\"gamma\",\"n\":\"gamma_p\"},"
	    "\"review\":{\"b\":\"gamma\",\"n\":\"review\"}}");
	expect_errors(v,
	    "prompt \"review\" of backend \"alpha\" dropped: the name "
	    "\"review\" goes to backend \"gamma\", earlier in priorityOrder",
	    NULL);
	json_decref(v);

	/* onConflict: an unlisted prompt nobody else claims stays bare */
	p.vp_prefix_mode = VIEW_PREFIX_ON_CONFLICT;
	p.vp_npriority = 1;
	v = build(&p, prompts3, 3);
	expect_names(v, "prompts", "[\"alpha_p\",\"alpha_review\","
	    "\"beta_review\",\"gamma_p\",\"review\"]");
	expect_errors(v, NULL);
	json_decref(v);
}

static void
test_prompts_ambiguous(void **state)
{
	static const struct tb tb[] = {
		{ "a", NULL, "[" PROMPT("b_x") "," PROMPT("ok") "]",
		    NULL, NULL },
		{ "a_b", NULL, "[" PROMPT("x") "]", NULL, NULL },
	};
	struct view_policy	p = policy(VIEW_CONFLICT_MANUAL,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	v = build(&p, tb, 2);
	expect_names(v, "prompts", "[\"a_ok\"]");
	expect_json(route(v, "prompts"),
	    "{\"a_ok\":{\"b\":\"a\",\"n\":\"ok\"}}");
	expect_errors(v,
	    "prompt \"b_x\" of backend \"a\" dropped: its advertised name "
	    "\"a_b_x\" is also generated for prompt \"x\" of backend \"a_b\"",
	    "prompt \"x\" of backend \"a_b\" dropped: its advertised name "
	    "\"a_b_x\" is also generated for prompt \"b_x\" of backend \"a\"",
	    NULL);
	json_decref(v);
}

/* ---- resources and templates ---- */

static void
test_resources_duplicates(void **state)
{
	/* input order deliberately not sorted: "a" must still win */
	static const struct tb tb[] = {
		{ "b", NULL, NULL, "[" RES("file:///README.md") ","
		    RES("file:///b.txt") "]", "[" TMPL("repo://{id}") ","
		    TMPL("b://{x}") "]" },
		{ "a", NULL, NULL, "[" RES("file:///README.md") ","
		    RES("file:///README.md") "]", "[" TMPL("repo://{id}") "]" },
	};
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	v = build(&p, tb, 2);
	expect_json(json_object_get(v, "resources"),
	    "[" RES("file:///README.md") "," RES("file:///b.txt") "]");
	expect_json(route(v, "resources"), "{\"file:///README.md\":\"a\","
	    "\"file:///b.txt\":\"b\"}");
	expect_json(json_object_get(v, "resourceTemplates"),
	    "[" TMPL("b://{x}") "," TMPL("repo://{id}") "]");
	expect_json(route(v, "templates"), "[{\"t\":\"b://{x}\",\"b\":\"b\"},"
	    "{\"t\":\"repo://{id}\",\"b\":\"a\"}]");
	expect_errors(v,
	    "resource \"file:///README.md\" of backend \"a\" dropped: already "
	    "offered by backend \"a\"",
	    "resource \"file:///README.md\" of backend \"b\" dropped: already "
	    "offered by backend \"a\"",
	    "resource template \"repo://{id}\" of backend \"b\" dropped: "
	    "already offered by backend \"a\"",
	    NULL);
	json_decref(v);
}

/* ---- hidden tools and naming ---- */

/* documented choice: naming is computed among all tools, hidden too */
static void
test_hidden_tools_claim_names(void **state)
{
	static const char *const filter[] = { "create_issue" };
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	json_t			*v;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "jira";
	wl.vw_filter = filter;
	wl.vw_nfilter = 1;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	v = build(&p, gh_jira, 2);
	/* jira's hidden list_issues still makes github's prefixed */
	expect_names(v, "tools", "[\"create_issue\",\"create_pr\","
	    "\"github_list_issues\"]");
	expect_json(json_object_get(route(v, "tools"), "jira_list_issues"),
	    "{\"b\":\"jira\",\"n\":\"list_issues\",\"hidden\":true}");
	json_decref(v);
}

/* ---- determinism ---- */

static const struct tb mix[] = {
	{ "web", "[" TOOL("fetch") "," TOOL("search") "," TOOL("b_x") "]",
	    "[" PROMPT("review") "]", "[" RES("file:///x") "]",
	    "[" TMPL("web://{q}") "]" },
	{ "docs", "[" TOOL("search") "," TOOL("read") "]",
	    "[" PROMPT("review") "," PROMPT("docs_p") "]",
	    "[" RES("file:///x") "," RES("file:///docs") "]",
	    "[" TMPL("web://{q}") "," TMPL("docs://{+path}") "]" },
	{ "web_b", "[" TOOL("x") "," TOOL("fetch") "]",
	    "[" PROMPT("review") "]", "[" RES("file:///x") "]", NULL },
	{ "alpha", "[" TOOL("search") "," TOOL("read") ", 7, {\"name\":1}]",
	    NULL, "[" RES("file:///docs") "]", "[" TMPL("web://{q}") "]" },
};

static void
check_permutations(const struct view_policy *p)
{
	static const int perms[][4] = {
		{ 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 1, 3, 0, 2 },
		{ 2, 0, 3, 1 }, { 1, 0, 2, 3 }, { 3, 0, 1, 2 },
	};
	struct tb	tb[4];
	json_t		*v;
	char		*ref = NULL, *ref2 = NULL, *s, *s2;
	size_t		 i, j;

	for (i = 0; i < sizeof(perms) / sizeof(perms[0]); i++) {
		for (j = 0; j < 4; j++)
			tb[j] = mix[perms[i][j]];
		v = build(p, tb, 4);
		s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		/* insertion order too, not only sorted keys */
		s2 = json_dumps(v, JSON_COMPACT);
		assert_non_null(s);
		assert_non_null(s2);
		json_decref(v);
		if (ref == NULL) {
			ref = s;
			ref2 = s2;
			continue;
		}
		assert_string_equal(s, ref);
		assert_string_equal(s2, ref2);
		free(s);
		free(s2);
	}
	/* the view is not trivial: something was kept, something dropped */
	assert_non_null(strstr(ref, "\"tools\":[{"));
	assert_non_null(strstr(ref, "dropped"));
	free(ref);
	free(ref2);
}

static void
test_determinism(void **state)
{
	static const char *const order[] = { "web", "docs" };
	static const struct view_override ov[] = {
		{ "read", "read_docs", NULL, NULL } };
	struct view_workload	wl;
	struct view_policy	p;
	int			c, m;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = "docs";
	wl.vw_overrides = ov;
	wl.vw_noverrides = 1;
	for (c = VIEW_CONFLICT_PREFIX; c <= VIEW_CONFLICT_MANUAL; c++)
		for (m = VIEW_PREFIX_ALWAYS; m <= VIEW_PREFIX_ON_CONFLICT;
		    m++) {
			p = policy((enum view_conflict)c,
			    (enum view_prefix_mode)m);
			p.vp_priority = order;
			p.vp_npriority = 2;
			p.vp_workloads = &wl;
			p.vp_nworkloads = 1;
			check_permutations(&p);
		}
}

/* ---- malformed input ---- */

static void
test_malformed(void **state)
{
	static const struct tb tb[] = {
		{ "a", "{\"name\":\"x\"}", "\"nope\"", "[1, {\"uri\":5},"
		    RES("ok://1") ", {\"uri\":\"\"}]", "[null, {\"name\":"
		    "\"t\"}]" },
		{ "b", "[" TOOL("fine") ", [], {\"name\":null}, "
		    "{\"name\":\"\"}, {\"description\":\"no name\"}]",
		    "[]", NULL, NULL },
		{ NULL, "[" TOOL("lost") "]", NULL, NULL, NULL },
		{ "", "[" TOOL("lost") "]", NULL, NULL, NULL },
		{ "bad\xc3\x28", "[" TOOL("lost") "]", NULL, NULL, NULL },
		{ "dup", "[" TOOL("d1") "]", NULL, NULL, NULL },
		{ "dup", "[" TOOL("d2") "]", NULL, NULL, NULL },
	};
	struct view_policy	p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	struct view_input	in[1];
	json_error_t		e;
	json_t			*v;

	(void)state;
	v = build(&p, tb, 7);
	expect_names(v, "tools", "[\"fine\"]");
	expect_names(v, "resources", "[\"ok://1\"]");
	expect_json(json_object_get(v, "prompts"), "[]");
	expect_json(json_object_get(v, "resourceTemplates"), "[]");
	expect_errors(v,
	    "a backend without a valid name was ignored",
	    "a backend without a valid name was ignored",
	    "a backend without a valid name was ignored",
	    "backend \"dup\" is given 2 times; all its lists are ignored",
	    "backend \"a\": \"tools\" is not an array; ignored",
	    "backend \"b\": tools[1] is not an object; skipped",
	    "backend \"b\": tools[2] has no valid string \"name\"; skipped",
	    "backend \"b\": tools[3] has no valid string \"name\"; skipped",
	    "backend \"b\": tools[4] has no valid string \"name\"; skipped",
	    "backend \"a\": \"prompts\" is not an array; ignored",
	    "backend \"a\": resources[0] is not an object; skipped",
	    "backend \"a\": resources[1] has no valid string \"uri\"; skipped",
	    "backend \"a\": resources[3] has no valid string \"uri\"; skipped",
	    "backend \"a\": resourceTemplates[0] is not an object; skipped",
	    "backend \"a\": resourceTemplates[1] has no valid string "
	    "\"uriTemplate\"; skipped",
	    NULL);
	json_decref(v);

	/* "\u0000" inside a name (only with JSON_ALLOW_NUL) is refused */
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "n";
	in[0].vi_tools = json_loads("[{\"name\":\"x\\u0000y\"}]",
	    JSON_ALLOW_NUL, &e);
	assert_non_null(in[0].vi_tools);
	v = view_build(&p, in, 1);
	json_decref(in[0].vi_tools);
	assert_non_null(v);
	expect_json(json_object_get(v, "tools"), "[]");
	expect_errors(v,
	    "backend \"n\": tools[0] has no valid string \"name\"; skipped",
	    NULL);
	json_decref(v);

	/* nothing at all */
	v = view_build(NULL, NULL, 0);
	assert_non_null(v);
	expect_json(v, "{\"tools\":[],\"prompts\":[],\"resources\":[],"
	    "\"resourceTemplates\":[],\"errors\":[],\"routes\":{\"tools\":{},"
	    "\"prompts\":{},\"resources\":{},\"templates\":[]}}");
	json_decref(v);
	v = view_build(&p, NULL, 3);
	assert_non_null(v);
	expect_errors(v, NULL);
	json_decref(v);
}

/* NULL pointers with counts, invalid prefix format */
static void
test_policy_edges(void **state)
{
	struct view_workload	wl;
	struct view_policy	p = policy(VIEW_CONFLICT_PRIORITY,
				    VIEW_PREFIX_ALWAYS);
	json_t			*v;

	(void)state;
	memset(&wl, 0, sizeof(wl));
	wl.vw_name = NULL;
	wl.vw_nfilter = 3;
	wl.vw_noverrides = 2;
	p.vp_priority = NULL;
	p.vp_npriority = 4;
	p.vp_workloads = &wl;
	p.vp_nworkloads = 1;
	p.vp_prefix_format = "\xff{workload}";
	v = build(&p, gh_jira, 2);
	expect_names(v, "tools", "[\"create_issue\",\"create_pr\","
	    "\"github_list_issues\",\"jira_list_issues\"]");
	expect_errors(v,
	    "prefixFormat is not UTF-8; \"{workload}_\" used",
	    NULL);
	json_decref(v);

	/* a filter array missing with a count: nothing passes the filter */
	wl.vw_name = "github";
	p.vp_prefix_format = "{workload}_";
	v = build(&p, gh_jira, 2);
	expect_names(v, "tools", "[\"create_issue\",\"jira_list_issues\"]");
	json_decref(v);
}


/* a string of n copies of c (freed by the caller) */
static char *
nchars(char c, size_t n)
{
	char	*s;

	assert_non_null(s = malloc(n + 1));
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/*
 * Names a client would be shown as they came: a tool's must be an MCP
 * tool name (1 to 128 of A-Z a-z 0-9 _ - .), before and after its
 * prefix; a prompt's, a URI's or a template's a label (no control or
 * bidi formatting character, capped).  The rest of the view stands;
 * each is said once, quoted so that it spans no line and drives no
 * terminal.
 */
static void
test_name_rules(void **state)
{
	static const struct view_override ov[] = {
		{ "sp ace", "space", NULL, NULL },
	};
	static const struct view_workload wl[] = {
		{ "a", NULL, 0, 0, ov, 1 },
	};
	struct view_policy	 p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	struct view_input	 in[2];
	char			*x129 = nchars('x', 129), *y128 = nchars('y', 128);
	char			*u4097 = nchars('u', 4097), *z127 = nchars('z', 127);
	char			*p129 = nchars('p', 129);
	json_t			*v;

	(void)state;
	memcpy(u4097, "a:", 2);
	p.vp_workloads = wl;
	p.vp_nworkloads = 1;
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "a";
	in[0].vi_tools = json_pack("[{s:s},{s:s},{s:s},{s:s},{s:s},{s:s},"
	    "{s:s},{s:s},{s:s}]", "name", "ok.tool-1_X", "name", "new\nline",
	    "name", "\x1b[31mred", "name", x129, "name", y128, "name", "sp ace",
	    "name", "sla/sh", "name", "caf\xc3\xa9", "name", "e\xe2\x80\xaex");
	in[0].vi_prompts = jparse("[{\"name\":\"good prompt \\u00e9\"},"
	    "{\"name\":\"bad\\u202eprompt\"},{\"name\":\"bell\\u0007\"},"
	    "{\"name\":\"c1\\u0085\"}]");
	json_array_append_new(in[0].vi_prompts, json_pack("{s:s}", "name",
	    p129));
	in[0].vi_resources = json_pack("[{s:s},{s:s},{s:s}]", "uri",
	    "file:///ok", "uri", "file:///bad\r\nuri", "uri", u4097);
	in[0].vi_templates = jparse("[{\"uriTemplate\":\"note://{id}\"},"
	    "{\"uriTemplate\":\"note://{id}\\u200f\"}]");
	v = view_build(&p, in, 1);
	inputs_free(in, 1);
	assert_non_null(v);
	expect_names(v, "tools", "[\"ok.tool-1_X\",\"space\",\"yyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"]");
	expect_json(json_object_get(route(v, "tools"), "space"),
	    "{\"b\":\"a\",\"n\":\"sp ace\",\"hidden\":false}");
	expect_names(v, "prompts", "[\"good prompt \\u00e9\"]");
	expect_names(v, "resources", "[\"file:///ok\"]");
	expect_names(v, "resourceTemplates", "[\"note://{id}\"]");
	expect_errors(v,
	    "backend \"a\": tool \"new\\nline\" dropped: its name is not a "
	    "tool name as MCP has them (1 to 128 characters of A-Z a-z 0-9 _ "
	    "- .)",
	    "backend \"a\": tool \"\\x1b[31mred\" dropped: its name is not a "
	    "tool name as MCP has them (1 to 128 characters of A-Z a-z 0-9 _ "
	    "- .)",
	    "backend \"a\": tool \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxx...(81 more)\" dropped: its name is not a tool name as MCP "
	    "has them (1 to 128 characters of A-Z a-z 0-9 _ - .)",
	    "backend \"a\": tool \"sla/sh\" dropped: its name is not a tool "
	    "name as MCP has them (1 to 128 characters of A-Z a-z 0-9 _ - .)",
	    "backend \"a\": tool \"caf\\u00e9\" dropped: its name is not a "
	    "tool name as MCP has them (1 to 128 characters of A-Z a-z 0-9 _ "
	    "- .)",
	    "backend \"a\": tool \"e\\u202ex\" dropped: its name is not a "
	    "tool name as MCP has them (1 to 128 characters of A-Z a-z 0-9 _ "
	    "- .)",
	    "backend \"a\": prompt \"bad\\u202eprompt\" dropped: its name is "
	    "empty, over 128 characters, or has a control or bidirectional "
	    "formatting character",
	    "backend \"a\": prompt \"bell\\x07\" dropped: its name is empty, "
	    "over 128 characters, or has a control or bidirectional "
	    "formatting character",
	    "backend \"a\": prompt \"c1\\u0085\" dropped: its name is empty, "
	    "over 128 characters, or has a control or bidirectional "
	    "formatting character",
	    "backend \"a\": prompt \"ppppppppppppppppppppppppppppppppppppppp"
	    "ppppppppp...(81 more)\" dropped: its name is empty, over 128 "
	    "characters, or has a control or bidirectional formatting "
	    "character",
	    "backend \"a\": resource \"file:///bad\\x0d\\nuri\" dropped: its "
	    "uri is empty, over 4096 characters, or has a control or "
	    "bidirectional formatting character",
	    "backend \"a\": resource \"a:uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu"
	    "uuuuuuuu...(4049 more)\" dropped: its uri is empty, over 4096 "
	    "characters, or has a control or bidirectional formatting "
	    "character",
	    "backend \"a\": resource template \"note://{id}\\u200f\" dropped: "
	    "its uriTemplate is empty, over 4096 characters, or has a control "
	    "or bidirectional formatting character",
	    NULL);
	json_decref(v);

	/* names that break the rule only once prefixed: 2 + 127 > 128 */
	p = policy(VIEW_CONFLICT_PREFIX, VIEW_PREFIX_ALWAYS);
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "b";
	in[0].vi_tools = json_pack("[{s:s},{s:s}]", "name", z127, "name", "t");
	in[0].vi_prompts = json_pack("[{s:s},{s:s}]", "name", z127, "name",
	    "q");
	v = view_build(&p, in, 1);
	inputs_free(in, 1);
	assert_non_null(v);
	expect_names(v, "tools", "[\"b_t\"]");
	expect_names(v, "prompts", "[\"b_q\"]");
	assert_null(json_object_get(route(v, "tools"), "b_zzz"));
	json_decref(v);
	/* or a prefixFormat's character */
	p.vp_prefix_format = "{workload} ";
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "b";
	in[0].vi_tools = json_pack("[{s:s}]", "name", "t");
	in[0].vi_prompts = json_pack("[{s:s}]", "name", "q");
	v = view_build(&p, in, 1);
	inputs_free(in, 1);
	assert_non_null(v);
	expect_names(v, "tools", "[]");
	expect_names(v, "prompts", "[\"b q\"]");	/* a label: fine */
	expect_errors(v,
	    "tool \"t\" of backend \"b\" dropped: its advertised name \"b t\" "
	    "is not a tool name as MCP has them (1 to 128 characters of A-Z "
	    "a-z 0-9 _ - .)",
	    NULL);
	json_decref(v);
	free(x129);
	free(y128);
	free(u4097);
	free(z127);
	free(p129);
}

/*
 * Descriptions and titles (a tool's annotations.title too) past their
 * caps are cut, with a "..." (U+2026), at a character, never inside
 * one; the backend's lists are not changed; said once per entry.
 */
static void
test_text_caps(void **state)
{
	static const struct view_override ov[] = {
		{ "o", NULL, "Configured description", NULL },
	};
	static const struct view_workload wl[] = {
		{ "a", NULL, 0, 0, ov, 1 },
	};
	struct view_policy	 p = policy(VIEW_CONFLICT_PREFIX,
				    VIEW_PREFIX_ON_CONFLICT);
	struct view_input	 in[1];
	struct view_resolved	 vs;
	json_t			*v, *t, *tools;
	char			*d = nchars('d', 10 * 1024 * 1024);
	char			*tt = nchars('t', 17);
	char			 e20[64];

	(void)state;
	/* twenty characters of two bytes: "é" x 20 */
	for (size_t i = 0; i < 20; i++)
		memcpy(e20 + 2 * i, "\xc3\xa9", 2);
	e20[40] = '\0';
	p.vp_max_description = 16;
	p.vp_max_title = 16;
	p.vp_workloads = wl;
	p.vp_nworkloads = 1;
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "a";
	tools = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:{s:s, s:b}},"
	    "{s:s, s:s}, {s:s, s:s}]",
	    "name", "big", "description", d, "title", tt,
	    "name", "ann", "description", e20, "annotations", "title", tt,
	    "readOnlyHint", 1,
	    "name", "fits", "description", "sixteen chars ok",
	    "name", "o", "description", d);
	in[0].vi_tools = tools;
	in[0].vi_prompts = json_pack("[{s:s, s:s}]", "name", "pr",
	    "description", e20);
	in[0].vi_resources = json_pack("[{s:s, s:s, s:s}]", "uri", "file:///r",
	    "name", "r", "title", e20);
	v = view_build(&p, in, 1);
	assert_non_null(v);
	/* the input is as it was */
	assert_int_equal(json_string_length(json_object_get(json_array_get(
	    tools, 0), "description")), 10 * 1024 * 1024);
	inputs_free(in, 1);
	t = json_object_get(v, "tools");
	expect_json(json_array_get(t, 0), "{\"name\":\"ann\",\"description\":"
	    "\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u2026\",\"annotations\":"
	    "{\"title\":\"ttttttttttttttt\\u2026\",\"readOnlyHint\":true}}");
	expect_json(json_array_get(t, 1), "{\"name\":\"big\",\"description\":"
	    "\"ddddddddddddddd\\u2026\",\"title\":\"ttttttttttttttt\\u2026\"}");
	expect_json(json_array_get(t, 2), "{\"name\":\"fits\",\"description\":"
	    "\"sixteen chars ok\"}");
	/* an override's description is the operator's: not cut */
	expect_json(json_array_get(t, 3), "{\"name\":\"o\",\"description\":"
	    "\"Configured description\"}");
	expect_json(json_object_get(json_array_get(json_object_get(v,
	    "prompts"), 0), "description"), "\"\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u2026\"");
	expect_json(json_object_get(json_array_get(json_object_get(v,
	    "resources"), 0), "title"), "\"\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u2026\"");
	expect_errors(v,
	    "backend \"a\": tool \"big\": description cut to 16 characters "
	    "(aggregation.maxDescriptionLength; it has 10485760)",
	    "backend \"a\": tool \"big\": title cut to 16 characters "
	    "(aggregation.maxTitleLength; it has 17)",
	    "backend \"a\": tool \"ann\": description cut to 16 characters "
	    "(aggregation.maxDescriptionLength; it has 20)",
	    "backend \"a\": tool \"ann\": annotations.title cut to 16 "
	    "characters (aggregation.maxTitleLength; it has 17)",
	    "backend \"a\": tool \"o\": description cut to 16 characters "
	    "(aggregation.maxDescriptionLength; it has 10485760)",
	    "backend \"a\": prompt \"pr\": description cut to 16 characters "
	    "(aggregation.maxDescriptionLength; it has 20)",
	    "backend \"a\": resource \"file:///r\": title cut to 16 "
	    "characters (aggregation.maxTitleLength; it has 20)",
	    NULL);
	json_decref(v);

	/* the layout lists the cut copies too (they outlive the inputs) */
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "a";
	in[0].vi_tools = json_pack("[{s:s, s:s}]", "name", "big",
	    "description", d);
	assert_int_equal(view_resolve(&p, in, 1, &vs), 0);
	assert_int_equal(vs.vs_n[VIEW_KIND_TOOLS], 1);
	expect_json(json_object_get(vs.vs_e[VIEW_KIND_TOOLS][0].ve_obj,
	    "description"), "\"ddddddddddddddd\\u2026\"");
	inputs_free(in, 1);
	view_resolved_free(&vs);
	free(d);
	free(tt);
}

/* what a message may quote of a hostile name */
static void
test_quote(void **state)
{
	char	buf[VIEW_QUOTE_LEN], *l = nchars('\x1b', 1000);

	(void)state;
	assert_string_equal(view_quote(buf, sizeof(buf), "a\"b\\c\td\x7f"),
	    "a\\\"b\\\\c\\x09d\\x7f");
	/* not UTF-8: byte by byte */
	assert_string_equal(view_quote(buf, sizeof(buf), "\xff\xc3"),
	    "\\xff\\xc3");
	assert_string_equal(view_quote(buf, sizeof(buf), "\xf4\x8f\xbf\xbf"),
	    "\\u10ffff");
	view_quote(buf, sizeof(buf), l);
	assert_int_equal(strlen(buf), 48 * 4 + strlen("...(952 more)"));
	assert_string_equal(buf + 48 * 4, "...(952 more)");
	assert_string_equal(view_quote(buf, 8, "x"), "");
	free(l);
	assert_true(view_label_ok("caf\xc3\xa9 au lait", 12));
	assert_false(view_label_ok("caf\xc3\xa9 au lait", 11));
	assert_false(view_label_ok("", 12));
	assert_false(view_label_ok("\xc3", 12));
	assert_false(view_label_ok("a\xe2\x80\xa8" "b", 12));	/* U+2028 */
	assert_false(view_label_ok("a\xd8\x9c" "b", 12));	/* U+061C */
	assert_true(view_label_ok("a\xe2\x80\x8d" "b", 12));	/* ZWJ */
}


/* how old lists count: fresh within ttl, stale for a while, then gone */
static void
test_part_age(void **state)
{
	struct view_clock c = { 100000, 5000, 60000, 2000 };

	(void)state;
	assert_int_equal(view_part_age(&c, 100000), VIEW_PART_FRESH);
	assert_int_equal(view_part_age(&c, 95001), VIEW_PART_FRESH);
	assert_int_equal(view_part_age(&c, 95000), VIEW_PART_STALE);
	assert_int_equal(view_part_age(&c, 35001), VIEW_PART_STALE);
	assert_int_equal(view_part_age(&c, 35000), VIEW_PART_MISSING);
	assert_int_equal(view_part_age(&c, 0), VIEW_PART_MISSING);
	/* a clock that stepped back: the lists are fresh, not negative */
	assert_int_equal(view_part_age(&c, 200000), VIEW_PART_FRESH);
}

/* a view's freshness and its stale and missing parts */
static void
test_mark(void **state)
{
	struct view_clock	 c = { 100000, 5000, 60000, 2000 };
	struct view_input	 in[3];
	json_t			*v;

	(void)state;
	memset(in, 0, sizeof(in));
	in[0].vi_backend = "a";
	in[0].vi_listed_ms = 99000;
	in[1].vi_backend = "b";
	in[1].vi_listed_ms = 97000;

	/* all fresh: until the oldest listing's ttl ends */
	v = json_object();
	assert_int_equal(view_mark(v, in, 2, &c), 0);
	expect_json(v, "{\"fresh\": 102000}");
	json_decref(v);

	/* a stale part: revalidated after vl_retry, and named */
	in[1].vi_part = VIEW_PART_STALE;
	in[1].vi_listed_ms = 90000;
	in[1].vi_why = "backend b timed out";
	in[2].vi_backend = "c";
	in[2].vi_part = VIEW_PART_MISSING;
	v = json_object();
	assert_int_equal(view_mark(v, in, 3, &c), 0);
	expect_json(v, "{\"fresh\": 102000, "
	    "\"stale\": {\"b\": \"backend b timed out\"}, "
	    "\"missing\": {\"c\": \"no reason given\"}}");
	json_decref(v);

	/* a fresh part older than the retry: its own end comes first */
	in[0].vi_listed_ms = 96000;
	v = json_object();
	assert_int_equal(view_mark(v, in, 3, &c), 0);
	assert_int_equal(json_integer_value(json_object_get(v, "fresh")),
	    101000);
	json_decref(v);

	/* a message cut inside a UTF-8 sequence still marks the part */
	in[2].vi_why = "cut \xc3";
	v = json_object();
	assert_int_equal(view_mark(v, in, 3, &c), 0);
	expect_json(json_object_get(v, "missing"),
	    "{\"c\": \"(a message that is not UTF-8)\"}");
	json_decref(v);

	/* no backend: a whole ttl */
	v = json_object();
	assert_int_equal(view_mark(v, NULL, 0, &c), 0);
	expect_json(v, "{\"fresh\": 105000}");
	json_decref(v);
}

/*
 * view_layout.c: the layout read in place answers what the JSON view
 * says: each list page is the bytes jsonrpc_dump() made of the page,
 * each route the same backend and own name; a tool whose x-mcp-header
 * breaks the rules is left out of the 2026-07-28 list only.
 */
struct lay {
	char	*l_buf;
	size_t	 l_len;
	json_t	*l_view;
	json_t	*l_digests;
	json_t	*l_errs;
};

static void
lay_make(struct lay *l, const struct view_policy *pol, const struct tb *tb,
    size_t n)
{
	struct view_input	in[16];
	struct view_resolved	vs;

	memset(l, 0, sizeof(*l));
	l->l_view = view_build(pol, inputs_make(in, tb, n), n);
	l->l_digests = json_object();
	l->l_errs = json_array();
	assert_int_equal(view_resolve(pol, in, n, &vs), 0);
	assert_int_equal(view_layout(&vs, 42, l->l_errs, &l->l_buf,
	    &l->l_len, l->l_digests), 0);
	view_resolved_free(&vs);
	inputs_free(in, n);
}

static void
lay_free(struct lay *l)
{
	free(l->l_buf);
	json_decref(l->l_view);
	json_decref(l->l_digests);
	json_decref(l->l_errs);
}

/* every Legacy page of a list is the dump of that slice of the view's */
static void
lay_expect_pages(struct lay *l, enum view_kind k, size_t ps)
{
	struct view_page_req	 q;
	struct view_page	 pg;
	json_t			*all = json_object_get(l->l_view,
				    view_kind_field(k)), *slice;
	char			*want;
	size_t			 off = 0, i;

	memset(&q, 0, sizeof(q));
	q.vq_kind = k;
	q.vq_pagesize = ps;
	do {
		q.vq_offset = off;
		assert_int_equal(view_layout_page(l->l_buf, l->l_len, &q, &pg),
		    0);
		slice = json_array();
		for (i = off; i < off + ps && i < json_array_size(all); i++)
			json_array_append(slice, json_array_get(all, i));
		want = json_dumps(slice, JSON_COMPACT | JSON_PRESERVE_ORDER);
		assert_int_equal(pg.vp_len, strlen(want));
		assert_memory_equal(pg.vp_items, want, pg.vp_len);
		free(want);
		json_decref(slice);
		off = pg.vp_next;
		view_page_clear(&pg);
	} while (off != 0);
}

static void
test_layout_matches_view(void **state)
{
	static const struct view_override ov[] = {
		{ "b1", "renamed", "New \"quoted\"\ttext\001", NULL },
	};
	static const struct view_workload wl[] = {
		{ "alpha", NULL, 0, 0, ov, 1 },
	};
	static const char *const filt[] = { "beta_c1" };
	static const struct view_workload wl2[] = {
		{ "alpha", NULL, 0, 0, ov, 1 },
		{ "beta", filt, 1, 0, NULL, 0 },
	};
	static const struct tb tb[] = {
		{ "alpha", "[" TOOL("b1") "," TOOLA("a2") "," TOOL("z.9")
		    "]", "[" PROMPT("p\u00e9") "]", "[" RES("file:///a") ","
		    RES("file:///b") "]", "[" TMPL("file:///{x}") "]" },
		{ "beta", "[" TOOL("c1") "," TOOL("c2") "," TOOL("c3") "]",
		    "[" PROMPT("p") "]", "[" RES("file:///a") "]",
		    "[" TMPL("note://{id}") "]" },
	};
	struct view_policy	 pol;
	struct view_route	 r;
	struct lay		 l;
	json_t			*routes, *rt;
	const char		*name;
	int			 k;

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.vp_workloads = wl;
	pol.vp_nworkloads = 1;
	lay_make(&l, &pol, tb, 2);
	for (k = 0; k < VIEW_KIND_N; k++) {
		lay_expect_pages(&l, k, 1);
		lay_expect_pages(&l, k, 2);
		lay_expect_pages(&l, k, 100);
	}
	routes = json_object_get(json_object_get(l.l_view, "routes"), "tools");
	assert_true(json_object_size(routes) == 6);
	json_object_foreach(routes, name, rt) {
		assert_int_equal(view_layout_route(l.l_buf, l.l_len,
		    VIEW_ROUTE_TOOL, name, strlen(name), &r), 0);
		assert_string_equal(r.vr_backend, json_string_value(
		    json_object_get(rt, "b")));
		assert_string_equal(r.vr_own, json_string_value(
		    json_object_get(rt, "n")));
		assert_int_equal(r.vr_hidden, 0);
		view_route_clear(&r);
	}
	/* a name asked with its length: a longer or shorter one is not it */
	assert_int_equal(view_layout_route(l.l_buf, l.l_len, VIEW_ROUTE_TOOL,
	    "alpha_renamedX", 13, &r), 0);
	assert_string_equal(r.vr_own, "b1");
	view_route_clear(&r);
	assert_int_equal(view_layout_route(l.l_buf, l.l_len, VIEW_ROUTE_TOOL,
	    "alpha_renamed", 12, &r), VIEW_NO_ROUTE);
	assert_int_equal(view_layout_route(l.l_buf, l.l_len, VIEW_ROUTE_TOOL,
	    "zzz", 3, &r), VIEW_NO_ROUTE);
	assert_int_equal(view_layout_route(l.l_buf, l.l_len,
	    VIEW_ROUTE_PROMPT, "beta_p", 6, &r), 0);
	assert_string_equal(r.vr_backend, "beta");
	assert_string_equal(r.vr_own, "p");
	view_route_clear(&r);
	assert_int_equal(view_layout_route(l.l_buf, l.l_len,
	    VIEW_ROUTE_RESOURCE, "file:///a", 9, &r), 0);
	assert_string_equal(r.vr_backend, "alpha");	/* the first wins */
	view_route_clear(&r);
	assert_int_equal(view_layout_template(l.l_buf, l.l_len,
	    "note://7", 0, &r), 0);
	assert_string_equal(r.vr_backend, "beta");
	view_route_clear(&r);
	assert_int_equal(view_layout_template(l.l_buf, l.l_len,
	    "file:///{x}", 1, &r), 0);
	assert_string_equal(r.vr_backend, "alpha");
	view_route_clear(&r);
	assert_int_equal(view_layout_template(l.l_buf, l.l_len,
	    "other://x", 0, &r), VIEW_NO_ROUTE);
	lay_free(&l);

	/* hidden tools: routed, marked, not listed */
	pol.vp_workloads = wl2;
	pol.vp_nworkloads = 2;
	lay_make(&l, &pol, tb, 2);
	lay_expect_pages(&l, VIEW_KIND_TOOLS, 2);
	assert_int_equal(view_layout_route(l.l_buf, l.l_len, VIEW_ROUTE_TOOL,
	    "beta_c2", 7, &r), 0);
	assert_int_equal(r.vr_hidden, 1);
	view_route_clear(&r);
	lay_free(&l);
}

static void
test_layout_modern(void **state)
{
	static const struct tb tb[] = {
		{ "a", "[" TOOL("t1") ",{\"name\":\"t2\",\"inputSchema\":"
		    "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":"
		    "\"string\",\"x-mcp-header\":\"Region\"}}}},"
		    "{\"name\":\"t3\",\"inputSchema\":{\"type\":\"object\","
		    "\"properties\":{\"r\":{\"type\":\"object\","
		    "\"x-mcp-header\":\"Bad\"}}}}," TOOL("t4") "]",
		    NULL, NULL, NULL },
	};
	struct view_page_req	 q;
	struct view_page	 pg;
	struct view_route	 r;
	struct lay		 l;
	json_t			*items;

	(void)state;
	lay_make(&l, NULL, tb, 1);
	/* t3's annotation is on an object: left out, and said why */
	assert_int_equal(json_array_size(l.l_errs), 1);
	memset(&q, 0, sizeof(q));
	q.vq_kind = VIEW_KIND_TOOLS;
	q.vq_modern = 1;
	q.vq_pagesize = 2;
	assert_int_equal(view_layout_page(l.l_buf, l.l_len, &q, &pg), 0);
	items = jparse(pg.vp_items);
	assert_int_equal(json_array_size(items), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    items, 1), "name")), "a_t2");
	assert_string_equal(pg.vp_next_key, "a_t2");
	assert_int_equal(pg.vp_next_dup, 1);
	json_decref(items);
	/* resumed after a_t2: a_t3 is not in this list */
	q.vq_last = "a_t2";
	q.vq_dup = 1;
	view_page_clear(&pg);
	assert_int_equal(view_layout_page(l.l_buf, l.l_len, &q, &pg), 0);
	items = jparse(pg.vp_items);
	assert_int_equal(json_array_size(items), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    items, 0), "name")), "a_t4");
	assert_null(pg.vp_next_key);
	json_decref(items);
	view_page_clear(&pg);
	/* the Legacy list keeps it */
	q.vq_modern = 0;
	q.vq_last = NULL;
	q.vq_pagesize = 10;
	assert_int_equal(view_layout_page(l.l_buf, l.l_len, &q, &pg), 0);
	assert_int_equal(pg.vp_count, 4);
	view_page_clear(&pg);
	/* the map goes with the route */
	assert_int_equal(view_layout_route(l.l_buf, l.l_len, VIEW_ROUTE_TOOL,
	    "a_t2", 4, &r), 0);
	assert_non_null(r.vr_map);
	assert_non_null(strstr(r.vr_map, "Region"));
	view_route_clear(&r);
	assert_int_equal(view_layout_route(l.l_buf, l.l_len, VIEW_ROUTE_TOOL,
	    "a_t1", 4, &r), 0);
	assert_null(r.vr_map);
	view_route_clear(&r);
	/* past the end */
	q.vq_offset = 5;
	assert_int_equal(view_layout_page(l.l_buf, l.l_len, &q, &pg), 0);
	assert_true(pg.vp_past_end);
	lay_free(&l);
}

/* a layout cut short or scribbled on reads as bad, never out of bounds */
static void
test_layout_damaged(void **state)
{
	static const struct tb tb[] = {
		{ "a", "[" TOOL("t1") "," TOOL("t2") "]", "[" PROMPT("p") "]",
		    "[" RES("file:///a") "]", "[" TMPL("x://{y}") "]" },
	};
	struct view_page_req	 q;
	struct view_page	 pg;
	struct view_route	 r;
	struct lay		 l;
	uint64_t		 id;
	size_t			 cut, i;
	char			*copy;

	(void)state;
	lay_make(&l, NULL, tb, 1);
	assert_int_equal(view_layout_id(l.l_buf, l.l_len, &id), 0);
	assert_true(id == 42);
	memset(&q, 0, sizeof(q));
	q.vq_pagesize = 10;
	for (cut = 0; cut < l.l_len; cut++) {
		/* a copy of exactly cut bytes: ASan sees any overread */
		copy = malloc(cut + 1);
		memcpy(copy, l.l_buf, cut);
		for (i = 0; i < VIEW_KIND_N; i++) {
			q.vq_kind = i;
			if (view_layout_page(copy, cut, &q, &pg) == 0)
				view_page_clear(&pg);
		}
		if (view_layout_route(copy, cut, VIEW_ROUTE_TOOL, "a_t2", 4,
		    &r) == 0)
			view_route_clear(&r);
		if (view_layout_template(copy, cut, "x://1", 0, &r) == 0)
			view_route_clear(&r);
		free(copy);
	}
	/* offsets scribbled on */
	for (i = 16; i + 4 <= l.l_len && i < 400; i += 4) {
		copy = malloc(l.l_len);
		memcpy(copy, l.l_buf, l.l_len);
		memset(copy + i, 0xff, 4);
		if (view_layout_page(copy, l.l_len, &q, &pg) == 0)
			view_page_clear(&pg);
		if (view_layout_route(copy, l.l_len, VIEW_ROUTE_TOOL, "a_t1", 4,
		    &r) == 0)
			view_route_clear(&r);
		free(copy);
	}
	lay_free(&l);
}

/* view_json_dump() makes jsonrpc_dump()'s bytes */
static void
test_json_dump(void **state)
{
	static const char *const docs[] = {
		"{\"a\":[1,-2,3.5,1e300,true,false,null,\"\"],\"b\":{}}",
		"[\"\\\"q\\\\ \\/ \\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"]",
		"{\"\\u00e9t\\u00e9\":\"\\ud83d\\ude00\",\"k\":[[],{}]}",
		"\"x\\u0000y\"",
		"-9223372036854775808",
	};
	json_t	*v;
	char	*want, *got;
	size_t	 i, len;

	(void)state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		v = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL,
		    NULL);
		assert_non_null(v);
		want = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
		    JSON_ENCODE_ANY);
		got = view_json_dump(v, &len);
		assert_non_null(got);
		assert_int_equal(len, strlen(want));
		assert_string_equal(got, want);
		free(want);
		free(got);
		json_decref(v);
	}
}

/* a list that changes changes its digest; the others keep theirs */
static void
test_layout_digests(void **state)
{
	static const struct tb one[] = {
		{ "a", "[" TOOL("t1") "]", "[" PROMPT("p") "]", NULL, NULL },
	};
	static const struct tb two[] = {
		{ "a", "[" TOOL("t1") "," TOOL("t2") "]", "[" PROMPT("p") "]",
		    NULL, NULL },
	};
	struct lay	x, y;

	(void)state;
	lay_make(&x, NULL, one, 1);
	lay_make(&y, NULL, two, 1);
	assert_false(json_equal(json_object_get(x.l_digests, "tools"),
	    json_object_get(y.l_digests, "tools")));
	assert_true(json_equal(json_object_get(x.l_digests, "prompts"),
	    json_object_get(y.l_digests, "prompts")));
	lay_free(&x);
	lay_free(&y);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_always),
		cmocka_unit_test(test_prefix_on_conflict),
		cmocka_unit_test(test_prefix_format),
		cmocka_unit_test(test_priority_listed),
		cmocka_unit_test(test_priority_unlisted_kept),
		cmocka_unit_test(test_priority_none_listed),
		cmocka_unit_test(test_manual_unresolved),
		cmocka_unit_test(test_manual_resolved),
		cmocka_unit_test(test_collision_prefix),
		cmocka_unit_test(test_collision_bare),
		cmocka_unit_test(test_collision_same_backend),
		cmocka_unit_test(test_collision_many),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_override_conflicts),
		cmocka_unit_test(test_override_invalid),
		cmocka_unit_test(test_filter_post_override),
		cmocka_unit_test(test_exclude_all),
		cmocka_unit_test(test_exclude_all_tools),
		cmocka_unit_test(test_default_deny),
		cmocka_unit_test(test_hidden_tools_claim_names),
		cmocka_unit_test(test_prompts_prefix),
		cmocka_unit_test(test_prompts_priority),
		cmocka_unit_test(test_prompts_ambiguous),
		cmocka_unit_test(test_resources_duplicates),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_policy_edges),
		cmocka_unit_test(test_name_rules),
		cmocka_unit_test(test_text_caps),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_part_age),
		cmocka_unit_test(test_mark),
		cmocka_unit_test(test_layout_matches_view),
		cmocka_unit_test(test_layout_modern),
		cmocka_unit_test(test_layout_damaged),
		cmocka_unit_test(test_layout_digests),
		cmocka_unit_test(test_json_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
