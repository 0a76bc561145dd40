/*
 * Cedar requests in the reference's entity model (shared/cedar_request.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/cedar.h"
#include "shared/cedar_request.h"
#include "shared/cedar_int.h"

/*
 * Requests in the reference's entity model (docs/ARCHITECTURE.md,
 * "Authorization"): JSON from a token or a client becomes Cedar values
 * without Cedar's JSON escapes (a claim {"__entity": ..} stays a
 * record), integral numbers become Longs, others a decimal when one
 * holds them exactly, and what Cedar can't hold (null, other numbers,
 * nesting past CLAIM_DEPTH_MAX) is left out.
 */

#define CLAIM_DEPTH_MAX	10

static const struct cv cv_drop = { .cv_t = CV_BOOL };
#define CV_DROP	(&cv_drop)

/* a number as Long or exact decimal, or CV_DROP */
static const struct cv *
cv_from_number(struct arena *ar, const json_t *j)
{
	struct cv	*v;
	char		 buf[64];
	double		 d;
	int64_t		 dec;

	if ((v = cedar_arena_alloc(ar, sizeof(*v))) == NULL)
		return NULL;
	if (json_is_integer(j)) {
		v->cv_t = CV_LONG;
		v->cv_u.l = json_integer_value(j);
		return v;
	}
	d = json_real_value(j);
	if (!(d >= -9.2e18 && d <= 9.2e18))
		return CV_DROP;
	if (d == (double)(int64_t)d) {
		v->cv_t = CV_LONG;
		v->cv_u.l = (int64_t)d;
		return v;
	}
	/* the shortest text that reads back as d, if it has <= 4 decimals */
	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d || strchr(buf, 'e') != NULL ||
	    cedar_decimal_parse(buf, strlen(buf), &dec) == -1)
		return CV_DROP;
	v->cv_t = CV_DECIMAL;
	v->cv_u.l = dec;
	return v;
}

/* a record being built: of entries with equal keys, the last one wins */
struct rb_entry {
	struct cedar_str	 re_k;
	const struct cv		*re_v;
	size_t			 re_seq;
};

struct rec_build {
	struct rb_entry		*rb_e;
	size_t			 rb_n;
	size_t			 rb_cap;
};

static int
rb_add(struct arena *ar, struct rec_build *rb, const char *prefix,
    const char *key, size_t klen, const struct cv *v)
{
	struct rb_entry		*e;
	size_t			 cap, plen;
	char			*k;

	if (v == CV_DROP)
		return 0;
	if (rb->rb_n == rb->rb_cap) {
		cap = rb->rb_cap == 0 ? 16 : rb->rb_cap * 2;
		if ((e = cedar_arena_array(ar, cap, sizeof(*e))) == NULL)
			return -1;
		if (rb->rb_n > 0)
			memcpy(e, rb->rb_e, rb->rb_n * sizeof(*e));
		rb->rb_e = e;
		rb->rb_cap = cap;
	}
	plen = strlen(prefix);
	if (klen > ARENA_LIMIT ||
	    (k = cedar_arena_alloc(ar, plen + klen + 1)) == NULL)
		return -1;
	memcpy(k, prefix, plen);
	memcpy(k + plen, key, klen);
	k[plen + klen] = '\0';
	rb->rb_e[rb->rb_n].re_k.cs_ptr = k;
	rb->rb_e[rb->rb_n].re_k.cs_len = plen + klen;
	rb->rb_e[rb->rb_n].re_v = v;
	rb->rb_e[rb->rb_n].re_seq = rb->rb_n;
	rb->rb_n++;
	return 0;
}

static int
rb_cmp(const void *a, const void *b)
{
	const struct rb_entry	*x = a, *y = b;
	int			 c;

	if ((c = cedar_str_cmp(&x->re_k, &y->re_k)) != 0)
		return c;
	return x->re_seq < y->re_seq ? -1 : x->re_seq > y->re_seq;
}

