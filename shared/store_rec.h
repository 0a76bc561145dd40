/*
 * The store's internals without LMDB types, shared by the LMDB code
 * (store.c and the files of store_lmdb.h, the only header that includes
 * <lmdb.h>) and store_rec.c (the record codec and key building);
 * store.h is the API.
 */
#ifndef VMCPD_STORE_REC_H
#define VMCPD_STORE_REC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/store.h"

#define STORE_IDX_HDR	9		/* dbtag + be64 expiry */
#define STORE_VAL_MAX	((size_t)INT_MAX - STORE_HDR_LEN)

/* the named db of each kind, by enum store_db */
extern const char *const store_db_names[STORE_NDB];

/* big-endian fields: inline, as they were in store.c's hot reads */
static inline void
store_be16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
store_be32_put(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline void
store_be64_put(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline uint16_t
store_be16_get(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t
store_be32_get(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t
store_be64_get(const uint8_t *p)
{
	uint64_t	 v = 0;
	int		 i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

int	 store_rec_encode_group(void *, size_t, uint8_t type, uint16_t flags,
	    uint64_t expires_ms, uint64_t updated_ms, const void *group,
	    size_t glen, const void *data, size_t len);
/* validate a header and read it without copying the payload */
int	 store_rec_peek(const void *, size_t, struct store_rec *);

/* [u8 dbtag][be64 expires_ms][key] */
size_t	 store_idx_key(uint8_t *, enum store_db, uint64_t expires_ms,
	    const void *key, size_t klen);
/* [u8 tag][group] */
size_t	 store_cnt_key(uint8_t *, unsigned int tag, const void *group,
	    size_t glen);
/* prefix || be64 seq; -1 if over STORE_KEY_MAX */
int	 store_seq_key(uint8_t *, const void *prefix, size_t plen,
	    uint64_t seq);

#endif /* VMCPD_STORE_REC_H */
