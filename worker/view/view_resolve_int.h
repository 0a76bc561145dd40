/*
 * Internals of view_resolve() shared by its files: view_resolve.c (the
 * resolution's order, its entries, what it keeps), view_collect.c (each
 * kind collected from every backend), view_conflict.c (tools and
 * prompts named, conflicts resolved).  Not for the rest of the worker:
 * its interface is view.h.
 */
#ifndef VMCPD_VIEW_RESOLVE_INT_H
#define VMCPD_VIEW_RESOLVE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct view_input;
struct view_override;
struct view_policy;
struct view_workload;

#define VIEW_UNLISTED		SIZE_MAX

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

extern const struct vb_kind vb_tools, vb_prompts, vb_resources,
	    vb_templates;

#define VB_TOOL_RULE	"a tool name as MCP has them (1 to 128 characters of " \
			"A-Z a-z 0-9 _ - .)"
#define VB_LABEL_RULE	"empty, over %zu characters, or has a control or " \
			"bidirectional formatting character"

/* view_collect.c */
void	 vb_err(struct vb *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
const char *vb_bname(const struct vb *, size_t bi);
int	 vb_backends(struct vb *, const struct view_input *, size_t n);
void	 vb_vec_free(struct vb_vec *);
struct vb_item **vb_vec_sorted(struct vb *, struct vb_vec *,
	    int (*cmp)(const void *, const void *));
int	 vb_annotation_ok(const char *k, json_t *v);
void	 vb_collect(struct vb *, const struct vb_kind *, struct vb_vec *);

/* view_conflict.c */
int	 vb_cmp_item(const void *, const void *);
struct vb_item **vb_resolve(struct vb *, const struct vb_kind *,
	    struct vb_vec *);

#endif /* VMCPD_VIEW_RESOLVE_INT_H */
