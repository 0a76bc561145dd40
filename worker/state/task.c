/*
 * The tasks db of this host's store (task_store.h): the records of
 * tasks handed to clients, written before the client has its task.
 * Each call answers at once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/store.h"
#include "shared/task_rec.h"
#include "worker/process/process.h"
#include "worker/state/task_store.h"

/* this host's store: the tasks db */
static int
task_lmdb_put(struct worker *w, const char *id, const struct task_rec *tr,
    uint64_t ttl_ms, task_put_cb cb, void *arg)
{
	char		*buf;
	size_t		 len;
	uint64_t	 now = store_now_ms();
	int		 rc;

	if ((buf = task_rec_encode(tr, &len)) == NULL)
		return -1;
	/* 128 random bits do not collide: a live id is a failure */
	rc = store_add(w->w_store, STORE_TASKS, id, strlen(id), buf, len,
	    now + ttl_ms, now);
	free(buf);
	cb(arg, rc == 0 ? 0 : -1);
	return 0;
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
	} else if (rc != STORE_NOTFOUND)
		rc = -1;
	cb(arg, rc, rc == 0 ? &tr : NULL);
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
	task_lmdb_cancel
};
const struct task_store *task_store = &task_store_lmdb;
