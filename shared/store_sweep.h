#ifndef VMCPD_STORE_SWEEP_H
#define VMCPD_STORE_SWEEP_H

#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * One write txn over at most max due index entries: expired records
 * go, stale entries (of a record rewritten or gone) too.  Returns the
 * records deleted, or -1; *more says due entries may be left.
 */
struct store_sweep {
	size_t		 ss_deleted;	/* records */
	size_t		 ss_entries;	/* index entries, stale ones too */
	int		 ss_more;
};
int	 store_sweep(struct store *, uint64_t now_ms, size_t max,
	    struct store_sweep *);

#endif /* VMCPD_STORE_SWEEP_H */
