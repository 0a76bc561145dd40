/*
 * Workflow handles in Redis (sessionStorage.provider redis): a handle
 * minted on one node is written to <keyPrefix>handle:<id> as well (a
 * hash {o owner, c composite, f fingerprint, s state, u used}, PEXPIRE
 * at the workflow's deadline), and a retry is claimed there, whichever
 * node it reaches: one script checks owner, composite, use and
 * definition, marks the handle used and answers the state, so a replay
 * is refused on every node.  docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_HANDLE_REDIS_H
#define VMCPD_HANDLE_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "worker/composite/handle.h"

struct worker;
struct redisReply;

#define HANDLE_RKEY_MAX	256

/* pure (worker/composite/handle_redis_codec.c) */
extern const char handle_redis_mint_lua[];
extern const char handle_redis_claim_lua[];
/* the key: redis_key()'s REDIS_KIND_HANDLE, <id> */
/* the claim script's answer: HANDLE_OK and the state, or why not */
enum handle_err handle_redis_verdict(const struct redisReply *,
	    const char **state, size_t *slen);

/* the worker's side: handle_store's, with provider redis */
void	 handle_redis_init(struct worker *);
/* a claim's arg gone: its cb is not called */
void	 handle_redis_cancel(void *arg);

#endif /* VMCPD_HANDLE_REDIS_H */
