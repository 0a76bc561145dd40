/*
 * view_resolve(): the lists of every backend merged into one view (the
 * RFC 6570 matcher that routes resources/read is proto/uritemplate.c;
 * the view as JSON, view_build(), is view_json.c's).
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_rules.h"

#define VIEW_DEFAULT_FORMAT	"{workload}_"
#define VIEW_PLACEHOLDER	"{workload}"
#define VIEW_UNLISTED		SIZE_MAX
#define VIEW_MAX_NAMED		3	/* claimants named in one error */

struct vb_backend {
	const struct view_input		*bk_in;
	const struct view_workload	*bk_wl;		/* NULL: no entry */
	size_t				 bk_rank;	/* in priorityOrder */
};

/* one entry of one backend's list */
struct vb_item {
	size_t				 it_bk;		/* vb_bk index */
	size_t				 it_seq;	/* creation order */
	const char			*it_own;	/* backend's name/uri */
	const char			*it_name;	/* post-override */
	char				*it_final;	/* advertised */
	json_t				*it_obj;	/* borrowed */
	const struct view_override	*it_ov;
	int				 it_hidden;
	int				 it_dropped;
};

struct vb_vec {
	struct vb_item	*vv_items;
	size_t		 vv_n;
	size_t		 vv_cap;
};

struct vb {
	const struct view_policy	*vb_pol;
	const char			*vb_format;
	struct vb_backend		*vb_bk;
	size_t				 vb_nbk;
	json_t				*vb_errors;
	json_t				**vb_extra;	/* &vs_extra: cut copies */
	size_t				 vb_max_desc;	/* characters */
	size_t				 vb_max_title;
	int				 vb_oom;
};

/* the kinds an item can be, for collection and messages */
struct vb_kind {
	const char	*vk_list;	/* field name in the result */
	const char	*vk_key;	/* the name field of an entry */
	const char	*vk_what;	/* in messages */
};

static const struct vb_kind vb_tools = { "tools", "name", "tool" };
static const struct vb_kind vb_prompts = { "prompts", "name", "prompt" };
static const struct vb_kind vb_resources = { "resources", "uri",
    "resource" };
static const struct vb_kind vb_templates = { "resourceTemplates",
    "uriTemplate", "resource template" };

static const char *const vb_hints[] = { "readOnlyHint", "destructiveHint",
    "idempotentHint", "openWorldHint" };

static void	vb_err(struct vb *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

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

static void
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

static const char *
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

/* by name, then backend (sorted), then position: a total order */
/* ties between equal names: backend order, then input order */
static int
vb_cmp_origin(const struct vb_item *x, const struct vb_item *y)
{
	if (x->it_bk != y->it_bk)
		return x->it_bk < y->it_bk ? -1 : 1;
	if (x->it_seq != y->it_seq)
		return x->it_seq < y->it_seq ? -1 : 1;
	return 0;
}

static int
vb_cmp_item(const void *a, const void *b)
{
	const struct vb_item *const	*x = a, *const *y = b;
	int				 c;

	if ((c = strcmp((*x)->it_name, (*y)->it_name)) != 0)
		return c;
	return vb_cmp_origin(*x, *y);
}

static int
vb_cmp_final(const void *a, const void *b)
{
	const struct vb_item *const	*x = a, *const *y = b;
	int				 c;

	if ((c = strcmp((*x)->it_final, (*y)->it_final)) != 0)
		return c;
	return vb_cmp_origin(*x, *y);
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
static int
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

static void
vb_vec_free(struct vb_vec *vv)
{
	size_t	i;

	for (i = 0; i < vv->vv_n; i++)
		free(vv->vv_items[i].it_final);
	free(vv->vv_items);
	memset(vv, 0, sizeof(*vv));
}

/* pointers to the items, sorted by cmp (NULL and n 0 when empty) */
static struct vb_item **
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
static int
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

#define VB_TOOL_RULE	"a tool name as MCP has them (1 to 128 characters of " \
			"A-Z a-z 0-9 _ - .)"
#define VB_LABEL_RULE	"empty, over %zu characters, or has a control or " \
			"bidirectional formatting character"

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
static void
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

/* fmt with every {workload} replaced by the backend, then the name */
static char *
vb_compose(const char *fmt, const char *backend, const char *name)
{
	const size_t	 plen = sizeof(VIEW_PLACEHOLDER) - 1;
	const size_t	 blen = strlen(backend);
	const char	*p, *q;
	char		*s, *o;
	size_t		 len = 0, add;

	for (p = fmt; (q = strstr(p, VIEW_PLACEHOLDER)) != NULL; p = q + plen) {
		add = (size_t)(q - p);
		if (len > SIZE_MAX - add - blen)
			return NULL;
		len += add + blen;
	}
	add = strlen(p) + strlen(name);
	if (len > SIZE_MAX - add - 1)
		return NULL;
	len += add;
	if ((s = malloc(len + 1)) == NULL)
		return NULL;
	o = s;
	for (p = fmt; (q = strstr(p, VIEW_PLACEHOLDER)) != NULL; p = q + plen) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, backend, blen);
		o += blen;
	}
	add = strlen(p);
	memcpy(o, p, add);
	o += add;
	add = strlen(name);
	memcpy(o, name, add);
	o[add] = '\0';
	return s;
}

