/*
 * The Cedar subset's values: arenas, Cedar values from Cedar's JSON
 * format, entity stores (shared/cedar.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/cedar.h"
#include "shared/cedar_int.h"

void *
cedar_arena_alloc(struct arena *ar, size_t n)
{
	struct arena_chunk	*c;
	size_t			 sz;
	void			*p;

	if (n > ARENA_LIMIT)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n == 0)
		n = ARENA_ALIGN;
	c = ar->ar_head;
	if (c == NULL || c->ac_size - c->ac_used < n) {
		sz = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (ar->ar_total + sz > ARENA_LIMIT)
			return NULL;
		if ((c = malloc(sizeof(*c) + sz)) == NULL)
			return NULL;
		c->ac_size = sz;
		c->ac_used = 0;
		c->ac_next = ar->ar_head;
		ar->ar_head = c;
		ar->ar_total += sz;
	}
	p = (char *)c->ac_data + c->ac_used;
	c->ac_used += n;
	return p;
}

void *
cedar_arena_array(struct arena *ar, size_t n, size_t size)
{
	if (size != 0 && n > ARENA_LIMIT / size)
		return NULL;
	return cedar_arena_alloc(ar, n * size);
}

void
cedar_arena_free(struct arena *ar)
{
	struct arena_chunk	*c, *next;

	for (c = ar->ar_head; c != NULL; c = next) {
		next = c->ac_next;
		free(c);
	}
	ar->ar_head = NULL;
	ar->ar_total = 0;
}

int
cedar_arena_str(struct arena *ar, const char *s, size_t len,
    struct cedar_str *out)
{
	char	*p;

	if ((p = cedar_arena_alloc(ar, len + 1)) == NULL)
		return -1;
	memcpy(p, s, len);
	p[len] = '\0';
	out->cs_ptr = p;
	out->cs_len = len;
	return 0;
}

const char *const cedar_cv_names[] = {
	"bool", "long", "string", "entity", "set", "record", "decimal"
};

const struct cv cedar_cv_true = { .cv_t = CV_BOOL, .cv_u.b = 1 };
const struct cv cedar_cv_false = { .cv_t = CV_BOOL, .cv_u.b = 0 };
const struct cv cedar_cv_empty = { .cv_t = CV_RECORD };

int
cedar_str_eq(const struct cedar_str *a, const struct cedar_str *b)
{
	return a->cs_len == b->cs_len &&
	    memcmp(a->cs_ptr, b->cs_ptr, a->cs_len) == 0;
}

int
cedar_str_cmp(const struct cedar_str *a, const struct cedar_str *b)
{
	size_t	n;
	int	c;

	n = a->cs_len < b->cs_len ? a->cs_len : b->cs_len;
	if ((c = memcmp(a->cs_ptr, b->cs_ptr, n)) != 0)
		return c;
	return a->cs_len < b->cs_len ? -1 : a->cs_len > b->cs_len;
}

int
cedar_uid_eq(const struct cedar_uid *a, const struct cedar_uid *b)
{
	return cedar_str_eq(&a->cu_id, &b->cu_id) &&
	    cedar_str_eq(&a->cu_type, &b->cu_type);
}

/* the value of key in a record, or NULL */
const struct cv *
cedar_rec_get(const struct cv *r, const struct cedar_str *key)
{
	size_t	lo, hi, mid;
	int	c;

	lo = 0;
	hi = r->cv_u.rec.n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = cedar_str_cmp(key, &r->cv_u.rec.k[mid])) == 0)
			return r->cv_u.rec.v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* 1 if set s holds a value equal to v */
int
cedar_set_has(const struct cv *s, const struct cv *v, long *fuel)
{
	size_t	i;

	for (i = 0; i < s->cv_u.set.n; i++)
		if (cedar_cv_eq(s->cv_u.set.v[i], v, fuel))
			return 1;
	return 0;
}

