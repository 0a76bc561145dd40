/*
 * Authorization decisions, their cache and the list filter
 * (worker/auth/authz_rule.c, worker/auth/authz.h), and the filtered pages of a
 * view's layout (view_layout_page() with vq_filter, view_layout_item()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/method.h"
#include "shared/cedar.h"
#include "shared/cedar_request.h"
#include "shared/config.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"
#include "unit.h"

/* the policies of etc/examples/authz.yaml, in short */
static const char POLICIES[] =
	"permit(principal, action == Action::\"get_prompt\", resource);\n"
	"forbid(principal, action == Action::\"get_prompt\",\n"
	"    resource == Prompt::\"ops\")\n"
	"    unless { principal in THVGroup::\"eng\" };\n"
	"permit(principal, action == Action::\"read_resource\", resource)\n"
	"    when { resource.uri like \"docs://*\" };\n"
	"permit(principal, action == Action::\"call_tool\", resource)\n"
	"    when { resource has readOnlyHint && resource.readOnlyHint };\n"
	"permit(principal, action == Action::\"call_tool\",\n"
	"    resource == Tool::\"named\");\n"
	"permit(principal, action == Action::\"call_tool\",\n"
	"    resource == Tool::\"deploy\")\n"
	"    when { context has arg_env && context.arg_env == \"staging\" };\n"
	"permit(principal in THVGroup::\"eng\", action, resource);\n"
	"forbid(principal, action == Action::\"call_tool\", resource)\n"
	"    when { resource has destructiveHint && resource.destructiveHint }\n"
	"    unless { principal has claim_roles && "
	"principal.claim_roles.contains(\"admin\") };\n";

/* tools in list order: a hint, none, a destructive one, a named one */
static const char VIEW[] =
	"{\"tools\":["
	"{\"name\":\"deploy\"},"
	"{\"name\":\"drop\",\"annotations\":{\"destructiveHint\":true}},"
	"{\"name\":\"named\"},"
	"{\"name\":\"read\",\"annotations\":{\"readOnlyHint\":true}},"
	"{\"name\":\"wipe\",\"annotations\":{\"destructiveHint\":true,"
	"\"readOnlyHint\":true}}],"
	"\"resources\":[{\"uri\":\"docs://a\"},{\"uri\":\"vault://b\"}],"
	"\"resourceTemplates\":[{\"uriTemplate\":\"docs://{id}\"},"
	"{\"uriTemplate\":\"vault://{k}\"}],"
	"\"prompts\":[{\"name\":\"greet\"},{\"name\":\"ops\"}],"
	"\"routes\":{\"tools\":{"
	"\"deploy\":{\"b\":\"x\",\"n\":\"deploy\",\"hidden\":false},"
	"\"drop\":{\"b\":\"x\",\"n\":\"drop\",\"hidden\":false},"
	"\"named\":{\"b\":\"x\",\"n\":\"raw\",\"hidden\":false},"
	"\"read\":{\"b\":\"x\",\"n\":\"read\",\"hidden\":false},"
	"\"wipe\":{\"b\":\"x\",\"n\":\"wipe\",\"hidden\":false}},"
	"\"prompts\":{\"greet\":{\"b\":\"x\",\"n\":\"greet\"},"
	"\"ops\":{\"b\":\"x\",\"n\":\"ops\"}},"
	"\"resources\":{\"docs://a\":\"x\",\"vault://b\":\"x\"},"
	"\"templates\":[{\"t\":\"docs://{id}\",\"b\":\"x\"},"
	"{\"t\":\"vault://{k}\",\"b\":\"x\"}]}}";

struct fx {
	struct config		 cf;
	struct authz_conf	 ac;
	struct authz_cache	*cache;
	char			*lay;
	size_t			 len;
};

static struct cedar_policyset *
policies(const char *text)
{
	struct cedar_policyset	*ps;
	char			 err[CEDAR_ERRLEN];

	if ((ps = cedar_parse("t", text, strlen(text), err, sizeof(err))) ==
	    NULL)
		fail_msg("%s", err);
	return ps;
}

static int
setup(void **state)
{
	struct fx	*f;
	json_t		*view;

	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->cf.cf_name = "gw";
	f->cf.cf_inauth.ci_authz.az_cedar = 1;
	f->cf.cf_inauth.ci_authz.az_policies = policies(POLICIES);
	assert_int_equal(authz_conf_init(&f->ac, &f->cf), 0);
	assert_non_null(f->cache = authz_cache_new(2, 64));
	view = jparse(VIEW);
	assert_int_equal(view_layout_json(view, 1, &f->lay, &f->len, NULL), 0);
	json_decref(view);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	authz_cache_free(f->cache);
	cedar_policyset_free(f->cf.cf_inauth.ci_authz.az_policies);
	free(f->lay);
	free(f);
	return 0;
}

