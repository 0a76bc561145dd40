/*
 * libFuzzer: the tasks db's record (shared/task_rec.c) on arbitrary bytes
 * (what a damaged or foreign data.mdb could hold), and a task id as a
 * client sends it.  A record that decodes encodes again to one that
 * decodes to the same (a workflow's state and outcome too); a dump
 * never fails on anything, nor what tasks/get would show of it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/task_rec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* the same record: its strings and stamps, and its outcome */
static int
rec_same(const struct task_rec *a, const struct task_rec *b)
{
	return strcmp(a->tr_owner, b->tr_owner) == 0 &&
	    strcmp(a->tr_backend, b->tr_backend) == 0 &&
	    strcmp(a->tr_tool, b->tr_tool) == 0 &&
	    strcmp(a->tr_bid, b->tr_bid) == 0 &&
	    a->tr_status == b->tr_status &&
	    a->tr_created_ms == b->tr_created_ms &&
	    a->tr_updated_ms == b->tr_updated_ms &&
	    a->tr_lease_ms == b->tr_lease_ms &&
	    a->tr_ttl_ms == b->tr_ttl_ms &&
	    (a->tr_out == NULL ? b->tr_out == NULL :
	    json_equal(a->tr_out, b->tr_out));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_rec	 tr, again;
	json_t		*o;
	char		*buf;
	size_t		 len;

	(void)task_id_valid((const char *)data, size);
	if ((o = task_rec_dump(data, size < 64 ? size : 64, data,
	    size)) == NULL)
		abort();
	json_decref(o);
	if (task_rec_decode(data, size, &tr) == -1)
		return 0;
	if ((buf = task_rec_encode(&tr, &len)) == NULL ||
	    task_rec_decode(buf, len, &again) == -1 ||
	    !rec_same(&tr, &again))
		abort();
	if (tr.tr_status != TASK_ST_NONE) {
		tr.tr_cancel = size & 1;
		if ((o = task_rec_detailed(&tr, TASK_PREFIX "0123456789abcdef"
		    "0123456789abcdef", (uint64_t)size * 1000)) == NULL)
			abort();
		json_decref(o);
	}
	task_rec_clear(&tr);
	task_rec_clear(&again);
	free(buf);
	return 0;
}
