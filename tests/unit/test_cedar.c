/*
 * shared/cedar.c: parse errors with their positions and what is not
 * supported, every operator's value and error cases, the entity
 * hierarchy, short-circuits, error skipping, forbid over permit, the
 * load-time check, limits, and the Cedar-engine attack cases of
 * docs/ARCHITECTURE.md's authorization section (forbid beats permit, a
 * policy error reported apart from the decision, type confusion, like,
 * in, numbers, odd entity ids, deep nesting).  The same engine is held
 * equal to the official evaluator by tests/interop/cedar.test.mjs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/cedar.h"
#include "shared/cedar_args.h"
#include "shared/cedar_request.h"
#include "unit.h"

/* the store most cases run against */
static const char *const entities_json =
    "[{\"uid\": {\"type\": \"Client\", \"id\": \"alice\"},"
    "  \"attrs\": {\"claim_roles\": [\"admin\", \"dev\"], \"claim_level\": 5,"
    "    \"claim_email\": \"alice@example.com\","
    "    \"claim_act\": {\"sub\": \"bob\"}},"
    "  \"parents\": [{\"type\": \"THVGroup\", \"id\": \"eng\"}]},"
    " {\"uid\": {\"type\": \"THVGroup\", \"id\": \"eng\"}, \"attrs\": {},"
    "  \"parents\": [{\"type\": \"THVRole\", \"id\": \"developer\"}]},"
    " {\"uid\": {\"type\": \"THVRole\", \"id\": \"developer\"}, \"attrs\": {},"
    "  \"parents\": [{\"type\": \"THVGroup\", \"id\": \"eng\"}]},"
    " {\"uid\": {\"type\": \"Tool\", \"id\": \"weather\"},"
    "  \"attrs\": {\"name\": \"weather\", \"readOnlyHint\": true},"
    "  \"parents\": [{\"type\": \"MCP\", \"id\": \"vmcp\"}]}]";

static const char *const context_json =
    "{\"arg_n\": 10, \"arg_mode\": \"safe\", \"s\": \"a*b\","
    " \"dec\": {\"__extn\": {\"fn\": \"decimal\", \"arg\": \"0.5\"}},"
    " \"g\": {\"__entity\": {\"type\": \"THVGroup\", \"id\": \"eng\"}}}";

static struct cedar_entities *
load_entities(const char *js)
{
	struct cedar_entities	*ce;
	char			 err[CEDAR_ERRLEN];
	json_t			*j;

	j = jparse(js);
	assert_non_null(ce = cedar_entities_new(NULL));
	if (cedar_entities_add_json(ce, j, err, sizeof(err)) == -1)
		fail_msg("entities: %s", err);
	json_decref(j);
	return ce;
}

static void
request_init(struct cedar_request *rq, const char *principal,
    const char *action, const char *resource)
{
	memset(rq, 0, sizeof(*rq));
	rq->cr_principal.cu_type.cs_ptr = "Client";
	rq->cr_principal.cu_type.cs_len = 6;
	rq->cr_principal.cu_id.cs_ptr = principal;
	rq->cr_principal.cu_id.cs_len = strlen(principal);
	rq->cr_action.cu_type.cs_ptr = "Action";
	rq->cr_action.cu_type.cs_len = 6;
	rq->cr_action.cu_id.cs_ptr = action;
	rq->cr_action.cu_id.cs_len = strlen(action);
	rq->cr_resource.cu_type.cs_ptr = "Tool";
	rq->cr_resource.cu_type.cs_len = 4;
	rq->cr_resource.cu_id.cs_ptr = resource;
	rq->cr_resource.cu_id.cs_len = strlen(resource);
}

/*
 * policies against alice calling weather with the store and context
 * above: the decision, the number of erroring policies, and per policy
 * S (satisfied), N (not) or E (error) in out
 */
static enum cedar_decision
authorize(const char *policies, const char *ctx, size_t *nerrors, char *out)
{
	struct cedar_policyset	*ps;
	struct cedar_entities	*ce;
	struct cedar_request	 rq;
	struct cedar_response	 resp;
	enum cedar_result	 res[16];
	char			 err[CEDAR_ERRLEN];
	json_t			*cj;
	size_t			 i;

	if ((ps = cedar_parse("p", policies, strlen(policies), err,
	    sizeof(err))) == NULL)
		fail_msg("%s: %s", policies, err);
	assert_true(cedar_policyset_len(ps) <= 16);
	ce = load_entities(entities_json);
	request_init(&rq, "alice", "call_tool", "weather");
	cj = jparse(ctx != NULL ? ctx : context_json);
	rq.cr_context = cj;
	memset(&resp, 0, sizeof(resp));
	resp.cr_results = res;
	if (cedar_authorize(ps, ce, &rq, &resp) == -1)
		fail_msg("%s: %s", policies, resp.cr_error);
	for (i = 0; i < cedar_policyset_len(ps); i++)
		out[i] = res[i] == CEDAR_SATISFIED ? 'S' :
		    res[i] == CEDAR_ERROR ? 'E' : 'N';
	out[i] = '\0';
	*nerrors = resp.cr_nerrors;
	json_decref(cj);
	cedar_entities_free(ce);
	cedar_policyset_free(ps);
	return resp.cr_decision;
}

/* one condition: 'S' true, 'N' false, 'E' an error */
static char
cond(const char *expr)
{
	char	 text[1024], out[17];
	size_t	 nerr;

	snprintf(text, sizeof(text),
	    "permit(principal, action, resource) when { %s };", expr);
	authorize(text, NULL, &nerr, out);
	assert_int_equal(nerr, out[0] == 'E');
	return out[0];
}

struct cond_case {
	const char	*cc_expr;
	char		 cc_want;
};

static void
run_conds(const struct cond_case *c, size_t n)
{
	size_t	i;
	char	got;

	for (i = 0; i < n; i++)
		if ((got = cond(c[i].cc_expr)) != c[i].cc_want)
			fail_msg("%s: %c, want %c", c[i].cc_expr, got,
			    c[i].cc_want);
}

#define RUN(c)	run_conds(c, sizeof(c) / sizeof(c[0]))

