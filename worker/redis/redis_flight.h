/*
 * One maker per record across the nodes (sessionStorage.provider
 * redis): a record that any node can make at a cost (an exchanged
 * token, a principal's backend session) is made by one and read by the
 * others.  One script reads the record at <key> or takes the fleet's
 * lock "<key>:lock" (SET NX PX), so N nodes asking at once cost one
 * making: the others poll every REDIS_FLIGHT_POLL_MS until the record
 * shows or the lock goes (one of them takes it then), for at most the
 * wait they were given, and then make it on their own.
 * redis_flight_done() writes what was made (nothing after a failure)
 * and lets the lock go if it is still this process's.  Redis down or
 * slow: the record is made here (it is only shared, never needed).
 * docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_REDIS_FLIGHT_H
#define VMCPD_REDIS_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "worker/redis/redis.h"

struct worker;
struct redisReply;
struct redis_flight;

#define REDIS_FLIGHT_POLL_MS	100	/* a node waiting for another's */
#define REDIS_FLIGHT_LOCK_MAX	16	/* ":lock" and room */

enum redis_flight_got {
	REDIS_FLIGHT_HIT = 0,	/* the record, another's */
	REDIS_FLIGHT_MINE,	/* this process makes it, the lock taken */
	REDIS_FLIGHT_BUSY,	/* another makes it */
	REDIS_FLIGHT_LOCAL,	/* make it here (Redis failed, or slow) */
	REDIS_FLIGHT_ERROR	/* an answer not understood */
};

/* pure (worker/redis/redis_codec.c) */
extern const char redis_flight_get_lua[];
extern const char redis_flight_done_lua[];
/* the get script's answer: HIT with the record (inside the answer) and
 * its time to live (>= 1 ms), MINE, BUSY or ERROR */
enum redis_flight_got redis_flight_answer(const struct redisReply *,
	    const char **val, size_t *len, uint64_t *ttl_ms);

/*
 * The process's side (worker/redis/redis_flight.c).  redis_flight_fetch():
 * cb(arg, HIT, record, len, ttl) with the record valid during the call,
 * or cb(arg, MINE or LOCAL, NULL, 0, 0) when this process is to make
 * it; never within the call.  The lock lives lock_ms; a wait for
 * another's making ends after wait_ms.  NULL: not sent (make it here).
 * what names the record in the log (a line a second per user).
 */
typedef void (*redis_flight_cb)(void *arg, enum redis_flight_got,
    const char *val, size_t len, uint64_t ttl_ms);
void	 redis_flight_init(struct worker *);
struct redis_flight *redis_flight_fetch(const char *key, uint64_t lock_ms,
	    uint64_t wait_ms, enum redis_user, const char *what,
	    redis_flight_cb, void *arg);
void	 redis_flight_cancel(struct redis_flight *);
/* the making ended: val (NULL: failed) set for ttl_ms, the lock let go
 * if this process holds it */
void	 redis_flight_done(const char *key, const char *val, size_t len,
	    uint64_t ttl_ms, enum redis_user, const char *what);
/* before redis_free(): every fetch cancelled, none after */
void	 redis_flight_free(void);

#endif /* VMCPD_REDIS_FLIGHT_H */
