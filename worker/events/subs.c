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
 * Worker 0 takes the marks a few at a time, looks at each pair (held?
 * made on the session listened to now?) and subscribes or unsubscribes
 * with at most SUBS_CALLS calls out, the next one as one ends: never a
 * call per URI in one loop turn.  What it made is recorded (m|) before
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
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_limit.h"
#include "shared/store_subs.h"
#include "shared/subs_rec.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "worker/events/subs.h"
#include "worker/upstream/token_exchange.h"
#include "worker/process/wake.h"
#include "proto/proto.h"
#include "worker/events/notify.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"

#define SUBS_BATCH		256	/* holdings released per write txn */
#define SUBS_CALLS		8	/* worker 0: backend calls out */
#define SUBS_QUEUE		64	/* pairs waiting to be looked at */
#define SUBS_TURN		64	/* pairs looked at per loop turn */
#define SUBS_TICK_MS		1000	/* a look at what a wake-up missed */
#define SUBS_RELISTEN_MS	200	/* a 2026-07-28 listen, coalesced */
#define SUBS_REAP_BATCHES	4	/* a dead worker's, per tick */

/* a release left for the next turns */
struct subs_rel {
	TAILQ_ENTRY(subs_rel)	 sr_entry;
	size_t			 sr_plen;
	char			 sr_prefix[SUBS_KEY_MAX + 1];
};

/* worker 0: a backend as its listener hears it */
struct subs_be {
	const struct config_backend	*sb_be;
	char				 sb_bk[SUBS_BK_LEN + 1];
	enum proto_era			 sb_era;	/* UNKNOWN: down */
	char				*sb_bsid;	/* 2025-11-25 */
	int				 sb_missed;	/* marks while down */
	char				 sb_pass;	/* SUBS_WANT, _MADE, 0 */
	char				 sb_after[SUBS_KEY_MAX + 1];
	size_t				 sb_alen;
	struct event			*sb_relisten;
};

/* worker 0: a pair to look at, or its call out */
struct subs_item {
	TAILQ_ENTRY(subs_item)	 si_entry;
	struct subs_be		*si_sb;
	char			 si_uk[SUBS_UK_LEN + 1];
	char			*si_uri;
	struct upstream		*si_up;
	int			 si_unsub;
	int			 si_again;	/* marked while out */
};
TAILQ_HEAD(subs_items, subs_item);

static struct worker	*subs_w;
static uint64_t		 subs_start;	/* this process's start time */
static uint64_t		 subs_serial;	/* its listen holders */
static int		 subs_registered;
static int		 subs_stopped;
static int		 subs_poking;
static struct event	*subs_tick_ev;
static struct event	*subs_turn_ev;
static struct event	*subs_poke_ev;
static TAILQ_HEAD(, subs_rel) subs_rels = TAILQ_HEAD_INITIALIZER(subs_rels);
static struct subs_be	*subs_bes;
static size_t		 subs_nbes;
static struct subs_items subs_queue = TAILQ_HEAD_INITIALIZER(subs_queue);
static struct subs_items subs_calls = TAILQ_HEAD_INITIALIZER(subs_calls);
static size_t		 subs_nqueue, subs_ncalls;

static void	subs_pump(struct worker *);

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
static int
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
static void	subs_schedule(void);

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
static int
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
static char *
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

/* --- worker 0: making and ending the backend's subscriptions --- */

static struct subs_be *
subs_be_find(const char *bk)
{
	size_t i;

	for (i = 0; i < subs_nbes; i++)
		if (strcmp(subs_bes[i].sb_bk, bk) == 0)
			return &subs_bes[i];
	return NULL;
}

static struct subs_be *
subs_be_of(const struct config_backend *be)
{
	size_t i;

	for (i = 0; i < subs_nbes; i++)
		if (subs_bes[i].sb_be == be)
			return &subs_bes[i];
	return NULL;
}

static void
subs_item_free(struct subs_item *si)
{
	free(si->si_uri);
	free(si);
}

static struct subs_item *
subs_item_find(struct subs_items *list, const struct subs_be *sb,
    const char *uk)
{
	struct subs_item *si;

	TAILQ_FOREACH(si, list, si_entry)
		if (si->si_sb == sb && strcmp(si->si_uk, uk) == 0)
			return si;
	return NULL;
}

