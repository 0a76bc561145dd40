/*
 * The builds of the views, in the builder process alone (builder.c):
 * every backend fetched (view_fetch.c), the view resolved and stored
 * (view_store.c), its waiters answered; the "lock" record, background
 * rebuilds of a stale view, the build for a backend's change
 * (view_refresh()) and the workers' WAKE_VIEW_BUILD asks.
 */
#include <sys/queue.h>

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "proto/proto.h"
#include "shared/config.h"
#include "shared/health.h"
#include "shared/health_probe.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/composite/composite_run.h"
#include "worker/view/view.h"
#include "worker/process/wake.h"
#include "worker/builder/relist.h"
#include "worker/builder/builder.h"
#include "worker/events/notify.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/view/view_get.h"
#include "worker/view/view_int.h"
#include "worker/builder/view_build.h"

struct vbuilds vbuilds = TAILQ_HEAD_INITIALIZER(vbuilds);

static void	vbuild_finish(struct vbuild *);
static int	views_lock(struct worker *, const char *);

/* the union of the backends' capabilities (sub-flags OR-ed) */
static void
views_caps_merge(json_t *into, json_t *caps)
{
	const char	*k, *k2;
	json_t		*v, *v2, *have;

	json_object_foreach(caps, k, v) {
		if (!json_is_object(v))
			continue;
		if ((have = json_object_get(into, k)) == NULL) {
			(void)json_object_set_new(into, k, json_object());
			have = json_object_get(into, k);
		}
		json_object_foreach(v, k2, v2)
			if (json_is_true(v2))
				(void)json_object_set(have, k2, v2);
	}
}

/* the backend offers the tasks extension (2026-07-28): named in the
 * view's taskBackends, which discover and the calls read */
static void
views_caps_tasks(json_t *tasks, const char *backend, json_t *caps)
{
	if (json_is_object(json_object_get(json_object_get(caps,
	    "extensions"), MCP_TASKS_EXTENSION)))
		(void)json_array_append_new(tasks, json_string(backend));
}

void
vbuild_free(struct vbuild *b)
{
	size_t i;

	for (i = 0; i < b->vb_nfetch; i++)
		vfetch_clear(&b->vb_fetch[i]);
	free(b->vb_fetch);
	if (b->vb_timer != NULL)
		event_free(b->vb_timer);
	json_decref(b->vb_early);
	free(b);
}

/*
 * A backend whose circuit breaker is not closed, or that its health
 * checks found unhealthy (this node's, or the fleet's it follows:
 * verdict_redis.c), is left out of the view, whatever lists it
 * had: out, with the time its part stays "fresh" so that the view is
 * rebuilt when the breaker lets a trial through (the rebuild's listing
 * is that trial, or waits for it).
 */
static int
views_breaker_out(struct worker *w, const struct config_backend *be,
    const struct view_clock *c, uint64_t *listed)
{
	const struct config_health	*ch = &w->w_conf->cf_health;
	struct breaker			 bk;
	struct probe_rec		 pr;
	uint64_t			 until;

	/* unhealthy (probes): out until a probe is answered, which lists
	 * it anew (healthcheck.c); fresh meanwhile for an interval */
	if (ch->ch_interval_ms > 0 && health_verdict_get(w->w_store,
	    be->cb_name, c->vl_now, &pr, NULL, 0) == 0 &&
	    probe_state_out((enum probe_state)pr.pr_state))
		until = c->vl_now + ch->ch_interval_ms;
	else if (!ch->ch_cb_enabled || health_breaker_get(w->w_store,
	    be->cb_name, c->vl_now, &bk) == -1 ||
	    bk.bk_state == BREAKER_CLOSED)
		return 0;
	else
		until = bk.bk_opened_ms + ch->ch_cb_timeout_ms;
	if (until < c->vl_now + 1000)
		until = c->vl_now + 1000;
	*listed = until > c->vl_ttl ? until - c->vl_ttl : 0;
	return 1;
}

/*
 * The view of what the build has now, stored for every worker: every
 * backend fetched (fresh, or stale when listing failed), or still
 * listing (its last good lists, or nothing).  A new reference, or NULL
 * and err.  final: the build is over (its failures are logged).
 */
