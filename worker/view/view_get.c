/*
 * Views: the aggregated capability view, fetched from every backend in
 * parallel, resolved by view_resolve(), laid out by view_layout() and
 * shared through the store's "views" database by every worker, which
 * reads it in place (views_read(), view_store.c).
 *
 * Views are built in the builder process alone (builder.c, which sets
 * its struct view_maker): a worker asks it with WAKE_VIEW_BUILD and reads what
 * it stores in place, so no listing, parsing or layout runs on a loop
 * that serves calls.  No request waits for a listing while there is a
 * view to serve: a view past its freshness ("fresh", view_mark()) is
 * served as it is while the builder (the holder of the "lock" record)
 * builds the next one in the background.  Each backend's last good
 * lists are kept apart ("raw" records, with the time they were listed):
 * a build lists again only
 * the backends whose lists are past aggregation.cacheTtl, and a backend
 * that fails to list is represented by its last good lists, marked
 * stale, for up to VIEW_STALE_MS.  A backend's list_changed has a build
 * of its own list it alone (view_refresh()).  Only the first view of a
 * generation is waited for, and for VIEW_WAIT_MS at most: then it is
 * published without the backends still listing (their parts missing or
 * stale, revalidated after VIEW_RETRY_MS), while their listing goes on.
 *
 * Listing uses a backend session per (scope, backend) kept in the
 * "bsessions" database, not a client's: a view belongs to an identity
 * scope, not to a session.
 *
 * This file is what a worker does: the keys, the decoded header's
 * cache, get and wait for a view (asking the builder), cancel a wait.
 * The listing of one backend is view_fetch.c, a build view_builds.c,
 * the shards (publication, reads in place, gc) view_store.c; their
 * shared internals view_int.h.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_codec.h"
#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/process/wake.h"
#include "worker/process/process.h"
#include "worker/view/view_get.h"
#include "worker/view/view_int.h"

/*
 * In a worker, the requests waiting for the first view of a scope: the
 * builder is asked, and asked again every VIEW_ASK_MS (a wake-up lost,
 * a builder being respawned) until the view is stored; its
 * WAKE_VIEW_READY answers them at once.
 */
struct vask {
	TAILQ_ENTRY(vask)	 va_entry;
	struct worker		*va_w;
	char			 va_scope[64];
	struct vwaits		 va_waiters;
	struct event		*va_timer;
	uint64_t		 va_deadline;	/* ms: answered without */
};

static TAILQ_HEAD(, vask) vasks = TAILQ_HEAD_INITIALIZER(vasks);

/* this process is the view builder (builder.c): it alone builds */
static const struct view_maker	*view_maker;	/* the builder's; NULL: ask it */

/* the aggregation policy: built once per worker from its config */
static struct view_policy	 views_pol;
static struct view_workload	*views_wl;
static struct view_override	*views_ov;
static int			 views_pol_ready;

static void	vask_free(struct vask *);

/* keys are scoped to the daemon run and generation: a reload rebuilds */
void
view_key(struct worker *w, char *buf, size_t len, const char *what,
    const char *scope, const char *backend)
{
	static pid_t	 master;
	/* the hot path asks for the same key request after request */
	static struct {
		char		 k_what[16], k_scope[64], k_backend[64];
		unsigned int	 k_gen;
		char		 k_key[STORE_KEY_MAX];
		size_t		 k_keylen;	/* 0: none */
	} last;
	size_t	 wl, sl, bl;
	int	 n;

	if (backend == NULL)
		backend = "";
	if (last.k_keylen > 0 && last.k_keylen < len &&
	    last.k_gen == w->w_gen && strcmp(last.k_what, what) == 0 &&
	    strcmp(last.k_scope, scope) == 0 &&
	    strcmp(last.k_backend, backend) == 0) {
		memcpy(buf, last.k_key, last.k_keylen + 1);
		return;
	}
	if (master == 0)
		master = getppid();	/* the daemon run: once per worker */
	n = snprintf(buf, len, "%s|%d.%u|%s|%s", what, (int)master,
	    w->w_gen, scope, backend);
	wl = strlen(what);
	sl = strlen(scope);
	bl = strlen(backend);
	if (n > 0 && (size_t)n < len && (size_t)n < sizeof(last.k_key) &&
	    wl < sizeof(last.k_what) && sl < sizeof(last.k_scope) &&
	    bl < sizeof(last.k_backend)) {
		memcpy(last.k_what, what, wl + 1);
		memcpy(last.k_scope, scope, sl + 1);
		memcpy(last.k_backend, backend, bl + 1);
		memcpy(last.k_key, buf, (size_t)n + 1);
		last.k_keylen = (size_t)n;
		last.k_gen = w->w_gen;
	}
}

