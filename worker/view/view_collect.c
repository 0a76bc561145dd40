/*
 * view_resolve(): one kind collected from every backend (view_resolve.c
 * says what is decided): backends sorted and checked, entries checked,
 * tools given their override and visibility, texts past their caps cut.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_resolve_int.h"
#include "worker/view/view_rules.h"

static const char *const vb_hints[] = { "readOnlyHint", "destructiveHint",
    "idempotentHint", "openWorldHint" };

/* a usable name: non-empty, valid UTF-8 */
static int
vb_cstr_ok(const char *s)
{
	return s != NULL && s[0] != '\0' && view_utf8_valid(s);
}

/* a JSON string usable as a name: no NUL inside, non-empty, UTF-8 */
static const char *
vb_jstr(json_t *v)
{
	const char	*s;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) || !vb_cstr_ok(s))
		return NULL;
	return s;
}

void
vb_err(struct vb *vb, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 r;

	if (vb->vb_oom)
		return;
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r == -1) {
		vb->vb_oom = 1;
		return;
	}
	/* every part was checked to be UTF-8, so only ENOMEM fails here */
	if (json_array_append_new(vb->vb_errors, json_string(s)) == -1)
		vb->vb_oom = 1;
	free(s);
}

const char *
vb_bname(const struct vb *vb, size_t bi)
{
	return vb->vb_bk[bi].bk_in->vi_backend;
}

static int
vb_cmp_input(const void *a, const void *b)
{
	const struct view_input *const	*x = a, *const *y = b;

	return strcmp((*x)->vi_backend, (*y)->vi_backend);
}

static const struct view_workload *
vb_workload(const struct view_policy *pol, const char *name)
{
	size_t	i;

	if (pol->vp_workloads == NULL)
		return NULL;
	for (i = 0; i < pol->vp_nworkloads; i++)
		if (pol->vp_workloads[i].vw_name != NULL &&
		    strcmp(pol->vp_workloads[i].vw_name, name) == 0)
			return &pol->vp_workloads[i];
	return NULL;
}

static size_t
vb_rank(const struct view_policy *pol, const char *name)
{
	size_t	i;

	if (pol->vp_priority == NULL)
		return VIEW_UNLISTED;
	for (i = 0; i < pol->vp_npriority; i++)
		if (pol->vp_priority[i] != NULL &&
		    strcmp(pol->vp_priority[i], name) == 0)
			return i;
	return VIEW_UNLISTED;
}

/* sorted, named, unique backends; the rest ignored with an error */
int
vb_backends(struct vb *vb, const struct view_input *in, size_t n)
{
	const struct view_input	**v = NULL;
	size_t			  i, j, k, nv = 0;

	if (n > 0 && in != NULL) {
		if ((v = calloc(n, sizeof(*v))) == NULL ||
		    (vb->vb_bk = calloc(n, sizeof(*vb->vb_bk))) == NULL)
			goto fail;
	}
	for (i = 0; v != NULL && i < n; i++) {
		if (!vb_cstr_ok(in[i].vi_backend)) {
			vb_err(vb, "a backend without a valid name was "
			    "ignored");
			continue;
		}
		v[nv++] = &in[i];
	}
	if (nv > 0)
		qsort(v, nv, sizeof(*v), vb_cmp_input);
	for (i = 0; i < nv; i = j) {
		for (j = i + 1; j < nv && strcmp(v[j]->vi_backend,
		    v[i]->vi_backend) == 0; j++)
			;
		if (j - i > 1) {
			vb_err(vb, "backend \"%s\" is given %zu times; all "
			    "its lists are ignored", v[i]->vi_backend, j - i);
			continue;
		}
		k = vb->vb_nbk++;
		vb->vb_bk[k].bk_in = v[i];
		vb->vb_bk[k].bk_wl = vb_workload(vb->vb_pol, v[i]->vi_backend);
		vb->vb_bk[k].bk_rank = vb_rank(vb->vb_pol, v[i]->vi_backend);
	}
	free(v);
	return 0;
fail:
	free(v);
	vb->vb_oom = 1;
	return -1;
}

static struct vb_item *
vb_vec_add(struct vb *vb, struct vb_vec *vv)
{
	struct vb_item	*p;
	size_t		 cap;

	if (vv->vv_n == vv->vv_cap) {
		cap = vv->vv_cap == 0 ? 16 : vv->vv_cap * 2;
		if (cap > SIZE_MAX / sizeof(*p) ||
		    (p = realloc(vv->vv_items, cap * sizeof(*p))) == NULL) {
			vb->vb_oom = 1;
			return NULL;
		}
		vv->vv_items = p;
		vv->vv_cap = cap;
	}
	p = &vv->vv_items[vv->vv_n];
	memset(p, 0, sizeof(*p));
	p->it_seq = vv->vv_n++;
	return p;
}

