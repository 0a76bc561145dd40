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

#include "worker/upstream/token_exchange_store.h"

struct worker;
struct texch_rfetch;

#define TEXCH_RKEY_MAX		(256 + 96)
#define TEXCH_RLOCK_MS		(10ULL * 1000)	/* the fleet's lock */
#define TEXCH_RWAIT_MS		(TEXCH_RLOCK_MS + 2000)	/* then alone */

/* pure (worker/upstream/token_exchange_redis_codec.c) */
/* the Redis key of the host's tokens db key: its length, 0 if too long */
size_t	 texch_redis_key(char *, size_t, const char *prefix,
	    const char *key);

/* the worker's side, on redis_flight.h: texch_store's (token_exchange_store.h) */
void	 texch_redis_init(struct worker *);

#endif /* VMCPD_TEXCH_REDIS_H */
