/*
 * Composite-tool templates (template.h), the evaluator: the tree
 * template_parse.c compiled, over jansson values.  Evaluation allocates
 * only its result and the values functions build.
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

/* evaluation */

struct teval;
static json_t	*teval_fail(struct teval *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

struct teval {
	json_t		*te_ctx;
	char		*te_err;
	size_t		 te_errlen;
	int		 te_failed;
	char		*te_buf;
	size_t		 te_len;
	size_t		 te_cap;
};

static json_t *
teval_fail(struct teval *te, const char *fmt, ...)
{
	va_list	 ap;

	if (!te->te_failed) {
		te->te_failed = 1;
		va_start(ap, fmt);
		(void)vsnprintf(te->te_err, te->te_errlen, fmt, ap);
		va_end(ap);
	}
	return NULL;
}

/* ".a.b" of ex's first n segments, for messages */
static void
texpr_show_path(const struct texpr *ex, size_t n, char *buf, size_t len)
{
	size_t	 i, o = 0;
	int	 w;

	buf[0] = '\0';
	if (ex->ex_base != NULL)
		o = (size_t)snprintf(buf, len, "(...)");
	for (i = 0; i < n && o < len; i++) {
		w = snprintf(buf + o, len - o, ".%s", ex->ex_segs[i]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	if (n == 0 && ex->ex_base == NULL)
		(void)snprintf(buf, len, ".");
}

/* Go's truth: false, 0, null and empty values are false */
static int
tmpl_truth(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return json_object_size(v) > 0;
	case JSON_ARRAY:
		return json_array_size(v) > 0;
	case JSON_STRING:
		return json_string_length(v) > 0;
	case JSON_INTEGER:
		return json_integer_value(v) != 0;
	case JSON_REAL:
		return json_real_value(v) != 0;
	case JSON_TRUE:
		return 1;
	default:
		return 0;
	}
}

static json_t	*teval_expr(struct teval *, const struct texpr *);

static json_t *
teval_path(struct teval *te, const struct texpr *ex)
{
	json_t	*v, *base;
	char	 show[160];
	size_t	 i;

	if (ex->ex_base != NULL) {
		if ((base = teval_expr(te, ex->ex_base)) == NULL)
			return NULL;
	} else
		base = json_incref(te->te_ctx);
	v = base;
	for (i = 0; i < ex->ex_nsegs; i++) {
		if (!json_is_object(v)) {
			texpr_show_path(ex, i, show, sizeof(show));
			(void)teval_fail(te, "%s is %s, not an object with "
			    "key \"%s\"", show, jsonrpc_type_name(v),
			    ex->ex_segs[i]);
			json_decref(base);
			return NULL;
		}
		if ((v = json_object_get(v, ex->ex_segs[i])) == NULL) {
			texpr_show_path(ex, i + 1, show, sizeof(show));
			(void)teval_fail(te, "%s: no such key", show);
			json_decref(base);
			return NULL;
		}
	}
	json_incref(v);
	json_decref(base);
	return v;
}

/* the text a value renders as: a string itself, others as JSON */
static char *
tmpl_text(const json_t *v, size_t *lenp)
{
	char	*s;

	if (json_is_string(v)) {
		*lenp = json_string_length(v);
		if ((s = malloc(*lenp + 1)) != NULL) {
			memcpy(s, json_string_value(v), *lenp);
			s[*lenp] = '\0';
		}
		return s;
	}
	if ((s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT)) != NULL)
		*lenp = strlen(s);
	return s;
}

static int
tmpl_is_number(const json_t *v)
{
	return json_is_integer(v) || json_is_real(v);
}

/* -1, 0, 1; -2 when not comparable (ordered: numbers and strings only) */
static int
tmpl_compare(const json_t *a, const json_t *b, int ordered)
{
	double	 x, y;
	int	 c;

	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) < json_integer_value(b) ? -1 :
		    json_integer_value(a) > json_integer_value(b);
	if (tmpl_is_number(a) && tmpl_is_number(b)) {
		x = json_number_value(a);
		y = json_number_value(b);
		return x < y ? -1 : x > y;
	}
	if (json_is_string(a) && json_is_string(b)) {
		c = strcmp(json_string_value(a), json_string_value(b));
		return c < 0 ? -1 : c > 0;
	}
	if (ordered)
		return -2;
	if (json_is_null(a) || json_is_null(b))
		return json_is_null(a) && json_is_null(b) ? 0 : 1;
	if (json_is_boolean(a) && json_is_boolean(b))
		return json_is_true(a) != json_is_true(b);
	if (json_typeof(a) != json_typeof(b))
		return -2;
	return json_equal(a, b) ? 0 : 1;
}

