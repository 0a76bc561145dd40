/*
 * HTTP/1.1 requests as the front receives them (RFC 9112): the head is
 * parsed in place, names and values NUL-terminated where they lie and
 * reported as offsets (the buffer may move while the body arrives), and
 * a chunked body is decoded in place as it comes.  Framing is decided
 * here once, strictly: whatever two parsers could read differently
 * (both Content-Length and Transfer-Encoding, differing lengths, a
 * space before a colon, a folded line, a bare CR) is refused.  Pure:
 * no I/O.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "proto/headers.h"
#include "proto/http_req.h"

#define CHUNK_LINE_MAX	1024	/* a chunk-size line, extensions included */

static void	 http_refuse(struct http_head *, int, const char *);
static int	 http_line(const char *, size_t, size_t, size_t *, size_t *);
static int	 http_request_line(char *, size_t, size_t, struct http_head *);
static int	 http_header_line(const char *, size_t, size_t,
	    struct http_head *, size_t *);
static int	 http_method(const char *, size_t);
static int	 http_framing(char *, struct http_head *, uint64_t);
static int	 http_conn_tokens(const char *);

/* all but the header lines: 2 KiB that only the first hh_nhdrs use */
static void
http_head_reset(struct http_head *h)
{
	memset(h, 0, offsetof(struct http_head, hh_hdrs));
}

static void
http_refuse(struct http_head *h, int status, const char *why)
{
	h->hh_status = status;
	h->hh_why = why;
}

/*
 * The line starting at off: its end (the LF) in *lf and the end of its
 * content (a CR before the LF dropped) in *end.  0 if no LF yet, -1 if
 * a CR stands anywhere but before the LF.
 */
static int
http_line(const char *buf, size_t len, size_t off, size_t *end, size_t *lf)
{
	const char	*nl, *cr;

	if ((nl = memchr(buf + off, '\n', len - off)) == NULL)
		return 0;
	*lf = (size_t)(nl - buf);
	*end = *lf;
	if (*end > off && buf[*end - 1] == '\r')
		(*end)--;
	if ((cr = memchr(buf + off, '\r', *end - off)) != NULL)
		return -1;
	return 1;
}

static int
http_method(const char *m, size_t n)
{
	static const struct {
		const char	*name;
		size_t		 len;
		int		 method;
	} methods[] = {
		{ "GET", 3, HTTP_M_GET },
		{ "POST", 4, HTTP_M_POST },
		{ "DELETE", 6, HTTP_M_DELETE },
		{ "HEAD", 4, HTTP_M_HEAD },
		{ "PUT", 3, HTTP_M_PUT },
		{ "OPTIONS", 7, HTTP_M_OPTIONS },
		{ "PATCH", 5, HTTP_M_PATCH },
	};
	size_t	i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].len == n && memcmp(methods[i].name, m, n) == 0)
			return methods[i].method;
	return HTTP_M_OTHER;
}