/* the pair to look at (once; a pair whose call is out: again after) */
static void
subs_enqueue(struct subs_be *sb, const char *uk, const char *uri)
{
	struct subs_item *si;

	if ((si = subs_item_find(&subs_calls, sb, uk)) != NULL) {
		si->si_again = 1;
		return;
	}
	if (subs_item_find(&subs_queue, sb, uk) != NULL)
		return;
	if ((si = calloc(1, sizeof(*si))) == NULL ||
	    (si->si_uri = strdup(uri)) == NULL) {
		free(si);
		return;
	}
	si->si_sb = sb;
	memcpy(si->si_uk, uk, sizeof(si->si_uk));
	TAILQ_INSERT_TAIL(&subs_queue, si, si_entry);
	subs_nqueue++;
}

/* the next turn, once the loop has polled: a timer due now (an event
 * made active would run in this very pass, before any I/O) */
static void
subs_schedule(void)
{
	struct timeval tv = { 0, 0 };

	if (subs_turn_ev != NULL && !evtimer_pending(subs_turn_ev, NULL))
		(void)evtimer_add(subs_turn_ev, &tv);
}

static void
subs_on_relisten(evutil_socket_t fd, short ev, void *arg)
{
	struct subs_be *sb = arg;

	(void)fd;
	(void)ev;
	notify_relisten(subs_w, sb->sb_be);
}

static void
subs_relisten_soon(struct subs_be *sb)
{
	struct timeval tv = { 0, SUBS_RELISTEN_MS * 1000 };

	if (sb->sb_relisten != NULL &&
	    !evtimer_pending(sb->sb_relisten, NULL))
		(void)evtimer_add(sb->sb_relisten, &tv);
}

/* a mark taken: the pair looked at, or its backend's listen renewed */
static int
subs_on_mark(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct subs_be	*sb;
	struct subs_val	 sv;
	char		 bk[SUBS_BK_LEN + 1], uk[SUBS_UK_LEN + 1];

	(void)arg;
	if (subs_key_split(key, klen, bk, uk) == -1 ||
	    (sb = subs_be_find(bk)) == NULL)
		return 0;	/* a backend no longer configured */
	if (sb->sb_era == PROTO_ERA_UNKNOWN) {
		sb->sb_missed = 1;	/* its pass, once it listens */
		return 0;
	}
	if (sb->sb_era == PROTO_ERA_MODERN) {
		subs_relisten_soon(sb);
		return 0;
	}
	if (subs_val_decode(rec->sr_data, rec->sr_len, &sv) == -1)
		return 0;
	subs_enqueue(sb, uk, sv.sv_uri);
	subs_val_clear(&sv);
	return 0;
}

/* a pass's entry (k| or m|): its pair, once per pair */
static int
subs_on_pass(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct subs_be	*sb = arg;
	struct subs_val	 sv;
	char		 bk[SUBS_BK_LEN + 1], uk[SUBS_UK_LEN + 1];

	if (subs_nqueue >= SUBS_QUEUE)
		return 1;	/* the rest at the next step */
	if (klen <= SUBS_KEY_MAX) {
		memcpy(sb->sb_after, key, klen);
		sb->sb_alen = klen;
	}
	if (subs_key_split(key, klen, bk, uk) == 0 &&
	    subs_val_decode(rec->sr_data, rec->sr_len, &sv) == 0) {
		subs_enqueue(sb, uk, sv.sv_uri);
		subs_val_clear(&sv);
	}
	return 0;
}

/* a step of a backend's pass: every pair held (k|), then every made */
static void
subs_pass_step(struct worker *w, struct subs_be *sb)
{
	char	prefix[SUBS_KEY_MAX + 1];
	size_t	plen;
	int	more = 0;

	plen = subs_prefix_backend(prefix, sb->sb_pass, sb->sb_bk);
	if (store_range(w->w_store, STORE_SUBS, prefix, plen,
	    sb->sb_alen > 0 ? sb->sb_after : NULL, sb->sb_alen,
	    SUBS_QUEUE - subs_nqueue, store_now_ms(), subs_on_pass, sb,
	    &more) == -1)
		more = 0;
	if (more)
		return;
	sb->sb_alen = 0;
	sb->sb_pass = sb->sb_pass == SUBS_WANT ? SUBS_MADE : 0;
}

