/*
 * Rate limits: a tools/call takes one token from each bucket that
 * applies to it (the server's shared and per-user ones, and the tool's),
 * all in one store write txn or none (shared/store_bucket.c).  Per user
 * means per principal scope (worker/auth.h); an anonymous caller has no
 * per-user bucket, as in the reference vMCP.  A store error fails open:
 * a limit is not worth refusing service over (logged, at most once a
 * second).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "proto/method.h"
#include "audit.h"
#include "auth.h"
#include "httpd.h"
#include "ratelimit.h"
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

static size_t
ratelimit_add(struct store_bucket *b, size_t nb,
    uint8_t keys[][RATELIMIT_KEY_MAX], const struct config_bucket *cb,
    char kind, const char *scope, const char *tool, size_t len)
{
	size_t klen;

	if (cb->cb_max == 0 || nb >= STORE_BUCKETS_MAX)
		return nb;
	if ((kind == 'U' || kind == 'V') && (scope == NULL || *scope == '\0'))
		return nb;	/* anonymous: no per-user bucket */
	if ((klen = ratelimit_key(keys[nb], RATELIMIT_KEY_MAX, kind, scope,
	    tool, len)) == 0)
		return nb;
	b[nb].sb_key = keys[nb];
	b[nb].sb_klen = klen;
	b[nb].sb_max = cb->cb_max;
	b[nb].sb_period_ms = cb->cb_period_ms;
	b[nb].sb_lease = kind == 'S' || kind == 'T' ? RATELIMIT_LEASE_DIV : 0;
	return nb + 1;
}

static enum ratelimit_verdict
ratelimit_take(struct worker *w, const struct principal *p,
    const char *tool, size_t len, int server, unsigned int *retry_s)
{
	static time_t			 warned;
	const struct config_ratelimit	*rl = &w->w_conf->cf_ratelimit;
	const struct config_tool_limit	*t;
	struct store_bucket		 b[4], take[4];
	struct ratelimit_lease		*held[4], *l;
	uint8_t				 keys[4][RATELIMIT_KEY_MAX];
	uint64_t			 now_ms;
	size_t				 nt;
	const char			*scope = p != NULL ? p->p_scope : NULL;
	uint64_t			 retry_ms;
	size_t				 i, nb = 0;
	time_t				 now;
	int				 rc;

	*retry_s = 0;
	if (!rl->crl_enabled)
		return RATELIMIT_OK;
	if (server) {
		nb = ratelimit_add(b, nb, keys, &rl->crl_shared, 'S', NULL,
		    NULL, 0);
		nb = ratelimit_add(b, nb, keys, &rl->crl_per_user, 'U', scope,
		    NULL, 0);
	}
	for (i = 0; i < rl->crl_ntools; i++) {
		t = &rl->crl_tools[i];
		if (strlen(t->ctl_name) != len ||
		    memcmp(t->ctl_name, tool, len) != 0)
			continue;
		nb = ratelimit_add(b, nb, keys, &t->ctl_shared, 'T', NULL,
		    tool, len);
		nb = ratelimit_add(b, nb, keys, &t->ctl_per_user, 'V', scope,
		    tool, len);
		break;
	}
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
		/* the reference's figure is whole seconds, at least 1 */
		*retry_s = (unsigned int)((retry_ms + 999) / 1000);
		if (*retry_s == 0)
			*retry_s = 1;
		return RATELIMIT_LIMITED;
	}
	if (rc == -1 && (now = time(NULL)) != warned) {
		warned = now;
		log_warnx("rate limit: store: %s (call let through)",
		    strerror(errno));
	}
	return RATELIMIT_OK;
}

enum ratelimit_verdict
ratelimit_check(struct worker *w, const struct principal *p,
    const char *tool, size_t len, unsigned int *retry_s)
{
	return ratelimit_take(w, p, tool, len, 1, retry_s);
}

enum ratelimit_verdict
ratelimit_step(struct worker *w, const struct principal *p,
    const char *tool, size_t len, unsigned int *retry_s)
{
	*retry_s = 0;
	if (!w->w_conf->cf_ratelimit.crl_enabled)
		return RATELIMIT_OK;
	return ratelimit_take(w, p, tool, len, 0, retry_s);
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
    const json_t *params, unsigned int *retry_s)
{
	const char	*name;
	size_t		 len;

	*retry_s = 0;
	if (!w->w_conf->cf_ratelimit.crl_enabled ||
	    (mm->mm_flags & MCP_MF_METERED) == 0)
		return RATELIMIT_OK;
	/* no name: the call fails further on, and still costs a token */
	if (ratelimit_tool_name(fast, fastlen, params, &name, &len) == -1) {
		name = "";
		len = 0;
	}
	if (ratelimit_check(w, auth_principal(req), name, len, retry_s) ==
	    RATELIMIT_OK)
		return RATELIMIT_OK;
	/* audited as a denial, whatever the answer's status */
	audit_set_outcome(w, req, AUDIT_DENIED);
	return RATELIMIT_LIMITED;
}