/* method SP request-target SP HTTP-version, in buf[off, end) */
static int
http_request_line(char *buf, size_t off, size_t end, struct http_head *h)
{
	size_t	 p = off, m, t, tend, q, a;

	while (p < end && proto_is_tchar(buf[p]))
		p++;
	if (p == off || p >= end || buf[p] != ' ') {
		http_refuse(h, 400, "Bad Request: malformed request line");
		return -1;
	}
	m = p - off;
	h->hh_method = http_method(buf + off, m);
	t = ++p;
	while (p < end && (unsigned char)buf[p] > ' ' && buf[p] != 0x7f)
		p++;
	if (p == t || p >= end || buf[p] != ' ') {
		http_refuse(h, 400, "Bad Request: malformed request target");
		return -1;
	}
	tend = p++;
	if (end - p != 8 || memcmp(buf + p, "HTTP/1.", 7) != 0 ||
	    (buf[p + 7] != '0' && buf[p + 7] != '1')) {
		if (end - p >= 5 && memcmp(buf + p, "HTTP/", 5) == 0)
			http_refuse(h, 505, "HTTP Version Not Supported: "
			    "HTTP/1.1 only");
		else
			http_refuse(h, 400, "Bad Request: malformed request "
			    "line");
		return -1;
	}
	h->hh_minor = buf[p + 7] - '0';

	/*
	 * The path alone: the query is not used.  An absolute-form target's
	 * authority is the one the request is for, not Host's (RFC 9112
	 * 3.2.2): it is kept, moved one byte down over the scheme's last
	 * "/" to end in a NUL of its own.
	 */
	buf[tend] = '\0';
	if (buf[t] != '/' && buf[t] != '*') {
		q = t;
		while (q < tend && buf[q] != ':')
			q++;
		if (q + 2 < tend && buf[q + 1] == '/' && buf[q + 2] == '/') {
			a = q += 3;
			while (q < tend && buf[q] != '/' && buf[q] != '?')
				q++;
			/* RFC 9110 4.2.1: no empty host; no userinfo */
			if (q == a || memchr(buf + a, '@', q - a) != NULL) {
				http_refuse(h, 400, "Bad Request: malformed "
				    "authority in the request target");
				return -1;
			}
			memmove(buf + a - 1, buf + a, q - a);
			buf[q - 1] = '\0';
			h->hh_host = a - 1;
			if (q == tend || buf[q] != '/') {
				/* no path: "/", written over the scheme */
				buf[t] = '/';
				buf[t + 1] = '\0';
				q = t;
			}
			t = q;
		}
	}
	/* origin-form, absolute-form or "*": nothing else is served */
	if (buf[t] != '/' && strcmp(buf + t, "*") != 0) {
		http_refuse(h, 400, "Bad Request: malformed request "
		    "target");
		return -1;
	}
	h->hh_path = t;
	h->hh_query = 0;
	for (q = t; buf[q] != '\0'; q++)
		if (buf[q] == '?' || buf[q] == '#') {
			if (buf[q] == '?')
				h->hh_query = q + 1;
			buf[q] = '\0';
			break;
		}
	return 0;
}

/* the header names vmcpd reads, lower case, by enum http_field_id */
static const struct {
	char		 hk_name[24];	/* NUL-padded: read 8 bytes at a time */
	size_t		 hk_len;
} http_known[HTTP_H_N] = {
	[HTTP_H_HOST] = { "host", 4 },
	[HTTP_H_CONTENT_LENGTH] = { "content-length", 14 },
	[HTTP_H_TRANSFER_ENCODING] = { "transfer-encoding", 17 },
	[HTTP_H_CONNECTION] = { "connection", 10 },
	[HTTP_H_EXPECT] = { "expect", 6 },
	[HTTP_H_CONTENT_TYPE] = { "content-type", 12 },
	[HTTP_H_ACCEPT] = { "accept", 6 },
	[HTTP_H_ORIGIN] = { "origin", 6 },
	[HTTP_H_AUTHORIZATION] = { "authorization", 13 },
	[HTTP_H_MCP_SESSION_ID] = { "mcp-session-id", 14 },
	[HTTP_H_MCP_PROTOCOL_VERSION] = { "mcp-protocol-version", 20 },
	[HTTP_H_MCP_METHOD] = { "mcp-method", 10 },
	[HTTP_H_MCP_NAME] = { "mcp-name", 8 },
	[HTTP_H_LAST_EVENT_ID] = { "last-event-id", 13 },
	[HTTP_H_USER_AGENT] = { "user-agent", 10 },
	[HTTP_H_X_REQUEST_ID] = { "x-request-id", 12 },
};

/* the one known name a name of this length and first letter may be */
static int
http_hdr_candidate(const char *name, size_t len)
{
	unsigned char	 c = len > 0 ? (unsigned char)name[0] | 0x20 : 0;

	switch (len) {
	case 4:
		return HTTP_H_HOST;
	case 6:
		return c == 'a' ? HTTP_H_ACCEPT : c == 'o' ? HTTP_H_ORIGIN :
		    HTTP_H_EXPECT;
	case 8:
		return HTTP_H_MCP_NAME;
	case 10:
		return c == 'c' ? HTTP_H_CONNECTION : c == 'm' ?
		    HTTP_H_MCP_METHOD : HTTP_H_USER_AGENT;
	case 12:
		return c == 'c' ? HTTP_H_CONTENT_TYPE : HTTP_H_X_REQUEST_ID;
	case 13:
		return c == 'l' ? HTTP_H_LAST_EVENT_ID : HTTP_H_AUTHORIZATION;
	case 14:
		return c == 'c' ? HTTP_H_CONTENT_LENGTH :
		    HTTP_H_MCP_SESSION_ID;
	case 17:
		return HTTP_H_TRANSFER_ENCODING;
	case 20:
		return HTTP_H_MCP_PROTOCOL_VERSION;
	}
	return HTTP_H_OTHER;
}

