/*
 * Pending relayed requests in Redis (sessionStorage.provider redis): a
 * request a Legacy backend sent mid-call (elicitation, sampling,
 * roots), relayed to the client under an id of vmcpd's, is recorded
 * under <keyPrefix>pend:<session>:<id> as well as in the host's store,
 * so the client's answer is sent on to the backend by whichever node it
 * reaches.  The answer takes the record with GETDEL (once, on one
 * node); Redis down fails the answer closed (503).
 * docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_PEND_REDIS_H
#define VMCPD_PEND_REDIS_H

#include <stddef.h>
#include <stdint.h>

struct worker;
struct httpd_req;
struct redisReply;

#define PEND_RKEY_MAX	512

/* pure (worker/relay/pending_redis_codec.c) */
/* the key: redis_key()'s REDIS_KIND_PEND, <sid>, <id> */
/* GETDEL's answer: 1 and the record, 0 (none), or -1 (an error) */
int	 pend_redis_record(const struct redisReply *, const char **rec,
	    size_t *len);

/*
 * MRTR's input requests (worker/relay/mrtr.c): the record is a hash {c: the
 * waiting worker's channel, a: the answer}.  ask: KEYS[1], ARGV[1] the
 * channel, ARGV[2] the time to live in ms.  answer: KEYS[1], ARGV[1]
 * the answer, ARGV[2] the id to publish; 1 (published), 0 (no such
 * record), -1 (answered already).  take: KEYS[1]; the answer, the
 * record deleted, or nil (not answered yet, or none).
 */
enum pend_script { PEND_ASK, PEND_ANSWER, PEND_TAKE, PEND_NSCRIPTS };
extern const char *const pend_redis_lua[PEND_NSCRIPTS];
/* the answer script's reply: 1, 0, -1 as above, or -2 (an error) */
int	 pend_redis_answered(const struct redisReply *);

/* the worker's side: off unless provider redis */
void	 pend_redis_init(struct worker *);
int	 pend_redis_on(void);
/* the answer's 503: Redis did not answer (fail closed) */
void	 pend_redis_unavailable(struct httpd_req *);
/* recorded, or gone: not waited for (the relay and the answer go on) */
void	 pend_redis_put(const char *sid, const char *id, const char *rec,
	    size_t len, uint64_t ttl_ms);
void	 pend_redis_del(const char *sid, const char *id);
/*
 * The record taken (read and deleted at once): cb(arg, rec, len, 0),
 * rec NULL when there is none, or cb(arg, NULL, 0, -1) when Redis did
 * not answer; never within this call.  -1: not sent (not connected).
 */
typedef void	(*pend_taken_cb)(void *, const char *, size_t, int);
int	 pend_redis_take(const char *sid, const char *id, pend_taken_cb,
	    void *arg);

/*
 * MRTR: the record of an input request another node may take the
 * answer of (not waited for); the answer recorded and the waiting
 * worker woken, done(arg, 1, 0, -1 as above, or -2: Redis did not
 * answer) later (-1 returned: not sent); the answer taken, as
 * pend_redis_take().
 */
void	 pend_redis_ask(const char *sid, const char *id, uint64_t ttl_ms);
int	 pend_redis_answer(const char *sid, const char *id, const char *ans,
	    size_t alen, void (*done)(void *, int), void *arg);
int	 pend_redis_take_answer(const char *sid, const char *id,
	    pend_taken_cb, void *arg);

#endif /* VMCPD_PEND_REDIS_H */
