/*
 * Which backends act as each user, and whether a principal holds a link
 * to one (link_store.h): asked by the upstream edge and the builder as
 * well as by worker/link, so kept in the room below them all.
 */
#include <stddef.h>

#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/link_rec.h"
#include "worker/state/link_store.h"

int
link_backend(const struct config_backend *be)
{
	return be->cb_outauth != NULL &&
	    be->cb_outauth->oa_type == CONFIG_OUTAUTH_CODE;
}

int
link_held(struct worker *w, const struct config_backend *be,
    const char *scope)
{
	char	 authz[LINK_TOKEN_MAX + 16], why[256];
	int	 rc;

	rc = link_credential(w, be, scope, authz, sizeof(authz), why,
	    sizeof(why)) == 0;
	OPENSSL_cleanse(authz, sizeof(authz));
	return rc;
}
