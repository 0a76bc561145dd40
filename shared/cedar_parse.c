/*
 * The Cedar subset's lexer and parser (shared/cedar.h): text into the
 * trees of shared/cedar_int.h, with file:line:col errors.
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

struct parser;
static void	*perr(struct parser *, unsigned, unsigned, const char *, ...)
		    __attribute__((format(printf, 4, 5)));
static void	*perr_tok(struct parser *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

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
	if (cedar_is_ident0(c)) {
		t->t_t = T_IDENT;
		while (n < left && (cedar_is_ident0((unsigned char)s[n]) ||
		    cedar_is_digit(s[n])))
			n++;
	} else if (cedar_is_digit(c)) {
		t->t_t = T_INT;
		for (n = 0; n < left && cedar_is_digit(s[n]); n++) {
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
	if ((out = cedar_arena_alloc(p->p_ar, len + 1)) == NULL ||
	    (sg = cedar_arena_array(p->p_ar, nsg, sizeof(*sg))) == NULL) {
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

static struct expr *
node(struct parser *p, enum op op, unsigned line, unsigned col)
{
	struct expr	*x;

	if ((x = cedar_arena_alloc(p->p_ar, sizeof(*x))) == NULL)
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
		if ((v = cedar_arena_array(p->p_ar, cap, sizeof(*v))) == NULL) {
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
	if (cedar_arena_str(p->p_ar, u->cu_type.cs_ptr, u->cu_type.cs_len,
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
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
			return perr_tok(p, "out of memory");
		v->cv_t = CV_LONG;
		if (int_literal(p, 0, &v->cv_u.l) == -1)
			return NULL;
		lex_next(p);
		return parse_lit(p, v, line, col);
	case T_STR:
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
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
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
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
				    cedar_arena_str(p->p_ar, t->t_p, t->t_len,
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
		if ((v = cedar_arena_alloc(p->p_ar, sizeof(*v))) == NULL)
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
			if (cedar_arena_str(p->p_ar, t->t_p, t->t_len,
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
	if ((uv = cedar_arena_array(p->p_ar, cap, sizeof(*uv))) == NULL) {
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
				if ((nv = cedar_arena_array(p->p_ar, cap,
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
int
cedar_action_type_ok(const struct cedar_uid *u)
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
			if (cedar_str_eq(&ann[i], &ann[nann])) {
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
		if (!cedar_action_type_ok(&po->po_scope[1].sc_uids[i])) {
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
			if ((nc = cedar_arena_array(p->p_ar, cap,
			    sizeof(*nc))) == NULL) {
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
		cedar_json_errf(err, errsz, "%s: out of memory", file);
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

		if (cedar_arena_str(&ps->ps_arena, file, strlen(file),
		    &f) == -1) {
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
			if ((pv = cedar_arena_array(&ps->ps_arena, cap,
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
	if (cedar_args_find(ps) == -1) {
		perr(&p, 1, 1, "out of memory");
		goto fail;
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
	cedar_arena_free(&ps->ps_arena);
	free(ps);
}

size_t
cedar_policyset_len(const struct cedar_policyset *ps)
{
	return ps->ps_n;
}

