/*
 * Records by key prefix: taken, ranged, appended to and scanned as
 * sequences (store.c).
 */
#ifndef VMCPD_STORE_PREFIX_H
#define VMCPD_STORE_PREFIX_H

#include <stddef.h>
#include <stdint.h>

#include "shared/store.h"

/*
 * Take (delete) up to max records from the start of db in one write
 * txn, then hand the live ones to cb, copied out, after the commit: a
 * record is taken by one caller only.  Returns the records handed out,
 * or -1; an empty db costs a read txn, not the write lock.  A non-zero
 * return of cb stops the handing out: the rest are dropped, taken.
 */
int	 store_take(struct store *, enum store_db, size_t max,
	    uint64_t now_ms, store_iter_cb, void *arg);
/* store_take() of the records whose key starts with prefix */
int	 store_take_prefix(struct store *, enum store_db, const void *prefix,
	    size_t plen, size_t max, uint64_t now_ms, store_iter_cb,
	    void *arg);
/*
 * The live records whose key starts with prefix, from the first (after
 * NULL) or the first after the key after, at most max of them, copied
 * out and handed to cb after the read txn: how many were read, or -1.
 * *more: there may be more after the last one handed.
 */
int	 store_range(struct store *, enum store_db, const void *prefix,
	    size_t plen, const void *after, size_t alen, size_t max,
	    uint64_t now_ms, store_iter_cb, void *arg, int *more);
/* 1 if a live record's key starts with prefix, 0 if none, -1 */
int	 store_prefix_any(struct store *, enum store_db, const void *prefix,
	    size_t plen, uint64_t now_ms);

/*
 * Sequences: records keyed prefix || be64 seq.  store_append() writes
 * the next seq (from 1) in one write txn and drops the oldest beyond
 * keep; a record at seq 0 is left alone (a header).  store_scan() hands
 * the records with seq > after to cb in order, copied out.
 */
int	 store_append(struct store *, enum store_db, const void *prefix,
	    size_t plen, const void *data, size_t len, uint64_t expires_ms,
	    uint64_t now_ms, size_t keep, uint64_t *seq);
int	 store_scan(struct store *, enum store_db, const void *prefix,
	    size_t plen, uint64_t after, uint64_t now_ms, store_iter_cb,
	    void *arg);

#endif /* VMCPD_STORE_PREFIX_H */
