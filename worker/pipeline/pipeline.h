/*
 * One client request's way through the worker, the same for both
 * revisions (as nginx's phase engine runs its phases): a table of phases
 * run in order, each a function with one contract, and the revision's
 * differences in its client codec (an ops table, as upstream_ops is for
 * the backend's revision):
 *
 *	authorize	the Cedar gate, on the view (fetched for it): a
 *			2025-11-25 client's call is authorized before its
 *			session is looked up, "403 before 404"
 *	session		the client's session (2025-11-25; none in 2026-07-28)
 *	view		the identity scope's view
 *	ratelimit	a token of each bucket, after the gate (a denied
 *			call takes none)
 *	resolve		a composite tool, the hot path's route by name, a
 *			method answered from the view, a list's page, or
 *			the backend and its params (a request routed
 *			already goes on)
 *	credential	a backend that acts as each user (outgoingAuth
 *			authorization_code): the principal's link, refreshed
 *			if it is about to expire, or a consent asked of the
 *			person (rc_consent; worker/link/link_phase.c)
 *	upstream	the call through the upstream edge; its answer is
 *			rendered by the codec (rc_cbs)
 *
 * Authentication and token exchange are done before (front.c): the
 * pipeline starts with the principal known.  A phase answers NEXT, DONE
 * (the request answered, or handed on: its holds are no longer the
 * pipeline's) or WAIT (its callback resumes the pipeline at that same
 * phase: pipeline_resume()).
 *
 * The pipeline sits below the composite tools (worker/composite/), whose
 * steps run through it too (composite_step.c): what a client's call to a
 * composite tool does is its codec's (rc_composite).
 */
#ifndef VMCPD_PIPELINE_H
#define VMCPD_PIPELINE_H

#include <jansson.h>

#include "proto/proto.h"
#include "worker/process/request.h"

struct upstream_cbs;
struct upstream_req;
struct worker;

enum pipeline_rc {
	PIPELINE_NEXT,
	PIPELINE_DONE,
	PIPELINE_WAIT
};

enum pipeline_phase {
	PIPELINE_AUTHORIZE,
	PIPELINE_SESSION,
	PIPELINE_VIEW,
	PIPELINE_RATELIMIT,
	PIPELINE_RESOLVE,
	PIPELINE_CREDENTIAL,
	PIPELINE_UPSTREAM,
	PIPELINE_NPHASES
};

/*
 * A client revision's codec: what differs between a 2025-11-25 and a
 * 2026-07-28 client.  Answers (rc_error, rc_limited, rc_answer_text, the
 * renderings behind rc_cbs) finalize the request.
 */
struct request_codec {
	const char	*rc_name;	/* its revision, for logs */
	enum proto_era	 rc_era;
	/* closing the connection cancels the call (2026-07-28) */
	int		 rc_close_cancels;
	/* optional, when the client closed the connection (r_req still
	 * readable): 1 if the call goes on without it (its answer kept),
	 * else the request ends */
	int		(*rc_detach)(struct request *);
	/* the authorize and ratelimit phases of its own instead of the
	 * pipeline's (a composite's step: under the run's principal, its
	 * tool resolved to authorize it); NULL: the pipeline's */
	enum pipeline_rc (*rc_authorize)(struct request *);
	enum pipeline_rc (*rc_ratelimit)(struct request *);
	/* the session phase: the client's session; NULL: stateless */
	enum pipeline_rc (*rc_session)(struct request *);
	/* the hot path's tools/call, routed by its name alone: NEXT with
	 * r_be set (routed: on to the credential phase), DONE (answered),
	 * NEXT without r_be (it takes the tree path, loaded now) */
	enum pipeline_rc (*rc_route_fast)(struct request *);
	/* a method answered from the view (MCP_MF_LOCAL); NULL: none */
	void		(*rc_local)(struct request *);
	/* what the revision checks before a list or a route: NEXT, or
	 * DONE (refused); NULL: nothing */
	enum pipeline_rc (*rc_check)(struct request *);
	/* a list's serverInfo stamp (a new reference), or NULL */
	json_t		*(*rc_list_info)(struct worker *);
	/* the params as routed (a new reference): the client's, or
	 * without the revision's envelope; NULL: no memory */
	json_t		*(*rc_route_params)(struct request *);
	/* a composite tool's call, its run started (composite_run.h):
	 * DONE; NEXT: not a composite tool; NULL: none */
	enum pipeline_rc (*rc_composite)(struct request *);
	/* the backend call's request filled in by the codec (session,
	 * capabilities); DONE: taken instead (a subscription) */
	enum pipeline_rc (*rc_upstream)(struct request *,
			    struct upstream_req *);
	/* create_request, what the backend sends mid-call, the answer */
	const struct upstream_cbs *rc_cbs;
	/* an error; data taken (or NULL) */
	void		(*rc_error)(struct request *, int status, int code,
			    const char *message, json_t *data);
	/* the rate limit's refusal */
	void		(*rc_limited)(struct request *, unsigned int retry_s);
	/*
	 * The credential phase's: the principal holds no usable link to
	 * r_be, so the person must consent at url (id: the consent's, the
	 * elicitationId; round: 1, or the retry's count in 2026-07-28).
	 * The codec answers: an elicitation if the client declared URL
	 * mode, else a message naming the backend and the URL.  NULL: an
	 * error through rc_error that names both (a composite's step).
	 */
	void		(*rc_consent)(struct request *, const char *id,
			    const char *url, int round);
	/*
	 * Optional: a retry answering an earlier consent (2026-07-28: its
	 * requestState, checked, and its inputResponses): LINK_ANSWER_*
	 * (worker/link/link.h), with the consent's id and round when
	 * ACCEPTED; DONE: answered (declined, or a state refused).
	 */
	int		(*rc_consent_answer)(struct request *, char *id,
			    size_t idlen, int *round);
	/* optional: a result the pipeline has as text (a list's page),
	 * answered and the request finalized; NULL: as JSON */
	void		(*rc_answer_text)(struct request *, const char *text,
			    size_t len);
};

/*
 * r, started (request_start()) with codec and its fast path's spans if
 * any, runs from the first phase; it watches its connection's close (a
 * composite's step has none: r_req NULL, r_principal, r_view set).
 */
void	pipeline_run(struct request *, const struct request_codec *);
/* r's connection watched: its close ends r (a request outside the
 * pipeline too: its codec NULL) */
void	pipeline_watch(struct request *);
/* a phase's wait is over: the view (or the rate limit's verdict, or
 * err) is here (a view_cb) */
void	pipeline_resume(void *r, json_t *view, const char *err);
/* the upstream phase again (an MRTR retry, a subscription: flags
 * UPSTREAM_F_*) */
void	pipeline_forward(struct request *, int flags);
/* a result whose text the caller has, and r finalized */
void	pipeline_answer_text(struct request *, const char *text,
	    size_t len);
/* a 2025-11-25 request's session, noted on its span (pipeline_trace.c) */
void	pipeline_trace_session(struct request *, const char *sid);
/* what the pipeline holds, released (the codec's r_free calls it) */
void	pipeline_clear(struct request *);
/*
 * The credential phase, set from above at start (worker.c: worker/link's
 * link_phase() and link_phase_cancel(), a hook as docs/ARCHITECTURE.md's
 * Layering has them): phase answers a pipeline_rc, cancel drops its
 * wait; unset, the phase goes on.
 */
void	pipeline_credential_set(enum pipeline_rc (*phase)(struct request *),
	    void (*cancel)(struct request *));

#endif /* VMCPD_PIPELINE_H */
