/*
 * Views: the aggregated capability view, fetched from every backend in
 * parallel, resolved by view_resolve(), laid out by view_layout() and
 * shared through the store's "views" database by every worker, which
 * reads it in place (views_read()).
 *
 * Views are built in the builder process alone (builder.c, which sets
 * views_builder): a worker asks it with WAKE_VIEW_BUILD and reads what
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
 */
#include <sys/queue.h>

#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/log.h"
#include "shared/store.h"
#include "view.h"
#include "wake.h"
#include "worker.h"

#define VIEW_SCOPE_ANON		BSESSION_SCOPE_ANON

#define VIEW_RETRY_MS	5000	/* a view lacking a fresh part: rebuilt after */
#define VIEW_STALE_MS	(10 * 60 * 1000)	/* last good lists stand in */
#define VIEW_WAIT_MS	5000	/* a request waits for a first view at most */
#define VIEW_LOCK_RETRY_MS 1000	/* a stale view: ask again after */
#define VIEW_LAYOUT_SPARE_MS 60000	/* a layout outlives its header by */
#define VIEW_ASK_MS	250	/* a first view awaited: look, ask again */
#define VIEW_ASK_SPARE_MS 5000	/* ...past VIEW_WAIT_MS (a builder respawned) */

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
TAILQ_HEAD(vwaits, view_wait);

struct vbuild;

/* fetching one backend's lists */
struct vfetch {
	struct vbuild			*vf_build;
	const struct config_backend	*vf_be;
	struct upstream			*vf_call;
	json_t				*vf_lists[VK_N];
	json_t				*vf_caps;
	json_t				*vf_cursors;	/* seen, for loops */
	json_t				*vf_old;	/* last good lists */
	struct store_rec		 vf_rec;	/* stored lists' stamp */
	uint64_t			 vf_started;	/* this listing, ms */
	uint64_t			 vf_listed;	/* vf_lists', ms */
	char				*vf_cursor;	/* next page, or NULL */
	enum vkind			 vf_kind;
	unsigned int			 vf_pages;
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
	struct vwaits		 vb_waiters;
	struct vfetch		*vb_fetch;
	size_t			 vb_nfetch;
	size_t			 vb_pending;
	const char		*vb_only;	/* list only this backend */
	struct event		*vb_timer;	/* VIEW_WAIT_MS for waiters */
	json_t			*vb_early;	/* published at the timer */
	int			 vb_locked;	/* holds the "lock" record */
};

static TAILQ_HEAD(, vbuild) vbuilds = TAILQ_HEAD_INITIALIZER(vbuilds);

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
static int			 views_builder;

/* the aggregation policy: built once per worker from its config */
static struct view_policy	 views_pol;
static struct view_workload	*views_wl;
static struct view_override	*views_ov;
static int			 views_pol_ready;

static void	vfetch_next(struct vfetch *);
static void	vfetch_start(struct vfetch *);
static void	vbuild_fetched(struct vfetch *);
static void	vbuild_finish(struct vbuild *);
static void	vbuild_free(struct vbuild *);
static int	views_lock(struct worker *, const char *);
static void	vask_free(struct vask *);

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
 * A view's layout is stored as shards: each is a layout of its own
 * (view_layout() of a slice of one kind's entries, at most about
 * VIEW_SHARD_BYTES) under "vdata|run.gen|scope|id.n", each in a write
 * transaction of its own.  LMDB has one writer across all processes: a
 * layout stored whole (14.5 MB at 64,000 tools) held the lock for tens
 * of ms, and a worker's own write (a session's last-seen time) waited
 * behind it.  A shard holds whole runs of one key, so a name's route or
 * a cursor's key is in the one shard the directory points to.
 */
#define VIEW_SHARD_BYTES	(256 * 1024)
#define VIEW_SHARD_FIRST	256	/* entries tried in a first shard */

/* a publication in progress */
struct vstore {
	struct worker	*vt_w;
	const char	*vt_prefix;	/* vdata|run.gen|scope|id */
	uint64_t	 vt_vid;
	uint64_t	 vt_expires, vt_now;
	json_t		*vt_errs;
	json_t		*vt_shards;	/* kind field -> [[n, first, l, m]] */
	uint64_t	 vt_digest[VIEW_KIND_N];
	size_t		 vt_n;		/* shards stored */
	size_t		 vt_bytes;
	uint64_t	 vt_longest;	/* us: the longest write txn */
};

