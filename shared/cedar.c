/*
 * Cedar policies: the subset of shared/cedar.h, parsed into trees and
 * evaluated with Cedar's semantics (https://docs.cedarpolicy.com/,
 * "Policy grammar", "Operators", "Authorization"): && and || short-
 * circuit and want Bool operands; == never errors and compares across
 * types as unequal; < and friends want Longs; attribute access on a
 * missing attribute or an entity absent from the store errors, has on
 * such an entity is false; in is reflexive and transitive and checks
 * every element of a set right-hand side; a policy whose condition
 * errors is skipped and reported.
 *
 * Everything a request allocates comes from one arena freed at its end,
 * so evaluation has no frees to get wrong; policies and stores own
 * arenas of their own.  Recursion is bounded by CEDAR_DEPTH_MAX (the
 * parser refuses deeper trees, && and || chains are n-ary nodes) and
 * work by CEDAR_FUEL.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "shared/cedar.h"

/* printf-like error builders */
static int	json_errf(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
struct parser;
struct check;
struct eval;
struct expr;
static void	*perr(struct parser *, unsigned, unsigned, const char *, ...)
		    __attribute__((format(printf, 4, 5)));
static void	*perr_tok(struct parser *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	 check_err(struct check *, unsigned, unsigned, const char *,
		    ...) __attribute__((format(printf, 4, 5)));
static const struct cv *ev_err(struct eval *, const struct expr *,
		    const char *, ...) __attribute__((format(printf, 3, 4)));

/* arenas */

#define ARENA_CHUNK	(16 * 1024)
#define ARENA_ALIGN	16

struct arena_chunk {
	struct arena_chunk	*ac_next;
	size_t			 ac_size;
	size_t			 ac_used;
	max_align_t		 ac_data[];
};

struct arena {
	struct arena_chunk	*ar_head;
	size_t			 ar_total;
};

#define ARENA_LIMIT	(256UL * 1024 * 1024)

static void *
arena_alloc(struct arena *ar, size_t n)
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

static void *
arena_array(struct arena *ar, size_t n, size_t size)
{
	if (size != 0 && n > ARENA_LIMIT / size)
		return NULL;
	return arena_alloc(ar, n * size);
}

static void
arena_free(struct arena *ar)
{
	struct arena_chunk	*c, *next;

	for (c = ar->ar_head; c != NULL; c = next) {
		next = c->ac_next;
		free(c);
	}
	ar->ar_head = NULL;
	ar->ar_total = 0;
}

static int
arena_str(struct arena *ar, const char *s, size_t len, struct cedar_str *out)
{
	char	*p;

	if ((p = arena_alloc(ar, len + 1)) == NULL)
		return -1;
	memcpy(p, s, len);
	p[len] = '\0';
	out->cs_ptr = p;
	out->cs_len = len;
	return 0;
}

/* values */

enum cv_type {
	CV_BOOL,
	CV_LONG,
	CV_STRING,
	CV_ENTITY,
	CV_SET,
	CV_RECORD,
	CV_DECIMAL		/* from input only: Long scaled by 10^4 */
};

static const char *const cv_names[] = {
	"bool", "long", "string", "entity", "set", "record", "decimal"
};

struct cv {
	enum cv_type		 cv_t;
	union {
		int		 b;
		int64_t		 l;
		struct cedar_str s;
		struct cedar_uid e;
		struct {
			const struct cv	**v;
			size_t		  n;
		}		 set;
		struct {	/* keys sorted, unique */
			struct cedar_str *k;
			const struct cv	**v;
			size_t		  n;
		}		 rec;
	}			 cv_u;
};

static const struct cv cv_true = { .cv_t = CV_BOOL, .cv_u.b = 1 };
static const struct cv cv_false = { .cv_t = CV_BOOL, .cv_u.b = 0 };
static const struct cv cv_empty = { .cv_t = CV_RECORD };

#define CV_BOOLEAN(x)	((x) ? &cv_true : &cv_false)

static int
str_eq(const struct cedar_str *a, const struct cedar_str *b)
{
	return a->cs_len == b->cs_len &&
	    memcmp(a->cs_ptr, b->cs_ptr, a->cs_len) == 0;
}

static int
str_cmp(const struct cedar_str *a, const struct cedar_str *b)
{
	size_t	n;
	int	c;

	n = a->cs_len < b->cs_len ? a->cs_len : b->cs_len;
	if ((c = memcmp(a->cs_ptr, b->cs_ptr, n)) != 0)
		return c;
	return a->cs_len < b->cs_len ? -1 : a->cs_len > b->cs_len;
}

static int
uid_eq(const struct cedar_uid *a, const struct cedar_uid *b)
{
	return str_eq(&a->cu_id, &b->cu_id) && str_eq(&a->cu_type, &b->cu_type);
}

/* the value of key in a record, or NULL */
static const struct cv *
rec_get(const struct cv *r, const struct cedar_str *key)
{
	size_t	lo, hi, mid;
	int	c;

	lo = 0;
	hi = r->cv_u.rec.n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = str_cmp(key, &r->cv_u.rec.k[mid])) == 0)
			return r->cv_u.rec.v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int	cv_eq(const struct cv *, const struct cv *, long *);

/* 1 if set s holds a value equal to v */
static int
set_has(const struct cv *s, const struct cv *v, long *fuel)
{
	size_t	i;

	for (i = 0; i < s->cv_u.set.n; i++)
		if (cv_eq(s->cv_u.set.v[i], v, fuel))
			return 1;
	return 0;
}

/* Cedar's ==: never an error; *fuel going negative stops the work */
static int
cv_eq(const struct cv *a, const struct cv *b, long *fuel)
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
		return str_eq(&a->cv_u.s, &b->cv_u.s);
	case CV_ENTITY:
		return uid_eq(&a->cv_u.e, &b->cv_u.e);
	case CV_SET:
		/* as sets: order and duplicates don't matter */
		for (i = 0; i < a->cv_u.set.n; i++)
			if (!set_has(b, a->cv_u.set.v[i], fuel))
				return 0;
		for (i = 0; i < b->cv_u.set.n; i++)
			if (!set_has(a, b->cv_u.set.v[i], fuel))
				return 0;
		return *fuel >= 0;
	case CV_RECORD:
		if (a->cv_u.rec.n != b->cv_u.rec.n)
			return 0;
		for (i = 0; i < a->cv_u.rec.n; i++)
			if (!str_eq(&a->cv_u.rec.k[i], &b->cv_u.rec.k[i]) ||
			    !cv_eq(a->cv_u.rec.v[i], b->cv_u.rec.v[i], fuel))
				return 0;
		return 1;
	}
	return 0;
}

/* Cedar JSON values */

static int
json_errf(char *err, size_t errsz, const char *fmt, ...)
{
	va_list	ap;

	if (err != NULL && errsz > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
is_ident0(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
is_digit(int c)
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
		while (i < len && (is_ident0((unsigned char)s[i]) ||
		    (i > start && is_digit(s[i]))))
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
		return json_errf(err, errsz,
		    "an entity UID is {\"type\": string, \"id\": string}");
	if (!path_valid(json_string_value(t), json_string_length(t)))
		return json_errf(err, errsz, "bad entity type \"%s\"",
		    json_string_value(t));
	if (arena_str(ar, json_string_value(t), json_string_length(t),
	    &u->cu_type) == -1 ||
	    arena_str(ar, json_string_value(id), json_string_length(id),
	    &u->cu_id) == -1)
		return json_errf(err, errsz, "out of memory");
	return 0;
}

/* decimal("-12.3456"): digits, a dot, 1 to 4 digits; scaled by 10^4 */
static int
decimal_parse(const char *s, size_t len, int64_t *out)
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
	return str_cmp(a, b);
}

struct rec_entry {
	struct cedar_str	 re_k;	/* first: rec_key_cmp sorts */
	const struct cv		*re_v;
};

static const struct cv *cv_from_json(struct arena *, const json_t *, int,
		    char *, size_t);

static const struct cv *
rec_from_json(struct arena *ar, const json_t *j, int depth, char *err,
    size_t errsz)
{
	struct cv		*r;
	struct rec_entry	*e;
	const char		*k;
	size_t			 klen, i, n;
	json_t			*v;

	n = json_object_size(j);
	if ((r = arena_alloc(ar, sizeof(*r))) == NULL ||
	    (e = arena_array(ar, n + 1, sizeof(*e))) == NULL)
		goto oom;
	r->cv_t = CV_RECORD;
	i = 0;
	json_object_keylen_foreach((json_t *)j, k, klen, v) {
		if (arena_str(ar, k, klen, &e[i].re_k) == -1)
			goto oom;
		if ((e[i].re_v = cv_from_json(ar, v, depth + 1, err,
		    errsz)) == NULL)
			return NULL;
		i++;
	}
	qsort(e, n, sizeof(*e), rec_key_cmp);
	if ((r->cv_u.rec.k = arena_array(ar, n + 1, sizeof(struct cedar_str)))
	    == NULL ||
	    (r->cv_u.rec.v = arena_array(ar, n + 1, sizeof(struct cv *)))
	    == NULL)
		goto oom;
	for (i = 0; i < n; i++) {
		r->cv_u.rec.k[i] = e[i].re_k;
		r->cv_u.rec.v[i] = e[i].re_v;
	}
	r->cv_u.rec.n = n;
	return r;
oom:
	json_errf(err, errsz, "out of memory");
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
		json_errf(err, errsz, "value nested deeper than %d",
		    CEDAR_VALUE_DEPTH_MAX);
		return NULL;
	}
	if (json_is_true(j))
		return &cv_true;
	if (json_is_false(j))
		return &cv_false;
	if ((v = arena_alloc(ar, sizeof(*v))) == NULL)
		goto oom;
	switch (json_typeof(j)) {
	case JSON_INTEGER:
		v->cv_t = CV_LONG;
		v->cv_u.l = json_integer_value(j);
		return v;
	case JSON_STRING:
		v->cv_t = CV_STRING;
		if (arena_str(ar, json_string_value(j), json_string_length(j),
		    &v->cv_u.s) == -1)
			goto oom;
		return v;
	case JSON_ARRAY:
		v->cv_t = CV_SET;
		v->cv_u.set.n = json_array_size(j);
		if ((v->cv_u.set.v = arena_array(ar, v->cv_u.set.n + 1,
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
			    decimal_parse(json_string_value(arg),
			    json_string_length(arg), &v->cv_u.l) == -1) {
				json_errf(err, errsz, "only decimal("
				    "\"d.dddd\") extension values are "
				    "supported");
				return NULL;
			}
			v->cv_t = CV_DECIMAL;
			return v;
		}
		return rec_from_json(ar, j, depth, err, errsz);
	default:
		break;
	}
	json_errf(err, errsz, "a %s is no Cedar value",
	    json_is_real(j) ? "non-integral number" :
	    json_is_null(j) ? "null" : "malformed escape");
	return NULL;
oom:
	json_errf(err, errsz, "out of memory");
	return NULL;
}

/* entity stores */

struct ent {
	struct cedar_uid	 en_uid;
	const struct cv		*en_attrs;	/* a record */
	struct cedar_uid	*en_parents;
	size_t			 en_nparents;
	uint64_t		 en_hash;
};

struct cedar_entities {
	const struct cedar_entities	*ce_base;
	struct arena			 ce_arena;
	struct ent			**ce_tab;	/* open addressing */
	size_t				 ce_cap;
	size_t				 ce_n;
};

static uint64_t
uid_hash(const struct cedar_uid *u)
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
	arena_free(&ce->ce_arena);
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
		    uid_eq(&ce->ce_tab[i]->en_uid, u))
			return ce->ce_tab[i];
	return NULL;
}

static const struct ent *
ents_find(const struct cedar_entities *ce, const struct cedar_uid *u)
{
	const struct ent	*e;
	uint64_t		 h;

	h = uid_hash(u);
	for (; ce != NULL; ce = ce->ce_base)
		if ((e = ents_find1(ce, u, h)) != NULL)
			return e;
	return NULL;
}

