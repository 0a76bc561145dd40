/*
 * One client request of either revision, as the worker carries it past
 * the front's handler (as nginx's ngx_http_request_t): its worker, its
 * HTTP exchange and its JSON-RPC message, which it owns.  The Legacy
 * and the Modern edge each embed one at the head of their own state.
 * It is released at one finalize point, request_finalize(), counted as
 * r->count is in nginx: a release with nothing held is a broken
 * invariant, logged with its place and refused, never a second free.
 * A message no request took is released by request_msg_release(), the
 * one place the request path releases messages.
 */
#ifndef VMCPD_REQUEST_H
#define VMCPD_REQUEST_H

#include <stddef.h>

#include "proto/jsonrpc.h"
#include "shared/trace_ref.h"

struct worker;
struct httpd_req;
struct session;
struct config_backend;
struct upstream;
struct crun;
struct principal;
struct link_wait;

/*
 * The hot path's call, read off a scan of the body instead of a tree:
 * spans into the request's body (or a rename's text), valid while the
 * request has its HTTP exchange.  rf_params NULL: not the hot path.
 */
struct request_fast {
	const char	*rf_params;
	size_t		 rf_plen;
	const char	*rf_name;	/* params.name's value, unquoted */
	size_t		 rf_namelen;
};

struct request_codec;

struct request {
	struct worker		*r_w;
	struct httpd_req	*r_req;		/* NULL: answered, or gone */
	struct jsonrpc_msg	 r_msg;		/* owned */
	unsigned int		 r_count;	/* holds; 0: finalized */
	/* the owner's state and r's memory freed, at the last hold */
	void			(*r_free)(struct request *);
	/* the pipeline (worker/pipeline/pipeline.h): its revision's codec,
	 * the phase it is in, the view it runs on (a reference) */
	const struct request_codec *r_codec;
	const struct principal	*r_principal;	/* NULL: anonymous */
	unsigned int		 r_phase;
	int			 r_stepping;	/* inside a phase */
	json_t			*r_view;
	struct request_fast	 r_fast;
	/* resolved: the backend, the params under its names, the
	 * Mcp-Param-* a 2026-07-28 backend gets */
	const struct config_backend *r_be;
	json_t			*r_bparams;
	json_t			*r_phdrs;
	json_t			*r_caps;	/* the client's capabilities */
	struct upstream		*r_up;		/* the backend call */
	struct crun		*r_run;		/* a composite's run */
	/* the credential phase's wait (worker/link/link_phase.c), and the
	 * 2025-11-25 session a consent's completion is told to (or NULL) */
	struct link_wait	*r_link;
	const char		*r_sid;
	int			 r_streaming;	/* an SSE answer begun */
	/* the context its backend requests are made under (the SERVER
	 * span's, a composite step's: worker/trace/trace.h) */
	struct trace_ref	 r_trace;
};

/*
 * Start r on msg, which it takes: msg is left empty, so that the
 * caller's own release of it frees nothing.  Holds the worker; freed by
 * free_fn at the last hold.
 */
void	request_start(struct request *, struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg, void (*free_fn)(struct request *));
void	request_hold(struct request *);
/*
 * One hold dropped; the last frees the owner's state (r_free), then
 * releases the message and the worker's hold, and returns 1.  0: still
 * held.  -1: nothing was held (a double release): logged with where,
 * nothing done.
 */
int	request_finalize(struct request *, const char *where);
/* the message replaced by body parsed again (the hot path's call, as a
 * tree after all); -1: it does not parse, r's message kept */
int	request_msg_reparse(struct request *, const char *body, size_t len);
/* a message no request took */
void	request_msg_release(struct jsonrpc_msg *);
/*
 * 1 if msg, which a backend sent mid-call, goes to the client on the
 * call's stream: progress, and log messages when logs.
 */
int	request_note_relayed(const json_t *msg, int logs);

/*
 * The method table's handlers (request_method.c), as redis's command
 * table holds its commands': one row per method of proto/method.c, by
 * its id, with what each revision's edge does with it.  The front looks
 * the method up once (jm_mm); each edge dispatches through its column.
 * A request's handler answers it; a notification's changes what it
 * changes and the edge answers 202.  NULL: the method is not served in
 * that revision (a request: Method not found).
 */
/* Legacy: with the client's session, validated and touched */
typedef void	(*request_legacy_fn)(struct worker *, struct httpd_req *,
		    struct jsonrpc_msg *, const struct request_fast *,
		    struct session *);
/* Modern: stateless */
typedef void	(*request_modern_fn)(struct worker *, struct httpd_req *,
		    struct jsonrpc_msg *);

/* Legacy: no session looked up before the handler (initialize: none;
 * the pipeline's requests: its session phase, after the gate) */
#define REQUEST_M_NO_SESSION	0x1

struct request_method {
	request_legacy_fn	 rm_legacy;
	request_modern_fn	 rm_modern;
	unsigned int		 rm_flags;	/* REQUEST_M_* */
};

/* msg's row, if its kind is its method's (a request or a notification),
 * else an empty one; never NULL */
const struct request_method *request_method_of(const struct jsonrpc_msg *);

#endif /* VMCPD_REQUEST_H */
