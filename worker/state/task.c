/*
 * The tasks db of this host's store (task_store.h): the records of
 * tasks handed to clients, written before the client has its task.
 * Each call answers at once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/process/process.h"
#include "worker/state/task_store.h"

/* this host's store: the tasks db; add: only if absent (NX) */
static int
task_lmdb_write(struct worker *w, const char *id, const struct task_rec *tr,
    uint64_t ttl_ms, int add, task_put_cb cb, void *arg)
{
	char		*buf;
	size_t		 len;
	uint64_t	 now = store_now_ms();
	int		 rc;

	if ((buf = task_rec_encode(tr, &len)) == NULL)
		return -1;
	/* 128 random bits do not collide: a live id is a failure */
	rc = add ? store_add(w->w_store, STORE_TASKS, id, strlen(id), buf,
	    len, now + ttl_ms, now) : store_put(w->w_store, STORE_TASKS, id,
	    strlen(id), buf, len, now + ttl_ms, now);
	free(buf);
	cb(arg, rc == 0 ? 0 : -1);
	return 0;
}

static int
task_lmdb_put(struct worker *w, const char *id, const struct task_rec *tr,
    uint64_t ttl_ms, task_put_cb cb, void *arg)
{
	return task_lmdb_write(w, id, tr, ttl_ms, 1, cb, arg);
}

static int
task_lmdb_set(struct worker *w, const char *id, const struct task_rec *tr,
    uint64_t ttl_ms, task_put_cb cb, void *arg)
{
	return task_lmdb_write(w, id, tr, ttl_ms, 0, cb, arg);
}

static int
task_lmdb_mark(struct worker *w, const char *id, uint64_t ttl_ms,
    task_put_cb cb, void *arg)
{
	char		 key[TASK_ID_LEN + sizeof(TASK_MARK_SUFFIX)];
	uint64_t	 now = store_now_ms();
	int		 rc;

	(void)snprintf(key, sizeof(key), "%s%s", id, TASK_MARK_SUFFIX);
	rc = store_add(w->w_store, STORE_TASKS, key, strlen(key), "1", 1,
	    now + ttl_ms, now);
	cb(arg, rc == 0 || rc == STORE_EXISTS ? 0 : -1);
	return 0;
}

/* a workflow's cancel mark is there */
static int
task_lmdb_marked(struct worker *w, const char *id)
{
	struct store_rec	 rec;
	char			 key[TASK_ID_LEN + sizeof(TASK_MARK_SUFFIX)];

	(void)snprintf(key, sizeof(key), "%s%s", id, TASK_MARK_SUFFIX);
	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_TASKS, key, strlen(key),
	    store_now_ms(), &rec) != 0)
		return 0;
	free(rec.sr_data);
	return 1;
}

static int
task_lmdb_get(struct worker *w, const char *id, task_get_cb cb, void *arg)
{
	struct store_rec	 rec;
	struct task_rec		 tr;
	int			 rc;

	memset(&rec, 0, sizeof(rec));
	rc = store_get(w->w_store, STORE_TASKS, id, strlen(id),
	    store_now_ms(), &rec);
	if (rc == 0) {
		rc = task_rec_decode(rec.sr_data, rec.sr_len, &tr) == 0 ? 0 :
		    STORE_NOTFOUND;
		free(rec.sr_data);
		if (rc == 0 && tr.tr_status != TASK_ST_NONE)
			tr.tr_cancel = task_lmdb_marked(w, id);
	} else if (rc != STORE_NOTFOUND)
		rc = -1;
	cb(arg, rc, rc == 0 ? &tr : NULL);
	if (rc == 0)
		task_rec_clear(&tr);
	return 0;
}

static void
task_lmdb_cancel(void *arg)
{
	(void)arg;	/* never waits */
}

static const struct task_store task_store_lmdb = {
	task_lmdb_put,
	task_lmdb_get,
	task_lmdb_cancel,
	task_lmdb_set,
	task_lmdb_mark
};
const struct task_store *task_store = &task_store_lmdb;
