/*
 * Resource subscriptions (subs.h; docs/ARCHITECTURE.md, Resource
 * subscriptions).  A subscriptions/listen stream and a Legacy session
 * each hold the (backend, URI) pairs they subscribed to, in the store's
 * subs db; a pair's holders are its index entries, so whatever holds
 * it, one subscription is made at the backend, on the scope session
 * worker 0's listener hears (2025-11-25), or asked for by that
 * listener's subscriptions/listen (2026-07-28).
 *
 * Holding and releasing are any worker's, in one write txn a batch
 * (shared/store_subs.c); when a pair's first holder comes or its last
 * goes the txn leaves a mark, and worker 0 is woken (WAKE_RESUBSCRIBE).
 * Worker 0 (subs_maker.c) takes the marks a few at a time, looks at
 * each pair (held? made on the session listened to now?) and
 * subscribes or unsubscribes with at most SUBS_CALLS calls out, the
 * next one as one ends: never a call per URI in one loop turn.  What it made is recorded (m|) before
 * the subscribe goes and dropped once the unsubscribe is answered, so
 * a worker 0 killed in between leaves its successor a record to act
 * on; a listener that (re)connects has every pair of its backend
 * looked at again (a pass), which also makes anew what a backend that
 * forgot its session lost.  A 2026-07-28 backend's listen is opened
 * again with the URIs held now (coalesced, SUBS_RELISTEN_MS).
 *
 * A listen stream's holder names its worker's pid and start time
 * (subs_rec.h); the worker records itself (p|) before its first
 * holding.  Worker 0 looks at those records every tick: a worker that
 * is no longer there (killed) has its holdings released for it.  A
 * Legacy session's holdings go with its unsubscribe, its DELETE or its
 * expiry (backend_session_close.c), and expire themselves at the session's last
 * possible moment (sessions.maxLifetime), swept into the closing
 * queue like a session's record.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_limit.h"
#include "shared/store_subs.h"
#include "shared/subs_rec.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "worker/events/subs.h"
#include "worker/events/subs_int.h"
#include "worker/upstream/token_exchange.h"
#include "worker/process/wake.h"
#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"

#define SUBS_BATCH		256	/* holdings released per write txn */
#define SUBS_TICK_MS		1000	/* a look at what a wake-up missed */

/* a release left for the next turns */
struct subs_rel {
	TAILQ_ENTRY(subs_rel)	 sr_entry;
	size_t			 sr_plen;
	char			 sr_prefix[SUBS_KEY_MAX + 1];
};

static uint64_t		 subs_start;	/* this process's start time */
static uint64_t		 subs_serial;	/* its listen holders */
static int		 subs_registered;
static int		 subs_poking;
static struct event	*subs_tick_ev;
static struct event	*subs_turn_ev;
static struct event	*subs_poke_ev;
static TAILQ_HEAD(, subs_rel) subs_rels = TAILQ_HEAD_INITIALIZER(subs_rels);

/* --- processes --- */

