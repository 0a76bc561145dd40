/*
 * What a browser sends to /oauth/start and /oauth/callback
 * (worker/link/link_page.c): a query's parameters decoded, a state
 * split, a Cookie header read, text HTML-escaped.  Whatever comes, the
 * results are bounded, free of control characters (a query's), of the
 * shapes checked (a state's), and the escape leaves no markup.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/link_rec.h"
#include "worker/link/link_int.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s, *e, out[64], id[CONSENT_ID_LEN + 1];
	char	 nonce[CONSENT_NONCE_LEN + 1];
	size_t	 i;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (link_query_get(s, "state", out, sizeof(out)) == 0) {
		if (strlen(out) >= sizeof(out))
			abort();
		for (i = 0; out[i] != '\0'; i++)
			if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
				abort();
	}
	if (link_state_split(s, id, sizeof(id), nonce, sizeof(nonce)) == 0 &&
	    (!consent_id_valid(id) || strlen(nonce) != CONSENT_NONCE_LEN))
		abort();
	if (link_cookie_get(s, "vmcpd_x", out, sizeof(out)) == 0 &&
	    (strlen(out) >= sizeof(out) || strchr(out, ';') != NULL))
		abort();
	if ((e = link_html_escape(s)) != NULL && strpbrk(e, "<>\"'") != NULL)
		abort();
	free(e);
	free(s);
	return 0;
}