static const struct cv *
rb_finish(struct arena *ar, struct rec_build *rb)
{
	struct rb_entry		*e;
	struct cv		*r;
	size_t			 i, n;

	if ((r = cedar_arena_alloc(ar, sizeof(*r))) == NULL)
		return NULL;
	e = rb->rb_e;
	if (rb->rb_n > 0)
		qsort(e, rb->rb_n, sizeof(*e), rb_cmp);
	r->cv_t = CV_RECORD;
	if ((r->cv_u.rec.k = cedar_arena_array(ar, rb->rb_n + 1,
	    sizeof(struct cedar_str))) == NULL ||
	    (r->cv_u.rec.v = cedar_arena_array(ar, rb->rb_n + 1,
	    sizeof(struct cv *))) == NULL)
		return NULL;
	n = 0;
	for (i = 0; i < rb->rb_n; i++) {
		if (n > 0 && cedar_str_eq(&r->cv_u.rec.k[n - 1], &e[i].re_k))
			n--;
		r->cv_u.rec.k[n] = e[i].re_k;
		r->cv_u.rec.v[n] = e[i].re_v;
		n++;
	}
	r->cv_u.rec.n = n;
	return r;
}

/* plain JSON (no escapes) as a Cedar value, CV_DROP, or NULL: no memory */
static const struct cv *
cv_from_plain(struct arena *ar, const json_t *j, int depth)
{
	struct rec_build	 rb;
	struct cv		*v;
	const struct cv		*x;
	const char		*k;
	size_t			 klen, i, n;
	json_t			*m;

	if (depth > CLAIM_DEPTH_MAX)
		return CV_DROP;
	switch (json_typeof(j)) {
	case JSON_TRUE:
		return &cedar_cv_true;
	case JSON_FALSE:
		return &cedar_cv_false;
	case JSON_INTEGER:
	case JSON_REAL:
		return cv_from_number(ar, j);
	case JSON_STRING:
		if ((v = cedar_arena_alloc(ar, sizeof(*v))) == NULL ||
		    cedar_arena_str(ar, json_string_value(j),
		    json_string_length(j), &v->cv_u.s) == -1)
			return NULL;
		v->cv_t = CV_STRING;
		return v;
	case JSON_ARRAY:
		if ((v = cedar_arena_alloc(ar, sizeof(*v))) == NULL ||
		    (v->cv_u.set.v = cedar_arena_array(ar,
		    json_array_size(j) + 1, sizeof(struct cv *))) == NULL)
			return NULL;
		v->cv_t = CV_SET;
		for (i = n = 0; i < json_array_size(j); i++) {
			if ((x = cv_from_plain(ar, json_array_get(j, i),
			    depth + 1)) == NULL)
				return NULL;
			if (x != CV_DROP)
				v->cv_u.set.v[n++] = x;
		}
		v->cv_u.set.n = n;
		return v;
	case JSON_OBJECT:
		memset(&rb, 0, sizeof(rb));
		json_object_keylen_foreach((json_t *)j, k, klen, m) {
			if ((x = cv_from_plain(ar, m, depth + 1)) == NULL ||
			    rb_add(ar, &rb, "", k, klen, x) == -1)
				return NULL;
		}
		return rb_finish(ar, &rb);
	default:
		return CV_DROP;
	}
}

struct cedar_principal {
	struct cedar_entities	*cp_ents;	/* principal over the store */
	struct cedar_uid	 cp_uid;
	const struct cv		*cp_claims;	/* claim_*, for contexts */
};

/* a claim by flat name, else by dotted path through objects */
static const json_t *
claim_get(const json_t *claims, const char *name)
{
	const json_t	*j;
	const char	*dot;

	if ((j = json_object_get(claims, name)) != NULL)
		return j;
	for (j = claims; (dot = strchr(name, '.')) != NULL; name = dot + 1)
		if ((j = json_object_getn(j, name, (size_t)(dot - name))) ==
		    NULL || !json_is_object(j))
			return NULL;
	return j != claims ? json_object_get(j, name) : NULL;
}

static int
uids_add(struct arena *ar, struct cedar_uid **v, size_t *n, size_t *cap,
    const struct cedar_uid *u)
{
	struct cedar_uid	*nv;
	size_t			 i;

	for (i = 0; i < *n; i++)
		if (cedar_uid_eq(&(*v)[i], u))
			return 0;
	if (*n == *cap) {
		*cap = *cap == 0 ? 8 : *cap * 2;
		if ((nv = cedar_arena_array(ar, *cap, sizeof(*nv))) == NULL)
			return -1;
		if (*n > 0)
			memcpy(nv, *v, *n * sizeof(*nv));
		*v = nv;
	}
	(*v)[(*n)++] = *u;
	return 0;
}