static json_t *
teval_compare(struct teval *te, enum tfn fn, json_t **av, size_t ac)
{
	size_t	 i;
	int	 c, r = 0;

	for (i = 1; i < ac; i++) {
		c = tmpl_compare(av[0], av[i], fn != FN_EQ && fn != FN_NE);
		if (c == -2)
			return teval_fail(te, "cannot compare %s with %s",
			    jsonrpc_type_name(av[0]), jsonrpc_type_name(av[i]));
		switch (fn) {
		case FN_EQ:
			r = r || c == 0;
			break;
		case FN_NE:
			r = c != 0;
			break;
		case FN_LT:
			r = c < 0;
			break;
		case FN_LE:
			r = c <= 0;
			break;
		case FN_GT:
			r = c > 0;
			break;
		default:
			r = c >= 0;
			break;
		}
	}
	return json_boolean(r);
}

static json_t *
teval_index(struct teval *te, json_t **av, size_t ac)
{
	json_t	*v = av[0];
	size_t	 i;

	for (i = 1; i < ac; i++) {
		if (json_is_array(v) && json_is_integer(av[i])) {
			if (json_integer_value(av[i]) < 0 ||
			    (json_int_t)json_array_size(v) <=
			    json_integer_value(av[i]))
				return teval_fail(te, "index %lld out of range "
				    "(%zu items)", (long long)
				    json_integer_value(av[i]),
				    json_array_size(v));
			v = json_array_get(v, (size_t)json_integer_value(av[i]));
		} else if (json_is_object(v) && json_is_string(av[i])) {
			if ((v = json_object_get(v, json_string_value(av[i])))
			    == NULL)
				return teval_fail(te, "index: no key \"%s\"",
				    json_string_value(av[i]));
		} else
			return teval_fail(te, "cannot index %s with %s",
			    jsonrpc_type_name(v), jsonrpc_type_name(av[i]));
	}
	return json_incref(v);
}

static json_t *
teval_call(struct teval *te, const struct texpr *ex)
{
	json_t		*av[16] = { NULL }, *r = NULL;
	json_error_t	 je;
	char		*s;
	size_t		 i, ac = 0, len;

	/* and/or stop early, as Go's do */
	if (ex->ex_fn == FN_AND || ex->ex_fn == FN_OR) {
		for (i = 0; i < ex->ex_nargs; i++) {
			json_decref(r);
			if ((r = teval_expr(te, ex->ex_args[i])) == NULL)
				return NULL;
			if (tmpl_truth(r) == (ex->ex_fn == FN_OR))
				break;
		}
		return r;
	}
	for (ac = 0; ac < ex->ex_nargs; ac++)
		if ((av[ac] = teval_expr(te, ex->ex_args[ac])) == NULL)
			goto done;
	switch (ex->ex_fn) {
	case FN_JSON:
		if ((s = json_dumps(av[0], JSON_ENCODE_ANY | JSON_COMPACT)) ==
		    NULL) {
			(void)teval_fail(te, "json: cannot encode");
			break;
		}
		r = json_string(s);
		free(s);
		break;
	case FN_QUOTE:
		if ((s = tmpl_text(av[0], &len)) == NULL)
			break;
		json_decref(av[0]);
		av[0] = json_stringn(s, len);
		free(s);
		if (av[0] == NULL) {
			(void)teval_fail(te, "quote: not UTF-8");
			break;
		}
		s = json_dumps(av[0], JSON_ENCODE_ANY);
		r = s != NULL ? json_string(s) : NULL;
		free(s);
		break;
	case FN_FROMJSON:
		if (!json_is_string(av[0])) {
			(void)teval_fail(te, "fromJson: expected a string, "
			    "found %s", jsonrpc_type_name(av[0]));
			break;
		}
		if ((r = json_loadb(json_string_value(av[0]),
		    json_string_length(av[0]), JSON_DECODE_ANY, &je)) == NULL)
			(void)teval_fail(te, "fromJson: %s", je.text);
		break;
	case FN_NOT:
		r = json_boolean(!tmpl_truth(av[0]));
		break;
	case FN_LEN:
		if (json_is_array(av[0]))
			r = json_integer((json_int_t)json_array_size(av[0]));
		else if (json_is_object(av[0]))
			r = json_integer((json_int_t)json_object_size(av[0]));
		else if (json_is_string(av[0]))
			r = json_integer((json_int_t)
			    json_string_length(av[0]));
		else
			(void)teval_fail(te, "len of %s",
			    jsonrpc_type_name(av[0]));
		break;
	case FN_INDEX:
		r = teval_index(te, av, ac);
		break;
	default:
		r = teval_compare(te, ex->ex_fn, av, ac);
		break;
	}
	if (r == NULL)
		(void)teval_fail(te, "out of memory");
done:
	for (i = 0; i < ac; i++)
		json_decref(av[i]);
	return r;
}

static json_t *
teval_expr(struct teval *te, const struct texpr *ex)
{
	switch (ex->ex_kind) {
	case EX_PATH:
		return teval_path(te, ex);
	case EX_VALUE:
		return json_incref(ex->ex_value);
	default:
		return teval_call(te, ex);
	}
}

