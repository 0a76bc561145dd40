/*
 * compositeTools[]: the reference vMCP's workflow definitions, strictly
 * loaded (its keys, its step kinds), templates compiled, the step graph
 * checked (unknown ids, cycles, templates that read a step that is not
 * among their dependencies, .params keys that parameters does not
 * declare) with file:line:col messages.  Here: the value and template
 * helpers every part uses, a composite's top-level keys (parameters,
 * output schema, fingerprint), the lists, lookup, freeing and
 * expansion; the steps are in composite_config_steps.c, the graph
 * checks in composite_config_graph.c, the shared internals in
 * composite_load.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proto/headers.h"
#include "shared/composite.h"
#include "shared/composite_io.h"
#include "config_load.h"
#include "composite_load.h"

/* path.key; a path too long for messages is cut, never overrun */
void
cload_subpath(char *dst, size_t len, const char *path, const char *key)
{
	if (snprintf(dst, len, "%s.%s", path, key) >= (int)len)
		dst[len - 1] = '\0';
}

int
cload_grab(struct loader *ld, struct cnode *v, const char *path, void *arg)
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

int
cload_json(struct loader *ld, struct cnode *n, const char *path, json_t **dst,
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
int
cload_tvalue_compile(struct loader *ld, const struct cnode *n, const char *path,
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
			if (cload_tvalue_compile(ld, n->cn_kids[i], kpath,
			    tv) == -1)
				return -1;
		}
		return 0;
	default:
		if (load_map_check(ld, (struct cnode *)n, path) == -1)
			return -1;
		for (i = 0; i + 1 < n->cn_nkids; i += 2) {
			config_path(kpath, sizeof(kpath), path,
			    n->cn_kids[i]);
			if (cload_tvalue_compile(ld, n->cn_kids[i + 1], kpath,
			    tv) == -1)
				return -1;
		}
		return 0;
	}
}

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

int
cload_tmpl(struct cload *cl, struct cnode *n, const char *path,
    struct tmpl **dst)
{
	if (load_tmpl(cl->cl_ld, n, path, dst) == -1)
		return -1;
	return cload_ref(cl, *dst, n, path);
}

/* the leaves of tv, registered in order, with their nodes */
int
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
		{ "type", F_FN, &type, cload_grab, 0, 0 },
		{ "description", F_FN, &desc, cload_grab, 0, 0 },
		{ "value", F_FN, &value, cload_grab, 0, 0 },
		{ "properties", F_FN, &props, cload_grab, 0, 0 },
		{ "default", F_FN, &dflt, cload_grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "type") == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "type");
	if (cload_enum(ld, type, kpath, types, nitems(types), "string, "
	    "integer, number, boolean, object or array", &t) == -1 ||
	    (cp->cp_type = strdup(types[t])) == NULL)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "description");
	if (desc != NULL && load_string(ld, desc, kpath, &cp->cp_desc) == -1)
		return -1;
	if (props != NULL && t != 4)
		return config_error(ld, props, "%s.properties: only for type: "
		    "object", path);
	if ((value == NULL) == (props == NULL || t != 4))
		return config_error(ld, value != NULL ? value : n, "%s: %s",
		    path, t == 4 ? "expected either value or properties" :
		    "missing required key \"value\"");
	cload_subpath(kpath, sizeof(kpath), path, "value");
	if (value != NULL && cload_tmpl(cl, value, kpath, &cp->cp_value) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "default");
	if (dflt != NULL) {
		if (cload_json(ld, dflt, kpath, &cp->cp_default, 0) == -1)
			return -1;
		if (!composite_type_ok(cp->cp_type, cp->cp_default))
			return config_expected(ld, dflt, kpath, t == 1 ?
			    "an integer" : t == 4 ? "an object" : t == 5 ?
			    "an array" : t == 3 ? "true or false" : t == 2 ?
			    "a number" : "a string");
	}
	if (props == NULL)
		return 0;
	cload_subpath(kpath, sizeof(kpath), path, "properties");
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
		{ "properties", F_FN, &props, cload_grab, 0, 0 },
		{ "required", F_FN, &req, cload_grab, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "properties") == -1)
		return -1;
	if ((root = cl->cl_co->co_output = calloc(1, sizeof(*root))) == NULL ||
	    (root->cp_type = strdup("object")) == NULL)
		return config_error(ld, NULL, "out of memory");
	cl->cl_step = SIZE_MAX;
	cload_subpath(kpath, sizeof(kpath), path, "properties");
	if (load_output_props(cl, props, kpath, root, 1) == -1)
		return -1;
	if (req == NULL)
		return 0;
	cload_subpath(kpath, sizeof(kpath), path, "required");
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

	if (cload_json(ld, n, path, &co->co_params, 1) == -1)
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
		{ "name", F_FN, &name, cload_grab, 0, 0 },
		{ "description", F_FN, &desc, cload_grab, 0, 0 },
		{ "parameters", F_FN, &params, cload_grab, 0, 0 },
		{ "timeout", F_FN, &timeout, cload_grab, 0, 0 },
		{ "longRunning", F_BOOL, &co->co_long, NULL, 0, 0 },
		{ "annotations", F_FN, &annot, cload_grab, 0, 0 },
		{ "steps", F_FN, &steps, cload_grab, 0, 0 },
		{ "output", F_FN, &output, cload_grab, 0, 0 },
	};

	memset(&cl, 0, sizeof(cl));
	cl.cl_ld = ld;
	cl.cl_co = co;
	co->co_line = n->cn_line;
	co->co_col = n->cn_col;
	co->co_timeout_ms = COMPOSITE_TIMEOUT_MS;
	co->co_long = -1;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "name") == -1 ||
	    config_require(ld, n, path, "description") == -1 ||
	    config_require(ld, n, path, "steps") == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "name");
	if (load_string(ld, name, kpath, &co->co_name) == -1)
		return -1;
	if (!proto_tool_name_valid(co->co_name, strlen(co->co_name)))
		return config_expected(ld, name, kpath, "a tool name "
		    "(1 to 128 letters, digits, \".\", \"_\", \"-\")");
	cload_subpath(kpath, sizeof(kpath), path, "description");
	if (load_string(ld, desc, kpath, &co->co_desc) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "parameters");
	if (params != NULL && load_params(ld, params, kpath, co) == -1)
		return -1;
	cload_subpath(kpath, sizeof(kpath), path, "timeout");
	if (timeout != NULL && load_duration(ld, timeout, kpath, 1,
	    &co->co_timeout_ms) == -1)
		return -1;
	if (co->co_long == -1)
		co->co_long = timeout != NULL &&
		    co->co_timeout_ms >= COMPOSITE_TASK_TIMEOUT_MS;
	cload_subpath(kpath, sizeof(kpath), path, "annotations");
	memset(&ov, 0, sizeof(ov));
	if (annot != NULL) {
		if (load_annotations(ld, annot, kpath, &ov) == -1)
			return -1;
		co->co_annotations = ov.co_annotations;
	}
	cload_subpath(kpath, sizeof(kpath), path, "steps");
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
		if (cload_step(&cl, steps->cn_kids[i], kpath,
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
	cload_subpath(kpath, sizeof(kpath), path, "output");
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
