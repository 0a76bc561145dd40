/*
 * The backend edge's insides, shared by its pieces and by nothing else
 * (the edge's public headers: upstream.h, the call; upstream_result.h,
 * its params and result; upstream_stream.h, upstream_hooks.h,
 * upstream_rule.h): upstream.c walks a call, upstream_open.c finds or
 * opens the 2025-11-25 backend session it goes over, upstream_ops.c holds the per-revision hooks,
 * upstream_cred.c the per-principal credentials of messages sent
 * outside a call.
 */
#ifndef VMCPD_UPSTREAM_INT_H
#define VMCPD_UPSTREAM_INT_H

#include "shared/trace_ref.h"

#include <sys/queue.h>

#include <stddef.h>

#include <jansson.h>

#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/upstream_stream.h"

enum upstream_state {
	US_NEW = 0,
	US_RESOLVING,		/* waiting for the era probe */
	US_OPENING,		/* waiting for a backend session to open */
	US_SENDING,		/* the request in flight */
	US_STREAMING,		/* a stream's HTTP call runs */
	US_DEFERRED,		/* answered at once: delivered next turn */
	US_DONE
};

struct uopen;

struct upstream {
	TAILQ_ENTRY(upstream)		 u_entry;	/* every one alive */
	TAILQ_ENTRY(upstream)		 u_wentry;	/* an open's waiters */
	struct uopen			*u_open;
	struct worker			*u_w;
	const struct config_backend	*u_be;
	const struct upstream_cbs	*u_cbs;
	void				(*u_cut)(void *, long);	/* uq_cut */
	const struct http_call_cbs	*u_hcbs;	/* a stream's */
	void				*u_arg;
	const char			*u_method;
	char				 u_scope[UPSTREAM_SCOPE_MAX];
	struct session			*u_sess;
	const json_t			*u_caps;
	json_t				*u_sparams;	/* a stream's params */
	/* a stream's clientCapabilities (2026-07-28 only, with
	 * u_modern_only: upstream_stream_modern()) */
	json_t				*u_scaps;
	int				 u_modern_only;
	json_t				*u_info;	/* a describe's answer */
	enum proto_era			 u_client;
	enum proto_era			 u_era;
	enum upstream_state		 u_state;
	int				 u_flags;
	int				 u_stream;
	int				 u_retried;	/* resent once already */
	int				 u_reopen;	/* not the recorded one */
	int				 u_onscope;	/* on the scope's session */
	int				 u_starting;	/* in upstream_call() */
	int				 u_failed;	/* ... and failed there */
	int				 u_delivering;
	int				 u_trial;	/* half-open's one */
	int				 u_budget;	/* refused here, not
							 * the backend's fault */
	char				*u_refused;	/* by an open breaker */
	char				*u_authz;	/* token_exchange's */
	/* the backend session: the client session's strings (borrowed:
	 * it outlives the call), or u_own's */
	const char			*u_bsid;
	const char			*u_bver;
	char				*u_own[2];
	struct backend_call		*u_call;
	struct http_call		*u_http;
	struct event			*u_defer;
	char				 u_id[BACKEND_ID_MAX];
	struct trace_ref		 u_trace;	/* its CLIENT spans' */
};

/* the per-revision hooks (nginx's create_request, process_header...) */
struct upstream_ops {
	const char	*uo_version;	/* MCP-Protocol-Version, sessionless */
	int		 uo_session;	/* requests need a backend session */
	int		 uo_requests;	/* the backend may ask mid-call */
	int	(*uo_send)(struct upstream *, const struct upstream_params *);
	void	(*uo_describe)(struct upstream *);
	int	(*uo_stream)(struct upstream *);
	enum upstream_stream_end (*uo_stream_end)(struct upstream *, long);
	void	(*uo_abort)(struct backend_call *, const char *reason);
	void	(*uo_subscribe)(struct upstream *);	/* NULL: a request */
};

/* upstream.c */
void	 upstream_fail(struct upstream *, const char *fmt, ...)
	    __attribute__((__format__(__printf__, 2, 3)));
void	 upstream_defer(struct upstream *);
/* the session known (or none needed): on with the request */
void	 upstream_ready(struct upstream *);
/*
 * upstream_body() for u, traced (upstream_trace.c): its CLIENT span
 * made into *span (NULL: not sampled), its context in params._meta.
 * p (or NULL) names the target, else tree does.
 */
struct trace_span;
char	*upstream_trace_body(struct upstream *, const char *method,
	    const struct upstream_params *p, json_t *tree, const char *ptext,
	    size_t plen, size_t *lenp, struct trace_span **span);
char	*upstream_body(const char *id, const char *method, json_t *tree,
	    const char *ptext, size_t plen, size_t *lenp);
const struct backend_call_cbs *upstream_bcbs_of(const struct upstream *);

/* upstream_open.c: the session step */
void	 upstream_acquire(struct upstream *);
/* u waits for the session of (client session sid, or scope, backend) */
void	 upstream_open(struct upstream *, const char *sid, const char *scope);
/* u waits no more (cancelled); the open goes on for the others */
void	 upstream_open_leave(struct upstream *);
/* the session u goes over, its strings (malloc'd) taken */
void	 upstream_session_take(struct upstream *, char *sid, char *ver);
void	 upstream_open_free_all(void);

/* upstream_ops.c */
const struct upstream_ops *upstream_ops_of(enum proto_era);

/* upstream_cred.c */
/* "Bearer " and a token, either kind's */
#define UPSTREAM_AUTHZ_MAX	TEXCH_AUTHZ_MAX
/* a message to be under scope goes with the principal's credential
 * (token_exchange; authorization_code, outside the shared scope, where
 * lists are made without one) */
int	 upstream_cred_needed(const struct config_backend *, const char *scope);
/* that credential, in authz: 0, or -1 and why */
int	 upstream_cred_of(struct worker *, const struct config_backend *,
	    const char *scope, char *authz, size_t len, char *why,
	    size_t whylen);
void	 upstream_cred_note(struct upstream *);
void	 upstream_cred_free(void);

#endif /* VMCPD_UPSTREAM_INT_H */
