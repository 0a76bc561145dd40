/*
 * vmcpd.yaml's aggregation section: conflict resolution (prefix,
 * priority, manual), per-workload tools with their filters and
 * overrides (names, descriptions, annotations), and, once the backends
 * are known, the check that every name in it is a configured backend.
 * Called through struct field (config.c's load_root()); the loader's
 * internals are in config_load.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "config.h"
#include "config_load.h"

/*
 * aggregation
 */

static const char *
config_conflict_name(enum config_conflict c)
{
	switch (c) {
	case CONFIG_CONFLICT_PREFIX:
		return "prefix";
	case CONFIG_CONFLICT_PRIORITY:
		return "priority";
	case CONFIG_CONFLICT_MANUAL:
		return "manual";
	}
	return "unknown";
}

static int
load_conflict(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "prefix", CONFIG_CONFLICT_PREFIX },
		{ "priority", CONFIG_CONFLICT_PRIORITY },
		{ "manual", CONFIG_CONFLICT_MANUAL },
	};
	struct config_aggregation	*ca = arg;
	int				 c = 0;

	if (load_choice(ld, v, path, ch, nitems(ch),
	    "prefix, priority or manual", &c) == -1)
		return -1;
	ca->ca_conflict = (enum config_conflict)c;
	return 0;
}

static int
load_prefix_mode(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "always", CONFIG_PREFIX_ALWAYS },
		{ "onConflict", CONFIG_PREFIX_ON_CONFLICT },
	};
	struct config_aggregation	*ca = arg;
	int				 m = 0;

	if (load_choice(ld, v, path, ch, nitems(ch), "always or onConflict",
	    &m) == -1)
		return -1;
	ca->ca_prefix_mode = (enum config_prefix_mode)m;
	return 0;
}

static int
load_pin_mode(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "off", CONFIG_PIN_OFF },
		{ "warn", CONFIG_PIN_WARN },
		{ "enforce", CONFIG_PIN_ENFORCE },
	};
	struct config_aggregation	*ca = arg;
	int				 m = 0;

	if (load_choice(ld, v, path, ch, nitems(ch), "off, warn or enforce",
	    &m) == -1)
		return -1;
	ca->ca_pin_mode = (enum config_pin_mode)m;
	return 0;
}

