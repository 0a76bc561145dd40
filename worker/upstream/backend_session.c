/*
 * Backend sessions of an identity scope (backend_session.h): which scope a
 * request goes under, the records in the store's "bsessions" db, and
 * the lock that keeps one open per (scope, backend) in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "worker/auth/auth.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/backend_session_store.h"
#include "worker/upstream/token_exchange.h"
#include "proto/jsonrpc.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/upstream/backend_session_close.h"

#define BSESSION_LOCK	"lock|"

const char *
bsession_scope_pick(const char *pscope, int texch, enum bsession_use use)
{
	if (pscope == NULL || *pscope == '\0')
		return BSESSION_SCOPE_ANON;
	/* a token_exchange backend is reached with the principal's token
	 * only, whatever for; the others' shared uses are no one's */
	if (use == BSESSION_FOR_SHARED && !texch)
		return BSESSION_SCOPE_ANON;
	return pscope;
}

const char *
bsession_scope(const struct principal *p, const struct config_backend *be,
    enum bsession_use use)
{
	return bsession_scope_pick(p != NULL ? p->p_scope : NULL,
	    texch_backend(be), use);
}

int
bsession_per_principal(const char *scope)
{
	return strcmp(scope, BSESSION_SCOPE_ANON) != 0;
}

int
bsession_touch_due(uint64_t updated_ms, uint64_t now_ms)
{
	return now_ms < updated_ms || now_ms - updated_ms >= BSESSION_TOUCH_MS;
}

size_t
bsession_group(char *buf, size_t len, const char *backend)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t		 n = strlen(backend);
	const char	*c;
	int		 w;

	if (n + 2 <= BSESSION_GROUP_MAX)
		w = snprintf(buf, len, "p|%s", backend);
	else {
		/* a name near the limit: its start and a hash */
		for (c = backend; *c != '\0'; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
		w = snprintf(buf, len, "p|%.45s~%016llx", backend,
		    (unsigned long long)h);
	}
	return w < 0 || (size_t)w >= len ? 0 : (size_t)w;
}

static size_t
bsession_key(char *buf, size_t len, const char *prefix, const char *scope,
    const char *backend)
{
	int n;

	n = snprintf(buf, len, "%s%s|%s", prefix, scope, backend);
	return n < 0 || (size_t)n >= len ? 0 : (size_t)n;
}

/* a record's payload: {"sid", "pv"}, and a principal's "scope" */
static char *
bsession_encode(const char *scope, const char *sid, const char *ver,
    size_t *len)
{
	json_t	*o;
	char	*buf;

	o = bsession_per_principal(scope) ? json_pack("{s:s*, s:s, s:s}",
	    "sid", sid, "pv", ver, "scope", scope) : json_pack("{s:s*, s:s}",
	    "sid", sid, "pv", ver);
	buf = o != NULL ? jsonrpc_dump(o, len) : NULL;
	json_decref(o);
	return buf;
}

/* a principal's record's scope (out, len bytes): 0, or -1 */
static int
bsession_decode_scope(const char *data, size_t len, char *out, size_t olen)
{
	json_t		*o;
	json_error_t	 jerr;
	const char	*s = NULL;
	int		 rc = -1;

	if ((o = json_loadb(data, len, 0, &jerr)) != NULL &&
	    json_unpack(o, "{s:s}", "scope", &s) == 0 && strlen(s) < olen) {
		memcpy(out, s, strlen(s) + 1);
		rc = 0;
	}
	json_decref(o);
	return rc;
}

int
bsession_decode(const char *data, size_t len, char **sid, char **ver)
{
	json_t		*o;
	json_error_t	 jerr;
	const char	*s = NULL, *v = NULL;
	int		 rc = -1;

	*sid = *ver = NULL;
	if ((o = json_loadb(data, len, 0, &jerr)) != NULL &&
	    json_unpack(o, "{s?s, s:s}", "sid", &s, "pv", &v) == 0) {
		*sid = s != NULL ? strdup(s) : NULL;
		*ver = strdup(v);
		rc = *ver != NULL && (s == NULL || *sid != NULL) ? 0 : -1;
		if (rc == -1) {
			free(*sid);
			free(*ver);
			*sid = *ver = NULL;
		}
	}
	json_decref(o);
	return rc;
}

