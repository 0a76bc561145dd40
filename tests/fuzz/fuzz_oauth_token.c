/*
 * A token endpoint's answer (shared/oauth_token.c, RFC 6749 5.1 and
 * 5.2): whatever the endpoint sends, the parser returns tokens of the
 * characters each may hold (the access token goes into a header) or an
 * error, the error code is printable, and nothing crashes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/oauth_token.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(const char *s, int lo, const char *ban)
{
	size_t	 i;

	if (s == NULL)
		return;
	if (*s == '\0')
		abort();
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < lo || (unsigned char)s[i] > 0x7e ||
		    strchr(ban, s[i]) != NULL)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oauth_token	 t;
	char			 why[160], code[OAUTH_ERROR_MAX + 1];
	int			 flags;

	for (flags = 0; flags <= OAUTH_EXCHANGE; flags++) {
		if (oauth_token_parse((const char *)data, size, flags, 4096,
		    &t, why, sizeof(why)) == 0) {
			if (t.ot_access == NULL || t.ot_expires_in < 0 ||
			    strlen(t.ot_access) > 4096)
				abort();
			check(t.ot_access, 0x21, ",\"\\ ");
			check(t.ot_id_token, 0x21, ",\"\\ ");
			check(t.ot_refresh, 0x20, "");
			check(t.ot_scope, 0x20, "\"\\");
			oauth_token_clear(&t);
		} else if (t.ot_access != NULL || t.ot_refresh != NULL ||
		    t.ot_id_token != NULL || t.ot_scope != NULL)
			abort();
	}
	oauth_token_error((const char *)data, size, code, sizeof(code));
	check(*code != '\0' ? code : NULL, 0x20, "\"\\");
	return 0;
}
