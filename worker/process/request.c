/*
 * The client request (request.h): its start, holds and one finalize
 * point, and the one place its message is released.
 */
#include <string.h>

#include "shared/log.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "worker/process/process.h"
#include "worker/process/request.h"

void
request_msg_release(struct jsonrpc_msg *msg)
{
	jsonrpc_msg_clear(msg);
}

void
request_start(struct request *r, struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg, void (*free_fn)(struct request *))
{
	r->r_w = w;
	r->r_req = req;
	r->r_msg = *msg;
	memset(msg, 0, sizeof(*msg));
	r->r_count = 1;
	r->r_free = free_fn;
	memset(&r->r_trace, 0, sizeof(r->r_trace));
	worker_request_hold(w);
}

void
request_hold(struct request *r)
{
	r->r_count++;
}

int
request_finalize(struct request *r, const char *where)
{
	struct worker		*w = r->r_w;
	struct jsonrpc_msg	 m;

	if (r->r_count == 0) {
		log_warnx("%s: request finalized with nothing held", where);
		return -1;
	}
	if (--r->r_count > 0)
		return 0;
	/* the owner's state first: it may still read the message */
	m = r->r_msg;
	trace_ref_clear(&r->r_trace);
	r->r_free(r);
	request_msg_release(&m);
	worker_request_release(w, where);
	return 1;
}

int
request_note_relayed(const json_t *msg, int logs)
{
	const struct mcp_method *mm;

	mm = mcp_method_find(json_string_value(json_object_get(msg,
	    "method")));
	return MCP_METHOD_IS(mm, MCP_M_N_PROGRESS) ||
	    (logs && MCP_METHOD_IS(mm, MCP_M_N_MESSAGE));
}

int
request_msg_reparse(struct request *r, const char *body, size_t len)
{
	struct jsonrpc_msg m;

	if (jsonrpc_parse(body, len, &m, NULL) == -1)
		return -1;
	request_msg_release(&r->r_msg);
	r->r_msg = m;
	return 0;
}
