/*
 * Resource subscriptions' writes (store_subs.h, subs_rec.h): a holding and
 * its index entry go in and out together, and the pair's mark is
 * written when its first holder comes or its last goes, all in one
 * write txn per batch, so that every worker (and the keeper's sweep)
 * sees a count that never drifts: the index entries of a pair are its
 * holders.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "shared/store_subs.h"
#include "shared/store_codec.h"
#include "store_lmdb.h"
#include "store_rec.h"
#include "subs_rec.h"

/* in txn: the mark of a pair whose holders (prefix: its k| entries)
 * just changed from some to none, or from none to some */
static int
store_subs_mark_txn(struct store *s, MDB_txn *txn, const char *dkey,
    size_t dlen, const void *val, size_t vlen, uint64_t now_ms, int room,
    size_t *marked)
{
	int rc;

	rc = store_put_txn(s, txn, STORE_SUBS, dkey, dlen, val, vlen, 0,
	    now_ms, 0, NULL, 0, room, "store_subs");
	if (rc == 0)
		(*marked)++;
	return rc;
}

/* in txn: key's record as k, v: 0, MDB_NOTFOUND or an LMDB error */
static int
store_subs_get_txn(struct store *s, MDB_txn *txn, const void *key,
    size_t klen, MDB_val *k, MDB_val *v)
{
	k->mv_size = klen;
	k->mv_data = (void *)(uintptr_t)key;
	return mdb_get(txn, s->s_dbi[STORE_SUBS], k, v);
}

/* in txn: 1 if the record key is there and live, 0 if not, or -rc */
static int
store_subs_live_txn(struct store *s, MDB_txn *txn, const void *key,
    size_t klen, uint64_t now_ms)
{
	struct store_rec	 hdr;
	MDB_val			 k, v;
	int			 rc;

	if ((rc = store_subs_get_txn(s, txn, key, klen, &k, &v)) != 0)
		return rc == MDB_NOTFOUND ? 0 : rc > 0 ? -rc : rc;
	return store_rec_peek(v.mv_data, v.mv_size, &hdr) == 0 &&
	    !store_rec_expired(hdr.sr_expires_ms, now_ms);
}

/* in txn: delete key if there (live or not), with its index entry */
static int
store_subs_del_txn(struct store *s, MDB_txn *txn, const void *key,
    size_t klen)
{
	struct store_rec	 hdr;
	MDB_val			 k, v;
	int			 rc;

	if ((rc = store_subs_get_txn(s, txn, key, klen, &k, &v)) != 0)
		return rc == MDB_NOTFOUND ? 0 : rc;
	if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == -1)
		return mdb_del(txn, s->s_dbi[STORE_SUBS], &k, NULL);
	return store_reap_txn(s, txn, STORE_SUBS, key, klen, &v, &hdr);
}

/* one holding in: its index entry, and the mark if it is the first */
static int
store_subs_hold_txn(struct store *s, MDB_txn *txn,
    const struct store_hold *h, const struct store_limit *lim,
    uint64_t expires_ms, uint64_t now_ms, int room, size_t *marked)
{
	char	 kkey[SUBS_KEY_MAX + 1], dkey[SUBS_KEY_MAX + 1];
	size_t	 klen, plen, dlen;
	int	 rc, any;

	if (subs_key_of_hold(h->sh_key, h->sh_klen, kkey, &klen, &plen, dkey,
	    &dlen) == -1)
		return EINVAL;
	if ((rc = store_prefix_any_txn(s, txn, STORE_SUBS, kkey, plen, now_ms,
	    &any)) != 0)
		return rc;
	if ((rc = store_put_txn(s, txn, STORE_SUBS, h->sh_key, h->sh_klen,
	    h->sh_val, h->sh_vlen, expires_ms, now_ms, expires_ms != 0 ?
	    STORE_F_CLOSE : 0, lim != NULL && lim->sl_group != NULL ?
	    lim->sl_group : "", lim != NULL && lim->sl_group != NULL ?
	    lim->sl_glen : 0, room, "store_subs_hold")) != 0)
		return rc;
	if ((rc = store_put_txn(s, txn, STORE_SUBS, kkey, klen, h->sh_val,
	    h->sh_vlen, expires_ms, now_ms, 0, "", 0, room,
	    "store_subs_hold")) != 0)
		return rc;
	if (any)
		return 0;
	return store_subs_mark_txn(s, txn, dkey, dlen, h->sh_val, h->sh_vlen,
	    now_ms, room, marked);
}

