/*
 * Wake-ups between the workers of one vmcpd: best-effort datagrams on
 * a Unix socket per worker (paths_wake_socket(): stateDir/w-PID.sock).
 * A wake-up carries a type and up to two short arguments in a fixed
 * binary layout; it never carries state a worker could not get again
 * (the store holds that, and each receiver has a tick that catches up
 * on a lost datagram).
 */
#ifndef VMCPD_WAKE_H
#define VMCPD_WAKE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct config;
struct event_base;

enum wake_type {
	WAKE_STREAM = 1,	/* a session's GET stream has events in the
				 * store; a = session id, b = a POST
				 * stream's tag (absent: the GET stream) */
	WAKE_LISTEN,		/* a change for subscriptions/listen streams;
				 * a = "tools", "prompts", "resources" or
				 * "updated", b = the URI ("updated" only) */
	WAKE_MRTR,		/* a client answered an input request this
				 * worker waits on; a = the request id */
	WAKE_RESUBSCRIBE,	/* a backend's subscribed URIs changed (worker
				 * 0 listens anew); a = the backend name */
	WAKE_CANCEL,		/* a client cancelled a request that some
				 * worker may hold; a = session id, b = the
				 * notification's params as JSON */
	WAKE_VIEW_BUILD,	/* to the builder: build the view; a = its
				 * key, b = the backend whose lists changed
				 * (absent: the whole view, if not fresh) */
	WAKE_VIEW_READY		/* from the builder: a view was stored;
				 * a = its key */
};

/*
 * The datagram: this header, then a's bytes, then b's (no NULs, no
 * terminators), wh_alen + wh_blen bytes in all.  Host byte order: both
 * ends are workers of one vmcpd on one host.
 */
struct wake_hdr {
	uint8_t		wh_version;	/* WAKE_VERSION */
	uint8_t		wh_type;	/* enum wake_type */
	uint16_t	wh_alen;
	uint16_t	wh_blen;
	uint16_t	wh_pad;		/* 0 */
};

#define WAKE_VERSION	1
#define WAKE_MSG_MAX	2048		/* a whole datagram */
#define WAKE_ARG_MAX	(WAKE_MSG_MAX - sizeof(struct wake_hdr))

struct wake_msg {
	enum wake_type	 wm_type;
	char		 wm_a[WAKE_ARG_MAX + 1];	/* NUL-terminated */
	char		 wm_b[WAKE_ARG_MAX + 1];	/* "" when absent */
};

typedef void (*wake_handler)(void *arg, const struct wake_msg *);

/*
 * The datagram for a message into buf (WAKE_MSG_MAX bytes): its length,
 * or 0 if the type does not take these arguments or they do not fit.
 * b may be NULL.
 */
size_t	 wake_encode(enum wake_type, const char *a, const char *b,
	    unsigned char *buf);
/* 0, or -1 if buf is not one well-formed datagram */
int	 wake_decode(const unsigned char *buf, size_t len, struct wake_msg *);

/*
 * Bind this worker's wake socket and hand every message it receives to
 * handler.  A socket that cannot be bound is logged and left out (0):
 * streams are then served on their keep-alive tick.  -1 on an event
 * setup failure.
 */
int	 wake_init(struct event_base *, const struct config *, pid_t self,
	    wake_handler, void *arg);
/* this worker's wake socket, or "" if it has none */
const char *wake_self_path(void);
/* best effort: to one worker, or to every other worker */
void	 wake_send(pid_t, enum wake_type, const char *a, const char *b);
void	 wake_broadcast(enum wake_type, const char *a, const char *b);
void	 wake_free(void);

#endif
