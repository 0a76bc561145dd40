/*
 * Legacy sessions in Redis (sessionStorage.provider redis), the
 * worker's side (the pure parts are session_redis_codec.c; the design in
 * docs/ARCHITECTURE.md, Beyond one host): the writes that follow each
 * store write of a session (session.c), initialize's and DELETE's
 * waits, and the check that runs before a Legacy request with
 * Mcp-Session-Id goes on.  The check's read is tracked (Redis's
 * client-side caching, worker/redis/redis_sub.h): until Redis says the key was
 * written, the stamp it answered is trusted (worker/redis/redis_tracking.h), and a
 * request whose host copy carries that stamp goes on without asking.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "worker/http/httpd.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_sub.h"
#include "worker/process/request_hold.h"
#include "worker/redis/redis_tracking.h"
#include "proto/proto.h"
#include "proto/headers.h"
#include "proto/http_req.h"
#include "worker/http/http_reply.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/state/session_redis.h"
#include "worker/state/stream_redis.h"


static const struct session_store session_store_redis;

static struct {
	struct worker	*sr_w;
	int		 sr_on;
	struct rtrack	*sr_track;	/* NULL: every request checked */
	char		 sr_kpfx[SESSION_RKEY_MAX];	/* "<prefix>sess:" */
	size_t		 sr_kpfxlen;
} SR;

/* Redis: a session's key was written, or every key (NULL) */
static void
session_redis_on_inval(const char *key, size_t len)
{
	diag_count_session_inval(SR.sr_w);
	if (key == NULL)
		rtrack_flush(SR.sr_track);
	else if (len > SR.sr_kpfxlen &&
	    memcmp(key, SR.sr_kpfx, SR.sr_kpfxlen) == 0)
		rtrack_invalidate(SR.sr_track, key + SR.sr_kpfxlen,
		    len - SR.sr_kpfxlen);
}

static void
session_redis_on_track(int on)
{
	rtrack_set_on(SR.sr_track, on);
}

void
session_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	SR.sr_w = w;
	SR.sr_on = 1;
	session_store = &session_store_redis;
	(void)redis_script_add(session_redis_put_lua);
	(void)redis_script_add(session_redis_get_lua);
	stream_redis_init(w);
	/* without the table (no memory), every request asks Redis */
	SR.sr_kpfxlen = redis_key(SR.sr_kpfx, sizeof(SR.sr_kpfx),
	    w->w_conf->cf_sstore.css_prefix, REDIS_KIND_SESSION, "", NULL);
	if (SR.sr_kpfxlen == 0 ||
	    (SR.sr_track = malloc(sizeof(*SR.sr_track))) == NULL)
		return;
	rtrack_init(SR.sr_track);
	redis_track_init(session_redis_on_inval, session_redis_on_track);
}

int
session_redis_on(void)
{
	return SR.sr_on;
}

/*
 * session_store's put: the host's copy carries no stamp until a read
 * fetches it back (a copy is only used with the stamp Redis holds),
 * and the record follows to Redis, not waited for; a new one is sent
 * by its initialize (ss_publish), which waits for it.
 */
static int
session_redis_store_put(struct store *st, const struct session *s,
    uint64_t ttl_ms, uint64_t now_ms, const struct store_limit *lim)
{
	struct session	 t = *s;
	char		*buf;
	size_t		 len;
	int		 rc;

	t.s_rstamp = 0;
	if (session_encode(&t, &buf, &len) == -1)
		return -1;
	rc = session_write(st, &t, buf, len, ttl_ms, now_ms, lim);
	if (rc == 0 && lim == NULL)
		session_redis_put(s->s_id, buf, len,
		    session_expiry(s, ttl_ms), now_ms, 0);
	free(buf);
	return rc;
}

static int
session_redis_store_delete(struct store *st, const char *id)
{
	session_redis_del(id);
	return session_store_lmdb.ss_delete(st, id);
}

static const struct session_store session_store_redis = {
	session_redis_store_put,
	session_redis_store_delete,
	session_redis_create,
	session_redis_del_wait,
	session_redis_sync
};

