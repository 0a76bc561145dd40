/*
 * The store's writes (store_lmdb.h): a record put or added (under a
 * cap), deleted, or appended to a sequence, each in one short write
 * txn with its expiry index entry and its group's count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_limit.h"
#include "shared/store_sweep.h"
#include "shared/store_update.h"
#include "shared/store_codec.h"
#include "store_lmdb.h"
#include "store_rec.h"

#define STORE_RECLAIM	256	/* due entries reclaimed at a cap */
#define STORE_EVICT_SCAN 65536	/* index entries looked at to evict one */

/* --- writes --- */

/*
 * Delete the record pk (its value v, header hdr) in txn, with its
 * index entry and its place in its group's count.
 */
int
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

/*
 * An expired record's reaping by a sweep: one flagged STORE_F_CLOSE
 * leaves its payload in STORE_CLOSING under its key (and expiring, so
 * a queue nobody takes from is swept too).
 */
int
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
int
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
 * Evict the record of group that expires first (the index sorts each
 * db's entries by expiry): deleted in txn with its index entry and its
 * place in the count, its payload copied to *out first (out->sr_data
 * stays NULL if the group has no record the scan reaches).
 */
static int
store_evict_txn(struct store *s, MDB_txn *txn, enum store_db db,
    const void *group, size_t glen, struct store_rec *out)
{
	uint8_t		 ibuf[STORE_IDX_HDR + STORE_KEY_MAX];
	struct store_rec hdr;
	MDB_cursor	*cur;
	MDB_val		 k, v, pk;
	size_t		 n = 0;
	int		 rc, op = MDB_SET_RANGE;

	memset(out, 0, sizeof(*out));
	if ((rc = mdb_cursor_open(txn, s->s_exp, &cur)) != 0)
		return rc;
	ibuf[0] = (uint8_t)db;
	k.mv_size = 1;
	k.mv_data = ibuf;
	for (; n < STORE_EVICT_SCAN; n++, op = MDB_NEXT) {
		if ((rc = mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)op)) !=
		    0 || ((const uint8_t *)k.mv_data)[0] != (uint8_t)db) {
			rc = rc == MDB_NOTFOUND ? 0 : rc;
			break;
		}
		if (k.mv_size <= STORE_IDX_HDR ||
		    k.mv_size > sizeof(ibuf))
			continue;
		pk.mv_size = k.mv_size - STORE_IDX_HDR;
		pk.mv_data = (uint8_t *)k.mv_data + STORE_IDX_HDR;
		if ((rc = mdb_get(txn, s->s_dbi[db], &pk, &v)) == MDB_NOTFOUND)
			continue;
		if (rc != 0)
			break;
		/* the record's own entry (not a stale one), of the group */
		if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == -1 ||
		    hdr.sr_expires_ms != store_be64_get(
		    (const uint8_t *)k.mv_data + 1) || hdr.sr_glen != glen ||
		    memcmp((const uint8_t *)v.mv_data + STORE_HDR_LEN, group,
		    glen) != 0)
			continue;
		/* k and v point into pages the delete changes */
		memcpy(ibuf, k.mv_data, k.mv_size);
		pk.mv_data = ibuf + STORE_IDX_HDR;
		if (store_rec_decode(v.mv_data, v.mv_size, out) == -1) {
			rc = ENOMEM;
			break;
		}
		if ((rc = store_reap_txn(s, txn, db, pk.mv_data, pk.mv_size,
		    &v, &hdr)) != 0)
			store_rec_clear(out);
		break;
	}
	mdb_cursor_close(cur);
	return rc;
}

/* store_put() and store_add*(): one write txn, retried once on a full
 * map; evicted non-NULL: a group's cap evicts (store_add_evict()) */
static int
store_write(struct store *s, enum store_db db, const void *key,
    size_t klen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, int add, uint16_t flags, const struct store_limit *lim,
    struct store_rec *evicted, const char *fn)
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
	if (evicted != NULL)
		memset(evicted, 0, sizeof(*evicted));
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
		if (hit == STORE_LIMIT_GROUP && evicted != NULL) {
			if ((rc = store_evict_txn(s, txn, db, lim->sl_group,
			    lim->sl_glen, evicted)) != 0)
				goto fail;
			if (evicted->sr_data != NULL)
				hit = 0;
		}
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
	/* not committed: nothing was evicted */
	if (evicted != NULL)
		store_rec_clear(evicted);
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
	if (evicted != NULL)
		store_rec_clear(evicted);
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
	    0, NULL, NULL, __func__);
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
	    flags, &lim, NULL, __func__);
}

int
store_add(struct store *s, enum store_db db, const void *key, size_t klen,
    const void *data, size_t len, uint64_t expires_ms, uint64_t now_ms)
{
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 1,
	    0, NULL, NULL, __func__);
}

int
store_add_limited(struct store *s, enum store_db db, const void *key,
    size_t klen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, const struct store_limit *lim)
{
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 1,
	    0, lim, NULL, __func__);
}

