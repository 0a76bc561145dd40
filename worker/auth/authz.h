/*
 * Authorization (vmcpd.yaml incomingAuth.authz, type cedar): one Cedar
 * decision per (principal, action, item) drives both the lists and the
 * calls (docs/ARCHITECTURE.md, "Authorization").
 *
 * authz_rule.c (authz_rule.h) is pure: the decision and the worker's
 * cache of decisions.  authz.c (here) is the worker's glue: the 403
 * gate before session validation, the rate limit and dispatch, and the
 * filter of a shared view's list pages.
 */
#ifndef VMCPD_AUTHZ_H
#define VMCPD_AUTHZ_H

#include <stddef.h>

#include <jansson.h>

struct worker;
struct httpd_req;
struct mcp_method;
struct cedar_call;
struct authz_who;	/* authz_rule.h */
struct authz_filter;
struct principal;

int	 authz_init(struct worker *);
void	 authz_free(void);
/* 1 if requests are authorized (type cedar) */
int	 authz_on(const struct worker *);
/*
 * The gate, on the view, for a request of method mm with params, as its
 * table entry's Cedar action has it (authz_target()): 0 go on (allowed,
 * or a method the policies don't gate), -1 denied (audited as denied;
 * the caller answers AUTHZ_HTTP, AUTHZ_CODE, authz_message()).
 */
int	 authz_gate(struct worker *, struct httpd_req *,
	    const struct mcp_method *, const json_t *params, json_t *view);
/* one resource by its URI (a subscriptions/listen's): as authz_gate() */
int	 authz_gate_uri(struct worker *, struct httpd_req *, const char *uri);
/*
 * A task's (tasks/get, update, cancel, a listen naming it): the call of
 * the tool that made it, without its arguments, on the view.  As
 * authz_gate() (a denial is a tools/call's: authz_message()), or -2: out
 * of memory.
 */
int	 authz_gate_task(struct worker *, struct httpd_req *, const char *tool,
	    json_t *view);
/*
 * The gate's decision for who (NULL: denied), without the log and the
 * audit: 1 allowed, 0 denied with why.  w and view are read for a
 * tool's annotations only.
 */
int	 authz_gate_who(struct worker *, struct authz_who *who,
	    const struct mcp_method *, const json_t *params, json_t *view,
	    char *why, size_t whysz);
/*
 * authz_gate() for the hot paths' tools/call, whose params stay text
 * (the front's scan): the tool named name (namelen bytes, no escapes),
 * the params' text; only the arguments the policies read are parsed,
 * none when they read none (authz_who_tool()).  The same decision as
 * authz_gate() on the parsed call, the same 0 / -1.
 */
int	 authz_gate_text(struct worker *, struct httpd_req *,
	    const struct mcp_method *, const char *name, size_t namelen,
	    const char *params, size_t plen, json_t *view);
/*
 * A composite step's call under the run's principal p (NULL:
 * anonymous, denied as at the gate): 1 allowed, 0 denied, audited as
 * denied by the caller; 1 when authz is off.
 */
int	 authz_step(struct worker *, const struct principal *p,
	    const struct cedar_call *, char *why, size_t whysz);
/*
 * The tool the view advertises under name, for its annotations: *itemp
 * the view's item (NULL: it lists none), or -1 when the view can't be
 * read (a forbid on a hint must not fall away: the caller denies).
 */
int	 authz_view_tool(struct worker *, json_t *view, const char *name,
	    json_t **itemp);
/* a list request's filter in *f, or NULL when authz is off */
struct authz_filter *authz_list_filter(struct worker *, struct httpd_req *,
	    struct authz_filter *f);

#endif /* VMCPD_AUTHZ_H */
