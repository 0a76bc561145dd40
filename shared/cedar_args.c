/*
 * What a policy set may read of a call's arguments (shared/cedar.h,
 * cedar_policyset_args()), found once, when the set is parsed, so that
 * the gate of a tools/call parses no more of its params than the
 * policies can see (docs/ARCHITECTURE.md, "Authorization").
 *
 * Argument k of a call is the attribute arg_k (arg_k_present for an
 * object or an array) of the resource and of the context
 * (cedar_access_new()).  Cedar reads an attribute only by its name, with
 * .name, ["name"] or has name, and the context is the only value that
 * holds arguments and can be used whole (==, contains, a set element).
 * The walk is conservative both ways: an .arg_k or has arg_k counts
 * whatever it is applied to (an entity got through an attribute may be
 * the resource), and any use of context other than .x, ["x"] or has x
 * reads every argument.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonspan.h"
#include "shared/cedar.h"
#include "shared/cedar_args.h"
#include "shared/cedar_int.h"

#define ARG_PREFIX	"arg_"
#define ARG_PRESENT	"_present"
#define VAR_CONTEXT	3	/* tok_var()'s index of context */

struct args_acc {
	struct arena		*aa_ar;
	struct cedar_str	*aa_v;
	size_t			 aa_n;
	size_t			 aa_cap;
	int			 aa_all;
};

static int
args_add(struct args_acc *a, const char *s, size_t len)
{
	struct cedar_str	*v;
	size_t			 cap;

	if (a->aa_n == a->aa_cap) {
		cap = a->aa_cap == 0 ? 8 : a->aa_cap * 2;
		if ((v = cedar_arena_array(a->aa_ar, cap, sizeof(*v))) == NULL)
			return -1;
		if (a->aa_n > 0)
			memcpy(v, a->aa_v, a->aa_n * sizeof(*v));
		a->aa_v = v;
		a->aa_cap = cap;
	}
	/* the policy's own text outlives the set: its arena holds it */
	a->aa_v[a->aa_n].cs_ptr = s;
	a->aa_v[a->aa_n].cs_len = len;
	a->aa_n++;
	return 0;
}

/*
 * An attribute name: arg_k reads argument k, and arg_k_present reads
 * argument k_present (a scalar) and k (an object or array) both.
 */
static int
args_key(struct args_acc *a, const struct cedar_str *key)
{
	const size_t	 pl = sizeof(ARG_PREFIX) - 1;
	const size_t	 sl = sizeof(ARG_PRESENT) - 1;
	const char	*k;
	size_t		 kl;

	if (key->cs_len < pl || memcmp(key->cs_ptr, ARG_PREFIX, pl) != 0)
		return 0;
	k = key->cs_ptr + pl;
	kl = key->cs_len - pl;
	if (args_add(a, k, kl) == -1)
		return -1;
	if (kl >= sl && memcmp(k + kl - sl, ARG_PRESENT, sl) == 0 &&
	    args_add(a, k, kl - sl) == -1)
		return -1;
	return 0;
}

/* recursion as deep as the tree: CEDAR_DEPTH_MAX */
static int
args_walk(struct args_acc *a, const struct expr *x)
{
	size_t	i;

	if (x->x_op == E_ATTR || x->x_op == E_HAS) {
		if (args_key(a, &x->x_key) == -1)
			return -1;
		/* context.x, has x: only that attribute of it */
		if (x->x_a->x_op == E_VAR)
			return 0;
	} else if (x->x_op == E_VAR && x->x_var == VAR_CONTEXT) {
		a->aa_all = 1;
		return 0;
	}
	if ((x->x_a != NULL && args_walk(a, x->x_a) == -1) ||
	    (x->x_b != NULL && args_walk(a, x->x_b) == -1))
		return -1;
	for (i = 0; i < x->x_n; i++)
		if (args_walk(a, x->x_v[i]) == -1)
			return -1;
	return 0;
}

static int
args_cmp(const void *x, const void *y)
{
	return cedar_str_cmp(x, y);
}

int
cedar_args_find(struct cedar_policyset *ps)
{
	struct args_acc		 a;
	const struct policy	*po;
	size_t			 i, k, n;

	memset(&a, 0, sizeof(a));
	a.aa_ar = &ps->ps_arena;
	for (i = 0; i < ps->ps_n; i++) {
		po = &ps->ps_pol[i];
		for (k = 0; k < po->po_ncond; k++)
			if (args_walk(&a, po->po_cond[k].co_x) == -1)
				return -1;
	}
	if (a.aa_n > 0)
		qsort(a.aa_v, a.aa_n, sizeof(*a.aa_v), args_cmp);
	for (i = n = 0; i < a.aa_n; i++)
		if (n == 0 || !cedar_str_eq(&a.aa_v[n - 1], &a.aa_v[i]))
			a.aa_v[n++] = a.aa_v[i];
	ps->ps_args = a.aa_v;
	ps->ps_nargs = n;
	ps->ps_args_all = a.aa_all;
	return 0;
}

