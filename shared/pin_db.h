/*
 * Pinned definitions in this host's store (the pins db), for every
 * process that holds a struct store: the builder's check
 * (worker/state/pin_store.h), the console, and vmcpctl, which links
 * only shared/ and proto/.  Synchronous, each call its own short
 * transaction.  With sessionStorage.provider redis the pins are
 * shared through Redis (worker/state/pin_redis.c); this is then the
 * host's copy, which the builder keeps current.
 */
#ifndef VMCPD_PIN_DB_H
#define VMCPD_PIN_DB_H

#include <stddef.h>
#include <stdint.h>

#include "shared/pin_rec.h"

struct store;

/* rec of (backend, kind, name): 0 (rec filled; pin_rec_clear() it),
 * STORE_NOTFOUND, or -1 */
int	 pin_db_get(struct store *, const char *backend, enum pin_kind,
	    const char *name, struct pin_rec *rec);
/* written, never expiring: 0, or -1 */
int	 pin_db_put(struct store *, const struct pin_rec *);
/* dropped: 0, STORE_NOTFOUND, or -1 */
int	 pin_db_del(struct store *, const char *backend, enum pin_kind,
	    const char *name);

/*
 * Each record of backend (NULL: every backend's), in key order, handed
 * to cb (valid during the call only; a non-zero return stops): how many
 * were handed, or -1.
 */
typedef int	(*pin_db_cb)(void *arg, const struct pin_rec *);
int	 pin_db_list(struct store *, const char *backend, pin_db_cb,
	    void *arg);
/*
 * pin_db_list() of the records with a change (pending or rejected)
 * alone, the pinned ones passed over unparsed: for /status and the
 * console, which show changes (how many handed, or -1)
 */
int	 pin_db_list_changes(struct store *, const char *backend, pin_db_cb,
	    void *arg);
/* the pending changes of backend (NULL: all), for /status and /metrics:
 * one read (the store counts them) */
long	 pin_db_pending(struct store *, const char *backend);

/*
 * An operator's word on a pending (or rejected) change: approve makes
 * pr_new the pin (PIN_PINNED), reject marks it PIN_REJECTED.  name
 * NULL: every pending change of backend (approve-all).  How many
 * records changed (0: nothing pending by that name), or -1.  Each
 * change bumps the backend's decision stamp (pin_db_decided()), which
 * the builder watches to list the backend again, so that clients get
 * list_changed.
 */
long	 pin_db_decide(struct store *, const char *backend, enum pin_kind,
	    const char *name, int approve);
/* the backend's last decision, ms (0: none): the builder's watch */
uint64_t pin_db_decided(struct store *, const char *backend);

/*
 * pin_db_decide(), handing each changed record, as written, to cb (NULL:
 * none), for a copy elsewhere (Redis).  pin_db_stamp() moves backend's
 * decision stamp on by itself (a decision learnt from another node): 0,
 * or -1.
 */
long	 pin_db_decide_each(struct store *, const char *backend,
	    enum pin_kind, const char *name, int approve, pin_db_cb,
	    void *arg);
int	 pin_db_stamp(struct store *, const char *backend);

/*
 * A record as Redis holds it (the fleet's) into this host's copy if it
 * says otherwise (its pin, state or change), its backend's name into
 * backend: 1 taken, 0 the same, -1 not a record or not written.
 */
int	 pin_db_take(struct store *, const void *, size_t,
	    char backend[PIN_BACKEND_MAX + 1]);

/* the decisions taken on this host (any process), ever: /metrics */
#define PIN_DB_APPROVED	"pins|approved"		/* store gauges */
#define PIN_DB_REJECTED	"pins|rejected"

#endif /* VMCPD_PIN_DB_H */
