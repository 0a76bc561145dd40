/*
 * The LMDB store.  The only file that includes <lmdb.h>; its pure
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

#include <lmdb.h>

#include "log.h"
#include "store.h"
#include "store_rec.h"

#define STORE_EXP_NAME	"expiry"
#define STORE_CNT_NAME	"counts"
#define STORE_CNT_BIT	(1U << (STORE_NDB + 1))
#define STORE_GAUGE_TAG	0xff	/* counts keyed [tag][name]: gauges */
#define STORE_RECLAIM	256	/* due entries reclaimed at a cap */
#define STORE_LMDB_KEY	512		/* above LMDB's 511-byte key limit */
#define STORE_RETRIES	3

/* store_iter() copies this much out per read txn */
#define STORE_ITER_VISIT	256
#define STORE_ITER_BYTES	(1024 * 1024)

struct store {
	MDB_env		*s_env;
	MDB_dbi		 s_dbi[STORE_NDB];
	MDB_dbi		 s_exp;
	MDB_dbi		 s_cnt;
	unsigned int	 s_missing;	/* RDONLY: bit per absent db */
	unsigned int	 s_psize;
	uint64_t	 s_map_open;	/* the map's size once opened */
	MDB_txn		*s_rtxn;	/* reusable read txn, reset when idle */
	int		 s_flags;
	pid_t		 s_pid;		/* the opener (no env survives fork) */
};

struct store_item {
	void		*si_key;
	size_t		 si_klen;
	struct store_rec si_rec;
};

static int	store_free_pages(MDB_txn *, uint64_t, uint64_t *);
static uint64_t	store_headroom(uint64_t);

/* map an LMDB return code to errno for callers of a -1 */
static void
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
static int
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
static int
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

static void
store_rtxn_end(struct store *s)
{
	if (s->s_rtxn != NULL)
		mdb_txn_reset(s->s_rtxn);
}

static int
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
static int
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
static int
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

static int
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

/* --- counts of groups, room for new records --- */

static int
store_cnt_get(struct store *s, MDB_txn *txn, unsigned int tag,
    const void *group, size_t glen, uint64_t *n)
{
	uint8_t	 kb[1 + STORE_GROUP_MAX];
	MDB_val	 k, v;
	int	 rc;

	*n = 0;
	k.mv_size = store_cnt_key(kb, tag, group, glen);
	k.mv_data = kb;
	rc = mdb_get(txn, s->s_cnt, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc == 0 && v.mv_size == 8)
		*n = store_be64_get(v.mv_data);
	return rc;
}

/* add delta to a group's count; a count of 0 is no entry at all */
static int
store_cnt_add(struct store *s, MDB_txn *txn, unsigned int tag,
    const void *group, size_t glen, int delta)
{
	uint8_t		 kb[1 + STORE_GROUP_MAX], vb[8];
	MDB_val		 k, v;
	uint64_t	 n;
	int		 rc;

	if ((rc = store_cnt_get(s, txn, tag, group, glen, &n)) != 0)
		return rc;
	if (delta < 0 && n < (uint64_t)-delta)
		n = 0;
	else
		n += (uint64_t)(int64_t)delta;
	k.mv_size = store_cnt_key(kb, tag, group, glen);
	k.mv_data = kb;
	if (n == 0) {
		rc = mdb_del(txn, s->s_cnt, &k, NULL);
		return rc == MDB_NOTFOUND ? 0 : rc;
	}
	store_be64_put(vb, n);
	v.mv_size = sizeof(vb);
	v.mv_data = vb;
	return mdb_put(txn, s->s_cnt, &k, &v, 0);
}

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
static int
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
static int
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
static void
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
 * Delete the record pk (its value v, header hdr) in txn, with its
 * index entry and its place in its group's count.
 */
static int
store_reap_txn(struct store *s, MDB_txn *txn, unsigned int tag,
    const void *pk, size_t pklen, const MDB_val *v,
    const struct store_rec *hdr)
{
	uint8_t		 ibuf[STORE_IDX_HDR + STORE_KEY_MAX];
	uint8_t		 gbuf[STORE_GROUP_MAX];
	size_t		 glen = hdr->sr_glen;
	MDB_val		 k;
	int		 rc;

	/* v points into a page the deletes change: copy the group now */
	if (glen > 0)
		memcpy(gbuf, (const uint8_t *)v->mv_data + STORE_HDR_LEN, glen);
	k.mv_size = pklen;
	k.mv_data = (void *)(uintptr_t)pk;
	if ((rc = mdb_del(txn, s->s_dbi[tag], &k, NULL)) != 0)
		return rc;
	if (hdr->sr_expires_ms != 0 && pklen <= STORE_KEY_MAX) {
		k.mv_size = store_idx_key(ibuf, (enum store_db)tag,
		    hdr->sr_expires_ms, pk, pklen);
		k.mv_data = ibuf;
		rc = mdb_del(txn, s->s_exp, &k, NULL);
		if (rc != 0 && rc != MDB_NOTFOUND)
			return rc;
	}
	if (glen > 0)
		return store_cnt_add(s, txn, tag, gbuf, glen, -1);
	return 0;
}

