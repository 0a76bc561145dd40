/*
 * The rate-limit buckets near empty, for the console (/status's
 * rateLimits): the limits db read back through ratelimit_key()'s
 * layout and each bucket refilled to now as store_bucket.c refills it.
 * With sessionStorage.provider redis the buckets are Redis's and
 * nothing here is read.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shared/config.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "worker/auth/ratelimit.h"
#include "worker/process/process.h"

struct rl_scan {
	const struct config_ratelimit	*rs_conf;
	uint64_t			 rs_now;
	size_t				 rs_left;	/* records to read */
	ratelimit_scan_cb		 rs_cb;
	void				*rs_arg;
};

/* the configured bucket of a key's kind and tool, or NULL */
static const struct config_bucket *
rl_scan_bucket(const struct config_ratelimit *rl, char kind,
    const char *tool, size_t len)
{
	const struct config_tool_limit	*t;
	size_t				 i;

	if (kind == 'S')
		return &rl->crl_shared;
	if (kind == 'U')
		return &rl->crl_per_user;
	for (i = 0; i < rl->crl_ntools; i++) {
		t = &rl->crl_tools[i];
		if (strlen(t->ctl_name) == len &&
		    memcmp(t->ctl_name, tool, len) == 0)
			return kind == 'T' ? &t->ctl_shared : &t->ctl_per_user;
	}
	return NULL;
}

static int
rl_scan_one(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct rl_scan			*rs = arg;
	const uint8_t			*k = key;
	const struct config_bucket	*cb;
	const char			*tool = NULL;
	size_t				 tlen = 0, off;
	double				 tokens;
	uint64_t			 last;

	if (rs->rs_left-- == 0)
		return 1;
	/* kind, the scope's length and the scope, the tool's (T, V) */
	if (klen < 2 || (off = 2 + (size_t)k[1]) > klen)
		return 0;
	if (k[0] == 'T' || k[0] == 'V') {
		if (off + 2 > klen)
			return 0;
		tlen = (size_t)k[off] << 8 | k[off + 1];
		if (off + 2 + tlen != klen)
			return 0;
		tool = (const char *)k + off + 2;
	} else if ((k[0] != 'S' && k[0] != 'U') || off != klen)
		return 0;
	if ((cb = rl_scan_bucket(rs->rs_conf, (char)k[0], tool, tlen)) ==
	    NULL || cb->cb_max == 0 || cb->cb_period_ms == 0 ||
	    rec->sr_len != sizeof(tokens) + sizeof(last))
		return 0;
	memcpy(&tokens, rec->sr_data, sizeof(tokens));
	memcpy(&last, rec->sr_data + sizeof(tokens), sizeof(last));
	if (rs->rs_now > last)
		tokens += (double)(rs->rs_now - last) * cb->cb_max /
		    (double)cb->cb_period_ms;
	if (!(tokens <= cb->cb_max))	/* NaN too */
		tokens = cb->cb_max;
	if (tokens < 0)
		tokens = 0;
	/* near empty: under a tenth of the limit, or under one token */
	if (tokens * 10 >= cb->cb_max && tokens >= 1)
		return 0;
	return rs->rs_cb(rs->rs_arg, (char)k[0], tool, tlen,
	    (unsigned int)tokens, cb->cb_max);
}

int
ratelimit_scan(struct worker *w, size_t max_visit, ratelimit_scan_cb cb,
    void *arg)
{
	struct rl_scan	rs;

	if (!w->w_conf->cf_ratelimit.crl_enabled ||
	    w->w_conf->cf_sstore.css_provider == CONFIG_SSTORE_REDIS)
		return -1;
	rs.rs_conf = &w->w_conf->cf_ratelimit;
	rs.rs_now = store_now_ms();
	rs.rs_left = max_visit;
	rs.rs_cb = cb;
	rs.rs_arg = arg;
	return store_iter(w->w_store, STORE_LIMITS, rs.rs_now, 0, rl_scan_one,
	    &rs) == -1 ? -1 : 0;
}
