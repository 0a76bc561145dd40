/*
 * Per-user upstream accounts in this host's store (link_store.h): the
 * links and consents dbs, their stored form (sealed, shared with
 * link_redis.c) and link_credential(), which the pipeline's credential
 * phase reads synchronously.  Each call answers at once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "worker/process/process.h"
#include "worker/state/link_store.h"

int
link_key(char key[LINK_KEY_MAX + 1], const char *scope, const char *backend)
{
	int	 n;

	n = snprintf(key, LINK_KEY_MAX + 1, "%s|%s", scope, backend);
	return n < 0 || n > LINK_KEY_MAX || *scope == '\0' ||
	    *backend == '\0' ? -1 : 0;
}

uint64_t
link_expiry(const struct link_rec *lr)
{
	return lr->lr_refresh[0] == '\0' ? lr->lr_expires_ms : 0;
}

/* in sealed bound to ad, malloc'd after head (hlen bytes) */
static char *
link_seal_after(const char *ad, const char *head, size_t hlen,
    const char *in, size_t len, size_t *outlen)
{
	char	*out;

	if ((out = malloc(hlen + len + SEAL_OVERHEAD + 1)) == NULL)
		return NULL;
	memcpy(out, head, hlen);
	if (seal_data(ad, strlen(ad), in, len, (uint8_t *)out + hlen,
	    len + SEAL_OVERHEAD) == -1) {
		free(out);
		return NULL;
	}
	*outlen = hlen + len + SEAL_OVERHEAD;
	out[*outlen] = '\0';
	return out;
}

/* the clear text of what sealed (len bytes) holds, bound to ad: malloc'd,
 * NUL-ended, *plen set; NULL if it does not open */
static char *
link_open(const char *ad, const uint8_t *sealed, size_t len, size_t *plen)
{
	char	*out;

	if (len < SEAL_OVERHEAD || (out = malloc(len - SEAL_OVERHEAD +
	    1)) == NULL)
		return NULL;
	if (seal_open(ad, strlen(ad), sealed, len, (uint8_t *)out,
	    len - SEAL_OVERHEAD, plen) == -1) {
		free(out);
		return NULL;
	}
	out[*plen] = '\0';
	return out;
}

static void
link_clear_free(char *s, size_t len)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, len);
	free(s);
}

char *
link_seal(const char *key, const struct link_rec *lr, size_t *len)
{
	struct link_rec	*shown;
	char		*head = NULL, *full = NULL, *out = NULL;
	size_t		 hlen, flen = 0;

	if ((shown = malloc(sizeof(*shown))) == NULL)
		return NULL;
	*shown = *lr;
	shown->lr_access[0] = shown->lr_refresh[0] = '\0';
	if ((head = link_rec_encode(shown, &hlen)) == NULL ||
	    (full = link_rec_encode(lr, &flen)) == NULL)
		goto done;
	head[hlen++] = '\n';	/* over the NUL: the sealed part follows */
	out = link_seal_after(key, head, hlen, full, flen, len);
 done:
	OPENSSL_cleanse(shown, sizeof(*shown));
	free(shown);
	free(head);
	link_clear_free(full, flen);
	return out;
}

int
link_unseal(const char *key, const void *data, size_t len,
    struct link_rec *lr)
{
	const char	*nl;
	char		*clear;
	size_t		 n = 0;
	int		 rc;

	if ((nl = memchr(data, '\n', len)) == NULL)
		return -1;
	nl++;
	if ((clear = link_open(key, (const uint8_t *)nl, len -
	    (size_t)(nl - (const char *)data), &n)) == NULL)
		return -1;
	rc = link_rec_decode(clear, n, lr);
	link_clear_free(clear, n);
	return rc;
}

char *
consent_seal(const struct consent_rec *cr, size_t *len)
{
	char	*clear, *out;
	size_t	 n = 0;

	if ((clear = consent_rec_encode(cr, &n)) == NULL)
		return NULL;
	out = link_seal_after(cr->cr_id, "", 0, clear, n, len);
	link_clear_free(clear, n);
	return out;
}

