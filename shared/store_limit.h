/*
 * Caps in the store: adds under a db's and a group's cap, the least
 * recently used evicted, and token buckets (store_bucket.c).
 */
#ifndef VMCPD_STORE_LIMIT_H
#define VMCPD_STORE_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "shared/store.h"

/*
 * store_add() under caps checked in its write txn: at most sl_max
 * records in the db and sl_group_max in the record's group (0: no cap).
 * Records count until swept; at a cap, due records of the db are
 * reclaimed first.  STORE_LIMIT_DB or STORE_LIMIT_GROUP at a cap.
 */
#define STORE_LIMIT_DB		4
#define STORE_LIMIT_GROUP	5
struct store_limit {
	size_t		 sl_max;
	const void	*sl_group;	/* NULL: none */
	size_t		 sl_glen;	/* 1..STORE_GROUP_MAX */
	size_t		 sl_group_max;
};
int	 store_add_limited(struct store *, enum store_db, const void *key,
	    size_t klen, const void *data, size_t len, uint64_t expires_ms,
	    uint64_t now_ms, const struct store_limit *);
/*
 * store_add_limited() at whose group cap the group's record that
 * expires first is evicted rather than the add refused: the least
 * recently used, where each use pushes a record's expiry on
 * (store_touch()).  It is deleted in the add's write txn and its
 * payload handed back in *evicted (sr_data malloc'd; NULL when nothing
 * was evicted).  flags as store_put_ext()'s; the group is the limit's.
 */
int	 store_add_evict(struct store *, enum store_db, const void *key,
	    size_t klen, const void *data, size_t len, uint64_t expires_ms,
	    uint64_t now_ms, uint16_t flags, const struct store_limit *,
	    struct store_rec *evicted);
/*
 * A live record's expiry moved to expires_ms and its updated stamp to
 * now_ms, its payload, flags and group kept: 0, STORE_NOTFOUND (absent
 * or expired: nothing is written, so a record deleted meanwhile stays
 * deleted), or -1.
 */
int	 store_touch(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t expires_ms, uint64_t now_ms);

/*
 * Token buckets (store_bucket.c): one write txn refills each bucket
 * (sb_max tokens per sb_period_ms, full when new), gives back what a
 * dropped lease did not spend, and takes one token (or a lease of
 * several) from every one if each has one, else from none:
 * STORE_LIMITED with *retry_ms, when the emptiest has its token back.
 */
#define STORE_LIMITED		6
#define STORE_BUCKETS_MAX	8
struct store_bucket {
	const void	*sb_key;
	size_t		 sb_klen;
	uint64_t	 sb_max;
	uint64_t	 sb_period_ms;
	/* a lease: 0 takes 1 token; n takes floor(tokens / n) of those
	   left, at least 1 and at most STORE_LEASE_MAX */
	unsigned int	 sb_lease;
	/* tokens of a lease dropped unspent, given back before the take
	   (the bucket capped at sb_max): written only with the take */
	uint64_t	 sb_return;
	uint64_t	 sb_taken;	/* out: tokens taken */
};
#define STORE_LEASE_MAX		1024
int	 store_buckets_take(struct store *, struct store_bucket *,
	    size_t n, uint64_t now_ms, uint64_t *retry_ms);

#endif /* VMCPD_STORE_LIMIT_H */