static json_t *
vbuild_publish(struct vbuild *b, int final, char *err, size_t errlen)
{
	struct worker		*w = b->vb_w;
	struct view_input	*in = NULL, *use = NULL;
	struct view_clock	 c;
	struct view_resolved	 vs;
	struct vpins		 vp;
	json_t			*view = NULL, *hdr = NULL, *caps, *src;
	json_t			*tasks;
	size_t			 i, nuse = 0;
	uint64_t		 fresh;
	int			 k;

	memset(&vs, 0, sizeof(vs));
	views_clock(w, &c);
	caps = json_object();
	tasks = json_array();
	if (vpins_init(&vp) == -1 || caps == NULL || tasks == NULL ||
	    (in = calloc(b->vb_nfetch + 1, sizeof(*in))) == NULL ||
	    (use = calloc(b->vb_nfetch + 1, sizeof(*use))) == NULL)
		goto oom;
	for (i = 0; i < b->vb_nfetch; i++) {
		struct vfetch		*f = &b->vb_fetch[i];
		struct view_input	*vi = &in[i];

		vi->vi_backend = f->vf_be->cb_name;
		src = NULL;
		if (vfetch_per_principal(f)) {
			/* never missing: it does not hasten a rebuild */
			vi->vi_part = VIEW_PART_FRESH;
			vi->vi_listed_ms = c.vl_now;
			continue;	/* not in use[] */
		}
		if (f->vf_done)
			vfetch_newer(f, &c);
		if (views_breaker_out(w, f->vf_be, &c, &vi->vi_listed_ms)) {
			vi->vi_part = VIEW_PART_FRESH;
			continue;	/* not in use[] */
		}
		if (f->vf_done && f->vf_ok) {
			vi->vi_part = f->vf_stale ? VIEW_PART_STALE :
			    VIEW_PART_FRESH;
			vi->vi_listed_ms = f->vf_listed;
			vi->vi_tools = f->vf_lists[VK_TOOLS];
			vi->vi_resources = f->vf_lists[VK_RESOURCES];
			vi->vi_templates = f->vf_lists[VK_TEMPLATES];
			vi->vi_prompts = f->vf_lists[VK_PROMPTS];
			if (strcmp(b->vb_scope, VIEW_SCOPE_ANON) == 0)
				diag_count_lists(w, f->vf_be,
				    json_array_size(vi->vi_tools),
				    json_array_size(vi->vi_prompts),
				    json_array_size(vi->vi_resources),
				    json_array_size(vi->vi_templates));
			views_caps_merge(caps, f->vf_caps);
			views_caps_tasks(tasks, f->vf_be->cb_name, f->vf_caps);
			if (f->vf_stale && f->vf_tried && final)
				log_warnx("view: %s; its lists of %llu s ago "
				    "stand in", f->vf_err, (unsigned long long)
				    ((c.vl_now - f->vf_listed) / 1000));
		} else if (f->vf_done) {
			vi->vi_part = VIEW_PART_MISSING;
			if (final)
				log_warnx("view: %s", f->vf_err);
		} else {
			/* still listing: a first view does not wait */
			(void)snprintf(f->vf_err, sizeof(f->vf_err),
			    "backend %s did not list within %d s",
			    f->vf_be->cb_name, VIEW_WAIT_MS / 1000);
			vi->vi_part = VIEW_PART_MISSING;
			if ((src = f->vf_old) != NULL) {
				vi->vi_part = VIEW_PART_STALE;
				vi->vi_listed_ms = views_stamp(src, "listed");
				views_caps_merge(caps, json_object_get(src,
				    "capabilities"));
				views_caps_tasks(tasks, f->vf_be->cb_name,
				    json_object_get(src, "capabilities"));
			}
			log_warnx("view: %s; published without %s", f->vf_err,
			    src != NULL ? "its fresh lists" : "it");
		}
		vi->vi_why = vi->vi_part != VIEW_PART_FRESH ? f->vf_err :
		    NULL;
		for (k = 0; src != NULL && k < VK_N; k++) {
			json_t **l[VK_N] = { &vi->vi_tools, &vi->vi_resources,
			    &vi->vi_templates, &vi->vi_prompts };

			*l[k] = json_object_get(src, vkinds[k].vk_field);
		}
		/* what it listed, checked against its pins */
		if (vi->vi_part != VIEW_PART_MISSING) {
			use[nuse] = *vi;
			(void)vpins_check(w, f->vf_be, &use[nuse++], &vp);
		}
	}
	/* the header: capabilities, freshness marks; the layout's key */
	if ((hdr = json_pack("{s:O, s:O}", "capabilities", caps,
	    "taskBackends", tasks)) == NULL ||
	    view_mark(hdr, in, b->vb_nfetch, &c) == -1 ||
	    view_resolve(views_policy(w), use, nuse, &vs) == -1 ||
	    vpins_cut(&vp, &vs, hdr) == -1 ||
	    composite_view_add(w->w_conf, &vs) == -1)
		goto oom;
	diag_count_view_build(w);
	/* kept past its freshness: served while the next one builds */
	fresh = views_stamp(hdr, "fresh");
	if ((view = views_store(w, b->vb_scope, &vs, hdr, (fresh > c.vl_now ?
	    fresh - c.vl_now : 0) + VIEW_STALE_MS)) == NULL)
		goto oom;
	for (i = 0; final && i < json_array_size(vs.vs_errors); i++)
		log_warnx("view: %s", json_string_value(json_array_get(
		    vs.vs_errors, i)));
	goto done;
oom:
	(void)snprintf(err, errlen, "out of memory");
done:
	view_resolved_free(&vs);
	vpins_clear(&vp);
	json_decref(hdr);
	json_decref(caps);
	json_decref(tasks);
	free(in);
	free(use);
	return view;
}