int
consent_unseal(const char *id, const void *data, size_t len,
    struct consent_rec *cr)
{
	char	*clear;
	size_t	 n = 0;
	int	 rc;

	if ((clear = link_open(id, data, len, &n)) == NULL)
		return -1;
	rc = consent_rec_decode(clear, n, cr);
	link_clear_free(clear, n);
	/* a consent is where its id says */
	if (rc == 0 && strcmp(cr->cr_id, id) != 0)
		rc = -1;
	return rc;
}

/*
 * This host's store
 */

/* the link of key, opened, into *lr (malloc'd): 0, STORE_NOTFOUND
 * (none, or not ours), or -1 */
static int
link_lmdb_load(struct worker *w, const char *key, struct link_rec **lrp)
{
	struct store_rec	 rec;
	struct link_rec		*lr;
	int			 rc;

	*lrp = NULL;
	memset(&rec, 0, sizeof(rec));
	if ((rc = store_get(w->w_store, STORE_LINKS, key, strlen(key),
	    store_now_ms(), &rec)) != 0)
		return rc == STORE_NOTFOUND ? STORE_NOTFOUND : -1;
	if ((lr = malloc(sizeof(*lr))) == NULL)
		rc = -1;
	else if (link_unseal(key, rec.sr_data, rec.sr_len, lr) == -1) {
		free(lr);
		rc = STORE_NOTFOUND;
	} else
		*lrp = lr;
	OPENSSL_cleanse(rec.sr_data, rec.sr_len);
	free(rec.sr_data);
	return rc;
}

static void
link_rec_free(struct link_rec *lr)
{
	if (lr == NULL)
		return;
	OPENSSL_cleanse(lr, sizeof(*lr));
	free(lr);
}

static int
link_lmdb_get(struct worker *w, const char *scope, const char *backend,
    link_get_cb cb, void *arg)
{
	struct link_rec	*lr = NULL;
	char		 key[LINK_KEY_MAX + 1];
	int		 rc;

	if (link_key(key, scope, backend) == -1)
		return -1;
	rc = link_lmdb_load(w, key, &lr);
	cb(arg, rc, lr);
	link_rec_free(lr);
	return 0;
}

/* the stored form of a link, written to this host's store: 0, or -1 */
int
link_lmdb_write(struct worker *w, const char *key, const void *data,
    size_t len, uint64_t expires_ms)
{
	return store_put(w->w_store, STORE_LINKS, key, strlen(key), data,
	    len, expires_ms, store_now_ms()) == 0 ? 0 : -1;
}

static int
link_lmdb_put(struct worker *w, const char *scope, const struct link_rec *lr,
    link_done_cb cb, void *arg)
{
	char	 key[LINK_KEY_MAX + 1], *s;
	size_t	 len = 0;
	int	 rc;

	if (link_key(key, scope, lr->lr_backend) == -1 ||
	    (s = link_seal(key, lr, &len)) == NULL)
		return -1;
	rc = link_lmdb_write(w, key, s, len, link_expiry(lr));
	free(s);
	cb(arg, rc);
	return 0;
}

static int
link_lmdb_del(struct worker *w, const char *scope, const char *backend,
    link_done_cb cb, void *arg)
{
	char	 key[LINK_KEY_MAX + 1];
	int	 rc;

	if (link_key(key, scope, backend) == -1)
		return -1;
	rc = store_del(w->w_store, STORE_LINKS, key, strlen(key));
	cb(arg, rc == 0 || rc == STORE_NOTFOUND ? 0 : -1);
	return 0;
}

static int
link_lmdb_cput(struct worker *w, const struct consent_rec *cr,
    link_done_cb cb, void *arg)
{
	char	*s;
	size_t	 len = 0;
	int	 rc;

	if (!consent_id_valid(cr->cr_id) || (s = consent_seal(cr,
	    &len)) == NULL)
		return -1;
	rc = store_put(w->w_store, STORE_CONSENTS, cr->cr_id,
	    strlen(cr->cr_id), s, len, cr->cr_expires_ms, store_now_ms());
	free(s);
	cb(arg, rc == 0 ? 0 : -1);
	return 0;
}

