/*
 * Random ids (rand_id.h).
 */
#include <stdint.h>
#include <string.h>

#include <openssl/rand.h>

#include "proto/hex.h"
#include "shared/rand_id.h"

#define RAND_ID_BYTES_MAX	64

int
rand_id_new(const char *prefix, size_t nbytes, char *out)
{
	unsigned char	 rb[RAND_ID_BYTES_MAX];
	size_t		 p = strlen(prefix);

	if (nbytes > sizeof(rb) || RAND_bytes(rb, (int)nbytes) != 1)
		return -1;
	memcpy(out, prefix, p);
	proto_hex(rb, nbytes, out + p);
	return 0;
}

int
rand_id_valid(const char *prefix, size_t nbytes, const char *s, size_t len)
{
	size_t	 i, p = strlen(prefix);

	if (s == NULL || len != p + 2 * nbytes || memcmp(s, prefix, p) != 0)
		return 0;
	for (i = p; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}
