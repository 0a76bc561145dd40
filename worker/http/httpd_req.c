/*
 * The request as its owner sees it (httpd.h): its head, parsed in
 * place in the connection's buffer by httpd.c, and its body read from
 * there; the client's address; the callbacks, tag and data the owner
 * hangs on it until it ends.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <stddef.h>
#include <string.h>

#include "proto/http_req.h"
#include "worker/http/httpd.h"
#include "worker/http/httpd_int.h"

int
httpd_req_method(const struct httpd_req *req)
{
	return req->r_head.hh_method;
}

const char *
httpd_req_path(const struct httpd_req *req)
{
	return req->r_conn->c_in + req->r_head.hh_path;
}

const char *
httpd_req_host(const struct httpd_req *req)
{
	return req->r_head.hh_host != 0 ? req->r_conn->c_in +
	    req->r_head.hh_host : NULL;
}

const char *
httpd_req_header(const struct httpd_req *req, const char *name)
{
	return http_head_header(req->r_conn->c_in, &req->r_head, name);
}

const char *
httpd_req_known(const struct httpd_req *req, int id)
{
	return http_head_known(req->r_conn->c_in, &req->r_head, id);
}

const char *
httpd_req_body(const struct httpd_req *req, size_t *len)
{
	*len = req->r_bodylen;
	return req->r_conn->c_in + req->r_body;
}

int
httpd_req_gone(const struct httpd_req *req)
{
	return req->r_conn->c_fd == -1;
}

/* the client's address as accepted (no port): no syscall per request */
int
httpd_req_peer(const struct httpd_req *req, struct sockaddr_storage *ss,
    socklen_t *len)
{
	const struct httpd_conn	*c = req->r_conn;
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	switch (c->c_family) {
	case AF_INET:
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, c->c_addr, 4);
		*len = sizeof(*sin);
		return 0;
	case AF_INET6:
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, c->c_addr, 16);
		*len = sizeof(*sin6);
		return 0;
	default:
		*len = 0;
		return -1;
	}
}

void
httpd_req_set_close_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	struct httpd_conn *c = req->r_conn;

	req->r_close_cb = cb;
	req->r_close_arg = arg;
	/* set on a request whose client is gone: told from the loop too */
	if (cb != NULL && c->c_fd == -1 && (c->c_state == CONN_ACTIVE ||
	    c->c_state == CONN_STREAMING))
		httpd_conn_tell_later(c);
}

void
httpd_req_set_done_cb(struct httpd_req *req, httpd_req_cb cb, void *arg)
{
	req->r_done_cb = cb;
	req->r_done_arg = arg;
}

void *
httpd_req_done_arg(const struct httpd_req *req)
{
	return req->r_done_arg;
}

int
httpd_req_status(const struct httpd_req *req)
{
	return req->r_status;
}

uint64_t
httpd_req_arrived(const struct httpd_req *req)
{
	return req->r_arrived;
}

unsigned int
httpd_req_tag(const struct httpd_req *req)
{
	return req->r_tag;
}

void
httpd_req_set_tag(struct httpd_req *req, unsigned int tag)
{
	req->r_tag = tag;
}

void
httpd_req_tag_error(struct httpd_req *req, int code)
{
	httpd_req_set_tag(req, httpd_req_tag(req) | HTTPD_TAG_ERROR);
	if (code != 0)
		req->r_rpc_code = code;
}

int
httpd_req_error_code(const struct httpd_req *req)
{
	return req->r_rpc_code;
}

void *
httpd_req_trace(const struct httpd_req *req)
{
	return req->r_trace;
}

void
httpd_req_set_trace(struct httpd_req *req, void *span)
{
	req->r_trace = span;
}

const char *
httpd_req_query(const struct httpd_req *req)
{
	return req->r_head.hh_query != 0 ? req->r_conn->c_in +
	    req->r_head.hh_query : NULL;
}

void
httpd_req_set_data(struct httpd_req *req, void *data, void (*fn)(void *))
{
	void	*old = req->r_data;
	void	(*oldfn)(void *) = req->r_data_free;

	req->r_data = data;
	req->r_data_free = fn;
	if (old != NULL && oldfn != NULL)
		oldfn(old);
}

void *
httpd_req_data(const struct httpd_req *req)
{
	return req->r_data;
}

int
httpd_req_peer_uid(const struct httpd_req *req, uid_t *uid)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);

	if (req->r_conn->c_fd == -1 || getsockopt(req->r_conn->c_fd,
	    SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 || len != sizeof(cred))
		return -1;
	*uid = cred.uid;
	return 0;
}
