/*
 * view_resolve(): tools and prompts named (view_resolve.c says what is
 * decided): each name kept bare, prefixed or dropped per
 * conflictResolution (prefix, priority, manual), then names a prefix
 * broke and names produced twice dropped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "worker/view/view_policy.h"
#include "worker/view/view.h"
#include "worker/view/view_resolve_int.h"
#include "worker/view/view_rules.h"

#define VIEW_PLACEHOLDER	"{workload}"
#define VIEW_MAX_NAMED		3	/* claimants named in one error */

/* by name, then backend (sorted), then position: a total order */
/* ties between equal names: backend order, then input order */
static int
vb_cmp_origin(const struct vb_item *x, const struct vb_item *y)
{
	if (x->it_bk != y->it_bk)
		return x->it_bk < y->it_bk ? -1 : 1;
	if (x->it_seq != y->it_seq)
		return x->it_seq < y->it_seq ? -1 : 1;
	return 0;
}

int
vb_cmp_item(const void *a, const void *b)
{
	const struct vb_item *const	*x = a, *const *y = b;
	int				 c;

	if ((c = strcmp((*x)->it_name, (*y)->it_name)) != 0)
		return c;
	return vb_cmp_origin(*x, *y);
}

static int
vb_cmp_final(const void *a, const void *b)
{
	const struct vb_item *const	*x = a, *const *y = b;
	int				 c;

	if ((c = strcmp((*x)->it_final, (*y)->it_final)) != 0)
		return c;
	return vb_cmp_origin(*x, *y);
}

/* fmt with every {workload} replaced by the backend, then the name */
static char *
vb_compose(const char *fmt, const char *backend, const char *name)
{
	const size_t	 plen = sizeof(VIEW_PLACEHOLDER) - 1;
	const size_t	 blen = strlen(backend);
	const char	*p, *q;
	char		*s, *o;
	size_t		 len = 0, add;

	for (p = fmt; (q = strstr(p, VIEW_PLACEHOLDER)) != NULL; p = q + plen) {
		add = (size_t)(q - p);
		if (len > SIZE_MAX - add - blen)
			return NULL;
		len += add + blen;
	}
	add = strlen(p) + strlen(name);
	if (len > SIZE_MAX - add - 1)
		return NULL;
	len += add;
	if ((s = malloc(len + 1)) == NULL)
		return NULL;
	o = s;
	for (p = fmt; (q = strstr(p, VIEW_PLACEHOLDER)) != NULL; p = q + plen) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, backend, blen);
		o += blen;
	}
	add = strlen(p);
	memcpy(o, p, add);
	o += add;
	add = strlen(name);
	memcpy(o, name, add);
	o[add] = '\0';
	return s;
}

static void
vb_set_final(struct vb *vb, struct vb_item *it, int prefixed)
{
	if (prefixed)
		it->it_final = vb_compose(vb->vb_format,
		    vb_bname(vb, it->it_bk), it->it_name);
	else
		it->it_final = strdup(it->it_name);
	if (it->it_final == NULL)
		vb->vb_oom = 1;
}

/* the text written to a memstream, or NULL (freed) if writing failed */
static char *
vb_memstream_end(FILE *f, char **s)
{
	int bad = ferror(f);

	if (fclose(f) == EOF || bad) {
		free(*s);
		*s = NULL;
	}
	return *s;
}

/* "\"a\", \"b\"": the distinct backends of a group (sorted by backend) */
static char *
vb_list_backends(const struct vb *vb, struct vb_item **g, size_t n)
{
	char	*s = NULL;
	size_t	 len = 0, i;
	FILE	*f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i > 0 && g[i]->it_bk == g[i - 1]->it_bk)
			continue;
		fprintf(f, "%s\"%s\"", i > 0 ? ", " : "",
		    vb_bname(vb, g[i]->it_bk));
	}
	return vb_memstream_end(f, &s);
}

