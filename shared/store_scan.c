/*
 * The store's walks (store_lmdb.h): iteration over a db and over a
 * sequence, copied out in batches so that callbacks run with no txn
 * open; the sweep of expired records by the expiry index; queues
 * whose records one caller takes.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_stat.h"
#include "shared/store_sweep.h"
#include "shared/store_codec.h"
#include "store_lmdb.h"
#include "store_rec.h"

#define STORE_LMDB_KEY	512		/* above LMDB's 511-byte key limit */

/* store_iter() copies this much out per read txn */
#define STORE_ITER_VISIT	256
#define STORE_ITER_BYTES	(1024 * 1024)

struct store_item {
	void		*si_key;
	size_t		 si_klen;
	struct store_rec si_rec;
};

/* --- iteration --- */

static void
store_items_free(struct store_item *items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(items[i].si_key);
		store_rec_clear(&items[i].si_rec);
	}
}

/* hand a batch to cb, until it says stop (1), then free the batch */
static int
store_items_visit(struct store_item *items, size_t n, store_iter_cb cb,
    void *arg)
{
	size_t	i;
	int	stop = 0;

	for (i = 0; i < n && !stop; i++)
		stop = cb(arg, items[i].si_key, items[i].si_klen,
		    &items[i].si_rec) != 0;
	store_items_free(items, n);
	return stop;
}

/* copy the record k, v (its header read) into it: 0, or ENOMEM */
static int
store_item_copy(struct store_item *it, const MDB_val *k, const MDB_val *v)
{
	memset(it, 0, sizeof(*it));
	if ((it->si_key = malloc(k->mv_size)) == NULL ||
	    store_rec_decode(v->mv_data, v->mv_size, &it->si_rec) == -1) {
		free(it->si_key);
		it->si_key = NULL;
		return ENOMEM;
	}
	memcpy(it->si_key, k->mv_data, k->mv_size);
	it->si_klen = k->mv_size;
	return 0;
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
			if ((rc = store_item_copy(it, &k, &v)) != 0)
				break;
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
	size_t			 lastlen = 0, n;
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
		stop = store_items_visit(items, n, cb, arg);
	}
	free(items);
	return 0;
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
	size_t			 n = 0, bytes = 0;
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
				if ((rc = store_item_copy(&items[n], &k,
				    &v)) != 0)
					break;
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
		stop = store_items_visit(items, n, cb, arg);
	}
	free(items);
	return 0;
fail:
	free(items);
	return -1;
}

/* --- the sweep of expired records --- */

/*
 * Due index entries of the tags lo..hi, at most max, in txn: each
 * entry goes, and the record it names too if the record's own stamp is
 * due (else the entry was stale: its record was rewritten, or is gone).
 * ss_more says max stopped it.
 */
int
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

/* the first key at or after prefix that starts with it: 0, MDB_NOTFOUND */
static int
store_cursor_first(MDB_cursor *cur, const void *prefix, size_t plen,
    MDB_val *k, MDB_val *v)
{
	int rc;

	if (plen == 0)
		return mdb_cursor_get(cur, k, v, MDB_FIRST);
	k->mv_size = plen;
	k->mv_data = (void *)(uintptr_t)prefix;
	if ((rc = mdb_cursor_get(cur, k, v, MDB_SET_RANGE)) != 0)
		return rc;
	if (k->mv_size < plen || memcmp(k->mv_data, prefix, plen) != 0)
		return MDB_NOTFOUND;
	return 0;
}

/* the key after k that still starts with prefix: 0, MDB_NOTFOUND */
static int
store_cursor_next(MDB_cursor *cur, const void *prefix, size_t plen,
    MDB_val *k, MDB_val *v)
{
	int rc;

	if ((rc = mdb_cursor_get(cur, k, v, MDB_NEXT)) != 0)
		return rc;
	if (k->mv_size < plen || memcmp(k->mv_data, prefix, plen) != 0)
		return MDB_NOTFOUND;
	return 0;
}

/* in txn: *any 1 if a live record's key starts with prefix; 0 or an
 * LMDB error */
int
store_prefix_any_txn(struct store *s, MDB_txn *txn, enum store_db db,
    const void *prefix, size_t plen, uint64_t now_ms, int *any)
{
	struct store_rec	 hdr;
	MDB_cursor		*cur;
	MDB_val			 k, v;
	int			 rc;

	*any = 0;
	if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0)
		return rc;
	for (rc = store_cursor_first(cur, prefix, plen, &k, &v); rc == 0;
	    rc = store_cursor_next(cur, prefix, plen, &k, &v))
		if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == 0 &&
		    !store_rec_expired(hdr.sr_expires_ms, now_ms)) {
			*any = 1;
			break;
		}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
