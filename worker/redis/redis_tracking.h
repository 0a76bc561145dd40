/*
 * What this worker may take as Redis holds it without asking: Redis's
 * client-side caching (CLIENT TRACKING ... REDIRECT, worker/redis/redis_sub.h)
 * tells the worker's subscription about every write to a key its
 * command connection read with tracking on; this table keeps, per
 * Legacy session id, the Redis stamp such a read answered, until an
 * invalidation for the key arrives.  Pure (no I/O), one per worker.
 * docs/ARCHITECTURE.md, Beyond one host.
 *
 * The race it settles: the invalidation travels on the subscription,
 * the answer on the command connection, so an invalidation for a
 * write that came after the read may be processed before the read's
 * answer.  Every event takes the next number of one sequence: a read
 * sent takes a ticket, an invalidation marks its slot, a flush (a
 * connection lost, tracking set again, or Redis's "everything") marks
 * the table.  The answer is trusted only if neither mark is newer than its
 * ticket.  A slot is shared by the ids hashed to it (direct-mapped,
 * RTRACK_SLOTS of them): a collision costs a check, never a stale
 * answer.
 */
#ifndef VMCPD_RTRACK_H
#define VMCPD_RTRACK_H

#include <stddef.h>
#include <stdint.h>

#define RTRACK_SLOTS	4096		/* a power of two */
#define RTRACK_ID_MAX	64		/* longer ids: never trusted */

struct rtrack_slot {
	char		 rs_id[RTRACK_ID_MAX + 1];	/* "": none */
	uint64_t	 rs_stamp;	/* Redis's stamp, as read */
	uint64_t	 rs_ticket;	/* the read's */
	uint64_t	 rs_inval;	/* the last invalidation here */
};

struct rtrack {
	uint64_t		 rt_seq;	/* the last number taken */
	uint64_t		 rt_flushed;	/* the last flush */
	int			 rt_on;		/* reads sent are tracked */
	struct rtrack_slot	 rt_slots[RTRACK_SLOTS];
};

void	 rtrack_init(struct rtrack *);
/*
 * Tracking on (1: a read sent from now on is tracked) or off: either
 * way what was trusted is no more (a flush).
 */
void	 rtrack_set_on(struct rtrack *, int on);
/* a read is sent: its ticket, for rtrack_answer() */
uint64_t rtrack_ticket(struct rtrack *);
/*
 * Its answer: Redis holds stamp (> 0) for id.  1 if it is trusted
 * from now on, 0 if not (an invalidation or a flush came meanwhile,
 * or tracking is off).
 */
int	 rtrack_answer(struct rtrack *, const char *id, uint64_t ticket,
	    uint64_t stamp);
/* 1 if Redis holds stamp for id as far as this worker knows */
int	 rtrack_trusted(const struct rtrack *, const char *id, uint64_t stamp);
/* id's record was written or is gone; len bytes, not NUL-terminated */
void	 rtrack_invalidate(struct rtrack *, const char *id, size_t len);
/* nothing is trusted any more */
void	 rtrack_flush(struct rtrack *);
/* the slot id hashes to (tests) */
size_t	 rtrack_slot(const char *id, size_t len);

#endif /* VMCPD_RTRACK_H */