/* a failure, logged a line a second at most */
void
session_redis_failed(const void *what, const redisReply *reply,
    const char *err)
{
	redis_failed(REDIS_USER_SESSION, what, reply, err);
}

/* a write's answer (arg: what failed, if it did) */
static void
session_redis_on_write(void *arg, const redisReply *reply, const char *err)
{
	if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_INTEGER)
		session_redis_failed(arg, reply, err);
}

/*
 * The write that follows this host's: not waited for (the request
 * that made it goes on).  Lost (Redis down), the next read on any node
 * takes Redis's record, which lacks the change: a backend session
 * recorded is opened again, a touch is made up by the next one.
 */
static struct redis_cmd *
session_redis_send_put(const char *id, const char *rec, size_t rlen,
    uint64_t expires_ms, uint64_t now_ms, int create, redis_cb cb, void *arg)
{
	struct redis_args	 a;
	char			 key[SESSION_RKEY_MAX];
	size_t			 klen;

	klen = redis_key(key, sizeof(key),
	    SR.sr_w->w_conf->cf_sstore.css_prefix, REDIS_KIND_SESSION, id,
	    NULL);
	if (session_redis_put_args(&a, key, klen, rec, rlen, expires_ms,
	    now_ms, create) == -1)
		return NULL;
	return redis_send(&a, cb, arg);
}

void
session_redis_put(const char *id, const char *rec, size_t rlen,
    uint64_t expires_ms, uint64_t now_ms, int create)
{
	if (session_redis_send_put(id, rec, rlen, expires_ms, now_ms, create,
	    session_redis_on_write, "a session not written") == NULL)
		session_redis_failed("a session not written", NULL,
		    "not connected");
}

/* DEL of a session: its record and its events (stream_redis.h) */
struct session_rdel {
	struct redis_args sd_args;
	char		 sd_key[SESSION_RKEY_MAX];
	char		 sd_ev[SESSION_RKEY_MAX];
	char		 sd_seq[SESSION_RKEY_MAX];
};

static int
session_redis_del_args(struct session_rdel *d, const char *id)
{
	const char	*prefix = SR.sr_w->w_conf->cf_sstore.css_prefix;
	size_t		 klen, evlen, seqlen;

	if ((klen = redis_key(d->sd_key, sizeof(d->sd_key), prefix,
	    REDIS_KIND_SESSION, id, NULL)) == 0 ||
	    (evlen = stream_redis_keys(d->sd_ev, d->sd_seq, sizeof(d->sd_ev),
	    prefix, id, "", &seqlen)) == 0)
		return -1;
	redis_args_init(&d->sd_args);
	redis_args_push(&d->sd_args, "DEL");
	redis_args_pushn(&d->sd_args, d->sd_key, klen);
	redis_args_pushn(&d->sd_args, d->sd_ev, evlen);
	redis_args_pushn(&d->sd_args, d->sd_seq, seqlen);
	return 0;
}

/* initialize's and DELETE's wait for Redis to have done it */
struct session_cwait {
	TAILQ_ENTRY(session_cwait)	 cw_entry;
	struct redis_cmd		*cw_cmd;
	void				(*cw_done)(void *, int);
	void				*cw_arg;
};

static TAILQ_HEAD(, session_cwait) session_cwaits =
    TAILQ_HEAD_INITIALIZER(session_cwaits);

static void
session_redis_on_wait(void *arg, const redisReply *reply, const char *err)
{
	struct session_cwait	*cw = arg;
	int			 ok;

	/* the put answers its stamp (> 0), DEL how many it deleted */
	ok = err == NULL && reply != NULL &&
	    reply->type == REDIS_REPLY_INTEGER && reply->integer >= 0;
	if (!ok)
		session_redis_failed("a session not written or deleted",
		    reply, err);
	/* off the list first: done may free what waits */
	TAILQ_REMOVE(&session_cwaits, cw, cw_entry);
	cw->cw_done(cw->cw_arg, ok ? 0 : -1);
	free(cw);
}

