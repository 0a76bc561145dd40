/*
 * The probes' verdicts shared through Redis (sessionStorage.provider
 * redis; docs/ARCHITECTURE.md, Beyond one host): each node's builder
 * writes its own verdict on a backend into the hash
 * <keyPrefix>verdict:<backend>, one field per node, and follows
 * another node's by the rule of verdict_fold_result().  A change is
 * published on <keyPrefix>health (the backend's name); the readers'
 * timer makes up for a message lost.
 */
#ifndef VMCPD_VERDICT_REDIS_H
#define VMCPD_VERDICT_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "shared/health_probe.h"

struct worker;
struct redisReply;
struct config_backend;

#define VERDICT_RKEY_MAX	256
/* an entry is fresh for this many of its writer's probe intervals
 * (plus one probe timeout), VERDICT_WINDOW_MIN_MS at least */
#define VERDICT_WINDOW_INTERVALS	3
#define VERDICT_WINDOW_MIN_MS		5000
/* the readers' timer, at most this far apart */
#define VERDICT_REREAD_MS		5000

/*
 * One node's entry, as the hash holds it: the field is the node id, the
 * value "<state> <since> <at> <expires> <last> <error>": enum
 * probe_state, since when that node's state is this one, its last
 * probe's end, when the entry stops counting (Redis TIME, ms), the last
 * probe's enum probe_outcome, then the last failure's text (maybe
 * empty).  Pointers into the answer.
 */
struct verdict_entry {
	const char		*ve_node;
	size_t			 ve_nodelen;
	enum probe_state	 ve_state;
	enum probe_outcome	 ve_last;
	uint64_t		 ve_since;
	uint64_t		 ve_at;
	uint64_t		 ve_exp;
	const char		*ve_err;
	size_t			 ve_errlen;
};

/* pure (worker/builder/verdict_redis_codec.c) */
extern const char verdict_redis_lua[];
/* the key: redis_key()'s REDIS_KIND_VERDICT, <backend>; the channel:
 * redis_key()'s REDIS_KIND_HEALTH alone */
/* this node's id: "<host>:<tag>" (health_node_tag()) */
size_t	 verdict_node_id(char *, size_t, const char *host, const char *tag);
/* one field's value: 0, or -1 (not understood) */
int	 verdict_entry_parse(const char *node, size_t nodelen,
	    const char *v, size_t len, struct verdict_entry *);
/* the script's answer {now, {node, value, ...}}: 0 with Redis's now and
 * the number of entries, or -1 */
int	 verdict_redis_answer(const struct redisReply *, uint64_t *now,
	    size_t *n);
/* the i-th entry of an answer: 0, or -1 (not understood: skipped) */
int	 verdict_redis_entry(const struct redisReply *, size_t i,
	    struct verdict_entry *);

/* the probe outcome a state stands for (unknown: answered) */
enum probe_outcome verdict_class(enum probe_state);

/*
 * The rule, one entry at a time.  Entries past their expiry are left
 * out; the one of self is this node's own; among the others with a
 * state (not unknown), the latest change (since) is the fleet's.
 */
struct verdict_fold {
	const char		*vf_self;
	size_t			 vf_selflen;
	uint64_t		 vf_now;
	int			 vf_has_own;
	int			 vf_has_latest;
	struct verdict_entry	 vf_own;
	struct verdict_entry	 vf_latest;
};
void	 verdict_fold_init(struct verdict_fold *, const char *self,
	    uint64_t now);
void	 verdict_fold_add(struct verdict_fold *,
	    const struct verdict_entry *);
/*
 * 1 and *out (the fleet's: another node's entry) when this node follows
 * it, 0 when its own verdict rules: no other fresh verdict, its own
 * changed as late or later, or its own probe since that change says
 * otherwise (answered where the other failed, or the reverse).
 */
int	 verdict_fold_result(const struct verdict_fold *,
	    const struct verdict_entry **out);
/*
 * Following out, should this node probe now?  1 when its own last probe
 * (if any) says otherwise than the verdict followed: its probe confirms
 * it, or overrules it, at once rather than at its next interval.
 */
int	 verdict_fold_confirm(const struct verdict_fold *,
	    const struct verdict_entry *out);

/* the builder's side: off unless provider redis and health checks */
void	 verdict_redis_init(struct worker *);
void	 verdict_redis_free(void);
/* this node's probe of be ended: its verdict to the fleet */
void	 verdict_redis_put(const struct config_backend *,
	    const struct probe_rec *, enum probe_outcome);

#endif /* VMCPD_VERDICT_REDIS_H */
