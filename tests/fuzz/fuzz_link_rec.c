/*
 * libFuzzer: the link and consent records' codec (shared/link_rec.c) on
 * arbitrary bytes (what a damaged store or a foreign Redis could hold
 * once unsealed).  A record that decodes has every string bounded and
 * NUL-ended, and encodes again to a record that decodes alike.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/link_rec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct link_rec		 lr, lr2;
static struct consent_rec	 cr, cr2;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s;
	size_t	 len;

	if (link_rec_decode(data, size, &lr) == 0) {
		if (strlen(lr.lr_backend) > LINK_NAME_MAX ||
		    strlen(lr.lr_access) > LINK_TOKEN_MAX ||
		    strlen(lr.lr_refresh) > LINK_TOKEN_MAX ||
		    (s = link_rec_encode(&lr, &len)) == NULL)
			abort();
		if (link_rec_decode(s, len, &lr2) != 0 ||
		    memcmp(&lr, &lr2, sizeof(lr)) != 0)
			abort();
		free(s);
	}
	if (consent_rec_decode(data, size, &cr) == 0) {
		if (!consent_id_valid(cr.cr_id) ||
		    strlen(cr.cr_verifier) > CONSENT_VERIFIER_LEN ||
		    (s = consent_rec_encode(&cr, &len)) == NULL)
			abort();
		if (consent_rec_decode(s, len, &cr2) != 0 ||
		    memcmp(&cr, &cr2, sizeof(cr)) != 0)
			abort();
		free(s);
	}
	return 0;
}
