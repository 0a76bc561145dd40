/*
 * Pinned definitions in a build (view_builds.c): every tool, prompt and
 * resource template a backend listed is checked (pin_check()) before
 * the view is resolved.  A flagged one (a pending change under warn)
 * goes in as a copy with _meta["vmcpd/pin"]; a withheld one (a pending
 * change under enforce, or a rejected one) is resolved with the others,
 * so that its advertised name is the one clients knew, then cut from
 * the view; the view's header keeps it under "withheld" with the error
 * a call to it gets (core.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/pin_rec.h"
#include "worker/auth/audit.h"
#include "worker/process/process.h"
#include "worker/state/pin_store.h"
#include "worker/view/view.h"
#include "worker/builder/view_build.h"

/* the pinned kinds: the view's kind, the pin's, the header's field */
static const struct {
	enum view_kind	 pk_view;
	enum pin_kind	 pk_pin;
	const char	*pk_field;
} vpin_kinds[] = {
	{ VIEW_KIND_TOOLS, PIN_TOOL, "tools" },
	{ VIEW_KIND_PROMPTS, PIN_PROMPT, "prompts" },
	{ VIEW_KIND_TEMPLATES, PIN_TEMPLATE, "resourceTemplates" },
};
#define VPIN_NKINDS	(sizeof(vpin_kinds) / sizeof(vpin_kinds[0]))

/* the flag on a served pending change: what a client can show */
#define VPIN_META_KEY	"vmcpd/pin"

static json_t **
vpins_list(struct view_input *vi, enum view_kind k)
{
	switch (k) {
	case VIEW_KIND_TOOLS:
		return &vi->vi_tools;
	case VIEW_KIND_PROMPTS:
		return &vi->vi_prompts;
	case VIEW_KIND_TEMPLATES:
		return &vi->vi_templates;
	default:
		return &vi->vi_resources;
	}
}

