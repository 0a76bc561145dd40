/*
 * What a view is resolved by: the conflict rule, the prefix, and each
 * backend's filter and overrides (from the configuration's aggregation
 * and workloads; view_resolve() in view.h applies it).
 */
#ifndef VMCPD_VIEW_POLICY_H
#define VMCPD_VIEW_POLICY_H

#include <stddef.h>
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
#endif
