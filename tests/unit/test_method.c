/*
 * method.c: the MCP method table.  Every method of 2025-11-25 and
 * 2026-07-28 is found with the entry the edges rely on; near misses
 * (a prefix, another case, a byte more or changed, a NUL inside) are
 * not.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "proto/method.h"
#include "proto/jsonrpc.h"

#define L	MCP_REV_LEGACY
#define MO	MCP_REV_MODERN
#define LM	(MCP_REV_LEGACY | MCP_REV_MODERN)

/* the spec's lists (Schema of each revision), written out again here */
static const char *const legacy_methods[] = {
	"initialize", "ping", "tools/list", "tools/call", "resources/list",
	"resources/templates/list", "resources/read", "resources/subscribe",
	"resources/unsubscribe", "prompts/list", "prompts/get",
	"completion/complete", "logging/setLevel", "tasks/get",
	"tasks/result", "tasks/list", "tasks/cancel",
	"sampling/createMessage", "roots/list", "elicitation/create",
	"notifications/initialized", "notifications/cancelled",
	"notifications/progress", "notifications/message",
	"notifications/resources/list_changed",
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/updated",
	"notifications/roots/list_changed",
	"notifications/elicitation/complete", "notifications/tasks/status",
};

static const char *const modern_methods[] = {
	"server/discover", "tools/list", "tools/call", "resources/list",
	"resources/templates/list", "resources/read", "prompts/list",
	"prompts/get", "completion/complete", "subscriptions/listen",
	"tasks/get", "tasks/update", "tasks/cancel",
	"sampling/createMessage", "elicitation/create", "roots/list",
	"notifications/cancelled", "notifications/progress",
	"notifications/message", "notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
	"notifications/resources/updated",
	"notifications/subscriptions/acknowledged", "notifications/tasks",
};

static void
test_method_revisions(void **state)
{
	const struct mcp_method	*mm;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(legacy_methods) / sizeof(legacy_methods[0]);
	    i++) {
		mm = mcp_method_find(legacy_methods[i]);
		if (mm == NULL || strcmp(mm->mm_name, legacy_methods[i]) != 0 ||
		    !(mm->mm_revs & L))
			fail_msg("2025-11-25 %s", legacy_methods[i]);
	}
	for (i = 0; i < sizeof(modern_methods) / sizeof(modern_methods[0]);
	    i++) {
		mm = mcp_method_find(modern_methods[i]);
		if (mm == NULL || strcmp(mm->mm_name, modern_methods[i]) != 0 ||
		    !(mm->mm_revs & MO))
			fail_msg("2026-07-28 %s", modern_methods[i]);
	}
	/* gone in 2026-07-28 (MCP 2026-07-28, Methods): a 404 there */
	assert_false(mcp_method_find("initialize")->mm_revs & MO);
	assert_false(mcp_method_find("ping")->mm_revs & MO);
	assert_false(mcp_method_find("logging/setLevel")->mm_revs & MO);
	assert_false(mcp_method_find("resources/subscribe")->mm_revs & MO);
	assert_false(mcp_method_find("resources/unsubscribe")->mm_revs & MO);
	assert_false(mcp_method_find("server/discover")->mm_revs & L);
	assert_false(mcp_method_find("subscriptions/listen")->mm_revs & L);
}

