/*
 * Reserved _meta keys (MCP 2026-07-28, Overview, section _meta) and the
 * Modern result envelope (Overview, section ResultType; Caching):
 * resultType, serverInfo, cache hints.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/classify.h"
#include "proto/meta.h"
#include "proto/jsonspan.h"

/* proto_meta_reserved() on a key of n bytes (not NUL-terminated) */
static int
meta_reserved(const char *key, size_t n)
{
	const char	*slash, *l2, *end;
	size_t		 l2n;

	/* "prefix/name": the prefix is dot-separated labels before '/' */
	if ((slash = memchr(key, '/', n)) == NULL)
		return 0;
	if ((l2 = memchr(key, '.', (size_t)(slash - key))) == NULL)
		return 0;
	l2++;
	if ((end = memchr(l2, '.', (size_t)(slash - l2))) == NULL)
		end = slash;
	l2n = (size_t)(end - l2);
	return (l2n == 20 && memcmp(l2, "modelcontextprotocol", l2n) == 0) ||
	    (l2n == 3 && memcmp(l2, "mcp", l2n) == 0);
}

int
proto_meta_reserved(const char *key)
{
	return key != NULL && meta_reserved(key, strlen(key));
}

#define META_LIT_IS(k, n, lit) \
	((n) == sizeof(lit) - 1 && memcmp((k), (lit), (n)) == 0)

/*
 * Per-hop keys (protocolVersion, serverInfo, subscriptionId, ...) are
 * vmcpd's to set on each leg; trace context, vendor keys and the two
 * end-to-end task keys travel.
 */
static int
meta_dropped(const char *key, size_t n)
{
	return meta_reserved(key, n) &&
	    !META_LIT_IS(key, n, "io.modelcontextprotocol/related-task") &&
	    !META_LIT_IS(key, n, "io.modelcontextprotocol/"
	    "model-immediate-response");
}

void
proto_meta_strip(json_t *meta)
{
	const char	*k;
	json_t		*v;
	void		*tmp;

	if (!json_is_object(meta))
		return;
	json_object_foreach_safe(meta, tmp, k, v)
		if (meta_dropped(k, strlen(k)))
			(void)json_object_del(meta, k);
}

int
proto_meta_text_dropped(const char *json, size_t len)
{
	struct proto_span	m[8];
	size_t			i, n;

	if (proto_json_members(json, len, m, 8, &n) == -1)
		return 0;
	for (i = 0; i < n; i++)
		if (m[i].ps_key == NULL ||
		    !meta_dropped(m[i].ps_key, m[i].ps_keylen))
			return 0;
	return 1;
}

json_t *
proto_modern_result(json_t *result, const char *result_type,
    const json_t *server_info, long long ttl_ms, const char *cache_scope)
{
	json_t *meta, *si;

	if (result == NULL && (result = json_object()) == NULL)
		return NULL;
	if (!json_is_object(result))
		goto fail;
	if (json_object_set_new(result, "resultType",
	    json_string(result_type != NULL ? result_type : "complete")) == -1)
		goto fail;
	if (server_info != NULL) {
		meta = json_object_get(result, "_meta");
		if (!json_is_object(meta)) {
			if ((meta = json_object()) == NULL ||
			    json_object_set_new(result, "_meta", meta) == -1)
				goto fail;
		}
		if ((si = json_deep_copy(server_info)) == NULL ||
		    json_object_set_new(meta, MCP_META_SERVER_INFO, si) == -1)
			goto fail;
	}
	if (ttl_ms >= 0 && json_object_set_new(result, "ttlMs",
	    json_integer((json_int_t)ttl_ms)) == -1)
		goto fail;
	if (cache_scope != NULL && json_object_set_new(result, "cacheScope",
	    json_string(cache_scope)) == -1)
		goto fail;
	return result;

fail:
	json_decref(result);
	return NULL;
}

int
proto_params_strip_meta(json_t *params)
{
	json_t *meta;

	if ((meta = json_object_get(params, "_meta")) == NULL)
		return 0;
	/* a copy: the caller's params may share it with the client's */
	if ((meta = json_copy(meta)) == NULL)
		return -1;
	proto_meta_strip(meta);
	if (json_object_size(meta) == 0)
		(void)json_object_del(params, "_meta");
	else
		(void)json_object_set(params, "_meta", meta);
	json_decref(meta);
	return 0;
}

