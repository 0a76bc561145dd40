/*
 * Views: the aggregated capability view, fetched from every backend in
 * parallel, built by view_build() and shared through the store's
 * "views" database by every worker.  Each backend's raw lists are kept
 * apart so that one backend's list_changed refetches only that
 * backend.  Concurrent misses in a worker wait for one build.
 *
 * Listing uses a backend session per (scope, backend) kept in the
 * "bsessions" database, not a client's: a view belongs to an identity
 * scope, not to a session.
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "view.h"
#include "worker.h"

#define VIEW_SCOPE_ANON		BSESSION_SCOPE_ANON

#define VIEW_FAILED_TTL_MS	5000	/* a partial view is kept briefly */

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
	int			 vb_stale;	/* invalidated while building */
	int			 vb_restarts;
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
static void	vbuild_start(struct vbuild *);
static void	vbuild_finish(struct vbuild *);

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
 * The decoded view, kept while the store's copy is the same one: a hot
 * path that re-parsed the whole view on every request would cost more
 * than the request.  One cheap read of the record's stamp decides.
 */
static struct {
	char		 vc_key[STORE_KEY_MAX];
	struct store_rec vc_stamp;
	json_t		*vc_view;
} view_cache;

static json_t *
view_load(struct worker *w, const char *what, const char *scope,
    const char *backend)
{
	struct store_rec	 rec;
	json_t			*o;
	json_error_t		 jerr;
	char			 key[STORE_KEY_MAX];
	int			 cached, rc;

	memset(&rec, 0, sizeof(rec));
	view_key(w, key, sizeof(key), what, scope, backend);
	cached = view_cache.vc_view != NULL &&
	    strcmp(view_cache.vc_key, key) == 0;
	rc = store_get_changed(w->w_store, STORE_VIEWS, key, strlen(key),
	    store_now_ms(), cached ? &view_cache.vc_stamp : NULL, &rec);
	if (rc == STORE_UNCHANGED)
		return json_incref(view_cache.vc_view);
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
	store_rec_clear(&rec);
	return o;
}

static void
view_save(struct worker *w, const char *what, const char *scope,
    const char *backend, json_t *o, uint64_t ttl_ms)
{
	char		*buf, key[STORE_KEY_MAX];
	size_t		 len;
	uint64_t	 now = store_now_ms();

	view_key(w, key, sizeof(key), what, scope, backend);
	if ((buf = jsonrpc_dump(o, &len)) == NULL)
		return;
	if (store_put(w->w_store, STORE_VIEWS, key, strlen(key), buf, len,
	    now + ttl_ms, now) == -1)
		log_warnx("cannot store the %s view (%zu bytes)", what, len);
	free(buf);
}

json_t *
view_peek(struct worker *w)
{
	return view_load(w, "view", VIEW_SCOPE_ANON, NULL);
}

void
view_invalidate_backend(struct worker *w, const char *backend)
{
	struct vbuild	*b;
	char		 key[STORE_KEY_MAX];

	TAILQ_FOREACH(b, &vbuilds, vb_entry)
		b->vb_stale = 1;

	view_key(w, key, sizeof(key), "raw", VIEW_SCOPE_ANON, backend);
	(void)store_del(w->w_store, STORE_VIEWS, key, strlen(key));
	view_key(w, key, sizeof(key), "view", VIEW_SCOPE_ANON, NULL);
	(void)store_del(w->w_store, STORE_VIEWS, key, strlen(key));
}

static uint64_t
views_ttl(struct worker *w)
{
	return w->w_conf->cf_agg.ca_cache_ttl_ms;
}