static void
test_cedar_operators(void **state)
{
	static const struct cond_case c[] = {
		{ "true", 'S' },
		{ "false", 'N' },
		{ "3", 'E' },			/* a condition must be Bool */
		{ "\"true\"", 'E' },
		/* == never errors; types differ: unequal (6.4 A6) */
		{ "5 == \"5\"", 'N' },
		{ "5 != \"5\"", 'S' },
		{ "[1, 2] == [2, 1, 1]", 'S' },
		{ "[1, [2]] == [[2], 1]", 'S' },
		{ "[] == []", 'S' },
		{ "principal == Client::\"alice\"", 'S' },
		{ "principal == Admin::\"alice\"", 'N' },
		{ "principal.claim_act == context.missing", 'E' },
		{ "context.g == THVGroup::\"eng\"", 'S' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_comparisons(void **state)
{
	static const struct cond_case c[] = {
		{ "1 < 2", 'S' },
		{ "2 <= 2", 'S' },
		{ "3 > 4", 'N' },
		{ "4 >= 4", 'S' },
		{ "-9223372036854775808 < 9223372036854775807", 'S' },
		{ "-1 < 0", 'S' },
		{ "007 == 7", 'S' },
		{ "\"a\" < \"b\"", 'E' },	/* Long only (6.4 A6) */
		{ "true < false", 'E' },
		{ "1 < \"2\"", 'E' },
		/* JSON 10 is Cedar's Long 10 (6.4 A9) */
		{ "context.arg_n == 10", 'S' },
		{ "context.arg_n < 11", 'S' },
		{ "principal.claim_level >= 5", 'S' },
		/* a decimal from input: equality only */
		{ "context.dec < 1", 'E' },
		{ "context.dec == context.dec", 'S' },
		{ "context.dec == 0", 'N' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_logic(void **state)
{
	static const struct cond_case c[] = {
		{ "!false", 'S' },
		{ "!!true", 'S' },
		{ "!!!!true", 'S' },
		{ "!3", 'E' },
		{ "true && true", 'S' },
		{ "true && false", 'N' },
		/* short-circuit: the right side is never evaluated */
		{ "false && 3", 'N' },
		{ "false && principal.nope", 'N' },
		{ "true || 3", 'S' },
		{ "true || principal.nope", 'S' },
		/* evaluated and not Bool: an error (6.4 A6) */
		{ "true && 3", 'E' },
		{ "false || 3", 'E' },
		{ "3 && false", 'E' },
		{ "false || false || true", 'S' },
		{ "true && true && false", 'N' },
		{ "false && true || true", 'S' },
		{ "(true || false) && !(false)", 'S' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_attributes(void **state)
{
	static const struct cond_case c[] = {
		{ "principal.claim_level == 5", 'S' },
		{ "principal[\"claim_level\"] == 5", 'S' },
		{ "principal.claim_act.sub == \"bob\"", 'S' },
		{ "principal.claim_act[\"sub\"] == \"bob\"", 'S' },
		{ "principal.nope == 1", 'E' },		/* missing: error */
		{ "principal has nope", 'N' },
		{ "principal has claim_level", 'S' },
		{ "principal has \"claim_level\"", 'S' },
		{ "context has arg_mode", 'S' },
		{ "context[\"arg_mode\"] == \"safe\"", 'S' },
		{ "context.nope", 'E' },
		/* an entity absent from the store */
		{ "Client::\"ghost\".x == 1", 'E' },
		{ "Client::\"ghost\" has x", 'N' },
		{ "action has x", 'N' },
		/* has and . want an entity or a record */
		{ "\"s\" has x", 'E' },
		{ "1.x == 1", 'E' },
		{ "context.arg_n.x", 'E' },
		{ "context.arg_n has x", 'E' },
		/* entity-valued attributes */
		{ "context.g == THVGroup::\"eng\"", 'S' },
		{ "context.g has x", 'N' },
		/* the has guard (6.4 A5) */
		{ "resource has readOnlyHint && resource.readOnlyHint == true",
		    'S' },
		{ "resource has destructiveHint && "
		    "resource.destructiveHint == false", 'N' },
		{ "resource.destructiveHint == false", 'E' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_in(void **state)
{
	static const struct cond_case c[] = {
		{ "principal in THVGroup::\"eng\"", 'S' },
		/* transitive; the store's cycle eng <-> developer is walked once */
		{ "principal in THVRole::\"developer\"", 'S' },
		{ "principal in THVGroup::\"ops\"", 'N' },
		{ "principal in principal", 'S' },
		/* reflexive even for an entity the store lacks (6.4 A8) */
		{ "Client::\"ghost\" in Client::\"ghost\"", 'S' },
		{ "Client::\"ghost\" in THVGroup::\"eng\"", 'N' },
		{ "principal in [THVGroup::\"ops\", THVRole::\"developer\"]", 'S' },
		{ "principal in []", 'N' },
		/* every element is checked, the match notwithstanding */
		{ "principal in [THVGroup::\"eng\", 1]", 'E' },
		{ "principal in [1, THVGroup::\"eng\"]", 'E' },
		{ "\"a\" in THVGroup::\"eng\"", 'E' },
		{ "principal in \"eng\"", 'E' },
		{ "resource in MCP::\"vmcp\"", 'S' },
		{ "resource in MCP::\"other\"", 'N' },
		{ "THVGroup::\"eng\" in principal", 'N' },
		{ "context.g in THVRole::\"developer\"", 'S' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_like(void **state)
{
	static const struct cond_case c[] = {
		{ "\"\" like \"*\"", 'S' },		/* * matches empty */
		{ "\"\" like \"\"", 'S' },
		{ "\"a*b\" like \"a\\*b\"", 'S' },	/* \* a literal star */
		{ "\"axb\" like \"a\\*b\"", 'N' },
		{ "context.s like \"a\\*b\"", 'S' },
		{ "\"axb\" like \"a*b\"", 'S' },
		{ "\"a*b\" like \"a\\u{2a}b\"", 'S' },	/* escaped: literal */
		{ "\"axb\" like \"a\\u{2a}b\"", 'N' },
		{ "\"Admin\" like \"admin\"", 'N' },	/* case-sensitive */
		{ "\"日本語\" like \"日*語\"", 'S' },	/* Unicode */
		{ "\"日本語\" like \"*本*\"", 'S' },
		{ "\"abc\" like \"b*\"", 'N' },		/* anchored */
		{ "\"abc\" like \"*b\"", 'N' },
		{ "\"abc\" like \"*b*\"", 'S' },
		{ "\"a\" like \"a*a\"", 'N' },		/* no overlap */
		{ "\"aa\" like \"a*a\"", 'S' },
		{ "\"abab\" like \"*ab*ab\"", 'S' },
		{ "\"alice@example.com\" like \"*@example.com\"", 'S' },
		{ "\"alice@example.com.evil\" like \"*@example.com\"", 'N' },
		{ "1 like \"*\"", 'E' },
		{ "principal like \"*\"", 'E' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_sets(void **state)
{
	static const struct cond_case c[] = {
		{ "principal.claim_roles.contains(\"admin\")", 'S' },
		{ "principal.claim_roles.contains(\"Admin\")", 'N' },
		{ "\"admin\".contains(\"a\")", 'E' },
		{ "[1, 2].containsAll([2])", 'S' },
		{ "[1].containsAll([1, 2])", 'N' },
		{ "[].containsAll([])", 'S' },
		{ "[1].containsAny([])", 'N' },
		{ "[1, 2].containsAny([3, 2])", 'S' },
		{ "[1].containsAny(1)", 'E' },
		{ "1.containsAll([1])", 'E' },
		{ "[].isEmpty()", 'S' },
		{ "[1].isEmpty()", 'N' },
		{ "context.arg_n.isEmpty()", 'E' },
		{ "[principal].contains(Client::\"alice\")", 'S' },
		{ "[[1, 2]].contains([2, 1])", 'S' },
		/* an erroring element errors the set literal */
		{ "[principal.nope].isEmpty()", 'E' },
		/* an attribute named like a method */
		{ "context.contains == 1", 'E' },
	};

	(void)state;
	RUN(c);
}

static void
test_cedar_strings(void **state)
{
	static const struct cond_case c[] = {
		{ "\"\\u{65}\" == \"e\"", 'S' },
		{ "\"\\x41\" == \"A\"", 'S' },
		{ "\"\\0\" != \"\"", 'S' },
		{ "\"\\n\" == \"\\u{a}\"", 'S' },
		{ "\"é\" == \"\\u{e9}\"", 'S' },
		{ "\"\\\"\\\\\\'\" == \"\\u{22}\\u{5c}'\"", 'S' },
		{ "\"a\nb\" == \"a\\nb\"", 'S' },
		{ "\"\\u{10ffff}\" != \"\"", 'S' },
	};

	(void)state;
	RUN(c);
}

/* a policy's own condition list: all whens true, all unlesses false */
static void
test_cedar_conditions(void **state)
{
	static const struct cond_case c[] = {
		{ "true } when { true", 'S' },
		{ "true } unless { false", 'S' },
		{ "true } unless { true", 'N' },
		/* the first false condition ends the policy */
		{ "false } when { 3", 'N' },
		{ "true } unless { true } when { 3", 'N' },
		{ "true } when { 3", 'E' },
		{ "true } unless { 3", 'E' },
	};

	(void)state;
	RUN(c);
}

/* Cedar's decision and the erroring policies, reported apart */
static void
test_cedar_decisions(void **state)
{
	char	out[17];
	size_t	nerr;

	(void)state;
	/* no policy, or none that matches: deny (6.4 A2) */
	assert_int_equal(authorize("", NULL, &nerr, out), CEDAR_DENY);
	assert_int_equal(nerr, 0);
	assert_int_equal(authorize("permit(principal == Client::\"bob\", "
	    "action, resource);", NULL, &nerr, out), CEDAR_DENY);
	assert_string_equal(out, "N");
	/* forbid beats permit (6.4 A1) */
	assert_int_equal(authorize("permit(principal, action, resource);\n"
	    "forbid(principal, action, resource);", NULL, &nerr, out),
	    CEDAR_DENY);
	assert_string_equal(out, "SS");
	/* scopes */
	assert_int_equal(authorize("permit(principal in THVRole::\"developer\","
	    " action in [Action::\"get_prompt\", Action::\"call_tool\"], "
	    "resource in MCP::\"vmcp\");", NULL, &nerr, out), CEDAR_ALLOW);
	assert_int_equal(authorize("permit(principal, action == "
	    "Action::\"get_prompt\", resource);", NULL, &nerr, out),
	    CEDAR_DENY);
	assert_int_equal(authorize("permit(principal, action in [], "
	    "resource);", NULL, &nerr, out), CEDAR_DENY);
	assert_int_equal(authorize("permit(principal, action, resource == "
	    "Tool::\"weather\");", NULL, &nerr, out), CEDAR_ALLOW);
	/*
	 * an erroring permit beside a satisfied one: Cedar skips it and
	 * allows, and says so; vmcpd's gate then fails closed (6.4 A3)
	 */
	assert_int_equal(authorize("permit(principal, action, resource) "
	    "when { principal.claim_dept == \"x\" };\n"
	    "permit(principal, action, resource);", NULL, &nerr, out),
	    CEDAR_ALLOW);
	assert_string_equal(out, "ES");
	assert_int_equal(nerr, 1);
	/* an erroring forbid is skipped, but never silently (6.4 A4) */
	assert_int_equal(authorize("permit(principal, action, resource);\n"
	    "forbid(principal, action, resource) "
	    "when { principal.claim_dept == \"contractor\" };", NULL, &nerr,
	    out), CEDAR_ALLOW);
	assert_string_equal(out, "SE");
	assert_int_equal(nerr, 1);
	/* the scope decides first: a non-matching policy never errors */
	assert_int_equal(authorize("permit(principal == Client::\"bob\", "
	    "action, resource) when { 3 };", NULL, &nerr, out), CEDAR_DENY);
	assert_string_equal(out, "N");
	assert_int_equal(nerr, 0);
	/* no context: an empty record */
	assert_int_equal(authorize("permit(principal, action, resource) "
	    "when { context has x };", "{}", &nerr, out), CEDAR_DENY);
}

/* the response's first error names the policy and its position */
static void
test_cedar_error_message(void **state)
{
	struct cedar_policyset	*ps;
	struct cedar_entities	*ce;
	struct cedar_request	 rq;
	struct cedar_response	 resp;
	const char		*text;
	char			 err[CEDAR_ERRLEN];

	(void)state;
	text = "permit(principal, action, resource);\n"
	    "permit(principal, action, resource)\n"
	    "  when { principal.claim_dept == \"x\" };";
	assert_non_null(ps = cedar_parse("p", text, strlen(text), err,
	    sizeof(err)));
	ce = load_entities(entities_json);
	request_init(&rq, "alice", "call_tool", "weather");
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), 0);
	assert_int_equal(resp.cr_nerrors, 1);
	assert_int_equal(resp.cr_error_policy, 1);
	assert_string_equal(resp.cr_error, "3:19: no attribute 'claim_dept'");
	/* a context that is no record: the request fails */
	rq.cr_context = json_integer(1);
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), -1);
	json_decref((json_t *)rq.cr_context);
	cedar_entities_free(ce);
	cedar_policyset_free(ps);
}

struct perr_case {
	const char	*pc_text;
	const char	*pc_err;	/* the start of the message */
};

static void
test_cedar_parse_errors(void **state)
{
	static const struct perr_case c[] = {
		{ "permit(principal, action, resource)",
		    "p:1:36: expected when, unless or ';', found the end" },
		{ "permit(principal, action, resource) when { \"abc };",
		    "p:1:44: unterminated string" },
		{ "permit(principal, action, resource) when { 1 + 2 };",
		    "p:1:46: arithmetic (+ - *) is not supported" },
		{ "permit(principal, action, resource) when { 1 - 2 };",
		    "p:1:46: arithmetic" },
		{ "permit(principal, action, resource) when { -context.x };",
		    "p:1:45: arithmetic" },
		{ "permit(principal, action, resource) when { if true then 1 "
		    "else 2 };", "p:1:44: if-then-else is not supported" },
		{ "permit(principal is User, action, resource);",
		    "p:1:18: the is operator is not supported" },
		{ "permit(principal, action, resource) when { principal is "
		    "User };", "p:1:54: the is operator is not supported" },
		{ "permit(principal, action, resource) when { {a: 1} == 1 };",
		    "p:1:44: record literals are not supported" },
		{ "permit(principal, action, resource) when { ip(\"1.2.3.4\") };",
		    "p:1:44: extension functions are not supported" },
		{ "permit(principal, action, resource) when { "
		    "context.x.lessThan(1) };",
		    "p:1:54: method 'lessThan' is not supported" },
		{ "permit(principal == ?principal, action, resource);",
		    "p:1:21: templates" },
		{ "permit(principal, action, resource) when { "
		    "9223372036854775808 > 0 };",
		    "p:1:44: integer literal out of range" },
		{ "permit(principal, action, resource) when { "
		    "99999999999999999999999 > 0 };",
		    "p:1:44: integer literal out of range" },
		{ "permit(principal, action, resource) when { 1 == 1 == 1 };",
		    "p:1:51: comparisons don't chain" },
		{ "permit(principal, action == Tool::\"x\", resource);",
		    "p:1:1: the action scope names entities of type Action" },
		{ "permit(principal, action, resource) when { \"\\q\" };",
		    "p:1:44: invalid escape" },
		{ "permit(principal, action, resource) when { \"\\*\" };",
		    "p:1:44: invalid escape" },
		{ "permit(principal, action, resource) when { \"\\x80\" };",
		    "p:1:44: invalid escape" },
		{ "permit(principal, action, resource) when { \"\\u{d800}\" };",
		    "p:1:44: invalid escape" },
		{ "permit(principal, action, resource) when { context.if };",
		    "p:1:52: expected an attribute name" },
		{ "permit(principal, action, resource) when { context has in };",
		    "p:1:56: expected an attribute name" },
		{ "permit(principal, action, resource) when { true == true ",
		    "p:1:57: expected '}', found the end" },
		/* T2: not Cedar */
		{ "permit(principal, action, resource in Tool::[\"a\", \"b\"]);",
		    "p:1:45: expected an entity type, found '['" },
		{ "permit(principal in [Client::\"a\"], action, resource);",
		    "p:1:21: only action can be 'in' a list" },
		{ "permit(principal, action, resource);\n"
		    "forbid(principal, action, resource)\n"
		    "  when { context.x == };",
		    "p:3:23: expected an expression, found '}'" },
		{ "permit(principal, action, resource) when { !!!!!true };",
		    "p:1:48: more than four '!'" },
		{ "permit(principal, action, resource) when { !-1 };",
		    "p:1:45: '-' after '!'" },
		{ "permit(principal, action, resource) when {};",
		    "p:1:43: empty condition" },
		{ "@id(\"a\") @id(\"b\") permit(principal, action, resource);",
		    "p:1:11: duplicate annotation @id" },
		{ "allow(principal, action, resource);",
		    "p:1:1: expected permit or forbid" },
		{ "permit(action, principal, resource);",
		    "p:1:8: expected principal" },
		{ "permit(principal, action, resource) when { foo };",
		    "p:1:44: unknown name 'foo'" },
		{ "permit(principal, action, resource) when { principal.x(1) };",
		    "p:1:54: method 'x' is not supported" },
		{ "permit(principal, action, resource) when "
		    "{ [].contains(1, 2) };", "p:1:46: contains takes 1" },
		{ "permit(principal, action, resource) when "
		    "{ context has a.b };", "p:1:57: has with a path" },
		{ "permit(principal, action, resource) when "
		    "{ __cedar::\"x\" == 1 };", "p:1:44: expected an expression, found '__cedar'" },
		{ "permit(principal, action, resource) when { true }; // ok\n"
		    "permit(principal, action, resource) when { \xc3\x28 };",
		    "p:2:44: invalid UTF-8" },
		{ "permit(principal, action, resource) # comment",
		    "p:1:37: expected when, unless or ';', found '#'" },
	};
	struct cedar_policyset	*ps;
	char			 err[CEDAR_ERRLEN];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ps = cedar_parse("p", c[i].pc_text, strlen(c[i].pc_text), err,
		    sizeof(err));
		if (ps != NULL)
			fail_msg("parsed: %s", c[i].pc_text);
		if (strncmp(err, c[i].pc_err, strlen(c[i].pc_err)) != 0)
			fail_msg("%s\n got: %s\nwant: %s", c[i].pc_text, err,
			    c[i].pc_err);
	}
}

/* what parses: comments, annotations, namespaces, odd ids (6.4 A12) */
static void
test_cedar_parse_ok(void **state)
{
	static const char *const ok[] = {
		"",
		"// nothing\n",
		"@id(\"x\") @advice permit(principal, action, resource);",
		"@if(\"reserved names are fine here\") forbid(principal, "
		    "action, resource);",
		"permit(principal == NS::Sub::Client::\"a\", action == "
		    "NS::Action::\"x\", resource);",
		"permit(principal, action, resource == Resource::"
		    "\"file:///a\\\"b\\\\c::d\\0e\");",
		"permit(principal, action, resource) when { -1.isEmpty() };",
		"permit(principal, action, resource) when { principal has "
		    "principal && context.permit == 1 };",
		"permit(principal,action,resource)when{true}unless{false};",
	};
	struct cedar_policyset	*ps;
	char			 err[CEDAR_ERRLEN];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if ((ps = cedar_parse("p", ok[i], strlen(ok[i]), err,
		    sizeof(err))) == NULL)
			fail_msg("%s: %s", ok[i], err);
		cedar_policyset_free(ps);
	}
}

/* entity ids that differ only in / vs _ or hold quotes and NUL (6.4 A12) */
static void
test_cedar_entity_ids(void **state)
{
	static const char text[] =
	    "permit(principal, action, resource == Resource::"
	    "\"file:///data/config.json\");\n"
	    "permit(principal == Client::\"q\\\"u\\\\o::te\\0x\", action, "
	    "resource);";
	struct cedar_policyset	*ps;
	struct cedar_entities	*ce;
	struct cedar_request	 rq;
	struct cedar_response	 resp;
	char			 err[CEDAR_ERRLEN];

	(void)state;
	assert_non_null(ps = cedar_parse("p", text, sizeof(text) - 1, err,
	    sizeof(err)));
	assert_non_null(ce = cedar_entities_new(NULL));
	request_init(&rq, "bob", "read_resource", "file:///data_config.json");
	rq.cr_resource.cu_type.cs_ptr = "Resource";
	rq.cr_resource.cu_type.cs_len = 8;
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), 0);
	assert_int_equal(resp.cr_decision, CEDAR_DENY);
	rq.cr_resource.cu_id.cs_ptr = "file:///data/config.json";
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), 0);
	assert_int_equal(resp.cr_decision, CEDAR_ALLOW);
	/* the principal id with a quote, a backslash, :: and a NUL */
	request_init(&rq, "bob", "call_tool", "weather");
	rq.cr_principal.cu_id.cs_ptr = "q\"u\\o::te\0x";
	rq.cr_principal.cu_id.cs_len = 11;
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), 0);
	assert_int_equal(resp.cr_decision, CEDAR_ALLOW);
	rq.cr_principal.cu_id.cs_len = 9;	/* cut at the NUL: another id */
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), 0);
	assert_int_equal(resp.cr_decision, CEDAR_DENY);
	cedar_entities_free(ce);
	cedar_policyset_free(ps);
}

/* the load-time check: unknown actions, in on non-entities (6.4 A14) */
static void
test_cedar_check(void **state)
{
	static const char *const actions[] = {
		"call_tool", "get_prompt", "read_resource", NULL
	};
	static const struct perr_case bad[] = {
		{ "permit(principal, action == Action::\"tools/call\", "
		    "resource);", "p:1:1: unknown action Action::\"tools/call\"" },
		{ "permit(principal, action in [Action::\"call_tool\", "
		    "Action::\"list\"], resource);", "p:1:1: unknown action" },
		{ "permit(principal, action, resource) when { action == "
		    "Action::\"resources/read\" };", "p:1:54: unknown action" },
		{ "permit(principal, action, resource) when { principal.role "
		    "in [\"developer\", \"operator\"] };",
		    "p:1:59: 'in' wants entities" },
		{ "permit(principal, action, resource) when { resource.tool in "
		    "\"x\" };", "p:1:58: 'in' wants entities" },
	};
	static const char *const good[] = {
		"permit(principal, action in [Action::\"call_tool\", "
		    "Action::\"get_prompt\"], resource) when { principal in "
		    "[THVGroup::\"a\", context.g] };",
		"permit(principal, action, resource) when { action == "
		    "Action::\"read_resource\" && Tool::\"Action\" in "
		    "principal };",
	};
	struct cedar_policyset	*ps;
	char			 err[CEDAR_ERRLEN];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if ((ps = cedar_parse("p", bad[i].pc_text,
		    strlen(bad[i].pc_text), err, sizeof(err))) == NULL)
			fail_msg("%s: %s", bad[i].pc_text, err);
		if (cedar_policyset_check(ps, actions, err, sizeof(err)) == 0)
			fail_msg("passed: %s", bad[i].pc_text);
		if (strncmp(err, bad[i].pc_err, strlen(bad[i].pc_err)) != 0)
			fail_msg("%s\n got: %s\nwant: %s", bad[i].pc_text, err,
			    bad[i].pc_err);
		cedar_policyset_free(ps);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if ((ps = cedar_parse("p", good[i], strlen(good[i]), err,
		    sizeof(err))) == NULL)
			fail_msg("%s: %s", good[i], err);
		if (cedar_policyset_check(ps, actions, err, sizeof(err)) == -1)
			fail_msg("%s: %s", good[i], err);
		cedar_policyset_free(ps);
	}
}

/* deep nesting and big inputs: bounded, no crash (6.4 A11, A13) */
static void
test_cedar_limits(void **state)
{
	struct cedar_policyset	*ps;
	char			 err[CEDAR_ERRLEN], out[17], *text, *p;
	size_t			 i, n, nerr;

	(void)state;
	n = 100000;
	assert_non_null(text = malloc(n * 4 + 128));
	/* 100,000 open parentheses: refused, not a stack overflow */
	p = text + sprintf(text, "permit(principal, action, resource) when { ");
	for (i = 0; i < n; i++)
		*p++ = '(';
	*p = '\0';
	assert_null(cedar_parse("p", text, strlen(text), err, sizeof(err)));
	assert_non_null(strstr(err, "nested deeper than"));
	/* so many nots, sets, accesses */
	p = text + sprintf(text, "permit(principal, action, resource) when { ");
	for (i = 0; i < n; i++)
		*p++ = '[';
	*p = '\0';
	assert_null(cedar_parse("p", text, strlen(text), err, sizeof(err)));
	p = text + sprintf(text, "permit(principal, action, resource) when { "
	    "context");
	for (i = 0; i < n; i++)
		p += sprintf(p, ".a");
	sprintf(p, " };");
	assert_null(cedar_parse("p", text, strlen(text), err, sizeof(err)));
	assert_non_null(strstr(err, "nested deeper than"));
	/* a long && chain is flat: fine */
	p = text + sprintf(text, "permit(principal, action, resource) when { "
	    "true");
	for (i = 0; i < 20000; i++)
		p += sprintf(p, " && true");
	sprintf(p, " };");
	assert_int_equal(authorize(text, NULL, &nerr, out), CEDAR_ALLOW);
	free(text);
	/* nesting just inside the limit parses and evaluates */
	assert_non_null(text = malloc(CEDAR_DEPTH_MAX * 2 + 128));
	p = text + sprintf(text, "permit(principal, action, resource) when { ");
	for (i = 0; i < CEDAR_DEPTH_MAX - 2; i++)
		*p++ = '(';
	p += sprintf(p, "true");
	for (i = 0; i < CEDAR_DEPTH_MAX - 2; i++)
		*p++ = ')';
	sprintf(p, " };");
	assert_int_equal(authorize(text, NULL, &nerr, out), CEDAR_ALLOW);
	free(text);
	/* more than CEDAR_TEXT_MAX */
	n = CEDAR_TEXT_MAX + 1;
	assert_non_null(text = malloc(n));
	memset(text, ' ', n);
	assert_null(cedar_parse("p", text, n, err, sizeof(err)));
	assert_non_null(strstr(err, "longer than"));
	free(text);
	(void)ps;
}

/* quadratic set work on huge claim arrays is cut by the fuel (6.4 A11) */
static void
test_cedar_fuel(void **state)
{
	struct cedar_policyset	*ps;
	struct cedar_entities	*ce;
	struct cedar_request	 rq;
	struct cedar_response	 resp;
	json_t			*ctx, *a, *b;
	const char		*text;
	char			 err[CEDAR_ERRLEN];
	int			 i;

	(void)state;
	text = "permit(principal, action, resource) when "
	    "{ context.a.containsAll(context.b) && context.a == context.b };";
	assert_non_null(ps = cedar_parse("p", text, strlen(text), err,
	    sizeof(err)));
	a = json_array();
	b = json_array();
	for (i = 0; i < 20000; i++) {
		json_array_append_new(a, json_integer(i));
		json_array_append_new(b, json_integer(19999 - i));
	}
	ctx = json_pack("{so so}", "a", a, "b", b);
	assert_non_null(ce = cedar_entities_new(NULL));
	request_init(&rq, "alice", "call_tool", "weather");
	rq.cr_context = ctx;
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(cedar_authorize(ps, ce, &rq, &resp), 0);
	assert_int_equal(resp.cr_decision, CEDAR_DENY);
	assert_int_equal(resp.cr_nerrors, 1);
	assert_non_null(strstr(resp.cr_error, "evaluation limit"));
	json_decref(ctx);
	cedar_entities_free(ce);
	cedar_policyset_free(ps);
}

/* Cedar's entity JSON: accepted forms, refused ones, layering */
static void
test_cedar_entities(void **state)
{
	static const char *const bad[] = {
		"{\"uid\": \"Tool::weather\"}",		/* T3: not Cedar's form */
		"{\"uid\": {\"type\": \"Tool\"}}",
		"{\"uid\": {\"type\": \"Not a type\", \"id\": \"x\"}}",
		"{\"uid\": {\"type\": \"T\", \"id\": \"x\"}, \"attrs\": "
		    "{\"n\": 0.5}}",
		"{\"uid\": {\"type\": \"T\", \"id\": \"x\"}, \"attrs\": "
		    "{\"n\": null}}",
		"{\"uid\": {\"type\": \"T\", \"id\": \"x\"}, \"attrs\": "
		    "{\"n\": {\"__extn\": {\"fn\": \"ip\", \"arg\": \"1.2.3.4\"}}}}",
		"{\"uid\": {\"type\": \"T\", \"id\": \"x\"}, \"attrs\": "
		    "{\"n\": {\"__extn\": {\"fn\": \"decimal\", \"arg\": \"1.23456\"}}}}",
		"{\"uid\": {\"type\": \"T\", \"id\": \"x\"}, \"parents\": [1]}",
		"[{\"uid\": {\"type\": \"T\", \"id\": \"x\"}},"
		    " {\"uid\": {\"type\": \"T\", \"id\": \"x\"}}]",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	};
	struct cedar_entities	*base, *top;
	char			 err[CEDAR_ERRLEN], out[17];
	json_t			*j;
	size_t			 i, nerr;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_non_null(base = cedar_entities_new(NULL));
		j = jparse(bad[i]);
		if (i == sizeof(bad) / sizeof(bad[0]) - 1) {
			json_decref(j);
			j = json_pack("{s{ssss}s{so}}", "uid", "type", "T",
			    "id", "x", "attrs", "deep", jparse(bad[i]));
		}
		if (cedar_entities_add_json(base, j, err, sizeof(err)) == 0)
			fail_msg("accepted: %s", bad[i]);
		json_decref(j);
		cedar_entities_free(base);
	}
	/* a layer hides its base's entity and reaches the base's parents */
	base = load_entities(entities_json);
	assert_non_null(top = cedar_entities_new(base));
	j = jparse("{\"uid\": {\"type\": \"Client\", \"id\": \"alice\"},"
	    " \"parents\": [{\"type\": \"THVGroup\", \"id\": \"eng\"}]}");
	assert_int_equal(cedar_entities_add_json(top, j, err, sizeof(err)), 0);
	json_decref(j);
	{
		struct cedar_policyset	*ps;
		struct cedar_request	 rq;
		struct cedar_response	 resp;
		enum cedar_result	 res[2];
		const char		*text;

		text = "permit(principal in THVRole::\"developer\", action, "
		    "resource);\npermit(principal, action, resource) when "
		    "{ principal has claim_level };";
		assert_non_null(ps = cedar_parse("p", text, strlen(text), err,
		    sizeof(err)));
		request_init(&rq, "alice", "call_tool", "weather");
		memset(&resp, 0, sizeof(resp));
		resp.cr_results = res;
		assert_int_equal(cedar_authorize(ps, top, &rq, &resp), 0);
		assert_int_equal(res[0], CEDAR_SATISFIED);
		assert_int_equal(res[1], CEDAR_NOT_SATISFIED);
		cedar_policyset_free(ps);
	}
	cedar_entities_free(top);
	cedar_entities_free(base);
	(void)out;
	(void)nerr;
}

/* each condition against one access: S, N or E as in cond() */
static void
access_conds(const struct cedar_access *ca, const struct cond_case *c,
    size_t n)
{
	struct cedar_policyset	*ps;
	struct cedar_response	 resp;
	enum cedar_result	 res[1];
	char			 text[1024], err[CEDAR_ERRLEN], got;
	size_t			 i;

	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text),
		    "permit(principal, action, resource) when { %s };",
		    c[i].cc_expr);
		if ((ps = cedar_parse("p", text, strlen(text), err,
		    sizeof(err))) == NULL)
			fail_msg("%s", err);
		memset(&resp, 0, sizeof(resp));
		resp.cr_results = res;
		assert_int_equal(cedar_access_authorize(ps, ca, &resp), 0);
		got = res[0] == CEDAR_SATISFIED ? 'S' :
		    res[0] == CEDAR_ERROR ? 'E' : 'N';
		if (got != c[i].cc_want)
			fail_msg("%s: %c, want %c (%s)", c[i].cc_expr, got,
			    c[i].cc_want, resp.cr_error);
		cedar_policyset_free(ps);
	}
}