static void
vb_set_final(struct vb *vb, struct vb_item *it, int prefixed)
{
	if (prefixed)
		it->it_final = vb_compose(vb->vb_format,
		    vb_bname(vb, it->it_bk), it->it_name);
	else
		it->it_final = strdup(it->it_name);
	if (it->it_final == NULL)
		vb->vb_oom = 1;
}

/* the text written to a memstream, or NULL (freed) if writing failed */
static char *
vb_memstream_end(FILE *f, char **s)
{
	int bad = ferror(f);

	if (fclose(f) == EOF || bad) {
		free(*s);
		*s = NULL;
	}
	return *s;
}

/* "\"a\", \"b\"": the distinct backends of a group (sorted by backend) */
static char *
vb_list_backends(const struct vb *vb, struct vb_item **g, size_t n)
{
	char	*s = NULL;
	size_t	 len = 0, i;
	FILE	*f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i > 0 && g[i]->it_bk == g[i - 1]->it_bk)
			continue;
		fprintf(f, "%s\"%s\"", i > 0 ? ", " : "",
		    vb_bname(vb, g[i]->it_bk));
	}
	return vb_memstream_end(f, &s);
}

/*
 * "tool \"x\" of backend \"a\", ...": the claimants of g but skip, at
 * most VIEW_MAX_NAMED of them, so that k claimants of one name cost
 * O(k) error text, not O(k^2).
 */
static char *
vb_list_claimants(const struct vb *vb, const struct vb_kind *k,
    struct vb_item **g, size_t n, const struct vb_item *skip)
{
	char	*s = NULL;
	size_t	 len = 0, i, shown = 0;
	FILE	*f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n && shown < VIEW_MAX_NAMED; i++) {
		if (g[i] == skip)
			continue;
		fprintf(f, "%s%s \"%s\" of backend \"%s\"",
		    shown > 0 ? ", " : "", k->vk_what, g[i]->it_own,
		    vb_bname(vb, g[i]->it_bk));
		shown++;
	}
	if (n - 1 > shown)
		fprintf(f, " and %zu more", n - 1 - shown);
	return vb_memstream_end(f, &s);
}

static void
vb_drop_priority(struct vb *vb, const struct vb_kind *k, struct vb_item *it,
    struct vb_item **g, size_t n, size_t best)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (vb->vb_bk[g[i]->it_bk].bk_rank == best)
			break;
	it->it_dropped = 1;
	vb_err(vb, "%s \"%s\" of backend \"%s\" dropped: the name \"%s\" "
	    "goes to backend \"%s\", earlier in priorityOrder", k->vk_what,
	    it->it_own, vb_bname(vb, it->it_bk), it->it_name,
	    vb_bname(vb, g[i < n ? i : 0]->it_bk));
}

/*
 * Name one group of items claiming one (post-override) name: keep it
 * bare, prefix it, or drop it, per strategy.
 */
static void
vb_name_group(struct vb *vb, const struct vb_kind *k, struct vb_item **g,
    size_t n)
{
	const struct view_policy	*pol = vb->vb_pol;
	struct vb_item			*it;
	size_t				 i, nb = 0, best = VIEW_UNLISTED, rank;
	char				*list;
	int				 always, conflict;

	for (i = 0; i < n; i++) {
		if (i == 0 || g[i]->it_bk != g[i - 1]->it_bk)
			nb++;
		if (vb->vb_bk[g[i]->it_bk].bk_rank < best)
			best = vb->vb_bk[g[i]->it_bk].bk_rank;
	}
	conflict = nb > 1;
	always = pol->vp_prefix_mode != VIEW_PREFIX_ON_CONFLICT;

	for (i = 0; i < n && !vb->vb_oom; i++) {
		it = g[i];
		rank = vb->vb_bk[it->it_bk].bk_rank;
		if (k == &vb_prompts) {
			if (pol->vp_conflict != VIEW_CONFLICT_PRIORITY ||
			    rank == VIEW_UNLISTED)
				vb_set_final(vb, it, always || conflict);
			else if (rank == best)
				vb_set_final(vb, it, 0);
			else
				vb_drop_priority(vb, k, it, g, n, best);
			continue;
		}
		switch (pol->vp_conflict) {
		case VIEW_CONFLICT_PRIORITY:
			if (!conflict ||
			    (rank == best && rank != VIEW_UNLISTED))
				vb_set_final(vb, it, 0);
			else if (rank == VIEW_UNLISTED)
				vb_set_final(vb, it, 1);
			else
				vb_drop_priority(vb, k, it, g, n, best);
			break;
		case VIEW_CONFLICT_MANUAL:
			if (!conflict) {
				vb_set_final(vb, it, 0);
				break;
			}
			it->it_dropped = 1;
			if ((list = vb_list_backends(vb, g, n)) == NULL) {
				vb->vb_oom = 1;
				break;
			}
			vb_err(vb, "tool \"%s\" of backend \"%s\" dropped: the "
			    "name \"%s\" is claimed by backends %s and "
			    "conflictResolution is manual; add an override "
			    "that renames it", it->it_own,
			    vb_bname(vb, it->it_bk), it->it_name, list);
			free(list);
			break;
		default:
			vb_set_final(vb, it, always || conflict);
			break;
		}
	}
}

