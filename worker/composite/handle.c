/*
 * Workflow handles (handle.h): minted with the OS's random bits,
 * claimed once in one write txn whose check (owner in constant time,
 * composite, expiry, use, definition) runs on the record's meta line
 * where it lies in the map.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "proto/mheaders.h"
#include "shared/composite.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "shared/store_update.h"
#include "shared/store_codec.h"
#include "worker/auth/auth.h"
#include "worker/composite/handle.h"
#include "worker/composite/handle_redis.h"

struct handle_claim {
	const char		*hc_owner;
	const struct composite	*hc_co;
};

const char *
handle_err_name(enum handle_err e)
{
	switch (e) {
	case HANDLE_OK:
		return "ok";
	case HANDLE_UNKNOWN:
		return "unknown_or_forged";
	case HANDLE_EXPIRED:
		return "expired";
	case HANDLE_NOT_OWNER:
		return "not_owner";
	case HANDLE_REPLAYED:
		return "replayed";
	case HANDLE_WRONG_TOOL:
		return "wrong_composite";
	case HANDLE_STALE:
		return "stale_definition";
	case HANDLE_LIMIT:
		return "limit";
	default:
		return "error";
	}
}

static int
handle_id_new(char id[HANDLE_ID_LEN + 1])
{
	unsigned char	 r[HANDLE_RAND_BYTES];
	char		*b;

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	b = proto_b64_encode(r, sizeof(r), 1);
	OPENSSL_cleanse(r, sizeof(r));
	if (b == NULL)
		return -1;
	(void)snprintf(id, HANDLE_ID_LEN + 1, "%s%s", HANDLE_PREFIX, b);
	OPENSSL_cleanse(b, strlen(b));
	free(b);
	return 0;
}

/* the owner's group in the db's counts: never empty */
static void
handle_group(const char *owner, char *g, size_t len)
{
	(void)snprintf(g, len, "o|%s", owner);
}

enum handle_err
handle_mint(struct store *st, const char *owner, const struct composite *co,
    const json_t *snap, uint64_t now_ms, uint64_t expires_ms,
    char id[HANDLE_ID_LEN + 1])
{
	struct handle_meta	 hm;
	struct store_limit	 lim;
	char			*state = NULL, *buf = NULL;
	char			 group[STORE_GROUP_MAX + 1];
	size_t			 len;
	int			 rc, tries;
	enum handle_err		 e = HANDLE_ERROR;

	id[0] = '\0';
	if (strlen(owner) > HANDLE_OWNER_MAX ||
	    strlen(co->co_name) > HANDLE_NAME_MAX || expires_ms <= now_ms)
		return HANDLE_ERROR;
	if ((state = json_dumps(snap, JSON_COMPACT)) == NULL)
		return HANDLE_ERROR;
	if (strlen(state) > HANDLE_STATE_MAX) {
		e = HANDLE_LIMIT;
		goto done;
	}
	memset(&hm, 0, sizeof(hm));
	memcpy(hm.hm_owner, owner, strlen(owner) + 1);
	memcpy(hm.hm_composite, co->co_name, strlen(co->co_name) + 1);
	memcpy(hm.hm_fp, co->co_fp, sizeof(hm.hm_fp));
	hm.hm_created_ms = now_ms;
	hm.hm_expires_ms = expires_ms;
	if (handle_rec_encode(&hm, state, strlen(state), &buf, &len) == -1)
		goto done;
	handle_group(owner, group, sizeof(group));
	memset(&lim, 0, sizeof(lim));
	lim.sl_max = HANDLE_MAX;
	lim.sl_group = group;
	lim.sl_glen = strlen(group);
	lim.sl_group_max = HANDLE_OWNER_CAP;
	/* 192 random bits do not collide; store_add() makes sure */
	for (tries = 0; tries < 2; tries++) {
		if (handle_id_new(id) == -1)
			goto done;
		rc = store_add_limited(st, STORE_HANDLES, id, HANDLE_ID_LEN,
		    buf, len, expires_ms, now_ms, &lim);
		if (rc == 0) {
			/* shared, any node may take the retry */
			handle_store->hs_minted(id, owner, co->co_name,
			    co->co_fp, state, strlen(state),
			    expires_ms - now_ms);
			e = HANDLE_OK;
			goto done;
		}
		if (rc == STORE_LIMIT_DB || rc == STORE_LIMIT_GROUP) {
			e = HANDLE_LIMIT;
			break;
		}
		if (rc != STORE_EXISTS)
			break;
	}
	id[0] = '\0';
done:
	free(state);
	free(buf);
	return e;
}

