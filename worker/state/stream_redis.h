/*
 * The event replay buffer of Legacy sessions in Redis
 * (sessionStorage.provider redis): a session's GET stream events are a
 * capped list <keyPrefix>sess:<id>:ev of "<id> <message>" entries, the
 * ids from the counter <keyPrefix>sess:<id>:ev:seq, both written by one
 * script (INCR, RPUSH, LTRIM, PEXPIRE) so the list is always in id
 * order.  A stream only ever writes what it read back from the list, so
 * an event sent is an event in Redis, and a Last-Event-ID resume on any
 * node reads the same list.  docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_STREAM_REDIS_H
#define VMCPD_STREAM_REDIS_H

#include <stddef.h>
#include <stdint.h>

struct worker;
struct redisReply;
struct redis_cmd;
struct redis_args;

/* the most events one read answers (a longer backlog: read again) */
#define STREAM_RREAD_MAX	256

extern const char stream_redis_append_lua[];
extern const char stream_redis_read_lua[];

/*
 * "<prefix>sess:<id>:ev" and "…:ev:seq" (tag ""), a POST stream's
 * "<prefix>sess:<id>:ev:<tag>" and "…:ev:<tag>:seq": 0 if they do not
 * fit
 */
size_t	 stream_redis_keys(char *ev, char *seq, size_t buflen,
	    const char *prefix, const char *id, const char *tag,
	    size_t *seqlen);

/* EVALSHA's arguments (the strings stay the caller's) */
void	 stream_redis_append_args(struct redis_args *, const char *ev,
	    size_t evlen, const char *seq, size_t seqlen, const char *msg,
	    size_t mlen, unsigned cap, uint64_t ttl_ms);
/* after: the last id the client has, or -1 for "from what is there" */
void	 stream_redis_read_args(struct redis_args *, const char *ev,
	    size_t evlen, const char *seq, size_t seqlen, int64_t after);

/* the append's answer: the event's id, or 0 (an error) */
uint64_t stream_redis_appended(const struct redisReply *);

/*
 * The read's answer: 0 and *after (the id the events follow) and
 * *count, or -1 (an error, or not understood).  Event i (0..count-1)
 * by stream_redis_event(): 0 and its id and message, or -1.
 */
int	 stream_redis_answer(const struct redisReply *, uint64_t *after,
	    size_t *count);
int	 stream_redis_event(const struct redisReply *, size_t i,
	    uint64_t *id, const char **msg, size_t *mlen);

/* the worker's side */
void	 stream_redis_init(struct worker *);
int	 stream_redis_on(void);
/*
 * done(w, sid, id) once the event is in Redis, id 0 if it is not
 * (never within this call).  -1: not sent (not connected).
 */
int	 stream_redis_append(struct worker *, const char *sid,
	    const char *tag, const char *msg, size_t mlen,
	    void (*done)(struct worker *, const char *sid, const char *tag,
	    uint64_t));
/* the read (cb: redis.h's, its reply read by stream_redis_answer()) */
struct redis_cmd *stream_redis_read(struct worker *, const char *sid,
	    const char *tag, int64_t after, void (*cb)(void *, const struct redisReply *,
	    const char *), void *arg);

#endif /* VMCPD_STREAM_REDIS_H */