/* every backend fetched (or failed): build, store, answer the waiters */
static void
vbuild_finish(struct vbuild *b)
{
	struct worker	*w = b->vb_w;
	json_t		*view;
	char		 err[64] = "", key[STORE_KEY_MAX];

	TAILQ_REMOVE(&vbuilds, b, vb_entry);
	view = vbuild_publish(b, 1, err, sizeof(err));
	if (b->vb_locked) {
		view_key(w, key, sizeof(key), "lock", b->vb_scope, NULL);
		(void)store_del(w->w_store, STORE_VIEWS, key, strlen(key));
	}
	/* who was answered before the late backends listed learns now */
	if (b->vb_early != NULL && view != NULL)
		notify_lists_changed(w, b->vb_early, view,
		    "a backend listing late");
	views_answer(&b->vb_waiters, 1, view, err);
	json_decref(view);
	vbuild_free(b);
	/* a build's lists and layout (tens of MB at 100k tools) go back to
	 * the system, not kept as this worker's heap until the next one */
	(void)malloc_trim(0);
}

/* VIEW_WAIT_MS: the waiters get what there is; the listing goes on */
static void
vbuild_on_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct vbuild	*b = arg;
	json_t		*view;
	char		 err[64] = "";

	(void)fd;
	(void)ev;
	view = vbuild_publish(b, 0, err, sizeof(err));
	if (b->vb_early == NULL)
		b->vb_early = json_incref(view);
	views_answer(&b->vb_waiters, 0, view, err);	/* b may be gone now */
	json_decref(view);
}

/* a build of the whole view (only NULL), or for one backend's change */
struct vbuild *
vbuild_find(struct worker *w, const char *scope, const char *only)
{
	struct vbuild *b;

	TAILQ_FOREACH(b, &vbuilds, vb_entry)
		if (b->vb_w == w && strcmp(b->vb_scope, scope) == 0 &&
		    (b->vb_only == NULL ? only == NULL : only != NULL &&
		    strcmp(b->vb_only, only) == 0))
			return b;
	return NULL;
}

static struct vbuild *
vbuild_new(struct worker *w, const char *scope)
{
	struct vbuild *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if ((b->vb_fetch = calloc(w->w_conf->cf_nbackends + 1,
	    sizeof(*b->vb_fetch))) == NULL ||
	    (b->vb_timer = evtimer_new(w->w_base, vbuild_on_deadline,
	    b)) == NULL) {
		free(b->vb_fetch);
		free(b);
		return NULL;
	}
	b->vb_w = w;
	(void)snprintf(b->vb_scope, sizeof(b->vb_scope), "%s", scope);
	TAILQ_INIT(&b->vb_waiters);
	b->vb_nfetch = w->w_conf->cf_nbackends;
	TAILQ_INSERT_TAIL(&vbuilds, b, vb_entry);
	return b;
}

/* fetch every backend: its stored lists while fresh, else list it */
static void
vbuild_start(struct vbuild *b, const char *force)
{
	const struct config_backend	*be;
	size_t				 i;

	b->vb_pending = b->vb_nfetch + 1;	/* +1 until all started */
	for (i = 0; i < b->vb_nfetch; i++) {
		be = &b->vb_w->w_conf->cf_backends[i];
		vfetch_reset(&b->vb_fetch[i], b, be, force != NULL &&
		    strcmp(force, be->cb_name) == 0);
	}
	for (i = 0; i < b->vb_nfetch; i++)
		vfetch_start(&b->vb_fetch[i]);
	if (--b->vb_pending == 0)
		vbuild_finish(b);
}

void
vbuild_fetched(struct vfetch *f)
{
	struct vbuild *b = f->vf_build;

	/* its lists changed while we listed: what we have may be older */
	if (f->vf_again && f->vf_redos < 3) {
		f->vf_redos++;
		vfetch_reset(f, b, f->vf_be, 1);
		vfetch_start(f);
		return;
	}
	if (--b->vb_pending == 0)
		vbuild_finish(b);
}