/*
 * The decoded view header, kept while the store's copy is the same one:
 * while no write has been committed since it was read (the store's
 * generation) it is, but for its expiry; else one cheap read of the
 * record's stamp decides.  Lists and routes are not decoded: they are
 * read in place from the layout it names.
 */
static struct {
	char		 vc_key[STORE_KEY_MAX];
	struct store_rec vc_stamp;
	uint64_t	 vc_gen;	/* the store's when read; 0: unknown */
	json_t		*vc_view;
} view_cache;

/*
 * stamp (a "raw" record's, or NULL): in, the record the caller has (0:
 * none); out, the one returned.  NULL: none, or still the stamped one.
 */
json_t *
view_load(struct worker *w, const char *what, const char *scope,
    const char *backend, struct store_rec *stamp)
{
	struct store_rec	 rec;
	const struct store_rec	*have = NULL;
	json_t			*o;
	json_error_t		 jerr;
	char			 key[STORE_KEY_MAX];
	uint64_t		 gen, now = store_now_ms();
	int			 cached, rc;

	memset(&rec, 0, sizeof(rec));
	view_key(w, key, sizeof(key), what, scope, backend);
	cached = view_cache.vc_view != NULL &&
	    strcmp(view_cache.vc_key, key) == 0;
	gen = store_generation(w->w_store);
	if (cached && gen != 0 && gen == view_cache.vc_gen &&
	    !store_rec_expired(view_cache.vc_stamp.sr_expires_ms, now))
		return json_incref(view_cache.vc_view);
	if (cached)
		have = &view_cache.vc_stamp;
	else if (stamp != NULL && stamp->sr_updated_ms != 0)
		have = stamp;
	rc = store_get_changed(w->w_store, STORE_VIEWS, key, strlen(key),
	    now, have, &rec);
	if (rc == STORE_UNCHANGED && cached) {
		view_cache.vc_stamp.sr_expires_ms = rec.sr_expires_ms;
		view_cache.vc_gen = gen;
	}
	if (rc == STORE_UNCHANGED)
		return cached ? json_incref(view_cache.vc_view) : NULL;
	if (rc != 0)
		return NULL;
	o = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL, &jerr);
	if (o != NULL && strcmp(what, "view") == 0) {
		json_decref(view_cache.vc_view);
		view_cache.vc_view = json_incref(o);
		(void)snprintf(view_cache.vc_key, sizeof(view_cache.vc_key),
		    "%s", key);
		view_cache.vc_stamp = rec;
		view_cache.vc_stamp.sr_data = NULL;
		view_cache.vc_gen = gen;
	}
	if (o != NULL && stamp != NULL) {
		*stamp = rec;
		stamp->sr_data = NULL;
	}
	store_rec_clear(&rec);
	return o;
}

/*
 * stamp: the stored record's, when wanted.  at: its update time (0:
 * now), which with its length is the stamp copies are checked by.
 */
void
view_save(struct worker *w, const char *what, const char *scope,
    const char *backend, json_t *o, uint64_t ttl_ms, uint64_t at,
    struct store_rec *stamp)
{
	char		*buf, key[STORE_KEY_MAX];
	size_t		 len;
	uint64_t	 now = at != 0 ? at : store_now_ms();

	view_key(w, key, sizeof(key), what, scope, backend);
	/* the raw lists of a backend are big: not through jansson's dump */
	if ((buf = view_json_dump(o, &len)) == NULL)
		return;
	if (store_put(w->w_store, STORE_VIEWS, key, strlen(key), buf, len,
	    now + ttl_ms, now) == -1)
		log_warnx("cannot store the %s view (%zu bytes)", what, len);
	else if (stamp != NULL) {
		memset(stamp, 0, sizeof(*stamp));
		stamp->sr_updated_ms = now;
		stamp->sr_expires_ms = now + ttl_ms;
		stamp->sr_len = len;
	}
	free(buf);
}

/*
 * A record as it is stored now, read and decoded whatever copy this
 * process keeps (what a publication replaces); its update time in *at.
 */
json_t *
view_load_stored(struct worker *w, const char *what, const char *scope,
    const char *backend, uint64_t *at)
{
	struct store_rec	 rec;
	json_error_t		 jerr;
	json_t			*o = NULL;
	char			 key[STORE_KEY_MAX];

	*at = 0;
	view_key(w, key, sizeof(key), what, scope, backend);
	if (store_get(w->w_store, STORE_VIEWS, key, strlen(key),
	    store_now_ms(), &rec) != 0)
		return NULL;
	if ((o = json_loadb(rec.sr_data, rec.sr_len, JSON_ALLOW_NUL,
	    &jerr)) != NULL)
		*at = rec.sr_updated_ms;
	store_rec_clear(&rec);
	return o;
}