int
bsession_closing_key(const void *key, size_t klen, char *name, size_t len)
{
	const char	*k = key, *bar;
	size_t		 n;

	/* a client session's id is base64url: no '|' */
	if ((bar = memchr(k, '|', klen)) == NULL)
		return 0;
	n = klen - (size_t)(bar + 1 - k);
	if (n == 0 || n >= len)
		return 0;
	memcpy(name, bar + 1, n);
	name[n] = '\0';
	return 1;
}

int
bsession_load(struct worker *w, const char *scope,
    const struct config_backend *be, char **sid, char **ver)
{
	struct store_rec	 rec;
	char			 key[STORE_KEY_MAX];
	size_t			 klen;
	uint64_t		 now = store_now_ms();
	int			 rc;

	*sid = *ver = NULL;
	memset(&rec, 0, sizeof(rec));
	if ((klen = bsession_key(key, sizeof(key), "", scope,
	    be->cb_name)) == 0 || store_get(w->w_store, STORE_BSESSIONS, key,
	    klen, now, &rec) != 0)
		return -1;
	rc = bsession_decode(rec.sr_data, rec.sr_len, sid, ver);
	/* a principal's: its idle time starts over (once a second at
	 * most); gone meanwhile (evicted, expired), it stays gone */
	if (rc == 0 && bsession_per_principal(scope) &&
	    bsession_touch_due(rec.sr_updated_ms, now) &&
	    store_touch(w->w_store, STORE_BSESSIONS, key, klen,
	    now + w->w_conf->cf_bsession_ttl_ms, now) == 0)
		bsession_store->bs_touch(scope, be);
	store_rec_clear(&rec);
	return rc;
}

/* a principal's session evicted from its backend's cap: closed */
static void
bsession_evicted(struct worker *w, const struct config_backend *be,
    struct store_rec *rec)
{
	char	*sid, *ver, scope[AUTH_SCOPE_LEN + 1];

	diag_count_bsession_end(w, be, 1);
	/* out of Redis too, so that no node takes it up again */
	if (bsession_decode_scope(rec->sr_data, rec->sr_len, scope,
	    sizeof(scope)) == 0)
		bsession_store->bs_drop(scope, be, rec->sr_data,
		    rec->sr_len);
	if (bsession_decode(rec->sr_data, rec->sr_len, &sid, &ver) == 0) {
		log_debug("backend %s: a principal's backend session evicted "
		    "(sessions.maxBackendSessions is %u)", be->cb_name,
		    w->w_conf->cf_bsession_cap);
		bclose_unheld(w, be, sid, ver);
		free(sid);
		free(ver);
	}
	store_rec_clear(rec);
}

int
bsession_save(struct worker *w, const char *scope,
    const struct config_backend *be, const char *sid, const char *ver)
{
	struct store_limit	 lim;
	struct store_rec	 evicted;
	char			*buf, key[STORE_KEY_MAX];
	char			 group[BSESSION_GROUP_MAX + 1];
	size_t			 len, klen, glen;
	uint64_t		 now = store_now_ms();
	int			 rc = -1;

	if ((klen = bsession_key(key, sizeof(key), "", scope,
	    be->cb_name)) == 0 ||
	    (buf = bsession_encode(scope, sid, ver, &len)) == NULL)
		return -1;
	if (!bsession_per_principal(scope)) {
		/* grouped by backend: the store counts them per backend */
		rc = store_put_ext(w->w_store, STORE_BSESSIONS, key, klen,
		    buf, len, now + BSESSION_TTL_MS, now, 0, be->cb_name,
		    strlen(be->cb_name));
		goto done;
	}
	if ((glen = bsession_group(group, sizeof(group), be->cb_name)) == 0)
		goto done;
	memset(&lim, 0, sizeof(lim));
	lim.sl_group = group;
	lim.sl_glen = glen;
	lim.sl_group_max = w->w_conf->cf_bsession_cap;
	rc = store_add_evict(w->w_store, STORE_BSESSIONS, key, klen, buf, len,
	    now + w->w_conf->cf_bsession_ttl_ms, now, STORE_F_CLOSE, &lim,
	    &evicted);
	if (evicted.sr_data != NULL)
		bsession_evicted(w, be, &evicted);
	if (rc == STORE_EXISTS)
		rc = 1;
	else if (rc != 0)
		rc = -1;
 done:
	if (rc == -1)
		log_warnx("cannot record the backend session of %s",
		    be->cb_name);
	free(buf);
	return rc;
}

