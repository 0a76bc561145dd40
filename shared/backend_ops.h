/*
 * An operator's word on a backend in an incident, as vmcpctl
 * (tools/vmcpctl_ops.c) and the console (worker/diag/console_action.c)
 * both give it: the daemon's own deletes in this host's store, each in
 * its own short write transaction; the workers notice on their next
 * read.  Synchronous.
 */
#ifndef VMCPD_BACKEND_OPS_H
#define VMCPD_BACKEND_OPS_H

#include "shared/store.h"

/* what backend_ops_reprobe() dropped */
#define BOPS_ERA	0x1	/* the era record */
#define BOPS_INFO	0x2	/* the initialize cache */
#define BOPS_HEALTH	0x4	/* the health record */

/*
 * Forget how backend answered: its era record, initialize cache and
 * health record (unknown until the next health check), so that the
 * next request probes it again.  0 with what was dropped in *dropped,
 * or -1: the store could not be changed.
 */
int	 backend_ops_reprobe(struct store *, const char *backend,
	    int *dropped);
/*
 * The identity scopes' backend sessions of backend dropped: the next
 * listing opens a new one.  How many, or -1.
 */
long	 backend_ops_drop_sessions(struct store *, const char *backend);
/* db's records whose key ends in suffix (NULL: all) deleted: how many,
 * or -1 */
long	 backend_ops_delete(struct store *, enum store_db,
	    const char *suffix);
/* name could be a backend's: not empty, no '|' (the keys' separator) */
int	 backend_ops_name_ok(const char *name);

#endif /* VMCPD_BACKEND_OPS_H */