static int
ents_grow(struct cedar_entities *ce, size_t want)
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

/* room made by ents_grow() */
static void
ents_put(struct cedar_entities *ce, struct ent *e)
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
		json_errf(err, errsz, "an entity is an object with a \"uid\"");
		return NULL;
	}
	attrs = json_object_get(j, "attrs");
	parents = json_object_get(j, "parents");
	if ((attrs != NULL && !json_is_object(attrs)) ||
	    (parents != NULL && !json_is_array(parents))) {
		json_errf(err, errsz, "an entity's attrs is an object, its "
		    "parents an array");
		return NULL;
	}
	if ((e = arena_alloc(ar, sizeof(*e))) == NULL) {
		json_errf(err, errsz, "out of memory");
		return NULL;
	}
	if (uid_from_json(ar, uid, &e->en_uid, err, errsz) == -1)
		return NULL;
	e->en_hash = uid_hash(&e->en_uid);
	e->en_attrs = &cv_empty;
	if (attrs != NULL && (e->en_attrs = rec_from_json(ar, attrs, 0, err,
	    errsz)) == NULL)
		return NULL;
	e->en_nparents = parents != NULL ? json_array_size(parents) : 0;
	if ((e->en_parents = arena_array(ar, e->en_nparents + 1,
	    sizeof(*e->en_parents))) == NULL) {
		json_errf(err, errsz, "out of memory");
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
		return json_errf(err, errsz, "out of memory");
	rc = -1;
	for (i = 0; i < n; i++) {
		if ((add[i] = ent_from_json(&ce->ce_arena,
		    json_is_array(j) ? json_array_get(j, i) : j, err,
		    errsz)) == NULL)
			goto out;
		if (ents_find1(ce, &add[i]->en_uid, add[i]->en_hash) != NULL)
			goto dup;
		for (k = 0; k < i; k++)
			if (uid_eq(&add[k]->en_uid, &add[i]->en_uid))
				goto dup;
	}
	if (ents_grow(ce, ce->ce_n + n) == -1) {
		json_errf(err, errsz, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		ents_put(ce, add[i]);
	rc = 0;
	goto out;
dup:
	json_errf(err, errsz, "duplicate entity %.*s::\"%.*s\"",
	    (int)add[i]->en_uid.cu_type.cs_len, add[i]->en_uid.cu_type.cs_ptr,
	    (int)add[i]->en_uid.cu_id.cs_len, add[i]->en_uid.cu_id.cs_ptr);
out:
	free(add);
	return rc;
}

/* the lexer */

enum tok {
	T_EOF,
	T_IDENT,
	T_INT,
	T_STR,
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_LBRACE,
	T_RBRACE,
	T_COMMA,
	T_SEMI,
	T_DOT,
	T_COLONS,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_AND,
	T_OR,
	T_NOT,
	T_MINUS,
	T_AT,
	T_ARITH,		/* + * */
	T_QUESTION,		/* template slots */
	T_OTHER
};

struct token {
	enum tok	 t_t;
	const char	*t_p;	/* start in the text */
	size_t		 t_len;
	unsigned	 t_line;
	unsigned	 t_col;
	uint64_t	 t_int;	/* T_INT: the magnitude, if !t_big */
	int		 t_big;
};

struct parser {
	const char	*p_file;
	const char	*p_text;
	size_t		 p_len;
	size_t		 p_pos;
	unsigned	 p_line;
	unsigned	 p_col;
	struct token	 p_tok;
	struct token	 p_next;	/* one token of lookahead */
	int		 p_have_next;
	struct arena	*p_ar;
	char		*p_err;
	size_t		 p_errsz;
	int		 p_failed;
	int		 p_depth;
};

/* the first error wins: later ones are consequences */
static void *
perr(struct parser *p, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (p->p_failed)
		return NULL;
	p->p_failed = 1;
	if (p->p_err == NULL || p->p_errsz == 0)
		return NULL;
	n = snprintf(p->p_err, p->p_errsz, "%s:%u:%u: ", p->p_file, line, col);
	if (n < 0 || (size_t)n >= p->p_errsz)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p->p_err + n, p->p_errsz - n, fmt, ap);
	va_end(ap);
	return NULL;
}

static void *
perr_tok(struct parser *p, const char *fmt, ...)
{
	char	msg[CEDAR_ERRLEN];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return perr(p, p->p_tok.t_line, p->p_tok.t_col, "%s", msg);
}

static void
lex_adv(struct parser *p, size_t n)
{
	for (; n > 0; n--, p->p_pos++) {
		if (p->p_text[p->p_pos] == '\n') {
			p->p_line++;
			p->p_col = 1;
		} else if (((unsigned char)p->p_text[p->p_pos] & 0xc0) != 0x80)
			p->p_col++;	/* columns count characters */
	}
}

static void
lex_raw(struct parser *p, struct token *t)
{
	const char	*s;
	size_t		 n, left;
	int		 c;

	for (;;) {
		while (p->p_pos < p->p_len &&
		    strchr(" \t\n\r", p->p_text[p->p_pos]) != NULL &&
		    p->p_text[p->p_pos] != '\0')
			lex_adv(p, 1);
		if (p->p_len - p->p_pos >= 2 && p->p_text[p->p_pos] == '/' &&
		    p->p_text[p->p_pos + 1] == '/') {
			while (p->p_pos < p->p_len &&
			    p->p_text[p->p_pos] != '\n')
				lex_adv(p, 1);
			continue;
		}
		break;
	}
	memset(t, 0, sizeof(*t));
	t->t_line = p->p_line;
	t->t_col = p->p_col;
	t->t_p = s = p->p_text + p->p_pos;
	left = p->p_len - p->p_pos;
	if (left == 0) {
		t->t_t = T_EOF;
		return;
	}
	c = (unsigned char)s[0];
	n = 1;
	if (is_ident0(c)) {
		t->t_t = T_IDENT;
		while (n < left && (is_ident0((unsigned char)s[n]) ||
		    is_digit(s[n])))
			n++;
	} else if (is_digit(c)) {
		t->t_t = T_INT;
		for (n = 0; n < left && is_digit(s[n]); n++) {
			if (t->t_int > (UINT64_MAX - 9) / 10)
				t->t_big = 1;
			else
				t->t_int = t->t_int * 10 +
				    (uint64_t)(s[n] - '0');
		}
	} else if (c == '"') {
		t->t_t = T_STR;
		while (n < left && s[n] != '"')
			n += (s[n] == '\\' && n + 1 < left) ? 2 : 1;
		if (n >= left) {
			t->t_t = T_OTHER;	/* reported as unterminated */
			t->t_len = left;
			t->t_big = 1;
			lex_adv(p, left);
			return;
		}
		n++;
	} else {
		switch (c) {
		case '(': t->t_t = T_LPAREN; break;
		case ')': t->t_t = T_RPAREN; break;
		case '[': t->t_t = T_LBRACK; break;
		case ']': t->t_t = T_RBRACK; break;
		case '{': t->t_t = T_LBRACE; break;
		case '}': t->t_t = T_RBRACE; break;
		case ',': t->t_t = T_COMMA; break;
		case ';': t->t_t = T_SEMI; break;
		case '.': t->t_t = T_DOT; break;
		case '@': t->t_t = T_AT; break;
		case '-': t->t_t = T_MINUS; break;
		case '+': case '*': t->t_t = T_ARITH; break;
		case '?': t->t_t = T_QUESTION; break;
		case ':':
			t->t_t = T_OTHER;
			if (left >= 2 && s[1] == ':') {
				t->t_t = T_COLONS;
				n = 2;
			}
			break;
		case '=':
			t->t_t = T_OTHER;
			if (left >= 2 && s[1] == '=') {
				t->t_t = T_EQ;
				n = 2;
			}
			break;
		case '!':
			t->t_t = T_NOT;
			if (left >= 2 && s[1] == '=') {
				t->t_t = T_NE;
				n = 2;
			}
			break;
		case '<':
		case '>':
			t->t_t = c == '<' ? T_LT : T_GT;
			if (left >= 2 && s[1] == '=') {
				t->t_t = c == '<' ? T_LE : T_GE;
				n = 2;
			}
			break;
		case '&':
		case '|':
			t->t_t = T_OTHER;
			if (left >= 2 && s[1] == c) {
				t->t_t = c == '&' ? T_AND : T_OR;
				n = 2;
			}
			break;
		default:
			t->t_t = T_OTHER;
			break;
		}
	}
	t->t_len = n;
	lex_adv(p, n);
}

static void
lex_next(struct parser *p)
{
	if (p->p_have_next) {
		p->p_tok = p->p_next;
		p->p_have_next = 0;
	} else
		lex_raw(p, &p->p_tok);
}

static const struct token *
lex_peek(struct parser *p)
{
	if (!p->p_have_next) {
		lex_raw(p, &p->p_next);
		p->p_have_next = 1;
	}
	return &p->p_next;
}

static int
tok_is(const struct token *t, const char *word)
{
	return t->t_t == T_IDENT && t->t_len == strlen(word) &&
	    memcmp(t->t_p, word, t->t_len) == 0;
}

static int
tok_reserved(const struct token *t)
{
	static const char *const words[] = {
		"true", "false", "if", "then", "else", "in", "like", "has",
		"is"
	};
	size_t	i;

	if (t->t_t != T_IDENT)
		return 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (tok_is(t, words[i]))
			return 1;
	return t->t_len >= 7 && memcmp(t->t_p, "__cedar", 7) == 0;
}

static int
tok_var(const struct token *t)
{
	static const char *const vars[] = {
		"principal", "action", "resource", "context"
	};
	int	i;

	for (i = 0; i < 4; i++)
		if (tok_is(t, vars[i]))
			return i;
	return -1;
}

/* what an unexpected token means, for the message */
static void *
perr_unexpected(struct parser *p, const char *want)
{
	const struct token	*t = &p->p_tok;

	switch (t->t_t) {
	case T_EOF:
		return perr_tok(p, "expected %s, found the end", want);
	case T_ARITH:
	case T_MINUS:
		return perr_tok(p, "arithmetic (+ - *) is not supported");
	case T_QUESTION:
		return perr_tok(p, "templates (?principal, ?resource) are "
		    "not supported");
	case T_OTHER:
		if (t->t_big && t->t_p[0] == '"')
			return perr_tok(p, "unterminated string");
		break;
	case T_IDENT:
		if (tok_is(t, "if"))
			return perr_tok(p, "if-then-else is not supported");
		if (tok_is(t, "is"))
			return perr_tok(p, "the is operator is not supported");
		break;
	case T_LBRACE:
		if (strcmp(want, "'{'") != 0)
			return perr_tok(p, "record literals are not supported");
		break;
	default:
		break;
	}
	return perr_tok(p, "expected %s, found '%.*s'", want,
	    (int)(t->t_len > 32 ? 32 : t->t_len), t->t_p);
}

static int
expect(struct parser *p, enum tok tt, const char *want)
{
	if (p->p_tok.t_t != tt) {
		perr_unexpected(p, want);
		return -1;
	}
	lex_next(p);
	return 0;
}

/* strings and patterns */

static size_t
utf8_put(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * Decodes the current T_STR token's escapes into segs: one segment for
 * a string; for a pattern (like), the segments between unescaped stars.
 */
static int
str_decode(struct parser *p, int pattern, struct cedar_str **segs,
    size_t *nsegs)
{
	const struct token	*t = &p->p_tok;
	const char		*s;
	char			*out, *o;
	struct cedar_str	*sg;
	size_t			 len, i, k, nsg, nd;
	uint32_t		 c;
	int			 h;

	s = t->t_p + 1;
	len = t->t_len - 2;
	nsg = 1;
	for (i = 0; i < len; i++)
		if (s[i] == '\\')
			i++;
		else if (pattern && s[i] == '*')
			nsg++;
	if ((out = arena_alloc(p->p_ar, len + 1)) == NULL ||
	    (sg = arena_array(p->p_ar, nsg, sizeof(*sg))) == NULL) {
		perr_tok(p, "out of memory");
		return -1;
	}
	o = out;
	k = 0;
	sg[0].cs_ptr = out;
	for (i = 0; i < len; i++) {
		if (s[i] == '*' && pattern) {
			sg[k].cs_len = (size_t)(o - sg[k].cs_ptr);
			sg[++k].cs_ptr = o;
			continue;
		}
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		switch (s[++i]) {
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case '0': *o++ = '\0'; break;
		case '\\': *o++ = '\\'; break;
		case '"': *o++ = '"'; break;
		case '\'': *o++ = '\''; break;
		case '*':
			if (!pattern)
				goto bad;
			*o++ = '*';
			break;
		case 'x':
			/* ASCII only: \x00 to \x7f */
			if (i + 2 >= len || (h = proto_hex_digit(s[i + 1])) <
			    0 || h > 7 || proto_hex_digit(s[i + 2]) < 0)
				goto bad;
			*o++ = (char)(h * 16 + proto_hex_digit(s[i + 2]));
			i += 2;
			break;
		case 'u':
			if (i + 1 >= len || s[i + 1] != '{')
				goto bad;
			c = 0;
			for (nd = 0, i += 2; i < len && s[i] != '}';
			    i++, nd++) {
				if ((h = proto_hex_digit(s[i])) < 0 || nd >= 6)
					goto bad;
				c = c * 16 + (uint32_t)h;
			}
			if (i >= len || nd == 0 || c > 0x10ffff ||
			    (c >= 0xd800 && c <= 0xdfff))
				goto bad;
			/* \u{..} never takes more room than its 5+ bytes */
			o += utf8_put(o, c);
			break;
		default:
			goto bad;
		}
	}
	sg[k].cs_len = (size_t)(o - sg[k].cs_ptr);
	*o = '\0';
	*segs = sg;
	*nsegs = k + 1;
	return 0;
bad:
	perr_tok(p, "invalid escape in string");
	return -1;
}

/* the tree */

enum op {
	E_LIT,
	E_VAR,
	E_AND,
	E_OR,
	E_NOT,
	E_EQ,
	E_NE,
	E_LT,
	E_LE,
	E_GT,
	E_GE,
	E_IN,
	E_HAS,
	E_LIKE,
	E_ATTR,
	E_CONTAINS,
	E_CONTAINSALL,
	E_CONTAINSANY,
	E_ISEMPTY,
	E_SET
};

struct expr {
	enum op			 x_op;
	unsigned		 x_line;
	unsigned		 x_col;
	int			 x_depth;
	const struct cv		*x_lit;		/* E_LIT */
	int			 x_var;		/* E_VAR */
	const struct expr	*x_a;
	const struct expr	*x_b;
	const struct expr	**x_v;		/* E_AND, E_OR, E_SET */
	size_t			 x_n;
	struct cedar_str	 x_key;		/* E_ATTR, E_HAS */
	struct cedar_str	*x_seg;		/* E_LIKE: between stars */
	size_t			 x_nseg;
};

enum scope_op {
	SC_ANY,
	SC_EQ,
	SC_IN
};

struct scope {
	enum scope_op		 sc_op;
	struct cedar_uid	*sc_uids;	/* SC_IN on action: several */
	size_t			 sc_n;
};

struct cond {
	const struct expr	*co_x;
	int			 co_unless;
};

struct policy {
	int			 po_forbid;
	unsigned		 po_line;
	unsigned		 po_col;
	struct scope		 po_scope[3];	/* principal, action, res. */
	struct cond		*po_cond;
	size_t			 po_ncond;
};

struct cedar_policyset {
	struct arena		 ps_arena;
	const char		*ps_file;
	struct policy		*ps_pol;
	size_t			 ps_n;
};

static struct expr *
node(struct parser *p, enum op op, unsigned line, unsigned col)
{
	struct expr	*x;

	if ((x = arena_alloc(p->p_ar, sizeof(*x))) == NULL)
		return perr(p, line, col, "out of memory");
	memset(x, 0, sizeof(*x));
	x->x_op = op;
	x->x_line = line;
	x->x_col = col;
	x->x_depth = 1;
	return x;
}

/* a node over its children: the depth bound keeps evaluation's stack small */
static struct expr *
node_depth(struct parser *p, struct expr *x, const struct expr *child)
{
	if (child->x_depth + 1 > x->x_depth)
		x->x_depth = child->x_depth + 1;
	if (x->x_depth > CEDAR_DEPTH_MAX)
		return perr(p, x->x_line, x->x_col,
		    "expression nested deeper than %d", CEDAR_DEPTH_MAX);
	return x;
}

static struct expr	*parse_expr(struct parser *);

/* a growing array of expressions in the arena */
struct xlist {
	const struct expr	**xl_v;
	size_t			  xl_n;
	size_t			  xl_cap;
};

static int
xlist_add(struct parser *p, struct xlist *l, const struct expr *x)
{
	const struct expr	**v;
	size_t			  cap;

	if (l->xl_n == l->xl_cap) {
		cap = l->xl_cap == 0 ? 4 : l->xl_cap * 2;
		if ((v = arena_array(p->p_ar, cap, sizeof(*v))) == NULL) {
			perr_tok(p, "out of memory");
			return -1;
		}
		if (l->xl_n > 0)
			memcpy(v, l->xl_v, l->xl_n * sizeof(*v));
		l->xl_v = v;
		l->xl_cap = cap;
	}
	l->xl_v[l->xl_n++] = x;
	return 0;
}

/* Path '::' STR, the first identifier being the current token */
static int
parse_entity(struct parser *p, struct cedar_uid *u)
{
	const char		*start;
	struct cedar_str	*seg;
	size_t			 nseg;

	start = p->p_tok.t_p;
	for (;;) {
		if (p->p_tok.t_t != T_IDENT) {
			perr_unexpected(p, "an entity type");
			return -1;
		}
		if (tok_reserved(&p->p_tok) || tok_var(&p->p_tok) >= 0) {
			perr_tok(p, "'%.*s' can't name an entity type",
			    (int)p->p_tok.t_len, p->p_tok.t_p);
			return -1;
		}
		u->cu_type.cs_ptr = start;
		u->cu_type.cs_len = (size_t)(p->p_tok.t_p + p->p_tok.t_len -
		    start);
		lex_next(p);
		if (expect(p, T_COLONS, "'::'") == -1)
			return -1;
		if (p->p_tok.t_t == T_STR)
			break;
	}
	if (arena_str(p->p_ar, u->cu_type.cs_ptr, u->cu_type.cs_len,
	    &u->cu_type) == -1 || str_decode(p, 0, &seg, &nseg) == -1) {
		perr_tok(p, "out of memory");
		return -1;
	}
	u->cu_id = seg[0];
	lex_next(p);
	return 0;
}

static int
int_literal(struct parser *p, int neg, int64_t *out)
{
	uint64_t	lim;

	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (p->p_tok.t_big || p->p_tok.t_int > lim) {
		perr_tok(p, "integer literal out of range");
		return -1;
	}
	*out = neg ? (int64_t)(0 - p->p_tok.t_int) : (int64_t)p->p_tok.t_int;
	return 0;
}

static struct expr *
parse_lit(struct parser *p, const struct cv *v, unsigned line, unsigned col)
{
	struct expr	*x;

	if ((x = node(p, E_LIT, line, col)) == NULL)
		return NULL;
	x->x_lit = v;
	return x;
}

static struct expr *
parse_primary(struct parser *p)
{
	const struct token	*t = &p->p_tok;
	struct expr		*x, *e;
	struct cv		*v;
	struct xlist		 l;
	unsigned		 line, col;
	int			 var;

	line = t->t_line;
	col = t->t_col;
	switch (t->t_t) {
	case T_INT:
		if ((v = arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return perr_tok(p, "out of memory");
		v->cv_t = CV_LONG;
		if (int_literal(p, 0, &v->cv_u.l) == -1)
			return NULL;
		lex_next(p);
		return parse_lit(p, v, line, col);
	case T_STR:
		if ((v = arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return perr_tok(p, "out of memory");
		v->cv_t = CV_STRING;
		{
			struct cedar_str	*seg;
			size_t			 nseg;

			if (str_decode(p, 0, &seg, &nseg) == -1)
				return NULL;
			v->cv_u.s = seg[0];
		}
		lex_next(p);
		return parse_lit(p, v, line, col);
	case T_LPAREN:
		lex_next(p);
		if ((x = parse_expr(p)) == NULL ||
		    expect(p, T_RPAREN, "')'") == -1)
			return NULL;
		return x;
	case T_LBRACK:
		lex_next(p);
		if ((x = node(p, E_SET, line, col)) == NULL)
			return NULL;
		memset(&l, 0, sizeof(l));
		if (t->t_t != T_RBRACK) {
			for (;;) {
				if ((e = parse_expr(p)) == NULL ||
				    xlist_add(p, &l, e) == -1 ||
				    node_depth(p, x, e) == NULL)
					return NULL;
				if (t->t_t != T_COMMA)
					break;
				lex_next(p);
			}
		}
		if (expect(p, T_RBRACK, "',' or ']'") == -1)
			return NULL;
		x->x_v = l.xl_v;
		x->x_n = l.xl_n;
		return x;
	case T_IDENT:
		if (tok_is(t, "true") || tok_is(t, "false")) {
			x = parse_lit(p, CV_BOOLEAN(tok_is(t, "true")),
			    line, col);
			lex_next(p);
			return x;
		}
		if ((var = tok_var(t)) >= 0 &&
		    lex_peek(p)->t_t != T_COLONS) {
			if ((x = node(p, E_VAR, line, col)) == NULL)
				return NULL;
			x->x_var = var;
			lex_next(p);
			return x;
		}
		if (tok_reserved(t))
			return perr_unexpected(p, "an expression");
		if (lex_peek(p)->t_t == T_LPAREN)
			return perr_tok(p, "extension functions are not "
			    "supported");
		if (lex_peek(p)->t_t != T_COLONS)
			return perr_tok(p, "unknown name '%.*s'",
			    (int)t->t_len, t->t_p);
		if ((v = arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return perr_tok(p, "out of memory");
		v->cv_t = CV_ENTITY;
		if (parse_entity(p, &v->cv_u.e) == -1)
			return NULL;
		return parse_lit(p, v, line, col);
	default:
		return perr_unexpected(p, "an expression");
	}
}

static const struct {
	const char	*m_name;
	enum op		 m_op;
	size_t		 m_nargs;
} methods[] = {
	{ "contains", E_CONTAINS, 1 },
	{ "containsAll", E_CONTAINSALL, 1 },
	{ "containsAny", E_CONTAINSANY, 1 },
	{ "isEmpty", E_ISEMPTY, 0 }
};

/* Primary { '.' IDENT [ '(' args ')' ] | '[' STR ']' } */
static struct expr *
parse_member(struct parser *p, struct expr *x)
{
	const struct token	*t = &p->p_tok;
	struct expr		*e, *arg;
	struct cedar_str	*seg;
	size_t			 nseg, i, nargs;
	unsigned		 line, col;

	if (x == NULL && (x = parse_primary(p)) == NULL)
		return NULL;
	for (;;) {
		line = t->t_line;
		col = t->t_col;
		if (t->t_t == T_LBRACK) {
			lex_next(p);
			if (t->t_t != T_STR)
				return perr_unexpected(p, "a string index");
			if ((e = node(p, E_ATTR, line, col)) == NULL ||
			    str_decode(p, 0, &seg, &nseg) == -1)
				return NULL;
			e->x_key = seg[0];
			lex_next(p);
			if (expect(p, T_RBRACK, "']'") == -1)
				return NULL;
		} else if (t->t_t == T_DOT) {
			lex_next(p);
			if (t->t_t != T_IDENT || tok_reserved(t))
				return perr_tok(p, "expected an attribute "
				    "name, found '%.*s'", (int)t->t_len,
				    t->t_p);
			if (lex_peek(p)->t_t != T_LPAREN) {
				if ((e = node(p, E_ATTR, line, col)) == NULL ||
				    arena_str(p->p_ar, t->t_p, t->t_len,
				    &e->x_key) == -1)
					return perr_tok(p, "out of memory");
				lex_next(p);
			} else {
				for (i = 0; i < sizeof(methods) /
				    sizeof(methods[0]); i++)
					if (tok_is(t, methods[i].m_name))
						break;
				if (i == sizeof(methods) / sizeof(methods[0]))
					return perr_tok(p, "method '%.*s' is "
					    "not supported", (int)t->t_len,
					    t->t_p);
				if ((e = node(p, methods[i].m_op, line,
				    col)) == NULL)
					return NULL;
				lex_next(p);
				lex_next(p);
				nargs = 0;
				if (t->t_t != T_RPAREN) {
					for (;;) {
						if ((arg = parse_expr(p)) ==
						    NULL)
							return NULL;
						if (nargs++ == 0) {
							e->x_b = arg;
							if (node_depth(p, e,
							    arg) == NULL)
								return NULL;
						}
						if (t->t_t != T_COMMA)
							break;
						lex_next(p);
					}
				}
				if (expect(p, T_RPAREN, "')'") == -1)
					return NULL;
				if (nargs != methods[i].m_nargs)
					return perr(p, line, col, "%s takes "
					    "%zu argument(s)",
					    methods[i].m_name,
					    methods[i].m_nargs);
			}
		} else
			return x;
		e->x_a = x;
		if (node_depth(p, e, x) == NULL)
			return NULL;
		x = e;
	}
}

/* '!'{0,4} Member, or '-' INT { Access } */
static struct expr *
parse_unary(struct parser *p)
{
	const struct token	*t = &p->p_tok;
	struct expr		*x, *n;
	struct cv		*v;
	unsigned		 line[4], col[4];
	int			 nots, i;

	if (t->t_t == T_MINUS) {
		line[0] = t->t_line;
		col[0] = t->t_col;
		lex_next(p);
		if (t->t_t != T_INT)
			return perr_tok(p, "arithmetic (+ - *) is not "
			    "supported");
		if ((v = arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return perr_tok(p, "out of memory");
		v->cv_t = CV_LONG;
		/*
		 * Cedar folds - into a bare literal only: -1.a is -(1.a),
		 * so 1 must be a Long there; an error at run time either way
		 */
		if (int_literal(p, lex_peek(p)->t_t != T_DOT &&
		    lex_peek(p)->t_t != T_LBRACK, &v->cv_u.l) == -1)
			return NULL;
		lex_next(p);
		if ((x = parse_lit(p, v, line[0], col[0])) == NULL)
			return NULL;
		return parse_member(p, x);
	}
	for (nots = 0; t->t_t == T_NOT; nots++) {
		if (nots == 4)
			return perr_tok(p, "more than four '!' in a row");
		line[nots] = t->t_line;
		col[nots] = t->t_col;
		lex_next(p);
	}
	if (t->t_t == T_MINUS)
		return perr_tok(p, "'-' after '!' is not supported");
	if ((x = parse_member(p, NULL)) == NULL)
		return NULL;
	for (i = nots - 1; i >= 0; i--) {
		if ((n = node(p, E_NOT, line[i], col[i])) == NULL)
			return NULL;
		n->x_a = x;
		if (node_depth(p, n, x) == NULL)
			return NULL;
		x = n;
	}
	return x;
}

static int
tok_relop(const struct token *t)
{
	switch (t->t_t) {
	case T_EQ: return E_EQ;
	case T_NE: return E_NE;
	case T_LT: return E_LT;
	case T_LE: return E_LE;
	case T_GT: return E_GT;
	case T_GE: return E_GE;
	default:
		break;
	}
	if (tok_is(t, "in"))
		return E_IN;
	if (tok_is(t, "has"))
		return E_HAS;
	if (tok_is(t, "like"))
		return E_LIKE;
	if (tok_is(t, "is"))
		return -2;
	return -1;
}

static struct expr *
parse_relation(struct parser *p)
{
	const struct token	*t = &p->p_tok;
	struct expr		*l, *r, *x;
	struct cedar_str	*seg;
	size_t			 nseg;
	int			 op;

	if ((l = parse_unary(p)) == NULL)
		return NULL;
	if (t->t_t == T_ARITH || t->t_t == T_MINUS)
		return perr_unexpected(p, "an operator");
	if ((op = tok_relop(t)) == -1)
		return l;
	if (op == -2)
		return perr_unexpected(p, "an operator");
	if ((x = node(p, op, t->t_line, t->t_col)) == NULL)
		return NULL;
	lex_next(p);
	x->x_a = l;
	if (op == E_HAS) {
		if (t->t_t == T_STR) {
			if (str_decode(p, 0, &seg, &nseg) == -1)
				return NULL;
			x->x_key = seg[0];
		} else if (t->t_t == T_IDENT && !tok_reserved(t)) {
			if (arena_str(p->p_ar, t->t_p, t->t_len,
			    &x->x_key) == -1)
				return perr_tok(p, "out of memory");
		} else
			return perr_unexpected(p, "an attribute name");
		lex_next(p);
		if (t->t_t == T_DOT)
			return perr_tok(p, "has with a path (a.b) is not "
			    "supported");
	} else if (op == E_LIKE) {
		if (t->t_t != T_STR)
			return perr_unexpected(p, "a pattern string");
		if (str_decode(p, 1, &x->x_seg, &x->x_nseg) == -1)
			return NULL;
		lex_next(p);
	} else {
		if ((r = parse_unary(p)) == NULL)
			return NULL;
		x->x_b = r;
		if (node_depth(p, x, r) == NULL)
			return NULL;
	}
	if (node_depth(p, x, l) == NULL)
		return NULL;
	if (t->t_t == T_ARITH || t->t_t == T_MINUS)
		return perr_unexpected(p, "an operator");
	if (tok_relop(t) != -1)
		return perr_tok(p, "comparisons don't chain: use "
		    "parentheses");
	return x;
}

/* And ::= Relation { '&&' Relation }, Or likewise: n-ary nodes */
static struct expr *
parse_chain(struct parser *p, int or)
{
	const struct token	*t = &p->p_tok;
	struct expr		*x, *e;
	struct xlist		 l;
	unsigned		 line, col;

	line = t->t_line;
	col = t->t_col;
	if ((e = or ? parse_chain(p, 0) : parse_relation(p)) == NULL)
		return NULL;
	if (t->t_t != (or ? T_OR : T_AND))
		return e;
	if ((x = node(p, or ? E_OR : E_AND, line, col)) == NULL)
		return NULL;
	memset(&l, 0, sizeof(l));
	for (;;) {
		if (xlist_add(p, &l, e) == -1 || node_depth(p, x, e) == NULL)
			return NULL;
		if (t->t_t != (or ? T_OR : T_AND))
			break;
		lex_next(p);
		if ((e = or ? parse_chain(p, 0) : parse_relation(p)) == NULL)
			return NULL;
	}
	x->x_v = l.xl_v;
	x->x_n = l.xl_n;
	return x;
}

static struct expr *
parse_expr(struct parser *p)
{
	struct expr	*x;

	if (++p->p_depth > CEDAR_DEPTH_MAX)
		return perr_tok(p, "expression nested deeper than %d",
		    CEDAR_DEPTH_MAX);
	if (tok_is(&p->p_tok, "if"))
		return perr_tok(p, "if-then-else is not supported");
	x = parse_chain(p, 1);
	p->p_depth--;
	return x;
}

static int
parse_scope(struct parser *p, int which, struct scope *sc)
{
	static const char *const names[] = {
		"principal", "action", "resource"
	};
	const struct token	*t = &p->p_tok;
	struct cedar_uid	 u, *uv;
	size_t			 n, cap;

	memset(sc, 0, sizeof(*sc));
	if (!tok_is(t, names[which])) {
		perr_unexpected(p, names[which]);
		return -1;
	}
	lex_next(p);
	if (t->t_t == T_EQ)
		sc->sc_op = SC_EQ;
	else if (tok_is(t, "in"))
		sc->sc_op = SC_IN;
	else if (tok_is(t, "is")) {
		perr_tok(p, "the is operator is not supported");
		return -1;
	} else
		return 0;
	lex_next(p);
	if (t->t_t == T_QUESTION) {
		perr_unexpected(p, "an entity");
		return -1;
	}
	n = 0;
	cap = 1;
	if ((uv = arena_array(p->p_ar, cap, sizeof(*uv))) == NULL) {
		perr_tok(p, "out of memory");
		return -1;
	}
	if (t->t_t == T_LBRACK && sc->sc_op == SC_IN && which == 1) {
		lex_next(p);
		while (t->t_t != T_RBRACK) {
			if (n > 0 && expect(p, T_COMMA, "',' or ']'") == -1)
				return -1;
			if (parse_entity(p, &u) == -1)
				return -1;
			if (n == cap) {
				struct cedar_uid	*nv;

				cap *= 2;
				if ((nv = arena_array(p->p_ar, cap,
				    sizeof(*nv))) == NULL) {
					perr_tok(p, "out of memory");
					return -1;
				}
				memcpy(nv, uv, n * sizeof(*nv));
				uv = nv;
			}
			uv[n++] = u;
		}
		lex_next(p);
	} else {
		if (t->t_t == T_LBRACK) {
			perr_tok(p, "only action can be 'in' a list");
			return -1;
		}
		if (parse_entity(p, &uv[0]) == -1)
			return -1;
		n = 1;
	}
	sc->sc_uids = uv;
	sc->sc_n = n;
	return 0;
}

/* Cedar wants the action scope's entities of type Action (or NS::Action) */
static int
action_type_ok(const struct cedar_uid *u)
{
	const struct cedar_str	*t = &u->cu_type;

	return (t->cs_len == 6 && memcmp(t->cs_ptr, "Action", 6) == 0) ||
	    (t->cs_len > 8 && memcmp(t->cs_ptr + t->cs_len - 8, "::Action",
	    8) == 0);
}

static int
parse_policy(struct parser *p, struct policy *po)
{
	const struct token	*t = &p->p_tok;
	struct cedar_str	 ann[16];
	struct cond		*cv;
	size_t			 nann, i, cap;
	int			 w;

	memset(po, 0, sizeof(*po));
	for (nann = 0; t->t_t == T_AT; nann++) {
		lex_next(p);
		if (t->t_t != T_IDENT) {
			perr_unexpected(p, "an annotation name");
			return -1;
		}
		if (nann == sizeof(ann) / sizeof(ann[0])) {
			perr_tok(p, "too many annotations");
			return -1;
		}
		ann[nann].cs_ptr = t->t_p;
		ann[nann].cs_len = t->t_len;
		for (i = 0; i < nann; i++)
			if (str_eq(&ann[i], &ann[nann])) {
				perr_tok(p, "duplicate annotation @%.*s",
				    (int)t->t_len, t->t_p);
				return -1;
			}
		lex_next(p);
		if (t->t_t == T_LPAREN) {
			lex_next(p);
			if (t->t_t != T_STR) {
				perr_unexpected(p, "a string");
				return -1;
			}
			{
				struct cedar_str	*seg;
				size_t			 nseg;

				if (str_decode(p, 0, &seg, &nseg) == -1)
					return -1;
			}
			lex_next(p);
			if (expect(p, T_RPAREN, "')'") == -1)
				return -1;
		}
	}
	po->po_line = t->t_line;
	po->po_col = t->t_col;
	if (tok_is(t, "permit"))
		po->po_forbid = 0;
	else if (tok_is(t, "forbid"))
		po->po_forbid = 1;
	else {
		perr_unexpected(p, "permit or forbid");
		return -1;
	}
	lex_next(p);
	if (expect(p, T_LPAREN, "'('") == -1 ||
	    parse_scope(p, 0, &po->po_scope[0]) == -1 ||
	    expect(p, T_COMMA, "','") == -1 ||
	    parse_scope(p, 1, &po->po_scope[1]) == -1 ||
	    expect(p, T_COMMA, "','") == -1 ||
	    parse_scope(p, 2, &po->po_scope[2]) == -1 ||
	    expect(p, T_RPAREN, "')'") == -1)
		return -1;
	for (i = 0; i < po->po_scope[1].sc_n; i++)
		if (!action_type_ok(&po->po_scope[1].sc_uids[i])) {
			perr(p, po->po_line, po->po_col, "the action scope "
			    "names entities of type Action");
			return -1;
		}
	cap = 0;
	cv = NULL;
	while ((w = tok_is(t, "when")) || tok_is(t, "unless")) {
		if (po->po_ncond == cap) {
			struct cond	*nc;

			cap = cap == 0 ? 2 : cap * 2;
			if ((nc = arena_array(p->p_ar, cap, sizeof(*nc))) ==
			    NULL) {
				perr_tok(p, "out of memory");
				return -1;
			}
			if (po->po_ncond > 0)
				memcpy(nc, cv, po->po_ncond * sizeof(*nc));
			cv = nc;
		}
		lex_next(p);
		if (expect(p, T_LBRACE, "'{'") == -1)
			return -1;
		if (t->t_t == T_RBRACE) {
			perr_tok(p, "empty condition");
			return -1;
		}
		cv[po->po_ncond].co_unless = !w;
		if ((cv[po->po_ncond].co_x = parse_expr(p)) == NULL ||
		    expect(p, T_RBRACE, "'}'") == -1)
			return -1;
		po->po_ncond++;
	}
	po->po_cond = cv;
	return expect(p, T_SEMI, "when, unless or ';'");
}

/* the text must be UTF-8 (Cedar's is): strings then are too */
static size_t
utf8_bad(const unsigned char *s, size_t len)
{
	size_t		i, n, k;
	uint32_t	c;

	for (i = 0; i < len; i += n) {
		if (s[i] < 0x80) {
			n = 1;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			n = 2;
			c = s[i] & 0x1f;
		} else if ((s[i] & 0xf0) == 0xe0) {
			n = 3;
			c = s[i] & 0x0f;
		} else if ((s[i] & 0xf8) == 0xf0) {
			n = 4;
			c = s[i] & 0x07;
		} else
			return i;
		if (len - i < n)
			return i;
		for (k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			c = c << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
		    (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
		    (c >= 0xd800 && c <= 0xdfff))
			return i;
	}
	return len;
}

struct cedar_policyset *
cedar_parse(const char *file, const char *text, size_t len, char *err,
    size_t errsz)
{
	struct cedar_policyset	*ps;
	struct parser		 p;
	struct policy		*pv;
	size_t			 cap, bad, i;

	if (err != NULL && errsz > 0)
		err[0] = '\0';
	if ((ps = calloc(1, sizeof(*ps))) == NULL) {
		json_errf(err, errsz, "%s: out of memory", file);
		return NULL;
	}
	memset(&p, 0, sizeof(p));
	p.p_file = file;
	p.p_text = text;
	p.p_len = len;
	p.p_line = 1;
	p.p_col = 1;
	p.p_ar = &ps->ps_arena;
	p.p_err = err;
	p.p_errsz = errsz;
	{
		struct cedar_str	 f;

		if (arena_str(&ps->ps_arena, file, strlen(file), &f) == -1) {
			perr(&p, 1, 1, "out of memory");
			goto fail;
		}
		ps->ps_file = f.cs_ptr;
	}
	if (len > CEDAR_TEXT_MAX) {
		perr(&p, 1, 1, "policies longer than %d bytes",
		    CEDAR_TEXT_MAX);
		goto fail;
	}
	if ((bad = utf8_bad((const unsigned char *)text, len)) < len) {
		lex_adv(&p, bad);
		perr(&p, p.p_line, p.p_col, "invalid UTF-8");
		goto fail;
	}
	for (i = 0; i < len; i++)
		if (text[i] == '\0') {
			p.p_pos = 0;
			lex_adv(&p, i);
			perr(&p, p.p_line, p.p_col, "NUL in the policy text");
			goto fail;
		}
	lex_next(&p);
	cap = 0;
	while (p.p_tok.t_t != T_EOF) {
		if (ps->ps_n == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			if ((pv = arena_array(&ps->ps_arena, cap,
			    sizeof(*pv))) == NULL) {
				perr_tok(&p, "out of memory");
				goto fail;
			}
			if (ps->ps_n > 0)
				memcpy(pv, ps->ps_pol,
				    ps->ps_n * sizeof(*pv));
			ps->ps_pol = pv;
		}
		if (parse_policy(&p, &ps->ps_pol[ps->ps_n]) == -1)
			goto fail;
		ps->ps_n++;
	}
	return ps;
fail:
	if (!p.p_failed)
		perr(&p, p.p_tok.t_line, p.p_tok.t_col, "syntax error");
	cedar_policyset_free(ps);
	return NULL;
}

void
cedar_policyset_free(struct cedar_policyset *ps)
{
	if (ps == NULL)
		return;
	arena_free(&ps->ps_arena);
	free(ps);
}

size_t
cedar_policyset_len(const struct cedar_policyset *ps)
{
	return ps->ps_n;
}

struct check {
	const struct cedar_policyset	 *ck_ps;
	const char *const		 *ck_actions;
	char				 *ck_err;
	size_t				  ck_errsz;
};

static int
check_err(struct check *ck, unsigned line, unsigned col, const char *fmt,
    ...)
{
	va_list	ap;
	int	n;

	n = snprintf(ck->ck_err, ck->ck_errsz, "%s:%u:%u: ",
	    ck->ck_ps->ps_file, line, col);
	if (n >= 0 && (size_t)n < ck->ck_errsz) {
		va_start(ap, fmt);
		vsnprintf(ck->ck_err + n, ck->ck_errsz - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
check_action(struct check *ck, const struct cedar_uid *u, unsigned line,
    unsigned col)
{
	size_t	i;

	if (!action_type_ok(u))
		return 0;
	for (i = 0; ck->ck_actions[i] != NULL; i++)
		if (strlen(ck->ck_actions[i]) == u->cu_id.cs_len &&
		    memcmp(ck->ck_actions[i], u->cu_id.cs_ptr,
		    u->cu_id.cs_len) == 0)
			return 0;
	return check_err(ck, line, col, "unknown action %.*s::\"%.*s\"",
	    (int)u->cu_type.cs_len, u->cu_type.cs_ptr, (int)u->cu_id.cs_len,
	    u->cu_id.cs_ptr);
}

/* a literal that can never be an entity */
static int
check_not_entity(const struct expr *x)
{
	return x->x_op == E_LIT && x->x_lit->cv_t != CV_ENTITY;
}

/* recursion as deep as the tree: CEDAR_DEPTH_MAX */
static int
check_expr(struct check *ck, const struct expr *x)
{
	size_t	i;

	if (x->x_op == E_LIT && x->x_lit->cv_t == CV_ENTITY &&
	    check_action(ck, &x->x_lit->cv_u.e, x->x_line, x->x_col) == -1)
		return -1;
	if (x->x_op == E_IN) {
		if (check_not_entity(x->x_b))
			return check_err(ck, x->x_line, x->x_col, "'in' "
			    "wants entities on its right");
		if (x->x_b->x_op == E_SET)
			for (i = 0; i < x->x_b->x_n; i++)
				if (check_not_entity(x->x_b->x_v[i]))
					return check_err(ck, x->x_line,
					    x->x_col, "'in' wants entities "
					    "on its right");
	}
	if ((x->x_a != NULL && check_expr(ck, x->x_a) == -1) ||
	    (x->x_b != NULL && check_expr(ck, x->x_b) == -1))
		return -1;
	for (i = 0; i < x->x_n; i++)
		if (check_expr(ck, x->x_v[i]) == -1)
			return -1;
	return 0;
}

int
cedar_policyset_check(const struct cedar_policyset *ps,
    const char *const *actions, char *err, size_t errsz)
{
	struct check		 ck;
	const struct policy	*po;
	size_t			 i, k;

	ck.ck_ps = ps;
	ck.ck_actions = actions;
	ck.ck_err = err;
	ck.ck_errsz = errsz;
	for (i = 0; i < ps->ps_n; i++) {
		po = &ps->ps_pol[i];
		for (k = 0; k < po->po_scope[1].sc_n; k++)
			if (check_action(&ck, &po->po_scope[1].sc_uids[k],
			    po->po_line, po->po_col) == -1)
				return -1;
		for (k = 0; k < po->po_ncond; k++)
			if (check_expr(&ck, po->po_cond[k].co_x) == -1)
				return -1;
	}
	return 0;
}

/* evaluation */

struct eval {
	struct arena			*ev_ar;
	const struct cedar_entities	*ev_ents;
	const struct cv			*ev_var[4];
	long				 ev_fuel;
	char				 ev_err[CEDAR_ERRLEN];
};

static const struct cv *
ev_err(struct eval *ev, const struct expr *x, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	n = snprintf(ev->ev_err, sizeof(ev->ev_err), "%u:%u: ", x->x_line,
	    x->x_col);
	if (n < 0 || (size_t)n >= sizeof(ev->ev_err))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(ev->ev_err + n, sizeof(ev->ev_err) - n, fmt, ap);
	va_end(ap);
	return NULL;
}

static const struct cv *
ev_type(struct eval *ev, const struct expr *x, const char *want,
    const struct cv *got)
{
	return ev_err(ev, x, "type error: expected %s, got %s", want,
	    cv_names[got->cv_t]);
}

/* a set of UIDs in the arena, for walking the hierarchy once per node */
struct uidset {
	const struct cedar_uid	**us_v;
	size_t			  us_cap;
	size_t			  us_n;
};

static int
uidset_add(struct arena *ar, struct uidset *s, const struct cedar_uid *u)
{
	const struct cedar_uid	**v;
	size_t			  i, cap;

	if ((s->us_n + 1) * 2 > s->us_cap) {
		cap = s->us_cap == 0 ? 16 : s->us_cap * 2;
		if ((v = arena_array(ar, cap, sizeof(*v))) == NULL)
			return -1;
		memset(v, 0, cap * sizeof(*v));
		for (i = 0; i < s->us_cap; i++)
			if (s->us_v[i] != NULL) {
				size_t	j;

				for (j = uid_hash(s->us_v[i]) & (cap - 1);
				    v[j] != NULL; j = (j + 1) & (cap - 1))
					;
				v[j] = s->us_v[i];
			}
		s->us_v = v;
		s->us_cap = cap;
	}
	for (i = uid_hash(u) & (s->us_cap - 1); s->us_v[i] != NULL;
	    i = (i + 1) & (s->us_cap - 1))
		if (uid_eq(s->us_v[i], u))
			return 0;
	s->us_v[i] = u;
	s->us_n++;
	return 1;
}

/*
 * 1 if a is b or a descendant of it through the parent links of the
 * store (followed from each entity found; cycles end at seen UIDs).
 */
static int
ev_in(struct eval *ev, const struct cedar_uid *a, const struct cedar_uid *b)
{
	struct uidset		 seen;
	const struct cedar_uid	**queue;
	const struct ent	*e;
	size_t			 head, tail, cap, i;
	int			 r;

	if (uid_eq(a, b))
		return 1;
	memset(&seen, 0, sizeof(seen));
	cap = 16;
	if ((queue = arena_array(ev->ev_ar, cap, sizeof(*queue))) == NULL)
		return -1;
	head = tail = 0;
	queue[tail++] = a;
	if (uidset_add(ev->ev_ar, &seen, a) == -1)
		return -1;
	while (head < tail) {
		if (--ev->ev_fuel < 0)
			return -1;
		if ((e = ents_find(ev->ev_ents, queue[head++])) == NULL)
			continue;
		for (i = 0; i < e->en_nparents; i++) {
			if (uid_eq(&e->en_parents[i], b))
				return 1;
			if ((r = uidset_add(ev->ev_ar, &seen,
			    &e->en_parents[i])) == -1)
				return -1;
			if (r == 0)
				continue;
			if (tail == cap) {
				const struct cedar_uid	**nq;

				cap *= 2;
				if ((nq = arena_array(ev->ev_ar, cap,
				    sizeof(*nq))) == NULL)
					return -1;
				memcpy(nq, queue, tail * sizeof(*nq));
				queue = nq;
			}
			queue[tail++] = &e->en_parents[i];
		}
	}
	return 0;
}

/* the whole string against seg[0] * seg[1] * ... seg[n-1] */
static int
like_match(const struct cedar_str *s, const struct cedar_str *seg,
    size_t nseg, long *fuel)
{
	const char	*p, *end, *f;
	size_t		 i;

	if (nseg == 1)
		return str_eq(s, &seg[0]);
	p = s->cs_ptr;
	end = s->cs_ptr + s->cs_len;
	if ((size_t)(end - p) < seg[0].cs_len + seg[nseg - 1].cs_len ||
	    memcmp(p, seg[0].cs_ptr, seg[0].cs_len) != 0 ||
	    memcmp(end - seg[nseg - 1].cs_len, seg[nseg - 1].cs_ptr,
	    seg[nseg - 1].cs_len) != 0)
		return 0;
	p += seg[0].cs_len;
	end -= seg[nseg - 1].cs_len;
	/* the leftmost fit of each middle segment is never worse */
	for (i = 1; i + 1 < nseg; i++) {
		if (seg[i].cs_len == 0)
			continue;
		for (f = p; f + seg[i].cs_len <= end; f++) {
			*fuel -= (long)seg[i].cs_len;
			if (*fuel < 0)
				return 0;
			if (memcmp(f, seg[i].cs_ptr, seg[i].cs_len) == 0)
				break;
		}
		if (f + seg[i].cs_len > end)
			return 0;
		p = f + seg[i].cs_len;
	}
	return 1;
}

static const struct cv	*eval(struct eval *, const struct expr *);

static const struct cv *
ev_attr(struct eval *ev, const struct expr *x, const struct cv *v, int has)
{
	const struct ent	*e;
	const struct cv		*r;

	if (v->cv_t == CV_ENTITY) {
		if ((e = ents_find(ev->ev_ents, &v->cv_u.e)) == NULL) {
			if (has)
				return &cv_false;
			return ev_err(ev, x, "entity %.*s::\"%.*s\" does not "
			    "exist", (int)v->cv_u.e.cu_type.cs_len,
			    v->cv_u.e.cu_type.cs_ptr,
			    (int)v->cv_u.e.cu_id.cs_len,
			    v->cv_u.e.cu_id.cs_ptr);
		}
		r = rec_get(e->en_attrs, &x->x_key);
	} else if (v->cv_t == CV_RECORD)
		r = rec_get(v, &x->x_key);
	else
		return ev_type(ev, x, "entity or record", v);
	if (has)
		return CV_BOOLEAN(r != NULL);
	if (r == NULL)
		return ev_err(ev, x, "no attribute '%.*s'",
		    (int)x->x_key.cs_len, x->x_key.cs_ptr);
	return r;
}

static const struct cv *
ev_in_op(struct eval *ev, const struct expr *x, const struct cv *l,
    const struct cv *r)
{
	size_t	i;
	int	found, m;

	if (l->cv_t != CV_ENTITY)
		return ev_type(ev, x, "entity", l);
	if (r->cv_t == CV_ENTITY) {
		if ((m = ev_in(ev, &l->cv_u.e, &r->cv_u.e)) == -1)
			return ev_err(ev, x, "evaluation limit reached");
		return CV_BOOLEAN(m);
	}
	if (r->cv_t != CV_SET)
		return ev_type(ev, x, "set or entity", r);
	/* every element is checked before any answer, as Cedar does */
	for (i = 0; i < r->cv_u.set.n; i++)
		if (r->cv_u.set.v[i]->cv_t != CV_ENTITY)
			return ev_type(ev, x, "entity", r->cv_u.set.v[i]);
	found = 0;
	for (i = 0; i < r->cv_u.set.n && !found; i++) {
		if ((m = ev_in(ev, &l->cv_u.e,
		    &r->cv_u.set.v[i]->cv_u.e)) == -1)
			return ev_err(ev, x, "evaluation limit reached");
		found = m;
	}
	return CV_BOOLEAN(found);
}

static const struct cv *
eval(struct eval *ev, const struct expr *x)
{
	const struct cv	*l, *r;
	struct cv	*s;
	size_t		 i;
	int		 b;

	if (--ev->ev_fuel < 0)
		return ev_err(ev, x, "evaluation limit reached");
	switch (x->x_op) {
	case E_LIT:
		return x->x_lit;
	case E_VAR:
		return ev->ev_var[x->x_var];
	case E_AND:
	case E_OR:
		for (i = 0; i < x->x_n; i++) {
			if ((l = eval(ev, x->x_v[i])) == NULL)
				return NULL;
			if (l->cv_t != CV_BOOL)
				return ev_type(ev, x->x_v[i], "bool", l);
			if (l->cv_u.b == (x->x_op == E_OR))
				return l;
		}
		return CV_BOOLEAN(x->x_op == E_AND);
	case E_NOT:
		if ((l = eval(ev, x->x_a)) == NULL)
			return NULL;
		if (l->cv_t != CV_BOOL)
			return ev_type(ev, x, "bool", l);
		return CV_BOOLEAN(!l->cv_u.b);
	case E_HAS:
	case E_ATTR:
		if ((l = eval(ev, x->x_a)) == NULL)
			return NULL;
		return ev_attr(ev, x, l, x->x_op == E_HAS);
	case E_LIKE:
		if ((l = eval(ev, x->x_a)) == NULL)
			return NULL;
		if (l->cv_t != CV_STRING)
			return ev_type(ev, x, "string", l);
		b = like_match(&l->cv_u.s, x->x_seg, x->x_nseg, &ev->ev_fuel);
		if (ev->ev_fuel < 0)
			return ev_err(ev, x, "evaluation limit reached");
		return CV_BOOLEAN(b);
	case E_ISEMPTY:
		if ((l = eval(ev, x->x_a)) == NULL)
			return NULL;
		if (l->cv_t != CV_SET)
			return ev_type(ev, x, "set", l);
		return CV_BOOLEAN(l->cv_u.set.n == 0);
	case E_SET:
		if ((s = arena_alloc(ev->ev_ar, sizeof(*s))) == NULL ||
		    (s->cv_u.set.v = arena_array(ev->ev_ar, x->x_n + 1,
		    sizeof(struct cv *))) == NULL)
			return ev_err(ev, x, "out of memory");
		s->cv_t = CV_SET;
		s->cv_u.set.n = x->x_n;
		for (i = 0; i < x->x_n; i++)
			if ((s->cv_u.set.v[i] = eval(ev, x->x_v[i])) == NULL)
				return NULL;
		return s;
	default:
		break;
	}
	/* the binary operators: both operands, left first */
	if ((l = eval(ev, x->x_a)) == NULL || (r = eval(ev, x->x_b)) == NULL)
		return NULL;
	switch (x->x_op) {
	case E_EQ:
	case E_NE:
		b = cv_eq(l, r, &ev->ev_fuel);
		if (ev->ev_fuel < 0)
			return ev_err(ev, x, "evaluation limit reached");
		return CV_BOOLEAN(x->x_op == E_EQ ? b : !b);
	case E_LT:
	case E_LE:
	case E_GT:
	case E_GE:
		if (l->cv_t != CV_LONG)
			return ev_type(ev, x, "long", l);
		if (r->cv_t != CV_LONG)
			return ev_type(ev, x, "long", r);
		switch (x->x_op) {
		case E_LT:
			return CV_BOOLEAN(l->cv_u.l < r->cv_u.l);
		case E_LE:
			return CV_BOOLEAN(l->cv_u.l <= r->cv_u.l);
		case E_GT:
			return CV_BOOLEAN(l->cv_u.l > r->cv_u.l);
		default:
			return CV_BOOLEAN(l->cv_u.l >= r->cv_u.l);
		}
	case E_IN:
		return ev_in_op(ev, x, l, r);
	case E_CONTAINS:
		if (l->cv_t != CV_SET)
			return ev_type(ev, x, "set", l);
		b = set_has(l, r, &ev->ev_fuel);
		break;
	case E_CONTAINSALL:
	case E_CONTAINSANY:
		if (l->cv_t != CV_SET)
			return ev_type(ev, x, "set", l);
		if (r->cv_t != CV_SET)
			return ev_type(ev, x, "set", r);
		b = x->x_op == E_CONTAINSALL;
		for (i = 0; i < r->cv_u.set.n; i++)
			if (set_has(l, r->cv_u.set.v[i], &ev->ev_fuel) != b) {
				b = !b;
				break;
			}
		break;
	default:
		return ev_err(ev, x, "internal error: operator %d", x->x_op);
	}
	if (ev->ev_fuel < 0)
		return ev_err(ev, x, "evaluation limit reached");
	return CV_BOOLEAN(b);
}

static int
scope_match(struct eval *ev, const struct scope *sc, const struct cv *v)
{
	size_t	i;
	int	m;

	switch (sc->sc_op) {
	case SC_ANY:
		return 1;
	case SC_EQ:
		return uid_eq(&v->cv_u.e, &sc->sc_uids[0]);
	case SC_IN:
		for (i = 0; i < sc->sc_n; i++)
			if ((m = ev_in(ev, &v->cv_u.e, &sc->sc_uids[i])) != 0)
				return m;
		return 0;
	}
	return 0;
}

/* CEDAR_SATISFIED, CEDAR_NOT_SATISFIED, or CEDAR_ERROR with ev_err set */
static enum cedar_result
policy_eval(struct eval *ev, const struct policy *po)
{
	const struct cv	*v;
	size_t		 i;
	int		 m;

	for (i = 0; i < 3; i++) {
		if ((m = scope_match(ev, &po->po_scope[i], ev->ev_var[i])) ==
		    -1) {
			snprintf(ev->ev_err, sizeof(ev->ev_err), "%u:%u: "
			    "evaluation limit reached", po->po_line,
			    po->po_col);
			return CEDAR_ERROR;
		}
		if (m == 0)
			return CEDAR_NOT_SATISFIED;
	}
	for (i = 0; i < po->po_ncond; i++) {
		if ((v = eval(ev, po->po_cond[i].co_x)) == NULL)
			return CEDAR_ERROR;
		if (v->cv_t != CV_BOOL) {
			ev_type(ev, po->po_cond[i].co_x, "bool", v);
			return CEDAR_ERROR;
		}
		if (v->cv_u.b == po->po_cond[i].co_unless)
			return CEDAR_NOT_SATISFIED;
	}
	return CEDAR_SATISFIED;
}

static const struct cv *
entity_value(struct arena *ar, const struct cedar_uid *u)
{
	struct cv	*v;

	if ((v = arena_alloc(ar, sizeof(*v))) == NULL)
		return NULL;
	v->cv_t = CV_ENTITY;
	v->cv_u.e = *u;
	return v;
}

/* cedar_authorize() with the context as a value already, if ctx */
static int
authorize_ctx(const struct cedar_policyset *ps,
    const struct cedar_entities *ents, const struct cedar_request *req,
    const struct cv *ctx, struct cedar_response *resp)
{
	struct arena		 ar;
	struct eval		*ev;
	enum cedar_result	 r;
	size_t			 i;
	int			 permit, forbid, rc;

	memset(&ar, 0, sizeof(ar));
	resp->cr_decision = CEDAR_DENY;
	resp->cr_nerrors = 0;
	resp->cr_error_policy = 0;
	resp->cr_error[0] = '\0';
	rc = -1;
	if ((ev = arena_alloc(&ar, sizeof(*ev))) == NULL) {
		snprintf(resp->cr_error, sizeof(resp->cr_error),
		    "out of memory");
		goto out;
	}
	memset(ev, 0, sizeof(*ev));
	ev->ev_ar = &ar;
	ev->ev_ents = ents;
	ev->ev_fuel = CEDAR_FUEL;
	if ((ev->ev_var[0] = entity_value(&ar, &req->cr_principal)) == NULL ||
	    (ev->ev_var[1] = entity_value(&ar, &req->cr_action)) == NULL ||
	    (ev->ev_var[2] = entity_value(&ar, &req->cr_resource)) == NULL) {
		snprintf(resp->cr_error, sizeof(resp->cr_error),
		    "out of memory");
		goto out;
	}
	ev->ev_var[3] = ctx != NULL ? ctx : &cv_empty;
	if (ctx == NULL && req->cr_context != NULL) {
		if (!json_is_object(req->cr_context)) {
			snprintf(resp->cr_error, sizeof(resp->cr_error),
			    "context: not an object");
			goto out;
		}
		if ((ev->ev_var[3] = rec_from_json(&ar, req->cr_context, 0,
		    resp->cr_error, sizeof(resp->cr_error))) == NULL)
			goto out;
	}
	permit = forbid = 0;
	for (i = 0; i < ps->ps_n; i++) {
		ev->ev_err[0] = '\0';
		r = policy_eval(ev, &ps->ps_pol[i]);
		if (resp->cr_results != NULL)
			resp->cr_results[i] = r;
		if (r == CEDAR_ERROR) {
			if (resp->cr_nerrors++ == 0) {
				resp->cr_error_policy = i;
				snprintf(resp->cr_error,
				    sizeof(resp->cr_error), "%s",
				    ev->ev_err);
			}
		} else if (r == CEDAR_SATISFIED) {
			if (ps->ps_pol[i].po_forbid)
				forbid = 1;
			else
				permit = 1;
		}
	}
	resp->cr_decision = permit && !forbid ? CEDAR_ALLOW : CEDAR_DENY;
	rc = 0;
out:
	arena_free(&ar);
	return rc;
}

int
cedar_authorize(const struct cedar_policyset *ps,
    const struct cedar_entities *ents, const struct cedar_request *req,
    struct cedar_response *resp)
{
	return authorize_ctx(ps, ents, req, NULL, resp);
}

/*
 * Requests in the reference's entity model (docs/ARCHITECTURE.md,
 * "Authorization"): JSON from a token or a client becomes Cedar values
 * without Cedar's JSON escapes (a claim {"__entity": ..} stays a
 * record), integral numbers become Longs, others a decimal when one
 * holds them exactly, and what Cedar can't hold (null, other numbers,
 * nesting past CLAIM_DEPTH_MAX) is left out.
 */

#define CLAIM_DEPTH_MAX	10

static const struct cv cv_drop = { .cv_t = CV_BOOL };
#define CV_DROP	(&cv_drop)

/* a number as Long or exact decimal, or CV_DROP */
static const struct cv *
cv_from_number(struct arena *ar, const json_t *j)
{
	struct cv	*v;
	char		 buf[64];
	double		 d;
	int64_t		 dec;

	if ((v = arena_alloc(ar, sizeof(*v))) == NULL)
		return NULL;
	if (json_is_integer(j)) {
		v->cv_t = CV_LONG;
		v->cv_u.l = json_integer_value(j);
		return v;
	}
	d = json_real_value(j);
	if (!(d >= -9.2e18 && d <= 9.2e18))
		return CV_DROP;
	if (d == (double)(int64_t)d) {
		v->cv_t = CV_LONG;
		v->cv_u.l = (int64_t)d;
		return v;
	}
	/* the shortest text that reads back as d, if it has <= 4 decimals */
	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d || strchr(buf, 'e') != NULL ||
	    decimal_parse(buf, strlen(buf), &dec) == -1)
		return CV_DROP;
	v->cv_t = CV_DECIMAL;
	v->cv_u.l = dec;
	return v;
}

/* a record being built: of entries with equal keys, the last one wins */
struct rb_entry {
	struct cedar_str	 re_k;
	const struct cv		*re_v;
	size_t			 re_seq;
};

struct rec_build {
	struct rb_entry		*rb_e;
	size_t			 rb_n;
	size_t			 rb_cap;
};

static int
rb_add(struct arena *ar, struct rec_build *rb, const char *prefix,
    const char *key, size_t klen, const struct cv *v)
{
	struct rb_entry		*e;
	size_t			 cap, plen;
	char			*k;

	if (v == CV_DROP)
		return 0;
	if (rb->rb_n == rb->rb_cap) {
		cap = rb->rb_cap == 0 ? 16 : rb->rb_cap * 2;
		if ((e = arena_array(ar, cap, sizeof(*e))) == NULL)
			return -1;
		if (rb->rb_n > 0)
			memcpy(e, rb->rb_e, rb->rb_n * sizeof(*e));
		rb->rb_e = e;
		rb->rb_cap = cap;
	}
	plen = strlen(prefix);
	if (klen > ARENA_LIMIT || (k = arena_alloc(ar, plen + klen + 1)) ==
	    NULL)
		return -1;
	memcpy(k, prefix, plen);
	memcpy(k + plen, key, klen);
	k[plen + klen] = '\0';
	rb->rb_e[rb->rb_n].re_k.cs_ptr = k;
	rb->rb_e[rb->rb_n].re_k.cs_len = plen + klen;
	rb->rb_e[rb->rb_n].re_v = v;
	rb->rb_e[rb->rb_n].re_seq = rb->rb_n;
	rb->rb_n++;
	return 0;
}

static int
rb_cmp(const void *a, const void *b)
{
	const struct rb_entry	*x = a, *y = b;
	int			 c;

	if ((c = str_cmp(&x->re_k, &y->re_k)) != 0)
		return c;
	return x->re_seq < y->re_seq ? -1 : x->re_seq > y->re_seq;
}

static const struct cv *
rb_finish(struct arena *ar, struct rec_build *rb)
{
	struct rb_entry		*e;
	struct cv		*r;
	size_t			 i, n;

	if ((r = arena_alloc(ar, sizeof(*r))) == NULL)
		return NULL;
	e = rb->rb_e;
	if (rb->rb_n > 0)
		qsort(e, rb->rb_n, sizeof(*e), rb_cmp);
	r->cv_t = CV_RECORD;
	if ((r->cv_u.rec.k = arena_array(ar, rb->rb_n + 1,
	    sizeof(struct cedar_str))) == NULL ||
	    (r->cv_u.rec.v = arena_array(ar, rb->rb_n + 1,
	    sizeof(struct cv *))) == NULL)
		return NULL;
	n = 0;
	for (i = 0; i < rb->rb_n; i++) {
		if (n > 0 && str_eq(&r->cv_u.rec.k[n - 1], &e[i].re_k))
			n--;
		r->cv_u.rec.k[n] = e[i].re_k;
		r->cv_u.rec.v[n] = e[i].re_v;
		n++;
	}
	r->cv_u.rec.n = n;
	return r;
}

/* plain JSON (no escapes) as a Cedar value, CV_DROP, or NULL: no memory */
static const struct cv *
cv_from_plain(struct arena *ar, const json_t *j, int depth)
{
	struct rec_build	 rb;
	struct cv		*v;
	const struct cv		*x;
	const char		*k;
	size_t			 klen, i, n;
	json_t			*m;

	if (depth > CLAIM_DEPTH_MAX)
		return CV_DROP;
	switch (json_typeof(j)) {
	case JSON_TRUE:
		return &cv_true;
	case JSON_FALSE:
		return &cv_false;
	case JSON_INTEGER:
	case JSON_REAL:
		return cv_from_number(ar, j);
	case JSON_STRING:
		if ((v = arena_alloc(ar, sizeof(*v))) == NULL ||
		    arena_str(ar, json_string_value(j), json_string_length(j),
		    &v->cv_u.s) == -1)
			return NULL;
		v->cv_t = CV_STRING;
		return v;
	case JSON_ARRAY:
		if ((v = arena_alloc(ar, sizeof(*v))) == NULL ||
		    (v->cv_u.set.v = arena_array(ar, json_array_size(j) + 1,
		    sizeof(struct cv *))) == NULL)
			return NULL;
		v->cv_t = CV_SET;
		for (i = n = 0; i < json_array_size(j); i++) {
			if ((x = cv_from_plain(ar, json_array_get(j, i),
			    depth + 1)) == NULL)
				return NULL;
			if (x != CV_DROP)
				v->cv_u.set.v[n++] = x;
		}
		v->cv_u.set.n = n;
		return v;
	case JSON_OBJECT:
		memset(&rb, 0, sizeof(rb));
		json_object_keylen_foreach((json_t *)j, k, klen, m) {
			if ((x = cv_from_plain(ar, m, depth + 1)) == NULL ||
			    rb_add(ar, &rb, "", k, klen, x) == -1)
				return NULL;
		}
		return rb_finish(ar, &rb);
	default:
		return CV_DROP;
	}
}

struct cedar_principal {
	struct cedar_entities	*cp_ents;	/* principal over the store */
	struct cedar_uid	 cp_uid;
	const struct cv		*cp_claims;	/* claim_*, for contexts */
};

/* a claim by flat name, else by dotted path through objects */
static const json_t *
claim_get(const json_t *claims, const char *name)
{
	const json_t	*j;
	const char	*dot;

	if ((j = json_object_get(claims, name)) != NULL)
		return j;
	for (j = claims; (dot = strchr(name, '.')) != NULL; name = dot + 1)
		if ((j = json_object_getn(j, name, (size_t)(dot - name))) ==
		    NULL || !json_is_object(j))
			return NULL;
	return j != claims ? json_object_get(j, name) : NULL;
}

static int
uids_add(struct arena *ar, struct cedar_uid **v, size_t *n, size_t *cap,
    const struct cedar_uid *u)
{
	struct cedar_uid	*nv;
	size_t			 i;

	for (i = 0; i < *n; i++)
		if (uid_eq(&(*v)[i], u))
			return 0;
	if (*n == *cap) {
		*cap = *cap == 0 ? 8 : *cap * 2;
		if ((nv = arena_array(ar, *cap, sizeof(*nv))) == NULL)
			return -1;
		if (*n > 0)
			memcpy(nv, *v, *n * sizeof(*nv));
		*v = nv;
	}
	(*v)[(*n)++] = *u;
	return 0;
}

/* the strings of an array claim as parents of type */
static int
groups_add(struct arena *ar, const json_t *a, const char *type,
    struct cedar_uid **v, size_t *n, size_t *cap)
{
	struct cedar_uid	 u;
	size_t			 i;
	json_t			*g;

	json_array_foreach(a, i, g) {
		if (!json_is_string(g))
			continue;
		if (arena_str(ar, type, strlen(type), &u.cu_type) == -1 ||
		    arena_str(ar, json_string_value(g), json_string_length(g),
		    &u.cu_id) == -1 || uids_add(ar, v, n, cap, &u) == -1)
			return -1;
	}
	return 0;
}

/*
 * An entity of the request layer: the store's entity of that UID, if
 * any, gives its attributes first (the request's win) and its parents
 * (joined with the request's), so entitiesJson can add owner or tenant
 * attributes and hierarchy to a Client or a Tool without being hidden.
 */
static int
layer_put(struct cedar_entities *layer, const struct cedar_uid *uid,
    struct rec_build *rb, struct cedar_uid *parents, size_t nparents,
    size_t cap)
{
	struct arena		*ar = &layer->ce_arena;
	struct rec_build	 all;
	const struct ent	*old;
	const struct cv		*r;
	struct ent		*e;
	size_t			 i;

	memset(&all, 0, sizeof(all));
	if ((old = ents_find(layer->ce_base, uid)) != NULL) {
		r = old->en_attrs;
		for (i = 0; i < r->cv_u.rec.n; i++)
			if (rb_add(ar, &all, "", r->cv_u.rec.k[i].cs_ptr,
			    r->cv_u.rec.k[i].cs_len, r->cv_u.rec.v[i]) == -1)
				return -1;
		for (i = 0; i < old->en_nparents; i++)
			if (uids_add(ar, &parents, &nparents, &cap,
			    &old->en_parents[i]) == -1)
				return -1;
	}
	for (i = 0; i < rb->rb_n; i++)
		if (rb_add(ar, &all, "", rb->rb_e[i].re_k.cs_ptr,
		    rb->rb_e[i].re_k.cs_len, rb->rb_e[i].re_v) == -1)
			return -1;
	if ((e = arena_alloc(ar, sizeof(*e))) == NULL ||
	    (e->en_attrs = rb_finish(ar, &all)) == NULL ||
	    ents_grow(layer, layer->ce_n + 1) == -1)
		return -1;
	e->en_uid = *uid;
	e->en_hash = uid_hash(uid);
	e->en_parents = parents;
	e->en_nparents = nparents;
	ents_put(layer, e);
	return 0;
}

struct cedar_principal *
cedar_principal_new(const struct cedar_authz_conf *conf,
    const struct cedar_entities *store, const json_t *claims, char *err,
    size_t errsz)
{
	static const char *const fallback[] = {
		"groups", "roles", "cognito:groups"
	};
	struct cedar_principal	*cp;
	struct arena		*ar;
	struct rec_build	 rb;
	struct cedar_uid	*parents;
	const struct cv		*v;
	const json_t		*sub, *g;
	const char		*k, *type;
	size_t			 klen, i, np, cap;
	json_t			*m;

	if (!json_is_object(claims) ||
	    !json_is_string(sub = json_object_get(claims, "sub")) ||
	    json_string_length(sub) == 0) {
		json_errf(err, errsz, "no subject (sub) to authorize");
		return NULL;
	}
	if ((cp = calloc(1, sizeof(*cp))) == NULL ||
	    (cp->cp_ents = cedar_entities_new(store)) == NULL)
		goto oom;
	ar = &cp->cp_ents->ce_arena;
	if (arena_str(ar, "Client", 6, &cp->cp_uid.cu_type) == -1 ||
	    arena_str(ar, json_string_value(sub), json_string_length(sub),
	    &cp->cp_uid.cu_id) == -1)
		goto oom;
	/* every claim as claim_<name>, but the session-internal tsid */
	memset(&rb, 0, sizeof(rb));
	json_object_keylen_foreach((json_t *)claims, k, klen, m) {
		if (klen == 4 && memcmp(k, "tsid", 4) == 0)
			continue;
		if ((v = cv_from_plain(ar, m, 1)) == NULL ||
		    rb_add(ar, &rb, "claim_", k, klen, v) == -1)
			goto oom;
	}
	if ((cp->cp_claims = rb_finish(ar, &rb)) == NULL)
		goto oom;
	/* parents: the group claim (or the usual names), the role claim */
	type = conf->ca_group_type != NULL ? conf->ca_group_type : "THVGroup";
	parents = NULL;
	np = cap = 0;
	g = NULL;
	if (conf->ca_group_claim != NULL)
		g = claim_get(claims, conf->ca_group_claim);
	for (i = 0; (g == NULL || !json_is_array(g)) &&
	    i < sizeof(fallback) / sizeof(fallback[0]); i++)
		g = json_object_get(claims, fallback[i]);
	if (json_is_array(g) &&
	    groups_add(ar, g, type, &parents, &np, &cap) == -1)
		goto oom;
	if (conf->ca_role_claim != NULL &&
	    json_is_array(g = claim_get(claims, conf->ca_role_claim)) &&
	    groups_add(ar, g, type, &parents, &np, &cap) == -1)
		goto oom;
	if (layer_put(cp->cp_ents, &cp->cp_uid, &rb, parents, np, cap) == -1)
		goto oom;
	return cp;
oom:
	json_errf(err, errsz, "out of memory");
	cedar_principal_free(cp);
	return NULL;
}

void
cedar_principal_free(struct cedar_principal *cp)
{
	if (cp == NULL)
		return;
	cedar_entities_free(cp->cp_ents);
	free(cp);
}

static const struct {
	const char	*k_type;
	const char	*k_action;
	const char	*k_operation;
	const char	*k_feature;
} kinds[] = {
	[CEDAR_TOOL] = { "Tool", "call_tool", "call", "tool" },
	[CEDAR_PROMPT] = { "Prompt", "get_prompt", "get", "prompt" },
	[CEDAR_RESOURCE] = { "Resource", "read_resource", "read", "resource" },
};

static const char *const hints[] = {
	"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"
};

/* a string as a Cedar value in ar */
static const struct cv *
cv_string(struct arena *ar, const char *s)
{
	struct cv	*v;

	if ((v = arena_alloc(ar, sizeof(*v))) == NULL ||
	    arena_str(ar, s, strlen(s), &v->cv_u.s) == -1)
		return NULL;
	v->cv_t = CV_STRING;
	return v;
}

/* arg_<k> for scalars, arg_<k>_present for objects and arrays, into rb */
static int
args_add(struct arena *ar, struct rec_build *rb, const json_t *args)
{
	const struct cv	*v;
	const char	*k;
	char		*pk;
	size_t		 klen;
	json_t		*m;

	json_object_keylen_foreach((json_t *)args, k, klen, m) {
		if (json_is_object(m) || json_is_array(m))
			continue;
		if ((v = cv_from_plain(ar, m, CLAIM_DEPTH_MAX)) == NULL ||
		    rb_add(ar, rb, "arg_", k, klen, v) == -1)
			return -1;
	}
	/* after the scalars: an argument named x_present can't deny x */
	json_object_keylen_foreach((json_t *)args, k, klen, m) {
		if (!json_is_object(m) && !json_is_array(m))
			continue;
		if ((pk = arena_alloc(ar, klen + 9)) == NULL)
			return -1;
		memcpy(pk, k, klen);
		memcpy(pk + klen, "_present", 8);
		if (rb_add(ar, rb, "arg_", pk, klen + 8, &cv_true) == -1)
			return -1;
	}
	return 0;
}

struct cedar_access {
	struct cedar_entities	*ca_ents;	/* resource, action */
	struct cedar_request	 ca_req;
	const struct cv		*ca_context;
};

struct cedar_access *
cedar_access_new(const struct cedar_authz_conf *conf,
    const struct cedar_principal *cp, const struct cedar_call *call,
    char *err, size_t errsz)
{
	struct cedar_access	*ca;
	struct arena		*ar;
	struct rec_build	 rb, ctx, act;
	struct cedar_uid	*parents, mcp;
	const json_t		*h;
	size_t			 i, np, cap;

	if ((unsigned)call->cc_kind >= sizeof(kinds) / sizeof(kinds[0]) ||
	    call->cc_name == NULL) {
		json_errf(err, errsz, "no such kind of call");
		return NULL;
	}
	if ((ca = calloc(1, sizeof(*ca))) == NULL ||
	    (ca->ca_ents = cedar_entities_new(cp->cp_ents)) == NULL)
		goto oom;
	ar = &ca->ca_ents->ce_arena;
	ca->ca_req.cr_principal = cp->cp_uid;
	if (arena_str(ar, "Action", 6, &ca->ca_req.cr_action.cu_type) == -1 ||
	    arena_str(ar, kinds[call->cc_kind].k_action,
	    strlen(kinds[call->cc_kind].k_action),
	    &ca->ca_req.cr_action.cu_id) == -1 ||
	    arena_str(ar, kinds[call->cc_kind].k_type,
	    strlen(kinds[call->cc_kind].k_type),
	    &ca->ca_req.cr_resource.cu_type) == -1 ||
	    arena_str(ar, call->cc_name, strlen(call->cc_name),
	    &ca->ca_req.cr_resource.cu_id) == -1)
		goto oom;
	/* the resource: the view's hints, then what they can't override */
	memset(&rb, 0, sizeof(rb));
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (json_is_boolean(h = json_object_get(call->cc_annotations,
		    hints[i])) && rb_add(ar, &rb, "", hints[i],
		    strlen(hints[i]), CV_BOOLEAN(json_is_true(h))) == -1)
			goto oom;
	if (rb_add(ar, &rb, "", "name", 4, cv_string(ar, call->cc_name)) ==
	    -1 || rb_add(ar, &rb, "", "operation", 9,
	    cv_string(ar, kinds[call->cc_kind].k_operation)) == -1 ||
	    rb_add(ar, &rb, "", "feature", 7,
	    cv_string(ar, kinds[call->cc_kind].k_feature)) == -1 ||
	    (call->cc_kind == CEDAR_RESOURCE && rb_add(ar, &rb, "", "uri", 3,
	    cv_string(ar, call->cc_name)) == -1))
		goto oom;
	for (i = 0; i < rb.rb_n; i++)
		if (rb.rb_e[i].re_v == NULL)
			goto oom;
	memset(&ctx, 0, sizeof(ctx));
	if (json_is_object(call->cc_arguments) &&
	    (args_add(ar, &rb, call->cc_arguments) == -1 ||
	    args_add(ar, &ctx, call->cc_arguments) == -1))
		goto oom;
	parents = NULL;
	np = cap = 0;
	if (conf->ca_server != NULL) {
		if (arena_str(ar, "MCP", 3, &mcp.cu_type) == -1 ||
		    arena_str(ar, conf->ca_server, strlen(conf->ca_server),
		    &mcp.cu_id) == -1 ||
		    uids_add(ar, &parents, &np, &cap, &mcp) == -1)
			goto oom;
	}
	if (layer_put(ca->ca_ents, &ca->ca_req.cr_resource, &rb, parents, np,
	    cap) == -1)
		goto oom;
	/* the action, with its operation, and the store's hierarchy */
	memset(&act, 0, sizeof(act));
	if (rb_add(ar, &act, "", "operation", 9,
	    cv_string(ar, kinds[call->cc_kind].k_operation)) == -1 ||
	    act.rb_e[0].re_v == NULL ||
	    layer_put(ca->ca_ents, &ca->ca_req.cr_action, &act, NULL, 0,
	    0) == -1)
		goto oom;
	/* the context: claim_* and arg_* */
	for (i = 0; i < cp->cp_claims->cv_u.rec.n; i++)
		if (rb_add(ar, &ctx, "", cp->cp_claims->cv_u.rec.k[i].cs_ptr,
		    cp->cp_claims->cv_u.rec.k[i].cs_len,
		    cp->cp_claims->cv_u.rec.v[i]) == -1)
			goto oom;
	if ((ca->ca_context = rb_finish(ar, &ctx)) == NULL)
		goto oom;
	return ca;
oom:
	json_errf(err, errsz, "out of memory");
	cedar_access_free(ca);
	return NULL;
}

void
cedar_access_free(struct cedar_access *ca)
{
	if (ca == NULL)
		return;
	cedar_entities_free(ca->ca_ents);
	free(ca);
}

int
cedar_access_authorize(const struct cedar_policyset *ps,
    const struct cedar_access *ca, struct cedar_response *resp)
{
	return authorize_ctx(ps, ca->ca_ents, &ca->ca_req, ca->ca_context,
	    resp);
}
