/*
 * Composite-tool templates (template.h), the compiler: from the
 * reference's Go text/template subset to a tree (template_int.h), once at
 * load.  Its evaluator is template_eval.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jsonrpc.h"
#include "template.h"
#include "template_int.h"

static const struct {
	const char	*name;
	enum tfn	 fn;
	size_t		 min;
	size_t		 max;
} tfns[] = {
	{ "json", FN_JSON, 1, 1 },
	{ "quote", FN_QUOTE, 1, 1 },
	{ "fromJson", FN_FROMJSON, 1, 1 },
	{ "eq", FN_EQ, 2, 16 },
	{ "ne", FN_NE, 2, 2 },
	{ "lt", FN_LT, 2, 2 },
	{ "le", FN_LE, 2, 2 },
	{ "gt", FN_GT, 2, 2 },
	{ "ge", FN_GE, 2, 2 },
	{ "and", FN_AND, 1, 16 },
	{ "or", FN_OR, 1, 16 },
	{ "not", FN_NOT, 1, 1 },
	{ "index", FN_INDEX, 2, 16 },
	{ "len", FN_LEN, 1, 1 },
};

enum ttok {
	TK_PATH,	/* .a.b or . */
	TK_IDENT,
	TK_STR,
	TK_NUM,
	TK_LP,
	TK_RP,
	TK_PIPE,
	TK_CLOSE,	/* }} */
	TK_EOF
};

struct tparse {
	const char	*tp_src;
	size_t		 tp_len;
	size_t		 tp_pos;
	int		 tp_depth;
	int		 tp_trim;	/* the last action ended with -}} */
	char		*tp_err;
	size_t		 tp_errlen;
	size_t		 tp_erroff;
	int		 tp_failed;
	/* the current token */
	enum ttok	 tp_tok;
	size_t		 tp_toff;
	size_t		 tp_tlen;
};

/* the end of the list being parsed */
enum tstop {
	TS_EOF,
	TS_ELSE,
	TS_ELSEIF,
	TS_END
};

