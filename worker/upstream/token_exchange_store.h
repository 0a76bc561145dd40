/*
 * Where exchanged tokens are shared (sessionStorage.provider), chosen
 * once at start: nowhere beyond this host's store (token_exchange.c, the
 * default), or Redis, so that N nodes missing a token cost one
 * exchange (token_exchange_redis.c, installed by texch_redis_init()).
 * tt_fetch(key): cb(arg, HIT, token, len, ttl) with the token (valid
 * during the call), or cb(arg, MINE or LOCAL, ...) when this node is
 * to exchange; never within the call.  NULL: not asked (exchange
 * here).  tt_cancel: a fetch's cb is not called (NULL: none).
 * tt_done: an exchange tt_fetch() answered MINE or LOCAL for ended,
 * its token (NULL: failed) shared for ttl_ms.
 */
#ifndef VMCPD_TEXCH_STORE_H
#define VMCPD_TEXCH_STORE_H

#include <stddef.h>
#include <stdint.h>

struct texch_rfetch;

enum texch_rget {
	TEXCH_R_HIT = 0,	/* the token, another node's */
	TEXCH_R_MINE,		/* this node exchanges, the lock taken */
	TEXCH_R_LOCAL		/* exchange here (Redis failed or slow) */
};

typedef void (*texch_rfetch_cb)(void *, enum texch_rget, const char *,
    size_t, uint64_t);

struct texch_store {
	struct texch_rfetch *(*tt_fetch)(const char *key, texch_rfetch_cb,
		    void *arg);
	void	(*tt_cancel)(struct texch_rfetch *);
	void	(*tt_done)(const char *key, const char *token, size_t len,
		    uint64_t ttl_ms);
};

extern const struct texch_store *texch_store;

#endif /* VMCPD_TEXCH_STORE_H */
