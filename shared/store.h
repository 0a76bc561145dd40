/*
 * The shared state: one LMDB environment mapped by every process.
 * Only the store's files include <lmdb.h> (through store_lmdb.h).
 * Values carry an expiry stamp; an expired record reads as a miss
 * whatever the sweeper has done.  Every read copies the value out before its transaction
 * ends: no pointer into the map ever leaves the store, but for the one
 * narrow exception of store_read(), whose callback sees the mapped
 * bytes for the length of a read transaction and nothing more.
 *
 * Rules (lmdb.h, Caveats; docs/ARCHITECTURE.md, The store): open after
 * fork in each process;
 * never hold a transaction across an event loop iteration or any I/O.
 */
#ifndef VMCPD_STORE_H
#define VMCPD_STORE_H

#include <stddef.h>
#include <stdint.h>

enum store_db {
	STORE_SESSIONS = 0,	/* Legacy client session id -> record */
	STORE_EVENTS,		/* session id + seq -> SSE event */
	STORE_PENDING,		/* request key -> awaited client answer */
	STORE_ERAS,		/* backend name -> era probe result */
	STORE_VIEWS,		/* view key -> aggregated capability view */
	STORE_BSESSIONS,	/* (principal, backend) -> backend session */
	STORE_HANDLES,		/* workflow handle -> state */
	STORE_TOKENS,		/* token cache */
	STORE_HEALTH,		/* backend name -> health */
	STORE_LIMITS,		/* bucket key -> token bucket */
	STORE_BACKENDS,		/* backend name -> initialize result cache */
	STORE_CLOSING,		/* ended record's key -> its payload, to close */
	STORE_KEYS,		/* issuer -> its JWKS; fetch locks, refetch guard */
	STORE_SUBS,		/* resource subscriptions: holdings, made */
	STORE_NDB
};

#define STORE_RDONLY	0x01	/* vmcpctl: read-only, never blocks writers */

#define STORE_KEY_MAX	480	/* below LMDB's 511-byte key limit */
#define STORE_REC_VERSION 1
#define STORE_HDR_LEN	24

/*
 * Record flags.  STORE_F_CLOSE: when the record expires and is swept
 * (by the keeper, or reclaimed at a cap), its payload is moved into
 * STORE_CLOSING under the same key instead of dropped, so that what it
 * holds open elsewhere (a session's backend sessions) can be closed by
 * a process that may do I/O (store_take()).
 */
#define STORE_F_CLOSE	0x0001
#define STORE_CLOSING_TTL_MS	(60ULL * 60 * 1000)

/* return values besides 0 and -1 */
#define STORE_NOTFOUND	1	/* absent or expired */

/*
 * A record may name a group (a client address): the store counts the
 * records of each group, so a cap per group costs one read.
 */
#define STORE_GROUP_MAX	64

struct store;

/* A record as read: the payload is a NUL-terminated malloc'd copy. */
struct store_rec {
	uint64_t	 sr_expires_ms;	/* 0 = never */
	uint64_t	 sr_updated_ms;
	uint16_t	 sr_flags;
	uint8_t		 sr_type;
	uint8_t		 sr_glen;	/* group bytes before the payload */
	char		*sr_data;	/* payload copy, NUL-terminated */
	size_t		 sr_len;	/* payload length, without the NUL */
};

struct store_dbstat {
	const char	*sd_name;
	size_t		 sd_entries;
	size_t		 sd_pages;	/* branch + leaf + overflow */
};

struct store_envstat {
	uint64_t	 se_map_size;
	uint64_t	 se_used_bytes;	/* (last page + 1) * page size */
	uint64_t	 se_free_bytes;	/* of that, free and reusable */
	uint64_t	 se_headroom_bytes; /* kept for deletes */
	unsigned int	 se_page_size;
	unsigned int	 se_max_readers;
	unsigned int	 se_num_readers;
	struct store_dbstat se_db[STORE_NDB];
	size_t		 se_expiry_entries;
};