static int
subs_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	struct subs_item *si = arg;

	(void)era;
	up->up_tree = json_pack("{s:s}", "uri", si->si_uri);
	return up->up_tree == NULL ? -1 : 0;
}

static void
subs_made_drop(struct worker *w, const struct subs_item *si)
{
	char	key[SUBS_KEY_MAX + 1];
	size_t	klen;

	if ((klen = subs_key_pair(key, SUBS_MADE, si->si_sb->sb_bk,
	    si->si_uk)) > 0)
		(void)store_del(w->w_store, STORE_SUBS, key, klen);
}

/* one line a second at most: a backend refusing many says it once */
static void
subs_log_refused(const struct subs_item *si, const char *why)
{
	static time_t	 last;
	time_t		 now = time(NULL);

	if (now == last)
		return;
	last = now;
	log_warnx("backend %s: resources/%s of a resource failed: %s",
	    si->si_sb->sb_be->cb_name, si->si_unsub ? "unsubscribe" :
	    "subscribe", why);
}

static void	subs_look(struct worker *, struct subs_item *);

static void
subs_done(void *arg, const struct upstream_result *r)
{
	struct subs_item	*si = arg;
	struct worker		*w = subs_w;
	json_t			*resp;
	const char		*why;

	si->si_up = NULL;
	TAILQ_REMOVE(&subs_calls, si, si_entry);
	subs_ncalls--;
	if (r->ur_status == UPSTREAM_ERROR || r->ur_status == UPSTREAM_FAILED) {
		resp = upstream_response(r);
		why = r->ur_status == UPSTREAM_FAILED ? r->ur_errmsg :
		    json_string_value(json_object_get(json_object_get(resp,
		    "error"), "message"));
		subs_log_refused(si, why != NULL ? why : "an error");
		json_decref(resp);
	}
	/* an unsubscribe answered, whatever it says, or a subscribe the
	 * backend refused: nothing made (a subscribe unanswered may be) */
	if (si->si_unsub || r->ur_status == UPSTREAM_ERROR)
		subs_made_drop(w, si);
	/* held again while it went? looked at once more */
	if (si->si_unsub || si->si_again) {
		si->si_unsub = si->si_again = 0;
		TAILQ_INSERT_HEAD(&subs_queue, si, si_entry);
		subs_nqueue++;
	} else
		subs_item_free(si);
	subs_schedule();
}

static int
subs_call(struct worker *w, struct subs_item *si, const char *method)
{
	static const struct upstream_cbs cbs = {
		subs_params, NULL, subs_done
	};
	struct upstream_req uq;

	memset(&uq, 0, sizeof(uq));
	uq.uq_method = method;
	uq.uq_scope = BSESSION_SCOPE_ANON;
	uq.uq_client = ERA_LISTING;
	uq.uq_flags = UPSTREAM_F_SUBSCRIPTION;
	if ((si->si_up = upstream_call(w, si->si_sb->sb_be, &uq, &cbs,
	    si)) == NULL)
		return -1;
	TAILQ_INSERT_TAIL(&subs_calls, si, si_entry);
	subs_ncalls++;
	return 0;
}

/* what the pair needs at the backend, done or sent */
static void
subs_look(struct worker *w, struct subs_item *si)
{
	struct subs_be	*sb = si->si_sb;
	char		 key[SUBS_KEY_MAX + 1], *made, *val;
	size_t		 klen, vlen;
	int		 wanted;

	/* down meanwhile: its pass does it once it is up again */
	if (sb->sb_era != PROTO_ERA_LEGACY || sb->sb_bsid == NULL)
		goto done;
	klen = subs_prefix_want(key, sb->sb_bk, si->si_uk);
	if ((wanted = store_prefix_any(w->w_store, STORE_SUBS, key,
	    klen, store_now_ms())) == -1)
		goto done;
	made = subs_made_on(w, sb->sb_bk, si->si_uk);
	switch (subs_decide(wanted, made, sb->sb_bsid)) {
	case SUBS_ACT_NONE:
		break;
	case SUBS_ACT_FORGET:
		subs_made_drop(w, si);
		break;
	case SUBS_ACT_SUBSCRIBE:
		/* recorded first: a kill -9 after the send leaves it known */
		klen = subs_key_pair(key, SUBS_MADE, sb->sb_bk, si->si_uk);
		if (subs_val_encode(sb->sb_be->cb_name, si->si_uri,
		    sb->sb_bsid, &val, &vlen) == -1)
			break;
		if (store_put(w->w_store, STORE_SUBS, key, klen, val, vlen, 0,
		    store_now_ms()) == 0) {
			si->si_unsub = 0;
			if (subs_call(w, si, "resources/subscribe") == 0) {
				free(made);
				free(val);
				return;
			}
			subs_made_drop(w, si);
		}
		free(val);
		break;
	case SUBS_ACT_UNSUBSCRIBE:
		si->si_unsub = 1;
		if (subs_call(w, si, "resources/unsubscribe") == 0) {
			free(made);
			return;
		}
		break;
	}
	free(made);
done:
	subs_item_free(si);
}

