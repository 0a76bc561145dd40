/*
 * The layout of a view read in place (docs/ARCHITECTURE.md, "Views").
 * view_layout() turns a built view into one block of bytes that the
 * store keeps; the readers below answer a list page or a route from
 * those bytes where they lie in the map (store_read()), copying out
 * only the slice asked for.  Pure: no I/O, no store.
 *
 * The block (integers in host order: the map never leaves the host):
 *   "VMV1", u32 table count, u64 id, u32 offset of each table;
 *   a table: u32 n, u32 off[n + 1] (from the end of off[]), entries.
 * Tables, in order:
 *   0..3   items of tools, resources, resourceTemplates, prompts in
 *          list order: key NUL text (the item's compact JSON)
 *   4..7   the 2026-07-28 lists: u32 indexes into 0..3 (tools whose
 *          x-mcp-header annotations break the rules are left out)
 *   8      tool routes by name: name NUL backend NUL own NUL hidden
 *          ('0'/'1') and the x-mcp-header map's JSON (may be empty)
 *   9      prompt routes by name: name NUL backend NUL own
 *   10     resource routes by uri: uri NUL backend
 *   11     templates in list order: uriTemplate NUL backend
 * The readers check every offset: a block they cannot trust reads as
 * a bad layout (-1), never out of bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mheaders.h"
#include "proto/uritemplate.h"
#include "worker/view/view.h"
#include "worker/view/view_layout.h"
#include "worker/view/view_read.h"

#define VL_MAGIC	"VMV1"
#define VL_HDR		16		/* magic, count, id */

enum {
	VL_ITEMS = 0,
	VL_MODERN = VIEW_KIND_N,
	VL_TOOLS = 2 * VIEW_KIND_N,
	VL_PROMPTS,
	VL_RESOURCES,
	VL_TEMPLATES,
	VL_NTABLES
};

static const struct {
	const char	*vk_field;	/* list field */
	const char	*vk_key;	/* an item's key */
} vl_kinds[VIEW_KIND_N] = {
	{ "tools", "name" },
	{ "resources", "uri" },
	{ "resourceTemplates", "uriTemplate" },
	{ "prompts", "name" },
};

const char *
view_kind_field(enum view_kind k)
{
	return k < VIEW_KIND_N ? vl_kinds[k].vk_field : NULL;
}

/* growing output */
struct vl_buf {
	char	*vb_data;
	size_t	 vb_len;
	size_t	 vb_cap;
	int	 vb_oom;
};

static int
vl_reserve(struct vl_buf *b, size_t n)
{
	size_t	 cap;
	char	*p;

	if (b->vb_oom)
		return -1;
	if (n <= b->vb_cap - b->vb_len)
		return 0;
	cap = b->vb_cap == 0 ? 65536 : b->vb_cap;
	while (cap - b->vb_len < n) {
		if (cap > SIZE_MAX / 2)
			goto oom;
		cap *= 2;
	}
	if ((p = realloc(b->vb_data, cap)) == NULL)
		goto oom;
	b->vb_data = p;
	b->vb_cap = cap;
	return 0;
oom:
	b->vb_oom = 1;
	return -1;
}

static void
vl_put(struct vl_buf *b, const void *p, size_t n)
{
	if (vl_reserve(b, n) == -1)
		return;
	memcpy(b->vb_data + b->vb_len, p, n);
	b->vb_len += n;
}

static void
vl_puts(struct vl_buf *b, const char *s)
{
	vl_put(b, s, strlen(s) + 1);	/* with its NUL */
}

static int
vl_dump_cb(const char *p, size_t n, void *arg)
{
	struct vl_buf *b = arg;

	vl_put(b, p, n);
	return b->vb_oom ? -1 : 0;
}

static void
vl_dump(struct vl_buf *b, const json_t *v)
{
	if (json_dump_callback(v, vl_dump_cb, b, JSON_COMPACT |
	    JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) == -1)
		b->vb_oom = 1;
}

