/*
 * Authorization decisions and their cache (authz_rule.h).  Pure: no I/O, no
 * global state; the worker owns one cache (authz.c).
 *
 * A principal's entry is found by its scope (iss and sub) and a digest
 * of its claims, so a token with other claims (new groups) is another
 * entry; the whole cache belongs to one policy generation.  List
 * decisions are kept per item key and a hash of the item's text, so a
 * view rebuilt with other annotations is decided again; calls are
 * never cached (their arguments count).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "shared/config.h"
#include "proto/method.h"
#include "shared/cedar.h"
#include "shared/cedar_args.h"
#include "shared/cedar_request.h"
#include "worker/auth/authz_rule.h"

struct authz_item {
	uint64_t	 ai_hash;	/* of kind and key; 0: empty slot */
	uint64_t	 ai_text;	/* of the item's text */
	char		*ai_key;
	size_t		 ai_klen;
	uint8_t		 ai_kind;
	uint8_t		 ai_allow;
};

struct authz_who {
	char			 aw_scope[64];
	unsigned char		 aw_digest[SHA256_DIGEST_LENGTH];
	json_t			*aw_claims;	/* the last claims found equal */
	uint64_t		 aw_used;	/* the cache's tick */
	struct cedar_principal	*aw_principal;
	struct authz_item	*aw_items;	/* open addressing */
	size_t			 aw_cap;	/* a power of 2, or 0 */
	size_t			 aw_n;
	struct authz_cache	*aw_cache;
};

struct authz_cache {
	const struct authz_conf	*ac_conf;
	uint64_t		 ac_gen;
	uint64_t		 ac_tick;
	uint64_t		 ac_evals;
	size_t			 ac_maxwho;
	size_t			 ac_maxitems;	/* of all principals */
	size_t			 ac_nitems;
	struct authz_who	*ac_who;
	size_t			 ac_nwho;
};

const struct mcp_method *
authz_target(const struct mcp_method *mm, const json_t *params,
    const json_t **itemp)
{
	const json_t	*ref;
	const char	*type;

	*itemp = params;
	if (mm == NULL || mm->mm_action != MCP_ACTION_OF_REF)
		return mm;
	ref = json_object_get(params, mm->mm_route_key);
	if ((type = json_string_value(json_object_get(ref, "type"))) == NULL)
		return mm;
	if (strcmp(type, "ref/prompt") == 0)
		mm = mcp_method_get(MCP_M_PROMPTS_GET);
	else if (strcmp(type, "ref/resource") == 0)
		mm = mcp_method_get(MCP_M_RESOURCES_READ);
	else
		return mm;
	*itemp = ref;
	return mm;
}

const char *
authz_message(const struct mcp_method *mm, const json_t *params)
{
	mm = authz_target(mm, params, &params);
	switch (mm != NULL ? mm->mm_action : MCP_ACTION_NONE) {
	case MCP_ACTION_CALL_TOOL:
		return "Forbidden: call denied by authorization policy";
	case MCP_ACTION_GET_PROMPT:
		return "Forbidden: prompt denied by authorization policy";
	default:
		return "Forbidden: read denied by authorization policy";
	}
}

int
authz_conf_init(struct authz_conf *ac, const struct config *cf)
{
	const struct config_authz *az = &cf->cf_inauth.ci_authz;

	memset(ac, 0, sizeof(*ac));
	if (!az->az_cedar || az->az_policies == NULL)
		return -1;
	ac->ac_policies = az->az_policies;
	ac->ac_entities = az->az_entities;
	ac->ac_cedar.ca_group_claim = az->az_group_claim;
	ac->ac_cedar.ca_role_claim = az->az_role_claim;
	ac->ac_cedar.ca_group_type = az->az_group_type;
	ac->ac_cedar.ca_server = cf->cf_name;
	return 0;
}

int
authz_decide(const struct authz_conf *ac, const struct cedar_principal *p,
    const struct cedar_call *call, char *why, size_t whysz)
{
	struct cedar_access	*a;
	struct cedar_response	 resp;
	char			 err[CEDAR_ERRLEN];
	int			 rc;

	if (why != NULL && whysz > 0)
		why[0] = '\0';
	if (p == NULL) {
		if (why != NULL)
			(void)snprintf(why, whysz, "no principal");
		return 0;
	}
	if ((a = cedar_access_new(&ac->ac_cedar, p, call, err,
	    sizeof(err))) == NULL) {
		if (why != NULL)
			(void)snprintf(why, whysz, "%s", err);
		return 0;
	}
	memset(&resp, 0, sizeof(resp));
	rc = cedar_access_authorize(ac->ac_policies, a, &resp);
	cedar_access_free(a);
	/* Cedar skips an erroring policy; vmcpd denies (fails closed) */
	if (rc == -1 || resp.cr_nerrors > 0) {
		if (why != NULL)
			(void)snprintf(why, whysz, "policy error: %s",
			    resp.cr_error);
		return 0;
	}
	return resp.cr_decision == CEDAR_ALLOW;
}

