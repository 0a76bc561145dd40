/*
 * proto/http_req.c: request heads parsed in place (every refusal with
 * its status, the accepted forms, a head that is not all in yet at
 * every split) and chunked bodies decoded in place (one byte at a time
 * and in one piece, trailers, extensions, the limits, strict CRLF).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/headers.h"
#include "proto/http_req.h"

#define MAX_HEAD	2048
#define MAX_BODY	1000

/* a writable copy of s, as the parser takes it */
static char *
dup_text(const char *s, size_t n)
{
	char *p;

	p = malloc(n + 1);
	assert_non_null(p);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* http_head_parse() on a copy of s[0, n); the copy is kept in *bufp */
static int
parse_n(const char *s, size_t n, struct http_head *h, char **bufp)
{
	char	*buf = dup_text(s, n);
	int	 r;

	r = http_head_parse(buf, n, MAX_HEAD, MAX_BODY, h);
	if (bufp != NULL)
		*bufp = buf;
	else
		free(buf);
	return r;
}

static void
test_refused(void **state)
{
	static const struct {
		const char	*req;
		int		 status;
	} cases[] = {
		/* framing that two parsers could read differently */
		{ "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		    "Content-Length: 5\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
		    "Content-Length: 6\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
		    "Content-Length: 05\r\n\r\n", 400 },
		{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		    400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"
		    "\r\n", 501 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n"
		    "\r\n", 501 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
		    501 },
		{ "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\rHost: x\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\r\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\x01z\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\x7fz\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX-A: a\x1bz\r\n\r\n", 400 },
		/* Content-Length */
		{ "POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", 413 },
		{ "POST / HTTP/1.1\r\nContent-Length: "
		    "99999999999999999999999999\r\n\r\n", 413 },
		{ "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400 },
		/* Expect */
		{ "POST / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417 },
		{ "POST / HTTP/1.1\r\nExpect: 100-continue, x\r\n\r\n", 417 },
		/* versions */
		{ "GET / HTTP/2.0\r\n\r\n", 505 },
		{ "GET / HTTP/1.2\r\n\r\n", 505 },
		{ "GET / HTTP/0.9\r\n\r\n", 505 },
		{ "GET / HTTP/1.10\r\n\r\n", 505 },
		{ "GET / HTTP/1\r\n\r\n", 505 },
		/* malformed lines */
		{ "GET / http/1.1\r\n\r\n", 400 },
		{ "GET /\r\n\r\n", 400 },
		{ "GET  / HTTP/1.1\r\n\r\n", 400 },
		{ " GET / HTTP/1.1\r\n\r\n", 400 },
		{ "G(T / HTTP/1.1\r\n\r\n", 400 },
		{ "GET /\x7f HTTP/1.1\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\n: empty-name\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nX(A: b\r\n\r\n", 400 },
		{ "\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n", 400 },
		/* a target in none of the forms taken */
		{ "GET mcp HTTP/1.1\r\n\r\n", 400 },
		{ "GET example.com:443 HTTP/1.1\r\n\r\n", 400 },
		{ "GET http:mcp HTTP/1.1\r\n\r\n", 400 },
		{ "OPTIONS *x HTTP/1.1\r\n\r\n", 400 },
	};
	struct http_head	 h;
	size_t			 i;
	int			 r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = parse_n(cases[i].req, strlen(cases[i].req), &h, NULL);
		if (r != -1 || h.hh_status != cases[i].status)
			fail_msg("case %zu (%s): returned %d, status %d, not "
			    "%d", i, cases[i].req, r, h.hh_status,
			    cases[i].status);
		assert_non_null(h.hh_why);
	}
}

/* a NUL is a control character wherever it stands */
static void
test_nul(void **state)
{
	static const char	 v[] = "GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n";
	static const char	 n[] = "GET / HTTP/1.1\r\nX\0A: b\r\n\r\n";
	static const char	 t[] = "GET /a\0b HTTP/1.1\r\n\r\n";
	struct http_head	 h;

	(void)state;
	assert_int_equal(parse_n(v, sizeof(v) - 1, &h, NULL), -1);
	assert_int_equal(h.hh_status, 400);
	assert_int_equal(parse_n(n, sizeof(n) - 1, &h, NULL), -1);
	assert_int_equal(h.hh_status, 400);
	assert_int_equal(parse_n(t, sizeof(t) - 1, &h, NULL), -1);
	assert_int_equal(h.hh_status, 400);
}

/* "GET / HTTP/1.1" and n headers: Host, then "X-<i>: v" */
static char *
many_headers(size_t n, size_t *len)
{
	char	*buf;
	size_t	 i, cap = 64 + n * 16, off;

	buf = malloc(cap);
	assert_non_null(buf);
	off = (size_t)snprintf(buf, cap, "GET / HTTP/1.1\r\n");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, cap - off, i == 0 ?
		    "Host: h\r\n" : "X-%zu: v\r\n", i);
	off += (size_t)snprintf(buf + off, cap - off, "\r\n");
	*len = off;
	return buf;
}

static void
test_limits(void **state)
{
	struct http_head	 h;
	char			*req, *big;
	size_t			 len;

	(void)state;
	req = many_headers(HTTP_HDRS_MAX, &len);
	assert_int_equal(parse_n(req, len, &h, NULL), 1);
	assert_int_equal(h.hh_nhdrs, HTTP_HDRS_MAX);
	free(req);
	req = many_headers(HTTP_HDRS_MAX + 1, &len);
	assert_int_equal(parse_n(req, len, &h, NULL), -1);
	assert_int_equal(h.hh_status, 431);
	free(req);

	/* a whole head one byte over, and one not all in but over */
	big = malloc(MAX_HEAD + 64);
	assert_non_null(big);
	memcpy(big, "GET / HTTP/1.0\r\nX-Big: ", 23);
	memset(big + 23, 'z', MAX_HEAD + 64 - 23);
	memcpy(big + MAX_HEAD - 4, "\r\n\r\n", 4);
	assert_int_equal(parse_n(big, MAX_HEAD, &h, NULL), 1);
	assert_int_equal(h.hh_len, MAX_HEAD);
	big[MAX_HEAD - 4] = 'z';
	memcpy(big + MAX_HEAD - 3, "\r\n\r\n", 4);
	assert_int_equal(parse_n(big, MAX_HEAD + 1, &h, NULL), -1);
	assert_int_equal(h.hh_status, 431);
	memset(big + 23, 'z', MAX_HEAD + 64 - 23);
	assert_int_equal(parse_n(big, MAX_HEAD - 1, &h, NULL), 0);
	assert_int_equal(parse_n(big, MAX_HEAD, &h, NULL), -1);
	assert_int_equal(h.hh_status, 431);
	free(big);
}

static void
test_accepted(void **state)
{
	static const struct {
		const char	*req;
		int		 method;
		int		 minor;
		const char	*path;
		uint64_t	 clen;
		int		 chunked;
		int		 close;
		int		 cont;
	} cases[] = {
		{ "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_GET, 1, "/mcp", 0, 0, 0, 0 },
		{ "GET http://example.com/mcp?x=1 HTTP/1.1\r\n"
		    "Host: x\r\n\r\n",
		    HTTP_M_GET, 1, "/mcp", 0, 0, 0, 0 },
		{ "GET http://example.com HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_GET, 1, "/", 0, 0, 0, 0 },
		{ "GET https://example.com:8080?q HTTP/1.1\r\n"
		    "Host: x\r\n\r\n",
		    HTTP_M_GET, 1, "/", 0, 0, 0, 0 },
		{ "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_OPTIONS, 1, "*", 0, 0, 0, 0 },
		{ "DELETE /mcp?a=b&c=d HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_DELETE, 1, "/mcp", 0, 0, 0, 0 },
		{ "HEAD /a#frag HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_HEAD, 1, "/a", 0, 0, 0, 0 },
		{ "\r\n\r\nPUT / HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_PUT, 1, "/", 0, 0, 0, 0 },
		{ "\n\nPATCH / HTTP/1.1\nHost: x\n\n",
		    HTTP_M_PATCH, 1, "/", 0, 0, 0, 0 },
		{ "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n",
		    HTTP_M_OTHER, 1, "/pot", 0, 0, 0, 0 },
		{ "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
		    "content-length: 5\r\n\r\n",
		    HTTP_M_POST, 1, "/", 5, 0, 0, 0 },
		{ "POST / HTTP/1.1\r\nHost: x\r\n"
		    "Content-Length:  1000 \r\n\r\n",
		    HTTP_M_POST, 1, "/", 1000, 0, 0, 0 },
		{ "POST / HTTP/1.1\r\nHost: x\r\n"
		    "Transfer-Encoding: Chunked\r\n\r\n",
		    HTTP_M_POST, 1, "/", 0, 1, 0, 0 },
		{ "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\n"
		    "Content-Length: 3\r\n\r\n",
		    HTTP_M_POST, 1, "/", 3, 0, 0, 1 },
		{ "POST / HTTP/1.0\r\nExpect: 100-continue\r\n"
		    "Content-Length: 3\r\n\r\n",
		    HTTP_M_POST, 0, "/", 3, 0, 1, 0 },
		{ "GET / HTTP/1.0\r\n\r\n",
		    HTTP_M_GET, 0, "/", 0, 0, 1, 0 },
		{ "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
		    HTTP_M_GET, 0, "/", 0, 0, 0, 0 },
		{ "GET / HTTP/1.1\r\nHost: x\r\n"
		    "Connection: upgrade, close\r\n\r\n",
		    HTTP_M_GET, 1, "/", 0, 0, 1, 0 },
		{ "GET / HTTP/1.1\r\nHost: x\r\n"
		    "Connection: keep-alive\r\n\r\n",
		    HTTP_M_GET, 1, "/", 0, 0, 0, 0 },
		/* both options in one list, and close-ish tokens that are not */
		{ "GET / HTTP/1.0\r\nConnection: keep-alive ,\tCLOSE\r\n\r\n",
		    HTTP_M_GET, 0, "/", 0, 0, 1, 0 },
		{ "GET / HTTP/1.0\r\nConnection: closed, keep-alive\r\n\r\n",
		    HTTP_M_GET, 0, "/", 0, 0, 0, 0 },
	};
	struct http_head	 h;
	char			*buf;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (parse_n(cases[i].req, strlen(cases[i].req), &h,
		    &buf) != 1)
			fail_msg("case %zu (%s): refused %d %s", i,
			    cases[i].req, h.hh_status, h.hh_why);
		assert_int_equal(h.hh_len, strlen(cases[i].req));
		assert_int_equal(h.hh_method, cases[i].method);
		assert_int_equal(h.hh_minor, cases[i].minor);
		assert_string_equal(buf + h.hh_path, cases[i].path);
		assert_int_equal(h.hh_clen, cases[i].clen);
		assert_int_equal(h.hh_chunked, cases[i].chunked);
		assert_int_equal(h.hh_close, cases[i].close);
		assert_int_equal(h.hh_continue, cases[i].cont);
		free(buf);
	}
}

/* each of reqs refused with 400, saying why (when given) */
static void
expect_400(const char *const *reqs, size_t n, const char *why)
{
	struct http_head	 h;
	size_t			 i;

	for (i = 0; i < n; i++)
		if (parse_n(reqs[i], strlen(reqs[i]), &h, NULL) != -1 ||
		    h.hh_status != 400 || (why != NULL &&
		    strstr(h.hh_why, why) == NULL))
			fail_msg("refused %zu (%s): not a 400", i, reqs[i]);
}

/*
 * Authorization is no list (RFC 9110 11.6.2): two are refused, not the
 * first taken silently, whatever their case or values
 */
static void
test_two_authorizations(void **state)
{
	static const char *const refused[] = {
		"GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\n"
		    "Authorization: Bearer y\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\n"
		    "authorization: Bearer x\r\n\r\n",
		"GET / HTTP/1.1\r\nAUTHORIZATION: Basic eA==\r\nHost: a\r\n"
		    "Authorization:\r\n\r\n",
	};
	static const char	 one[] = "GET / HTTP/1.1\r\nHost: a\r\n"
				    "Authorization: Bearer x\r\n\r\n";
	struct http_head	 h;
	char			*buf;

	(void)state;
	expect_400(refused, sizeof(refused) / sizeof(refused[0]),
	    "more than one Authorization header");
	assert_int_equal(parse_n(one, strlen(one), &h, &buf), 1);
	assert_string_equal(http_head_known(buf, &h, HTTP_H_AUTHORIZATION),
	    "Bearer x");
	free(buf);
}

/*
 * RFC 9112 3.2: one Host in HTTP/1.1; the authority checked is an
 * absolute-form target's, else Host's
 */
static void
test_host(void **state)
{
	static const char *const refused[] = {
		"GET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",
		"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET http://h/ HTTP/1.1\r\n\r\n",
		"GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://?q HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://u@h/ HTTP/1.1\r\nHost: a\r\n\r\n",
	};
	static const struct {
		const char	*req;
		const char	*host;
		const char	*path;
	} cases[] = {
		{ "GET / HTTP/1.1\r\nHost: a.example:80\r\n\r\n",
		    "a.example:80", "/" },
		{ "GET / HTTP/1.1\r\nHost:\r\n\r\n", "", "/" },
		{ "GET http://evil.example:8080/mcp HTTP/1.1\r\n"
		    "Host: 127.0.0.1\r\n\r\n", "evil.example:8080", "/mcp" },
		{ "GET http://[::1]:9?q HTTP/1.1\r\nHost: x\r\n\r\n",
		    "[::1]:9", "/" },
		{ "GET http://h HTTP/1.1\r\nHost: x\r\n\r\n", "h", "/" },
		{ "GET x://h/a HTTP/1.1\r\nHost: x\r\n\r\n", "h", "/a" },
		{ "GET / HTTP/1.0\r\nHost: y\r\n\r\n", "y", "/" },
		{ "GET / HTTP/1.0\r\n\r\n", NULL, "/" },
	};
	struct http_head	 h;
	char			*buf;
	size_t			 i;

	(void)state;
	expect_400(refused, sizeof(refused) / sizeof(refused[0]), NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (parse_n(cases[i].req, strlen(cases[i].req), &h,
		    &buf) != 1)
			fail_msg("case %zu (%s): refused %d %s", i,
			    cases[i].req, h.hh_status, h.hh_why);
		if (cases[i].host == NULL)
			assert_int_equal(h.hh_host, 0);
		else
			assert_string_equal(buf + h.hh_host, cases[i].host);
		assert_string_equal(buf + h.hh_path, cases[i].path);
		free(buf);
	}
}

static void
test_headers(void **state)
{
	static const char	 req[] = "POST /mcp HTTP/1.1\r\n"
				    "Host: example.com\r\n"
				    "X-Ows: \t v a l \t \r\n"
				    "X-Empty:\r\n"
				    "X-Spaces:    \r\n"
				    "X-Dup: first\r\n"
				    "x-dup: second\r\n"
				    "X-Obs: caf\xc3\xa9\r\n"
				    "Content-Length: 4\r\n"
				    "\r\n"
				    "bodyGET";
	struct http_head	 h;
	char			*buf;

	(void)state;
	assert_int_equal(parse_n(req, sizeof(req) - 1, &h, &buf), 1);
	assert_int_equal(h.hh_nhdrs, 8);
	assert_int_equal(h.hh_len, sizeof(req) - 1 - 7);
	assert_memory_equal(buf + h.hh_len, "bodyGET", 7);
	assert_string_equal(http_head_header(buf, &h, "host"),
	    "example.com");
	assert_string_equal(http_head_header(buf, &h, "HOST"),
	    "example.com");
	assert_string_equal(http_head_header(buf, &h, "x-ows"), "v a l");
	assert_string_equal(http_head_header(buf, &h, "X-Empty"), "");
	assert_string_equal(http_head_header(buf, &h, "X-Spaces"), "");
	assert_string_equal(http_head_header(buf, &h, "X-DUP"), "first");
	assert_string_equal(http_head_header(buf, &h, "X-Obs"),
	    "caf\xc3\xa9");
	assert_null(http_head_header(buf, &h, "X-None"));
	assert_null(http_head_header(buf, &h, "X-Ow"));
	assert_null(http_head_header(buf, &h, "X-Owss"));
	assert_string_equal(buf + h.hh_hdrs[0].hf_name, "Host");
	assert_int_equal(h.hh_clen, 4);
	free(buf);
}

/*
 * The names the parser knows as it meets them: found by a look-up in any
 * case, the first of several, and a name that only looks like a known
 * one (same length, same first letter) found line by line.
 */
/* stop() against the rule stops(), each byte at each place of each
 * length: the 16-byte steps, the tail and their seam (fill: a byte it
 * lets through) */
static void
stop_check(const char *(*stop)(const char *, const char *),
    int (*stops)(int), char fill)
{
	char		 buf[48];
	const char	*want;
	size_t		 len, at;
	int		 c;

	for (len = 0; len <= 40; len++) {
		memset(buf, fill, sizeof(buf));
		assert_ptr_equal(stop(buf, buf + len), buf + len);
		for (at = 0; at < len; at++)
			for (c = 0; c < 256; c++) {
				memset(buf, fill, sizeof(buf));
				buf[at] = (char)c;
				want = stops(c) ? buf + at : buf + len;
				assert_ptr_equal(stop(buf, buf + len), want);
			}
	}
}

/* a field value stops at a control character but HTAB, or DEL */
static int
value_stops(int c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

static void
test_value_stop(void **state)
{
	(void)state;
	stop_check(proto_value_stop, value_stops, 'a');
}

/* a bearer token at anything but RFC 6750 2.1's b64token characters */
static int
b64token_stops(int c)
{
	return c == 0 || strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-._~+/", c) == NULL;
}

static void
test_b64token_stop(void **state)
{
	(void)state;
	stop_check(proto_b64token_stop, b64token_stops, '9');
}

/*
 * Header lines taken in one pass (http_header_fast()) and those left to
 * the line-by-line path must come out the same: values trimmed, LF or
 * CRLF, values past 16 bytes with a bad byte at each place.
 */
static void
test_header_values(void **state)
{
	static const struct {
		const char	*raw;
		const char	*want;	/* NULL: refused with why */
		const char	*why;
	} cases[] = {
		{ "v", "v", NULL },
		{ "  v  ", "v", NULL },
		{ "\tv\t", "v", NULL },
		{ "a\tb c", "a\tb c", NULL },
		{ "", "", NULL },
		{ "   ", "", NULL },
		{ "caf\xc3\xa9 \xff", "caf\xc3\xa9 \xff", NULL },
		{ "a\x01" "b", NULL, "Bad Request: control character in a "
		    "header value" },
		{ "a\x7f", NULL, "Bad Request: control character in a "
		    "header value" },
		{ "a\rb", NULL, "Bad Request: a CR not ending a line" },
		{ "a\r ", NULL, "Bad Request: a CR not ending a line" },
	};
	static const char	*const eol[] = { "\r\n", "\n" };
	struct http_head	 h;
	char			 req[256], val[64], *buf;
	size_t			 i, e, pad, at, n;
	const char		*v;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (e = 0; e < 2; e++)
			for (pad = 0; pad <= 40; pad += 20) {
				/* pad: the value (and the bad byte) pushed
				 * past 16 and 32 bytes */
				n = (size_t)snprintf(req, sizeof(req), "GET / "
				    "HTTP/1.1%sHost: h%sX-V: %.*s%s%s", eol[e],
				    eol[e], (int)pad, "pppppppppppppppppppppppp"
				    "pppppppppppppppppppppp", cases[i].raw,
				    eol[e]);
				/* "%s" stops at a NUL: none in the cases */
				n += (size_t)snprintf(req + n, sizeof(req) - n,
				    "%s", eol[e]);
				assert_true(n < sizeof(req));
				if (cases[i].want == NULL) {
					assert_int_equal(parse_n(req, n, &h,
					    NULL), -1);
					assert_int_equal(h.hh_status, 400);
					assert_string_equal(h.hh_why,
					    cases[i].why);
					continue;
				}
				assert_int_equal(parse_n(req, n, &h, &buf), 1);
				assert_int_equal(h.hh_len, n);
				v = http_head_header(buf, &h, "X-V");
				assert_non_null(v);
				if (pad == 0)
					assert_string_equal(v, cases[i].want);
				else {
					/* after the padding only the
					 * trailing OWS goes */
					n = (size_t)snprintf(val, sizeof(val),
					    "%.*s%s", (int)pad, "pppppppppppp"
					    "pppppppppppppppppppppppppppppppp"
					    "pppp", cases[i].raw);
					while (n > 0 && (val[n - 1] == ' ' ||
					    val[n - 1] == '\t'))
						val[--n] = '\0';
					assert_string_equal(v, val);
				}
				free(buf);
			}
	/* a control byte at each place of a long value */
	for (at = 0; at < 40; at++) {
		memset(val, 'v', 40);
		val[40] = '\0';
		val[at] = '\x1f';
		n = (size_t)snprintf(req, sizeof(req), "GET / HTTP/1.1\r\n"
		    "Host: h\r\nX-V: %s\r\n\r\n", val);
		assert_int_equal(parse_n(req, n, &h, NULL), -1);
		assert_int_equal(h.hh_status, 400);
	}
}

/* each known name, in any case, and each one a byte off */
static void
test_known_ids(void **state)
{
	static const struct {
		const char	*name;
		int		 id;
	} known[] = {
		{ "Host", HTTP_H_HOST },
		{ "Content-Length", HTTP_H_CONTENT_LENGTH },
		{ "Transfer-Encoding", HTTP_H_TRANSFER_ENCODING },
		{ "Connection", HTTP_H_CONNECTION },
		{ "Expect", HTTP_H_EXPECT },
		{ "Content-Type", HTTP_H_CONTENT_TYPE },
		{ "Accept", HTTP_H_ACCEPT },
		{ "Origin", HTTP_H_ORIGIN },
		{ "Authorization", HTTP_H_AUTHORIZATION },
		{ "Mcp-Session-Id", HTTP_H_MCP_SESSION_ID },
		{ "MCP-Protocol-Version", HTTP_H_MCP_PROTOCOL_VERSION },
		{ "Mcp-Method", HTTP_H_MCP_METHOD },
		{ "Mcp-Name", HTTP_H_MCP_NAME },
		{ "Last-Event-ID", HTTP_H_LAST_EVENT_ID },
		{ "User-Agent", HTTP_H_USER_AGENT },
		{ "X-Request-Id", HTTP_H_X_REQUEST_ID },
	};
	char	 n[32];
	size_t	 i, j, len;

	(void)state;
	assert_int_equal(sizeof(known) / sizeof(known[0]), HTTP_H_N - 1);
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		len = strlen(known[i].name);
		memcpy(n, known[i].name, len + 1);
		assert_int_equal(http_hdr_id(n, len), known[i].id);
		for (j = 0; j < len; j++)
			n[j] = (char)(n[j] >= 'a' && n[j] <= 'z' ? n[j] - 32 :
			    n[j] >= 'A' && n[j] <= 'Z' ? n[j] + 32 : n[j]);
		assert_int_equal(http_hdr_id(n, len), known[i].id);
		for (j = 0; j < len; j++) {
			memcpy(n, known[i].name, len + 1);
			n[j] = n[j] == 'x' || n[j] == 'X' ? 'y' : 'x';
			assert_int_equal(http_hdr_id(n, len), HTTP_H_OTHER);
			n[j] = '_';
			assert_int_equal(http_hdr_id(n, len), HTTP_H_OTHER);
		}
	}
}

static void
test_known_headers(void **state)
{
	static const char	 req[] = "POST /mcp HTTP/1.1\r\n"
				    "mcp-session-ID: s1\r\n"
				    "Mcp-Session-Id: s2\r\n"
				    "Mcp-Sessiox-Id: s3\r\n"
				    "Mcp-Nome: n\r\n"
				    "HOST: h\r\n"
				    "Accept: a\r\n"
				    "Origin: o\r\n"
				    "MCP-PROTOCOL-VERSION: v\r\n"
				    "\r\n";
	static const struct {
		const char	*req;
		const char	*why;	/* NULL: not all in */
	} order[] = {
		{ "POST / HTTP/1.1\r\nBadLine\r\n", NULL },
		{ "POST / HTTP/1.1\r\nBadLine\r\n\r\n",
		    "Bad Request: malformed header line" },
		{ "POST x HTTP/1.1\r\nBadLine\r\n\r\n",
		    "Bad Request: malformed request target" },
		{ "POST / HTTP/1.1\r\nBadLine\r\nX: \ry\r\n\r\n",
		    "Bad Request: a CR not ending a line" },
	};
	struct http_head	 h;
	char			*buf;
	size_t			 i;

	(void)state;
	assert_int_equal(http_hdr_id("Mcp-Session-Id", 14),
	    HTTP_H_MCP_SESSION_ID);
	assert_int_equal(http_hdr_id("TRANSFER-encoding", 17),
	    HTTP_H_TRANSFER_ENCODING);
	assert_int_equal(http_hdr_id("Mcp-Sessiox-Id", 14), HTTP_H_OTHER);
	assert_int_equal(http_hdr_id("Hosts", 5), HTTP_H_OTHER);
	assert_int_equal(http_hdr_id("Expecu", 6), HTTP_H_OTHER);
	assert_int_equal(parse_n(req, sizeof(req) - 1, &h, &buf), 1);
	assert_int_equal(h.hh_nhdrs, 8);
	assert_int_equal(h.hh_hdrs[0].hf_id, HTTP_H_MCP_SESSION_ID);
	assert_int_equal(h.hh_hdrs[2].hf_id, HTTP_H_OTHER);
	assert_string_equal(http_head_header(buf, &h, "Mcp-Session-Id"), "s1");
	assert_string_equal(http_head_header(buf, &h, "mcp-sessiox-id"), "s3");
	assert_string_equal(http_head_header(buf, &h, "Mcp-Nome"), "n");
	assert_null(http_head_header(buf, &h, "Mcp-Name"));
	assert_null(http_head_header(buf, &h, "Mcp-Namf"));
	assert_string_equal(http_head_header(buf, &h, "Host"), "h");
	assert_string_equal(http_head_header(buf, &h, "accept"), "a");
	assert_string_equal(http_head_header(buf, &h, "ORIGIN"), "o");
	assert_null(http_head_header(buf, &h, "Expect"));
	assert_string_equal(http_head_header(buf, &h, "MCP-Protocol-Version"),
	    "v");
	/* by id: the same lines, no name compared */
	assert_string_equal(http_head_known(buf, &h, HTTP_H_MCP_SESSION_ID),
	    "s1");
	assert_string_equal(http_head_known(buf, &h, HTTP_H_HOST), "h");
	assert_null(http_head_known(buf, &h, HTTP_H_MCP_NAME));
	assert_null(http_head_known(buf, &h, HTTP_H_OTHER));
	assert_null(http_head_known(buf, &h, HTTP_H_N));
	free(buf);

	/* a bad line is refused once the head is in, after the request line */
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_int_equal(parse_n(order[i].req, strlen(order[i].req), &h,
		    NULL), order[i].why != NULL ? -1 : 0);
		if (order[i].why != NULL)
			assert_string_equal(h.hh_why, order[i].why);
	}
}

/* a head not all in is 0, and nothing in the buffer is touched */
static void
test_incomplete(void **state)
{
	static const char *const reqs[] = {
		"POST http://h/mcp?x HTTP/1.1\r\nHost: x\r\nX-A:  b \r\n"
		    "Content-Length: 2\r\nExpect: 100-continue\r\n\r\n",
		"\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET / HTTP/1.1\nHost: x\n\n",
	};
	struct http_head	 h;
	char			*buf;
	size_t			 i, k, n;

	(void)state;
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		n = strlen(reqs[i]);
		for (k = 0; k < n; k++) {
			if (parse_n(reqs[i], k, &h, &buf) != 0)
				fail_msg("request %zu cut at %zu: not 0", i,
				    k);
			assert_memory_equal(buf, reqs[i], k);
			free(buf);
		}
		assert_int_equal(parse_n(reqs[i], n, &h, NULL), 1);
		assert_int_equal(h.hh_len, n);
	}
}

/*
 * Decodes s[0, n) into *out: with step 0 in one call, else growing
 * the length by step bytes a call.  The last result.
 */
static int
decode(const char *s, size_t n, size_t step, struct http_chunked *c,
    struct http_head *h, char **out)
{
	char	*buf = dup_text(s, n);
	size_t	 len;
	int	 r;

	memset(c, 0, sizeof(*c));
	memset(h, 0, sizeof(*h));
	if (step == 0)
		r = http_chunked_decode(c, buf, n, MAX_BODY, h);
	else {
		r = 0;
		for (len = 0; r == 0 && len < n; ) {
			len += step;
			if (len > n)
				len = n;
			r = http_chunked_decode(c, buf, len, MAX_BODY, h);
			assert_true(c->hc_out <= c->hc_in);
			assert_true(c->hc_in <= len);
		}
	}
	*out = buf;
	return r;
}

static void
test_chunked(void **state)
{
	static const struct {
		const char	*body;
		const char	*want;
	} cases[] = {
		{ "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world" },
		{ "0\r\n\r\n", "" },
		{ "A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n",
		    "0123456789abcdefghij" },
		{ "005\r\nhello\r\n000\r\n\r\n", "hello" },
		/* extensions, quoted or not, and BWS before them */
		{ "5;name=value\r\nhello\r\n1 ;x\r\n!\r\n"
		    "0;last=\"a;b\"\r\n\r\n", "hello!" },
		{ "3\t;x\r\nabc\r\n0\r\n\r\n", "abc" },
		/* trailers read past */
		{ "4\r\nwxyz\r\n0\r\nX-Sum: 1\r\nX-Other: two\r\n\r\n",
		    "wxyz" },
		/* data that looks like framing */
		{ "7\r\n0\r\n\r\n\r\n\r\n0\r\n\r\n", "0\r\n\r\n\r\n" },
	};
	struct http_chunked	 c1, c2;
	struct http_head	 h;
	char			*a, *b, *s;
	size_t			 i, n, wl;
	int			 r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = strlen(cases[i].body);
		wl = strlen(cases[i].want);
		r = decode(cases[i].body, n, 0, &c1, &h, &a);
		if (r != 1)
			fail_msg("case %zu: %d %s", i, r, h.hh_why);
		assert_int_equal(c1.hc_in, n);
		assert_int_equal(c1.hc_out, wl);
		assert_memory_equal(a, cases[i].want, wl);
		assert_int_equal(decode(cases[i].body, n, 1, &c2, &h, &b), 1);
		assert_int_equal(c2.hc_in, n);
		assert_int_equal(c2.hc_out, wl);
		assert_memory_equal(b, a, wl);
		free(a);
		free(b);

		/* a pipelined request after the body is left alone */
		if (asprintf(&s, "%sGET / HTTP/1.1\r\n\r\n",
		    cases[i].body) == -1)
			fail();
		assert_int_equal(decode(s, strlen(s), 0, &c1, &h, &a), 1);
		assert_int_equal(c1.hc_in, n);
		assert_string_equal(a + c1.hc_in, "GET / HTTP/1.1\r\n\r\n");
		assert_int_equal(decode(s, strlen(s), 3, &c2, &h, &b), 1);
		assert_int_equal(c2.hc_in, n);
		assert_memory_equal(b, a, wl);
		free(a);
		free(b);
		free(s);
	}
}

static void
test_chunked_refused(void **state)
{
	static const struct {
		const char	*body;
		int		 status;
	} cases[] = {
		/* CRLF strictly: a bare LF anywhere in the framing */
		{ "5\nhello\r\n0\r\n\r\n", 400 },
		{ "5\r\nhello\n0\r\n\r\n", 400 },
		{ "5\r\nhello\r\n0\n\r\n", 400 },
		{ "5\r\nhello\r\n0\r\n\n", 400 },
		{ "0\r\nX-T: 1\n\r\n", 400 },
		{ "5\r\nhelloXY0\r\n\r\n", 400 },
		{ "5\rx\nhello\r\n0\r\n\r\n", 400 },
		/* size lines */
		{ "\r\nhello\r\n0\r\n\r\n", 400 },
		{ "x\r\nhello\r\n0\r\n\r\n", 400 },
		{ "-5\r\nhello\r\n0\r\n\r\n", 400 },
		{ "0x5\r\nhello\r\n0\r\n\r\n", 400 },
		{ ";x\r\n\r\n", 400 },
		{ "5x\r\nhello\r\n0\r\n\r\n", 400 },
		{ "5 xyz\r\nhello\r\n0\r\n\r\n", 400 },	/* no ";" */
		{ "1000000000000000005\r\nhello\r\n0\r\n\r\n", 400 },
		/* the body's size */
		{ "3e9\r\n", 413 },
		{ "fffffffffffffff\r\n", 413 },
		{ "1f4\r\n", 0 },	/* 500: fine so far */
	};
	struct http_chunked	 c;
	struct http_head	 h;
	char			*a;
	size_t			 i, n;
	int			 r, step;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = strlen(cases[i].body);
		for (step = 0; step < 2; step++) {
			r = decode(cases[i].body, n, (size_t)step, &c, &h, &a);
			free(a);
			if (cases[i].status == 0 ? r != 0 : r != -1 ||
			    h.hh_status != cases[i].status)
				fail_msg("case %zu (step %d): %d, status %d",
				    i, step, r, h.hh_status);
		}
	}
}

static void
test_chunked_limits(void **state)
{
	struct http_chunked	 c;
	struct http_head	 h;
	char			*body, *a;
	size_t			 n;

	(void)state;
	/* two chunks together over the body's limit */
	body = malloc(2 * MAX_BODY);
	assert_non_null(body);
	n = (size_t)snprintf(body, 2 * MAX_BODY, "1f4\r\n");
	memset(body + n, 'a', 500);
	n += 500;
	n += (size_t)snprintf(body + n, 2 * MAX_BODY - n, "\r\n1f4\r\n");
	memset(body + n, 'b', 500);
	n += 500;
	n += (size_t)snprintf(body + n, 2 * MAX_BODY - n, "\r\n1\r\n");
	assert_int_equal(decode(body, n, 0, &c, &h, &a), -1);
	assert_int_equal(h.hh_status, 413);
	free(a);
	/* exactly the limit is fine */
	memcpy(body + n - 3, "0\r\n\r\n", 5);
	assert_int_equal(decode(body, n + 2, 0, &c, &h, &a), 1);
	assert_int_equal(c.hc_out, MAX_BODY);
	free(a);

	/* a size line with extensions past its bound, whole or not */
	memset(body, ';', 2 * MAX_BODY);
	body[0] = '1';
	assert_int_equal(decode(body, 1500, 0, &c, &h, &a), -1);
	assert_int_equal(h.hh_status, 400);
	free(a);
	memcpy(body + 1100, "\r\n", 2);
	assert_int_equal(decode(body, 1102, 0, &c, &h, &a), -1);
	assert_int_equal(h.hh_status, 400);
	free(a);
	memcpy(body + 1000, "\r\nx\r\n0\r\n\r\n", 10);
	assert_int_equal(decode(body, 1010, 0, &c, &h, &a), 1);
	assert_int_equal(c.hc_out, 1);
	free(a);

	/* trailers past their bound */
	free(body);
	body = malloc(16 * 1024);
	assert_non_null(body);
	memcpy(body, "0\r\n", 3);
	for (n = 3; n + 13 < 16 * 1024; n += 13)
		memcpy(body + n, "X-T: 123456\r\n", 13);
	assert_int_equal(decode(body, n, 0, &c, &h, &a), -1);
	assert_int_equal(h.hh_status, 400);
	free(a);
	free(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_two_authorizations),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_known_headers),
		cmocka_unit_test(test_value_stop),
		cmocka_unit_test(test_header_values),
		cmocka_unit_test(test_known_ids),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_b64token_stop),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_chunked_refused),
		cmocka_unit_test(test_chunked_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
