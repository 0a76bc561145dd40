/*
 * Rate limits: a tools/call takes one token from each bucket that
 * applies to it (the server's shared and per-user ones, and the tool's),
 * all in one store write txn or none (shared/store_bucket.c), or with
 * sessionStorage.provider redis in one Redis script shared by every
 * node (worker/auth/ratelimit_redis.c).  Per user
 * means per principal scope (worker/auth/auth.h); an anonymous caller has no
 * per-user bucket, as in the reference vMCP.  A store error (Redis
 * down, slow, refusing) fails open: a limit is not worth refusing
 * service over (logged at most once a second, counted in /metrics as
 * vmcpd_ratelimit_fail_open_total).
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "proto/method.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "worker/auth/ratelimit.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

size_t
ratelimit_key(uint8_t *buf, size_t buflen, char kind, const char *scope,
    const char *tool, size_t toollen)
{
	size_t	 n = 0, slen = scope != NULL ? strlen(scope) : 0;

	if (2 + slen + 2 + toollen > buflen || toollen > 0xffff ||
	    slen > 0xff)
		return 0;
	buf[n++] = (uint8_t)kind;
	/* the scope's length too, though it is fixed: no reliance on it */
	buf[n++] = (uint8_t)slen;
	memcpy(buf + n, scope != NULL ? scope : "", slen);
	n += slen;
	if (kind == 'T' || kind == 'V') {
		buf[n++] = (uint8_t)(toollen >> 8);
		buf[n++] = (uint8_t)toollen;
		memcpy(buf + n, tool, toollen);
		n += toollen;
	}
	return n;
}

/*
 * Leases: a bucket every call of a worker writes would cost a store
 * write txn per call, so a worker takes its tokens in batches, a 64th
 * of what the bucket holds (1 when it holds less than 128), and spends
 * them without a store txn.  Tokens are only ever taken from the
 * bucket, so no more calls go through than it admits; a lease unused
 * for a second is dropped (those tokens are lost, at most a 64th of the
 * bucket per worker), and near empty the batch is 1, so a small limit
 * is exact.  On one host this holds for every bucket, shared or per
 * user (a generous per-user limit costs no txn per call either); a
 * call takes a lease only when the table has a slot for it, else its
 * buckets are exact.  With Redis, only shared buckets are leased
 * (ratelimit_redis()).
 *
 * The table is open-addressed: a key's slot is among the
 * RATELIMIT_LEASE_PROBE after its hash's, a slot free when empty or
 * its lease dropped.
 */
#define RATELIMIT_LEASE_DIV	64
#define RATELIMIT_LEASE_MS	1000
#define RATELIMIT_LEASES	256	/* power of two */
#define RATELIMIT_LEASE_PROBE	8

struct ratelimit_lease {
	uint8_t		 rl_key[RATELIMIT_KEY_MAX];
	size_t		 rl_klen;
	uint64_t	 rl_tokens;
	uint64_t	 rl_until_ms;	/* dropped from then on */
};

static struct ratelimit_lease	 leases[RATELIMIT_LEASES];

/* FNV-1a: keys are the config's and digests', not a caller's choice */
static size_t
ratelimit_lease_hash(const void *key, size_t klen)
{
	const uint8_t	*k = key;
	uint32_t	 h = 2166136261u;
	size_t		 i;

	for (i = 0; i < klen; i++)
		h = (h ^ k[i]) * 16777619u;
	return h & (RATELIMIT_LEASES - 1);
}

/* the lease of a bucket by its key (the store's, or Redis's) */
static struct ratelimit_lease *
ratelimit_lease_find(const void *key, size_t klen, uint64_t now_ms,
    int create)
{
	struct ratelimit_lease	*l, *free_l = NULL;
	size_t			 i, h;

	if (klen == 0 || klen > sizeof(l->rl_key))
		return NULL;
	h = ratelimit_lease_hash(key, klen);
	for (i = 0; i < RATELIMIT_LEASE_PROBE; i++) {
		l = &leases[(h + i) & (RATELIMIT_LEASES - 1)];
		if (l->rl_klen == klen && memcmp(l->rl_key, key, klen) == 0)
			return l;
		if (free_l == NULL && (l->rl_klen == 0 ||
		    l->rl_until_ms <= now_ms))
			free_l = l;
	}
	if (!create || free_l == NULL)
		return NULL;
	memcpy(free_l->rl_key, key, klen);
	free_l->rl_klen = klen;
	free_l->rl_tokens = 0;
	free_l->rl_until_ms = 0;
	return free_l;
}