static int	store_put_txn(struct store *, MDB_txn *, enum store_db,
		    const void *, size_t, const void *, size_t, uint64_t,
		    uint64_t, uint16_t, const void *, size_t, int,
		    const char *);

/*
 * An expired record's reaping by a sweep: one flagged STORE_F_CLOSE
 * leaves its payload in STORE_CLOSING under its key (and expiring, so
 * a queue nobody takes from is swept too).
 */
static int
store_reap_close_txn(struct store *s, MDB_txn *txn, unsigned int tag,
    const void *pk, size_t pklen, const MDB_val *v,
    const struct store_rec *hdr, uint64_t now_ms)
{
	void	*copy;
	size_t	 len = hdr->sr_len;
	int	 rc;

	if (!(hdr->sr_flags & STORE_F_CLOSE) || tag == STORE_CLOSING)
		return store_reap_txn(s, txn, tag, pk, pklen, v, hdr);
	/* v and pk point into pages the deletes change: copy them now */
	if ((copy = malloc(pklen + len + 1)) == NULL)
		return ENOMEM;
	memcpy(copy, pk, pklen);
	memcpy((uint8_t *)copy + pklen, (const uint8_t *)v->mv_data +
	    STORE_HDR_LEN + hdr->sr_glen, len);
	rc = store_reap_txn(s, txn, tag, copy, pklen, v, hdr);
	if (rc == 0)
		rc = store_put_txn(s, txn, STORE_CLOSING, copy, pklen,
		    (uint8_t *)copy + pklen, len, now_ms + STORE_CLOSING_TTL_MS,
		    now_ms, 0, NULL, 0, 1, "store_sweep");
	free(copy);
	return rc;
}

/*
 * Write the record and its index entry in txn, dropping the index
 * entry of the record it replaces.  group NULL keeps the old record's
 * group.  Without room a new record, or a rewrite that grows, is
 * refused (MDB_MAP_FULL).  Logs failures but MDB_MAP_FULL, which the
 * caller may still cure.
 */
static int
store_put_txn(struct store *s, MDB_txn *txn, enum store_db db,
    const void *key, size_t klen, const void *data, size_t len,
    uint64_t expires_ms, uint64_t now_ms, uint16_t flags, const void *group,
    size_t glen, int room, const char *fn)
{
	uint8_t			 ibuf[STORE_IDX_HDR + STORE_KEY_MAX];
	uint8_t			 gbuf[STORE_GROUP_MAX];
	struct store_rec	 old;
	MDB_val			 k, v;
	size_t			 oglen = 0, osize = 0;
	int			 rc;

	k.mv_size = klen;
	k.mv_data = (void *)(uintptr_t)key;
	rc = mdb_get(txn, s->s_dbi[db], &k, &v);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		log_warnx("%s: mdb_get %s: %s", fn, store_db_names[db],
		    mdb_strerror(rc));
		return rc;
	}
	if (rc == 0)
		osize = v.mv_size;
	if (rc == 0 && store_rec_peek(v.mv_data, v.mv_size, &old) == 0) {
		oglen = old.sr_glen;
		if (oglen > 0)
			memcpy(gbuf, (const uint8_t *)v.mv_data +
			    STORE_HDR_LEN, oglen);
		/* one index entry per record: the old one goes now */
		if (old.sr_expires_ms != 0 && old.sr_expires_ms != expires_ms) {
			k.mv_size = store_idx_key(ibuf, db, old.sr_expires_ms,
			    key, klen);
			k.mv_data = ibuf;
			rc = mdb_del(txn, s->s_exp, &k, NULL);
			if (rc != 0 && rc != MDB_NOTFOUND)
				return rc;
		}
	}
	if (group == NULL) {
		group = gbuf;
		glen = oglen;
	}
	/* without room only a rewrite that does not grow goes through */
	if (!room && STORE_HDR_LEN + glen + len > osize)
		return MDB_MAP_FULL;
	if (group != gbuf && (glen != oglen ||
	    memcmp(group, gbuf, glen) != 0)) {
		if (oglen > 0 &&
		    (rc = store_cnt_add(s, txn, db, gbuf, oglen, -1)) != 0)
			return rc;
		if ((rc = store_cnt_add(s, txn, db, group, glen, 1)) != 0)
			return rc;
	}

	k.mv_size = klen;
	k.mv_data = (void *)(uintptr_t)key;
	v.mv_size = STORE_HDR_LEN + glen + len;
	v.mv_data = NULL;
	/* encode straight into the page */
	if ((rc = mdb_put(txn, s->s_dbi[db], &k, &v, MDB_RESERVE)) != 0) {
		if (rc != MDB_MAP_FULL)
			log_warnx("%s: mdb_put %s: %s", fn, store_db_names[db],
			    mdb_strerror(rc));
		return rc;
	}
	if (store_rec_encode_group(v.mv_data, v.mv_size, (uint8_t)db, flags,
	    expires_ms, now_ms, group, glen, data, len) == -1) {
		log_warnx("%s: encode failed", fn);
		return EINVAL;
	}
	if (expires_ms == 0)
		return 0;
	k.mv_size = store_idx_key(ibuf, db, expires_ms, key, klen);
	k.mv_data = ibuf;
	v.mv_size = 0;
	v.mv_data = NULL;
	if ((rc = mdb_put(txn, s->s_exp, &k, &v, 0)) != 0) {
		if (rc != MDB_MAP_FULL)
			log_warnx("%s: mdb_put %s: %s", fn, STORE_EXP_NAME,
			    mdb_strerror(rc));
		return rc;
	}
	return 0;
}

