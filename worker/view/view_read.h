/*
 * A view's layout (view_layout.h) read in place: a page of a list, the
 * route of an advertised name or URI, one listed item.
 */
#ifndef VMCPD_VIEW_READ_H
#define VMCPD_VIEW_READ_H

#include <stddef.h>

#include "worker/view/view.h"

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
