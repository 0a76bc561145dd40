/*
 * vmcpd.yaml's rateLimiting (token buckets: shared, perUser, and per
 * tool) and audit (the audit log's events and file), with the reference
 * vMCP's keys.  A bucket needs both maxTokens (>= 1) and refillPeriod
 * (> 0); rateLimiting needs at least one bucket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_load.h"

#define RL_TOKENS_MAX	1000000000U
#define RL_NAME_MAX	256	/* a tool name, as the bucket key holds it */
#define AUDIT_DATA_MAX	(1024 * 1024)

/* the reference's event types (docs/ARCHITECTURE.md, Audit) */
static const char *const audit_types[] = {
	"mcp_initialize", "mcp_tool_call", "mcp_tools_list",
	"mcp_resource_read", "mcp_resources_list", "mcp_prompt_get",
	"mcp_prompts_list", "mcp_notification", "mcp_ping", "mcp_logging",
	"mcp_completion", "mcp_roots_list_changed", "sse_connection",
	"mcp_request", "http_request",
	/* the console's actions (worker/diag/console_action.c) */
	"vmcp_console_action",
	/* composite tools' runs (worker/composite/composite_run.c) */
	"vmcp_workflow_started", "vmcp_workflow_completed",
	"vmcp_workflow_failed", "vmcp_workflow_timed_out",
	"vmcp_workflow_step_started", "vmcp_workflow_step_completed",
	"vmcp_workflow_step_failed", "vmcp_workflow_step_skipped"
};

static int
load_bucket(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_bucket	*b = arg;
	const struct field	 fields[] = {
		{ "maxTokens", F_UINT, &b->cb_max, NULL, 1, RL_TOKENS_MAX },
		{ "refillPeriod", F_DURATION, &b->cb_period_ms, NULL, 1, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "maxTokens") == -1 ||
	    config_require(ld, n, path, "refillPeriod") == -1)
		return -1;
	return 0;
}

static int
load_tool_limit(struct loader *ld, struct cnode *n, const char *path,
    struct config_tool_limit *t)
{
	const struct field	 fields[] = {
		{ "name", F_STRING, &t->ctl_name, NULL, 0, 0 },
		{ "shared", F_FN, &t->ctl_shared, load_bucket, 0, 0 },
		{ "perUser", F_FN, &t->ctl_per_user, load_bucket, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "name") == -1)
		return -1;
	if (strlen(t->ctl_name) > RL_NAME_MAX)
		return config_error(ld, cnode_get(n, "name"), "%s.name: a "
		    "tool name of at most %d bytes expected", path,
		    RL_NAME_MAX);
	if (t->ctl_shared.cb_max == 0 && t->ctl_per_user.cb_max == 0)
		return config_error(ld, n, "%s: expected \"shared\" or "
		    "\"perUser\" (or both)", path);
	return 0;
}

static int
load_tool_limits(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_ratelimit	*rl = arg;
	char			 tpath[PATH_MAX_LEN];
	size_t			 i, j;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of tools");
	if (n->cn_nkids == 0)
		return 0;
	if ((rl->crl_tools = calloc(n->cn_nkids,
	    sizeof(*rl->crl_tools))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < n->cn_nkids; i++) {
		rl->crl_ntools++;
		(void)snprintf(tpath, sizeof(tpath), "%s[%zu]", path, i);
		if (load_tool_limit(ld, n->cn_kids[i], tpath,
		    &rl->crl_tools[i]) == -1)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(rl->crl_tools[j].ctl_name,
			    rl->crl_tools[i].ctl_name) == 0)
				return config_error(ld,
				    cnode_get(n->cn_kids[i], "name"),
				    "%s.name: duplicate tool \"%s\" (first in "
				    "%s[%zu])", tpath, rl->crl_tools[i].ctl_name,
				    path, j);
	}
	return 0;
}

