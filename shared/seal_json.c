/*
 * A JSON object sealed and written as lower-case hex (seal.h), and read
 * back: one encoding for every sealed text vmcpd hands out.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "proto/hex.h"
#include "shared/seal.h"

char *
seal_json_hex(const char *ad, const json_t *o, size_t max)
{
	uint8_t	*sealed = NULL;
	char	*text, *out = NULL;
	size_t	 tl, n;

	if ((text = json_dumps(o, JSON_COMPACT)) == NULL)
		return NULL;
	tl = strlen(text);
	n = tl + SEAL_OVERHEAD;
	if (n <= max && (sealed = malloc(n)) != NULL &&
	    seal_data(ad, strlen(ad), text, tl, sealed, n) == 0 &&
	    (out = malloc(2 * n + 1)) != NULL)
		proto_hex(sealed, n, out);
	OPENSSL_cleanse(text, tl);
	free(text);
	free(sealed);
	return out;
}

static int
seal_json_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

json_t *
seal_json_open_hex(const char *ad, const char *hex, size_t max)
{
	uint8_t		*sealed = NULL;
	char		*text = NULL;
	json_t		*o = NULL;
	size_t		 len = strlen(hex), n = len / 2, i, plen;
	int		 hi, lo;

	if (len % 2 != 0 || n > max || n <= SEAL_OVERHEAD ||
	    (sealed = malloc(n)) == NULL || (text = malloc(n + 1)) == NULL)
		goto done;
	for (i = 0; i < n; i++) {
		if ((hi = seal_json_nibble(hex[2 * i])) == -1 ||
		    (lo = seal_json_nibble(hex[2 * i + 1])) == -1)
			goto done;
		sealed[i] = (uint8_t)(hi << 4 | lo);
	}
	if (seal_open(ad, strlen(ad), sealed, n, (uint8_t *)text, n,
	    &plen) == -1)
		goto done;
	text[plen] = '\0';
	o = json_loads(text, 0, NULL);
	OPENSSL_cleanse(text, plen);
done:
	free(sealed);
	free(text);
	return o;
}
