/*
 * The worker's Redis connection (sessionStorage.provider redis): one
 * per worker, on hiredis's asynchronous libevent adapter, so no call
 * blocks the loop.  It connects when the worker starts, authenticates
 * (THV_SESSION_REDIS_PASSWORD) and selects db, and reconnects with
 * backoff (REDIS_BACKOFF_MIN_MS doubling to REDIS_BACKOFF_MAX_MS) after
 * any loss.  A command gets its answer, or an error when the
 * connection is down, lost, or slower than REDIS_TIMEOUT_MS (the
 * connection is then dropped and made again: a Redis that hangs is one
 * that is down).  docs/ARCHITECTURE.md, Beyond one host.
 */
#ifndef VMCPD_REDIS_H
#define VMCPD_REDIS_H

#include <stddef.h>

struct worker;
struct redisReply;
struct redis_cmd;

#define REDIS_TIMEOUT_MS	1000
#define REDIS_CONNECT_MS	2000
#define REDIS_BACKOFF_MIN_MS	100
#define REDIS_BACKOFF_MAX_MS	5000

/*
 * The answer to a command: reply, or NULL and err (no secret in it).
 * reply is hiredis's, valid during the call only.
 */
typedef void (*redis_cb)(void *arg, const struct redisReply *reply,
    const char *err);

/* connect if the config says provider redis: 0, or -1 (nothing to do) */
int	 redis_init(struct worker *);
void	 redis_free(void);

/* the connection is up (a command sent now can be answered) */
int	 redis_up(void);

/*
 * Send a command (argc arguments, argv[i] of lens[i] bytes); cb is
 * called once, later, never from within this call.  NULL when it
 * cannot be sent (not connected): the caller decides what that means.
 */
struct redis_cmd *redis_command(int argc, const char **argv,
	    const size_t *lens, redis_cb cb, void *arg);

/* cb is not called any more (the command still runs in Redis) */
void	 redis_cancel(struct redis_cmd *);

/*
 * A Lua script loaded (SCRIPT LOAD) on every connection before any
 * command, so that callers send EVALSHA: the text stays the caller's.
 * 0, or -1 when the table is full.
 */
#define REDIS_SCRIPTS		8
int	 redis_script_add(const char *text);

/* let the commands sent finish, then connect again (scripts reloaded) */
void	 redis_reconnect(void);

#endif /* VMCPD_REDIS_H */