/* the lease of a key with tokens left (a dropped one has none to spend) */
static struct ratelimit_lease *
ratelimit_lease_live(const void *key, size_t klen, uint64_t now_ms)
{
	struct ratelimit_lease *l;

	if ((l = ratelimit_lease_find(key, klen, now_ms, 0)) == NULL ||
	    l->rl_until_ms <= now_ms)
		return NULL;	/* dropped: its tokens wait to go back */
	return l->rl_tokens > 0 ? l : NULL;
}

/* tokens of a live lease spent: one in use is kept, dropped only a
 * second after its last use */
static void
ratelimit_lease_spend(struct ratelimit_lease *l, uint64_t count,
    uint64_t now_ms)
{
	l->rl_tokens -= count;
	l->rl_until_ms = now_ms + RATELIMIT_LEASE_MS;
}

/*
 * With Redis the same holds for a call whose buckets are all shared:
 * the script takes the lease with a batch it grants whole (a 64th of
 * what each bucket holds beyond it, none below 64), which lets the
 * worker's next calls on those buckets go on without asking Redis.
 * Leasing count tokens of each of n buckets: 1 (taken) or 0 (not all
 * held: none taken).
 */
static int
ratelimit_lease_take(size_t n, char keys[][RATELIMIT_RKEY_MAX],
    const size_t *klen, uint64_t count, uint64_t now_ms)
{
	struct ratelimit_lease	*l[RATELIMIT_BUCKETS];
	size_t			 i;

	for (i = 0; i < n; i++)
		if ((l[i] = ratelimit_lease_live(keys[i], klen[i],
		    now_ms)) == NULL || l[i]->rl_tokens < count)
			return 0;
	for (i = 0; i < n; i++)
		ratelimit_lease_spend(l[i], count, now_ms);
	return 1;
}

/* the lease the script took for n buckets: each one's */
static void
ratelimit_lease_add(size_t n, char keys[][RATELIMIT_RKEY_MAX],
    const size_t *klen, uint64_t tokens, uint64_t now_ms)
{
	struct ratelimit_lease	*l;
	size_t			 i;

	for (i = 0; i < n; i++) {
		/* no slot: those tokens are lost, as an unused lease's */
		if ((l = ratelimit_lease_find(keys[i], klen[i], now_ms,
		    1)) == NULL)
			continue;
		if (l->rl_until_ms <= now_ms)
			l->rl_tokens = 0;
		l->rl_tokens += tokens;
		l->rl_until_ms = now_ms + RATELIMIT_LEASE_MS;
	}
}

/*
 * A slot for the lease a take may bring the bucket of key (held for the
 * take: no other bucket of the call gets it), or NULL: no lease, exact.
 * *back: the tokens a lease of key dropped unspent left in the slot, to
 * give back to the bucket with the take (those tokens are lost only if
 * the slot goes to another key first).
 */
static struct ratelimit_lease *
ratelimit_lease_reserve(const void *key, size_t klen, uint64_t now_ms,
    uint64_t *back)
{
	struct ratelimit_lease *l;

	*back = 0;
	if ((l = ratelimit_lease_find(key, klen, now_ms, 1)) == NULL)
		return NULL;
	*back = l->rl_tokens;	/* not live: dropped, or none */
	l->rl_until_ms = now_ms + RATELIMIT_LEASE_MS;
	return l;
}

/* the take is over (taken: its tokens, 0 if it failed): the new lease,
 * or the slot free again (what it held given back, or kept if not) */
static void
ratelimit_lease_settle(struct ratelimit_lease *l, int ok, uint64_t taken,
    uint64_t now_ms)
{
	if (l == NULL)
		return;
	if (ok)
		l->rl_tokens = taken > 1 ? taken - 1 : 0;
	l->rl_until_ms = l->rl_tokens > 0 && ok ? now_ms + RATELIMIT_LEASE_MS :
	    0;
}

/* the reference's figure is whole seconds, at least 1 */
static void
ratelimit_retry_s(uint64_t retry_ms, unsigned int *retry_s)
{
	*retry_s = (unsigned int)((retry_ms + 999) / 1000);
	if (*retry_s == 0)
		*retry_s = 1;
}

/* a bucket a call is subject to: its kind and its limit */
struct ratelimit_spec {
	char				 rs_kind;
	const struct config_bucket	*rs_cb;
};

