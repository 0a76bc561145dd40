/*
 * Views: the aggregated capability view, fetched from every backend in
 * parallel, resolved by view_resolve(), laid out by view_layout() and
 * shared through the store's "views" database by every worker, which
 * reads it in place (views_read()).
 *
 * No request waits for a listing while there is a view to serve: a view
 * past its freshness ("fresh", view_mark()) is served as it is while one
 * worker (the holder of the "lock" record) builds the next one in the
 * background.  Each backend's last good lists are kept apart ("raw"
 * records, with the time they were listed): a build lists again only
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
 */
#include <sys/queue.h>

#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "view.h"
#include "worker.h"

#define VIEW_SCOPE_ANON		BSESSION_SCOPE_ANON

#define VIEW_RETRY_MS	5000	/* a view lacking a fresh part: rebuilt after */
#define VIEW_STALE_MS	(10 * 60 * 1000)	/* last good lists stand in */
#define VIEW_WAIT_MS	5000	/* a request waits for a first view at most */
#define VIEW_LOCK_RETRY_MS 1000	/* another worker's rebuild: ask again after */
#define VIEW_LAYOUT_SPARE_MS 60000	/* a layout outlives its header by */

enum vkind {
	VK_TOOLS = 0,
	VK_RESOURCES,
	VK_TEMPLATES,
	VK_PROMPTS,
	VK_N
};

static const struct {
	const char	*vk_method;
	const char	*vk_field;
	const char	*vk_cap;
} vkinds[VK_N] = {
	{ "tools/list", "tools", "tools" },
	{ "resources/list", "resources", "resources" },
	{ "resources/templates/list", "resourceTemplates", "resources" },
	{ "prompts/list", "prompts", "prompts" },
};

struct view_wait {
	TAILQ_ENTRY(view_wait)	 vw_entry;
	view_cb			 vw_cb;
	void			*vw_arg;
	int			 vw_final;	/* the build's own view */
};

struct vbuild;

/* fetching one backend's lists */
struct vfetch {
	struct vbuild			*vf_build;
	const struct config_backend	*vf_be;
	struct backend_call		*vf_call;
	json_t				*vf_lists[VK_N];
	json_t				*vf_caps;
	json_t				*vf_cursors;	/* seen, for loops */
	json_t				*vf_old;	/* last good lists */
	struct store_rec		 vf_rec;	/* stored lists' stamp */
	uint64_t			 vf_started;	/* this listing, ms */
	uint64_t			 vf_listed;	/* vf_lists', ms */
	char				*vf_cursor;	/* next page, or NULL */
	char				*vf_bsid;
	char				*vf_bver;
	enum vkind			 vf_kind;
	unsigned int			 vf_pages;
	int				 vf_reopened;
	int				 vf_modern;	/* a 2026-07-28 backend */
	int				 vf_reprobed;
	int				 vf_done;
	int				 vf_ok;
	int				 vf_stale;	/* vf_lists: vf_old's */
	int				 vf_tried;	/* listed, not stored */
	int				 vf_force;	/* list, fresh or not */
	int				 vf_again;	/* changed: list again */
	unsigned int			 vf_redos;
	char				 vf_err[512];
};

struct vbuild {
	TAILQ_ENTRY(vbuild)	 vb_entry;
	struct worker		*vb_w;
	char			 vb_scope[64];
	TAILQ_HEAD(, view_wait)	 vb_waiters;
	struct vfetch		*vb_fetch;
	size_t			 vb_nfetch;
	size_t			 vb_pending;
	const char		*vb_only;	/* list only this backend */
	struct event		*vb_timer;	/* VIEW_WAIT_MS for waiters */
	json_t			*vb_early;	/* published at the timer */
	int			 vb_locked;	/* holds the "lock" record */
};

static TAILQ_HEAD(, vbuild) vbuilds = TAILQ_HEAD_INITIALIZER(vbuilds);

/* the aggregation policy: built once per worker from its config */
static struct view_policy	 views_pol;
static struct view_workload	*views_wl;
static struct view_override	*views_ov;
static int			 views_pol_ready;