int
store_add_evict(struct store *s, enum store_db db, const void *key,
    size_t klen, const void *data, size_t len, uint64_t expires_ms,
    uint64_t now_ms, uint16_t flags, const struct store_limit *lim,
    struct store_rec *evicted)
{
	return store_write(s, db, key, klen, data, len, expires_ms, now_ms, 1,
	    flags, lim, evicted, __func__);
}

/* delete the record k found as v, with its index entry */
static int
store_drop_txn(struct store *s, MDB_txn *txn, enum store_db db,
    const void *key, size_t klen, MDB_val *k, MDB_val *v)
{
	struct store_rec old;

	if (store_rec_peek(v->mv_data, v->mv_size, &old) == 0)
		return store_reap_txn(s, txn, db, key, klen, v, &old);
	return mdb_del(txn, s->s_dbi[db], k, NULL);
}

/*
 * Commit a write txn whose work returned rc, else abort it: 0 done, 1
 * the map was grown (do it again, once), -1 failed (logged, errno).
 */
int
store_end_write(struct store *s, MDB_txn *txn, int rc, int *grown,
    enum store_db db, const char *fn)
{
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	if (rc == 0)
		return 0;
	if (rc == MDB_MAP_FULL && !*grown && store_map_grow(s)) {
		*grown = 1;
		return 1;
	}
	log_warnx("%s: %s: %s", fn, store_db_names[db], mdb_strerror(rc));
	store_set_errno(rc);
	return -1;
}

/*
 * The start of a write to the record key: a write txn open, the record
 * found.  0 (*txnp open, k and v the record), STORE_NOTFOUND, or -1
 * (logged, errno); no txn left open but on 0.  fn names the caller.
 */
static int
store_get_write(struct store *s, enum store_db db, const void *key,
    size_t klen, MDB_txn **txnp, MDB_val *k, MDB_val *v, const char *fn)
{
	int rc;

	if (store_txn_begin(s, 0, txnp, fn) == -1)
		return -1;
	k->mv_size = klen;
	k->mv_data = (void *)(uintptr_t)key;
	if ((rc = mdb_get(*txnp, s->s_dbi[db], k, v)) == 0)
		return 0;
	if (rc != MDB_NOTFOUND)
		log_warnx("%s: mdb_get: %s", fn, mdb_strerror(rc));
	mdb_txn_abort(*txnp);
	if (rc == MDB_NOTFOUND)
		return STORE_NOTFOUND;
	store_set_errno(rc);
	return -1;
}

/*
 * One write txn on the record key, found: op's work in it, committed
 * (MDB_NOTFOUND from op: nothing done, STORE_NOTFOUND), retried once on
 * a grown map.  0, STORE_NOTFOUND, or -1 (logged, errno).
 */
typedef int (*store_rec_op)(struct store *, MDB_txn *, enum store_db,
    const void *key, size_t klen, MDB_val *k, MDB_val *v, void *arg);

static int
store_on_record(struct store *s, enum store_db db, const void *key,
    size_t klen, store_rec_op op, void *arg, const char *fn)
{
	MDB_txn	*txn;
	MDB_val	 k, v;
	int	 rc, grown = 0;

	if (store_check(s, db, key, klen, 1) == -1)
		return -1;
again:
	if ((rc = store_get_write(s, db, key, klen, &txn, &k, &v, fn)) != 0)
		return rc;
	if ((rc = op(s, txn, db, key, klen, &k, &v, arg)) == MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return STORE_NOTFOUND;
	}
	if ((rc = store_end_write(s, txn, rc, &grown, db, fn)) == 1)
		goto again;
	return rc;
}

static int
store_del_op(struct store *s, MDB_txn *txn, enum store_db db,
    const void *key, size_t klen, MDB_val *k, MDB_val *v, void *arg)
{
	(void)arg;
	/* the map's headroom is there so that this commits on a full map */
	return store_drop_txn(s, txn, db, key, klen, k, v);
}

int
store_del(struct store *s, enum store_db db, const void *key, size_t klen)
{
	return store_on_record(s, db, key, klen, store_del_op, NULL,
	    __func__);
}

/* store_touch()'s: arg is the new expiry, then now */
static int
store_touch_op(struct store *s, MDB_txn *txn, enum store_db db,
    const void *key, size_t klen, MDB_val *k, MDB_val *v, void *arg)
{
	const uint64_t		*t = arg;
	struct store_rec	 old;
	uint8_t			*copy;
	int			 rc;

	(void)k;
	if (store_rec_peek(v->mv_data, v->mv_size, &old) == -1 ||
	    store_rec_expired(old.sr_expires_ms, t[1]))
		return MDB_NOTFOUND;
	/* v points into a page the rewrite changes: group and payload */
	if ((copy = malloc(v->mv_size)) == NULL)
		return ENOMEM;
	memcpy(copy, v->mv_data, v->mv_size);
	/* the same size: it goes through on a full map too */
	rc = store_put_txn(s, txn, db, key, klen, copy + STORE_HDR_LEN +
	    old.sr_glen, old.sr_len, t[0], t[1], old.sr_flags,
	    copy + STORE_HDR_LEN, old.sr_glen, 0, "store_touch");
	free(copy);
	return rc;
}

