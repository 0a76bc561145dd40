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

struct worker;
struct httpd_req;
struct legacy_fast;
struct session;

struct request {
	struct worker		*r_w;
	struct httpd_req	*r_req;		/* NULL: answered, or gone */
	struct jsonrpc_msg	 r_msg;		/* owned */
	unsigned int		 r_count;	/* holds; 0: finalized */
	/* the owner's state and r's memory freed, at the last hold */
	void			(*r_free)(struct request *);
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
		    struct jsonrpc_msg *, const struct legacy_fast *,
		    struct session *);
/* Modern: stateless */
typedef void	(*request_modern_fn)(struct worker *, struct httpd_req *,
		    struct jsonrpc_msg *);

#define REQUEST_M_NO_SESSION	0x1	/* Legacy: before any session
					   (initialize) */

struct request_method {
	request_legacy_fn	 rm_legacy;
	request_modern_fn	 rm_modern;
	unsigned int		 rm_flags;	/* REQUEST_M_* */
};

/* msg's row, if its kind is its method's (a request or a notification),
 * else an empty one; never NULL */
const struct request_method *request_method_of(const struct jsonrpc_msg *);

#endif /* VMCPD_REQUEST_H */
