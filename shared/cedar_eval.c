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

#include "shared/cedar.h"
#include "shared/cedar_int.h"

struct check;
struct eval;
struct expr;
static int	 check_err(struct check *, unsigned, unsigned, const char *,
		    ...) __attribute__((format(printf, 4, 5)));
static const struct cv *ev_err(struct eval *, const struct expr *,
		    const char *, ...) __attribute__((format(printf, 3, 4)));

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

	if (!cedar_action_type_ok(u))
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
	    cedar_cv_names[got->cv_t]);
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
		if ((v = cedar_arena_array(ar, cap, sizeof(*v))) == NULL)
			return -1;
		memset(v, 0, cap * sizeof(*v));
		for (i = 0; i < s->us_cap; i++)
			if (s->us_v[i] != NULL) {
				size_t	j;

				for (j = cedar_uid_hash(s->us_v[i]) & (cap - 1);
				    v[j] != NULL; j = (j + 1) & (cap - 1))
					;
				v[j] = s->us_v[i];
			}
		s->us_v = v;
		s->us_cap = cap;
	}
	for (i = cedar_uid_hash(u) & (s->us_cap - 1); s->us_v[i] != NULL;
	    i = (i + 1) & (s->us_cap - 1))
		if (cedar_uid_eq(s->us_v[i], u))
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

	if (cedar_uid_eq(a, b))
		return 1;
	memset(&seen, 0, sizeof(seen));
	cap = 16;
	if ((queue = cedar_arena_array(ev->ev_ar, cap, sizeof(*queue))) == NULL)
		return -1;
	head = tail = 0;
	queue[tail++] = a;
	if (uidset_add(ev->ev_ar, &seen, a) == -1)
		return -1;
	while (head < tail) {
		if (--ev->ev_fuel < 0)
			return -1;
		if ((e = cedar_ents_find(ev->ev_ents, queue[head++])) == NULL)
			continue;
		for (i = 0; i < e->en_nparents; i++) {
			if (cedar_uid_eq(&e->en_parents[i], b))
				return 1;
			if ((r = uidset_add(ev->ev_ar, &seen,
			    &e->en_parents[i])) == -1)
				return -1;
			if (r == 0)
				continue;
			if (tail == cap) {
				const struct cedar_uid	**nq;

				cap *= 2;
				if ((nq = cedar_arena_array(ev->ev_ar, cap,
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
		return cedar_str_eq(s, &seg[0]);
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
		if ((e = cedar_ents_find(ev->ev_ents, &v->cv_u.e)) == NULL) {
			if (has)
				return &cedar_cv_false;
			return ev_err(ev, x, "entity %.*s::\"%.*s\" does not "
			    "exist", (int)v->cv_u.e.cu_type.cs_len,
			    v->cv_u.e.cu_type.cs_ptr,
			    (int)v->cv_u.e.cu_id.cs_len,
			    v->cv_u.e.cu_id.cs_ptr);
		}
		r = cedar_rec_get(e->en_attrs, &x->x_key);
	} else if (v->cv_t == CV_RECORD)
		r = cedar_rec_get(v, &x->x_key);
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
		if ((s = cedar_arena_alloc(ev->ev_ar, sizeof(*s))) == NULL ||
		    (s->cv_u.set.v = cedar_arena_array(ev->ev_ar, x->x_n + 1,
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
		b = cedar_cv_eq(l, r, &ev->ev_fuel);
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
		b = cedar_set_has(l, r, &ev->ev_fuel);
		break;
	case E_CONTAINSALL:
	case E_CONTAINSANY:
		if (l->cv_t != CV_SET)
			return ev_type(ev, x, "set", l);
		if (r->cv_t != CV_SET)
			return ev_type(ev, x, "set", r);
		b = x->x_op == E_CONTAINSALL;
		for (i = 0; i < r->cv_u.set.n; i++)
			if (cedar_set_has(l, r->cv_u.set.v[i],
			    &ev->ev_fuel) != b) {
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
		return cedar_uid_eq(&v->cv_u.e, &sc->sc_uids[0]);
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

	if ((v = cedar_arena_alloc(ar, sizeof(*v))) == NULL)
		return NULL;
	v->cv_t = CV_ENTITY;
	v->cv_u.e = *u;
	return v;
}

/* cedar_authorize() with the context as a value already, if ctx */
int
cedar_authorize_ctx(const struct cedar_policyset *ps,
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
	if ((ev = cedar_arena_alloc(&ar, sizeof(*ev))) == NULL) {
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
	ev->ev_var[3] = ctx != NULL ? ctx : &cedar_cv_empty;
	if (ctx == NULL && req->cr_context != NULL) {
		if (!json_is_object(req->cr_context)) {
			snprintf(resp->cr_error, sizeof(resp->cr_error),
			    "context: not an object");
			goto out;
		}
		if ((ev->ev_var[3] = cedar_rec_from_json(&ar, req->cr_context,
		    0, resp->cr_error, sizeof(resp->cr_error))) == NULL)
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
	cedar_arena_free(&ar);
	return rc;
}

int
cedar_authorize(const struct cedar_policyset *ps,
    const struct cedar_entities *ents, const struct cedar_request *req,
    struct cedar_response *resp)
{
	return cedar_authorize_ctx(ps, ents, req, NULL, resp);
}

