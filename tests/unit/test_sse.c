/*
 * proto/sse.c: the incremental text/event-stream parser (line ends in
 * every split, BOM, comments, fields, ids, retry, the cap) and the
 * formatter, which must round-trip through the parser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/sse.h"

/*
 * Events are recorded as one printable transcript so that two parses
 * compare with one memcmp: E<event>|D<len>:<data>|I<id or ~>|R<retry>;
 */
struct rec {
	char	*r_buf;
	size_t	 r_len;
	size_t	 r_cap;
	int	 r_count;
	int	 r_stop_at;	/* the callback fails on this event (1-based) */
};

static void
rec_add(struct rec *r, const char *s, size_t n)
{
	while (r->r_len + n + 1 > r->r_cap) {
		r->r_cap = r->r_cap ? r->r_cap * 2 : 256;
		r->r_buf = realloc(r->r_buf, r->r_cap);
		assert_non_null(r->r_buf);
	}
	memcpy(r->r_buf + r->r_len, s, n);
	r->r_len += n;
	r->r_buf[r->r_len] = '\0';
}

static void
rec_addf(struct rec *r, const char *fmt, ...)
{
	char	buf[128];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(buf));
	rec_add(r, buf, (size_t)n);
}

static int
rec_cb(void *arg, const struct sse_event *ev)
{
	struct rec *r = arg;

	assert_non_null(ev->se_event);
	assert_non_null(ev->se_data);
	assert_int_equal(ev->se_data[ev->se_data_len], '\0');
	rec_add(r, "E", 1);
	rec_add(r, ev->se_event, strlen(ev->se_event));
	rec_addf(r, "|D%zu:", ev->se_data_len);
	rec_add(r, ev->se_data, ev->se_data_len);
	rec_add(r, "|I", 2);
	if (ev->se_id != NULL)
		rec_add(r, ev->se_id, strlen(ev->se_id));
	else
		rec_add(r, "~", 1);
	rec_addf(r, "|R%ld;", ev->se_retry);
	r->r_count++;
	return r->r_stop_at != 0 && r->r_count == r->r_stop_at;
}

static void
rec_free(struct rec *r)
{
	free(r->r_buf);
	memset(r, 0, sizeof(*r));
}

static const char *
rec_str(const struct rec *r)
{
	return r->r_buf != NULL ? r->r_buf : "";
}

/* parse in one feed; returns the feed result, transcript in r */
static int
parse_once(const char *s, size_t n, size_t max, struct rec *r)
{
	struct sse_parser	*p;
	int			 rc;

	memset(r, 0, sizeof(*r));
	p = sse_parser_new(max, rec_cb, r);
	assert_non_null(p);
	rc = sse_parser_feed(p, s, n);
	sse_parser_free(p);
	return rc;
}

/* parse in the given chunk sizes (cycled) */
static int
parse_chunks(const char *s, size_t n, size_t max, const size_t *sizes,
    size_t nsizes, struct rec *r)
{
	struct sse_parser	*p;
	size_t			 off = 0, k = 0, c;
	int			 rc = 0;

	memset(r, 0, sizeof(*r));
	p = sse_parser_new(max, rec_cb, r);
	assert_non_null(p);
	while (off < n) {
		c = sizes[k++ % nsizes];
		if (c > n - off)
			c = n - off;
		if (sse_parser_feed(p, s + off, c) == -1)
			rc = -1;
		off += c;
	}
	sse_parser_free(p);
	return rc;
}

static void
expect_events(const char *s, size_t n, const char *want)
{
	struct rec r;

	assert_int_equal(parse_once(s, n, 0, &r), 0);
	if (strcmp(rec_str(&r), want) != 0)
		fail_msg("got  %s\nwant %s", rec_str(&r), want);
	rec_free(&r);
}
#define EXPECT(s, want) expect_events((s), sizeof(s) - 1, (want))