/* the dead workers' holdings released, a few batches a tick */
static int
subs_on_worker(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct worker	*w = arg;
	char		 holder[SUBS_KEY_MAX + 2], prefix[SUBS_KEY_MAX + 1];
	pid_t		 pid;
	uint64_t	 start;
	size_t		 plen;
	int		 i, more = 1;

	(void)rec;
	if (klen < 3 || klen > SUBS_KEY_MAX)
		return 0;
	/* p|<pid>.<start> read as the holder l<pid>.<start>. would be */
	(void)snprintf(holder, sizeof(holder), "l%.*s.", (int)(klen - 2),
	    (const char *)key + 2);
	if (subs_holder_worker(holder, strlen(holder), &pid, &start) == -1 ||
	    subs_alive(pid, start))
		return 0;
	plen = subs_prefix_worker_holds(prefix, key, klen);
	for (i = 0; plen > 0 && more && i < SUBS_REAP_BATCHES; i++)
		more = subs_release_batch(w, prefix, plen);
	if (!more) {
		log_debug("the subscriptions of worker %ld (gone) released",
		    (long)pid);
		(void)store_del(w->w_store, STORE_SUBS, key, klen);
	}
	return 0;
}

static void
subs_reap(struct worker *w)
{
	int more;

	(void)store_range(w->w_store, STORE_SUBS, "p|", 2, NULL, 0, 64,
	    store_now_ms(), subs_on_worker, w, &more);
}

static void
subs_pump(struct worker *w)
{
	struct subs_item	*si;
	size_t			 i, n, budget = SUBS_TURN;
	int			 more = 0, got;

	if (subs_stopped || w->w_slot != 0 || subs_bes == NULL)
		return;
	/* the changes first, then the passes */
	if ((n = subs_take_count(subs_ncalls, SUBS_CALLS, subs_nqueue,
	    SUBS_QUEUE)) > 0) {
		got = store_take_prefix(w->w_store, STORE_SUBS, "d|", 2, n,
		    store_now_ms(), subs_on_mark, w);
		more = got > 0 && (size_t)got == n;
	}
	for (i = 0; i < subs_nbes && subs_nqueue < SUBS_QUEUE; i++)
		if (subs_bes[i].sb_pass != 0 &&
		    subs_bes[i].sb_era == PROTO_ERA_LEGACY) {
			subs_pass_step(w, &subs_bes[i]);
			more |= subs_bes[i].sb_pass != 0;
		}
	while (subs_ncalls < SUBS_CALLS && budget-- > 0 &&
	    (si = TAILQ_FIRST(&subs_queue)) != NULL) {
		TAILQ_REMOVE(&subs_queue, si, si_entry);
		subs_nqueue--;
		subs_look(w, si);
	}
	more |= TAILQ_FIRST(&subs_queue) != NULL;
	/* with every call out, the next answer goes on */
	if (more && subs_ncalls < SUBS_CALLS)
		subs_schedule();
}

void
subs_wake(struct worker *w)
{
	if (w->w_slot == 0)
		subs_schedule();
}

void
subs_listener_up(struct worker *w, const struct config_backend *be,
    enum proto_era era, const char *bsid)
{
	struct subs_be *sb;

	if ((sb = subs_be_of(be)) == NULL)
		return;
	sb->sb_era = era;
	free(sb->sb_bsid);
	sb->sb_bsid = bsid != NULL ? strdup(bsid) : NULL;
	if (era == PROTO_ERA_LEGACY) {
		/* every pair again: what the backend (or worker 0) lost */
		sb->sb_pass = SUBS_WANT;
		sb->sb_alen = 0;
	} else if (sb->sb_missed)
		subs_relisten_soon(sb);
	sb->sb_missed = 0;
	subs_wake(w);
}

