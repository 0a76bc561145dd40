/*
 * libFuzzer: view_build() and uritemplate_match() on arbitrary bytes.
 *
 * Input: one flags byte, then NUL-separated segments: a URI template, a
 * URI, and up to four JSON documents, one per backend.  A document that
 * is an object gives "tools", "prompts", "resources" and
 * "resourceTemplates"; any other JSON value is used for all four.
 *
 * Checked: a view always comes back; every list is strictly sorted
 * (so advertised names are unique); every advertised tool and prompt
 * has its route, visible tools are not hidden; the template routes
 * follow the advertised templates; the same inputs in reverse order
 * give the same bytes; a template without braces matches exactly its
 * own text, and one over URITEMPLATE_TMPL_MAX nothing; the layout
 * (view_layout.c) of the same resolution holds the same lists, byte for
 * byte, and the same tool routes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uritemplate.h"
#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"

#define NSEG	6
#define NBK	4

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const names[][NBK] = {
	{ "a", "a_b", "b", "web" },
	{ "a", "b", "a", "web" },		/* a duplicate name */
	{ "web", "b", "a_b", "" },		/* an invalid name */
	{ "b", "a", "docs", "a_b" },
};

static const char *
key_of(const char *list)
{
	if (strcmp(list, "resources") == 0)
		return "uri";
	if (strcmp(list, "resourceTemplates") == 0)
		return "uriTemplate";
	return "name";
}

/* strictly increasing by key, each with its route where there is one */
static void
check_list(json_t *view, const char *list, json_t *routes)
{
	const char	*prev = NULL, *s;
	json_t		*e, *r;
	size_t		 i;

	json_array_foreach(json_object_get(view, list), i, e) {
		s = json_string_value(json_object_get(e, key_of(list)));
		if (s == NULL || (prev != NULL && strcmp(prev, s) >= 0))
			abort();
		prev = s;
		if (routes == NULL)
			continue;
		if ((r = json_object_get(routes, s)) == NULL)
			abort();
		if (strcmp(list, "tools") == 0 &&
		    json_object_get(r, "hidden") != json_false())
			abort();
		if (strcmp(list, "resources") == 0 ? !json_is_string(r) :
		    !json_is_string(json_object_get(r, "b")))
			abort();
	}
}

static void
check_view(json_t *v, const char *uri)
{
	json_t		*routes, *tl, *tr;
	size_t		 i;
	const char	*t;

	if (v == NULL)
		abort();
	routes = json_object_get(v, "routes");
	if (!json_is_array(json_object_get(v, "errors")))
		abort();
	check_list(v, "tools", json_object_get(routes, "tools"));
	check_list(v, "prompts", json_object_get(routes, "prompts"));
	check_list(v, "resources", json_object_get(routes, "resources"));
	check_list(v, "resourceTemplates", NULL);
	tl = json_object_get(v, "resourceTemplates");
	tr = json_object_get(routes, "templates");
	if (json_array_size(tl) != json_array_size(tr))
		abort();
	for (i = 0; i < json_array_size(tl); i++) {
		t = json_string_value(json_object_get(json_array_get(tl, i),
		    "uriTemplate"));
		if (strcmp(t, json_string_value(json_object_get(
		    json_array_get(tr, i), "t"))) != 0)
			abort();
		(void)uritemplate_match(t, uri);
	}
}

static json_t *
pick(json_t *doc, const char *key)
{
	if (json_is_object(doc))
		return json_object_get(doc, key);
	return doc;
}

