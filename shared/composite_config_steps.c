/*
 * compositeTools[]: one step of a composite: the keys read before the
 * kind is known, each kind's keys (tool, elicitation, forEach with its
 * inner step), onError, and keys that belong to another kind refused
 * where they stand.  Called by composite_config.c's load_composite().
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "shared/composite_io.h"
#include "config_load.h"
#include "composite_load.h"

/* the nodes of one step's keys, read before the kind is known */
struct step_nodes {
	struct cnode	*sn_id, *sn_type, *sn_tool, *sn_args, *sn_cond,
			*sn_deps, *sn_onerror, *sn_timeout, *sn_defaults,
			*sn_message, *sn_schema, *sn_ondecline, *sn_oncancel,
			*sn_collection, *sn_itemvar, *sn_maxpar, *sn_maxiter,
			*sn_step;
};

int
cload_enum(struct loader *ld, struct cnode *n, const char *path,
    const char *const *names, size_t nnames, const char *what, int *dst)
{
	size_t	 i;

	*dst = 0;
	if (n->cn_type == CN_SCALAR)
		for (i = 0; i < nnames; i++)
			if (strcmp(n->cn_str, names[i]) == 0) {
				*dst = (int)i;
				return 0;
			}
	return config_expected(ld, n, path, what);
}

static int
load_count(struct loader *ld, struct cnode *n, const char *path,
    unsigned int min, unsigned int max, unsigned int *dst)
{
	char		 what[64];
	uint64_t	 u;

	(void)snprintf(what, sizeof(what), "an integer from %u to %u", min,
	    max);
	if (load_plain(ld, n, path, what) == -1)
		return -1;
	if (config_parse_uint(n->cn_str, &u) == -1 || u < min || u > max)
		return config_expected(ld, n, path, what);
	*dst = (unsigned int)u;
	return 0;
}

static int
load_onerror(struct loader *ld, struct cnode *n, const char *path,
    struct composite_step *cs)
{
	static const char *const actions[] = { "abort", "continue", "retry" };
	struct cnode	*action = NULL, *count = NULL, *delay = NULL;
	char		 kpath[PATH_MAX_LEN];
	int		 a;
	const struct field fields[] = {
		{ "action", F_FN, &action, cload_grab, 0, 0 },
		{ "retryCount", F_FN, &count, cload_grab, 0, 0 },
		{ "retryDelay", F_FN, &delay, cload_grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "action") == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "action");
	if (cload_enum(ld, action, kpath, actions, nitems(actions),
	    "abort, continue or retry", &a) == -1)
		return -1;
	cs->cs_onerror = (enum composite_onerror)a;
	if (a != COMPOSITE_RETRY && (count != NULL || delay != NULL))
		return config_error(ld, count != NULL ? count : delay,
		    "%s.%s: only with action: retry", path, count != NULL ?
		    "retryCount" : "retryDelay");
	if (a != COMPOSITE_RETRY)
		return 0;
	if (count == NULL)
		return config_error(ld, action, "%s: action: retry needs "
		    "retryCount (1 to %d)", path, COMPOSITE_RETRY_MAX);
	cload_subpath(kpath, sizeof(kpath), path, "retryCount");
	if (load_count(ld, count, kpath, 1, COMPOSITE_RETRY_MAX,
	    &cs->cs_retry_count) == -1)
		return -1;
	cs->cs_retry_delay_ms = COMPOSITE_RETRY_DELAY_MS;
	cload_subpath(kpath, sizeof(kpath), path, "retryDelay");
	if (delay != NULL && load_duration(ld, delay, kpath, 1,
	    &cs->cs_retry_delay_ms) == -1)
		return -1;
	return 0;
}

static int
load_elicit_action(struct loader *ld, struct cnode *n, const char *path,
    enum composite_onerror *dst)
{
	static const char *const actions[] = { "abort", "continue",
	    "skip_remaining" };
	struct cnode	*action = NULL;
	char		 kpath[PATH_MAX_LEN];
	int		 a = 0;
	const struct field fields[] = {
		{ "action", F_FN, &action, cload_grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "action") == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "action");
	if (cload_enum(ld, action, kpath, actions, nitems(actions),
	    "abort, continue or skip_remaining", &a) == -1)
		return -1;
	*dst = a == 0 ? COMPOSITE_ABORT : a == 1 ? COMPOSITE_CONTINUE :
	    COMPOSITE_SKIP_REMAINING;
	return 0;
}