/*
 * Due index entries of the tags lo..hi, at most max, in txn: each
 * entry goes, and the record it names too if the record's own stamp is
 * due (else the entry was stale: its record was rewritten, or is gone).
 * ss_more says max stopped it.
 */
static int
store_sweep_txn(struct store *s, MDB_txn *txn, unsigned int lo,
    unsigned int hi, uint64_t now_ms, size_t max, struct store_sweep *ss)
{
	uint8_t		 ibuf[STORE_LMDB_KEY];
	struct store_rec hdr;
	MDB_cursor	*cur;
	MDB_val		 k, v, pk;
	size_t		 klen;
	unsigned int	 tag, first;
	int		 rc;

	if ((rc = mdb_cursor_open(txn, s->s_exp, &cur)) != 0)
		return rc;
	/* the index sorts by tag, then time: one due range per tag */
	for (tag = lo; tag <= hi; tag++) {
		ibuf[0] = (uint8_t)tag;
		klen = 1;
		for (;;) {
			if (ss->ss_entries >= max) {
				ss->ss_more = 1;
				rc = 0;
				goto done;
			}
			k.mv_size = klen;
			k.mv_data = ibuf;
			rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
			if (rc != 0) {
				if (rc == MDB_NOTFOUND)
					rc = 0;
				goto done;
			}
			first = ((const uint8_t *)k.mv_data)[0];
			if (first != tag) {
				/* jump straight to the next tag present */
				if (first > hi)
					goto done;
				tag = first - 1;
				break;
			}
			if (k.mv_size >= STORE_IDX_HDR && store_be64_get(
			    (const uint8_t *)k.mv_data + 1) > now_ms)
				break;
			/* k points into a page we are about to change */
			klen = k.mv_size;
			memcpy(ibuf, k.mv_data, klen);
			ss->ss_entries++;
			if (tag < STORE_NDB && klen > STORE_IDX_HDR) {
				pk.mv_size = klen - STORE_IDX_HDR;
				pk.mv_data = ibuf + STORE_IDX_HDR;
				rc = mdb_get(txn, s->s_dbi[tag], &pk, &v);
				if (rc == 0 && store_rec_peek(v.mv_data,
				    v.mv_size, &hdr) == 0 &&
				    store_rec_expired(hdr.sr_expires_ms,
				    now_ms)) {
					rc = store_reap_close_txn(s, txn, tag,
					    pk.mv_data, pk.mv_size, &v, &hdr,
					    now_ms);
					if (rc == 0)
						ss->ss_deleted++;
				}
				if (rc != 0 && rc != MDB_NOTFOUND)
					goto done;
			}
			/* gone already if it was the record's own entry */
			k.mv_size = klen;
			k.mv_data = ibuf;
			rc = mdb_del(txn, s->s_exp, &k, NULL);
			if (rc != 0 && rc != MDB_NOTFOUND)
				goto done;
		}
	}
	rc = 0;
done:
	mdb_cursor_close(cur);
	return rc;
}

/*
 * A cap of store_add_limited() in txn: *hit is STORE_LIMIT_* if one is
 * reached even after the db's due records were reclaimed.
 */
static int
store_limit_txn(struct store *s, MDB_txn *txn, enum store_db db,
    const struct store_limit *lim, uint64_t now_ms, int *hit)
{
	struct store_sweep	 ss;
	MDB_stat		 ms;
	uint64_t		 n;
	int			 rc, reclaimed = 0;

	for (;;) {
		*hit = 0;
		if (lim->sl_max > 0) {
			if ((rc = mdb_stat(txn, s->s_dbi[db], &ms)) != 0)
				return rc;
			if (ms.ms_entries >= lim->sl_max)
				*hit = STORE_LIMIT_DB;
		}
		if (*hit == 0 && lim->sl_group != NULL &&
		    lim->sl_group_max > 0) {
			if ((rc = store_cnt_get(s, txn, db, lim->sl_group,
			    lim->sl_glen, &n)) != 0)
				return rc;
			if (n >= lim->sl_group_max)
				*hit = STORE_LIMIT_GROUP;
		}
		if (*hit == 0 || reclaimed)
			return 0;
		/* expired records count until swept: sweep some now */
		reclaimed = 1;
		memset(&ss, 0, sizeof(ss));
		if ((rc = store_sweep_txn(s, txn, db, db, now_ms,
		    STORE_RECLAIM, &ss)) != 0)
			return rc;
		if (ss.ss_deleted == 0)
			return 0;
	}
}

