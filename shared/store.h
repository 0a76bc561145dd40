/*
 * The shared state: one LMDB environment mapped by every process.
 * Only the store's files include <lmdb.h> (through store_lmdb.h).
 * Values carry an expiry stamp; an expired record reads as a miss
 * whatever the sweeper has done.  Every read copies the value out before its transaction
 * ends: no pointer into the map ever leaves the store, but for the one
 * narrow exception of store_read(), whose callback sees the mapped
 * bytes for the length of a read transaction and nothing more.
 * This header: the dbs, a record, open, get, put, delete; the rest by
 * concern in store_prefix.h, store_limit.h, store_stat.h,
 * store_update.h, store_sweep.h, store_subs.h and store_codec.h.
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
	STORE_TASKS,		/* vmcpd's task id -> backend, its id, owner */
	STORE_LINKS,		/* scope|backend -> a user's upstream tokens */
	STORE_CONSENTS,		/* consent id -> a pending consent */
	STORE_PINS,		/* backend|kind|name -> a pinned definition */
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

/* callback of store_iter(): return 0 to go on, non-zero to stop */
typedef int (*store_iter_cb)(void *arg, const void *key, size_t klen,
    const struct store_rec *rec);

/* env */
int	 store_open(struct store **, const char *dir, uint64_t map_size,
	    unsigned int max_readers, int flags);
void	 store_close(struct store *);
int	 store_reader_check(struct store *, int *cleared);
int	 store_sync(struct store *);
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
/* put only if absent or expired: 0 stored, STORE_EXISTS if a live one is */
#define STORE_EXISTS	2
int	 store_add(struct store *, enum store_db, const void *key, size_t klen,
	    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms);

void	 store_rec_clear(struct store_rec *);
uint64_t store_now_ms(void);	/* CLOCK_REALTIME in ms (stamps persist) */

#endif
