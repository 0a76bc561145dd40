/*
 * The pure pieces around a composite run (composite_io.h): the client's
 * arguments checked against parameters (defaults applied; the reference
 * checks nothing), the result built from output (or, without output,
 * from the leaf steps in declaration order, where the reference takes
 * whichever step finished last), the advertised schemas, and the safety
 * annotations derived from the steps' tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jsonrpc.h"
#include "shared/composite.h"
#include "shared/composite_io.h"

#define PARAMS_DEPTH_MAX	10

/* v is of JSON Schema type type */
int
composite_type_ok(const char *type, const json_t *v)
{
	if (strcmp(type, "string") == 0)
		return json_is_string(v);
	if (strcmp(type, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(type, "number") == 0)
		return json_is_number(v);
	if (strcmp(type, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(type, "object") == 0)
		return json_is_object(v);
	if (strcmp(type, "array") == 0)
		return json_is_array(v);
	if (strcmp(type, "null") == 0)
		return json_is_null(v);
	return 1;	/* a type this subset does not know: not checked */
}

/* v against schema (type, enum, properties, required, default,
 * additionalProperties: false, items), defaults filled in place */
static int
params_check(json_t *schema, json_t *v, const char *path, int depth,
    char *err, size_t errlen)
{
	json_t		*type, *t, *props, *p, *req, *x, *items;
	const char	*key, *want = NULL;
	char		 sub[256];
	size_t		 i;
	int		 ok;

	if (!json_is_object(schema) || depth > PARAMS_DEPTH_MAX)
		return 0;
	type = json_object_get(schema, "type");
	if (json_is_string(type)) {
		want = json_string_value(type);
		ok = composite_type_ok(want, v);
	} else if (json_is_array(type)) {
		ok = json_array_size(type) == 0;
		json_array_foreach(type, i, t)
			if (json_is_string(t) &&
			    composite_type_ok(json_string_value(t), v))
				ok = 1;
		want = "one of its types";
	} else
		ok = 1;
	if (!ok) {
		(void)snprintf(err, errlen, "%s: expected %s%s, found %s",
		    path, json_is_string(type) ? "type " : "", want,
		    jsonrpc_type_name(v));
		return -1;
	}
	if (json_is_array(x = json_object_get(schema, "enum"))) {
		ok = 0;
		json_array_foreach(x, i, t)
			if (json_equal(t, v))
				ok = 1;
		if (!ok) {
			(void)snprintf(err, errlen, "%s: not one of the "
			    "values its enum allows", path);
			return -1;
		}
	}
	if (json_is_object(v)) {
		props = json_object_get(schema, "properties");
		json_object_foreach(props, key, p) {
			if (json_object_get(v, key) == NULL &&
			    (x = json_object_get(p, "default")) != NULL)
				(void)json_object_set_new(v, key,
				    json_deep_copy(x));
		}
		req = json_object_get(schema, "required");
		json_array_foreach(req, i, t)
			if (json_is_string(t) && json_object_get(v,
			    json_string_value(t)) == NULL) {
				(void)snprintf(err, errlen, "%s%s%s: missing "
				    "(required)", path, *path != '\0' ? "." :
				    "", json_string_value(t));
				return -1;
			}
		json_object_foreach(v, key, x) {
			(void)snprintf(sub, sizeof(sub), "%s%s%s", path,
			    *path != '\0' ? "." : "", key);
			if ((p = json_object_get(props, key)) == NULL) {
				if (json_is_false(json_object_get(schema,
				    "additionalProperties"))) {
					(void)snprintf(err, errlen, "%s: not "
					    "a parameter of this tool", sub);
					return -1;
				}
				continue;
			}
			if (params_check(p, x, sub, depth + 1, err,
			    errlen) == -1)
				return -1;
		}
	}
	if (json_is_array(v) && json_is_object(items =
	    json_object_get(schema, "items"))) {
		json_array_foreach(v, i, x) {
			(void)snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (params_check(items, x, sub, depth + 1, err,
			    errlen) == -1)
				return -1;
		}
	}
	return 0;
}

int
composite_schema_check(const json_t *schema, json_t *v, char *err,
    size_t errlen)
{
	return params_check((json_t *)schema, v, "", 0, err, errlen);
}

size_t
composite_json_depth(const json_t *v)
{
	const char	*key;
	json_t		*x;
	size_t		 i, d, max = 0;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x)
			if ((d = composite_json_depth(x)) > max)
				max = d;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if ((d = composite_json_depth(x)) > max)
				max = d;
	} else
		return 0;
	return max + 1;
}