int
load_rate_limiting(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_ratelimit	*rl = &cf->cf_ratelimit;
	const struct field	 fields[] = {
		{ "shared", F_FN, &rl->crl_shared, load_bucket, 0, 0 },
		{ "perUser", F_FN, &rl->crl_per_user, load_bucket, 0, 0 },
		{ "tools", F_FN, rl, load_tool_limits, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (rl->crl_shared.cb_max == 0 && rl->crl_per_user.cb_max == 0 &&
	    rl->crl_ntools == 0)
		return config_error(ld, n, "%s: expected at least one of "
		    "\"shared\", \"perUser\" or \"tools\"", path);
	rl->crl_enabled = 1;
	return 0;
}

static int
load_audit_types(struct loader *ld, struct cnode *n, const char *path,
    char ***dst, size_t *count)
{
	size_t	 i, j;

	if (load_string_seq(ld, n, path, "a sequence of event types", dst,
	    count) == -1)
		return -1;
	for (i = 0; i < *count; i++) {
		for (j = 0; j < nitems(audit_types); j++)
			if (strcmp((*dst)[i], audit_types[j]) == 0)
				break;
		if (j == nitems(audit_types))
			return config_expected(ld, n->cn_kids[i], path,
			    "an audit event type (mcp_initialize, "
			    "mcp_tool_call, mcp_resource_read, http_request, "
			    "...; see vmcpd.yaml(5))");
	}
	return 0;
}

static int
load_audit_include(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_audit *ca = arg;

	return load_audit_types(ld, n, path, &ca->ca_types, &ca->ca_ntypes);
}

static int
load_audit_exclude(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_audit *ca = arg;

	return load_audit_types(ld, n, path, &ca->ca_exclude,
	    &ca->ca_nexclude);
}

static int
load_audit_component(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_audit	*ca = arg;
	char			*s = NULL;

	if (load_string(ld, n, path, &s) == -1)
		return -1;
	free(ca->ca_component);
	ca->ca_component = s;
	return 0;
}

int
load_audit(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config		*cf = arg;
	struct config_audit	*ca = &cf->cf_audit;
	const struct field	 fields[] = {
		{ "enabled", F_BOOL, &ca->ca_enabled, NULL, 0, 0 },
		{ "logFile", F_STRING, &ca->ca_log_file, NULL, 0, 0 },
		{ "component", F_FN, ca, load_audit_component, 0, 0 },
		{ "eventTypes", F_FN, ca, load_audit_include, 0, 0 },
		{ "excludeEventTypes", F_FN, ca, load_audit_exclude, 0, 0 },
		{ "includeRequestData", F_BOOL, &ca->ca_request_data, NULL,
		    0, 0 },
		{ "includeResponseData", F_NOTYET, NULL, NULL, 0, 0 },
		{ "maxDataSize", F_SIZET, &ca->ca_max_data, NULL, 1,
		    AUDIT_DATA_MAX },
		{ "detectApplicationErrors", F_NOTYET, NULL, NULL, 0, 0 },
		{ "maxDelegationDepth", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (ca->ca_log_file != NULL && ca->ca_log_file[0] != '/')
		return config_error(ld, cnode_get(n, "logFile"), "%s.logFile: "
		    "an absolute path expected", path);
	return 0;
}

int
config_policy_defaults(struct config *cf)
{
	cf->cf_audit.ca_max_data = 1024;
	if ((cf->cf_audit.ca_component = strdup("vmcpd")) == NULL)
		return -1;
	return 0;
}

static void
config_policy_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
config_policy_free(struct config *cf)
{
	size_t i;

	for (i = 0; i < cf->cf_ratelimit.crl_ntools; i++)
		free(cf->cf_ratelimit.crl_tools[i].ctl_name);
	free(cf->cf_ratelimit.crl_tools);
	free(cf->cf_audit.ca_log_file);
	free(cf->cf_audit.ca_component);
	config_policy_strv_free(cf->cf_audit.ca_types, cf->cf_audit.ca_ntypes);
	config_policy_strv_free(cf->cf_audit.ca_exclude,
	    cf->cf_audit.ca_nexclude);
}
