/*
 * The resolved view as one JSON document (view_build(): what the unit
 * tests pin the naming rules on; workers read view_layout.c's layout
 * instead), and its freshness (view_part_age(), view_mark()).
 */
#include <stdint.h>
#include <stdlib.h>

#include "worker/view/view_policy.h"
#include "worker/view/view.h"

static int
vj_set_str(json_t *o, const char *key, const char *val)
{
	return json_object_set_new(o, key, json_string(val));
}

static json_t *
vj_route(const struct view_entry *e, int tool)
{
	json_t	*r;

	if ((r = json_object()) == NULL)
		return NULL;
	if (vj_set_str(r, "b", e->ve_backend) == -1 ||
	    vj_set_str(r, "n", e->ve_own) == -1 ||
	    (tool && json_object_set_new(r, "hidden",
	    json_boolean(e->ve_hidden)) == -1)) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/* one kind of the resolved view as JSON: its list and its routes */
static int
vj_kind_json(const struct view_resolved *vs, enum view_kind k, json_t *list,
    json_t *routes)
{
	const struct view_entry	*e;
	json_t			*o, *r;
	size_t			 i;

	for (i = 0; i < vs->vs_n[k]; i++) {
		e = &vs->vs_e[k][i];
		switch (k) {
		case VIEW_KIND_RESOURCES:
			if (vj_set_str(routes, e->ve_name, e->ve_backend) ==
			    -1)
				return -1;
			break;
		case VIEW_KIND_TEMPLATES:
			if ((r = json_object()) == NULL ||
			    json_array_append_new(routes, r) == -1 ||
			    vj_set_str(r, "t", e->ve_name) == -1 ||
			    vj_set_str(r, "b", e->ve_backend) == -1)
				return -1;
			break;
		default:
			if (json_object_set_new(routes, e->ve_name, vj_route(e,
			    k == VIEW_KIND_TOOLS)) == -1)
				return -1;
			if (e->ve_hidden)
				continue;
			break;
		}
		if ((o = view_entry_json(e, k)) == NULL ||
		    json_array_append_new(list, o) == -1)
			return -1;
	}
	return 0;
}

json_t *
view_build(const struct view_policy *pol, const struct view_input *in,
    size_t ninputs)
{
	static const struct {
		enum view_kind	 kind;
		const char	*list;
		const char	*route;
	} order[] = {
		{ VIEW_KIND_TOOLS, "tools", "tools" },
		{ VIEW_KIND_PROMPTS, "prompts", "prompts" },
		{ VIEW_KIND_RESOURCES, "resources", "resources" },
		{ VIEW_KIND_TEMPLATES, "resourceTemplates", "templates" },
	};
	struct view_resolved	 vs;
	json_t			*view = NULL, *routes, *list, *r;
	size_t			 i;

	if (view_resolve(pol, in, ninputs, &vs) == -1)
		return NULL;
	if ((view = json_object()) == NULL ||
	    json_object_set(view, "errors", vs.vs_errors) == -1 ||
	    json_object_set_new(view, "routes", json_object()) == -1)
		goto fail;
	routes = json_object_get(view, "routes");
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		list = json_array();
		r = order[i].kind == VIEW_KIND_TEMPLATES ? json_array() :
		    json_object();
		if (json_object_set_new(view, order[i].list, list) == -1 ||
		    json_object_set_new(routes, order[i].route, r) == -1 ||
		    vj_kind_json(&vs, order[i].kind, list, r) == -1)
			goto fail;
	}
	view_resolved_free(&vs);
	return view;
fail:
	view_resolved_free(&vs);
	json_decref(view);
	return NULL;
}

enum view_part
view_part_age(const struct view_clock *c, uint64_t listed_ms)
{
	if (listed_ms + c->vl_ttl > c->vl_now)
		return VIEW_PART_FRESH;
	if (listed_ms + c->vl_ttl + c->vl_stale > c->vl_now)
		return VIEW_PART_STALE;
	return VIEW_PART_MISSING;
}

int
view_mark(json_t *view, const struct view_input *in, size_t n,
    const struct view_clock *c)
{
	json_t		*parts[2] = { NULL, NULL }, *o;
	uint64_t	 until = UINT64_MAX;
	size_t		 i;
	int		 k, rc = -1;

	for (i = 0; i < n; i++) {
		if (in[i].vi_part == VIEW_PART_FRESH) {
			if (in[i].vi_listed_ms + c->vl_ttl < until)
				until = in[i].vi_listed_ms + c->vl_ttl;
			continue;
		}
		if (c->vl_now + c->vl_retry < until)
			until = c->vl_now + c->vl_retry;
		k = in[i].vi_part == VIEW_PART_STALE ? 0 : 1;
		/* a message cut inside a UTF-8 sequence is not a string */
		if ((o = json_string(in[i].vi_why != NULL ? in[i].vi_why :
		    "no reason given")) == NULL)
			o = json_string("(a message that is not UTF-8)");
		if ((parts[k] == NULL && (parts[k] = json_object()) == NULL) ||
		    json_object_set_new(parts[k], in[i].vi_backend, o) == -1) {
			if (parts[k] == NULL)
				json_decref(o);
			goto done;
		}
	}
	if (until == UINT64_MAX)	/* no backend at all */
		until = c->vl_now + c->vl_ttl;
	if ((o = json_integer((json_int_t)until)) == NULL ||
	    json_object_set_new(view, "fresh", o) == -1 ||
	    (parts[0] != NULL && json_object_set(view, "stale", parts[0]) ==
	    -1) || (parts[1] != NULL && json_object_set(view, "missing",
	    parts[1]) == -1))
		goto done;
	rc = 0;
done:
	json_decref(parts[0]);
	json_decref(parts[1]);
	return rc;
}
