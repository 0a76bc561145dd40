/*
 * Circuit breakers shared through Redis (sessionStorage.provider
 * redis): each backend's breaker on the fleet is a hash
 * <keyPrefix>health:<backend> {f failures, o opened at, in Redis's
 * TIME ms, 0 closed}, changed by one script.  A node writes through
 * every passive failure and every close it decides, without waiting;
 * the builder reads the fleet's breaker on its probe interval into the
 * host's copy in the health db, which the hot path reads.  Redis down:
 * each node keeps its own breakers.  docs/ARCHITECTURE.md, Beyond one
 * host.
 */
#ifndef VMCPD_HEALTH_REDIS_H
#define VMCPD_HEALTH_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "shared/health_probe.h"

struct worker;
struct redisReply;
struct config_backend;
struct config_health;

#define HEALTH_RKEY_MAX	256

/* what the script does: a failure, a close, or only a read */
#define HEALTH_ROP_FAIL		"f"
#define HEALTH_ROP_CLOSE	"c"
#define HEALTH_ROP_READ		"r"

/* pure (worker/upstream/health_redis_codec.c) */
extern const char health_redis_lua[];
/* the key: redis_key()'s REDIS_KIND_HEALTH, <backend> */
/*
 * The script's answer {failures, opened, now}: 0 and *fails, and
 * *open_age_ms (how long open already, or BREAKER_SHARED_CLOSED), or
 * -1 (not understood).
 */
int	 health_redis_decode(const struct redisReply *, uint32_t *fails,
	    uint64_t *open_age_ms);

/* the worker's side: off unless provider redis and a breaker */
void	 health_redis_init(struct worker *);
/* who sends a probe's verdict to the other nodes (the builder's
 * verdict_redis_put()) */
void	 health_redis_verdicts(void (*)(const struct config_backend *,
	    const struct probe_rec *, enum probe_outcome));
/* a failure (or a close) decided here, sent to the fleet's breaker */
void	 health_redis_record(const char *backend, int failed);
/* the builder: every backend's fleet breaker into the host's copy */
void	 health_redis_pull(void);

#endif /* VMCPD_HEALTH_REDIS_H */