/* item with _meta["vmcpd/pin"] added: a new reference, or NULL */
static json_t *
vpins_flagged(json_t *item)
{
	json_t *copy, *meta;

	if ((copy = json_copy(item)) == NULL)
		return NULL;
	meta = json_object_get(item, "_meta");
	meta = json_is_object(meta) ? json_copy(meta) : json_object();
	if (meta == NULL || json_object_set_new(meta, VPIN_META_KEY,
	    json_pack("{s:s, s:s}", "state", "pending", "note", "changed "
	    "since it was pinned; awaits an operator's approval")) == -1 ||
	    json_object_set_new(copy, "_meta", meta) == -1) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

/* the backend's own name of an item of the pinned kind ki */
static const char *
vpins_own(size_t ki, const json_t *item)
{
	return json_string_value(json_object_get(item,
	    vpin_kinds[ki].pk_pin == PIN_TEMPLATE ? "uriTemplate" : "name"));
}

/*
 * One kind of a backend's input checked: its list replaced by a copy
 * (held in vp) when an item is flagged.  0, or -1 (no memory: the
 * list is left as listed).
 */
static int
vpins_kind(struct worker *w, const struct config_backend *be,
    struct view_input *vi, size_t ki, struct vpins *vp)
{
	json_t			**lp = vpins_list(vi, vpin_kinds[ki].pk_view);
	json_t			*out = NULL, *item, *flag;
	const char		*own;
	char			 key[PIN_KEY_MAX + 1];
	enum pin_verdict	 v;
	size_t			 i, j;

	for (i = 0; *lp != NULL && i < json_array_size(*lp); i++) {
		item = json_array_get(*lp, i);
		v = pin_check(w, be, vpin_kinds[ki].pk_pin, item);
		if (v == PIN_WITHHOLD) {
			/* resolved with the others, cut after */
			if ((own = vpins_own(ki, item)) == NULL ||
			    pin_key(key, be->cb_name, vpin_kinds[ki].pk_pin,
			    own) == -1 || json_object_set_new(vp->vp_withheld,
			    key, json_true()) == -1)
				return -1;
		}
		if (v == PIN_FLAG && out == NULL) {
			/* the first flagged: a copy of the list from here */
			if ((out = json_array()) == NULL ||
			    json_array_append_new(vp->vp_lists, out) == -1)
				return -1;
			for (j = 0; j < i; j++)
				if (json_array_append(out,
				    json_array_get(*lp, j)) == -1)
					return -1;
		}
		if (out == NULL)
			continue;
		if (v != PIN_FLAG) {
			if (json_array_append(out, item) == -1)
				return -1;
		} else if ((flag = vpins_flagged(item)) == NULL ||
		    json_array_append_new(out, flag) == -1)
			return -1;
	}
	if (out != NULL)
		*lp = out;	/* borrowed from vp_lists, as the input's were */
	return 0;
}

int
vpins_check(struct worker *w, const struct config_backend *be,
    struct view_input *vi, struct vpins *vp)
{
	size_t ki;

	if (w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_OFF)
		return 0;
	for (ki = 0; ki < VPIN_NKINDS; ki++)
		if (vpins_kind(w, be, vi, ki, vp) == -1) {
			log_warnx("pins: backend %s: out of memory; its lists "
			    "go in as listed", be->cb_name);
			return -1;
		}
	return 0;
}

/* the entries of kind k whose (backend, own name) vp withheld: cut from
 * vs, noted in into (advertised name -> {b, n, m}) */
static int
vpins_cut_kind(const struct vpins *vp, struct view_resolved *vs, size_t ki,
    json_t *into)
{
	enum view_kind		 k = vpin_kinds[ki].pk_view;
	struct view_entry	*e;
	char			 key[PIN_KEY_MAX + 1], msg[1024];
	size_t			 i, n = 0;

	for (i = 0; i < vs->vs_n[k]; i++) {
		e = &vs->vs_e[k][i];
		if (pin_key(key, e->ve_backend, vpin_kinds[ki].pk_pin,
		    e->ve_own) == -1 || json_object_get(vp->vp_withheld,
		    key) == NULL) {
			vs->vs_e[k][n++] = *e;
			continue;
		}
		(void)pin_withheld_error(msg, sizeof(msg), e->ve_backend,
		    vpin_kinds[ki].pk_pin, e->ve_own);
		if (json_object_set_new(into, e->ve_name, json_pack(
		    "{s:s, s:s, s:s}", "b", e->ve_backend, "n", e->ve_own,
		    "m", msg)) == -1)
			return -1;
	}
	vs->vs_n[k] = n;
	return 0;
}

int
vpins_cut(const struct vpins *vp, struct view_resolved *vs, json_t *hdr)
{
	json_t	*withheld, *one;
	size_t	 ki;

	if (json_object_size(vp->vp_withheld) == 0)
		return 0;
	if ((withheld = json_object()) == NULL ||
	    json_object_set_new(hdr, "withheld", withheld) == -1)
		return -1;
	for (ki = 0; ki < VPIN_NKINDS; ki++) {
		if ((one = json_object()) == NULL ||
		    json_object_set_new(withheld, vpin_kinds[ki].pk_field,
		    one) == -1 || vpins_cut_kind(vp, vs, ki, one) == -1)
			return -1;
		if (json_object_size(one) == 0)
			(void)json_object_del(withheld,
			    vpin_kinds[ki].pk_field);
	}
	return 0;
}

int
vpins_init(struct vpins *vp)
{
	vp->vp_lists = json_array();
	vp->vp_withheld = json_object();
	return vp->vp_lists != NULL && vp->vp_withheld != NULL ? 0 : -1;
}

void
vpins_clear(struct vpins *vp)
{
	json_decref(vp->vp_lists);
	json_decref(vp->vp_withheld);
	vp->vp_lists = vp->vp_withheld = NULL;
}

/* the builder's hook (pin_on_change()): a new pending change audited */
void
vpins_audit(struct worker *w, const struct pin_rec *rec)
{
	int enforce = w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_ENFORCE;

	audit_workflow(w, NULL, "vmcp_pin_change", enforce ? "denied" :
	    "success", json_pack("{s:s, s:s, s:s}", "type",
	    pin_kind_name(rec->pr_kind), "name", rec->pr_name, "backend",
	    rec->pr_backend), json_pack("{s:s, s:s, s:s}", "pinned",
	    rec->pr_hash, "new", rec->pr_new, "action", enforce ?
	    "withheld" : "flagged"));
}