/*
 * A string as jansson dumps it (no flags): '"', '\\' and control
 * characters escaped, the rest (valid UTF-8) as is.  Dumping through
 * jansson's callbacks was most of a layout's time.
 */
static void
vl_str(struct vl_buf *b, const char *s, size_t len)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, run = 0;
	char			 esc[6];

	if (vl_reserve(b, len + 2) == -1)
		return;
	b->vb_data[b->vb_len++] = '"';
	for (i = 0; i < len; i++) {
		if (p[i] >= 0x20 && p[i] != '"' && p[i] != '\\')
			continue;
		vl_put(b, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (p[i]) {
		case '"': case '\\':
			esc[1] = (char)p[i];
			break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[p[i] >> 4];
			esc[5] = hex[p[i] & 0xf];
			vl_put(b, esc, 6);
			continue;
		}
		vl_put(b, esc, 2);
	}
	vl_put(b, s + run, len - run);
	vl_put(b, "\"", 1);
}

/* compact JSON, byte for byte as jsonrpc_dump(); name: "name" as that */
static void
vl_json(struct vl_buf *b, json_t *v, const char *name)
{
	void	*it;
	json_t	*x;
	char	 num[32];
	size_t	 i, klen;
	int	 n;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		vl_put(b, "{", 1);
		for (it = json_object_iter(v), i = 0; it != NULL;
		    it = json_object_iter_next(v, it), i++) {
			const char *k = json_object_iter_key(it);

			klen = json_object_iter_key_len(it);
			if (i > 0)
				vl_put(b, ",", 1);
			vl_str(b, k, klen);
			vl_put(b, ":", 1);
			x = json_object_iter_value(it);
			if (name != NULL && klen == 4 && memcmp(k, "name", 4) ==
			    0)
				vl_str(b, name, strlen(name));
			else
				vl_json(b, x, NULL);
		}
		vl_put(b, "}", 1);
		break;
	case JSON_ARRAY:
		vl_put(b, "[", 1);
		json_array_foreach(v, i, x) {
			if (i > 0)
				vl_put(b, ",", 1);
			vl_json(b, x, NULL);
		}
		vl_put(b, "]", 1);
		break;
	case JSON_STRING:
		vl_str(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		vl_put(b, num, (size_t)n);
		break;
	case JSON_TRUE:
		vl_put(b, "true", 4);
		break;
	case JSON_FALSE:
		vl_put(b, "false", 5);
		break;
	case JSON_NULL:
		vl_put(b, "null", 4);
		break;
	default:
		vl_dump(b, v);	/* reals: jansson's own formatting */
		break;
	}
}

char *
view_json_dump(json_t *v, size_t *len)
{
	struct vl_buf b;

	memset(&b, 0, sizeof(b));
	vl_json(&b, v, NULL);
	vl_put(&b, "", 1);
	if (b.vb_oom) {
		free(b.vb_data);
		return NULL;
	}
	*len = b.vb_len - 1;
	return b.vb_data;
}

/* an entry's text as advertised (view_entry_json(), dumped) */
static void
vl_entry_text(struct vl_buf *b, const struct view_entry *e, enum view_kind k)
{
	json_t *o;

	if (k == VIEW_KIND_TOOLS && e->ve_ov != NULL) {
		if ((o = view_entry_json(e, k)) == NULL) {
			b->vb_oom = 1;
			return;
		}
		vl_json(b, o, NULL);
		json_decref(o);
	} else
		vl_json(b, e->ve_obj, k == VIEW_KIND_TOOLS ||
		    k == VIEW_KIND_PROMPTS ? e->ve_name : NULL);
}

static void
vl_u32_set(struct vl_buf *b, size_t at, size_t v)
{
	uint32_t u = (uint32_t)v;

	if (!b->vb_oom)
		memcpy(b->vb_data + at, &u, sizeof(u));
}

