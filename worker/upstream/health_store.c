/*
 * The health store (health_store.h) of this host alone, the default:
 * nothing shared, nothing to pull.  health_redis_init() installs the
 * fleet's.  Here, below the backend edge that records a call's failure
 * and the builder that records a probe's verdict.
 */
#include <stddef.h>

#include "shared/config.h"
#include "shared/health_probe.h"
#include "worker/upstream/health_store.h"

/* this host's store alone: nothing shared, nothing to pull */
static void
health_lmdb_breaker(const char *backend, int failed)
{
	(void)backend;
	(void)failed;
}

static void
health_lmdb_pull(void)
{
}

static void
health_lmdb_verdict(const struct config_backend *be,
    const struct probe_rec *pr, enum probe_outcome o)
{
	(void)be;
	(void)pr;
	(void)o;
}

static const struct health_store health_store_lmdb = {
	health_lmdb_breaker,
	health_lmdb_pull,
	health_lmdb_verdict
};
const struct health_store *health_store = &health_store_lmdb;