/* callback of store_iter(): return 0 to go on, non-zero to stop */
typedef int (*store_iter_cb)(void *arg, const void *key, size_t klen,
    const struct store_rec *rec);

/* env */
int	 store_open(struct store **, const char *dir, uint64_t map_size,
	    unsigned int max_readers, int flags);
void	 store_close(struct store *);
int	 store_reader_check(struct store *, int *cleared);
int	 store_sync(struct store *);
int	 store_envstat(struct store *, struct store_envstat *);
/*
 * The id of the last write txn committed by any process: while it
 * stays the same nothing in the store changed, so a copy read at or
 * after it is still the record (but for expiry, which is time's).
 * Read it before the read it validates.  0: unknown.
 */
uint64_t store_generation(struct store *);
const char *store_db_name(enum store_db);
int	 store_db_lookup(const char *name, enum store_db *);

/* records; now_ms decides expiry (pass store_now_ms()) */
int	 store_get(struct store *, enum store_db, const void *key, size_t klen,
	    uint64_t now_ms, struct store_rec *out);
/*
 * store_get() unless have (a record read before: its updated stamp and
 * length) is still current: then STORE_UNCHANGED and nothing copied.
 */
#define STORE_UNCHANGED	3
int	 store_get_changed(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t now_ms, const struct store_rec *have,
	    struct store_rec *out);
/*
 * Read in place: cb gets a live record's payload where it lies in the
 * map, inside a read txn that ends when cb returns.  cb must be pure
 * (no I/O, no store call, no wait: the txn pins the map's pages) and
 * keep no pointer into data; it copies out the slice it needs (a list
 * page, a route).  Returns cb's value (keep it apart from
 * STORE_NOTFOUND), STORE_NOTFOUND, or -1.
 */
typedef int (*store_read_cb)(void *arg, const void *data, size_t len);
int	 store_read(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t now_ms, store_read_cb, void *arg);
/*
 * A write that adds a record, or makes one longer, fails with ENOSPC
 * (as on a full map) once the map is within its headroom (a sixteenth,
 * at least 128 KiB) of full: deletes and sweeps always find pages to
 * commit in.  Rewrites no longer than the record go on.  A rewrite
 * drops the record's old index entry and keeps its group.
 */
int	 store_put(struct store *, enum store_db, const void *key, size_t klen,
	    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms);
/*
 * store_put() with the record's flags (STORE_F_*) and its group (NULL:
 * keep the old record's group, if any).
 */
int	 store_put_ext(struct store *, enum store_db, const void *key,
	    size_t klen, const void *data, size_t len, uint64_t expires_ms,
	    uint64_t now_ms, uint16_t flags, const void *group, size_t glen);
int	 store_del(struct store *, enum store_db, const void *key, size_t klen);
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
/* put only if absent or expired: 0 stored, STORE_EXISTS if a live one is */
#define STORE_EXISTS	2
int	 store_add(struct store *, enum store_db, const void *key, size_t klen,
	    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms);
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
 * Gauges: named counters (1..STORE_GROUP_MAX bytes) kept beside the
 * groups' counts, one write txn per change; never below 0.
 */
int	 store_gauge_add(struct store *, const char *name, int delta);
int	 store_gauge_get(struct store *, const char *name, uint64_t *);
/* each gauge, or each group of db with its count, in key order */
typedef int (*store_count_cb)(void *arg, const char *name, size_t nlen,
    uint64_t n);
int	 store_gauges(struct store *, store_count_cb, void *arg);
int	 store_groups(struct store *, enum store_db, store_count_cb,
	    void *arg);
/* records in group (expired ones until swept), or -1 */
int	 store_group_count(struct store *, enum store_db, const void *group,
	    size_t glen, size_t *count);
int	 store_iter(struct store *, enum store_db, uint64_t now_ms,
	    int include_expired, store_iter_cb, void *arg);
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

