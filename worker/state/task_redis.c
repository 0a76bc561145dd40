/*
 * The tasks extension's task records in Redis (sessionStorage.provider
 * redis; task_store.h): <prefix>task:<id> holds the record's JSON
 * (shared/task_rec.c) with the task's TTL, written with SET NX PX before
 * the client has its task, read with GET by whichever node the client
 * polls.  Asynchronous on the loop; a command not answered fails the
 * request (no task is ever answered unwritten).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/state/task_store.h"

#define TASK_RKEY_MAX	256

static struct worker *task_redis_w;

struct task_rcmd {
	TAILQ_ENTRY(task_rcmd)	 tc_entry;
	struct redis_cmd	*tc_cmd;
	task_put_cb		 tc_put;
	task_get_cb		 tc_get;
	void			*tc_arg;
	int			 tc_mark;	/* a cancel mark's SET */
};

static TAILQ_HEAD(, task_rcmd) task_rcmds =
    TAILQ_HEAD_INITIALIZER(task_rcmds);

static int	task_redis_put(struct worker *, const char *,
		    const struct task_rec *, uint64_t, task_put_cb, void *);
static int	task_redis_get(struct worker *, const char *, task_get_cb,
		    void *);
static void	task_redis_cancel(void *);
static int	task_redis_set(struct worker *, const char *,
		    const struct task_rec *, uint64_t, task_put_cb, void *);
static int	task_redis_mark(struct worker *, const char *, uint64_t,
		    task_put_cb, void *);

static const struct task_store task_store_redis = {
	task_redis_put,
	task_redis_get,
	task_redis_cancel,
	task_redis_set,
	task_redis_mark
};

void
task_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	task_redis_w = w;
	task_store = &task_store_redis;
}

static size_t
task_redis_key(const char *id, char *key, size_t len)
{
	return redis_key(key, len, task_redis_w->w_conf->cf_sstore.css_prefix,
	    REDIS_KIND_TASK, id, NULL);
}

/* the command's entry, off the list (cb may cancel others) */
static struct task_rcmd *
task_redis_take(struct task_rcmd *tc)
{
	TAILQ_REMOVE(&task_rcmds, tc, tc_entry);
	return tc;
}

static void
task_redis_on_put(void *arg, const redisReply *reply, const char *err)
{
	struct task_rcmd	*tc = task_redis_take(arg);
	int			 rc = -1;

	/* OK, or nil: a cancel mark that is there already */
	if (err == NULL && reply != NULL && (reply->type ==
	    REDIS_REPLY_STATUS || (reply->type == REDIS_REPLY_NIL &&
	    tc->tc_mark)))
		rc = 0;
	else if (err != NULL || reply == NULL ||
	    reply->type == REDIS_REPLY_ERROR)
		redis_failed(REDIS_USER_TASK, "a task not written", reply, err);
	tc->tc_put(tc->tc_arg, rc);
	free(tc);
}

static void
task_redis_on_get(void *arg, const redisReply *reply, const char *err)
{
	struct task_rcmd	*tc = task_redis_take(arg);
	struct task_rec		 tr;
	int			 rc = -1;

	const redisReply	*rec = NULL;

	memset(&tr, 0, sizeof(tr));
	/* MGET: the record, and a workflow's cancel mark */
	if (err == NULL && reply != NULL && reply->type ==
	    REDIS_REPLY_ARRAY && reply->elements == 2)
		rec = reply->element[0];
	if (rec != NULL && rec->type == REDIS_REPLY_NIL)
		rc = STORE_NOTFOUND;
	else if (rec != NULL && rec->type == REDIS_REPLY_STRING)
		rc = task_rec_decode(rec->str, rec->len, &tr) == 0 ? 0 :
		    STORE_NOTFOUND;
	else
		redis_failed(REDIS_USER_TASK, "a task not read", reply, err);
	if (rc == 0 && tr.tr_status != TASK_ST_NONE)
		tr.tr_cancel = reply->element[1]->type == REDIS_REPLY_STRING;
	tc->tc_get(tc->tc_arg, rc, rc == 0 ? &tr : NULL);
	if (rc == 0)
		task_rec_clear(&tr);
	free(tc);
}