json_t *
view_peek(struct worker *w)
{
	return view_load(w, "view", VIEW_SCOPE_ANON, NULL, NULL);
}

uint64_t
views_ttl(struct worker *w)
{
	return w->w_conf->cf_agg.ca_cache_ttl_ms;
}

void
views_clock(struct worker *w, struct view_clock *c)
{
	c->vl_now = store_now_ms();
	c->vl_ttl = views_ttl(w);
	c->vl_stale = VIEW_STALE_MS;
	c->vl_retry = VIEW_RETRY_MS;
}

/* when a view or a backend's lists were made: their "fresh" or "listed" */
uint64_t
views_stamp(json_t *o, const char *field)
{
	json_int_t v = json_integer_value(json_object_get(o, field));

	return v > 0 ? (uint64_t)v : 0;
}

void
views_maker_set(const struct view_maker *vm)
{
	view_maker = vm;
}

/* 1 in the builder, which makes views (its maker is set) */
int
views_building(void)
{
	return view_maker != NULL;
}

void
views_free(void)
{
	struct vask		*a;

	/* at exit, after backend_free_all(): no call is left to cancel */
	if (view_maker != NULL)
		view_maker->vm_free();
	while ((a = TAILQ_FIRST(&vasks)) != NULL)
		vask_free(a);
	json_decref(view_cache.vc_view);
	view_cache.vc_view = NULL;
	views_routes_free();
	free(views_wl);
	free(views_ov);
	views_wl = NULL;
	views_ov = NULL;
	views_pol_ready = 0;
}

size_t
views_page_size(struct worker *w)
{
	return w->w_conf->cf_agg.ca_page_size;
}

const struct view_policy *
views_policy(struct worker *w)
{
	const struct config_aggregation	*ca = &w->w_conf->cf_agg;
	size_t				 i, j, nov = 0, k = 0;

	if (views_pol_ready)
		return &views_pol;
	for (i = 0; i < ca->ca_nworkloads; i++)
		nov += ca->ca_workloads[i].cw_noverrides;
	views_wl = calloc(ca->ca_nworkloads + 1, sizeof(*views_wl));
	views_ov = calloc(nov + 1, sizeof(*views_ov));
	if (views_wl == NULL || views_ov == NULL)
		fatal("%s", __func__);	/* once, at the first request */
	for (i = 0; i < ca->ca_nworkloads; i++) {
		const struct config_workload *cw = &ca->ca_workloads[i];

		views_wl[i].vw_name = cw->cw_name;
		views_wl[i].vw_filter = (const char *const *)cw->cw_filter;
		views_wl[i].vw_nfilter = cw->cw_nfilter;
		views_wl[i].vw_exclude_all = cw->cw_exclude_all;
		views_wl[i].vw_overrides = &views_ov[k];
		views_wl[i].vw_noverrides = cw->cw_noverrides;
		for (j = 0; j < cw->cw_noverrides; j++, k++) {
			views_ov[k].vo_tool = cw->cw_overrides[j].co_tool;
			views_ov[k].vo_name = cw->cw_overrides[j].co_name;
			views_ov[k].vo_description =
			    cw->cw_overrides[j].co_description;
			views_ov[k].vo_annotations =
			    cw->cw_overrides[j].co_annotations;
		}
	}
	views_pol.vp_conflict = ca->ca_conflict == CONFIG_CONFLICT_PRIORITY ?
	    VIEW_CONFLICT_PRIORITY : ca->ca_conflict == CONFIG_CONFLICT_MANUAL ?
	    VIEW_CONFLICT_MANUAL : VIEW_CONFLICT_PREFIX;
	views_pol.vp_prefix_mode = ca->ca_prefix_mode ==
	    CONFIG_PREFIX_ON_CONFLICT ? VIEW_PREFIX_ON_CONFLICT :
	    VIEW_PREFIX_ALWAYS;
	views_pol.vp_prefix_format = ca->ca_prefix_format;
	views_pol.vp_priority = (const char *const *)ca->ca_priority;
	views_pol.vp_npriority = ca->ca_npriority;
	views_pol.vp_exclude_all_tools = ca->ca_exclude_all_tools;
	views_pol.vp_max_description = ca->ca_max_desc;
	views_pol.vp_max_title = ca->ca_max_title;
	views_pol.vp_default_deny = ca->ca_default_deny;
	views_pol.vp_workloads = views_wl;
	views_pol.vp_nworkloads = ca->ca_nworkloads;
	views_pol_ready = 1;
	return &views_pol;
}