int
vbuild_wait(struct vbuild *b, view_cb cb, void *arg, int final)
{
	struct view_wait	*vw;
	struct timeval		 tv = { VIEW_WAIT_MS / 1000,
				    (VIEW_WAIT_MS % 1000) * 1000 };

	if ((vw = calloc(1, sizeof(*vw))) == NULL)
		return -1;
	vw->vw_cb = cb;
	vw->vw_arg = arg;
	vw->vw_final = final;
	TAILQ_INSERT_TAIL(&b->vb_waiters, vw, vw_entry);
	if (!final && !evtimer_pending(b->vb_timer, NULL))
		(void)evtimer_add(b->vb_timer, &tv);
	return 0;
}

/* a new build with its first waiter; only: for that backend's change */
int
vbuild_begin(struct worker *w, const char *scope, const char *only,
    view_cb cb, void *arg, int final)
{
	struct vbuild *b;

	if ((b = vbuild_new(w, scope)) == NULL)
		return -1;
	if (vbuild_wait(b, cb, arg, final) == -1) {
		TAILQ_REMOVE(&vbuilds, b, vb_entry);
		vbuild_free(b);
		return -1;
	}
	/* a whole view is built anyway; the lock keeps other workers from
	 * building too once the view it publishes is past its freshness */
	b->vb_only = only;
	if (only == NULL)
		b->vb_locked = views_lock(w, scope) == 0;
	vbuild_start(b, only);
	return 0;
}

/*
 * The "lock" record names the worker building the view, for as long as
 * its listings may take (a probe, an open and a list: three timeouts).
 * 0 if this worker took it.
 */
static int
views_lock(struct worker *w, const char *scope)
{
	char		 key[STORE_KEY_MAX], pid[24];
	uint64_t	 now = store_now_ms(), hold = 0;
	size_t		 i;

	for (i = 0; i < w->w_conf->cf_nbackends; i++)
		if (w->w_conf->cf_backends[i].cb_timeout_ms > hold)
			hold = w->w_conf->cf_backends[i].cb_timeout_ms;
	hold = 3 * hold + VIEW_RETRY_MS;
	view_key(w, key, sizeof(key), "lock", scope, NULL);
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return store_add(w->w_store, STORE_VIEWS, key, strlen(key), pid,
	    strlen(pid), now + hold, now) == 0 ? 0 : -1;
}

/*
 * A view past its freshness: the builder, holding the lock, builds the
 * next one in the background.  It asks again at most once a second.
 */
void
views_revalidate(struct worker *w, const char *scope)
{
	static uint64_t	 next_try;
	struct vbuild	*b;
	char		 key[STORE_KEY_MAX];
	uint64_t	 now = store_now_ms();

	if (vbuild_find(w, scope, NULL) != NULL || now < next_try)
		return;
	next_try = now + VIEW_LOCK_RETRY_MS;
	if (views_lock(w, scope) == -1)
		return;		/* another worker's, or no store */
	if ((b = vbuild_new(w, scope)) == NULL) {
		view_key(w, key, sizeof(key), "lock", scope, NULL);
		(void)store_del(w->w_store, STORE_VIEWS, key, strlen(key));
		return;
	}
	b->vb_locked = 1;
	log_debug("view: rebuilding in the background");
	vbuild_start(b, NULL);
}

/*
 * Only that backend is listed, the others' stored lists taken as they
 * are, in a build of its own: a whole view's build under way may be
 * waiting on a hung backend.  What it publishes at its end takes these
 * lists (vfetch_newer()).
 */
int
view_refresh(struct worker *w, const char *backend, view_cb cb, void *arg)
{
	struct vbuild	*b;
	struct vfetch	*f = NULL;
	const char	*scope = VIEW_SCOPE_ANON, *only = NULL;
	size_t		 i;

	for (i = 0; i < w->w_conf->cf_nbackends; i++)
		if (strcmp(w->w_conf->cf_backends[i].cb_name, backend) == 0)
			only = w->w_conf->cf_backends[i].cb_name;
	if ((backend = only) == NULL)
		return -1;	/* not one of ours */
	if ((b = vbuild_find(w, scope, backend)) == NULL)
		return vbuild_begin(w, scope, backend, cb, arg, 1);
	/* one under way for it: the backend is listed (again) in it */
	if (vbuild_wait(b, cb, arg, 1) == -1)
		return -1;
	for (i = 0; i < b->vb_nfetch; i++)
		if (strcmp(b->vb_fetch[i].vf_be->cb_name, backend) == 0)
			f = &b->vb_fetch[i];
	if (f == NULL)
		return 0;
	if (!f->vf_done) {
		f->vf_again = 1;
		f->vf_redos = 0;
		return 0;
	}
	b->vb_pending++;
	vfetch_reset(f, b, f->vf_be, 1);
	vfetch_start(f);	/* b may be gone when this returns */
	return 0;
}