/* pid's start time (/proc/PID/stat): 0, or -1 with errno */
static int
subs_proc_start(pid_t pid, uint64_t *start)
{
	char	 path[64], buf[1024];
	ssize_t	 n;
	int	 fd;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0 || subs_stat_start(buf, (size_t)n, start) == -1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* 1 if the worker pid started at start is alive (or can't be told) */
int
subs_alive(pid_t pid, uint64_t start)
{
	uint64_t now;

	if (pid == getpid())
		return start == subs_start;
	if (subs_proc_start(pid, &now) == -1)
		return errno != ENOENT && errno != ESRCH;
	return now == start;
}

/* --- holders --- */

int
subs_group(struct httpd_req *req, char *buf, size_t len)
{
	const struct principal	*p = auth_principal(req);
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 g[SESSION_GROUP_MAX];
	int			 n;

	if (p != NULL)
		n = snprintf(buf, len, "p%s", p->p_scope);
	else if (httpd_req_peer(req, &ss, &sslen) == 0 &&
	    session_client_group((struct sockaddr *)&ss, sslen, g,
	    sizeof(g)) == 0)
		n = snprintf(buf, len, "a%.*s", SUBS_GROUP_MAX - 1, g);
	else
		n = snprintf(buf, len, "a");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

json_t *
subs_refusal(struct worker *w, enum subs_cap cap, size_t n, int *code,
    char *msg, size_t msglen)
{
	const struct config	*cf = w->w_conf;
	const char		*key = cap == SUBS_CAP_PRINCIPAL ?
				    "sessions.maxSubscriptionsPerPrincipal" :
				    "sessions.maxSubscriptions";
	unsigned int		 max = cap == SUBS_CAP_PRINCIPAL ?
				    cf->cf_subs_cap_principal :
				    cf->cf_subs_cap;

	*code = cap == SUBS_CAP_PRINCIPAL ? MCP_ERR_TRANSPORT :
	    JSONRPC_INVALID_PARAMS;
	switch (cap) {
	case SUBS_CAP_LISTEN:
		(void)snprintf(msg, msglen, "Invalid params: this "
		    "subscriptions/listen names %zu resources; %s is %u",
		    n, key, max);
		break;
	case SUBS_CAP_SESSION:
		(void)snprintf(msg, msglen, "Invalid params: this session is "
		    "subscribed to %zu resources, the most %s (%u) allows; "
		    "unsubscribe from one first", n, key, max);
		break;
	case SUBS_CAP_PRINCIPAL:
		(void)snprintf(msg, msglen, "Too many subscriptions: %s is %u "
		    "resources across a principal's listen streams and "
		    "sessions; end some first", key, max);
		break;
	}
	return json_pack("{s:s, s:I}", "limit", key, "max", (json_int_t)max);
}

int
subs_listen_holder(struct worker *w, char *buf, size_t len)
{
	char	key[SUBS_KEY_MAX + 1];
	size_t	klen;

	if (!subs_registered) {
		/* before the first holding: whoever sees us dead finds it */
		klen = subs_key_worker(key, w->w_pid, subs_start);
		if (klen == 0 || store_put(w->w_store, STORE_SUBS, key, klen,
		    "{}", 2, 0, store_now_ms()) == -1)
			return -1;
		subs_registered = 1;
	}
	return subs_holder_listen(w->w_pid, subs_start, ++subs_serial, buf,
	    len);
}

/* worker 0 has marks to take: at once if it is us, else woken (once a
 * turn) */
static void
subs_poke(struct worker *w)
{
	if (subs_turn_ev == NULL)
		return;
	if (w->w_slot == 0) {
		subs_schedule();
		return;
	}
	if (!subs_poking) {
		subs_poking = 1;
		event_active(subs_poke_ev, EV_TIMEOUT, 0);
	}
}

static void
subs_on_poke(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	subs_poking = 0;
	wake_broadcast(WAKE_RESUBSCRIBE, "subs", NULL);
}

int
subs_hold(struct worker *w, const char *holder, const char *group,
    const struct subs_want *sw, size_t n, uint64_t expires_ms)
{
	struct store_hold	*sh;
	struct store_limit	 lim;
	char			(*keys)[SUBS_KEY_MAX + 1];
	char			 uk[SUBS_UK_LEN + 1], bk[SUBS_BK_LEN + 1];
	char			*val;
	size_t			 i, marked = 0;
	int			 rc = -1;

	if (n == 0)
		return 0;
	sh = calloc(n, sizeof(*sh));
	keys = calloc(n, sizeof(*keys));
	if (sh == NULL || keys == NULL)
		goto done;
	for (i = 0; i < n; i++) {
		subs_uri_key(sw[i].sw_uri, uk);
		subs_backend_key(sw[i].sw_be->cb_name, bk);
		if ((sh[i].sh_klen = subs_key_hold(keys[i], holder, uk,
		    bk)) == 0 || subs_val_encode(sw[i].sw_be->cb_name,
		    sw[i].sw_uri, NULL, &val, &sh[i].sh_vlen) == -1)
			goto done;
		sh[i].sh_key = keys[i];
		sh[i].sh_val = val;
	}
	memset(&lim, 0, sizeof(lim));
	lim.sl_group = group;
	lim.sl_glen = strlen(group);
	lim.sl_group_max = w->w_conf->cf_subs_cap_principal;
	rc = store_subs_hold(w->w_store, sh, n, &lim, expires_ms,
	    store_now_ms(), &marked);
	if (rc == STORE_LIMIT_GROUP)
		rc = SUBS_LIMITED;
	if (marked > 0)
		subs_poke(w);
done:
	for (i = 0; sh != NULL && i < n; i++)
		free((char *)sh[i].sh_val);
	free(sh);
	free(keys);
	return rc;
}

void
subs_session_end(struct worker *w, const char *sid)
{
	char holder[SUBS_HOLDER_MAX + 1];

	if (subs_holder_session(sid, holder, sizeof(holder)) == 0)
		subs_release(w, holder, NULL);
}

/* one batch of prefix's holdings: 1 if some are left */
int
subs_release_batch(struct worker *w, const char *prefix, size_t plen)
{
	size_t	released, marked;
	int	more;

	if (store_subs_release(w->w_store, prefix, plen, SUBS_BATCH,
	    store_now_ms(), &released, &marked, &more) == -1)
		return 0;	/* logged; the next look (or expiry) does it */
	if (marked > 0)
		subs_poke(w);
	return more;
}

void
subs_release(struct worker *w, const char *holder, const char *uri)
{
	struct subs_rel	*sr;
	char		 prefix[SUBS_KEY_MAX + 1];
	size_t		 plen;

	plen = subs_prefix_release(prefix, holder, uri);
	if (plen == 0 || !subs_release_batch(w, prefix, plen))
		return;
	/* the rest on the next turns (a worker gone meanwhile: reaped) */
	if (subs_turn_ev == NULL || (sr = calloc(1, sizeof(*sr))) == NULL)
		return;
	memcpy(sr->sr_prefix, prefix, plen + 1);
	sr->sr_plen = plen;
	TAILQ_INSERT_TAIL(&subs_rels, sr, sr_entry);
	subs_schedule();
}

/* the releases left: one batch each this turn */
static int
subs_rels_step(struct worker *w)
{
	struct subs_rel	*sr, *next;

	for (sr = TAILQ_FIRST(&subs_rels); sr != NULL; sr = next) {
		next = TAILQ_NEXT(sr, sr_entry);
		if (subs_release_batch(w, sr->sr_prefix, sr->sr_plen))
			continue;
		TAILQ_REMOVE(&subs_rels, sr, sr_entry);
		free(sr);
	}
	return TAILQ_FIRST(&subs_rels) != NULL;
}

/* --- reading --- */

struct subs_scan {
	struct worker	*ss_w;
	char		 ss_last[SUBS_UK_LEN + 1];
	json_t		*ss_uris;
	void		(*ss_cb)(void *, const char *);
	void		*ss_arg;
	size_t		 ss_plen;
	char		 ss_after[SUBS_KEY_MAX + 1];
	size_t		 ss_alen;
};

/* each entry: the resume point */
static void
subs_scan_after(struct subs_scan *ss, const void *key, size_t klen)
{
	if (klen <= SUBS_KEY_MAX) {
		memcpy(ss->ss_after, key, klen);
		ss->ss_alen = klen;
	}
}

/* k|<bk>|<uk>|<holder>: a URI not seen just before */
static int
subs_on_wanted(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct subs_scan	*ss = arg;
	struct subs_val		 sv;
	char			 bk[SUBS_BK_LEN + 1], uk[SUBS_UK_LEN + 1];

	subs_scan_after(ss, key, klen);
	if (subs_key_split(key, klen, bk, uk) == -1 ||
	    strcmp(uk, ss->ss_last) == 0 ||
	    subs_val_decode(rec->sr_data, rec->sr_len, &sv) == -1)
		return 0;
	memcpy(ss->ss_last, uk, sizeof(uk));
	(void)json_array_append_new(ss->ss_uris, json_string(sv.sv_uri));
	subs_val_clear(&sv);
	return 0;
}

/* k|<bk>|<uk>|s<session id>: a session's */
static int
subs_on_holder(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct subs_scan	*ss = arg;
	char			 sid[SESSION_ID_LEN + 1];
	const char		*h = (const char *)key + ss->ss_plen;
	size_t			 hlen = klen - ss->ss_plen;

	(void)rec;
	subs_scan_after(ss, key, klen);
	if (hlen != 1 + SESSION_ID_LEN || h[0] != 's')
		return 0;
	memcpy(sid, h + 1, SESSION_ID_LEN);
	sid[SESSION_ID_LEN] = '\0';
	ss->ss_cb(ss->ss_arg, sid);
	return 0;
}

/* every live record of prefix, STORE_ITER_VISIT at a time, to cb */
static void
subs_scan_all(struct worker *w, const char *prefix, size_t plen,
    store_iter_cb cb, struct subs_scan *ss)
{
	int more = 1;

	ss->ss_alen = 0;
	ss->ss_plen = plen;
	while (more && store_range(w->w_store, STORE_SUBS, prefix, plen,
	    ss->ss_alen > 0 ? ss->ss_after : NULL, ss->ss_alen, 256,
	    store_now_ms(), cb, ss, &more) > 0)
		;
}

json_t *
subs_wanted(struct worker *w, const struct config_backend *be)
{
	struct subs_scan	 ss;
	char			 bk[SUBS_BK_LEN + 1];
	char			 prefix[SUBS_KEY_MAX + 1];
	size_t			 plen;

	memset(&ss, 0, sizeof(ss));
	if ((ss.ss_uris = json_array()) == NULL)
		return NULL;
	subs_backend_key(be->cb_name, bk);
	plen = subs_prefix_backend(prefix, SUBS_WANT, bk);
	subs_scan_all(w, prefix, plen, subs_on_wanted, &ss);
	return ss.ss_uris;
}

void
subs_sessions(struct worker *w, const char *uri,
    void (*cb)(void *, const char *sid), void *arg)
{
	struct subs_scan	 ss;
	char			 uk[SUBS_UK_LEN + 1], bk[SUBS_BK_LEN + 1];
	char			 prefix[SUBS_KEY_MAX + 1];
	size_t			 i, plen;

	memset(&ss, 0, sizeof(ss));
	ss.ss_cb = cb;
	ss.ss_arg = arg;
	subs_uri_key(uri, uk);
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		subs_backend_key(w->w_conf->cf_backends[i].cb_name, bk);
		if ((plen = subs_prefix_want(prefix, bk, uk)) > 0)
			subs_scan_all(w, prefix, plen, subs_on_holder, &ss);
	}
}

/* the scope session (be, uri) was made on: a malloc'd id, or NULL */
char *
subs_made_on(struct worker *w, const char *bk, const char *uk)
{
	struct store_rec	 rec;
	struct subs_val		 sv;
	char			 key[SUBS_KEY_MAX + 1], *bsid = NULL;
	size_t			 klen;

	if ((klen = subs_key_pair(key, SUBS_MADE, bk, uk)) == 0 ||
	    store_get(w->w_store, STORE_SUBS, key, klen, store_now_ms(),
	    &rec) != 0)
		return NULL;
	if (subs_val_decode(rec.sr_data, rec.sr_len, &sv) == 0) {
		bsid = sv.sv_bsid;
		sv.sv_bsid = NULL;
		subs_val_clear(&sv);
	}
	store_rec_clear(&rec);
	return bsid;
}

int
subs_made(struct worker *w, const struct config_backend *be,
    const char *uri)
{
	char	 uk[SUBS_UK_LEN + 1], bk[SUBS_BK_LEN + 1];
	char	*made, *sid = NULL, *ver = NULL;
	int	 rc = 0;

	subs_uri_key(uri, uk);
	subs_backend_key(be->cb_name, bk);
	if ((made = subs_made_on(w, bk, uk)) == NULL)
		return 0;
	if (bsession_load(w, BSESSION_SCOPE_ANON, be, &sid, &ver) == 0)
		rc = strcmp(made, sid) == 0;
	free(made);
	free(sid);
	free(ver);
	return rc;
}

void
subs_made_now(struct worker *w, const struct config_backend *be,
    const char *uri)
{
	char	 uk[SUBS_UK_LEN + 1], bk[SUBS_BK_LEN + 1];
	char	 key[SUBS_KEY_MAX + 1], *sid = NULL, *ver = NULL, *val;
	size_t	 klen, vlen;

	/* a 2026-07-28 listener asks for its URIs: nothing is made */
	if (era_for(w, be, ERA_LISTING) != PROTO_ERA_LEGACY ||
	    bsession_load(w, BSESSION_SCOPE_ANON, be, &sid, &ver) == -1)
		return;	/* it opens one: worker 0 makes it there again */
	subs_uri_key(uri, uk);
	subs_backend_key(be->cb_name, bk);
	klen = subs_key_pair(key, SUBS_MADE, bk, uk);
	if (subs_val_encode(be->cb_name, uri, sid, &val, &vlen) == 0) {
		(void)store_put(w->w_store, STORE_SUBS, key, klen, val, vlen,
		    0, store_now_ms());
		free(val);
	}
	free(sid);
	free(ver);
}

int
subs_closing(struct worker *w, const void *key, size_t klen,
    const struct store_rec *rec)
{
	size_t marked;

	if (klen < 2 || memcmp(key, "h|", 2) != 0)
		return -1;
	if (store_subs_closed(w->w_store, key, klen, rec->sr_data,
	    rec->sr_len, store_now_ms(), &marked) == 0 && marked > 0)
		subs_poke(w);
	return 0;
}

/* --- the loop --- */

/* the next turn, once the loop has polled: a timer due now (an event
 * made active would run in this very pass, before any I/O) */
void
subs_schedule(void)
{
	struct timeval tv = { 0, 0 };

	if (subs_turn_ev != NULL && !evtimer_pending(subs_turn_ev, NULL))
		(void)evtimer_add(subs_turn_ev, &tv);
}

static void
subs_on_turn(evutil_socket_t fd, short ev, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)ev;
	if (subs_rels_step(w))
		subs_schedule();
	subs_pump(w);
}

static void
subs_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)ev;
	subs_reap(w);
	subs_on_turn(-1, 0, w);
}