/* a key that applies to other step kinds only */
static int
step_misplaced(struct loader *ld, const struct cnode *step,
    const char *path, const char *kind, const char *const *keys,
    size_t nkeys)
{
	size_t	 i;
	struct cnode *k;

	for (i = 0; i < nkeys; i++)
		if ((k = cnode_get_key(step, keys[i])) != NULL)
			return config_error(ld, k, "%s.%s: not a key of %s "
			    "steps", path, keys[i], kind);
	return 0;
}

static int
load_step_tool(struct cload *cl, struct cnode *n, const char *path,
    struct step_nodes *sn, struct composite_step *cs)
{
	static const char *const other[] = { "message", "schema",
	    "onDecline", "onCancel", "collection", "itemVar", "maxParallel",
	    "maxIterations", "step" };
	struct loader	*ld = cl->cl_ld;
	char		 kpath[PATH_MAX_LEN];
	const char	*p;
	size_t		 k = 0;

	if (step_misplaced(ld, n, path, "tool", other, nitems(other)) == -1)
		return -1;
	if (sn->sn_tool == NULL)
		return config_error(ld, n, "%s: missing required key \"tool\"", path);
	cload_subpath(kpath, sizeof(kpath), path, "tool");
	if (load_string(ld, sn->sn_tool, kpath, &cs->cs_tool) == -1)
		return -1;
	for (p = cs->cs_tool; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && (p == cs->cs_tool ||
		    strchr("._-", *p) == NULL))
			return config_expected(ld, sn->sn_tool, kpath,
			    "a tool name (<backend>.<tool> or an advertised "
			    "name: letters, digits, \".\", \"_\", \"-\")");
	if (sn->sn_args == NULL)
		return 0;
	cload_subpath(kpath, sizeof(kpath), path, "arguments");
	if (cload_json(ld, sn->sn_args, kpath, &cs->cs_args.ct_json, 1) == -1 ||
	    cload_tvalue_compile(ld, sn->sn_args, kpath, &cs->cs_args) == -1)
		return -1;
	return cload_tvalue_refs(cl, sn->sn_args, kpath, &cs->cs_args, &k);
}

static int
load_step_elicit(struct cload *cl, struct cnode *n, const char *path,
    struct step_nodes *sn, struct composite_step *cs)
{
	static const char *const other[] = { "tool", "arguments", "onError",
	    "collection", "itemVar", "maxParallel", "maxIterations", "step" };
	struct loader	*ld = cl->cl_ld;
	char		 kpath[PATH_MAX_LEN];

	if (step_misplaced(ld, n, path, "elicitation", other,
	    nitems(other)) == -1)
		return -1;
	if (sn->sn_message == NULL || sn->sn_schema == NULL)
		return config_error(ld, n, "%s: missing required key \"%s\"", path,
		    sn->sn_message == NULL ? "message" : "schema");
	cload_subpath(kpath, sizeof(kpath), path, "message");
	if (cload_tmpl(cl, sn->sn_message, kpath, &cs->cs_message) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "schema");
	if (cload_json(ld, sn->sn_schema, kpath, &cs->cs_schema, 1) == -1)
		return -1;
	if (composite_json_depth(cs->cs_schema) > COMPOSITE_SCHEMA_DEPTH ||
	    composite_json_size(cs->cs_schema) > COMPOSITE_SCHEMA_MAX)
		return config_error(ld, sn->sn_schema, "%s: a schema nested "
		    "deeper than %d or larger than %d KiB", kpath,
		    COMPOSITE_SCHEMA_DEPTH, COMPOSITE_SCHEMA_MAX / 1024);
	if (!json_is_string(json_object_get(cs->cs_schema, "type")) ||
	    strcmp(json_string_value(json_object_get(cs->cs_schema, "type")),
	    "object") != 0)
		return config_error(ld, sn->sn_schema, "%s: expected a JSON "
		    "Schema with type: object", kpath);
	cload_subpath(kpath, sizeof(kpath), path, "onDecline");
	if (sn->sn_ondecline != NULL && load_elicit_action(ld,
	    sn->sn_ondecline, kpath, &cs->cs_ondecline) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "onCancel");
	if (sn->sn_oncancel != NULL && load_elicit_action(ld,
	    sn->sn_oncancel, kpath, &cs->cs_oncancel) == -1)
		return -1;
	if (cs->cs_timeout_ms > COMPOSITE_ELICIT_TIMEOUT_MAX_MS)
		return config_error(ld, sn->sn_timeout, "%s.timeout: at most "
		    "10m for an elicitation step", path);
	return 0;
}

