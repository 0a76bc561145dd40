/*
 * The Cedar subset's lexer (shared/cedar_lex.h): tokens, the first
 * error with its file:line:col, and strings' and patterns' escapes, for
 * the parsers in cedar_parse.c and cedar_parse_expr.c.
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


/* the first error wins: later ones are consequences */
void *
cedar_perr(struct parser *p, unsigned line, unsigned col, const char *fmt,
    ...)
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

void *
cedar_perr_tok(struct parser *p, const char *fmt, ...)
{
	char	msg[CEDAR_ERRLEN];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cedar_perr(p, p->p_tok.t_line, p->p_tok.t_col, "%s", msg);
}

void
cedar_lex_adv(struct parser *p, size_t n)
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
			cedar_lex_adv(p, 1);
		if (p->p_len - p->p_pos >= 2 && p->p_text[p->p_pos] == '/' &&
		    p->p_text[p->p_pos + 1] == '/') {
			while (p->p_pos < p->p_len &&
			    p->p_text[p->p_pos] != '\n')
				cedar_lex_adv(p, 1);
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
			cedar_lex_adv(p, left);
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
	cedar_lex_adv(p, n);
}

void
cedar_lex_next(struct parser *p)
{
	if (p->p_have_next) {
		p->p_tok = p->p_next;
		p->p_have_next = 0;
	} else
		lex_raw(p, &p->p_tok);
}

const struct token *
cedar_lex_peek(struct parser *p)
{
	if (!p->p_have_next) {
		lex_raw(p, &p->p_next);
		p->p_have_next = 1;
	}
	return &p->p_next;
}

int
cedar_tok_is(const struct token *t, const char *word)
{
	return t->t_t == T_IDENT && t->t_len == strlen(word) &&
	    memcmp(t->t_p, word, t->t_len) == 0;
}

int
cedar_tok_reserved(const struct token *t)
{
	static const char *const words[] = {
		"true", "false", "if", "then", "else", "in", "like", "has",
		"is"
	};
	size_t	i;

	if (t->t_t != T_IDENT)
		return 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (cedar_tok_is(t, words[i]))
			return 1;
	return t->t_len >= 7 && memcmp(t->t_p, "__cedar", 7) == 0;
}

int
cedar_tok_var(const struct token *t)
{
	static const char *const vars[] = {
		"principal", "action", "resource", "context"
	};
	int	i;

	for (i = 0; i < 4; i++)
		if (cedar_tok_is(t, vars[i]))
			return i;
	return -1;
}

/* what an unexpected token means, for the message */
void *
cedar_perr_unexpected(struct parser *p, const char *want)
{
	const struct token	*t = &p->p_tok;

	switch (t->t_t) {
	case T_EOF:
		return cedar_perr_tok(p, "expected %s, found the end", want);
	case T_ARITH:
	case T_MINUS:
		return cedar_perr_tok(p, "arithmetic (+ - *) is not supported");
	case T_QUESTION:
		return cedar_perr_tok(p, "templates (?principal, ?resource) "
		    "are not supported");
	case T_OTHER:
		if (t->t_big && t->t_p[0] == '"')
			return cedar_perr_tok(p, "unterminated string");
		break;
	case T_IDENT:
		if (cedar_tok_is(t, "if"))
			return cedar_perr_tok(p,
			    "if-then-else is not supported");
		if (cedar_tok_is(t, "is"))
			return cedar_perr_tok(p,
			    "the is operator is not supported");
		break;
	case T_LBRACE:
		if (strcmp(want, "'{'") != 0)
			return cedar_perr_tok(p,
			    "record literals are not supported");
		break;
	default:
		break;
	}
	return cedar_perr_tok(p, "expected %s, found '%.*s'", want,
	    (int)(t->t_len > 32 ? 32 : t->t_len), t->t_p);
}

int
cedar_expect(struct parser *p, enum tok tt, const char *want)
{
	if (p->p_tok.t_t != tt) {
		cedar_perr_unexpected(p, want);
		return -1;
	}
	cedar_lex_next(p);
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
int
cedar_str_decode(struct parser *p, int pattern, struct cedar_str **segs,
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
		cedar_perr_tok(p, "out of memory");
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
	cedar_perr_tok(p, "invalid escape in string");
	return -1;
}

