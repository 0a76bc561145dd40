/*
 * Pending relayed requests in Redis (sessionStorage.provider redis), the
 * worker's side (the pure parts are pending_redis_codec.c; the design in
 * docs/ARCHITECTURE.md, Beyond one host): the record written beside the
 * host's when vmcpd relays a backend's request to a Legacy client, and
 * taken by the node the client's answer reaches.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/http/httpd.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_sub.h"
#include "proto/proto.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/relay/mrtr.h"
#include "worker/relay/pending_redis.h"
#include "worker/state/session_redis.h"

static struct {
	struct worker	*pr_w;
	int		 pr_on;
} PR;

/* a message on this worker's channel: the id of an answered request */
static void
pend_redis_on_wake(const char *id, size_t len)
{
	char buf[128];

	if (len == 0 || len >= sizeof(buf) || memchr(id, '\0', len) != NULL)
		return;
	memcpy(buf, id, len);
	buf[len] = '\0';
	mrtr_redis_wake(PR.pr_w, buf);
}

void
pend_redis_init(struct worker *w)
{
	int i;

	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	PR.pr_w = w;
	PR.pr_on = 1;
	for (i = 0; i < PEND_NSCRIPTS; i++)
		(void)redis_script_add(pend_redis_lua[i]);
	/* without it, a wait reads Redis on its own timer only */
	if (redis_sub_init(w, pend_redis_on_wake) == -1)
		log_warnx("pending requests (redis): no subscription; "
		    "answers from other nodes are read each second");
}

int
pend_redis_on(void)
{
	return PR.pr_on;
}

void
pend_redis_unavailable(struct httpd_req *req)
{
	front_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT,
	    SESSION_REDIS_DOWN);
}

static void
pend_redis_on_write(void *arg, const redisReply *reply, const char *err)
{
	if (err != NULL || reply == NULL || reply->type == REDIS_REPLY_ERROR)
		redis_failed(REDIS_USER_PEND, arg, reply, err);
}

/*
 * A command on the record's key: "<cmd> <key>", or with script
 * "EVALSHA <script> 1 <key>"; the rest is the caller's to push.  The
 * key's length, or 0 if it does not fit.
 */
static size_t
pend_redis_args(struct redis_args *a, char key[PEND_RKEY_MAX],
    const char *sid, const char *id, const char *cmd, const char *script)
{
	size_t klen;

	klen = redis_key(key, PEND_RKEY_MAX,
	    PR.pr_w->w_conf->cf_sstore.css_prefix, REDIS_KIND_PEND, sid, id,
	    NULL);
	if (script != NULL)
		redis_args_evalsha(a, script, 1);
	else {
		redis_args_init(a);
		redis_args_push(a, cmd);
	}
	redis_args_pushn(a, key, klen);
	return klen;
}

void
pend_redis_put(const char *sid, const char *id, const char *rec, size_t len,
    uint64_t ttl_ms)
{
	struct redis_args	 a;
	char			 key[PEND_RKEY_MAX];

	if (pend_redis_args(&a, key, sid, id, "SET", NULL) == 0)
		return;
	redis_args_pushn(&a, rec, len);
	redis_args_push(&a, "PX");
	redis_args_push_u64(&a, ttl_ms > 0 ? ttl_ms : 1);
	if (redis_send(&a, pend_redis_on_write,
	    "a pending request not written") == NULL)
		redis_failed(REDIS_USER_PEND, "a pending request not written",
		    NULL, "not connected");
}

void
pend_redis_del(const char *sid, const char *id)
{
	struct redis_args	 a;
	char			 key[PEND_RKEY_MAX];

	if (pend_redis_args(&a, key, sid, id, "DEL", NULL) == 0)
		return;
	if (redis_send(&a, pend_redis_on_write,
	    "a pending request not deleted") == NULL)
		redis_failed(REDIS_USER_PEND, "a pending request not deleted",
		    NULL, "not connected");
}

struct pend_take {
	pend_taken_cb	 pt_cb;
	void		(*pt_done)(void *, int);
	void		*pt_arg;
};

