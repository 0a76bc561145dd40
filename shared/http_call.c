/*
 * What a call sends and receives: its request head as the caller builds
 * it (one buffer http_h1.c writes as it is, libcurl gets as a list), the
 * call's options, then the response head kept for http_call_header().
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/headers.h"
#include "shared/http_client_int.h"

#define HTTP_RESP_HDRS_MAX	100
#define HTTP_RESP_HEAD_MAX	(64 * 1024)

/* s is an RFC 9110 token: its length, or 0 */
size_t
http_token_valid(const char *s)
{
	const char	*p;

	for (p = s; *p != '\0'; p++)
		if (!proto_is_tchar(*p))
			return 0;
	return (size_t)(p - s);
}

/* len more bytes of the request head, to be written there; or NULL */
char *
http_call_req_grow(struct http_call *call, size_t len)
{
	char	*n;
	size_t	 cap;

	if (call->c_reqlen + len > call->c_reqcap) {
		cap = call->c_reqcap ? call->c_reqcap : 256;
		while (cap < call->c_reqlen + len)
			cap *= 2;
		if ((n = realloc(call->c_req, cap)) == NULL)
			return NULL;
		call->c_req = n;
		call->c_reqcap = cap;
	}
	n = call->c_req + call->c_reqlen;
	call->c_reqlen += len;
	return n;
}

/* appends to the request head; 0 or -1 */
int
http_call_req_add(struct http_call *call, const char *s, size_t len)
{
	char	*p;

	if ((p = http_call_req_grow(call, len)) == NULL)
		return -1;
	memcpy(p, s, len);
	return 0;
}

int
http_call_req_str(struct http_call *call, const char *s)
{
	return http_call_req_add(call, s, strlen(s));
}

/* "name: value" CRLF, or "name:" CRLF for an empty value, in one piece */
int
http_call_add_header(struct http_call *call, const char *name,
    const char *value)
{
	size_t	 nlen, vlen;
	char	*p;

	if (call->c_state != HC_NEW || (nlen = http_token_valid(name)) == 0)
		return -1;
	vlen = strcspn(value, "\r\n");
	if (value[vlen] != '\0')
		return -1;
	if ((p = http_call_req_grow(call, nlen + vlen + (vlen ? 4 : 3))) ==
	    NULL)
		return -1;
	memcpy(p, name, nlen);
	p += nlen;
	*p++ = ':';
	if (vlen > 0) {
		*p++ = ' ';
		memcpy(p, value, vlen);
		p += vlen;
	}
	*p++ = '\r';
	*p = '\n';
	if (nlen == 12 && strcasecmp(name, "Content-Type") == 0)
		call->c_has_ctype = 1;
	else if (nlen == 6 && strcasecmp(name, "Accept") == 0)
		call->c_has_accept = 1;
	return 0;
}

int
http_call_add_lines(struct http_call *call, const char *lines, size_t len,
    int flags)
{
	if (call->c_state != HC_NEW || http_call_req_add(call, lines, len) ==
	    -1)
		return -1;
	if (flags & HTTP_LINES_CTYPE)
		call->c_has_ctype = 1;
	if (flags & HTTP_LINES_ACCEPT)
		call->c_has_accept = 1;
	return 0;
}

int
http_call_set_body(struct http_call *call, const void *body, size_t len)
{
	char	*p;

	if (call->c_state != HC_NEW || (body == NULL && len > 0))
		return -1;
	if ((p = malloc(len + 1)) == NULL)
		return -1;
	if (len > 0)
		memcpy(p, body, len);
	p[len] = '\0';
	free(call->c_body);
	call->c_body = p;
	call->c_bodylen = len;
	call->c_has_body = 1;
	return 0;
}

void
http_call_set_timeout(struct http_call *call, uint64_t ms)
{
	call->c_timeout_ms = ms;
}

int
http_call_set_unix_socket(struct http_call *call, const char *path)
{
	char	*t, *p;

	if (call->c_state != HC_NEW || path == NULL || *path == '\0')
		return -1;
	if (asprintf(&t, "unix:%s", path) == -1)
		return -1;
	if ((p = strdup(path)) == NULL) {
		free(t);
		return -1;
	}
	if (!call->c_target_kept)
		free(call->c_target);
	call->c_target = t;
	call->c_target_kept = 0;
	free(call->c_unix);
	call->c_unix = p;
	return 0;
}

int
http_call_set_ca_file(struct http_call *call, const char *path)
{
	char	*p;

	if (call->c_state != HC_NEW || path == NULL || *path == '\0' ||
	    (p = strdup(path)) == NULL)
		return -1;
	free(call->c_cafile);
	call->c_cafile = p;
	return 0;
}

int
http_call_set_public_only(struct http_call *call)
{
	if (call->c_state != HC_NEW)
		return -1;
	/* an address in the URL goes through http_h1.c: checked here */
	if (call->c_h1 &&
	    http_addr_private((struct sockaddr *)&call->c_x.hx_addr))
		return -1;
	call->c_public_only = 1;
	return 0;
}

