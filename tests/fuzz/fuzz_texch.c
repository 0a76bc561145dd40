/*
 * The token endpoint's answer to a token exchange (worker/upstream/token_exchange_cache.c,
 * RFC 8693 2.2.1): whatever the endpoint sends, texch_parse() returns a
 * token fit for an Authorization header or an error, and never crashes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/upstream/token_exchange.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 why[160], *tok = NULL;
	int64_t	 ein;
	size_t	 i;

	if (texch_parse((const char *)data, size, &tok, &ein, why,
	    sizeof(why)) == 0) {
		if (tok == NULL || *tok == '\0' || ein < 0)
			abort();
		for (i = 0; tok[i] != '\0'; i++)
			if ((unsigned char)tok[i] <= ' ' || tok[i] == ',' ||
			    tok[i] == '"')
				abort();
		free(tok);
	} else if (tok != NULL)
		abort();
	return 0;
}