/* the buckets a call of tool by scope (NULL: anonymous) is subject to */
static size_t
ratelimit_specs(const struct config_ratelimit *rl, const char *scope,
    const char *tool, size_t len, int server, struct ratelimit_spec *sp)
{
	const struct config_tool_limit	*t;
	const struct config_bucket	*cb[RATELIMIT_BUCKETS];
	const char			 kinds[] = "SUTV";
	size_t				 i, n = 0;

	/* a composite's step: the caller's per-user bucket and its tool's,
	 * as a direct call; the server's shared one is admission, which the
	 * composite's own call took */
	cb[0] = server ? &rl->crl_shared : NULL;
	cb[1] = &rl->crl_per_user;
	cb[2] = cb[3] = NULL;
	for (i = 0; i < rl->crl_ntools; i++) {
		t = &rl->crl_tools[i];
		if (strlen(t->ctl_name) == len &&
		    memcmp(t->ctl_name, tool, len) == 0) {
			cb[2] = &t->ctl_shared;
			cb[3] = &t->ctl_per_user;
			break;
		}
	}
	for (i = 0; i < RATELIMIT_BUCKETS; i++) {
		if (cb[i] == NULL || cb[i]->cb_max == 0)
			continue;
		/* anonymous: no per-user bucket */
		if ((kinds[i] == 'U' || kinds[i] == 'V') &&
		    (scope == NULL || *scope == '\0'))
			continue;
		sp[n].rs_kind = kinds[i];
		sp[n++].rs_cb = cb[i];
	}
	return n;
}

static size_t
ratelimit_add(struct store_bucket *b, size_t nb,
    uint8_t keys[][RATELIMIT_KEY_MAX], const struct ratelimit_spec *sp,
    const char *scope, const char *tool, size_t len)
{
	size_t klen;

	if (nb >= STORE_BUCKETS_MAX)
		return nb;
	if ((klen = ratelimit_key(keys[nb], RATELIMIT_KEY_MAX, sp->rs_kind,
	    scope, tool, len)) == 0)
		return nb;
	b[nb].sb_key = keys[nb];
	b[nb].sb_klen = klen;
	b[nb].sb_max = sp->rs_cb->cb_max;
	b[nb].sb_period_ms = sp->rs_cb->cb_period_ms;
	b[nb].sb_lease = 0;	/* ratelimit_take(): if a slot is free */
	b[nb].sb_return = 0;
	return nb + 1;
}

/* a limit not enforced because its store failed: logged, counted */
static void
ratelimit_fail_open(struct worker *w, const char *why)
{
	static time_t	 warned;
	time_t		 now;

	diag_count_ratelimit_fail_open(w);
	if ((now = time(NULL)) != warned) {
		warned = now;
		log_warnx("rate limit: %s (call let through)", why);
	}
}

static enum ratelimit_verdict
ratelimit_take(struct worker *w, const struct principal *p,
    const char *tool, size_t len, int server, unsigned int *retry_s)
{
	const struct config_ratelimit	*rl = &w->w_conf->cf_ratelimit;
	struct ratelimit_spec		 sp[RATELIMIT_BUCKETS];
	struct store_bucket		 b[RATELIMIT_BUCKETS];
	struct store_bucket		 take[RATELIMIT_BUCKETS];
	struct ratelimit_lease		*held[RATELIMIT_BUCKETS];
	struct ratelimit_lease		*slot[RATELIMIT_BUCKETS];
	uint8_t				 keys[RATELIMIT_BUCKETS]
					    [RATELIMIT_KEY_MAX];
	uint64_t			 now_ms;
	size_t				 nt, ns;
	const char			*scope = p != NULL ? p->p_scope : NULL;
	uint64_t			 retry_ms;
	size_t				 i, nb = 0;
	int				 rc;

	*retry_s = 0;
	if (!rl->crl_enabled)
		return RATELIMIT_OK;
	ns = ratelimit_specs(rl, scope, tool, len, server, sp);
	for (i = 0; i < ns; i++)
		nb = ratelimit_add(b, nb, keys, &sp[i], scope, tool, len);
	/* the buckets this worker holds a token of stay out of the txn; the
	 * others may bring a lease, if a slot is free for it */
	now_ms = store_now_ms();
	for (i = 0, nt = 0; i < nb; i++) {
		held[i] = ratelimit_lease_live(b[i].sb_key, b[i].sb_klen,
		    now_ms);
		if (held[i] != NULL)
			continue;
		take[nt] = b[i];
		slot[nt] = ratelimit_lease_reserve(b[i].sb_key, b[i].sb_klen,
		    now_ms, &take[nt].sb_return);
		take[nt].sb_lease = slot[nt] != NULL ? RATELIMIT_LEASE_DIV : 0;
		nt++;
	}
	rc = store_buckets_take(w->w_store, take, nt, now_ms, &retry_ms);
	/* all or none: the held tokens are spent only now */
	for (i = 0; rc == 0 && i < nb; i++)
		if (held[i] != NULL)
			ratelimit_lease_spend(held[i], 1, now_ms);
	for (i = 0; i < nt; i++)
		ratelimit_lease_settle(slot[i], rc == 0, take[i].sb_taken,
		    now_ms);
	if (rc == 0)
		return RATELIMIT_OK;
	if (rc == STORE_LIMITED) {
		ratelimit_retry_s(retry_ms, retry_s);
		return RATELIMIT_LIMITED;
	}
	if (rc == -1)
		ratelimit_fail_open(w, strerror(errno));
	return RATELIMIT_OK;
}