/*
 * A token (RFC 9110 5.1: a parsed name is one) against its candidate,
 * eight bytes at a time: OR 0x20 lowers a letter, and maps no other
 * tchar onto a letter or onto the "-" the known names also hold.
 */
int
http_hdr_id(const char *name, size_t len)
{
	const uint64_t	 low = 0x2020202020202020ULL;
	const char	*k;
	uint64_t	 x, y;
	uint32_t	 a, b, c, d;
	size_t		 i;
	int		 id;

	if ((id = http_hdr_candidate(name, len)) == HTTP_H_OTHER)
		return HTTP_H_OTHER;
	k = http_known[id].hk_name;
	if (len < 8) {
		/* 4 to 7 (no known name is shorter): two words of four */
		memcpy(&a, name, 4);
		memcpy(&b, k, 4);
		memcpy(&c, name + len - 4, 4);
		memcpy(&d, k + len - 4, 4);
		return (a | (uint32_t)low) == b && (c | (uint32_t)low) == d ?
		    id : HTTP_H_OTHER;
	}
	/* whole words, then the last eight bytes (overlapping) */
	for (i = 0; i + 8 < len; i += 8) {
		memcpy(&x, name + i, 8);
		memcpy(&y, k + i, 8);
		if ((x | low) != y)
			return HTTP_H_OTHER;
	}
	memcpy(&x, name + len - 8, 8);
	memcpy(&y, k + len - 8, 8);
	return (x | low) == y ? id : HTTP_H_OTHER;
}

/*
 * field-name ":" OWS field-value OWS, in buf[off, end): recorded, the
 * value's end in *vend, nothing written (the head may not be all in).
 */
static int
http_header_line(const char *buf, size_t off, size_t end, struct http_head *h,
    size_t *vend)
{
	struct http_field	*f;
	size_t			 p = off;
	const char		*vs, *ve;
	int			 id;

	if (buf[off] == ' ' || buf[off] == '\t') {
		http_refuse(h, 400, "Bad Request: folded header line");
		return -1;
	}
	while (p < end && proto_is_tchar(buf[p]))
		p++;
	if (p == off || p >= end || buf[p] != ':') {
		http_refuse(h, 400, p < end && (buf[p] == ' ' ||
		    buf[p] == '\t') ? "Bad Request: space before a header "
		    "colon" : "Bad Request: malformed header line");
		return -1;
	}
	if (h->hh_nhdrs == HTTP_HDRS_MAX) {
		http_refuse(h, 431, "Request Header Fields Too Large: too "
		    "many header lines");
		return -1;
	}
	vs = buf + p + 1;
	ve = buf + end;
	proto_ows_trim(&vs, &ve);
	if (proto_value_ctl(vs, (size_t)(ve - vs)) != NULL) {
		http_refuse(h, 400, "Bad Request: control character in a "
		    "header value");
		return -1;
	}
	f = &h->hh_hdrs[h->hh_nhdrs];
	f->hf_name = off;
	f->hf_namelen = p - off;
	f->hf_value = (size_t)(vs - buf);
	f->hf_id = id = http_hdr_id(buf + off, p - off);
	*vend = (size_t)(ve - buf);
	h->hh_nhdrs++;
	if (id != HTTP_H_OTHER && h->hh_first[id] == 0)
		h->hh_first[id] = (uint8_t)h->hh_nhdrs;
	return 0;
}

/*
 * The common case in one pass: a header line at off that is well formed
 * (a token, a colon, a value without control characters, CRLF or LF)
 * and ends before max_head, recorded as http_header_line() records it,
 * its LF in *lf.  -1 with nothing written for anything else: the line
 * by line path then finds and words the problem, in its order.
 */
static int
http_header_fast(const char *buf, size_t len, size_t off, size_t max_head,
    struct http_head *h, size_t *lf, size_t *vend)
{
	const char		*p = buf + off, *e = buf + len, *vs, *ve;
	struct http_field	*f;
	int			 id;