int
session_redis_create(const struct session *s, uint64_t ttl_ms,
    uint64_t now_ms, void (*done)(void *, int), void *arg)
{
	struct session_cwait	*cw;
	char			*buf = NULL;
	size_t			 len;

	if (session_encode(s, &buf, &len) == -1 ||
	    (cw = calloc(1, sizeof(*cw))) == NULL) {
		free(buf);
		return -1;
	}
	cw->cw_done = done;
	cw->cw_arg = arg;
	cw->cw_cmd = session_redis_send_put(s->s_id, buf, len,
	    session_expiry(s, ttl_ms), now_ms, 1, session_redis_on_wait, cw);
	free(buf);
	if (cw->cw_cmd == NULL) {
		free(cw);
		session_redis_failed("a new session not written", NULL,
		    "not connected");
		return -1;
	}
	TAILQ_INSERT_TAIL(&session_cwaits, cw, cw_entry);
	return 0;
}

/* the end of a session in Redis; done(arg, 0) once it is gone there */
int
session_redis_del_wait(const char *id, void (*done)(void *, int), void *arg)
{
	struct session_cwait	*cw;
	struct session_rdel	 d;

	if (session_redis_del_args(&d, id) == -1 ||
	    (cw = calloc(1, sizeof(*cw))) == NULL)
		return -1;
	cw->cw_done = done;
	cw->cw_arg = arg;
	if ((cw->cw_cmd = redis_send(&d.sd_args, session_redis_on_wait,
	    cw)) == NULL) {
		free(cw);
		session_redis_failed("a session not deleted", NULL,
		    "not connected");
		return -1;
	}
	TAILQ_INSERT_TAIL(&session_cwaits, cw, cw_entry);
	return 0;
}

void
session_redis_cancel(void *arg)
{
	struct session_cwait *cw, *next;

	for (cw = TAILQ_FIRST(&session_cwaits); cw != NULL; cw = next) {
		next = TAILQ_NEXT(cw, cw_entry);
		if (cw->cw_arg == arg) {
			redis_cancel(cw->cw_cmd);
			TAILQ_REMOVE(&session_cwaits, cw, cw_entry);
			free(cw);
		}
	}
}

void
session_redis_del(const char *id)
{
	struct session_rdel	 d;

	if (session_redis_del_args(&d, id) == -1)
		return;
	if (redis_send(&d.sd_args, session_redis_on_write,
	    "a session not deleted") == NULL)
		session_redis_failed("a session not deleted", NULL,
		    "not connected");
}

/*
 * A request waiting for the stamp check.  It is held (a draining
 * worker waits for it) and goes on, or is answered, when Redis
 * answers (in 1 s at most: worker/redis/redis.c's timeout).
 */
struct session_sync {
	struct reqhold		 ss_hold;	/* worker, request, gone */
	session_cont_fn		 ss_cont;
	struct redis_cmd	*ss_cmd;
	uint64_t		 ss_ticket;	/* rtrack's */
	int			 ss_tracked;	/* the read is */
	char			 ss_id[SESSION_ID_LEN + 1];
};

static void
session_sync_unavailable(struct httpd_req *req)
{
	front_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT, SESSION_REDIS_DOWN);
}

/* Redis's record becomes this host's copy: 0, or -1 */
static int
session_sync_copy(struct worker *w, const char *id, uint64_t stamp,
    const char *rec, size_t rlen)
{
	struct session	 s;
	int		 rc;

	if (session_decode(rec, rlen, &s) == -1) {
		log_warnx("session %.8s... in redis is corrupt; ignoring it",
		    id);
		return -1;
	}
	(void)snprintf(s.s_id, sizeof(s.s_id), "%s", id);
	s.s_rstamp = stamp;
	rc = session_put_copy(w->w_store, &s, w->w_conf->cf_session_ttl_ms,
	    store_now_ms());
	session_clear(&s);
	return rc;
}

