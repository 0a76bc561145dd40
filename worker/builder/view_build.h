/*
 * The builder's view builds, shared by view_fetch.c (listing one
 * backend) and view_builds.c (the builds the builder process runs, the
 * view's maker: view_int.h).
 */
#ifndef VMCPD_VIEW_BUILD_H
#define VMCPD_VIEW_BUILD_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/store.h"
#include "worker/view/view_get.h"
#include "worker/view/view_int.h"	/* struct vwaits */

struct config_backend;
struct event;
struct upstream;
struct view_clock;
struct worker;

enum vkind {
	VK_TOOLS = 0,
	VK_RESOURCES,
	VK_TEMPLATES,
	VK_PROMPTS,
	VK_N
};
struct vbuild;

/* fetching one backend's lists */
struct vfetch {
	struct vbuild			*vf_build;
	const struct config_backend	*vf_be;
	struct upstream			*vf_call;
	json_t				*vf_lists[VK_N];
	json_t				*vf_caps;
	json_t				*vf_cursors;	/* seen, for loops */
	json_t				*vf_old;	/* last good lists */
	struct store_rec		 vf_rec;	/* stored lists' stamp */
	uint64_t			 vf_started;	/* this listing, ms */
	uint64_t			 vf_listed;	/* vf_lists', ms */
	char				*vf_cursor;	/* next page, or NULL */
	enum vkind			 vf_kind;
	unsigned int			 vf_pages;
	size_t				 vf_bytes;	/* its items' JSON */
	int				 vf_done;
	int				 vf_ok;
	int				 vf_stale;	/* vf_lists: vf_old's */
	int				 vf_tried;	/* listed, not stored */
	int				 vf_force;	/* list, fresh or not */
	int				 vf_again;	/* changed: list again */
	int				 vf_linked;	/* listed with the build's
							 * principal's link */
	unsigned int			 vf_redos;
	char				 vf_err[512];
};

struct vbuild {
	TAILQ_ENTRY(vbuild)	 vb_entry;
	struct worker		*vb_w;
	char			 vb_scope[64];
	struct vwaits		 vb_waiters;
	struct vfetch		*vb_fetch;
	size_t			 vb_nfetch;
	size_t			 vb_pending;
	const char		*vb_only;	/* list only this backend */
	struct event		*vb_timer;	/* VIEW_WAIT_MS for waiters */
	json_t			*vb_early;	/* published at the timer */
	int			 vb_locked;	/* holds the "lock" record */
};
TAILQ_HEAD(vbuilds, vbuild);
/* what a backend is listed for (view_fetch.c) */
struct vkind_info {
	const char	*vk_method;
	const char	*vk_field;
	const char	*vk_cap;
};
extern const struct vkind_info vkinds[VK_N];

extern struct vbuilds	 vbuilds;	/* view_builds.c */
/* view_fetch.c */
void	 vfetch_start(struct vfetch *);
void	 vfetch_clear(struct vfetch *);
void	 vfetch_reset(struct vfetch *, struct vbuild *,
	    const struct config_backend *, int);
/* a token_exchange backend in the shared build: listed per principal */
int	 vfetch_per_principal(const struct vfetch *);
void	 vfetch_newer(struct vfetch *, const struct view_clock *);

/* view_pins.c: the pins' part of a build */
struct pin_rec;
struct view_input;
struct view_resolved;
struct vpins {
	json_t	*vp_lists;	/* the flagged copies of lists, held */
	json_t	*vp_withheld;	/* pin_key()s of the withheld */
};
int	 vpins_init(struct vpins *);
void	 vpins_clear(struct vpins *);
/* a backend's input checked: its lists of flagged items replaced */
int	 vpins_check(struct worker *, const struct config_backend *,
	    struct view_input *, struct vpins *);
/* the withheld cut from the resolved view, noted in hdr's "withheld" */
int	 vpins_cut(const struct vpins *, struct view_resolved *, json_t *hdr);
void	 vpins_audit(struct worker *, const struct pin_rec *);

/* view_builds.c */
void	 vbuild_fetched(struct vfetch *);
void	 vbuild_free(struct vbuild *);
struct vbuild *vbuild_find(struct worker *, const char *, const char *);
int	 vbuild_wait(struct vbuild *, view_cb, void *, int);
int	 vbuild_begin(struct worker *, const char *, const char *, view_cb,
	    void *, int);
void	 views_revalidate(struct worker *, const char *);

#endif /* VMCPD_VIEW_BUILD_H */
