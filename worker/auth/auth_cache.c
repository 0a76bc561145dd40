/*
 * The worker's cache of checked tokens (auth.h, auth_cache_*): a
 * direct-mapped table of principals, each under the very bytes of the
 * token (or the local peer's key) it was checked for.
 *
 * A lookup hashes the token with SipHash-1-3 under a key drawn at
 * random per worker (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012; the 1-3 variant is the one hash tables keyed
 * against flooding use, Python's and Rust's) to find its slot, and
 * takes the slot's
 * principal only if the stored token is the one presented, compared
 * whole in constant time.  So the cache accepts a token only if that
 * exact token was checked: the hash picks a slot, it never decides.
 * The key keeps the slots of other callers' tokens unknown: no one can
 * aim tokens of their own at another's slot to evict it (the worst a
 * collision does is one more check), nor tell from timing which slot
 * holds what; and the compare takes the same time whichever bytes
 * differ, so it tells nothing of a cached token either.  A SHA-256 of every presented token cost 20k instructions a
 * request (an RS256 JWT is ~800 bytes); SipHash and the compare of the
 * same token are a tenth of that.  The table holds a copy of each
 * cached token (at most JWT_TOKEN_MAX bytes, only tokens that passed).
 */
#include <sys/random.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/auth/auth.h"

#define AUTH_CACHE_SLOTS	4096	/* power of two */

struct auth_slot {
	uint64_t		 as_hash;
	char			*as_key;	/* the token's bytes */
	size_t			 as_len;
	struct principal	*as_p;		/* NULL: empty */
};

struct auth_cache {
	uint64_t		 ac_k0, ac_k1;	/* SipHash's key */
	struct auth_slot	 ac_slots[AUTH_CACHE_SLOTS];
};

#define SIP_ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = SIP_ROTL(v1, 13); v1 ^= v0; v0 = SIP_ROTL(v0, 32); \
	v2 += v3; v3 = SIP_ROTL(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = SIP_ROTL(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = SIP_ROTL(v1, 17); v1 ^= v2; v2 = SIP_ROTL(v2, 32); \
} while (0)

static uint64_t
sip_le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	    (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	    (uint64_t)p[7] << 56;
}

/* SipHash-1-3 of len bytes under (k0, k1): the paper's reference with
 * one compression round and three finalization rounds */
uint64_t
auth_siphash(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	const unsigned char	*p = data, *end = p + (len & ~(size_t)7);
	uint64_t		 v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t		 v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t		 v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t		 v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t		 m, b = (uint64_t)len << 56;
	size_t			 i;

	for (; p < end; p += 8) {
		m = sip_le64(p);
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (i = 0; i < (len & 7); i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * a and b (len bytes each) equal, in time that depends on len alone:
 * eight bytes a step, every step taken
 */
static int
auth_cache_same(const char *a, const char *b, size_t len)
{
	uint64_t	 x, y, d = 0;
	size_t		 i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	for (; i < len; i++)
		d |= (uint64_t)((unsigned char)a[i] ^ (unsigned char)b[i]);
	return d == 0;
}

struct auth_cache *
auth_cache_new(void)
{
	struct auth_cache	*ac;
	uint64_t		 k[2];

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k) ||
	    (ac = calloc(1, sizeof(*ac))) == NULL)
		return NULL;
	ac->ac_k0 = k[0];
	ac->ac_k1 = k[1];
	explicit_bzero(k, sizeof(k));
	return ac;
}

static void
auth_slot_clear(struct auth_slot *s)
{
	if (s->as_key != NULL) {
		explicit_bzero(s->as_key, s->as_len);
		free(s->as_key);
	}
	auth_principal_drop(s->as_p);
	memset(s, 0, sizeof(*s));
}

void
auth_cache_free(struct auth_cache *ac)
{
	size_t	 i;

	if (ac == NULL)
		return;
	for (i = 0; i < AUTH_CACHE_SLOTS; i++)
		auth_slot_clear(&ac->ac_slots[i]);
	explicit_bzero(ac, sizeof(*ac));
	free(ac);
}

struct principal *
auth_cache_get(struct auth_cache *ac, const char *key, size_t len,
    int64_t now)
{
	uint64_t		 h = auth_siphash(ac->ac_k0, ac->ac_k1, key, len);
	struct auth_slot	*s = &ac->ac_slots[h & (AUTH_CACHE_SLOTS - 1)];

	if (s->as_p == NULL || s->as_hash != h || s->as_len != len ||
	    !auth_cache_same(s->as_key, key, len))
		return NULL;
	if (s->as_p->p_exp <= now) {
		auth_slot_clear(s);
		return NULL;
	}
	return s->as_p;
}

void
auth_cache_put(struct auth_cache *ac, const char *key, size_t len,
    struct principal *p)
{
	uint64_t		 h = auth_siphash(ac->ac_k0, ac->ac_k1, key, len);
	struct auth_slot	*s = &ac->ac_slots[h & (AUTH_CACHE_SLOTS - 1)];
	char			*copy;

	/* no memory: not cached, checked again next time */
	if ((copy = malloc(len > 0 ? len : 1)) == NULL)
		return;
	memcpy(copy, key, len);
	auth_slot_clear(s);
	s->as_hash = h;
	s->as_key = copy;
	s->as_len = len;
	p->p_refs++;
	s->as_p = p;
}
