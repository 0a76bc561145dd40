/*
 * Notifications from backends (notify.c).
 */
#ifndef VMCPD_NOTIFY_H
#define VMCPD_NOTIFY_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "worker/upstream/flow.h"

struct config_backend;
struct event;
struct worker;

/* notify.c: one notification listener per backend (worker 0) */
void	 notify_init(struct worker *);
void	 notify_stop(struct worker *);
void	 notify_free(struct worker *);
void	 notify_fanout(struct worker *, const json_t *msg, const char *uri);
/* sessions and listeners told of each list of view that differs from old */
void	 notify_lists_changed(struct worker *, json_t *old, json_t *view,
	    const char *who);
/* a backend's subscribed URIs changed: worker 0 looks (subs.c) */
void	 notify_resubscribe(struct worker *, const struct config_backend *);
/* worker 0: a 2026-07-28 backend's listen opened anew, its URIs now */
void	 notify_relisten(struct worker *, const struct config_backend *);
/* a list-change gate's answer acted on: run(arg) now, or ev armed
 * for due (ms), or nothing (flow.h) */
void	 notify_gate(enum lcgate_act, uint64_t now, uint64_t due,
	    struct event *, void (*run)(void *), void *arg);

#endif