enum ratelimit_verdict
ratelimit_check(struct worker *w, const struct principal *p,
    const char *tool, size_t len, unsigned int *retry_s)
{
	return ratelimit_take(w, p, tool, len, 1, retry_s);
}

/*
 * Redis: the calls on the same buckets that come while no script on
 * them is in flight (one event-loop turn), or while one is (until its
 * answer), are one batch, and a batch is one EVALSHA asking for as
 * many tokens as it has calls; the script grants as many as the buckets hold, and that
 * many of the batch's calls go on, the first ones, the others are
 * refused: no call goes through without its token and no token is
 * taken without its call (one cancelled meanwhile leaves its token
 * unused, as a call let through and then dropped would).  A batch is
 * sent at the end of the turn (rl.rl_flush, an event made active when
 * the first of its calls comes, so it runs after the others ready in
 * the same turn): the calls a Redis answer resumes, all read at once,
 * come in one turn and go out in one script; a batch on buckets a
 * script is still out for waits for its answer, so under load each
 * bucket set costs one script per round trip, not one per turn (a
 * call waits two round trips at most).  Each call waits, its
 * view held; the answer resumes it through the callback it was on, and
 * its second ratelimit_call() finds the verdict decided (rl_decided).
 */
struct ratelimit_batch;

struct ratelimit_wait {
	TAILQ_ENTRY(ratelimit_wait)	 rw_entry;	/* in its batch */
	struct ratelimit_batch		*rw_batch;
	ratelimit_done_fn		 rw_done;	/* a step's, or */
	ratelimit_resume_fn		 rw_resume;	/* an edge's */
	void				*rw_arg;
	json_t				*rw_view;
};

struct ratelimit_batch {
	TAILQ_ENTRY(ratelimit_batch)	 rb_entry;
	struct worker			*rb_w;
	TAILQ_HEAD(, ratelimit_wait)	 rb_waits;
	struct redis_cmd		*rb_cmd;	/* sent */
	unsigned int			 rb_want;	/* tokens asked */
	unsigned int			 rb_lease_div;	/* 0: no lease */
	int				 rb_sent;	/* in rl_sent */
	int				 rb_busy;	/* answering */
	size_t				 rb_n;
	const struct config_bucket	*rb_cb[RATELIMIT_BUCKETS];
	size_t				 rb_klen[RATELIMIT_BUCKETS];
	char				 rb_keys[RATELIMIT_BUCKETS]
					    [RATELIMIT_RKEY_MAX];
};

TAILQ_HEAD(ratelimit_batches, ratelimit_batch);

static struct {
	struct ratelimit_batches	 rl_open;	/* this turn's */
	struct ratelimit_batches	 rl_sent;
	struct event			*rl_flush;
} rl = {
	TAILQ_HEAD_INITIALIZER(rl.rl_open),
	TAILQ_HEAD_INITIALIZER(rl.rl_sent),
	NULL
};

/* the verdict of the request being resumed (rd_arg) */
static struct {
	void			*rd_arg;
	enum ratelimit_verdict	 rd_verdict;
	unsigned int		 rd_retry_s;
} rl_decided;

static void	ratelimit_on_flush(evutil_socket_t, short, void *);

/* 1 when rb is on these buckets */
static int
ratelimit_batch_is(const struct ratelimit_batch *rb, size_t n,
    const struct config_bucket *const *cb, const size_t *klen,
    char keys[][RATELIMIT_RKEY_MAX])
{
	size_t i;

	if (rb->rb_n != n)
		return 0;
	for (i = 0; i < n; i++)
		if (rb->rb_cb[i] != cb[i] || rb->rb_klen[i] != klen[i] ||
		    memcmp(rb->rb_keys[i], keys[i], klen[i]) != 0)
			return 0;
	return 1;
}

