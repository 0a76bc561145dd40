/*
 * MRTR for Legacy clients (mrtr.c).
 */
#ifndef VMCPD_MRTR_H
#define VMCPD_MRTR_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "proto/jsonrpc.h"

struct httpd_req;
struct jsonrpc_msg;
struct mrtr_wait;
struct worker;

/* mrtr.c: a 2026-07-28 backend's input requests put to a Legacy client */
struct mrtr_wait;
/* send one server-to-client request on the client's stream; 0 or -1 */
typedef int (*mrtr_send_cb)(void *arg, json_t *msg);
/* once: the inputResponses (borrowed), or NULL and why */
typedef void (*mrtr_done_cb)(void *arg, json_t *responses, const char *err);
struct mrtr_wait *mrtr_ask(struct worker *, const char *sid,
	    const json_t *client_caps, const json_t *input_requests,
	    mrtr_send_cb, mrtr_done_cb, void *arg, char *why, size_t whylen);
void	 mrtr_cancel(struct mrtr_wait *);
/* rounds of a backend's input_required relayed for one call (as
 * go-sdk's client) */
#define MRTR_ROUNDS	10
/* a backend's input_required result: its inputRequests (an object, or
 * NULL) and requestState (a string, or NULL); -1: neither, or either of
 * the wrong type */
int	 mrtr_input_required(const json_t *result, json_t **irp,
	    json_t **statep);
/*
 * A client's answer: 0 if it was to an input request (taken; the caller
 * answers 202), 1 if not, 2 if req is answered here later (the answer
 * goes through Redis: another node asked).
 */
int	 mrtr_answer(struct worker *, struct httpd_req *, const char *sid,
	    const struct jsonrpc_msg *);
void	 mrtr_wake(struct worker *, const char *id);
/* sessionStorage redis: an answer for id may be in Redis */
void	 mrtr_redis_wake(struct worker *, const char *id);
void	 mrtr_init(struct worker *);
void	 mrtr_free_all(void);

#endif