/* a table of n entries: begun, each entry marked, ended */
struct vl_table {
	size_t	 vt_at;		/* its u32 n */
	size_t	 vt_data;	/* where entries start */
	size_t	 vt_i;
};

static void
vl_table_begin(struct vl_buf *b, struct vl_table *t, size_t slot, size_t n)
{
	vl_u32_set(b, VL_HDR + 4 * slot, b->vb_len);
	t->vt_at = b->vb_len;
	t->vt_i = 0;
	if (n > UINT32_MAX - 2 || vl_reserve(b, 4 * (n + 2)) == -1) {
		b->vb_oom = 1;
		return;
	}
	memset(b->vb_data + b->vb_len, 0, 4 * (n + 2));
	b->vb_len += 4 * (n + 2);
	t->vt_data = b->vb_len;
	vl_u32_set(b, t->vt_at, n);
}

/* the entry that starts here */
static void
vl_table_mark(struct vl_buf *b, struct vl_table *t)
{
	if (b->vb_len - t->vt_data > UINT32_MAX)
		b->vb_oom = 1;
	vl_u32_set(b, t->vt_at + 4 * (1 + t->vt_i++), b->vb_len - t->vt_data);
}

/* FNV-1a over 8 bytes at a time: tells a changed list, no more */
static uint64_t
vl_fnv(uint64_t h, const char *p, size_t n)
{
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 1099511628211ULL;
	}
	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

/* an entry in its list: hidden tools and bare routes are not */
static int
vl_listed(const struct view_entry *e)
{
	return !e->ve_hidden && e->ve_obj != NULL;
}

