/*
 * The store's counts (store_lmdb.h): "counts" keyed [u8 dbtag][group]
 * keeps each group's number of records, so a cap per group costs one
 * read; under the tag STORE_GAUGE_TAG the same db keeps named gauges.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "store_lmdb.h"
#include "store_rec.h"

#define STORE_GAUGE_TAG	0xff	/* counts keyed [tag][name]: gauges */

/* --- counts of groups --- */

int
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
int
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
