/*
 * A record's bytes as the store keeps them (store_rec.c): pure, for the
 * store's files, tools that read records whole, and the fuzz target.
 */
#ifndef VMCPD_STORE_CODEC_H
#define VMCPD_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "shared/store.h"

/* codec, pure and unit-tested: header + payload */
int	 store_rec_encode(void *buf, size_t buflen, uint8_t type,
	    uint16_t flags, uint64_t expires_ms, uint64_t updated_ms,
	    const void *data, size_t len);
int	 store_rec_decode(const void *buf, size_t buflen,
	    struct store_rec *out);	/* copies the payload */
int	 store_rec_expired(uint64_t expires_ms, uint64_t now_ms);

#endif /* VMCPD_STORE_CODEC_H */
