/*
 * The front's reply helpers (http_reply.c), shared by every edge.
 */
#ifndef VMCPD_HTTP_REPLY_H
#define VMCPD_HTTP_REPLY_H

#include <sys/types.h>

#include <stddef.h>
#include <jansson.h>

struct httpd_req;
struct config;
struct httpd_limits;

/* the http.* limits, whole: every listener of the worker takes them */
void	 front_limits(const struct config *, struct httpd_limits *);
/* once per process: the Vmcpd-Worker header each reply carries */
void	 front_reply_init(const struct config *, int slot, pid_t pid);
int	 front_host_ok(const struct config *, struct httpd_req *);
/* front_host_ok(), or 0 with the request answered 403 */
int	 front_host_check(const struct config *, struct httpd_req *);
void	 front_reply_json(struct httpd_req *, int status, json_t *body,
	    const char *session_id);
void	 front_reply_error(struct httpd_req *, int status, json_t *id,
	    int code, const char *message);
void	 front_reply_result(struct httpd_req *, const json_t *id,
	    const char *result, size_t len);
/* {"jsonrpc":"2.0","id":id,kind:json} from text the caller has */
char	*front_compose(const json_t *id, const char *kind, const char *json,
	    size_t len, size_t *outlen);
void	 front_reply_member(struct httpd_req *, const json_t *id,
	    const char *kind, const char *json, size_t len);
int	 front_sse_send_text(struct httpd_req *, const char *id,
	    const char *data, size_t len);
void	 front_sse_keepalive(struct httpd_req *);
/* a priming event (id NULL: none) and retry (< 0: none), SEP-1699 */
int	 front_sse_prime(struct httpd_req *, const char *id, long retry_ms);
void	 front_reply_empty(struct httpd_req *, int status);
/* start an SSE response (200, text/event-stream) with stream timeouts */
void	 front_sse_start(struct httpd_req *, const char *session_id);
int	 front_sse_send(struct httpd_req *, const char *id,
	    const json_t *msg);
void	 front_sse_end(struct httpd_req *);
const char *front_header(struct httpd_req *, const char *name);
/* 0 for GET or HEAD; else a 405 is sent and -1 */
int	 front_get_only(struct httpd_req *);
const char *front_param_header(void *req, const char *name);
const char *front_params_text(struct httpd_req *, size_t *len);

#endif