static void	vfetch_next(struct vfetch *);
static void	vfetch_open(struct vfetch *);
static void	vfetch_start(struct vfetch *);
static void	vbuild_fetched(struct vfetch *);
static void	vbuild_finish(struct vbuild *);
static void	vbuild_free(struct vbuild *);
static int	views_lock(struct worker *, const char *);

/* keys are scoped to the daemon run and generation: a reload rebuilds */
static void
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
 * one cheap read of the record's stamp decides.  Lists and routes are
 * not decoded: they are read in place from the layout it names.
 */
static struct {
	char		 vc_key[STORE_KEY_MAX];
	struct store_rec vc_stamp;
	json_t		*vc_view;
} view_cache;

/*
 * stamp (a "raw" record's, or NULL): in, the record the caller has (0:
 * none); out, the one returned.  NULL: none, or still the stamped one.
 */
static json_t *
view_load(struct worker *w, const char *what, const char *scope,
    const char *backend, struct store_rec *stamp)
{
	struct store_rec	 rec;
	const struct store_rec	*have = NULL;
	json_t			*o;
	json_error_t		 jerr;
	char			 key[STORE_KEY_MAX];
	int			 cached, rc;

	memset(&rec, 0, sizeof(rec));
	view_key(w, key, sizeof(key), what, scope, backend);
	cached = view_cache.vc_view != NULL &&
	    strcmp(view_cache.vc_key, key) == 0;
	if (cached)
		have = &view_cache.vc_stamp;
	else if (stamp != NULL && stamp->sr_updated_ms != 0)
		have = stamp;
	rc = store_get_changed(w->w_store, STORE_VIEWS, key, strlen(key),
	    store_now_ms(), have, &rec);
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
	}
	if (o != NULL && stamp != NULL) {
		*stamp = rec;
		stamp->sr_data = NULL;
	}
	store_rec_clear(&rec);
	return o;
}

