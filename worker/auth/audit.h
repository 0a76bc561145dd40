/*
 * The audit log (vmcpd.yaml audit): one JSON line per /mcp request,
 * the reference vMCP's event schema (docs/ARCHITECTURE.md, Audit),
 * written by every worker to one file opened O_APPEND, whole lines in
 * one write(2) each event-loop turn (a line each to what is not a
 * regular file) so lines from workers never interleave; reopened on
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
 * The front's sure scan of the request's body (jsonrpc_scan()): its
 * method, params.name and params' text, which spare the audit a scan of
 * its own.
 */
struct mcp_method;
void	audit_note_call(struct worker *, struct httpd_req *,
	    const struct mcp_method *, const char *name, size_t namelen,
	    const char *params, size_t plen);

/*
 * A composite run's event (type vmcp_workflow_* or vmcp_workflow_step_*)
 * under principal p (NULL: anonymous): target and extra (metadata.extra)
 * taken, as the reference vMCP's workflow auditor has them.
 */
struct principal;
void	audit_workflow(struct worker *, const struct principal *,
	    const char *type, const char *outcome, json_t *target,
	    json_t *extra);

/*
 * An event's line (audit_line.c, pure), its strings borrowed: the
 * request's (source network, with extra; target and metadata.extra from
 * the fields) or a workflow's (source local, no extra; target and
 * metadata.extra the JSON texts given).
 */
struct audit_line {
	const char	*al_id;
	const char	*al_type;
	const char	*al_when;
	const char	*al_outcome;
	const char	*al_component;
	const char	*al_source_type;
	const char	*al_source_value;
	int		 al_source_extra;	/* source.extra written */
	const char	*al_ua;			/* source.extra's, or NULL */
	const char	*al_reqid;
	const char	*al_user;		/* subjects */
	const char	*al_user_id;		/* or NULL */
	const char	*al_target_raw;		/* or NULL: */
	size_t		 al_target_rawlen;
	const char	*al_method;		/* target's */
	const char	*al_target_type;	/* or NULL */
	const char	*al_name;		/* or NULL */
	const char	*al_extra_raw;		/* or NULL: */
	size_t		 al_extra_rawlen;
	long long	 al_duration_ms;	/* metadata.extra's */
	int		 al_status;
	const char	*al_backend;		/* or NULL */
	const char	*al_trace_id;		/* hex, or NULL */
	const char	*al_span_id;		/* hex, or NULL */
	const char	*al_data;		/* data.request, or NULL */
	size_t		 al_datalen;
};
struct jsonw;
/* the line, with its newline, appended to jw; -1: a required string
 * not UTF-8, or no memory (jw then holds a part of it: jsonw_undo()) */
int	audit_line_write(struct jsonw *, const struct audit_line *);

#endif /* VMCPD_AUDIT_H */