static int
teval_append(struct teval *te, const char *s, size_t len)
{
	size_t	 ncap;
	char	*nb;

	if (len > TMPL_OUT_MAX - te->te_len) {
		(void)teval_fail(te, "result longer than %d bytes",
		    TMPL_OUT_MAX);
		return -1;
	}
	if (te->te_len + len + 1 > te->te_cap) {
		ncap = te->te_cap ? te->te_cap : 64;
		while (ncap < te->te_len + len + 1)
			ncap *= 2;
		if ((nb = realloc(te->te_buf, ncap)) == NULL) {
			(void)teval_fail(te, "out of memory");
			return -1;
		}
		te->te_buf = nb;
		te->te_cap = ncap;
	}
	memcpy(te->te_buf + te->te_len, s, len);
	te->te_len += len;
	te->te_buf[te->te_len] = '\0';
	return 0;
}

static int
teval_list(struct teval *te, const struct tlist *tl)
{
	const struct tnode	*tn;
	json_t			*v;
	char			*s;
	size_t			 i, len;
	int			 rc, truth;

	for (i = 0; i < tl->tl_n; i++) {
		tn = tl->tl_nodes[i];
		switch (tn->tn_kind) {
		case TN_TEXT:
			if (teval_append(te, tn->tn_text, tn->tn_len) == -1)
				return -1;
			break;
		case TN_ACTION:
			if ((v = teval_expr(te, tn->tn_expr)) == NULL)
				return -1;
			s = tmpl_text(v, &len);
			json_decref(v);
			if (s == NULL) {
				(void)teval_fail(te, "out of memory");
				return -1;
			}
			rc = teval_append(te, s, len);
			free(s);
			if (rc == -1)
				return -1;
			break;
		case TN_IF:
			if ((v = teval_expr(te, tn->tn_expr)) == NULL)
				return -1;
			truth = tmpl_truth(v);
			json_decref(v);
			if (teval_list(te, truth ? &tn->tn_then :
			    &tn->tn_else) == -1)
				return -1;
			break;
		}
	}
	return 0;
}

json_t *
tmpl_eval(const struct tmpl *t, json_t *ctx, char *err, size_t errlen)
{
	struct teval	 te;
	json_t		*v;

	memset(&te, 0, sizeof(te));
	te.te_ctx = ctx;
	te.te_err = err;
	te.te_errlen = errlen;
	if (t->t_body.tl_n == 1 && t->t_body.tl_nodes[0]->tn_kind ==
	    TN_ACTION) {
		v = teval_expr(&te, t->t_body.tl_nodes[0]->tn_expr);
		if (v == NULL && !te.te_failed)
			(void)teval_fail(&te, "out of memory");
		return v;
	}
	if (teval_list(&te, &t->t_body) == -1) {
		free(te.te_buf);
		return NULL;
	}
	v = json_stringn(te.te_buf != NULL ? te.te_buf : "", te.te_len);
	free(te.te_buf);
	if (v == NULL)
		(void)teval_fail(&te, "result is not UTF-8");
	return v;
}

int
tmpl_eval_bool(const struct tmpl *t, json_t *ctx, int *res, char *err,
    size_t errlen)
{
	static const char *const	 yes[] = { "true", "True", "TRUE" };
	static const char *const	 no[] = { "false", "False", "FALSE" };
	json_t				*v;
	const char			*s;
	size_t				 i;

	if ((v = tmpl_eval(t, ctx, err, errlen)) == NULL)
		return -1;
	if (json_is_boolean(v)) {
		*res = json_is_true(v);
		json_decref(v);
		return 0;
	}
	s = json_is_string(v) ? json_string_value(v) : "";
	for (i = 0; i < 3; i++) {
		if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
			*res = strcmp(s, yes[i]) == 0;
			json_decref(v);
			return 0;
		}
	}
	(void)snprintf(err, errlen, "condition is %s, not true or false",
	    jsonrpc_type_name(v));
	json_decref(v);
	return -1;
}

static int
texpr_walk(const struct texpr *ex,
    int (*fn)(const char *const *, size_t, void *), void *arg)
{
	size_t	 i;
	int	 rc;

	if (ex->ex_kind == EX_PATH) {
		if (ex->ex_base != NULL)
			return texpr_walk(ex->ex_base, fn, arg);
		return fn((const char *const *)ex->ex_segs, ex->ex_nsegs, arg);
	}
	for (i = 0; i < ex->ex_nargs; i++)
		if ((rc = texpr_walk(ex->ex_args[i], fn, arg)) != 0)
			return rc;
	return 0;
}

static int
tlist_walk(const struct tlist *tl,
    int (*fn)(const char *const *, size_t, void *), void *arg)
{
	const struct tnode	*tn;
	size_t			 i;
	int			 rc;

	for (i = 0; i < tl->tl_n; i++) {
		tn = tl->tl_nodes[i];
		if (tn->tn_expr != NULL &&
		    (rc = texpr_walk(tn->tn_expr, fn, arg)) != 0)
			return rc;
		if ((rc = tlist_walk(&tn->tn_then, fn, arg)) != 0 ||
		    (rc = tlist_walk(&tn->tn_else, fn, arg)) != 0)
			return rc;
	}
	return 0;
}

int
tmpl_walk_paths(const struct tmpl *t,
    int (*fn)(const char *const *, size_t, void *), void *arg)
{
	return tlist_walk(&t->t_body, fn, arg);
}
