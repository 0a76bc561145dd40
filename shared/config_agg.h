/*
 * vmcpd.yaml's aggregation (config.h): conflict resolution, overrides,
 * workloads, what a list does when a backend fails.
 */
#ifndef VMCPD_CONFIG_AGG_H
#define VMCPD_CONFIG_AGG_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum config_conflict {
	CONFIG_CONFLICT_PREFIX = 0,	/* the reference's default */
	CONFIG_CONFLICT_PRIORITY,
	CONFIG_CONFLICT_MANUAL
};

enum config_prefix_mode {
	CONFIG_PREFIX_ALWAYS = 0,	/* every name, as the reference */
	CONFIG_PREFIX_ON_CONFLICT	/* only names claimed twice */
};

/* aggregation.pinning.mode (worker/state/pin_store.h) */
enum config_pin_mode {
	CONFIG_PIN_OFF = 0,		/* nothing pinned, nothing checked */
	CONFIG_PIN_WARN,		/* a change is served, flagged */
	CONFIG_PIN_ENFORCE		/* a change is withheld until approved */
};

enum config_partial_failure {
	CONFIG_PARTIAL_FAIL = 0,	/* one backend failing fails a list */
	CONFIG_PARTIAL_BEST_EFFORT	/* leave the failing backend out */
};

/*
 * aggregation.tools[].overrides.<co_tool>: at least one of the three is
 * set.  co_annotations is an object holding only the hints to replace
 * ("title" a string, the *Hint keys booleans), as view_override takes.
 */
struct config_override {
	char			*co_tool;	/* the backend's own name */
	char			*co_name;	/* or NULL */
	char			*co_description; /* or NULL */
	json_t			*co_annotations; /* or NULL */
};

/*
 * aggregation.tools[]: at most one per backend.  cw_filter holds names
 * after the overrides, before the prefix; NULL-terminated, NULL when
 * absent, and cw_nfilter 0 (absent or []) means no filter.
 */
struct config_workload {
	char			*cw_name;	/* a configured backend */
	char			**cw_filter;
	size_t			 cw_nfilter;
	int			 cw_exclude_all;
	struct config_override	*cw_overrides;	/* in file order */
	size_t			 cw_noverrides;
};

/*
 * aggregation: the view_policy of worker/view/view.h, plus how views are
 * built and served.  ca_priority (backend names, the first wins,
 * NULL-terminated) is set only with priority, and then not empty.
 */
struct config_aggregation {
	enum config_conflict	 ca_conflict;		/* default prefix */
	char			*ca_prefix_format;	/* "{workload}_" */
	enum config_prefix_mode	 ca_prefix_mode;	/* default always */
	char			**ca_priority;
	size_t			 ca_npriority;
	int			 ca_exclude_all_tools;
	int			 ca_default_deny;	/* visibility deny */
	struct config_workload	*ca_workloads;		/* in file order */
	size_t			 ca_nworkloads;
	uint64_t		 ca_cache_ttl_ms;	/* view kept, 5 min */
	unsigned int		 ca_page_size;		/* Legacy lists, 1000 */
	unsigned int		 ca_max_backend_pages;	/* followed, 100 */
	size_t			 ca_max_backend_list;	/* bytes, 32 MiB */
	unsigned int		 ca_max_desc;		/* characters, 16384 */
	unsigned int		 ca_max_title;		/* characters, 256 */
	enum config_pin_mode	 ca_pin_mode;		/* default warn */
};

#endif /* VMCPD_CONFIG_AGG_H */
