/*
 * A view's storage: its layout published as shards then its header
 * (views_store()), read in place shard by shard (view_page_get() and
 * the route lookups), and the orphan shards of a builder killed
 * mid-publication removed (views_gc()).
 */
#include <sys/queue.h>

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"
#include "worker/process/wake.h"
#include "worker/process/process.h"
#include "worker/view/view_get.h"
#include "worker/view/view_int.h"

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
json_t *
views_store(struct worker *w, const char *scope,
    const struct view_resolved *vs, json_t *hdr, uint64_t ttl_ms)
{
	static uint32_t	 seq;
	struct vstore	 t;
	json_t		*digests = NULL, *old;
	char		 key[STORE_KEY_MAX], id[40], hex[24];
	size_t		 i;
	uint64_t	 t0 = views_us(), at;
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
	/*
	 * The header replaced, as stored (not a copy checked by its stamp:
	 * two headers of one millisecond and one length have the same),
	 * and the new one stamped after it, so that no copy of the old one
	 * passes for the new one anywhere.
	 */
	old = view_load_stored(w, "view", scope, NULL, &at);
	if (json_object_set_new(hdr, "layout", json_string(key)) == -1 ||
	    json_object_set(hdr, "shards", t.vt_shards) == -1 ||
	    json_object_set(hdr, "digests", digests) == -1) {
		json_decref(old);
		goto done;
	}
	view_save(w, "view", scope, NULL, hdr, ttl_ms, at >= t.vt_now ?
	    at + 1 : t.vt_now, NULL);
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
	enum view_kind		 vr_vkind;	/* an item's */
	char			*vr_text;	/* the item's text */
	size_t			 vr_tlen;
	int			 vr_rc;
};

#define VIEWS_READ_PAGE		0
#define VIEWS_READ_ROUTE	1
#define VIEWS_READ_TEMPLATE	2
#define VIEWS_READ_ITEM		3

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
	case VIEWS_READ_ITEM:
		free(r->vr_text);
		r->vr_rc = view_layout_item(data, len, r->vr_vkind, r->vr_name,
		    r->vr_namelen, &r->vr_text, &r->vr_tlen);
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

/*
 * The routes and items this worker has looked up in one layout.  A
 * layout is never rewritten (a new view is a new layout, under a key of
 * its own: views_store()), so a name's route, or its item's text, in it
 * stays what it is for as long as the header read names that layout; a
 * header that names another empties the cache.  A tools/call then reads
 * no shard, nor does the authorization gate's look at the tool.
 */
#define VIEWS_ROUTES	256

static struct views_route_cached {
	int			 rc_what;	/* VIEWS_READ_ROUTE, _ITEM */
	int			 rc_kind;	/* vr_kind, or vr_vkind */
	char			*rc_name;	/* NULL: slot unused */
	size_t			 rc_namelen;
	int			 rc_rc;		/* 0 or VIEW_NO_ROUTE */
	struct view_route	 rc_route;
	char			*rc_text;	/* an item's */
	size_t			 rc_tlen;
} views_routes[VIEWS_ROUTES];
static char	views_routes_layout[STORE_KEY_MAX];

static void
views_route_slot_clear(struct views_route_cached *c)
{
	free(c->rc_name);
	free(c->rc_text);
	view_route_clear(&c->rc_route);
	memset(c, 0, sizeof(*c));
}

void
views_routes_free(void)
{
	size_t	 i;

	for (i = 0; i < VIEWS_ROUTES; i++)
		views_route_slot_clear(&views_routes[i]);
	views_routes_layout[0] = '\0';
}

static char *
views_strdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static int
views_route_copy(struct view_route *dst, const struct view_route *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->vr_hidden = src->vr_hidden;
	if (((dst->vr_backend = views_strdup(src->vr_backend)) == NULL &&
	    src->vr_backend != NULL) ||
	    ((dst->vr_own = views_strdup(src->vr_own)) == NULL &&
	    src->vr_own != NULL) ||
	    ((dst->vr_map = views_strdup(src->vr_map)) == NULL &&
	    src->vr_map != NULL)) {
		view_route_clear(dst);
		return -1;
	}
	return 0;
}

/* what of r the cache tells apart: a route's kind, an item's */
static int
views_route_kind(const struct views_read *r)
{
	return r->vr_what == VIEWS_READ_ITEM ? (int)r->vr_vkind :
	    (int)r->vr_kind;
}

