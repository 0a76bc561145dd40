/*
 * Per-principal credentials on the backend edge (token_exchange, RFC
 * 8693; authorization_code, worker/link/): which
 * principal's token goes with a message sent on a backend session
 * outside a call.  Split from upstream.c; see upstream_int.h.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/backend_session.h"
#include "worker/state/link_store.h"
#include "worker/upstream/upstream_int.h"

/*
 * token_exchange and authorization_code: the credential last used on
 * each backend session,
 * for the messages sent on it outside a call (answers to the backend's
 * requests, cancellations, logging/setLevel).  A backend session of
 * such a backend belongs to one principal (its client session's or its
 * scope's), so its credential is that principal's.  In memory, a few
 * slots, the least recently used reused; the session's principal scope
 * is also recorded in the tokens db ("bs|<backend>|<session>", no
 * secret), so that a message sent from another worker (a client's
 * answer may land on any) finds the principal's token there.  A session
 * found in neither gets no message (never one without credentials).
 */
#define UPSTREAM_BS_TTL_MS	(60ULL * 60 * 1000)
#define UPSTREAM_CREDS		64
#define UPSTREAM_CRED_SID	128
static struct upcred {
	const struct config_backend	*uc_be;
	char				 uc_bsid[UPSTREAM_CRED_SID];
	char				*uc_authz;
	uint64_t			 uc_used;
} ucreds[UPSTREAM_CREDS];
static uint64_t	ucred_clock;

static struct upcred *
upstream_cred_find(const struct config_backend *be, const char *bsid)
{
	size_t	 i;

	if (bsid == NULL)
		return NULL;
	for (i = 0; i < UPSTREAM_CREDS; i++)
		if (ucreds[i].uc_be == be && ucreds[i].uc_authz != NULL &&
		    strcmp(ucreds[i].uc_bsid, bsid) == 0)
			return &ucreds[i];
	return NULL;
}

static void
upstream_cred_bskey(char *key, size_t len, const struct config_backend *be,
    const char *bsid)
{
	(void)snprintf(key, len, "bs|%s|%s", be->cb_name, bsid);
}

static void
upstream_cred_record(struct upstream *u)
{
	char		 key[STORE_KEY_MAX];
	uint64_t	 now = store_now_ms();

	upstream_cred_bskey(key, sizeof(key), u->u_be, u->u_bsid);
	(void)store_put(u->u_w->w_store, STORE_TOKENS, key, strlen(key),
	    u->u_scope, strlen(u->u_scope), now + UPSTREAM_BS_TTL_MS, now);
}

void
upstream_cred_note(struct upstream *u)
{
	struct upcred	*uc, *old = &ucreds[0];
	char		*dup;
	size_t		 i;

	if (u->u_authz == NULL || u->u_bsid == NULL ||
	    strlen(u->u_bsid) >= UPSTREAM_CRED_SID)
		return;
	if ((uc = upstream_cred_find(u->u_be, u->u_bsid)) != NULL &&
	    strcmp(uc->uc_authz, u->u_authz) == 0) {
		uc->uc_used = ++ucred_clock;
		return;
	}
	if ((dup = strdup(u->u_authz)) == NULL)
		return;
	if (uc == NULL) {
		upstream_cred_record(u);
		for (i = 0; i < UPSTREAM_CREDS; i++)
			if (ucreds[i].uc_used < old->uc_used)
				old = &ucreds[i];
		uc = old;
		uc->uc_be = u->u_be;
		(void)snprintf(uc->uc_bsid, sizeof(uc->uc_bsid), "%s",
		    u->u_bsid);
	}
	if (uc->uc_authz != NULL) {
		OPENSSL_cleanse(uc->uc_authz, strlen(uc->uc_authz));
		free(uc->uc_authz);
	}
	uc->uc_authz = dup;
	uc->uc_used = ++ucred_clock;
}

int
upstream_cred_needed(const struct config_backend *be, const char *scope)
{
	return texch_backend(be) || (link_backend(be) &&
	    bsession_per_principal(scope));
}

int
upstream_cred_of(struct worker *w, const struct config_backend *be,
    const char *scope, char *authz, size_t len, char *why, size_t whylen)
{
	if (link_backend(be))
		return link_credential(w, be, scope, authz, len, why, whylen);
	return texch_credential(w, be, scope, authz, len, why, whylen);
}

static char	*ucred_buf;	/* one read from the store, for one message */

/* the credential of a message on bsid, set for the next request;
 * upstream_cred_done() after it */
void
upstream_cred_for(struct worker *w, const struct config_backend *be,
    const char *bsid)
{
	struct upcred		*uc;
	struct store_rec	 rec;
	char			 key[STORE_KEY_MAX], why[256];

	if ((!texch_backend(be) && !link_backend(be)) || bsid == NULL)
		return;
	if ((uc = upstream_cred_find(be, bsid)) != NULL) {
		backend_cred_set(uc->uc_authz);
		return;
	}
	upstream_cred_bskey(key, sizeof(key), be, bsid);
	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_TOKENS, key, strlen(key),
	    store_now_ms(), &rec) != 0)
		return;
	if ((ucred_buf = malloc(UPSTREAM_AUTHZ_MAX)) != NULL &&
	    upstream_cred_needed(be, rec.sr_data) &&
	    upstream_cred_of(w, be, rec.sr_data, ucred_buf,
	    UPSTREAM_AUTHZ_MAX, why, sizeof(why)) == 0)
		backend_cred_set(ucred_buf);
	else
		log_debug("%s", ucred_buf != NULL ? why : "out of memory");
	free(rec.sr_data);
}

void
upstream_cred_done(void)
{
	backend_cred_set(NULL);
	if (ucred_buf != NULL) {
		OPENSSL_cleanse(ucred_buf, UPSTREAM_AUTHZ_MAX);
		free(ucred_buf);
		ucred_buf = NULL;
	}
}

void
upstream_cred_free(void)
{
	size_t	 i;

	for (i = 0; i < UPSTREAM_CREDS; i++)
		if (ucreds[i].uc_authz != NULL) {
			OPENSSL_cleanse(ucreds[i].uc_authz,
			    strlen(ucreds[i].uc_authz));
			free(ucreds[i].uc_authz);
		}
	memset(ucreds, 0, sizeof(ucreds));
}