	while (p < e && proto_is_tchar(*p))
		p++;
	if (p == buf + off || p >= e || *p != ':' ||
	    h->hh_nhdrs == HTTP_HDRS_MAX)
		return -1;
	for (vs = p + 1; vs < e && (*vs == ' ' || *vs == '\t'); vs++)
		;
	ve = proto_value_stop(vs, e);
	if (ve < e && *ve == '\n')
		*lf = (size_t)(ve - buf);
	else if (e - ve >= 2 && ve[0] == '\r' && ve[1] == '\n')
		*lf = (size_t)(ve - buf) + 1;
	else
		return -1;
	if (*lf >= max_head)
		return -1;
	while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	f = &h->hh_hdrs[h->hh_nhdrs];
	f->hf_name = off;
	f->hf_namelen = (size_t)(p - buf) - off;
	f->hf_value = (size_t)(vs - buf);
	f->hf_id = id = http_hdr_id(buf + off, f->hf_namelen);
	*vend = (size_t)(ve - buf);
	h->hh_nhdrs++;
	if (id != HTTP_H_OTHER && h->hh_first[id] == 0)
		h->hh_first[id] = (uint8_t)h->hh_nhdrs;
	return 0;
}

/*
 * The Connection options (a comma-separated list, RFC 9110 7.6.1) that
 * vmcpd reads, ASCII case-insensitively, in one pass: HTTP_CONN_CLOSE,
 * HTTP_CONN_KEEPALIVE or both.
 */
#define HTTP_CONN_CLOSE		0x01
#define HTTP_CONN_KEEPALIVE	0x02
static int
http_conn_tokens(const char *list)
{
	const char	*p = list, *s, *e;
	int		 found = 0;

	for (;; p++) {
		s = p;
		while (*p != '\0' && *p != ',')
			p++;
		e = p;
		proto_ows_trim(&s, &e);
		if (e - s == 5 && strncasecmp(s, "close", 5) == 0)
			found |= HTTP_CONN_CLOSE;
		else if (e - s == 10 && strncasecmp(s, "keep-alive", 10) == 0)
			found |= HTTP_CONN_KEEPALIVE;
		if (*p == '\0')
			return found;
	}
}