/* the tools' x-mcp-header maps; who is left out of Modern lists (0) */
static int
vl_tool_maps(const struct view_resolved *vs, json_t *errs, char **maps,
    unsigned char *modern)
{
	const struct view_entry	*e;
	json_t			*map;
	char			*msg, why[256];
	size_t			 i;

	for (i = 0; i < vs->vs_n[VIEW_KIND_TOOLS]; i++) {
		e = &vs->vs_e[VIEW_KIND_TOOLS][i];
		if (!vl_listed(e))
			continue;
		map = NULL;
		if (proto_x_mcp_headers(json_object_get(e->ve_obj,
		    "inputSchema"), &map, why, sizeof(why)) == -1) {
			if (errs != NULL && asprintf(&msg, "tool %s left out "
			    "of Modern lists: %s", e->ve_name, why) != -1) {
				(void)json_array_append_new(errs,
				    json_string(msg));
				free(msg);
			}
			continue;
		}
		modern[i] = 1;
		if (json_object_size(map) > 0 && (maps[i] = json_dumps(map,
		    JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL) {
			json_decref(map);
			return -1;
		}
		json_decref(map);
	}
	return 0;
}

int
view_layout(const struct view_resolved *vs, uint64_t id, json_t *errs,
    char **out, size_t *outlen, json_t *digests)
{
	const struct view_entry	*e;
	struct vl_buf		 b;
	struct vl_table		 t;
	char			**maps = NULL, hex[24];
	unsigned char		*modern = NULL;
	uint32_t		 u, ntables = VL_NTABLES;
	uint64_t		 h;
	size_t			 i, n, nt = vs->vs_n[VIEW_KIND_TOOLS], start;
	int			 k;

	*out = NULL;
	*outlen = 0;
	memset(&b, 0, sizeof(b));
	if (vl_reserve(&b, VL_HDR + 4 * VL_NTABLES) == -1)
		return -1;
	memcpy(b.vb_data, VL_MAGIC, 4);
	memcpy(b.vb_data + 4, &ntables, 4);
	memcpy(b.vb_data + 8, &id, 8);
	b.vb_len = VL_HDR + 4 * VL_NTABLES;
	if ((maps = calloc(nt + 1, sizeof(*maps))) == NULL ||
	    (modern = calloc(nt + 1, 1)) == NULL ||
	    vl_tool_maps(vs, errs, maps, modern) == -1)
		goto fail;

	/* the lists' items; hidden tools are routed, not listed */
	for (k = 0; k < VIEW_KIND_N; k++) {
		for (i = n = 0; i < vs->vs_n[k]; i++)
			n += vl_listed(&vs->vs_e[k][i]);
		vl_table_begin(&b, &t, VL_ITEMS + k, n);
		start = b.vb_len;
		for (i = 0; i < vs->vs_n[k]; i++) {
			e = &vs->vs_e[k][i];
			if (!vl_listed(e))
				continue;
			vl_table_mark(&b, &t);
			vl_puts(&b, e->ve_name);
			vl_entry_text(&b, e, k);
		}
		vl_table_mark(&b, &t);
		if (b.vb_oom)
			goto fail;
		h = vl_fnv(1469598103934665603ULL, b.vb_data + start,
		    b.vb_len - start);
		(void)snprintf(hex, sizeof(hex), "%016llx",
		    (unsigned long long)h);
		if (digests != NULL && json_object_set_new(digests,
		    vl_kinds[k].vk_field, json_string(hex)) == -1)
			goto fail;
	}
	for (k = 0; k < VIEW_KIND_N; k++) {
		for (i = n = 0; i < vs->vs_n[k]; i++)
			n += vl_listed(&vs->vs_e[k][i]) &&
			    (k != VIEW_KIND_TOOLS || modern[i]);
		vl_table_begin(&b, &t, VL_MODERN + k, n);
		for (i = 0, u = 0; i < vs->vs_n[k]; i++) {
			if (!vl_listed(&vs->vs_e[k][i]))
				continue;
			if (k != VIEW_KIND_TOOLS || modern[i]) {
				vl_table_mark(&b, &t);
				vl_put(&b, &u, sizeof(u));
			}
			u++;	/* its place among the listed items */
		}
		vl_table_mark(&b, &t);
	}

	/* routes, sorted by name as the lists are */
	vl_table_begin(&b, &t, VL_TOOLS, nt);
	for (i = 0; i < nt; i++) {
		e = &vs->vs_e[VIEW_KIND_TOOLS][i];
		vl_table_mark(&b, &t);
		vl_puts(&b, e->ve_name);
		vl_puts(&b, e->ve_backend);
		vl_puts(&b, e->ve_own);
		vl_put(&b, e->ve_hidden ? "1" : "0", 1);
		if (maps[i] != NULL)
			vl_put(&b, maps[i], strlen(maps[i]));
	}
	vl_table_mark(&b, &t);
	vl_table_begin(&b, &t, VL_PROMPTS, vs->vs_n[VIEW_KIND_PROMPTS]);
	for (i = 0; i < vs->vs_n[VIEW_KIND_PROMPTS]; i++) {
		e = &vs->vs_e[VIEW_KIND_PROMPTS][i];
		vl_table_mark(&b, &t);
		vl_puts(&b, e->ve_name);
		vl_puts(&b, e->ve_backend);
		vl_put(&b, e->ve_own, strlen(e->ve_own));
	}
	vl_table_mark(&b, &t);
	for (k = VIEW_KIND_RESOURCES; k <= VIEW_KIND_TEMPLATES; k++) {
		vl_table_begin(&b, &t, k == VIEW_KIND_RESOURCES ?
		    VL_RESOURCES : VL_TEMPLATES, vs->vs_n[k]);
		for (i = 0; i < vs->vs_n[k]; i++) {
			e = &vs->vs_e[k][i];
			vl_table_mark(&b, &t);
			vl_puts(&b, e->ve_name);
			vl_put(&b, e->ve_backend, strlen(e->ve_backend));
		}
		vl_table_mark(&b, &t);
	}
	if (b.vb_oom || b.vb_len > UINT32_MAX)
		goto fail;
	for (i = 0; i < nt; i++)
		free(maps[i]);
	free(maps);
	free(modern);
	*out = b.vb_data;
	*outlen = b.vb_len;
	return 0;
fail:
	for (i = 0; maps != NULL && i < nt; i++)
		free(maps[i]);
	free(maps);
	free(modern);
	free(b.vb_data);
	return -1;
}

static int
vl_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct view_entry *)a)->ve_name,
	    ((const struct view_entry *)b)->ve_name);
}

