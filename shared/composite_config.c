/*
 * compositeTools[]: the reference vMCP's workflow definitions, strictly
 * loaded (its keys, its step kinds), templates compiled, the step graph
 * checked (unknown ids, cycles, templates that read a step that is not
 * among their dependencies, .params keys that parameters does not
 * declare) with file:line:col messages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proto/headers.h"
#include "shared/composite.h"
#include "shared/composite_io.h"
#include "config_load.h"

/* the nodes of one step's keys, read before the kind is known */
struct step_nodes {
	struct cnode	*sn_id, *sn_type, *sn_tool, *sn_args, *sn_cond,
			*sn_deps, *sn_onerror, *sn_timeout, *sn_defaults,
			*sn_message, *sn_schema, *sn_ondecline, *sn_oncancel,
			*sn_collection, *sn_itemvar, *sn_maxpar, *sn_maxiter,
			*sn_step;
};

/* path.key; a path too long for messages is cut, never overrun */
static void
subpath(char *dst, size_t len, const char *path, const char *key)
{
	if (snprintf(dst, len, "%s.%s", path, key) >= (int)len)
		dst[len - 1] = '\0';
}

static int
grab(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	(void)ld;
	(void)path;
	*(struct cnode **)arg = v;
	return 0;
}

/* a YAML node as JSON: plain null, booleans and numbers are typed */
static json_t *
cnode_json(const struct cnode *n)
{
	json_t		*j, *k;
	char		*end;
	long long	 ll;
	double		 d;
	size_t		 i;

	switch (n->cn_type) {
	case CN_SCALAR:
		if (!n->cn_plain)
			return json_stringn(n->cn_str, n->cn_len);
		if (cnode_is_null(n))
			return json_null();
		if (strcmp(n->cn_str, "true") == 0)
			return json_true();
		if (strcmp(n->cn_str, "false") == 0)
			return json_false();
		if (n->cn_len > 0 && (isdigit((unsigned char)n->cn_str[0]) ||
		    ((n->cn_str[0] == '-' || n->cn_str[0] == '+') &&
		    n->cn_len > 1))) {
			errno = 0;
			ll = strtoll(n->cn_str, &end, 10);
			if (*end == '\0' && errno == 0)
				return json_integer(ll);
			d = strtod(n->cn_str, &end);
			if (*end == '\0')
				return json_real(d);
		}
		return json_stringn(n->cn_str, n->cn_len);
	case CN_SEQ:
		if ((j = json_array()) == NULL)
			return NULL;
		for (i = 0; i < n->cn_nkids; i++)
			if ((k = cnode_json(n->cn_kids[i])) == NULL ||
			    json_array_append_new(j, k) == -1)
				goto fail;
		return j;
	default:
		if ((j = json_object()) == NULL)
			return NULL;
		for (i = 0; i + 1 < n->cn_nkids; i += 2)
			if ((k = cnode_json(n->cn_kids[i + 1])) == NULL ||
			    json_object_setn_new(j, n->cn_kids[i]->cn_str,
			    n->cn_kids[i]->cn_len, k) == -1)
				goto fail;
		return j;
	}
fail:
	json_decref(j);
	return NULL;
}

/* a scalar that cnode_json() makes a string */
static int
cnode_is_text(const struct cnode *n)
{
	json_t	*j;
	int	 rc;

	if ((j = cnode_json(n)) == NULL)
		return 0;
	rc = json_is_string(j);
	json_decref(j);
	return rc;
}

static int
load_json(struct loader *ld, struct cnode *n, const char *path, json_t **dst,
    int want_map)
{
	if (want_map && load_map_check(ld, n, path) == -1)
		return -1;
	if ((*dst = cnode_json(n)) == NULL)
		return config_error(ld, n, "%s: not valid UTF-8 or out of memory",
		    path);
	return 0;
}

/* the position of byte off of a scalar's text, for template errors */
static void
cnode_offset_pos(const struct cnode *n, size_t off, size_t *line,
    size_t *col)
{
	size_t	 i, nl = 0, last = 0;

	for (i = 0; i < off && i < n->cn_len; i++)
		if (n->cn_str[i] == '\n') {
			nl++;
			last = i + 1;
		}
	*line = n->cn_line + nl;
	*col = nl == 0 ? n->cn_col + off + (n->cn_plain ? 0 : 1) :
	    off - last + 1;
}

static int
load_tmpl(struct loader *ld, struct cnode *n, const char *path,
    struct tmpl **dst)
{
	char	 err[TMPL_ERR_MAX];
	size_t	 off = 0, line, col;

	if (n->cn_type != CN_SCALAR || cnode_is_null(n))
		return config_expected(ld, n, path, "a template string");
	if ((*dst = tmpl_compile(n->cn_str, n->cn_len, err, sizeof(err),
	    &off)) == NULL) {
		cnode_offset_pos(n, off, &line, &col);
		return config_errorat(ld, line, col, "%s: template: %s", path,
		    err);
	}
	return 0;
}