/* what the edges, the core and the later issues read off an entry */
static void
test_method_entries(void **state)
{
	static const struct row {
		const char		*r_name;
		enum mcp_method_id	 r_id;
		enum mcp_method_kind	 r_kind;
		unsigned int		 r_served;
		const char		*r_cap;
		enum mcp_route		 r_route;
		const char		*r_key;
		const char		*r_lists;
		const char		*r_hname;
		enum mcp_action		 r_action;
		const char		*r_audit;
		unsigned int		 r_flags;
	} rows[] = {
		{ "initialize", MCP_M_INITIALIZE, MCP_KIND_REQUEST, L, NULL,
		    MCP_ROUTE_NONE, NULL, NULL, NULL, MCP_ACTION_NONE,
		    "mcp_initialize", MCP_MF_LOCAL },
		{ "ping", MCP_M_PING, MCP_KIND_REQUEST, L, NULL,
		    MCP_ROUTE_NONE, NULL, NULL, NULL, MCP_ACTION_NONE,
		    "mcp_ping", MCP_MF_LOCAL },
		{ "server/discover", MCP_M_SERVER_DISCOVER, MCP_KIND_REQUEST,
		    MO, NULL, MCP_ROUTE_NONE, NULL, NULL, NULL,
		    MCP_ACTION_NONE, "mcp_discover",
		    MCP_MF_CACHEABLE | MCP_MF_LOCAL },
		{ "tools/list", MCP_M_TOOLS_LIST, MCP_KIND_REQUEST, LM,
		    "tools", MCP_ROUTE_NONE, NULL, "tools", NULL,
		    MCP_ACTION_NONE, "mcp_tools_list", MCP_MF_CACHEABLE },
		{ "tools/call", MCP_M_TOOLS_CALL, MCP_KIND_REQUEST, LM,
		    "tools", MCP_ROUTE_TOOL, "name", NULL, "name",
		    MCP_ACTION_CALL_TOOL, "mcp_tool_call",
		    MCP_MF_METERED | MCP_MF_MRTR | MCP_MF_BACKEND },
		{ "prompts/list", MCP_M_PROMPTS_LIST, MCP_KIND_REQUEST, LM,
		    "prompts", MCP_ROUTE_NONE, NULL, "prompts", NULL,
		    MCP_ACTION_NONE, "mcp_prompts_list", MCP_MF_CACHEABLE },
		{ "prompts/get", MCP_M_PROMPTS_GET, MCP_KIND_REQUEST, LM,
		    "prompts", MCP_ROUTE_PROMPT, "name", NULL, "name",
		    MCP_ACTION_GET_PROMPT, "mcp_prompt_get",
		    MCP_MF_MRTR | MCP_MF_BACKEND },
		{ "resources/list", MCP_M_RESOURCES_LIST, MCP_KIND_REQUEST,
		    LM, "resources", MCP_ROUTE_NONE, NULL, "resources", NULL,
		    MCP_ACTION_NONE, "mcp_resources_list", MCP_MF_CACHEABLE },
		{ "resources/templates/list", MCP_M_RESOURCES_TEMPLATES_LIST,
		    MCP_KIND_REQUEST, LM, "resources", MCP_ROUTE_NONE, NULL,
		    "resourceTemplates", NULL, MCP_ACTION_NONE,
		    "mcp_resource_templates_list", MCP_MF_CACHEABLE },
		{ "resources/read", MCP_M_RESOURCES_READ, MCP_KIND_REQUEST,
		    LM, "resources", MCP_ROUTE_URI, "uri", NULL, "uri",
		    MCP_ACTION_READ_RESOURCE, "mcp_resource_read",
		    MCP_MF_MRTR | MCP_MF_CACHEABLE | MCP_MF_BACKEND },
		{ "resources/subscribe", MCP_M_RESOURCES_SUBSCRIBE,
		    MCP_KIND_REQUEST, L, "resources", MCP_ROUTE_URI, "uri",
		    NULL, NULL, MCP_ACTION_READ_RESOURCE,
		    "mcp_resource_subscribe",
		    MCP_MF_SESSION | MCP_MF_BACKEND },
		{ "resources/unsubscribe", MCP_M_RESOURCES_UNSUBSCRIBE,
		    MCP_KIND_REQUEST, L, "resources", MCP_ROUTE_URI, "uri",
		    NULL, NULL, MCP_ACTION_READ_RESOURCE,
		    "mcp_resource_unsubscribe",
		    MCP_MF_SESSION | MCP_MF_BACKEND },
		{ "completion/complete", MCP_M_COMPLETION_COMPLETE,
		    MCP_KIND_REQUEST, LM, "completions", MCP_ROUTE_REF, "ref",
		    NULL, NULL, MCP_ACTION_OF_REF, "mcp_completion",
		    MCP_MF_BACKEND },
		{ "logging/setLevel", MCP_M_LOGGING_SET_LEVEL,
		    MCP_KIND_REQUEST, L, "logging", MCP_ROUTE_NONE, NULL, NULL,
		    NULL, MCP_ACTION_NONE, "mcp_logging_set_level",
		    MCP_MF_SESSION | MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "subscriptions/listen", MCP_M_SUBSCRIPTIONS_LISTEN,
		    MCP_KIND_REQUEST, MO, NULL, MCP_ROUTE_NONE, NULL, NULL,
		    NULL, MCP_ACTION_NONE, "mcp_subscriptions_listen",
		    MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "tasks/get", MCP_M_TASKS_GET, MCP_KIND_REQUEST, MO, "tasks",
		    MCP_ROUTE_NONE, NULL, NULL, "taskId", MCP_ACTION_NONE,
		    "mcp_task_get", MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "tasks/update", MCP_M_TASKS_UPDATE, MCP_KIND_REQUEST, MO,
		    "tasks", MCP_ROUTE_NONE, NULL, NULL, "taskId",
		    MCP_ACTION_NONE, "mcp_task_update",
		    MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "tasks/cancel", MCP_M_TASKS_CANCEL, MCP_KIND_REQUEST, MO,
		    "tasks", MCP_ROUTE_NONE, NULL, NULL, "taskId",
		    MCP_ACTION_NONE, "mcp_task_cancel",
		    MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "elicitation/create", MCP_M_ELICITATION_CREATE,
		    MCP_KIND_REQUEST, 0, "elicitation", MCP_ROUTE_NONE, NULL,
		    NULL, NULL, MCP_ACTION_NONE, NULL, 0 },
		{ "sampling/createMessage", MCP_M_SAMPLING_CREATE_MESSAGE,
		    MCP_KIND_REQUEST, 0, "sampling", MCP_ROUTE_NONE, NULL,
		    NULL, NULL, MCP_ACTION_NONE, NULL, 0 },
		{ "roots/list", MCP_M_ROOTS_LIST, MCP_KIND_REQUEST, 0,
		    "roots", MCP_ROUTE_NONE, NULL, NULL, NULL,
		    MCP_ACTION_NONE, NULL, 0 },
		{ "notifications/initialized", MCP_M_N_INITIALIZED,
		    MCP_KIND_NOTIFICATION, L, NULL, MCP_ROUTE_NONE, NULL, NULL,
		    NULL, MCP_ACTION_NONE, NULL,
		    MCP_MF_SESSION | MCP_MF_LOCAL },
		{ "notifications/cancelled", MCP_M_N_CANCELLED,
		    MCP_KIND_NOTIFICATION, L, NULL, MCP_ROUTE_NONE, NULL, NULL,
		    NULL, MCP_ACTION_NONE, NULL,
		    MCP_MF_SESSION | MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "notifications/roots/list_changed",
		    MCP_M_N_ROOTS_LIST_CHANGED, MCP_KIND_NOTIFICATION, L,
		    "roots", MCP_ROUTE_NONE, NULL, NULL, NULL,
		    MCP_ACTION_NONE, NULL,
		    MCP_MF_SESSION | MCP_MF_BACKEND | MCP_MF_NOGATE },
		{ "notifications/message", MCP_M_N_MESSAGE,
		    MCP_KIND_NOTIFICATION, 0, "logging", MCP_ROUTE_NONE, NULL,
		    NULL, NULL, MCP_ACTION_NONE, NULL, 0 },
	};
	const struct mcp_method	*mm;
	const struct row	*r;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r = &rows[i];
		if ((mm = mcp_method_find(r->r_name)) == NULL)
			fail_msg("%s not found", r->r_name);
		if (mm->mm_id != r->r_id || mm->mm_kind != r->r_kind ||
		    mm->mm_served != r->r_served ||
		    mm->mm_route != r->r_route ||
		    mm->mm_action != r->r_action ||
		    mm->mm_flags != r->r_flags)
			fail_msg("%s: id %d kind %d served %u route %d action "
			    "%d flags %#x", r->r_name, (int)mm->mm_id,
			    (int)mm->mm_kind, mm->mm_served, (int)mm->mm_route,
			    (int)mm->mm_action, mm->mm_flags);
		if ((r->r_cap == NULL) != (mcp_cap_name(mm->mm_cap) == NULL) ||
		    (r->r_cap != NULL && strcmp(r->r_cap,
		    mcp_cap_name(mm->mm_cap)) != 0))
			fail_msg("%s: capability", r->r_name);
#define SAME(a, b) ((a) == NULL ? (b) == NULL : (b) != NULL && \
	strcmp((a), (b)) == 0)
		if (!SAME(r->r_key, mm->mm_route_key) ||
		    !SAME(r->r_lists, mm->mm_lists) ||
		    !SAME(r->r_hname, mm->mm_hname) ||
		    !SAME(r->r_audit, mm->mm_audit))
			fail_msg("%s: route key, list, Mcp-Name or audit",
			    r->r_name);
