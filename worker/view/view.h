/*
 * The aggregated capability view: the tools, resources, resource
 * templates and prompts of every backend merged into one, with names
 * resolved (prefix, priority, manual), tools filtered, renamed and
 * re-described, and a routing table from each advertised name back to
 * its backend and the backend's own name.
 *
 * view_resolve() is pure (no I/O, no store) and deterministic (backends
 * in sorted name order, never hash order): lists in, the entries that
 * stand out.  view_layout() renders them as the block every worker reads
 * in place from the store; view_build() as one JSON document (what the
 * unit tests pin the naming rules on).
 */
#ifndef VMCPD_VIEW_H
#define VMCPD_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

enum view_conflict {
	VIEW_CONFLICT_PREFIX = 0,	/* the reference's default */
	VIEW_CONFLICT_PRIORITY,
	VIEW_CONFLICT_MANUAL
};

enum view_prefix_mode {
	VIEW_PREFIX_ALWAYS = 0,		/* the reference's behaviour */
	VIEW_PREFIX_ON_CONFLICT		/* only names claimed twice */
};

struct view_override {
	const char	*vo_tool;	/* the backend's own tool name */
	const char	*vo_name;	/* new name, or NULL */
	const char	*vo_description;/* new description, or NULL */
	json_t		*vo_annotations;/* hint fields to replace, or NULL */
};

struct view_workload {
	const char		*vw_name;	/* backend name */
	const char *const	*vw_filter;	/* post-override names */
	size_t			 vw_nfilter;	/* 0 = no filter */
	int			 vw_exclude_all;
	const struct view_override *vw_overrides;
	size_t			 vw_noverrides;
};

struct view_policy {
	enum view_conflict	 vp_conflict;
	enum view_prefix_mode	 vp_prefix_mode;
	const char		*vp_prefix_format;	/* "{workload}_" */
	const char *const	*vp_priority;		/* backend names */
	size_t			 vp_npriority;
	int			 vp_exclude_all_tools;
	int			 vp_default_deny;	/* defaultToolVisibility */
	const struct view_workload *vp_workloads;
	size_t			 vp_nworkloads;
	size_t			 vp_max_description;	/* characters; 0: */
	size_t			 vp_max_title;		/* view_rules.h's */
};

/* a backend's part of a view */
enum view_part {
	VIEW_PART_FRESH = 0,	/* listed within aggregation.cacheTtl */
	VIEW_PART_STALE,	/* older lists: listing it again failed */
	VIEW_PART_MISSING	/* nothing usable: left out */
};

/* what one backend listed (borrowed arrays; NULL = kind not offered) */
struct view_input {
	const char	*vi_backend;
	json_t		*vi_tools;
	json_t		*vi_resources;
	json_t		*vi_templates;
	json_t		*vi_prompts;
	enum view_part	 vi_part;	/* for view_mark() */
	uint64_t	 vi_listed_ms;	/* when the lists were listed */
	const char	*vi_why;	/* a stale or missing part: why */
};

/* the times a view's freshness is reckoned with (all ms) */
struct view_clock {
	uint64_t	vl_now;
	uint64_t	vl_ttl;		/* aggregation.cacheTtl */
	uint64_t	vl_stale;	/* past vl_ttl, lists still stand in */
	uint64_t	vl_retry;	/* a view lacking a fresh part */
};

enum view_kind {
	VIEW_KIND_TOOLS = 0,
	VIEW_KIND_RESOURCES,
	VIEW_KIND_TEMPLATES,
	VIEW_KIND_PROMPTS,
	VIEW_KIND_N
};

/* one entry of a resolved view: what the backend listed, as advertised */
struct view_entry {
	const char			*ve_name;	/* advertised, or uri */
	const char			*ve_backend;
	const char			*ve_own;	/* the backend's name/uri */
	json_t				*ve_obj;	/* its entry, borrowed */
	const struct view_override	*ve_ov;		/* tools */
	int				 ve_hidden;	/* tools */
};

/*
 * The view resolved: per kind, the entries that stand, in list order
 * (by advertised name, uri or uriTemplate); hidden tools included.
 * Borrows from the inputs, which must outlive it.  errors: as
 * view_build()'s.  view_build() renders it as JSON, view_layout() as
 * the layout workers read in place.
 */
struct view_resolved {
	struct view_entry	*vs_e[VIEW_KIND_N];
	size_t			 vs_n[VIEW_KIND_N];
	json_t			*vs_errors;
	struct vb_kept		*vs_kept;	/* what the names live in */
	json_t			*vs_extra;	/* entries' objects kept by
						 * others (composites, cut
						 * copies) */
};

int	 view_resolve(const struct view_policy *, const struct view_input *,
	    size_t ninputs, struct view_resolved *);
void	 view_resolved_free(struct view_resolved *);
/* an entry as advertised: new name, overrides (a new reference) */
json_t	*view_entry_json(const struct view_entry *, enum view_kind);

/*
 * Build the view.  The result (a new reference) is:
 *   { "tools": [Tool...], "resources": [...], "resourceTemplates": [...],
 *     "prompts": [...],
 *     "routes": {
 *       "tools":   { "<advertised>": {"b": backend, "n": own name,
 *                                     "hidden": bool} },
 *       "prompts": { "<advertised>": {"b": backend, "n": own name} },
 *       "resources": { "<uri>": backend },
 *       "templates": [ {"t": uriTemplate, "b": backend} ] },
 *     "errors": [ "what was dropped and why", ... ] }
 * Lists are sorted by advertised name, uri or uriTemplate.  Hidden
 * tools are in routes (for composite steps) but not in "tools".  The
 * entries share what they do not change with the inputs (held, so the
 * inputs must not be changed while the view is in use).
 * Returns NULL only on allocation failure.
 */
