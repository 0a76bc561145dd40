/*
 * The transport's insides, shared by its two pieces and by nothing else
 * (its callers have backend.h): backend.c runs a call and reads its
 * answer, backend_http.c makes the HTTP requests.
 */
#ifndef VMCPD_BACKEND_INT_H
#define VMCPD_BACKEND_INT_H

struct worker;
struct config_backend;
struct backend_req;
struct http_call;

struct trace_span;

/* backend_trace.c: the call's CLIENT span given what br says */
void	 backend_trace_note(struct trace_span *, const struct backend_req *);

/* backend_http.c: an unstarted POST of br, its headers and body set */
struct http_call *backend_post_new(struct worker *,
	    const struct config_backend *, const struct backend_req *);

#endif /* VMCPD_BACKEND_INT_H */