#undef SAME
	}
	/* only tools/call is metered */
	for (i = 0; i < MCP_M_COUNT; i++)
		if ((mcp_method_get(i)->mm_flags & MCP_MF_METERED) &&
		    i != MCP_M_TOOLS_CALL)
			fail_msg("%s metered", mcp_method_get(i)->mm_name);
}

/*
 * Whatever reaches a backend on a client's behalf passes the Cedar gate.
 * Each method vmcpd serves to clients is served one way: answered by
 * vmcpd itself, a list (of the view, filtered item by item), or on to a
 * backend (which a routed method is); one that goes on to a backend has
 * a Cedar action or, on purpose, MCP_MF_NOGATE, whose reason its entry
 * in method.c gives and which is named here too, so that an exemption
 * is never made in passing.  And only tools/call, prompts/get and
 * resources/read may carry an MRTR round (MCP 2026-07-28, Multi
 * Round-Trip Requests).
 */
static void
test_method_gated(void **state)
{
	static const char *const exempt[] = {
		"logging/setLevel",	/* the session's own level */
		"subscriptions/listen",	/* each URI, in listen_stream.c */
		"notifications/cancelled", /* the session's own request */
		"notifications/roots/list_changed", /* its own sessions */
		/* as the call of the task's tool, in modern_task.c */
		"tasks/get", "tasks/update", "tasks/cancel",
	};
	const struct mcp_method	*mm;
	size_t			 i, j;
	int			 ways, backend, listed;

	(void)state;
	for (i = 0; i < MCP_M_COUNT; i++) {
		mm = mcp_method_get(i);
		backend = (mm->mm_flags & MCP_MF_BACKEND) != 0;
		if (!(mm->mm_dir & MCP_DIR_C2S) || mm->mm_served == 0) {
			if (mm->mm_flags & (MCP_MF_BACKEND | MCP_MF_LOCAL |
			    MCP_MF_NOGATE))
				fail_msg("%s: not served, yet flagged",
				    mm->mm_name);
			continue;
		}
		ways = backend + (mm->mm_lists != NULL) +
		    ((mm->mm_flags & MCP_MF_LOCAL) != 0);
		if (ways != 1)
			fail_msg("%s: served %d ways (local, a list, or on to "
			    "a backend: one)", mm->mm_name, ways);
		if (mm->mm_route != MCP_ROUTE_NONE && !backend)
			fail_msg("%s: routed to a backend, not so flagged",
			    mm->mm_name);
		if (!backend) {
			if (mm->mm_action != MCP_ACTION_NONE ||
			    (mm->mm_flags & MCP_MF_NOGATE))
				fail_msg("%s: gated, but reaches no backend",
				    mm->mm_name);
			continue;
		}
		if ((mm->mm_action == MCP_ACTION_NONE) ==
		    !(mm->mm_flags & MCP_MF_NOGATE))
			fail_msg("%s reaches a backend with %s", mm->mm_name,
			    mm->mm_action == MCP_ACTION_NONE ? "no Cedar "
			    "action and no exemption" : "an action and an "
			    "exemption");
		for (listed = 0, j = 0; j < sizeof(exempt) / sizeof(exempt[0]);
		    j++)
			listed |= strcmp(exempt[j], mm->mm_name) == 0;
		if ((mm->mm_flags & MCP_MF_NOGATE) && !listed)
			fail_msg("%s: exempted from the gate, not listed here",
			    mm->mm_name);
	}
	for (i = 0; i < MCP_M_COUNT; i++) {
		mm = mcp_method_get(i);
		if (((mm->mm_flags & MCP_MF_MRTR) != 0) !=
		    (i == MCP_M_TOOLS_CALL || i == MCP_M_PROMPTS_GET ||
		    i == MCP_M_RESOURCES_READ))
			fail_msg("%s: MRTR flag", mm->mm_name);
	}
}

