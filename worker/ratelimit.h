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

/* JSON-RPC code and message of a rejection (as the reference vMCP) */
#define RATELIMIT_CODE		429
#define RATELIMIT_MESSAGE	"Rate limit exceeded"

enum ratelimit_verdict {
	RATELIMIT_OK = 0,	/* a token taken from every bucket (or none
				   applies, or the store failed: fail open) */
	RATELIMIT_LIMITED	/* none taken; *retry_s set */
};

/* the bucket key's longest tool name (config_policy.c checks it) */
#define RATELIMIT_KEY_MAX	(2 + 32 + 2 + 256)

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
 * server's shared and per-user tokens once (a composite counts once);
 * each step takes a token of its tool's own buckets only, so that a
 * tool's limit holds whether it is called directly or from a workflow.
 */
enum ratelimit_verdict ratelimit_step(struct worker *,
	    const struct principal *p, const char *tool, size_t len,
	    unsigned int *retry_s);

/*
 * At an edge's dispatch of a request of method mm (the tools/call is
 * metered, nothing else is), after the authorization gate: the tool's
 * name is fast (fastlen bytes, the hot path's scan) or params.name.
 */
enum ratelimit_verdict ratelimit_call(struct worker *, struct httpd_req *,
	    const struct mcp_method *mm, const char *fast, size_t fastlen,
	    const json_t *params, unsigned int *retry_s);

/* a rejection's data member {"retryAfterSeconds": n} (new reference) */
json_t	*ratelimit_data(unsigned int retry_s);

/* the 2025-11-25 rejection: an isError tool result (new reference) */
json_t	*ratelimit_result(unsigned int retry_s);

/* a tools/call's tool name: the fast path's (fast != NULL) or params' */
int	 ratelimit_tool_name(const char *fast, size_t fastlen,
	    const json_t *params, const char **name, size_t *len);

#endif /* VMCPD_RATELIMIT_H */