/*
 * Read-modify-write of one small record in one write txn: cb gets the
 * live record's payload where it lies in the map (NULL, 0 if absent or
 * expired) and returns STORE_UPD_KEEP (no write), STORE_UPD_PUT (out,
 * *outlen <= outmax bytes, never expiring) or STORE_UPD_DEL.  cb must
 * be pure, as store_read()'s.  Returns 1 written, 0 kept, -1.
 */
#define STORE_UPDATE_MAX	512
#define STORE_UPD_KEEP		0
#define STORE_UPD_PUT		1
#define STORE_UPD_DEL		2
typedef int (*store_update_cb)(void *arg, const void *data, size_t len,
    void *out, size_t outmax, size_t *outlen);
int	 store_update(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t now_ms, store_update_cb, void *arg);

/*
 * Claim one record in one write txn (a handle's first resume): cb sees
 * the record where it lies in the map (rec->sr_data, not NUL-ended,
 * never to be written), live or expired but not yet swept, and returns
 * 0 to take it, having written its mark (*marklen <= markmax bytes:
 * at most the payload's), or any other value to leave it alone.  Taken,
 * the payload is copied to out and replaced by the mark, expiry and
 * group kept, so that a later claim sees the mark.  cb must be pure,
 * as store_read()'s.  Returns 0 (out filled), cb's value (keep it
 * apart from STORE_NOTFOUND), STORE_NOTFOUND or -1.
 */
#define STORE_CLAIM_MARK_MAX	1024
typedef int (*store_claim_cb)(void *arg, const struct store_rec *rec,
    uint64_t now_ms, void *mark, size_t markmax, size_t *marklen);
int	 store_claim(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t now_ms, store_claim_cb, void *arg,
	    struct store_rec *out);

/*
 * Resource subscriptions (store_subs.c; keys and values: subs_rec.h),
 * in STORE_SUBS.  A holding (h|) and its index entry (k|) are written
 * and deleted together, in one write txn per batch; when the first
 * holder of a (backend, URI) comes or the last one goes, the pair's
 * mark (d|) is written for the process that makes and ends the
 * backend's subscriptions to take (store_take_prefix()).  *marked
 * counts the marks written.
 */
struct store_hold {
	const char	*sh_key;	/* h|... (subs_key_hold()) */
	size_t		 sh_klen;
	const char	*sh_val;	/* subs_val_encode()'s */
	size_t		 sh_vlen;
};
/*
 * Hold n pairs (one already held is left as it is) in one write txn;
 * the new ones count in lim's group (sl_group, sl_group_max; sl_max is
 * not used): STORE_LIMIT_GROUP and nothing written if they would pass
 * it.  expires_ms: the holdings' expiry (0: none), flagged STORE_F_CLOSE
 * so that their sweep leaves them in STORE_CLOSING.
 */
int	 store_subs_hold(struct store *, const struct store_hold *, size_t n,
	    const struct store_limit *, uint64_t expires_ms, uint64_t now_ms,
	    size_t *marked);
/* release at most max holdings whose key starts with prefix (a holder's,
 * or a holder's of one URI): *released, *marked; *more if some are left */
int	 store_subs_release(struct store *, const void *prefix, size_t plen,
	    size_t max, uint64_t now_ms, size_t *released, size_t *marked,
	    int *more);
/* a holding the sweep took (STORE_CLOSING): its index entry goes too */
int	 store_subs_closed(struct store *, const void *hkey, size_t hklen,
	    const void *val, size_t vlen, uint64_t now_ms, size_t *marked);

void	 store_rec_clear(struct store_rec *);
uint64_t store_now_ms(void);	/* CLOCK_REALTIME in ms (stamps persist) */

/* codec, pure and unit-tested: header + payload */
int	 store_rec_encode(void *buf, size_t buflen, uint8_t type,
	    uint16_t flags, uint64_t expires_ms, uint64_t updated_ms,
	    const void *data, size_t len);
int	 store_rec_decode(const void *buf, size_t buflen,
	    struct store_rec *out);	/* copies the payload */
int	 store_rec_expired(uint64_t expires_ms, uint64_t now_ms);

#endif