enum cedar_args
cedar_policyset_args(const struct cedar_policyset *ps)
{
	if (ps->ps_args_all)
		return CEDAR_ARGS_ALL;
	return ps->ps_nargs > 0 ? CEDAR_ARGS_SOME : CEDAR_ARGS_NONE;
}

const struct cedar_str *
cedar_policyset_arg_name(const struct cedar_policyset *ps, size_t i)
{
	return i < ps->ps_nargs ? &ps->ps_args[i] : NULL;
}

int
cedar_policyset_reads_arg(const struct cedar_policyset *ps, const char *key,
    size_t klen)
{
	struct cedar_str	k = { key, klen };

	if (ps->ps_args_all)
		return 1;
	return ps->ps_nargs > 0 && bsearch(&k, ps->ps_args, ps->ps_nargs,
	    sizeof(*ps->ps_args), args_cmp) != NULL;
}

/* a value's text as jsonrpc_parse() would load it */
static json_t *
args_load(const char *text, size_t len)
{
	return json_loadb(text, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, NULL);
}

int
cedar_args_pick(const struct cedar_policyset *ps, const json_t *args,
    json_t **out)
{
	const char	*k;
	size_t		 klen;
	json_t		*v;

	*out = NULL;
	if (!json_is_object(args) || cedar_policyset_args(ps) ==
	    CEDAR_ARGS_NONE)
		return 0;
	if (cedar_policyset_args(ps) == CEDAR_ARGS_ALL) {
		*out = json_incref((json_t *)args);
		return 0;
	}
	if ((*out = json_object()) == NULL)
		return -1;
	json_object_keylen_foreach((json_t *)args, k, klen, v)
		if (cedar_policyset_reads_arg(ps, k, klen) &&
		    json_object_setn(*out, k, klen, v) == -1) {
			json_decref(*out);
			*out = NULL;
			return -1;
		}
	return 0;
}

/* the same off a tree: text loaded, its member (NULL: itself) read */
static int
args_tree(const struct cedar_policyset *ps, const char *text,
    size_t len, const char *member, json_t **args)
{
	json_t	*t;
	int	 rc;

	if ((t = args_load(text, len)) == NULL)
		return -1;
	rc = cedar_args_pick(ps, member != NULL ? json_object_get(t, member) :
	    t, args);
	json_decref(t);
	return rc;
}

int
cedar_args_text(const struct cedar_policyset *ps, const char *params,
    size_t plen, json_t **args)
{
	struct proto_span	 m[CEDAR_ARGS_SCAN];
	const struct proto_span	*a;
	const char		*atext;
	json_t			*v, *out;
	size_t			 n, i, alen;

	*args = NULL;
	if (cedar_policyset_args(ps) == CEDAR_ARGS_NONE)
		return 0;
	/* not a scanned call's params after all: the tree */
	if (proto_json_members(params, plen, m, CEDAR_ARGS_SCAN, &n) == -1)
		return args_tree(ps, params, plen, "arguments", args);
	/* no arguments, or no object of them: none (as a tree has it) */
	if ((a = proto_json_member(m, n, "arguments")) == NULL ||
	    a->ps_vallen == 0 || a->ps_val[0] != '{')
		return 0;
	atext = a->ps_val;	/* m is reused for the arguments */
	alen = a->ps_vallen;
	if (cedar_policyset_args(ps) == CEDAR_ARGS_ALL ||
	    proto_json_members(atext, alen, m, CEDAR_ARGS_SCAN, &n) == -1)
		return args_tree(ps, atext, alen, NULL, args);
	for (i = 0; i < n; i++)
		if (m[i].ps_key == NULL)	/* an escape: the tree says */
			return args_tree(ps, atext, alen, NULL, args);
	/* only the values of the names read are parsed */
	if ((out = json_object()) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (!cedar_policyset_reads_arg(ps, m[i].ps_key,
		    m[i].ps_keylen))
			continue;
		/* a name twice: jansson would refuse the text */
		if (json_object_getn(out, m[i].ps_key, m[i].ps_keylen) !=
		    NULL || (v = args_load(m[i].ps_val, m[i].ps_vallen)) ==
		    NULL || json_object_setn_new(out, m[i].ps_key,
		    m[i].ps_keylen, v) == -1) {
			json_decref(out);
			return -1;
		}
	}
	*args = out;
	return 0;
}
