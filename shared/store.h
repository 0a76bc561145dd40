/*
 * The shared state: one LMDB environment mapped by every process.
 * store.c is the only file that includes <lmdb.h>.  Values carry an
 * expiry stamp; an expired record reads as a miss whatever the sweeper
 * has done.  Every read copies the value out before its transaction
 * ends: no pointer into the map ever leaves store.c.
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
	STORE_NDB
};

#define STORE_RDONLY	0x01	/* vmcpctl: read-only, never blocks writers */

#define STORE_KEY_MAX	480	/* below LMDB's 511-byte key limit */
#define STORE_REC_VERSION 1
#define STORE_HDR_LEN	24

/* return values besides 0 and -1 */
#define STORE_NOTFOUND	1	/* absent or expired */

struct store;

/* A record as read: the payload is a NUL-terminated malloc'd copy. */
struct store_rec {
	uint64_t	 sr_expires_ms;	/* 0 = never */
	uint64_t	 sr_updated_ms;
	uint16_t	 sr_flags;
	uint8_t		 sr_type;
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
int	 store_put(struct store *, enum store_db, const void *key, size_t klen,
	    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms);
int	 store_del(struct store *, enum store_db, const void *key, size_t klen);
/* put only if absent or expired: 0 stored, STORE_EXISTS if a live one is */
#define STORE_EXISTS	2
int	 store_add(struct store *, enum store_db, const void *key, size_t klen,
	    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms);
int	 store_iter(struct store *, enum store_db, uint64_t now_ms,
	    int include_expired, store_iter_cb, void *arg);
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

/* delete up to max expired records; returns how many, or -1 */
int	 store_sweep(struct store *, uint64_t now_ms, size_t max);

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