static struct authz_who *
who(struct fx *f, const char *scope, const char *claims)
{
	json_t			*c = jparse(claims);
	struct authz_who	*w;

	w = authz_cache_who(f->cache, &f->ac, 1, scope, c);
	json_decref(c);
	return w;
}

#define BOB	"{\"sub\":\"bob\",\"groups\":[\"ext\"]}"
#define ALICE	"{\"sub\":\"alice\",\"groups\":[\"eng\"]}"
#define CAROL	"{\"sub\":\"carol\",\"groups\":[\"eng\"],\"roles\":[\"admin\"]}"

/* the keys of every filtered page of kind, "|"-joined; pages counted */
static char *
pages(struct fx *f, struct authz_who *w, enum view_kind k, int modern,
    size_t ps, size_t *npages)
{
	struct authz_filter	 af = { w };
	struct view_page_req	 q;
	struct view_page	 pg;
	static const char *const key[] = { "name", "uri", "uriTemplate",
	    "name" };
	char			 out[1024] = "", *last = NULL;
	json_t			*items, *it;
	size_t			 i, olen = 0;

	memset(&q, 0, sizeof(q));
	q.vq_kind = k;
	q.vq_modern = modern;
	q.vq_pagesize = ps;
	q.vq_filter = authz_filter_item;
	q.vq_farg = &af;
	*npages = 0;
	for (;;) {
		assert_int_equal(view_layout_page(f->lay, f->len, &q, &pg), 0);
		assert_true(pg.vp_count <= ps);
		items = jparse(pg.vp_items);
		assert_int_equal(json_array_size(items), pg.vp_count);
		json_array_foreach(items, i, it)
			olen += (size_t)snprintf(out + olen, sizeof(out) - olen,
			    "%s%s", olen > 0 ? "|" : "", json_string_value(
			    json_object_get(it, key[k])));
		json_decref(items);
		(*npages)++;
		assert_true(*npages < 20);
		if (modern ? pg.vp_next_key == NULL || pg.vp_next == 0 :
		    pg.vp_next == 0) {
			view_page_clear(&pg);
			break;
		}
		if (modern) {
			free(last);
			last = strdup(pg.vp_next_key);
			q.vq_last = last;
			q.vq_dup = pg.vp_next_dup;
		} else
			q.vq_offset = pg.vp_next;
		view_page_clear(&pg);
	}
	free(last);
	return strdup(out);
}

static void
expect_pages(struct fx *f, struct authz_who *w, enum view_kind k,
    const char *want)
{
	char	*got;
	size_t	 ps, n;
	int	 modern;

	for (modern = 0; modern < 2; modern++)
		for (ps = 1; ps <= 6; ps++) {
			got = pages(f, w, k, modern, ps, &n);
			if (strcmp(got, want) != 0)
				fail_msg("kind %d modern %d page size %zu: "
				    "\"%s\", want \"%s\"", (int)k, modern, ps,
				    got, want);
			free(got);
		}
}

/* each principal's lists, every page size, both revisions */
static void
test_filtered_pages(void **state)
{
	struct fx		*f = *state;
	struct authz_who	*w;

	w = who(f, "s-bob", BOB);
	assert_non_null(w);
	/* read (readOnly) and named (by name); not wipe: forbid beats permit */
	expect_pages(f, w, VIEW_KIND_TOOLS, "named|read");
	expect_pages(f, w, VIEW_KIND_PROMPTS, "greet");
	expect_pages(f, w, VIEW_KIND_RESOURCES, "docs://a");
	expect_pages(f, w, VIEW_KIND_TEMPLATES, "docs://{id}");
	w = who(f, "s-alice", ALICE);
	expect_pages(f, w, VIEW_KIND_TOOLS, "deploy|named|read");
	expect_pages(f, w, VIEW_KIND_PROMPTS, "greet|ops");
	expect_pages(f, w, VIEW_KIND_TEMPLATES, "docs://{id}|vault://{k}");
	w = who(f, "s-carol", CAROL);
	expect_pages(f, w, VIEW_KIND_TOOLS, "deploy|drop|named|read|wipe");
	/* no principal: nothing */
	expect_pages(f, NULL, VIEW_KIND_TOOLS, "");
}