/*
 * After MDB_MAP_FULL: another process may have opened the env with a
 * larger map (a reload that raised mapSize) and recorded it in the file
 * without our data outgrowing our map, so no MDB_MAP_RESIZED told us.
 * Adopt that size; returns 1 if our map grew.  Never shrinks it.
 */
static int
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

/* store_put() and store_add*(): one write txn, retried once on a full map */
static int
store_write(struct store *s, enum store_db db, const void *key,
    size_t klen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, int add, uint16_t flags, const struct store_limit *lim,
    const char *fn)
{
	struct store_rec	 old;
	MDB_txn			*txn;
	MDB_val			 k, v;
	int			 rc, retried = 0, room, hit = 0;

	if (store_check(s, db, key, klen, 1) == -1)
		return -1;
	if ((data == NULL && len > 0) || len > STORE_VAL_MAX ||
	    (lim != NULL && lim->sl_group != NULL &&
	    (lim->sl_glen == 0 || lim->sl_glen > STORE_GROUP_MAX))) {
		errno = EINVAL;
		return -1;
	}
again:
	room = store_room(s);
	if (store_txn_begin(s, 0, &txn, fn) == -1)
		return -1;
	if (add) {
		k.mv_size = klen;
		k.mv_data = (void *)(uintptr_t)key;
		rc = mdb_get(txn, s->s_dbi[db], &k, &v);
		if (rc == 0) {
			/* an undecodable record is not live: replace it */
			if (store_rec_peek(v.mv_data, v.mv_size, &old) == 0 &&
			    !store_rec_expired(old.sr_expires_ms, now_ms)) {
				mdb_txn_abort(txn);
				return STORE_EXISTS;
			}
		} else if (rc != MDB_NOTFOUND) {
			log_warnx("%s: mdb_get: %s", fn, mdb_strerror(rc));
			goto fail;
		}
	}
	if (lim != NULL) {
		if ((rc = store_limit_txn(s, txn, db, lim, now_ms,
		    &hit)) != 0)
			goto fail;
		if (hit != 0) {
			/* what was reclaimed stays reclaimed */
			if (store_commit(txn, fn) == -1)
				return -1;
			return hit;
		}
	}
	rc = store_put_txn(s, txn, db, key, klen, data, len, expires_ms,
	    now_ms, flags, lim != NULL ? lim->sl_group : NULL,
	    lim != NULL ? lim->sl_glen : 0, room, fn);
	if (rc == 0) {
		rc = mdb_txn_commit(txn);
		txn = NULL;
		if (rc == 0)
			return 0;
	}
	if (rc == MDB_MAP_FULL) {
		if (txn != NULL)
			mdb_txn_abort(txn);
		txn = NULL;
		if (!retried && store_map_adopt(s)) {
			retried = 1;
			goto again;
		}
		/* the caller decides: skip a cache write, fail a request */
		store_log_full(fn, db);
	} else if (txn == NULL)
		log_warnx("%s: mdb_txn_commit: %s", fn, mdb_strerror(rc));
fail:
	if (txn != NULL)
		mdb_txn_abort(txn);
	store_set_errno(rc);
	return -1;
}

int
store_put(struct store *s, enum store_db db, const void *key, size_t klen,
    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms)
{
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 0,
	    0, NULL, __func__);
}

int
store_put_ext(struct store *s, enum store_db db, const void *key,
    size_t klen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, uint16_t flags, const void *group, size_t glen)
{
	struct store_limit lim;

	/* no cap: only the group */
	memset(&lim, 0, sizeof(lim));
	lim.sl_group = group;
	lim.sl_glen = glen;
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 0,
	    flags, &lim, __func__);
}

int
store_add(struct store *s, enum store_db db, const void *key, size_t klen,
    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms)
{
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 1,
	    0, NULL, __func__);
}

int
store_add_limited(struct store *s, enum store_db db, const void *key,
    size_t klen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, const struct store_limit *lim)
{
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 1,
	    0, lim, __func__);
}

