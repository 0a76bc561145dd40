/*
 * Internals of the view subsystem shared by its files and the builder's
 * (worker/builder/view_build.h): view_get.c (what a worker does: get,
 * load, wait for the builder), view_store.c (a layout's shards:
 * publication, reads in place, gc).  Not for the rest of the worker:
 * its interface is view.h, view_get.h and worker.h.
 */
#ifndef VIEW_INT_H
#define VIEW_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include "worker/view/view_get.h"

struct store_rec;
struct view_clock;
struct view_policy;
struct view_resolved;

#define VIEW_SCOPE_ANON		"anon"	/* BSESSION_SCOPE_ANON: one scope */

#define VIEW_RETRY_MS	5000	/* a view lacking a fresh part: rebuilt after */
#define VIEW_STALE_MS	(10 * 60 * 1000)	/* last good lists stand in */
#define VIEW_WAIT_MS	5000	/* a request waits for a first view at most */
#define VIEW_LOCK_RETRY_MS 1000	/* a stale view: ask again after */
#define VIEW_LAYOUT_SPARE_MS 60000	/* a layout outlives its header by */
#define VIEW_ASK_MS	250	/* a first view awaited: look, ask again */
#define VIEW_ASK_SPARE_MS 5000	/* ...past VIEW_WAIT_MS (a builder respawned) */
#define VIEW_GC_MS	60000	/* the builder looks for orphan shards */

struct view_wait {
	TAILQ_ENTRY(view_wait)	 vw_entry;
	view_cb			 vw_cb;
	void			*vw_arg;
	int			 vw_final;	/* the build's own view */
};
TAILQ_HEAD(vwaits, view_wait);


/*
 * How this process gets a view it has none of, or a fresher one: a
 * worker asks the builder and waits (view_get.c, with no maker); the
 * builder builds (view_builds.c sets its maker at views_builder_init()).
 * So the view's readers sit below the builder and never call it.
 */
struct view_maker {
	int	(*vm_get)(struct worker *, const char *scope, view_cb,
		    void *arg);
	void	(*vm_revalidate)(struct worker *, const char *scope);
	void	(*vm_changed)(struct worker *, const char *backend);
	void	(*vm_cancel)(struct worker *, void *arg);
	void	(*vm_free)(void);
};
void	 views_maker_set(const struct view_maker *);
int	 views_building(void);
/* drop arg's waits from waiters */
void	 views_cancel(struct vwaits *waiters, void *arg);

/* view_get.c */
void	 view_key(struct worker *, char *, size_t, const char *, const char *,
	    const char *);
json_t	*view_load(struct worker *, const char *, const char *, const char *,
	    struct store_rec *);
void	 view_save(struct worker *, const char *, const char *, const char *,
	    json_t *, uint64_t, uint64_t, struct store_rec *);
json_t	*view_load_stored(struct worker *, const char *, const char *,
	    const char *, uint64_t *);
uint64_t views_ttl(struct worker *);
void	 views_clock(struct worker *, struct view_clock *);
uint64_t views_stamp(json_t *, const char *);
const struct view_policy *views_policy(struct worker *);
void	 views_answer(struct vwaits *, int, json_t *, const char *);
int	 views_key_scope(struct worker *, const char *, char *, size_t);

/* view_store.c */
json_t	*views_store(struct worker *, const char *,
	    const struct view_resolved *, json_t *, uint64_t);
void	 views_gc(struct worker *);
void	 views_routes_free(void);

#endif /* VIEW_INT_H */
