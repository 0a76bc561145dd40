/*
 * Lower-case hex (hex.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "proto/hex.h"

void
proto_hex(const uint8_t *b, size_t len, char *out)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 0x0f];
	}
	out[2 * len] = '\0';
}
