/*
 * Where the tasks extension's task records live (shared/task_rec.h),
 * chosen once at start by sessionStorage.provider: this host's store
 * (task.c) or Redis (task_redis.c, installed by task_redis_init()),
 * so that a task made on one node is polled on any.  ts_put: the record
 * written before the client has its task (SET NX: 0 written, else -1);
 * ts_get: the record of an id (0 found, STORE_NOTFOUND, -1 failed).
 * Each calls cb once, at once (this host) or later (Redis), unless it
 * returns -1 itself; ts_cancel(arg) drops arg's pending cb.
 *
 * A composite run as a task (composite_task.c) keeps its state in its
 * record: ts_set rewrites it (no NX); ts_mark asks for its cancel, a
 * mark beside the record that the runner's rewrites never clear, which
 * ts_get reports as tr_cancel (read only for a workflow's record).
 * The record ts_get hands its cb is the store's (tr_out borrowed).
 */
#ifndef VMCPD_TASK_STORE_H
#define VMCPD_TASK_STORE_H

#include <stdint.h>

#include "shared/task_rec.h"

struct worker;

typedef void	(*task_put_cb)(void *arg, int rc);
typedef void	(*task_get_cb)(void *arg, int rc, const struct task_rec *);

struct task_store {
	int	(*ts_put)(struct worker *, const char *id,
		    const struct task_rec *, uint64_t ttl_ms, task_put_cb,
		    void *arg);
	int	(*ts_get)(struct worker *, const char *id, task_get_cb,
		    void *arg);
	void	(*ts_cancel)(void *arg);
	int	(*ts_set)(struct worker *, const char *id,
		    const struct task_rec *, uint64_t ttl_ms, task_put_cb,
		    void *arg);
	int	(*ts_mark)(struct worker *, const char *id, uint64_t ttl_ms,
		    task_put_cb, void *arg);
};

extern const struct task_store *task_store;

/* task_redis.c: Redis's, with sessionStorage.provider redis */
void	task_redis_init(struct worker *);

#endif /* VMCPD_TASK_STORE_H */