int
subs_init(struct worker *w)
{
	struct timeval	 tv = { SUBS_TICK_MS / 1000,
			    (SUBS_TICK_MS % 1000) * 1000 };

	if (subs_proc_start(getpid(), &subs_start) == -1)
		subs_start = 0;
	if ((subs_turn_ev = event_new(w->w_base, -1, 0, subs_on_turn,
	    w)) == NULL || (subs_poke_ev = event_new(w->w_base, -1, 0,
	    subs_on_poke, w)) == NULL || (subs_tick_ev = event_new(w->w_base,
	    -1, EV_PERSIST, subs_on_tick, w)) == NULL ||
	    event_add(subs_tick_ev, &tv) == -1)
		return -1;
	return subs_maker_init(w);
}

void
subs_free(struct worker *w)
{
	struct subs_rel	*sr;

	subs_stop(w);
	while ((sr = TAILQ_FIRST(&subs_rels)) != NULL) {
		TAILQ_REMOVE(&subs_rels, sr, sr_entry);
		free(sr);
	}
	subs_maker_free();
	if (subs_tick_ev != NULL)
		event_free(subs_tick_ev);
	if (subs_turn_ev != NULL)
		event_free(subs_turn_ev);
	if (subs_poke_ev != NULL)
		event_free(subs_poke_ev);
	subs_tick_ev = subs_turn_ev = subs_poke_ev = NULL;
}
