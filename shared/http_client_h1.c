/*
 * Calls through the lean HTTP/1.1 client (http_h1.c): plain http:// to
 * an IP address, and Unix sockets.  The URL's split gives the request
 * line and Host; http_h1.c's callbacks are mapped onto the caller's.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "shared/http_client_int.h"

/* "host:port" for messages, without printf on the hot path */
static char *
http_target_make(const char *host, size_t hlen, unsigned long port)
{
	char	 num[24], *p, *t;
	size_t	 n;

	p = proto_utoa(num + sizeof(num), port, 10);
	n = (size_t)(num + sizeof(num) - p);
	if ((t = malloc(hlen + n + 2)) == NULL)
		return NULL;
	memcpy(t, host, hlen);
	t[hlen] = ':';
	memcpy(t + hlen + 1, p, n);
	t[hlen + 1 + n] = '\0';
	return t;
}

/* the split cache and http_h1.c's client */
void
http_h1_free(struct http_client *c)
{
	while (c->hc_nsplits > 0) {
		c->hc_nsplits--;
		free(c->hc_splits[c->hc_nsplits].hs_url);
		free(c->hc_splits[c->hc_nsplits].hs_line);
		free(c->hc_splits[c->hc_nsplits].hs_target);
	}
	h1_client_free(c->hc_h1);
}

/* what a request to u sends after its method, and u's "host:port" */
static int
http_h1_line_make(const struct http_url *u, char **line, size_t *len,
    char **target)
{
	const char	*path = u->hu_path;
	size_t		 plen = u->hu_pathlen, n;
	int		 slash = plen == 0 || *path == '?';
	char		*p;

	*line = *target = NULL;
	n = 1 + (size_t)slash + plen + sizeof(" HTTP/1.1\r\nHost: ") - 1 +
	    u->hu_authlen + 2;
	if ((*target = http_target_make(u->hu_auth, u->hu_hostlen,
	    u->hu_port)) == NULL || (p = *line = malloc(n + 1)) == NULL) {
		free(*target);
		*target = NULL;
		return -1;
	}
	*p++ = ' ';
	if (slash)
		*p++ = '/';
	memcpy(p, path, plen);
	p += plen;
	memcpy(p, " HTTP/1.1\r\nHost: ", sizeof(" HTTP/1.1\r\nHost: ") - 1);
	p += sizeof(" HTTP/1.1\r\nHost: ") - 1;
	memcpy(p, u->hu_auth, u->hu_authlen);
	p += u->hu_authlen;
	memcpy(p, "\r\n", 3);
	*len = n;
	return 0;
}

/*
 * http_url_split() of url, remembered for the URLs the client saw last:
 * the index of its cache entry, -1 if url is not split (libcurl judges
 * it), -2 if it is but not cached (*u holds it).
 */
static int
http_client_split(struct http_client *c, const char *url,
    struct http_url *u)
{
	char	*copy;
	int	 i, rc;

	for (i = 0; i < c->hc_nsplits; i++)
		if (strcmp(c->hc_splits[i].hs_url, url) == 0)
			return c->hc_splits[i].hs_rc == 0 ? i : -1;
	if ((rc = http_url_split(url, u)) == -1)
		return -1;
	if (c->hc_nsplits == HTTP_TARGETS_MAX || (copy = strdup(url)) == NULL)
		return -2;
	i = c->hc_nsplits;
	/* both spans lie in the URL: moved into the copy */
	c->hc_splits[i].hs_u = *u;
	c->hc_splits[i].hs_u.hu_auth = copy + (u->hu_auth - url);
	c->hc_splits[i].hs_u.hu_path = copy + (u->hu_path - url);
	if (http_h1_line_make(&c->hc_splits[i].hs_u, &c->hc_splits[i].hs_line,
	    &c->hc_splits[i].hs_linelen, &c->hc_splits[i].hs_target) == -1) {
		free(copy);
		return -2;
	}
	c->hc_splits[i].hs_url = copy;
	c->hc_splits[i].hs_rc = 0;
	c->hc_nsplits++;
	return i;
}

/*
 * A plain http:// URL split for http_h1.c: its request line and Host
 * go into the request head, an IP address into the exchange.  1: done
 * (the host is an address: http_h1.c can take it), 0: split, but the
 * host is a name (libcurl resolves it, unless a Unix socket is set),
 * -1: the URL is libcurl's to judge, -2: out of memory.
 */
int
http_h1_url(struct http_call *call, const char *url)
{
	struct http_client	*c = call->c_client;
	struct http_url		 u;
	char			*line = NULL;
	size_t			 len;
	int			 i, rc = -2;

	if ((i = http_client_split(c, url, &u)) == -1)
		return -1;
	if (i >= 0) {
		/* the usual case: a backend's URL, seen before */
		u = c->hc_splits[i].hs_u;
		call->c_target = c->hc_splits[i].hs_target;
		call->c_target_kept = 1;
		line = c->hc_splits[i].hs_line;
		len = c->hc_splits[i].hs_linelen;
	} else if (http_h1_line_make(&u, &line, &len, &call->c_target) == -1)
		return -2;
	memcpy(&call->c_x.hx_addr, &u.hu_addr, sizeof(u.hu_addr));
	call->c_x.hx_addrlen = u.hu_addrlen;
	if (http_call_req_str(call, call->c_method) == 0 &&
	    http_call_req_add(call, line, len) == 0) {
		call->c_req_hdrs = call->c_reqlen;
		call->c_h1_url = 1;
		rc = u.hu_addrlen != 0;
	}
	if (i < 0)
		free(line);
	return rc;
}

