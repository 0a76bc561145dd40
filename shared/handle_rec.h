/*
 * A workflow handle's record in the store's handles db (worker/composite/handle.c
 * writes and claims them, vmcpctl dumps them): one line of JSON that
 * says whose it is and for what, then, until the handle is used, the
 * suspended run's snapshot (shared/composite_snap.c).  The line alone
 * is what a dump shows: never the snapshot, which holds the steps'
 * outputs and a backend's requestState.
 */
#ifndef VMCPD_HANDLE_REC_H
#define VMCPD_HANDLE_REC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/composite.h"

#define HANDLE_PREFIX		"vmcpd-h-"
#define HANDLE_RAND_BYTES	24	/* 192 random bits */
#define HANDLE_ID_LEN		(8 + 32)	/* prefix, base64url */
#define HANDLE_OWNER_MAX	64
#define HANDLE_NAME_MAX		128	/* a tool name */

struct handle_meta {
	char		 hm_owner[HANDLE_OWNER_MAX + 1];	/* "" anonymous */
	char		 hm_composite[HANDLE_NAME_MAX + 1];
	char		 hm_fp[COMPOSITE_FP_LEN + 1];
	uint64_t	 hm_created_ms;
	uint64_t	 hm_expires_ms;
	int		 hm_used;	/* resumed once: no snapshot left */
};

/* the line, then the state if not NULL: a malloc'd payload */
int	 handle_rec_encode(const struct handle_meta *, const char *state,
	    size_t slen, char **buf, size_t *len);
/* the line of a payload (not NUL-ended): 0, or -1 if it is no record */
int	 handle_rec_meta(const void *data, size_t len, struct handle_meta *);
/* the state after the line, and its length; NULL if none */
const char *handle_rec_state(const void *data, size_t len, size_t *slen);
/*
 * What vmcpctl dump handles shows of a record: the id's first
 * characters only, the owner's scope (a hash), the composite, its
 * fingerprint's start, the stamps (ms), whether used, the size; never
 * the state.  A record that is no handle's shows its key's start.
 */
#define HANDLE_DUMP_ID	14	/* the prefix and 6 of 32 characters */
json_t	*handle_rec_dump(const void *key, size_t klen, const void *data,
	    size_t len);
/* HANDLE_PREFIX and 32 base64url characters */
int	 handle_id_valid(const char *id);

#endif /* VMCPD_HANDLE_REC_H */
