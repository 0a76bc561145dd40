/*
 * The aggregated capability view: the tools, resources, resource
 * templates and prompts of every backend merged into one, with names
 * resolved (prefix, priority, manual), tools filtered, renamed and
 * re-described, and a routing table from each advertised name back to
 * its backend and the backend's own name.
 *
 * view_build() is pure (no I/O, no store): lists in, one JSON document
 * out, deterministic (backends in sorted name order, never hash order),
 * so it can be stored in LMDB as is and shared by every worker.
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
 * tools are in routes (for composite steps) but not in "tools".
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
