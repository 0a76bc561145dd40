/*
 * Legacy sessions in Redis (sessionStorage.provider redis): the record
 * is a hash {v: version stamp, r: the record} under
 * <keyPrefix>sess:<id>, written by a script that bumps the stamp, and
 * expiring (PEXPIRE) when the session would; each host keeps an LMDB
 * copy carrying the stamp it copies.  Before a Legacy request with
 * Mcp-Session-Id goes on, one script compares the copy's stamp with
 * Redis's and answers the record when they differ; Redis down fails
 * the request closed (503).  docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_SESSION_REDIS_H
#define VMCPD_SESSION_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "worker/state/session_store.h"

struct worker;
struct httpd_req;
struct redisReply;
struct redis_args;
struct session;

#define SESSION_RKEY_MAX	512
/* the 503's message when Redis does not answer (fail closed) */
#define SESSION_REDIS_DOWN	"Service Unavailable: the session store " \
	"(Redis) is unavailable; try again later"

/* the scripts (their text, loaded on each connection) */
extern const char session_redis_put_lua[];
extern const char session_redis_get_lua[];

/*
 * EVALSHA's arguments for the put script (the key and record stay the
 * caller's); the key is redis_key()'s REDIS_KIND_SESSION, <id>.
 */
int	 session_redis_put_args(struct redis_args *, const char *key,
	    size_t klen, const char *rec, size_t rlen, uint64_t expires_ms,
	    uint64_t now_ms, int create);

/* what the get script answered */
enum session_rverdict {
	SESSION_R_GONE = 0,	/* no such session in Redis */
	SESSION_R_SAME,		/* the copy's stamp is Redis's */
	SESSION_R_NEW,		/* another stamp: the record is given */
	SESSION_R_ERROR		/* an error, or an answer not understood */
};
enum session_rverdict session_redis_verdict(const struct redisReply *,
	    uint64_t *stamp, const char **rec, size_t *rlen);

/* the worker's side: off unless provider redis */
void	 session_redis_init(struct worker *);
int	 session_redis_on(void);
void	 session_redis_put(const char *id, const char *rec, size_t rlen,
	    uint64_t expires_ms, uint64_t now_ms, int create);
void	 session_redis_del(const char *id);
/* a failure (what: a phrase), counted, logged a line a second at most */
void	 session_redis_failed(const void *what, const struct redisReply *,
	    const char *err);
/*
 * A new session written to Redis; done(arg, 0) once it is there, or
 * done(arg, -1) (Redis down), never within this call.  -1: not sent.
 * session_redis_cancel(arg): done is not called.
 */
int	 session_redis_create(const struct session *, uint64_t ttl_ms,
	    uint64_t now_ms, void (*done)(void *, int), void *arg);
int	 session_redis_del_wait(const char *id, void (*done)(void *, int),
	    void *arg);
void	 session_redis_cancel(void *arg);

/* session_store.h's ss_sync: SESSION_SYNC_GO when the copy is Redis's */
int	 session_redis_sync(struct worker *, struct httpd_req *,
	    session_cont_fn);

#endif /* VMCPD_SESSION_REDIS_H */
