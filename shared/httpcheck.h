/*
 * Checks on HTTP requests that evhttp lets through but a server in
 * front of others must refuse, for the bridges' evhttp endpoints (the
 * workers' own server decides framing in proto/http_req.c).
 */
#ifndef VMCPD_HTTPCHECK_H
#define VMCPD_HTTPCHECK_H

struct evhttp_request;

/* 0 when the body's framing is ambiguous (request smuggling): several
 * Content-Length headers, or Content-Length with Transfer-Encoding */
int	 httpcheck_framing(struct evhttp_request *);

#endif
