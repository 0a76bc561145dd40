#ifndef VMCPD_JSONSPAN_H
#define VMCPD_JSONSPAN_H

#include <stddef.h>
#include <string.h>

/*
 * A validating, allocation-free scan of a JSON object (jsonspan.c):
 * 0 if buf is exactly one JSON object of valid UTF-8 with at most max
 * top-level members, whose key (NULL if it holds an escape) and value
 * spans are put in out; -1 otherwise.  Duplicate keys are not looked
 * for: callers use it on what they will pass on, not to decide.
 */
struct proto_span {
	const char	*ps_key;	/* inside the quotes */
	size_t		 ps_keylen;
	const char	*ps_val;	/* the value's text */
	size_t		 ps_vallen;
};
int	 proto_json_members(const char *buf, size_t len,
	    struct proto_span *out, size_t max, size_t *n);
/* the member named key, or NULL: inline, so that with a literal key
 * (as every caller has) the length and the compare fold */
static inline const struct proto_span *
proto_json_member(const struct proto_span *m, size_t n, const char *key)
{
	size_t i, kl = strlen(key);

	for (i = 0; i < n; i++)
		if (m[i].ps_keylen == kl && m[i].ps_key != NULL &&
		    memcmp(m[i].ps_key, key, kl) == 0)
			return &m[i];
	return NULL;
}
/* the text of an object's member (no more than 32 members), or NULL */
const char *proto_json_value(const char *buf, size_t len, const char *key,
	    size_t *vlen);
/* text with [at, at + atlen) replaced by with; NUL-terminated */
char	*proto_text_replace(const char *text, size_t len, const char *at,
	    size_t atlen, const char *with, size_t wlen, size_t *outlen);
/* the same with up to PROTO_EDITS_MAX spans of text, in any order but
 * not overlapping (else NULL), each replaced */
#define PROTO_EDITS_MAX	4
struct proto_edit {
	const char	*pe_at;
	size_t		 pe_atlen;
	const char	*pe_with;
	size_t		 pe_wlen;
};
char	*proto_text_edit(const char *text, size_t len,
	    const struct proto_edit *, size_t n, size_t *outlen);

/*
 * The members of an object for proto_json_check(): up to pm_max spans
 * in pm_span and their count in pm_n.  If pm_sub is set, the members of
 * the top-level member named pm_subkey go there too (pm_sub->pm_n stays
 * 0 unless that member is an object).
 */
struct proto_members {
	struct proto_span	*pm_span;
	size_t			 pm_max;
	size_t			 pm_n;
	const char		*pm_subkey;
	struct proto_members	*pm_sub;
};
/*
 * The strict scan (jsonspan.c): 0 only if json_loadb() with
 * JSON_REJECT_DUPLICATES (with or without JSON_DECODE_ANY) would surely
 * load buf as an object, and every key of it is free of escapes (so
 * ps_key is never NULL).  -1 when not, or not sure: a key with an
 * escape anywhere, more than 64 keys in the open objects at once,
 * nesting deeper than 512, more members than pm_max, an integer beyond
 * int64 or a real that might overflow a double.
 */
int	 proto_json_check(const char *buf, size_t len, struct proto_members *m);
/*
 * The first byte in [p, end) that a JSON string does not hold as it is
 * ('"', '\\', a control character) or that is not ASCII, or end: the
 * strict scan's run of plain bytes, sixteen at a time with SSE2
 * (jsonspan.c); the JSON writer (jsonw.c) copies such runs whole.
 */
const unsigned char *proto_json_plain(const unsigned char *p,
	    const unsigned char *end);
/*
 * proto_json_members() into m, the sub-object's members too: -1 if more
 * than m->pm_max at the top; the sub-object's count may pass its
 * pm_max (only that many kept), and with a repeated key it is the last
 * one's.
 */
int	 proto_json_members_sub(const char *buf, size_t len,
	    struct proto_members *m);

#endif /* VMCPD_JSONSPAN_H */
