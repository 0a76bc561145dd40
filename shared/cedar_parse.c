/*
 * The Cedar subset's parser of policies (shared/cedar.h): text into the
 * policy sets of shared/cedar_int.h, with file:line:col errors; the
 * lexer is cedar_lex.c, expressions cedar_parse_expr.c.
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
	if (!cedar_tok_is(t, names[which])) {
		cedar_perr_unexpected(p, names[which]);
		return -1;
	}
	cedar_lex_next(p);
	if (t->t_t == T_EQ)
		sc->sc_op = SC_EQ;
	else if (cedar_tok_is(t, "in"))
		sc->sc_op = SC_IN;
	else if (cedar_tok_is(t, "is")) {
		cedar_perr_tok(p, "the is operator is not supported");
		return -1;
	} else
		return 0;
	cedar_lex_next(p);
	if (t->t_t == T_QUESTION) {
		cedar_perr_unexpected(p, "an entity");
		return -1;
	}
	n = 0;
	cap = 1;
	if ((uv = cedar_arena_array(p->p_ar, cap, sizeof(*uv))) == NULL) {
		cedar_perr_tok(p, "out of memory");
		return -1;
	}
	if (t->t_t == T_LBRACK && sc->sc_op == SC_IN && which == 1) {
		cedar_lex_next(p);
		while (t->t_t != T_RBRACK) {
			if (n > 0 &&
			    cedar_expect(p, T_COMMA, "',' or ']'") == -1)
				return -1;
			if (cedar_parse_entity(p, &u) == -1)
				return -1;
			if (n == cap) {
				struct cedar_uid	*nv;

				cap *= 2;
				if ((nv = cedar_arena_array(p->p_ar, cap,
				    sizeof(*nv))) == NULL) {
					cedar_perr_tok(p, "out of memory");
					return -1;
				}
				memcpy(nv, uv, n * sizeof(*nv));
				uv = nv;
			}
			uv[n++] = u;
		}
		cedar_lex_next(p);
	} else {
		if (t->t_t == T_LBRACK) {
			cedar_perr_tok(p, "only action can be 'in' a list");
			return -1;
		}
		if (cedar_parse_entity(p, &uv[0]) == -1)
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
		cedar_lex_next(p);
		if (t->t_t != T_IDENT) {
			cedar_perr_unexpected(p, "an annotation name");
			return -1;
		}
		if (nann == sizeof(ann) / sizeof(ann[0])) {
			cedar_perr_tok(p, "too many annotations");
			return -1;
		}
		ann[nann].cs_ptr = t->t_p;
		ann[nann].cs_len = t->t_len;
		for (i = 0; i < nann; i++)
			if (cedar_str_eq(&ann[i], &ann[nann])) {
				cedar_perr_tok(p, "duplicate annotation @%.*s",
				    (int)t->t_len, t->t_p);
				return -1;
			}
		cedar_lex_next(p);
		if (t->t_t == T_LPAREN) {
			cedar_lex_next(p);
			if (t->t_t != T_STR) {
				cedar_perr_unexpected(p, "a string");
				return -1;
			}
			{
				struct cedar_str	*seg;
				size_t			 nseg;

				if (cedar_str_decode(p, 0, &seg, &nseg) == -1)
					return -1;
			}
			cedar_lex_next(p);
			if (cedar_expect(p, T_RPAREN, "')'") == -1)
				return -1;
		}
	}
	po->po_line = t->t_line;
	po->po_col = t->t_col;
	if (cedar_tok_is(t, "permit"))
		po->po_forbid = 0;
	else if (cedar_tok_is(t, "forbid"))
		po->po_forbid = 1;
	else {
		cedar_perr_unexpected(p, "permit or forbid");
		return -1;
	}
	cedar_lex_next(p);
	if (cedar_expect(p, T_LPAREN, "'('") == -1 ||
	    parse_scope(p, 0, &po->po_scope[0]) == -1 ||
	    cedar_expect(p, T_COMMA, "','") == -1 ||
	    parse_scope(p, 1, &po->po_scope[1]) == -1 ||
	    cedar_expect(p, T_COMMA, "','") == -1 ||
	    parse_scope(p, 2, &po->po_scope[2]) == -1 ||
	    cedar_expect(p, T_RPAREN, "')'") == -1)
		return -1;
	for (i = 0; i < po->po_scope[1].sc_n; i++)
		if (!cedar_action_type_ok(&po->po_scope[1].sc_uids[i])) {
			cedar_perr(p, po->po_line, po->po_col, "the action "
			    "scope names entities of type Action");
			return -1;
		}
	cap = 0;
	cv = NULL;
	while ((w = cedar_tok_is(t, "when")) || cedar_tok_is(t, "unless")) {
		if (po->po_ncond == cap) {
			struct cond	*nc;

			cap = cap == 0 ? 2 : cap * 2;
			if ((nc = cedar_arena_array(p->p_ar, cap,
			    sizeof(*nc))) == NULL) {
				cedar_perr_tok(p, "out of memory");
				return -1;
			}
			if (po->po_ncond > 0)
				memcpy(nc, cv, po->po_ncond * sizeof(*nc));
			cv = nc;
		}
		cedar_lex_next(p);
		if (cedar_expect(p, T_LBRACE, "'{'") == -1)
			return -1;
		if (t->t_t == T_RBRACE) {
			cedar_perr_tok(p, "empty condition");
			return -1;
		}
		cv[po->po_ncond].co_unless = !w;
		if ((cv[po->po_ncond].co_x = cedar_parse_expr(p)) == NULL ||
		    cedar_expect(p, T_RBRACE, "'}'") == -1)
			return -1;
		po->po_ncond++;
	}
	po->po_cond = cv;
	return cedar_expect(p, T_SEMI, "when, unless or ';'");
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
			cedar_perr(&p, 1, 1, "out of memory");
			goto fail;
		}
		ps->ps_file = f.cs_ptr;
	}
	if (len > CEDAR_TEXT_MAX) {
		cedar_perr(&p, 1, 1, "policies longer than %d bytes",
		    CEDAR_TEXT_MAX);
		goto fail;
	}
	if ((bad = utf8_bad((const unsigned char *)text, len)) < len) {
		cedar_lex_adv(&p, bad);
		cedar_perr(&p, p.p_line, p.p_col, "invalid UTF-8");
		goto fail;
	}
	for (i = 0; i < len; i++)
		if (text[i] == '\0') {
			p.p_pos = 0;
			cedar_lex_adv(&p, i);
			cedar_perr(&p, p.p_line, p.p_col,
			    "NUL in the policy text");
			goto fail;
		}
	cedar_lex_next(&p);
	cap = 0;
	while (p.p_tok.t_t != T_EOF) {
		if (ps->ps_n == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			if ((pv = cedar_arena_array(&ps->ps_arena, cap,
			    sizeof(*pv))) == NULL) {
				cedar_perr_tok(&p, "out of memory");
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
		cedar_perr(&p, 1, 1, "out of memory");
		goto fail;
	}
	return ps;
fail:
	if (!p.p_failed)
		cedar_perr(&p, p.p_tok.t_line, p.p_tok.t_col, "syntax error");
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