/* the call's own server (cc_server) for check_access(), or NULL */
static const char *access_server;

/*
 * The principal of claims (over store) calling name with the view's
 * annotations and arguments (JSON text or NULL): each condition as
 * access_conds() says
 */
static void
check_access(const struct cedar_authz_conf *conf,
    const struct cedar_entities *store, const char *claims,
    enum cedar_kind kind, const char *name, const char *annotations,
    const char *arguments, const struct cond_case *c, size_t n)
{
	struct cedar_principal	*cp;
	struct cedar_access	*ca;
	struct cedar_call	 call;
	char			 err[CEDAR_ERRLEN];
	json_t			*cj, *aj, *gj;

	cj = jparse(claims);
	aj = annotations != NULL ? jparse(annotations) : NULL;
	gj = arguments != NULL ? jparse(arguments) : NULL;
	if ((cp = cedar_principal_new(conf, store, cj, err, sizeof(err))) ==
	    NULL)
		fail_msg("%s", err);
	memset(&call, 0, sizeof(call));
	call.cc_kind = kind;
	call.cc_name = name;
	call.cc_annotations = aj;
	call.cc_arguments = gj;
	call.cc_server = access_server;
	if ((ca = cedar_access_new(conf, cp, &call, err, sizeof(err))) ==
	    NULL)
		fail_msg("%s", err);
	access_conds(ca, c, n);
	cedar_access_free(ca);
	cedar_principal_free(cp);
	json_decref(cj);
	json_decref(aj);
	json_decref(gj);
}

