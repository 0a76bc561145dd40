/*
 * An answer's body gathered as hc_data hands it over (http_client.h),
 * pure: bounded, NUL-terminated, and the old copy wiped as it grows,
 * since what a token endpoint or an introspection answers is secret.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "shared/http_client.h"

int
http_body_add(char **buf, size_t *len, const char *data, size_t n,
    size_t max)
{
	char	*b;

	/* a copy, not realloc: the old one is wiped */
	if (*len + n > max || (b = malloc(*len + n + 1)) == NULL)
		return 1;
	if (*buf != NULL) {
		memcpy(b, *buf, *len);
		OPENSSL_cleanse(*buf, *len);
		free(*buf);
	}
	memcpy(b + *len, data, n);
	*buf = b;
	*len += n;
	b[*len] = '\0';
	return 0;
}