void
http_call_clear_headers(struct http_call *call)
{
	call->c_nhdrs = 0;
	call->c_hdrbytes = 0;
	call->c_hlen = 0;
}

static const char *
http_hdr_name(const struct http_call *call, size_t i)
{
	return call->c_hbuf + call->c_hdrs[i].h_name;
}

static const char *
http_hdr_value(const struct http_call *call, size_t i)
{
	return call->c_hbuf + call->c_hdrs[i].h_value;
}

/* room for n more bytes in c_hbuf (the head is capped, so is this) */
static int
http_call_hbuf_grow(struct http_call *call, size_t n)
{
	size_t	 cap = call->c_hcap != 0 ? call->c_hcap : 1024;
	char	*nb;

	while (cap < call->c_hlen + n)
		cap *= 2;
	if (cap == call->c_hcap)
		return 0;
	if ((nb = realloc(call->c_hbuf, cap)) == NULL)
		return -1;
	call->c_hbuf = nb;
	call->c_hcap = cap;
	return 0;
}

/* s[0..n) and a NUL at the end of c_hbuf; its offset */
static size_t
http_call_hbuf_put(struct http_call *call, const char *s, size_t n)
{
	size_t	off = call->c_hlen;

	memcpy(call->c_hbuf + off, s, n);
	call->c_hbuf[off + n] = '\0';
	call->c_hlen += n + 1;
	return off;
}

int
http_call_store_header(struct http_call *call, const char *line, size_t len)
{
	struct http_hdr	*h;
	const char	*colon, *v, *e;
	size_t		 nlen, vlen;

	if (call->c_hdrbytes + len > HTTP_RESP_HEAD_MAX)
		return -1;
	call->c_hdrbytes += len;

	/* obs-fold: the line continues the previous value */
	if (line[0] == ' ' || line[0] == '\t') {
		if (call->c_nhdrs == 0)
			return 0;
		v = line;
		e = line + len;
		proto_ows_trim(&v, &e);
		vlen = (size_t)(e - v);
		if (vlen == 0)
			return 0;
		/* the last value ends c_hbuf: its NUL becomes the space */
		if (http_call_hbuf_grow(call, vlen + 1) == -1)
			return -1;
		call->c_hbuf[call->c_hlen - 1] = ' ';
		(void)http_call_hbuf_put(call, v, vlen);
		return 0;
	}

	if ((colon = memchr(line, ':', len)) == NULL || colon == line)
		return 0;	/* not a field; ignore it */
	nlen = (size_t)(colon - line);
	v = colon + 1;
	e = line + len;
	proto_ows_trim(&v, &e);
	vlen = (size_t)(e - v);

	if (call->c_nhdrs == HTTP_RESP_HDRS_MAX)
		return -1;
	if (call->c_nhdrs == call->c_hdrcap) {
		size_t	ncap = call->c_hdrcap ? call->c_hdrcap * 2 : 16;

		if ((h = reallocarray(call->c_hdrs, ncap, sizeof(*h))) == NULL)
			return -1;
		call->c_hdrs = h;
		call->c_hdrcap = ncap;
	}
	if (http_call_hbuf_grow(call, nlen + vlen + 2) == -1)
		return -1;
	h = &call->c_hdrs[call->c_nhdrs];
	h->h_name = http_call_hbuf_put(call, line, nlen);
	h->h_value = http_call_hbuf_put(call, v, vlen);
	call->c_nhdrs++;
	return 0;
}

/*
 * libcurl frames a body by Transfer-Encoding over Content-Length and
 * takes the first of several: a head that makes that a choice is refused,
 * as http_h1.c and the front refuse it.
 */
const char *
http_call_framing_problem(const struct http_call *call)
{
	const char	*len = NULL;
	size_t		 i;
	int		 te = 0;

	for (i = 0; i < call->c_nhdrs; i++) {
		if (strcasecmp(http_hdr_name(call, i),
		    "Transfer-Encoding") == 0)
			te = 1;
		else if (strcasecmp(http_hdr_name(call, i),
		    "Content-Length") != 0)
			continue;
		else if (len == NULL)
			len = http_hdr_value(call, i);
		else if (strcmp(len, http_hdr_value(call, i)) != 0)
			return "differing Content-Lengths";
	}
	if (te && len != NULL)
		return "both Content-Length and Transfer-Encoding";
	return NULL;
}

const char *
http_call_header(struct http_call *call, const char *name)
{
	const struct http_hdr	*h;
	size_t			 i, n = strlen(name);

	/* a name is stored with its NUL, its value right after */
	for (i = call->c_nhdrs; i > 0; i--) {
		h = &call->c_hdrs[i - 1];
		if (h->h_value - h->h_name == n + 1 &&
		    strcasecmp(http_hdr_name(call, i - 1), name) == 0)
			return http_hdr_value(call, i - 1);
	}
	return NULL;
}

long
http_call_status(struct http_call *call)
{
	return call->c_status;
}