#define CHECK_ACCESS(conf, store, claims, kind, name, ann, args, c) \
	check_access(conf, store, claims, kind, name, ann, args, c, \
	    sizeof(c) / sizeof(c[0]))

/* claims become claim_* on principal and context; groups become parents */
static void
test_cedar_principal(void **state)
{
	static const struct cond_case c[] = {
		{ "principal == Client::\"alice\"", 'S' },
		{ "principal.claim_sub == \"alice\"", 'S' },
		{ "context.claim_sub == \"alice\"", 'S' },
		{ "principal in THVGroup::\"eng\"", 'S' },
		/* groups came first: roles is no fallback then */
		{ "principal in THVGroup::\"admin\"", 'N' },
		{ "principal in THVGroup::\"7\"", 'N' },
		{ "principal.claim_roles.contains(\"admin\")", 'S' },
		/* JSON integers are Longs, integral reals too (6.4 A9) */
		{ "principal.claim_level == 5", 'S' },
		{ "context.claim_level < 6", 'S' },
		{ "principal.claim_five == 5", 'S' },
		/* a decimal compares only by == */
		{ "principal.claim_ratio == context.claim_ratio", 'S' },
		{ "principal.claim_ratio == 0", 'N' },
		{ "principal.claim_ratio < 1", 'E' },
		/* what Cedar can't hold is left out */
		{ "principal has claim_big", 'N' },
		{ "principal has claim_n", 'N' },
		{ "principal.claim_mixed == [1, \"a\"]", 'S' },
		/* the session-internal claim never reaches policies */
		{ "principal has claim_tsid", 'N' },
		{ "context has claim_tsid", 'N' },
		/* claims are not Cedar JSON: no entity from a claim */
		{ "principal.claim_obj == Client::\"admin\"", 'N' },
		{ "principal.claim_obj has __entity", 'S' },
		{ "principal.claim_act.sub == \"bob\"", 'S' },
		/* nesting is cut at 10 levels (6.4 A11) */
		{ "principal.claim_deep.a.a.a.a.a.a.a.a has a", 'S' },
		{ "principal.claim_deep.a.a.a.a.a.a.a.a.a has a", 'N' },
		/* a claim named like a reserved prefix stays a claim (6.4 A10) */
		{ "context has claim_arg_x && context.claim_arg_x == 1", 'S' },
		{ "context has arg_x", 'N' },
		{ "principal has claimset_scp", 'N' },
	};
	static const struct cedar_authz_conf conf = { .ca_server = "vmcp" };
	char			 err[CEDAR_ERRLEN];
	json_t			*claims;

	(void)state;
	CHECK_ACCESS(&conf, NULL, "{\"sub\": \"alice\", \"groups\": [\"eng\", 7],"
	    " \"roles\": [\"admin\"], \"level\": 5, \"five\": 5.0,"
	    " \"ratio\": 0.5, \"big\": 0.123456, \"n\": null,"
	    " \"mixed\": [1, \"a\", null, 0.123456], \"tsid\": \"s1\","
	    " \"obj\": {\"__entity\": {\"type\": \"Client\", \"id\": \"admin\"}},"
	    " \"act\": {\"sub\": \"bob\"}, \"arg_x\": 1,"
	    " \"deep\": {\"a\": {\"a\": {\"a\": {\"a\": {\"a\": {\"a\": {\"a\":"
	    " {\"a\": {\"a\": {\"a\": {\"a\": 1}}}}}}}}}}}}", CEDAR_TOOL,
	    "weather", NULL, NULL, c);
	/* no usable subject: no principal (the gate denies) */
	claims = jparse("[{}, {\"sub\": \"\"}, {\"sub\": 1}, {\"iss\": \"x\"}]");
	for (size_t i = 0; i < json_array_size(claims); i++)
		assert_null(cedar_principal_new(&conf, NULL,
		    json_array_get(claims, i), err, sizeof(err)));
	json_decref(claims);
}