/* a script on rb's buckets is out (sent, not answered yet) */
static int
ratelimit_batch_held(struct ratelimit_batch *rb)
{
	const struct ratelimit_batch *sb;

	TAILQ_FOREACH(sb, &rl.rl_sent, rb_entry)
		if (sb->rb_cmd != NULL && ratelimit_batch_is(sb, rb->rb_n,
		    rb->rb_cb, rb->rb_klen, rb->rb_keys))
			return 1;
	return 0;
}

/*
 * Where the buckets are (sessionStorage.provider), chosen once by
 * ratelimit_init(): this host's store (ratelimit_lmdb(), decided at
 * once), or Redis's (ratelimit_redis(), whose verdict may be PENDING,
 * its wait made from proto).
 */
typedef enum ratelimit_verdict (*ratelimit_take_fn)(struct worker *,
    const struct principal *, const char *, size_t, int, unsigned int *,
    struct ratelimit_wait *, struct ratelimit_wait **);
static enum ratelimit_verdict ratelimit_lmdb(struct worker *,
    const struct principal *, const char *, size_t, int, unsigned int *,
    struct ratelimit_wait *, struct ratelimit_wait **);
static enum ratelimit_verdict ratelimit_redis(struct worker *,
    const struct principal *, const char *, size_t, int, unsigned int *,
    struct ratelimit_wait *, struct ratelimit_wait **);
static ratelimit_take_fn ratelimit_store = ratelimit_lmdb;

