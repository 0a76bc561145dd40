/*
 * An operator's word on pinned definitions from a worker (the console;
 * pin_store.h): decided on the host's copy (shared/pin_db.h), which
 * moves the backend's decision stamp that the builder watches, then
 * each changed record to Redis with sessionStorage.provider redis,
 * where every node's builder finds it.  pin_db_decide() counts it for
 * /metrics (vmcpd_pin_decisions_total), as for vmcpctl's.
 */
#include <stdint.h>
#include <stdio.h>

#include "shared/log.h"
#include "shared/pin_db.h"
#include "worker/process/process.h"
#include "worker/state/pin_store.h"

struct pin_word {
	struct worker	*pw_w;
	int		 pw_approve;
};

/* a record decided: the change it was (now the pin, if approved) */
static int
pin_decide_on(void *arg, const struct pin_rec *rec)
{
	struct pin_word	*pw = arg;

	log_info("pins: %s %s of backend %s: change %.12s %s",
	    pin_kind_name(rec->pr_kind), rec->pr_name, rec->pr_backend,
	    pw->pw_approve ? rec->pr_hash : rec->pr_new,
	    pw->pw_approve ? "approved" : "rejected");
	if (pin_redis_decided(pw->pw_w, rec, pw->pw_approve ? rec->pr_hash :
	    rec->pr_new) == -1)
		log_warnx("pins: backend %s: the decision is this node's "
		    "only (Redis not reached)", rec->pr_backend);
	return 0;
}

long
pin_decide(struct worker *w, const char *backend, enum pin_kind kind,
    const char *name, int approve)
{
	struct pin_word	pw = { w, approve };

	return pin_db_decide_each(w->w_store, backend, kind, name, approve,
	    pin_decide_on, &pw);
}
