/*
 * Rate limits (vmcpd.yaml rateLimiting): the token buckets a tools/call
 * is subject to, shared by every worker through the store
 * (shared/store_bucket.c), checked at each edge's tools/call dispatch
 * after the authorization gate, so that a denied call takes no token.
 */
#ifndef VMCPD_RATELIMIT_H
#define VMCPD_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct worker;
struct principal;
struct httpd_req;
struct mcp_method;
struct config_bucket;
struct redisReply;
struct redis_args;

/* JSON-RPC code and message of a rejection (as the reference vMCP) */
#define RATELIMIT_CODE		429
#define RATELIMIT_MESSAGE	"Rate limit exceeded"

enum ratelimit_verdict {
	RATELIMIT_OK = 0,	/* a token taken from every bucket (or none
				   applies, or the store failed: fail open) */
	RATELIMIT_LIMITED,	/* none taken; *retry_s set */
	RATELIMIT_PENDING,	/* Redis is asked: resume() is called with
				   the same arg, and ratelimit_call() then
				   answers the verdict */
	RATELIMIT_ERROR		/* internal: the Redis answer is unusable */
};

/* the buckets a call is subject to: at most four */
#define RATELIMIT_BUCKETS	4

/* the view callback a pending verdict resumes (worker/view/view.h view_cb) */
typedef void	(*ratelimit_resume_fn)(void *arg, json_t *view,
		    const char *err);

/*
 * A wait on Redis's buckets (a composite step's): done(arg, verdict,
 * retry_s) is called once, later, unless cancelled first.
 */
struct ratelimit_wait;
typedef void	(*ratelimit_done_fn)(void *arg, enum ratelimit_verdict,
		    unsigned int retry_s);
void	 ratelimit_wait_cancel(struct ratelimit_wait *);

/* the bucket key's longest tool name (config_policy.c checks it) */
#define RATELIMIT_KEY_MAX	(2 + 32 + 2 + 256)
/* and of its Redis key: namespace, server name, tool, scope */
#define RATELIMIT_RKEY_MAX	1024

/*
 * The key of a bucket: kind ('S' shared, 'U' user, 'T' shared tool,
 * 'V' user tool), the principal scope when per user (fixed length), and
 * the tool name length-prefixed, so no name or scope can spell another
 * bucket's key.  Returns its length, or 0 if it does not fit.
 */
size_t	ratelimit_key(uint8_t *buf, size_t buflen, char kind,
	    const char *scope, const char *tool, size_t toollen);

/* the buckets of a tools/call of tool (len bytes) by principal p */
enum ratelimit_verdict ratelimit_check(struct worker *,
	    const struct principal *p, const char *tool, size_t len,
	    unsigned int *retry_s);

/*
 * A composite's step calling tool: the composite's tools/call took the
 * server's shared token and the caller's per-user one; each step takes
 * a token of the caller's per-user bucket and of its tool's own
 * buckets, as a direct call of the tool would, so that neither a
 * user's nor a tool's limit is stretched by a workflow (a composite of
 * n steps costs its caller n + 1).  The shared bucket is admission: a
 * composite takes it once.  With Redis's buckets it answers
 * RATELIMIT_PENDING, *wait set, and done() is called with the verdict.
 */
enum ratelimit_verdict ratelimit_step(struct worker *,
	    const struct principal *p, const char *tool, size_t len,
	    unsigned int *retry_s, ratelimit_done_fn done, void *arg,
	    struct ratelimit_wait **wait);

/*
 * At an edge's dispatch of a request of method mm (the tools/call is
 * metered, nothing else is), after the authorization gate: the tool's
 * name is fast (fastlen bytes, the hot path's scan) or params.name.
 */
enum ratelimit_verdict ratelimit_call(struct worker *, struct httpd_req *,
	    const struct mcp_method *mm, const char *fast, size_t fastlen,
	    const json_t *params, unsigned int *retry_s,
	    ratelimit_resume_fn resume, void *arg, json_t *view);

/* the request arg is freed: a pending verdict resumes nothing */
void	 ratelimit_cancel(void *arg);

/*
 * Redis (worker/auth/ratelimit_redis.c): the reference vMCP's bucket keys,
 * thv:rl:{ns:server}:shared, ...:shared:tool:<t>, ...:user:<uid> and
 * ...:user-tool:<t>:<uid> (kind 'S', 'T', 'U', 'V'): the length, or 0
 * if it does not fit.
 */
size_t	 ratelimit_redis_key(char *buf, size_t buflen, const char *ns,
	    const char *server, char kind, const char *uid, const char *tool,
	    size_t toollen);

/* the token-bucket script (Lua), sent by redis_script_sha() */
extern const char ratelimit_lua[];

/* with Redis: the script loaded on each connection */
void	 ratelimit_init(struct worker *);
/* the worker ends: the waits left are dropped, none answered */
void	 ratelimit_free(void);

/*
 * An EVALSHA of the script over n buckets: keys, each one's limit, the
 * tokens asked of each (want calls, a batch's: at least 1) and the
 * lease's divisor (0: no lease).
 */
int	 ratelimit_redis_args(struct redis_args *,
	    const char *const *keys, const size_t *klens,
	    const struct config_bucket *const *cb, size_t n,
	    unsigned int want, unsigned int lease_div);

/*
 * The script's answer to want calls: OK (all granted), LIMITED (only
 * *granted of them, the first ones; *retry_ms set) or ERROR (nothing
 * understood, *granted 0: more than want is an error too); *leased the
 * tokens taken beyond the batch's (OK only), the worker's lease.
 */
enum ratelimit_verdict ratelimit_redis_verdict(const struct redisReply *,
	    unsigned int want, unsigned int *granted, uint64_t *retry_ms,
	    uint64_t *leased);

/*
 * The buckets near empty now (ratelimit_scan.c, for the console):
 * every bucket of the store read (up to max_visit) whose tokens,
 * refilled to now, are under a tenth of its limit or under one:
 * cb(arg, kind, tool, toollen, tokens, max) (kind 'S', 'U', 'T', 'V'
 * as ratelimit_key()'s; tool NULL for S and U; non-zero stops).
 * 0; -1: no limit set, or the buckets are Redis's (not read), or the
 * store failed.
 */
typedef int	(*ratelimit_scan_cb)(void *arg, char kind, const char *tool,
		    size_t toollen, unsigned int tokens, unsigned int max);
int	 ratelimit_scan(struct worker *, size_t max_visit,
	    ratelimit_scan_cb, void *arg);

/* a rejection's data member {"retryAfterSeconds": n} (new reference) */
json_t	*ratelimit_data(unsigned int retry_s);

/* the 2025-11-25 rejection: an isError tool result (new reference) */
json_t	*ratelimit_result(unsigned int retry_s);

/* a tools/call's tool name: the fast path's (fast != NULL) or params' */
int	 ratelimit_tool_name(const char *fast, size_t fastlen,
	    const json_t *params, const char **name, size_t *len);

#endif /* VMCPD_RATELIMIT_H */