int
store_touch(struct store *s, enum store_db db, const void *key, size_t klen,
    uint64_t expires_ms, uint64_t now_ms)
{
	uint64_t t[2] = { expires_ms, now_ms };

	return store_on_record(s, db, key, klen, store_touch_op, t,
	    __func__);
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

/* --- read-modify-write of one small record (health, breakers) --- */

int
store_update(struct store *s, enum store_db db, const void *key, size_t klen,
    uint64_t now_ms, store_update_cb cb, void *arg)
{
	uint8_t			 out[STORE_UPDATE_MAX];
	struct store_rec	 old;
	MDB_txn			*txn;
	MDB_val			 k, v;
	const void		*data;
	size_t			 len, outlen;
	int			 rc, act, live, room, grown = 0;

	if (store_check(s, db, key, klen, 1) == -1 || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
again:
	room = store_room(s);
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	k.mv_size = klen;
	k.mv_data = (void *)(uintptr_t)key;
	data = NULL;
	len = outlen = 0;
	rc = mdb_get(txn, s->s_dbi[db], &k, &v);
	if (rc != 0 && rc != MDB_NOTFOUND)
		goto fail;
	live = rc == 0 && store_rec_peek(v.mv_data, v.mv_size, &old) == 0 &&
	    !store_rec_expired(old.sr_expires_ms, now_ms);
	if (live) {
		data = (const uint8_t *)v.mv_data + STORE_HDR_LEN + old.sr_glen;
		len = v.mv_size - STORE_HDR_LEN - old.sr_glen;
	}
	/* cb reads the map's bytes before anything is written */
	act = cb(arg, data, len, out, sizeof(out), &outlen);
	if (act == STORE_UPD_KEEP || (act == STORE_UPD_DEL && rc != 0)) {
		mdb_txn_abort(txn);
		return 0;
	}
	if (act == STORE_UPD_DEL)
		rc = store_drop_txn(s, txn, db, key, klen, &k, &v);
	else if (outlen > sizeof(out))
		rc = EINVAL;
	else
		rc = store_put_txn(s, txn, db, key, klen, out, outlen, 0,
		    now_ms, 0, NULL, 0, room, __func__);
	if ((rc = store_end_write(s, txn, rc, &grown, db, __func__)) == 1)
		goto again;
	return rc == 0 ? 1 : -1;
fail:
	log_warnx("%s: %s: %s", __func__, store_db_names[db], mdb_strerror(rc));
	mdb_txn_abort(txn);
	store_set_errno(rc);
	return -1;
}

/* --- a record claimed once --- */

int
store_claim(struct store *s, enum store_db db, const void *key, size_t klen,
    uint64_t now_ms, store_claim_cb cb, void *arg, struct store_rec *out)
{
	uint8_t			 mark[STORE_CLAIM_MARK_MAX];
	struct store_rec	 rec;
	MDB_txn			*txn;
	MDB_val			 k, v;
	size_t			 mlen = 0;
	int			 rc, verdict, grown = 0;

	memset(out, 0, sizeof(*out));
	if (cb == NULL || store_check(s, db, key, klen, 1) == -1) {
		errno = EINVAL;
		return -1;
	}
again:
	if ((rc = store_get_write(s, db, key, klen, &txn, &k, &v,
	    __func__)) != 0)
		return rc;
	if (store_rec_peek(v.mv_data, v.mv_size, &rec) == -1) {
		mdb_txn_abort(txn);
		log_warnx("%s: %s: undecodable record", __func__,
		    store_db_names[db]);
		errno = EBADMSG;
		return -1;
	}
	rec.sr_data = (char *)v.mv_data + STORE_HDR_LEN + rec.sr_glen;
	if ((verdict = cb(arg, &rec, now_ms, mark, rec.sr_len < sizeof(mark) ?
	    rec.sr_len : sizeof(mark), &mlen)) != 0) {
		mdb_txn_abort(txn);
		return verdict;
	}
	if (mlen > rec.sr_len || mlen > sizeof(mark)) {
		mdb_txn_abort(txn);
		errno = EINVAL;
		return -1;
	}
	if (store_rec_decode(v.mv_data, v.mv_size, out) == -1) {
		mdb_txn_abort(txn);
		errno = ENOMEM;
		return -1;
	}
	/* no longer than the record: commits on a full map too */
	rc = store_put_txn(s, txn, db, key, klen, mark, mlen,
	    rec.sr_expires_ms, now_ms, rec.sr_flags, NULL, 0, 1, __func__);
	if ((rc = store_end_write(s, txn, rc, &grown, db, __func__)) != 0) {
		store_rec_clear(out);
		if (rc == 1)
			goto again;
		return -1;
	}
	return 0;
}
