/*
 * libFuzzer: worker/process/wake.c's datagram decoder on arbitrary bytes.  A
 * datagram that decodes must encode back to the same bytes (one
 * encoding per message); the arguments it gives are C strings within
 * their bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/process/wake.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct wake_msg	 m;
	unsigned char		*in, out[WAKE_MSG_MAX];
	size_t			 len;

	/* exact-size copy so ASan sees any read past the end */
	if ((in = malloc(size > 0 ? size : 1)) == NULL)
		abort();
	memcpy(in, data, size);
	if (wake_decode(in, size, &m) == 0) {
		if (strlen(m.wm_a) == 0 || strlen(m.wm_a) > WAKE_ARG_MAX ||
		    strlen(m.wm_b) > WAKE_ARG_MAX)
			abort();
		len = wake_encode(m.wm_type, m.wm_a, m.wm_b, out);
		if (len != size || memcmp(out, in, size) != 0)
			abort();
	}
	free(in);
	return 0;
}