/* the group claim by dotted path, the role claim, the entity type */
static void
test_cedar_principal_groups(void **state)
{
	static const struct cond_case c[] = {
		{ "principal in Team::\"ops\"", 'S' },
		{ "principal in Team::\"lead\"", 'S' },
		{ "principal in Team::\"eng\"", 'N' },	/* groups unused */
		{ "principal in THVGroup::\"ops\"", 'N' },
	};
	static const struct cedar_authz_conf conf = {
		.ca_group_claim = "realm_access.roles",
		.ca_role_claim = "role_list",
		.ca_group_type = "Team",
	};
	static const struct cond_case fb[] = {
		{ "principal in THVGroup::\"c\"", 'S' },
	};
	static const struct cedar_authz_conf dflt = {
		.ca_group_claim = "nope"
	};
	(void)state;
	CHECK_ACCESS(&conf, NULL, "{\"sub\": \"a\", \"groups\": [\"eng\"],"
	    " \"realm_access\": {\"roles\": [\"ops\"]},"
	    " \"role_list\": [\"lead\"]}", CEDAR_PROMPT, "greeting", NULL,
	    NULL, c);
	/* a group claim that isn't there: the usual names, in order */
	CHECK_ACCESS(&dflt, NULL, "{\"sub\": \"a\", \"groups\": "
	    "\"not an array\", \"cognito:groups\": [\"c\"]}", CEDAR_PROMPT,
	    "greeting", NULL, NULL, fb);
}