/* a cursor points past the last item examined, not the last shown */
static void
test_filtered_cursor(void **state)
{
	struct fx		*f = *state;
	struct authz_filter	 af;
	struct view_page_req	 q;
	struct view_page	 pg;

	af.af_who = who(f, "s-bob", BOB);
	memset(&q, 0, sizeof(q));
	q.vq_kind = VIEW_KIND_TOOLS;
	q.vq_pagesize = 1;
	q.vq_filter = authz_filter_item;
	q.vq_farg = &af;
	/* deploy and drop examined and left out, named shown */
	assert_int_equal(view_layout_page(f->lay, f->len, &q, &pg), 0);
	assert_string_equal(pg.vp_items, "[{\"name\":\"named\"}]");
	assert_int_equal(pg.vp_next, 3);
	view_page_clear(&pg);
	q.vq_offset = 3;
	assert_int_equal(view_layout_page(f->lay, f->len, &q, &pg), 0);
	assert_int_equal(pg.vp_count, 1);
	assert_int_equal(pg.vp_next, 4);
	view_page_clear(&pg);
	/* wipe, the last, examined and left out: the list ends */
	q.vq_offset = 4;
	assert_int_equal(view_layout_page(f->lay, f->len, &q, &pg), 0);
	assert_string_equal(pg.vp_items, "[]");
	assert_int_equal(pg.vp_next, 0);
	view_page_clear(&pg);
	/* 2026-07-28: the key of the last item examined */
	memset(&q, 0, sizeof(q));
	q.vq_kind = VIEW_KIND_TOOLS;
	q.vq_modern = 1;
	q.vq_pagesize = 1;
	q.vq_filter = authz_filter_item;
	q.vq_farg = &af;
	assert_int_equal(view_layout_page(f->lay, f->len, &q, &pg), 0);
	assert_string_equal(pg.vp_next_key, "named");
	view_page_clear(&pg);
}

/* a tool's decision from its key and item text */
static int
tool_item(struct authz_who *w, const char *key, const char *text)
{
	return authz_who_item(w, VIEW_KIND_TOOLS, key, strlen(key), text,
	    strlen(text));
}

/* a repeated list evaluates nothing; other claims or a generation do */
static void
test_cache(void **state)
{
	struct fx		*f = *state;
	struct authz_who	*a, *b;
	uint64_t		 n0, n1;
	char			*s;
	size_t			 np;
	json_t			*c;

	a = who(f, "s-bob", BOB);
	n0 = authz_cache_evals(f->cache);
	s = pages(f, a, VIEW_KIND_TOOLS, 0, 2, &np);
	free(s);
	n1 = authz_cache_evals(f->cache);
	assert_int_equal(n1 - n0, 5);
	s = pages(f, a, VIEW_KIND_TOOLS, 1, 1, &np);
	free(s);
	assert_int_equal(authz_cache_evals(f->cache), n1);
	/* the same principal: its entry; keys in another order: the same */
	assert_ptr_equal(who(f, "s-bob",
	    "{\"groups\":[\"ext\"],\"sub\":\"bob\"}"), a);
	/* the same claims object (a remembered token): found as it is */
	c = jparse(BOB);
	assert_ptr_equal(authz_cache_who(f->cache, &f->ac, 1, "s-bob", c), a);
	assert_ptr_equal(authz_cache_who(f->cache, &f->ac, 1, "s-bob", c), a);
	json_decref(c);
	/* new claims (another group): another entry, decided again */
	b = who(f, "s-bob", "{\"sub\":\"bob\",\"groups\":[\"eng\"]}");
	assert_non_null(b);
	assert_ptr_not_equal(b, a);
	assert_int_equal(tool_item(b, "deploy",
	    "{\"name\":\"deploy\"}"), 1);
	assert_int_equal(authz_cache_evals(f->cache), n1 + 1);
	/* an item whose text changed (new annotations) is decided again */
	assert_int_equal(tool_item(b, "deploy",
	    "{\"name\":\"deploy\",\"annotations\":{\"destructiveHint\":"
	    "true}}"), 0);
	assert_int_equal(authz_cache_evals(f->cache), n1 + 2);
	/* two principals at most here: the least recent goes */
	assert_non_null(who(f, "s-carol", CAROL));
	assert_non_null(a = who(f, "s-bob", BOB));
	n1 = authz_cache_evals(f->cache);
	assert_int_equal(tool_item(a, "read",
	    "{\"name\":\"read\",\"annotations\":{\"readOnlyHint\":true}}"), 1);
	assert_int_equal(authz_cache_evals(f->cache), n1 + 1);
	/* another generation (a reload): everything decided again */
	c = jparse(BOB);
	a = authz_cache_who(f->cache, &f->ac, 2, "s-bob", c);
	json_decref(c);
	n1 = authz_cache_evals(f->cache);
	assert_int_equal(tool_item(a, "read",
	    "{\"name\":\"read\",\"annotations\":{\"readOnlyHint\":true}}"), 1);
	assert_int_equal(authz_cache_evals(f->cache), n1 + 1);
	/* no sub: no principal, every item and call denied */
	assert_null(who(f, "s-x", "{\"groups\":[\"eng\"]}"));
	assert_int_equal(tool_item(NULL, "read", "{}"), 0);
}

