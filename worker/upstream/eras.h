/*
 * Backend eras (eras.c): which revision each backend speaks.
 */
#ifndef VMCPD_ERAS_H
#define VMCPD_ERAS_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "proto/proto.h"

struct config_backend;
struct worker;

/*
 * eras.c: which revision each backend speaks (store "eras" db).  A
 * pinned era (config era:) is used as it is; sse and stdio backends
 * (whose bridges speak 2025-11-25) are Legacy; the others are probed
 * once with server/discover and the outcome shared by all workers.
 */
typedef void (*era_cb)(void *arg, enum proto_era);
/* the backend's record (PROTO_ERA_BOTH: it speaks both), or
 * PROTO_ERA_UNKNOWN */
enum proto_era era_get(struct worker *, const struct config_backend *);
/* the revision a request for a client of era client goes in now
 * (proto_era_pick()), or PROTO_ERA_UNKNOWN: not probed yet */
enum proto_era era_for(struct worker *, const struct config_backend *,
	    enum proto_era client);
/* the revision to use for a client of era client, as era_for(), now
 * (> 0), or 0 with cb called later with it, or -1 (no memory) */
int	 era_resolve(struct worker *, const struct config_backend *,
	    enum proto_era client, era_cb, void *arg);
/* the client era lists and notifications go for: none, so a backend
 * that speaks both is listed and listened to in 2026-07-28 */
#define ERA_LISTING	PROTO_ERA_UNKNOWN
void	 era_resolve_cancel(struct worker *, void *arg);
/* self-healing: a backend that answers as the other era */
void	 era_set(struct worker *, const struct config_backend *,
	    enum proto_era, const char *why);
void	 era_forget(struct worker *, const struct config_backend *,
	    const char *why);
void	 eras_free(void);

#endif
