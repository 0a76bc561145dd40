/*
 * The Legacy (2025-11-25) client edge (legacy.c).
 */
#ifndef VMCPD_LEGACY_H
#define VMCPD_LEGACY_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "proto/jsonrpc.h"

struct httpd_req;
struct request_fast;
struct jsonrpc_msg;
struct worker;

/* legacy.c: the Legacy (2025-11-25) client edge, entered from the front
 * (front.c) with the POST's message parsed and classified; msg as
 * modern_handle()'s */
void	 legacy_post(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg, const struct request_fast *);
void	 legacy_get(struct worker *, struct httpd_req *);
void	 legacy_delete(struct worker *, struct httpd_req *);
/* cancel the request id of session sid if held here: 1, else 0 */
int	 legacy_cancel(struct worker *, const char *sid, const json_t *id,
	    const char *reason);

#endif