void
bsession_forget(struct worker *w, const char *scope,
    const struct config_backend *be)
{
	char	key[STORE_KEY_MAX];
	size_t	klen;

	if ((klen = bsession_key(key, sizeof(key), "", scope,
	    be->cb_name)) == 0)
		return;
	bsession_store->bs_forget(w->w_store, scope, be, key, klen);
	(void)store_del(w->w_store, STORE_BSESSIONS, key, klen);
}

/* the record a fleet's open shares (bs_done) */
void
bsession_share(const char *scope, const struct config_backend *be,
    const char *sid, const char *ver)
{
	char	*buf = NULL;
	size_t	 len = 0;

	if (sid != NULL && ver != NULL)
		buf = bsession_encode(scope, sid, ver, &len);
	bsession_store->bs_done(scope, be, buf, len);
	free(buf);
}

/* this host's store alone: nothing asked, nothing shared */
static struct redis_flight *
bsession_lmdb_fetch(const char *scope, const struct config_backend *be,
    redis_flight_cb cb, void *arg)
{
	(void)scope;
	(void)be;
	(void)cb;
	(void)arg;
	return NULL;
}

static void
bsession_lmdb_rec(const char *scope, const struct config_backend *be,
    const char *rec, size_t len)
{
	(void)scope;
	(void)be;
	(void)rec;
	(void)len;
}

static void
bsession_lmdb_touch(const char *scope, const struct config_backend *be)
{
	(void)scope;
	(void)be;
}

static void
bsession_lmdb_forget(struct store *st, const char *scope,
    const struct config_backend *be, const char *key, size_t klen)
{
	(void)st;
	(void)scope;
	(void)be;
	(void)key;
	(void)klen;
}

static const struct bsession_store bsession_store_lmdb = {
	bsession_lmdb_fetch,
	bsession_lmdb_rec,
	bsession_lmdb_touch,
	bsession_lmdb_rec,
	bsession_lmdb_forget
};
const struct bsession_store *bsession_store = &bsession_store_lmdb;

uint64_t
bsession_lock_ms(const struct config_backend *be)
{
	uint64_t t = be->cb_timeout_ms > 0 ? be->cb_timeout_ms : 30000;

	/* initialize, then notifications/initialized, each within it */
	return 2 * t + 1000;
}

int
bsession_locked(struct worker *w, const char *scope,
    const struct config_backend *be)
{
	struct store_rec	 rec;
	char			 lk[STORE_KEY_MAX];
	size_t			 klen;
	int			 rc;

	memset(&rec, 0, sizeof(rec));
	if ((klen = bsession_key(lk, sizeof(lk), BSESSION_LOCK, scope,
	    be->cb_name)) == 0)
		return 0;
	rc = store_get(w->w_store, STORE_BSESSIONS, lk, klen, store_now_ms(),
	    &rec);
	store_rec_clear(&rec);
	return rc != STORE_NOTFOUND;
}

int
bsession_lock(struct worker *w, const char *scope,
    const struct config_backend *be)
{
	char		 lk[STORE_KEY_MAX], pid[24];
	size_t		 klen;
	uint64_t	 now = store_now_ms();

	if ((klen = bsession_key(lk, sizeof(lk), BSESSION_LOCK, scope,
	    be->cb_name)) == 0)
		return 0;
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/* a store that fails: opened here, as before the lock */
	return store_add(w->w_store, STORE_BSESSIONS, lk, klen, pid,
	    strlen(pid), now + bsession_lock_ms(be), now) == STORE_EXISTS;
}

/* the open is over, recorded or failed: after a failure the next
 * process that needs the session tries for itself */
void
bsession_unlock(struct worker *w, const char *scope,
    const struct config_backend *be)
{
	char	 lk[STORE_KEY_MAX];
	size_t	 klen;

	if ((klen = bsession_key(lk, sizeof(lk), BSESSION_LOCK, scope,
	    be->cb_name)) > 0)
		(void)store_del(w->w_store, STORE_BSESSIONS, lk, klen);
}
