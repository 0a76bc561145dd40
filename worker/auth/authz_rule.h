/*
 * Authorization's pure part (authz_rule.c): the decision (a Deny, any
 * policy error or a failure to build the request denies) and the
 * worker's cache of decisions per principal (scope and claims digest)
 * and generation.  No worker, no I/O: what the unit tests and the
 * glue (authz.h) call.
 */
#ifndef VMCPD_AUTHZ_RULE_H
#define VMCPD_AUTHZ_RULE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/cedar_request.h"
#include "worker/view/view.h"

struct mcp_method;
struct config;

/* a denial: HTTP 403, JSON-RPC code 403 (as the reference vMCP) */
#define AUTHZ_HTTP	403
#define AUTHZ_CODE	403

/*
 * The message of a denial of a request of mm with params: by kind of
 * request only, so a forbidden, a hidden and a nonexistent item answer
 * the same (no enumeration oracle); a completion's is its ref's
 * (authz_target()).
 */
const char	*authz_message(const struct mcp_method *,
		    const json_t *params);

/*
 * What a request of mm with params is authorized as: the method whose
 * Cedar action applies, and in *itemp the object that names the item.
 * mm and params themselves, but for an action of the ref
 * (completion/complete): a ref/prompt is the prompts/get of its name, a
 * ref/resource the resources/read of its uri (a template by its
 * uriTemplate, as the lists show it, or a resource by its URI), with
 * *itemp the ref; a ref of another type stays mm, which the gate denies.
 */
const struct mcp_method *authz_target(const struct mcp_method *,
	    const json_t *params, const json_t **itemp);

struct authz_conf {
	const struct cedar_policyset	*ac_policies;
	struct cedar_authz_conf		 ac_cedar;
	const struct cedar_entities	*ac_entities;
};

/* the conf of a config with type cedar; -1 if authz is off */
int	 authz_conf_init(struct authz_conf *, const struct config *);

/*
 * One access: 1 allowed, 0 denied (Cedar's Deny, any policy erroring,
 * a request that can't be built).  why (may be NULL) gets the first
 * policy error or the reason, for the log only.
 */
int	 authz_decide(const struct authz_conf *,
	    const struct cedar_principal *, const struct cedar_call *,
	    char *why, size_t whysz);

struct authz_cache;
struct authz_who;	/* a principal's entry: its Cedar principal and
			   its list decisions */

#define AUTHZ_WHO_MAX	256	/* principals cached (least recent out) */
#define AUTHZ_ITEMS_MAX	262144	/* list decisions in all (then dropped) */

struct authz_cache *authz_cache_new(size_t maxwho, size_t maxitems);
void	 authz_cache_free(struct authz_cache *);
/*
 * The entry of a principal, by its scope and the digest of its claims,
 * under policy generation gen (another generation empties the cache
 * first): found, or made from claims.  NULL: claims make no principal
 * (no sub: every access is denied) or memory ran out.  The entry keeps
 * a reference to claims, and the same object again is found without a
 * digest: claims must not change once handed here (auth.c's never do).
 */
struct authz_who *authz_cache_who(struct authz_cache *,
	    const struct authz_conf *, uint64_t gen, const char *scope,
	    const json_t *claims);
/* decisions evaluated (not answered from the cache) so far */
uint64_t authz_cache_evals(const struct authz_cache *);

/*
 * A listed item as the view lays it out (its key and its JSON text): 1
 * shown, 0 not.  Each kind's item is checked with its call's action and
 * no arguments: a tool (with its annotations) as call_tool, a prompt as
 * get_prompt, a resource (its uri) and a template (its uriTemplate) as
 * read_resource.  Cached per item key and text.
 */
int	 authz_who_item(struct authz_who *, enum view_kind, const char *key,
	    size_t klen, const char *text, size_t tlen);
/* a call (never cached: its arguments count): 1 allowed, 0 denied */
int	 authz_who_call(struct authz_who *, const struct cedar_call *,
	    char *why, size_t whysz);

/*
 * The hot path's tools/call (its params unparsed): the tool by its
 * advertised name, with the view's item text (NULL: the view lists
 * none) and params as the client sent them; decided as authz_who_call()
 * decides the parsed call.  When the policies read no argument it is
 * the tool's list decision (authz_who_item(), cached); else the call
 * with only the arguments they read (cedar_args_text()).  1 allowed, 0
 * denied.
 */
int	 authz_who_tool(struct authz_who *, const char *name, size_t namelen,
	    const char *item, size_t ilen, const char *params, size_t plen,
	    char *why, size_t whysz);
/* a list's filter (view_page_req's vq_filter on an authz_filter) */
struct authz_filter {
	struct authz_who	*af_who;	/* NULL: nothing is shown */
};
int	 authz_filter_item(void *, enum view_kind, const char *key,
	    size_t klen, const char *text, size_t tlen);

#endif /* VMCPD_AUTHZ_RULE_H */