/* a group's count, or a gauge (tag STORE_GAUGE_TAG), in a read txn */
static int
store_cnt_read(struct store *s, unsigned int tag, const void *name,
    size_t len, uint64_t *n)
{
	MDB_txn	*txn;
	int	 rc;

	*n = 0;
	if (s == NULL || name == NULL || len == 0 || len > STORE_GROUP_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (store_missing(s, STORE_CNT_BIT))
		return 0;
	if (store_rtxn_begin(s, &txn, "store_cnt_read") == -1)
		return -1;
	rc = store_cnt_get(s, txn, tag, name, len, n);
	store_rtxn_end(s);
	if (rc != 0) {
		store_set_errno(rc);
		return -1;
	}
	return 0;
}

int
store_group_count(struct store *s, enum store_db db, const void *group,
    size_t glen, size_t *count)
{
	uint64_t n;

	*count = 0;
	if ((unsigned int)db >= STORE_NDB) {
		errno = EINVAL;
		return -1;
	}
	if (store_cnt_read(s, db, group, glen, &n) == -1)
		return -1;
	*count = (size_t)n;
	return 0;
}

int
store_del(struct store *s, enum store_db db, const void *key, size_t klen)
{
	struct store_rec	 old;
	MDB_txn			*txn;
	MDB_val			 k, v;
	int			 rc, grown = 0;

	if (store_check(s, db, key, klen, 1) == -1)
		return -1;
again:
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	k.mv_size = klen;
	k.mv_data = (void *)(uintptr_t)key;
	rc = mdb_get(txn, s->s_dbi[db], &k, &v);
	if (rc == MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return STORE_NOTFOUND;
	}
	if (rc != 0) {
		log_warnx("%s: mdb_get: %s", __func__, mdb_strerror(rc));
		goto fail;
	}
	/* the map's headroom is there so that this commits on a full map */
	if (store_rec_peek(v.mv_data, v.mv_size, &old) == 0)
		rc = store_reap_txn(s, txn, db, key, klen, &v, &old);
	else
		rc = mdb_del(txn, s->s_dbi[db], &k, NULL);
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	if (rc == 0)
		return 0;
	if (rc == MDB_MAP_FULL && !grown && store_map_grow(s)) {
		grown = 1;
		goto again;
	}
	log_warnx("%s: %s: %s", __func__, store_db_names[db],
	    mdb_strerror(rc));
	store_set_errno(rc);
	return -1;

fail:
	mdb_txn_abort(txn);
	store_set_errno(rc);
	return -1;
}

static void
store_items_free(struct store_item *items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(items[i].si_key);
		store_rec_clear(&items[i].si_rec);
	}
}

/*
 * Copy out one batch of records after the key last (or from the start),
 * then end the read txn: callbacks never run while it pins pages.
 * Returns 0 and sets *done at the end of the db, -1 on error.
 */
static int
store_iter_batch(struct store *s, enum store_db db, uint64_t now_ms,
    int include_expired, uint8_t *last, size_t *lastlen,
    struct store_item *items, size_t *nitems, int *done)
{
	struct store_rec	 hdr;
	struct store_item	*it;
	MDB_txn			*txn;
	MDB_cursor		*cur;
	MDB_val			 k, v;
	size_t			 visited = 0, bytes = 0;
	int			 rc;

	*nitems = 0;
	*done = 0;
	if (store_rtxn_begin(s, &txn, "store_iter") == -1)
		return -1;
	if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0) {
		store_rtxn_end(s);
		log_warnx("%s: mdb_cursor_open: %s", "store_iter",
		    mdb_strerror(rc));
		store_set_errno(rc);
		return -1;
	}
	if (*lastlen > 0) {
		k.mv_size = *lastlen;
		k.mv_data = last;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && k.mv_size == *lastlen &&
		    memcmp(k.mv_data, last, *lastlen) == 0)
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	} else
		rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);

	while (rc == 0 && visited < STORE_ITER_VISIT &&
	    bytes < STORE_ITER_BYTES) {
		visited++;
		if (k.mv_size < STORE_LMDB_KEY) {
			memcpy(last, k.mv_data, k.mv_size);
			*lastlen = k.mv_size;
		}
		if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == -1) {
			log_warnx("%s: %s: skipping an undecodable record",
			    "store_iter", store_db_names[db]);
		} else if (include_expired ||
		    !store_rec_expired(hdr.sr_expires_ms, now_ms)) {
			it = &items[*nitems];
			memset(it, 0, sizeof(*it));
			if ((it->si_key = malloc(k.mv_size)) == NULL ||
			    store_rec_decode(v.mv_data, v.mv_size,
			    &it->si_rec) == -1) {
				free(it->si_key);
				rc = ENOMEM;
				break;
			}
			memcpy(it->si_key, k.mv_data, k.mv_size);
			it->si_klen = k.mv_size;
			(*nitems)++;
			bytes += k.mv_size + v.mv_size;
		}
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	store_rtxn_end(s);
	if (rc == MDB_NOTFOUND) {
		*done = 1;
		return 0;
	}
	if (rc != 0) {
		log_warnx("%s: mdb_cursor_get: %s", "store_iter",
		    mdb_strerror(rc));
		store_items_free(items, *nitems);
		*nitems = 0;
		store_set_errno(rc);
		return -1;
	}
	return 0;
}

