/*
 * The audit log (vmcpd.yaml audit): one JSON line per /mcp request,
 * the reference vMCP's event schema (docs/ARCHITECTURE.md, Audit),
 * written by every worker to one file opened O_APPEND, each line with
 * one write(2) so lines from workers never interleave; reopened on
 * SIGUSR1 (the master forwards it).  Tokens never appear (no header but
 * User-Agent and X-Request-ID is read); the request's params only with
 * includeRequestData, cut at maxDataSize.  When audit is off a request
 * costs one branch.
 */
#ifndef VMCPD_AUDIT_H
#define VMCPD_AUDIT_H

#include <jansson.h>

struct worker;
struct httpd_req;

enum audit_outcome {
	AUDIT_BY_STATUS = 0,	/* from the HTTP status */
	AUDIT_SUCCESS,
	AUDIT_FAILURE,
	AUDIT_ERROR,
	AUDIT_DENIED,
	AUDIT_APPLICATION_ERROR
};

int	audit_init(struct worker *);
void	audit_reopen(struct worker *);
void	audit_free(void);
/*
 * A /mcp request begins: sets its done callback to done(req, w); with
 * audit on, the request's event (noting what the request asks) goes
 * between: the callback writes the line, then calls done.
 */
void	audit_begin(struct worker *, struct httpd_req *,
	    void (*done)(struct httpd_req *, void *));
/* an outcome that the status does not tell (a rate-limited call) */
void	audit_set_outcome(struct worker *, struct httpd_req *,
	    enum audit_outcome);
/*
 * The backend the request is routed to (metadata.extra.backend_name, as
 * the reference vMCP has it): borrowed, the config's name, which lives
 * as long as the worker; req may be NULL (the client left).
 */
void	audit_set_backend(struct worker *, struct httpd_req *,
	    const char *backend);

/*
 * A composite run's event (type vmcp_workflow_* or vmcp_workflow_step_*)
 * under principal p (NULL: anonymous): target and extra (metadata.extra)
 * taken, as the reference vMCP's workflow auditor has them.
 */
struct principal;
void	audit_workflow(struct worker *, const struct principal *,
	    const char *type, const char *outcome, json_t *target,
	    json_t *extra);

#endif /* VMCPD_AUDIT_H */