/* the table is whole: each id its own entry, each found by its name */
static void
test_method_table(void **state)
{
	const struct mcp_method	*mm;
	size_t			 i, j;

	(void)state;
	for (i = 0; i < MCP_M_COUNT; i++) {
		mm = mcp_method_get(i);
		assert_non_null(mm);
		assert_non_null(mm->mm_name);
		if ((size_t)mm->mm_id != i || mm->mm_len !=
		    strlen(mm->mm_name))
			fail_msg("entry %zu (%s)", i, mm->mm_name);
		if (mcp_method_lookup(mm->mm_name, mm->mm_len) != mm ||
		    mcp_method_find(mm->mm_name) != mm)
			fail_msg("%s not found by its name", mm->mm_name);
		assert_true(mm->mm_revs != 0);
		assert_true((mm->mm_served & ~mm->mm_revs) == 0);
		assert_true(mm->mm_dir != 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(mm->mm_name,
			    mcp_method_get(j)->mm_name);
	}
	assert_null(mcp_method_get(MCP_M_COUNT));
	assert_null(mcp_cap_name(MCP_CAP_NONE));
	assert_string_equal(mcp_cap_name(MCP_CAP_COMPLETIONS), "completions");
}

/* a changed name is either no method or, exactly, another one */
static void
check_miss(const char *s, size_t len)
{
	const struct mcp_method *mm = mcp_method_lookup(s, len);

	if (mm != NULL && (mm->mm_len != len ||
	    memcmp(mm->mm_name, s, len) != 0))
		fail_msg("\"%.*s\" (%zu bytes) found as %s", (int)len, s, len,
		    mm->mm_name);
}

static void
test_method_near_misses(void **state)
{
	static const char *const misses[] = {
		"", "tools", "tools/", "tools/cal", "tools/calls",
		"Tools/call", "TOOLS/CALL", "tools/Call", " tools/call",
		"tools/call ", "tools\\/call", "notifications/",
		"notifications", "initialized", "resources/templates",
		"tasks", "server/Discover", "logging/setlevel",
		"sampling/createmessage", "completion/completes",
	};
	const struct mcp_method	*mm;
	char			 buf[64];
	size_t			 i, n, pos;

	(void)state;
	for (i = 0; i < sizeof(misses) / sizeof(misses[0]); i++)
		if (mcp_method_find(misses[i]) != NULL)
			fail_msg("\"%s\" found", misses[i]);
	assert_null(mcp_method_find(NULL));
	assert_null(mcp_method_lookup(NULL, 10));
	/* a NUL inside, a NUL or a byte after: the length is the name's */
	assert_null(mcp_method_lookup("tools\0call", 10));
	assert_null(mcp_method_lookup("tools/call\0", 11));
	assert_null(mcp_method_lookup("tools/callx", 11));
	assert_non_null(mcp_method_lookup("tools/callx", 10));

	for (i = 0; i < MCP_M_COUNT; i++) {
		mm = mcp_method_get(i);
		n = mm->mm_len;
		assert_true(n + 1 < sizeof(buf));
		/* every prefix, and one byte more */
		for (pos = 0; pos < n; pos++)
			check_miss(mm->mm_name, pos);
		memcpy(buf, mm->mm_name, n);
		buf[n] = '\0';
		check_miss(buf, n + 1);
		buf[n] = '/';
		check_miss(buf, n + 1);
		/* each byte changed: its case, a NUL, another letter */
		for (pos = 0; pos < n; pos++) {
			memcpy(buf, mm->mm_name, n);
			if (isalpha((unsigned char)buf[pos])) {
				buf[pos] ^= 0x20;
				check_miss(buf, n);
				buf[pos] ^= 0x20;
			}
			buf[pos] = '\0';
			check_miss(buf, n);
			buf[pos] = mm->mm_name[pos] == 'x' ? 'y' : 'x';
			check_miss(buf, n);
		}
	}
}

/* the front's scan and the parser carry the entry in the message */
static void
test_method_carried(void **state)
{
	static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}";
	static const char other[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/calls\"}";
	struct jsonrpc_msg	 m;
	struct jsonrpc_scan	 sc;

	(void)state;
	assert_int_equal(jsonrpc_parse(call, sizeof(call) - 1, &m, NULL), 0);
	assert_ptr_equal(m.jm_mm, mcp_method_get(MCP_M_TOOLS_CALL));
	jsonrpc_msg_clear(&m);
	assert_int_equal(jsonrpc_parse(other, sizeof(other) - 1, &m, NULL),
	    0);
	assert_null(m.jm_mm);
	jsonrpc_msg_clear(&m);
	assert_int_equal(jsonrpc_scan(call, sizeof(call) - 1, &sc), 1);
	assert_ptr_equal(sc.js_mm, mcp_method_get(MCP_M_TOOLS_CALL));
	assert_int_equal(jsonrpc_scan(other, sizeof(other) - 1, &sc), 1);
	assert_null(sc.js_mm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_revisions),
		cmocka_unit_test(test_method_entries),
		cmocka_unit_test(test_method_gated),
		cmocka_unit_test(test_method_table),
		cmocka_unit_test(test_method_near_misses),
		cmocka_unit_test(test_method_carried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