/* FNV-1a, never 0 (0 marks an empty slot) */
static uint64_t
authz_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n-- > 0) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * An item's text digest, to tell a changed item from its cached
 * decision: eight bytes a step (FNV-1a a byte a step cost the gate a
 * thousand instructions a call), each word mixed as MurmurHash3's
 * 64-bit lane mixes it, the length folded in and finished by its fmix64.
 */
static uint64_t
authz_text_hash(const void *p, size_t n)
{
	const unsigned char	*s = p;
	uint64_t		 h = 0x9e3779b97f4a7c15ULL ^ n, w;
	size_t			 i;

	for (i = 0; i < n; i += 8) {
		if (n - i >= 8)
			memcpy(&w, s + i, 8);
		else {
			unsigned char tail[8] = { 0 };

			memcpy(tail, s + i, n - i);
			memcpy(&w, tail, 8);
		}
		w *= 0x87c37b91114253d5ULL;
		w = w << 31 | w >> 33;
		w *= 0x4cf5ad432745937fULL;
		h ^= w;
		h = (h << 27 | h >> 37) * 5 + 0x52dce729;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t
authz_key_hash(enum view_kind k, const char *key, size_t klen)
{
	unsigned char	kb = (unsigned char)k;
	uint64_t	h;

	h = authz_fnv(authz_fnv(0xcbf29ce484222325ULL, &kb, 1), key, klen);
	return h == 0 ? 1 : h;
}

struct authz_cache *
authz_cache_new(size_t maxwho, size_t maxitems)
{
	struct authz_cache *c;

	if (maxwho == 0 || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->ac_who = calloc(maxwho, sizeof(*c->ac_who))) == NULL) {
		free(c);
		return NULL;
	}
	c->ac_maxwho = maxwho;
	c->ac_maxitems = maxitems < 16 ? 16 : maxitems;
	return c;
}

static void
authz_items_clear(struct authz_who *w)
{
	size_t i;

	for (i = 0; i < w->aw_cap; i++)
		free(w->aw_items[i].ai_key);
	if (w->aw_cache != NULL)
		w->aw_cache->ac_nitems -= w->aw_n;
	free(w->aw_items);
	w->aw_items = NULL;
	w->aw_cap = w->aw_n = 0;
}

static void
authz_who_clear(struct authz_who *w)
{
	authz_items_clear(w);
	cedar_principal_free(w->aw_principal);
	json_decref(w->aw_claims);
	memset(w, 0, sizeof(*w));
}

void
authz_cache_free(struct authz_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->ac_nwho; i++)
		authz_who_clear(&c->ac_who[i]);
	free(c->ac_who);
	free(c);
}

uint64_t
authz_cache_evals(const struct authz_cache *c)
{
	return c->ac_evals;
}

/* SHA-256 of the claims as compact JSON with sorted keys */
static int
authz_claims_digest(const json_t *claims, unsigned char *d)
{
	char *s;

	if ((s = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY)) == NULL)
		return -1;
	SHA256((const unsigned char *)s, strlen(s), d);
	free(s);
	return 0;
}

