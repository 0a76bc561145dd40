/*
 * _meta keys reserved for MCP, stripped from what crosses vmcpd
 * (meta.c), and the text appends its rewrites use.
 */
#ifndef VMCPD_META_H
#define VMCPD_META_H

#include <stddef.h>

#include <jansson.h>

#include "proto/jsonspan.h"

/* 1 if a _meta key has a prefix reserved for MCP: one whose second label
 * is "modelcontextprotocol" or "mcp" (io.modelcontextprotocol/, dev.mcp/) */
int	 proto_meta_reserved(const char *key);
/* drop the MCP-reserved keys of a _meta object; progressToken, trace
 * context (traceparent, tracestate, baggage) and vendor keys stay */
void	 proto_meta_strip(json_t *meta);
/*
 * 1 if proto_meta_strip() would leave nothing of the _meta object in
 * this text (a backend's result _meta is, as a rule, its serverInfo
 * alone): no tree is needed.  0 if it would keep a key, or when not
 * sure (not an object, an escaped key, more than 8 members).
 */
int	 proto_meta_text_dropped(const char *json, size_t len);
/* params' _meta stripped, and deleted when nothing is left or it is no
 * object: as a 2025-11-25 hop gets it; -1 out of memory */
int	 proto_params_strip_meta(json_t *params);
/*
 * Dress a result for a Modern client: resultType (NULL: "complete"),
 * _meta[io.modelcontextprotocol/serverInfo] (a copy; NULL: none), ttlMs
 * when ttl_ms >= 0 and cacheScope when not NULL.  result is stolen (NULL:
 * an empty result); returns it, or NULL when out of memory.
 */
json_t	*proto_modern_result(json_t *result, const char *result_type,
	    const json_t *server_info, long long ttl_ms,
	    const char *cache_scope);

/*
 * proto_meta_strip() on text (meta.c): params (an object that jansson
 * loads) with its _meta stripped, and left out when nothing is left
 * (or when it is no object, as json_object_size() has it 0), as the
 * text of an equal object (the members' text kept, whitespace between
 * them not); NULL when not sure (a key with an escape or of 256 bytes
 * or more, more than 16 members in params or _meta) or out of memory.
 * name, when not NULL, is the JSON text that replaces params.name's.
 */
char	*proto_params_strip_meta_text(const char *params, size_t plen,
	    const char *name, size_t namelen, size_t *outlen);
/* *out (of *len bytes, room for *cap) += s[0..n), NUL-terminated,
 * grown as needed: 0, or -1 out of memory (*out left as it was) */
int	 proto_text_add(char **out, size_t *len, size_t *cap, const char *s,
	    size_t n);
/* the same with a member, "key":value (key without escapes), after a
 * comma unless *first, which is then cleared */
int	 proto_text_add_member(char **out, size_t *len, size_t *cap,
	    int *first, const struct proto_span *m);

#endif /* VMCPD_META_H */
