/*
 * Composites in the view, in the builder (view_builds.c): a composite
 * is advertised as a tool when every step's tool resolves among the
 * resolved tools (hidden ones included), so one whose backend left the
 * view (unhealthy, breaker open: views_breaker_out()) leaves with it
 * and comes back with it.  Its entry is routed to COMPOSITE_ROUTE.
 * Why one is not advertised is logged once per reason, not per build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/composite.h"
#include "shared/composite_io.h"
#include "shared/config.h"
#include "shared/log.h"
#include "worker/composite/composite_run.h"
#include "worker/view/view.h"

/* composite name -> why it is not advertised, as last logged */
static json_t	*cview_logged;

/*
 * A step's tool among the resolved ones: "<backend>.<its own name>"
 * first (the documented form), else an advertised name.  Never a
 * composite (they do not nest).
 */
static const struct view_entry *
cview_tool(const struct view_resolved *vs, const char *tool)
{
	const struct view_entry	*e;
	size_t			 i, n = vs->vs_n[VIEW_KIND_TOOLS], len;

	for (i = 0; i < n; i++) {
		e = &vs->vs_e[VIEW_KIND_TOOLS][i];
		len = strlen(e->ve_backend);
		if (strncmp(tool, e->ve_backend, len) == 0 &&
		    tool[len] == '.' && strcmp(tool + len + 1, e->ve_own) == 0)
			return e;
	}
	for (i = 0; i < n; i++) {
		e = &vs->vs_e[VIEW_KIND_TOOLS][i];
		if (strcmp(e->ve_name, tool) == 0 &&
		    strcmp(e->ve_backend, COMPOSITE_ROUTE) != 0)
			return e;
	}
	return NULL;
}

static json_t *
cview_annotations(void *arg, const char *tool)
{
	const struct view_entry	*e;
	json_t			*o, *a;

	if ((e = cview_tool(arg, tool)) == NULL ||
	    (o = view_entry_json(e, VIEW_KIND_TOOLS)) == NULL)
		return NULL;
	a = json_incref(json_object_get(o, "annotations"));
	json_decref(o);
	return a;
}

static void
cview_log(const struct composite *co, const char *why)
{
	const char *had;

	if (cview_logged == NULL && (cview_logged = json_object()) == NULL)
		return;
	had = json_string_value(json_object_get(cview_logged, co->co_name));
	if (why == NULL) {
		if (had != NULL) {
			log_info("composite %s: advertised again",
			    co->co_name);
			(void)json_object_del(cview_logged, co->co_name);
		}
		return;
	}
	if (had != NULL && strcmp(had, why) == 0)
		return;
	log_warnx("composite %s not advertised: %s", co->co_name, why);
	(void)json_object_set_new(cview_logged, co->co_name,
	    json_string(why));
}

/* the composite's Tool, or NULL and why */
static json_t *
cview_tool_of(const struct composite *co, struct view_resolved *vs,
    char *why, size_t whylen)
{
	const struct composite_step	*cs;
	const struct view_entry		*e;
	json_t				*tool, *ann, *out;
	char				 err[256];
	size_t				 i;

	for (i = 0; i < vs->vs_n[VIEW_KIND_TOOLS]; i++) {
		e = &vs->vs_e[VIEW_KIND_TOOLS][i];
		if (strcmp(e->ve_name, co->co_name) == 0) {
			(void)snprintf(why, whylen, "its name is also tool "
			    "%s of backend %s (as %s)", e->ve_own,
			    e->ve_backend, e->ve_name);
			return NULL;
		}
	}
	for (i = 0; i < co->co_nsteps; i++) {
		cs = &co->co_steps[i];
		if (cs->cs_kind == COMPOSITE_FOREACH)
			cs = cs->cs_inner;
		if (cs->cs_kind != COMPOSITE_TOOL ||
		    cview_tool(vs, cs->cs_tool) != NULL)
			continue;
		(void)snprintf(why, whylen, "step %s: tool %s is not in the "
		    "view (unknown, or its backend is out)",
		    co->co_steps[i].cs_id, cs->cs_tool);
		return NULL;
	}
	if ((ann = composite_annotations(co, cview_annotations, vs, err,
	    sizeof(err))) == NULL) {
		(void)snprintf(why, whylen, "%s", err);
		return NULL;
	}
	tool = json_pack("{s:s, s:o, s:o}", "name", co->co_name,
	    "inputSchema", composite_input_schema(co), "annotations", ann);
	if (tool == NULL)
		goto oom;
	if (co->co_desc != NULL && json_object_set_new(tool, "description",
	    json_string(co->co_desc)) == -1)
		goto oom;
	if ((out = composite_output_schema(co)) != NULL &&
	    json_object_set_new(tool, "outputSchema", out) == -1)
		goto oom;
	return tool;
oom:
	json_decref(tool);
	(void)snprintf(why, whylen, "out of memory");
	return NULL;
}

static int
cview_cmp(const void *a, const void *b)
{
	const struct view_entry *x = a, *y = b;

	return strcmp(x->ve_name, y->ve_name);
}

int
composite_view_add(const struct config *cf, struct view_resolved *vs)
{
	const struct composite_list	*cl = cf->cf_composites;
	struct view_entry		*e, *p;
	json_t				*tool;
	char				 why[512];
	size_t				 i, n;

	if (cl == NULL || cl->cl_n == 0)
		return 0;
	if (vs->vs_extra == NULL && (vs->vs_extra = json_array()) == NULL)
		return -1;
	n = vs->vs_n[VIEW_KIND_TOOLS];
	if ((p = realloc(vs->vs_e[VIEW_KIND_TOOLS], (n + cl->cl_n) *
	    sizeof(*p))) == NULL)
		return -1;
	vs->vs_e[VIEW_KIND_TOOLS] = p;
	for (i = 0; i < cl->cl_n; i++) {
		if ((tool = cview_tool_of(cl->cl_items[i], vs, why,
		    sizeof(why))) == NULL) {
			cview_log(cl->cl_items[i], why);
			continue;
		}
		cview_log(cl->cl_items[i], NULL);
		if (json_array_append_new(vs->vs_extra, tool) == -1)
			return -1;
		e = &vs->vs_e[VIEW_KIND_TOOLS][vs->vs_n[VIEW_KIND_TOOLS]++];
		memset(e, 0, sizeof(*e));
		e->ve_name = cl->cl_items[i]->co_name;
		e->ve_backend = COMPOSITE_ROUTE;
		e->ve_own = cl->cl_items[i]->co_name;
		e->ve_obj = tool;
	}
	/* the lists and routes are sorted by name */
	qsort(vs->vs_e[VIEW_KIND_TOOLS], vs->vs_n[VIEW_KIND_TOOLS],
	    sizeof(*p), cview_cmp);
	return 0;
}
