/*
 * Token buckets in the store's limits db, shared by every worker: one
 * write txn refills every bucket a call is subject to, checks them all,
 * and takes one token from each or from none (docs/ARCHITECTURE.md, Rate
 * limits).  A bucket is [f64 tokens][u64 last refill, ms]; it starts
 * full, refills continuously (max tokens per period) from its stamp, and
 * expires two periods after its last use, when it would be full again.
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "shared/store_codec.h"
#include "store_lmdb.h"
#include "store_rec.h"

struct bucket_state {
	double		 bs_tokens;
	uint64_t	 bs_last_ms;
};

/* the bucket as refilled up to now_ms (full if absent or undecodable) */
static void
store_bucket_refill(const struct store_bucket *b, const MDB_val *v,
    uint64_t now_ms, struct bucket_state *st, uint64_t *exp)
{
	struct store_rec	 rec;
	double			 max = (double)b->sb_max;

	st->bs_tokens = max;
	st->bs_last_ms = now_ms;
	/*
	 * Two periods from now, when it would be full again; an expiry
	 * still a period ahead is kept, which spares the expiry index a
	 * delete and an insert on most calls.
	 */
	*exp = now_ms + 2 * b->sb_period_ms;
	if (v == NULL || store_rec_peek(v->mv_data, v->mv_size, &rec) == -1 ||
	    store_rec_expired(rec.sr_expires_ms, now_ms) ||
	    v->mv_size != STORE_HDR_LEN + rec.sr_glen + sizeof(*st))
		return;
	memcpy(st, (const uint8_t *)v->mv_data + STORE_HDR_LEN + rec.sr_glen,
	    sizeof(*st));
	if (rec.sr_expires_ms >= now_ms + b->sb_period_ms)
		*exp = rec.sr_expires_ms;
	/* a clock stepped back refills nothing */
	if (now_ms > st->bs_last_ms)
		st->bs_tokens += (double)(now_ms - st->bs_last_ms) * max /
		    (double)b->sb_period_ms;
	if (!(st->bs_tokens <= max))	/* NaN too */
		st->bs_tokens = max;
	if (st->bs_tokens < 0)
		st->bs_tokens = 0;
	st->bs_last_ms = now_ms;
}

int
store_buckets_take(struct store *s, struct store_bucket *b, size_t n,
    uint64_t now_ms, uint64_t *retry_ms)
{
	struct bucket_state	 st[STORE_BUCKETS_MAX];
	uint64_t		 exp[STORE_BUCKETS_MAX];
	MDB_txn			*txn;
	MDB_val			 k, v;
	size_t			 i;
	uint64_t		 wait;
	int			 rc, room;
	double			 need;

	*retry_ms = 0;
	for (i = 0; i < n && i < STORE_BUCKETS_MAX; i++)
		b[i].sb_taken = 0;
	if (n == 0)
		return 0;
	if (n > STORE_BUCKETS_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (store_check(s, STORE_LIMITS, b[i].sb_key, b[i].sb_klen,
		    1) == -1 || b[i].sb_max == 0 || b[i].sb_period_ms == 0)
			return -1;
	room = store_room(s);
	if (store_txn_begin(s, 0, &txn, __func__) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		k.mv_size = b[i].sb_klen;
		k.mv_data = (void *)(uintptr_t)b[i].sb_key;
		rc = mdb_get(txn, s->s_dbi[STORE_LIMITS], &k, &v);
		if (rc != 0 && rc != MDB_NOTFOUND)
			goto fail;
		store_bucket_refill(&b[i], rc == 0 ? &v : NULL, now_ms, &st[i],
		    &exp[i]);
		/* as if those tokens had never been taken */
		st[i].bs_tokens += (double)b[i].sb_return;
		if (st[i].bs_tokens > (double)b[i].sb_max)
			st[i].bs_tokens = (double)b[i].sb_max;
		if (st[i].bs_tokens < 1.0) {
			/* when this bucket has its token back */
			need = (1.0 - st[i].bs_tokens) *
			    (double)b[i].sb_period_ms / (double)b[i].sb_max;
			wait = (uint64_t)need;
			if ((double)wait < need)
				wait++;
			if (wait == 0)
				wait = 1;
			if (wait > *retry_ms)
				*retry_ms = wait;
		}
	}
	if (*retry_ms > 0) {
		/* none taken: nothing to write */
		mdb_txn_abort(txn);
		return STORE_LIMITED;
	}
	for (i = 0; i < n; i++) {
		b[i].sb_taken = 1;
		if (b[i].sb_lease > 0) {
			need = st[i].bs_tokens / (double)b[i].sb_lease;
			if (need > STORE_LEASE_MAX)
				need = STORE_LEASE_MAX;
			if (need >= 2.0)
				b[i].sb_taken = (uint64_t)need;
		}
		st[i].bs_tokens -= (double)b[i].sb_taken;
		if ((rc = store_put_txn(s, txn, STORE_LIMITS, b[i].sb_key,
		    b[i].sb_klen, &st[i], sizeof(st[i]), exp[i], now_ms, 0,
		    NULL, 0, room, __func__)) != 0)
			goto fail;
	}
	if (store_commit(txn, __func__) == -1)
		return -1;
	return 0;
fail:
	mdb_txn_abort(txn);
	if (rc == MDB_MAP_FULL)
		store_log_full(__func__, STORE_LIMITS);
	store_set_errno(rc);
	return -1;
}