/* Cedar's ==: never an error; *fuel going negative stops the work */
int
cedar_cv_eq(const struct cv *a, const struct cv *b, long *fuel)
{
	size_t	i;

	if (--*fuel < 0)
		return 0;
	if (a == b)
		return 1;
	if (a->cv_t != b->cv_t)
		return 0;
	switch (a->cv_t) {
	case CV_BOOL:
		return a->cv_u.b == b->cv_u.b;
	case CV_LONG:
	case CV_DECIMAL:
		return a->cv_u.l == b->cv_u.l;
	case CV_STRING:
		return cedar_str_eq(&a->cv_u.s, &b->cv_u.s);
	case CV_ENTITY:
		return cedar_uid_eq(&a->cv_u.e, &b->cv_u.e);
	case CV_SET:
		/* as sets: order and duplicates don't matter */
		for (i = 0; i < a->cv_u.set.n; i++)
			if (!cedar_set_has(b, a->cv_u.set.v[i], fuel))
				return 0;
		for (i = 0; i < b->cv_u.set.n; i++)
			if (!cedar_set_has(a, b->cv_u.set.v[i], fuel))
				return 0;
		return *fuel >= 0;
	case CV_RECORD:
		if (a->cv_u.rec.n != b->cv_u.rec.n)
			return 0;
		for (i = 0; i < a->cv_u.rec.n; i++)
			if (!cedar_str_eq(&a->cv_u.rec.k[i],
			    &b->cv_u.rec.k[i]) ||
			    !cedar_cv_eq(a->cv_u.rec.v[i], b->cv_u.rec.v[i],
			    fuel))
				return 0;
		return 1;
	}
	return 0;
}

/* Cedar JSON values */

