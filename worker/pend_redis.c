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
#include "redis.h"
#include "worker.h"
#include "pend_redis.h"

static struct {
	struct worker	*pr_w;
	int		 pr_on;
	time_t		 pr_logged;
} PR;

void
pend_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	PR.pr_w = w;
	PR.pr_on = 1;
}

int
pend_redis_on(void)
{
	return PR.pr_on;
}

/* a failure, logged a line a second at most */
static void
pend_redis_failed(const char *what, const redisReply *reply, const char *err)
{
	if (err == NULL && reply != NULL && reply->type == REDIS_REPLY_ERROR)
		err = reply->str;
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

int
pend_redis_take(const char *sid, const char *id, pend_taken_cb cb, void *arg)
{
	struct pend_take	*pt;
	const char		*argv[2];
	size_t			 lens[2];
	char			 key[PEND_RKEY_MAX];

	if ((lens[1] = pend_redis_key(key, sizeof(key),
	    PR.pr_w->w_conf->cf_sstore.css_prefix, sid, id)) == 0 ||
	    (pt = calloc(1, sizeof(*pt))) == NULL)
		return -1;
	argv[0] = "GETDEL";
	argv[1] = key;
	lens[0] = 6;
	pt->pt_cb = cb;
	pt->pt_arg = arg;
	if (redis_command(2, argv, lens, pend_redis_on_take, pt) == NULL) {
		free(pt);
		pend_redis_failed("a pending request not read", NULL,
		    "not connected");
		return -1;
	}
	return 0;
}
