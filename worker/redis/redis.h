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
 * 0, or -1 when the table is full.
 */
#define REDIS_SCRIPTS		24
int	 redis_script_add(const char *text);

/*
 * The pure parts (worker/redis/redis_codec.c).  A script's SHA-1 in hex, as
 * EVALSHA names it: text is a constant (its address keys a cache of
 * REDIS_SCRIPTS); NULL when the cache is full.
 */
#define REDIS_SHA_LEN		40
const char *redis_script_sha(const char *text);

/*
 * The kinds of record, each under "<keyPrefix><kind>:" (the rate-limit
 * buckets follow the reference's format instead: worker/auth/ratelimit.h).
 */
#define REDIS_KIND_SESSION	"sess"
#define REDIS_KIND_HANDLE	"handle"
#define REDIS_KIND_HEALTH	"health"
#define REDIS_KIND_PEND		"pend"
#define REDIS_KIND_VERDICT	"verdict"	/* the probes' verdicts */
#define REDIS_KIND_TOKEN	"tok"
#define REDIS_KIND_BSESSION	"bs"	/* principals' backend sessions */

/*
 * "<prefix><kind>[:<part>...]", the parts strings ended by NULL
 * (prefix NULL: none): its length, or 0 if it does not fit (never cut).
 * redis_keyf(): the same for a key of printf's format.
 */
size_t	 redis_key(char *, size_t, const char *prefix, const char *kind,
	    ...) __attribute__((__sentinel__));
size_t	 redis_keyf(char *, size_t, const char *fmt, ...)
	    __attribute__((__format__(__printf__, 3, 4)));

/*
 * A command's arguments, pushed in order; the numbers' text is kept in
 * it, the strings are the caller's.  A push past the room sets ra_over
 * and the command is never sent.  redis_args_evalsha() starts one:
 * EVALSHA <script's SHA-1> <nkeys>.
 */
#define REDIS_ARGS_MAX		32
#define REDIS_ARGS_NUMS		16
struct redis_args {
	const char	*ra_argv[REDIS_ARGS_MAX];
	size_t		 ra_lens[REDIS_ARGS_MAX];
	int		 ra_argc;
	int		 ra_over;
	int		 ra_nnums;
	char		 ra_nums[REDIS_ARGS_NUMS][24];
};
void	 redis_args_init(struct redis_args *);
void	 redis_args_evalsha(struct redis_args *, const char *script,
	    unsigned nkeys);
void	 redis_args_push(struct redis_args *, const char *);
void	 redis_args_pushn(struct redis_args *, const char *, size_t);
void	 redis_args_push_u64(struct redis_args *, uint64_t);
void	 redis_args_push_i64(struct redis_args *, int64_t);

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
 * Redis's client-side caching (CLIENT TRACKING, RESP2 redirect mode):
 * with redis_track_init() the subscription (below) takes
 * "__redis__:invalidate" too, and the command connection asks, on
 * each connect and whenever the subscription's connection id changes,
 * that the reads of the commands sent by redis_send_tracked() be
 * tracked (OPTIN: no other command's).  inval(key, len) for each key
 * written (or expired, evicted) since a tracked read of it, NULL for
 * every key (a flush); on(1) each time tracking is asked for (a read
 * sent from then on is tracked if Redis accepts), on(0) when it is off
 * (either connection lost, or Redis refused).  A caller trusts only
 * what it read since the last on(1), and nothing after an on(0).
 */
typedef void (*redis_inval_cb)(const char *key, size_t len);
typedef void (*redis_track_cb)(int on);
void	 redis_track_init(redis_inval_cb, redis_track_cb);
/*
 * redis_send() with its reads tracked: *tracked says whether they are
 * (0: tracking is off, the command is sent all the same).
 */
struct redis_cmd *redis_send_tracked(struct redis_args *, redis_cb,
	    void *arg, int *tracked);
/*
 * Redis answered, on this connection, a command sent within the last
 * ms: a Redis that hangs answers nothing, and what was trusted on its
 * word stops being trusted that long after its last proof of life
 * (its hang itself is seen when a command waits REDIS_TIMEOUT_MS).
 */
#define REDIS_FRESH_MS		1000
int	 redis_fresh(uint64_t ms);
/*
 * redis_sub.c's side: tracking wanted; its connection's id (0: none)
 * and name (CLIENT SETNAME, random: checked with CLIENT LIST ID after
 * the redirect, as ids start again from 1 when Redis restarts);
 * redis_sub_reset() drops the subscription's connection, to be made
 * again (its id named another client)
 */
#define REDIS_SUB_NAME_LEN	48
/*
 * The pure part (worker/redis/redis_codec.c): a reply on
 * "__redis__:invalidate".  1: the subscription confirmed; 0: a message,
 * each key given to each(key, len, arg), or each(NULL, 0, arg) once
 * for every key (a nil, a flush; a key not a string counts as one);
 * -1: not understood (nothing given).
 */
int	 redis_inval_each(const struct redisReply *,
	    void (*each)(const char *, size_t, void *), void *arg);
/*
 * Whether Redis keeps what vmcpd writes across its own restart (pure,
 * redis_codec.c): the value of a CONFIG GET of one parameter ([name,
 * value]), or NULL; then, from appendonly's and save's values, 0 when
 * it does (appendonly yes), 1 with why it does not in buf (no
 * persistence at all, or RDB snapshots only), -1 when either is
 * unknown (CONFIG refused or renamed): nothing to say.
 */
const char *redis_config_value(const struct redisReply *);
int	 redis_persist_verdict(const char *appendonly, const char *save,
	    char *buf, size_t len);
/*
 * Ask it on each connection (the builder does, one process a node) and
 * warn when Redis does not persist, once per verdict.
 */
void	 redis_persist_watch(void);
int	 redis_track_wanted(void);
void	 redis_track_redirect(long long id, const char *name);
void	 redis_track_inval(const char *key, size_t len);
void	 redis_sub_reset(void);

/*
 * The worker's subscription (worker/redis/redis_sub.c): a connection of its
 * own (one in subscribe mode takes no other command) on this worker's
 * channel, "<keyPrefix>wake:<random>", made again with backoff after a
 * loss.  A message lost meanwhile is covered by its reader's own timer.
 * cb(payload, len) for each message.
 */
typedef void (*redis_sub_cb)(const char *, size_t);
int	 redis_sub_init(struct worker *, redis_sub_cb);
/* the same on a channel shared by the nodes; cb(NULL, 0) each time it
 * is subscribed (again): what was published before is lost */
int	 redis_sub_init_channel(struct worker *, const char *chan,
	    redis_sub_cb);
void	 redis_sub_free(void);
/* this worker's channel, or NULL (no subscription) */
const char *redis_sub_channel(void);

#endif /* VMCPD_REDIS_H */