int
cedar_json_errf(char *err, size_t errsz, const char *fmt, ...)
{
	va_list	ap;

	if (err != NULL && errsz > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
cedar_is_ident0(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int
cedar_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* ANYIDENT { '::' ANYIDENT }: a name Cedar would accept as a type */
static int
path_valid(const char *s, size_t len)
{
	size_t	i, start;

	i = 0;
	for (;;) {
		start = i;
		while (i < len && (cedar_is_ident0((unsigned char)s[i]) ||
		    (i > start && cedar_is_digit(s[i]))))
			i++;
		if (i == start)
			return 0;
		if (i == len)
			return 1;
		if (len - i < 2 || s[i] != ':' || s[i + 1] != ':')
			return 0;
		i += 2;
	}
}

/* {"type": T, "id": I}, or that under "__entity" */
static int
uid_from_json(struct arena *ar, const json_t *j, struct cedar_uid *u,
    char *err, size_t errsz)
{
	const json_t	*t, *id;

	if (json_is_object(j) && json_object_size(j) == 1 &&
	    (t = json_object_get(j, "__entity")) != NULL)
		j = t;
	if (!json_is_object(j) || json_object_size(j) != 2 ||
	    !json_is_string(t = json_object_get(j, "type")) ||
	    !json_is_string(id = json_object_get(j, "id")))
		return cedar_json_errf(err, errsz,
		    "an entity UID is {\"type\": string, \"id\": string}");
	if (!path_valid(json_string_value(t), json_string_length(t)))
		return cedar_json_errf(err, errsz, "bad entity type \"%s\"",
		    json_string_value(t));
	if (cedar_arena_str(ar, json_string_value(t), json_string_length(t),
	    &u->cu_type) == -1 ||
	    cedar_arena_str(ar, json_string_value(id), json_string_length(id),
	    &u->cu_id) == -1)
		return cedar_json_errf(err, errsz, "out of memory");
	return 0;
}

/* decimal("-12.3456"): digits, a dot, 1 to 4 digits; scaled by 10^4 */
int
cedar_decimal_parse(const char *s, size_t len, int64_t *out)
{
	uint64_t	v, lim;
	size_t		i, frac;
	int		neg, dot;

	i = 0;
	neg = len > 0 && s[0] == '-';
	if (neg)
		i++;
	v = 0;
	dot = 0;
	frac = 0;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (i == len || s[i] < '0' || s[i] > '9')
		return -1;
	for (; i < len; i++) {
		if (s[i] == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (s[i] < '0' || s[i] > '9' || (dot && ++frac > 4))
			return -1;
		if (v > (lim - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!dot || frac == 0)
		return -1;
	for (; frac < 4; frac++) {
		if (v > lim / 10)
			return -1;
		v *= 10;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static int
rec_key_cmp(const void *a, const void *b)
{
	return cedar_str_cmp(a, b);
}

struct rec_entry {
	struct cedar_str	 re_k;	/* first: rec_key_cmp sorts */
	const struct cv		*re_v;
};

static const struct cv *cv_from_json(struct arena *, const json_t *, int,
		    char *, size_t);

const struct cv *
cedar_rec_from_json(struct arena *ar, const json_t *j, int depth, char *err,
    size_t errsz)
{
	struct cv		*r;
	struct rec_entry	*e;
	const char		*k;
	size_t			 klen, i, n;
	json_t			*v;

	n = json_object_size(j);
	if ((r = cedar_arena_alloc(ar, sizeof(*r))) == NULL ||
	    (e = cedar_arena_array(ar, n + 1, sizeof(*e))) == NULL)
		goto oom;
	r->cv_t = CV_RECORD;
	i = 0;
	json_object_keylen_foreach((json_t *)j, k, klen, v) {
		if (cedar_arena_str(ar, k, klen, &e[i].re_k) == -1)
			goto oom;
		if ((e[i].re_v = cv_from_json(ar, v, depth + 1, err,
		    errsz)) == NULL)
			return NULL;
		i++;
	}
	qsort(e, n, sizeof(*e), rec_key_cmp);
	if ((r->cv_u.rec.k = cedar_arena_array(ar, n + 1,
	    sizeof(struct cedar_str))) == NULL ||
	    (r->cv_u.rec.v = cedar_arena_array(ar, n + 1, sizeof(struct cv *)))
	    == NULL)
		goto oom;
	for (i = 0; i < n; i++) {
		r->cv_u.rec.k[i] = e[i].re_k;
		r->cv_u.rec.v[i] = e[i].re_v;
	}
	r->cv_u.rec.n = n;
	return r;
oom:
	cedar_json_errf(err, errsz, "out of memory");
	return NULL;
}

static const struct cv *
cv_from_json(struct arena *ar, const json_t *j, int depth, char *err,
    size_t errsz)
{
	struct cv	*v;
	const json_t	*x, *fn, *arg;
	size_t		 i;

	if (depth > CEDAR_VALUE_DEPTH_MAX) {
		cedar_json_errf(err, errsz, "value nested deeper than %d",
		    CEDAR_VALUE_DEPTH_MAX);
		return NULL;
	}
	if (json_is_true(j))
		return &cedar_cv_true;
	if (json_is_false(j))
		return &cedar_cv_false;
	if ((v = cedar_arena_alloc(ar, sizeof(*v))) == NULL)
		goto oom;
	switch (json_typeof(j)) {
	case JSON_INTEGER:
		v->cv_t = CV_LONG;
		v->cv_u.l = json_integer_value(j);
		return v;
	case JSON_STRING:
		v->cv_t = CV_STRING;
		if (cedar_arena_str(ar, json_string_value(j),
		    json_string_length(j), &v->cv_u.s) == -1)
			goto oom;
		return v;
	case JSON_ARRAY:
		v->cv_t = CV_SET;
		v->cv_u.set.n = json_array_size(j);
		if ((v->cv_u.set.v = cedar_arena_array(ar, v->cv_u.set.n + 1,
		    sizeof(struct cv *))) == NULL)
			goto oom;
		for (i = 0; i < v->cv_u.set.n; i++)
			if ((v->cv_u.set.v[i] = cv_from_json(ar,
			    json_array_get(j, i), depth + 1, err,
			    errsz)) == NULL)
				return NULL;
		return v;
	case JSON_OBJECT:
		if ((x = json_object_get(j, "__entity")) != NULL) {
			if (json_object_size(j) != 1)
				break;
			v->cv_t = CV_ENTITY;
			if (uid_from_json(ar, x, &v->cv_u.e, err, errsz) == -1)
				return NULL;
			return v;
		}
		if ((x = json_object_get(j, "__extn")) != NULL) {
			if (json_object_size(j) != 1 || !json_is_object(x) ||
			    !json_is_string(fn = json_object_get(x, "fn")) ||
			    strcmp(json_string_value(fn), "decimal") != 0 ||
			    !json_is_string(arg = json_object_get(x, "arg")) ||
			    cedar_decimal_parse(json_string_value(arg),
			    json_string_length(arg), &v->cv_u.l) == -1) {
				cedar_json_errf(err, errsz, "only decimal("
				    "\"d.dddd\") extension values are "
				    "supported");
				return NULL;
			}
			v->cv_t = CV_DECIMAL;
			return v;
		}
		return cedar_rec_from_json(ar, j, depth, err, errsz);
	default:
		break;
	}
	cedar_json_errf(err, errsz, "a %s is no Cedar value",
	    json_is_real(j) ? "non-integral number" :
	    json_is_null(j) ? "null" : "malformed escape");
	return NULL;
oom:
	cedar_json_errf(err, errsz, "out of memory");
	return NULL;
}

uint64_t
cedar_uid_hash(const struct cedar_uid *u)
{
	uint64_t	h;
	size_t		i;

	h = 1469598103934665603ULL;
	for (i = 0; i < u->cu_type.cs_len; i++)
		h = (h ^ (unsigned char)u->cu_type.cs_ptr[i]) *
		    1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (i = 0; i < u->cu_id.cs_len; i++)
		h = (h ^ (unsigned char)u->cu_id.cs_ptr[i]) * 1099511628211ULL;
	return h;
}

struct cedar_entities *
cedar_entities_new(const struct cedar_entities *base)
{
	struct cedar_entities	*ce;

	if ((ce = calloc(1, sizeof(*ce))) == NULL)
		return NULL;
	ce->ce_base = base;
	return ce;
}

void
cedar_entities_free(struct cedar_entities *ce)
{
	if (ce == NULL)
		return;
	cedar_arena_free(&ce->ce_arena);
	free(ce->ce_tab);
	free(ce);
}

static const struct ent *
ents_find1(const struct cedar_entities *ce, const struct cedar_uid *u,
    uint64_t h)
{
	size_t	i;

	if (ce->ce_cap == 0)
		return NULL;
	for (i = h & (ce->ce_cap - 1); ce->ce_tab[i] != NULL;
	    i = (i + 1) & (ce->ce_cap - 1))
		if (ce->ce_tab[i]->en_hash == h &&
		    cedar_uid_eq(&ce->ce_tab[i]->en_uid, u))
			return ce->ce_tab[i];
	return NULL;
}

const struct ent *
cedar_ents_find(const struct cedar_entities *ce, const struct cedar_uid *u)
{
	const struct ent	*e;
	uint64_t		 h;

	h = cedar_uid_hash(u);
	for (; ce != NULL; ce = ce->ce_base)
		if ((e = ents_find1(ce, u, h)) != NULL)
			return e;
	return NULL;
}

int
cedar_ents_grow(struct cedar_entities *ce, size_t want)
{
	struct ent	**tab;
	size_t		  cap, i, j;

	if (want * 2 <= ce->ce_cap)
		return 0;
	cap = ce->ce_cap == 0 ? 16 : ce->ce_cap;
	while (cap < want * 2)
		cap *= 2;
	if ((tab = calloc(cap, sizeof(*tab))) == NULL)
		return -1;
	for (i = 0; i < ce->ce_cap; i++) {
		if (ce->ce_tab[i] == NULL)
			continue;
		for (j = ce->ce_tab[i]->en_hash & (cap - 1); tab[j] != NULL;
		    j = (j + 1) & (cap - 1))
			;
		tab[j] = ce->ce_tab[i];
	}
	free(ce->ce_tab);
	ce->ce_tab = tab;
	ce->ce_cap = cap;
	return 0;
}

/* room made by cedar_ents_grow() */
void
cedar_ents_put(struct cedar_entities *ce, struct ent *e)
{
	size_t	slot;

	for (slot = e->en_hash & (ce->ce_cap - 1); ce->ce_tab[slot] != NULL;
	    slot = (slot + 1) & (ce->ce_cap - 1))
		;
	ce->ce_tab[slot] = e;
	ce->ce_n++;
}

static struct ent *
ent_from_json(struct arena *ar, const json_t *j, char *err, size_t errsz)
{
	struct ent	*e;
	const json_t	*uid, *attrs, *parents;
	size_t		 i;

	if (!json_is_object(j) || (uid = json_object_get(j, "uid")) == NULL) {
		cedar_json_errf(err, errsz,
		    "an entity is an object with a \"uid\"");
		return NULL;
	}
	attrs = json_object_get(j, "attrs");
	parents = json_object_get(j, "parents");
	if ((attrs != NULL && !json_is_object(attrs)) ||
	    (parents != NULL && !json_is_array(parents))) {
		cedar_json_errf(err, errsz,
		    "an entity's attrs is an object, its parents an array");
		return NULL;
	}
	if ((e = cedar_arena_alloc(ar, sizeof(*e))) == NULL) {
		cedar_json_errf(err, errsz, "out of memory");
		return NULL;
	}
	if (uid_from_json(ar, uid, &e->en_uid, err, errsz) == -1)
		return NULL;
	e->en_hash = cedar_uid_hash(&e->en_uid);
	e->en_attrs = &cedar_cv_empty;
	if (attrs != NULL && (e->en_attrs = cedar_rec_from_json(ar, attrs, 0,
	    err, errsz)) == NULL)
		return NULL;
	e->en_nparents = parents != NULL ? json_array_size(parents) : 0;
	if ((e->en_parents = cedar_arena_array(ar, e->en_nparents + 1,
	    sizeof(*e->en_parents))) == NULL) {
		cedar_json_errf(err, errsz, "out of memory");
		return NULL;
	}
	for (i = 0; i < e->en_nparents; i++)
		if (uid_from_json(ar, json_array_get(parents, i),
		    &e->en_parents[i], err, errsz) == -1)
			return NULL;
	return e;
}

int
cedar_entities_add_json(struct cedar_entities *ce, const json_t *j,
    char *err, size_t errsz)
{
	struct ent	**add;
	size_t		  n, i, k;
	int		  rc;

	n = json_is_array(j) ? json_array_size(j) : 1;
	if ((add = calloc(n + 1, sizeof(*add))) == NULL)
		return cedar_json_errf(err, errsz, "out of memory");
	rc = -1;
	for (i = 0; i < n; i++) {
		if ((add[i] = ent_from_json(&ce->ce_arena,
		    json_is_array(j) ? json_array_get(j, i) : j, err,
		    errsz)) == NULL)
			goto out;
		if (ents_find1(ce, &add[i]->en_uid, add[i]->en_hash) != NULL)
			goto dup;
		for (k = 0; k < i; k++)
			if (cedar_uid_eq(&add[k]->en_uid, &add[i]->en_uid))
				goto dup;
	}
	if (cedar_ents_grow(ce, ce->ce_n + n) == -1) {
		cedar_json_errf(err, errsz, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		cedar_ents_put(ce, add[i]);
	rc = 0;
	goto out;
dup:
	cedar_json_errf(err, errsz, "duplicate entity %.*s::\"%.*s\"",
	    (int)add[i]->en_uid.cu_type.cs_len, add[i]->en_uid.cu_type.cs_ptr,
	    (int)add[i]->en_uid.cu_id.cs_len, add[i]->en_uid.cu_id.cs_ptr);
out:
	free(add);
	return rc;
}