store_prefix_any(struct store *s, enum store_db db, const void *prefix,
    size_t plen, uint64_t now_ms)
{
	MDB_txn	*txn;
	int	 rc, any;

	if (store_check(s, db, prefix, plen, 0) == -1)
		return -1;
	if (store_missing(s, 1U << db))
		return 0;
	if (store_rtxn_begin(s, &txn, __func__) == -1)
		return -1;
	rc = store_prefix_any_txn(s, txn, db, prefix, plen, now_ms, &any);
	store_rtxn_end(s);
	if (rc != 0) {
		store_set_errno(rc);
		return -1;
	}
	return any;
}

int
store_range(struct store *s, enum store_db db, const void *prefix,
    size_t plen, const void *after, size_t alen, size_t max,
    uint64_t now_ms, store_iter_cb cb, void *arg, int *more)
{
	struct store_item	*items;
	struct store_rec	 hdr;
	MDB_txn			*txn;
	MDB_cursor		*cur;
	MDB_val			 k, v;
	size_t			 n = 0, i, bytes = 0;
	int			 rc;

	*more = 0;
	if (store_check(s, db, prefix, plen, 0) == -1 || cb == NULL ||
	    (after != NULL && (alen < plen || alen > STORE_KEY_MAX ||
	    memcmp(after, prefix, plen) != 0))) {
		errno = EINVAL;
		return -1;
	}
	if (store_missing(s, 1U << db) || max == 0)
		return 0;
	if (max > STORE_ITER_VISIT)
		max = STORE_ITER_VISIT;
	if ((items = calloc(max, sizeof(*items))) == NULL)
		return -1;
	if (store_rtxn_begin(s, &txn, __func__) == -1) {
		free(items);
		return -1;
	}
	if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0) {
		store_rtxn_end(s);
		free(items);
		store_set_errno(rc);
		return -1;
	}
	if (after != NULL) {
		k.mv_size = alen;
		k.mv_data = (void *)(uintptr_t)after;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && k.mv_size == alen &&
		    memcmp(k.mv_data, after, alen) == 0)
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		if (rc == 0 && (k.mv_size < plen ||
		    memcmp(k.mv_data, prefix, plen) != 0))
			rc = MDB_NOTFOUND;
	} else
		rc = store_cursor_first(cur, prefix, plen, &k, &v);
	for (; rc == 0 && n < max && bytes < STORE_ITER_BYTES;
	    rc = store_cursor_next(cur, prefix, plen, &k, &v)) {
		if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == -1 ||
		    store_rec_expired(hdr.sr_expires_ms, now_ms))
			continue;
		if ((rc = store_item_copy(&items[n], &k, &v)) != 0)
			break;
		bytes += v.mv_size;
		n++;
	}
	*more = rc == 0;
	mdb_cursor_close(cur);
	store_rtxn_end(s);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		store_items_free(items, n);
		free(items);
		store_set_errno(rc);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (cb(arg, items[i].si_key, items[i].si_klen,
		    &items[i].si_rec) != 0)
			break;
	store_items_free(items, n);
	free(items);
	return (int)n;
}

int
store_take(struct store *s, enum store_db db, size_t max, uint64_t now_ms,
    store_iter_cb cb, void *arg)
{
	return store_take_prefix(s, db, NULL, 0, max, now_ms, cb, arg);
}

int
store_take_prefix(struct store *s, enum store_db db, const void *prefix,
    size_t plen, size_t max, uint64_t now_ms, store_iter_cb cb, void *arg)
{
	struct store_item	*items = NULL;
	struct store_rec	 hdr;
	MDB_txn			*txn;
	MDB_cursor		*cur = NULL;
	MDB_stat		 ms;
	MDB_val			 k, v;
	size_t			 n = 0, i, visited = 0;
	int			 rc, handed = 0;

	if ((unsigned int)db >= STORE_NDB || cb == NULL ||
	    (prefix == NULL && plen > 0) || plen > STORE_KEY_MAX) {
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
	if (plen == 0) {
		rc = mdb_stat(txn, s->s_dbi[db], &ms);
		if (rc == 0 && ms.ms_entries == 0)
			rc = MDB_NOTFOUND;
	} else if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) == 0) {
		rc = store_cursor_first(cur, prefix, plen, &k, &v);
		mdb_cursor_close(cur);
		cur = NULL;
	}
	store_rtxn_end(s);
	if (rc != 0)
		return rc != MDB_NOTFOUND ? -1 : 0;
	if ((items = calloc(max, sizeof(*items))) == NULL)
		return -1;
	if (store_txn_begin(s, 0, &txn, __func__) == -1) {
		free(items);
		return -1;
	}
	if ((rc = mdb_cursor_open(txn, s->s_dbi[db], &cur)) != 0)
		goto fail;
	/* expired ones are dropped on the way, a bounded number of them */
	for (rc = store_cursor_first(cur, prefix, plen, &k, &v); rc == 0 &&
	    n < max && visited++ < 4 * max;
	    rc = store_cursor_first(cur, prefix, plen, &k, &v)) {
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
