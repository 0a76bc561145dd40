/*
 * RFC 6570 URI template matching: is a URI an expansion of a template?
 * It routes resources/read to the backend whose resource template the
 * URI matches (worker/view/core.c).  The template is compiled into a small NFA
 * (Thompson construction) and run over the URI in one pass, so the cost
 * is O(len(uri) * len(program)) whatever the template; no backtracking.
 *
 * What an expression matches (a deliberately narrow reading of the
 * expansions of sections 3.2.2-3.2.9; values are not decoded):
 *   {var}      1+ chars, none of / ? #       (lists: commas inside)
 *   {+var}     1+ chars, anything
 *   {#var}     nothing, or "#" and anything
 *   {.var}     nothing, or "." and chars other than / ? #
 *   {/a,b}     up to one "/segment" per variable (any number if
 *              exploded); segments have no ? #
 *   {;a,b}     ";a" or ";a=value" per variable, in template order, each
 *              optional; values have no / ? # ;
 *   {?a,b}     "?a=v&b=w" in template order, each optional, "=" always
 *              present; values have no # &.   {&a} the same after "&"
 *   exploded named variables (";" "?" "&") accept any key names.
 * Limits: a simple or reserved expression must not be empty (an
 * undefined variable there is not matched); prefix modifiers (":3")
 * are parsed but the length is not checked; literals compare byte for
 * byte (no percent-decoding); a malformed template matches nothing;
 * templates over URITEMPLATE_TMPL_MAX bytes and URIs over
 * URITEMPLATE_URI_MAX bytes match nothing.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uritemplate.h"

enum ut_op {
	UT_CHAR,
	UT_CLASS,
	UT_SPLIT,
	UT_JMP,
	UT_MATCH
};

enum ut_class {
	UT_ANY,		/* anything */
	UT_SEG,		/* not / ? # */
	UT_PARAM,	/* not / ? # ; */
	UT_QUERY,	/* not # & */
	UT_KEY		/* not = / ? # ; & */
};

struct ut_insn {
	unsigned char	in_op;
	unsigned char	in_c;		/* a byte or a ut_class */
	size_t		in_x;		/* next (JMP), first choice (SPLIT) */
	size_t		in_y;		/* second choice (SPLIT) */
};

struct ut_prog {
	struct ut_insn	*pg_insn;
	size_t		 pg_n;
	size_t		 pg_cap;
	int		 pg_err;
};

struct ut_var {
	const char	*va_name;
	size_t		 va_len;
	int		 va_explode;
};

static size_t
ut_emit(struct ut_prog *pg, enum ut_op op, int c, size_t x, size_t y)
{
	struct ut_insn	*p;
	size_t		 cap;

	if (pg->pg_err)
		return 0;
	if (pg->pg_n == pg->pg_cap) {
		cap = pg->pg_cap == 0 ? 64 : pg->pg_cap * 2;
		if ((p = reallocarray(pg->pg_insn, cap, sizeof(*p))) == NULL) {
			pg->pg_err = 1;
			return 0;
		}
		pg->pg_insn = p;
		pg->pg_cap = cap;
	}
	p = &pg->pg_insn[pg->pg_n];
	p->in_op = (unsigned char)op;
	p->in_c = (unsigned char)c;
	p->in_x = x;
	p->in_y = y;
	return pg->pg_n++;
}

static void
ut_patch_y(struct ut_prog *pg, size_t at, size_t y)
{
	if (!pg->pg_err)
		pg->pg_insn[at].in_y = y;
}

static void
ut_patch_x(struct ut_prog *pg, size_t at, size_t x)
{
	if (!pg->pg_err)
		pg->pg_insn[at].in_x = x;
}

static void
ut_lit(struct ut_prog *pg, const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		ut_emit(pg, UT_CHAR, (unsigned char)s[i], 0, 0);
}

/* class+ */
static void
ut_plus(struct ut_prog *pg, enum ut_class c)
{
	size_t	at;

	at = ut_emit(pg, UT_CLASS, c, 0, 0);
	ut_emit(pg, UT_SPLIT, 0, at, at + 2);
}

