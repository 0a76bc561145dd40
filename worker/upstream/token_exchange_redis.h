/*
 * Exchanged tokens in Redis (sessionStorage.provider redis): a token
 * exchanged on one node is written, sealed, to
 * "<keyPrefix>tok:<scope>:<backend>:<audience>:<scopes hash>" with a
 * time to live of its remaining useful life, and a node that misses it
 * in its own store reads it there before it exchanges: one maker per
 * token across the nodes (redis_flight.h), so N nodes asking at once
 * cost one exchange.  Redis down or slow: the
 * node exchanges on its own (the cache is only a cache).  The token is
 * sealed under sessionStorage.sealKeyFile (shared/seal.h), bound to
 * its Redis key.  docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_TEXCH_REDIS_H
#define VMCPD_TEXCH_REDIS_H

#include <stddef.h>
#include <stdint.h>

struct worker;
struct texch_rfetch;

#define TEXCH_RKEY_MAX		(256 + 96)
#define TEXCH_RLOCK_MS		(10ULL * 1000)	/* the fleet's lock */
#define TEXCH_RWAIT_MS		(TEXCH_RLOCK_MS + 2000)	/* then alone */

enum texch_rget {
	TEXCH_R_HIT = 0,	/* the token, another node's */
	TEXCH_R_MINE,		/* this node exchanges, the lock taken */
	TEXCH_R_LOCAL		/* exchange here (Redis failed or slow) */
};

/* pure (worker/upstream/token_exchange_redis_codec.c) */
/* the Redis key of the host's tokens db key: its length, 0 if too long */
size_t	 texch_redis_key(char *, size_t, const char *prefix,
	    const char *key);

/*
 * The worker's side, on redis_flight.h.  texch_redis_fetch(key):
 * cb(arg, HIT, token, len, ttl) with the token unsealed (valid during
 * the call), or cb(arg, MINE or LOCAL, ...) when this node is to
 * exchange; never within the call.  NULL: not sent (exchange here).
 */
typedef void (*texch_rfetch_cb)(void *, enum texch_rget, const char *,
    size_t, uint64_t);
void	 texch_redis_init(struct worker *);
int	 texch_redis_on(void);
struct texch_rfetch *texch_redis_fetch(const char *key, texch_rfetch_cb,
	    void *arg);
void	 texch_redis_cancel(struct texch_rfetch *);
/* the exchange ended: its token (NULL: failed) sealed to Redis for
 * ttl_ms, the fleet's lock let go if this worker holds it */
void	 texch_redis_done(const char *key, const char *token, size_t len,
	    uint64_t ttl_ms);

#endif /* VMCPD_TEXCH_REDIS_H */