static int
load_step_foreach(struct cload *cl, struct cnode *n, const char *path,
    struct step_nodes *sn, struct composite_step *cs)
{
	static const char *const other[] = { "tool", "arguments", "message",
	    "schema", "onDecline", "onCancel" };
	struct loader	*ld = cl->cl_ld;
	char		 kpath[PATH_MAX_LEN];
	int		 rc;

	if (step_misplaced(ld, n, path, "forEach", other, nitems(other)) == -1)
		return -1;
	if (sn->sn_collection == NULL || sn->sn_step == NULL)
		return config_error(ld, n, "%s: missing required key \"%s\"", path,
		    sn->sn_collection == NULL ? "collection" : "step");
	cload_subpath(kpath, sizeof(kpath), path, "collection");
	if (cload_tmpl(cl, sn->sn_collection, kpath, &cs->cs_collection) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "itemVar");
	if (sn->sn_itemvar != NULL) {
		if (load_string(ld, sn->sn_itemvar, kpath,
		    &cs->cs_itemvar) == -1)
			return -1;
		if (!config_env_name(cs->cs_itemvar) ||
		    strcmp(cs->cs_itemvar, "index") == 0)
			return config_expected(ld, sn->sn_itemvar, kpath,
			    "an identifier other than \"index\"");
	} else if ((cs->cs_itemvar = strdup("item")) == NULL)
		return config_error(ld, NULL, "out of memory");
	cs->cs_max_parallel = 10;
	cs->cs_max_iterations = 100;
	cload_subpath(kpath, sizeof(kpath), path, "maxParallel");
	if (sn->sn_maxpar != NULL && load_count(ld, sn->sn_maxpar, kpath, 1,
	    COMPOSITE_PARALLEL_MAX, &cs->cs_max_parallel) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "maxIterations");
	if (sn->sn_maxiter != NULL && load_count(ld, sn->sn_maxiter, kpath, 1,
	    COMPOSITE_ITERATIONS_MAX, &cs->cs_max_iterations) == -1)
		return -1;
	if ((cs->cs_inner = calloc(1, sizeof(*cs->cs_inner))) == NULL)
		return config_error(ld, NULL, "out of memory");
	cload_subpath(kpath, sizeof(kpath), path, "step");
	cl->cl_inner = 1;
	rc = cload_step(cl, sn->sn_step, kpath, cs->cs_inner);
	cl->cl_inner = 0;
	if (rc == -1)
		return -1;
	if (cs->cs_inner->cs_kind != COMPOSITE_TOOL)
		return config_error(ld, sn->sn_step, "%s: a forEach step runs "
		    "a tool step", kpath);
	return 0;
}

