/*
 * libFuzzer: opening sealed records (shared/seal.c) on arbitrary bytes,
 * what a damaged or planted tokens record could hold: never opens one
 * this key did not seal; and anything sealed opens to itself, bound to
 * its associated data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/seal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 keyed;
	uint8_t		*buf, *out;
	size_t		 adlen, n;

	if (!keyed) {
		if (seal_key_generate() == -1)
			abort();
		keyed = 1;
	}
	adlen = size > 0 ? data[0] % 64 : 0;
	if (adlen > size)
		adlen = size;
	if ((out = malloc(size + 1)) == NULL ||
	    (buf = malloc(size + SEAL_OVERHEAD)) == NULL)
		abort();
	/* forged: the key id is random, a tag is 128 bits */
	if (seal_open(data, adlen, data + adlen, size - adlen, out, size + 1,
	    &n) == 0)
		abort();
	if (seal_data(data, adlen, data + adlen, size - adlen, buf,
	    size - adlen + SEAL_OVERHEAD) == -1 ||
	    seal_open(data, adlen, buf, size - adlen + SEAL_OVERHEAD, out,
	    size + 1, &n) == -1 || n != size - adlen ||
	    memcmp(out, data + adlen, n) != 0)
		abort();
	if (size - adlen + SEAL_OVERHEAD > 0 && seal_open("x", 1, buf,
	    size - adlen + SEAL_OVERHEAD, out, size + 1, &n) == 0 &&
	    (adlen != 1 || data[0] != 'x'))
		abort();
	free(buf);
	free(out);
	return 0;
}