static void
test_line_ends(void **state)
{
	(void)state;
	EXPECT("data: a\n\n", "E|D1:a|I~|R-1;");
	EXPECT("data: a\r\r", "E|D1:a|I~|R-1;");
	EXPECT("data: a\r\n\r\n", "E|D1:a|I~|R-1;");
	EXPECT("data: a\rdata: b\ndata: c\r\n\n", "E|D5:a\nb\nc|I~|R-1;");
	/* CRLF is one line end, LFCR is two */
	EXPECT("data: a\r\ndata: b\r\n\r\n", "E|D3:a\nb|I~|R-1;");
	EXPECT("data: a\n\rdata: b\n\n", "E|D1:a|I~|R-1;E|D1:b|I~|R-1;");
	EXPECT("data: a\n\ndata: b\r\rdata: c\r\n\r\n",
	    "E|D1:a|I~|R-1;E|D1:b|I~|R-1;E|D1:c|I~|R-1;");
	/* extra blank lines dispatch nothing */
	EXPECT("\n\n\r\n\r\rdata: x\n\n\n\n", "E|D1:x|I~|R-1;");
	/* no final blank line: nothing */
	EXPECT("data: x\n", "");
	EXPECT("data: x", "");
}

/* the classic bug: CR ends one feed, LF starts the next */
static void
test_cr_lf_split(void **state)
{
	struct sse_parser	*p;
	struct rec		 r;

	(void)state;
	memset(&r, 0, sizeof(r));
	p = sse_parser_new(0, rec_cb, &r);
	assert_non_null(p);
	assert_int_equal(sse_parser_feed(p, "data: a\r", 8), 0);
	assert_int_equal(sse_parser_feed(p, "\ndata: b\r", 9), 0);
	assert_int_equal(sse_parser_feed(p, "\n", 1), 0);
	assert_int_equal(r.r_count, 0);		/* no blank line yet */
	assert_int_equal(sse_parser_feed(p, "\r", 1), 0);
	assert_int_equal(r.r_count, 1);		/* the CR ends the event */
	assert_int_equal(sse_parser_feed(p, "\n", 1), 0);
	assert_int_equal(sse_parser_feed(p, "", 0), 0);
	assert_int_equal(r.r_count, 1);
	assert_string_equal(rec_str(&r), "E|D3:a\nb|I~|R-1;");
	/* CR, CR across feeds: two line ends, so an event */
	assert_int_equal(sse_parser_feed(p, "data: c\r", 8), 0);
	assert_int_equal(sse_parser_feed(p, "\r", 1), 0);
	assert_int_equal(r.r_count, 2);
	/* a CR at the end of one feed, an empty feed, then the LF */
	assert_int_equal(sse_parser_feed(p, "data: d\r", 8), 0);
	assert_int_equal(sse_parser_feed(p, "", 0), 0);
	assert_int_equal(sse_parser_feed(p, "\n", 1), 0);
	assert_int_equal(r.r_count, 2);
	assert_int_equal(sse_parser_feed(p, "\n", 1), 0);
	assert_int_equal(r.r_count, 3);
	assert_string_equal(rec_str(&r),
	    "E|D3:a\nb|I~|R-1;E|D1:c|I~|R-1;E|D1:d|I~|R-1;");
	sse_parser_free(p);
	rec_free(&r);
}

/* a stream with every feature, CR/LF/CRLF mixed */
static const char stream[] =
    "\xef\xbb\xbf: comment\r\n"
    "retry: 1500\n"
    "event: message\r"
    "id: 1\r\n"
    "data: {\"jsonrpc\":\"2.0\",\"id\":1}\n"
    "\n"
    "data:first\r"
    "data\r"
    "data:  two spaces\r\n"
    "id\n"
    "\r"
    ":keepalive\r"
    "\r\n"
    "id: a\0b\n"
    "data: x\0y\n"
    "unknown: field\n"
    "event: custom\r\n"
    "\r\n"
    "retry: 12x\n"
    "id: 99\n"
    "data\n"
    "\r"
    "data: tail never dispatched\r\n";

static const char stream_want[] =
    "Emessage|D24:{\"jsonrpc\":\"2.0\",\"id\":1}|I1|R1500;"
    "E|D18:first\n\n two spaces|I|R-1;"
    "Ecustom|D3:x\0y|I~|R-1;"
    "E|D0:|I99|R-1;";

static void
test_full_stream(void **state)
{
	struct rec r;

	(void)state;
	assert_int_equal(parse_once(stream, sizeof(stream) - 1, 0, &r), 0);
	assert_int_equal(r.r_count, 4);
	assert_int_equal(r.r_len, sizeof(stream_want) - 1);
	assert_memory_equal(r.r_buf, stream_want, r.r_len);
	rec_free(&r);
}

