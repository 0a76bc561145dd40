/*
 * store*.c: the record codec, and the LMDB store in a mkdtemp(3)
 * directory: get/put/del/add, expiry, the sweeper, iteration, stats,
 * read-only opens and several processes on one environment.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_limit.h"
#include "shared/store_stat.h"
#include "shared/store_sweep.h"
#include "shared/store_codec.h"
/* LMDB only to write an index as an older vmcpd left it (test_sweep_stale) */
#include "shared/store_lmdb.h"

#define MAP_SIZE	(8ULL * 1024 * 1024)
#define NOW		1000000ULL

struct fixture {
	char		 f_dir[64];
	struct store	*f_st;
	pid_t		 f_pid;		/* a child still to reap */
	int		 f_p2c[2];	/* parent to child */
	int		 f_c2p[2];	/* child to parent */
};

static void
fds_close(int *fds)
{
	if (fds[0] != -1)
		(void)close(fds[0]);
	if (fds[1] != -1)
		(void)close(fds[1]);
	fds[0] = fds[1] = -1;
}

static int
setup_dir(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	f->f_p2c[0] = f->f_p2c[1] = f->f_c2p[0] = f->f_c2p[1] = -1;
	if (unit_store_dir_make("test_store", f->f_dir, sizeof(f->f_dir)) ==
	    -1) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int
setup_store(void **state)
{
	struct fixture *f;

	if (setup_dir(state) == -1)
		return -1;
	f = *state;
	if (store_open(&f->f_st, f->f_dir, MAP_SIZE, 64, 0) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	if (f == NULL)
		return 0;
	/* a failed assertion in the parent must not leave a child behind */
	if (f->f_pid > 0) {
		(void)kill(f->f_pid, SIGKILL);
		(void)waitpid(f->f_pid, NULL, 0);
	}
	fds_close(f->f_p2c);
	fds_close(f->f_c2p);
	store_close(f->f_st);
	unit_store_dir_remove(f->f_dir);
	free(f);
	return 0;
}

static void
put_str(struct store *st, enum store_db db, const char *key,
    const char *val, uint64_t exp)
{
	assert_int_equal(store_put(st, db, key, strlen(key), val, strlen(val),
	    exp, NOW), 0);
}

/* 0 and the value in buf, or STORE_NOTFOUND */
static int
get_str(struct store *st, enum store_db db, const char *key, uint64_t now,
    char *buf, size_t buflen)
{
	struct store_rec	 rec;
	int			 rc;

	rc = store_get(st, db, key, strlen(key), now, &rec);
	if (rc == 0) {
		assert_non_null(rec.sr_data);
		assert_int_equal(rec.sr_data[rec.sr_len], '\0');
		assert_true(rec.sr_len < buflen);
		memcpy(buf, rec.sr_data, rec.sr_len + 1);
	} else
		assert_null(rec.sr_data);
	store_rec_clear(&rec);
	return rc;
}

/* --- codec --- */

static void
test_codec_roundtrip(void **state)
{
	uint8_t			 buf[128];
	const char		*payload = "{\"a\":1}";
	struct store_rec	 rec;
	int			 n;

	(void)state;
	n = store_rec_encode(buf, sizeof(buf), 7, 0x1234,
	    0x0102030405060708ULL, 0x1112131415161718ULL, payload,
	    strlen(payload));
	assert_int_equal(n, STORE_HDR_LEN + (int)strlen(payload));
	/* the layout is fixed: version, type, be16 flags, zero, be64s */
	assert_int_equal(buf[0], STORE_REC_VERSION);
	assert_int_equal(buf[1], 7);
	assert_int_equal(buf[2], 0x12);
	assert_int_equal(buf[3], 0x34);
	assert_int_equal(buf[4] | buf[5] | buf[6] | buf[7], 0);
	assert_int_equal(buf[8], 0x01);
	assert_int_equal(buf[15], 0x08);
	assert_int_equal(buf[16], 0x11);
	assert_int_equal(buf[23], 0x18);
	assert_memory_equal(buf + STORE_HDR_LEN, payload, strlen(payload));

	assert_int_equal(store_rec_decode(buf, (size_t)n, &rec), 0);
	assert_int_equal(rec.sr_type, 7);
	assert_int_equal(rec.sr_flags, 0x1234);
	assert_true(rec.sr_expires_ms == 0x0102030405060708ULL);
	assert_true(rec.sr_updated_ms == 0x1112131415161718ULL);
	assert_int_equal(rec.sr_len, strlen(payload));
	assert_string_equal(rec.sr_data, payload);
	store_rec_clear(&rec);
	assert_null(rec.sr_data);
	assert_int_equal(rec.sr_len, 0);

	/* an empty payload still decodes to an empty string */
	n = store_rec_encode(buf, STORE_HDR_LEN, 1, 0, 0, 5, NULL, 0);
	assert_int_equal(n, STORE_HDR_LEN);
	assert_int_equal(store_rec_decode(buf, (size_t)n, &rec), 0);
	assert_non_null(rec.sr_data);
	assert_string_equal(rec.sr_data, "");
	assert_int_equal(rec.sr_len, 0);
	store_rec_clear(&rec);
}

static void
test_codec_reject(void **state)
{
	uint8_t			 buf[64];
	struct store_rec	 rec;
	size_t			 i;
	int			 n;

	(void)state;
	/* encode: buffer one byte short, or data missing */
	assert_int_equal(store_rec_encode(buf, STORE_HDR_LEN + 2, 1, 0, 0, 0,
	    "abc", 3), -1);
	assert_int_equal(store_rec_encode(buf, sizeof(buf), 1, 0, 0, 0, NULL,
	    3), -1);
	assert_int_equal(store_rec_encode(NULL, sizeof(buf), 1, 0, 0, 0, "a",
	    1), -1);

	n = store_rec_encode(buf, sizeof(buf), 1, 0, 0, 0, "abc", 3);
	assert_int_equal(n, STORE_HDR_LEN + 3);
	/* any buffer shorter than the header */
	for (i = 0; i < STORE_HDR_LEN; i++) {
		memset(&rec, 0xa5, sizeof(rec));
		assert_int_equal(store_rec_decode(buf, i, &rec), -1);
		assert_null(rec.sr_data);
	}
	assert_int_equal(store_rec_decode(NULL, 30, &rec), -1);
	/* wrong version */
	buf[0] = STORE_REC_VERSION + 1;
	assert_int_equal(store_rec_decode(buf, (size_t)n, &rec), -1);
	buf[0] = 0;
	assert_int_equal(store_rec_decode(buf, (size_t)n, &rec), -1);
	buf[0] = STORE_REC_VERSION;
	/* reserved bytes must be zero */
	buf[6] = 1;
	assert_int_equal(store_rec_decode(buf, (size_t)n, &rec), -1);
	buf[6] = 0;
	/* and the fixed buffer decodes again */
	assert_int_equal(store_rec_decode(buf, (size_t)n, &rec), 0);
	assert_string_equal(rec.sr_data, "abc");
	store_rec_clear(&rec);
	/* a length that cuts the payload yields the shorter payload only */
	assert_int_equal(store_rec_decode(buf, (size_t)n - 1, &rec), 0);
	assert_int_equal(rec.sr_len, 2);
	assert_string_equal(rec.sr_data, "ab");
	store_rec_clear(&rec);
}

static void
test_expired(void **state)
{
	(void)state;
	assert_false(store_rec_expired(0, NOW));
	assert_false(store_rec_expired(NOW + 1, NOW));
	assert_true(store_rec_expired(NOW, NOW));
	assert_true(store_rec_expired(NOW - 1, NOW));
	assert_false(store_rec_expired(0, UINT64_MAX));
	assert_true(store_now_ms() > 1600000000000ULL);
}

static void
test_db_names(void **state)
{
	enum store_db	 db;
	unsigned int	 i;

	(void)state;
	assert_string_equal(store_db_name(STORE_SESSIONS), "sessions");
	assert_string_equal(store_db_name(STORE_BACKENDS), "backends");
	assert_null(store_db_name(STORE_NDB));
	for (i = 0; i < STORE_NDB; i++) {
		assert_int_equal(store_db_lookup(store_db_name(i), &db), 0);
		assert_int_equal(db, i);
	}
	assert_int_equal(store_db_lookup("expiry", &db), -1);
	assert_int_equal(store_db_lookup("", &db), -1);
	assert_int_equal(store_db_lookup(NULL, &db), -1);
}

/* --- records --- */

/* store_read(): the payload in place, the callback's answer passed on */
struct read_seen {
	char	rs_data[64];
	size_t	rs_len;
	int	rs_calls;
};

static int
read_cb(void *arg, const void *data, size_t len)
{
	struct read_seen *rs = arg;

	rs->rs_calls++;
	rs->rs_len = len;
	if (len < sizeof(rs->rs_data))
		memcpy(rs->rs_data, data, len);
	return 7;
}

static void
test_read_in_place(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct read_seen	 rs;

	memset(&rs, 0, sizeof(rs));
	assert_int_equal(store_read(st, STORE_VIEWS, "v", 1, NOW, read_cb,
	    &rs), STORE_NOTFOUND);
	assert_int_equal(rs.rs_calls, 0);
	put_str(st, STORE_VIEWS, "v", "layout bytes", NOW + 10);
	assert_int_equal(store_read(st, STORE_VIEWS, "v", 1, NOW, read_cb,
	    &rs), 7);
	assert_int_equal(rs.rs_calls, 1);
	assert_int_equal(rs.rs_len, 12);
	assert_memory_equal(rs.rs_data, "layout bytes", 12);
	/* expired: not handed to the callback */
	assert_int_equal(store_read(st, STORE_VIEWS, "v", 1, NOW + 10,
	    read_cb, &rs), STORE_NOTFOUND);
	assert_int_equal(rs.rs_calls, 1);
	assert_int_equal(store_read(st, STORE_VIEWS, "v", 1, NOW, NULL, &rs),
	    -1);
	assert_int_equal(store_read(st, STORE_VIEWS, "", 0, NOW, read_cb,
	    &rs), -1);
}

static void
test_put_get_del(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct store_rec	 rec;
	char			 buf[600], key[STORE_KEY_MAX + 2];

	assert_int_equal(get_str(st, STORE_SESSIONS, "s1", NOW, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	put_str(st, STORE_SESSIONS, "s1", "{\"v\":1}", 0);
	assert_int_equal(get_str(st, STORE_SESSIONS, "s1", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "{\"v\":1}");

	/* the stamps come back */
	assert_int_equal(store_get(st, STORE_SESSIONS, "s1", 2, NOW, &rec), 0);
	assert_true(rec.sr_updated_ms == NOW);
	assert_true(rec.sr_expires_ms == 0);
	assert_int_equal(rec.sr_type, STORE_SESSIONS);
	store_rec_clear(&rec);

	/* a db is its own namespace */
	assert_int_equal(get_str(st, STORE_HANDLES, "s1", NOW, buf,
	    sizeof(buf)), STORE_NOTFOUND);

	/* overwrite */
	put_str(st, STORE_SESSIONS, "s1", "{\"v\":2}", 0);
	assert_int_equal(get_str(st, STORE_SESSIONS, "s1", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "{\"v\":2}");

	/* delete, then a second delete finds nothing */
	assert_int_equal(store_del(st, STORE_SESSIONS, "s1", 2), 0);
	assert_int_equal(get_str(st, STORE_SESSIONS, "s1", NOW, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(store_del(st, STORE_SESSIONS, "s1", 2),
	    STORE_NOTFOUND);

	/* an expired record is a miss; before its time it is a hit */
	put_str(st, STORE_TOKENS, "t", "x", NOW + 10);
	assert_int_equal(get_str(st, STORE_TOKENS, "t", NOW + 9, buf,
	    sizeof(buf)), 0);
	assert_int_equal(get_str(st, STORE_TOKENS, "t", NOW + 10, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(get_str(st, STORE_TOKENS, "t", NOW + 99, buf,
	    sizeof(buf)), STORE_NOTFOUND);

	/* key length limits */
	memset(key, 'k', sizeof(key));
	assert_int_equal(store_put(st, STORE_VIEWS, key, STORE_KEY_MAX, "v",
	    1, 0, NOW), 0);
	assert_int_equal(store_get(st, STORE_VIEWS, key, STORE_KEY_MAX, NOW,
	    &rec), 0);
	assert_string_equal(rec.sr_data, "v");
	store_rec_clear(&rec);
	errno = 0;
	assert_int_equal(store_put(st, STORE_VIEWS, key, STORE_KEY_MAX + 1,
	    "v", 1, 0, NOW), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(store_put(st, STORE_VIEWS, key, 0, "v", 1, 0, NOW),
	    -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(store_get(st, STORE_VIEWS, key, STORE_KEY_MAX + 1,
	    NOW, &rec), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(store_del(st, STORE_VIEWS, key, 0), -1);
	assert_int_equal(store_put(st, STORE_NDB, "k", 1, "v", 1, 0, NOW), -1);

	/* binary keys and an empty payload */
	assert_int_equal(store_put(st, STORE_EVENTS, "\0\1\2", 3, NULL, 0, 0,
	    NOW), 0);
	assert_int_equal(store_get(st, STORE_EVENTS, "\0\1\2", 3, NOW, &rec),
	    0);
	assert_int_equal(rec.sr_len, 0);
	assert_string_equal(rec.sr_data, "");
	store_rec_clear(&rec);
	assert_int_equal(store_get(st, STORE_EVENTS, "\0\1", 2, NOW, &rec),
	    STORE_NOTFOUND);
}

static void
test_add(void **state)
{
	struct fixture	*f = *state;
	struct store	*st = f->f_st;
	char		 buf[64];

	assert_int_equal(store_add(st, STORE_HANDLES, "h", 1, "one", 3,
	    NOW + 100, NOW), 0);
	assert_int_equal(store_add(st, STORE_HANDLES, "h", 1, "two", 3,
	    NOW + 100, NOW), STORE_EXISTS);
	assert_int_equal(get_str(st, STORE_HANDLES, "h", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "one");
	/* once the first has expired its id can be taken again */
	assert_int_equal(store_add(st, STORE_HANDLES, "h", 1, "three", 5, 0,
	    NOW + 100), 0);
	assert_int_equal(get_str(st, STORE_HANDLES, "h", NOW + 1000, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "three");
	/* a record without expiry stays taken */
	assert_int_equal(store_add(st, STORE_HANDLES, "h", 1, "four", 4, 0,
	    UINT64_MAX), STORE_EXISTS);
}

static size_t
expiry_entries(struct store *st)
{
	struct store_envstat es;

	assert_int_equal(store_envstat(st, &es), 0);
	return es.se_expiry_entries;
}

static void
test_sweep(void **state)
{
	struct fixture	*f = *state;
	struct store	*st = f->f_st;
	char		 buf[64];

	put_str(st, STORE_SESSIONS, "a", "A", NOW + 100);
	put_str(st, STORE_SESSIONS, "b", "B", NOW + 200);
	put_str(st, STORE_SESSIONS, "c", "C", 0);
	put_str(st, STORE_HEALTH, "e", "E", NOW + 100);
	/* extended: the rewrite drops its first index entry */
	put_str(st, STORE_SESSIONS, "d", "D1", NOW + 100);
	put_str(st, STORE_SESSIONS, "d", "D2", NOW + 1000);
	assert_int_equal(expiry_entries(st), 4);

	/* nothing due yet */
	assert_int_equal(store_sweep(st, NOW + 99, 100, NULL), 0);
	assert_int_equal(expiry_entries(st), 4);

	assert_int_equal(store_sweep(st, NOW + 150, 100, NULL), 2);
	/* gone for good: even a reader in the past misses them */
	assert_int_equal(get_str(st, STORE_SESSIONS, "a", 0, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(get_str(st, STORE_HEALTH, "e", 0, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	/* the extended record survives */
	assert_int_equal(get_str(st, STORE_SESSIONS, "d", NOW + 150, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "D2");
	assert_int_equal(get_str(st, STORE_SESSIONS, "b", NOW + 150, buf,
	    sizeof(buf)), 0);
	/* a and e are out of the index */
	assert_int_equal(expiry_entries(st), 2);

	assert_int_equal(store_sweep(st, NOW + 5000, 100, NULL), 2);
	assert_int_equal(get_str(st, STORE_SESSIONS, "d", 0, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(get_str(st, STORE_SESSIONS, "b", 0, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(get_str(st, STORE_SESSIONS, "c", UINT64_MAX, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "C");
	assert_int_equal(expiry_entries(st), 0);
	assert_int_equal(store_sweep(st, UINT64_MAX, 100, NULL), 0);
	assert_int_equal(store_sweep(st, UINT64_MAX, 0, NULL), 0);

	/* a delete takes its index entry along */
	put_str(st, STORE_SESSIONS, "f", "F", NOW + 10);
	assert_int_equal(expiry_entries(st), 1);
	assert_int_equal(store_del(st, STORE_SESSIONS, "f", 1), 0);
	assert_int_equal(expiry_entries(st), 0);
}

static void
test_sweep_bound(void **state)
{
	struct fixture	*f = *state;
	struct store	*st = f->f_st;
	char		 key[16];
	int		 i;

	for (i = 0; i < 10; i++) {
		(void)snprintf(key, sizeof(key), "k%02d", i);
		put_str(st, i % 2 ? STORE_PENDING : STORE_LIMITS, key, "v",
		    NOW + 100 + i);
	}
	put_str(st, STORE_PENDING, "live", "v", NOW + 10000);
	assert_int_equal(store_sweep(st, NOW + 500, 3, NULL), 3);
	assert_int_equal(expiry_entries(st), 8);
	assert_int_equal(store_sweep(st, NOW + 500, 3, NULL), 3);
	assert_int_equal(store_sweep(st, NOW + 500, 3, NULL), 3);
	assert_int_equal(store_sweep(st, NOW + 500, 3, NULL), 1);
	assert_int_equal(store_sweep(st, NOW + 500, 3, NULL), 0);
	assert_int_equal(expiry_entries(st), 1);
}

struct iter_state {
	int	 is_count;
	int	 is_stop_after;
	int	 is_expired_seen;
	char	 is_last[32];
};

static int
iter_cb(void *arg, const void *key, size_t klen, const struct store_rec *rec)
{
	struct iter_state	*is = arg;
	char			 k[32];

	assert_true(klen < sizeof(k));
	memcpy(k, key, klen);
	k[klen] = '\0';
	/* keys come in order, each with its own value */
	assert_true(strcmp(is->is_last, k) < 0);
	(void)snprintf(is->is_last, sizeof(is->is_last), "%s", k);
	assert_string_equal(rec->sr_data, k);
	if (store_rec_expired(rec->sr_expires_ms, NOW))
		is->is_expired_seen++;
	is->is_count++;
	return is->is_stop_after != 0 && is->is_count >= is->is_stop_after;
}

static void
test_iter(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct iter_state	 is;
	char			 key[16];
	int			 i;

	/* more than one copy-out batch, every third one expired */
	for (i = 0; i < 700; i++) {
		(void)snprintf(key, sizeof(key), "key%04d", i);
		put_str(st, STORE_VIEWS, key, key, i % 3 == 0 ? NOW - 1 : 0);
	}
	put_str(st, STORE_VIEWS, "zzz", "zzz", NOW);

	memset(&is, 0, sizeof(is));
	assert_int_equal(store_iter(st, STORE_VIEWS, NOW, 0, iter_cb, &is), 0);
	assert_int_equal(is.is_count, 700 - 234);
	assert_int_equal(is.is_expired_seen, 0);

	memset(&is, 0, sizeof(is));
	assert_int_equal(store_iter(st, STORE_VIEWS, NOW, 1, iter_cb, &is), 0);
	assert_int_equal(is.is_count, 701);
	assert_int_equal(is.is_expired_seen, 235);
	assert_string_equal(is.is_last, "zzz");

	memset(&is, 0, sizeof(is));
	is.is_stop_after = 5;
	assert_int_equal(store_iter(st, STORE_VIEWS, NOW, 1, iter_cb, &is), 0);
	assert_int_equal(is.is_count, 5);

	memset(&is, 0, sizeof(is));
	assert_int_equal(store_iter(st, STORE_ERAS, NOW, 1, iter_cb, &is), 0);
	assert_int_equal(is.is_count, 0);
	assert_int_equal(store_iter(st, STORE_NDB, NOW, 1, iter_cb, &is), -1);
}

static void
test_envstat(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct store_envstat	 es;
	char			 buf[8];
	unsigned int		 i;

	put_str(st, STORE_SESSIONS, "a", "1", 0);
	put_str(st, STORE_SESSIONS, "b", "1", NOW + 1);
	put_str(st, STORE_SESSIONS, "c", "1", 0);
	put_str(st, STORE_BACKENDS, "x", "1", NOW + 1);
	assert_int_equal(get_str(st, STORE_SESSIONS, "a", NOW, buf,
	    sizeof(buf)), 0);

	assert_int_equal(store_envstat(st, &es), 0);
	for (i = 0; i < STORE_NDB; i++)
		assert_string_equal(es.se_db[i].sd_name, store_db_name(i));
	assert_int_equal(es.se_db[STORE_SESSIONS].sd_entries, 3);
	assert_int_equal(es.se_db[STORE_SESSIONS].sd_pages, 1);
	assert_int_equal(es.se_db[STORE_BACKENDS].sd_entries, 1);
	assert_int_equal(es.se_db[STORE_HANDLES].sd_entries, 0);
	assert_int_equal(es.se_db[STORE_HANDLES].sd_pages, 0);
	assert_int_equal(es.se_expiry_entries, 2);
	assert_true(es.se_map_size == MAP_SIZE);
	assert_true(es.se_page_size >= 512);
	assert_true(es.se_used_bytes >= 4ULL * es.se_page_size);
	assert_true(es.se_used_bytes < es.se_map_size);
	assert_int_equal(es.se_max_readers, 64);
	/* our reusable read txn owns one slot */
	assert_int_equal(es.se_num_readers, 1);

	assert_int_equal(store_sync(st), 0);
	assert_int_equal(store_reader_check(st, NULL), 0);
}

static void
test_rdonly(void **state)
{
	struct fixture		*f = *state;
	struct store		*ro = NULL;
	struct store_envstat	 es;
	char			 buf[32];

	assert_int_equal(store_open(&f->f_st, f->f_dir, MAP_SIZE, 64, 0), 0);
	put_str(f->f_st, STORE_EVENTS, "ev", "{\"n\":1}", 0);
	put_str(f->f_st, STORE_EVENTS, "old", "x", NOW - 1);
	store_close(f->f_st);
	f->f_st = NULL;

	/* map size 0: adopt the file's */
	assert_int_equal(store_open(&ro, f->f_dir, 0, 0, STORE_RDONLY), 0);
	assert_int_equal(get_str(ro, STORE_EVENTS, "ev", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "{\"n\":1}");
	assert_int_equal(get_str(ro, STORE_EVENTS, "old", NOW, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(store_envstat(ro, &es), 0);
	assert_int_equal(es.se_db[STORE_EVENTS].sd_entries, 2);
	assert_true(es.se_map_size == MAP_SIZE);
	/* no writes through a read-only env */
	errno = 0;
	assert_int_equal(store_put(ro, STORE_EVENTS, "x", 1, "y", 1, 0, NOW),
	    -1);
	assert_int_equal(errno, EROFS);
	assert_int_equal(store_add(ro, STORE_EVENTS, "x", 1, "y", 1, 0, NOW),
	    -1);
	assert_int_equal(store_del(ro, STORE_EVENTS, "ev", 2), -1);
	assert_int_equal(store_sweep(ro, UINT64_MAX, 10, NULL), -1);
	assert_int_equal(store_sync(ro), 0);
	store_close(ro);

	/* no environment, no directory: no open, and nothing created */
	unit_store_dir_remove(f->f_dir);
	ro = NULL;
	assert_int_equal(store_open(&ro, f->f_dir, 0, 0, STORE_RDONLY), -1);
	assert_null(ro);
	assert_int_equal(access(f->f_dir, F_OK), -1);
	assert_int_equal(mkdir(f->f_dir, 0700), 0);
	assert_int_equal(store_open(&ro, f->f_dir, 0, 0, STORE_RDONLY), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(ro);
}

/* --- processes --- */

/* fork with two pipes; in the child each side keeps only its ends */
static pid_t
spawn(struct fixture *f)
{
	pid_t pid;

	assert_int_equal(pipe(f->f_p2c), 0);
	assert_int_equal(pipe(f->f_c2p), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		(void)close(f->f_p2c[1]);
		(void)close(f->f_c2p[0]);
		f->f_p2c[1] = f->f_c2p[0] = -1;
		return 0;
	}
	(void)close(f->f_p2c[0]);
	(void)close(f->f_c2p[1]);
	f->f_p2c[0] = f->f_c2p[1] = -1;
	f->f_pid = pid;
	return pid;
}

static int
wait_child(struct fixture *f)
{
	int status;

	while (waitpid(f->f_pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	f->f_pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void
pipe_wait(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(99);
}

static void
pipe_poke(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(98);
}

/*
 * The child opens the env after fork (the rule), writes; the parent,
 * which had no env open when it forked, opens its own and reads while
 * the child is still attached; then the other way round.  The store's
 * generation moves with every commit, from either process.
 */
static void
test_fork(void **state)
{
	struct fixture		*f = *state;
	struct store		*st;
	struct store_rec	 rec;
	char			 buf[32];
	uint64_t		 gen;
	int			 rc;

	if (spawn(f) == 0) {
		if (store_open(&st, f->f_dir, MAP_SIZE, 64, 0) == -1)
			_exit(1);
		if (store_put(st, STORE_SESSIONS, "child", 5, "c", 1, 0,
		    NOW) != 0)
			_exit(2);
		pipe_poke(f->f_c2p[1]);
		pipe_wait(f->f_p2c[0]);
		rc = store_get(st, STORE_SESSIONS, "parent", 6, NOW, &rec);
		if (rc != 0 || strcmp(rec.sr_data, "p") != 0)
			_exit(3);
		store_rec_clear(&rec);
		/* a commit the parent sees */
		if (store_put(st, STORE_SESSIONS, "child", 5, "d", 1, 0,
		    NOW) != 0)
			_exit(4);
		store_close(st);
		_exit(0);
	}
	assert_int_equal(read(f->f_c2p[0], buf, 1), 1);
	assert_int_equal(store_open(&f->f_st, f->f_dir, MAP_SIZE, 64, 0), 0);
	assert_int_equal(get_str(f->f_st, STORE_SESSIONS, "child", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "c");
	/* a read leaves the generation; a commit, ours or another's, moves it */
	gen = store_generation(f->f_st);
	assert_true(gen != 0);
	assert_int_equal(get_str(f->f_st, STORE_SESSIONS, "child", NOW, buf,
	    sizeof(buf)), 0);
	assert_true(store_generation(f->f_st) == gen);
	put_str(f->f_st, STORE_SESSIONS, "parent", "p", 0);
	assert_true(store_generation(f->f_st) > gen);
	gen = store_generation(f->f_st);
	assert_int_equal(write(f->f_p2c[1], "x", 1), 1);
	assert_int_equal(wait_child(f), 0);
	assert_true(store_generation(f->f_st) > gen);
}

/* child side of test_map_resized: grow the map to size with n records */
static void
grow_map(const char *dir, size_t size, int from, int to)
{
	struct store	*st;
	char		 key[16], big[4000];
	int		 i;

	memset(big, 'b', sizeof(big));
	if (store_open(&st, dir, size, 64, 0) == -1)
		_exit(1);
	for (i = from; i < to; i++) {
		(void)snprintf(key, sizeof(key), "big%03d", i);
		if (store_put(st, STORE_VIEWS, key, strlen(key), big,
		    sizeof(big), 0, NOW) != 0)
			_exit(2);
	}
	store_close(st);
}

/*
 * A child grows the map beyond the parent's, twice: the parent's next
 * write, then its next read, adopt the new size (MDB_MAP_RESIZED)
 * instead of failing.
 */
static void
test_map_resized(void **state)
{
	struct fixture		*f = *state;
	struct store_envstat	 es;
	char			 buf[16];

	if (spawn(f) == 0) {
		pipe_wait(f->f_p2c[0]);
		grow_map(f->f_dir, 2 * 1024 * 1024, 0, 100);
		pipe_poke(f->f_c2p[1]);
		pipe_wait(f->f_p2c[0]);
		grow_map(f->f_dir, 4 * 1024 * 1024, 100, 700);
		pipe_poke(f->f_c2p[1]);
		_exit(0);
	}
	assert_int_equal(store_open(&f->f_st, f->f_dir, 256 * 1024, 64, 0), 0);
	put_str(f->f_st, STORE_VIEWS, "small", "s", 0);
	assert_int_equal(get_str(f->f_st, STORE_VIEWS, "small", NOW, buf,
	    sizeof(buf)), 0);

	/* a write first */
	assert_int_equal(write(f->f_p2c[1], "x", 1), 1);
	assert_int_equal(read(f->f_c2p[0], buf, 1), 1);
	put_str(f->f_st, STORE_VIEWS, "after1", "a", 0);
	assert_int_equal(store_envstat(f->f_st, &es), 0);
	assert_true(es.se_map_size == 2 * 1024 * 1024);
	assert_int_equal(es.se_db[STORE_VIEWS].sd_entries, 102);

	/* then a read first */
	assert_int_equal(write(f->f_p2c[1], "x", 1), 1);
	assert_int_equal(read(f->f_c2p[0], buf, 1), 1);
	assert_int_equal(wait_child(f), 0);
	assert_int_equal(get_str(f->f_st, STORE_VIEWS, "after1", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "a");
	assert_int_equal(store_envstat(f->f_st, &es), 0);
	assert_true(es.se_map_size == 4 * 1024 * 1024);
	assert_true(es.se_used_bytes > 2 * 1024 * 1024);
	assert_int_equal(es.se_db[STORE_VIEWS].sd_entries, 702);
	put_str(f->f_st, STORE_VIEWS, "after2", "a", 0);
}

/*
 * A child opens the env with a larger map and writes a little: the file
 * records the larger size, but our data never outgrew our map, so only
 * MDB_MAP_FULL tells us.  The put adopts the size and goes through.
 */
static void
test_map_grown(void **state)
{
	struct fixture		*f = *state;
	struct store		*st;
	struct store_envstat	 es;
	char			 key[16], big[2000], buf[4];
	int			 i;

	memset(big, 'g', sizeof(big));
	if (spawn(f) == 0) {
		pipe_wait(f->f_p2c[0]);
		if (store_open(&st, f->f_dir, 4 * 1024 * 1024, 64, 0) == -1 ||
		    store_put(st, STORE_ERAS, "e", 1, "1", 1, 0, NOW) != 0)
			_exit(1);
		store_close(st);
		pipe_poke(f->f_c2p[1]);
		_exit(0);
	}
	assert_int_equal(store_open(&f->f_st, f->f_dir, 64 * 1024, 64, 0), 0);
	assert_int_equal(write(f->f_p2c[1], "x", 1), 1);
	assert_int_equal(read(f->f_c2p[0], buf, 1), 1);
	assert_int_equal(wait_child(f), 0);
	for (i = 0; i < 100; i++) {
		(void)snprintf(key, sizeof(key), "k%04d", i);
		assert_int_equal(store_put(f->f_st, STORE_VIEWS, key,
		    strlen(key), big, sizeof(big), 0, NOW), 0);
	}
	assert_int_equal(store_envstat(f->f_st, &es), 0);
	assert_true(es.se_map_size == 4 * 1024 * 1024);
	assert_int_equal(es.se_db[STORE_VIEWS].sd_entries, 100);
	assert_int_equal(es.se_db[STORE_ERAS].sd_entries, 1);
}

static void
test_map_full(void **state)
{
	struct fixture		*f = *state;
	char			 key[16], big[2000], buf[16];
	int			 i, rc = 0, saved = 0;

	assert_int_equal(store_open(&f->f_st, f->f_dir, 64 * 1024, 64, 0), 0);
	memset(big, 'x', sizeof(big));
	put_str(f->f_st, STORE_SESSIONS, "first", "1", 0);
	for (i = 0; i < 1000; i++) {
		(void)snprintf(key, sizeof(key), "k%04d", i);
		rc = store_put(f->f_st, STORE_VIEWS, key, strlen(key), big,
		    sizeof(big), NOW + 1, NOW);
		if (rc != 0) {
			saved = errno;
			break;
		}
	}
	assert_int_equal(rc, -1);
	assert_int_equal(saved, ENOSPC);
	assert_true(i > 0 && i < 1000);
	/* the env is still usable: what was stored reads back */
	assert_int_equal(get_str(f->f_st, STORE_SESSIONS, "first", NOW, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "1");
	(void)snprintf(key, sizeof(key), "k%04d", i);
	assert_int_equal(store_get(f->f_st, STORE_VIEWS, key, strlen(key), NOW,
	    &(struct store_rec){0}), STORE_NOTFOUND);
	/* and a sweep makes room again */
	assert_int_equal(store_sweep(f->f_st, NOW + 1, 1000, NULL), i);
	assert_int_equal(store_put(f->f_st, STORE_VIEWS, "again", 5, big,
	    sizeof(big), 0, NOW), 0);
}

/*
 * An index as an older vmcpd left it, written with LMDB itself: each
 * rewrite of a record added an entry and left the old one behind.
 * Records r0..: even ones rewritten (a stale entry under an earlier
 * stamp), every fourth still live after a rewrite; plus entries of
 * records gone.  One sweep pass clears every due entry.
 */
#define STALE_N		5000

static void
stale_index_key(uint8_t *buf, size_t *len, uint64_t exp, const char *key)
{
	int i;

	buf[0] = STORE_SESSIONS;
	for (i = 0; i < 8; i++)
		buf[1 + i] = (uint8_t)(exp >> (56 - 8 * i));
	memcpy(buf + 9, key, strlen(key));
	*len = 9 + strlen(key);
}

static void
stale_write(const char *dir, size_t *due, size_t *expired, size_t *live)
{
	MDB_env		*env;
	MDB_txn		*txn;
	MDB_dbi		 sdb, xdb;
	MDB_val		 k, v;
	uint8_t		 ibuf[64], rbuf[64];
	char		 key[16];
	uint64_t	 exp;
	size_t		 klen;
	int		 i, n;

	*due = *expired = *live = 0;
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
	assert_int_equal(mdb_env_set_mapsize(env, MAP_SIZE), 0);
	assert_int_equal(mdb_env_open(env, dir, MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "sessions", MDB_CREATE, &sdb), 0);
	assert_int_equal(mdb_dbi_open(txn, "expiry", MDB_CREATE, &xdb), 0);
	for (i = 0; i < STALE_N; i++) {
		(void)snprintf(key, sizeof(key), "r%05d", i);
		/* live if refreshed past the sweep's now */
		exp = i % 4 == 0 ? NOW + 100000 : NOW + 10 + i % 100;
		n = store_rec_encode(rbuf, sizeof(rbuf), STORE_SESSIONS, 0,
		    exp, NOW, "{}", 2);
		assert_true(n > 0);
		k.mv_size = strlen(key);
		k.mv_data = key;
		v.mv_size = (size_t)n;
		v.mv_data = rbuf;
		assert_int_equal(mdb_put(txn, sdb, &k, &v, 0), 0);
		stale_index_key(ibuf, &klen, exp, key);
		k.mv_size = klen;
		k.mv_data = ibuf;
		v.mv_size = 0;
		v.mv_data = NULL;
		assert_int_equal(mdb_put(txn, xdb, &k, &v, 0), 0);
		if (exp > NOW + 1000)
			(*live)++;
		else {
			(*expired)++;
			(*due)++;
		}
		if (i % 2 == 0) {
			/* the entry of its first stamp, before a rewrite */
			stale_index_key(ibuf, &klen, NOW + 5, key);
			k.mv_size = klen;
			assert_int_equal(mdb_put(txn, xdb, &k, &v, 0), 0);
			(*due)++;
		}
		if (i % 10 == 0) {
			/* and a record deleted without its entry */
			(void)snprintf(key, sizeof(key), "gone%05d", i);
			stale_index_key(ibuf, &klen, NOW + 7, key);
			k.mv_size = klen;
			assert_int_equal(mdb_put(txn, xdb, &k, &v, 0), 0);
			(*due)++;
		}
	}
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

static void
test_sweep_stale(void **state)
{
	struct fixture		*f = *state;
	struct store_sweep	 ss;
	struct store_envstat	 es;
	size_t			 due, expired, live;
	char			 buf[16];

	stale_write(f->f_dir, &due, &expired, &live);
	assert_int_equal(store_open(&f->f_st, f->f_dir, MAP_SIZE, 64, 0), 0);
	assert_int_equal(expiry_entries(f->f_st), due + live);
	assert_int_equal(due - expired, STALE_N / 2 + STALE_N / 10);

	/* one pass, however many of the due entries are stale */
	assert_int_equal(store_sweep(f->f_st, NOW + 1000, 3 * STALE_N, &ss),
	    (int)expired);
	assert_int_equal(ss.ss_deleted, expired);
	/* an entry met takes its record's own entry along */
	assert_true(ss.ss_entries >= due - expired && ss.ss_entries <= due);
	assert_int_equal(ss.ss_more, 0);
	assert_int_equal(store_envstat(f->f_st, &es), 0);
	assert_int_equal(es.se_expiry_entries, live);
	assert_int_equal(es.se_db[STORE_SESSIONS].sd_entries, live);
	assert_int_equal(get_str(f->f_st, STORE_SESSIONS, "r00000", NOW + 1000,
	    buf, sizeof(buf)), 0);
	assert_int_equal(get_str(f->f_st, STORE_SESSIONS, "r00001", 0,
	    buf, sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(store_sweep(f->f_st, NOW + 1000, 10, &ss), 0);
	assert_int_equal(ss.ss_entries, 0);

	/* rewrites through the store leave one entry per record */
	put_str(f->f_st, STORE_SESSIONS, "r00000", "x", NOW + 200000);
	put_str(f->f_st, STORE_SESSIONS, "r00000", "y", NOW + 300000);
	assert_int_equal(expiry_entries(f->f_st), live);
	assert_int_equal(store_del(f->f_st, STORE_SESSIONS, "r00000", 6), 0);
	assert_int_equal(expiry_entries(f->f_st), live - 1);
}

/*
 * A map filled to its last page by an older vmcpd (no headroom kept):
 * a batch too large to commit is retried smaller, down to one entry;
 * when even that cannot commit the map grows by its headroom (the other
 * processes follow, test_map_resized), the expired records go, and new
 * ones fit again.
 */
static void
test_map_full_old(void **state)
{
	struct fixture		*f = *state;
	struct store_envstat	 es;
	MDB_env			*env;
	MDB_txn			*txn;
	MDB_dbi			 sdb, xdb;
	MDB_val			 k, v;
	uint8_t			 ibuf[64], rbuf[700], pay[600];
	char			 key[48], buf[8];
	struct store_sweep	 ss;
	size_t			 klen, len;
	int			 i, n, stored = 0, swept = 0, rc = 0;

	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
	assert_int_equal(mdb_env_set_mapsize(env, 1024 * 1024), 0);
	assert_int_equal(mdb_env_open(env, f->f_dir, MDB_NOTLS, 0600), 0);
	memset(pay, 'o', sizeof(pay));
	/* one record a txn, the smaller the fuller, until nothing fits */
	for (len = 600; len >= 1; len /= 4) {
		for (i = 0; i < 100000; i++) {
			assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
			assert_int_equal(mdb_dbi_open(txn, "sessions",
			    MDB_CREATE, &sdb), 0);
			assert_int_equal(mdb_dbi_open(txn, "expiry",
			    MDB_CREATE, &xdb), 0);
			(void)snprintf(key, sizeof(key), "o%03zu.%05d", len, i);
			n = store_rec_encode(rbuf, sizeof(rbuf),
			    STORE_SESSIONS, 0, NOW + 1, NOW, pay, len);
			k.mv_size = strlen(key);
			k.mv_data = key;
			v.mv_size = (size_t)n;
			v.mv_data = rbuf;
			rc = mdb_put(txn, sdb, &k, &v, 0);
			if (rc == 0) {
				stale_index_key(ibuf, &klen, NOW + 1, key);
				k.mv_size = klen;
				k.mv_data = ibuf;
				v.mv_size = 0;
				rc = mdb_put(txn, xdb, &k, &v, 0);
			}
			if (rc == 0)
				rc = mdb_txn_commit(txn);
			else
				mdb_txn_abort(txn);
			if (rc != 0)
				break;
			stored++;
		}
		assert_int_equal(rc, MDB_MAP_FULL);
	}
	mdb_env_close(env);

	assert_int_equal(store_open(&f->f_st, f->f_dir, 1024 * 1024, 64, 0),
	    0);
	do {
		n = store_sweep(f->f_st, NOW + 1, 1000, &ss);
		assert_true(n >= 0);
		swept += n;
	} while (ss.ss_more);
	assert_int_equal(swept, stored);
	assert_int_equal(store_envstat(f->f_st, &es), 0);
	assert_int_equal(es.se_db[STORE_SESSIONS].sd_entries, 0);
	/* not even one delete fitted: the map grew by its headroom */
	assert_true(es.se_map_size > 1024 * 1024);
	assert_true(es.se_map_size <= 2 * 1024 * 1024);
	put_str(f->f_st, STORE_SESSIONS, "new", "N", NOW + 100);
	assert_int_equal(get_str(f->f_st, STORE_SESSIONS, "new", NOW + 1, buf,
	    sizeof(buf)), 0);
}

/* a batch bound says more may be due; the next batch goes on */
static void
test_sweep_more(void **state)
{
	struct fixture		*f = *state;
	struct store_sweep	 ss;
	char			 key[16];
	int			 i;

	for (i = 0; i < 10; i++) {
		(void)snprintf(key, sizeof(key), "m%02d", i);
		put_str(f->f_st, STORE_EVENTS, key, "v", NOW + 1);
	}
	assert_int_equal(store_sweep(f->f_st, NOW + 5, 4, &ss), 4);
	assert_int_equal(ss.ss_entries, 4);
	assert_int_equal(ss.ss_more, 1);
	assert_int_equal(store_sweep(f->f_st, NOW + 5, 6, &ss), 6);
	assert_int_equal(ss.ss_more, 1);
	assert_int_equal(store_sweep(f->f_st, NOW + 5, 6, &ss), 0);
	assert_int_equal(ss.ss_more, 0);
}

static int
add_limited(struct store *st, const char *key, const char *group,
    size_t max, size_t group_max, uint64_t exp, uint64_t now)
{
	struct store_limit lim = {
		.sl_max = max,
		.sl_group = group,
		.sl_glen = group != NULL ? strlen(group) : 0,
		.sl_group_max = group_max,
	};

	return store_add_limited(st, STORE_SESSIONS, key, strlen(key), "{}",
	    2, exp, now, &lim);
}

static size_t
group_count(struct store *st, const char *group)
{
	size_t n;

	assert_int_equal(store_group_count(st, STORE_SESSIONS, group,
	    strlen(group), &n), 0);
	return n;
}

/* caps on records in a db and per group, counts kept by every path */
static void
test_limits(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct store_rec	 rec;

	assert_int_equal(add_limited(st, "a1", "A", 4, 2, NOW + 10, NOW), 0);
	assert_int_equal(add_limited(st, "a2", "A", 4, 2, NOW + 20, NOW), 0);
	assert_int_equal(add_limited(st, "a3", "A", 4, 2, NOW + 10, NOW),
	    STORE_LIMIT_GROUP);
	assert_int_equal(add_limited(st, "b1", "B", 4, 2, NOW + 10, NOW), 0);
	assert_int_equal(add_limited(st, "c1", NULL, 4, 0, 0, NOW), 0);
	assert_int_equal(add_limited(st, "b2", "B", 4, 2, NOW + 10, NOW),
	    STORE_LIMIT_DB);
	assert_int_equal(group_count(st, "A"), 2);
	assert_int_equal(group_count(st, "B"), 1);
	assert_int_equal(group_count(st, "C"), 0);
	/* the group is not part of the payload */
	assert_int_equal(store_get(st, STORE_SESSIONS, "a1", 2, NOW, &rec), 0);
	assert_string_equal(rec.sr_data, "{}");
	assert_int_equal(rec.sr_glen, 1);
	store_rec_clear(&rec);

	/* a rewrite keeps the group, a delete leaves it */
	assert_int_equal(store_put(st, STORE_SESSIONS, "a1", 2, "{\"x\":1}",
	    7, NOW + 30, NOW), 0);
	assert_int_equal(group_count(st, "A"), 2);
	assert_int_equal(store_del(st, STORE_SESSIONS, "a1", 2), 0);
	assert_int_equal(group_count(st, "A"), 1);
	assert_int_equal(add_limited(st, "a3", "A", 4, 2, NOW + 10, NOW), 0);
	assert_int_equal(group_count(st, "A"), 2);

	/* at a cap, the expired records are reclaimed on the spot */
	assert_int_equal(add_limited(st, "a4", "A", 10, 2, NOW + 50, NOW + 25),
	    0);
	assert_int_equal(group_count(st, "A"), 1);
	assert_int_equal(group_count(st, "B"), 0);
	assert_int_equal(add_limited(st, "d1", "D", 2, 0, NOW + 50, NOW + 25),
	    STORE_LIMIT_DB);
	assert_int_equal(add_limited(st, "d1", "D", 3, 0, NOW + 50, NOW + 25),
	    0);
	assert_int_equal(group_count(st, "D"), 1);

	/* and the sweep keeps the counts */
	assert_int_equal(store_sweep(st, NOW + 100, 100, NULL), 2);
	assert_int_equal(group_count(st, "A"), 0);
	assert_int_equal(group_count(st, "D"), 0);
	assert_int_equal(add_limited(st, "a5", "A", 9, 1, NOW + 200, NOW + 100),
	    0);
	assert_int_equal(add_limited(st, "a6", "A", 9, 1, NOW + 200, NOW + 100),
	    STORE_LIMIT_GROUP);
	/* a live key is taken whatever the caps */
	assert_int_equal(add_limited(st, "a5", "A", 9, 1, NOW + 200, NOW + 100),
	    STORE_EXISTS);
}

/*
 * A map filled with new records: the headroom stays free, so a delete
 * and a sweep commit, rewrites that do not grow go on, and once the
 * sweep has run new records fit again.
 */
static void
test_map_headroom(void **state)
{
	struct fixture		*f = *state;
	struct store_sweep	 ss;
	char			 key[16], val[600], big[700];
	int			 i, n, rc = 0, saved = 0;

	assert_int_equal(store_open(&f->f_st, f->f_dir, 1024 * 1024, 64, 0),
	    0);
	memset(val, 's', sizeof(val));
	memset(big, 'b', sizeof(big));
	for (i = 0; i < 100000; i++) {
		(void)snprintf(key, sizeof(key), "s%06d", i);
		rc = store_put(f->f_st, STORE_SESSIONS, key, strlen(key), val,
		    sizeof(val), NOW + 10, NOW);
		if (rc != 0) {
			saved = errno;
			break;
		}
	}
	assert_int_equal(rc, -1);
	assert_int_equal(saved, ENOSPC);
	n = i;
	assert_true(n > 500);
	/* full for new records: a rewrite and a delete still commit */
	assert_int_equal(store_put(f->f_st, STORE_SESSIONS, "s000001", 7, val,
	    sizeof(val), NOW + 20, NOW), 0);
	/* but not a rewrite that grows the record */
	assert_int_equal(store_put(f->f_st, STORE_SESSIONS, "s000001", 7, big,
	    sizeof(big), NOW + 20, NOW), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(store_del(f->f_st, STORE_SESSIONS, "s000002", 7), 0);
	for (i = 3; i < 100; i++) {
		(void)snprintf(key, sizeof(key), "s%06d", i);
		assert_int_equal(store_del(f->f_st, STORE_SESSIONS, key,
		    strlen(key)), 0);
	}
	/* the sweep of the rest commits in batches */
	do {
		assert_true(store_sweep(f->f_st, NOW + 10, 256, &ss) >= 0);
	} while (ss.ss_more);
	assert_int_equal(store_envstat(f->f_st, &(struct store_envstat){0}), 0);
	for (i = 0; i < n / 2; i++) {
		(void)snprintf(key, sizeof(key), "t%06d", i);
		assert_int_equal(store_put(f->f_st, STORE_SESSIONS, key,
		    strlen(key), val, sizeof(val), NOW + 100, NOW + 10), 0);
	}
}

/* --- sequences --- */

struct seq_state {
	uint64_t	ss_seqs[2000];
	char		ss_vals[2000][16];
	size_t		ss_n;
	size_t		ss_stop_after;
};

static int
seq_cb(void *arg, const void *key, size_t klen, const struct store_rec *rec)
{
	struct seq_state	*ss = arg;
	const uint8_t		*k = key;
	uint64_t		 seq = 0;
	size_t			 i;

	assert_true(klen >= 8);
	for (i = klen - 8; i < klen; i++)
		seq = seq << 8 | k[i];
	ss->ss_seqs[ss->ss_n] = seq;
	(void)snprintf(ss->ss_vals[ss->ss_n], sizeof(ss->ss_vals[0]), "%s",
	    rec->sr_data);
	ss->ss_n++;
	return ss->ss_stop_after != 0 && ss->ss_n == ss->ss_stop_after;
}

static void
test_sequence(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct seq_state	*ss;
	uint64_t		 seq;
	char			 val[16];
	int			 i;

	assert_non_null(ss = calloc(1, sizeof(*ss)));
	/* a header at seq 0 is not a sequence member and is never trimmed */
	assert_int_equal(store_put(st, STORE_EVENTS, "sessA\0\0\0\0\0\0\0\0",
	    13, "hdr", 3, 0, NOW), 0);
	for (i = 1; i <= 5; i++) {
		(void)snprintf(val, sizeof(val), "a%d", i);
		assert_int_equal(store_append(st, STORE_EVENTS, "sessA", 5, val,
		    strlen(val), 0, NOW, 100, &seq), 0);
		assert_int_equal(seq, (uint64_t)i);
	}
	/* a neighbouring prefix does not disturb the numbering */
	assert_int_equal(store_append(st, STORE_EVENTS, "sessB", 5, "b1", 2, 0,
	    NOW, 100, &seq), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(store_append(st, STORE_EVENTS, "sess", 4, "s1", 2, 0,
	    NOW, 100, &seq), 0);
	assert_int_equal(seq, 1);

	assert_int_equal(store_scan(st, STORE_EVENTS, "sessA", 5, 2, NOW,
	    seq_cb, ss), 0);
	assert_int_equal(ss->ss_n, 3);
	assert_int_equal(ss->ss_seqs[0], 3);
	assert_string_equal(ss->ss_vals[0], "a3");
	assert_int_equal(ss->ss_seqs[2], 5);

	/* after 0: everything but the header */
	memset(ss, 0, sizeof(*ss));
	assert_int_equal(store_scan(st, STORE_EVENTS, "sessA", 5, 0, NOW,
	    seq_cb, ss), 0);
	assert_int_equal(ss->ss_n, 5);

	/* the window keeps the newest 3; the header survives */
	assert_int_equal(store_append(st, STORE_EVENTS, "sessA", 5, "a6", 2, 0,
	    NOW, 3, &seq), 0);
	assert_int_equal(seq, 6);
	memset(ss, 0, sizeof(*ss));
	assert_int_equal(store_scan(st, STORE_EVENTS, "sessA", 5, 0, NOW,
	    seq_cb, ss), 0);
	assert_int_equal(ss->ss_n, 3);
	assert_int_equal(ss->ss_seqs[0], 4);
	assert_int_equal(ss->ss_seqs[2], 6);
	{
		struct store_rec rec;

		assert_int_equal(store_get(st, STORE_EVENTS,
		    "sessA\0\0\0\0\0\0\0\0", 13, NOW, &rec), 0);
		assert_string_equal(rec.sr_data, "hdr");
		store_rec_clear(&rec);
	}

	/* more than one copy-out batch, in order, and stopping early */
	for (i = 0; i < 600; i++)
		assert_int_equal(store_append(st, STORE_EVENTS, "big", 3, "x",
		    1, i % 2 ? NOW - 1 : 0, NOW, 1000, NULL), 0);
	memset(ss, 0, sizeof(*ss));
	assert_int_equal(store_scan(st, STORE_EVENTS, "big", 3, 0, NOW,
	    seq_cb, ss), 0);
	assert_int_equal(ss->ss_n, 300);	/* the expired half is skipped */
	for (i = 1; i < 300; i++)
		assert_true(ss->ss_seqs[i] > ss->ss_seqs[i - 1]);
	memset(ss, 0, sizeof(*ss));
	ss->ss_stop_after = 7;
	assert_int_equal(store_scan(st, STORE_EVENTS, "big", 3, 0, NOW,
	    seq_cb, ss), 0);
	assert_int_equal(ss->ss_n, 7);
	assert_int_equal(store_append(st, STORE_EVENTS, "x", 1, "v", 1, 0, NOW,
	    0, NULL), -1);
	free(ss);
}

/* --- the close queue, gauges, groups --- */

struct taken {
	char	t_keys[16][16];
	size_t	t_n;
	int	t_stop_after;	/* > 0: stop once this many are in */
};

static int
taken_cb(void *arg, const void *key, size_t klen, const struct store_rec *rec)
{
	struct taken *t = arg;

	assert_non_null(rec->sr_data);
	assert_true(klen < sizeof(t->t_keys[0]) && t->t_n < 16);
	memcpy(t->t_keys[t->t_n], key, klen);
	t->t_keys[t->t_n][klen] = '\0';
	t->t_n++;
	return t->t_stop_after > 0 && (int)t->t_n >= t->t_stop_after;
}

static size_t
db_entries(struct store *st, enum store_db db)
{
	struct store_envstat es;

	assert_int_equal(store_envstat(st, &es), 0);
	return es.se_db[db].sd_entries;
}

/*
 * A record flagged STORE_F_CLOSE that the sweep deletes (or a cap
 * reclaims) leaves its payload in STORE_CLOSING; unflagged ones go.
 * store_take() hands each queued record out once, in bounded batches,
 * and drops what expired in the queue.
 */
static void
test_close_queue(void **state)
{
	struct fixture		*f = *state;
	struct store		*st = f->f_st;
	struct store_limit	 lim;
	struct taken		 t;
	size_t			 n;
	char			 buf[64], key[16];
	int			 i;

	assert_int_equal(store_put_ext(st, STORE_SESSIONS, "s1", 2, "P1", 2,
	    NOW + 100, NOW, STORE_F_CLOSE, "g", 1), 0);
	put_str(st, STORE_SESSIONS, "s2", "P2", NOW + 100);
	assert_int_equal(store_put_ext(st, STORE_SESSIONS, "s3", 2, "P3", 2,
	    NOW + 10000, NOW, STORE_F_CLOSE, NULL, 0), 0);
	/* a rewrite without the flag clears it */
	assert_int_equal(store_put_ext(st, STORE_SESSIONS, "s4", 2, "P4", 2,
	    NOW + 100, NOW, STORE_F_CLOSE, NULL, 0), 0);
	put_str(st, STORE_SESSIONS, "s4", "P4", NOW + 100);
	assert_int_equal(store_group_count(st, STORE_SESSIONS, "g", 1, &n), 0);
	assert_int_equal(n, 1);

	/* an empty queue hands nothing out */
	memset(&t, 0, sizeof(t));
	assert_int_equal(store_take(st, STORE_CLOSING, 10, NOW + 150,
	    taken_cb, &t), 0);

	assert_int_equal(store_sweep(st, NOW + 150, 100, NULL), 3);
	assert_int_equal(get_str(st, STORE_SESSIONS, "s1", 0, buf,
	    sizeof(buf)), STORE_NOTFOUND);
	assert_int_equal(store_group_count(st, STORE_SESSIONS, "g", 1, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(get_str(st, STORE_CLOSING, "s1", NOW + 150, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "P1");
	assert_int_equal(db_entries(st, STORE_CLOSING), 1);

	assert_int_equal(store_take(st, STORE_CLOSING, 10, NOW + 150,
	    taken_cb, &t), 1);
	assert_int_equal(t.t_n, 1);
	assert_string_equal(t.t_keys[0], "s1");
	/* taken once: gone from the queue and its index */
	assert_int_equal(store_take(st, STORE_CLOSING, 10, NOW + 150,
	    taken_cb, &t), 0);
	assert_int_equal(db_entries(st, STORE_CLOSING), 0);
	assert_int_equal(expiry_entries(st), 1);	/* s3's */

	/* a cap's reclaim moves it too */
	memset(&lim, 0, sizeof(lim));
	lim.sl_max = 1;
	assert_int_equal(store_add_limited(st, STORE_SESSIONS, "s5", 2, "P5",
	    2, NOW + 20000, NOW + 10001, &lim), 0);
	assert_int_equal(get_str(st, STORE_CLOSING, "s3", NOW + 10001, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "P3");

	/* bounded batches */
	for (i = 0; i < 5; i++) {
		(void)snprintf(key, sizeof(key), "q%d", i);
		put_str(st, STORE_CLOSING, key, "Q", NOW + 100000);
	}
	memset(&t, 0, sizeof(t));
	assert_int_equal(store_take(st, STORE_CLOSING, 2, NOW + 10001,
	    taken_cb, &t), 2);
	assert_int_equal(store_take(st, STORE_CLOSING, 2, NOW + 10001,
	    taken_cb, &t), 2);
	assert_int_equal(store_take(st, STORE_CLOSING, 2, NOW + 10001,
	    taken_cb, &t), 2);
	assert_int_equal(t.t_n, 6);
	assert_int_equal(db_entries(st, STORE_CLOSING), 0);

	/* a callback that stops drops the rest of its batch: taken all */
	put_str(st, STORE_CLOSING, "r1", "R", NOW + 100000);
	put_str(st, STORE_CLOSING, "r2", "R", NOW + 100000);
	memset(&t, 0, sizeof(t));
	t.t_stop_after = 1;
	assert_int_equal(store_take(st, STORE_CLOSING, 10, NOW + 10001,
	    taken_cb, &t), 1);
	assert_int_equal(db_entries(st, STORE_CLOSING), 0);
	t.t_stop_after = 0;

	/* what expired in the queue is dropped, not handed out */
	put_str(st, STORE_CLOSING, "old", "O", NOW + 10);
	put_str(st, STORE_CLOSING, "new", "N", NOW + 100000);
	memset(&t, 0, sizeof(t));
	assert_int_equal(store_take(st, STORE_CLOSING, 10, NOW + 20,
	    taken_cb, &t), 1);
	assert_string_equal(t.t_keys[0], "new");
	assert_int_equal(db_entries(st, STORE_CLOSING), 0);

	assert_int_equal(store_take(st, STORE_NDB, 1, NOW, taken_cb, &t), -1);
	assert_int_equal(store_take(NULL, STORE_CLOSING, 1, NOW, taken_cb,
	    &t), -1);
}

struct counted {
	char		c_names[8][STORE_GROUP_MAX + 1];
	uint64_t	c_n[8];
	size_t		c_len;
};

static int
counted_cb(void *arg, const char *name, size_t nlen, uint64_t n)
{
	struct counted *c = arg;

	assert_true(c->c_len < 8 && nlen == strlen(name));
	(void)snprintf(c->c_names[c->c_len], sizeof(c->c_names[0]), "%s",
	    name);
	c->c_n[c->c_len++] = n;
	return 0;
}

static void
test_gauges(void **state)
{
	struct fixture	*f = *state;
	struct store	*st = f->f_st;
	struct counted	 c;
	uint64_t	 n;
	char		 longname[STORE_GROUP_MAX + 2];

	assert_int_equal(store_gauge_get(st, "a", &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_gauge_add(st, "a", 1), 0);
	assert_int_equal(store_gauge_add(st, "a", 1), 0);
	assert_int_equal(store_gauge_add(st, "b", 1), 0);
	assert_int_equal(store_gauge_add(st, "a", -1), 0);
	assert_int_equal(store_gauge_get(st, "a", &n), 0);
	assert_int_equal(n, 1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_gauges(st, counted_cb, &c), 0);
	assert_int_equal(c.c_len, 2);
	assert_string_equal(c.c_names[0], "a");
	assert_int_equal(c.c_n[0], 1);
	assert_string_equal(c.c_names[1], "b");
	/* never below 0; a gauge at 0 is not listed */
	assert_int_equal(store_gauge_add(st, "b", -5), 0);
	assert_int_equal(store_gauge_get(st, "b", &n), 0);
	assert_int_equal(n, 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_gauges(st, counted_cb, &c), 0);
	assert_int_equal(c.c_len, 1);

	/* gauges and groups do not mix */
	assert_int_equal(store_put_ext(st, STORE_BSESSIONS, "x|be1", 5, "{}",
	    2, NOW + 100, NOW, 0, "be1", 3), 0);
	assert_int_equal(store_put_ext(st, STORE_BSESSIONS, "y|be1", 5, "{}",
	    2, NOW + 100, NOW, 0, "be1", 3), 0);
	assert_int_equal(store_put_ext(st, STORE_BSESSIONS, "x|be2", 5, "{}",
	    2, NOW + 100, NOW, 0, "be2", 3), 0);
	put_str(st, STORE_SESSIONS, "s", "S", NOW + 100);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_groups(st, STORE_BSESSIONS, counted_cb, &c), 0);
	assert_int_equal(c.c_len, 2);
	assert_string_equal(c.c_names[0], "be1");
	assert_int_equal(c.c_n[0], 2);
	assert_string_equal(c.c_names[1], "be2");
	assert_int_equal(c.c_n[1], 1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_gauges(st, counted_cb, &c), 0);
	assert_int_equal(c.c_len, 1);
	/* a swept record leaves its group's count */
	assert_int_equal(store_sweep(st, NOW + 200, 100, NULL), 4);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_groups(st, STORE_BSESSIONS, counted_cb, &c), 0);
	assert_int_equal(c.c_len, 0);

	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(store_gauge_add(st, longname, 1), -1);
	assert_int_equal(store_gauge_add(st, "", 1), -1);
	assert_int_equal(store_gauges(NULL, counted_cb, &c), -1);
}

/* record in STORE_HEALTH each key taken; a key taken twice fails */
static int
take_mark_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct store *st = arg;

	(void)rec;
	if (store_add(st, STORE_HEALTH, key, klen, "t", 1, 0, NOW) != 0)
		_exit(5);
	return 0;
}

static int
take_all(struct store *st)
{
	int n, idle = 0;

	while (idle < 3) {
		if ((n = store_take(st, STORE_CLOSING, 7, NOW, take_mark_cb,
		    st)) == -1)
			return -1;
		idle = n == 0 ? idle + 1 : 0;
	}
	return 0;
}

/* two processes taking from one queue: every record taken exactly once */
static void
test_take_shared(void **state)
{
	struct fixture	*f = *state;
	struct store	*st;
	char		 key[16];
	int		 i;

	assert_int_equal(store_open(&st, f->f_dir, MAP_SIZE, 64, 0), 0);
	for (i = 0; i < 300; i++) {
		(void)snprintf(key, sizeof(key), "k%03d", i);
		put_str(st, STORE_CLOSING, key, "v", NOW + 100000);
	}
	store_close(st);
	if (spawn(f) == 0) {
		if (store_open(&st, f->f_dir, MAP_SIZE, 64, 0) == -1)
			_exit(1);
		pipe_wait(f->f_p2c[0]);
		if (take_all(st) == -1)
			_exit(2);
		store_close(st);
		_exit(0);
	}
	assert_int_equal(store_open(&f->f_st, f->f_dir, MAP_SIZE, 64, 0), 0);
	assert_int_equal(write(f->f_p2c[1], "x", 1), 1);
	assert_int_equal(take_all(f->f_st), 0);
	assert_int_equal(wait_child(f), 0);
	assert_int_equal(db_entries(f->f_st, STORE_CLOSING), 0);
	assert_int_equal(db_entries(f->f_st, STORE_HEALTH), 300);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec_roundtrip),
		cmocka_unit_test(test_codec_reject),
		cmocka_unit_test(test_expired),
		cmocka_unit_test(test_db_names),
		cmocka_unit_test_setup_teardown(test_read_in_place, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_put_get_del,
		    setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_add, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sweep_bound, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_iter, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sequence, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_envstat, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rdonly, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_map_resized, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_map_grown, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_map_full, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sweep_stale, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_map_full_old, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sweep_more, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_map_headroom, setup_dir,
		    teardown),
		cmocka_unit_test_setup_teardown(test_close_queue, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_gauges, setup_store,
		    teardown),
		cmocka_unit_test_setup_teardown(test_take_shared, setup_dir,
		    teardown),
	};

	/* a dead child must fail a test, not kill the runner */
	(void)signal(SIGPIPE, SIG_IGN);
	log_init(1, "test_store");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