int
store_subs_hold(struct store *s, const struct store_hold *h, size_t n,
    const struct store_limit *lim, uint64_t expires_ms, uint64_t now_ms,
    size_t *marked)
{
	MDB_txn		*txn;
	uint64_t	 have;
	size_t		 i, fresh = 0;
	int		 rc, live, room, grown = 0;

	*marked = 0;
	if (store_check(s, STORE_SUBS, "h", 1, 1) == -1 || (h == NULL &&
	    n > 0) || (lim != NULL && lim->sl_group != NULL &&
	    (lim->sl_glen == 0 || lim->sl_glen > STORE_GROUP_MAX))) {
		errno = EINVAL;
		return -1;
	}
	if (n == 0)
		return 0;
again:
	room = store_room(s);
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	/* the new ones count against the group: all or none */
	for (i = 0; i < n; i++) {
		if (h[i].sh_klen == 0 || h[i].sh_klen > STORE_KEY_MAX) {
			rc = EINVAL;
			goto fail;
		}
		if ((live = store_subs_live_txn(s, txn, h[i].sh_key,
		    h[i].sh_klen, now_ms)) < 0) {
			rc = -live;
			goto fail;
		}
		fresh += !live;
	}
	if (lim != NULL && lim->sl_group != NULL && lim->sl_group_max > 0) {
		if ((rc = store_cnt_get(s, txn, STORE_SUBS, lim->sl_group,
		    lim->sl_glen, &have)) != 0)
			goto fail;
		if (have + fresh > lim->sl_group_max) {
			mdb_txn_abort(txn);
			return STORE_LIMIT_GROUP;
		}
	}
	for (i = 0; i < n; i++) {
		if ((live = store_subs_live_txn(s, txn, h[i].sh_key,
		    h[i].sh_klen, now_ms)) < 0) {
			rc = -live;
			goto fail;
		}
		if (live)
			continue;
		if ((rc = store_subs_hold_txn(s, txn, &h[i], lim, expires_ms,
		    now_ms, room, marked)) != 0)
			goto fail;
	}
	if ((rc = mdb_txn_commit(txn)) == 0)
		return 0;
	txn = NULL;
fail:
	if (txn != NULL)
		mdb_txn_abort(txn);
	*marked = 0;
	if (rc == MDB_MAP_FULL && !grown && store_map_adopt(s)) {
		grown = 1;
		fresh = 0;
		goto again;
	}
	if (rc == MDB_MAP_FULL)
		store_log_full(__func__, STORE_SUBS);
	else
		log_warnx("%s: %s", __func__, mdb_strerror(rc));
	store_set_errno(rc);
	return -1;
}

/* in txn: a holding gone (hkey, its value val): its index entry goes,
 * and the mark is written if it was the pair's last holder */
static int
store_subs_unhold_txn(struct store *s, MDB_txn *txn, const void *hkey,
    size_t hklen, const void *val, size_t vlen, uint64_t now_ms,
    size_t *marked)
{
	char	 kkey[SUBS_KEY_MAX + 1], dkey[SUBS_KEY_MAX + 1];
	size_t	 klen, plen, dlen;
	int	 rc, any;

	if (subs_key_of_hold(hkey, hklen, kkey, &klen, &plen, dkey,
	    &dlen) == -1)
		return 0;	/* not a holding's: nothing indexed */
	if ((rc = store_subs_del_txn(s, txn, kkey, klen)) != 0)
		return rc;
	if ((rc = store_prefix_any_txn(s, txn, STORE_SUBS, kkey, plen, now_ms,
	    &any)) != 0 || any)
		return rc;
	/* a mark always fits: the headroom is kept for such writes */
	return store_subs_mark_txn(s, txn, dkey, dlen, val, vlen, now_ms, 1,
	    marked);
}

