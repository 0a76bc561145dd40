#ifndef VMCPD_STORE_SUBS_H
#define VMCPD_STORE_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include "shared/store_limit.h"

/*
 * Resource subscriptions (store_subs.c; keys and values: subs_rec.h),
 * in STORE_SUBS.  A holding (h|) and its index entry (k|) are written
 * and deleted together, in one write txn per batch; when the first
 * holder of a (backend, URI) comes or the last one goes, the pair's
 * mark (d|) is written for the process that makes and ends the
 * backend's subscriptions to take (store_take_prefix()).  *marked
 * counts the marks written.
 */
struct store_hold {
	const char	*sh_key;	/* h|... (subs_key_hold()) */
	size_t		 sh_klen;
	const char	*sh_val;	/* subs_val_encode()'s */
	size_t		 sh_vlen;
};
/*
 * Hold n pairs (one already held is left as it is) in one write txn;
 * the new ones count in lim's group (sl_group, sl_group_max; sl_max is
 * not used): STORE_LIMIT_GROUP and nothing written if they would pass
 * it.  expires_ms: the holdings' expiry (0: none), flagged STORE_F_CLOSE
 * so that their sweep leaves them in STORE_CLOSING.
 */
int	 store_subs_hold(struct store *, const struct store_hold *, size_t n,
	    const struct store_limit *, uint64_t expires_ms, uint64_t now_ms,
	    size_t *marked);
/* release at most max holdings whose key starts with prefix (a holder's,
 * or a holder's of one URI): *released, *marked; *more if some are left */
int	 store_subs_release(struct store *, const void *prefix, size_t plen,
	    size_t max, uint64_t now_ms, size_t *released, size_t *marked,
	    int *more);
/* a holding the sweep took (STORE_CLOSING): its index entry goes too */
int	 store_subs_closed(struct store *, const void *hkey, size_t hklen,
	    const void *val, size_t vlen, uint64_t now_ms, size_t *marked);

#endif /* VMCPD_STORE_SUBS_H */