struct authz_who *
authz_cache_who(struct authz_cache *c, const struct authz_conf *ac,
    uint64_t gen, const char *scope, const json_t *claims)
{
	unsigned char		 d[SHA256_DIGEST_LENGTH];
	struct authz_who	*w, *old;
	char			 err[CEDAR_ERRLEN];
	size_t			 i;

	if (c->ac_conf != ac || c->ac_gen != gen) {
		for (i = 0; i < c->ac_nwho; i++)
			authz_who_clear(&c->ac_who[i]);
		c->ac_nwho = 0;
		c->ac_conf = ac;
		c->ac_gen = gen;
	}
	if (claims == NULL || scope == NULL ||
	    strlen(scope) >= sizeof(w->aw_scope))
		return NULL;
	c->ac_tick++;
	/*
	 * The same claims object as last time (a token remembered by
	 * auth.c): no digest.  The entry holds a reference, so the address
	 * names no other claims meanwhile; verified claims never change.
	 */
	for (i = 0; i < c->ac_nwho; i++) {
		w = &c->ac_who[i];
		if (w->aw_claims == claims && strcmp(w->aw_scope, scope) == 0) {
			w->aw_used = c->ac_tick;
			return w;
		}
	}
	if (authz_claims_digest(claims, d) == -1)
		return NULL;
	for (i = 0; i < c->ac_nwho; i++) {
		w = &c->ac_who[i];
		if (strcmp(w->aw_scope, scope) == 0 &&
		    memcmp(w->aw_digest, d, sizeof(d)) == 0) {
			json_decref(w->aw_claims);
			w->aw_claims = json_incref((json_t *)claims);
			w->aw_used = c->ac_tick;
			return w;
		}
	}
	if (c->ac_nwho < c->ac_maxwho)
		w = &c->ac_who[c->ac_nwho++];
	else {
		for (w = old = c->ac_who, i = 1; i < c->ac_nwho; i++)
			if (c->ac_who[i].aw_used < old->aw_used)
				old = &c->ac_who[i];
		w = old;
		authz_who_clear(w);
	}
	if ((w->aw_principal = cedar_principal_new(&ac->ac_cedar,
	    ac->ac_entities, claims, err, sizeof(err))) == NULL) {
		/* the slot stays free: the last one, or swapped with it */
		*w = c->ac_who[--c->ac_nwho];
		memset(&c->ac_who[c->ac_nwho], 0, sizeof(*w));
		return NULL;
	}
	(void)snprintf(w->aw_scope, sizeof(w->aw_scope), "%s", scope);
	memcpy(w->aw_digest, d, sizeof(d));
	w->aw_claims = json_incref((json_t *)claims);
	w->aw_used = c->ac_tick;
	w->aw_cache = c;
	return w;
}

/* every principal's list decisions dropped (their principals stay) */
static void
authz_cache_forget(struct authz_cache *c)
{
	size_t i;

	for (i = 0; i < c->ac_nwho; i++)
		authz_items_clear(&c->ac_who[i]);
}

/* the slot of kind and key: its own, or the empty one it would take */
static struct authz_item *
authz_item_slot(struct authz_who *w, uint64_t h, enum view_kind k,
    const char *key, size_t klen)
{
	struct authz_item	*it;
	size_t			 i;

	for (i = h & (w->aw_cap - 1);; i = (i + 1) & (w->aw_cap - 1)) {
		it = &w->aw_items[i];
		if (it->ai_hash == 0 || (it->ai_hash == h && it->ai_kind == k &&
		    it->ai_klen == klen && memcmp(it->ai_key, key, klen) == 0))
			return it;
	}
}

static int
authz_items_grow(struct authz_who *w)
{
	struct authz_item	*old = w->aw_items, *it;
	size_t			 ocap = w->aw_cap, i;

	if ((w->aw_items = calloc(ocap == 0 ? 64 : ocap * 2,
	    sizeof(*w->aw_items))) == NULL) {
		w->aw_items = old;
		return -1;
	}
	w->aw_cap = ocap == 0 ? 64 : ocap * 2;
	for (i = 0; i < ocap; i++) {
		if (old[i].ai_hash == 0)
			continue;
		it = authz_item_slot(w, old[i].ai_hash, old[i].ai_kind,
		    old[i].ai_key, old[i].ai_klen);
		*it = old[i];
	}
	free(old);
	return 0;
}

/* a listed item's decision, evaluated */
static int
authz_item_eval(struct authz_who *w, enum view_kind k, const char *name,
    const char *text, size_t tlen)
{
	struct cedar_call	 call;
	json_t			*item = NULL;
	int			 allow;

	memset(&call, 0, sizeof(call));
	call.cc_name = name;
	switch (k) {
	case VIEW_KIND_TOOLS:
		call.cc_kind = CEDAR_TOOL;
		/* the view's annotations, never a client's */
		if ((item = json_loadb(text, tlen, 0, NULL)) == NULL)
			return 0;
		call.cc_annotations = json_object_get(item, "annotations");
		break;
	case VIEW_KIND_PROMPTS:
		call.cc_kind = CEDAR_PROMPT;
		break;
	default:
		/* a resource by its URI, a template by its uriTemplate */
		call.cc_kind = CEDAR_RESOURCE;
		break;
	}
	w->aw_cache->ac_evals++;
	allow = authz_decide(w->aw_cache->ac_conf, w->aw_principal, &call,
	    NULL, 0);
	json_decref(item);
	return allow;
}