/* the item of list whose key is name, or NULL */
static json_t *
vl_item(json_t *list, const char *key, const char *name)
{
	json_t	*it;
	size_t	 i;

	json_array_foreach(list, i, it)
		if (json_is_string(json_object_get(it, key)) && strcmp(
		    json_string_value(json_object_get(it, key)), name) == 0)
			return it;
	return NULL;
}

/* one kind's entries from a JSON view's routes and list */
static int
vl_from_json(json_t *view, enum view_kind k, struct view_resolved *vs)
{
	static const char *const rkey[VIEW_KIND_N] = { "tools", "resources",
	    "templates", "prompts" };
	json_t			*routes = json_object_get(json_object_get(view,
				    "routes"), rkey[k]), *r, *list;
	struct view_entry	*e;
	const char		*name;
	size_t			 n, i = 0;

	list = json_object_get(view, vl_kinds[k].vk_field);
	n = json_is_array(routes) ? json_array_size(routes) :
	    json_object_size(routes);
	if ((vs->vs_e[k] = calloc(n + 1, sizeof(*e))) == NULL)
		return -1;
	if (k == VIEW_KIND_TEMPLATES) {
		json_array_foreach(routes, i, r) {
			e = &vs->vs_e[k][vs->vs_n[k]];
			e->ve_name = json_string_value(json_object_get(r, "t"));
			e->ve_backend = json_string_value(json_object_get(r,
			    "b"));
			if (e->ve_name == NULL || e->ve_backend == NULL)
				continue;
			e->ve_own = e->ve_name;
			e->ve_obj = vl_item(list, vl_kinds[k].vk_key,
			    e->ve_name);
			vs->vs_n[k]++;
		}
		return 0;
	}
	json_object_foreach(routes, name, r) {
		e = &vs->vs_e[k][vs->vs_n[k]];
		e->ve_name = e->ve_own = name;
		if (k == VIEW_KIND_RESOURCES)
			e->ve_backend = json_string_value(r);
		else {
			e->ve_backend = json_string_value(json_object_get(r,
			    "b"));
			e->ve_own = json_string_value(json_object_get(r, "n"));
			e->ve_hidden = json_is_true(json_object_get(r,
			    "hidden"));
		}
		if (e->ve_backend == NULL || e->ve_own == NULL)
			continue;
		e->ve_obj = vl_item(list, vl_kinds[k].vk_key, name);
		vs->vs_n[k]++;
	}
	qsort(vs->vs_e[k], vs->vs_n[k], sizeof(*e), vl_entry_cmp);
	return 0;
}

int
view_layout_json(json_t *view, uint64_t id, char **out, size_t *outlen,
    json_t *digests)
{
	struct view_resolved	vs;
	int			k, rc = -1;

	memset(&vs, 0, sizeof(vs));
	for (k = 0; k < VIEW_KIND_N; k++)
		if (vl_from_json(view, k, &vs) == -1)
			goto done;
	rc = view_layout(&vs, id, NULL, out, outlen, digests);
done:
	view_resolved_free(&vs);
	return rc;
}

/* the layout as read: every access bounds-checked */
struct vl {
	const unsigned char	*l_p;
	size_t			 l_len;
};

static uint32_t
vl_u32(const unsigned char *p)
{
	uint32_t u;

	memcpy(&u, p, sizeof(u));
	return u;
}

static int
vl_open(struct vl *l, const void *p, size_t len)
{
	l->l_p = p;
	l->l_len = len;
	if (p == NULL || len < VL_HDR + 4 * VL_NTABLES ||
	    memcmp(p, VL_MAGIC, 4) != 0 || vl_u32(l->l_p + 4) != VL_NTABLES)
		return -1;
	return 0;
}

