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

struct view_policy;	/* view_policy.h */

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
#endif
