/*
 * view_resolve(): the lists of every backend merged into one view (the
 * RFC 6570 matcher that routes resources/read is proto/uritemplate.c;
 * the view as JSON, view_build(), is view_json.c's).  Each kind is
 * collected by view_collect.c; tools and prompts are named, and their
 * conflicts resolved, by view_conflict.c.
 *
 * Decisions beyond view.h (the reference's weaknesses are not repeated):
 *  - Backends are handled in strcmp order of their names, whatever the
 *    input order.  A backend name given twice is ambiguous: every input
 *    with that name is ignored (one error).  So is an input without a
 *    valid (non-empty UTF-8) name.
 *  - Naming conflicts are computed among ALL tools, hidden included, so
 *    a routing key does not change when visibility does.  A hidden tool
 *    can therefore push a visible one to its prefixed name (or, under
 *    manual, get both dropped).
 *  - "Claimed by several backends" counts distinct backends.  Two tools
 *    of one backend that end up with one name (an override renaming a
 *    tool onto another) are a generated-name collision: both dropped.
 *  - Any final name produced twice drops every claimant, in every
 *    strategy; there is never a silent pick.
 *  - Overrides: the first override for a tool applies.  An empty or
 *    non-UTF-8 name or description, an annotations value that is not an
 *    object, an unknown annotation key or a wrongly typed hint is
 *    ignored with an error; the rest of the override still applies.
 *  - A NULL or empty prefixFormat means "{workload}_".  A format without
 *    "{workload}" is taken literally (prefixed names of different
 *    backends then collide and are dropped).
 *  - Under priority, vp_prefix_mode does not matter for tools (a name
 *    that is not claimed twice is always bare).  For prompts of a
 *    backend not in priorityOrder it does: ALWAYS prefixes them,
 *    ON_CONFLICT only when the name is claimed by several backends.
 *  - What a backend may advertise (view_rules.h): a tool whose name
 *    (after its override) is not an MCP tool name, a prompt, resource
 *    or template whose name or URI is not a label fit to show, is left
 *    out as malformed; a tool or prompt whose advertised name breaks
 *    its rule only once prefixed is left out after naming, before the
 *    collisions, so it claims no name.  A description or title past
 *    its cap is cut in a copy of the entry (vs_extra).
 *  - Errors come out in a deterministic order: per kind (tools,
 *    prompts, resources, templates), malformed entries first (backend
 *    order, then list order), then naming decisions by name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_resolve_int.h"
#include "worker/view/view_rules.h"

#define VIEW_DEFAULT_FORMAT	"{workload}_"

const struct vb_kind vb_tools = { "tools", "name", "tool" };
const struct vb_kind vb_prompts = { "prompts", "name", "prompt" };
const struct vb_kind vb_resources = { "resources", "uri",
    "resource" };
const struct vb_kind vb_templates = { "resourceTemplates",
    "uriTemplate", "resource template" };

static int
vb_set_str(json_t *o, const char *key, const char *val)
{
	return json_object_set_new(o, key, json_string(val));
}

/*
 * The advertised copy of a tool: new name, overridden fields.  A
 * shallow copy: what is not changed is shared with the input (held),
 * and what an override changes is copied first.  A deep copy of every
 * tool was most of a build's time.
 */
