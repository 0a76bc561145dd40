/*
 * Resource subscriptions, worker 0's side (subs.c says how it fits): the
 * backend subscriptions made and ended from the marks the holdings leave,
 * SUBS_CALLS calls out at most; a listener's pass over its backend's
 * pairs when it (re)connects; a 2026-07-28 backend's listen renewed; the
 * holdings of dead workers reaped.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/subs_rec.h"
#include "worker/events/subs.h"
#include "worker/events/subs_int.h"
#include "proto/proto.h"
#include "worker/events/notify.h"
#include "worker/process/process.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"

#define SUBS_CALLS		8	/* worker 0: backend calls out */
#define SUBS_QUEUE		64	/* pairs waiting to be looked at */
#define SUBS_TURN		64	/* pairs looked at per loop turn */
#define SUBS_RELISTEN_MS	200	/* a 2026-07-28 listen, coalesced */
#define SUBS_REAP_BATCHES	4	/* a dead worker's, per tick */

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
static int		 subs_stopped;
static struct subs_be	*subs_bes;
static size_t		 subs_nbes;
static struct subs_items subs_queue = TAILQ_HEAD_INITIALIZER(subs_queue);
static struct subs_items subs_calls = TAILQ_HEAD_INITIALIZER(subs_calls);
static size_t		 subs_nqueue, subs_ncalls;

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

void
subs_reap(struct worker *w)
{
	int more;

	if (w->w_slot != 0 || subs_stopped)
		return;
	(void)store_range(w->w_store, STORE_SUBS, "p|", 2, NULL, 0, 64,
	    store_now_ms(), subs_on_worker, w, &more);
}

void
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

/* worker 0's backends, as their listeners hear them */
int
subs_maker_init(struct worker *w)
{
	size_t i;

	subs_w = w;
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

void
subs_maker_free(void)
{
	size_t i;

	for (i = 0; i < subs_nbes; i++) {
		if (subs_bes[i].sb_relisten != NULL)
			event_free(subs_bes[i].sb_relisten);
		free(subs_bes[i].sb_bsid);
	}
	free(subs_bes);
	subs_bes = NULL;
	subs_nbes = 0;
}