static void
session_sync_on_redis(void *arg, const redisReply *reply, const char *err)
{
	struct session_sync	*ss = arg;
	struct worker		*w = ss->ss_hold.rh_w;
	struct httpd_req	*req = ss->ss_hold.rh_req;
	const char		*rec = NULL;
	size_t			 rlen = 0;
	uint64_t		 stamp = 0;
	int			 go = 0;

	reqhold_detach(&ss->ss_hold);
	switch (err != NULL ? SESSION_R_ERROR :
	    session_redis_verdict(reply, &stamp, &rec, &rlen)) {
	case SESSION_R_SAME:
		go = 1;
		if (ss->ss_tracked)
			(void)rtrack_answer(SR.sr_track, ss->ss_id,
			    ss->ss_ticket, stamp);
		break;
	case SESSION_R_NEW:
		if (session_sync_copy(w, ss->ss_id, stamp, rec, rlen) == 0) {
			go = 1;
			if (ss->ss_tracked)
				(void)rtrack_answer(SR.sr_track, ss->ss_id,
				    ss->ss_ticket, stamp);
			break;
		}
		/* a corrupt record is no session */
		/* FALLTHROUGH */
	case SESSION_R_GONE:
		/* ended elsewhere (DELETE, expiry): so here too */
		session_copy_gone(w->w_store, ss->ss_id, store_now_ms());
		go = 1;
		break;
	case SESSION_R_ERROR:
		session_redis_failed("a session not read", reply, err);
		break;
	}
	if (ss->ss_hold.rh_gone || !go)
		session_sync_unavailable(req);
	else
		ss->ss_cont(w, req);
	free(ss);
	worker_request_release(w, __func__);
}

int
session_redis_sync(struct worker *w, struct httpd_req *req,
    session_cont_fn cont)
{
	struct session_sync	*ss;
	const char		*sid;
	struct redis_args	 a;
	char			 key[SESSION_RKEY_MAX];
	size_t			 klen;
	uint64_t		 have = 0;

	/* no Redis; no session named, or one that can't be:
	 * legacy_session() says */
	if (!SR.sr_on || (sid = httpd_req_known(req,
	    HTTP_H_MCP_SESSION_ID)) == NULL || !proto_session_id_valid(sid))
		return SESSION_SYNC_GO;
	have = session_copy_stamp(w->w_store, sid, store_now_ms());
	/*
	 * Redis holds this copy's stamp as far as its invalidations say,
	 * and it answered lately (a hung Redis sends none)
	 */
	if (SR.sr_track != NULL && rtrack_trusted(SR.sr_track, sid, have) &&
	    redis_fresh(REDIS_FRESH_MS)) {
		diag_count_session_check(w, 0);
		return SESSION_SYNC_GO;
	}
	klen = redis_key(key, sizeof(key), w->w_conf->cf_sstore.css_prefix,
	    REDIS_KIND_SESSION, sid, NULL);
	redis_args_evalsha(&a, session_redis_get_lua, 1);
	redis_args_pushn(&a, key, klen);
	redis_args_push_u64(&a, have);
	if (klen == 0 || (ss = calloc(1, sizeof(*ss))) == NULL) {
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return SESSION_SYNC_LATER;
	}
	ss->ss_cont = cont;
	(void)snprintf(ss->ss_id, sizeof(ss->ss_id), "%s", sid);
	diag_count_session_check(w, 1);
	if (SR.sr_track != NULL && strlen(sid) < sizeof(ss->ss_id)) {
		ss->ss_ticket = rtrack_ticket(SR.sr_track);
		ss->ss_cmd = redis_send_tracked(&a, session_sync_on_redis, ss,
		    &ss->ss_tracked);
	} else
		ss->ss_cmd = redis_send(&a, session_sync_on_redis, ss);
	if (ss->ss_cmd == NULL) {
		free(ss);
		session_redis_failed("a session not read", NULL,
		    "not connected");
		session_sync_unavailable(req);
		return SESSION_SYNC_LATER;
	}
	reqhold_attach(&ss->ss_hold, w, req);
	return SESSION_SYNC_LATER;
}