int
store_subs_release(struct store *s, const void *prefix, size_t plen,
    size_t max, uint64_t now_ms, size_t *released, size_t *marked,
    int *more)
{
	struct store_rec	 hdr;
	MDB_txn			*txn;
	MDB_cursor		*cur = NULL;
	MDB_val			 k, v;
	char			 key[STORE_KEY_MAX];
	char			*val = NULL;
	size_t			 klen, vlen;
	int			 rc, grown = 0;

	if (store_check(s, STORE_SUBS, prefix, plen, 1) == -1)
		return -1;
again:
	*released = *marked = 0;
	*more = 0;
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	for (;;) {
		if ((rc = mdb_cursor_open(txn, s->s_dbi[STORE_SUBS],
		    &cur)) != 0)
			goto fail;
		k.mv_size = plen;
		k.mv_data = (void *)(uintptr_t)prefix;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && (k.mv_size < plen || k.mv_size > sizeof(key) ||
		    memcmp(k.mv_data, prefix, plen) != 0))
			rc = MDB_NOTFOUND;
		if (rc == 0 && *released >= max) {
			*more = 1;
			rc = MDB_NOTFOUND;
		}
		if (rc != 0) {
			mdb_cursor_close(cur);
			cur = NULL;
			break;
		}
		/* copied: the deletes change the pages k and v are on */
		klen = k.mv_size;
		memcpy(key, k.mv_data, klen);
		if (store_rec_peek(v.mv_data, v.mv_size, &hdr) == -1) {
			rc = mdb_cursor_del(cur, 0);
			mdb_cursor_close(cur);
			cur = NULL;
			if (rc != 0)
				goto fail;
			continue;
		}
		vlen = hdr.sr_len;
		if ((val = malloc(vlen + 1)) == NULL) {
			rc = ENOMEM;
			goto fail;
		}
		memcpy(val, (const char *)v.mv_data + STORE_HDR_LEN +
		    hdr.sr_glen, vlen);
		mdb_cursor_close(cur);
		cur = NULL;
		if ((rc = store_reap_txn(s, txn, STORE_SUBS, key, klen, &v,
		    &hdr)) != 0 || (rc = store_subs_unhold_txn(s, txn, key,
		    klen, val, vlen, now_ms, marked)) != 0)
			goto fail;
		free(val);
		val = NULL;
		(*released)++;
	}
	if (rc == MDB_NOTFOUND)
		rc = 0;
fail:
	free(val);
	val = NULL;
	if (cur != NULL)
		mdb_cursor_close(cur);
	cur = NULL;
	if ((rc = store_end_write(s, txn, rc, &grown, STORE_SUBS,
	    __func__)) == 1)
		goto again;
	if (rc == -1)
		*released = *marked = *more = 0;
	return rc;
}

int
store_subs_closed(struct store *s, const void *hkey, size_t hklen,
    const void *val, size_t vlen, uint64_t now_ms, size_t *marked)
{
	MDB_txn	*txn;
	int	 rc, grown = 0;

	if (store_check(s, STORE_SUBS, hkey, hklen, 1) == -1)
		return -1;
again:
	*marked = 0;
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	/* held again since (the same session subscribing anew): kept */
	if ((rc = store_subs_live_txn(s, txn, hkey, hklen, now_ms)) == 0)
		rc = store_subs_unhold_txn(s, txn, hkey, hklen, val, vlen,
		    now_ms, marked);
	else if (rc == 1)
		rc = 0;
	else
		rc = -rc;
	if ((rc = store_end_write(s, txn, rc, &grown, STORE_SUBS,
	    __func__)) == 1)
		goto again;
	if (rc == -1)
		*marked = 0;
	return rc;
}