/* the decisions of all principals are bounded: past the cap, made anew */
static void
test_cache_bounded(void **state)
{
	struct fx		*f = *state;
	struct authz_cache	*c;
	struct authz_who	*w;
	json_t			*claims = jparse(BOB);
	char			 key[16];
	uint64_t		 n;
	int			 i;

	assert_non_null(c = authz_cache_new(1, 16));
	assert_non_null(w = authz_cache_who(c, &f->ac, 1, "s", claims));
	for (i = 0; i < 16; i++) {
		(void)snprintf(key, sizeof(key), "t%d", i);
		assert_int_equal(tool_item(w, key, "{}"), 0);
	}
	n = authz_cache_evals(c);
	assert_int_equal(n, 16);
	assert_int_equal(tool_item(w, "t0", "{}"), 0);
	assert_int_equal(authz_cache_evals(c), n);
	/* one more: all dropped, t0 decided again */
	assert_int_equal(tool_item(w, "t16", "{}"), 0);
	assert_int_equal(tool_item(w, "t0", "{}"), 0);
	assert_int_equal(authz_cache_evals(c), n + 2);
	authz_cache_free(c);
	json_decref(claims);
}

/* a call: forbid over permit, arguments, and no hints from anywhere else */
static void
test_calls(void **state)
{
	struct fx		*f = *state;
	struct authz_who	*bob, *alice;
	struct cedar_call	 c;
	json_t			*args, *ann;
	char			 why[CEDAR_ERRLEN + 32];

	bob = who(f, "s-bob", BOB);
	alice = who(f, "s-alice", ALICE);
	memset(&c, 0, sizeof(c));
	c.cc_kind = CEDAR_TOOL;
	c.cc_name = "deploy";
	assert_int_equal(authz_who_call(bob, &c, why, sizeof(why)), 0);
	args = jparse("{\"env\":\"staging\"}");
	c.cc_arguments = args;
	assert_int_equal(authz_who_call(bob, &c, why, sizeof(why)), 1);
	json_decref(args);
	/* an argument named like a hint is arg_readOnlyHint, not the hint */
	args = jparse("{\"readOnlyHint\":true,\"annotations\":"
	    "{\"readOnlyHint\":true}}");
	c.cc_arguments = args;
	assert_int_equal(authz_who_call(bob, &c, why, sizeof(why)), 0);
	json_decref(args);
	c.cc_arguments = NULL;
	/* forbid beats permit: alice's group permits everything */
	ann = jparse("{\"destructiveHint\":true}");
	c.cc_name = "drop";
	c.cc_annotations = ann;
	assert_int_equal(authz_who_call(alice, &c, why, sizeof(why)), 0);
	json_decref(ann);
	c.cc_annotations = NULL;
	assert_int_equal(authz_who_call(alice, &c, why, sizeof(why)), 1);
	/* a resource by its exact URI */
	c.cc_kind = CEDAR_RESOURCE;
	c.cc_name = "docs://x/y";
	assert_int_equal(authz_who_call(bob, &c, why, sizeof(why)), 1);
	c.cc_name = "vault://docs://x";
	assert_int_equal(authz_who_call(bob, &c, why, sizeof(why)), 0);
	assert_int_equal(authz_who_call(NULL, &c, why, sizeof(why)), 0);
	assert_string_equal(why, "no principal");
}

/* a policy that errors denies, and its text stays in why */
static void
test_error_denies(void **state)
{
	struct fx		*f = *state;
	struct authz_conf	 ac = f->ac;
	struct cedar_principal	*p;
	struct cedar_call	 c;
	json_t			*claims;
	char			 why[CEDAR_ERRLEN + 32], err[CEDAR_ERRLEN];

	ac.ac_policies = policies(
	    "permit(principal, action, resource);\n"
	    "forbid(principal, action, resource) when "
	    "{ principal.claim_dept == \"x\" };\n");
	claims = jparse("{\"sub\":\"u\"}");
	assert_non_null(p = cedar_principal_new(&ac.ac_cedar, NULL, claims,
	    err, sizeof(err)));
	memset(&c, 0, sizeof(c));
	c.cc_kind = CEDAR_TOOL;
	c.cc_name = "t";
	assert_int_equal(authz_decide(&ac, p, &c, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "policy error"));
	cedar_principal_free(p);
	json_decref(claims);
	/* with the claim, nothing errors: the permit stands */
	claims = jparse("{\"sub\":\"u\",\"dept\":\"y\"}");
	assert_non_null(p = cedar_principal_new(&ac.ac_cedar, NULL, claims,
	    err, sizeof(err)));
	assert_int_equal(authz_decide(&ac, p, &c, why, sizeof(why)), 1);
	cedar_principal_free(p);
	json_decref(claims);
	cedar_policyset_free((struct cedar_policyset *)ac.ac_policies);
}

