/*
 * Outbound HTTP: libcurl's multi interface driven by the worker's
 * libevent loop.  One client per worker; libcurl's connection cache
 * reuses connections per backend.  Response bodies are delivered as
 * they arrive (de-chunked), so SSE responses can be parsed live.
 */
#ifndef VMCPD_HTTP_CLIENT_H
#define VMCPD_HTTP_CLIENT_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http_client;
struct http_call;

struct http_call_cbs {
	/*
	 * Once, when the response head is complete (after any 1xx).
	 * Return non-zero to abort the transfer (then hc_done reports
	 * an error).  May be NULL.
	 */
	int	(*hc_head)(void *arg, struct http_call *, long status);
	/* body bytes as they arrive (http_body_add() gathers them);
	 * non-zero aborts.  May be NULL. */
	int	(*hc_data)(void *arg, struct http_call *, const char *buf,
		    size_t len);
	/*
	 * Exactly once, unless the call was cancelled: result 0 when the
	 * transfer completed (any HTTP status), -1 on a transport error,
	 * timeout or abort, with a human-readable reason in errmsg.  The
	 * call is freed after this returns.
	 */
	void	(*hc_done)(void *arg, struct http_call *, int result,
		    const char *errmsg);
};

struct http_client *http_client_new(struct event_base *);
/* cancels every call in flight (no callbacks) and frees */
void	 http_client_free(struct http_client *);

struct http_call *http_call_new(struct http_client *, const char *method,
	    const char *url);
/* "Name: value"; both copied */
int	 http_call_add_header(struct http_call *, const char *name,
	    const char *value);
/* header lines the caller wrote ("Name: value" CRLF each, well formed),
 * copied as they are; HTTP_LINES_* say which of them the client reads */
#define HTTP_LINES_CTYPE	0x1	/* Content-Type is among them */
#define HTTP_LINES_ACCEPT	0x2	/* Accept is among them */
int	 http_call_add_lines(struct http_call *, const char *lines,
	    size_t len, int flags);
/* body copied */
int	 http_call_set_body(struct http_call *, const void *body, size_t len);
/* total time allowed, 0 = none (streams) */
void	 http_call_set_timeout(struct http_call *, uint64_t ms);
/* connect through a Unix socket (stdio bridges) */
int	 http_call_set_unix_socket(struct http_call *, const char *path);
/* verify an https:// server against the CAs in this PEM file instead
 * of the system's (the call goes through libcurl) */
int	 http_call_set_ca_file(struct http_call *, const char *path);
/* refuse to connect to an address http_addr_private() names, checked
 * on each address the name resolves to, at connect time (so a name
 * that resolves elsewhere the second time is caught too); the call
 * gets a connection of its own */
int	 http_call_set_public_only(struct http_call *);
struct sockaddr;
/* loopback, private (RFC 1918, fc00::/7), link-local, CGNAT, "this
 * network", unspecified, and their IPv4-mapped forms (http_url.c) */
int	 http_addr_private(const struct sockaddr *);
/*
 * The group a client's address counts in for a per-address cap
 * (http.maxConnectionsPerClient, sessions.maxPerAddress; http_url.c):
 * an IPv4 address itself, an IPv4-mapped IPv6 one as that IPv4
 * address, the /64 of any other IPv6 one (one host commonly holds a
 * whole /64).  *family is AF_INET or AF_INET6, key the group's address
 * (4 or 16 bytes, zeros past the /64); -1 for another family.
 */
#define HTTP_GROUP_LEN	16
int	 http_addr_group(const struct sockaddr *, socklen_t, int *family,
	    unsigned char key[HTTP_GROUP_LEN]);
/* a plain http:// URL split for http_h1.c (http_url.c, pure) */
struct http_url {
	const char		*hu_auth;	/* host[:port] as written */
	size_t			 hu_authlen;
	size_t			 hu_hostlen;	/* its host, brackets kept */
	unsigned long		 hu_port;
	const char		*hu_path;	/* path and query, or "" */
	size_t			 hu_pathlen;
	struct sockaddr_storage	 hu_addr;	/* the host as an address */
	socklen_t		 hu_addrlen;	/* 0: the host is a name */
};
/* 0, or -1: not a URL http_h1.c takes (libcurl judges it) */
int	 http_url_split(const char *, struct http_url *);
/*
 * A URL as it may be stored, logged or shown (http_url.c, pure): its
 * userinfo, every query value (a bare query item too) and its fragment
 * replaced by "***", the rest as written: "user:pw@" becomes "***@",
 * "?key=v&x" becomes "?key=***&***".  A new string, or NULL (no
 * memory).  The one way a backend's URL leaves the configuration.
 */
#define HTTP_URL_REDACTED	"***"
char	*http_url_redact(const char *);
/* hand the call to the loop; 0 or -1 (then the call is freed, no cbs) */
int	 http_call_start(struct http_call *, const struct http_call_cbs *,
	    void *arg);
/* a response header (case-insensitive, last one wins), or NULL;
 * valid from hc_head until the call is freed */
/*
 * http_body.c: data (n bytes) added to the body *buf of *len bytes, kept
 * NUL-terminated, at most max bytes in all, the old copy wiped: 0, or 1
 * (too long, no memory: an hc_data's abort)
 */
int	 http_body_add(char **buf, size_t *len, const char *data, size_t n,
	    size_t max);
const char *http_call_header(struct http_call *, const char *name);
long	 http_call_status(struct http_call *);
/* stop and free; no callback runs after this returns.  Safe to call
 * from inside this call's own hc_head/hc_data (then it is freed once
 * the callback returns). */
void	 http_call_cancel(struct http_call *);
/* number of calls in flight (for graceful drain) */
size_t	 http_client_active(const struct http_client *);

#endif
