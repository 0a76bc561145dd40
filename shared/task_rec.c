/*
 * The tasks db's record (task_rec.h): one line of JSON, encoded and
 * decoded here, apart from the store and the worker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/rand_id.h"
#include "shared/rec_json.h"
#include "shared/task_rec.h"

static const char *const task_status_names[] = {
	NULL, "working", "input_required", "completed", "failed", "cancelled"
};

const char *
task_status_name(enum task_status st)
{
	return (size_t)st < sizeof(task_status_names) /
	    sizeof(task_status_names[0]) ? task_status_names[st] : NULL;
}

void
task_rec_clear(struct task_rec *tr)
{
	json_decref(tr->tr_out);
	tr->tr_out = NULL;
}

/* a workflow's state, beside the mapping */
static int
task_state_encode(const struct task_rec *tr, json_t *o)
{
	json_t *st;

	if ((st = json_pack("{s:s, s:I, s:I, s:I, s:I}", "status",
	    task_status_name(tr->tr_status), "created",
	    (json_int_t)tr->tr_created_ms, "updated",
	    (json_int_t)tr->tr_updated_ms, "lease",
	    (json_int_t)tr->tr_lease_ms, "ttl", (json_int_t)tr->tr_ttl_ms)) ==
	    NULL || json_object_update(o, st) == -1 || (tr->tr_out != NULL &&
	    json_object_set(o, "out", tr->tr_out) == -1)) {
		json_decref(st);
		return -1;
	}
	json_decref(st);
	return 0;
}

char *
task_rec_encode(const struct task_rec *tr, size_t *len)
{
	json_t	*o;
	char	*s;

	if ((o = json_pack("{s:s, s:s, s:s, s:s}", "owner", tr->tr_owner,
	    "backend", tr->tr_backend, "tool", tr->tr_tool, "taskId",
	    tr->tr_bid)) == NULL)
		return NULL;
	if (tr->tr_status != TASK_ST_NONE && (task_status_name(
	    tr->tr_status) == NULL || task_state_encode(tr, o) == -1)) {
		json_decref(o);
		return NULL;
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s != NULL && (*len = strlen(s)) > TASK_REC_MAX) {
		free(s);
		return NULL;
	}
	return s;
}

/* a workflow's state, if the record has one: 0, or -1 if it is bad */
static int
task_state_decode(json_t *o, struct task_rec *tr)
{
	json_t		*st = json_object_get(o, "status"), *out;
	const char	*name;
	size_t		 i;

	if (st == NULL)
		return 0;
	if ((name = json_string_value(st)) == NULL)
		return -1;
	for (i = 1; i < sizeof(task_status_names) /
	    sizeof(task_status_names[0]); i++)
		if (strcmp(name, task_status_names[i]) == 0)
			tr->tr_status = (enum task_status)i;
	if (tr->tr_status == TASK_ST_NONE ||
	    rec_json_stamp(o, "created", &tr->tr_created_ms) == -1 ||
	    rec_json_stamp(o, "updated", &tr->tr_updated_ms) == -1 ||
	    rec_json_stamp(o, "lease", &tr->tr_lease_ms) == -1 ||
	    rec_json_stamp(o, "ttl", &tr->tr_ttl_ms) == -1)
		return -1;
	if ((out = json_object_get(o, "out")) != NULL) {
		if (!json_is_object(out))
			return -1;
		tr->tr_out = json_incref(out);
	}
	return 0;
}