/* the layout says what the JSON view says: the lists' bytes, the routes */
static void
check_layout(const struct view_policy *pol, const struct view_input *in,
    size_t n, json_t *v)
{
	struct view_resolved	 vs;
	struct view_page_req	 q;
	struct view_page	 pg;
	struct view_route	 r;
	json_t			*rt;
	const char		*name;
	char			*lay, *want;
	size_t			 len;
	int			 k;

	if (view_resolve(pol, in, n, &vs) == -1)
		abort();
	if (view_layout(&vs, 1, NULL, &lay, &len, NULL) == -1)
		abort();
	view_resolved_free(&vs);
	memset(&q, 0, sizeof(q));
	q.vq_pagesize = SIZE_MAX;
	for (k = 0; k < VIEW_KIND_N; k++) {
		q.vq_kind = (enum view_kind)k;
		if (view_layout_page(lay, len, &q, &pg) == -1)
			abort();
		want = json_dumps(json_object_get(v, view_kind_field(k)),
		    JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
		if (want == NULL || strcmp(want, pg.vp_items) != 0)
			abort();
		free(want);
		view_page_clear(&pg);
	}
	json_object_foreach(json_object_get(json_object_get(v, "routes"),
	    "tools"), name, rt) {
		if (view_layout_route(lay, len, VIEW_ROUTE_TOOL, name,
		    strlen(name), &r) != 0 || strcmp(r.vr_backend,
		    json_string_value(json_object_get(rt, "b"))) != 0 ||
		    strcmp(r.vr_own, json_string_value(json_object_get(rt,
		    "n"))) != 0 || r.vr_hidden != json_is_true(
		    json_object_get(rt, "hidden")))
			abort();
		view_route_clear(&r);
	}
	free(lay);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prio[] = { "b", "a", "nobody" };
	static const char *const filter[] = { "y", "b_x", "search" };
	struct view_override	 ov[2];
	struct view_workload	 wl[2];
	struct view_policy	 pol;
	struct view_input	 in[NBK], rev[NBK];
	json_t			*doc[NBK], *ann, *v1, *v2;
	char			*buf, *seg[NSEG], *s1, *s2;
	size_t			 nseg = 0, i, n;
	uint8_t			 fl;

	if (size < 1)
		return 0;
	fl = data[0];
	if ((buf = malloc(size)) == NULL)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	seg[nseg++] = buf;
	for (i = 0; i + 1 < size && nseg < NSEG; i++)
		if (buf[i] == '\0')
			seg[nseg++] = buf + i + 1;
	for (; nseg < NSEG; nseg++)
		seg[nseg] = buf + size - 1;

	/* templates */
	/* a template over the limit matches nothing (uritemplate.h) */
	i = (size_t)uritemplate_match(seg[0], seg[1]);
	n = strlen(seg[0]);
	if (n > URITEMPLATE_TMPL_MAX && i != 0)
		abort();
	if (strpbrk(seg[0], "{}") == NULL && n <= URITEMPLATE_TMPL_MAX &&
	    i != (strcmp(seg[0], seg[1]) == 0))
		abort();
	if (strpbrk(seg[0], "{}") == NULL && n <= URITEMPLATE_TMPL_MAX &&
	    !uritemplate_match(seg[0], seg[0]))
		abort();

	/* the view */
	ann = json_pack("{s:s, s:b, s:i}", "title", "T", "readOnlyHint", 1,
	    "colour", 3);
	memset(ov, 0, sizeof(ov));
	ov[0].vo_tool = "x";
	ov[0].vo_name = "y";
	ov[0].vo_annotations = ann;
	ov[1].vo_tool = "search";
	ov[1].vo_description = "Search";
	memset(wl, 0, sizeof(wl));
	wl[0].vw_name = "a";
	wl[0].vw_overrides = ov;
	wl[0].vw_noverrides = 2;
	wl[0].vw_filter = filter;
	wl[0].vw_nfilter = (fl & 0x20) ? 3 : 0;
	wl[1].vw_name = "b";
	wl[1].vw_exclude_all = (fl & 0x20) != 0;
	wl[1].vw_overrides = ov;
	wl[1].vw_noverrides = 1;
	memset(&pol, 0, sizeof(pol));
	pol.vp_conflict = (enum view_conflict)((fl & 3) % 3);
	pol.vp_prefix_mode = (fl & 4) ? VIEW_PREFIX_ON_CONFLICT :
	    VIEW_PREFIX_ALWAYS;
	pol.vp_prefix_format = (fl & 8) ? "{workload}" : "{workload}_";
	pol.vp_priority = prio;
	pol.vp_npriority = 3;
	pol.vp_exclude_all_tools = (fl & 0x10) && (fl & 0x20);
	pol.vp_default_deny = (fl & 0x10) != 0;
	pol.vp_workloads = wl;
	pol.vp_nworkloads = 2;

	n = 0;
	for (i = 0; i < NBK; i++) {
		doc[i] = json_loads(seg[2 + i], JSON_DECODE_ANY |
		    JSON_ALLOW_NUL, NULL);
		if (doc[i] == NULL && i > 0)
			continue;
		in[n].vi_backend = names[fl >> 6][i];
		in[n].vi_tools = pick(doc[i], "tools");
		in[n].vi_prompts = pick(doc[i], "prompts");
		in[n].vi_resources = pick(doc[i], "resources");
		in[n].vi_templates = pick(doc[i], "resourceTemplates");
		n++;
	}
	for (i = 0; i < n; i++)
		rev[i] = in[n - 1 - i];

	v1 = view_build(&pol, in, n);
	check_view(v1, seg[1]);
	check_layout(&pol, in, n, v1);
	v2 = view_build(&pol, rev, n);
	check_view(v2, seg[1]);
	s1 = json_dumps(v1, JSON_COMPACT | JSON_SORT_KEYS);
	s2 = json_dumps(v2, JSON_COMPACT | JSON_SORT_KEYS);
	if (s1 == NULL || s2 == NULL || strcmp(s1, s2) != 0)
		abort();
	free(s1);
	free(s2);
	json_decref(v1);
	json_decref(v2);
	for (i = 0; i < NBK; i++)
		json_decref(doc[i]);
	json_decref(ann);
	free(buf);
	return 0;
}