/* drop every claimant of a final name produced more than once */
static void
vb_collisions(struct vb *vb, const struct vb_kind *k, struct vb_item **v,
    size_t n)
{
	size_t	 i, j, m;
	char	*list;

	for (i = 0; i < n && !vb->vb_oom; i = j) {
		for (j = i + 1; j < n && strcmp(v[j]->it_final,
		    v[i]->it_final) == 0; j++)
			;
		if (j - i < 2)
			continue;
		for (m = i; m < j && !vb->vb_oom; m++) {
			v[m]->it_dropped = 1;
			list = vb_list_claimants(vb, k, v + i, j - i, v[m]);
			if (list == NULL) {
				vb->vb_oom = 1;
				break;
			}
			vb_err(vb, "%s \"%s\" of backend \"%s\" dropped: its "
			    "advertised name \"%s\" is also generated for %s",
			    k->vk_what, v[m]->it_own,
			    vb_bname(vb, v[m]->it_bk), v[m]->it_final, list);
			free(list);
		}
	}
}

/*
 * A name that keeps the rule as the backend gave it may break it once
 * prefixed (a prefixFormat's characters, or its length): dropped.
 */
static void
vb_final_check(struct vb *vb, const struct vb_kind *k, struct vb_item *it)
{
	char	q[VIEW_QUOTE_LEN];

	if (it->it_dropped || it->it_final == NULL)
		return;
	if (k == &vb_tools ? proto_tool_name_valid(it->it_final,
	    strlen(it->it_final)) : view_label_ok(it->it_final,
	    VIEW_PROMPT_NAME_MAX))
		return;
	it->it_dropped = 1;
	if (k == &vb_tools)
		vb_err(vb, "tool \"%s\" of backend \"%s\" dropped: its "
		    "advertised name \"%s\" is not " VB_TOOL_RULE, it->it_own,
		    vb_bname(vb, it->it_bk), view_quote(q, sizeof(q),
		    it->it_final));
	else
		vb_err(vb, "prompt \"%s\" of backend \"%s\" dropped: its "
		    "advertised name \"%s\" is " VB_LABEL_RULE, it->it_own,
		    vb_bname(vb, it->it_bk), view_quote(q, sizeof(q),
		    it->it_final), (size_t)VIEW_PROMPT_NAME_MAX);
}

/*
 * Tools or prompts: name every item, then drop generated collisions.
 * Returns the surviving items sorted by advertised name (NULL-ended).
 */
static struct vb_item **
vb_resolve(struct vb *vb, const struct vb_kind *k, struct vb_vec *vv)
{
	struct vb_item	**v, **f = NULL;
	size_t		  i, j, nf = 0;

	if ((v = vb_vec_sorted(vb, vv, vb_cmp_item)) == NULL)
		return NULL;
	for (i = 0; i < vv->vv_n && !vb->vb_oom; i = j) {
		for (j = i + 1; j < vv->vv_n && strcmp(v[j]->it_name,
		    v[i]->it_name) == 0; j++)
			;
		vb_name_group(vb, k, v + i, j - i);
	}
	for (i = 0; i < vv->vv_n && !vb->vb_oom; i++)
		vb_final_check(vb, k, v[i]);
	if (vb->vb_oom)
		goto fail;
	if ((f = calloc(vv->vv_n + 1, sizeof(*f))) == NULL)
		goto fail;
	for (i = 0; i < vv->vv_n; i++)
		if (!v[i]->it_dropped)
			f[nf++] = v[i];
	if (nf > 0)
		qsort(f, nf, sizeof(*f), vb_cmp_final);
	vb_collisions(vb, k, f, nf);
	for (i = j = 0; i < nf; i++)
		if (!f[i]->it_dropped)
			f[j++] = f[i];
	f[j] = NULL;
	free(v);
	return f;
fail:
	vb->vb_oom = 1;
	free(v);
	free(f);
	return NULL;
}

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
