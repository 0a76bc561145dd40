/*
 * The Cedar subset's parser of expressions (shared/cedar_lex.h): the
 * when/unless conditions and their operands into the trees of
 * shared/cedar_int.h, nesting bounded by CEDAR_DEPTH_MAX.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "shared/cedar.h"
#include "shared/cedar_int.h"

#include "shared/cedar_lex.h"

static struct expr *
node(struct parser *p, enum op op, unsigned line, unsigned col)
{
	struct expr	*x;

	if ((x = cedar_arena_alloc(p->p_ar, sizeof(*x))) == NULL)
		return cedar_perr(p, line, col, "out of memory");
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
		return cedar_perr(p, x->x_line, x->x_col,
		    "expression nested deeper than %d", CEDAR_DEPTH_MAX);
	return x;
}

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
		if ((v = cedar_arena_array(p->p_ar, cap, sizeof(*v))) == NULL) {
			cedar_perr_tok(p, "out of memory");
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
int
cedar_parse_entity(struct parser *p, struct cedar_uid *u)
{
	const char		*start;
	struct cedar_str	*seg;
	size_t			 nseg;

	start = p->p_tok.t_p;
	for (;;) {
		if (p->p_tok.t_t != T_IDENT) {
			cedar_perr_unexpected(p, "an entity type");
			return -1;
		}
		if (cedar_tok_reserved(&p->p_tok) ||
		    cedar_tok_var(&p->p_tok) >= 0) {
			cedar_perr_tok(p, "'%.*s' can't name an entity type",
			    (int)p->p_tok.t_len, p->p_tok.t_p);
			return -1;
		}
		u->cu_type.cs_ptr = start;
		u->cu_type.cs_len = (size_t)(p->p_tok.t_p + p->p_tok.t_len -
		    start);
		cedar_lex_next(p);
		if (cedar_expect(p, T_COLONS, "'::'") == -1)
			return -1;
		if (p->p_tok.t_t == T_STR)
			break;
	}
	if (cedar_arena_str(p->p_ar, u->cu_type.cs_ptr, u->cu_type.cs_len,
	    &u->cu_type) == -1 || cedar_str_decode(p, 0, &seg, &nseg) == -1) {
		cedar_perr_tok(p, "out of memory");
		return -1;
	}
	u->cu_id = seg[0];
	cedar_lex_next(p);
	return 0;
}

static int
int_literal(struct parser *p, int neg, int64_t *out)
{
	uint64_t	lim;

	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (p->p_tok.t_big || p->p_tok.t_int > lim) {
		cedar_perr_tok(p, "integer literal out of range");
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
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return cedar_perr_tok(p, "out of memory");
		v->cv_t = CV_LONG;
		if (int_literal(p, 0, &v->cv_u.l) == -1)
			return NULL;
		cedar_lex_next(p);
		return parse_lit(p, v, line, col);
	case T_STR:
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return cedar_perr_tok(p, "out of memory");
		v->cv_t = CV_STRING;
		{
			struct cedar_str	*seg;
			size_t			 nseg;

			if (cedar_str_decode(p, 0, &seg, &nseg) == -1)
				return NULL;
			v->cv_u.s = seg[0];
		}
		cedar_lex_next(p);
		return parse_lit(p, v, line, col);
	case T_LPAREN:
		cedar_lex_next(p);
		if ((x = cedar_parse_expr(p)) == NULL ||
		    cedar_expect(p, T_RPAREN, "')'") == -1)
			return NULL;
		return x;
	case T_LBRACK:
		cedar_lex_next(p);
		if ((x = node(p, E_SET, line, col)) == NULL)
			return NULL;
		memset(&l, 0, sizeof(l));
		if (t->t_t != T_RBRACK) {
			for (;;) {
				if ((e = cedar_parse_expr(p)) == NULL ||
				    xlist_add(p, &l, e) == -1 ||
				    node_depth(p, x, e) == NULL)
					return NULL;
				if (t->t_t != T_COMMA)
					break;
				cedar_lex_next(p);
			}
		}
		if (cedar_expect(p, T_RBRACK, "',' or ']'") == -1)
			return NULL;
		x->x_v = l.xl_v;
		x->x_n = l.xl_n;
		return x;
	case T_IDENT:
		if (cedar_tok_is(t, "true") || cedar_tok_is(t, "false")) {
			x = parse_lit(p, CV_BOOLEAN(cedar_tok_is(t, "true")),
			    line, col);
			cedar_lex_next(p);
			return x;
		}
		if ((var = cedar_tok_var(t)) >= 0 &&
		    cedar_lex_peek(p)->t_t != T_COLONS) {
			if ((x = node(p, E_VAR, line, col)) == NULL)
				return NULL;
			x->x_var = var;
			cedar_lex_next(p);
			return x;
		}
		if (cedar_tok_reserved(t))
			return cedar_perr_unexpected(p, "an expression");
		if (cedar_lex_peek(p)->t_t == T_LPAREN)
			return cedar_perr_tok(p, "extension functions are not "
			    "supported");
		if (cedar_lex_peek(p)->t_t != T_COLONS)
			return cedar_perr_tok(p, "unknown name '%.*s'",
			    (int)t->t_len, t->t_p);
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return cedar_perr_tok(p, "out of memory");
		v->cv_t = CV_ENTITY;
		if (cedar_parse_entity(p, &v->cv_u.e) == -1)
			return NULL;
		return parse_lit(p, v, line, col);
	default:
		return cedar_perr_unexpected(p, "an expression");
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
			cedar_lex_next(p);
			if (t->t_t != T_STR)
				return cedar_perr_unexpected(p,
				    "a string index");
			if ((e = node(p, E_ATTR, line, col)) == NULL ||
			    cedar_str_decode(p, 0, &seg, &nseg) == -1)
				return NULL;
			e->x_key = seg[0];
			cedar_lex_next(p);
			if (cedar_expect(p, T_RBRACK, "']'") == -1)
				return NULL;
		} else if (t->t_t == T_DOT) {
			cedar_lex_next(p);
			if (t->t_t != T_IDENT || cedar_tok_reserved(t))
				return cedar_perr_tok(p, "expected an "
				    "attribute name, found '%.*s'",
				    (int)t->t_len, t->t_p);
			if (cedar_lex_peek(p)->t_t != T_LPAREN) {
				if ((e = node(p, E_ATTR, line, col)) == NULL ||
				    cedar_arena_str(p->p_ar, t->t_p, t->t_len,
				    &e->x_key) == -1)
					return cedar_perr_tok(p,
					    "out of memory");
				cedar_lex_next(p);
			} else {
				for (i = 0; i < sizeof(methods) /
				    sizeof(methods[0]); i++)
					if (cedar_tok_is(t, methods[i].m_name))
						break;
				if (i == sizeof(methods) / sizeof(methods[0]))
					return cedar_perr_tok(p, "method "
					    "'%.*s' is not supported",
					    (int)t->t_len, t->t_p);
				if ((e = node(p, methods[i].m_op, line,
				    col)) == NULL)
					return NULL;
				cedar_lex_next(p);
				cedar_lex_next(p);
				nargs = 0;
				if (t->t_t != T_RPAREN) {
					for (;;) {
						arg = cedar_parse_expr(p);
						if (arg == NULL)
							return NULL;
						if (nargs++ == 0) {
							e->x_b = arg;
							if (node_depth(p, e,
							    arg) == NULL)
								return NULL;
						}
						if (t->t_t != T_COMMA)
							break;
						cedar_lex_next(p);
					}
				}
				if (cedar_expect(p, T_RPAREN, "')'") == -1)
					return NULL;
				if (nargs != methods[i].m_nargs)
					return cedar_perr(p, line, col,
					    "%s takes %zu argument(s)",
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
		cedar_lex_next(p);
		if (t->t_t != T_INT)
			return cedar_perr_tok(p, "arithmetic (+ - *) is not "
			    "supported");
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return cedar_perr_tok(p, "out of memory");
		v->cv_t = CV_LONG;
		/*
		 * Cedar folds - into a bare literal only: -1.a is -(1.a),
		 * so 1 must be a Long there; an error at run time either way
		 */
		if (int_literal(p, cedar_lex_peek(p)->t_t != T_DOT &&
		    cedar_lex_peek(p)->t_t != T_LBRACK, &v->cv_u.l) == -1)
			return NULL;
		cedar_lex_next(p);
		if ((x = parse_lit(p, v, line[0], col[0])) == NULL)
			return NULL;
		return parse_member(p, x);
	}
	for (nots = 0; t->t_t == T_NOT; nots++) {
		if (nots == 4)
			return cedar_perr_tok(p, "more than four '!' in a row");
		line[nots] = t->t_line;
		col[nots] = t->t_col;
		cedar_lex_next(p);
	}
	if (t->t_t == T_MINUS)
		return cedar_perr_tok(p, "'-' after '!' is not supported");
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
	if (cedar_tok_is(t, "in"))
		return E_IN;
	if (cedar_tok_is(t, "has"))
		return E_HAS;
	if (cedar_tok_is(t, "like"))
		return E_LIKE;
	if (cedar_tok_is(t, "is"))
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
		return cedar_perr_unexpected(p, "an operator");
	if ((op = tok_relop(t)) == -1)
		return l;
	if (op == -2)
		return cedar_perr_unexpected(p, "an operator");
	if ((x = node(p, op, t->t_line, t->t_col)) == NULL)
		return NULL;
	cedar_lex_next(p);
	x->x_a = l;
	if (op == E_HAS) {
		if (t->t_t == T_STR) {
			if (cedar_str_decode(p, 0, &seg, &nseg) == -1)
				return NULL;
			x->x_key = seg[0];
		} else if (t->t_t == T_IDENT && !cedar_tok_reserved(t)) {
			if (cedar_arena_str(p->p_ar, t->t_p, t->t_len,
			    &x->x_key) == -1)
				return cedar_perr_tok(p, "out of memory");
		} else
			return cedar_perr_unexpected(p, "an attribute name");
		cedar_lex_next(p);
		if (t->t_t == T_DOT)
			return cedar_perr_tok(p, "has with a path (a.b) is not "
			    "supported");
	} else if (op == E_LIKE) {
		if (t->t_t != T_STR)
			return cedar_perr_unexpected(p, "a pattern string");
		if (cedar_str_decode(p, 1, &x->x_seg, &x->x_nseg) == -1)
			return NULL;
		cedar_lex_next(p);
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
		return cedar_perr_unexpected(p, "an operator");
	if (tok_relop(t) != -1)
		return cedar_perr_tok(p, "comparisons don't chain: use "
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
		cedar_lex_next(p);
		if ((e = or ? parse_chain(p, 0) : parse_relation(p)) == NULL)
			return NULL;
	}
	x->x_v = l.xl_v;
	x->x_n = l.xl_n;
	return x;
}

struct expr *
cedar_parse_expr(struct parser *p)
{
	struct expr	*x;

	if (++p->p_depth > CEDAR_DEPTH_MAX)
		return cedar_perr_tok(p, "expression nested deeper than %d",
		    CEDAR_DEPTH_MAX);
	if (cedar_tok_is(&p->p_tok, "if"))
		return cedar_perr_tok(p, "if-then-else is not supported");
	x = parse_chain(p, 1);
	p->p_depth--;
	return x;
}