json_t	*view_build(const struct view_policy *, const struct view_input *,
	    size_t ninputs);

/*
 * What lists listed at listed_ms are now: FRESH within vl_ttl, STALE
 * for vl_stale after that (stand-ins when a new listing fails), then
 * MISSING (too old to serve).
 */
enum view_part view_part_age(const struct view_clock *, uint64_t listed_ms);

/*
 * Mark a built view with its freshness, from every backend's input
 * (missing ones too, which view_build() need not see):
 *   "fresh": ms until which it is served without a rebuild: the oldest
 *            fresh part's listing + vl_ttl, and no later than vl_now +
 *            vl_retry when a part is stale or missing;
 *   "stale", "missing": { backend: why } (absent when empty).
 * 0, or -1 on allocation failure.
 */
int	 view_mark(json_t *view, const struct view_input *, size_t ninputs,
	    const struct view_clock *);

/*
 * The view as workers read it in place (view_layout.c): one block of
 * bytes per view in the store, answered from where it lies in the map.
 */
const char *view_kind_field(enum view_kind);	/* "tools", ... */

/*
 * The layout of a resolved view into *out (malloc'd),
 * stamped with id.  digests (an object, or NULL) gets a digest of each
 * list by field, to tell which lists a new view changed; errs (an
 * array, or NULL) what was left out of 2026-07-28 lists and why.
 */
int	 view_layout(const struct view_resolved *, uint64_t id, json_t *errs,
	    char **out, size_t *outlen, json_t *digests);
int	 view_layout_id(const void *, size_t, uint64_t *);
/* the items of kind in a layout's list and in its 2026-07-28 list */
int	 view_layout_counts(const void *, size_t, enum view_kind,
	    size_t *listed, size_t *modern);
/* the layout of a view in view_build()'s JSON shape (for tests) */
int	 view_layout_json(json_t *view, uint64_t id, char **out,
	    size_t *outlen, json_t *digests);
/* compact JSON text, the bytes jsonrpc_dump() makes, several times faster */
char	*view_json_dump(json_t *, size_t *len);

/* a page asked for: Legacy by offset, 2026-07-28 by its cursor's key */
struct view_page_req {
	enum view_kind	 vq_kind;
	int		 vq_modern;	/* the 2026-07-28 list */
	size_t		 vq_pagesize;
	size_t		 vq_offset;	/* Legacy */
	const char	*vq_last;	/* 2026-07-28: after this key... */
	size_t		 vq_dup;	/* ...and this many items with it */
	int		 vq_more;	/* 2026-07-28: the last item's key even
					 * at the list's end (a shard's) */
	/*
	 * A filter per principal (worker/auth/authz.c), or NULL: an item goes
	 * in the page if it answers 1.  A page then holds up to
	 * vq_pagesize items that pass, and its cursor points past the last
	 * item examined, so that no item is seen twice or skipped.
	 */
	int		(*vq_filter)(void *, enum view_kind, const char *key,
			    size_t klen, const char *text, size_t tlen);
	void		*vq_farg;
};

/* a page as copied out */
struct view_page {
	char	*vp_items;	/* "[item,...]", the items' JSON, NUL-ended */
	size_t	 vp_len;
	size_t	 vp_count;
	size_t	 vp_next;	/* where the next page starts; 0: last */
	char	*vp_next_key;	/* 2026-07-28: the cursor's key, dup */
	size_t	 vp_next_dup;
	int	 vp_past_end;	/* a Legacy offset past the list */
};

/*
 * The page's items copied out of the layout.  A seam for a filter per
 * principal: the items are copied one by one here.  0, or -1 (a bad
 * layout, no memory).
 */
int	 view_layout_page(const void *, size_t, const struct view_page_req *,
	    struct view_page *);
void	 view_page_clear(struct view_page *);

enum view_route_kind {
	VIEW_ROUTE_TOOL = 0,
	VIEW_ROUTE_PROMPT,
	VIEW_ROUTE_RESOURCE
};

/* a route as copied out */
struct view_route {
	char	*vr_backend;
	char	*vr_own;	/* the backend's own name (tools, prompts) */
	char	*vr_map;	/* a tool's x-mcp-header map as JSON, or NULL */
	int	 vr_hidden;
};

#define VIEW_NO_ROUTE	1
/* the route of an advertised name or a resource URI: 0, VIEW_NO_ROUTE, -1 */
int	 view_layout_route(const void *, size_t, enum view_route_kind,
	    const char *name, size_t namelen, struct view_route *);
/* the first template matching uri (exact: equal to it) */
int	 view_layout_template(const void *, size_t, const char *uri,
	    int exact, struct view_route *);
void	 view_route_clear(struct view_route *);
/* the text of the listed item of kind whose key is key: 0 (*text
 * malloc'd, NUL-ended), VIEW_NO_ROUTE, -1 */
int	 view_layout_item(const void *, size_t, enum view_kind,
	    const char *key, size_t klen, char **text, size_t *tlen);

#endif
