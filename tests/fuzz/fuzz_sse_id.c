/*
 * libFuzzer: Last-Event-ID as vmcpd reads it (sse_id_parse()).  What it
 * accepts must be an id it issues: written back the same way, the
 * input again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/sse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			*s, tag[17], back[64];
	unsigned long long	 seq;

	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	if (sse_id_parse(s, tag, 16, &seq) == 0) {
		(void)snprintf(back, sizeof(back), "%s%s%llu", tag,
		    tag[0] != '\0' ? "-" : "", seq);
		if (strcmp(back, s) != 0 || (tag[0] != '\0' &&
		    strlen(tag) != 16))
			abort();
	}
	free(s);
	return 0;
}