/* class* */
static void
ut_star(struct ut_prog *pg, enum ut_class c)
{
	size_t	at;

	at = ut_emit(pg, UT_SPLIT, 0, 0, 0);
	ut_patch_x(pg, at, at + 1);
	ut_emit(pg, UT_CLASS, c, 0, 0);
	ut_emit(pg, UT_JMP, 0, at, 0);
	ut_patch_y(pg, at, at + 3);
}

/* opening SPLIT of an optional or repeated block: patch with ut_close */
static size_t
ut_open(struct ut_prog *pg)
{
	size_t	at;

	at = ut_emit(pg, UT_SPLIT, 0, 0, 0);
	ut_patch_x(pg, at, at + 1);
	return at;
}

static void
ut_close(struct ut_prog *pg, size_t at, int repeat)
{
	if (repeat)
		ut_emit(pg, UT_JMP, 0, at, 0);
	ut_patch_y(pg, at, pg->pg_n);
}

/* one named parameter: "name" or "name=value" (';'), "name=value" */
static void
ut_param(struct ut_prog *pg, const struct ut_var *va, int op)
{
	size_t	at;

	if (va->va_explode)
		ut_plus(pg, UT_KEY);
	else
		ut_lit(pg, va->va_name, va->va_len);
	if (op == ';') {
		at = ut_open(pg);
		ut_emit(pg, UT_CHAR, '=', 0, 0);
		ut_star(pg, UT_PARAM);
		ut_close(pg, at, 0);
	} else {
		ut_emit(pg, UT_CHAR, '=', 0, 0);
		ut_star(pg, UT_QUERY);
	}
}

static size_t
ut_query_item(struct ut_prog *pg, const struct ut_var *va, int op, int sep,
    size_t *jmp)
{
	size_t start, at;

	/* sep "name=value", then more "&name=value" if exploded */
	start = ut_open(pg);
	ut_emit(pg, UT_CHAR, sep, 0, 0);
	ut_param(pg, va, op);
	if (va->va_explode) {
		at = ut_open(pg);
		ut_emit(pg, UT_CHAR, '&', 0, 0);
		ut_param(pg, va, op);
		ut_close(pg, at, 1);
	}
	*jmp = ut_emit(pg, UT_JMP, 0, 0, 0);
	return start;
}

/*
 * "?" and "&": each variable optional, in order.  For "?" the first
 * parameter present starts with '?' and the others with '&', so there
 * are two chains: a[] (nothing yet) and b[] (something already).
 */
static void
ut_query(struct ut_prog *pg, const struct ut_var *va, size_t n, int op)
{
	size_t	*a = NULL, *aj = NULL, *b = NULL, *bj = NULL, i, end;

	if ((a = calloc(n + 1, sizeof(*a))) == NULL ||
	    (aj = calloc(n + 1, sizeof(*aj))) == NULL ||
	    (b = calloc(n + 1, sizeof(*b))) == NULL ||
	    (bj = calloc(n + 1, sizeof(*bj))) == NULL) {
		pg->pg_err = 1;
		goto done;
	}
	for (i = 0; i < n; i++) {
		if (op == '?')
			a[i] = ut_query_item(pg, &va[i], op, '?', &aj[i]);
		b[i] = ut_query_item(pg, &va[i], op, '&', &bj[i]);
	}
	if (op == '?')
		a[n] = ut_emit(pg, UT_JMP, 0, 0, 0);
	end = b[n] = pg->pg_n;
	if (op == '?')
		ut_patch_x(pg, a[n], end);
	for (i = 0; i < n; i++) {
		if (op == '?') {
			ut_patch_y(pg, a[i], a[i + 1]);
			ut_patch_x(pg, aj[i], b[i + 1]);
		}
		ut_patch_y(pg, b[i], b[i + 1]);
		ut_patch_x(pg, bj[i], b[i + 1]);
	}
done:
	free(a);
	free(aj);
	free(b);
	free(bj);
}

