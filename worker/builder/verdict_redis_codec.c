/*
 * The probes' verdicts in Redis, the pure parts: the node's id, the
 * script, the reading of its answer and the rule that picks the verdict
 * a node acts on.  worker/builder/verdict_redis.c sends it.
 */
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/health_probe.h"
#include "worker/builder/verdict_redis.h"

/*
 * KEYS[1]; ARGV op (w: write this node's verdict, then read; r: read),
 * node, state, last outcome, window ms, error, channel, payload.  A
 * write keeps the entry's since while its state is the same (and the
 * entry fresh), drops the entries past their expiry, keeps the key as
 * long as its freshest entry, and publishes the backend when its state
 * changed.  Time is Redis's, so nodes with skewed clocks agree.
 * Answers {now, {node, value, ...}}.
 */
const char verdict_redis_lua[] =
"local t = redis.call('TIME')\n"
"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
"if ARGV[1] == 'w' then\n"
"  local since = now\n"
"  local old = redis.call('HGET', KEYS[1], ARGV[2])\n"
"  if old then\n"
"    local st, s, e = string.match(old, '^(%d+) (%d+) %d+ (%d+) ')\n"
"    if st == ARGV[3] and tonumber(e) >= now then since = tonumber(s) end\n"
"  end\n"
"  local exp = now + tonumber(ARGV[5])\n"
"  redis.call('HSET', KEYS[1], ARGV[2], string.format('%s %.0f %.0f %.0f "
"%s %s', ARGV[3], since, now, exp, ARGV[4], ARGV[6]))\n"
"  local h = redis.call('HGETALL', KEYS[1])\n"
"  for i = 1, #h, 2 do\n"
"    local e = tonumber(string.match(h[i + 1], '^%d+ %d+ %d+ (%d+) ') "
"or 0)\n"
"    if e < now then\n"
"      redis.call('HDEL', KEYS[1], h[i])\n"
"    elseif e > exp then\n"
"      exp = e\n"
"    end\n"
"  end\n"
"  redis.call('PEXPIRE', KEYS[1], exp - now)\n"
"  if since == now then redis.call('PUBLISH', ARGV[7], ARGV[8]) end\n"
"end\n"
"return {now, redis.call('HGETALL', KEYS[1])}\n";

/*
 * The host name tells an operator which node it is; the tag (drawn once
 * per state directory, health_node_tag()) keeps ids apart when host
 * names are alike, and the same across restarts.
 */
size_t
verdict_node_id(char *buf, size_t len, const char *host, const char *tag)
{
	int n;

	n = snprintf(buf, len, "%.*s:%s", PROBE_NODE_MAX - 2 -
	    HEALTH_NODE_TAG_LEN, host != NULL && host[0] != '\0' ? host :
	    "localhost", tag);
	if (n < 0 || (size_t)n >= len)
		return 0;
	return (size_t)n;
}

/* a decimal number of at most 19 digits, then sep: 0, or -1 */
static int
verdict_num(const char **p, const char *end, char sep, uint64_t *out)
{
	const char	*s = *p;
	uint64_t	 v = 0;
	size_t		 d = 0;

	while (s < end && *s >= '0' && *s <= '9' && d < 19) {
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
		d++;
	}
	if (d == 0 || s >= end || *s != sep)
		return -1;
	*out = v;
	*p = s + 1;
	return 0;
}

int
verdict_entry_parse(const char *node, size_t nodelen, const char *v,
    size_t len, struct verdict_entry *e)
{
	const char	*p = v, *end = v + len;
	uint64_t	 st, last;

	memset(e, 0, sizeof(*e));
	if (node == NULL || nodelen == 0 || v == NULL)
		return -1;
	if (verdict_num(&p, end, ' ', &st) == -1 || st >= PROBE_NSTATES ||
	    verdict_num(&p, end, ' ', &e->ve_since) == -1 ||
	    verdict_num(&p, end, ' ', &e->ve_at) == -1 ||
	    verdict_num(&p, end, ' ', &e->ve_exp) == -1)
		return -1;
	/* the last outcome is one digit, then a space (the error follows) */
	if (verdict_num(&p, end, ' ', &last) == -1 || last > PROBE_DENIED)
		return -1;
	e->ve_node = node;
	e->ve_nodelen = nodelen;
	e->ve_state = (enum probe_state)st;
	e->ve_last = (enum probe_outcome)last;
	e->ve_err = p;
	e->ve_errlen = (size_t)(end - p);
	return 0;
}