/*
 * "tool \"x\" of backend \"a\", ...": the claimants of g but skip, at
 * most VIEW_MAX_NAMED of them, so that k claimants of one name cost
 * O(k) error text, not O(k^2).
 */
static char *
vb_list_claimants(const struct vb *vb, const struct vb_kind *k,
    struct vb_item **g, size_t n, const struct vb_item *skip)
{
	char	*s = NULL;
	size_t	 len = 0, i, shown = 0;
	FILE	*f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n && shown < VIEW_MAX_NAMED; i++) {
		if (g[i] == skip)
			continue;
		fprintf(f, "%s%s \"%s\" of backend \"%s\"",
		    shown > 0 ? ", " : "", k->vk_what, g[i]->it_own,
		    vb_bname(vb, g[i]->it_bk));
		shown++;
	}
	if (n - 1 > shown)
		fprintf(f, " and %zu more", n - 1 - shown);
	return vb_memstream_end(f, &s);
}

static void
vb_drop_priority(struct vb *vb, const struct vb_kind *k, struct vb_item *it,
    struct vb_item **g, size_t n, size_t best)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (vb->vb_bk[g[i]->it_bk].bk_rank == best)
			break;
	it->it_dropped = 1;
	vb_err(vb, "%s \"%s\" of backend \"%s\" dropped: the name \"%s\" "
	    "goes to backend \"%s\", earlier in priorityOrder", k->vk_what,
	    it->it_own, vb_bname(vb, it->it_bk), it->it_name,
	    vb_bname(vb, g[i < n ? i : 0]->it_bk));
}

/*
 * Name one group of items claiming one (post-override) name: keep it
 * bare, prefix it, or drop it, per strategy.
 */
static void
vb_name_group(struct vb *vb, const struct vb_kind *k, struct vb_item **g,
    size_t n)
{
	const struct view_policy	*pol = vb->vb_pol;
	struct vb_item			*it;
	size_t				 i, nb = 0, best = VIEW_UNLISTED, rank;
	char				*list;
	int				 always, conflict;

	for (i = 0; i < n; i++) {
		if (i == 0 || g[i]->it_bk != g[i - 1]->it_bk)
			nb++;
		if (vb->vb_bk[g[i]->it_bk].bk_rank < best)
			best = vb->vb_bk[g[i]->it_bk].bk_rank;
	}
	conflict = nb > 1;
	always = pol->vp_prefix_mode != VIEW_PREFIX_ON_CONFLICT;

	for (i = 0; i < n && !vb->vb_oom; i++) {
		it = g[i];
		rank = vb->vb_bk[it->it_bk].bk_rank;
		if (k == &vb_prompts) {
			if (pol->vp_conflict != VIEW_CONFLICT_PRIORITY ||
			    rank == VIEW_UNLISTED)
				vb_set_final(vb, it, always || conflict);
			else if (rank == best)
				vb_set_final(vb, it, 0);
			else
				vb_drop_priority(vb, k, it, g, n, best);
			continue;
		}
		switch (pol->vp_conflict) {
		case VIEW_CONFLICT_PRIORITY:
			if (!conflict ||
			    (rank == best && rank != VIEW_UNLISTED))
				vb_set_final(vb, it, 0);
			else if (rank == VIEW_UNLISTED)
				vb_set_final(vb, it, 1);
			else
				vb_drop_priority(vb, k, it, g, n, best);
			break;
		case VIEW_CONFLICT_MANUAL:
			if (!conflict) {
				vb_set_final(vb, it, 0);
				break;
			}
			it->it_dropped = 1;
			if ((list = vb_list_backends(vb, g, n)) == NULL) {
				vb->vb_oom = 1;
				break;
			}
			vb_err(vb, "tool \"%s\" of backend \"%s\" dropped: the "
			    "name \"%s\" is claimed by backends %s and "
			    "conflictResolution is manual; add an override "
			    "that renames it", it->it_own,
			    vb_bname(vb, it->it_bk), it->it_name, list);
			free(list);
			break;
		default:
			vb_set_final(vb, it, always || conflict);
			break;
		}
	}
}

