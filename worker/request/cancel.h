/*
 * notifications/cancelled across workers (cancel.c).
 */
#ifndef VMCPD_CANCEL_H
#define VMCPD_CANCEL_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
struct worker;

/* cancel.c: a client's notifications/cancelled, on whichever worker */
void	 cancel_request(struct worker *, const char *sid,
	    const json_t *params);
/* WAKE_CANCEL: params as cancel_request() sent them */
void	 cancel_wake(struct worker *, const char *sid, const char *params);

#endif