size_t
composite_json_size(const json_t *v)
{
	char	*s;
	size_t	 n;

	if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return SIZE_MAX;
	n = strlen(s);
	free(s);
	return n;
}

json_t *
composite_params(const struct composite *co, json_t *args, char *err,
    size_t errlen)
{
	json_t	*v;

	if (args != NULL && !json_is_object(args)) {
		(void)snprintf(err, errlen, "arguments: expected an object, "
		    "found %s", jsonrpc_type_name(args));
		return NULL;
	}
	v = args != NULL ? json_deep_copy(args) : json_object();
	if (v == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (params_check(co->co_params, v, "", 0, err, errlen) == -1) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* a rendered value as the declared type: strings are parsed; v is
 * taken, NULL when it does not fit */
static json_t *
output_coerce(const char *type, json_t *v)
{
	json_t		*p;
	const char	*s;
	char		*end;
	long long	 ll;
	double		 d;

	if (composite_type_ok(type, v))
		return v;
	if (!json_is_string(v))
		goto no;
	s = json_string_value(v);
	p = NULL;
	if (strcmp(type, "integer") == 0) {
		ll = strtoll(s, &end, 10);
		if (*s != '\0' && *end == '\0')
			p = json_integer(ll);
	} else if (strcmp(type, "number") == 0) {
		d = strtod(s, &end);
		if (*s != '\0' && *end == '\0')
			p = json_real(d);
	} else if (strcmp(type, "boolean") == 0) {
		if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
			p = json_boolean(strcmp(s, "true") == 0);
	} else if ((p = json_loads(s, JSON_DECODE_ANY, NULL)) != NULL &&
	    !composite_type_ok(type, p)) {
		json_decref(p);
		p = NULL;
	}
	if (p == NULL)
		goto no;
	json_decref(v);
	return p;
no:
	json_decref(v);
	return NULL;
}

static void	coerce_in(json_t *, const json_t *, int);

/* x as its schema p wants: a replacement, or NULL (x kept, coerced
 * within) */
static json_t *
coerce_one(json_t *x, const json_t *p, int depth)
{
	const char	*type = json_string_value(json_object_get(p, "type"));

	if (json_is_string(x) && type != NULL && strcmp(type, "string") != 0)
		return output_coerce(type, json_incref(x));
	coerce_in(x, p, depth + 1);
	return NULL;
}

static void
coerce_in(json_t *v, const json_t *schema, int depth)
{
	const char	*key;
	json_t		*x, *c;
	size_t		 i;

	if (!json_is_object(schema) || depth > PARAMS_DEPTH_MAX)
		return;
	if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			if ((c = coerce_one(x, json_object_get(json_object_get(
			    schema, "properties"), key), depth)) != NULL)
				(void)json_object_set_new(v, key, c);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if ((c = coerce_one(x, json_object_get(schema,
			    "items"), depth)) != NULL)
				(void)json_array_set_new(v, i, c);
	}
}

void
composite_coerce_args(json_t *args, const json_t *schema)
{
	coerce_in(args, schema, 0);
}

static json_t *
output_object(const struct composite_prop *, json_t *ctx, const char *path,
    char *err, size_t errlen);

static json_t *
output_prop(const struct composite_prop *cp, json_t *ctx, const char *path,
    char *err, size_t errlen)
{
	json_t	*v;

	if (cp->cp_value == NULL)
		v = output_object(cp, ctx, path, err, errlen);
	else if ((v = tmpl_eval(cp->cp_value, ctx, err, errlen)) != NULL &&
	    (v = output_coerce(cp->cp_type, v)) == NULL &&
	    snprintf(err, errlen, "%s: the value is not of type %s", path,
	    cp->cp_type) < 0)
		err[0] = '\0';
	if (v == NULL && cp->cp_default != NULL)
		v = json_deep_copy(cp->cp_default);
	return v;
}

static json_t *
output_object(const struct composite_prop *root, json_t *ctx,
    const char *path, char *err, size_t errlen)
{
	const struct composite_prop	*cp;
	json_t				*out, *v;
	char				 sub[256], why[TMPL_ERR_MAX];
	size_t				 i, j;

	if ((out = json_object()) == NULL)
		return NULL;
	for (i = 0; i < root->cp_nprops; i++) {
		cp = &root->cp_props[i];
		(void)snprintf(sub, sizeof(sub), "%s%s%s", path,
		    *path != '\0' ? "." : "", cp->cp_name);
		why[0] = '\0';
		if ((v = output_prop(cp, ctx, sub, why, sizeof(why))) != NULL) {
			(void)json_object_set_new(out, cp->cp_name, v);
			continue;
		}
		for (j = 0; j < root->cp_nrequired; j++)
			if (strcmp(root->cp_required[j], cp->cp_name) == 0)
				break;
		if (j < root->cp_nrequired) {
			(void)snprintf(err, errlen, "output %s: %s", sub,
			    why[0] != '\0' ? why : "no value");
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* without output: every leaf step's output, in declaration order */
static json_t *
output_leaves(const struct composite *co, json_t *ctx)
{
	json_t	*out, *steps = json_object_get(ctx, "steps");
	size_t	 i, j, k;
	int	 leaf;

	if ((out = json_object()) == NULL)
		return NULL;
	for (i = 0; i < co->co_nsteps; i++) {
		for (leaf = 1, j = 0; j < co->co_nsteps && leaf; j++)
			for (k = 0; k < co->co_steps[j].cs_ndeps; k++)
				if (co->co_steps[j].cs_deps[k] == i)
					leaf = 0;
		if (leaf)
			(void)json_object_set(out, co->co_steps[i].cs_id,
			    json_object_get(json_object_get(steps,
			    co->co_steps[i].cs_id), "output"));
	}
	return out;
}

json_t *
composite_result(const struct composite *co, json_t *ctx, char *err,
    size_t errlen)
{
	json_t	*out, *r;
	char	*text;

	if (co->co_output != NULL)
		out = output_object(co->co_output, ctx, "", err, errlen);
	else if ((out = output_leaves(co, ctx)) == NULL)
		(void)snprintf(err, errlen, "out of memory");
	if (out == NULL)
		return NULL;
	if ((text = json_dumps(out, JSON_COMPACT)) == NULL) {
		json_decref(out);
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r = json_pack("{s:[{s:s, s:s%}], s:o}", "content", "type", "text",
	    "text", text, strlen(text), "structuredContent", out);
	free(text);
	if (r == NULL)
		(void)snprintf(err, errlen, "out of memory");
	return r;
}

static json_t *
output_schema(const struct composite_prop *root)
{
	const struct composite_prop	*cp;
	json_t				*props, *p, *req;
	size_t				 i;

	props = json_object();
	for (i = 0; i < root->cp_nprops; i++) {
		cp = &root->cp_props[i];
		p = cp->cp_nprops > 0 ? output_schema(cp) :
		    json_pack("{s:s}", "type", cp->cp_type);
		if (p != NULL && cp->cp_desc != NULL)
			(void)json_object_set_new(p, "description",
			    json_string(cp->cp_desc));
		(void)json_object_set_new(props, cp->cp_name, p);
	}
	p = json_pack("{s:s, s:o}", "type", "object", "properties", props);
	if (p != NULL && root->cp_nrequired > 0) {
		req = json_array();
		for (i = 0; i < root->cp_nrequired; i++)
			(void)json_array_append_new(req,
			    json_string(root->cp_required[i]));
		(void)json_object_set_new(p, "required", req);
	}
	return p;
}

json_t *
composite_output_schema(const struct composite *co)
{
	return co->co_output != NULL ? output_schema(co->co_output) : NULL;
}

json_t *
composite_input_schema(const struct composite *co)
{
	return co->co_params != NULL ? json_incref(co->co_params) :
	    json_pack("{s:s}", "type", "object");
}

struct floor {
	int	 fl_steps;	/* tool steps seen */
	int	 fl_readonly;
	int	 fl_destructive;
	int	 fl_openworld;
	char	 fl_why_ro[160];	/* the first step that is not */
	char	 fl_why_d[160];
	char	 fl_why_o[160];
};

static void
floor_step(struct floor *fl, const struct composite_step *cs,
    json_t *(*lookup)(void *, const char *), void *arg)
{
	json_t	*a;

	fl->fl_steps++;
	a = lookup(arg, cs->cs_tool);
	if (!json_is_true(json_object_get(a, "readOnlyHint")) &&
	    fl->fl_readonly) {
		fl->fl_readonly = 0;
		(void)snprintf(fl->fl_why_ro, sizeof(fl->fl_why_ro), "%s",
		    cs->cs_tool);
	}
	if (!json_is_false(json_object_get(a, "destructiveHint")) &&
	    !fl->fl_destructive) {
		fl->fl_destructive = 1;
		(void)snprintf(fl->fl_why_d, sizeof(fl->fl_why_d), "%s",
		    cs->cs_tool);
	}
	if (!json_is_false(json_object_get(a, "openWorldHint")) &&
	    !fl->fl_openworld) {
		fl->fl_openworld = 1;
		(void)snprintf(fl->fl_why_o, sizeof(fl->fl_why_o), "%s",
		    cs->cs_tool);
	}
	json_decref(a);
}

json_t *
composite_annotations(const struct composite *co,
    json_t *(*lookup)(void *, const char *), void *arg, char *err,
    size_t errlen)
{
	const struct composite_step	*cs;
	struct floor			 fl;
	json_t				*out, *ex;
	size_t				 i;

	memset(&fl, 0, sizeof(fl));
	fl.fl_readonly = 1;
	for (i = 0; i < co->co_nsteps; i++) {
		cs = &co->co_steps[i];
		if (cs->cs_kind == COMPOSITE_TOOL)
			floor_step(&fl, cs, lookup, arg);
		else if (cs->cs_kind == COMPOSITE_FOREACH)
			floor_step(&fl, cs->cs_inner, lookup, arg);
	}
	ex = co->co_annotations;
	if (fl.fl_steps > 0) {
		if (json_is_true(json_object_get(ex, "readOnlyHint")) &&
		    !fl.fl_readonly) {
			(void)snprintf(err, errlen, "composite %s claims "
			    "readOnlyHint: true, but its step tool %s is not "
			    "read-only", co->co_name, fl.fl_why_ro);
			return NULL;
		}
		if (json_is_false(json_object_get(ex, "destructiveHint")) &&
		    fl.fl_destructive) {
			(void)snprintf(err, errlen, "composite %s claims "
			    "destructiveHint: false, but its step tool %s may "
			    "be destructive", co->co_name, fl.fl_why_d);
			return NULL;
		}
		if (json_is_false(json_object_get(ex, "openWorldHint")) &&
		    fl.fl_openworld) {
			(void)snprintf(err, errlen, "composite %s claims "
			    "openWorldHint: false, but its step tool %s may "
			    "reach an open world", co->co_name, fl.fl_why_o);
			return NULL;
		}
		out = json_pack("{s:b, s:b, s:b}", "readOnlyHint",
		    fl.fl_readonly, "destructiveHint", fl.fl_destructive,
		    "openWorldHint", fl.fl_openworld);
	} else
		out = json_object();
	if (out != NULL && ex != NULL)
		(void)json_object_update(out, ex);
	return out;
}