/* the strings of an array claim as parents of type */
static int
groups_add(struct arena *ar, const json_t *a, const char *type,
    struct cedar_uid **v, size_t *n, size_t *cap)
{
	struct cedar_uid	 u;
	size_t			 i;
	json_t			*g;

	json_array_foreach(a, i, g) {
		if (!json_is_string(g))
			continue;
		if (cedar_arena_str(ar, type, strlen(type), &u.cu_type) == -1 ||
		    cedar_arena_str(ar, json_string_value(g),
		    json_string_length(g), &u.cu_id) == -1 ||
		    uids_add(ar, v, n, cap, &u) == -1)
			return -1;
	}
	return 0;
}

/*
 * An entity of the request layer: the store's entity of that UID, if
 * any, gives its attributes first (the request's win) and its parents
 * (joined with the request's), so entitiesJson can add owner or tenant
 * attributes and hierarchy to a Client or a Tool without being hidden.
 */
static int
layer_put(struct cedar_entities *layer, const struct cedar_uid *uid,
    struct rec_build *rb, struct cedar_uid *parents, size_t nparents,
    size_t cap)
{
	struct arena		*ar = &layer->ce_arena;
	struct rec_build	 all;
	const struct ent	*old;
	const struct cv		*r;
	struct ent		*e;
	size_t			 i;

	memset(&all, 0, sizeof(all));
	if ((old = cedar_ents_find(layer->ce_base, uid)) != NULL) {
		r = old->en_attrs;
		for (i = 0; i < r->cv_u.rec.n; i++)
			if (rb_add(ar, &all, "", r->cv_u.rec.k[i].cs_ptr,
			    r->cv_u.rec.k[i].cs_len, r->cv_u.rec.v[i]) == -1)
				return -1;
		for (i = 0; i < old->en_nparents; i++)
			if (uids_add(ar, &parents, &nparents, &cap,
			    &old->en_parents[i]) == -1)
				return -1;
	}
	for (i = 0; i < rb->rb_n; i++)
		if (rb_add(ar, &all, "", rb->rb_e[i].re_k.cs_ptr,
		    rb->rb_e[i].re_k.cs_len, rb->rb_e[i].re_v) == -1)
			return -1;
	if ((e = cedar_arena_alloc(ar, sizeof(*e))) == NULL ||
	    (e->en_attrs = rb_finish(ar, &all)) == NULL ||
	    cedar_ents_grow(layer, layer->ce_n + 1) == -1)
		return -1;
	e->en_uid = *uid;
	e->en_hash = cedar_uid_hash(uid);
	e->en_parents = parents;
	e->en_nparents = nparents;
	cedar_ents_put(layer, e);
	return 0;
}

struct cedar_principal *
cedar_principal_new(const struct cedar_authz_conf *conf,
    const struct cedar_entities *store, const json_t *claims, char *err,
    size_t errsz)
{
	static const char *const fallback[] = {
		"groups", "roles", "cognito:groups"
	};
	struct cedar_principal	*cp;
	struct arena		*ar;
	struct rec_build	 rb;
	struct cedar_uid	*parents;
	const struct cv		*v;
	const json_t		*sub, *g;
	const char		*k, *type;
	size_t			 klen, i, np, cap;
	json_t			*m;

	if (!json_is_object(claims) ||
	    !json_is_string(sub = json_object_get(claims, "sub")) ||
	    json_string_length(sub) == 0) {
		cedar_json_errf(err, errsz, "no subject (sub) to authorize");
		return NULL;
	}
	if ((cp = calloc(1, sizeof(*cp))) == NULL ||
	    (cp->cp_ents = cedar_entities_new(store)) == NULL)
		goto oom;
	ar = &cp->cp_ents->ce_arena;
	if (cedar_arena_str(ar, "Client", 6, &cp->cp_uid.cu_type) == -1 ||
	    cedar_arena_str(ar, json_string_value(sub), json_string_length(sub),
	    &cp->cp_uid.cu_id) == -1)
		goto oom;
	/* every claim as claim_<name>, but the session-internal tsid */
	memset(&rb, 0, sizeof(rb));
	json_object_keylen_foreach((json_t *)claims, k, klen, m) {
		if (klen == 4 && memcmp(k, "tsid", 4) == 0)
			continue;
		if ((v = cv_from_plain(ar, m, 1)) == NULL ||
		    rb_add(ar, &rb, "claim_", k, klen, v) == -1)
			goto oom;
	}
	if ((cp->cp_claims = rb_finish(ar, &rb)) == NULL)
		goto oom;
	/* parents: the group claim (or the usual names), the role claim */
	type = conf->ca_group_type != NULL ? conf->ca_group_type : "THVGroup";
	parents = NULL;
	np = cap = 0;
	g = NULL;
	if (conf->ca_group_claim != NULL)
		g = claim_get(claims, conf->ca_group_claim);
	for (i = 0; (g == NULL || !json_is_array(g)) &&
	    i < sizeof(fallback) / sizeof(fallback[0]); i++)
		g = json_object_get(claims, fallback[i]);
	if (json_is_array(g) &&
	    groups_add(ar, g, type, &parents, &np, &cap) == -1)
		goto oom;
	if (conf->ca_role_claim != NULL &&
	    json_is_array(g = claim_get(claims, conf->ca_role_claim)) &&
	    groups_add(ar, g, type, &parents, &np, &cap) == -1)
		goto oom;
	if (layer_put(cp->cp_ents, &cp->cp_uid, &rb, parents, np, cap) == -1)
		goto oom;
	return cp;
oom:
	cedar_json_errf(err, errsz, "out of memory");
	cedar_principal_free(cp);
	return NULL;
}