/* fault injection for the tests: a builder killed mid-publication */
static void
views_crash_point(struct vstore *t)
{
	static const char	*path;
	static int		 looked;

	if (!looked) {
		path = getenv("VMCPD_TEST_BUILDER_CRASH");
		looked = 1;
	}
	/* the file is the one-shot trigger: its respawn publishes */
	if (path != NULL && t->vt_n == 2 && unlink(path) == 0) {
		log_warnx("view: crashing mid-publication (%s)", path);
		(void)raise(SIGKILL);
	}
}

static uint64_t
views_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* one shard: laid out, stored in its own write txn, listed */
static int
views_shard_put(struct vstore *t, enum view_kind k,
    const struct view_resolved *vs, size_t at, size_t n, size_t *len)
{
	struct view_resolved	 sub;
	json_t			*dig = NULL, *ent;
	const char		*d;
	char			*buf = NULL, key[STORE_KEY_MAX];
	size_t			 listed, modern;
	uint64_t		 t0, us;
	int			 rc = -1;

	memset(&sub, 0, sizeof(sub));
	sub.vs_e[k] = vs->vs_e[k] + at;
	sub.vs_n[k] = n;
	if ((dig = json_object()) == NULL || view_layout(&sub, t->vt_vid,
	    t->vt_errs, &buf, len, dig) == -1 || view_layout_counts(buf,
	    *len, k, &listed, &modern) == -1)
		goto done;
	if (*len > VIEW_SHARD_BYTES && n > 1) {
		rc = 1;		/* too big: the caller halves it */
		goto done;
	}
	/* the view's digest of a list: over its shards' */
	if ((d = json_string_value(json_object_get(dig,
	    view_kind_field(k)))) != NULL)
		while (*d != '\0')
			t->vt_digest[k] = (t->vt_digest[k] ^
			    (unsigned char)*d++) * 1099511628211ULL;
	if ((size_t)snprintf(key, sizeof(key), "%s.%zu", t->vt_prefix,
	    t->vt_n) >= sizeof(key))
		goto done;
	views_crash_point(t);
	/* a fresh slice for the write: a builder preempted inside one
	 * (nice 5, a loaded machine) holds every writer up */
	(void)sched_yield();
	t0 = views_us();
	/* outlives its header a little: a header never names a shard
	 * that expired first */
	if (store_put(t->vt_w->w_store, STORE_VIEWS, key, strlen(key), buf,
	    *len, t->vt_expires + VIEW_LAYOUT_SPARE_MS, t->vt_now) == -1) {
		log_warnx("cannot store a shard of the view's layout (%zu "
		    "bytes)", *len);
		goto done;
	}
	if ((us = views_us() - t0) > t->vt_longest)
		t->vt_longest = us;
	t->vt_bytes += *len;
	if ((ent = json_pack("[I s I I]", (json_int_t)t->vt_n, n > 0 ?
	    vs->vs_e[k][at].ve_name : "", (json_int_t)listed,
	    (json_int_t)modern)) == NULL || json_array_append_new(
	    json_object_get(t->vt_shards, view_kind_field(k)), ent) == -1)
		goto done;
	t->vt_n++;
	rc = 0;
done:
	free(buf);
	json_decref(dig);
	return rc;
}

/* one kind's entries as shards: whole runs of a key, about a shard each */
static int
views_store_kind(struct vstore *t, enum view_kind k,
    const struct view_resolved *vs)
{
	size_t	 at = 0, n, try = VIEW_SHARD_FIRST, len, total = vs->vs_n[k];
	int	 rc;

	if (json_object_set_new(t->vt_shards, view_kind_field(k),
	    json_array()) == -1)
		return -1;
	if (total == 0)		/* an empty shard: every kind has one */
		return views_shard_put(t, k, vs, 0, 0, &len) == 0 ? 0 : -1;
	while (at < total) {
		n = try < total - at ? try : total - at;
		while (at + n < total && strcmp(vs->vs_e[k][at + n].ve_name,
		    vs->vs_e[k][at + n - 1].ve_name) == 0)
			n++;
		if ((rc = views_shard_put(t, k, vs, at, n, &len)) == -1)
			return -1;
		if (rc == 1) {
			try = n / 2 > 0 ? n / 2 : 1;
			continue;
		}
		at += n;
		/* the next one sized from this one's bytes per entry */
		try = (size_t)((double)n * VIEW_SHARD_BYTES * 3 / 4 /
		    (len > 0 ? len : 1));
		if (try < 1)
			try = 1;
	}
	return 0;
}