/* aggregation.pinning: definitions pinned against silent change */
static int
load_pinning(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	const struct field fields[] = {
		{ "mode", F_FN, ca, load_pin_mode, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

/* "" is the reference's spelling of the default */
static int
load_visibility(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "allow", 0 },
		{ "deny", 1 },
		{ "", 0 },
	};
	struct config_aggregation	*ca = arg;

	return load_choice(ld, v, path, ch, nitems(ch), "allow, deny or \"\"",
	    &ca->ca_default_deny);
}

/* names now, whether they are backends once the backends are known */
static int
load_priority(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;

	ld->ld_priority = n;
	return load_string_seq(ld, n, path, "a sequence of backend names",
	    &ca->ca_priority, &ca->ca_npriority);
}

static int
load_conflict_config(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	const struct field fields[] = {
		{ "prefixFormat", F_STRING, &ca->ca_prefix_format, NULL, 0, 0 },
		{ "prefixMode", F_FN, ca, load_prefix_mode, 0, 0 },
		{ "priorityOrder", F_FN, ca, load_priority, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_filter(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_workload	*cw = arg;

	return load_string_seq(ld, n, path, "a sequence of tool names",
	    &cw->cw_filter, &cw->cw_nfilter);
}

/* only the hints given, so that the others stay the backend's */
int
load_annotations(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	static const char *const hints[] = { "readOnlyHint",
	    "destructiveHint", "idempotentHint", "openWorldHint" };
	struct config_override	*co = arg;
	char			*title = NULL;
	int			 val[nitems(hints)] = { 0 };
	const struct field fields[] = {
		{ "title", F_STRING, &title, NULL, 0, 0 },
		{ hints[0], F_BOOL, &val[0], NULL, 0, 0 },
		{ hints[1], F_BOOL, &val[1], NULL, 0, 0 },
		{ hints[2], F_BOOL, &val[2], NULL, 0, 0 },
		{ hints[3], F_BOOL, &val[3], NULL, 0, 0 },
	};
	size_t			 i;

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		goto fail;
	if (n->cn_nkids == 0) {
		config_error(ld, n, "%s: expected at least one of title, "
		    "readOnlyHint, destructiveHint, idempotentHint or "
		    "openWorldHint, found an empty mapping", path);
		goto fail;
	}
	if ((co->co_annotations = json_object()) == NULL ||
	    (title != NULL && json_object_set_new(co->co_annotations,
	    "title", json_string(title)) == -1))
		goto oom;
	for (i = 0; i < nitems(hints); i++)
		if (cnode_get(n, hints[i]) != NULL &&
		    json_object_set_new(co->co_annotations, hints[i],
		    json_boolean(val[i])) == -1)
			goto oom;
	free(title);
	return 0;

oom:
	config_error(ld, NULL, "out of memory");
fail:
	free(title);
	return -1;
}

static int
load_override(struct loader *ld, struct cnode *n, const char *path,
    struct config_override *co)
{
	const struct field fields[] = {
		{ "name", F_STRING, &co->co_name, NULL, 0, 0 },
		{ "description", F_STRING, &co->co_description, NULL, 0, 0 },
		{ "annotations", F_FN, co, load_annotations, 0, 0 },
	};
	char		 kpath[PATH_MAX_LEN];

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	/* the name clients see: one the view would advertise */
	if (co->co_name != NULL && !proto_tool_name_valid(co->co_name,
	    strlen(co->co_name))) {
		config_path(kpath, sizeof(kpath), path, cnode_get_key(n,
		    "name"));
		return config_expected(ld, cnode_get(n, "name"), kpath,
		    "a tool name (1 to 128 letters, digits, \".\", \"_\", "
		    "\"-\")");
	}
	/* unlike the reference, annotations alone are an override */
	if (n->cn_nkids == 0)
		return config_error(ld, n, "%s: expected name, description or "
		    "annotations, found an empty mapping", path);
	return 0;
}

/* two tools of one backend renamed alike would be advertised twice */
static int
config_override_names(struct loader *ld, struct cnode *n, const char *path)
{
	struct cnode	**names, *dup, *first, *v;
	char		 kpath[PATH_MAX_LEN];
	size_t		 i, nnames = 0;

	if ((names = reallocarray(NULL, n->cn_nkids / 2 + 1,
	    sizeof(*names))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if ((v = cnode_get(n->cn_kids[i + 1], "name")) != NULL)
			names[nnames++] = v;
	config_find_dup(names, nnames, &dup, &first);
	free(names);
	if (dup == NULL)
		return 0;
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if (cnode_get(n->cn_kids[i + 1], "name") == dup)
			break;
	config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
	return config_error(ld, dup, "%s.name: duplicate new name \"%s\" "
	    "(first at line %zu, column %zu)", kpath, dup->cn_str,
	    first->cn_line, first->cn_col);
}

static int
load_overrides(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_workload	*cw = arg;
	struct config_override	*co;
	struct cnode		*key;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if ((cw->cw_overrides = calloc(n->cn_nkids / 2 + 1,
	    sizeof(*cw->cw_overrides))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		config_path(kpath, sizeof(kpath), path, key);
		if (key->cn_len == 0 || cnode_is_null(key))
			return config_expected(ld, key, kpath, "a tool name");
		co = &cw->cw_overrides[cw->cw_noverrides++];
		if ((co->co_tool = strdup(key->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
		if (load_override(ld, n->cn_kids[i + 1], kpath, co) == -1)
			return -1;
	}
	return config_override_names(ld, n, path);
}

static int
config_cmp_tool(const void *a, const void *b)
{
	const struct config_override *oa = *(struct config_override *const *)a;
	const struct config_override *ob = *(struct config_override *const *)b;

	return strcmp(oa->co_tool, ob->co_tool);
}

static int
config_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The filter takes names after the overrides: naming a tool that an
 * override renames matches nothing (the reference's own example does
 * this).  The name is still right if another tool is renamed to it.
 */
static int
config_filter_renamed(struct loader *ld, struct cnode *n, const char *path,
    const struct config_workload *cw)
{
	struct config_override	**tools = NULL, key, *kp, **found;
	struct cnode		*fn;
	char			**names = NULL;
	const char		*f;
	size_t			 i, nnames = 0;
	int			 rv = -1;

	fn = cnode_get(n, "filter");
	if (cw->cw_nfilter == 0 || cw->cw_noverrides == 0)
		return 0;
	if ((tools = reallocarray(NULL, cw->cw_noverrides,
	    sizeof(*tools))) == NULL ||
	    (names = reallocarray(NULL, cw->cw_noverrides,
	    sizeof(*names))) == NULL) {
		config_error(ld, NULL, "out of memory");
		goto done;
	}
	for (i = 0; i < cw->cw_noverrides; i++) {
		tools[i] = &cw->cw_overrides[i];
		if (cw->cw_overrides[i].co_name != NULL)
			names[nnames++] = cw->cw_overrides[i].co_name;
	}
	qsort(tools, cw->cw_noverrides, sizeof(*tools), config_cmp_tool);
	qsort(names, nnames, sizeof(*names), config_cmp_str);
	for (i = 0; i < cw->cw_nfilter; i++) {
		f = cw->cw_filter[i];
		key.co_tool = (char *)f;
		kp = &key;
		found = bsearch(&kp, tools, cw->cw_noverrides, sizeof(*tools),
		    config_cmp_tool);
		if (found == NULL || (*found)->co_name == NULL ||
		    strcmp((*found)->co_name, f) == 0 ||
		    bsearch(&f, names, nnames, sizeof(*names),
		    config_cmp_str) != NULL)
			continue;
		config_error(ld, fn->cn_kids[i], "%s.filter[%zu]: \"%s\" is "
		    "renamed to \"%s\" by overrides, and the filter takes the "
		    "new name", path, i, f, (*found)->co_name);
		goto done;
	}
	rv = 0;

done:
	free(tools);
	free(names);
	return rv;
}

static int
load_workload(struct loader *ld, struct cnode *n, const char *path,
    struct config_workload *cw)
{
	const struct field fields[] = {
		{ "workload", F_STRING, &cw->cw_name, NULL, 0, 0 },
		{ "filter", F_FN, cw, load_filter, 0, 0 },
		{ "excludeAll", F_BOOL, &cw->cw_exclude_all, NULL, 0, 0 },
		{ "overrides", F_FN, cw, load_overrides, 0, 0 },
		{ "toolConfigRef", F_K8SONLY, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "workload") == -1)
		return -1;
	return config_filter_renamed(ld, n, path, cw);
}

static int
load_tools(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_aggregation	*ca = arg;
	char				 ipath[PATH_MAX_LEN];
	size_t				 i;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path,
		    "a sequence of per-backend tool settings");
	if ((ca->ca_workloads = calloc(n->cn_nkids + 1,
	    sizeof(*ca->ca_workloads))) == NULL)
		return config_error(ld, NULL, "out of memory");
	ld->ld_tools = n;
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (load_workload(ld, n->cn_kids[i], ipath,
		    &ca->ca_workloads[ca->ca_nworkloads++]) == -1)
			return -1;
	}
	return 0;
}

int
load_aggregation(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	struct cnode			*crc, *key;
	const struct field fields[] = {
		{ "conflictResolution", F_FN, ca, load_conflict, 0, 0 },
		{ "conflictResolutionConfig", F_FN, ca, load_conflict_config,
		    0, 0 },
		{ "excludeAllTools", F_BOOL, &ca->ca_exclude_all_tools, NULL,
		    0, 0 },
		{ "defaultToolVisibility", F_FN, ca, load_visibility, 0, 0 },
		{ "tools", F_FN, ca, load_tools, 0, 0 },
		{ "cacheTtl", F_DURATION, &ca->ca_cache_ttl_ms, NULL, 1, 0 },
		{ "pageSize", F_UINT, &ca->ca_page_size, NULL, 1, 10000 },
		{ "maxBackendPages", F_UINT, &ca->ca_max_backend_pages, NULL,
		    1, 10000 },
		{ "maxBackendListSize", F_SIZET, &ca->ca_max_backend_list,
		    NULL, 64 * KIB, GIB },
		{ "maxDescriptionLength", F_UINT, &ca->ca_max_desc, NULL, 16,
		    16777216 },
		{ "maxTitleLength", F_UINT, &ca->ca_max_title, NULL, 16,
		    65536 },
		{ "pinning", F_FN, ca, load_pinning, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	crc = cnode_get(n, "conflictResolutionConfig");
	if (ca->ca_conflict != CONFIG_CONFLICT_PRIORITY) {
		if ((key = cnode_get_key(crc, "priorityOrder")) == NULL)
			return 0;
		return config_error(ld, key, "%s.conflictResolutionConfig."
		    "priorityOrder: not allowed with conflictResolution %s "
		    "(only priority uses it)", path,
		    config_conflict_name(ca->ca_conflict));
	}
	if (crc == NULL)
		return config_error(ld, n, "%s: missing required key "
		    "\"conflictResolutionConfig\" for conflictResolution "
		    "priority", path);
	if (ld->ld_priority == NULL)
		return config_error(ld, crc, "%s.conflictResolutionConfig: "
		    "missing required key \"priorityOrder\" for "
		    "conflictResolution priority", path);
	if (ca->ca_npriority == 0)
		return config_error(ld, ld->ld_priority, "%s."
		    "conflictResolutionConfig.priorityOrder: expected at least "
		    "one backend for conflictResolution priority, found an "
		    "empty sequence", path);
	return 0;
}

#define PRIORITY_PATH	"aggregation.conflictResolutionConfig.priorityOrder"

/* names in the aggregation block are configured backends, none twice */
int
config_resolve_aggregation(struct loader *ld)
{
	struct config			*cf = ld->ld_cf;
	const struct config_aggregation	*ca = &cf->cf_agg;
	struct cnode			*v;
	char				 names[CONFIG_ERR_MAX];
	size_t				 i, j;

	config_backend_names(cf, names, sizeof(names));
	for (i = 0; i < ca->ca_npriority; i++) {
		v = ld->ld_priority->cn_kids[i];
		if (config_backend_find(cf, ca->ca_priority[i]) == NULL)
			return config_error(ld, v, PRIORITY_PATH "[%zu]: no "
			    "such backend \"%s\" (configured backends: %s)", i,
			    ca->ca_priority[i], names);
		for (j = 0; j < i; j++)
			if (strcmp(ca->ca_priority[j],
			    ca->ca_priority[i]) == 0)
				return config_error(ld, v, PRIORITY_PATH
				    "[%zu]: duplicate backend \"%s\" (first in "
				    PRIORITY_PATH "[%zu])", i,
				    ca->ca_priority[i], j);
	}
	for (i = 0; i < ca->ca_nworkloads; i++) {
		v = cnode_get(ld->ld_tools->cn_kids[i], "workload");
		if (config_backend_find(cf, ca->ca_workloads[i].cw_name) ==
		    NULL)
			return config_error(ld, v, "aggregation.tools[%zu]."
			    "workload: no such backend \"%s\" (configured "
			    "backends: %s)", i, ca->ca_workloads[i].cw_name,
			    names);
		for (j = 0; j < i; j++)
			if (strcmp(ca->ca_workloads[j].cw_name,
			    ca->ca_workloads[i].cw_name) == 0)
				return config_error(ld, v, "aggregation."
				    "tools[%zu].workload: duplicate workload "
				    "\"%s\" (first in aggregation.tools[%zu])",
				    i, ca->ca_workloads[i].cw_name, j);
	}
	/* the reference's rule: a backend with no tools cannot win */
	if (!ca->ca_default_deny || ca->ca_conflict != CONFIG_CONFLICT_PRIORITY)
		return 0;
	for (i = 0; i < ca->ca_npriority; i++) {
		for (j = 0; j < ca->ca_nworkloads; j++)
			if (strcmp(ca->ca_workloads[j].cw_name,
			    ca->ca_priority[i]) == 0)
				break;
		if (j == ca->ca_nworkloads)
			return config_error(ld, ld->ld_priority->cn_kids[i],
			    PRIORITY_PATH "[%zu]: backend \"%s\" has no "
			    "aggregation.tools entry, so with "
			    "defaultToolVisibility deny it has no tools to "
			    "give priority to", i, ca->ca_priority[i]);
	}
	return 0;
}