int
store_iter(struct store *s, enum store_db db, uint64_t now_ms,
    int include_expired, store_iter_cb cb, void *arg)
{
	struct store_item	*items;
	uint8_t			 last[STORE_LMDB_KEY];
	size_t			 lastlen = 0, n, i;
	int			 done = 0, stop = 0;

	if (s == NULL || (unsigned int)db >= STORE_NDB || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (store_missing(s, 1U << db))
		return 0;
	if ((items = calloc(STORE_ITER_VISIT, sizeof(*items))) == NULL) {
		log_warn("%s: calloc", __func__);
		return -1;
	}
	while (!done && !stop) {
		if (store_iter_batch(s, db, now_ms, include_expired, last,
		    &lastlen, items, &n, &done) == -1) {
			free(items);
			return -1;
		}
		for (i = 0; i < n && !stop; i++)
			stop = cb(arg, items[i].si_key, items[i].si_klen,
			    &items[i].si_rec) != 0;
		store_items_free(items, n);
	}
	free(items);
	return 0;
}

/* --- sequences: records keyed prefix || be64 seq --- */

int
store_append(struct store *s, enum store_db db, const void *prefix,
    size_t plen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, size_t keep, uint64_t *seqp)
{
	uint8_t		 key[STORE_KEY_MAX];
	uint8_t		 ibuf[STORE_IDX_HDR + STORE_KEY_MAX];
	struct store_rec hdr;
	MDB_txn		*txn;
	MDB_cursor	*cur = NULL;
	MDB_val		 k, v, ik;
	uint64_t	 seq = 1, first;
	int		 rc, room;

	if (store_check(s, db, prefix, plen, 1) == -1 ||
	    store_seq_key(key, prefix, plen, UINT64_MAX) == -1 || keep == 0) {
		errno = EINVAL;
		return -1;
	}
	room = store_room(s);
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0)
		goto fail;
	/* the last key under the prefix: just before prefix || ff..ff */
	k.mv_size = plen + 8;
	k.mv_data = key;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &v, MDB_PREV);
	else if (rc == MDB_NOTFOUND)
		rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	if (rc != 0 && rc != MDB_NOTFOUND)
		goto fail;
	if (rc == 0 && k.mv_size == plen + 8 &&
	    memcmp(k.mv_data, prefix, plen) == 0)
		seq = store_be64_get((const uint8_t *)k.mv_data + plen) + 1;
	(void)store_seq_key(key, prefix, plen, seq);
	if ((rc = store_put_txn(s, txn, db, key, plen + 8, data, len,
	    expires_ms, now_ms, 0, NULL, 0, room, __func__)) != 0)
		goto fail;
	/* keep the newest: drop what fell out of the window (seq 0 stays) */
	if (seq > keep) {
		first = seq - keep;	/* the newest seq to drop */
		(void)store_seq_key(key, prefix, plen, 1);
		k.mv_size = plen + 8;
		k.mv_data = key;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		while (rc == 0 && k.mv_size == plen + 8 &&
		    memcmp(k.mv_data, prefix, plen) == 0 &&
		    store_be64_get((const uint8_t *)k.mv_data + plen) <= first) {
			/* its index entry too: one per record */
			if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == 0 &&
			    hdr.sr_expires_ms != 0) {
				ik.mv_size = store_idx_key(ibuf, db,
				    hdr.sr_expires_ms, k.mv_data, k.mv_size);
				ik.mv_data = ibuf;
				rc = mdb_del(txn, s->s_exp, &ik, NULL);
				if (rc != 0 && rc != MDB_NOTFOUND)
					goto fail;
			}
			if ((rc = mdb_cursor_del(cur, 0)) != 0)
				goto fail;
			rc = mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT);
			if (rc == MDB_NOTFOUND || rc == EINVAL)
				rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		}
		if (rc != 0 && rc != MDB_NOTFOUND)
			goto fail;
	}
	mdb_cursor_close(cur);
	cur = NULL;
	if (store_commit(txn, __func__) == -1)
		return -1;
	if (seqp != NULL)
		*seqp = seq;
	return 0;
fail:
	log_warnx("%s: %s: %s", __func__, store_db_names[db], mdb_strerror(rc));
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	store_set_errno(rc);
	return -1;
}