static void	 texpr_free(struct texpr *);
static void	 tlist_free(struct tlist *);
static struct texpr *tparse_pipeline(struct tparse *);
static int	 tparse_fail(struct tparse *, size_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

static int
tparse_fail(struct tparse *tp, size_t off, const char *fmt, ...)
{
	va_list	 ap;

	if (tp->tp_failed)
		return -1;
	tp->tp_failed = 1;
	tp->tp_erroff = off;
	va_start(ap, fmt);
	(void)vsnprintf(tp->tp_err, tp->tp_errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
tmpl_segchar(int c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static int
tmpl_identchar(int c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* the action's closing "}}" or " -}}" at p, its length or 0 */
static size_t
tparse_close_at(const struct tparse *tp, size_t p)
{
	const char	*s = tp->tp_src;

	if (p + 1 < tp->tp_len && s[p] == '}' && s[p + 1] == '}')
		return 2;
	if (p + 3 < tp->tp_len && isspace((unsigned char)s[p]) &&
	    s[p + 1] == '-' && s[p + 2] == '}' && s[p + 3] == '}')
		return 4;
	return 0;
}

static int
tparse_next(struct tparse *tp)
{
	const char	*s = tp->tp_src;
	size_t		 p = tp->tp_pos, n;

	for (;;) {
		if ((n = tparse_close_at(tp, p)) == 4) {
			tp->tp_tok = TK_CLOSE;
			tp->tp_toff = p;
			tp->tp_tlen = n;
			tp->tp_pos = p + n;
			return 0;
		}
		if (p < tp->tp_len && isspace((unsigned char)s[p]))
			p++;
		else
			break;
	}
	tp->tp_toff = p;
	if (p >= tp->tp_len) {
		tp->tp_tok = TK_EOF;
		tp->tp_tlen = 0;
		return tparse_fail(tp, p, "unclosed action (missing \"}}\")");
	}
	if ((n = tparse_close_at(tp, p)) != 0) {
		tp->tp_tok = TK_CLOSE;
	} else if (s[p] == '.') {
		tp->tp_tok = TK_PATH;
		for (n = 1; p + n < tp->tp_len; n++) {
			if (s[p + n] == '.' && p + n + 1 < tp->tp_len &&
			    tmpl_segchar(s[p + n + 1]))
				continue;
			if (!tmpl_segchar(s[p + n]))
				break;
		}
		if (n > 1 && s[p + 1] == '.')
			return tparse_fail(tp, p, "bad field path");
	} else if (isalpha((unsigned char)s[p]) || s[p] == '_') {
		tp->tp_tok = TK_IDENT;
		for (n = 1; p + n < tp->tp_len && tmpl_identchar(s[p + n]); n++)
			;
	} else if (s[p] == '"' || s[p] == '`') {
		tp->tp_tok = TK_STR;
		for (n = 1; p + n < tp->tp_len && s[p + n] != s[p]; n++)
			if (s[p] == '"' && s[p + n] == '\\' &&
			    p + n + 1 < tp->tp_len)
				n++;
		if (p + n >= tp->tp_len)
			return tparse_fail(tp, p, "unterminated string");
		n++;
	} else if (isdigit((unsigned char)s[p]) || ((s[p] == '-' ||
	    s[p] == '+') && p + 1 < tp->tp_len &&
	    isdigit((unsigned char)s[p + 1]))) {
		tp->tp_tok = TK_NUM;
		for (n = 1; p + n < tp->tp_len && (isalnum((unsigned char)
		    s[p + n]) || s[p + n] == '.' || ((s[p + n] == '-' ||
		    s[p + n] == '+') && (s[p + n - 1] == 'e' ||
		    s[p + n - 1] == 'E'))); n++)
			;
	} else if (s[p] == '(') {
		tp->tp_tok = TK_LP;
		n = 1;
	} else if (s[p] == ')') {
		tp->tp_tok = TK_RP;
		n = 1;
	} else if (s[p] == '|') {
		tp->tp_tok = TK_PIPE;
		n = 1;
	} else
		return tparse_fail(tp, p, "unexpected character '%c'",
		    isprint((unsigned char)s[p]) ? s[p] : '?');
	tp->tp_tlen = n;
	tp->tp_pos = p + n;
	return 0;
}

static int
tparse_is(const struct tparse *tp, enum ttok t, const char *word)
{
	return tp->tp_tok == t && strlen(word) == tp->tp_tlen &&
	    memcmp(tp->tp_src + tp->tp_toff, word, tp->tp_tlen) == 0;
}

static struct texpr *
texpr_new(struct tparse *tp, enum texpr_kind kind)
{
	struct texpr	*ex;

	if ((ex = calloc(1, sizeof(*ex))) == NULL) {
		(void)tparse_fail(tp, tp->tp_toff, "out of memory");
		return NULL;
	}
	ex->ex_kind = kind;
	return ex;
}

static void
texpr_free(struct texpr *ex)
{
	size_t	 i;

	if (ex == NULL)
		return;
	texpr_free(ex->ex_base);
	for (i = 0; i < ex->ex_nsegs; i++)
		free(ex->ex_segs[i]);
	free(ex->ex_segs);
	for (i = 0; i < ex->ex_nargs; i++)
		texpr_free(ex->ex_args[i]);
	free(ex->ex_args);
	json_decref(ex->ex_value);
	free(ex);
}

static int
texpr_push(struct tparse *tp, void *arrp, size_t *np, void *elem)
{
	void	***a = arrp;
	void	 **na;

	if ((na = reallocarray(*a, *np + 1, sizeof(*na))) == NULL)
		return tparse_fail(tp, tp->tp_toff, "out of memory");
	na[(*np)++] = elem;
	*a = na;
	return 0;
}

/* the fields of the path token at off (len) onto ex's segments */
static int
tparse_segs(struct tparse *tp, struct texpr *ex, size_t off, size_t len)
{
	const char	*s = tp->tp_src + off;
	size_t		 i, j;
	char		*seg;

	for (i = 1; i < len; i = j + 1) {
		for (j = i; j < len && s[j] != '.'; j++)
			;
		if ((seg = strndup(s + i, j - i)) == NULL)
			return tparse_fail(tp, off, "out of memory");
		if (texpr_push(tp, &ex->ex_segs, &ex->ex_nsegs, seg) == -1) {
			free(seg);
			return -1;
		}
	}
	return 0;
}

static json_t *
tparse_string(struct tparse *tp)
{
	const char	*s = tp->tp_src + tp->tp_toff;
	json_error_t	 je;
	json_t		*v;

	if (s[0] == '`')
		v = json_stringn(s + 1, tp->tp_tlen - 2);
	else
		v = json_loadb(s, tp->tp_tlen, JSON_DECODE_ANY, &je);
	if (v == NULL || !json_is_string(v)) {
		json_decref(v);
		(void)tparse_fail(tp, tp->tp_toff, "bad string literal");
		return NULL;
	}
	return v;
}

static json_t *
tparse_number(struct tparse *tp)
{
	char		 buf[64], *end;
	long long	 ll;
	double		 d;

	if (tp->tp_tlen >= sizeof(buf))
		goto bad;
	memcpy(buf, tp->tp_src + tp->tp_toff, tp->tp_tlen);
	buf[tp->tp_tlen] = '\0';
	errno = 0;
	if (strpbrk(buf, ".eE") == NULL) {
		ll = strtoll(buf, &end, 10);
		if (errno != 0 || *end != '\0')
			goto bad;
		return json_integer(ll);
	}
	d = strtod(buf, &end);
	if (errno != 0 || *end != '\0' || !isfinite(d))
		goto bad;
	return json_real(d);
bad:
	(void)tparse_fail(tp, tp->tp_toff, "bad number");
	return NULL;
}

/* an operand: a path, a literal, or a parenthesized pipeline */
static struct texpr *
tparse_operand(struct tparse *tp)
{
	struct texpr	*ex = NULL, *in;
	json_t		*v = NULL;

	switch (tp->tp_tok) {
	case TK_PATH:
		if ((ex = texpr_new(tp, EX_PATH)) == NULL ||
		    tparse_segs(tp, ex, tp->tp_toff, tp->tp_tlen) == -1)
			goto fail;
		break;
	case TK_STR:
		v = tparse_string(tp);
		goto literal;
	case TK_NUM:
		v = tparse_number(tp);
		goto literal;
	case TK_IDENT:
		if (tparse_is(tp, TK_IDENT, "true"))
			v = json_true();
		else if (tparse_is(tp, TK_IDENT, "false"))
			v = json_false();
		else if (tparse_is(tp, TK_IDENT, "nil"))
			v = json_null();
		else {
			(void)tparse_fail(tp, tp->tp_toff, "function \"%.*s\" "
			    "needs parentheses here", (int)tp->tp_tlen,
			    tp->tp_src + tp->tp_toff);
			return NULL;
		}
	literal:
		if (v == NULL || (ex = texpr_new(tp, EX_VALUE)) == NULL)
			goto fail;
		ex->ex_value = v;
		v = NULL;
		break;
	case TK_LP:
		if (++tp->tp_depth > TMPL_DEPTH_MAX) {
			(void)tparse_fail(tp, tp->tp_toff, "nested too deep");
			return NULL;
		}
		if (tparse_next(tp) == -1 ||
		    (in = tparse_pipeline(tp)) == NULL)
			return NULL;
		tp->tp_depth--;
		if (tp->tp_tok != TK_RP) {
			texpr_free(in);
			(void)tparse_fail(tp, tp->tp_toff, "expected \")\"");
			return NULL;
		}
		/* (fromJson .x).id: fields right after the parenthesis */
		if (tp->tp_pos < tp->tp_len && tp->tp_src[tp->tp_pos] == '.') {
			if (tparse_next(tp) == -1 || tp->tp_tok != TK_PATH ||
			    tp->tp_tlen < 2 || (ex = texpr_new(tp,
			    EX_PATH)) == NULL) {
				texpr_free(in);
				(void)tparse_fail(tp, tp->tp_toff,
				    "bad field path");
				return NULL;
			}
			ex->ex_base = in;
			if (tparse_segs(tp, ex, tp->tp_toff, tp->tp_tlen) == -1)
				goto fail;
		} else
			ex = in;
		break;
	default:
		if (tp->tp_tok == TK_CLOSE || tp->tp_tok == TK_EOF)
			(void)tparse_fail(tp, tp->tp_toff, "missing value");
		else
			(void)tparse_fail(tp, tp->tp_toff, "unexpected "
			    "\"%.*s\"", (int)tp->tp_tlen,
			    tp->tp_src + tp->tp_toff);
		return NULL;
	}
	if (tparse_next(tp) == -1)
		goto fail;
	return ex;
fail:
	json_decref(v);
	texpr_free(ex);
	return NULL;
}

static int
tparse_ends_command(const struct tparse *tp)
{
	return tp->tp_tok == TK_CLOSE || tp->tp_tok == TK_RP ||
	    tp->tp_tok == TK_PIPE || tp->tp_tok == TK_EOF;
}

/* a command: a function and its arguments, or one operand; piped is the
 * previous command of a pipeline, the last argument */
static struct texpr *
tparse_command(struct tparse *tp, struct texpr *piped)
{
	struct texpr	*ex, *arg;
	size_t		 i, off = tp->tp_toff;

	if (tp->tp_tok != TK_IDENT || tparse_is(tp, TK_IDENT, "true") ||
	    tparse_is(tp, TK_IDENT, "false") || tparse_is(tp, TK_IDENT, "nil")) {
		if (piped != NULL) {
			texpr_free(piped);
			(void)tparse_fail(tp, off, "only a function can "
			    "follow \"|\"");
			return NULL;
		}
		if ((ex = tparse_operand(tp)) == NULL)
			return NULL;
		if (!tparse_ends_command(tp)) {
			texpr_free(ex);
			(void)tparse_fail(tp, tp->tp_toff, "unexpected operand "
			    "after a value (a function call starts with its "
			    "name)");
			return NULL;
		}
		return ex;
	}
	for (i = 0; i < (sizeof(tfns) / sizeof(tfns[0])); i++)
		if (tparse_is(tp, TK_IDENT, tfns[i].name))
			break;
	if (i == (sizeof(tfns) / sizeof(tfns[0]))) {
		texpr_free(piped);
		(void)tparse_fail(tp, off, "unknown function \"%.*s\"",
		    (int)tp->tp_tlen, tp->tp_src + tp->tp_toff);
		return NULL;
	}
	if ((ex = texpr_new(tp, EX_CALL)) == NULL) {
		texpr_free(piped);
		return NULL;
	}
	ex->ex_fn = tfns[i].fn;
	if (tparse_next(tp) == -1)
		goto fail;
	while (!tparse_ends_command(tp)) {
		if ((arg = tparse_operand(tp)) == NULL)
			goto fail;
		if (texpr_push(tp, &ex->ex_args, &ex->ex_nargs, arg) == -1) {
			texpr_free(arg);
			goto fail;
		}
	}
	if (piped != NULL) {
		if (texpr_push(tp, &ex->ex_args, &ex->ex_nargs, piped) == -1)
			goto fail;
		piped = NULL;
	}
	if (ex->ex_nargs < tfns[i].min || ex->ex_nargs > tfns[i].max) {
		(void)tparse_fail(tp, off, "%s takes %zu%s argument%s, "
		    "found %zu", tfns[i].name, tfns[i].min,
		    tfns[i].max > tfns[i].min ? " or more" : "",
		    tfns[i].min == 1 && tfns[i].max == 1 ? "" : "s",
		    ex->ex_nargs);
		goto fail;
	}
	return ex;
fail:
	texpr_free(piped);
	texpr_free(ex);
	return NULL;
}

/* each stage nests the one before: their number counts as depth */
static struct texpr *
tparse_pipeline(struct tparse *tp)
{
	struct texpr	*ex = NULL;
	int		 stages = 0;

	for (;;) {
		if ((ex = tparse_command(tp, ex)) == NULL)
			return NULL;
		if (tp->tp_tok != TK_PIPE)
			return ex;
		if (tp->tp_depth + ++stages > TMPL_DEPTH_MAX) {
			texpr_free(ex);
			(void)tparse_fail(tp, tp->tp_toff, "nested too deep");
			return NULL;
		}
		if (tparse_next(tp) == -1) {
			texpr_free(ex);
			return NULL;
		}
	}
}

static struct tnode *
tnode_new(struct tparse *tp, enum tnode_kind kind)
{
	struct tnode	*tn;

	if ((tn = calloc(1, sizeof(*tn))) == NULL)
		(void)tparse_fail(tp, tp->tp_pos, "out of memory");
	else
		tn->tn_kind = kind;
	return tn;
}

static void
tnode_free(struct tnode *tn)
{
	if (tn == NULL)
		return;
	free(tn->tn_text);
	texpr_free(tn->tn_expr);
	tlist_free(&tn->tn_then);
	tlist_free(&tn->tn_else);
	free(tn);
}

static void
tlist_free(struct tlist *tl)
{
	size_t	 i;

	for (i = 0; i < tl->tl_n; i++)
		tnode_free(tl->tl_nodes[i]);
	free(tl->tl_nodes);
	tl->tl_nodes = NULL;
	tl->tl_n = 0;
}

static int
tlist_push(struct tparse *tp, struct tlist *tl, struct tnode *tn)
{
	if (texpr_push(tp, &tl->tl_nodes, &tl->tl_n, tn) == -1) {
		tnode_free(tn);
		return -1;
	}
	return 0;
}

static int	tparse_list(struct tparse *, struct tlist *, enum tstop *);

/* {{if pipeline}} ... [{{else [if ...]}} ...] {{end}}, the "if" read */
static int
tparse_if(struct tparse *tp, struct tlist *tl, size_t off)
{
	struct tnode	*tn;
	enum tstop	 stop;

	if (++tp->tp_depth > TMPL_DEPTH_MAX)
		return tparse_fail(tp, off, "nested too deep");
	if ((tn = tnode_new(tp, TN_IF)) == NULL)
		return -1;
	if (tparse_next(tp) == -1 || (tn->tn_expr = tparse_pipeline(tp)) ==
	    NULL)
		goto fail;
	if (tp->tp_tok != TK_CLOSE) {
		(void)tparse_fail(tp, tp->tp_toff, "expected \"}}\"");
		goto fail;
	}
	tp->tp_trim = tp->tp_tlen == 4;
	if (tparse_list(tp, &tn->tn_then, &stop) == -1)
		goto fail;
	if (stop == TS_ELSEIF) {
		/* the else branch is one nested if sharing our {{end}} */
		if (tparse_if(tp, &tn->tn_else, tp->tp_toff) == -1)
			goto fail;
		stop = TS_END;
	} else if (stop == TS_ELSE && tparse_list(tp, &tn->tn_else,
	    &stop) == -1)
		goto fail;
	if (stop != TS_END) {
		(void)tparse_fail(tp, off, stop == TS_EOF ? "{{if}} without "
		    "{{end}}" : "{{else}} after {{else}}");
		goto fail;
	}
	tp->tp_depth--;
	return tlist_push(tp, tl, tn);
fail:
	tnode_free(tn);
	return -1;
}

static int
tparse_text(struct tparse *tp, struct tlist *tl, size_t a, size_t b,
    int trim_left, int trim_right)
{
	struct tnode	*tn;
	const char	*s = tp->tp_src;

	if (trim_left)
		while (a < b && isspace((unsigned char)s[a]))
			a++;
	if (trim_right)
		while (b > a && isspace((unsigned char)s[b - 1]))
			b--;
	if (a == b)
		return 0;
	if ((tn = tnode_new(tp, TN_TEXT)) == NULL)
		return -1;
	tn->tn_len = b - a;
	if ((tn->tn_text = strndup(s + a, b - a)) == NULL) {
		tnode_free(tn);
		return tparse_fail(tp, a, "out of memory");
	}
	return tlist_push(tp, tl, tn);
}

/* text and actions up to the end, an {{else}} or an {{end}} */
static int
tparse_list(struct tparse *tp, struct tlist *tl, enum tstop *stop)
{
	const char	*s = tp->tp_src, *open;
	struct tnode	*tn;
	size_t		 a, off;
	int		 trim;

	for (;;) {
		a = tp->tp_pos;
		open = memmem(s + a, tp->tp_len - a, "{{", 2);
		if (open == NULL) {
			*stop = TS_EOF;
			return tparse_text(tp, tl, a, tp->tp_len, tp->tp_trim,
			    0);
		}
		off = (size_t)(open - s);
		trim = off + 3 < tp->tp_len && s[off + 2] == '-' &&
		    isspace((unsigned char)s[off + 3]);
		if (tparse_text(tp, tl, a, off, tp->tp_trim, trim) == -1)
			return -1;
		tp->tp_pos = off + (trim ? 3 : 2);
		if (tparse_next(tp) == -1)
			return -1;
		if (tparse_is(tp, TK_IDENT, "if")) {
			if (tparse_if(tp, tl, off) == -1)
				return -1;
			continue;
		}
		if (tparse_is(tp, TK_IDENT, "else") ||
		    tparse_is(tp, TK_IDENT, "end")) {
			*stop = s[tp->tp_toff] == 'e' && s[tp->tp_toff + 1] ==
			    'n' ? TS_END : TS_ELSE;
			if (tparse_next(tp) == -1)
				return -1;
			if (*stop == TS_ELSE && tparse_is(tp, TK_IDENT, "if")) {
				*stop = TS_ELSEIF;
				return 0;	/* tparse_if() reads on */
			}
			if (tp->tp_tok != TK_CLOSE)
				return tparse_fail(tp, tp->tp_toff,
				    "expected \"}}\"");
			tp->tp_trim = tp->tp_tlen == 4;
			if (tp->tp_depth == 0)
				return tparse_fail(tp, off, "{{%s}} without "
				    "{{if}}", *stop == TS_END ? "end" :
				    "else");
			return 0;
		}
		if ((tn = tnode_new(tp, TN_ACTION)) == NULL)
			return -1;
		if ((tn->tn_expr = tparse_pipeline(tp)) == NULL) {
			tnode_free(tn);
			return -1;
		}
		if (tp->tp_tok != TK_CLOSE) {
			tnode_free(tn);
			return tparse_fail(tp, tp->tp_toff, "expected \"}}\"");
		}
		tp->tp_trim = tp->tp_tlen == 4;
		if (tlist_push(tp, tl, tn) == -1)
			return -1;
	}
}

struct tmpl *
tmpl_compile(const char *src, size_t len, char *err, size_t errlen,
    size_t *offp)
{
	struct tparse	 tp;
	struct tmpl	*t;
	enum tstop	 stop;

	memset(&tp, 0, sizeof(tp));
	tp.tp_src = src;
	tp.tp_len = len;
	tp.tp_err = err;
	tp.tp_errlen = errlen;
	if (len > TMPL_SRC_MAX) {
		(void)tparse_fail(&tp, TMPL_SRC_MAX, "template longer than "
		    "%d bytes", TMPL_SRC_MAX);
		goto fail;
	}
	if (memchr(src, '\0', len) != NULL) {
		(void)tparse_fail(&tp, (size_t)((const char *)memchr(src, '\0',
		    len) - src), "NUL byte in template");
		goto fail;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		(void)tparse_fail(&tp, 0, "out of memory");
		goto fail;
	}
	if (tparse_list(&tp, &t->t_body, &stop) == -1) {
		tmpl_free(t);
		goto fail;
	}
	return t;
fail:
	if (offp != NULL)
		*offp = tp.tp_erroff;
	return NULL;
}

void
tmpl_free(struct tmpl *t)
{
	if (t == NULL)
		return;
	tlist_free(&t->t_body);
	free(t);
}

int
tmpl_is_literal(const struct tmpl *t)
{
	return t->t_body.tl_n == 0 || (t->t_body.tl_n == 1 &&
	    t->t_body.tl_nodes[0]->tn_kind == TN_TEXT);
}

