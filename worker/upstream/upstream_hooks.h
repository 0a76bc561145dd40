/*
 * What the backend edge tells the parts above it, which it never calls
 * by name (worker.c sets these once; a NULL member: nobody listens):
 * a 2026-07-28 backend's subscribe (its listen stream asks anew), an
 * ended record of the closing queue that is a subscription's (0: taken),
 * and a client session ended (its subscriptions go).
 */
#ifndef VMCPD_UPSTREAM_HOOKS_H
#define VMCPD_UPSTREAM_HOOKS_H

#include <stddef.h>

struct worker;
struct config_backend;
struct store_rec;

struct upstream_hooks {
	void	(*uh_resubscribe)(struct worker *,
		    const struct config_backend *);
	int	(*uh_closing)(struct worker *, const void *key, size_t klen,
		    const struct store_rec *);
	void	(*uh_session_end)(struct worker *, const char *sid);
};
extern struct upstream_hooks upstream_hooks;

#endif /* VMCPD_UPSTREAM_HOOKS_H */
