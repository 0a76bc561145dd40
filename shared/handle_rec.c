/*
 * The handles db's records (handle_rec.h): a meta line of compact JSON
 * (which holds no raw newline), a newline, the snapshot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "handle_rec.h"

#define HANDLE_META_MAX	1024	/* the line: owner, name, digest, stamps */

int
handle_id_valid(const char *id)
{
	size_t	 i, plen = strlen(HANDLE_PREFIX);

	if (id == NULL || strlen(id) != HANDLE_ID_LEN ||
	    strncmp(id, HANDLE_PREFIX, plen) != 0)
		return 0;
	for (i = plen; i < HANDLE_ID_LEN; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-_", id[i]) == NULL)
			return 0;
	return 1;
}

int
handle_rec_encode(const struct handle_meta *hm, const char *state,
    size_t slen, char **buf, size_t *len)
{
	json_t	*m;
	char	*line, *out;
	size_t	 llen;

	*buf = NULL;
	if ((m = json_pack("{s:s, s:s, s:s, s:I, s:I, s:b}", "owner",
	    hm->hm_owner, "composite", hm->hm_composite, "fingerprint",
	    hm->hm_fp, "created", (json_int_t)hm->hm_created_ms, "expires",
	    (json_int_t)hm->hm_expires_ms, "used", hm->hm_used)) == NULL)
		return -1;
	line = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (line == NULL)
		return -1;
	llen = strlen(line);
	if (state == NULL)
		slen = 0;
	if ((out = malloc(llen + 1 + slen + 1)) == NULL) {
		free(line);
		return -1;
	}
	memcpy(out, line, llen);
	free(line);
	*len = llen;
	if (state != NULL) {
		out[(*len)++] = '\n';
		memcpy(out + *len, state, slen);
		*len += slen;
	}
	out[*len] = '\0';
	*buf = out;
	return 0;
}

/* a string member copied into dst[max + 1] */
static int
handle_copy(json_t *m, const char *key, char *dst, size_t max)
{
	const char	*s = json_string_value(json_object_get(m, key));

	if (s == NULL || strlen(s) > max)
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

int
handle_rec_meta(const void *data, size_t len, struct handle_meta *hm)
{
	const char	*nl;
	json_t		*m, *c, *e, *u;
	json_error_t	 je;
	int		 rc = -1;

	memset(hm, 0, sizeof(*hm));
	if ((nl = memchr(data, '\n', len)) != NULL)
		len = (size_t)(nl - (const char *)data);
	if (len > HANDLE_META_MAX ||
	    (m = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	c = json_object_get(m, "created");
	e = json_object_get(m, "expires");
	u = json_object_get(m, "used");
	if (handle_copy(m, "owner", hm->hm_owner, HANDLE_OWNER_MAX) == 0 &&
	    handle_copy(m, "composite", hm->hm_composite,
	    HANDLE_NAME_MAX) == 0 &&
	    handle_copy(m, "fingerprint", hm->hm_fp, COMPOSITE_FP_LEN) == 0 &&
	    json_is_integer(c) && json_integer_value(c) >= 0 &&
	    json_is_integer(e) && json_integer_value(e) >= 0 &&
	    json_is_boolean(u)) {
		hm->hm_created_ms = (uint64_t)json_integer_value(c);
		hm->hm_expires_ms = (uint64_t)json_integer_value(e);
		hm->hm_used = json_is_true(u);
		rc = 0;
	}
	json_decref(m);
	return rc;
}

const char *
handle_rec_state(const void *data, size_t len, size_t *slen)
{
	const char	*nl;

	if ((nl = memchr(data, '\n', len)) == NULL)
		return NULL;
	*slen = len - (size_t)(nl + 1 - (const char *)data);
	return nl + 1;
}

json_t *
handle_rec_dump(const void *key, size_t klen, const void *data, size_t len)
{
	struct handle_meta	 hm;
	char			 id[HANDLE_DUMP_ID + 4];
	size_t			 i, n = klen < HANDLE_DUMP_ID ? klen :
				    HANDLE_DUMP_ID;

	for (i = 0; i < n; i++) {
		id[i] = ((const char *)key)[i];
		if (id[i] < 0x21 || id[i] > 0x7e)
			id[i] = '?';
	}
	(void)snprintf(id + n, sizeof(id) - n, "...");
	if (handle_rec_meta(data, len, &hm) == -1)
		return json_pack("{s:s, s:b, s:I}", "key", id, "valid", 0,
		    "bytes", (json_int_t)len);
	hm.hm_fp[12] = '\0';
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:b, s:I}", "key",
	    id, "owner", hm.hm_owner, "composite", hm.hm_composite,
	    "fingerprint", hm.hm_fp, "created", (json_int_t)hm.hm_created_ms,
	    "expires", (json_int_t)hm.hm_expires_ms, "used", hm.hm_used,
	    "bytes", (json_int_t)len);
}