/* every string leaf of v, in the order composite_tvalue_expand() reads */
static int
tvalue_compile(struct loader *ld, const struct cnode *n, const char *path,
    struct composite_tvalue *tv)
{
	struct tmpl	*t, **nt;
	char		 kpath[PATH_MAX_LEN];
	size_t		 i;

	switch (n->cn_type) {
	case CN_SCALAR:
		if (!cnode_is_text(n))
			return 0;
		if (load_tmpl(ld, (struct cnode *)n, path, &t) == -1)
			return -1;
		if ((nt = reallocarray(tv->ct_tmpl, tv->ct_ntmpl + 1,
		    sizeof(*nt))) == NULL) {
			tmpl_free(t);
			return config_error(ld, NULL, "out of memory");
		}
		nt[tv->ct_ntmpl++] = t;
		tv->ct_tmpl = nt;
		return 0;
	case CN_SEQ:
		for (i = 0; i < n->cn_nkids; i++) {
			(void)snprintf(kpath, sizeof(kpath), "%s[%zu]", path,
			    i);
			if (tvalue_compile(ld, n->cn_kids[i], kpath, tv) == -1)
				return -1;
		}
		return 0;
	default:
		if (load_map_check(ld, (struct cnode *)n, path) == -1)
			return -1;
		for (i = 0; i + 1 < n->cn_nkids; i += 2) {
			config_path(kpath, sizeof(kpath), path,
			    n->cn_kids[i]);
			if (tvalue_compile(ld, n->cn_kids[i + 1], kpath,
			    tv) == -1)
				return -1;
		}
		return 0;
	}
}

/* one compiled template and where it came from, for the graph checks */
struct tref {
	const struct tmpl	*tr_tmpl;
	const struct cnode	*tr_node;
	char			 tr_path[PATH_MAX_LEN];
	size_t			 tr_step;	/* SIZE_MAX: the output */
	int			 tr_inner;	/* in a forEach inner step */
};

struct cload {
	struct loader		*cl_ld;
	struct composite	*cl_co;
	struct tref		*cl_refs;
	size_t			 cl_nrefs;
	size_t			 cl_step;	/* being loaded */
	int			 cl_inner;
	struct cnode		**cl_depnodes;	/* per step: its dependsOn */
	uint8_t			*cl_anc;	/* [i * n + j]: j before i */
};

static int
cload_ref(struct cload *cl, const struct tmpl *t, const struct cnode *n,
    const char *path)
{
	struct tref	*nr;

	if ((nr = reallocarray(cl->cl_refs, cl->cl_nrefs + 1,
	    sizeof(*nr))) == NULL)
		return config_error(cl->cl_ld, NULL, "out of memory");
	cl->cl_refs = nr;
	nr += cl->cl_nrefs++;
	nr->tr_tmpl = t;
	nr->tr_node = n;
	(void)snprintf(nr->tr_path, sizeof(nr->tr_path), "%s", path);
	nr->tr_step = cl->cl_step;
	nr->tr_inner = cl->cl_inner;
	return 0;
}

static int
cload_tmpl(struct cload *cl, struct cnode *n, const char *path,
    struct tmpl **dst)
{
	if (load_tmpl(cl->cl_ld, n, path, dst) == -1)
		return -1;
	return cload_ref(cl, *dst, n, path);
}

/* the leaves of tv, registered in order, with their nodes */
static int
cload_tvalue_refs(struct cload *cl, const struct cnode *n, const char *path,
    const struct composite_tvalue *tv, size_t *k)
{
	char	 kpath[PATH_MAX_LEN];
	size_t	 i;

	if (n->cn_type == CN_SCALAR) {
		if (cnode_is_text(n))
			return cload_ref(cl, tv->ct_tmpl[(*k)++], n, path);
		return 0;
	}
	for (i = 0; i < n->cn_nkids; i++) {
		if (n->cn_type == CN_MAP && i % 2 == 0)
			continue;
		if (n->cn_type == CN_MAP)
			config_path(kpath, sizeof(kpath), path,
			    n->cn_kids[i - 1]);
		else
			(void)snprintf(kpath, sizeof(kpath), "%s[%zu]", path,
			    i);
		if (cload_tvalue_refs(cl, n->cn_kids[i], kpath, tv, k) == -1)
			return -1;
	}
	return 0;
}