int
task_rec_decode(const void *data, size_t len, struct task_rec *tr)
{
	json_t		*o;
	json_error_t	 je;
	int		 rc = -1;

	memset(tr, 0, sizeof(*tr));
	if (data == NULL || len > TASK_REC_MAX || (o = json_loadb(data, len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	if (json_is_object(o) &&
	    rec_json_copy(o, "owner", tr->tr_owner, TASK_OWNER_MAX, 1) == 0 &&
	    rec_json_copy(o, "backend", tr->tr_backend, TASK_NAME_MAX,
	    0) == 0 &&
	    rec_json_copy(o, "tool", tr->tr_tool, TASK_NAME_MAX, 0) == 0 &&
	    rec_json_copy(o, "taskId", tr->tr_bid, TASK_BID_MAX, 0) == 0 &&
	    task_state_decode(o, tr) == 0)
		rc = 0;
	json_decref(o);
	if (rc == -1) {
		task_rec_clear(tr);
		memset(tr, 0, sizeof(*tr));
	}
	return rc;
}

enum task_status
task_rec_status(const struct task_rec *tr, uint64_t now_ms)
{
	switch (tr->tr_status) {
	case TASK_ST_WORKING:
		if (tr->tr_cancel)
			return TASK_ST_CANCELLED;
		return tr->tr_lease_ms < now_ms ? TASK_ST_FAILED :
		    TASK_ST_WORKING;
	case TASK_ST_INPUT:
		return tr->tr_cancel ? TASK_ST_CANCELLED : TASK_ST_INPUT;
	default:
		return tr->tr_status;
	}
}

/* ms since the epoch as RFC 3339 UTC with milliseconds */
static void
task_time(uint64_t ms, char *buf, size_t len)
{
	struct tm	tm;
	time_t		t = (time_t)(ms / 1000);
	size_t		n;

	if (gmtime_r(&t, &tm) == NULL ||
	    (n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		(void)snprintf(buf, len, "1970-01-01T00:00:00.000Z");
		return;
	}
	(void)snprintf(buf + n, len - n, ".%03uZ", (unsigned)(ms % 1000));
}

json_t *
task_rec_detailed(const struct task_rec *tr, const char *id, uint64_t now_ms)
{
	enum task_status	 st = task_rec_status(tr, now_ms);
	json_t			*o, *out = NULL;
	char			 created[40], updated[40];
	const char		*key = NULL;

	task_time(tr->tr_created_ms, created, sizeof(created));
	task_time(tr->tr_updated_ms, updated, sizeof(updated));
	if ((o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "taskId", id,
	    "status", task_status_name(st) != NULL ? task_status_name(st) :
	    "failed", "createdAt", created, "lastUpdatedAt", updated, "ttlMs",
	    (json_int_t)tr->tr_ttl_ms, "pollIntervalMs",
	    (json_int_t)TASK_POLL_MS)) == NULL)
		return NULL;
	if (st == TASK_ST_FAILED && tr->tr_status == TASK_ST_WORKING) {
		/* its runner's lease ran out */
		key = "error";
		out = json_pack("{s:i, s:s}", "code", -32603, "message",
		    TASK_LOST_MESSAGE);
	} else if (st == TASK_ST_COMPLETED) {
		key = "result";
		out = json_incref(tr->tr_out);
	} else if (st == TASK_ST_FAILED) {
		key = "error";
		out = json_incref(tr->tr_out);
	} else if (st == TASK_ST_INPUT) {
		key = "inputRequests";
		out = json_incref(json_object_get(tr->tr_out,
		    "inputRequests"));
	}
	/* a record without its outcome (not one vmcpd wrote) */
	if (key != NULL && out == NULL)
		out = st == TASK_ST_FAILED ? json_pack("{s:i, s:s}", "code",
		    -32603, "message", "Internal error: the workflow failed") :
		    json_object();
	if (key != NULL && (out == NULL ||
	    json_object_set_new(o, key, out) == -1)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int
task_id_valid(const char *id, size_t len)
{
	return rand_id_valid(TASK_PREFIX, TASK_RAND_BYTES, id, len);
}

int
task_id_new(char id[TASK_ID_LEN + 1])
{
	return rand_id_new(TASK_PREFIX, TASK_RAND_BYTES, id);
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
	json_t		*o;
	char		 id[TASK_DUMP_ID + 4], bid[12 + 4];

	task_dump_start(key, klen, TASK_DUMP_ID, id, sizeof(id));
	/* a composite's task's cancel mark (task_store.h), beside it */
	if (klen == TASK_ID_LEN + sizeof(TASK_MARK_SUFFIX) - 1 &&
	    memcmp((const char *)key + TASK_ID_LEN, TASK_MARK_SUFFIX,
	    sizeof(TASK_MARK_SUFFIX) - 1) == 0)
		return json_pack("{s:s, s:b}", "key", id, "cancelled", 1);
	if (task_rec_decode(data, len, &tr) == -1)
		return json_pack("{s:s, s:b, s:I}", "key", id, "valid", 0,
		    "bytes", (json_int_t)len);
	task_dump_start(tr.tr_bid, strlen(tr.tr_bid), 12, bid, sizeof(bid));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "key", id, "owner",
	    tr.tr_owner, "backend", tr.tr_backend, "tool", tr.tr_tool,
	    "backendTaskId", bid);
	/* a workflow's status, never its outcome (a user's data) */
	if (o != NULL && tr.tr_status != TASK_ST_NONE)
		(void)json_object_set_new(o, "status", json_string(
		    task_status_name(tr.tr_status)));
	task_rec_clear(&tr);
	return o;
}