/* drop every claimant of a final name produced more than once */
static void
vb_collisions(struct vb *vb, const struct vb_kind *k, struct vb_item **v,
    size_t n)
{
	size_t	 i, j, m;
	char	*list;

	for (i = 0; i < n && !vb->vb_oom; i = j) {
		for (j = i + 1; j < n && strcmp(v[j]->it_final,
		    v[i]->it_final) == 0; j++)
			;
		if (j - i < 2)
			continue;
		for (m = i; m < j && !vb->vb_oom; m++) {
			v[m]->it_dropped = 1;
			list = vb_list_claimants(vb, k, v + i, j - i, v[m]);
			if (list == NULL) {
				vb->vb_oom = 1;
				break;
			}
			vb_err(vb, "%s \"%s\" of backend \"%s\" dropped: its "
			    "advertised name \"%s\" is also generated for %s",
			    k->vk_what, v[m]->it_own,
			    vb_bname(vb, v[m]->it_bk), v[m]->it_final, list);
			free(list);
		}
	}
}

/*
 * A name that keeps the rule as the backend gave it may break it once
 * prefixed (a prefixFormat's characters, or its length): dropped.
 */
static void
vb_final_check(struct vb *vb, const struct vb_kind *k, struct vb_item *it)
{
	char	q[VIEW_QUOTE_LEN];

	if (it->it_dropped || it->it_final == NULL)
		return;
	if (k == &vb_tools ? proto_tool_name_valid(it->it_final,
	    strlen(it->it_final)) : view_label_ok(it->it_final,
	    VIEW_PROMPT_NAME_MAX))
		return;
	it->it_dropped = 1;
	if (k == &vb_tools)
		vb_err(vb, "tool \"%s\" of backend \"%s\" dropped: its "
		    "advertised name \"%s\" is not " VB_TOOL_RULE, it->it_own,
		    vb_bname(vb, it->it_bk), view_quote(q, sizeof(q),
		    it->it_final));
	else
		vb_err(vb, "prompt \"%s\" of backend \"%s\" dropped: its "
		    "advertised name \"%s\" is " VB_LABEL_RULE, it->it_own,
		    vb_bname(vb, it->it_bk), view_quote(q, sizeof(q),
		    it->it_final), (size_t)VIEW_PROMPT_NAME_MAX);
}

/*
 * Tools or prompts: name every item, then drop generated collisions.
 * Returns the surviving items sorted by advertised name (NULL-ended).
 */
struct vb_item **
vb_resolve(struct vb *vb, const struct vb_kind *k, struct vb_vec *vv)
{
	struct vb_item	**v, **f = NULL;
	size_t		  i, j, nf = 0;

	if ((v = vb_vec_sorted(vb, vv, vb_cmp_item)) == NULL)
		return NULL;
	for (i = 0; i < vv->vv_n && !vb->vb_oom; i = j) {
		for (j = i + 1; j < vv->vv_n && strcmp(v[j]->it_name,
		    v[i]->it_name) == 0; j++)
			;
		vb_name_group(vb, k, v + i, j - i);
	}
	for (i = 0; i < vv->vv_n && !vb->vb_oom; i++)
		vb_final_check(vb, k, v[i]);
	if (vb->vb_oom)
		goto fail;
	if ((f = calloc(vv->vv_n + 1, sizeof(*f))) == NULL)
		goto fail;
	for (i = 0; i < vv->vv_n; i++)
		if (!v[i]->it_dropped)
			f[nf++] = v[i];
	if (nf > 0)
		qsort(f, nf, sizeof(*f), vb_cmp_final);
	vb_collisions(vb, k, f, nf);
	for (i = j = 0; i < nf; i++)
		if (!f[i]->it_dropped)
			f[j++] = f[i];
	f[j] = NULL;
	free(v);
	return f;
fail:
	vb->vb_oom = 1;
	free(v);
	free(f);
	return NULL;
}