/* http_h1.c's callbacks, mapped onto the caller's */

static int
http_h1_line(void *arg, const char *line, size_t len)
{
	struct http_call	*call = arg;

	if (line == NULL) {
		http_call_clear_headers(call);
		return 0;
	}
	return http_call_store_header(call, line, len);
}

/* after a caller's callback: did it cancel or abort the call? */
static int
http_h1_verdict(struct http_call *call, int r)
{
	call->c_in_cb = 0;
	if (call->c_cancelled)
		return H1_CANCELLED;
	if (r != 0) {
		call->c_aborted = 1;
		return H1_ABORT;
	}
	return H1_GO;
}

static int
http_h1_head(void *arg, long status)
{
	struct http_call	*call = arg;

	call->c_status = status;
	call->c_head_done = 1;
	if (call->c_cbs.hc_head == NULL)
		return H1_GO;
	call->c_in_cb = 1;
	return http_h1_verdict(call, call->c_cbs.hc_head(call->c_arg, call,
	    status));
}

static int
http_h1_data(void *arg, const char *buf, size_t len)
{
	struct http_call	*call = arg;

	if (call->c_cbs.hc_data == NULL)
		return H1_GO;
	call->c_in_cb = 1;
	return http_h1_verdict(call, call->c_cbs.hc_data(call->c_arg, call,
	    buf, len));
}

static void
http_h1_done(void *arg, int result, const char *errmsg)
{
	struct http_call	*call = arg;
	struct http_client	*c = call->c_client;

	TAILQ_REMOVE(&c->hc_active, call, c_entry);
	c->hc_inflight--;
	call->c_state = HC_FINISHING;
	if (call->c_cbs.hc_done != NULL)
		call->c_cbs.hc_done(call->c_arg, call, result,
		    result == 0 ? NULL : errmsg);
	http_call_free(call);
}

static void
http_h1_dropped(void *arg)
{
	http_call_free(arg);
}

static const struct h1_cbs http_h1_cbs = {
	http_h1_line, http_h1_head, http_h1_data, http_h1_done,
	http_h1_dropped
};

/* the rest of the head, and the exchange for http_h1.c */
static int
http_call_h1_setup(struct http_call *call)
{
	struct h1_exchange	*x = &call->c_x;
	struct sockaddr_un	*sun = (struct sockaddr_un *)&x->hx_addr;
	char			 num[24], *s;
	size_t			 len;
	int			 post;

	if (call->c_unix != NULL) {
		if ((len = strlen(call->c_unix)) >= sizeof(sun->sun_path))
			return -1;
		memset(&x->hx_addr, 0, sizeof(x->hx_addr));
		sun->sun_family = AF_UNIX;
		memcpy(sun->sun_path, call->c_unix, len + 1);
		x->hx_addrlen = sizeof(*sun);
	}
	post = call->c_has_body || strcmp(call->c_method, "POST") == 0;
	/* what libcurl would send */
	if (!call->c_has_accept &&
	    http_call_req_str(call, "Accept: */*\r\n") == -1)
		return -1;
	if (post) {
		s = proto_utoa(num + sizeof(num), call->c_bodylen, 10);
		if (http_call_req_str(call, "Content-Length: ") == -1 ||
		    http_call_req_add(call, s, (size_t)(num + sizeof(num) - s))
		    == -1 ||
		    http_call_req_add(call, "\r\n", 2) == -1)
			return -1;
	}
	if (http_call_req_add(call, "\r\n", 2) == -1)
		return -1;
	x->hx_target = call->c_target;
	x->hx_out[0].iov_base = call->c_req;
	x->hx_out[0].iov_len = call->c_reqlen;
	x->hx_out[1].iov_base = call->c_body;
	x->hx_out[1].iov_len = post ? call->c_bodylen : 0;
	x->hx_head_only = strcmp(call->c_method, "HEAD") == 0;
	x->hx_timeout_ms = call->c_timeout_ms;
	x->hx_cbs = &http_h1_cbs;
	x->hx_arg = call;
	return 0;
}

int
http_h1_start(struct http_call *call)
{
	struct http_client	*c = call->c_client;

	if (http_call_h1_setup(call) == -1)
		return -1;
	call->c_state = HC_ACTIVE;
	TAILQ_INSERT_TAIL(&c->hc_active, call, c_entry);
	c->hc_inflight++;
	if (h1_exchange_start(c->hc_h1, &call->c_x) == -1) {
		TAILQ_REMOVE(&c->hc_active, call, c_entry);
		c->hc_inflight--;
		return -1;
	}
	return 0;
}

/* an active call, off hc_active already */
void
http_h1_cancel(struct http_call *call)
{
	/* in its own callback: http_h1_dropped frees it */
	if (call->c_in_cb) {
		call->c_state = HC_ZOMBIE;
		return;
	}
	h1_exchange_cancel(call->c_client->hc_h1, &call->c_x);
	http_call_free(call);
}
