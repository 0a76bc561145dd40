/*
 * Opaque cursors for vmcpd's Modern lists (MCP 2026-07-28, Pagination).
 * A cursor names the list kind and the last key returned, with how
 * many items of that key were returned, so that a list which changed
 * between pages resumes after that key instead of at a stale index.
 *
 * Wire form: base64url (no padding) of
 *   version (1) | kind (1) | LEB128 count | key bytes | FNV-1a 32 (BE)
 * The checksum only catches damage and naive edits: a forged cursor can
 * do no more than pick another page of a list every client may read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mheaders.h"
#include "proto/cursor.h"

#define CUR_VERSION	1
#define CUR_VARINT_MAX	10	/* LEB128 bytes of a 64-bit count */
#define CUR_SUM		4
#define CUR_RAW_MAX	(2 + CUR_VARINT_MAX + PROTO_CURSOR_KEY_MAX + CUR_SUM)
_Static_assert((CUR_RAW_MAX + 2) / 3 * 4 <= PROTO_CURSOR_MAX,
    "the longest key must encode within PROTO_CURSOR_MAX");

static const char *const cur_kinds[] = {
	"tools", "prompts", "resources", "resourceTemplates",
};
#define NKINDS (sizeof(cur_kinds) / sizeof(cur_kinds[0]))

static int	 cur_kind(const char *);
static uint32_t	 cur_fnv(const unsigned char *, size_t);
static void	 cur_key(const json_t *, const char *, const char **,
		    size_t *);
static int	 cur_cmp(const char *, size_t, const char *, size_t);
static size_t	 cur_bound(const json_t *, const char *, const char *,
		    size_t, int);

/* 1.. for a known kind, 0 otherwise */
static int
cur_kind(const char *kind)
{
	size_t i;

	if (kind != NULL)
		for (i = 0; i < NKINDS; i++)
			if (strcmp(kind, cur_kinds[i]) == 0)
				return (int)i + 1;
	return 0;
}

static uint32_t
cur_fnv(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261U;

	while (n-- > 0) {
		h ^= *p++;
		h *= 16777619U;
	}
	return h;
}

char *
proto_cursor_encode(const char *kind, const char *last_key, size_t dup_index)
{
	unsigned char	 buf[CUR_RAW_MAX];
	size_t		 n = 0, klen;
	uint64_t	 d = dup_index;
	uint32_t	 sum;
	int		 k;

	if ((k = cur_kind(kind)) == 0 || last_key == NULL ||
	    (klen = strlen(last_key)) > PROTO_CURSOR_KEY_MAX)
		return NULL;
	buf[n++] = CUR_VERSION;
	buf[n++] = (unsigned char)k;
	do {
		buf[n++] = (unsigned char)((d & 0x7f) | (d > 0x7f ? 0x80 : 0));
		d >>= 7;
	} while (d != 0);
	memcpy(buf + n, last_key, klen);
	n += klen;
	sum = cur_fnv(buf, n);
	buf[n++] = (unsigned char)(sum >> 24);
	buf[n++] = (unsigned char)(sum >> 16);
	buf[n++] = (unsigned char)(sum >> 8);
	buf[n++] = (unsigned char)sum;
	return proto_b64_encode(buf, n, 1);
}

int
proto_cursor_decode(const char *cursor, const char *kind, char **last_key,
    size_t *dup_index)
{
	unsigned char	*raw = NULL;
	size_t		 len, rlen, i, klen;
	uint64_t	 d = 0;
	uint32_t	 sum;
	int		 k, shift = 0;

	*last_key = NULL;
	*dup_index = 0;
	if (cursor == NULL || (k = cur_kind(kind)) == 0)
		return -1;
	if ((len = strnlen(cursor, PROTO_CURSOR_MAX + 1)) > PROTO_CURSOR_MAX)
		return -1;
	if (proto_b64_decode(cursor, len, 1, &raw, &rlen) == -1)
		return -1;
	if (rlen < 3 + CUR_SUM)
		goto fail;
	rlen -= CUR_SUM;
	sum = (uint32_t)raw[rlen] << 24 | (uint32_t)raw[rlen + 1] << 16 |
	    (uint32_t)raw[rlen + 2] << 8 | raw[rlen + 3];
	if (sum != cur_fnv(raw, rlen) || raw[0] != CUR_VERSION || raw[1] != k)
		goto fail;
	for (i = 2;; i++) {
		if (i >= rlen || i - 2 >= CUR_VARINT_MAX)
			goto fail;
		if (shift == 63 && (raw[i] & 0x7e) != 0)
			goto fail;	/* past 64 bits */
		d |= (uint64_t)(raw[i] & 0x7f) << shift;
		shift += 7;
		if ((raw[i] & 0x80) == 0)
			break;
	}
	/* one spelling per count: no trailing zero groups */
	if (i > 2 && raw[i] == 0)
		goto fail;
	if (d > SIZE_MAX)
		goto fail;
	i++;
	klen = rlen - i;
	if (klen > PROTO_CURSOR_KEY_MAX || memchr(raw + i, '\0', klen) != NULL)
		goto fail;
	if ((*last_key = strndup((const char *)raw + i, klen)) == NULL)
		goto fail;
	*dup_index = (size_t)d;
	free(raw);
	return 0;

fail:
	free(raw);
	return -1;
}

/* an item's key; anything but a string item key reads as "" */
static void
cur_key(const json_t *item, const char *field, const char **k, size_t *n)
{
	const json_t *v = json_object_get(item, field);

	if (json_is_string(v)) {
		*k = json_string_value(v);
		*n = json_string_length(v);
	} else {
		*k = "";
		*n = 0;
	}
}

static int
cur_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen;
}

/* first index whose key is >= key (upper: > key) */
static size_t
cur_bound(const json_t *items, const char *field, const char *key,
    size_t klen, int upper)
{
	const char	*ik;
	size_t		 lo = 0, hi = json_array_size(items), mid, iklen;
	int		 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		cur_key(json_array_get(items, mid), field, &ik, &iklen);
		c = cur_cmp(ik, iklen, key, klen);
		if (c < 0 || (upper && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
proto_cursor_resume(const json_t *sorted_items, const char *key_field,
    const char *last_key, size_t dup_index, size_t *start)
{
	size_t lo, hi, klen;

	if (!json_is_array(sorted_items) || key_field == NULL ||
	    last_key == NULL || start == NULL)
		return -1;
	klen = strlen(last_key);
	lo = cur_bound(sorted_items, key_field, last_key, klen, 0);
	hi = cur_bound(sorted_items, key_field, last_key, klen, 1);
	/* fewer items of that key now: go on after the whole run */
	*start = dup_index < hi - lo ? lo + dup_index : hi;
	return 0;
}

char *
proto_cursor_next(const json_t *sorted_items, const char *key_field,
    const char *kind, size_t end)
{
	const char	*k;
	size_t		 klen, lo;

	if (!json_is_array(sorted_items) || key_field == NULL || end == 0 ||
	    end > json_array_size(sorted_items))
		return NULL;
	cur_key(json_array_get(sorted_items, end - 1), key_field, &k, &klen);
	if (strlen(k) != klen)
		return NULL;	/* a key with NUL cannot be named */
	lo = cur_bound(sorted_items, key_field, k, klen, 0);
	if (lo > end - 1)
		lo = end - 1;	/* not sorted after all */
	return proto_cursor_encode(kind, k, end - lo);
}
