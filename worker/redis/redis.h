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
#include <stdint.h>

struct worker;
struct redisReply;
struct redis_cmd;
struct redis_args;	/* redis_codec.h */

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

/* the address resolved when the worker started: 0, or -1 (none) */
int	 redis_address(const char **ip, int *port);

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
 * 0, or -1 when the table (REDIS_SCRIPTS, redis_codec.h) is full.
 */
int	 redis_script_add(const char *text);

/* redis_command() of the arguments: NULL if not sent (ra_over too) */
struct redis_cmd *redis_send(struct redis_args *, redis_cb,
	    void *arg);

/* let the commands sent finish, then connect again (scripts reloaded) */
void	 redis_reconnect(void);

/*
 * The users of the connection, each with its own line in the log when
 * a command fails: "<name> (redis): <what>: <error><tail>".
 */
enum redis_user {
	REDIS_USER_SESSION,	/* sessions, streams' events */
	REDIS_USER_HANDLE,	/* workflow handles */
	REDIS_USER_HEALTH,	/* circuit breakers */
	REDIS_USER_PEND,	/* pending requests */
	REDIS_USER_VERDICT,	/* the probes' verdicts */
	REDIS_USER_TOKEN,	/* exchanged tokens */
	REDIS_USER_BSESSION,	/* principals' backend sessions */
	REDIS_USER_TASK,	/* the tasks extension's task records */
	REDIS_USER_LINK,	/* users' upstream accounts, consents */
	REDIS_USER_PIN,		/* pinned definitions */
	REDIS_USER_COUNT
};

/*
 * A command that failed (err, or reply an error or not understood):
 * counted in the worker's diagnostics, and a script flushed (NOSCRIPT)
 * makes the connection start again, which loads the scripts again.
 * The error's text, never NULL.
 */
const char *redis_failure(const struct redisReply *, const char *err);
/* redis_failure(), logged a line a second at most per user (what NULL:
 * left out of the line) */
void	 redis_failed(enum redis_user, const char *what,
	    const struct redisReply *, const char *err);
/* 1 when the user's line a second is due (then taken): for a line of
 * its own, under the same limit */
int	 redis_log_due(enum redis_user);
/* the user's name, as its lines start */
const char *redis_user_name(enum redis_user);
/*
 * Ask it on each connection (the builder does, one process a node) and
 * warn when Redis does not persist, once per verdict.
 */
void	 redis_persist_watch(void);

#endif /* VMCPD_REDIS_H */
