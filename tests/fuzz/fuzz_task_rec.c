/*
 * libFuzzer: the tasks db's record (shared/task_rec.c) on arbitrary bytes
 * (what a damaged or foreign data.mdb could hold), and a task id as a
 * client sends it.  A record that decodes encodes again to one that
 * decodes to the same; a dump never fails on anything.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/task_rec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

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
	    memcmp(&tr, &again, sizeof(tr)) != 0)
		abort();
	free(buf);
	return 0;
}
