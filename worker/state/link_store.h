/*
 * Where per-user upstream accounts live (shared/link_rec.h), chosen once
 * at start by sessionStorage.provider: this host's store (link.c, the
 * links and consents dbs) or Redis (link_redis.c, installed by
 * link_redis_init()), so that a consent opened on one node completes
 * on any and a link made on one is used by every node.
 *
 * Links, keyed (scope, backend):
 *	ls_get	the link: cb(arg, 0, rec), cb(arg, STORE_NOTFOUND, NULL)
 *		or cb(arg, -1, NULL); with Redis, the host's copy (what
 *		link_credential() reads) is made current first
 *	ls_put	written (a consent completed, a refresh): cb(arg, 0|-1)
 *	ls_del	dropped (revoked, or refused by the upstream server)
 * Consents, keyed by their id:
 *	ls_cput	a new consent, or the next leg's (no NX: the id is ours)
 *	ls_cget	read, not used up
 *	ls_ctake read and dropped at once: of two takers one gets it
 *		(the upstream callback, once; a replay finds nothing)
 * Each calls cb once, at once (this host) or later (Redis), unless it
 * returns -1 itself; ls_cancel(arg) drops arg's pending cb.  The record
 * a cb is handed is valid during the call only.
 */
#ifndef VMCPD_LINK_STORE_H
#define VMCPD_LINK_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "shared/link_rec.h"

struct worker;
struct config_backend;

typedef void	(*link_done_cb)(void *arg, int rc);
typedef void	(*link_get_cb)(void *arg, int rc, const struct link_rec *);
typedef void	(*consent_get_cb)(void *arg, int rc,
		    const struct consent_rec *);

struct link_store {
	int	(*ls_get)(struct worker *, const char *scope,
		    const char *backend, link_get_cb, void *arg);
	int	(*ls_put)(struct worker *, const char *scope,
		    const struct link_rec *, link_done_cb, void *arg);
	int	(*ls_del)(struct worker *, const char *scope,
		    const char *backend, link_done_cb, void *arg);
	int	(*ls_cput)(struct worker *, const struct consent_rec *,
		    link_done_cb, void *arg);
	int	(*ls_cget)(struct worker *, const char *id, consent_get_cb,
		    void *arg);
	int	(*ls_ctake)(struct worker *, const char *id, consent_get_cb,
		    void *arg);
	void	(*ls_cancel)(void *arg);
};

extern const struct link_store *link_store;

/*
 * The stored form (link.c), alike in this host's store and in Redis: a
 * link is its clear line (link_rec_encode() without the tokens: what
 * vmcpctl shows), a newline, then the whole record sealed bound to its
 * key; a consent is sealed whole, bound to its id.  Malloc'd, *len
 * set; NULL: no key, no memory.  Opened: 0, or -1 (not ours: damaged,
 * moved, sealed under another run's key).
 *
 * A link's key is "<scope>|<backend>".  It is kept while its refresh
 * token may still serve: with a refresh token, or no expiry said, until
 * it is revoked, refused upstream or replaced; without one, until its
 * access token expires (link_expiry()).  A consent expires at its
 * cr_expires_ms.
 */
#define LINK_KEY_MAX	(LINK_SCOPE_MAX + 1 + LINK_NAME_MAX)
int	 link_key(char key[LINK_KEY_MAX + 1], const char *scope,
	    const char *backend);
char	*link_seal(const char *key, const struct link_rec *, size_t *len);
int	 link_unseal(const char *key, const void *, size_t, struct link_rec *);
char	*consent_seal(const struct consent_rec *, size_t *len);
int	 consent_unseal(const char *id, const void *, size_t,
	    struct consent_rec *);
/* the record's expiry in the store: 0 for none */
uint64_t link_expiry(const struct link_rec *);
/* a link's stored form into this host's store (link_redis.c's copy) */
int	 link_lmdb_write(struct worker *, const char *key, const void *,
	    size_t, uint64_t expires_ms);

/* link_redis.c: Redis's, with sessionStorage.provider redis */
void	link_redis_init(struct worker *);

/*
 * The upstream edge's credential for be under scope, from the host's
 * copy (synchronous, as texch_credential()): "Bearer <token>" in authz,
 * 0; or -1 with why (names the backend, never a token).
 */
int	link_credential(struct worker *, const struct config_backend *,
	    const char *scope, char *authz, size_t len, char *why,
	    size_t whylen);

/*
 * link_backend.c, for the rooms below worker/link (the upstream edge,
 * the builder), which do not call up into it: be's outgoingAuth is
 * authorization_code (as link.h declares it); scope holds a usable link
 * to be, read as link_credential() reads it: 1, else 0.
 */
int	link_backend(const struct config_backend *);
int	link_held(struct worker *, const struct config_backend *,
	    const char *scope);

#endif /* VMCPD_LINK_STORE_H */
