/*
 * Rate limits: a tools/call takes one token from each bucket that
 * applies to it (the server's shared and per-user ones, and the tool's),
 * all in one store write txn or none (shared/store_bucket.c), or with
 * sessionStorage.provider redis in one Redis script shared by every
 * node (worker/ratelimit_redis.c).  Per user
 * means per principal scope (worker/auth.h); an anonymous caller has no
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

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "proto/method.h"
#include "audit.h"
#include "auth.h"
#include "httpd.h"
#include "ratelimit.h"
#include "redis.h"
#include "worker.h"

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
 * Leases: a shared bucket (the server's, a tool's: no principal in the
 * key) is the one every call of every worker writes, so a worker takes
 * its tokens in batches, a 64th of what the bucket holds (1 when it
 * holds less than 128), and spends them without a store txn.  Tokens
 * are only ever taken from the shared bucket, so no more calls go
 * through than it admits; a lease unused for a second is dropped (those
 * tokens are lost, at most a 64th of the bucket per worker), and near
 * empty the batch is 1, so a small limit is exact.  Per-user buckets
 * are not leased: each is exact.
 */
#define RATELIMIT_LEASE_DIV	64
#define RATELIMIT_LEASE_MS	1000
#define RATELIMIT_LEASES	64

struct ratelimit_lease {
	uint8_t		 rl_key[RATELIMIT_KEY_MAX];
	size_t		 rl_klen;
	uint64_t	 rl_tokens;
	uint64_t	 rl_until_ms;
};

static struct ratelimit_lease	 leases[RATELIMIT_LEASES];

static struct ratelimit_lease *
ratelimit_lease_find(const struct store_bucket *b, uint64_t now_ms,
    int create)
{
	struct ratelimit_lease	*l, *free_l = NULL;
	size_t			 i;

	for (i = 0; i < RATELIMIT_LEASES; i++) {
		l = &leases[i];
		if (l->rl_klen == b->sb_klen &&
		    memcmp(l->rl_key, b->sb_key, b->sb_klen) == 0)
			return l;
		if (free_l == NULL && (l->rl_klen == 0 ||
		    l->rl_until_ms <= now_ms))
			free_l = l;
	}
	if (!create || free_l == NULL)
		return NULL;
	memcpy(free_l->rl_key, b->sb_key, b->sb_klen);
	free_l->rl_klen = b->sb_klen;
	free_l->rl_tokens = 0;
	free_l->rl_until_ms = 0;
	return free_l;
}