void
vb_vec_free(struct vb_vec *vv)
{
	size_t	i;

	for (i = 0; i < vv->vv_n; i++)
		free(vv->vv_items[i].it_final);
	free(vv->vv_items);
	memset(vv, 0, sizeof(*vv));
}

/* pointers to the items, sorted by cmp (NULL and n 0 when empty) */
struct vb_item **
vb_vec_sorted(struct vb *vb, struct vb_vec *vv,
    int (*cmp)(const void *, const void *))
{
	struct vb_item	**v;
	size_t		  i;

	if ((v = calloc(vv->vv_n + 1, sizeof(*v))) == NULL) {
		vb->vb_oom = 1;
		return NULL;
	}
	for (i = 0; i < vv->vv_n; i++)
		v[i] = &vv->vv_items[i];
	if (vv->vv_n > 0)
		qsort(v, vv->vv_n, sizeof(*v), cmp);
	return v;
}

static const struct view_override *
vb_override(const struct view_workload *wl, const char *tool)
{
	size_t	i;

	if (wl == NULL || wl->vw_overrides == NULL)
		return NULL;
	for (i = 0; i < wl->vw_noverrides; i++)
		if (wl->vw_overrides[i].vo_tool != NULL &&
		    strcmp(wl->vw_overrides[i].vo_tool, tool) == 0)
			return &wl->vw_overrides[i];
	return NULL;
}

static int
vb_hint_key(const char *k)
{
	size_t	i;

	for (i = 0; i < sizeof(vb_hints) / sizeof(vb_hints[0]); i++)
		if (strcmp(k, vb_hints[i]) == 0)
			return 1;
	return 0;
}

/* an annotation an override may set, with the right type */
int
vb_annotation_ok(const char *k, json_t *v)
{
	if (strcmp(k, "title") == 0)
		return vb_jstr(v) != NULL;
	return vb_hint_key(k) && json_is_boolean(v);
}

/* complain about the parts of an override that will be ignored */
static void
vb_override_check(struct vb *vb, const char *bname,
    const struct view_override *ov)
{
	const char	*k;
	json_t		*v;

	if (ov->vo_name != NULL && !vb_cstr_ok(ov->vo_name))
		vb_err(vb, "backend \"%s\": override of tool \"%s\": the new "
		    "name is empty or not UTF-8; ignored", bname, ov->vo_tool);
	if (ov->vo_description != NULL && !view_utf8_valid(ov->vo_description))
		vb_err(vb, "backend \"%s\": override of tool \"%s\": the "
		    "description is not UTF-8; ignored", bname, ov->vo_tool);
	if (ov->vo_annotations == NULL)
		return;
	if (!json_is_object(ov->vo_annotations)) {
		vb_err(vb, "backend \"%s\": override of tool \"%s\": "
		    "annotations must be an object; ignored", bname,
		    ov->vo_tool);
		return;
	}
	json_object_foreach(ov->vo_annotations, k, v) {
		if (vb_annotation_ok(k, v))
			continue;
		if (!view_utf8_valid(k))
			vb_err(vb, "backend \"%s\": override of tool \"%s\": "
			    "an annotation key is not UTF-8; ignored", bname,
			    ov->vo_tool);
		else if (strcmp(k, "title") == 0 || vb_hint_key(k))
			vb_err(vb, "backend \"%s\": override of tool \"%s\": "
			    "annotation \"%s\" must be a %s; ignored", bname,
			    ov->vo_tool, k, strcmp(k, "title") == 0 ?
			    "non-empty string" : "boolean");
		else
			vb_err(vb, "backend \"%s\": override of tool \"%s\": "
			    "unknown annotation \"%s\"; ignored", bname,
			    ov->vo_tool, k);
	}
}

static int
vb_filtered_in(const struct view_workload *wl, const char *name)
{
	size_t	i;

	if (wl->vw_filter == NULL)
		return 0;
	for (i = 0; i < wl->vw_nfilter; i++)
		if (wl->vw_filter[i] != NULL &&
		    strcmp(wl->vw_filter[i], name) == 0)
			return 1;
	return 0;
}

static int
vb_tool_hidden(const struct vb *vb, const struct vb_backend *bk,
    const char *name)
{
	const struct view_workload	*wl = bk->bk_wl;

	if (vb->vb_pol->vp_exclude_all_tools)
		return 1;
	if (wl == NULL)
		return vb->vb_pol->vp_default_deny;
	if (wl->vw_exclude_all)
		return 1;
	if (wl->vw_nfilter > 0 && !vb_filtered_in(wl, name))
		return 1;
	return 0;
}


/*
 * The name (or URI) an entry is listed by, as it came: a tool's must
 * be a tool name unless an override renames it (then it is only sent
 * back to the backend, and must be a label); a prompt's a label of at
 * most VIEW_PROMPT_NAME_MAX characters; a URI or URI template a label
 * of at most VIEW_URI_MAX.  1, or 0 with the entry's error said.
 */
