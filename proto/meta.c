/*
 * Reserved _meta keys (MCP 2026-07-28, Overview, section _meta) and the
 * Modern result envelope (Overview, section ResultType; Caching):
 * resultType, serverInfo, cache hints.
 */
#include <string.h>

#include "proto.h"

int
proto_meta_reserved(const char *key)
{
	const char	*slash, *l2, *end;
	size_t		 n;

	/* "prefix/name": the prefix is dot-separated labels before '/' */
	if (key == NULL || (slash = strchr(key, '/')) == NULL)
		return 0;
	if ((l2 = memchr(key, '.', (size_t)(slash - key))) == NULL)
		return 0;
	l2++;
	if ((end = memchr(l2, '.', (size_t)(slash - l2))) == NULL)
		end = slash;
	n = (size_t)(end - l2);
	return (n == 20 && memcmp(l2, "modelcontextprotocol", n) == 0) ||
	    (n == 3 && memcmp(l2, "mcp", n) == 0);
}

/*
 * Per-hop keys (protocolVersion, serverInfo, subscriptionId, ...) are
 * vmcpd's to set on each leg; trace context, vendor keys and the two
 * end-to-end task keys travel.
 */
void
proto_meta_strip(json_t *meta)
{
	const char	*k;
	json_t		*v;
	void		*tmp;

	if (!json_is_object(meta))
		return;
	json_object_foreach_safe(meta, tmp, k, v)
		if (proto_meta_reserved(k) &&
		    strcmp(k, "io.modelcontextprotocol/related-task") != 0 &&
		    strcmp(k, "io.modelcontextprotocol/"
		    "model-immediate-response") != 0)
			(void)json_object_del(meta, k);
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