/* r's slot in the cache of layout prefix (emptied for another layout) */
static struct views_route_cached *
views_route_slot(const char *prefix, const struct views_read *r)
{
	uint32_t	 h = 2166136261u;
	size_t		 i, plen = strlen(prefix);

	if (plen >= sizeof(views_routes_layout))
		return NULL;
	if (strcmp(views_routes_layout, prefix) != 0) {
		views_routes_free();
		memcpy(views_routes_layout, prefix, plen + 1);
	}
	h = (h ^ (uint32_t)r->vr_what) * 16777619u;
	h = (h ^ (uint32_t)views_route_kind(r)) * 16777619u;
	for (i = 0; i < r->vr_namelen; i++)
		h = (h ^ (unsigned char)r->vr_name[i]) * 16777619u;
	return &views_routes[h % VIEWS_ROUTES];
}

#define VIEWS_MISS	(-3)	/* not in the cache */

/* r's route or item in the cache of layout prefix, or VIEWS_MISS */
static int
views_route_cached(const char *prefix, struct views_read *r)
{
	struct views_route_cached	*c;

	c = views_route_slot(prefix, r);
	if (c == NULL || c->rc_name == NULL || c->rc_what != r->vr_what ||
	    c->rc_kind != views_route_kind(r) ||
	    c->rc_namelen != r->vr_namelen ||
	    memcmp(c->rc_name, r->vr_name, r->vr_namelen) != 0)
		return VIEWS_MISS;
	if (c->rc_rc != 0)
		return c->rc_rc;
	if (r->vr_what == VIEWS_READ_ITEM) {
		free(r->vr_text);
		if ((r->vr_text = malloc(c->rc_tlen + 1)) == NULL)
			return -1;
		memcpy(r->vr_text, c->rc_text, c->rc_tlen + 1);
		r->vr_tlen = c->rc_tlen;
		return 0;
	}
	return views_route_copy(r->vr_route, &c->rc_route) == -1 ? -1 : 0;
}

/* a route or an item read from prefix's shard arr, kept in the cache */
static int
views_route_read(struct worker *w, const char *prefix, json_t *arr,
    struct views_read *r)
{
	struct views_route_cached	*c;
	int				 rc;

	c = views_route_slot(prefix, r);
	rc = views_shard_read(w, prefix, json_array_get(arr,
	    views_shard_find(arr, r->vr_name, r->vr_namelen)), r);
	if (c == NULL || (rc != 0 && rc != VIEW_NO_ROUTE))
		return rc;
	views_route_slot_clear(c);
	if ((c->rc_name = malloc(r->vr_namelen + 1)) == NULL)
		return rc;
	if (rc == 0 && r->vr_what == VIEWS_READ_ITEM) {
		if ((c->rc_text = malloc(r->vr_tlen + 1)) == NULL) {
			views_route_slot_clear(c);
			return rc;
		}
		memcpy(c->rc_text, r->vr_text, r->vr_tlen);
		c->rc_text[r->vr_tlen] = '\0';
		c->rc_tlen = r->vr_tlen;
	} else if (rc == 0 && views_route_copy(&c->rc_route, r->vr_route) ==
	    -1) {
		views_route_slot_clear(c);
		return rc;
	}
	memcpy(c->rc_name, r->vr_name, r->vr_namelen);
	c->rc_name[r->vr_namelen] = '\0';
	c->rc_namelen = r->vr_namelen;
	c->rc_what = r->vr_what;
	c->rc_kind = views_route_kind(r);
	c->rc_rc = rc;
	return rc;
}

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
		if ((rc = views_route_cached(prefix, r)) != VIEWS_MISS)
			return rc;
		arr = json_object_get(json_object_get(view, "shards"),
		    view_kind_field(route_kinds[r->vr_kind]));
		if (json_array_size(arr) == 0)
			return -1;
		return views_route_read(w, prefix, arr, r);
	case VIEWS_READ_ITEM:
		if ((rc = views_route_cached(prefix, r)) != VIEWS_MISS)
			return rc;
		arr = json_object_get(json_object_get(view, "shards"),
		    view_kind_field(r->vr_vkind));
		if (json_array_size(arr) == 0)
			return -1;
		return views_route_read(w, prefix, arr, r);
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
view_item_get(struct worker *w, json_t *view, enum view_kind kind,
    const char *key, size_t klen, char **text, size_t *tlen)
{
	struct views_read	r;
	int			rc;

	memset(&r, 0, sizeof(r));
	r.vr_what = VIEWS_READ_ITEM;
	r.vr_vkind = kind;
	r.vr_name = key;
	r.vr_namelen = klen;
	if (kind >= VIEW_KIND_N)
		return -1;
	rc = views_read(w, view, &r);
	if (rc != 0) {
		free(r.vr_text);
		r.vr_text = NULL;
	}
	*text = r.vr_text;
	*tlen = r.vr_tlen;
	return rc;
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
void
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