void
cedar_principal_free(struct cedar_principal *cp)
{
	if (cp == NULL)
		return;
	cedar_entities_free(cp->cp_ents);
	free(cp);
}

static const struct {
	const char	*k_type;
	const char	*k_action;
	const char	*k_operation;
	const char	*k_feature;
} kinds[] = {
	[CEDAR_TOOL] = { "Tool", "call_tool", "call", "tool" },
	[CEDAR_PROMPT] = { "Prompt", "get_prompt", "get", "prompt" },
	[CEDAR_RESOURCE] = { "Resource", "read_resource", "read", "resource" },
};

static const char *const hints[] = {
	"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"
};

/* a string as a Cedar value in ar */
static const struct cv *
cv_string(struct arena *ar, const char *s)
{
	struct cv	*v;

	if ((v = cedar_arena_alloc(ar, sizeof(*v))) == NULL ||
	    cedar_arena_str(ar, s, strlen(s), &v->cv_u.s) == -1)
		return NULL;
	v->cv_t = CV_STRING;
	return v;
}

/* arg_<k> for scalars, arg_<k>_present for objects and arrays, into rb */
static int
args_add(struct arena *ar, struct rec_build *rb, const json_t *args)
{
	const struct cv	*v;
	const char	*k;
	char		*pk;
	size_t		 klen;
	json_t		*m;

	json_object_keylen_foreach((json_t *)args, k, klen, m) {
		if (json_is_object(m) || json_is_array(m))
			continue;
		if ((v = cv_from_plain(ar, m, CLAIM_DEPTH_MAX)) == NULL ||
		    rb_add(ar, rb, "arg_", k, klen, v) == -1)
			return -1;
	}
	/* after the scalars: an argument named x_present can't deny x */
	json_object_keylen_foreach((json_t *)args, k, klen, m) {
		if (!json_is_object(m) && !json_is_array(m))
			continue;
		if ((pk = cedar_arena_alloc(ar, klen + 9)) == NULL)
			return -1;
		memcpy(pk, k, klen);
		memcpy(pk + klen, "_present", 8);
		if (rb_add(ar, rb, "arg_", pk, klen + 8, &cedar_cv_true) == -1)
			return -1;
	}
	return 0;
}

struct cedar_access {
	struct cedar_entities	*ca_ents;	/* resource, action */
	struct cedar_request	 ca_req;
	const struct cv		*ca_context;
};