static int
load_enum(struct loader *ld, struct cnode *n, const char *path,
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
		{ "action", F_FN, &action, grab, 0, 0 },
		{ "retryCount", F_FN, &count, grab, 0, 0 },
		{ "retryDelay", F_FN, &delay, grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "action") == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "action");
	if (load_enum(ld, action, kpath, actions, nitems(actions),
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
	subpath(kpath, sizeof(kpath), path, "retryCount");
	if (load_count(ld, count, kpath, 1, COMPOSITE_RETRY_MAX,
	    &cs->cs_retry_count) == -1)
		return -1;
	cs->cs_retry_delay_ms = COMPOSITE_RETRY_DELAY_MS;
	subpath(kpath, sizeof(kpath), path, "retryDelay");
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
		{ "action", F_FN, &action, grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "action") == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "action");
	if (load_enum(ld, action, kpath, actions, nitems(actions),
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

static int	load_step(struct cload *, struct cnode *, const char *,
		    struct composite_step *);

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
	subpath(kpath, sizeof(kpath), path, "tool");
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
	subpath(kpath, sizeof(kpath), path, "arguments");
	if (load_json(ld, sn->sn_args, kpath, &cs->cs_args.ct_json, 1) == -1 ||
	    tvalue_compile(ld, sn->sn_args, kpath, &cs->cs_args) == -1)
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
	subpath(kpath, sizeof(kpath), path, "message");
	if (cload_tmpl(cl, sn->sn_message, kpath, &cs->cs_message) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "schema");
	if (load_json(ld, sn->sn_schema, kpath, &cs->cs_schema, 1) == -1)
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
	subpath(kpath, sizeof(kpath), path, "onDecline");
	if (sn->sn_ondecline != NULL && load_elicit_action(ld,
	    sn->sn_ondecline, kpath, &cs->cs_ondecline) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "onCancel");
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
	subpath(kpath, sizeof(kpath), path, "collection");
	if (cload_tmpl(cl, sn->sn_collection, kpath, &cs->cs_collection) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "itemVar");
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
	subpath(kpath, sizeof(kpath), path, "maxParallel");
	if (sn->sn_maxpar != NULL && load_count(ld, sn->sn_maxpar, kpath, 1,
	    COMPOSITE_PARALLEL_MAX, &cs->cs_max_parallel) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "maxIterations");
	if (sn->sn_maxiter != NULL && load_count(ld, sn->sn_maxiter, kpath, 1,
	    COMPOSITE_ITERATIONS_MAX, &cs->cs_max_iterations) == -1)
		return -1;
	if ((cs->cs_inner = calloc(1, sizeof(*cs->cs_inner))) == NULL)
		return config_error(ld, NULL, "out of memory");
	subpath(kpath, sizeof(kpath), path, "step");
	cl->cl_inner = 1;
	rc = load_step(cl, sn->sn_step, kpath, cs->cs_inner);
	cl->cl_inner = 0;
	if (rc == -1)
		return -1;
	if (cs->cs_inner->cs_kind != COMPOSITE_TOOL)
		return config_error(ld, sn->sn_step, "%s: a forEach step runs "
		    "a tool step", kpath);
	return 0;
}

static int
load_step(struct cload *cl, struct cnode *n, const char *path,
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
		{ "id", F_FN, &sn.sn_id, grab, 0, 0 },
		{ "type", F_FN, &sn.sn_type, grab, 0, 0 },
		{ "tool", F_FN, &sn.sn_tool, grab, 0, 0 },
		{ "arguments", F_FN, &sn.sn_args, grab, 0, 0 },
		{ "condition", F_FN, &sn.sn_cond, grab, 0, 0 },
		{ "dependsOn", F_FN, &sn.sn_deps, grab, 0, 0 },
		{ "onError", F_FN, &sn.sn_onerror, grab, 0, 0 },
		{ "timeout", F_FN, &sn.sn_timeout, grab, 0, 0 },
		{ "defaultResults", F_FN, &sn.sn_defaults, grab, 0, 0 },
		{ "message", F_FN, &sn.sn_message, grab, 0, 0 },
		{ "schema", F_FN, &sn.sn_schema, grab, 0, 0 },
		{ "onDecline", F_FN, &sn.sn_ondecline, grab, 0, 0 },
		{ "onCancel", F_FN, &sn.sn_oncancel, grab, 0, 0 },
		{ "collection", F_FN, &sn.sn_collection, grab, 0, 0 },
		{ "itemVar", F_FN, &sn.sn_itemvar, grab, 0, 0 },
		{ "maxParallel", F_FN, &sn.sn_maxpar, grab, 0, 0 },
		{ "maxIterations", F_FN, &sn.sn_maxiter, grab, 0, 0 },
		{ "step", F_FN, &sn.sn_step, grab, 0, 0 },
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
		subpath(kpath, sizeof(kpath), path, "id");
		if (load_string(ld, sn.sn_id, kpath, &cs->cs_id) == -1)
			return -1;
	}
	if (sn.sn_type != NULL) {
		subpath(kpath, sizeof(kpath), path, "type");
		if (load_enum(ld, sn.sn_type, kpath, kinds, nitems(kinds),
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
	subpath(kpath, sizeof(kpath), path, "timeout");
	if (sn.sn_timeout != NULL && load_duration(ld, sn.sn_timeout, kpath,
	    1, &cs->cs_timeout_ms) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "condition");
	if (sn.sn_cond != NULL && cload_tmpl(cl, sn.sn_cond, kpath,
	    &cs->cs_cond) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "onError");
	if (sn.sn_onerror != NULL && load_onerror(ld, sn.sn_onerror, kpath,
	    cs) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "defaultResults");
	if (sn.sn_defaults != NULL && load_json(ld, sn.sn_defaults, kpath,
	    &cs->cs_defaults, 1) == -1)
		return -1;
	if (sn.sn_deps != NULL) {
		subpath(kpath, sizeof(kpath), path, "dependsOn");
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

static size_t
composite_step_find(const struct composite *co, const char *id)
{
	size_t	 i;

	for (i = 0; i < co->co_nsteps; i++)
		if (co->co_steps[i].cs_id != NULL &&
		    strcmp(co->co_steps[i].cs_id, id) == 0)
			return i;
	return SIZE_MAX;
}

/* dependsOn ids to indexes; then each step's ancestors, which finds
 * cycles: steps are settled in rounds, and what is left is in a cycle */
static int
cload_graph(struct cload *cl, const char *path)
{
	struct composite	*co = cl->cl_co;
	struct composite_step	*cs;
	struct cnode		*d;
	size_t			 i, j, k, n = co->co_nsteps, left;
	uint8_t			*done;
	int			 progress;

	for (i = 0; i < n; i++) {
		cs = &co->co_steps[i];
		if ((d = cl->cl_depnodes[i]) == NULL)
			continue;
		if ((cs->cs_deps = calloc(d->cn_nkids + 1,
		    sizeof(*cs->cs_deps))) == NULL)
			return config_error(cl->cl_ld, NULL, "out of memory");
		for (j = 0; j < d->cn_nkids; j++) {
			if (d->cn_kids[j]->cn_type != CN_SCALAR ||
			    (k = composite_step_find(co,
			    d->cn_kids[j]->cn_str)) == SIZE_MAX)
				return config_error(cl->cl_ld, d->cn_kids[j],
				    "%s.steps[%zu].dependsOn[%zu]: no step "
				    "\"%s\" in this composite", path, i, j,
				    d->cn_kids[j]->cn_type == CN_SCALAR ?
				    d->cn_kids[j]->cn_str : "");
			if (k == i)
				return config_error(cl->cl_ld, d->cn_kids[j],
				    "%s.steps[%zu].dependsOn[%zu]: a step "
				    "cannot depend on itself", path, i, j);
			cs->cs_deps[cs->cs_ndeps++] = k;
		}
	}
	if ((cl->cl_anc = calloc(n * n, 1)) == NULL ||
	    (done = calloc(n, 1)) == NULL)
		return config_error(cl->cl_ld, NULL, "out of memory");
	for (left = n, progress = 1; left > 0 && progress;) {
		progress = 0;
		for (i = 0; i < n; i++) {
			cs = &co->co_steps[i];
			if (done[i])
				continue;
			for (j = 0; j < cs->cs_ndeps; j++)
				if (!done[cs->cs_deps[j]])
					break;
			if (j < cs->cs_ndeps)
				continue;
			for (j = 0; j < cs->cs_ndeps; j++) {
				k = cs->cs_deps[j];
				cl->cl_anc[i * n + k] = 1;
				for (k = 0; k < n; k++)
					if (cl->cl_anc[cs->cs_deps[j] * n + k])
						cl->cl_anc[i * n + k] = 1;
			}
			done[i] = 1;
			left--;
			progress = 1;
		}
	}
	for (i = 0; i < n && left > 0; i++)
		if (!done[i]) {
			free(done);
			return config_error(cl->cl_ld, cl->cl_depnodes[i],
			    "%s.steps[%zu].dependsOn: step \"%s\" is in a "
			    "dependency cycle", path, i, co->co_steps[i].cs_id);
		}
	free(done);
	return 0;
}

struct refcheck {
	struct cload		*rc_cl;
	const struct tref	*rc_ref;
	char			 rc_msg[CONFIG_ERR_MAX];
};

static int
refcheck_fail(struct refcheck *rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
refcheck_fail(struct refcheck *rc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(rc->rc_msg, sizeof(rc->rc_msg), fmt, ap);
	va_end(ap);
	return 1;
}

static const struct composite_step *
refcheck_foreach(const struct refcheck *rc)
{
	const struct composite	*co = rc->rc_cl->cl_co;

	if (rc->rc_ref->tr_step == SIZE_MAX)
		return NULL;
	return &co->co_steps[rc->rc_ref->tr_step];
}

/* one path a template reads: does it name something that will be there */
static int
refcheck_path(const char *const *segs, size_t n, void *arg)
{
	static const char *const wf[] = { "id", "step_count", "status" };
	static const char *const sfields[] = { "status", "output", "content",
	    "error" };
	struct refcheck			*rc = arg;
	const struct tref		*tr = rc->rc_ref;
	const struct composite		*co = rc->rc_cl->cl_co;
	const struct composite_step	*cs, *fe;
	json_t				*props;
	size_t				 i, k, ns = co->co_nsteps;

	if (n == 0)
		return 0;
	if (strcmp(segs[0], "params") == 0) {
		props = json_object_get(co->co_params, "properties");
		if (n >= 2 && json_object_get(props, segs[1]) == NULL)
			return refcheck_fail(rc, ".params.%s: not a property "
			    "of parameters", segs[1]);
		return 0;
	}
	if (strcmp(segs[0], "workflow") == 0) {
		for (i = 0; n >= 2 && i < nitems(wf); i++)
			if (strcmp(segs[1], wf[i]) == 0)
				return 0;
		return n < 2 ? 0 : refcheck_fail(rc, ".workflow.%s: expected "
		    "one of id, step_count, status", segs[1]);
	}
	if (strcmp(segs[0], "forEach") == 0) {
		fe = refcheck_foreach(rc);
		if (!tr->tr_inner || fe == NULL)
			return refcheck_fail(rc, ".forEach: only inside a "
			    "forEach step's step");
		if (n >= 2 && strcmp(segs[1], "index") != 0 &&
		    strcmp(segs[1], fe->cs_itemvar) != 0)
			return refcheck_fail(rc, ".forEach.%s: expected "
			    ".forEach.%s or .forEach.index", segs[1],
			    fe->cs_itemvar);
		return 0;
	}
	if (strcmp(segs[0], "steps") != 0)
		return refcheck_fail(rc, ".%s: expected .params, .steps, "
		    ".forEach or .workflow", segs[0]);
	if (n < 2)
		return 0;
	if ((k = composite_step_find(co, segs[1])) == SIZE_MAX)
		return refcheck_fail(rc, ".steps.%s: no such step", segs[1]);
	if (tr->tr_step != SIZE_MAX && !rc->rc_cl->cl_anc[tr->tr_step * ns +
	    k])
		return refcheck_fail(rc, ".steps.%s: not among the step's "
		    "dependencies (dependsOn)", segs[1]);
	if (n < 3)
		return 0;
	for (i = 0; i < nitems(sfields); i++)
		if (strcmp(segs[2], sfields[i]) == 0)
			break;
	if (i == nitems(sfields))
		return refcheck_fail(rc, ".steps.%s.%s: expected status, "
		    "output, content or error", segs[1], segs[2]);
	cs = &co->co_steps[k];
	/* a step that may be skipped or fail on has defaultResults */
	if (i == 1 && n >= 4 && (cs->cs_cond != NULL || cs->cs_onerror ==
	    COMPOSITE_CONTINUE || cs->cs_ondecline != COMPOSITE_ABORT ||
	    cs->cs_oncancel != COMPOSITE_ABORT) &&
	    json_object_get(cs->cs_defaults, segs[3]) == NULL)
		return refcheck_fail(rc, ".steps.%s.output.%s: step \"%s\" "
		    "may be skipped, so its defaultResults needs \"%s\"",
		    segs[1], segs[3], segs[1], segs[3]);
	return 0;
}

static int
cload_check_refs(struct cload *cl)
{
	struct refcheck	 rc;
	size_t		 i;

	memset(&rc, 0, sizeof(rc));
	rc.rc_cl = cl;
	for (i = 0; i < cl->cl_nrefs; i++) {
		rc.rc_ref = &cl->cl_refs[i];
		if (tmpl_walk_paths(rc.rc_ref->tr_tmpl, refcheck_path,
		    &rc) != 0)
			return config_error(cl->cl_ld, rc.rc_ref->tr_node,
			    "%s: %s", rc.rc_ref->tr_path, rc.rc_msg);
	}
	return 0;
}

static void
composite_prop_free(struct composite_prop *cp)
{
	size_t	 i;

	free(cp->cp_name);
	free(cp->cp_type);
	free(cp->cp_desc);
	tmpl_free(cp->cp_value);
	json_decref(cp->cp_default);
	for (i = 0; i < cp->cp_nprops; i++)
		composite_prop_free(&cp->cp_props[i]);
	free(cp->cp_props);
	for (i = 0; i < cp->cp_nrequired; i++)
		free(cp->cp_required[i]);
	free(cp->cp_required);
}

static int	load_output_props(struct cload *, struct cnode *, const char *,
		    struct composite_prop *, int);

static int
load_output_prop(struct cload *cl, struct cnode *n, const char *path,
    struct composite_prop *cp, int depth)
{
	static const char *const types[] = { "string", "integer", "number",
	    "boolean", "object", "array" };
	struct loader	*ld = cl->cl_ld;
	struct cnode	*type = NULL, *desc = NULL, *value = NULL,
			*props = NULL, *dflt = NULL;
	char		 kpath[PATH_MAX_LEN];
	int		 t;
	const struct field fields[] = {
		{ "type", F_FN, &type, grab, 0, 0 },
		{ "description", F_FN, &desc, grab, 0, 0 },
		{ "value", F_FN, &value, grab, 0, 0 },
		{ "properties", F_FN, &props, grab, 0, 0 },
		{ "default", F_FN, &dflt, grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "type") == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "type");
	if (load_enum(ld, type, kpath, types, nitems(types), "string, "
	    "integer, number, boolean, object or array", &t) == -1 ||
	    (cp->cp_type = strdup(types[t])) == NULL)
		return -1;
	subpath(kpath, sizeof(kpath), path, "description");
	if (desc != NULL && load_string(ld, desc, kpath, &cp->cp_desc) == -1)
		return -1;
	if (props != NULL && t != 4)
		return config_error(ld, props, "%s.properties: only for type: "
		    "object", path);
	if ((value == NULL) == (props == NULL || t != 4))
		return config_error(ld, value != NULL ? value : n, "%s: %s",
		    path, t == 4 ? "expected either value or properties" :
		    "missing required key \"value\"");
	subpath(kpath, sizeof(kpath), path, "value");
	if (value != NULL && cload_tmpl(cl, value, kpath, &cp->cp_value) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "default");
	if (dflt != NULL) {
		if (load_json(ld, dflt, kpath, &cp->cp_default, 0) == -1)
			return -1;
		if (!composite_type_ok(cp->cp_type, cp->cp_default))
			return config_expected(ld, dflt, kpath, t == 1 ?
			    "an integer" : t == 4 ? "an object" : t == 5 ?
			    "an array" : t == 3 ? "true or false" : t == 2 ?
			    "a number" : "a string");
	}
	if (props == NULL)
		return 0;
	subpath(kpath, sizeof(kpath), path, "properties");
	return load_output_props(cl, props, kpath, cp, depth + 1);
}

static int
load_output_props(struct cload *cl, struct cnode *n, const char *path,
    struct composite_prop *parent, int depth)
{
	struct loader	*ld = cl->cl_ld;
	char		 kpath[PATH_MAX_LEN];
	size_t		 i;

	if (depth > COMPOSITE_OUTPUT_DEPTH)
		return config_error(ld, n, "%s: nested deeper than %d", path,
		    COMPOSITE_OUTPUT_DEPTH);
	if (load_map_check(ld, n, path) == -1)
		return -1;
	if (n->cn_nkids == 0)
		return config_error(ld, n, "%s: expected at least one "
		    "property, found an empty mapping", path);
	if ((parent->cp_props = calloc(n->cn_nkids / 2,
	    sizeof(*parent->cp_props))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
		if ((parent->cp_props[parent->cp_nprops++].cp_name =
		    strdup(n->cn_kids[i]->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
		if (load_output_prop(cl, n->cn_kids[i + 1], kpath,
		    &parent->cp_props[i / 2], depth) == -1)
			return -1;
	}
	return 0;
}

static int
load_output(struct cload *cl, struct cnode *n, const char *path)
{
	struct loader		*ld = cl->cl_ld;
	struct composite_prop	*root;
	struct cnode		*props = NULL, *req = NULL;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, j;
	const struct field fields[] = {
		{ "properties", F_FN, &props, grab, 0, 0 },
		{ "required", F_FN, &req, grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "properties") == -1)
		return -1;
	if ((root = cl->cl_co->co_output = calloc(1, sizeof(*root))) == NULL ||
	    (root->cp_type = strdup("object")) == NULL)
		return config_error(ld, NULL, "out of memory");
	cl->cl_step = SIZE_MAX;
	subpath(kpath, sizeof(kpath), path, "properties");
	if (load_output_props(cl, props, kpath, root, 1) == -1)
		return -1;
	if (req == NULL)
		return 0;
	subpath(kpath, sizeof(kpath), path, "required");
	if (load_string_seq(ld, req, kpath, "a sequence of property names",
	    &root->cp_required, &root->cp_nrequired) == -1)
		return -1;
	for (i = 0; i < root->cp_nrequired; i++) {
		for (j = 0; j < root->cp_nprops; j++)
			if (strcmp(root->cp_required[i],
			    root->cp_props[j].cp_name) == 0)
				break;
		if (j == root->cp_nprops)
			return config_error(ld, req->cn_kids[i], "%s[%zu]: "
			    "\"%s\" is not among output.properties", kpath, i,
			    root->cp_required[i]);
	}
	return 0;
}

static int
load_params(struct loader *ld, struct cnode *n, const char *path,
    struct composite *co)
{
	json_t	*type;

	if (load_json(ld, n, path, &co->co_params, 1) == -1)
		return -1;
	type = json_object_get(co->co_params, "type");
	if (!json_is_string(type) || strcmp(json_string_value(type),
	    "object") != 0)
		return config_error(ld, n, "%s: expected a JSON Schema with "
		    "type: object", path);
	if (json_object_get(co->co_params, "properties") != NULL &&
	    !json_is_object(json_object_get(co->co_params, "properties")))
		return config_error(ld, cnode_get(n, "properties"),
		    "%s.properties: expected a mapping", path);
	return 0;
}

/* hex SHA-256 of the definition as JSON, keys sorted */
static int
composite_fingerprint(const struct cnode *n, struct composite *co)
{
	unsigned char	 md[32];
	unsigned int	 mdlen = 0;
	json_t		*j;
	char		*text;
	size_t		 i;
	int		 rc = -1;

	if ((j = cnode_json(n)) == NULL)
		return -1;
	if ((text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY)) != NULL &&
	    EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) ==
	    1 && mdlen == sizeof(md)) {
		for (i = 0; i < sizeof(md); i++)
			(void)snprintf(co->co_fp + 2 * i, 3, "%02x", md[i]);
		rc = 0;
	}
	free(text);
	json_decref(j);
	return rc;
}

static int
load_composite(struct loader *ld, struct cnode *n, const char *path,
    struct composite *co)
{
	struct cload		 cl;
	struct config_override	 ov;
	struct cnode		*name = NULL, *desc = NULL, *params = NULL,
				*timeout = NULL, *annot = NULL, *steps = NULL,
				*output = NULL;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, j;
	int			 rc = -1;
	const struct field fields[] = {
		{ "name", F_FN, &name, grab, 0, 0 },
		{ "description", F_FN, &desc, grab, 0, 0 },
		{ "parameters", F_FN, &params, grab, 0, 0 },
		{ "timeout", F_FN, &timeout, grab, 0, 0 },
		{ "annotations", F_FN, &annot, grab, 0, 0 },
		{ "steps", F_FN, &steps, grab, 0, 0 },
		{ "output", F_FN, &output, grab, 0, 0 },
	};

	memset(&cl, 0, sizeof(cl));
	cl.cl_ld = ld;
	cl.cl_co = co;
	co->co_line = n->cn_line;
	co->co_col = n->cn_col;
	co->co_timeout_ms = COMPOSITE_TIMEOUT_MS;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "name") == -1 ||
	    config_require(ld, n, path, "description") == -1 ||
	    config_require(ld, n, path, "steps") == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "name");
	if (load_string(ld, name, kpath, &co->co_name) == -1)
		return -1;
	if (!proto_tool_name_valid(co->co_name, strlen(co->co_name)))
		return config_expected(ld, name, kpath, "a tool name "
		    "(1 to 128 letters, digits, \".\", \"_\", \"-\")");
	subpath(kpath, sizeof(kpath), path, "description");
	if (load_string(ld, desc, kpath, &co->co_desc) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "parameters");
	if (params != NULL && load_params(ld, params, kpath, co) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "timeout");
	if (timeout != NULL && load_duration(ld, timeout, kpath, 1,
	    &co->co_timeout_ms) == -1)
		return -1;
	subpath(kpath, sizeof(kpath), path, "annotations");
	memset(&ov, 0, sizeof(ov));
	if (annot != NULL) {
		if (load_annotations(ld, annot, kpath, &ov) == -1)
			return -1;
		co->co_annotations = ov.co_annotations;
	}
	subpath(kpath, sizeof(kpath), path, "steps");
	if (steps->cn_type != CN_SEQ)
		return config_expected(ld, steps, kpath, "a sequence of 1 to "
		    "100 steps");
	if (steps->cn_nkids == 0)
		return config_error(ld, steps, "%s: expected at least one "
		    "step, found an empty sequence", kpath);
	if (steps->cn_nkids > COMPOSITE_STEPS_MAX)
		return config_error(ld, steps->cn_kids[COMPOSITE_STEPS_MAX],
		    "%s: at most %d steps", kpath, COMPOSITE_STEPS_MAX);
	if ((co->co_steps = calloc(steps->cn_nkids,
	    sizeof(*co->co_steps))) == NULL ||
	    (cl.cl_depnodes = calloc(steps->cn_nkids,
	    sizeof(*cl.cl_depnodes))) == NULL) {
		config_error(ld, NULL, "out of memory");
		goto done;
	}
	for (i = 0; i < steps->cn_nkids; i++) {
		co->co_nsteps++;
		cl.cl_step = i;
		if (snprintf(kpath, sizeof(kpath), "%s.steps[%zu]", path,
		    i) >= (int)sizeof(kpath))
			kpath[sizeof(kpath) - 1] = '\0';
		if (load_step(&cl, steps->cn_kids[i], kpath,
		    &co->co_steps[i]) == -1)
			goto done;
		for (j = 0; j < i; j++)
			if (strcmp(co->co_steps[j].cs_id,
			    co->co_steps[i].cs_id) == 0) {
				config_error(ld, cnode_get(steps->cn_kids[i],
				    "id"), "%s.id: duplicate step id \"%s\" "
				    "(first in %s.steps[%zu])", kpath,
				    co->co_steps[i].cs_id, path, j);
				goto done;
			}
	}
	subpath(kpath, sizeof(kpath), path, "output");
	if ((output != NULL && load_output(&cl, output, kpath) == -1) ||
	    cload_graph(&cl, path) == -1 || cload_check_refs(&cl) == -1)
		goto done;
	if (composite_fingerprint(n, co) == -1) {
		config_error(ld, NULL, "out of memory");
		goto done;
	}
	rc = 0;
done:
	free(cl.cl_refs);
	free(cl.cl_depnodes);
	free(cl.cl_anc);
	return rc;
}

int
load_composites(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct composite_list	*cl = arg;
	char			 ipath[PATH_MAX_LEN];
	size_t			 i, j;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of composite "
		    "tools");
	if ((cl->cl_items = calloc(n->cn_nkids + 1,
	    sizeof(*cl->cl_items))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if ((cl->cl_items[i] = calloc(1, sizeof(struct composite))) ==
		    NULL)
			return config_error(ld, NULL, "out of memory");
		cl->cl_n++;
		if (load_composite(ld, n->cn_kids[i], ipath,
		    cl->cl_items[i]) == -1)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(cl->cl_items[j]->co_name,
			    cl->cl_items[i]->co_name) == 0)
				return config_error(ld,
				    cnode_get(n->cn_kids[i], "name"),
				    "%s.name: composite \"%s\" is already "
				    "defined by %s[%zu]", ipath,
				    cl->cl_items[i]->co_name, path, j);
	}
	return 0;
}

int
load_composite_tools(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;

	if (cf->cf_composites == NULL && (cf->cf_composites = calloc(1,
	    sizeof(*cf->cf_composites))) == NULL)
		return config_error(ld, NULL, "out of memory");
	return load_composites(ld, n, path, cf->cf_composites);
}

const struct composite *
composite_find(const struct config *cf, const char *name, size_t len)
{
	const struct composite_list	*cl = cf->cf_composites;
	size_t				 i;

	for (i = 0; cl != NULL && i < cl->cl_n; i++)
		if (strlen(cl->cl_items[i]->co_name) == len &&
		    memcmp(cl->cl_items[i]->co_name, name, len) == 0)
			return cl->cl_items[i];
	return NULL;
}

static void
composite_step_free(struct composite_step *cs)
{
	free(cs->cs_id);
	free(cs->cs_deps);
	tmpl_free(cs->cs_cond);
	json_decref(cs->cs_defaults);
	free(cs->cs_tool);
	composite_tvalue_free(&cs->cs_args);
	tmpl_free(cs->cs_message);
	json_decref(cs->cs_schema);
	tmpl_free(cs->cs_collection);
	free(cs->cs_itemvar);
	if (cs->cs_inner != NULL) {
		composite_step_free(cs->cs_inner);
		free(cs->cs_inner);
	}
}

void
composite_free(struct composite *co)
{
	size_t	 i;

	if (co == NULL)
		return;
	free(co->co_name);
	free(co->co_desc);
	json_decref(co->co_params);
	json_decref(co->co_annotations);
	for (i = 0; i < co->co_nsteps; i++)
		composite_step_free(&co->co_steps[i]);
	free(co->co_steps);
	if (co->co_output != NULL) {
		composite_prop_free(co->co_output);
		free(co->co_output);
	}
	free(co);
}

void
composite_list_free(struct composite_list *cl)
{
	size_t	 i;

	for (i = 0; i < cl->cl_n; i++)
		composite_free(cl->cl_items[i]);
	free(cl->cl_items);
	cl->cl_items = NULL;
	cl->cl_n = 0;
}

void
composite_tvalue_free(struct composite_tvalue *tv)
{
	size_t	 i;

	for (i = 0; i < tv->ct_ntmpl; i++)
		tmpl_free(tv->ct_tmpl[i]);
	free(tv->ct_tmpl);
	json_decref(tv->ct_json);
	memset(tv, 0, sizeof(*tv));
}

static json_t *
tvalue_expand(const struct composite_tvalue *tv, const json_t *v,
    size_t *k, json_t *ctx, char *err, size_t errlen)
{
	json_t		*out, *x;
	const char	*key;
	json_t		*val;
	size_t		 i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return tmpl_eval(tv->ct_tmpl[(*k)++], ctx, err, errlen);
	case JSON_ARRAY:
		if ((out = json_array()) == NULL)
			goto oom;
		json_array_foreach(v, i, val) {
			if ((x = tvalue_expand(tv, val, k, ctx, err,
			    errlen)) == NULL || json_array_append_new(out,
			    x) == -1) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_OBJECT:
		if ((out = json_object()) == NULL)
			goto oom;
		json_object_foreach((json_t *)v, key, val) {
			if ((x = tvalue_expand(tv, val, k, ctx, err,
			    errlen)) == NULL || json_object_set_new(out, key,
			    x) == -1) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	default:
		return json_deep_copy(v);
	}
oom:
	(void)snprintf(err, errlen, "out of memory");
	return NULL;
}

json_t *
composite_tvalue_expand(const struct composite_tvalue *tv, json_t *ctx,
    char *err, size_t errlen)
{
	size_t	 k = 0;

	if (tv->ct_json == NULL)
		return json_object();
	return tvalue_expand(tv, tv->ct_json, &k, ctx, err, errlen);
}

/* the unit tests' way in: compositeTools alone */
int
composite_load_buffer(const char *name, const char *buf, size_t len,
    struct composite_list *cl, char *err, size_t errlen)
{
	return config_load_section(name, buf, len, "compositeTools",
	    load_composites, cl, err, errlen);
}