int
store_scan(struct store *s, enum store_db db, const void *prefix,
    size_t plen, uint64_t after, uint64_t now_ms, store_iter_cb cb, void *arg)
{
	struct store_item	*items;
	struct store_rec	 hdr;
	uint8_t			 key[STORE_KEY_MAX];
	MDB_txn			*txn;
	MDB_cursor		*cur;
	MDB_val			 k, v;
	size_t			 n = 0, i, bytes = 0;
	int			 rc, stop = 0, more = 1;

	if (store_check(s, db, prefix, plen, 0) == -1 || cb == NULL ||
	    after == UINT64_MAX ||
	    store_seq_key(key, prefix, plen, after + 1) == -1) {
		errno = EINVAL;
		return -1;
	}
	if (store_missing(s, 1U << db))
		return 0;
	if ((items = calloc(STORE_ITER_VISIT, sizeof(*items))) == NULL)
		return -1;
	while (more && !stop) {
		n = 0;
		bytes = 0;
		if (store_rtxn_begin(s, &txn, __func__) == -1)
			goto fail;
		if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0) {
			store_rtxn_end(s);
			store_set_errno(rc);
			goto fail;
		}
		k.mv_size = plen + 8;
		k.mv_data = key;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		while (rc == 0 && n < STORE_ITER_VISIT &&
		    bytes < STORE_ITER_BYTES && k.mv_size == plen + 8 &&
		    memcmp(k.mv_data, prefix, plen) == 0) {
			memcpy(key, k.mv_data, k.mv_size);
			if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == 0 &&
			    !store_rec_expired(hdr.sr_expires_ms, now_ms)) {
				memset(&items[n], 0, sizeof(items[n]));
				if ((items[n].si_key = malloc(k.mv_size)) ==
				    NULL || store_rec_decode(v.mv_data,
				    v.mv_size, &items[n].si_rec) == -1) {
					free(items[n].si_key);
					rc = ENOMEM;
					break;
				}
				memcpy(items[n].si_key, k.mv_data, k.mv_size);
				items[n].si_klen = k.mv_size;
				bytes += v.mv_size;
				n++;
			}
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		}
		/* a full batch: go on after the last key copied */
		more = rc == 0 && k.mv_size == plen + 8 &&
		    memcmp(k.mv_data, prefix, plen) == 0;
		if (more)
			memcpy(key, k.mv_data, k.mv_size);
		mdb_cursor_close(cur);
		store_rtxn_end(s);
		if (rc != 0 && rc != MDB_NOTFOUND && !more) {
			store_items_free(items, n);
			store_set_errno(rc);
			goto fail;
		}
		for (i = 0; i < n && !stop; i++)
			stop = cb(arg, items[i].si_key, items[i].si_klen,
			    &items[i].si_rec) != 0;
		store_items_free(items, n);
	}
	free(items);
	return 0;
fail:
	free(items);
	return -1;
}

/*
 * A batch too large to commit on a full map (a delete dirties pages
 * too) is retried smaller, down to one entry: the headroom that new
 * records may not take is there for this.  If even that cannot commit,
 * the map grows (store_map_grow()).
 */
int
store_sweep(struct store *s, uint64_t now_ms, size_t max,
    struct store_sweep *ssp)
{
	struct store_sweep	 local;
	struct store_sweep	*ss = ssp != NULL ? ssp : &local;
	MDB_txn			*txn;
	int			 rc, grown = 0;

	memset(ss, 0, sizeof(*ss));
	if (store_writable(s) == -1)
		return -1;
	if (max == 0)
		return 0;
	if (max > INT_MAX)
		max = INT_MAX;
	for (;;) {
		if (store_txn_begin(s, 0, &txn, __func__) == -1)
			return -1;
		memset(ss, 0, sizeof(*ss));
		rc = store_sweep_txn(s, txn, 0, UINT8_MAX, now_ms, max, ss);
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
		if (rc == 0)
			return (int)ss->ss_deleted;
		if (rc != MDB_MAP_FULL)
			break;
		if (max == 1) {
			if (grown || !store_map_grow(s))
				break;
			grown = 1;
		}
		max /= 4;
		if (max == 0)
			max = 1;
	}
	log_warnx("%s: %s", __func__, mdb_strerror(rc));
	memset(ss, 0, sizeof(*ss));
	store_set_errno(rc);
	return -1;
}

/* --- queues: records taken by one caller --- */

int
store_take(struct store *s, enum store_db db, size_t max, uint64_t now_ms,
    store_iter_cb cb, void *arg)
{
	struct store_item	*items = NULL;
	struct store_rec	 hdr;
	MDB_txn			*txn;
	MDB_cursor		*cur = NULL;
	MDB_stat		 ms;
	MDB_val			 k, v;
	size_t			 n = 0, i, visited = 0;
	int			 rc, handed = 0;

	if ((unsigned int)db >= STORE_NDB || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (store_writable(s) == -1)
		return -1;
	if (max == 0)
		return 0;
	if (max > STORE_ITER_VISIT)
		max = STORE_ITER_VISIT;
	/* the common case, nothing queued: no write lock */
	if (store_rtxn_begin(s, &txn, __func__) == -1)
		return -1;
	rc = mdb_stat(txn, s->s_dbi[db], &ms);
	store_rtxn_end(s);
	if (rc != 0 || ms.ms_entries == 0)
		return rc != 0 ? -1 : 0;
	if ((items = calloc(max, sizeof(*items))) == NULL)
		return -1;
	if (store_txn_begin(s, 0, &txn, __func__) == -1) {
		free(items);
		return -1;
	}
	if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0)
		goto fail;
	/* expired ones are dropped on the way, a bounded number of them */
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && n < max &&
	    visited++ < 4 * max; rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST)) {
		if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == -1) {
			rc = mdb_cursor_del(cur, 0);
			if (rc != 0)
				goto fail;
			continue;
		}
		/* the key copy outlives the delete; an expired one goes */
		if ((items[n].si_key = malloc(k.mv_size)) == NULL) {
			rc = ENOMEM;
			goto fail;
		}
		memcpy(items[n].si_key, k.mv_data, k.mv_size);
		items[n].si_klen = k.mv_size;
		if (!store_rec_expired(hdr.sr_expires_ms, now_ms) &&
		    store_rec_decode(v.mv_data, v.mv_size,
		    &items[n].si_rec) == -1) {
			free(items[n].si_key);
			items[n].si_key = NULL;
			rc = ENOMEM;
			goto fail;
		}
		rc = store_reap_txn(s, txn, db, items[n].si_key,
		    items[n].si_klen, &v, &hdr);
		if (items[n].si_rec.sr_data != NULL)
			n++;
		else {
			free(items[n].si_key);
			items[n].si_key = NULL;
		}
		if (rc != 0)
			goto fail;
	}
	if (rc != 0 && rc != MDB_NOTFOUND)
		goto fail;
	mdb_cursor_close(cur);
	cur = NULL;
	if ((rc = mdb_txn_commit(txn)) != 0) {
		txn = NULL;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		handed++;
		if (cb(arg, items[i].si_key, items[i].si_klen,
		    &items[i].si_rec) != 0)
			break;
	}
	store_items_free(items, n);
	free(items);
	return handed;
