#ifndef VMCPD_CURSOR_H
#define VMCPD_CURSOR_H

#include <stddef.h>

#include <jansson.h>

/*
 * Opaque cursors for vmcpd's own Modern lists: base64url of a small
 * checksummed binary record naming the list kind ("tools", "prompts",
 * "resources", "resourceTemplates"), the last key returned and how
 * many items with that key were returned, so a list that changed
 * resumes after that key.  At most PROTO_CURSOR_MAX characters; keys of
 * up to PROTO_CURSOR_KEY_MAX bytes always fit (a page may simply end at
 * an item whose key fits).  decode: -1 for a malformed, oversized or
 * another kind's cursor (answer -32602); *last_key is malloc'd.
 */
#define PROTO_CURSOR_MAX	512
#define PROTO_CURSOR_KEY_MAX	360
char	*proto_cursor_encode(const char *kind, const char *last_key,
	    size_t dup_index);
int	 proto_cursor_decode(const char *cursor, const char *kind,
	    char **last_key, size_t *dup_index);
/* where to continue in an array sorted by key_field (bytewise): after
 * the first dup_index items whose key is last_key, or at the first
 * greater key; an item without a string key counts as "" */
int	 proto_cursor_resume(const json_t *sorted_items,
	    const char *key_field, const char *last_key, size_t dup_index,
	    size_t *start);
/* the cursor that resumes at sorted_items[end] (0 < end <= size), or
 * NULL (out of memory, or that item's key does not fit) */
char	*proto_cursor_next(const json_t *sorted_items,
	    const char *key_field, const char *kind, size_t end);

#endif /* VMCPD_CURSOR_H */