int
authz_who_item(struct authz_who *w, enum view_kind k, const char *key,
    size_t klen, const char *text, size_t tlen)
{
	struct authz_item	*it;
	uint64_t		 h, th;
	char			*name;
	int			 allow;

	if (w == NULL || k >= VIEW_KIND_N)
		return 0;
	h = authz_key_hash(k, key, klen);
	th = authz_text_hash(text, tlen);
	if (w->aw_cap > 0) {
		it = authz_item_slot(w, h, k, key, klen);
		if (it->ai_hash != 0 && it->ai_text == th)
			return it->ai_allow;
	}
	/* a key with a NUL names nothing Cedar can be asked about */
	if (memchr(key, '\0', klen) != NULL ||
	    (name = strndup(key, klen)) == NULL)
		return 0;
	allow = authz_item_eval(w, k, name, text, tlen);
	/* memory is bounded: past the cap, every decision is made anew */
	if (w->aw_cache->ac_nitems >= w->aw_cache->ac_maxitems)
		authz_cache_forget(w->aw_cache);
	if ((w->aw_n + 1) * 2 > w->aw_cap && authz_items_grow(w) == -1) {
		free(name);
		return allow;
	}
	it = authz_item_slot(w, h, k, key, klen);
	if (it->ai_hash == 0) {
		it->ai_hash = h;
		it->ai_kind = (uint8_t)k;
		it->ai_key = name;
		it->ai_klen = klen;
		w->aw_n++;
		w->aw_cache->ac_nitems++;
	} else
		free(name);
	it->ai_text = th;
	it->ai_allow = (uint8_t)allow;
	return allow;
}

int
authz_who_call(struct authz_who *w, const struct cedar_call *call,
    char *why, size_t whysz)
{
	if (w == NULL) {
		if (why != NULL)
			(void)snprintf(why, whysz, "no principal");
		return 0;
	}
	w->aw_cache->ac_evals++;
	return authz_decide(w->aw_cache->ac_conf, w->aw_principal, call, why,
	    whysz);
}

int
authz_filter_item(void *arg, enum view_kind k, const char *key, size_t klen,
    const char *text, size_t tlen)
{
	struct authz_filter *f = arg;

	return authz_who_item(f->af_who, k, key, klen, text, tlen);
}

int
authz_who_tool(struct authz_who *w, const char *name, size_t namelen,
    const char *item, size_t ilen, const char *params, size_t plen,
    char *why, size_t whysz)
{
	const struct cedar_policyset	*ps;
	struct cedar_call		 call;
	json_t				*it = NULL, *args = NULL;
	char				*nm = NULL;
	int				 allow = 0;

	if (why != NULL && whysz > 0)
		why[0] = '\0';
	if (w == NULL) {
		if (why != NULL)
			(void)snprintf(why, whysz, "no principal");
		return 0;
	}
	ps = w->aw_cache->ac_conf->ac_policies;
	/*
	 * Nothing of the call counts but its tool: the decision of the
	 * tool as listed (cached), which is the call's with no arguments.
	 */
	if (cedar_policyset_args(ps) == CEDAR_ARGS_NONE && item != NULL) {
		if ((allow = authz_who_item(w, VIEW_KIND_TOOLS, name, namelen,
		    item, ilen)) == 0 && why != NULL)
			(void)snprintf(why, whysz, "the tool's decision");
		return allow;
	}
	memset(&call, 0, sizeof(call));
	call.cc_kind = CEDAR_TOOL;
	if (memchr(name, '\0', namelen) != NULL ||
	    (nm = strndup(name, namelen)) == NULL) {
		if (why != NULL)
			(void)snprintf(why, whysz, "no name");
		goto done;
	}
	call.cc_name = nm;
	/* the view's annotations, never the client's */
	if (item != NULL) {
		if ((it = json_loadb(item, ilen, 0, NULL)) == NULL) {
			if (why != NULL)
				(void)snprintf(why, whysz,
				    "the view can't be read");
			goto done;
		}
		call.cc_annotations = json_object_get(it, "annotations");
	}
	if (cedar_args_text(ps, params, plen, &args) == -1) {
		if (why != NULL)
			(void)snprintf(why, whysz,
			    "the arguments can't be read");
		goto done;
	}
	call.cc_arguments = args;
	allow = authz_who_call(w, &call, why, whysz);
done:
	json_decref(args);
	json_decref(it);
	free(nm);
	return allow;
}
