/*
 * proto_b64token_stop() (the bearer token's characters, sixteen bytes
 * a step) stops where a byte-at-a-time test of RFC 6750 2.1's b64token
 * characters stops, for any bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data, *end = p + size, *q;

	for (q = p; q < end && *q != '\0' && strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-._~+/", *q) != NULL; q++)
		;
	if (proto_b64token_stop(p, end) != q)
		abort();
	return 0;
}