/* the resource: hints from the view, reserved names, arguments (6.4 A10) */
static void
test_cedar_access(void **state)
{
	static const struct cond_case tool[] = {
		{ "resource == Tool::\"weather\"", 'S' },
		{ "action == Action::\"call_tool\"", 'S' },
		{ "action.operation == \"call\"", 'S' },
		{ "resource.readOnlyHint == true", 'S' },
		{ "resource has destructiveHint", 'N' },	/* not a Bool */
		{ "resource has title", 'N' },
		/* annotations and arguments can't override these */
		{ "resource.name == \"weather\"", 'S' },
		{ "resource.operation == \"call\"", 'S' },
		{ "resource.feature == \"tool\"", 'S' },
		{ "resource has uri", 'N' },
		{ "resource.arg_mode == \"safe\" && context.arg_mode == \"safe\"",
		    'S' },
		{ "context.arg_n == 3 && resource.arg_n <= 3", 'S' },
		{ "context.arg_name == \"spoof\"", 'S' },
		/* an object argument is only present, and that can't be faked */
		{ "resource has arg_obj", 'N' },
		{ "context.arg_obj_present == true", 'S' },
		{ "resource.arg_list_present == true", 'S' },
		{ "context.arg_ok_present == false", 'S' },
		{ "resource in MCP::\"vmcp\"", 'S' },
		{ "context has claim_sub", 'S' },
	};
	static const struct cond_case res[] = {
		{ "resource == Resource::\"file:///data/config.json\"", 'S' },
		{ "resource == Resource::\"file:///data_config.json\"", 'N' },
		{ "resource.uri == \"file:///data/config.json\"", 'S' },
		{ "resource.name == resource.uri", 'S' },
		{ "resource.operation == \"read\" && resource.feature == "
		    "\"resource\"", 'S' },
		{ "action == Action::\"read_resource\"", 'S' },
		{ "context has arg_mode", 'N' },
	};
	static const struct cedar_authz_conf conf = { .ca_server = "vmcp" };

	(void)state;
	CHECK_ACCESS(&conf, NULL, "{\"sub\": \"alice\"}", CEDAR_TOOL,
	    "weather", "{\"readOnlyHint\": true, \"destructiveHint\": \"yes\","
	    " \"title\": \"T\", \"name\": \"evil\", \"operation\": \"x\"}",
	    "{\"mode\": \"safe\", \"n\": 3, \"name\": \"spoof\","
	    " \"obj\": {}, \"obj_present\": false, \"list\": [1],"
	    " \"ok_present\": false, \"nul\": null}", tool);
	CHECK_ACCESS(&conf, NULL, "{\"sub\": \"alice\"}", CEDAR_RESOURCE,
	    "file:///data/config.json", NULL, NULL, res);
}