/* answer the waiters of a view (all, or those not waiting for the end) */
void
views_answer(struct vwaits *waiters, int all, json_t *view, const char *err)
{
	struct vwaits		 now;
	struct view_wait	*vw, *next;

	/* taken off first: an answer may start or join a build */
	TAILQ_INIT(&now);
	for (vw = TAILQ_FIRST(waiters); vw != NULL; vw = next) {
		next = TAILQ_NEXT(vw, vw_entry);
		if (all || !vw->vw_final) {
			TAILQ_REMOVE(waiters, vw, vw_entry);
			TAILQ_INSERT_TAIL(&now, vw, vw_entry);
		}
	}
	while ((vw = TAILQ_FIRST(&now)) != NULL) {
		TAILQ_REMOVE(&now, vw, vw_entry);
		vw->vw_cb(vw->vw_arg, view, view == NULL ? err : NULL);
		free(vw);
	}
}

/*
 * A worker asks the builder (every process gets the broadcast; only
 * the builder of this run and generation takes it): for the whole view
 * (backend NULL), or for a backend whose lists changed.
 */
static void
views_ask(struct worker *w, const char *scope, const char *backend)
{
	char key[STORE_KEY_MAX];

	view_key(w, key, sizeof(key), "view", scope, NULL);
	wake_broadcast(WAKE_VIEW_BUILD, key, backend);
}

/* the scope of a view key of this run and generation: 0, or -1 */
int
views_key_scope(struct worker *w, const char *key, char *scope, size_t len)
{
	const char	*p, *q;
	char		 mine[STORE_KEY_MAX];

	if (strncmp(key, "view|", 5) != 0 || (p = strchr(key + 5, '|')) ==
	    NULL || (q = strchr(p + 1, '|')) == NULL || q[1] != '\0' ||
	    (size_t)(q - p - 1) >= len)
		return -1;
	memcpy(scope, p + 1, (size_t)(q - p - 1));
	scope[q - p - 1] = '\0';
	view_key(w, mine, sizeof(mine), "view", scope, NULL);
	return strcmp(mine, key) == 0 ? 0 : -1;
}

static void
vask_free(struct vask *a)
{
	struct view_wait *vw;

	TAILQ_REMOVE(&vasks, a, va_entry);
	while ((vw = TAILQ_FIRST(&a->va_waiters)) != NULL) {
		TAILQ_REMOVE(&a->va_waiters, vw, vw_entry);
		free(vw);
	}
	if (a->va_timer != NULL)
		event_free(a->va_timer);
	free(a);
}

/*
 * The waiters get the stored view, or at their deadline an error; else
 * (ask) the builder is asked again.
 */
static void
vask_check(struct vask *a, int ask)
{
	struct timeval	 tv = { 0, VIEW_ASK_MS * 1000 };
	struct worker	*w = a->va_w;
	struct vwaits	 now;
	json_t		*view;
	char		 err[128];

	view = view_load(w, "view", a->va_scope, NULL, NULL);
	if (view == NULL && store_now_ms() < a->va_deadline) {
		if (ask) {
			views_ask(w, a->va_scope, NULL);
			(void)evtimer_add(a->va_timer, &tv);
		}
		return;
	}
	(void)snprintf(err, sizeof(err), "no view of the backends within "
	    "%d s: the view builder did not store one", (VIEW_WAIT_MS +
	    VIEW_ASK_SPARE_MS) / 1000);
	/* taken off first: an answer may wait for a view anew */
	TAILQ_INIT(&now);
	TAILQ_CONCAT(&now, &a->va_waiters, vw_entry);
	vask_free(a);
	views_answer(&now, 1, view, err);
	json_decref(view);
}

static void
vask_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	vask_check(arg, 1);
}

/* a worker's request waits for the builder's first view of scope */
static int
vask_wait(struct worker *w, const char *scope, view_cb cb, void *arg)
{
	struct timeval	 tv = { 0, VIEW_ASK_MS * 1000 };
	struct view_wait *vw;
	struct vask	*a;

	TAILQ_FOREACH(a, &vasks, va_entry)
		if (strcmp(a->va_scope, scope) == 0)
			break;
	if (a == NULL) {
		if ((a = calloc(1, sizeof(*a))) == NULL)
			return -1;
		if ((a->va_timer = evtimer_new(w->w_base, vask_on_timer,
		    a)) == NULL) {
			free(a);
			return -1;
		}
		a->va_w = w;
		(void)snprintf(a->va_scope, sizeof(a->va_scope), "%s", scope);
		TAILQ_INIT(&a->va_waiters);
		a->va_deadline = store_now_ms() + VIEW_WAIT_MS +
		    VIEW_ASK_SPARE_MS;
		TAILQ_INSERT_TAIL(&vasks, a, va_entry);
		views_ask(w, scope, NULL);
		(void)evtimer_add(a->va_timer, &tv);
	}
	if ((vw = calloc(1, sizeof(*vw))) == NULL) {
		if (TAILQ_EMPTY(&a->va_waiters))
			vask_free(a);
		return -1;
	}
	vw->vw_cb = cb;
	vw->vw_arg = arg;
	TAILQ_INSERT_TAIL(&a->va_waiters, vw, vw_entry);
	return 0;
}