/* stamp: the stored record's, when wanted */
static void
view_save(struct worker *w, const char *what, const char *scope,
    const char *backend, json_t *o, uint64_t ttl_ms, struct store_rec *stamp)
{
	char		*buf, key[STORE_KEY_MAX];
	size_t		 len;
	uint64_t	 now = store_now_ms();

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
 * Store a built view as workers read it: its layout (view_layout.c)
 * under a key of its own, then the small header every worker decodes
 * (capabilities, freshness, the layout's key, digests of the lists),
 * then the previous layout goes: a worker still holding the old header
 * finds its layout gone and takes the new header (views_read()).  The
 * header, a new reference, or NULL.
 */
static json_t *
views_store(struct worker *w, const char *scope,
    const struct view_resolved *vs, json_t *hdr, uint64_t ttl_ms)
{
	static uint32_t	 seq;
	json_t		*digests = NULL, *errs = NULL, *old;
	char		 key[STORE_KEY_MAX], okey[STORE_KEY_MAX] = "", id[40];
	char		*buf = NULL;
	const char	*ok;
	size_t		 len, i;
	uint64_t	 now = store_now_ms(), vid;
	int		 rc = -1;

	/* unique across workers and restarts of one: pid, time, count */
	vid = (uint64_t)getpid() << 40 ^ now << 8 ^ seq++;
	(void)snprintf(id, sizeof(id), "%016llx", (unsigned long long)vid);
	if ((digests = json_object()) == NULL || (errs = json_array()) ==
	    NULL || view_layout(vs, vid, errs, &buf, &len, digests) == -1)
		goto done;
	for (i = 0; i < json_array_size(errs); i++)
		log_info("view: %s", json_string_value(json_array_get(errs,
		    i)));
	view_key(w, key, sizeof(key), "vdata", scope, id);
	/* outlives its header a little: a header never names a layout
	 * that expired first */
	if (store_put(w->w_store, STORE_VIEWS, key, strlen(key), buf, len,
	    now + ttl_ms + VIEW_LAYOUT_SPARE_MS, now) == -1) {
		log_warnx("cannot store the view's layout (%zu bytes)", len);
		goto done;
	}
	if ((old = view_load(w, "view", scope, NULL, NULL)) != NULL) {
		if ((ok = json_string_value(json_object_get(old, "layout"))) !=
		    NULL)
			(void)snprintf(okey, sizeof(okey), "%s", ok);
		json_decref(old);
	}
	if (json_object_set_new(hdr, "layout", json_string(key)) == -1 ||
	    json_object_set(hdr, "digests", digests) == -1)
		goto done;
	view_save(w, "view", scope, NULL, hdr, ttl_ms, NULL);
	if (okey[0] != '\0' && strcmp(okey, key) != 0)
		(void)store_del(w->w_store, STORE_VIEWS, okey, strlen(okey));
	rc = 0;
done:
	free(buf);
	json_decref(digests);
	json_decref(errs);
	return rc == 0 ? json_incref(hdr) : NULL;
}

/* what a read in place of the layout asks and answers */
struct views_read {
	int			 vr_what;	/* VIEWS_READ_* */
	const struct view_page_req *vr_req;
	struct view_page	*vr_page;
	enum view_route_kind	 vr_kind;
	const char		*vr_name;
	size_t			 vr_namelen;
	int			 vr_exact;
	struct view_route	*vr_route;
	int			 vr_rc;
};

#define VIEWS_READ_PAGE		0
#define VIEWS_READ_ROUTE	1
#define VIEWS_READ_TEMPLATE	2

/* inside store_read()'s txn: pure, copies out the slice asked for */
static int
views_read_cb(void *arg, const void *data, size_t len)
{
	struct views_read *r = arg;

	switch (r->vr_what) {
	case VIEWS_READ_PAGE:
		r->vr_rc = view_layout_page(data, len, r->vr_req, r->vr_page);
		break;
	case VIEWS_READ_ROUTE:
		r->vr_rc = view_layout_route(data, len, r->vr_kind, r->vr_name,
		    r->vr_namelen, r->vr_route);
		break;
	default:
		r->vr_rc = view_layout_template(data, len, r->vr_name,
		    r->vr_exact, r->vr_route);
		break;
	}
	return 0;
}

/*
 * The layout of view, read in place.  A layout gone (a newer view
 * replaced it since this header was read) is read from the newer view.
 */
static int
views_read(struct worker *w, json_t *view, struct views_read *r)
{
	json_t		*now = NULL;
	const char	*key = json_string_value(json_object_get(view,
			    "layout"));
	int		 rc, tries;

	for (tries = 0; tries < 2; tries++) {
		if (key == NULL)
			break;
		rc = store_read(w->w_store, STORE_VIEWS, key, strlen(key),
		    store_now_ms(), views_read_cb, r);
		if (rc == 0) {
			json_decref(now);
			return r->vr_rc;
		}
		if (rc != STORE_NOTFOUND || now != NULL)
			break;
		if ((now = view_peek(w)) == NULL)
			break;
		key = json_string_value(json_object_get(now, "layout"));
	}
	json_decref(now);
	return -1;
}

int
view_page_get(struct worker *w, json_t *view, const struct view_page_req *q,
    struct view_page *pg)
{
	struct views_read r;

	memset(&r, 0, sizeof(r));
	memset(pg, 0, sizeof(*pg));
	r.vr_what = VIEWS_READ_PAGE;
	r.vr_req = q;
	r.vr_page = pg;
	return views_read(w, view, &r);
}

int
view_route_get(struct worker *w, json_t *view, enum view_route_kind kind,
    const char *name, size_t namelen, struct view_route *route)
{
	struct views_read r;

	memset(&r, 0, sizeof(r));
	memset(route, 0, sizeof(*route));
	r.vr_what = VIEWS_READ_ROUTE;
	r.vr_kind = kind;
	r.vr_name = name;
	r.vr_namelen = namelen;
	r.vr_route = route;
	return views_read(w, view, &r);
}

int
view_template_get(struct worker *w, json_t *view, const char *uri, int exact,
    struct view_route *route)
{
	struct views_read r;

	memset(&r, 0, sizeof(r));
	memset(route, 0, sizeof(*route));
	r.vr_what = VIEWS_READ_TEMPLATE;
	r.vr_name = uri;
	r.vr_exact = exact;
	r.vr_route = route;
	return views_read(w, view, &r);
}

json_t *
view_peek(struct worker *w)
{
	return view_load(w, "view", VIEW_SCOPE_ANON, NULL, NULL);
}

static uint64_t
views_ttl(struct worker *w)
{
	return w->w_conf->cf_agg.ca_cache_ttl_ms;
}

static void
views_clock(struct worker *w, struct view_clock *c)
{
	c->vl_now = store_now_ms();
	c->vl_ttl = views_ttl(w);
	c->vl_stale = VIEW_STALE_MS;
	c->vl_retry = VIEW_RETRY_MS;
}

/* when a view or a backend's lists were made: their "fresh" or "listed" */
static uint64_t
views_stamp(json_t *o, const char *field)
{
	json_int_t v = json_integer_value(json_object_get(o, field));

	return v > 0 ? (uint64_t)v : 0;
}

void
views_free(void)
{
	struct vbuild		*b;
	struct view_wait	*vw;
	size_t			 i;

	/* at exit, after backend_free_all(): no call is left to cancel */
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
	json_decref(view_cache.vc_view);
	view_cache.vc_view = NULL;
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

static const struct view_policy *
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
	views_pol.vp_default_deny = ca->ca_default_deny;
	views_pol.vp_workloads = views_wl;
	views_pol.vp_nworkloads = ca->ca_nworkloads;
	views_pol_ready = 1;
	return &views_pol;
}

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

static void vfetch_fail(struct vfetch *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* use a "raw" record's lists (borrowed from it: f keeps references) */
static void
vfetch_take(struct vfetch *f, json_t *raw)
{
	int k;

	for (k = 0; k < VK_N; k++) {
		json_decref(f->vf_lists[k]);
		f->vf_lists[k] = json_incref(json_object_get(raw,
		    vkinds[k].vk_field));
		if (f->vf_lists[k] == NULL)
			f->vf_lists[k] = json_array();
	}
	json_decref(f->vf_caps);
	f->vf_caps = json_incref(json_object_get(raw, "capabilities"));
	f->vf_listed = views_stamp(raw, "listed");
}

/*
 * Fresh lists: stored for every worker's builds, unless the store has
 * some listed after this listing began (another build saw a change we
 * may have missed): then those are used.
 */
static void
vfetch_save(struct vfetch *f)
{
	struct vbuild	*b = f->vf_build;
	json_t		*raw;

	f->vf_listed = f->vf_started;
	raw = view_load(b->vb_w, "raw", b->vb_scope, f->vf_be->cb_name,
	    &f->vf_rec);
	if (raw != NULL && views_stamp(raw, "listed") > f->vf_started) {
		vfetch_take(f, raw);
		json_decref(raw);
		return;
	}
	json_decref(raw);
	raw = json_pack("{s:O*, s:O, s:O, s:O, s:O, s:I}",
	    "capabilities", f->vf_caps,
	    "tools", f->vf_lists[VK_TOOLS],
	    "resources", f->vf_lists[VK_RESOURCES],
	    "resourceTemplates", f->vf_lists[VK_TEMPLATES],
	    "prompts", f->vf_lists[VK_PROMPTS],
	    "listed", (json_int_t)f->vf_listed);
	if (raw != NULL)
		view_save(b->vb_w, "raw", b->vb_scope, f->vf_be->cb_name, raw,
		    views_ttl(b->vb_w) + VIEW_STALE_MS, &f->vf_rec);
	json_decref(raw);
}

/* what went wrong with this backend: fmt names it */
static void
vfetch_fail(struct vfetch *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(f->vf_err, sizeof(f->vf_err), fmt, ap);
	va_end(ap);
	f->vf_ok = 0;
	if (f->vf_old != NULL) {
		vfetch_take(f, f->vf_old);
		f->vf_ok = f->vf_stale = 1;
	}
	f->vf_done = 1;
	vbuild_fetched(f);
}

static void
vfetch_on_list(void *arg, int rc, json_t *response, int flags,
    const char *errmsg)
{
	struct vfetch	*f = arg;
	json_t		*result, *items, *next;
	const char	*field = vkinds[f->vf_kind].vk_field;
	size_t		 i;

	f->vf_call = NULL;
	if (rc == -1 && f->vf_modern && (flags & BACKEND_F_REFUSED) &&
	    !proto_modern_error(response) && !f->vf_reprobed) {
		/* it no longer takes 2026-07-28: a list is safe to redo */
		f->vf_reprobed = 1;
		era_forget(f->vf_build->vb_w, f->vf_be, errmsg);
		for (i = 0; i < VK_N; i++)
			json_array_clear(f->vf_lists[i]);
		f->vf_kind = 0;
		f->vf_pages = 0;
		free(f->vf_cursor);
		f->vf_cursor = NULL;
		json_object_clear(f->vf_cursors);
		vfetch_start(f);
		return;
	}
	if (rc == -1 && (flags & BACKEND_F_LOST) && !f->vf_reopened) {
		/* the backend forgot the listing session: open anew */
		f->vf_reopened = 1;
		bsession_forget(f->vf_build->vb_w, f->vf_build->vb_scope,
		    f->vf_be);
		vfetch_open(f);
		return;
	}
	if (rc == -1) {
		/* the backend client's message names the backend already */
		vfetch_fail(f, "%s", errmsg);
		return;
	}
	if (json_object_get(response, "error") != NULL) {
		const char *m = json_string_value(json_object_get(
		    json_object_get(response, "error"), "message"));

		vfetch_fail(f, "backend %s refused to list: %s",
		    f->vf_be->cb_name, m != NULL ? m : "(no message)");
		return;
	}
	result = json_object_get(response, "result");
	items = json_object_get(result, field);
	if (!json_is_array(items)) {
		vfetch_fail(f, "backend %s sent a list without \"%s\"",
		    f->vf_be->cb_name, field);
		return;
	}
	for (i = 0; i < json_array_size(items); i++)
		(void)json_array_append(f->vf_lists[f->vf_kind],
		    json_array_get(items, i));
	free(f->vf_cursor);
	f->vf_cursor = NULL;
	next = json_object_get(result, "nextCursor");
	if (json_is_string(next)) {
		/* bounded, and a repeated cursor is a loop */
		if (json_object_get(f->vf_cursors, json_string_value(next))) {
			vfetch_fail(f, "backend %s repeated a list cursor: "
			    "%.64s", f->vf_be->cb_name,
			    json_string_value(next));
			return;
		}
		if (++f->vf_pages >= f->vf_build->vb_w->w_conf->cf_agg
		    .ca_max_backend_pages) {
			vfetch_fail(f, "backend %s: a list longer than "
			    "aggregation.maxBackendPages", f->vf_be->cb_name);
			return;
		}
		if ((f->vf_cursor = strdup(json_string_value(next))) == NULL ||
		    json_object_set_new(f->vf_cursors, f->vf_cursor,
		    json_true()) == -1) {
			vfetch_fail(f, "backend %s: out of memory",
			    f->vf_be->cb_name);
			return;
		}
	} else {
		f->vf_kind++;
		f->vf_pages = 0;
		json_object_clear(f->vf_cursors);
	}
	vfetch_next(f);
}

/* list the next kind the backend offers, or the next page of this one */
static void
vfetch_next(struct vfetch *f)
{
	static const struct backend_call_cbs cbs = { NULL, NULL,
	    vfetch_on_list, NULL };
	struct worker	*w = f->vf_build->vb_w;
	json_t		*params = NULL;

	while (f->vf_kind < VK_N && !json_is_object(json_object_get(f->vf_caps,
	    vkinds[f->vf_kind].vk_cap)))
		f->vf_kind++;
	if (f->vf_kind == VK_N) {
		vfetch_save(f);
		f->vf_ok = 1;
		f->vf_done = 1;
		vbuild_fetched(f);
		return;
	}
	if (f->vf_cursor != NULL &&
	    (params = json_pack("{s:s}", "cursor", f->vf_cursor)) == NULL) {
		vfetch_fail(f, "backend %s: out of memory",
		    f->vf_be->cb_name);
		return;
	}
	if (f->vf_modern)
		f->vf_call = backend_rpc_modern(w, f->vf_be,
		    vkinds[f->vf_kind].vk_method, params, NULL, NULL, NULL,
		    &cbs, f);
	else
		f->vf_call = backend_rpc(w, f->vf_be, f->vf_bsid, f->vf_bver,
		    vkinds[f->vf_kind].vk_method, params, &cbs, f);
	json_decref(params);
	if (f->vf_call == NULL)
		vfetch_fail(f, "backend %s: cannot send the list request",
		    f->vf_be->cb_name);
}

/* list what a backend's initialize or discover result says it offers */
static void
vfetch_list(struct vfetch *f, json_t *result)
{
	json_decref(f->vf_caps);
	f->vf_caps = json_incref(json_object_get(result, "capabilities"));
	vfetch_next(f);
}

static void
vfetch_opened(void *arg, int rc, const char *bsid, const char *version,
    json_t *init_result, const char *errmsg)
{
	struct vfetch	*f = arg;
	struct vbuild	*b = f->vf_build;

	if (rc == -1) {
		vfetch_fail(f, "backend %s: %s", f->vf_be->cb_name, errmsg);
		return;
	}
	free(f->vf_bsid);
	free(f->vf_bver);
	f->vf_bsid = bsid != NULL ? strdup(bsid) : NULL;
	f->vf_bver = strdup(version);
	bsession_save(b->vb_w, b->vb_scope, f->vf_be, bsid, version);
	vfetch_list(f, init_result);
}

static void
vfetch_open(struct vfetch *f)
{
	if (backend_open(f->vf_build->vb_w, f->vf_be, NULL, vfetch_opened,
	    f) == -1)
		vfetch_fail(f, "backend %s: cannot open a session",
		    f->vf_be->cb_name);
}

/* a 2026-07-28 backend's capabilities, when its probe's are gone */
static void
vfetch_discovered(void *arg, int rc, json_t *response, int flags,
    const char *errmsg)
{
	struct vfetch	*f = arg;
	json_t		*result;

	(void)flags;
	f->vf_call = NULL;
	result = json_object_get(response, "result");
	if (rc == -1 || !json_is_object(result)) {
		vfetch_fail(f, "backend %s: server/discover failed: %s",
		    f->vf_be->cb_name, rc == -1 ? errmsg : "no result");
		return;
	}
	backend_info_put(f->vf_build->vb_w, f->vf_be, MCP_VERSION_MODERN,
	    result);
	vfetch_list(f, result);
}

static void
vfetch_modern(struct vfetch *f)
{
	static const struct backend_call_cbs cbs = { NULL, NULL,
	    vfetch_discovered, NULL };
	json_t	*info, *pv;

	f->vf_modern = 1;
	info = backend_info_get(f->vf_build->vb_w, f->vf_be);
	pv = json_object_get(info, "pv");
	if (proto_era_of_version(json_string_value(pv)) == PROTO_ERA_MODERN) {
		vfetch_list(f, json_object_get(info, "result"));
		json_decref(info);
		return;
	}
	json_decref(info);
	f->vf_call = backend_rpc_modern(f->vf_build->vb_w, f->vf_be,
	    "server/discover", NULL, NULL, NULL, NULL, &cbs, f);
	if (f->vf_call == NULL)
		vfetch_fail(f, "backend %s: cannot send server/discover",
		    f->vf_be->cb_name);
}

static void
vfetch_on_era(void *arg, enum proto_era era)
{
	struct vfetch *f = arg;

	if (era == PROTO_ERA_MODERN)
		vfetch_modern(f);
	else
		vfetch_start(f);
}

/* start one backend: its cached lists, else fetch them */
static void
vfetch_start(struct vfetch *f)
{
	struct vbuild		*b = f->vf_build;
	struct view_clock	 c;
	json_t			*raw, *info;
	enum view_part		 age;
	int			 era;

	views_clock(b->vb_w, &c);
	f->vf_started = c.vl_now;
	if ((raw = view_load(b->vb_w, "raw", b->vb_scope,
	    f->vf_be->cb_name, &f->vf_rec)) != NULL) {
		age = view_part_age(&c, views_stamp(raw, "listed"));
		/* a build for one backend's change takes the others as
		 * they are: past cacheTtl, they are rebuilt soon after */
		if ((age == VIEW_PART_FRESH && !f->vf_force) ||
		    (age == VIEW_PART_STALE && b->vb_only != NULL &&
		    !f->vf_force)) {
			vfetch_take(f, raw);
			json_decref(raw);
			if ((f->vf_stale = age == VIEW_PART_STALE))
				(void)snprintf(f->vf_err, sizeof(f->vf_err),
				    "backend %s: not listed again yet",
				    f->vf_be->cb_name);
			f->vf_ok = 1;
			f->vf_done = 1;
			vbuild_fetched(f);
			return;
		}
		/* listed anew; these stand in if that fails */
		json_decref(f->vf_old);
		f->vf_old = age != VIEW_PART_MISSING ? raw : NULL;
		if (f->vf_old == NULL)
			json_decref(raw);
	}
	f->vf_tried = 1;
	f->vf_modern = 0;
	if ((era = era_resolve(b->vb_w, f->vf_be, ERA_LISTING,
	    vfetch_on_era, f)) == 0)
		return;		/* probing; vfetch_on_era goes on */
	if (era == PROTO_ERA_MODERN) {
		vfetch_modern(f);
		return;
	}
	info = backend_info_get(b->vb_w, f->vf_be);
	if (info != NULL && bsession_load(b->vb_w, b->vb_scope, f->vf_be,
	    &f->vf_bsid, &f->vf_bver) == 0) {
		vfetch_list(f, json_object_get(info, "result"));
		json_decref(info);
		return;
	}
	json_decref(info);
	vfetch_open(f);
}

static void
vfetch_clear(struct vfetch *f)
{
	int k;

	backend_call_cancel(f->vf_call);
	if (f->vf_build != NULL)
		era_resolve_cancel(f->vf_build->vb_w, f);
	for (k = 0; k < VK_N; k++)
		json_decref(f->vf_lists[k]);
	json_decref(f->vf_caps);
	json_decref(f->vf_cursors);
	json_decref(f->vf_old);
	free(f->vf_cursor);
	free(f->vf_bsid);
	free(f->vf_bver);
}

static void
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

/* a fetch set to list its backend afresh, keeping what says how */
static void
vfetch_reset(struct vfetch *f, struct vbuild *b,
    const struct config_backend *be, int force)
{
	unsigned int	redos = f->vf_redos;
	int		k;

	vfetch_clear(f);
	memset(f, 0, sizeof(*f));
	f->vf_build = b;
	f->vf_be = be;
	f->vf_force = force;
	f->vf_redos = redos;
	f->vf_cursors = json_object();
	for (k = 0; k < VK_N; k++)
		f->vf_lists[k] = json_array();
}

/*
 * Lists of the backend stored since f got its own and listed later (by
 * another build, in this worker or another): those are the ones to use.
 */
static void
vfetch_newer(struct vfetch *f, const struct view_clock *c)
{
	struct vbuild	*b = f->vf_build;
	json_t		*raw;
	enum view_part	 age;
	uint64_t	 listed;

	if ((raw = view_load(b->vb_w, "raw", b->vb_scope, f->vf_be->cb_name,
	    &f->vf_rec)) == NULL)
		return;
	listed = views_stamp(raw, "listed");
	age = view_part_age(c, listed);
	if (age != VIEW_PART_MISSING && (!f->vf_ok || listed > f->vf_listed)) {
		vfetch_take(f, raw);
		f->vf_ok = 1;
		f->vf_tried = 0;
		if (!(f->vf_stale = age != VIEW_PART_FRESH))
			f->vf_err[0] = '\0';
		else
			(void)snprintf(f->vf_err, sizeof(f->vf_err),
			    "backend %s: not listed again yet",
			    f->vf_be->cb_name);
	}
	json_decref(raw);
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
	json_t			*view = NULL, *hdr = NULL, *caps, *src;
	size_t			 i, nuse = 0;
	uint64_t		 fresh;
	int			 k;

	memset(&vs, 0, sizeof(vs));
	views_clock(w, &c);
	caps = json_object();
	if (caps == NULL || (in = calloc(b->vb_nfetch + 1, sizeof(*in))) ==
	    NULL || (use = calloc(b->vb_nfetch + 1, sizeof(*use))) == NULL)
		goto oom;
	for (i = 0; i < b->vb_nfetch; i++) {
		struct vfetch		*f = &b->vb_fetch[i];
		struct view_input	*vi = &in[i];

		vi->vi_backend = f->vf_be->cb_name;
		src = NULL;
		if (f->vf_done)
			vfetch_newer(f, &c);
		if (f->vf_done && f->vf_ok) {
			vi->vi_part = f->vf_stale ? VIEW_PART_STALE :
			    VIEW_PART_FRESH;
			vi->vi_listed_ms = f->vf_listed;
			vi->vi_tools = f->vf_lists[VK_TOOLS];
			vi->vi_resources = f->vf_lists[VK_RESOURCES];
			vi->vi_templates = f->vf_lists[VK_TEMPLATES];
			vi->vi_prompts = f->vf_lists[VK_PROMPTS];
			views_caps_merge(caps, f->vf_caps);
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
		if (vi->vi_part != VIEW_PART_MISSING)
			use[nuse++] = *vi;
	}
	/* the header: capabilities, freshness marks; the layout's key */
	if ((hdr = json_pack("{s:O}", "capabilities", caps)) == NULL ||
	    view_mark(hdr, in, b->vb_nfetch, &c) == -1 ||
	    view_resolve(views_policy(w), use, nuse, &vs) == -1)
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
	json_decref(hdr);
	json_decref(caps);
	free(in);
	free(use);
	return view;
}

/* answer the waiters of a view (all, or those not waiting for the end) */
static void
vbuild_answer(struct vbuild *b, int all, json_t *view, const char *err)
{
	TAILQ_HEAD(, view_wait)	 now;
	struct view_wait	*vw, *next;

	/* taken off first: an answer may start or join a build */
	TAILQ_INIT(&now);
	for (vw = TAILQ_FIRST(&b->vb_waiters); vw != NULL; vw = next) {
		next = TAILQ_NEXT(vw, vw_entry);
		if (all || !vw->vw_final) {
			TAILQ_REMOVE(&b->vb_waiters, vw, vw_entry);
			TAILQ_INSERT_TAIL(&now, vw, vw_entry);
		}
	}
	while ((vw = TAILQ_FIRST(&now)) != NULL) {
		TAILQ_REMOVE(&now, vw, vw_entry);
		vw->vw_cb(vw->vw_arg, view, view == NULL ? err : NULL);
		free(vw);
	}
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
	vbuild_answer(b, 1, view, err);
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
	vbuild_answer(b, 0, view, err);		/* b may be gone now */
	json_decref(view);
}

/* a build of the whole view (only NULL), or for one backend's change */
static struct vbuild *
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

static void
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

static int
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
static int
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
 * A view past its freshness: the worker that takes the lock builds the
 * next one, in the background.  The others ask again at most once a
 * second.
 */
static void
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

int
view_get(struct worker *w, view_cb cb, void *arg)
{
	struct vbuild	*b;
	json_t		*view;
	const char	*scope = VIEW_SCOPE_ANON;
	int		 fresh;

	if ((view = view_load(w, "view", scope, NULL, NULL)) != NULL) {
		fresh = store_now_ms() < views_stamp(view, "fresh");
		cb(arg, view, NULL);
		json_decref(view);
		if (!fresh)
			views_revalidate(w, scope);
		return 0;
	}
	/* none yet (a new generation): the one wait, VIEW_WAIT_MS at most */
	if ((b = vbuild_find(w, scope, NULL)) != NULL)
		return vbuild_wait(b, cb, arg, 0);
	return vbuild_begin(w, scope, NULL, cb, arg, 0);
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

/* a waiter that no longer wants the view (its client went away) */
void
view_get_cancel(struct worker *w, void *arg)
{
	struct vbuild		*b;
	struct view_wait	*vw, *tmp;

	(void)w;
	TAILQ_FOREACH(b, &vbuilds, vb_entry)
		for (vw = TAILQ_FIRST(&b->vb_waiters); vw != NULL; vw = tmp) {
			tmp = TAILQ_NEXT(vw, vw_entry);
			if (vw->vw_arg == arg) {
				TAILQ_REMOVE(&b->vb_waiters, vw, vw_entry);
				free(vw);
			}
		}
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
