/*
 * libFuzzer: sessionStorage.sealKeyFile's content
 * (shared/config_sstore.c config_sstore_key_decode()).  A key is had
 * only from 32 bytes, 64 hex digits or 43 base64 digits (a '=' and a
 * final newline aside), and decoded the same way twice; a refusal
 * leaves the key zeroed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t	 zero[32];
	uint8_t			 k1[32], k2[32];
	size_t			 n = size;

	memset(k1, 0xa5, sizeof(k1));
	if (config_sstore_key_decode((const char *)data, size, k1) == -1) {
		if (memcmp(k1, zero, sizeof(k1)) != 0)
			abort();
		return 0;
	}
	if (size != 32) {
		if (n > 0 && data[n - 1] == '\n')
			n--;
		if (n > 0 && data[n - 1] == '\r')
			n--;
		if (n != 64 && n != 43 && !(n == 44 && data[43] == '='))
			abort();
	}
	if (config_sstore_key_decode((const char *)data, size, k2) == -1 ||
	    memcmp(k1, k2, sizeof(k1)) != 0)
		abort();
	return 0;
}