fail:
	if (cur != NULL)
		mdb_cursor_close(cur);
	if (txn != NULL)
		mdb_txn_abort(txn);
	log_warnx("%s: %s: %s", __func__, store_db_names[db],
	    mdb_strerror(rc));
	store_items_free(items, n);
	free(items);
	store_set_errno(rc);
	return -1;
}

/* --- gauges and groups' counts --- */

int
store_gauge_add(struct store *s, const char *name, int delta)
{
	MDB_txn	*txn;
	size_t	 len;
	int	 rc;

	if (store_writable(s) == -1)
		return -1;
	if (name == NULL || (len = strlen(name)) == 0 ||
	    len > STORE_GROUP_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	if ((rc = store_cnt_add(s, txn, STORE_GAUGE_TAG, name, len,
	    delta)) == 0)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	if (rc == 0)
		return 0;
	log_warnx("%s: %s", __func__, mdb_strerror(rc));
	store_set_errno(rc);
	return -1;
}

int
store_gauge_get(struct store *s, const char *name, uint64_t *n)
{
	return store_cnt_read(s, STORE_GAUGE_TAG, name,
	    name != NULL ? strlen(name) : 0, n);
}

/* the counts under tag, copied out (their number is small) */
static int
store_counts(struct store *s, unsigned int tag, store_count_cb cb, void *arg)
{
	struct cnt {
		char		 c_name[STORE_GROUP_MAX + 1];
		size_t		 c_len;
		uint64_t	 c_n;
	}		*c = NULL, *nc;
	MDB_txn		*txn;
	MDB_cursor	*cur;
	MDB_val		 k, v;
	uint8_t		 t = (uint8_t)tag;
	size_t		 n = 0, cap = 0, i;
	int		 rc;

	if (store_missing(s, STORE_CNT_BIT))
		return 0;
	if (store_rtxn_begin(s, &txn, "store_counts") == -1)
		return -1;
	if ((rc = mdb_cursor_open(txn, s->s_cnt, &cur)) != 0) {
		store_rtxn_end(s);
		store_set_errno(rc);
		return -1;
	}
	k.mv_size = 1;
	k.mv_data = &t;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size < 2 || k.mv_size > 1 + STORE_GROUP_MAX ||
		    ((const uint8_t *)k.mv_data)[0] != t)
			break;
		if (v.mv_size != 8)
			continue;
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if ((nc = reallocarray(c, cap, sizeof(*c))) == NULL) {
				rc = ENOMEM;
				break;
			}
			c = nc;
		}
		c[n].c_len = k.mv_size - 1;
		memcpy(c[n].c_name, (const uint8_t *)k.mv_data + 1,
		    c[n].c_len);
		c[n].c_name[c[n].c_len] = '\0';
		c[n].c_n = store_be64_get(v.mv_data);
		n++;
	}
	mdb_cursor_close(cur);
	store_rtxn_end(s);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		free(c);
		store_set_errno(rc);
		return -1;
	}
	/* callbacks run with no txn open */
	for (i = 0; i < n; i++)
		if (cb(arg, c[i].c_name, c[i].c_len, c[i].c_n) != 0)
			break;
	free(c);
	return 0;
}

int
store_gauges(struct store *s, store_count_cb cb, void *arg)
{
	if (s == NULL || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
	return store_counts(s, STORE_GAUGE_TAG, cb, arg);
}

int
store_groups(struct store *s, enum store_db db, store_count_cb cb,
    void *arg)
{
	if (s == NULL || (unsigned int)db >= STORE_NDB || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
	return store_counts(s, db, cb, arg);
}
