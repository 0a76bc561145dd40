/*
 * The view as workers read it in place (view_layout.c): one block of
 * bytes per view in the store, answered from where it lies in the map.
 * Written here; read by view_read.h.
 */
#ifndef VMCPD_VIEW_LAYOUT_H
#define VMCPD_VIEW_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "worker/view/view.h"

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

#endif
