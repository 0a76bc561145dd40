/*
 * The seam of a principal's backend sessions (backend_session.h)
 * across the nodes, and its Redis side (backend_session_redis.c).
 */
#ifndef VMCPD_BSESSION_STORE_H
#define VMCPD_BSESSION_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "worker/redis/redis.h"
#include "worker/redis/redis_flight.h"

struct worker;
struct config_backend;
struct store;

/*
 * Where a principal's sessions are shared (sessionStorage.provider),
 * chosen once at start: nowhere beyond this host's store (backend_session.c,
 * the default), or Redis under "<keyPrefix>bs:<scope>:<backend>"
 * (backend_session_redis.c, installed by bsession_redis_init()); a backend's
 * shared session (no principal) is never.  bs_fetch: the record, or
 * this process opens (one opener across the nodes); NULL: not asked
 * (open it here).  bs_done: the open ended, its record (rec NULL:
 * failed) written.  bs_touch: a use.  bs_drop: the session rec
 * (evicted, or lost) out of the nodes' copy, if it is still there.
 * bs_forget: the same for the record under key in this host's store,
 * about to be deleted.
 */
#define BSESSION_RKEY_MAX	256
struct bsession_store {
	struct redis_flight *(*bs_fetch)(const char *scope,
		    const struct config_backend *, redis_flight_cb,
		    void *arg);
	void	(*bs_done)(const char *scope, const struct config_backend *,
		    const char *rec, size_t len);
	void	(*bs_touch)(const char *scope,
		    const struct config_backend *);
	void	(*bs_drop)(const char *scope, const struct config_backend *,
		    const char *rec, size_t len);
	void	(*bs_forget)(struct store *, const char *scope,
		    const struct config_backend *, const char *key,
		    size_t klen);
};
extern const struct bsession_store *bsession_store;
void	 bsession_redis_init(struct worker *);
/*
 * A host's copy of a principal's session went idle (its closing record,
 * closing_key "scope|backend", and payload rec): is the session gone
 * from Redis?  cb gets the answer's integer: the record's time to live
 * (another node uses it), -2 (gone: this node closes it, the only one
 * that does) or -3 (another node closes it).  NULL: not sent.
 */
#define BSESSION_CLAIM_MS	(60ULL * 1000)
struct redis_cmd *bsession_redis_gone(const char *closing_key, size_t klen,
	    const char *rec, size_t len, redis_cb cb, void *arg);
/* the open that bsession_redis_fetch() made this process's ended: its
 * session (sid NULL: failed) shared, the fleet's lock let go */
void	 bsession_share(const char *scope, const struct config_backend *,
	    const char *sid, const char *ver);
/* the Redis key: its length, 0 if it does not fit */
size_t	 bsession_redis_key(char *buf, size_t len, const char *prefix,
	    const char *scope, const char *backend);

#endif /* VMCPD_BSESSION_STORE_H */
