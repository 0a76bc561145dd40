/*
 * Pinning (aggregation.pinning.mode off | warn | enforce, default warn)
 * as the processes use it: the builder checks every definition a
 * backend lists before the lists go into a view (view_fetch.c); the
 * console and vmcpctl decide on pending changes (shared/pin_db.h).
 * The pins live in this host's store (pin.c); with
 * sessionStorage.provider redis they are shared through Redis
 * (pin_redis.c, installed by pin_redis_init()) so that every node pins
 * and withholds alike: the first node to pin a definition wins, and a
 * decision taken on one node is seen by every node's builder.
 */
#ifndef VMCPD_PIN_STORE_H
#define VMCPD_PIN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/pin_rec.h"

struct worker;
struct config_backend;

/* what a view does with one listed definition */
enum pin_verdict {
	PIN_SERVE = 0,		/* as pinned, pinned now, or pinning off */
	PIN_FLAG,		/* a pending change under warn: served, and
				 * flagged (_meta, /status, the console) */
	PIN_WITHHOLD		/* a pending change under enforce, or a
				 * rejected one: left out of every list; a
				 * call to it gets pin_withheld_error() */
};

/*
 * The builder's check of one definition be listed: a first sight is
 * pinned; a definition that differs from its pin is a pending change
 * (logged, audited and counted once per new hash).  Synchronous on the
 * host's copy.  Never fails the listing: a store error serves (and
 * logs).
 */
enum pin_verdict pin_check(struct worker *, const struct config_backend *,
	    enum pin_kind, const json_t *item);

/*
 * The builder's watch: cb(w, backend) when an operator decided on
 * backend's pins here or on another node (pin_db_decided() moved, or
 * Redis said so), within a couple of seconds; the builder lists the
 * backend again and clients get list_changed.
 */
typedef void	(*pin_changed_cb)(struct worker *, const char *backend);
void	 pin_watch(struct worker *, pin_changed_cb);
void	 pin_free(void);

/*
 * The client's error for a call to a withheld definition: a message
 * naming the backend, the definition and how to approve it ("... tool
 * X of backend B changed since it was pinned and awaits an operator's
 * approval (vmcpctl pins approve B X)").
 */
int	 pin_withheld_error(char *buf, size_t len, const char *backend,
	    enum pin_kind, const char *name);

/*
 * pin_redis.c, with sessionStorage.provider redis: Redis holds the
 * fleet's pins and the host's copy follows it.  pin_redis_init() (in
 * the builder) installs pin_remote: pin.c hands it every record it
 * wrote to the host's copy (a first pin goes to Redis only if absent
 * there: another node's first pin wins, comes back into the host's
 * copy and is what the next listing is checked against); and it
 * refreshes the host's copy from Redis every few seconds, calling the
 * pin_watch() callback for a backend whose decisions moved.  vmcpctl
 * and the console write decisions to Redis as well as to the host.
 */
struct pin_remote {
	void	(*pr_put)(struct worker *, const struct pin_rec *);
	void	(*pr_free)(void);
};
extern const struct pin_remote *pin_remote;

/*
 * The console's word (a worker; pin_decide.c): pin_db_decide() on the
 * host's copy, then the changed records to Redis with provider redis.
 * How many changed, or -1.
 */
long	 pin_decide(struct worker *, const char *backend, enum pin_kind,
	    const char *name, int approve);	/* NULL: this host only */
void	 pin_redis_init(struct worker *);
/*
 * pin_decide()'s Redis side (pin_redis.c): rec, as decided on the
 * change whose hash is change, written to Redis if Redis still holds
 * that change undecided (else Redis's record comes into the host's
 * copy).  0 (sent, or no Redis), or -1.
 */
int	 pin_redis_decided(struct worker *, const struct pin_rec *rec,
	    const char *change);

#endif /* VMCPD_PIN_STORE_H */
