/*
 * Pending relayed requests in Redis (sessionStorage.provider redis), the
 * worker's side (the pure parts are pend_rcodec.c; the design in
 * docs/ARCHITECTURE.md, Beyond one host): the record written beside the
 * host's when vmcpd relays a backend's request to a Legacy client, and
 * taken by the node the client's answer reaches.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "httpd.h"
#include "redis.h"
#include "worker.h"
#include "pend_redis.h"
#include "session_redis.h"

static struct {
	struct worker	*pr_w;
	int		 pr_on;
	time_t		 pr_logged;
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

/* a failure, logged a line a second at most */
static void
pend_redis_failed(const char *what, const redisReply *reply, const char *err)
{
	if (err == NULL && reply != NULL && reply->type == REDIS_REPLY_ERROR) {
		err = reply->str;
		/* flushed (SCRIPT FLUSH): loaded again on reconnect */
		if (strncmp(err, "NOSCRIPT", 8) == 0)
			redis_reconnect();
	}
	diag_count_redis_error(PR.pr_w);
	if (time(NULL) != PR.pr_logged) {
		PR.pr_logged = time(NULL);
		log_warnx("pending requests (redis): %s: %s", what,
		    err != NULL ? err : "an answer not understood");
	}
}

static void
pend_redis_on_write(void *arg, const redisReply *reply, const char *err)
{
	if (err != NULL || reply == NULL || reply->type == REDIS_REPLY_ERROR)
		pend_redis_failed(arg, reply, err);
}

void
pend_redis_put(const char *sid, const char *id, const char *rec, size_t len,
    uint64_t ttl_ms)
{
	const char	*argv[5];
	size_t		 lens[5];
	char		 key[PEND_RKEY_MAX], ttl[24];

	if ((lens[1] = pend_redis_key(key, sizeof(key),
	    PR.pr_w->w_conf->cf_sstore.css_prefix, sid, id)) == 0)
		return;
	(void)snprintf(ttl, sizeof(ttl), "%" PRIu64, ttl_ms > 0 ? ttl_ms : 1);
	argv[0] = "SET";
	argv[1] = key;
	argv[2] = rec;
	argv[3] = "PX";
	argv[4] = ttl;
	lens[0] = 3;
	lens[2] = len;
	lens[3] = 2;
	lens[4] = strlen(ttl);
	if (redis_command(5, argv, lens, pend_redis_on_write,
	    "a pending request not written") == NULL)
		pend_redis_failed("a pending request not written", NULL,
		    "not connected");
}

void
pend_redis_del(const char *sid, const char *id)
{
	const char	*argv[2];
	size_t		 lens[2];
	char		 key[PEND_RKEY_MAX];

	if ((lens[1] = pend_redis_key(key, sizeof(key),
	    PR.pr_w->w_conf->cf_sstore.css_prefix, sid, id)) == 0)
		return;
	argv[0] = "DEL";
	argv[1] = key;
	lens[0] = 3;
	if (redis_command(2, argv, lens, pend_redis_on_write,
	    "a pending request not deleted") == NULL)
		pend_redis_failed("a pending request not deleted", NULL,
		    "not connected");
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
		pend_redis_failed("a pending request not read", reply, err);
	pt->pt_cb(pt->pt_arg, rec, len, rc == -1 ? -1 : 0);
	free(pt);
}

static void
pend_redis_on_answer(void *arg, const redisReply *reply, const char *err)
{
	struct pend_take	*pt = arg;
	int			 rc = -2;

	if (err != NULL || (rc = pend_redis_answered(reply)) == -2)
		pend_redis_failed("an answer not recorded", reply, err);
	pt->pt_done(pt->pt_arg, rc);
	free(pt);
}

/*
 * A command on the record's key (argv[1], or argv[3] for EVALSHA)
 * whose answer goes to pt: 0, or -1 (not sent, pt freed).
 */
static int
pend_redis_send(const char *sid, const char *id, int argc, const char **argv,
    size_t *lens, int keyarg, redis_cb cb, struct pend_take *pt)
{
	char key[PEND_RKEY_MAX];

	if (pt == NULL)
		return -1;
	if ((lens[keyarg] = pend_redis_key(key, sizeof(key),
	    PR.pr_w->w_conf->cf_sstore.css_prefix, sid, id)) == 0) {
		free(pt);
		return -1;
	}
	argv[keyarg] = key;
	if (redis_command(argc, argv, lens, cb, pt) == NULL) {
		free(pt);
		pend_redis_failed("a pending request not read or answered",
		    NULL, "not connected");
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
	const char	*argv[2] = { "GETDEL", NULL };
	size_t		 lens[2] = { 6, 0 };

	return pend_redis_send(sid, id, 2, argv, lens, 1, pend_redis_on_take,
	    pend_take_new(cb, NULL, arg));
}

/* EVALSHA <script> 1 <key> args...: argv[0..2] set here */
static void
pend_redis_evalsha(const char **argv, size_t *lens, enum pend_script which)
{
	argv[0] = "EVALSHA";
	lens[0] = 7;
	argv[1] = pend_redis_sha(which);
	lens[1] = strlen(argv[1]);
	argv[2] = "1";
	lens[2] = 1;
}

void
pend_redis_ask(const char *sid, const char *id, uint64_t ttl_ms)
{
	const char	*argv[6], *chan = redis_sub_channel();
	size_t		 lens[6];
	char		 key[PEND_RKEY_MAX], ttl[24];

	if (chan == NULL || (lens[3] = pend_redis_key(key, sizeof(key),
	    PR.pr_w->w_conf->cf_sstore.css_prefix, sid, id)) == 0)
		return;
	pend_redis_evalsha(argv, lens, PEND_ASK);
	(void)snprintf(ttl, sizeof(ttl), "%" PRIu64, ttl_ms > 0 ? ttl_ms : 1);
	argv[3] = key;
	argv[4] = chan;
	lens[4] = strlen(chan);
	argv[5] = ttl;
	lens[5] = strlen(ttl);
	if (redis_command(6, argv, lens, pend_redis_on_write,
	    "an input request not recorded") == NULL)
		pend_redis_failed("an input request not recorded", NULL,
		    "not connected");
}

int
pend_redis_answer(const char *sid, const char *id, const char *ans,
    size_t alen, void (*done)(void *, int), void *arg)
{
	const char	*argv[6];
	size_t		 lens[6];

	pend_redis_evalsha(argv, lens, PEND_ANSWER);
	argv[4] = ans;
	lens[4] = alen;
	argv[5] = id;
	lens[5] = strlen(id);
	return pend_redis_send(sid, id, 6, argv, lens, 3,
	    pend_redis_on_answer, pend_take_new(NULL, done, arg));
}

int
pend_redis_take_answer(const char *sid, const char *id, pend_taken_cb cb,
    void *arg)
{
	const char	*argv[4];
	size_t		 lens[4];

	pend_redis_evalsha(argv, lens, PEND_TAKE);
	return pend_redis_send(sid, id, 4, argv, lens, 3, pend_redis_on_take,
	    pend_take_new(cb, NULL, arg));
}
