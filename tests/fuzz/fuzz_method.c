/*
 * libFuzzer: the MCP method table's lookup on arbitrary bytes.  What it
 * finds must be exactly the bytes given, and each hit by its id.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/method.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct mcp_method *mm;

	mm = mcp_method_lookup((const char *)data, size);
	if (mm == NULL)
		return 0;
	if (mm->mm_len != size || memcmp(mm->mm_name, data, size) != 0 ||
	    mcp_method_get(mm->mm_id) != mm)
		abort();
	return 0;
}
