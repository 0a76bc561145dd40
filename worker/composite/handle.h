/*
 * Workflow handles (docs/ARCHITECTURE.md, Workflow handles): a composite
 * run suspended for a 2026-07-28 client's input is saved in the store's
 * handles db under a server-minted id of 192 random bits, which the
 * client gets as its requestState (MCP 2026-07-28, Multi Round-Trip
 * Requests) and echoes on the retry.  The record is bound to its owner
 * (the principal scope) and to the composite and its definition; the
 * first resume takes it (one write txn), so a retry replayed after that
 * is refused.  The client sees one error for every refusal (no oracle:
 * HANDLE_CLIENT_MESSAGE, JSON-RPC -32602); the log and the audit say
 * which (handle_err_name()).
 */
#ifndef VMCPD_HANDLE_H
#define VMCPD_HANDLE_H

#include <stdint.h>

#include <jansson.h>

#include "shared/handle_rec.h"

struct store;
struct composite;

enum handle_err {
	HANDLE_OK = 0,
	HANDLE_UNKNOWN,		/* unknown or forged */
	HANDLE_EXPIRED,
	HANDLE_NOT_OWNER,
	HANDLE_REPLAYED,	/* resumed before */
	HANDLE_WRONG_TOOL,	/* minted for another composite */
	HANDLE_STALE,		/* the composite's definition changed */
	HANDLE_LIMIT,		/* mint: at a cap, or the state too big */
	HANDLE_ERROR,		/* the store failed, out of memory */
	HANDLE_UNAVAILABLE	/* the shared store (Redis) did not answer */
};

#define HANDLE_CLIENT_MESSAGE	"invalid or expired requestState"
#define HANDLE_MAX		100000	/* records in the db */
#define HANDLE_OWNER_CAP	1000	/* of one owner */
#define HANDLE_STATE_MAX	(8 * 1024 * 1024)	/* a snapshot's bytes */

/*
 * Saves snap (wf_run_snapshot()) for owner (auth_scope(), "" for the
 * anonymous principal) and composite co until expires_ms (wall clock,
 * as store_now_ms()): the handle's id is written to id.
 */
enum handle_err	 handle_mint(struct store *, const char *owner,
		    const struct composite *co, const json_t *snap,
		    uint64_t now_ms, uint64_t expires_ms,
		    char id[HANDLE_ID_LEN + 1]);
/*
 * The snapshot of handle id (any string the client sent) for a retry
 * of composite co by owner, taken: HANDLE_OK and *snap (the caller's
 * reference, for wf_run_restore()), or why not.
 */
enum handle_err	 handle_resume(struct store *, const char *id,
		    const char *owner, const struct composite *co,
		    uint64_t now_ms, json_t **snap);
/* for logs and audit: unknown_or_forged, expired, not_owner, ... */
const char	*handle_err_name(enum handle_err);

/*
 * Where handles live (sessionStorage.provider), chosen once at start:
 * this host's store alone (handle.c), or Redis's too, so that a retry
 * may come to any node and a replay is refused on all (handle_redis.c,
 * installed by handle_redis_init()).  hs_minted: a handle handle_mint()
 * wrote, made known to the other nodes (not waited for).  hs_claim:
 * the retry's handle taken as handle_resume() does, cb(arg, verdict,
 * snap) with the caller's reference to snap, at once (this host) or
 * later (HANDLE_UNAVAILABLE: Redis did not answer); -1: cb is not
 * called.  handle_redis_cancel(arg) drops a claim's cb.
 */
typedef void	(*handle_claim_cb)(void *, enum handle_err, json_t *);
struct handle_store {
	void	(*hs_minted)(const char *id, const char *owner,
		    const char *composite, const char *fp, const char *state,
		    size_t slen, uint64_t ttl_ms);
	int	(*hs_claim)(struct store *, const char *id, const char *owner,
		    const struct composite *, uint64_t now_ms,
		    handle_claim_cb, void *arg);
};
extern const struct handle_store *handle_store;

#endif /* VMCPD_HANDLE_H */