static int
http_framing(char *buf, struct http_head *h, uint64_t max_body)
{
	const char	*val, *clen = NULL, *te = NULL, *p;
	uint64_t	 n;
	size_t		 i, nte = 0, nhost = 0, nauth = 0, host = 0;
	int		 keepalive = 0, conn;

	for (i = 0; i < h->hh_nhdrs; i++) {
		val = buf + h->hh_hdrs[i].hf_value;
		switch (h->hh_hdrs[i].hf_id) {
		case HTTP_H_CONTENT_LENGTH:
			if (clen != NULL && strcmp(clen, val) != 0) {
				http_refuse(h, 400, "Bad Request: differing "
				    "Content-Length values");
				return -1;
			}
			clen = val;
			break;
		case HTTP_H_CONNECTION:
			conn = http_conn_tokens(val);
			if (conn & HTTP_CONN_CLOSE)
				h->hh_close = 1;
			if (conn & HTTP_CONN_KEEPALIVE)
				keepalive = 1;
			break;
		case HTTP_H_TRANSFER_ENCODING:
			te = val;
			nte++;
			break;
		case HTTP_H_HOST:
			if (nhost++ > 0) {
				http_refuse(h, 400, "Bad Request: more than "
				    "one Host header");
				return -1;
			}
			host = h->hh_hdrs[i].hf_value;
			break;
		case HTTP_H_AUTHORIZATION:
			/* not a list (RFC 9110 11.6.2): which one is meant? */
			if (nauth++ > 0) {
				http_refuse(h, 400, "Bad Request: more than "
				    "one Authorization header");
				return -1;
			}
			break;
		case HTTP_H_EXPECT:
			if (strcasecmp(val, "100-continue") != 0) {
				http_refuse(h, 417, "Expectation Failed: only "
				    "100-continue");
				return -1;
			}
			h->hh_continue = h->hh_minor >= 1;
			break;
		}
	}
	if (h->hh_minor == 0 && !keepalive)
		h->hh_close = 1;
	if (h->hh_host == 0)
		h->hh_host = host;
	if (te != NULL) {
		if (clen != NULL || nte > 1 || h->hh_minor == 0) {
			http_refuse(h, 400, "Bad Request: conflicting "
			    "Content-Length/Transfer-Encoding");
			return -1;
		}
		if (strcasecmp(te, "chunked") != 0) {
			http_refuse(h, 501, "Not Implemented: the only "
			    "transfer coding taken is chunked");
			return -1;
		}
		h->hh_chunked = 1;
		return 0;
	}
	if (clen == NULL)
		return 0;
	n = 0;
	for (p = clen; *p != '\0'; p++) {
		if (*p < '0' || *p > '9') {
			http_refuse(h, 400, "Bad Request: malformed "
			    "Content-Length");
			return -1;
		}
		if (n > (UINT64_MAX - 9) / 10) {
			n = UINT64_MAX;
			break;
		}
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (p == clen) {
		http_refuse(h, 400, "Bad Request: malformed Content-Length");
		return -1;
	}
	if (n > max_body) {
		http_refuse(h, 413, "Payload Too Large: the body is over "
		    "http.maxBodySize");
		return -1;
	}
	h->hh_clen = n;
	return 0;
}

/*
 * One pass over the lines: each is found (and a bare CR refused) and a
 * header line parsed as it comes, without writing: a head not all in
 * yet is parsed again from its start.  Errors keep the order of a head
 * read whole first: its line ends and size, the request line, the
 * header lines in turn, the framing.
 */
int
http_head_parse(char *buf, size_t len, size_t max_head, uint64_t max_body,
    struct http_head *h)
{
	size_t		 start = 0, off, end, lf, rl_end = 0, i;
	size_t		 vend[HTTP_HDRS_MAX];
	const char	*why = NULL;
	int		 r, status = 0;

	http_head_reset(h);
	/* RFC 9112 2.2: empty lines before a request line are ignored */
	while (start < len && start < 8 && (buf[start] == '\r' ||
	    buf[start] == '\n'))
		start++;
	for (off = start;; off = lf + 1) {
		if (off > start && status == 0 && http_header_fast(buf, len,
		    off, max_head, h, &lf, &vend[h->hh_nhdrs]) == 0)
			continue;
		if ((r = http_line(buf, len, off, &end, &lf)) == -1) {
			http_head_reset(h);
			http_refuse(h, 400, "Bad Request: a CR not ending a "
			    "line");
			return -1;
		}
		if (r == 0 || lf >= max_head) {
			http_head_reset(h);
			if (r == 0 && len < max_head)
				return 0;
			http_refuse(h, 431, "Request Header Fields Too Large: "
			    "the head is over http.maxHeaderSize");
			return -1;
		}
		if (end == off && off > start)
			break;
		if (end == off) {
			http_head_reset(h);
			http_refuse(h, 400, "Bad Request: no request line");
			return -1;
		}
		if (off == start)
			rl_end = end;
		else if (status == 0 && http_header_line(buf, off, end, h,
		    &vend[h->hh_nhdrs]) == -1) {
			status = h->hh_status;	/* after the request line's */
			why = h->hh_why;
			h->hh_status = 0;
			h->hh_why = NULL;
		}
	}
	h->hh_len = lf + 1;
	if (http_request_line(buf, start, rl_end, h) == -1)
		return -1;
	if (status != 0) {
		http_refuse(h, status, why);
		return -1;
	}
	/* the head is all in: names and values end in NULs where they lie */
	for (i = 0; i < h->hh_nhdrs; i++) {
		buf[h->hh_hdrs[i].hf_name + h->hh_hdrs[i].hf_namelen] = '\0';
		buf[vend[i]] = '\0';
	}
	if (http_framing(buf, h, max_body) == -1)
		return -1;
	/* RFC 9112 3.2: an HTTP/1.1 request without Host is refused */
	if (h->hh_minor >= 1 && h->hh_first[HTTP_H_HOST] == 0) {
		http_refuse(h, 400, "Bad Request: no Host header");
		return -1;
	}
	return 1;
}

const char *
http_head_known(const char *buf, const struct http_head *h, int id)
{
	if (id <= HTTP_H_OTHER || id >= HTTP_H_N || h->hh_first[id] == 0)
		return NULL;
	return buf + h->hh_hdrs[h->hh_first[id] - 1].hf_value;
}

/*
 * A known name's first line is recorded: one comparison finds it.  A
 * name that only looks like a known one, or is none, is looked for
 * line by line, the length first.
 */
const char *
http_head_header(const char *buf, const struct http_head *h,
    const char *name)
{
	const struct http_field	*f;
	const char		*n;
	size_t			 i, len = strlen(name);
	int			 c = (unsigned char)name[0] | 0x20, id;

	id = http_hdr_candidate(name, len);
	if (id != HTTP_H_OTHER && h->hh_first[id] != 0) {
		f = &h->hh_hdrs[h->hh_first[id] - 1];
		if (strcasecmp(buf + f->hf_name, name) == 0)
			return buf + f->hf_value;
	}
	for (i = 0; i < h->hh_nhdrs; i++) {
		n = buf + h->hh_hdrs[i].hf_name;
		if (h->hh_hdrs[i].hf_namelen == len &&
		    ((unsigned char)n[0] | 0x20) == c &&
		    strcasecmp(n, name) == 0)
			return buf + h->hh_hdrs[i].hf_value;
	}
	return NULL;
}

/*
 * Decodes in place what body[c->hc_in, len) holds: chunk data moves
 * down to body[c->hc_out], which never passes hc_in.  1 when the last
 * chunk and the trailer are in (hc_out is the body's length, hc_in the
 * bytes it took), 0 for more, -1 with the status and why in *h.
 */
int
http_chunked_decode(struct http_chunked *c, char *body, size_t len,
    uint64_t max_body, struct http_head *h)
{
	size_t		 end, lf, p, n;
	uint64_t	 size;
	int		 r, d;

	for (;;) {
		switch (c->hc_state) {
		case HTTP_CHUNK_SIZE:
		case HTTP_CHUNK_TRAILER:
			r = http_line(body, len, c->hc_in, &end, &lf);
			if (r == 0) {
				if (len - c->hc_in > CHUNK_LINE_MAX)
					goto toolong;
				return 0;
			}
			/* chunked framing is CRLF, strictly */
			if (r == -1 || end == lf)
				goto bad;
			if (lf - c->hc_in > CHUNK_LINE_MAX)
				goto toolong;
			if (c->hc_state == HTTP_CHUNK_TRAILER) {
				/* trailer fields are read past, not kept */
				n = end - c->hc_in;
				c->hc_trailer += lf + 1 - c->hc_in;
				c->hc_in = lf + 1;
				if (n == 0)
					return 1;
				if (c->hc_trailer > CHUNK_LINE_MAX * 8)
					goto toolong;
				break;
			}
			size = 0;
			for (p = c->hc_in; p < end; p++) {
				if ((d = proto_hex_digit(body[p])) == -1)
					break;
				if (p - c->hc_in >= 15)
					goto bad;
				size = size * 16 + (uint64_t)d;
			}
			if (p == c->hc_in)
				goto bad;
			/* BWS, then nothing or ";" chunk-ext */
			while (p < end && (body[p] == ' ' || body[p] == '\t'))
				p++;
			if (p < end && body[p] != ';')
				goto bad;
			if (size > max_body || c->hc_out + size > max_body) {
				http_refuse(h, 413, "Payload Too Large: the "
				    "body is over http.maxBodySize");
				return -1;
			}
			c->hc_in = lf + 1;
			c->hc_left = size;
			c->hc_state = size == 0 ? HTTP_CHUNK_TRAILER :
			    HTTP_CHUNK_DATA;
			break;
		case HTTP_CHUNK_DATA:
			n = len - c->hc_in;
			if (n > c->hc_left)
				n = (size_t)c->hc_left;
			if (n == 0)
				return 0;
			if (c->hc_out != c->hc_in)
				memmove(body + c->hc_out, body + c->hc_in, n);
			c->hc_out += n;
			c->hc_in += n;
			c->hc_left -= n;
			if (c->hc_left == 0)
				c->hc_state = HTTP_CHUNK_CRLF;
			break;
		case HTTP_CHUNK_CRLF:
			if (len - c->hc_in < 2)
				return 0;
			if (body[c->hc_in] != '\r' || body[c->hc_in + 1] != '\n')
				goto bad;
			c->hc_in += 2;
			c->hc_state = HTTP_CHUNK_SIZE;
			break;
		default:
			goto bad;
		}
	}
bad:
	http_refuse(h, 400, "Bad Request: malformed chunked body");
	return -1;
toolong:
	http_refuse(h, 400, "Bad Request: chunk framing line too long");
	return -1;
}
