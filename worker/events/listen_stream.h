/*
 * subscriptions/listen streams of Modern clients (listen_stream.c).
 */
#ifndef VMCPD_LISTEN_STREAM_H
#define VMCPD_LISTEN_STREAM_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "proto/jsonrpc.h"

struct httpd_req;
struct jsonrpc_msg;
struct worker;

/* listen_stream.c: subscriptions/listen streams of Modern clients; msg as
 * modern_handle()'s */
void	 listen_start(struct worker *, struct httpd_req *,
	    struct jsonrpc_msg *msg);
void	 listen_deliver(struct worker *, const char *kind, const char *uri);
void	 listen_broadcast(struct worker *, const char *kind, const char *uri);
void	 listen_drain(struct worker *);

#endif
