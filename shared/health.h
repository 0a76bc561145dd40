/*
 * Backend health shared by every process (health.c): each backend's
 * circuit breaker, one small record in the store's health db that all
 * workers and the builder read on each call and write only when the
 * breaker's state or its failure count changes.  The probes' records:
 * health_probe.h.
 */
#ifndef VMCPD_HEALTH_H
#define VMCPD_HEALTH_H

#include <stdint.h>

struct store;
struct config_health;

enum breaker_state {
	BREAKER_CLOSED = 0,	/* requests go through */
	BREAKER_OPEN,		/* requests fail at once */
	BREAKER_HALF_OPEN	/* one trial request is let through */
};

/* the record, as stored (fixed layout, no padding) */
struct breaker {
	uint32_t	 bk_state;	/* enum breaker_state */
	uint32_t	 bk_fails;	/* consecutive failures */
	uint64_t	 bk_opened_ms;	/* when it last opened */
	uint64_t	 bk_lease_ms;	/* half-open: the trial's lease ends */
};

enum breaker_verdict {
	BREAKER_PASS = 0,	/* send it */
	BREAKER_TRIAL,		/* send it: the half-open trial */
	BREAKER_REJECT		/* fail it now */
};

/* the decisions, pure, for unit tests: 1 if *b changed */
int	 breaker_admit_step(struct breaker *b, uint64_t open_ms,
	    uint64_t lease_ms, uint64_t now_ms, enum breaker_verdict *);
int	 breaker_outcome_step(struct breaker *b, unsigned int threshold,
	    int failed, int trial, uint64_t now_ms);
const char *breaker_state_name(enum breaker_state);
/*
 * The fleet's breaker (sessionStorage redis, worker/upstream/health_redis.c)
 * taken into the local copy: open for open_age_ms already, with fails,
 * or BREAKER_SHARED_CLOSED, read from the fleet at read_ms (this
 * host's clock).  A breaker opened here later than the fleet's stays
 * as it is, and so does one opened here after the read left.
 */
#define BREAKER_SHARED_CLOSED	UINT64_MAX
/* two openings closer than this are one (the fleet's clock is read
 * across a round trip) */
#define BREAKER_ADOPT_SLACK_MS	1000
int	 breaker_adopt_step(struct breaker *b, uint32_t fails,
	    uint64_t open_age_ms, uint64_t now_ms, uint64_t read_ms);

/* the backend's breaker (closed when there is no record): 0 or -1 */
int	 health_breaker_get(struct store *, const char *backend,
	    uint64_t now_ms, struct breaker *);
/*
 * May a request go to backend?  A read txn when closed or still open;
 * a write only to take the half-open lease (lease_ms long: the
 * request's timeout).  *b is the breaker as decided on; a store error
 * lets the request through.
 */
enum breaker_verdict health_breaker_admit(struct store *,
	    const char *backend, const struct config_health *,
	    uint64_t lease_ms, uint64_t now_ms, struct breaker *b);
/* a request's outcome; a success writes only after failures (then
 * *reset, if not NULL, is 1).  Logs a change of state and returns the
 * new state, else -1. */
int	 health_breaker_record(struct store *, const char *backend,
	    const struct config_health *, int failed, int trial,
	    uint64_t now_ms, int *reset);
/* the fleet's breaker written here (breaker_adopt_step()): the new
 * state if it changed, else -1 */
int	 health_breaker_adopt(struct store *, const char *backend,
	    const struct config_health *, uint32_t fails,
	    uint64_t open_age_ms, uint64_t now_ms, uint64_t read_ms);
/* the half-open trial sent nothing (answered from a cache): its lease
 * goes back */
void	 health_breaker_release(struct store *, const char *backend,
	    const struct config_health *, uint64_t now_ms);

#endif /* VMCPD_HEALTH_H */