int
verdict_redis_answer(const redisReply *r, uint64_t *now, size_t *n)
{
	const redisReply *h;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0] == NULL || r->element[1] == NULL ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[0]->integer < 0)
		return -1;
	h = r->element[1];
	if (h->type != REDIS_REPLY_ARRAY || h->elements % 2 != 0)
		return -1;
	*now = (uint64_t)r->element[0]->integer;
	*n = h->elements / 2;
	return 0;
}

int
verdict_redis_entry(const redisReply *r, size_t i, struct verdict_entry *e)
{
	const redisReply	*h, *k, *v;
	uint64_t		 now;
	size_t			 n;

	memset(e, 0, sizeof(*e));
	if (verdict_redis_answer(r, &now, &n) == -1 || i >= n)
		return -1;
	h = r->element[1];
	k = h->element[2 * i];
	v = h->element[2 * i + 1];
	if (k == NULL || v == NULL || k->type != REDIS_REPLY_STRING ||
	    v->type != REDIS_REPLY_STRING)
		return -1;
	return verdict_entry_parse(k->str, k->len, v->str, v->len, e);
}

void
verdict_fold_init(struct verdict_fold *f, const char *self, uint64_t now)
{
	memset(f, 0, sizeof(*f));
	f->vf_self = self;
	f->vf_selflen = strlen(self);
	f->vf_now = now;
}

/* the latest change first; the same instant, the smaller node id */
static int
verdict_later(const struct verdict_entry *a, const struct verdict_entry *b)
{
	size_t	n = a->ve_nodelen < b->ve_nodelen ? a->ve_nodelen :
		    b->ve_nodelen;
	int	c;

	if (a->ve_since != b->ve_since)
		return a->ve_since > b->ve_since;
	c = memcmp(a->ve_node, b->ve_node, n);
	return c < 0 || (c == 0 && a->ve_nodelen < b->ve_nodelen);
}

void
verdict_fold_add(struct verdict_fold *f, const struct verdict_entry *e)
{
	if (e->ve_exp < f->vf_now)
		return;		/* its node stopped writing */
	if (e->ve_nodelen == f->vf_selflen &&
	    memcmp(e->ve_node, f->vf_self, f->vf_selflen) == 0) {
		f->vf_own = *e;
		f->vf_has_own = 1;
		return;
	}
	if (e->ve_state == PROBE_UNKNOWN)
		return;		/* no verdict yet: nothing to follow */
	if (!f->vf_has_latest || verdict_later(e, &f->vf_latest)) {
		f->vf_latest = *e;
		f->vf_has_latest = 1;
	}
}

enum probe_outcome
verdict_class(enum probe_state st)
{
	switch (st) {
	case PROBE_UNHEALTHY:
		return PROBE_FAILED;
	case PROBE_UNAUTHENTICATED:
		return PROBE_DENIED;
	default:
		break;
	}
	return PROBE_OK;
}

int
verdict_fold_result(const struct verdict_fold *f,
    const struct verdict_entry **out)
{
	const struct verdict_entry *own = &f->vf_own, *l = &f->vf_latest;

	*out = NULL;
	if (!f->vf_has_latest)
		return 0;
	if (f->vf_has_own) {
		/* ours changed as late or later */
		if (own->ve_state != PROBE_UNKNOWN &&
		    own->ve_since >= l->ve_since)
			return 0;
		/* our probe since that change says otherwise */
		if (own->ve_at > l->ve_since &&
		    own->ve_last != verdict_class(l->ve_state))
			return 0;
	}
	*out = l;
	return 1;
}

int
verdict_fold_confirm(const struct verdict_fold *f,
    const struct verdict_entry *out)
{
	return out != NULL && (!f->vf_has_own ||
	    f->vf_own.ve_last != verdict_class(out->ve_state));
}