void
ratelimit_init(struct worker *w)
{
	if (!w->w_conf->cf_ratelimit.crl_enabled ||
	    w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	ratelimit_store = ratelimit_redis;
	(void)redis_script_add(ratelimit_lua);
	/* none (no memory): the calls fail open */
	rl.rl_flush = event_new(w->w_base, -1, 0, ratelimit_on_flush, NULL);
}

static void
ratelimit_batch_free(struct ratelimit_batch *rb)
{
	TAILQ_REMOVE(rb->rb_sent ? &rl.rl_sent : &rl.rl_open, rb, rb_entry);
	/* its script cancelled: a batch held for its answer goes now */
	if (rb->rb_cmd != NULL && !TAILQ_EMPTY(&rl.rl_open) &&
	    rl.rl_flush != NULL)
		event_active(rl.rl_flush, EV_TIMEOUT, 0);
	redis_cancel(rb->rb_cmd);
	free(rb);
}

static void
ratelimit_wait_free(struct ratelimit_wait *rw)
{
	json_decref(rw->rw_view);
	free(rw);
}

void
ratelimit_free(void)
{
	struct ratelimit_batches	*l[2] = { &rl.rl_open, &rl.rl_sent };
	struct ratelimit_batch		*rb;
	struct ratelimit_wait		*rw;
	size_t				 i;

	for (i = 0; i < 2; i++)
		while ((rb = TAILQ_FIRST(l[i])) != NULL) {
			while ((rw = TAILQ_FIRST(&rb->rb_waits)) != NULL) {
				TAILQ_REMOVE(&rb->rb_waits, rw, rw_entry);
				ratelimit_wait_free(rw);
			}
			ratelimit_batch_free(rb);
		}
	if (rl.rl_flush != NULL)
		event_free(rl.rl_flush);
	rl.rl_flush = NULL;
}

void
ratelimit_wait_cancel(struct ratelimit_wait *rw)
{
	struct ratelimit_batch *rb;

	if (rw == NULL)
		return;
	rb = rw->rw_batch;
	TAILQ_REMOVE(&rb->rb_waits, rw, rw_entry);
	ratelimit_wait_free(rw);
	/* no call left to answer: nothing to send, or to wait for */
	if (TAILQ_EMPTY(&rb->rb_waits) && !rb->rb_busy)
		ratelimit_batch_free(rb);
}

void
ratelimit_cancel(void *arg)
{
	struct ratelimit_batches	*l[2] = { &rl.rl_open, &rl.rl_sent };
	struct ratelimit_batch		*rb, *rbn;
	struct ratelimit_wait		*rw, *rwn;
	size_t				 i;

	for (i = 0; i < 2; i++)
		for (rb = TAILQ_FIRST(l[i]); rb != NULL; rb = rbn) {
			rbn = TAILQ_NEXT(rb, rb_entry);
			for (rw = TAILQ_FIRST(&rb->rb_waits); rw != NULL;
			    rw = rwn) {
				rwn = TAILQ_NEXT(rw, rw_entry);
				/* the last one frees rb, not rbn */
				if (rw->rw_resume != NULL &&
				    rw->rw_arg == arg)
					ratelimit_wait_cancel(rw);
			}
		}
}

/*
 * Answer the batch's calls in order: the first granted ones OK, the
 * others v (LIMITED after retry_s, or OK: failed open).  A call
 * answered may end (cancel) others of the batch: each is taken off
 * the batch before its answer.
 */
static void
ratelimit_batch_answer(struct ratelimit_batch *rb, unsigned int granted,
    enum ratelimit_verdict v, unsigned int retry_s)
{
	struct ratelimit_wait	*rw;
	enum ratelimit_verdict	 vi;

	rb->rb_busy = 1;
	while ((rw = TAILQ_FIRST(&rb->rb_waits)) != NULL) {
		TAILQ_REMOVE(&rb->rb_waits, rw, rw_entry);
		vi = RATELIMIT_OK;
		if (granted > 0)
			granted--;
		else
			vi = v;
		if (rw->rw_done != NULL)
			rw->rw_done(rw->rw_arg, vi, vi == RATELIMIT_LIMITED ?
			    retry_s : 0);
		else {
			rl_decided.rd_arg = rw->rw_arg;
			rl_decided.rd_verdict = vi;
			rl_decided.rd_retry_s = vi == RATELIMIT_LIMITED ?
			    retry_s : 0;
			rw->rw_resume(rw->rw_arg, rw->rw_view, NULL);
			rl_decided.rd_arg = NULL;
		}
		ratelimit_wait_free(rw);
	}
	ratelimit_batch_free(rb);
}

static void
ratelimit_on_redis(void *arg, const struct redisReply *reply,
    const char *err)
{
	struct ratelimit_batch	*rb = arg;
	enum ratelimit_verdict	 v;
	unsigned int		 granted, retry_s = 0;
	uint64_t		 retry_ms, leased;
	char			 why[200];

	rb->rb_cmd = NULL;	/* answered: nothing to cancel */
	/* a batch held for this answer goes at the end of the turn */
	if (!TAILQ_EMPTY(&rl.rl_open))
		event_active(rl.rl_flush, EV_TIMEOUT, 0);
	v = ratelimit_redis_verdict(reply, rb->rb_want, &granted, &retry_ms,
	    &leased);
	if (leased > 0)
		ratelimit_lease_add(rb->rb_n, rb->rb_keys, rb->rb_klen, leased,
		    store_now_ms());
	if (v == RATELIMIT_ERROR) {
		(void)snprintf(why, sizeof(why), "redis: %s",
		    redis_failure(reply, err));
		ratelimit_fail_open(rb->rb_w, why);
		v = RATELIMIT_OK;
	}
	if (v == RATELIMIT_LIMITED)
		ratelimit_retry_s(retry_ms, &retry_s);
	ratelimit_batch_answer(rb, granted, v, retry_s);
}

/* a batch's script sent, or its calls let through (fail open) */
static void
ratelimit_batch_send(struct ratelimit_batch *rb)
{
	struct redis_args	 ra;
	const char		*kp[RATELIMIT_BUCKETS];
	struct ratelimit_wait	*rw;
	size_t			 i;

	rb->rb_want = 0;
	TAILQ_FOREACH(rw, &rb->rb_waits, rw_entry)
		rb->rb_want++;
	for (i = 0; i < rb->rb_n; i++)
		kp[i] = rb->rb_keys[i];
	TAILQ_REMOVE(&rl.rl_open, rb, rb_entry);
	TAILQ_INSERT_TAIL(&rl.rl_sent, rb, rb_entry);
	rb->rb_sent = 1;
	/* a lease taken while it waited (the answer it was held for) */
	if (rb->rb_lease_div != 0 && ratelimit_lease_take(rb->rb_n,
	    rb->rb_keys, rb->rb_klen, rb->rb_want, store_now_ms())) {
		ratelimit_batch_answer(rb, rb->rb_want, RATELIMIT_OK, 0);
		return;
	}
	if (ratelimit_redis_args(&ra, kp, rb->rb_klen, rb->rb_cb, rb->rb_n,
	    rb->rb_want, rb->rb_lease_div) == 0 &&
	    (rb->rb_cmd = redis_send(&ra,
	    ratelimit_on_redis, rb)) != NULL)
		return;
	diag_count_redis_error(rb->rb_w);
	ratelimit_fail_open(rb->rb_w, "redis: not connected");
	ratelimit_batch_answer(rb, 0, RATELIMIT_OK, 0);
}

/*
 * The end of the turn: each batch collected is sent, but for those a
 * script is out for (sent when it is answered).  Sending may answer
 * calls at once (fail open), which may end other batches: the list is
 * looked at again from its start each time.
 */
static void
ratelimit_on_flush(evutil_socket_t fd, short ev, void *arg)
{
	struct ratelimit_batch *rb;

	(void)fd;
	(void)ev;
	(void)arg;
	for (;;) {
		TAILQ_FOREACH(rb, &rl.rl_open, rb_entry)
			if (!ratelimit_batch_held(rb))
				break;
		if (rb == NULL)
			return;
		ratelimit_batch_send(rb);
	}
}

/* the batch open this turn on these buckets, or a new one */
static struct ratelimit_batch *
ratelimit_batch_get(struct worker *w, const struct ratelimit_spec *sp,
    size_t n, char keys[][RATELIMIT_RKEY_MAX], const size_t *klen,
    unsigned int lease_div)
{
	const struct config_bucket	*cb[RATELIMIT_BUCKETS];
	struct ratelimit_batch		*rb;
	size_t				 i;

	for (i = 0; i < n; i++)
		cb[i] = sp[i].rs_cb;
	TAILQ_FOREACH(rb, &rl.rl_open, rb_entry)
		if (ratelimit_batch_is(rb, n, cb, klen, keys))
			return rb;
	if ((rb = calloc(1, sizeof(*rb))) == NULL) {
		ratelimit_fail_open(w, "out of memory");
		return NULL;
	}
	rb->rb_w = w;
	TAILQ_INIT(&rb->rb_waits);
	rb->rb_n = n;
	rb->rb_lease_div = lease_div;
	for (i = 0; i < n; i++) {
		rb->rb_cb[i] = sp[i].rs_cb;
		rb->rb_klen[i] = klen[i];
		memcpy(rb->rb_keys[i], keys[i], klen[i]);
	}
	TAILQ_INSERT_TAIL(&rl.rl_open, rb, rb_entry);
	event_active(rl.rl_flush, EV_TIMEOUT, 0);
	return rb;
}

/*
 * A call's wait on Redis's buckets (server: the server's shared one
 * too, else a step's): PENDING, *wp set; or OK at once when none
 * applies or Redis cannot be asked (fail open).
 */
static enum ratelimit_verdict
ratelimit_redis(struct worker *w, const struct principal *p,
    const char *tool, size_t len, int server, unsigned int *retry_s,
    struct ratelimit_wait *proto, struct ratelimit_wait **wp)
{
	const struct config	*cf = w->w_conf;
	struct ratelimit_spec	 sp[RATELIMIT_BUCKETS];
	struct ratelimit_batch	*rb;
	struct ratelimit_wait	*rw;
	const char		*scope = p != NULL ? p->p_scope : NULL;
	char			 keys[RATELIMIT_BUCKETS][RATELIMIT_RKEY_MAX];
	size_t			 klen[RATELIMIT_BUCKETS], i, n;
	unsigned int		 lease_div = RATELIMIT_LEASE_DIV;

	(void)retry_s;		/* a refusal's comes with the answer */
	if ((n = ratelimit_specs(&cf->cf_ratelimit, scope, tool, len,
	    server, sp)) == 0)
		return RATELIMIT_OK;
	for (i = 0; i < n; i++) {
		if ((klen[i] = ratelimit_redis_key(keys[i], sizeof(keys[i]),
		    cf->cf_sstore.css_namespace, cf->cf_name, sp[i].rs_kind,
		    scope, tool, len)) == 0) {
			ratelimit_fail_open(w, "redis: a bucket key too long");
			return RATELIMIT_OK;
		}
		/* a per-user bucket is exact: no lease */
		if (sp[i].rs_kind != 'S' && sp[i].rs_kind != 'T')
			lease_div = 0;
	}
	if (lease_div != 0 && ratelimit_lease_take(n, keys, klen, 1,
	    store_now_ms()))
		return RATELIMIT_OK;
	if (!redis_up()) {
		diag_count_redis_error(w);
		ratelimit_fail_open(w, "redis: not connected");
		return RATELIMIT_OK;
	}
	if (rl.rl_flush == NULL) {
		ratelimit_fail_open(w, "out of memory");
		return RATELIMIT_OK;
	}
	if ((rb = ratelimit_batch_get(w, sp, n, keys, klen, lease_div)) ==
	    NULL)
		return RATELIMIT_OK;
	if ((rw = malloc(sizeof(*rw))) == NULL) {
		if (TAILQ_EMPTY(&rb->rb_waits))
			ratelimit_batch_free(rb);
		ratelimit_fail_open(w, "out of memory");
		return RATELIMIT_OK;
	}
	*rw = *proto;
	rw->rw_batch = rb;
	json_incref(rw->rw_view);
	TAILQ_INSERT_TAIL(&rb->rb_waits, rw, rw_entry);
	if (wp != NULL)
		*wp = rw;
	return RATELIMIT_PENDING;
}

/* the host's store: proto and wp not used */
static enum ratelimit_verdict
ratelimit_lmdb(struct worker *w, const struct principal *p,
    const char *tool, size_t len, int server, unsigned int *retry_s,
    struct ratelimit_wait *proto, struct ratelimit_wait **wp)
{
	(void)proto;
	(void)wp;
	return ratelimit_take(w, p, tool, len, server, retry_s);
}

/*
 * A composite's step: the caller's per-user bucket and its tool's, in
 * the host's store or Redis's as a direct call's are.
 */
enum ratelimit_verdict
ratelimit_step(struct worker *w, const struct principal *p,
    const char *tool, size_t len, unsigned int *retry_s,
    ratelimit_done_fn done, void *arg, struct ratelimit_wait **wait)
{
	struct ratelimit_wait proto;

	*retry_s = 0;
	*wait = NULL;
	if (!w->w_conf->cf_ratelimit.crl_enabled)
		return RATELIMIT_OK;
	memset(&proto, 0, sizeof(proto));
	proto.rw_done = done;
	proto.rw_arg = arg;
	return ratelimit_store(w, p, tool, len, 0, retry_s, &proto, wait);
}

json_t *
ratelimit_data(unsigned int retry_s)
{
	return json_pack("{s:I}", "retryAfterSeconds", (json_int_t)retry_s);
}

/*
 * The 2025-11-25 rejection, as the reference vMCP sends it: a tool
 * result with isError and the JSON-RPC error in structuredContent.
 */
json_t *
ratelimit_result(unsigned int retry_s)
{
	return json_pack("{s:[{s:s,s:s}],s:b,s:{s:i,s:s,s:o}}", "content",
	    "type", "text", "text", RATELIMIT_MESSAGE, "isError", 1,
	    "structuredContent", "code", RATELIMIT_CODE, "message",
	    RATELIMIT_MESSAGE, "data", ratelimit_data(retry_s));
}

/* the tool a tools/call names: the fast path's scan, or its params */
int
ratelimit_tool_name(const char *fast, size_t fastlen, const json_t *params,
    const char **name, size_t *len)
{
	const json_t *n;

	if (fast != NULL) {
		*name = fast;
		*len = fastlen;
		return 0;
	}
	if ((n = json_object_get(params, "name")) == NULL ||
	    !json_is_string(n))
		return -1;
	*name = json_string_value(n);
	*len = json_string_length(n);
	return 0;
}

enum ratelimit_verdict
ratelimit_call(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const char *fast, size_t fastlen,
    const json_t *params, unsigned int *retry_s, ratelimit_resume_fn resume,
    void *arg, json_t *view)
{
	struct ratelimit_wait	 proto;
	enum ratelimit_verdict	 v;
	const char		*name;
	size_t			 len;

	*retry_s = 0;
	if (!w->w_conf->cf_ratelimit.crl_enabled ||
	    (mm->mm_flags & MCP_MF_METERED) == 0)
		return RATELIMIT_OK;
	if (arg != NULL && rl_decided.rd_arg == arg) {
		/* resumed: Redis answered */
		rl_decided.rd_arg = NULL;
		v = rl_decided.rd_verdict;
		*retry_s = rl_decided.rd_retry_s;
		goto done;
	}
	/* no name: the call fails further on, and still costs a token */
	if (ratelimit_tool_name(fast, fastlen, params, &name, &len) == -1) {
		name = "";
		len = 0;
	}
	/* a caller that cannot wait (no resume) is decided here */
	proto.rw_done = NULL;
	proto.rw_resume = resume;
	proto.rw_arg = arg;
	proto.rw_view = view;
	v = (resume != NULL ? ratelimit_store : ratelimit_lmdb)(w,
	    auth_principal(req), name, len, 1, retry_s, &proto, NULL);
done:
	if (v != RATELIMIT_LIMITED)
		return v;
	/* audited as a denial, whatever the answer's status */
	audit_set_outcome(w, req, AUDIT_DENIED);
	return RATELIMIT_LIMITED;
}