/* a leased token of b, if this worker holds one (not spent yet) */
static struct ratelimit_lease *
ratelimit_lease_has(const struct store_bucket *b, uint64_t now_ms)
{
	struct ratelimit_lease *l;

	if (b->sb_lease == 0 ||
	    (l = ratelimit_lease_find(b, now_ms, 0)) == NULL)
		return NULL;
	if (l->rl_until_ms <= now_ms)
		l->rl_tokens = 0;
	return l->rl_tokens > 0 ? l : NULL;
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

	/* a composite's step: its tool's buckets alone, the composite's
	 * own call took the server's */
	cb[0] = server ? &rl->crl_shared : NULL;
	cb[1] = server ? &rl->crl_per_user : NULL;
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
	b[nb].sb_lease = sp->rs_kind == 'S' || sp->rs_kind == 'T' ?
	    RATELIMIT_LEASE_DIV : 0;
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
	struct ratelimit_lease		*held[RATELIMIT_BUCKETS], *l;
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
	/* the buckets this worker holds a token of stay out of the txn */
	now_ms = store_now_ms();
	for (i = 0, nt = 0; i < nb; i++) {
		held[i] = ratelimit_lease_has(&b[i], now_ms);
		if (held[i] == NULL)
			take[nt++] = b[i];
	}
	rc = store_buckets_take(w->w_store, take, nt, now_ms, &retry_ms);
	if (rc == 0) {
		/* all or none: the held tokens are spent only now */
		for (i = 0; i < nb; i++)
			if (held[i] != NULL)
				held[i]->rl_tokens--;
		for (i = 0; i < nt; i++) {
			if (take[i].sb_taken <= 1 || (l =
			    ratelimit_lease_find(&take[i], now_ms, 1)) == NULL)
				continue;
			l->rl_tokens = take[i].sb_taken - 1;
			l->rl_until_ms = now_ms + RATELIMIT_LEASE_MS;
		}
		return RATELIMIT_OK;
	}
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
 * A composite's step, decided at once in the host's buckets: with
 * sessionStorage redis its tool's buckets are this host's (a step
 * cannot wait on Redis inside the scheduler's call yet).
 */
enum ratelimit_verdict
ratelimit_step(struct worker *w, const struct principal *p,
    const char *tool, size_t len, unsigned int *retry_s)
{
	*retry_s = 0;
	if (!w->w_conf->cf_ratelimit.crl_enabled)
		return RATELIMIT_OK;
	return ratelimit_take(w, p, tool, len, 0, retry_s);
}
/*
 * Redis: one EVALSHA per call, answered later.  The request waits, its
 * view held; the answer resumes it through the callback it was on,
 * and its second ratelimit_call() finds the verdict decided.
 */
struct ratelimit_wait {
	TAILQ_ENTRY(ratelimit_wait)	 rw_entry;
	struct worker			*rw_w;
	ratelimit_resume_fn		 rw_resume;
	void				*rw_arg;
	json_t				*rw_view;
	struct redis_cmd		*rw_cmd;
};

static TAILQ_HEAD(, ratelimit_wait) rl_waits =
    TAILQ_HEAD_INITIALIZER(rl_waits);

/* the verdict of the request being resumed (rd_arg) */
static struct {
	void			*rd_arg;
	enum ratelimit_verdict	 rd_verdict;
	unsigned int		 rd_retry_s;
} rl_decided;

static void
ratelimit_wait_free(struct ratelimit_wait *rw)
{
	TAILQ_REMOVE(&rl_waits, rw, rw_entry);
	json_decref(rw->rw_view);
	free(rw);
}

void
ratelimit_init(struct worker *w)
{
	if (w->w_conf->cf_ratelimit.crl_enabled &&
	    w->w_conf->cf_sstore.css_provider == CONFIG_SSTORE_REDIS)
		(void)redis_script_add(ratelimit_lua);
}

static void
ratelimit_on_redis(void *arg, const struct redisReply *reply,
    const char *err)
{
	struct ratelimit_wait	*rw = arg;
	enum ratelimit_verdict	 v;
	uint64_t		 retry_ms = 0;
	char			 why[200];

	v = ratelimit_redis_verdict(reply, &retry_ms);
	if (v == RATELIMIT_ERROR) {
		diag_count_redis_error(rw->rw_w);
		if (err == NULL && reply != NULL &&
		    reply->type == REDIS_REPLY_ERROR) {
			err = reply->str;
			/* flushed (SCRIPT FLUSH): loaded again on reconnect */
			if (strncmp(err, "NOSCRIPT", 8) == 0)
				redis_reconnect();
		}
		(void)snprintf(why, sizeof(why), "redis: %s", err != NULL ?
		    err : "an answer not understood");
		ratelimit_fail_open(rw->rw_w, why);
		v = RATELIMIT_OK;
	}
	rl_decided.rd_arg = rw->rw_arg;
	rl_decided.rd_verdict = v;
	rl_decided.rd_retry_s = 0;
	if (v == RATELIMIT_LIMITED)
		ratelimit_retry_s(retry_ms, &rl_decided.rd_retry_s);
	/* off the list first: the request may end (and cancel) within */
	TAILQ_REMOVE(&rl_waits, rw, rw_entry);
	rw->rw_resume(rw->rw_arg, rw->rw_view, NULL);
	rl_decided.rd_arg = NULL;
	json_decref(rw->rw_view);
	free(rw);
}

static enum ratelimit_verdict
ratelimit_redis(struct worker *w, const struct principal *p,
    const char *tool, size_t len, ratelimit_resume_fn resume, void *arg,
    json_t *view)
{
	const struct config		*cf = w->w_conf;
	struct ratelimit_spec		 sp[RATELIMIT_BUCKETS];
	const struct config_bucket	*cb[RATELIMIT_BUCKETS];
	char				 keys[RATELIMIT_BUCKETS]
					    [RATELIMIT_RKEY_MAX];
	const char			*kp[RATELIMIT_BUCKETS];
	size_t				 klen[RATELIMIT_BUCKETS];
	struct redis_args		 ra;
	struct ratelimit_wait		*rw;
	const char			*scope = p != NULL ? p->p_scope : NULL;
	size_t				 i, n, nk = 0;

	n = ratelimit_specs(&cf->cf_ratelimit, scope, tool, len, 1, sp);
	for (i = 0; i < n; i++) {
		if ((klen[nk] = ratelimit_redis_key(keys[nk],
		    sizeof(keys[nk]), cf->cf_sstore.css_namespace,
		    cf->cf_name, sp[i].rs_kind, scope, tool, len)) == 0) {
			ratelimit_fail_open(w, "redis: a bucket key too long");
			return RATELIMIT_OK;
		}
		kp[nk] = keys[nk];
		cb[nk++] = sp[i].rs_cb;
	}
	if (nk == 0)
		return RATELIMIT_OK;
	if (ratelimit_redis_args(&ra, kp, klen, cb, nk) == -1 ||
	    (rw = calloc(1, sizeof(*rw))) == NULL) {
		ratelimit_fail_open(w, "out of memory");
		return RATELIMIT_OK;
	}
	rw->rw_w = w;
	rw->rw_resume = resume;
	rw->rw_arg = arg;
	rw->rw_view = json_incref(view);
	TAILQ_INSERT_TAIL(&rl_waits, rw, rw_entry);
	if ((rw->rw_cmd = redis_send(&ra, ratelimit_on_redis, rw)) == NULL) {
		ratelimit_wait_free(rw);
		diag_count_redis_error(w);
		ratelimit_fail_open(w, "redis: not connected");
		return RATELIMIT_OK;
	}
	return RATELIMIT_PENDING;
}

void
ratelimit_cancel(void *arg)
{
	struct ratelimit_wait *rw, *next;

	for (rw = TAILQ_FIRST(&rl_waits); rw != NULL; rw = next) {
		next = TAILQ_NEXT(rw, rw_entry);
		if (rw->rw_arg == arg) {
			redis_cancel(rw->rw_cmd);
			ratelimit_wait_free(rw);
		}
	}
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
	if (w->w_conf->cf_sstore.css_provider == CONFIG_SSTORE_REDIS &&
	    resume != NULL)
		v = ratelimit_redis(w, auth_principal(req), name, len, resume,
		    arg, view);
	else
		v = ratelimit_check(w, auth_principal(req), name, len,
		    retry_s);
done:
	if (v != RATELIMIT_LIMITED)
		return v;
	/* audited as a denial, whatever the answer's status */
	audit_set_outcome(w, req, AUDIT_DENIED);
	return RATELIMIT_LIMITED;
}