static void
pend_redis_on_take(void *arg, const redisReply *reply, const char *err)
{
	struct pend_take	*pt = arg;
	const char		*rec = NULL;
	size_t			 len = 0;
	int			 rc = -1;

	if (err != NULL || (rc = pend_redis_record(reply, &rec, &len)) == -1)
		redis_failed(REDIS_USER_PEND, "a pending request not read",
		    reply, err);
	pt->pt_cb(pt->pt_arg, rec, len, rc == -1 ? -1 : 0);
	free(pt);
}

static void
pend_redis_on_answer(void *arg, const redisReply *reply, const char *err)
{
	struct pend_take	*pt = arg;
	int			 rc = -2;

	if (err != NULL || (rc = pend_redis_answered(reply)) == -2)
		redis_failed(REDIS_USER_PEND, "an answer not recorded", reply,
		    err);
	pt->pt_done(pt->pt_arg, rc);
	free(pt);
}

/*
 * A command on the record's key (klen its length, 0: too long) whose
 * answer goes to pt: 0, or -1 (not sent, pt freed).
 */
static int
pend_redis_send(struct redis_args *a, size_t klen, redis_cb cb,
    struct pend_take *pt)
{
	if (pt == NULL)
		return -1;
	if (klen == 0) {
		free(pt);
		return -1;
	}
	if (redis_send(a, cb, pt) == NULL) {
		free(pt);
		redis_failed(REDIS_USER_PEND,
		    "a pending request not read or answered", NULL,
		    "not connected");
		return -1;
	}
	return 0;
}

static struct pend_take *
pend_take_new(pend_taken_cb cb, void (*done)(void *, int), void *arg)
{
	struct pend_take *pt;

	if ((pt = calloc(1, sizeof(*pt))) == NULL)
		return NULL;
	pt->pt_cb = cb;
	pt->pt_done = done;
	pt->pt_arg = arg;
	return pt;
}

int
pend_redis_take(const char *sid, const char *id, pend_taken_cb cb, void *arg)
{
	struct redis_args	 a;
	char			 key[PEND_RKEY_MAX];
	size_t			 klen;

	klen = pend_redis_args(&a, key, sid, id, "GETDEL", NULL);
	return pend_redis_send(&a, klen, pend_redis_on_take,
	    pend_take_new(cb, NULL, arg));
}

void
pend_redis_ask(const char *sid, const char *id, uint64_t ttl_ms)
{
	struct redis_args	 a;
	const char		*chan = redis_sub_channel();
	char			 key[PEND_RKEY_MAX];

	if (chan == NULL || pend_redis_args(&a, key, sid, id, NULL,
	    pend_redis_lua[PEND_ASK]) == 0)
		return;
	redis_args_push(&a, chan);
	redis_args_push_u64(&a, ttl_ms > 0 ? ttl_ms : 1);
	if (redis_send(&a, pend_redis_on_write,
	    "an input request not recorded") == NULL)
		redis_failed(REDIS_USER_PEND, "an input request not recorded",
		    NULL, "not connected");
}

int
pend_redis_answer(const char *sid, const char *id, const char *ans,
    size_t alen, void (*done)(void *, int), void *arg)
{
	struct redis_args	 a;
	char			 key[PEND_RKEY_MAX];
	size_t			 klen;

	klen = pend_redis_args(&a, key, sid, id, NULL,
	    pend_redis_lua[PEND_ANSWER]);
	redis_args_pushn(&a, ans, alen);
	redis_args_push(&a, id);
	return pend_redis_send(&a, klen, pend_redis_on_answer,
	    pend_take_new(NULL, done, arg));
}

int
pend_redis_take_answer(const char *sid, const char *id, pend_taken_cb cb,
    void *arg)
{
	struct redis_args	 a;
	char			 key[PEND_RKEY_MAX];
	size_t			 klen;

	klen = pend_redis_args(&a, key, sid, id, NULL,
	    pend_redis_lua[PEND_TAKE]);
	return pend_redis_send(&a, klen, pend_redis_on_take,
	    pend_take_new(cb, NULL, arg));
}