/* room in *out for n more bytes and a NUL */
static int
meta_text_reserve(char **out, size_t *len, size_t *cap, size_t n)
{
	char	*nb;
	size_t	 ncap;

	if (*len + n + 1 > *cap) {
		ncap = (*len + n + 1) * 2;
		if ((nb = realloc(*out, ncap)) == NULL)
			return -1;
		*out = nb;
		*cap = ncap;
	}
	return 0;
}

int
proto_text_add(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (meta_text_reserve(out, len, cap, n) == -1)
		return -1;
	memcpy(*out + *len, s, n);
	*len += n;
	(*out)[*len] = '\0';
	return 0;
}

int
proto_text_add_member(char **out, size_t *len, size_t *cap, int *first,
    const struct proto_span *m)
{
	size_t	 n = (*first ? 0 : 1) + m->ps_keylen + 3 + m->ps_vallen;
	char	*p;

	/* the room for all of it at once, then plain copies */
	if (meta_text_reserve(out, len, cap, n) == -1)
		return -1;
	p = *out + *len;
	if (!*first)
		*p++ = ',';
	*p++ = '"';
	memcpy(p, m->ps_key, m->ps_keylen);
	p += m->ps_keylen;
	*p++ = '"';
	*p++ = ':';
	memcpy(p, m->ps_val, m->ps_vallen);
	*len += n;
	(*out)[*len] = '\0';
	*first = 0;
	return 0;
}

#define META_MEMBERS	16

char *
proto_params_strip_meta_text(const char *params, size_t plen,
    const char *name, size_t namelen, size_t *outlen)
{
	struct proto_span	 named;
	struct proto_span	 p[META_MEMBERS], m[META_MEMBERS];
	const struct proto_span	*meta = NULL;
	char			*out = NULL, *mt = NULL;
	size_t			 np, nm = 0, i, len = 0, cap = 0, mlen = 0;
	size_t			 mcap = 0;
	int			 first = 1, mfirst = 1;

	if (proto_json_members(params, plen, p, META_MEMBERS, &np) == -1)
		return NULL;
	for (i = 0; i < np; i++) {
		if (p[i].ps_key == NULL)
			return NULL;
		if (p[i].ps_keylen == 5 && memcmp(p[i].ps_key, "_meta", 5) == 0)
			meta = &p[i];
	}
	if (meta != NULL && meta->ps_val[0] == '{') {
		if (proto_json_members(meta->ps_val, meta->ps_vallen, m,
		    META_MEMBERS, &nm) == -1)
			return NULL;
		for (i = 0; i < nm; i++)
			if (m[i].ps_key == NULL || m[i].ps_keylen >= 256)
				return NULL;
		if (proto_text_add(&mt, &mlen, &mcap, "{", 1) == -1)
			goto fail;
		for (i = 0; i < nm; i++)
			if (!meta_dropped(m[i].ps_key, m[i].ps_keylen) &&
			    proto_text_add_member(&mt, &mlen, &mcap, &mfirst,
			    &m[i]) == -1)
				goto fail;
		if (proto_text_add(&mt, &mlen, &mcap, "}", 1) == -1)
			goto fail;
	}
	if (proto_text_add(&out, &len, &cap, "{", 1) == -1)
		goto fail;
	for (i = 0; i < np; i++) {
		named = p[i];
		if (&p[i] == meta) {
			/* nothing left (or no object): no _meta at all */
			if (mt == NULL || mfirst)
				continue;
			named.ps_val = mt;
			named.ps_vallen = mlen;
		} else if (name != NULL && named.ps_keylen == 4 &&
		    memcmp(named.ps_key, "name", 4) == 0) {
			named.ps_val = name;
			named.ps_vallen = namelen;
		}
		if (proto_text_add_member(&out, &len, &cap, &first, &named) ==
		    -1)
			goto fail;
	}
	if (proto_text_add(&out, &len, &cap, "}", 1) == -1)
		goto fail;
	free(mt);
	*outlen = len;
	return out;
fail:
	free(mt);
	free(out);
	return NULL;
}