/* JSON integers are Longs: comparable; a fraction is no Long (denied) */
static void
test_long_args(void **state)
{
	struct fx		*f = *state;
	struct authz_conf	 ac = f->ac;
	struct cedar_principal	*p;
	struct cedar_call	 c;
	json_t			*claims, *args;
	char			 err[CEDAR_ERRLEN];
	static const struct {
		const char	*args;
		int		 allow;
	} t[] = {
		{ "{\"n\":3}", 1 },
		{ "{\"n\":5}", 1 },
		{ "{\"n\":6}", 0 },
		{ "{\"n\":-9223372036854775808}", 1 },
		{ "{\"n\":2.5}", 0 },		/* < on a decimal: an error */
		{ "{\"n\":\"3\"}", 0 },	/* a string: an error */
		{ "{}", 0 },
	};
	size_t			 i;

	ac.ac_policies = policies("permit(principal, action, resource) when "
	    "{ context has arg_n && context.arg_n <= 5 && resource.arg_n <= 5 "
	    "};\n");
	claims = jparse("{\"sub\":\"u\"}");
	assert_non_null(p = cedar_principal_new(&ac.ac_cedar, NULL, claims,
	    err, sizeof(err)));
	memset(&c, 0, sizeof(c));
	c.cc_kind = CEDAR_TOOL;
	c.cc_name = "t";
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		args = jparse(t[i].args);
		c.cc_arguments = args;
		if (authz_decide(&ac, p, &c, NULL, 0) != t[i].allow)
			fail_msg("%s: want %d", t[i].args, t[i].allow);
		json_decref(args);
	}
	cedar_principal_free(p);
	json_decref(claims);
	cedar_policyset_free((struct cedar_policyset *)ac.ac_policies);
}

/*
 * The hot path's gate against the parsed call's: the same decision for
 * every policy set, principal and call, the arguments read off the
 * params' text (only those the policies read) or not at all.
 */
static const char *const DIFF_POLICIES[] = {
	POLICIES,		/* reads arg_env */
	/* reads no argument: hints, names, groups, claims */
	"permit(principal, action == Action::\"call_tool\", resource)\n"
	"    when { resource has readOnlyHint && resource.readOnlyHint };\n"
	"permit(principal in THVGroup::\"eng\", action, resource);\n"
	"forbid(principal, action, resource == Tool::\"drop\")\n"
	"    unless { context has claim_roles &&\n"
	"    context.claim_roles.contains(\"admin\") };\n",
	/* an object or array argument, and its scalar namesake */
	"permit(principal, action, resource)\n"
	"    when { context has arg_cfg_present && context.arg_cfg_present };\n",
	/* the resource's arg_*, Longs and errors */
	"permit(principal, action, resource) when { resource.arg_n <= 5 };\n"
	"forbid(principal, action, resource)\n"
	"    when { resource has arg_b && resource.arg_b > 3 };\n"
	"forbid(principal, action, resource)\n"
	"    when { principal.claim_sub == \"carol\" && context.arg_a == 1 };\n",
	/* context whole: every argument */
	"permit(principal, action, resource) when { resource.arg_x == 1 };\n"
	"forbid(principal, action, resource)\n"
	"    when { [context].contains(context) && context.arg_y == 2 };\n",
	/*
	 * context whole, against a record of the store: it equals bob's
	 * context only with arguments exactly {"a": 1}, so no argument may
	 * be left out of it
	 */
	"permit(principal, action, resource);\n"
	"forbid(principal, action, resource)\n"
	"    when { principal has ctx && context == principal.ctx };\n",
	/* none at all */
	"",
};

/* bob's record that only a whole context can equal */
static const char DIFF_STORE[] =
	"[{\"uid\":{\"type\":\"Client\",\"id\":\"bob\"},\"attrs\":"
	"{\"ctx\":{\"claim_sub\":\"bob\",\"claim_groups\":[\"ext\"],"
	"\"arg_a\":1}},\"parents\":[]}]";

static const char *const DIFF_CALLS[] = {
	"{\"name\":\"deploy\",\"arguments\":{\"env\":\"staging\"}}",
	"{\"name\":\"deploy\",\"arguments\":{\"env\":\"prod\"}}",
	"{\"name\":\"deploy\"}",
	"{\"arguments\":[{\"env\":\"staging\"}],\"name\":\"deploy\"}",
	"{\"name\":\"deploy\",\"arguments\":\"env\"}",
	"{\"name\":\"deploy\",\"arguments\":null}",
	" { \"name\" : \"deploy\" , \"arguments\" : { \"env\" : \"staging\" "
	"} } ",
	"{\"name\":\"deploy\",\"arguments\":{\"\\u0065nv\":\"staging\"}}",
	"{\"name\":\"deploy\",\"arguments\":{\"env\":\"stag\\u0000ing\"}}",
	"{\"name\":\"deploy\",\"arguments\":{\"env\":\"staging\",\"o\":"
	"{\"a\":[1,{\"b\":2}]},\"cfg\":{}}}",
	"{\"name\":\"read\",\"arguments\":{\"n\":3,\"x\":1,\"y\":2}}",
	"{\"name\":\"read\",\"arguments\":{\"n\":3,\"x\":1,\"y\":3}}",
	"{\"name\":\"drop\",\"arguments\":{\"n\":2.5}}",
	"{\"name\":\"drop\",\"arguments\":{\"n\":\"3\",\"x\":1}}",
	"{\"name\":\"wipe\",\"arguments\":{\"n\":1e300,\"a\":1}}",
	"{\"name\":\"t\",\"arguments\":{\"cfg\":{},\"cfg_present\":false}}",
	"{\"name\":\"t\",\"arguments\":{\"cfg\":[1,2]}}",
	"{\"name\":\"t\",\"arguments\":{\"cfg_present\":true}}",
	"{\"name\":\"t\",\"arguments\":{\"cfg_present\":false}}",
	"{\"name\":\"t\",\"arguments\":{\"n\":null,\"a\":2,\"b\":9}}",
	"{\"name\":\"t\",\"arguments\":{\"n\":4,\"b\":1}}",
	"{\"name\":\"t\",\"arguments\":{\"n\":4,\"b\":7,\"x\":1}}",
	"{\"name\":\"named\",\"arguments\":{}}",
	"{\"name\":\"t\",\"arguments\":{\"a\":1}}",
	"{\"name\":\"read\",\"arguments\":{\"a\":1,\"b\":2}}",
	"{\"name\":\"named\",\"_meta\":{\"k\":1},\"arguments\":{\"env\":1}}",
	NULL,	/* 70 arguments: past CEDAR_ARGS_SCAN */
};