static void
test_every_split(void **state)
{
	struct rec	one, two;
	size_t		n = sizeof(stream) - 1, i, j, sz[3];
	unsigned	seed = 12345;
	int		round;

	(void)state;
	assert_int_equal(parse_once(stream, n, 0, &one), 0);

	/* every single split point, and every pair of split points */
	for (i = 0; i <= n; i++) {
		for (j = i; j <= n; j++) {
			sz[0] = i;
			sz[1] = j - i;
			sz[2] = n - j;
			if (sz[0] == 0 || sz[1] == 0 || sz[2] == 0)
				continue;
			assert_int_equal(parse_chunks(stream, n, 0, sz, 3,
			    &two), 0);
			if (two.r_len != one.r_len ||
			    memcmp(two.r_buf, one.r_buf, one.r_len) != 0)
				fail_msg("split at %zu,%zu differs", i, j);
			rec_free(&two);
		}
	}

	/* byte by byte */
	sz[0] = 1;
	assert_int_equal(parse_chunks(stream, n, 0, sz, 1, &two), 0);
	assert_int_equal(two.r_len, one.r_len);
	assert_memory_equal(two.r_buf, one.r_buf, one.r_len);
	rec_free(&two);

	/* random chunks */
	for (round = 0; round < 2000; round++) {
		size_t	sizes[64];

		for (i = 0; i < 64; i++) {
			seed = seed * 1103515245 + 12345;
			sizes[i] = 1 + (seed >> 16) % 9;
		}
		assert_int_equal(parse_chunks(stream, n, 0, sizes, 64, &two),
		    0);
		if (two.r_len != one.r_len ||
		    memcmp(two.r_buf, one.r_buf, one.r_len) != 0)
			fail_msg("random round %d differs", round);
		rec_free(&two);
	}
	rec_free(&one);
}

static void
test_bom(void **state)
{
	struct rec	r;
	size_t		one = 1;

	(void)state;
	EXPECT("\xef\xbb\xbf" "data: x\n\n", "E|D1:x|I~|R-1;");
	/* only one BOM is dropped: the second makes an unknown field */
	EXPECT("\xef\xbb\xbf\xef\xbb\xbf" "data: x\n\ndata: y\n\n",
	    "E|D1:y|I~|R-1;");
	/* a partial BOM is text */
	EXPECT("\xef\xbb" "data: x\n\ndata: y\n\n", "E|D1:y|I~|R-1;");
	EXPECT("\xef" "data: x\n\ndata: y\n\n", "E|D1:y|I~|R-1;");
	/* a BOM later in the stream is not dropped */
	EXPECT("data: x\n\n\xef\xbb\xbf" "data: y\n\n", "E|D1:x|I~|R-1;");
	EXPECT("data: \xef\xbb\xbfz\n\n", "E|D4:\xef\xbb\xbfz|I~|R-1;");

	/* split byte by byte, the BOM still goes */
	assert_int_equal(parse_chunks("\xef\xbb\xbf" "data: x\n\n", 12, 0,
	    &one, 1, &r), 0);
	assert_string_equal(rec_str(&r), "E|D1:x|I~|R-1;");
	rec_free(&r);
	/* a partial BOM split, then text: the held bytes come back */
	assert_int_equal(parse_chunks("\xef" "data: x\n\ndata: y\n\n", 19, 0,
	    &one, 1, &r), 0);
	assert_string_equal(rec_str(&r), "E|D1:y|I~|R-1;");
	rec_free(&r);
	assert_int_equal(parse_chunks("\xef\xbb" "data: x\n\ndata: y\n\n", 20,
	    0, &one, 1, &r), 0);
	assert_string_equal(rec_str(&r), "E|D1:y|I~|R-1;");
	rec_free(&r);
	assert_int_equal(parse_chunks("\xef\xbb\n" "data: x\n\n", 12, 0,
	    &one, 1, &r), 0);
	assert_string_equal(rec_str(&r), "E|D1:x|I~|R-1;");
	rec_free(&r);
}