/* a call's own server (a composite's hidden step) is the parent MCP */
static void
test_cedar_access_server(void **state)
{
	static const struct cond_case c[] = {
		{ "resource == Tool::\"secret\"", 'S' },
		{ "resource in MCP::\"spec\"", 'S' },
		{ "resource in MCP::\"vmcp\"", 'N' },
	};
	static const struct cedar_authz_conf conf = { .ca_server = "vmcp" };
	static const struct cedar_authz_conf none = { .ca_server = NULL };

	(void)state;
	access_server = "spec";
	CHECK_ACCESS(&conf, NULL, "{\"sub\": \"alice\"}", CEDAR_TOOL,
	    "secret", NULL, NULL, c);
	CHECK_ACCESS(&none, NULL, "{\"sub\": \"alice\"}", CEDAR_TOOL,
	    "secret", NULL, NULL, c);
	access_server = NULL;
}

/* entitiesJson lends attributes and parents to request entities (T4) */
static void
test_cedar_access_store(void **state)
{
	static const struct cond_case c[] = {
		{ "resource.owner == principal.claim_sub", 'S' },
		{ "resource.name == \"weather\"", 'S' },	/* request wins */
		{ "resource in MCP::\"team\" && resource in MCP::\"vmcp\"", 'S' },
		{ "principal.tenant == \"t1\"", 'S' },
		{ "principal.claim_sub == \"alice\"", 'S' },
		{ "principal in THVGroup::\"static\"", 'S' },
		{ "principal in THVRole::\"developer\"", 'S' },
		{ "action in Action::\"any\"", 'S' },
		{ "action.operation == \"call\"", 'S' },
	};
	static const struct cedar_authz_conf conf = { .ca_server = "vmcp" };
	struct cedar_entities	*store;

	(void)state;
	store = load_entities("["
	    "{\"uid\": {\"type\": \"Tool\", \"id\": \"weather\"},"
	    " \"attrs\": {\"owner\": \"alice\", \"name\": \"static\"},"
	    " \"parents\": [{\"type\": \"MCP\", \"id\": \"team\"}]},"
	    "{\"uid\": {\"type\": \"Client\", \"id\": \"alice\"},"
	    " \"attrs\": {\"tenant\": \"t1\", \"claim_sub\": \"mallory\"},"
	    " \"parents\": [{\"type\": \"THVGroup\", \"id\": \"static\"}]},"
	    "{\"uid\": {\"type\": \"THVGroup\", \"id\": \"eng\"}, \"attrs\": {},"
	    " \"parents\": [{\"type\": \"THVRole\", \"id\": \"developer\"}]},"
	    "{\"uid\": {\"type\": \"Action\", \"id\": \"call_tool\"},"
	    " \"attrs\": {\"operation\": \"static\"},"
	    " \"parents\": [{\"type\": \"Action\", \"id\": \"any\"}]}]");
	CHECK_ACCESS(&conf, store, "{\"sub\": \"alice\", \"groups\": [\"eng\"]}",
	    CEDAR_TOOL, "weather", NULL, NULL, c);
	cedar_entities_free(store);
}

/*
 * What a policy set may read of a call's arguments (shared/cedar_args.c),
 * on a table of conditions: nothing, the arguments named ("|"-joined,
 * sorted), or all of them ("*": context used whole).
 */
static void
test_cedar_args(void **state)
{
	static const struct {
		const char	*when;	/* a forbid's condition */
		const char	*want;	/* "": none, "*": all, "[a][b]" */
	} t[] = {
		{ "true", "" },
		{ "resource.readOnlyHint == true", "" },
		{ "resource has destructiveHint && principal.claim_x == 1",
		    "" },
		{ "principal in THVGroup::\"eng\" && resource == Tool::\"t\"",
		    "" },
		/* the claims in the context are no arguments */
		{ "context.claim_sub == \"bob\" && context has claim_roles",
		    "" },
		{ "context[\"claim_sub\"] == \"bob\"", "" },
		/* near misses: case, no underscore */
		{ "context has Arg_x || context has argx", "" },
		{ "context.arg_env == \"staging\"", "[env]" },
		{ "context has arg_env", "[env]" },
		{ "context has \"arg_env\"", "[env]" },
		{ "context[\"arg_env\"] == \"staging\"", "[env]" },
		{ "(context).arg_env == \"staging\"", "[env]" },
		/* the resource holds them too */
		{ "resource.arg_n <= 5", "[n]" },
		{ "resource has arg_n", "[n]" },
		/* on any expression: an entity may be the resource */
		{ "principal.claim_tool.arg_y == 1", "[y]" },
		{ "context.claim_act.arg_q == 1", "[q]" },
		/* x_present: a scalar x_present, or an object or array x */
		{ "context has arg_cfg_present", "[cfg][cfg_present]" },
		{ "context.arg_ == 1", "[]" },
		{ "context.arg_b == 1 && context.arg_a && context.arg_b",
		    "[a][b]" },
		{ "[1, context.arg_s].contains(2)", "[s]" },
		{ "!(context.arg_s like \"a*\")", "[s]" },
		/* context whole: every argument */
		{ "context == context", "*" },
		{ "[context].contains(context)", "*" },
		{ "[context].isEmpty()", "*" },
		{ "context.arg_x == 1 || context != principal.claim_r", "*" },
		{ "resource.arg_a == 1 && (context).claim_b == 2 && "
		    "(context) == (context)", "*" },
	};
	struct cedar_policyset	*ps;
	const struct cedar_str	*n;
	char			 text[512], got[256], err[CEDAR_ERRLEN];
	size_t			 i, k, len;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		(void)snprintf(text, sizeof(text), "permit(principal, action, "
		    "resource);\nforbid(principal, action, resource) when "
		    "{ %s };\n", t[i].when);
		if ((ps = cedar_parse("t", text, strlen(text), err,
		    sizeof(err))) == NULL)
			fail_msg("%s: %s", t[i].when, err);
		got[0] = '\0';
		len = 0;
		if (cedar_policyset_args(ps) == CEDAR_ARGS_ALL)
			(void)snprintf(got, sizeof(got), "*");
		else
			for (k = 0; (n = cedar_policyset_arg_name(ps, k)) !=
			    NULL; k++)
				len += (size_t)snprintf(got + len,
				    sizeof(got) - len, "[%.*s]", (int)n->cs_len,
				    n->cs_ptr);
		if (strcmp(got, t[i].want) != 0)
			fail_msg("%s: \"%s\", want \"%s\"", t[i].when, got,
			    t[i].want);
		assert_int_equal(cedar_policyset_args(ps),
		    t[i].want[0] == '*' ? CEDAR_ARGS_ALL :
		    t[i].want[0] == '\0' ? CEDAR_ARGS_NONE : CEDAR_ARGS_SOME);
		cedar_policyset_free(ps);
	}
	/* the names a set reads, and only those; all for "*" */
	(void)snprintf(text, sizeof(text), "permit(principal, action, "
	    "resource) when { context.arg_env == \"s\" };\n"
	    "forbid(principal, action, resource) unless "
	    "{ resource has arg_cfg_present };\n");
	assert_non_null(ps = cedar_parse("t", text, strlen(text), err,
	    sizeof(err)));
	assert_int_equal(cedar_policyset_reads_arg(ps, "env", 3), 1);
	assert_int_equal(cedar_policyset_reads_arg(ps, "cfg", 3), 1);
	assert_int_equal(cedar_policyset_reads_arg(ps, "cfg_present", 11), 1);
	assert_int_equal(cedar_policyset_reads_arg(ps, "en", 2), 0);
	assert_int_equal(cedar_policyset_reads_arg(ps, "envx", 4), 0);
	assert_int_equal(cedar_policyset_reads_arg(ps, "env_present", 11), 0);
	assert_int_equal(cedar_policyset_reads_arg(ps, "", 0), 0);
	cedar_policyset_free(ps);
	(void)snprintf(text, sizeof(text), "permit(principal, action, "
	    "resource) when { context == context };\n");
	assert_non_null(ps = cedar_parse("t", text, strlen(text), err,
	    sizeof(err)));
	assert_int_equal(cedar_policyset_reads_arg(ps, "anything", 8), 1);
	cedar_policyset_free(ps);
	/* an empty set reads nothing */
	assert_non_null(ps = cedar_parse("t", "", 0, err, sizeof(err)));
	assert_int_equal(cedar_policyset_args(ps), CEDAR_ARGS_NONE);
	assert_int_equal(cedar_policyset_reads_arg(ps, "x", 1), 0);
	cedar_policyset_free(ps);
}