struct cedar_access *
cedar_access_new(const struct cedar_authz_conf *conf,
    const struct cedar_principal *cp, const struct cedar_call *call,
    char *err, size_t errsz)
{
	struct cedar_access	*ca;
	struct arena		*ar;
	struct rec_build	 rb, ctx, act;
	struct cedar_uid	*parents, mcp;
	const json_t		*h;
	const char		*server;
	size_t			 i, np, cap;

	if ((unsigned)call->cc_kind >= sizeof(kinds) / sizeof(kinds[0]) ||
	    call->cc_name == NULL) {
		cedar_json_errf(err, errsz, "no such kind of call");
		return NULL;
	}
	if ((ca = calloc(1, sizeof(*ca))) == NULL ||
	    (ca->ca_ents = cedar_entities_new(cp->cp_ents)) == NULL)
		goto oom;
	ar = &ca->ca_ents->ce_arena;
	ca->ca_req.cr_principal = cp->cp_uid;
	if (cedar_arena_str(ar, "Action", 6,
	    &ca->ca_req.cr_action.cu_type) == -1 ||
	    cedar_arena_str(ar, kinds[call->cc_kind].k_action,
	    strlen(kinds[call->cc_kind].k_action),
	    &ca->ca_req.cr_action.cu_id) == -1 ||
	    cedar_arena_str(ar, kinds[call->cc_kind].k_type,
	    strlen(kinds[call->cc_kind].k_type),
	    &ca->ca_req.cr_resource.cu_type) == -1 ||
	    cedar_arena_str(ar, call->cc_name, strlen(call->cc_name),
	    &ca->ca_req.cr_resource.cu_id) == -1)
		goto oom;
	/* the resource: the view's hints, then what they can't override */
	memset(&rb, 0, sizeof(rb));
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (json_is_boolean(h = json_object_get(call->cc_annotations,
		    hints[i])) && rb_add(ar, &rb, "", hints[i],
		    strlen(hints[i]), CV_BOOLEAN(json_is_true(h))) == -1)
			goto oom;
	if (rb_add(ar, &rb, "", "name", 4, cv_string(ar, call->cc_name)) ==
	    -1 || rb_add(ar, &rb, "", "operation", 9,
	    cv_string(ar, kinds[call->cc_kind].k_operation)) == -1 ||
	    rb_add(ar, &rb, "", "feature", 7,
	    cv_string(ar, kinds[call->cc_kind].k_feature)) == -1 ||
	    (call->cc_kind == CEDAR_RESOURCE && rb_add(ar, &rb, "", "uri", 3,
	    cv_string(ar, call->cc_name)) == -1))
		goto oom;
	for (i = 0; i < rb.rb_n; i++)
		if (rb.rb_e[i].re_v == NULL)
			goto oom;
	memset(&ctx, 0, sizeof(ctx));
	if (json_is_object(call->cc_arguments) &&
	    (args_add(ar, &rb, call->cc_arguments) == -1 ||
	    args_add(ar, &ctx, call->cc_arguments) == -1))
		goto oom;
	parents = NULL;
	np = cap = 0;
	server = call->cc_server != NULL ? call->cc_server : conf->ca_server;
	if (server != NULL) {
		if (cedar_arena_str(ar, "MCP", 3, &mcp.cu_type) == -1 ||
		    cedar_arena_str(ar, server, strlen(server),
		    &mcp.cu_id) == -1 ||
		    uids_add(ar, &parents, &np, &cap, &mcp) == -1)
			goto oom;
	}
	if (layer_put(ca->ca_ents, &ca->ca_req.cr_resource, &rb, parents, np,
	    cap) == -1)
		goto oom;
	/* the action, with its operation, and the store's hierarchy */
	memset(&act, 0, sizeof(act));
	if (rb_add(ar, &act, "", "operation", 9,
	    cv_string(ar, kinds[call->cc_kind].k_operation)) == -1 ||
	    act.rb_e[0].re_v == NULL ||
	    layer_put(ca->ca_ents, &ca->ca_req.cr_action, &act, NULL, 0,
	    0) == -1)
		goto oom;
	/* the context: claim_* and arg_* */
	for (i = 0; i < cp->cp_claims->cv_u.rec.n; i++)
		if (rb_add(ar, &ctx, "", cp->cp_claims->cv_u.rec.k[i].cs_ptr,
		    cp->cp_claims->cv_u.rec.k[i].cs_len,
		    cp->cp_claims->cv_u.rec.v[i]) == -1)
			goto oom;
	if ((ca->ca_context = rb_finish(ar, &ctx)) == NULL)
		goto oom;
	return ca;
oom:
	cedar_json_errf(err, errsz, "out of memory");
	cedar_access_free(ca);
	return NULL;
}

void
cedar_access_free(struct cedar_access *ca)
{
	if (ca == NULL)
		return;
	cedar_entities_free(ca->ca_ents);
	free(ca);
}

int
cedar_access_authorize(const struct cedar_policyset *ps,
    const struct cedar_access *ca, struct cedar_response *resp)
{
	return cedar_authorize_ctx(ps, ca->ca_ents, &ca->ca_req, ca->ca_context,
	    resp);
}
