/*
 * Where health verdicts are shared (sessionStorage.provider), chosen
 * once at start: nowhere beyond this host's store (healthcheck.c, the
 * default), or Redis (health_redis.c's breakers and verdict_redis.c's
 * probe verdicts, installed by health_redis_init()), each of which
 * still stays out when its own part of the config is off.
 * hs_breaker: a call's failure (failed) or a reset, for the fleet's
 * breaker; hs_pull: the fleet's breakers into this host's copy (a
 * probe tick); hs_verdict: a probe's verdict, for the other nodes.
 */
#ifndef VMCPD_HEALTH_STORE_H
#define VMCPD_HEALTH_STORE_H

#include "shared/health_probe.h"

struct config_backend;

struct health_store {
	void	(*hs_breaker)(const char *backend, int failed);
	void	(*hs_pull)(void);
	void	(*hs_verdict)(const struct config_backend *,
		    const struct probe_rec *, enum probe_outcome);
};

extern const struct health_store *health_store;

#endif /* VMCPD_HEALTH_STORE_H */
