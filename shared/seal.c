/*
 * Records sealed at rest: AES-256-GCM (NIST SP 800-38D) through OpenSSL
 * EVP, a fresh random 96-bit nonce per record, the associated data
 * being the record's version and key id and the caller's binding (its
 * LMDB key), so a record copied to another key or sealed under another
 * daemon's key fails authentication.  The key lives in this process
 * only (seal.h).
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "seal.h"

#define SEAL_VERSION	1

static uint8_t	seal_key[SEAL_KEY_LEN];
static uint8_t	seal_keyid[SEAL_KEYID_LEN];
static int	seal_have_key;

int
seal_key_generate(void)
{
	seal_key_clear();
	if (RAND_bytes(seal_key, sizeof(seal_key)) != 1 ||
	    RAND_bytes(seal_keyid, sizeof(seal_keyid)) != 1) {
		seal_key_clear();
		return -1;
	}
	seal_have_key = 1;
	return 0;
}

int
seal_key_set(const uint8_t key[SEAL_KEY_LEN])
{
	static const char	 label[] = "vmcpd seal key id";
	uint8_t			 buf[sizeof(label) + SEAL_KEY_LEN];
	uint8_t			 d[SHA256_DIGEST_LENGTH];

	seal_key_clear();
	memcpy(buf, label, sizeof(label));
	memcpy(buf + sizeof(label), key, SEAL_KEY_LEN);
	(void)SHA256(buf, sizeof(buf), d);
	memcpy(seal_key, key, SEAL_KEY_LEN);
	memcpy(seal_keyid, d, SEAL_KEYID_LEN);
	explicit_bzero(buf, sizeof(buf));
	explicit_bzero(d, sizeof(d));
	seal_have_key = 1;
	return 0;
}

void
seal_key_clear(void)
{
	explicit_bzero(seal_key, sizeof(seal_key));
	memset(seal_keyid, 0, sizeof(seal_keyid));
	seal_have_key = 0;
}

/* one GCM pass: encrypt (enc 1) or decrypt and check the tag (enc 0) */
static int
seal_gcm(int enc, const uint8_t *hdr, const uint8_t *nonce, const void *ad,
    size_t adlen, const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX	*ctx;
	int		 n, rc = -1;

	if (len > INT32_MAX || adlen > INT32_MAX ||
	    (ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL,
	    enc) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, SEAL_NONCE_LEN,
	    NULL) != 1 ||
	    EVP_CipherInit_ex(ctx, NULL, NULL, seal_key, nonce, enc) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &n, hdr, 1 + SEAL_KEYID_LEN) != 1 ||
	    (adlen > 0 && EVP_CipherUpdate(ctx, NULL, &n, ad,
	    (int)adlen) != 1) ||
	    (len > 0 && EVP_CipherUpdate(ctx, out, &n, in, (int)len) != 1))
		goto done;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG,
	    SEAL_TAG_LEN, tag) != 1)
		goto done;
	if (EVP_CipherFinal_ex(ctx, out + len, &n) != 1)
		goto done;
	if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG,
	    SEAL_TAG_LEN, tag) != 1)
		goto done;
	rc = 0;
done:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

int
seal_data(const void *ad, size_t adlen, const void *in, size_t len,
    uint8_t *out, size_t outlen)
{
	uint8_t	*nonce = out + 1 + SEAL_KEYID_LEN;

	if (!seal_have_key || len > SIZE_MAX - SEAL_OVERHEAD ||
	    outlen < len + SEAL_OVERHEAD)
		return -1;
	out[0] = SEAL_VERSION;
	memcpy(out + 1, seal_keyid, SEAL_KEYID_LEN);
	if (RAND_bytes(nonce, SEAL_NONCE_LEN) != 1 ||
	    seal_gcm(1, out, nonce, ad, adlen, in, len,
	    nonce + SEAL_NONCE_LEN, nonce + SEAL_NONCE_LEN + len) == -1) {
		explicit_bzero(out, outlen);
		return -1;
	}
	return 0;
}

int
seal_open(const void *ad, size_t adlen, const uint8_t *in, size_t len,
    uint8_t *out, size_t outlen, size_t *plen)
{
	const uint8_t	*nonce = in + 1 + SEAL_KEYID_LEN;
	uint8_t		 tag[SEAL_TAG_LEN];
	size_t		 n;

	if (!seal_have_key || len < SEAL_OVERHEAD || in[0] != SEAL_VERSION ||
	    memcmp(in + 1, seal_keyid, SEAL_KEYID_LEN) != 0)
		return -1;
	n = len - SEAL_OVERHEAD;
	if (outlen < n)
		return -1;
	memcpy(tag, nonce + SEAL_NONCE_LEN + n, SEAL_TAG_LEN);
	if (seal_gcm(0, in, nonce, ad, adlen, nonce + SEAL_NONCE_LEN, n, out,
	    tag) == -1) {
		explicit_bzero(out, outlen);
		return -1;
	}
	*plen = n;
	return 0;
}