/* a body's JSON as jsonrpc_parse() loads it ("\u0000" and all) */
static json_t *
jbody(const char *text)
{
	json_t *j;

	if ((j = json_loads(text, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, NULL)) == NULL)
		fail_msg("bad test JSON: %s", text);
	return j;
}

/* the tool the view lists under the name, as the gate reads it */
static char *
diff_item(struct fx *f, const char *name, size_t *len)
{
	char	*t;

	if (view_layout_item(f->lay, f->len, VIEW_KIND_TOOLS, name,
	    strlen(name), &t, len) != 0)
		return NULL;
	return t;
}

static void
test_fast_gate(void **state)
{
	static const char *const claims[] = { BOB, ALICE, CAROL };
	struct fx		*f = *state;
	struct authz_conf	 ac;
	struct authz_who	*w;
	struct cedar_entities	*store;
	struct cedar_call	 c;
	json_t			*params, *item, *cl, *big;
	const char		*ptext;
	char			*itext, *bigtext, why[CEDAR_ERRLEN + 32], key[8];
	size_t			 i, k, p, ilen, n, allowed = 0, denied = 0;
	int			 slow, fast, again;

	big = jparse("{\"name\":\"deploy\",\"arguments\":{}}");
	for (i = 0; i < 69; i++) {
		(void)snprintf(key, sizeof(key), "k%zu", i);
		json_object_set_new(json_object_get(big, "arguments"), key,
		    json_integer((json_int_t)i));
	}
	json_object_set_new(json_object_get(big, "arguments"), "env",
	    json_string("staging"));
	assert_non_null(bigtext = json_dumps(big, JSON_COMPACT));
	json_decref(big);
	assert_non_null(store = cedar_entities_new(NULL));
	big = jparse(DIFF_STORE);
	assert_int_equal(cedar_entities_add_json(store, big, why,
	    sizeof(why)), 0);
	json_decref(big);
	for (p = 0; p < sizeof(DIFF_POLICIES) / sizeof(DIFF_POLICIES[0]);
	    p++) {
		ac = f->ac;
		ac.ac_policies = policies(DIFF_POLICIES[p]);
		ac.ac_entities = store;
		for (k = 0; k < sizeof(claims) / sizeof(claims[0]); k++) {
			cl = jparse(claims[k]);
			/* a generation per set: the cache starts anew */
			w = authz_cache_who(f->cache, &ac, p + 1, "s", cl);
			json_decref(cl);
			assert_non_null(w);
			for (i = 0; i < sizeof(DIFF_CALLS) /
			    sizeof(DIFF_CALLS[0]); i++) {
				ptext = DIFF_CALLS[i] != NULL ? DIFF_CALLS[i] :
				    bigtext;
				params = jbody(ptext);
				/* the slow path: authz_gate() on the tree */
				memset(&c, 0, sizeof(c));
				c.cc_kind = CEDAR_TOOL;
				c.cc_name = json_string_value(json_object_get(
				    params, "name"));
				itext = diff_item(f, c.cc_name, &ilen);
				item = itext != NULL ? jparse(itext) : NULL;
				c.cc_annotations = json_object_get(item,
				    "annotations");
				if (json_is_object(json_object_get(params,
				    "arguments")))
					c.cc_arguments = json_object_get(params,
					    "arguments");
				slow = authz_who_call(w, &c, why, sizeof(why));
				/* the hot path: the text, twice (cached) */
				n = strlen(c.cc_name);
				fast = authz_who_tool(w, c.cc_name, n, itext,
				    ilen, ptext, strlen(ptext), why,
				    sizeof(why));
				again = authz_who_tool(w, c.cc_name, n, itext,
				    ilen, ptext, strlen(ptext), why,
				    sizeof(why));
				if (slow != fast || fast != again)
					fail_msg("policies %zu, %s, %s: parsed "
					    "%d, text %d then %d (%s)", p,
					    claims[k], ptext, slow, fast,
					    again, why);
				if (slow)
					allowed++;
				else
					denied++;
				json_decref(item);
				free(itext);
				json_decref(params);
			}
		}
		cedar_policyset_free((struct cedar_policyset *)
		    ac.ac_policies);
	}
	free(bigtext);
	cedar_entities_free(store);
	/* both outcomes, often */
	assert_true(allowed > 40 && denied > 40);
}