/* a layout's shards go, one short write txn each */
static void
views_shards_del(struct worker *w, const char *prefix, json_t *shards)
{
	const char	*kf;
	json_t		*arr, *ent;
	char		 key[STORE_KEY_MAX];
	size_t		 i;

	if (prefix == NULL)
		return;
	json_object_foreach(shards, kf, arr)
		json_array_foreach(arr, i, ent) {
			(void)snprintf(key, sizeof(key), "%s.%lld", prefix,
			    (long long)json_integer_value(json_array_get(ent,
			    0)));
			(void)store_del(w->w_store, STORE_VIEWS, key,
			    strlen(key));
		}
}

/*
 * Store a built view as workers read it: its layout's shards under keys
 * of a new id, each in a short write transaction; then the small header
 * every worker decodes (capabilities, freshness, the layout's key and
 * its shards, digests of the lists) in one more, which publishes it;
 * then the previous layout's shards go, one by one.  A reader reads a
 * header's shards only (a worker still holding the old header finds a
 * shard gone and takes the new header: views_read()), and a builder
 * killed before the header leaves the new shards to views_gc().  The
 * header, a new reference, or NULL.
 */
static json_t *
views_store(struct worker *w, const char *scope,
    const struct view_resolved *vs, json_t *hdr, uint64_t ttl_ms)
{
	static uint32_t	 seq;
	struct vstore	 t;
	json_t		*digests = NULL, *old;
	char		 key[STORE_KEY_MAX], id[40], hex[24];
	size_t		 i;
	uint64_t	 t0 = views_us();
	int		 k, rc = -1;

	memset(&t, 0, sizeof(t));
	t.vt_w = w;
	t.vt_now = store_now_ms();
	t.vt_expires = t.vt_now + ttl_ms;
	/* unique across workers and restarts of one: pid, time, count */
	t.vt_vid = (uint64_t)getpid() << 40 ^ t.vt_now << 8 ^ seq++;
	(void)snprintf(id, sizeof(id), "%016llx", (unsigned long long)t.vt_vid);
	view_key(w, key, sizeof(key), "vdata", scope, id);
	t.vt_prefix = key;
	if ((digests = json_object()) == NULL || (t.vt_errs = json_array()) ==
	    NULL || (t.vt_shards = json_object()) == NULL)
		goto done;
	for (k = 0; k < VIEW_KIND_N; k++) {
		t.vt_digest[k] = 1469598103934665603ULL;
		if (views_store_kind(&t, k, vs) == -1) {
			log_warnx("cannot store the view's layout");
			goto done;
		}
		(void)snprintf(hex, sizeof(hex), "%016llx",
		    (unsigned long long)t.vt_digest[k]);
		if (json_object_set_new(digests, view_kind_field(k),
		    json_string(hex)) == -1)
			goto done;
	}
	for (i = 0; i < json_array_size(t.vt_errs); i++)
		log_info("view: %s", json_string_value(json_array_get(
		    t.vt_errs, i)));
	old = view_load(w, "view", scope, NULL, NULL);
	if (json_object_set_new(hdr, "layout", json_string(key)) == -1 ||
	    json_object_set(hdr, "shards", t.vt_shards) == -1 ||
	    json_object_set(hdr, "digests", digests) == -1) {
		json_decref(old);
		goto done;
	}
	view_save(w, "view", scope, NULL, hdr, ttl_ms, NULL);
	if (old != NULL) {
		views_shards_del(w, json_string_value(json_object_get(old,
		    "layout")), json_object_get(old, "shards"));
		json_decref(old);
	}
	log_debug("view: stored %zu bytes in %zu shards in %llu ms, the "
	    "longest write %llu us", t.vt_bytes, t.vt_n,
	    (unsigned long long)(views_us() - t0) / 1000,
	    (unsigned long long)t.vt_longest);
	/* the workers waiting for a first view take it now */
	view_key(w, key, sizeof(key), "view", scope, NULL);
	wake_broadcast(WAKE_VIEW_READY, key, NULL);
	rc = 0;
done:
	if (rc == -1)	/* what was stored of it */
		views_shards_del(w, t.vt_prefix, t.vt_shards);
	json_decref(digests);
	json_decref(t.vt_errs);
	json_decref(t.vt_shards);
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

#define VIEWS_GONE	(-2)	/* a shard gone: a newer header replaced it */

/* shard ent of the layout prefix: r's answer, or VIEWS_GONE */
static int
views_shard_read(struct worker *w, const char *prefix, json_t *ent,
    struct views_read *r)
{
	char	 key[STORE_KEY_MAX];
	int	 rc;

	if ((size_t)snprintf(key, sizeof(key), "%s.%lld", prefix,
	    (long long)json_integer_value(json_array_get(ent, 0))) >=
	    sizeof(key))
		return -1;
	rc = store_read(w->w_store, STORE_VIEWS, key, strlen(key),
	    store_now_ms(), views_read_cb, r);
	if (rc == STORE_NOTFOUND)
		return VIEWS_GONE;
	return rc == 0 ? r->vr_rc : -1;
}

/* a shard's count of items in the list asked for */
static size_t
views_shard_count(json_t *ent, int modern)
{
	return (size_t)json_integer_value(json_array_get(ent, modern ? 3 : 2));
}

/* the last shard whose first key is <= name (the first if none) */
static size_t
views_shard_find(json_t *arr, const char *name, size_t namelen)
{
	const char	*f;
	size_t		 lo = 1, hi = json_array_size(arr), mid, flen;
	int		 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		f = json_string_value(json_array_get(json_array_get(arr, mid),
		    1));
		flen = f != NULL ? strlen(f) : 0;
		c = memcmp(f != NULL ? f : "", name, flen < namelen ? flen :
		    namelen);
		if (c < 0 || (c == 0 && flen <= namelen))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* a page piece appended to pg's items ("[a]" + "[b]": "[a,b]") */
static int
views_page_join(struct view_page *pg, struct view_page *piece)
{
	char	*p;

	if (pg->vp_items == NULL || pg->vp_count == 0) {
		free(pg->vp_items);
		pg->vp_items = piece->vp_items;
		pg->vp_len = piece->vp_len;
		piece->vp_items = NULL;
	} else if (piece->vp_count > 0) {
		if ((p = realloc(pg->vp_items, pg->vp_len + piece->vp_len +
		    1)) == NULL)
			return -1;
		pg->vp_items = p;
		p[pg->vp_len - 1] = ',';	/* for its ']' */
		memcpy(p + pg->vp_len, piece->vp_items + 1, piece->vp_len);
		pg->vp_len += piece->vp_len - 1;
		p[pg->vp_len] = '\0';
	}
	pg->vp_count += piece->vp_count;
	if (piece->vp_next_key != NULL) {	/* its last item's */
		free(pg->vp_next_key);
		pg->vp_next_key = piece->vp_next_key;
		pg->vp_next_dup = piece->vp_next_dup;
		piece->vp_next_key = NULL;
	}
	return 0;
}

/*
 * A page over the shards of its kind: from the shard its offset or its
 * cursor's key is in, on into the next ones while the page is not full.
 */
static int
views_page_read(struct worker *w, const char *prefix, json_t *arr,
    struct views_read *r)
{
	const struct view_page_req *q = r->vr_req;
	struct view_page_req	 sub = *q;
	struct view_page	*pg = r->vr_page, piece;
	struct views_read	 pr = *r;
	size_t			 s = 0, ns = json_array_size(arr), base = 0, t;
	size_t			 piece_next;
	int			 rc, later, more;

	if (ns == 0)
		return -1;
	if (q->vq_modern) {
		if (q->vq_last != NULL)
			s = views_shard_find(arr, q->vq_last,
			    strlen(q->vq_last));
		sub.vq_more = 1;
	} else {
		while (s + 1 < ns && q->vq_offset >= base +
		    views_shard_count(json_array_get(arr, s), 0))
			base += views_shard_count(json_array_get(arr, s++), 0);
		sub.vq_offset = q->vq_offset - base;
	}
	pr.vr_req = &sub;
	pr.vr_page = &piece;
	for (;;) {
		memset(&piece, 0, sizeof(piece));
		if ((rc = views_shard_read(w, prefix, json_array_get(arr, s),
		    &pr)) != 0) {
			view_page_clear(&piece);
			return rc;
		}
		if (piece.vp_past_end) {
			pg->vp_past_end = 1;
			return 0;
		}
		piece_next = piece.vp_next;
		if (views_page_join(pg, &piece) == -1) {
			view_page_clear(&piece);
			return -1;
		}
		for (later = 0, t = s + 1; t < ns && !later; t++)
			later = views_shard_count(json_array_get(arr, t),
			    q->vq_modern) > 0;
		view_page_clear(&piece);
		if ((more = piece_next != 0)) {	/* the page ends in s */
			pg->vp_next = base + piece_next;
			break;
		}
		if (pg->vp_count >= q->vq_pagesize || !later) {
			more = later;
			pg->vp_next = later ? base + views_shard_count(
			    json_array_get(arr, s), 0) : 0;
			break;
		}
		base += views_shard_count(json_array_get(arr, s++), 0);
		sub.vq_offset = 0;
		sub.vq_last = NULL;
		sub.vq_dup = 0;
		sub.vq_pagesize = q->vq_pagesize - pg->vp_count;
	}
	if (!more || !q->vq_modern) {
		free(pg->vp_next_key);
		pg->vp_next_key = NULL;
		pg->vp_next_dup = 0;
	} else if (pg->vp_next_key == NULL)
		return -1;
	if (pg->vp_items == NULL && (pg->vp_items = strdup("[]")) != NULL)
		pg->vp_len = 2;
	return pg->vp_items != NULL ? 0 : -1;
}

/* r over the shards of header view: its answer, or VIEWS_GONE */
static int
views_read_view(struct worker *w, json_t *view, struct views_read *r)
{
	static const enum view_kind route_kinds[] = { VIEW_KIND_TOOLS,
	    VIEW_KIND_PROMPTS, VIEW_KIND_RESOURCES };
	const char	*prefix;
	json_t		*arr;
	size_t		 s;
	int		 rc;

	if ((prefix = json_string_value(json_object_get(view, "layout"))) ==
	    NULL)
		return -1;
	switch (r->vr_what) {
	case VIEWS_READ_PAGE:
		if (r->vr_req->vq_kind >= VIEW_KIND_N)
			return -1;
		arr = json_object_get(json_object_get(view, "shards"),
		    view_kind_field(r->vr_req->vq_kind));
		return views_page_read(w, prefix, arr, r);
	case VIEWS_READ_ROUTE:
		if (r->vr_kind > VIEW_ROUTE_RESOURCE)
			return -1;
		arr = json_object_get(json_object_get(view, "shards"),
		    view_kind_field(route_kinds[r->vr_kind]));
		if (json_array_size(arr) == 0)
			return -1;
		return views_shard_read(w, prefix, json_array_get(arr,
		    views_shard_find(arr, r->vr_name, r->vr_namelen)), r);
	default:
		arr = json_object_get(json_object_get(view, "shards"),
		    view_kind_field(VIEW_KIND_TEMPLATES));
		for (s = 0; s < json_array_size(arr); s++) {
			view_route_clear(r->vr_route);
			if ((rc = views_shard_read(w, prefix, json_array_get(
			    arr, s), r)) != VIEW_NO_ROUTE)
				return rc;
		}
		return VIEW_NO_ROUTE;
	}
}

/*
 * The layout of view, read in place.  A layout gone (a newer view
 * replaced it since this header was read) is read from the newer view.
 */
static int
views_read(struct worker *w, json_t *view, struct views_read *r)
{
	json_t	*now = NULL;
	int	 rc = -1, tries;

	for (tries = 0; tries < 2 && view != NULL; tries++) {
		if (r->vr_page != NULL)
			view_page_clear(r->vr_page);
		if (r->vr_route != NULL)
			view_route_clear(r->vr_route);
		if ((rc = views_read_view(w, view, r)) != VIEWS_GONE ||
		    now != NULL)
			break;
		view = now = view_peek(w);
	}
	json_decref(now);
	return rc == VIEWS_GONE ? -1 : rc;
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
	struct vask		*a;
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
	while ((a = TAILQ_FIRST(&vasks)) != NULL)
		vask_free(a);
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

/* a page of a list (the upstream edge resent it once if need be) */
static void
vfetch_on_list(void *arg, const struct upstream_result *r)
{
	struct vfetch	*f = arg;
	json_t		*result, *items, *next, *response = r->ur_response;
	const char	*field = vkinds[f->vf_kind].vk_field;
	size_t		 i;

	f->vf_call = NULL;
	if (r->ur_status == UPSTREAM_FAILED) {
		/* the backend client's message names the backend already */
		vfetch_fail(f, "%s", r->ur_errmsg);
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

/* a list request's params, in either revision: the cursor, if any */
static int
vfetch_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	struct vfetch *f = arg;

	(void)era;
	if (f->vf_cursor != NULL && (up->up_tree = json_pack("{s:s}",
	    "cursor", f->vf_cursor)) == NULL)
		return -1;
	return 0;
}

/* a call of the fetch to its backend, for the build's scope */
static struct upstream *
vfetch_call(struct vfetch *f, const char *method, int flags,
    const struct upstream_cbs *cbs)
{
	struct upstream_req uq;

	memset(&uq, 0, sizeof(uq));
	uq.uq_method = method;
	uq.uq_scope = f->vf_build->vb_scope;
	uq.uq_client = ERA_LISTING;
	uq.uq_flags = flags;
	return upstream_call(f->vf_build->vb_w, f->vf_be, &uq, cbs, f);
}

/* list the next kind the backend offers, or the next page of this one */
static void
vfetch_next(struct vfetch *f)
{
	static const struct upstream_cbs cbs = {
		vfetch_params, NULL, vfetch_on_list
	};

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
	f->vf_call = vfetch_call(f, vkinds[f->vf_kind].vk_method, 0, &cbs);
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

/* what the backend offers: its initialize or server/discover result */
static void
vfetch_described(void *arg, const struct upstream_result *r)
{
	struct vfetch	*f = arg;
	json_t		*result;

	f->vf_call = NULL;
	result = json_object_get(r->ur_response, "result");
	if (r->ur_status != UPSTREAM_COMPLETE || !json_is_object(result)) {
		vfetch_fail(f, "backend %s: %s", f->vf_be->cb_name,
		    r->ur_status == UPSTREAM_FAILED ? r->ur_errmsg :
		    "no description (initialize or server/discover result)");
		return;
	}
	vfetch_list(f, result);
}

/* start one backend: its cached lists, else fetch them */
static void
vfetch_start(struct vfetch *f)
{
	static const struct upstream_cbs cbs = {
		NULL, NULL, vfetch_described
	};
	struct vbuild		*b = f->vf_build;
	struct view_clock	 c;
	json_t			*raw;
	enum view_part		 age;

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
	/* the era, the scope's session and the cached description are
	 * the upstream edge's */
	if ((f->vf_call = vfetch_call(f, "server/discover",
	    UPSTREAM_F_DESCRIBE, &cbs)) == NULL)
		vfetch_fail(f, "backend %s: cannot describe it",
		    f->vf_be->cb_name);
}

static void
vfetch_clear(struct vfetch *f)
{
	int k;

	upstream_cancel(f->vf_call);
	for (k = 0; k < VK_N; k++)
		json_decref(f->vf_lists[k]);
	json_decref(f->vf_caps);
	json_decref(f->vf_cursors);
	json_decref(f->vf_old);
	free(f->vf_cursor);
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
 * A backend whose circuit breaker is not closed is left out of the
 * view, whatever lists it had: out, with the time its part stays
 * "fresh" so that the view is rebuilt when the breaker lets a trial
 * through (the rebuild's listing is that trial, or waits for it).
 */
static int
views_breaker_out(struct worker *w, const struct config_backend *be,
    const struct view_clock *c, uint64_t *listed)
{
	const struct config_health	*ch = &w->w_conf->cf_health;
	struct breaker			 bk;
	uint64_t			 until;

	if (!ch->ch_cb_enabled || health_breaker_get(w->w_store, be->cb_name,
	    c->vl_now, &bk) == -1 || bk.bk_state == BREAKER_CLOSED)
		return 0;
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
 * A view past its freshness: the builder, holding the lock, builds the
 * next one in the background.  It asks again at most once a second.
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
static int
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

	if (views_builder || views_key_scope(w, key, scope,
	    sizeof(scope)) == -1)
		return;
	TAILQ_FOREACH(a, &vasks, va_entry)
		if (strcmp(a->va_scope, scope) == 0) {
			vask_check(a, 0);
			return;
		}
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

	if (!views_builder || views_key_scope(w, key, scope,
	    sizeof(scope)) == -1)
		return;		/* another generation's */
	if (backend != NULL && backend[0] != '\0') {
		notify_refresh(w, backend);
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

struct views_gc {
	struct worker	*vg_w;
	char		 vg_prefix[STORE_KEY_MAX];	/* vdata|run.gen| */
	size_t		 vg_plen;
	size_t		 vg_gone;
};

/* a shard no header of this generation names goes */
static int
views_gc_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct views_gc	*g = arg;
	json_t		*hdr;
	const char	*k = key, *bar, *layout;
	char		 scope[64];
	size_t		 slen, llen;
	int		 keep = 0;

	(void)rec;
	if (klen <= g->vg_plen || memcmp(k, g->vg_prefix, g->vg_plen) != 0 ||
	    (bar = memchr(k + g->vg_plen, '|', klen - g->vg_plen)) == NULL ||
	    (slen = (size_t)(bar - k) - g->vg_plen) >= sizeof(scope))
		return 0;
	memcpy(scope, k + g->vg_plen, slen);
	scope[slen] = '\0';
	if ((hdr = view_load(g->vg_w, "view", scope, NULL, NULL)) != NULL &&
	    (layout = json_string_value(json_object_get(hdr, "layout"))) !=
	    NULL) {
		llen = strlen(layout);
		keep = klen > llen && memcmp(k, layout, llen) == 0 &&
		    k[llen] == '.';
	}
	json_decref(hdr);
	if (!keep && store_del(g->vg_w->w_store, STORE_VIEWS, key, klen) == 0)
		g->vg_gone++;
	return 0;
}

/*
 * The shards no header names: those of a builder of this generation
 * killed mid-publication (before its header) or of a failed store.
 * Run at the builder's start, while it publishes nothing; each goes in
 * a write txn of its own.
 */
static void
views_gc(struct worker *w)
{
	struct views_gc	 g;
	char		 key[STORE_KEY_MAX], *bar;

	memset(&g, 0, sizeof(g));
	g.vg_w = w;
	view_key(w, key, sizeof(key), "vdata", "", NULL);
	/* "vdata|run.gen||": up to the scope */
	if ((bar = strrchr(key, '|')) == NULL || bar == key)
		return;
	bar[0] = '\0';
	(void)snprintf(g.vg_prefix, sizeof(g.vg_prefix), "%s", key);
	g.vg_plen = strlen(g.vg_prefix);
	if (store_iter(w->w_store, STORE_VIEWS, store_now_ms(), 1,
	    views_gc_cb, &g) == -1)
		log_warnx("view: cannot look for orphan shards");
	else if (g.vg_gone > 0)
		log_info("view: %zu orphan layout shards removed", g.vg_gone);
}

/*
 * This process builds the views (builder.c).  A lock left by a builder
 * of this generation that died goes: there is no other; so do the
 * shards it stored for a header it did not publish.
 */
void
views_builder_init(struct worker *w)
{
	char key[STORE_KEY_MAX];

	views_builder = 1;
	view_key(w, key, sizeof(key), "lock", VIEW_SCOPE_ANON, NULL);
	(void)store_del(w->w_store, STORE_VIEWS, key, strlen(key));
	views_gc(w);
}

int
view_get(struct worker *w, view_cb cb, void *arg)
{
	static uint64_t	 next_ask;
	struct vbuild	*b;
	json_t		*view;
	const char	*scope = VIEW_SCOPE_ANON;
	uint64_t	 now;
	int		 fresh;

	if ((view = view_load(w, "view", scope, NULL, NULL)) != NULL) {
		now = store_now_ms();
		fresh = now < views_stamp(view, "fresh");
		cb(arg, view, NULL);
		json_decref(view);
		/* the builder builds the next one; asked once a second */
		if (!fresh && views_builder)
			views_revalidate(w, scope);
		else if (!fresh && now >= next_ask) {
			next_ask = now + VIEW_LOCK_RETRY_MS;
			views_ask(w, scope, NULL);
		}
		return 0;
	}
	/* none yet (a new generation): the one wait, VIEW_WAIT_MS at most */
	if (!views_builder)
		return vask_wait(w, scope, cb, arg);
	if ((b = vbuild_find(w, scope, NULL)) != NULL)
		return vbuild_wait(b, cb, arg, 0);
	return vbuild_begin(w, scope, NULL, cb, arg, 0);
}

/* a backend's lists changed (worker 0's listener): listed anew */
void
view_changed(struct worker *w, const char *backend)
{
	if (views_builder)
		notify_refresh(w, backend);
	else
		views_ask(w, VIEW_SCOPE_ANON, backend);
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
static void
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
	struct vbuild	*b;
	struct vask	*a;

	(void)w;
	TAILQ_FOREACH(b, &vbuilds, vb_entry)
		views_cancel(&b->vb_waiters, arg);
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
