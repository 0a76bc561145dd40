/*
 * Backend health shared by every process (health.c): the probes'
 * records beside the breakers' (health.h).
 */
#ifndef VMCPD_HEALTH_PROBE_H
#define VMCPD_HEALTH_PROBE_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct config_health;

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

#endif /* VMCPD_HEALTH_PROBE_H */