/* a set that reads no argument: a call is its tool's list decision */
static void
test_fast_gate_cached(void **state)
{
	struct fx		*f = *state;
	struct authz_who	*w;
	static const char	 read[] = "{\"name\":\"read\","
				    "\"annotations\":{\"readOnlyHint\":true}}";
	static const char	 params[] = "{\"name\":\"read\",\"arguments\":"
				    "{\"env\":\"prod\"}}";
	uint64_t		 n;
	struct authz_conf	 ac = f->ac;
	json_t			*cl;

	ac.ac_policies = policies(DIFF_POLICIES[1]);
	cl = jparse(BOB);
	w = authz_cache_who(f->cache, &ac, 2, "s", cl);
	json_decref(cl);
	n = authz_cache_evals(f->cache);
	assert_int_equal(authz_who_tool(w, "read", 4, read, strlen(read),
	    params, strlen(params), NULL, 0), 1);
	assert_int_equal(authz_cache_evals(f->cache), n + 1);
	/* again, and as listed: nothing evaluated */
	assert_int_equal(authz_who_tool(w, "read", 4, read, strlen(read),
	    params, strlen(params), NULL, 0), 1);
	assert_int_equal(tool_item(w, "read", read), 1);
	assert_int_equal(authz_cache_evals(f->cache), n + 1);
	/* a tool the view does not list: evaluated, with no hints */
	assert_int_equal(authz_who_tool(w, "nope", 4, NULL, 0, params,
	    strlen(params), NULL, 0), 0);
	assert_int_equal(authz_cache_evals(f->cache), n + 2);
	/* no principal */
	assert_int_equal(authz_who_tool(NULL, "read", 4, read, strlen(read),
	    params, strlen(params), NULL, 0), 0);
	cedar_policyset_free((struct cedar_policyset *)ac.ac_policies);
}

/* one item of the layout by its key */
static void
test_layout_item(void **state)
{
	struct fx	*f = *state;
	char		*t;
	size_t		 n;

	assert_int_equal(view_layout_item(f->lay, f->len, VIEW_KIND_TOOLS,
	    "read", 4, &t, &n), 0);
	assert_string_equal(t, "{\"name\":\"read\",\"annotations\":"
	    "{\"readOnlyHint\":true}}");
	assert_int_equal(n, strlen(t));
	free(t);
	assert_int_equal(view_layout_item(f->lay, f->len, VIEW_KIND_TOOLS,
	    "rea", 3, &t, &n), VIEW_NO_ROUTE);
	assert_null(t);
	assert_int_equal(view_layout_item(f->lay, f->len, VIEW_KIND_TOOLS,
	    "zzz", 3, &t, &n), VIEW_NO_ROUTE);
	assert_int_equal(view_layout_item(f->lay, f->len, VIEW_KIND_PROMPTS,
	    "ops", 3, &t, &n), 0);
	free(t);
	assert_int_equal(view_layout_item(f->lay, 8, VIEW_KIND_TOOLS,
	    "read", 4, &t, &n), -1);
}

/* the messages say the kind only; a completion's is its ref's */
static void
test_messages(void **state)
{
	static const struct {
		const char	*method, *params, *want;
	} t[] = {
		{ "tools/call", NULL, "call" },
		{ "prompts/get", NULL, "prompt" },
		{ "resources/read", NULL, "read" },
		{ "resources/subscribe", NULL, "read" },
		{ "resources/unsubscribe", NULL, "read" },
		{ "completion/complete", "{\"ref\":{\"type\":\"ref/prompt\","
		    "\"name\":\"ops\"}}", "prompt" },
		{ "completion/complete", "{\"ref\":{\"type\":"
		    "\"ref/resource\",\"uri\":\"vault://{k}\"}}", "read" },
		{ "completion/complete", "{\"ref\":{\"type\":\"ref/x\"}}",
		    "read" },
		{ "completion/complete", NULL, "read" },
	};
	json_t	*p;
	char	 want[128];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		p = t[i].params != NULL ? jparse(t[i].params) : NULL;
		(void)snprintf(want, sizeof(want), "Forbidden: %s denied by "
		    "authorization policy", t[i].want);
		assert_string_equal(authz_message(mcp_method_find(t[i].method),
		    p), want);
		json_decref(p);
	}
	assert_int_equal(mcp_method_find("resources/subscribe")->mm_action,
	    MCP_ACTION_READ_RESOURCE);
	assert_int_equal(mcp_method_find("resources/unsubscribe")->mm_action,
	    MCP_ACTION_READ_RESOURCE);
}