static void
ut_expr(struct ut_prog *pg, int op, const struct ut_var *va, size_t n)
{
	size_t	i, at;
	int	explode = 0;

	for (i = 0; i < n; i++)
		explode |= va[i].va_explode;
	switch (op) {
	case '\0':
		ut_plus(pg, UT_SEG);
		break;
	case '+':
		ut_plus(pg, UT_ANY);
		break;
	case '#':
	case '.':
		at = ut_open(pg);
		ut_emit(pg, UT_CHAR, op, 0, 0);
		ut_star(pg, op == '#' ? UT_ANY : UT_SEG);
		ut_close(pg, at, 0);
		break;
	case '/':
		/* one segment per variable, any number if exploded */
		for (i = 0; i < (explode ? 1 : n); i++) {
			at = ut_open(pg);
			ut_emit(pg, UT_CHAR, '/', 0, 0);
			ut_star(pg, UT_SEG);
			ut_close(pg, at, explode);
		}
		break;
	case ';':
		for (i = 0; i < n; i++) {
			at = ut_open(pg);
			ut_emit(pg, UT_CHAR, ';', 0, 0);
			ut_param(pg, &va[i], op);
			ut_close(pg, at, va[i].va_explode);
		}
		break;
	default:
		ut_query(pg, va, n, op);
		break;
	}
}

static int
ut_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

static int
ut_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z');
}

/*
 * Parse one varspec at *pp (RFC 6570 2.3, 2.4): varname, then ":N"
 * (1-9999) or "*".  Returns -1 on a malformed spec.
 */
static int
ut_varspec(const char **pp, struct ut_var *va)
{
	const char	*p = *pp;
	int		 digits = 0, dot_ok = 0;

	va->va_name = p;
	va->va_explode = 0;
	for (;;) {
		if (ut_alnum((unsigned char)*p) || *p == '_')
			p++;
		else if (*p == '%' && ut_hex((unsigned char)p[1]) &&
		    ut_hex((unsigned char)p[2]))
			p += 3;
		else if (*p == '.' && dot_ok && (ut_alnum((unsigned char)p[1])
		    || p[1] == '_' || p[1] == '%')) {
			p++;
			dot_ok = 0;
			continue;
		} else
			break;
		dot_ok = 1;
	}
	if (p == va->va_name)
		return -1;
	va->va_len = (size_t)(p - va->va_name);
	if (*p == '*') {
		va->va_explode = 1;
		p++;
	} else if (*p == ':') {
		p++;
		if (*p < '1' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9' && digits < 5) {
			p++;
			digits++;
		}
		if (digits > 4)
			return -1;
	}
	*pp = p;
	return 0;
}

static int
ut_compile(struct ut_prog *pg, const char *t)
{
	struct ut_var	*va = NULL;
	const char	*p = t, *lit;
	size_t		 n, cap = strlen(t) + 1;
	int		 op;

	/* a template of L bytes has fewer than L variables */
	if ((va = calloc(cap, sizeof(*va))) == NULL)
		return -1;
	while (*p != '\0' && !pg->pg_err) {
		if (*p == '}')
			goto fail;
		if (*p != '{') {
			lit = p;
			while (*p != '\0' && *p != '{' && *p != '}')
				p++;
			ut_lit(pg, lit, (size_t)(p - lit));
			continue;
		}
		p++;
		op = '\0';
		if (strchr("+#./;?&", *p) != NULL && *p != '\0')
			op = *p++;
		else if (strchr("=,!@|", *p) != NULL && *p != '\0')
			goto fail;	/* reserved for future extensions */
		for (n = 0;; ) {
			if (n >= cap || ut_varspec(&p, &va[n++]) == -1)
				goto fail;
			if (*p == '}')
				break;
			if (*p++ != ',')
				goto fail;
		}
		p++;
		ut_expr(pg, op, va, n);
	}
	ut_emit(pg, UT_MATCH, 0, 0, 0);
	free(va);
	return pg->pg_err ? -1 : 0;
fail:
	free(va);
	return -1;
}

