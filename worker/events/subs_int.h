/*
 * Internals of resource subscriptions shared by their files: subs.c
 * (the holdings, read and written by any worker; the loop) and
 * subs_maker.c (worker 0: the backend subscriptions made and ended).
 * Not for the rest of the worker: its interface is subs.h.
 */
#ifndef VMCPD_SUBS_INT_H
#define VMCPD_SUBS_INT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct worker;

/* subs.c */
/* 1 if the worker pid started at start is alive (or can't be told) */
int	 subs_alive(pid_t, uint64_t start);
/* one batch of prefix's holdings: 1 if some are left */
int	 subs_release_batch(struct worker *, const char *prefix, size_t plen);
/* the scope session (bk, uk) was made on: a malloc'd id, or NULL */
char	*subs_made_on(struct worker *, const char *bk, const char *uk);
/* the next turn, once the loop has polled */
void	 subs_schedule(void);

/* subs_maker.c */
int	 subs_maker_init(struct worker *);
void	 subs_maker_free(void);
/* the marks and passes taken, the pairs looked at (worker 0) */
void	 subs_pump(struct worker *);
/* the dead workers' holdings released, a few batches (worker 0) */
void	 subs_reap(struct worker *);

#endif /* VMCPD_SUBS_INT_H */
