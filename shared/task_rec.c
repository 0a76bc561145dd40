/*
 * The tasks db's record (task_rec.h): one line of JSON, encoded and
 * decoded here, apart from the store and the worker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/task_rec.h"

char *
task_rec_encode(const struct task_rec *tr, size_t *len)
{
	json_t	*o;
	char	*s;

	if ((o = json_pack("{s:s, s:s, s:s, s:s}", "owner", tr->tr_owner,
	    "backend", tr->tr_backend, "tool", tr->tr_tool, "taskId",
	    tr->tr_bid)) == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s != NULL)
		*len = strlen(s);
	return s;
}

/* a string member copied into dst[max + 1]; empty only if may_empty */
static int
task_copy(json_t *o, const char *key, char *dst, size_t max, int may_empty)
{
	const char	*s = json_string_value(json_object_get(o, key));
	size_t		 n;

	if (s == NULL || (n = json_string_length(json_object_get(o, key))) >
	    max || strlen(s) != n || (n == 0 && !may_empty))
		return -1;
	memcpy(dst, s, n + 1);
	return 0;
}

int
task_rec_decode(const void *data, size_t len, struct task_rec *tr)
{
	json_t		*o;
	json_error_t	 je;
	int		 rc = -1;

	memset(tr, 0, sizeof(*tr));
	if (data == NULL || len > 1024 || (o = json_loadb(data, len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	if (json_is_object(o) &&
	    task_copy(o, "owner", tr->tr_owner, TASK_OWNER_MAX, 1) == 0 &&
	    task_copy(o, "backend", tr->tr_backend, TASK_NAME_MAX, 0) == 0 &&
	    task_copy(o, "tool", tr->tr_tool, TASK_NAME_MAX, 0) == 0 &&
	    task_copy(o, "taskId", tr->tr_bid, TASK_BID_MAX, 0) == 0)
		rc = 0;
	json_decref(o);
	if (rc == -1)
		memset(tr, 0, sizeof(*tr));
	return rc;
}

int
task_id_valid(const char *id, size_t len)
{
	size_t i, p = sizeof(TASK_PREFIX) - 1;

	if (id == NULL || len != TASK_ID_LEN || memcmp(id, TASK_PREFIX, p) != 0)
		return 0;
	for (i = p; i < len; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return 1;
}

uint64_t
task_ttl_ms(const json_t *ttl)
{
	json_int_t v;

	if (!json_is_integer(ttl) || (v = json_integer_value(ttl)) <= 0)
		return TASK_TTL_DEFAULT_MS;
	return (uint64_t)v > TASK_TTL_MAX_MS ? TASK_TTL_MAX_MS : (uint64_t)v;
}

/* up to n printable characters of s, then "..." */
static void
task_dump_start(const char *s, size_t slen, size_t n, char *out,
    size_t outlen)
{
	size_t i;

	if (n > slen)
		n = slen;
	if (n + 4 > outlen)
		n = outlen - 4;
	for (i = 0; i < n; i++)
		out[i] = s[i] >= 0x21 && s[i] <= 0x7e ? s[i] : '?';
	(void)snprintf(out + n, outlen - n, "...");
}

json_t *
task_rec_dump(const void *key, size_t klen, const void *data, size_t len)
{
	struct task_rec	 tr;
	char		 id[TASK_DUMP_ID + 4], bid[12 + 4];

	task_dump_start(key, klen, TASK_DUMP_ID, id, sizeof(id));
	if (task_rec_decode(data, len, &tr) == -1)
		return json_pack("{s:s, s:b, s:I}", "key", id, "valid", 0,
		    "bytes", (json_int_t)len);
	task_dump_start(tr.tr_bid, strlen(tr.tr_bid), 12, bid, sizeof(bid));
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "key", id, "owner",
	    tr.tr_owner, "backend", tr.tr_backend, "tool", tr.tr_tool,
	    "backendTaskId", bid);
}
