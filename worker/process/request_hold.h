/*
 * A request held while the worker waits on something asynchronous for
 * it (a token introspection, a session's read from Redis, a token
 * exchange for its backends): counted in flight (worker_request_hold(),
 * so a draining worker does not exit under it), the client's going away
 * noted rather than acted on (the request is only let go of where its
 * wait ends).  The waiter embeds
 * one, attaches it when the wait begins, detaches it when the wait
 * ends, decides on rh_gone, and then lets the request go with
 * worker_request_release(), the one release point.
 */
#ifndef VMCPD_REQHOLD_H
#define VMCPD_REQHOLD_H

struct worker;
struct httpd_req;

struct reqhold {
	struct worker		*rh_w;
	struct httpd_req	*rh_req;
	int			 rh_gone;	/* the client went away */
};

void	 reqhold_attach(struct reqhold *, struct worker *,
	    struct httpd_req *);
/* the wait ends: its close callback off; rh_gone says what to do */
void	 reqhold_detach(struct reqhold *);

#endif /* VMCPD_REQHOLD_H */