static void
test_fields(void **state)
{
	(void)state;
	/* comments */
	EXPECT(": hello\n\n", "");
	EXPECT(":\n\n", "");
	EXPECT(":data: x\n\n", "");
	EXPECT("data: a\n: inside\ndata: b\n\n", "E|D3:a\nb|I~|R-1;");
	/* with and without the space; only one space is dropped */
	EXPECT("data:x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("data: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("data:  x\n\n", "E|D2: x|I~|R-1;");
	EXPECT("data:\tx\n\n", "E|D2:\tx|I~|R-1;");
	EXPECT("data: x \n\n", "E|D2:x |I~|R-1;");
	/* a colon in the value stays */
	EXPECT("data: a:b: c\n\n", "E|D6:a:b: c|I~|R-1;");
	/* a field without a colon has an empty value */
	EXPECT("data\n\n", "E|D0:|I~|R-1;");
	EXPECT("data\ndata\n\n", "E|D1:\n|I~|R-1;");
	EXPECT("data:\n\n", "E|D0:|I~|R-1;");
	EXPECT("data: \n\n", "E|D0:|I~|R-1;");
	/* names are exact and case-sensitive */
	EXPECT("Data: x\n\n", "");
	EXPECT("data : x\n\n", "");
	EXPECT(" data: x\n\n", "");
	EXPECT("datas: x\n\n", "");
	EXPECT("dat: x\n\n", "");
	/* event type; it does not leak into the next event */
	EXPECT("event: a\nevent: b\ndata: x\n\ndata: y\n\n",
	    "Eb|D1:x|I~|R-1;E|D1:y|I~|R-1;");
	EXPECT("event: lonely\n\ndata: y\n\n", "E|D1:y|I~|R-1;");
	EXPECT("event\ndata: y\n\n", "E|D1:y|I~|R-1;");
	/* NUL in data is kept and counted */
	expect_events("data: a\0b\n\n", 11, "E|D3:a\0b|I~|R-1;");
}

static void
test_ids(void **state)
{
	struct sse_parser	*p;
	struct rec		 r;

	(void)state;
	EXPECT("id: 1\ndata: a\n\ndata: b\n\n", "E|D1:a|I1|R-1;"
	    "E|D1:b|I~|R-1;");
	EXPECT("id: 1\nid: 2\ndata: a\n\n", "E|D1:a|I2|R-1;");
	EXPECT("id\ndata: a\n\n", "E|D1:a|I|R-1;");
	/* an id with NUL is ignored, the earlier id stands */
	expect_events("id: a\0b\ndata: x\n\n", 17, "E|D1:x|I~|R-1;");
	expect_events("id: 1\nid: 2\0\ndata: x\n\n", 22,
	    "E|D1:x|I1|R-1;");

	memset(&r, 0, sizeof(r));
	p = sse_parser_new(0, rec_cb, &r);
	assert_non_null(p);
	assert_string_equal(sse_parser_last_id(p), "");
	assert_int_equal(sse_parser_feed(p, "id: 7\ndata: x\n\n", 15), 0);
	assert_string_equal(sse_parser_last_id(p), "7");
	/* the id is committed only at the blank line */
	assert_int_equal(sse_parser_feed(p, "id: 8\ndata: y\n", 14), 0);
	assert_string_equal(sse_parser_last_id(p), "7");
	assert_int_equal(sse_parser_feed(p, "\n", 1), 0);
	assert_string_equal(sse_parser_last_id(p), "8");
	/* an event without an id keeps the last one */
	assert_int_equal(sse_parser_feed(p, "data: z\n\n", 9), 0);
	assert_string_equal(sse_parser_last_id(p), "8");
	/* an id in a block without data still counts */
	assert_int_equal(sse_parser_feed(p, "id: 9\n\n", 7), 0);
	assert_string_equal(sse_parser_last_id(p), "9");
	assert_int_equal(sse_parser_feed(p, "id: 1\0\n\n", 8), 0);
	assert_string_equal(sse_parser_last_id(p), "9");
	/* an empty id resets it */
	assert_int_equal(sse_parser_feed(p, "id\n\n", 4), 0);
	assert_string_equal(sse_parser_last_id(p), "");
	assert_string_equal(rec_str(&r), "E|D1:x|I7|R-1;E|D1:y|I8|R-1;"
	    "E|D1:z|I~|R-1;");
	sse_parser_free(p);
	rec_free(&r);
}

static void
test_retry(void **state)
{
	(void)state;
	EXPECT("retry: 3000\ndata: x\n\n", "E|D1:x|I~|R3000;");
	EXPECT("retry:0\ndata: x\n\n", "E|D1:x|I~|R0;");
	EXPECT("retry: 1\nretry: 2\ndata: x\n\n", "E|D1:x|I~|R2;");
	EXPECT("retry: 30a0\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry: -1\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry: +5\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry: 5 \ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry:  5\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry: 1.5\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry:\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry\ndata: x\n\n", "E|D1:x|I~|R-1;");
	EXPECT("retry: 99999999999999999999999999\ndata: x\n\n",
	    "E|D1:x|I~|R-1;");
	/* a bad value leaves an earlier good one */
	EXPECT("retry: 10\nretry: x\ndata: x\n\n", "E|D1:x|I~|R10;");
	/* a retry in a block without data waits for the next event */
	EXPECT("retry: 500\n\ndata: x\n\ndata: y\n\n",
	    "E|D1:x|I~|R500;E|D1:y|I~|R-1;");
}

/* what its buffers hold: nothing at first, an event's bytes as it comes */
static void
test_held(void **state)
{
	struct sse_parser	*p;
	struct rec		 r;
	char			 line[4096];

	(void)state;
	memset(&r, 0, sizeof(r));
	p = sse_parser_new(0, rec_cb, &r);
	assert_non_null(p);
	assert_int_equal(sse_parser_held(p), 0);
	memcpy(line, "data: ", 6);
	memset(line + 6, 'x', sizeof(line) - 7);
	line[sizeof(line) - 1] = '\n';
	assert_int_equal(sse_parser_feed(p, line, sizeof(line)), 0);
	assert_true(sse_parser_held(p) >= sizeof(line) - 7);
	assert_true(sse_parser_held(p) <= 4 * sizeof(line));
	assert_int_equal(sse_parser_feed(p, "\n", 1), 0);
	assert_int_equal(r.r_count, 1);
	sse_parser_free(p);
	rec_free(&r);
}

static void
test_cap(void **state)
{
	struct sse_parser	*p;
	struct rec		 r;
	size_t			 one = 1, i;
	char			 big[200];

	(void)state;
	/* under the cap */
	assert_int_equal(parse_once("data: hello\n\n", 13, 32, &r), 0);
	assert_string_equal(rec_str(&r), "E|D5:hello|I~|R-1;");
	rec_free(&r);
	/* one long line, one-shot and byte by byte; earlier events stay */
	assert_int_equal(parse_once("data: a\n\ndata: 0123456789abcdefghij\n\n",
	    37, 16, &r), -1);
	assert_string_equal(rec_str(&r), "E|D1:a|I~|R-1;");
	rec_free(&r);
	assert_int_equal(parse_chunks("data: a\n\ndata: 0123456789abcdefghij"
	    "\n\n", 37, 16, &one, 1, &r), -1);
	assert_string_equal(rec_str(&r), "E|D1:a|I~|R-1;");
	rec_free(&r);
	/* a line that never ends */
	memset(big, 'x', sizeof(big));
	assert_int_equal(parse_chunks(big, sizeof(big), 64, &one, 1, &r), -1);
	rec_free(&r);
	/* many short data lines add up */
	for (i = 0; i < 20; i++)
		memcpy(big + i * 8, "data: a\n", 8);
	assert_int_equal(parse_once(big, 160, 24, &r), -1);
	assert_int_equal(r.r_count, 0);
	rec_free(&r);
	assert_int_equal(parse_once(big, 160, 0, &r), 0);	/* no cap */
	rec_free(&r);
	/* comments do not accumulate */
	for (i = 0; i < 20; i++)
		memcpy(big + i * 8, ": ping\r\n", 8);
	assert_int_equal(parse_once(big, 160, 24, &r), 0);
	rec_free(&r);

	/* once failed, always failed */
	memset(&r, 0, sizeof(r));
	p = sse_parser_new(8, rec_cb, &r);
	assert_non_null(p);
	assert_int_equal(sse_parser_feed(p, "data: 0123456789\n\n", 18), -1);
	assert_int_equal(sse_parser_feed(p, "data: a\n\n", 9), -1);
	assert_int_equal(r.r_count, 0);
	sse_parser_free(p);
	rec_free(&r);
}

static void
test_callback_stop(void **state)
{
	struct sse_parser	*p;
	struct rec		 r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.r_stop_at = 2;
	p = sse_parser_new(0, rec_cb, &r);
	assert_non_null(p);
	assert_int_equal(sse_parser_feed(p, "data: 1\n\ndata: 2\n\ndata: 3\n\n",
	    27), -1);
	assert_int_equal(r.r_count, 2);
	assert_int_equal(sse_parser_feed(p, "data: 4\n\n", 9), -1);
	assert_int_equal(r.r_count, 2);
	sse_parser_free(p);
	rec_free(&r);

	/* no callback at all: events are dropped, ids still tracked */
	p = sse_parser_new(0, NULL, NULL);
	assert_non_null(p);
	assert_int_equal(sse_parser_feed(p, "id: 3\ndata: 1\n\n", 15), 0);
	assert_string_equal(sse_parser_last_id(p), "3");
	sse_parser_free(p);
	sse_parser_free(NULL);
}

static void
expect_format(const char *id, const char *event, const char *data,
    size_t datalen, const char *want)
{
	char	*s;
	size_t	 len = 0;

	s = sse_format_event(id, event, data, datalen, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen(want));
	assert_string_equal(s, want);
	free(s);
}

static void
test_format(void **state)
{
	size_t len;

	(void)state;
	expect_format("1", "message", "{\"a\":1}", 7,
	    "id: 1\nevent: message\ndata: {\"a\":1}\n\n");
	expect_format(NULL, NULL, "x", 1, "data: x\n\n");
	expect_format(NULL, "message", "x", 1, "event: message\ndata: x\n\n");
	/* SEP-1699 priming event: an id and empty data */
	expect_format("s1-0", NULL, "", 0, "id: s1-0\ndata: \n\n");
	expect_format(NULL, NULL, NULL, 0, "data: \n\n");
	expect_format("", NULL, "x", 1, "id: \ndata: x\n\n");
	expect_format(NULL, NULL, "a\nb", 3, "data: a\ndata: b\n\n");
	expect_format(NULL, NULL, "a\r\nb", 4, "data: a\ndata: b\n\n");
	expect_format(NULL, NULL, "a\rb", 3, "data: a\ndata: b\n\n");
	expect_format(NULL, NULL, "a\n\rb", 4, "data: a\ndata: \ndata: b\n\n");
	expect_format(NULL, NULL, "a\n", 2, "data: a\ndata: \n\n");
	expect_format(NULL, NULL, "\n", 1, "data: \ndata: \n\n");
	expect_format(NULL, NULL, "\r\n\r\n", 4,
	    "data: \ndata: \ndata: \n\n");
	expect_format(NULL, NULL, "a\r", 2, "data: a\ndata: \n\n");
	/* datalen counts, not the NUL */
	expect_format(NULL, NULL, "abcdef", 3, "data: abc\n\n");

	/* an id or event with a line end would break the framing */
	assert_null(sse_format_event("a\nb", NULL, "x", 1, &len));
	assert_null(sse_format_event("a\rb", NULL, "x", 1, &len));
	assert_null(sse_format_event(NULL, "m\n", "x", 1, &len));
	assert_null(sse_format_event(NULL, NULL, NULL, 1, &len));
}

/* what the formatter writes, the parser reads back */
static void
test_format_roundtrip(void **state)
{
	static const struct {
		const char	*data;
		size_t		 len;
	} t[] = {
		{ "", 0 },
		{ "x", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", 30 },
		{ "\n", 1 },
		{ "\n\n", 2 },
		{ "a\nb\nc", 5 },
		{ " leading space", 14 },
		{ "  two", 5 },
		{ ":colon", 6 },
		{ "data: nested", 12 },
		{ "trailing\n", 9 },
		{ "a\0b", 3 },
		{ "\xef\xbb\xbf" "bom", 6 },
	};
	static const char *ids[] = { NULL, "", "42", "a b:c" };
	static const char *events[] = { NULL, "", "message", "x y" };
	struct rec	 r, want;
	char		*s;
	size_t		 i, k, len, one = 1;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		for (k = 0; k < 4; k++) {
			s = sse_format_event(ids[k], events[k], t[i].data,
			    t[i].len, &len);
			assert_non_null(s);
			memset(&want, 0, sizeof(want));
			rec_add(&want, "E", 1);
			if (events[k] != NULL)
				rec_add(&want, events[k], strlen(events[k]));
			rec_addf(&want, "|D%zu:", t[i].len);
			rec_add(&want, t[i].data, t[i].len);
			rec_add(&want, "|I", 2);
			rec_add(&want, ids[k] != NULL ? ids[k] : "~",
			    strlen(ids[k] != NULL ? ids[k] : "~"));
			rec_add(&want, "|R-1;", 5);

			assert_int_equal(parse_once(s, len, 0, &r), 0);
			if (r.r_len != want.r_len ||
			    memcmp(r.r_buf, want.r_buf, r.r_len) != 0)
				fail_msg("round trip %zu/%zu: %s", i, k,
				    rec_str(&r));
			rec_free(&r);
			assert_int_equal(parse_chunks(s, len, 0, &one, 1, &r),
			    0);
			assert_int_equal(r.r_len, want.r_len);
			assert_memory_equal(r.r_buf, want.r_buf, r.r_len);
			rec_free(&r);
			rec_free(&want);
			free(s);
		}
	}
}

/*
 * Line ends found by scanning for LF, then for a CR before it: a CR
 * well before a later LF, an LF before a later CR, long lines, and no
 * id at all (the last id stays "").
 */
static void
test_eol_scan(void **state)
{
	static const char	 in[] =
	    "data: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r"
	    "data: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n\n"
	    "data: c\n\r"
	    "event: message\ndata: {\"jsonrpc\":\"2.0\"}\r\n\r\n";
	static const char	 want[] =
	    "E|D115:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
	    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb|I~|R-1;"
	    "E|D1:c|I~|R-1;"
	    "Emessage|D17:{\"jsonrpc\":\"2.0\"}|I~|R-1;";
	struct sse_parser	*p;
	struct rec		 r;

	(void)state;
	assert_int_equal(parse_once(in, sizeof(in) - 1, 0, &r), 0);
	assert_string_equal(rec_str(&r), want);
	rec_free(&r);
	memset(&r, 0, sizeof(r));
	p = sse_parser_new(0, rec_cb, &r);
	assert_non_null(p);
	assert_int_equal(sse_parser_feed(p, in, sizeof(in) - 1), 0);
	assert_int_equal(r.r_count, 3);
	assert_string_equal(sse_parser_last_id(p), "");
	assert_int_equal(sse_parser_feed(p, "id: 5\ndata: x\n\n", 15), 0);
	assert_int_equal(sse_parser_feed(p, "data: y\n\n", 9), 0);
	assert_int_equal(r.r_count, 5);
	assert_string_equal(sse_parser_last_id(p), "5");
	sse_parser_free(p);
	rec_free(&r);
}

/* Last-Event-ID: the ids vmcpd issues, and nothing else */
static void
test_id_parse(void **state)
{
	static const char *bad[] = {
		"", "-1", "+1", " 1", "1 ", "01", "1a", "x",
		"0123456789abcdef-", "0123456789abcdef-01",
		"0123456789ABCDEF-1", "0123456789abcde-1", "0123456789abcdefg-1",
		"0123456789abcdef--1", "99999999999999999999999",
	};
	char			tag[17];
	unsigned long long	seq;
	size_t			i;

	(void)state;
	assert_int_equal(sse_id_parse("0", tag, 16, &seq), 0);
	assert_string_equal(tag, "");
	assert_true(seq == 0);
	assert_int_equal(sse_id_parse("42", tag, 16, &seq), 0);
	assert_true(seq == 42);
	assert_int_equal(sse_id_parse("0123456789abcdef-0", tag, 16, &seq), 0);
	assert_string_equal(tag, "0123456789abcdef");
	assert_true(seq == 0);
	assert_int_equal(sse_id_parse("ffffffffffffffff-17", tag, 16, &seq),
	    0);
	assert_true(seq == 17);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sse_id_parse(bad[i], tag, 16, &seq), -1);
		assert_string_equal(tag, "");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_ends),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_eol_scan),
		cmocka_unit_test(test_cr_lf_split),
		cmocka_unit_test(test_full_stream),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_callback_stop),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_roundtrip),
		cmocka_unit_test(test_id_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