static json_t *
vb_tool_copy(const struct vb_item *it)
{
	const struct view_override	*ov = it->it_ov;
	json_t				*o, *ann, *v, *c;
	const char			*k;

	if ((o = json_copy(it->it_obj)) == NULL)
		return NULL;
	if (vb_set_str(o, "name", it->it_final) == -1)
		goto fail;
	if (ov == NULL)
		return o;
	if (ov->vo_description != NULL &&
	    view_utf8_valid(ov->vo_description) &&
	    vb_set_str(o, "description", ov->vo_description) == -1)
		goto fail;
	if (!json_is_object(ov->vo_annotations))
		return o;
	ann = json_object_get(o, "annotations");
	if (json_object_set_new(o, "annotations", json_is_object(ann) ?
	    json_copy(ann) : json_object()) == -1)
		goto fail;
	ann = json_object_get(o, "annotations");
	json_object_foreach(ov->vo_annotations, k, v) {
		if (!vb_annotation_ok(k, v))
			continue;
		if ((c = json_deep_copy(v)) == NULL ||
		    json_object_set_new(ann, k, c) == -1)
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* what view_resolve() keeps alive for its entries */
struct vb_kept {
	struct vb_vec	kp_vv[VIEW_KIND_N];
};

static int
vb_entry_add(struct vb *vb, struct view_resolved *vs, enum view_kind k,
    const struct vb_item *it, size_t *cap)
{
	struct view_entry	*e, *p;
	size_t			 ncap;

	if (vs->vs_n[k] == *cap) {
		ncap = *cap == 0 ? 16 : *cap * 2;
		if (ncap > SIZE_MAX / sizeof(*e) || (p = realloc(vs->vs_e[k],
		    ncap * sizeof(*p))) == NULL) {
			vb->vb_oom = 1;
			return -1;
		}
		vs->vs_e[k] = p;
		*cap = ncap;
	}
	e = &vs->vs_e[k][vs->vs_n[k]++];
	e->ve_name = it->it_final != NULL ? it->it_final : it->it_name;
	e->ve_backend = vb_bname(vb, it->it_bk);
	e->ve_own = it->it_own;
	e->ve_obj = it->it_obj;
	e->ve_ov = it->it_ov;
	e->ve_hidden = it->it_hidden;
	return 0;
}

/* tools and prompts: the survivors of naming, by advertised name */
static int
vb_resolve_named(struct vb *vb, const struct vb_kind *k, struct vb_vec *vv,
    struct view_resolved *vs, enum view_kind kind)
{
	struct vb_item	**f;
	size_t		  i, cap = 0;

	if ((f = vb_resolve(vb, k, vv)) == NULL)
		return -1;
	for (i = 0; f[i] != NULL; i++)
		if (vb_entry_add(vb, vs, kind, f[i], &cap) == -1)
			break;
	free(f);
	return vb->vb_oom ? -1 : 0;
}

/* resources and templates: never renamed, the first backend wins */
static int
vb_resolve_uris(struct vb *vb, const struct vb_kind *k, struct vb_vec *vv,
    struct view_resolved *vs, enum view_kind kind)
{
	struct vb_item	**v, *it, *first = NULL;
	size_t		  i, cap = 0;

	if ((v = vb_vec_sorted(vb, vv, vb_cmp_item)) == NULL)
		return -1;
	for (i = 0; i < vv->vv_n; i++) {
		it = v[i];
		if (first != NULL && strcmp(first->it_name, it->it_name) == 0) {
			vb_err(vb, "%s \"%s\" of backend \"%s\" dropped: "
			    "already offered by backend \"%s\"", k->vk_what,
			    it->it_name, vb_bname(vb, it->it_bk),
			    vb_bname(vb, first->it_bk));
			continue;
		}
		first = it;
		if (vb_entry_add(vb, vs, kind, it, &cap) == -1)
			break;
	}
	free(v);
	return vb->vb_oom ? -1 : 0;
}

int
view_resolve(const struct view_policy *pol, const struct view_input *in,
    size_t ninputs, struct view_resolved *vs)
{
	static const struct view_policy	 dflt;
	static const struct {
		const struct vb_kind	*k;
		enum view_kind		 kind;
	} order[] = {	/* the order errors come out in */
		{ &vb_tools, VIEW_KIND_TOOLS },
		{ &vb_prompts, VIEW_KIND_PROMPTS },
		{ &vb_resources, VIEW_KIND_RESOURCES },
		{ &vb_templates, VIEW_KIND_TEMPLATES },
	};
	struct vb			 vb;
	struct vb_kept			*kp;
	size_t				 i;
	int				 rc;

	memset(vs, 0, sizeof(*vs));
	memset(&vb, 0, sizeof(vb));
	vb.vb_pol = pol != NULL ? pol : &dflt;
	vb.vb_format = VIEW_DEFAULT_FORMAT;
	vb.vb_extra = &vs->vs_extra;
	vb.vb_max_desc = vb.vb_pol->vp_max_description != 0 ?
	    vb.vb_pol->vp_max_description : VIEW_DESCRIPTION_DEFAULT;
	vb.vb_max_title = vb.vb_pol->vp_max_title != 0 ?
	    vb.vb_pol->vp_max_title : VIEW_TITLE_DEFAULT;
	if ((kp = calloc(1, sizeof(*kp))) == NULL ||
	    (vb.vb_errors = json_array()) == NULL) {
		free(kp);
		return -1;
	}
	vs->vs_kept = kp;
	vs->vs_errors = vb.vb_errors;
	if (vb.vb_pol->vp_prefix_format != NULL &&
	    vb.vb_pol->vp_prefix_format[0] != '\0') {
		if (view_utf8_valid(vb.vb_pol->vp_prefix_format))
			vb.vb_format = vb.vb_pol->vp_prefix_format;
		else
			vb_err(&vb, "prefixFormat is not UTF-8; \"%s\" used",
			    VIEW_DEFAULT_FORMAT);
	}
	if (vb_backends(&vb, in, ninputs) == -1)
		goto fail;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct vb_vec *vv = &kp->kp_vv[order[i].kind];

		vb_collect(&vb, order[i].k, vv);
		if (vb.vb_oom)
			goto fail;
		if (order[i].k == &vb_tools || order[i].k == &vb_prompts)
			rc = vb_resolve_named(&vb, order[i].k, vv, vs,
			    order[i].kind);
		else
			rc = vb_resolve_uris(&vb, order[i].k, vv, vs,
			    order[i].kind);
		if (rc == -1 || vb.vb_oom)
			goto fail;
	}
	free(vb.vb_bk);
	return 0;
fail:
	free(vb.vb_bk);
	view_resolved_free(vs);
	return -1;
}

void
view_resolved_free(struct view_resolved *vs)
{
	struct vb_kept	*kp = vs->vs_kept;
	int		 k;

	for (k = 0; k < VIEW_KIND_N; k++) {
		free(vs->vs_e[k]);
		if (kp != NULL)
			vb_vec_free(&kp->kp_vv[k]);
	}
	free(kp);
	json_decref(vs->vs_errors);
	json_decref(vs->vs_extra);
	memset(vs, 0, sizeof(*vs));
}

json_t *
view_entry_json(const struct view_entry *e, enum view_kind k)
{
	struct vb_item	it;
	json_t		*o;

	switch (k) {
	case VIEW_KIND_TOOLS:
		memset(&it, 0, sizeof(it));
		it.it_obj = e->ve_obj;
		it.it_final = (char *)(uintptr_t)e->ve_name;
		it.it_ov = e->ve_ov;
		return vb_tool_copy(&it);
	case VIEW_KIND_PROMPTS:
		if ((o = json_copy(e->ve_obj)) == NULL ||
		    vb_set_str(o, "name", e->ve_name) == -1) {
			json_decref(o);
			return NULL;
		}
		return o;
	default:
		/* never changed: shared with the input */
		return json_incref(e->ve_obj);
	}
}