static int
ut_class_has(int cls, unsigned char c)
{
	switch (cls) {
	case UT_ANY:
		return 1;
	case UT_SEG:
		return c != '/' && c != '?' && c != '#';
	case UT_PARAM:
		return c != '/' && c != '?' && c != '#' && c != ';';
	case UT_QUERY:
		return c != '#' && c != '&';
	default:
		return c != '=' && c != '/' && c != '?' && c != '#' &&
		    c != ';' && c != '&';
	}
}

struct ut_run {
	const struct ut_prog	*ru_pg;
	size_t			*ru_mark;	/* generation per insn */
	size_t			*ru_stack;
	size_t			 ru_gen;
};

/* add pc and everything reachable from it without input to list */
static void
ut_add(struct ut_run *ru, size_t *list, size_t *nlist, size_t pc)
{
	const struct ut_insn	*in;
	size_t			 sp = 0;

	ru->ru_stack[sp++] = pc;
	while (sp > 0) {
		pc = ru->ru_stack[--sp];
		if (ru->ru_mark[pc] == ru->ru_gen)
			continue;
		ru->ru_mark[pc] = ru->ru_gen;
		in = &ru->ru_pg->pg_insn[pc];
		switch (in->in_op) {
		case UT_JMP:
			ru->ru_stack[sp++] = in->in_x;
			break;
		case UT_SPLIT:
			ru->ru_stack[sp++] = in->in_y;
			ru->ru_stack[sp++] = in->in_x;
			break;
		default:
			list[(*nlist)++] = pc;
			break;
		}
	}
}

static int
ut_exec(const struct ut_prog *pg, const char *uri)
{
	struct ut_run	 ru;
	size_t		*cl = NULL, *nl = NULL, *tmp, ncl = 0, nnl, i, n;
	const struct ut_insn *in;
	unsigned char	 c;
	int		 matched = 0;

	n = pg->pg_n;
	memset(&ru, 0, sizeof(ru));
	ru.ru_pg = pg;
	/* each marked insn pushes at most 2: the stack needs 2n + 1 */
	if ((ru.ru_mark = calloc(n, sizeof(*ru.ru_mark))) == NULL ||
	    (ru.ru_stack = calloc(2 * n + 1, sizeof(*ru.ru_stack))) == NULL ||
	    (cl = calloc(n, sizeof(*cl))) == NULL ||
	    (nl = calloc(n, sizeof(*nl))) == NULL)
		goto done;
	ru.ru_gen = 1;
	ut_add(&ru, cl, &ncl, 0);
	for (; *uri != '\0' && ncl > 0; uri++) {
		c = (unsigned char)*uri;
		ru.ru_gen++;
		nnl = 0;
		for (i = 0; i < ncl; i++) {
			in = &pg->pg_insn[cl[i]];
			if ((in->in_op == UT_CHAR && in->in_c == c) ||
			    (in->in_op == UT_CLASS &&
			    ut_class_has(in->in_c, c)))
				ut_add(&ru, nl, &nnl, cl[i] + 1);
		}
		tmp = cl;
		cl = nl;
		nl = tmp;
		ncl = nnl;
	}
	if (*uri == '\0')
		for (i = 0; i < ncl; i++)
			if (pg->pg_insn[cl[i]].in_op == UT_MATCH)
				matched = 1;
done:
	free(ru.ru_mark);
	free(ru.ru_stack);
	free(cl);
	free(nl);
	return matched;
}

int
uritemplate_match(const char *tmpl, const char *uri)
{
	struct ut_prog	pg;
	int		m = 0;

	if (tmpl == NULL || uri == NULL ||
	    strnlen(tmpl, URITEMPLATE_TMPL_MAX + 1) > URITEMPLATE_TMPL_MAX ||
	    strnlen(uri, URITEMPLATE_URI_MAX + 1) > URITEMPLATE_URI_MAX)
		return 0;
	memset(&pg, 0, sizeof(pg));
	if (ut_compile(&pg, tmpl) == 0)
		m = ut_exec(&pg, uri);
	free(pg.pg_insn);
	return m;
}