static int
vb_key_ok(struct vb *vb, const struct vb_kind *k, const char *bname,
    const char *name, const struct view_override *ov)
{
	char	q[VIEW_QUOTE_LEN];
	size_t	max = k == &vb_prompts ? VIEW_PROMPT_NAME_MAX : VIEW_URI_MAX;

	if (k == &vb_tools && (ov == NULL || !vb_cstr_ok(ov->vo_name))) {
		if (proto_tool_name_valid(name, strlen(name)))
			return 1;	/* a label too */
		vb_err(vb, "backend \"%s\": tool \"%s\" dropped: its name is "
		    "not " VB_TOOL_RULE, bname, view_quote(q, sizeof(q), name));
		return 0;
	}
	if (view_label_ok(name, max))
		return 1;
	vb_err(vb, "backend \"%s\": %s \"%s\" dropped: its %s is "
	    VB_LABEL_RULE, bname, k->vk_what, view_quote(q, sizeof(q), name),
	    k == &vb_tools || k == &vb_prompts ? "name" : k->vk_key, max);
	return 0;
}

/* a cut text, said once per entry and field */
struct vb_said {
	struct vb		*vs_vb;
	const struct vb_kind	*vs_k;
	const struct vb_item	*vs_it;
};

static void
vb_said_cut(void *arg, const char *field, size_t max, size_t had,
    const char *setting)
{
	struct vb_said	*sd = arg;
	char		 q[VIEW_QUOTE_LEN];

	vb_err(sd->vs_vb, "backend \"%s\": %s \"%s\": %s cut to %zu "
	    "characters (aggregation.%s; it has %zu)", vb_bname(sd->vs_vb,
	    sd->vs_it->it_bk), sd->vs_k->vk_what, view_quote(q, sizeof(q),
	    sd->vs_it->it_own), field, max, setting, had);
}

/*
 * An entry's texts past their caps: the item lists a copy, cut, kept
 * with the view (vs_extra); the backend's lists are not changed.
 */
static void
vb_texts(struct vb *vb, const struct vb_kind *k, struct vb_item *it)
{
	struct vb_said	 sd = { vb, k, it };
	json_t		*o;

	if ((o = view_texts_cut(it->it_obj, k == &vb_tools, vb->vb_max_desc,
	    vb->vb_max_title, vb_said_cut, &sd)) == NULL) {
		vb->vb_oom = 1;
		return;
	}
	if (o == it->it_obj) {
		json_decref(o);
		return;
	}
	if ((*vb->vb_extra == NULL && (*vb->vb_extra = json_array()) ==
	    NULL) || json_array_append_new(*vb->vb_extra, o) == -1) {
		vb->vb_oom = 1;
		return;
	}
	it->it_obj = o;
}

/*
 * Collect one kind from every backend: well-formed entries become
 * items; tools get their override and visibility.
 */
void
vb_collect(struct vb *vb, const struct vb_kind *k, struct vb_vec *vv)
{
	const struct view_input		*in;
	const struct view_override	*ov;
	struct vb_item			*it;
	json_t				*list, *e;
	const char			*bname, *name;
	size_t				 bi, i;
	int				 tools = k == &vb_tools;

	for (bi = 0; bi < vb->vb_nbk && !vb->vb_oom; bi++) {
		in = vb->vb_bk[bi].bk_in;
		bname = in->vi_backend;
		if (k == &vb_tools)
			list = in->vi_tools;
		else if (k == &vb_prompts)
			list = in->vi_prompts;
		else if (k == &vb_resources)
			list = in->vi_resources;
		else
			list = in->vi_templates;
		if (list == NULL)
			continue;
		if (!json_is_array(list)) {
			vb_err(vb, "backend \"%s\": \"%s\" is not an array; "
			    "ignored", bname, k->vk_list);
			continue;
		}
		json_array_foreach(list, i, e) {
			if (!json_is_object(e)) {
				vb_err(vb, "backend \"%s\": %s[%zu] is not an "
				    "object; skipped", bname, k->vk_list, i);
				continue;
			}
			name = vb_jstr(json_object_get(e, k->vk_key));
			if (name == NULL) {
				vb_err(vb, "backend \"%s\": %s[%zu] has no "
				    "valid string \"%s\"; skipped", bname,
				    k->vk_list, i, k->vk_key);
				continue;
			}
			ov = tools ? vb_override(vb->vb_bk[bi].bk_wl, name) :
			    NULL;
			if (!vb_key_ok(vb, k, bname, name, ov))
				continue;
			if ((it = vb_vec_add(vb, vv)) == NULL)
				return;
			it->it_bk = bi;
			it->it_own = it->it_name = name;
			it->it_obj = e;
			vb_texts(vb, k, it);
			if (!tools)
				continue;
			if (ov != NULL) {
				vb_override_check(vb, bname, ov);
				if (vb_cstr_ok(ov->vo_name))
					it->it_name = ov->vo_name;
				it->it_ov = ov;
			}
			it->it_hidden = vb_tool_hidden(vb, &vb->vb_bk[bi],
			    it->it_name);
		}
	}
}
