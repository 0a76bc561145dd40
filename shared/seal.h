/*
 * seal.c: sealing records at rest (AES-256-GCM, OpenSSL EVP) with a key
 * that exists only in the daemon's memory.  The master makes the key at
 * start, before it forks, so the workers and the builder inherit it; a
 * restart makes a new one and every sealed record becomes unreadable
 * (what is sealed is a cache).  A sealed record names its key (a random
 * key id) and is bound to where it is stored (the caller's associated
 * data, e.g. its LMDB key): opened under another key, or with other
 * associated data, or altered by one bit, it does not open.
 */
#ifndef VMCPD_SEAL_H
#define VMCPD_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define SEAL_KEYID_LEN	8
#define SEAL_NONCE_LEN	12
#define SEAL_TAG_LEN	16
/* version, key id, nonce, then the ciphertext, then the tag */
#define SEAL_OVERHEAD	(1 + SEAL_KEYID_LEN + SEAL_NONCE_LEN + SEAL_TAG_LEN)

#define SEAL_KEY_LEN	32

/* a new key and key id (the old one forgotten): 0, or -1 */
int	 seal_key_generate(void);
/*
 * A key given (sessionStorage.sealKeyFile, shared by the nodes of a
 * fleet): its id derived from it, so every holder names it alike and
 * the id tells nothing of it.  0, or -1.
 */
int	 seal_key_set(const uint8_t key[SEAL_KEY_LEN]);
/* forget the key (zeroed) */
void	 seal_key_clear(void);
/* out holds len + SEAL_OVERHEAD bytes: 0, or -1 (no key, OpenSSL) */
int	 seal_data(const void *ad, size_t adlen, const void *in, size_t len,
	    uint8_t *out, size_t outlen);
/* out holds len - SEAL_OVERHEAD bytes: 0 with *plen, or -1 (not ours,
 * damaged, bound elsewhere) */
int	 seal_open(const void *ad, size_t adlen, const uint8_t *in, size_t len,
	    uint8_t *out, size_t outlen, size_t *plen);

/*
 * seal_json.c: a JSON object sealed under ad and written as lower-case
 * hex, what vmcpd hands out to be handed back (a consent round's
 * requestState, the console's cookies).  max bounds the sealed bytes.
 * Sealed: malloc'd hex digits, or NULL (past max, no key, no memory).
 * Opened: the object, or NULL (not lower-case hex, past max, not sealed
 * by this key under ad, not JSON); its expiry is the caller's to check.
 */
char	*seal_json_hex(const char *ad, const json_t *, size_t max);
json_t	*seal_json_open_hex(const char *ad, const char *hex, size_t max);

#endif /* VMCPD_SEAL_H */
