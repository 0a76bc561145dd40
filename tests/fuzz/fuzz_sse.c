/*
 * libFuzzer: the SSE parser fed in pieces must agree with one feed.
 *
 * Input: byte 0, low nibble n = how many chunk sizes follow, high
 * nibble c = the cap (0: none, else c * 8 bytes); then n bytes, each a
 * chunk size (b % 32 + 1, used in turn); then the stream.  Every event
 * of the one-shot parse is also formatted and parsed back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/sse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct transcript {
	char	*t_buf;
	size_t	 t_len;
	size_t	 t_cap;
	int	 t_roundtrip;
};

static void
t_add(struct transcript *t, const void *p, size_t n)
{
	char *b;

	if (t->t_len + n + 1 > t->t_cap) {
		t->t_cap = (t->t_len + n + 1) * 2;
		if ((b = realloc(t->t_buf, t->t_cap)) == NULL)
			abort();
		t->t_buf = b;
	}
	memcpy(t->t_buf + t->t_len, p, n);
	t->t_len += n;
}

static void
t_str(struct transcript *t, const char *s)
{
	size_t n = s != NULL ? strlen(s) : (size_t)-1;

	t_add(t, &n, sizeof(n));
	if (s != NULL)
		t_add(t, s, n);
}

struct one {
	const struct sse_event	*o_want;
	int			 o_count;
};

static int
one_cb(void *arg, const struct sse_event *ev)
{
	struct one		*o = arg;
	const struct sse_event	*w = o->o_want;

	o->o_count++;
	if (ev->se_data_len != w->se_data_len ||
	    memcmp(ev->se_data, w->se_data, w->se_data_len) != 0 ||
	    strcmp(ev->se_event, w->se_event) != 0 ||
	    (ev->se_id == NULL) != (w->se_id == NULL) ||
	    (ev->se_id != NULL && strcmp(ev->se_id, w->se_id) != 0))
		abort();
	return 0;
}

/* format the event and parse it back: the same event, once */
static void
roundtrip(const struct sse_event *ev)
{
	struct sse_parser	*p;
	struct one		 o;
	char			*s;
	size_t			 len;

	s = sse_format_event(ev->se_id, ev->se_event, ev->se_data,
	    ev->se_data_len, &len);
	if (s == NULL)
		abort();	/* parsed ids and events never hold a line end */
	o.o_want = ev;
	o.o_count = 0;
	if ((p = sse_parser_new(0, one_cb, &o)) == NULL)
		abort();
	if (sse_parser_feed(p, s, len) != 0 || o.o_count != 1)
		abort();
	sse_parser_free(p);
	free(s);
}

static int
rec_cb(void *arg, const struct sse_event *ev)
{
	struct transcript *t = arg;

	if (ev->se_data[ev->se_data_len] != '\0')
		abort();
	t_str(t, ev->se_event);
	t_add(t, &ev->se_data_len, sizeof(ev->se_data_len));
	t_add(t, ev->se_data, ev->se_data_len);
	t_str(t, ev->se_id);
	t_add(t, &ev->se_retry, sizeof(ev->se_retry));
	if (t->t_roundtrip)
		roundtrip(ev);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct transcript	 one, many;
	struct sse_parser	*p;
	const uint8_t		*sizes, *s;
	size_t			 nsizes, n, off, k, c, cap;
	char			*piece;
	int			 rc1, rc2 = 0;

	if (size < 1)
		return 0;
	nsizes = data[0] & 0x0f;
	cap = (size_t)(data[0] >> 4) * 8;
	if (size < 1 + nsizes)
		return 0;
	sizes = data + 1;
	s = data + 1 + nsizes;
	n = size - 1 - nsizes;

	memset(&one, 0, sizeof(one));
	memset(&many, 0, sizeof(many));
	one.t_roundtrip = 1;

	if ((p = sse_parser_new(cap, rec_cb, &one)) == NULL)
		abort();
	rc1 = sse_parser_feed(p, (const char *)s, n);
	t_str(&one, sse_parser_last_id(p));
	sse_parser_free(p);

	if ((p = sse_parser_new(cap, rec_cb, &many)) == NULL)
		abort();
	for (off = 0, k = 0; off < n; off += c, k++) {
		c = nsizes > 0 ? (size_t)sizes[k % nsizes] % 32 + 1 : 1;
		if (c > n - off)
			c = n - off;
		/* each piece in its own allocation, so ASan sees over-reads */
		if ((piece = malloc(c)) == NULL)
			abort();
		memcpy(piece, s + off, c);
		if (sse_parser_feed(p, piece, c) == -1)
			rc2 = -1;
		free(piece);
	}
	t_str(&many, sse_parser_last_id(p));
	sse_parser_free(p);

	if (rc1 != rc2 || one.t_len != many.t_len ||
	    (one.t_len > 0 && memcmp(one.t_buf, many.t_buf, one.t_len) != 0))
		abort();
	free(one.t_buf);
	free(many.t_buf);
	return 0;
}
