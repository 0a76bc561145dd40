/*
 * The Legacy edge's request in flight, shared by legacy.c (dispatch,
 * forwarding and relaying) and legacy_session.c (initialize, the
 * session's lookup and sliding expiry, GET and DELETE).
 */
#ifndef VMCPD_LEGACY_REQ_H
#define VMCPD_LEGACY_REQ_H

#include <sys/queue.h>

#include <jansson.h>

#include "proto/jsonrpc.h"
#include "worker/process/process.h"
#include "worker/request/legacy.h"
#include "worker/state/session.h"
#include "worker/events/stream.h"
#include "worker/process/request.h"

/* a client POST being served asynchronously */
struct mcp_req {
	struct request			 mr_r;		/* no params if r_fast */
	TAILQ_ENTRY(mcp_req)		 mr_entry;	/* w_reqs */
	/* a renamed tool on the hot path: the params text under the
	 * backend's name, and that name */
	char				*mr_text;
	char				*mr_own;
	char				 mr_sid[SESSION_ID_LEN + 1];
	int				 mr_initialize;	/* answering initialize */
	struct session			 mr_sess;	/* as the request
							 * found it */
	/* a 2026-07-28 backend */
	json_t				*mr_state;	/* its requestState */
	json_t				*mr_responses;	/* inputResponses */
	struct mrtr_wait		*mr_wait;	/* input asked of client */
	int				 mr_rounds;	/* input_required seen */
	int				 mr_sheds;	/* ... with no inputs */
	json_t				*mr_result;	/* initialize's, while
							 * Redis stores it */
	/* its SSE stream (SEP-1699): the client's Accept lists
	 * text/event-stream first; the stream's tag once primed; ended
	 * by vmcpd before the response (what follows is kept in the
	 * session's store for a GET with Last-Event-ID) */
	int				 mr_sse;
	int				 mr_cut;
	char				 mr_tag[STREAM_TAG_LEN + 1];
};

struct request_codec;
/* legacy.c: the 2025-11-25 client's codec (pipeline.h) */
extern const struct request_codec legacy_codec;

/* legacy.c */
/* takes msg (request_start()); NULL: answered 500 (out of memory),
 * msg left to the caller */
struct mcp_req *legacy_req_new(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *);
void	 legacy_req_free(struct mcp_req *);
void	 legacy_req_reply(struct mcp_req *, json_t *msg);
void	 legacy_req_refuse(struct mcp_req *, int status, int code,
	    const char *message, json_t *data);
/* an error (on the SSE stream if one is open), or msg (taken; NULL: out
 * of memory), and the request forgotten */
void	 legacy_req_error(struct mcp_req *, int code, const char *message);
void	 legacy_req_answer(struct mcp_req *, json_t *msg);
/* the request's SSE stream begun and primed (once); -1: the client is
 * gone.  An event on it (or kept, once cut); -1: not sent */
int	 legacy_stream_open(struct mcp_req *);
int	 legacy_stream_send(struct mcp_req *, const json_t *msg);

/* legacy_subs.c */
/* resources/subscribe and unsubscribe, routed (r_be, r_bparams) */
void	 legacy_subscribe(struct mcp_req *, struct session *);

/* legacy_methods.c: the Legacy column of the method table
 * (request_method.c), each a request_legacy_fn */
void	 legacy_ping(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);
void	 legacy_set_level(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);
void	 legacy_viewed(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);
void	 legacy_initialized(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);
void	 legacy_cancelled(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);
void	 legacy_roots_changed(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);

/* legacy_relay.c */
/* a client's answer to a request vmcpd relayed to it; 0: the caller
 * answers 202, 1: answered here, later */
int	 legacy_client_answer(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, struct session *);
/* a backend's request mid-call (uc_push), to the client on the call's
 * stream: 0, or -1 and why the backend is refused */
int	 legacy_relay_request(struct mcp_req *, json_t *msg, const char *bsid,
	    const char *version, char *why, size_t whylen);
/* a request for the client on the call's stream (an MRTR input
 * request, a composite's elicitation): 0 or -1 */
int	 legacy_mrtr_send(void *mr, json_t *msg);
/* a 2026-07-28 backend's input_required result: the client asked, the
 * call retried; or the request answered with why not */
void	 legacy_mrtr_round(struct mcp_req *, json_t *result);

/* legacy_consent.c: the credential phase's consent (rc_consent) */
void	 legacy_consent(struct request *, const char *id, const char *url,
	    int round);

/* legacy_session.c */
/* initialize, with no session (the last argument is NULL) */
void	 legacy_initialize(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *, const struct request_fast *, struct session *);
int	 legacy_session(struct worker *, struct httpd_req *, json_t *id,
	    struct session *, int touch);

#endif /* VMCPD_LEGACY_REQ_H */