/* what is parsed of the arguments: only what the policies read */
static void
test_cedar_args_text(void **state)
{
	static const struct {
		const char	*policy;	/* a condition */
		const char	*params;
		const char	*want;		/* NULL: none; "-": -1 */
	} t[] = {
		{ "true", "{\"arguments\":{\"a\":1}}", NULL },
		{ "context.arg_a == 1", "{\"arguments\":{\"a\":1,\"b\":"
		    "{\"c\":[1,2]}}}", "{\"a\":1}" },
		{ "context.arg_a == 1", "{\"name\":\"x\"}", NULL },
		{ "context.arg_a == 1", "{\"arguments\":[1]}", NULL },
		{ "context.arg_a == 1", "{\"arguments\":{}}", "{}" },
		{ "context.arg_a == 1", "{\"arguments\":{\"b\":1}}", "{}" },
		{ "context has arg_b_present", "{\"arguments\":{\"b\":[1],"
		    "\"b_present\":0,\"c\":1}}", "{\"b\":[1],\"b_present\":0}" },
		/* an escaped key: the object parsed, then picked */
		{ "context.arg_a == 1", "{\"arguments\":{\"\\u0061\":1,"
		    "\"b\":2}}", "{\"a\":1}" },
		/* context whole: all of them */
		{ "context == context", "{\"arguments\":{\"a\":1,\"b\":2}}",
		    "{\"a\":1,\"b\":2}" },
		/* not a call's params after all: the tree */
		{ "context.arg_a == 1", "{\"arguments\":{\"a\":\"x\"},"
		    "\"arguments2\":1,\"k1\":1,\"k2\":1,\"k3\":1,\"k4\":1,"
		    "\"k5\":1,\"k6\":1,\"k7\":1,\"k8\":1,\"k9\":1,\"k10\":1,"
		    "\"k11\":1,\"k12\":1,\"k13\":1,\"k14\":1,\"k15\":1,"
		    "\"k16\":1,\"k17\":1,\"k18\":1,\"k19\":1,\"k20\":1,"
		    "\"k21\":1,\"k22\":1,\"k23\":1,\"k24\":1,\"k25\":1,"
		    "\"k26\":1,\"k27\":1,\"k28\":1,\"k29\":1,\"k30\":1,"
		    "\"k31\":1,\"k32\":1,\"k33\":1,\"k34\":1,\"k35\":1,"
		    "\"k36\":1,\"k37\":1,\"k38\":1,\"k39\":1,\"k40\":1,"
		    "\"k41\":1,\"k42\":1,\"k43\":1,\"k44\":1,\"k45\":1,"
		    "\"k46\":1,\"k47\":1,\"k48\":1,\"k49\":1,\"k50\":1,"
		    "\"k51\":1,\"k52\":1,\"k53\":1,\"k54\":1,\"k55\":1,"
		    "\"k56\":1,\"k57\":1,\"k58\":1,\"k59\":1,\"k60\":1,"
		    "\"k61\":1,\"k62\":1,\"k63\":1,\"k64\":1}",
		    "{\"a\":\"x\"}" },
		/* text that does not load: the caller denies */
		{ "context.arg_a == 1", "{\"arguments\":{\"a\":1}", "-" },
		{ "context.arg_a == 1", "{\"arguments\":{\"a\":1,\"a\":2}}",
		    "-" },
	};
	struct cedar_policyset	*ps;
	json_t			*args, *want;
	char			 text[256], err[CEDAR_ERRLEN];
	size_t			 i;
	int			 rc;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		(void)snprintf(text, sizeof(text), "permit(principal, action, "
		    "resource) when { %s };", t[i].policy);
		if ((ps = cedar_parse("t", text, strlen(text), err,
		    sizeof(err))) == NULL)
			fail_msg("%s: %s", text, err);
		rc = cedar_args_text(ps, t[i].params, strlen(t[i].params),
		    &args);
		if (t[i].want != NULL && strcmp(t[i].want, "-") == 0) {
			if (rc != -1)
				fail_msg("%zu: %s loaded", i, t[i].params);
		} else if (rc != 0)
			fail_msg("%zu: %s: -1", i, t[i].params);
		else if (t[i].want == NULL) {
			if (args != NULL)
				fail_msg("%zu: arguments, want none", i);
		} else {
			want = jparse(t[i].want);
			if (!json_equal(args, want))
				fail_msg("%zu: %s", i, t[i].params);
			json_decref(want);
		}
		json_decref(args);
		cedar_policyset_free(ps);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cedar_operators),
		cmocka_unit_test(test_cedar_comparisons),
		cmocka_unit_test(test_cedar_logic),
		cmocka_unit_test(test_cedar_attributes),
		cmocka_unit_test(test_cedar_in),
		cmocka_unit_test(test_cedar_like),
		cmocka_unit_test(test_cedar_sets),
		cmocka_unit_test(test_cedar_strings),
		cmocka_unit_test(test_cedar_conditions),
		cmocka_unit_test(test_cedar_decisions),
		cmocka_unit_test(test_cedar_error_message),
		cmocka_unit_test(test_cedar_parse_errors),
		cmocka_unit_test(test_cedar_parse_ok),
		cmocka_unit_test(test_cedar_entity_ids),
		cmocka_unit_test(test_cedar_check),
		cmocka_unit_test(test_cedar_limits),
		cmocka_unit_test(test_cedar_fuel),
		cmocka_unit_test(test_cedar_entities),
		cmocka_unit_test(test_cedar_principal),
		cmocka_unit_test(test_cedar_principal_groups),
		cmocka_unit_test(test_cedar_access),
		cmocka_unit_test(test_cedar_access_server),
		cmocka_unit_test(test_cedar_access_store),
		cmocka_unit_test(test_cedar_args),
		cmocka_unit_test(test_cedar_args_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