int
cload_step(struct cload *cl, struct cnode *n, const char *path,
    struct composite_step *cs)
{
	static const char *const kinds[] = { "tool", "elicitation",
	    "forEach" };
	/* the forEach step's own onError and condition apply, not these */
	static const char *const inner_bad[] = { "id", "dependsOn",
	    "defaultResults", "condition", "onError" };
	struct loader		*ld = cl->cl_ld;
	struct step_nodes	 sn;
	char			 kpath[PATH_MAX_LEN];
	int			 kind = 0;
	const struct field fields[] = {
		{ "id", F_FN, &sn.sn_id, cload_grab, 0, 0 },
		{ "type", F_FN, &sn.sn_type, cload_grab, 0, 0 },
		{ "tool", F_FN, &sn.sn_tool, cload_grab, 0, 0 },
		{ "arguments", F_FN, &sn.sn_args, cload_grab, 0, 0 },
		{ "condition", F_FN, &sn.sn_cond, cload_grab, 0, 0 },
		{ "dependsOn", F_FN, &sn.sn_deps, cload_grab, 0, 0 },
		{ "onError", F_FN, &sn.sn_onerror, cload_grab, 0, 0 },
		{ "timeout", F_FN, &sn.sn_timeout, cload_grab, 0, 0 },
		{ "defaultResults", F_FN, &sn.sn_defaults, cload_grab, 0, 0 },
		{ "message", F_FN, &sn.sn_message, cload_grab, 0, 0 },
		{ "schema", F_FN, &sn.sn_schema, cload_grab, 0, 0 },
		{ "onDecline", F_FN, &sn.sn_ondecline, cload_grab, 0, 0 },
		{ "onCancel", F_FN, &sn.sn_oncancel, cload_grab, 0, 0 },
		{ "collection", F_FN, &sn.sn_collection, cload_grab, 0, 0 },
		{ "itemVar", F_FN, &sn.sn_itemvar, cload_grab, 0, 0 },
		{ "maxParallel", F_FN, &sn.sn_maxpar, cload_grab, 0, 0 },
		{ "maxIterations", F_FN, &sn.sn_maxiter, cload_grab, 0, 0 },
		{ "step", F_FN, &sn.sn_step, cload_grab, 0, 0 },
	};

	memset(&sn, 0, sizeof(sn));
	cs->cs_line = n->cn_line;
	cs->cs_col = n->cn_col;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cl->cl_inner) {
		if (step_misplaced(ld, n, path, "forEach inner", inner_bad,
		    nitems(inner_bad)) == -1)
			return -1;
	} else {
		if (config_require(ld, n, path, "id") == -1)
			return -1;
		cload_subpath(kpath, sizeof(kpath), path, "id");
		if (load_string(ld, sn.sn_id, kpath, &cs->cs_id) == -1)
			return -1;
	}
	if (sn.sn_type != NULL) {
		cload_subpath(kpath, sizeof(kpath), path, "type");
		if (cload_enum(ld, sn.sn_type, kpath, kinds, nitems(kinds),
		    "tool, elicitation or forEach", &kind) == -1)
			return -1;
	} else if (sn.sn_tool != NULL && sn.sn_message != NULL)
		return config_error(ld, n, "%s: both tool and message: say "
		    "which with type: tool or type: elicitation", path);
	else
		kind = sn.sn_message != NULL ? COMPOSITE_ELICITATION :
		    sn.sn_collection != NULL ? COMPOSITE_FOREACH :
		    COMPOSITE_TOOL;
	cs->cs_kind = (enum composite_kind)kind;
	cs->cs_onerror = COMPOSITE_ABORT;
	cs->cs_ondecline = cs->cs_oncancel = COMPOSITE_ABORT;
	cs->cs_timeout_ms = COMPOSITE_STEP_TIMEOUT_MS;
	cload_subpath(kpath, sizeof(kpath), path, "timeout");
	if (sn.sn_timeout != NULL && load_duration(ld, sn.sn_timeout, kpath,
	    1, &cs->cs_timeout_ms) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "condition");
	if (sn.sn_cond != NULL && cload_tmpl(cl, sn.sn_cond, kpath,
	    &cs->cs_cond) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "onError");
	if (sn.sn_onerror != NULL && load_onerror(ld, sn.sn_onerror, kpath,
	    cs) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "defaultResults");
	if (sn.sn_defaults != NULL && cload_json(ld, sn.sn_defaults, kpath,
	    &cs->cs_defaults, 1) == -1)
		return -1;
	if (sn.sn_deps != NULL) {
		cload_subpath(kpath, sizeof(kpath), path, "dependsOn");
		if (sn.sn_deps->cn_type != CN_SEQ)
			return config_expected(ld, sn.sn_deps, kpath,
			    "a sequence of step ids");
		cl->cl_depnodes[cl->cl_step] = sn.sn_deps;
	}
	switch (cs->cs_kind) {
	case COMPOSITE_TOOL:
		return load_step_tool(cl, n, path, &sn, cs);
	case COMPOSITE_ELICITATION:
		return load_step_elicit(cl, n, path, &sn, cs);
	default:
		return load_step_foreach(cl, n, path, &sn, cs);
	}
}
