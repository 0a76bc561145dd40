/*
 * The view builder process (builder.c, view_builds.c, healthcheck.c).
 */
#ifndef VMCPD_BUILDER_H
#define VMCPD_BUILDER_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct config_backend;
struct worker;

/* active health checks, in the builder (healthcheck.c) */
int	 probe_init(struct worker *);
void	 probe_free(void);
/* probe be now, unless a probe of it is out (verdict_redis.c) */
void	 probe_soon(const struct config_backend *);

/* the view builder (builder.c): this process builds; a worker's asks */
void	 views_builder_init(struct worker *);
void	 views_build_request(struct worker *, const char *key,
	    const char *backend);

#endif