/* WAKE_VIEW_READY, in a worker: a view was stored */
void
views_wake(struct worker *w, const char *key)
{
	struct vask	*a;
	char		 scope[64];

	if (view_maker != NULL || views_key_scope(w, key, scope,
	    sizeof(scope)) == -1)
		return;
	TAILQ_FOREACH(a, &vasks, va_entry)
		if (strcmp(a->va_scope, scope) == 0) {
			vask_check(a, 0);
			return;
		}
}

/* the view of an identity scope (texch_view_scope()) */
int
view_get_scope(struct worker *w, const char *scope, view_cb cb, void *arg)
{
	static uint64_t	 next_ask;
	json_t		*view;
	uint64_t	 now;
	int		 fresh;

	if ((view = view_load(w, "view", scope, NULL, NULL)) != NULL) {
		now = store_now_ms();
		fresh = now < views_stamp(view, "fresh");
		cb(arg, view, NULL);
		json_decref(view);
		/* the builder builds the next one; asked once a second */
		if (!fresh && view_maker != NULL)
			view_maker->vm_revalidate(w, scope);
		else if (!fresh && now >= next_ask) {
			next_ask = now + VIEW_LOCK_RETRY_MS;
			views_ask(w, scope, NULL);
		}
		return 0;
	}
	/* none yet (a new generation): the one wait, VIEW_WAIT_MS at most */
	if (view_maker == NULL)
		return vask_wait(w, scope, cb, arg);
	return view_maker->vm_get(w, scope, cb, arg);
}

/* a backend's lists changed (worker 0's listener): listed anew */
void
view_changed(struct worker *w, const char *backend)
{
	if (view_maker != NULL)
		view_maker->vm_changed(w, backend);
	else
		views_ask(w, VIEW_SCOPE_ANON, backend);
}

static void
view_on_changed(evutil_socket_t fd, short ev, void *arg)
{
	const struct config_backend *be = arg;

	(void)fd;
	(void)ev;
	view_changed(worker_self(), be->cb_name);
}

/* view_changed() on the next loop turn, out of the caller's callback
 * (a breaker that opened or closed, a backend gone unhealthy) */
void
view_changed_soon(struct worker *w, const struct config_backend *be)
{
	struct timeval tv = { 0, 0 };

	if (event_base_once(w->w_base, -1, EV_TIMEOUT, view_on_changed,
	    (void *)(uintptr_t)be, &tv) == -1)
		log_warnx("backend %s: cannot rebuild the view", be->cb_name);
}

/* a waiter that no longer wants the view (its client went away) */
void
views_cancel(struct vwaits *waiters, void *arg)
{
	struct view_wait *vw, *tmp;

	for (vw = TAILQ_FIRST(waiters); vw != NULL; vw = tmp) {
		tmp = TAILQ_NEXT(vw, vw_entry);
		if (vw->vw_arg == arg) {
			TAILQ_REMOVE(waiters, vw, vw_entry);
			free(vw);
		}
	}
}

void
view_get_cancel(struct worker *w, void *arg)
{
	struct vask	*a;

	if (view_maker != NULL)
		view_maker->vm_cancel(w, arg);
	TAILQ_FOREACH(a, &vasks, va_entry)
		views_cancel(&a->va_waiters, arg);
}

/*
 * Why a request that needs every backend (a list) cannot be answered
 * from view: a backend's part is missing (no lists, not even stale
 * ones) under partialFailureMode fail, or every part is.  NULL: it can.
 */
const char *
view_incomplete(struct worker *w, json_t *view)
{
	json_t		*missing = json_object_get(view, "missing"), *why;
	const char	*name;

	if (json_object_size(missing) == 0 || (w->w_conf->cf_partial_failure
	    != CONFIG_PARTIAL_FAIL && json_object_size(missing) <
	    w->w_conf->cf_nbackends))
		return NULL;
	json_object_foreach(missing, name, why)
		return json_string_value(why);
	return NULL;
}