/* a consent's stored form, opened for cb: rc as ls_cget's */
static void
link_consent_answer(const char *id, int rc, const void *data, size_t len,
    consent_get_cb cb, void *arg)
{
	struct consent_rec	 cr;

	if (rc == 0 && consent_unseal(id, data, len, &cr) == -1)
		rc = STORE_NOTFOUND;
	cb(arg, rc, rc == 0 ? &cr : NULL);
	OPENSSL_cleanse(&cr, sizeof(cr));
}

static int
link_lmdb_cget(struct worker *w, const char *id, consent_get_cb cb,
    void *arg)
{
	struct store_rec	 rec;
	int			 rc;

	if (!consent_id_valid(id))
		return -1;
	memset(&rec, 0, sizeof(rec));
	rc = store_get(w->w_store, STORE_CONSENTS, id, strlen(id),
	    store_now_ms(), &rec);
	if (rc != 0 && rc != STORE_NOTFOUND)
		rc = -1;
	link_consent_answer(id, rc, rec.sr_data, rec.sr_len, cb, arg);
	free(rec.sr_data);
	return 0;
}

struct link_taken {
	struct store_rec	 lt_rec;
	int			 lt_found;
};

static int
link_lmdb_taken(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct link_taken	*lt = arg;

	(void)key;
	(void)klen;
	lt->lt_rec = *rec;
	if ((lt->lt_rec.sr_data = malloc(rec->sr_len + 1)) == NULL)
		return 1;
	memcpy(lt->lt_rec.sr_data, rec->sr_data, rec->sr_len + 1);
	lt->lt_found = 1;
	return 1;
}

/* taken in one write txn (store_take_prefix() of the whole id, which
 * no other id begins with): of two takers, one has it */
static int
link_lmdb_ctake(struct worker *w, const char *id, consent_get_cb cb,
    void *arg)
{
	struct link_taken	 lt;
	int			 rc;

	if (!consent_id_valid(id))
		return -1;
	memset(&lt, 0, sizeof(lt));
	rc = store_take_prefix(w->w_store, STORE_CONSENTS, id, strlen(id), 1,
	    store_now_ms(), link_lmdb_taken, &lt);
	rc = rc < 0 ? -1 : lt.lt_found ? 0 : STORE_NOTFOUND;
	link_consent_answer(id, rc, lt.lt_rec.sr_data, lt.lt_rec.sr_len, cb,
	    arg);
	free(lt.lt_rec.sr_data);
	return 0;
}

static void
link_lmdb_cancel(void *arg)
{
	(void)arg;	/* never waits */
}

static const struct link_store link_store_lmdb = {
	link_lmdb_get,
	link_lmdb_put,
	link_lmdb_del,
	link_lmdb_cput,
	link_lmdb_cget,
	link_lmdb_ctake,
	link_lmdb_cancel
};
const struct link_store *link_store = &link_store_lmdb;

int
link_credential(struct worker *w, const struct config_backend *be,
    const char *scope, char *authz, size_t len, char *why, size_t whylen)
{
	struct link_rec	*lr = NULL;
	char		 key[LINK_KEY_MAX + 1];
	int		 rc = -1;

	if (*scope == '\0' || link_key(key, scope, be->cb_name) == -1) {
		(void)snprintf(why, whylen, "backend %s acts as each user "
		    "(authorization_code) and this client has no user here",
		    be->cb_name);
		return -1;
	}
	if (link_lmdb_load(w, key, &lr) != 0 || lr->lr_access[0] == '\0')
		(void)snprintf(why, whylen, "backend %s: this user's account "
		    "there is not linked (authorization_code), or its link "
		    "could not be read", be->cb_name);
	else if ((size_t)snprintf(authz, len, "Bearer %s", lr->lr_access) >=
	    len) {
		OPENSSL_cleanse(authz, len);
		(void)snprintf(why, whylen, "backend %s: this user's access "
		    "token is longer than vmcpd sends", be->cb_name);
	} else
		rc = 0;
	link_rec_free(lr);
	return rc;
}
