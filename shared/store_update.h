#ifndef VMCPD_STORE_UPDATE_H
#define VMCPD_STORE_UPDATE_H

#include <stddef.h>
#include <stdint.h>

#include "shared/store.h"

/*
 * Read-modify-write of one small record in one write txn: cb gets the
 * live record's payload where it lies in the map (NULL, 0 if absent or
 * expired) and returns STORE_UPD_KEEP (no write), STORE_UPD_PUT (out,
 * *outlen <= outmax bytes, never expiring) or STORE_UPD_DEL.  cb must
 * be pure, as store_read()'s.  Returns 1 written, 0 kept, -1.
 */
#define STORE_UPDATE_MAX	512
#define STORE_UPD_KEEP		0
#define STORE_UPD_PUT		1
#define STORE_UPD_DEL		2
typedef int (*store_update_cb)(void *arg, const void *data, size_t len,
    void *out, size_t outmax, size_t *outlen);
int	 store_update(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t now_ms, store_update_cb, void *arg);

/*
 * Claim one record in one write txn (a handle's first resume): cb sees
 * the record where it lies in the map (rec->sr_data, not NUL-ended,
 * never to be written), live or expired but not yet swept, and returns
 * 0 to take it, having written its mark (*marklen <= markmax bytes:
 * at most the payload's), or any other value to leave it alone.  Taken,
 * the payload is copied to out and replaced by the mark, expiry and
 * group kept, so that a later claim sees the mark.  cb must be pure,
 * as store_read()'s.  Returns 0 (out filled), cb's value (keep it
 * apart from STORE_NOTFOUND), STORE_NOTFOUND or -1.
 */
#define STORE_CLAIM_MARK_MAX	1024
typedef int (*store_claim_cb)(void *arg, const struct store_rec *rec,
    uint64_t now_ms, void *mark, size_t markmax, size_t *marklen);
int	 store_claim(struct store *, enum store_db, const void *key,
	    size_t klen, uint64_t now_ms, store_claim_cb, void *arg,
	    struct store_rec *out);

#endif /* VMCPD_STORE_UPDATE_H */