/* entries in a table, or -1 */
static long long
vl_count(const struct vl *l, int table)
{
	uint32_t at = vl_u32(l->l_p + VL_HDR + 4 * table), n;

	if (at > l->l_len || l->l_len - at < 4)
		return -1;
	n = vl_u32(l->l_p + at);
	if ((l->l_len - at - 4) / 4 < (size_t)n + 1)
		return -1;
	return n;
}

/* entry i of a table (checked against the count first) */
static int
vl_entry(const struct vl *l, int table, size_t i, const char **p,
    size_t *len)
{
	uint32_t	at = vl_u32(l->l_p + VL_HDR + 4 * table);
	size_t		data, a, z;
	long long	n = vl_count(l, table);

	if (n < 0 || i >= (size_t)n)
		return -1;
	data = (size_t)at + 4 + 4 * ((size_t)n + 1);
	a = vl_u32(l->l_p + at + 4 + 4 * i);
	z = vl_u32(l->l_p + at + 4 + 4 * (i + 1));
	if (data > l->l_len || a > z || z > l->l_len - data)
		return -1;
	*p = (const char *)l->l_p + data + a;
	*len = z - a;
	return 0;
}

/* an entry's NUL-ended fields: the next from *p, or NULL */
static const char *
vl_field(const char **p, size_t *len, size_t *flen)
{
	const char *f = *p, *nul;

	if ((nul = memchr(f, '\0', *len)) == NULL)
		return NULL;
	*flen = (size_t)(nul - f);
	*len -= *flen + 1;
	*p = nul + 1;
	return f;
}

static int
vl_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen;
}

/* the key of entry i of a keyed table */
static int
vl_key(const struct vl *l, int table, size_t i, const char **k,
    size_t *klen, const char **rest, size_t *rlen)
{
	if (vl_entry(l, table, i, rest, rlen) == -1 ||
	    (*k = vl_field(rest, rlen, klen)) == NULL)
		return -1;
	return 0;
}

/* the key of position i of a 2026-07-28 list */
static int
vl_modern_key(const struct vl *l, enum view_kind k, size_t i,
    const char **key, size_t *klen, const char **text, size_t *tlen)
{
	const char	*p;
	size_t		 len;

	if (vl_entry(l, VL_MODERN + k, i, &p, &len) == -1 || len != 4)
		return -1;
	return vl_key(l, VL_ITEMS + k, vl_u32((const unsigned char *)p), key,
	    klen, text, tlen);
}

