/*
 * Bytes as lower-case hex (hex.c): trace and span ids, identity
 * scopes, cache and subscription keys.  Pure: no I/O, no global state.
 */
#ifndef VMCPD_HEX_H
#define VMCPD_HEX_H

#include <stddef.h>
#include <stdint.h>

/* 2 * len hex digits of b into out, then a NUL (out: 2 * len + 1) */
void	proto_hex(const uint8_t *b, size_t len, char *out);

#endif /* VMCPD_HEX_H */