void
views_free(void)
{
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

/* what went wrong with this backend: fmt names it */
static void
vfetch_fail(struct vfetch *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(f->vf_err, sizeof(f->vf_err), fmt, ap);
	va_end(ap);
	f->vf_ok = 0;
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
	struct vbuild	*b = f->vf_build;
	json_t		*raw, *info;
	int		 k, era;

	if ((raw = view_load(b->vb_w, "raw", b->vb_scope,
	    f->vf_be->cb_name)) != NULL) {
		for (k = 0; k < VK_N; k++) {
			json_decref(f->vf_lists[k]);
			f->vf_lists[k] = json_incref(json_object_get(raw,
			    vkinds[k].vk_field));
			if (f->vf_lists[k] == NULL)
				f->vf_lists[k] = json_array();
		}
		f->vf_caps = json_incref(json_object_get(raw,
		    "capabilities"));
		json_decref(raw);
		f->vf_ok = 1;
		f->vf_done = 1;
		vbuild_fetched(f);
		return;
	}
	f->vf_modern = 0;
	if ((era = era_resolve(b->vb_w, f->vf_be, vfetch_on_era, f)) == 0)
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
	free(b);
}

/* every backend fetched (or failed): build, store, answer the waiters */
static void
vbuild_finish(struct vbuild *b)
{
	struct worker		*w = b->vb_w;
	struct view_input	*in = NULL;
	struct view_wait	*vw;
	json_t			*view = NULL, *raw, *errs, *caps;
	char			 err[1024] = "";
	size_t			 i, n = 0, nfailed = 0;
	int			 fail_all;

	/*
	 * A backend changed while we listed it: what we have may be from
	 * before the change; list again rather than share a stale view.
	 */
	if (b->vb_stale && b->vb_restarts < 3) {
		b->vb_restarts++;
		vbuild_start(b);
		return;
	}
	TAILQ_REMOVE(&vbuilds, b, vb_entry);
	fail_all = w->w_conf->cf_partial_failure == CONFIG_PARTIAL_FAIL;
	caps = json_object();
	if (caps == NULL ||
	    (in = calloc(b->vb_nfetch, sizeof(*in))) == NULL) {
		(void)snprintf(err, sizeof(err), "out of memory");
		goto answer;
	}
	for (i = 0; i < b->vb_nfetch; i++) {
		struct vfetch *f = &b->vb_fetch[i];

		if (!f->vf_ok) {
			log_warnx("view: %s", f->vf_err);
			nfailed++;
			if (err[0] == '\0')
				(void)snprintf(err, sizeof(err), "%s",
				    f->vf_err);
			continue;
		}
		raw = json_pack("{s:O, s:O, s:O, s:O, s:O}",
		    "capabilities", f->vf_caps,
		    "tools", f->vf_lists[VK_TOOLS],
		    "resources", f->vf_lists[VK_RESOURCES],
		    "resourceTemplates", f->vf_lists[VK_TEMPLATES],
		    "prompts", f->vf_lists[VK_PROMPTS]);
		if (raw != NULL) {
			view_save(w, "raw", b->vb_scope, f->vf_be->cb_name, raw,
			    views_ttl(w));
			json_decref(raw);
		}
		views_caps_merge(caps, f->vf_caps);
		in[n].vi_backend = f->vf_be->cb_name;
		in[n].vi_tools = f->vf_lists[VK_TOOLS];
		in[n].vi_resources = f->vf_lists[VK_RESOURCES];
		in[n].vi_templates = f->vf_lists[VK_TEMPLATES];
		in[n].vi_prompts = f->vf_lists[VK_PROMPTS];
		n++;
	}
	if (nfailed > 0 && (fail_all || n == 0))
		goto answer;
	if ((view = view_build(views_policy(w), in, n)) == NULL) {
		(void)snprintf(err, sizeof(err), "out of memory");
		goto answer;
	}
	(void)json_object_set_new(view, "capabilities", caps);
	caps = NULL;
	errs = json_object_get(view, "errors");
	for (i = 0; i < json_array_size(errs); i++)
		log_warnx("view: %s", json_string_value(json_array_get(errs,
		    i)));
	/* a view missing a backend is kept only briefly */
	view_save(w, "view", b->vb_scope, NULL, view, nfailed > 0 ?
	    VIEW_FAILED_TTL_MS : views_ttl(w));
	err[0] = '\0';
answer:
	json_decref(caps);
	free(in);
	while ((vw = TAILQ_FIRST(&b->vb_waiters)) != NULL) {
		TAILQ_REMOVE(&b->vb_waiters, vw, vw_entry);
		vw->vw_cb(vw->vw_arg, view, view == NULL ? err : NULL);
		free(vw);
	}
	json_decref(view);
	vbuild_free(b);
}

/* fetch every backend (its raw lists from the store when they are there) */
static void
vbuild_start(struct vbuild *b)
{
	size_t	i;
	int	k;

	b->vb_stale = 0;
	b->vb_pending = b->vb_nfetch + 1;	/* +1 until all started */
	for (i = 0; i < b->vb_nfetch; i++) {
		struct vfetch *f = &b->vb_fetch[i];

		vfetch_clear(f);
		memset(f, 0, sizeof(*f));
		f->vf_build = b;
		f->vf_be = &b->vb_w->w_conf->cf_backends[i];
		f->vf_cursors = json_object();
		for (k = 0; k < VK_N; k++)
			f->vf_lists[k] = json_array();
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

	if (--b->vb_pending == 0)
		vbuild_finish(b);
}

int
view_get(struct worker *w, view_cb cb, void *arg)
{
	struct vbuild		*b;
	struct view_wait	*vw;
	json_t			*view;
	const char		*scope = VIEW_SCOPE_ANON;

	if ((view = view_load(w, "view", scope, NULL)) != NULL) {
		cb(arg, view, NULL);
		json_decref(view);
		return 0;
	}
	if ((vw = calloc(1, sizeof(*vw))) == NULL)
		return -1;
	vw->vw_cb = cb;
	vw->vw_arg = arg;
	TAILQ_FOREACH(b, &vbuilds, vb_entry)
		if (b->vb_w == w && strcmp(b->vb_scope, scope) == 0) {
			TAILQ_INSERT_TAIL(&b->vb_waiters, vw, vw_entry);
			return 0;
		}
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->vb_fetch = calloc(w->w_conf->cf_nbackends,
	    sizeof(*b->vb_fetch))) == NULL) {
		free(b);
		free(vw);
		return -1;
	}
	b->vb_w = w;
	(void)snprintf(b->vb_scope, sizeof(b->vb_scope), "%s", scope);
	TAILQ_INIT(&b->vb_waiters);
	TAILQ_INSERT_TAIL(&b->vb_waiters, vw, vw_entry);
	TAILQ_INSERT_TAIL(&vbuilds, b, vb_entry);
	b->vb_nfetch = w->w_conf->cf_nbackends;
	vbuild_start(b);
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