/* first position whose key is >= key (upper: > key), or -1 */
static long long
vl_bound(const struct vl *l, int table, enum view_kind k, size_t n,
    const char *key, size_t klen, int upper)
{
	const char	*ik, *rest;
	size_t		 lo = 0, hi = n, mid, iklen, rlen;
	int		 c, rc;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		rc = table < 0 ? vl_modern_key(l, k, mid, &ik, &iklen, &rest,
		    &rlen) : vl_key(l, table, mid, &ik, &iklen, &rest, &rlen);
		if (rc == -1)
			return -1;
		c = vl_cmp(ik, iklen, key, klen);
		if (c < 0 || (upper && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long long)lo;
}

int
view_layout_id(const void *p, size_t len, uint64_t *id)
{
	struct vl l;

	if (vl_open(&l, p, len) == -1)
		return -1;
	memcpy(id, l.l_p + 8, sizeof(*id));
	return 0;
}

int
view_layout_counts(const void *p, size_t len, enum view_kind k,
    size_t *listed, size_t *modern)
{
	struct vl	 l;
	long long	 a, b;

	if (vl_open(&l, p, len) == -1 || k >= VIEW_KIND_N ||
	    (a = vl_count(&l, VL_ITEMS + k)) < 0 ||
	    (b = vl_count(&l, VL_MODERN + k)) < 0)
		return -1;
	*listed = (size_t)a;
	*modern = (size_t)b;
	return 0;
}

int
view_layout_page(const void *p, size_t len, const struct view_page_req *q,
    struct view_page *pg)
{
	struct vl	 l;
	struct vl_buf	 b;
	const char	*key, *text;
	size_t		 klen, tlen, i, n, start, end, kept;
	long long	 c, lo, hi;
	int		 resume = q->vq_last != NULL;

	memset(pg, 0, sizeof(*pg));
	memset(&b, 0, sizeof(b));
	if (vl_open(&l, p, len) == -1 || q->vq_kind >= VIEW_KIND_N ||
	    (c = vl_count(&l, (q->vq_modern ? VL_MODERN : VL_ITEMS) +
	    q->vq_kind)) < 0)
		return -1;
	n = (size_t)c;
	start = q->vq_offset;
	if (resume) {
		klen = strlen(q->vq_last);
		if ((lo = vl_bound(&l, -1, q->vq_kind, n, q->vq_last, klen,
		    0)) < 0 || (hi = vl_bound(&l, -1, q->vq_kind, n,
		    q->vq_last, klen, 1)) < 0)
			return -1;
		start = q->vq_dup < (size_t)(hi - lo) ? (size_t)lo +
		    q->vq_dup : (size_t)hi;
	} else if (start > n) {
		pg->vp_past_end = 1;
		return 0;
	}
	if (q->vq_filter == NULL)
		end = q->vq_pagesize < n - start ? start + q->vq_pagesize : n;
	else
		end = n;	/* until the page is full */
	vl_put(&b, "[", 1);
	for (i = start, kept = 0; i < end && kept < q->vq_pagesize; i++) {
		if ((q->vq_modern ? vl_modern_key(&l, q->vq_kind, i, &key,
		    &klen, &text, &tlen) : vl_key(&l, VL_ITEMS + q->vq_kind, i,
		    &key, &klen, &text, &tlen)) == -1)
			goto fail;
		if (q->vq_filter != NULL && q->vq_filter(q->vq_farg,
		    q->vq_kind, key, klen, text, tlen) != 1)
			continue;
		if (kept++ > 0)
			vl_put(&b, ",", 1);
		vl_put(&b, text, tlen);
	}
	end = i;	/* past the last item examined */
	vl_put(&b, "]", 2);	/* and a NUL, not counted */
	if (b.vb_oom)
		goto fail;
	pg->vp_items = b.vb_data;	/* the page owns it now */
	b.vb_data = NULL;
	pg->vp_len = b.vb_len - 1;
	pg->vp_count = kept;
	if (end < n || (q->vq_more && end > start)) {
		if (end < n)
			pg->vp_next = end;
		if (q->vq_modern) {
			/* the key of the last item, and its place in its run */
			if (vl_modern_key(&l, q->vq_kind, end - 1, &key, &klen,
			    &text, &tlen) == -1 || (lo = vl_bound(&l, -1,
			    q->vq_kind, n, key, klen, 0)) < 0 ||
			    (pg->vp_next_key = strndup(key, klen)) == NULL)
				goto fail;
			if ((size_t)lo > end - 1)
				lo = (long long)end - 1;
			pg->vp_next_dup = end - (size_t)lo;
		}
	}
	return 0;
fail:
	free(b.vb_data);
	view_page_clear(pg);
	return -1;
}

void
view_page_clear(struct view_page *pg)
{
	free(pg->vp_items);
	free(pg->vp_next_key);
	memset(pg, 0, sizeof(*pg));
}

void
view_route_clear(struct view_route *r)
{
	free(r->vr_backend);
	free(r->vr_own);
	free(r->vr_map);
	memset(r, 0, sizeof(*r));
}

int
view_layout_route(const void *p, size_t len, enum view_route_kind kind,
    const char *name, size_t namelen, struct view_route *r)
{
	static const int	 tables[] = { VL_TOOLS, VL_PROMPTS,
				    VL_RESOURCES };
	struct vl		 l;
	const char		*k, *rest, *be, *own = NULL;
	size_t			 klen, rlen, belen, ownlen = 0;
	long long		 n, at;
	int			 table;

	memset(r, 0, sizeof(*r));
	if (vl_open(&l, p, len) == -1 || kind > VIEW_ROUTE_RESOURCE)
		return -1;
	table = tables[kind];
	if ((n = vl_count(&l, table)) < 0 || (at = vl_bound(&l, table, 0,
	    (size_t)n, name, namelen, 0)) < 0)
		return -1;
	if (at == n)
		return VIEW_NO_ROUTE;
	if (vl_key(&l, table, (size_t)at, &k, &klen, &rest, &rlen) == -1)
		return -1;
	if (vl_cmp(k, klen, name, namelen) != 0)
		return VIEW_NO_ROUTE;
	if (kind == VIEW_ROUTE_RESOURCE) {
		be = rest;
		belen = rlen;
	} else if ((be = vl_field(&rest, &rlen, &belen)) == NULL)
		return -1;
	if (kind == VIEW_ROUTE_TOOL) {
		if ((own = vl_field(&rest, &rlen, &ownlen)) == NULL ||
		    rlen < 1)
			return -1;
		r->vr_hidden = rest[0] == '1';
		if (rlen > 1 && (r->vr_map = strndup(rest + 1, rlen - 1)) ==
		    NULL)
			goto fail;
	} else if (kind == VIEW_ROUTE_PROMPT) {
		own = rest;
		ownlen = rlen;
	}
	if ((r->vr_backend = strndup(be, belen)) == NULL ||
	    (own != NULL && (r->vr_own = strndup(own, ownlen)) == NULL))
		goto fail;
	return 0;
fail:
	view_route_clear(r);
	return -1;
}

int
view_layout_item(const void *p, size_t len, enum view_kind k, const char *key,
    size_t klen, char **text, size_t *tlen)
{
	struct vl	 l;
	const char	*ik, *t;
	size_t		 iklen;
	long long	 n, at;

	*text = NULL;
	*tlen = 0;
	if (vl_open(&l, p, len) == -1 || k >= VIEW_KIND_N ||
	    (n = vl_count(&l, VL_ITEMS + k)) < 0 ||
	    (at = vl_bound(&l, VL_ITEMS + k, k, (size_t)n, key, klen, 0)) < 0)
		return -1;
	if (at == n)
		return VIEW_NO_ROUTE;
	if (vl_key(&l, VL_ITEMS + k, (size_t)at, &ik, &iklen, &t, tlen) == -1)
		return -1;
	if (vl_cmp(ik, iklen, key, klen) != 0)
		return VIEW_NO_ROUTE;
	if ((*text = strndup(t, *tlen)) == NULL)
		return -1;
	return 0;
}

int
view_layout_template(const void *p, size_t len, const char *uri, int exact,
    struct view_route *r)
{
	struct vl	 l;
	const char	*t, *rest;
	size_t		 tlen, rlen, i;
	long long	 n;

	memset(r, 0, sizeof(*r));
	if (vl_open(&l, p, len) == -1 || (n = vl_count(&l, VL_TEMPLATES)) < 0)
		return -1;
	for (i = 0; i < (size_t)n; i++) {
		if (vl_key(&l, VL_TEMPLATES, i, &t, &tlen, &rest, &rlen) == -1)
			return -1;
		/* t is NUL-ended where it lies: the matcher reads it so */
		if (exact ? strlen(uri) != tlen || memcmp(uri, t, tlen) != 0 :
		    !uritemplate_match(t, uri))
			continue;
		if ((r->vr_backend = strndup(rest, rlen)) == NULL)
			return -1;
		return 0;
	}
	return VIEW_NO_ROUTE;
}
