/*
 * The LMDB store: the environment, its transactions, record reads and
 * the map's room.  The store's files (store_lmdb.h) split the rest by
 * concern: writes in store_write.c, iteration, the sweep and queues in
 * store_scan.c, group counts and gauges in store_count.c; the pure
 * parts (the record codec, the keys) are in store_rec.c.
 *
 * One environment, one named db per record kind, an expiry index
 * "expiry" keyed [u8 dbtag][be64 expires_ms][primary key] (one entry
 * per record: a rewrite drops the old one) and "counts" keyed
 * [u8 dbtag][group] -> be64 records of that group.  Rules from
 * lmdb.h's Caveats (docs/ARCHITECTURE.md, The store): the env is
 * opened after fork in each
 * process, every txn is short and ends before we return, values are
 * copied out before their read txn ends, and one read txn per env is
 * reused (reset/renew) so a process holds about one reader slot.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "shared/store_codec.h"
#include "store_lmdb.h"
#include "store_rec.h"

#define STORE_CNT_NAME	"counts"
#define STORE_RETRIES	3

static int	store_free_pages(MDB_txn *, uint64_t, uint64_t *);
static uint64_t	store_headroom(uint64_t);

/* map an LMDB return code to errno for callers of a -1 */
void
store_set_errno(int rc)
{
	if (rc > 0)
		errno = rc;
	else if (rc == MDB_MAP_FULL)
		errno = ENOSPC;
	else if (rc == MDB_READERS_FULL)
		errno = EAGAIN;
	else
		errno = EIO;
}

/* --- transactions --- */

/*
 * Begin a txn, adopting a map grown by another process and clearing
 * dead readers when the table is full.
 */
int
store_txn_begin(struct store *s, unsigned int flags, MDB_txn **txn,
    const char *fn)
{
	int	 rc, tries, checked = 0;

	for (tries = 0;; tries++) {
		rc = mdb_txn_begin(s->s_env, NULL, flags, txn);
		if (rc == 0)
			return 0;
		if (tries >= STORE_RETRIES)
			break;
		if (rc == MDB_MAP_RESIZED) {
			if ((rc = mdb_env_set_mapsize(s->s_env, 0)) != 0)
				break;
			continue;
		}
		if (rc == MDB_READERS_FULL && !checked) {
			checked = 1;
			(void)mdb_reader_check(s->s_env, NULL);
			continue;
		}
		break;
	}
	log_warnx("%s: mdb_txn_begin: %s", fn, mdb_strerror(rc));
	store_set_errno(rc);
	*txn = NULL;
	return -1;
}

/* the reusable read txn: renew it, or begin it the first time */
int
store_rtxn_begin(struct store *s, MDB_txn **txn, const char *fn)
{
	int	 rc, tries, checked = 0;

	for (tries = 0;; tries++) {
		if (s->s_rtxn != NULL) {
			rc = mdb_txn_renew(s->s_rtxn);
			if (rc == MDB_BAD_RSLOT || rc == EINVAL) {
				/* unusable handle: start afresh */
				mdb_txn_abort(s->s_rtxn);
				s->s_rtxn = NULL;
				rc = mdb_txn_begin(s->s_env, NULL, MDB_RDONLY,
				    &s->s_rtxn);
			}
		} else
			rc = mdb_txn_begin(s->s_env, NULL, MDB_RDONLY,
			    &s->s_rtxn);
		if (rc == 0) {
			*txn = s->s_rtxn;
			return 0;
		}
		if (tries >= STORE_RETRIES)
			break;
		if (rc == MDB_MAP_RESIZED) {
			if ((rc = mdb_env_set_mapsize(s->s_env, 0)) != 0)
				break;
			continue;
		}
		if (rc == MDB_READERS_FULL && !checked) {
			checked = 1;
			(void)mdb_reader_check(s->s_env, NULL);
			continue;
		}
		break;
	}
	log_warnx("%s: mdb_txn_begin (read): %s", fn, mdb_strerror(rc));
	store_set_errno(rc);
	*txn = NULL;
	return -1;
}

