/*
 * The Modern (2026-07-28) client edge (modern.c).
 */
#ifndef VMCPD_MODERN_H
#define VMCPD_MODERN_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "proto/jsonrpc.h"

struct httpd_req;
struct jsonrpc_msg;
struct worker;

/* modern.c: the Modern (2026-07-28) client edge; a request that goes on
 * takes msg (request_start()), else the caller releases it */
void	 modern_free_all(void);
void	 modern_handle(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg);
/* the method table's Modern handler of the requests on the view */
void	 modern_viewed(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg);
/* the hot path of a 2026-07-28 tools/call, off a scan of the body: 0 if
 * it took the request, -1 if not sure (then parse and classify) */
int	 modern_scan_post(struct worker *, struct httpd_req *, const char *,
	    size_t);

#endif