/* in the claim's write txn: pure, on the meta line in the map; the
 * mark left is the same line, used */
static int
handle_check(void *arg, const struct store_rec *rec, uint64_t now_ms,
    void *mark, size_t markmax, size_t *marklen)
{
	struct handle_claim	*hc = arg;
	struct handle_meta	 hm;
	char			*line;
	size_t			 len;

	if (handle_rec_meta(rec->sr_data, rec->sr_len, &hm) == -1)
		return HANDLE_UNKNOWN;
	if (!auth_scope_eq(hm.hm_owner, hc->hc_owner))
		return HANDLE_NOT_OWNER;
	if (strcmp(hm.hm_composite, hc->hc_co->co_name) != 0)
		return HANDLE_WRONG_TOOL;
	if (store_rec_expired(rec->sr_expires_ms, now_ms))
		return HANDLE_EXPIRED;
	if (hm.hm_used)
		return HANDLE_REPLAYED;
	if (strcmp(hm.hm_fp, hc->hc_co->co_fp) != 0)
		return HANDLE_STALE;
	hm.hm_used = 1;
	if (handle_rec_encode(&hm, NULL, 0, &line, &len) == -1)
		return HANDLE_ERROR;
	if (len > markmax) {
		free(line);
		return HANDLE_ERROR;
	}
	memcpy(mark, line, len);
	*marklen = len;
	free(line);
	return 0;
}

enum handle_err
handle_resume(struct store *st, const char *id, const char *owner,
    const struct composite *co, uint64_t now_ms, json_t **snap)
{
	struct handle_claim	 hc;
	struct store_rec	 rec;
	json_error_t		 je;
	const char		*state;
	size_t			 slen;
	int			 rc;

	*snap = NULL;
	if (!handle_id_valid(id))
		return HANDLE_UNKNOWN;
	hc.hc_owner = owner;
	hc.hc_co = co;
	rc = store_claim(st, STORE_HANDLES, id, strlen(id), now_ms,
	    handle_check, &hc, &rec);
	if (rc == STORE_NOTFOUND)
		return HANDLE_UNKNOWN;
	if (rc == -1)
		return HANDLE_ERROR;
	if (rc != 0)
		return (enum handle_err)rc;
	if ((state = handle_rec_state(rec.sr_data, rec.sr_len, &slen)) ==
	    NULL || (*snap = json_loadb(state, slen, 0, &je)) == NULL) {
		store_rec_clear(&rec);
		return HANDLE_ERROR;
	}
	store_rec_clear(&rec);
	return HANDLE_OK;
}

/* this host's store alone: the other nodes, if any, never see it */
static void
handle_lmdb_minted(const char *id, const char *owner, const char *composite,
    const char *fp, const char *state, size_t slen, uint64_t ttl_ms)
{
	(void)id;
	(void)owner;
	(void)composite;
	(void)fp;
	(void)state;
	(void)slen;
	(void)ttl_ms;
}

/* handle_resume(), its verdict given to cb at once */
static int
handle_lmdb_claim(struct store *st, const char *id, const char *owner,
    const struct composite *co, uint64_t now_ms, handle_claim_cb cb,
    void *arg)
{
	json_t		*snap;
	enum handle_err	 he;

	he = handle_resume(st, id, owner, co, now_ms, &snap);
	cb(arg, he, snap);
	return 0;
}

static const struct handle_store handle_store_lmdb = {
	handle_lmdb_minted,
	handle_lmdb_claim
};
const struct handle_store *handle_store = &handle_store_lmdb;