static void
views_on_first(void *arg, json_t *view, const char *err)
{
	(void)arg;
	if (view == NULL)
		log_warnx("view: no first view: %s", err);
}

/*
 * WAKE_VIEW_BUILD, in the builder: a worker has no view yet, or a
 * stale one, or a backend's lists changed.  Asked again and again by
 * the workers, so once under way, or fresh, it is nothing.
 */
void
views_build_request(struct worker *w, const char *key, const char *backend)
{
	json_t	*view;
	char	 scope[64];
	int	 fresh;

	if (!views_building() || views_key_scope(w, key, scope,
	    sizeof(scope)) == -1)
		return;		/* another generation's */
	if (backend != NULL && backend[0] != '\0') {
		relist_backend(w, backend);
		return;
	}
	if (vbuild_find(w, scope, NULL) != NULL)
		return;
	if ((view = view_load(w, "view", scope, NULL, NULL)) == NULL) {
		/* published at VIEW_WAIT_MS whatever is still listing */
		if (vbuild_begin(w, scope, NULL, views_on_first, NULL, 0) ==
		    -1)
			log_warnx("view: cannot start a build");
		return;
	}
	fresh = store_now_ms() < views_stamp(view, "fresh");
	json_decref(view);
	if (!fresh)
		views_revalidate(w, scope);
}

static struct event	*views_gc_timer;

static void
views_on_gc(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	views_gc(arg);
}

/*
 * This process builds the views (builder.c).  A lock left by a builder
 * of this generation that died goes: there is no other; so do the
 * shards it stored for a header it did not publish.  Then every
 * VIEW_GC_MS the shards no header names go too (a publication deletes
 * those it replaces at once: this is for a delete that failed), not
 * left to their expiry, the view's freshness and 11 minutes past it.
 */
/* the maker's: a build to wait for, found or begun */
static int
views_builder_get(struct worker *w, const char *scope, view_cb cb, void *arg)
{
	struct vbuild *b;

	if ((b = vbuild_find(w, scope, NULL)) != NULL)
		return vbuild_wait(b, cb, arg, 0);
	return vbuild_begin(w, scope, NULL, cb, arg, 0);
}

static void
views_builder_cancel(struct worker *w, void *arg)
{
	struct vbuild *b;

	(void)w;
	TAILQ_FOREACH(b, &vbuilds, vb_entry)
		views_cancel(&b->vb_waiters, arg);
}

/* at exit, after backend_free_all(): no call is left to cancel */
static void
views_builder_free(void)
{
	struct vbuild		*b;
	struct view_wait	*vw;
	size_t			 i;

	while ((b = TAILQ_FIRST(&vbuilds)) != NULL) {
		TAILQ_REMOVE(&vbuilds, b, vb_entry);
		while ((vw = TAILQ_FIRST(&b->vb_waiters)) != NULL) {
			TAILQ_REMOVE(&b->vb_waiters, vw, vw_entry);
			free(vw);
		}
		for (i = 0; i < b->vb_nfetch; i++)
			b->vb_fetch[i].vf_call = NULL;
		vbuild_free(b);
	}
	if (views_gc_timer != NULL)
		event_free(views_gc_timer);
	views_gc_timer = NULL;
}

static const struct view_maker views_builder_maker = {
	.vm_get = views_builder_get,
	.vm_revalidate = views_revalidate,
	.vm_changed = relist_backend,
	.vm_cancel = views_builder_cancel,
	.vm_free = views_builder_free,
};

void
views_builder_init(struct worker *w)
{
	struct timeval	 tv = { VIEW_GC_MS / 1000, 0 };
	char		 key[STORE_KEY_MAX];

	views_maker_set(&views_builder_maker);
	view_key(w, key, sizeof(key), "lock", VIEW_SCOPE_ANON, NULL);
	(void)store_del(w->w_store, STORE_VIEWS, key, strlen(key));
	views_gc(w);
	if ((views_gc_timer = event_new(w->w_base, -1, EV_PERSIST,
	    views_on_gc, w)) == NULL || event_add(views_gc_timer, &tv) == -1)
		log_warnx("view: no periodic removal of orphan shards");
}