/* a request of method with params, for who at the gate: 1 allowed */
static int
gate(struct authz_who *w, const char *method, const char *params)
{
	json_t	*p = jparse(params);
	char	 why[CEDAR_ERRLEN + 32];
	int	 allow;

	allow = authz_gate_who(NULL, w, mcp_method_find(method), p, NULL, why,
	    sizeof(why));
	json_decref(p);
	return allow;
}

#define gate_complete(w, params) gate((w), "completion/complete", (params))

/*
 * The gate on completion/complete: its ref's action, on the item as the
 * lists show it (a prompt by its name, a template by its uriTemplate),
 * so a principal completes exactly what it sees listed; a ref that
 * names no item is denied.
 */
static void
test_gate_refs(void **state)
{
	static const struct {
		enum view_kind	 kind;
		const char	*key, *type, *member;
	} items[] = {
		{ VIEW_KIND_PROMPTS, "greet", "ref/prompt", "name" },
		{ VIEW_KIND_PROMPTS, "ops", "ref/prompt", "name" },
		{ VIEW_KIND_TEMPLATES, "docs://{id}", "ref/resource", "uri" },
		{ VIEW_KIND_TEMPLATES, "vault://{k}", "ref/resource", "uri" },
		{ VIEW_KIND_RESOURCES, "docs://a", "ref/resource", "uri" },
		{ VIEW_KIND_RESOURCES, "vault://b", "ref/resource", "uri" },
	};
	static const char *const nothing[] = {
		"{}", "{\"ref\":{}}", "{\"ref\":\"greet\"}",
		"{\"ref\":{\"type\":\"ref/prompt\"}}",
		"{\"ref\":{\"type\":\"ref/prompt\",\"name\":7}}",
		"{\"ref\":{\"type\":\"ref/resource\",\"name\":\"greet\"}}",
		"{\"ref\":{\"type\":\"ref/tool\",\"name\":\"greet\"}}",
		"{\"ref\":{\"name\":\"greet\"}}",
	};
	struct fx		*f = *state;
	struct authz_who	*ws[3];
	char			 params[256];
	size_t			 i, j;
	int			 shown, allowed;

	ws[0] = who(f, "s-bob", BOB);
	ws[1] = who(f, "s-alice", ALICE);
	ws[2] = NULL;
	for (j = 0; j < 3; j++)
		for (i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
			(void)snprintf(params, sizeof(params), "{\"ref\":"
			    "{\"type\":\"%s\",\"%s\":\"%s\"},\"argument\":"
			    "{\"name\":\"a\",\"value\":\"\"}}", items[i].type,
			    items[i].member, items[i].key);
			shown = authz_who_item(ws[j], items[i].kind,
			    items[i].key, strlen(items[i].key), "{}", 2);
			allowed = gate_complete(ws[j], params);
			if (allowed != shown)
				fail_msg("principal %zu, %s: completes %d, "
				    "listed %d", j, params, allowed, shown);
		}
	/* what bob sees and may complete, and what not */
	assert_int_equal(gate_complete(ws[0], "{\"ref\":{\"type\":"
	    "\"ref/prompt\",\"name\":\"greet\"}}"), 1);
	assert_int_equal(gate_complete(ws[0], "{\"ref\":{\"type\":"
	    "\"ref/prompt\",\"name\":\"ops\"}}"), 0);
	assert_int_equal(gate_complete(ws[0], "{\"ref\":{\"type\":"
	    "\"ref/resource\",\"uri\":\"docs://{id}\"}}"), 1);
	assert_int_equal(gate_complete(ws[0], "{\"ref\":{\"type\":"
	    "\"ref/resource\",\"uri\":\"vault://{k}\"}}"), 0);
	/* the ref's item, not the params' */
	assert_int_equal(gate_complete(ws[0], "{\"name\":\"greet\","
	    "\"uri\":\"docs://a\",\"ref\":{\"type\":\"ref/prompt\","
	    "\"name\":\"ops\"}}"), 0);
	for (i = 0; i < sizeof(nothing) / sizeof(nothing[0]); i++)
		for (j = 0; j < 2; j++)
			if (gate_complete(ws[j], nothing[i]) != 0)
				fail_msg("principal %zu completes %s", j,
				    nothing[i]);
	/* the gate's other methods read their own params as before */
	for (j = 0; j < 2; j++) {
		assert_int_equal(gate(ws[j], "resources/unsubscribe",
		    "{\"uri\":\"vault://b\"}"), j);
		assert_int_equal(gate(ws[j], "prompts/get",
		    "{\"name\":\"ops\",\"arguments\":{}}"), j);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_filtered_pages, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_filtered_cursor, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_bounded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_denies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_long_args, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fast_gate, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fast_gate_cached, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_layout_item, setup,
		    teardown),
		cmocka_unit_test(test_messages),
		cmocka_unit_test_setup_teardown(test_gate_refs, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
