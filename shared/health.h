/*
 * Backend health shared by every process (health.c): each backend's
 * circuit breaker, one small record in the store's health db that all
 * workers and the builder read on each call and write only when the
 * breaker's state or its failure count changes.
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
 * or BREAKER_SHARED_CLOSED.  A breaker opened here later than the
 * fleet's stays as it is.
 */
#define BREAKER_SHARED_CLOSED	UINT64_MAX
/* two openings closer than this are one (the fleet's clock is read
 * across a round trip) */
#define BREAKER_ADOPT_SLACK_MS	1000
int	 breaker_adopt_step(struct breaker *b, uint32_t fails,
	    uint64_t open_age_ms, uint64_t now_ms);

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
	    uint64_t open_age_ms, uint64_t now_ms);
/* the half-open trial sent nothing (answered from a cache): its lease
 * goes back */
void	 health_breaker_release(struct store *, const char *backend,
	    const struct config_health *, uint64_t now_ms);

/*
 * Active health: what the builder's probes (ping, or server/discover
 * in 2026-07-28) learned of each backend, a record next to its
 * breaker's.  unknown: not probed yet (or its first probes failed,
 * fewer than the threshold).  healthy: the last probe was answered in
 * under half the probe timeout.  degraded: answered, but slower than
 * that, or the first answer after failed probes (for one interval).
 * unhealthy: unhealthyThreshold probes in a row went unanswered; it is
 * out of the view until one is.  unauthenticated: HTTP 401 or 403.
 * Fewer failures than the threshold leave the state as it was.
 */
enum probe_state {
	PROBE_UNKNOWN = 0,
	PROBE_HEALTHY,
	PROBE_DEGRADED,
	PROBE_UNHEALTHY,
	PROBE_UNAUTHENTICATED,
	PROBE_NSTATES
};

enum probe_outcome {
	PROBE_OK = 0,		/* answered (a JSON-RPC error counts) */
	PROBE_FAILED,		/* no answer: refused, reset, timeout, 5xx */
	PROBE_DENIED		/* HTTP 401 or 403 */
};

#define PROBE_ERR_MAX	160

/* the record, as stored (fixed layout, no padding) */
struct probe_rec {
	uint32_t	 pr_state;	/* enum probe_state */
	uint32_t	 pr_fails;	/* consecutive failed probes */
	uint64_t	 pr_at_ms;	/* the last probe's end */
	uint64_t	 pr_latency_us;	/* the last answer's */
	char		 pr_err[PROBE_ERR_MAX];	/* the last failure's */
};

/* the transition, pure, for unit tests: 1 if the state changed */
int	 probe_step(struct probe_rec *, unsigned int threshold,
	    uint64_t timeout_ms, enum probe_outcome, uint64_t latency_us,
	    const char *err, uint64_t now_ms);
const char *probe_state_name(enum probe_state);
/* is a backend in this state out of the view? */
int	 probe_state_out(enum probe_state);

/* the backend's probe record (unknown when there is none): 0 or -1 */
int	 health_probe_get(struct store *, const char *backend,
	    uint64_t now_ms, struct probe_rec *);
/* a probe's outcome, written; *old gets the state before: 0 or -1 */
int	 health_probe_record(struct store *, const char *backend,
	    const struct config_health *, enum probe_outcome,
	    uint64_t latency_us, const char *err, uint64_t now_ms,
	    struct probe_rec *old, struct probe_rec *cur);
/* forget it (vmcpctl reprobe): 1 dropped, 0 none, -1 error */
int	 health_probe_clear(struct store *, const char *backend);

/*
 * The fleet's verdict (sessionStorage redis, worker/builder/verdict_redis.c):
 * another node's probe verdict this node follows, a record next to its
 * own that lapses at its expiry (Redis down: the node's own rules).
 */
#define PROBE_NODE_MAX	64
struct probe_fleet {
	uint32_t	 pf_state;	/* enum probe_state */
	uint32_t	 pf_pad;
	uint64_t	 pf_since_ms;	/* that node's verdict began (ours) */
	uint64_t	 pf_until_ms;	/* followed until (ours) */
	char		 pf_node[PROBE_NODE_MAX];	/* who found it */
	char		 pf_err[PROBE_ERR_MAX];
};
/*
 * This state directory's node tag, 8 hex digits drawn once and kept
 * (never expiring), so a node's id is the same across restarts and
 * differs between nodes whatever their host names: 0 or -1.
 */
#define HEALTH_NODE_TAG_LEN	8
int	 health_node_tag(struct store *, char tag[HEALTH_NODE_TAG_LEN + 1]);
/* follow it until its pf_until_ms, or (pf NULL) our own: 0 or -1 */
int	 health_fleet_set(struct store *, const char *backend,
	    const struct probe_fleet *, uint64_t now_ms);
/* the one followed: 1, 0 (none: our own rules), -1 */
int	 health_fleet_get(struct store *, const char *backend,
	    uint64_t now_ms, struct probe_fleet *);
/*
 * The verdict this node acts on: its own probe record, with the
 * fleet's state and error over it while it follows one (then node, if
 * not NULL, gets who found it, else ""): 0 or -1.
 */
int	 health_verdict_get(struct store *, const char *backend,
	    uint64_t now_ms, struct probe_rec *, char *node, size_t nodelen);

#endif /* VMCPD_HEALTH_H */