static int
task_redis_send(struct redis_args *a, struct task_rcmd *tc, redis_cb cb)
{
	if ((tc->tc_cmd = redis_send(a, cb, tc)) == NULL) {
		redis_failed(REDIS_USER_TASK, tc->tc_put != NULL ?
		    "a task not written" : "a task not read", NULL,
		    "not connected");
		free(tc);
		return -1;
	}
	TAILQ_INSERT_TAIL(&task_rcmds, tc, tc_entry);
	return 0;
}

/* SET the payload (NX if nx), with the task's TTL */
static int
task_redis_write(const char *id, const char *buf, size_t len,
    uint64_t ttl_ms, int nx, int mark, task_put_cb cb, void *arg)
{
	struct task_rcmd	*tc;
	struct redis_args	 a;
	char			 key[TASK_RKEY_MAX];
	size_t			 klen;

	if ((klen = task_redis_key(id, key, sizeof(key))) == 0 ||
	    (tc = calloc(1, sizeof(*tc))) == NULL)
		return -1;
	tc->tc_put = cb;
	tc->tc_arg = arg;
	tc->tc_mark = mark;
	redis_args_init(&a);
	redis_args_push(&a, "SET");
	redis_args_pushn(&a, key, klen);
	redis_args_pushn(&a, buf, len);
	redis_args_push(&a, "PX");
	redis_args_push_u64(&a, ttl_ms > 0 ? ttl_ms : 1);
	if (nx)
		redis_args_push(&a, "NX");
	return task_redis_send(&a, tc, task_redis_on_put);
}

static int
task_redis_rec(const char *id, const struct task_rec *tr, uint64_t ttl_ms,
    int nx, task_put_cb cb, void *arg)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	if ((buf = task_rec_encode(tr, &len)) == NULL)
		return -1;
	rc = task_redis_write(id, buf, len, ttl_ms, nx, 0, cb, arg);
	free(buf);
	return rc;
}

static int
task_redis_put(struct worker *w, const char *id, const struct task_rec *tr,
    uint64_t ttl_ms, task_put_cb cb, void *arg)
{
	(void)w;
	return task_redis_rec(id, tr, ttl_ms, 1, cb, arg);
}

static int
task_redis_set(struct worker *w, const char *id, const struct task_rec *tr,
    uint64_t ttl_ms, task_put_cb cb, void *arg)
{
	(void)w;
	return task_redis_rec(id, tr, ttl_ms, 0, cb, arg);
}

static int
task_redis_mark(struct worker *w, const char *id, uint64_t ttl_ms,
    task_put_cb cb, void *arg)
{
	char mid[TASK_ID_LEN + sizeof(TASK_MARK_SUFFIX)];

	(void)w;
	(void)snprintf(mid, sizeof(mid), "%s%s", id, TASK_MARK_SUFFIX);
	return task_redis_write(mid, "1", 1, ttl_ms, 1, 1, cb, arg);
}

static int
task_redis_get(struct worker *w, const char *id, task_get_cb cb, void *arg)
{
	struct task_rcmd	*tc;
	struct redis_args	 a;
	char			 key[TASK_RKEY_MAX], mkey[TASK_RKEY_MAX];
	char			 mid[TASK_ID_LEN + sizeof(TASK_MARK_SUFFIX)];
	size_t			 klen, mlen;

	(void)w;
	(void)snprintf(mid, sizeof(mid), "%s%s", id, TASK_MARK_SUFFIX);
	if ((klen = task_redis_key(id, key, sizeof(key))) == 0 ||
	    (mlen = task_redis_key(mid, mkey, sizeof(mkey))) == 0 ||
	    (tc = calloc(1, sizeof(*tc))) == NULL)
		return -1;
	tc->tc_get = cb;
	tc->tc_arg = arg;
	redis_args_init(&a);
	redis_args_push(&a, "MGET");
	redis_args_pushn(&a, key, klen);
	redis_args_pushn(&a, mkey, mlen);
	return task_redis_send(&a, tc, task_redis_on_get);
}

static void
task_redis_cancel(void *arg)
{
	struct task_rcmd *tc, *next;

	for (tc = TAILQ_FIRST(&task_rcmds); tc != NULL; tc = next) {
		next = TAILQ_NEXT(tc, tc_entry);
		if (tc->tc_arg == arg) {
			redis_cancel(tc->tc_cmd);
			TAILQ_REMOVE(&task_rcmds, tc, tc_entry);
			free(tc);
		}
	}
}
