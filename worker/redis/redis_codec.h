/*
 * The pure parts of the Redis client (worker/redis/redis_codec.c): no
 * connection, no I/O; what the fuzz targets and unit tests reach.
 */
#ifndef VMCPD_REDIS_CODEC_H
#define VMCPD_REDIS_CODEC_H

#include <stddef.h>
#include <stdint.h>

struct redisReply;

/*
 * A script's SHA-1 in hex, as
 * EVALSHA names it: text is a constant (its address keys a cache of
 * REDIS_SCRIPTS, as many as redis_script_add() loads); NULL when the
 * cache is full.
 */
#define REDIS_SCRIPTS		24
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
#define REDIS_KIND_TASK		"task"	/* the tasks extension's records */
#define REDIS_KIND_LINK		"link"	/* users' upstream accounts */
#define REDIS_KIND_CONSENT	"consent"	/* their pending consents */

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

#endif /* VMCPD_REDIS_CODEC_H */
