/*
 * The shared aggregated view, read (view_get.c and view_*.c).
 */
#ifndef VMCPD_VIEW_GET_H
#define VMCPD_VIEW_GET_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "worker/view/view.h"
#include "worker/view/view_read.h"

struct config_backend;
struct view_page;
struct view_page_req;
struct view_route;
struct worker;

/*
 * view_get.c (and view_*.c): the shared aggregated view (store "views"
 * db).  view_get_scope() answers at once from the stored view (one past
 * its freshness starts a rebuild in the background); only the first
 * view of a generation is waited for.  Views are built by the builder process alone
 * (builder.c), which workers ask by wake-ups.  view_refresh() (the
 * builder): a backend changed; cb gets the view built with its lists
 * listed anew.
 */
typedef void (*view_cb)(void *arg, json_t *view, const char *err);
int	 view_get_scope(struct worker *, const char *scope, view_cb,
	    void *arg);
int	 view_refresh(struct worker *, const char *backend, view_cb,
	    void *arg);
void	 view_get_cancel(struct worker *, void *arg);
/* a backend's lists changed: the builder lists it anew (view_refresh()) */
void	 view_changed(struct worker *, const char *backend);
void	 view_changed_soon(struct worker *, const struct config_backend *);
/* a worker: the builder stored the view named by key */
void	 views_wake(struct worker *, const char *key);
/* a list can't be answered from view (a backend missing): why, or NULL */
const char *view_incomplete(struct worker *, json_t *view);
json_t	*view_peek(struct worker *);	/* the stored view, or NULL */
/* read in place from view's layout (view_read.h): 0, VIEW_NO_ROUTE, -1 */
int	 view_page_get(struct worker *, json_t *view,
	    const struct view_page_req *, struct view_page *);
int	 view_route_get(struct worker *, json_t *view, enum view_route_kind,
	    const char *name, size_t namelen, struct view_route *);
int	 view_template_get(struct worker *, json_t *view, const char *uri,
	    int exact, struct view_route *);
/* a listed item's text by its key (*text malloc'd) */
int	 view_item_get(struct worker *, json_t *view, enum view_kind,
	    const char *key, size_t klen, char **text, size_t *tlen);
size_t	 views_page_size(struct worker *);
void	 views_free(void);

#endif