void
store_rtxn_end(struct store *s)
{
	if (s->s_rtxn != NULL)
		mdb_txn_reset(s->s_rtxn);
}

int
store_commit(MDB_txn *txn, const char *fn)
{
	int rc;

	if ((rc = mdb_txn_commit(txn)) != 0) {
		log_warnx("%s: mdb_txn_commit: %s", fn, mdb_strerror(rc));
		store_set_errno(rc);
		return -1;
	}
	return 0;
}

/* argument checks shared by every record call */
int
store_check(struct store *s, enum store_db db, const void *key, size_t klen,
    int write)
{
	if (s == NULL || (unsigned int)db >= STORE_NDB || key == NULL ||
	    klen == 0 || klen > STORE_KEY_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (write && (s->s_flags & STORE_RDONLY)) {
		errno = EROFS;
		return -1;
	}
	return 0;
}

/* -1 and errno for no store or a read-only one */
int
store_writable(const struct store *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (s->s_flags & STORE_RDONLY) {
		errno = EROFS;
		return -1;
	}
	return 0;
}

int
store_missing(const struct store *s, unsigned int bit)
{
	return (s->s_missing & bit) != 0;
}

/* --- env --- */

static int
store_open_dbs(struct store *s)
{
	MDB_txn		*txn;
	unsigned int	 i, dflags, tflags;
	int		 rc, rdonly = s->s_flags & STORE_RDONLY;
	const char	*name;
	MDB_dbi		*dbi;

	dflags = rdonly ? 0 : MDB_CREATE;
	tflags = rdonly ? MDB_RDONLY : 0;
	if (store_txn_begin(s, tflags, &txn, "store_open") == -1)
		return -1;
	/* all in one txn, committed: the handles become shared */
	for (i = 0; i <= STORE_NDB + 1; i++) {
		if (i == STORE_NDB) {
			name = STORE_EXP_NAME;
			dbi = &s->s_exp;
		} else if (i == STORE_NDB + 1) {
			name = STORE_CNT_NAME;
			dbi = &s->s_cnt;
		} else {
			name = store_db_names[i];
			dbi = &s->s_dbi[i];
		}
		rc = mdb_dbi_open(txn, name, dflags, dbi);
		if (rc == MDB_NOTFOUND && rdonly) {
			s->s_missing |= 1U << i;
			continue;
		}
		if (rc != 0) {
			log_warnx("%s: mdb_dbi_open %s: %s", "store_open", name,
			    mdb_strerror(rc));
			mdb_txn_abort(txn);
			store_set_errno(rc);
			return -1;
		}
	}
	return store_commit(txn, "store_open");
}

int
store_open(struct store **sp, const char *dir, uint64_t map_size,
    unsigned int max_readers, int flags)
{
	struct store	*s = NULL;
	struct stat	 sb;
	MDB_stat	 ms;
	MDB_envinfo	 info;
	unsigned int	 eflags;
	int		 rc, dead, saved;

	if (sp == NULL || dir == NULL || *dir == '\0' ||
	    map_size > SIZE_MAX) {
		errno = EINVAL;
		return -1;
	}
	*sp = NULL;
	if (!(flags & STORE_RDONLY) && mkdir(dir, 0700) == -1 &&
	    errno != EEXIST) {
		log_warn("%s: mkdir %s", __func__, dir);
		return -1;
	}
	if (stat(dir, &sb) == -1) {
		log_warn("%s: %s", __func__, dir);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		log_warn("%s: %s", __func__, dir);
		return -1;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_warn("%s: calloc", __func__);
		return -1;
	}
	s->s_flags = flags;
	s->s_pid = getpid();

	if ((rc = mdb_env_create(&s->s_env)) != 0) {
		log_warnx("%s: mdb_env_create: %s", __func__,
		    mdb_strerror(rc));
		store_set_errno(rc);
		s->s_env = NULL;
		goto fail;
	}
	/* 0: adopt the size recorded in an existing file */
	if (map_size != 0 &&
	    (rc = mdb_env_set_mapsize(s->s_env, (size_t)map_size)) != 0) {
		log_warnx("%s: mdb_env_set_mapsize: %s", __func__,
		    mdb_strerror(rc));
		store_set_errno(rc);
		goto fail;
	}
	/* only the creator of the lock file sets the table size */
	if (max_readers != 0 &&
	    (rc = mdb_env_set_maxreaders(s->s_env, max_readers)) != 0) {
		log_warnx("%s: mdb_env_set_maxreaders: %s", __func__,
		    mdb_strerror(rc));
		store_set_errno(rc);
		goto fail;
	}
	if ((rc = mdb_env_set_maxdbs(s->s_env, STORE_NDB + 3)) != 0) {
		log_warnx("%s: mdb_env_set_maxdbs: %s", __func__,
		    mdb_strerror(rc));
		store_set_errno(rc);
		goto fail;
	}
	eflags = MDB_NOTLS | MDB_NOSYNC;
	if (flags & STORE_RDONLY)
		eflags |= MDB_RDONLY;
	if ((rc = mdb_env_open(s->s_env, dir, eflags, 0600)) != 0) {
		log_warnx("%s: mdb_env_open %s: %s", __func__, dir,
		    mdb_strerror(rc));
		store_set_errno(rc);
		goto fail;
	}
	/* readers left behind by a crashed process pin old pages */
	if ((rc = mdb_reader_check(s->s_env, &dead)) != 0)
		log_warnx("%s: mdb_reader_check: %s", __func__,
		    mdb_strerror(rc));
	else if (dead > 0)
		log_info("%s: cleared %d stale reader slot%s", __func__, dead,
		    dead == 1 ? "" : "s");
	if (store_open_dbs(s) == -1)
		goto fail;
	if ((rc = mdb_env_stat(s->s_env, &ms)) != 0) {
		log_warnx("%s: mdb_env_stat: %s", __func__, mdb_strerror(rc));
		store_set_errno(rc);
		goto fail;
	}
	s->s_psize = ms.ms_psize;
	if ((rc = mdb_env_info(s->s_env, &info)) != 0) {
		log_warnx("%s: mdb_env_info: %s", __func__, mdb_strerror(rc));
		store_set_errno(rc);
		goto fail;
	}
	s->s_map_open = info.me_mapsize;
	*sp = s;
	return 0;

fail:
	saved = errno;
	if (s->s_env != NULL)
		mdb_env_close(s->s_env);
	free(s);
	errno = saved;
	return -1;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (getpid() != s->s_pid) {
		/*
		 * Closing an env inherited across fork would release the
		 * opener's reader slots: leak it instead.
		 */
		log_warnx("%s: env opened by pid %d, not closed in pid %d",
		    __func__, (int)s->s_pid, (int)getpid());
		return;
	}
	if (s->s_rtxn != NULL)
		mdb_txn_abort(s->s_rtxn);
	mdb_env_close(s->s_env);
	free(s);
}

int
store_reader_check(struct store *s, int *cleared)
{
	int	 rc, dead = 0;

	if (cleared != NULL)
		*cleared = 0;
	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((rc = mdb_reader_check(s->s_env, &dead)) != 0) {
		log_warnx("%s: mdb_reader_check: %s", __func__,
		    mdb_strerror(rc));
		store_set_errno(rc);
		return -1;
	}
	if (cleared != NULL)
		*cleared = dead;
	return 0;
}

int
store_sync(struct store *s)
{
	int rc;

	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* a read-only env has nothing of its own to flush */
	if (s->s_flags & STORE_RDONLY)
		return 0;
	if ((rc = mdb_env_sync(s->s_env, 1)) != 0) {
		log_warnx("%s: mdb_env_sync: %s", __func__, mdb_strerror(rc));
		store_set_errno(rc);
		return -1;
	}
	return 0;
}

/* the meta page's txn id: a load from the map, no txn, no lock */
uint64_t
store_generation(struct store *s)
{
	MDB_envinfo	 info;

	if (s == NULL || s->s_env == NULL || mdb_env_info(s->s_env,
	    &info) != 0)
		return 0;
	return (uint64_t)info.me_last_txnid;
}

/* mdb_reader_list() callback: count the lines that start with a pid */
static int
store_count_reader(const char *msg, void *arg)
{
	unsigned int *n = arg;

	while (*msg == ' ')
		msg++;
	if (*msg >= '0' && *msg <= '9')
		(*n)++;
	return 0;
}

int
store_envstat(struct store *s, struct store_envstat *es)
{
	MDB_envinfo	 info;
	MDB_stat	 ms;
	MDB_txn		*txn;
	unsigned int	 i, readers = 0;
	int		 rc;

	if (s == NULL || es == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(es, 0, sizeof(*es));
	for (i = 0; i < STORE_NDB; i++)
		es->se_db[i].sd_name = store_db_names[i];
	if ((rc = mdb_env_info(s->s_env, &info)) != 0) {
		log_warnx("%s: mdb_env_info: %s", __func__, mdb_strerror(rc));
		goto fail;
	}
	if ((rc = mdb_env_stat(s->s_env, &ms)) != 0) {
		log_warnx("%s: mdb_env_stat: %s", __func__, mdb_strerror(rc));
		goto fail;
	}
	es->se_map_size = info.me_mapsize;
	es->se_page_size = ms.ms_psize;
	es->se_used_bytes = ((uint64_t)info.me_last_pgno + 1) * ms.ms_psize;
	es->se_max_readers = info.me_maxreaders;
	/* live slots, not the table's high-water mark */
	if (mdb_reader_list(s->s_env, store_count_reader, &readers) < 0)
		readers = info.me_numreaders;
	es->se_num_readers = readers;

	es->se_headroom_bytes = store_headroom(info.me_mapsize);

	if (store_rtxn_begin(s, &txn, __func__) == -1)
		return -1;
	if ((rc = store_free_pages(txn, info.me_last_txnid,
	    &es->se_free_bytes)) != 0) {
		store_rtxn_end(s);
		log_warnx("%s: free list: %s", __func__, mdb_strerror(rc));
		goto fail;
	}
	es->se_free_bytes *= ms.ms_psize;
	for (i = 0; i <= STORE_NDB; i++) {
		if (store_missing(s, 1U << i))
			continue;
		rc = mdb_stat(txn, i == STORE_NDB ? s->s_exp : s->s_dbi[i],
		    &ms);
		if (rc != 0) {
			store_rtxn_end(s);
			log_warnx("%s: mdb_stat: %s", __func__,
			    mdb_strerror(rc));
			goto fail;
		}
		if (i == STORE_NDB) {
			es->se_expiry_entries = ms.ms_entries;
			continue;
		}
		es->se_db[i].sd_entries = ms.ms_entries;
		es->se_db[i].sd_pages = ms.ms_branch_pages + ms.ms_leaf_pages +
		    ms.ms_overflow_pages;
	}
	store_rtxn_end(s);
	return 0;

fail:
	store_set_errno(rc);
	return -1;
}

/* --- records --- */

int
store_get(struct store *s, enum store_db db, const void *key, size_t klen,
    uint64_t now_ms, struct store_rec *out)
{
	return store_get_changed(s, db, key, klen, now_ms, NULL, out);
}

/*
 * A live record's value and stamp, in a read txn left open on 0 (the
 * caller ends it); STORE_NOTFOUND or -1 with none open.
 */
static int
store_lookup(struct store *s, enum store_db db, const void *key, size_t klen,
    uint64_t now_ms, MDB_val *v, struct store_rec *rec, const char *fn)
{
	MDB_txn		*txn;
	MDB_val		 k;
	int		 rc;

	if (store_missing(s, 1U << db))
		return STORE_NOTFOUND;
	if (store_rtxn_begin(s, &txn, fn) == -1)
		return -1;
	k.mv_size = klen;
	k.mv_data = (void *)(uintptr_t)key;
	rc = mdb_get(txn, s->s_dbi[db], &k, v);
	if (rc == MDB_NOTFOUND) {
		store_rtxn_end(s);
		return STORE_NOTFOUND;
	}
	if (rc != 0) {
		store_rtxn_end(s);
		log_warnx("%s: mdb_get: %s", fn, mdb_strerror(rc));
		store_set_errno(rc);
		return -1;
	}
	/* look at the stamp before paying for a copy */
	if (store_rec_peek(v->mv_data, v->mv_size, rec) == -1) {
		store_rtxn_end(s);
		log_warnx("%s: %s: undecodable record", fn,
		    store_db_names[db]);
		errno = EBADMSG;
		return -1;
	}
	if (store_rec_expired(rec->sr_expires_ms, now_ms)) {
		store_rtxn_end(s);
		memset(rec, 0, sizeof(*rec));
		return STORE_NOTFOUND;
	}
	return 0;
}

/*
 * The one read in place (store.h): cb sees the payload where it lies in
 * the map, inside this read txn, which ends when cb returns.
 */
int
store_read(struct store *s, enum store_db db, const void *key, size_t klen,
    uint64_t now_ms, store_read_cb cb, void *arg)
{
	struct store_rec	 rec;
	MDB_val			 v;
	int			 rc;

	if (cb == NULL || store_check(s, db, key, klen, 0) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((rc = store_lookup(s, db, key, klen, now_ms, &v, &rec,
	    __func__)) != 0)
		return rc;
	rc = cb(arg, (const uint8_t *)v.mv_data + STORE_HDR_LEN + rec.sr_glen,
	    rec.sr_len);
	store_rtxn_end(s);
	return rc;
}

int
store_get_changed(struct store *s, enum store_db db, const void *key,
    size_t klen, uint64_t now_ms, const struct store_rec *have,
    struct store_rec *out)
{
	MDB_val		 v;
	int		 rc;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (out == NULL || store_check(s, db, key, klen, 0) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((rc = store_lookup(s, db, key, klen, now_ms, &v, out,
	    "store_get")) != 0)
		return rc;
	/* the caller's copy is current: no copy, no decode */
	if (have != NULL && have->sr_updated_ms == out->sr_updated_ms &&
	    have->sr_len == out->sr_len) {
		store_rtxn_end(s);
		return STORE_UNCHANGED;
	}
	rc = store_rec_decode(v.mv_data, v.mv_size, out);
	store_rtxn_end(s);
	if (rc == -1) {
		log_warn("%s: copy", __func__);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* --- room for new records, the map's size --- */

/*
 * Pages on LMDB's free list that the next write txn may reuse: those
 * freed by txns before the last one (mdb_page_alloc() leaves the last
 * txn's to readers that may still see them).
 */
static int
store_free_pages(MDB_txn *txn, uint64_t last_txnid, uint64_t *pages)
{
	MDB_cursor	*cur;
	MDB_val		 k, v;
	size_t		 n, id;
	int		 rc;

	*pages = 0;
	/* the free list is db 0, keyed by txn id; only a read txn walks it */
	if ((rc = mdb_cursor_open(txn, 0, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		if (k.mv_size != sizeof(id) || v.mv_size < sizeof(n))
			continue;
		memcpy(&id, k.mv_data, sizeof(id));
		if (id >= last_txnid)
			break;
		memcpy(&n, v.mv_data, sizeof(n));
		*pages += n;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : rc;
}

/*
 * The map's headroom: what a delete or a sweep may need when new
 * records have taken the rest.  A txn of one delete copies a page per
 * level of three or four trees, and the last txn's freed pages are not
 * reusable yet, so never under 32 pages (a 1 MiB map keeps 1/8).
 */
static uint64_t
store_headroom(uint64_t map_size)
{
	uint64_t h = map_size / 16;

	if (h < 128 * 1024)
		h = 128 * 1024;
	return h < map_size / 4 ? h : map_size / 4;
}

/*
 * May a new record be written?  Not once the pages beyond the file's
 * high-water mark and the reusable free ones are down to the headroom.
 * The free list is walked only near the mark, so cheap until then.
 */
int
store_room(struct store *s)
{
	MDB_envinfo	 info;
	MDB_txn		*txn;
	uint64_t	 used, limit, freep;
	int		 rc;

	if (mdb_env_info(s->s_env, &info) != 0)
		return 1;
	limit = info.me_mapsize - store_headroom(info.me_mapsize);
	used = ((uint64_t)info.me_last_pgno + 1) * s->s_psize;
	if (used <= limit)
		return 1;
	/* the read txn may adopt a map another process grew: look again */
	if (store_rtxn_begin(s, &txn, "store_room") == -1)
		return 1;
	if (mdb_env_info(s->s_env, &info) != 0) {
		store_rtxn_end(s);
		return 1;
	}
	rc = store_free_pages(txn, info.me_last_txnid, &freep);
	store_rtxn_end(s);
	if (rc != 0)
		return 1;
	limit = info.me_mapsize - store_headroom(info.me_mapsize);
	used = ((uint64_t)info.me_last_pgno + 1) * s->s_psize;
	freep *= s->s_psize;
	return freep >= used || used - freep <= limit;
}

/*
 * The last resort of a delete that cannot commit even alone: a map
 * full to its last page (an older vmcpd kept no headroom).  Grow it by
 * its headroom, up to twice its size at open; the other processes
 * adopt the size at their next txn (MDB_MAP_RESIZED, store_map_adopt()).
 * No txn of ours may be active.  Returns 1 if it grew.
 */
int
store_map_grow(struct store *s)
{
	MDB_envinfo	 info;
	uint64_t	 size;
	int		 rc;

	if (mdb_env_info(s->s_env, &info) != 0)
		return 0;
	size = info.me_mapsize + store_headroom(info.me_mapsize);
	if (size > 2 * s->s_map_open || size > SIZE_MAX)
		return 0;
	if ((rc = mdb_env_set_mapsize(s->s_env, (size_t)size)) != 0) {
		log_warnx("%s: mdb_env_set_mapsize: %s", __func__,
		    mdb_strerror(rc));
		return 0;
	}
	log_warnx("the state map was full to its last page: grown to %llu "
	    "bytes so that expired records can go", (unsigned long long)size);
	return 1;
}

/* map-full failures come in floods: one line a second per process */
void
store_log_full(const char *fn, enum store_db db)
{
	static time_t	 last;
	time_t		 now = time(NULL);

	if (now == last)
		return;
	last = now;
	log_warnx("%s: %s: the state map is full (daemon.mapSize)", fn,
	    store_db_names[db]);
}

/*
 * After MDB_MAP_FULL: another process may have opened the env with a
 * larger map (a reload that raised mapSize) and recorded it in the file
 * without our data outgrowing our map, so no MDB_MAP_RESIZED told us.
 * Adopt that size; returns 1 if our map grew.  Never shrinks it.
 */
int
store_map_adopt(struct store *s)
{
	MDB_envinfo	 before, after;

	if (mdb_env_info(s->s_env, &before) != 0 ||
	    mdb_env_set_mapsize(s->s_env, 0) != 0 ||
	    mdb_env_info(s->s_env, &after) != 0)
		return 0;
	if (after.me_mapsize > before.me_mapsize)
		return 1;
	if (after.me_mapsize < before.me_mapsize)
		(void)mdb_env_set_mapsize(s->s_env, before.me_mapsize);
	return 0;
}
