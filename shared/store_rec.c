/*
 * The store's pure parts, apart from the LMDB code (store.c and the
 * files of store_lmdb.h, the only header that includes <lmdb.h>): the
 * record codec (store_rec_*), the
 * big-endian fields, the db names, and the keys of the expiry index, the
 * group counts and sequences.  No LMDB type passes here.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/store.h"
#include "shared/store_codec.h"
#include "store_rec.h"

const char *const store_db_names[STORE_NDB] = {
	[STORE_SESSIONS] = "sessions",
	[STORE_EVENTS] = "events",
	[STORE_PENDING] = "pending",
	[STORE_ERAS] = "eras",
	[STORE_VIEWS] = "views",
	[STORE_BSESSIONS] = "bsessions",
	[STORE_HANDLES] = "handles",
	[STORE_TOKENS] = "tokens",
	[STORE_HEALTH] = "health",
	[STORE_LIMITS] = "limits",
	[STORE_BACKENDS] = "backends",
	[STORE_CLOSING] = "closing",
	[STORE_KEYS] = "keys",
	[STORE_SUBS] = "subs",
	[STORE_TASKS] = "tasks",
	[STORE_LINKS] = "links",
	[STORE_CONSENTS] = "consents",
	[STORE_PINS] = "pins",
};

/* --- codec --- */

/*
 * [u8 version][u8 type][be16 flags][u8 group length][3 zero bytes]
 * [be64 expires][be64 updated][group][payload]
 */
int
store_rec_encode_group(void *buf, size_t buflen, uint8_t type,
    uint16_t flags, uint64_t expires_ms, uint64_t updated_ms,
    const void *group, size_t glen, const void *data, size_t len)
{
	uint8_t	*p = buf;

	if (p == NULL || (data == NULL && len > 0) || len > STORE_VAL_MAX ||
	    glen > STORE_GROUP_MAX || (group == NULL && glen > 0) ||
	    buflen < STORE_HDR_LEN + glen + len)
		return -1;
	p[0] = STORE_REC_VERSION;
	p[1] = type;
	store_be16_put(p + 2, flags);
	store_be32_put(p + 4, 0);
	p[4] = (uint8_t)glen;
	store_be64_put(p + 8, expires_ms);
	store_be64_put(p + 16, updated_ms);
	if (glen > 0)
		memcpy(p + STORE_HDR_LEN, group, glen);
	if (len > 0)
		memcpy(p + STORE_HDR_LEN + glen, data, len);
	return (int)(STORE_HDR_LEN + glen + len);
}

int
store_rec_encode(void *buf, size_t buflen, uint8_t type, uint16_t flags,
    uint64_t expires_ms, uint64_t updated_ms, const void *data, size_t len)
{
	return store_rec_encode_group(buf, buflen, type, flags, expires_ms,
	    updated_ms, NULL, 0, data, len);
}

/* validate a header and read it without copying the payload */
int
store_rec_peek(const void *buf, size_t buflen, struct store_rec *out)
{
	const uint8_t	*p = buf;

	memset(out, 0, sizeof(*out));
	if (p == NULL || buflen < STORE_HDR_LEN ||
	    buflen - STORE_HDR_LEN > STORE_VAL_MAX)
		return -1;
	if (p[0] != STORE_REC_VERSION || (store_be32_get(p + 4) & 0xffffff) ||
	    p[4] > STORE_GROUP_MAX || buflen - STORE_HDR_LEN < p[4])
		return -1;
	out->sr_type = p[1];
	out->sr_flags = store_be16_get(p + 2);
	out->sr_glen = p[4];
	out->sr_expires_ms = store_be64_get(p + 8);
	out->sr_updated_ms = store_be64_get(p + 16);
	out->sr_len = buflen - STORE_HDR_LEN - out->sr_glen;
	return 0;
}

int
store_rec_decode(const void *buf, size_t buflen, struct store_rec *out)
{
	if (store_rec_peek(buf, buflen, out) == -1)
		return -1;
	if ((out->sr_data = malloc(out->sr_len + 1)) == NULL) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	if (out->sr_len > 0)
		memcpy(out->sr_data, (const uint8_t *)buf + STORE_HDR_LEN +
		    out->sr_glen, out->sr_len);
	out->sr_data[out->sr_len] = '\0';
	return 0;
}

int
store_rec_expired(uint64_t expires_ms, uint64_t now_ms)
{
	return expires_ms != 0 && expires_ms <= now_ms;
}

void
store_rec_clear(struct store_rec *rec)
{
	if (rec == NULL)
		return;
	free(rec->sr_data);
	memset(rec, 0, sizeof(*rec));
}

uint64_t
store_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *
store_db_name(enum store_db db)
{
	if ((unsigned int)db >= STORE_NDB)
		return NULL;
	return store_db_names[db];
}

int
store_db_lookup(const char *name, enum store_db *db)
{
	unsigned int i;

	if (name == NULL)
		return -1;
	for (i = 0; i < STORE_NDB; i++) {
		if (strcmp(name, store_db_names[i]) == 0) {
			if (db != NULL)
				*db = (enum store_db)i;
			return 0;
		}
	}
	return -1;
}

/* --- keys --- */

size_t
store_idx_key(uint8_t *buf, enum store_db db, uint64_t expires_ms,
    const void *key, size_t klen)
{
	buf[0] = (uint8_t)db;
	store_be64_put(buf + 1, expires_ms);
	memcpy(buf + STORE_IDX_HDR, key, klen);
	return STORE_IDX_HDR + klen;
}

size_t
store_cnt_key(uint8_t *buf, unsigned int tag, const void *group, size_t glen)
{
	buf[0] = (uint8_t)tag;
	memcpy(buf + 1, group, glen);
	return 1 + glen;
}

int
store_seq_key(uint8_t *buf, const void *prefix, size_t plen, uint64_t seq)
{
	if (plen + 8 > STORE_KEY_MAX)
		return -1;
	memcpy(buf, prefix, plen);
	store_be64_put(buf + plen, seq);
	return 0;
}