void
subs_listener_down(struct worker *w, const struct config_backend *be)
{
	struct subs_be *sb;

	(void)w;
	if ((sb = subs_be_of(be)) == NULL)
		return;
	sb->sb_era = PROTO_ERA_UNKNOWN;
	free(sb->sb_bsid);
	sb->sb_bsid = NULL;
	sb->sb_pass = 0;
}

/* --- the loop --- */

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
	if (w->w_slot == 0 && !subs_stopped)
		subs_reap(w);
	subs_on_turn(-1, 0, w);
}

int
subs_init(struct worker *w)
{
	struct timeval	 tv = { SUBS_TICK_MS / 1000,
			    (SUBS_TICK_MS % 1000) * 1000 };
	size_t		 i;

	subs_w = w;
	if (subs_proc_start(getpid(), &subs_start) == -1)
		subs_start = 0;
	if ((subs_turn_ev = event_new(w->w_base, -1, 0, subs_on_turn,
	    w)) == NULL || (subs_poke_ev = event_new(w->w_base, -1, 0,
	    subs_on_poke, w)) == NULL || (subs_tick_ev = event_new(w->w_base,
	    -1, EV_PERSIST, subs_on_tick, w)) == NULL ||
	    event_add(subs_tick_ev, &tv) == -1)
		return -1;
	if (w->w_slot != 0 || w->w_conf->cf_nbackends == 0)
		return 0;
	if ((subs_bes = calloc(w->w_conf->cf_nbackends,
	    sizeof(*subs_bes))) == NULL)
		return -1;
	subs_nbes = w->w_conf->cf_nbackends;
	for (i = 0; i < subs_nbes; i++) {
		subs_bes[i].sb_be = &w->w_conf->cf_backends[i];
		subs_backend_key(subs_bes[i].sb_be->cb_name,
		    subs_bes[i].sb_bk);
		subs_bes[i].sb_era = PROTO_ERA_UNKNOWN;
		if ((subs_bes[i].sb_relisten = evtimer_new(w->w_base,
		    subs_on_relisten, &subs_bes[i])) == NULL)
			return -1;
	}
	return 0;
}

/* a drain: worker 0 makes and ends no more (the next generation's
 * worker 0 takes over from the records) */
void
subs_stop(struct worker *w)
{
	struct subs_item	*si;
	size_t			 i;

	subs_stopped = 1;
	while ((si = TAILQ_FIRST(&subs_calls)) != NULL) {
		TAILQ_REMOVE(&subs_calls, si, si_entry);
		upstream_cancel(si->si_up);
		/* a subscribe that may not have gone: made again rather than
		 * missed (an unsubscribe's record is acted on again) */
		if (!si->si_unsub)
			subs_made_drop(w, si);
		subs_item_free(si);
	}
	while ((si = TAILQ_FIRST(&subs_queue)) != NULL) {
		TAILQ_REMOVE(&subs_queue, si, si_entry);
		subs_item_free(si);
	}
	subs_ncalls = subs_nqueue = 0;
	for (i = 0; i < subs_nbes; i++)
		if (subs_bes[i].sb_relisten != NULL)
			evtimer_del(subs_bes[i].sb_relisten);
}

void
subs_free(struct worker *w)
{
	struct subs_rel	*sr;
	size_t		 i;

	subs_stop(w);
	while ((sr = TAILQ_FIRST(&subs_rels)) != NULL) {
		TAILQ_REMOVE(&subs_rels, sr, sr_entry);
		free(sr);
	}
	for (i = 0; i < subs_nbes; i++) {
		if (subs_bes[i].sb_relisten != NULL)
			event_free(subs_bes[i].sb_relisten);
		free(subs_bes[i].sb_bsid);
	}
	free(subs_bes);
	subs_bes = NULL;
	subs_nbes = 0;
	if (subs_tick_ev != NULL)
		event_free(subs_tick_ev);
	if (subs_turn_ev != NULL)
		event_free(subs_turn_ev);
	if (subs_poke_ev != NULL)
		event_free(subs_poke_ev);
	subs_tick_ev = subs_turn_ev = subs_poke_ev = NULL;
}
