/*
 * libFuzzer: the front's request parser (proto/http_req.c).
 *
 * Input: byte 0 picks a split point s (b * (n + 1) / 256 of the n bytes
 * after it); the rest is a request.  A head taken must hold together:
 * offsets inside it, names, values and the path NUL-terminated there,
 * every name found again by lookup (the first line of that name), a
 * head cut at s is not taken early.  A chunked body after it is
 * decoded in one piece and again in two (cut at s): the same verdict,
 * the same bytes.  The word-at-a-time control character scan agrees
 * with a byte loop on the whole input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/headers.h"
#include "proto/http_req.h"

#define FUZZ_MAX_HEAD	512
#define FUZZ_MAX_BODY	4096

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char *
copy(const uint8_t *p, size_t n)
{
	char *b;

	/* exact size (at least 1) so ASan sees a read past the end */
	if ((b = malloc(n > 0 ? n : 1)) == NULL)
		abort();
	memcpy(b, p, n);
	return b;
}

/* off is inside the head and a NUL ends the string there */
static void
check_str(const char *buf, const struct http_head *h, size_t off)
{
	if (off >= h->hh_len || memchr(buf + off, '\0', h->hh_len - off) ==
	    NULL)
		abort();
}

static void
check_head(const char *buf, size_t len, const struct http_head *h)
{
	const char	*name, *v;
	size_t		 i, j;

	if (h->hh_len == 0 || h->hh_len > len || h->hh_len > FUZZ_MAX_HEAD ||
	    h->hh_nhdrs > HTTP_HDRS_MAX || h->hh_clen > FUZZ_MAX_BODY ||
	    (h->hh_chunked && h->hh_clen != 0) || h->hh_minor < 0 ||
	    h->hh_minor > 1)
		abort();
	check_str(buf, h, h->hh_path);
	if (buf[h->hh_path] != '/' && strcmp(buf + h->hh_path, "*") != 0)
		abort();
	/* HTTP/1.1 has an authority to check, NUL-terminated in the head */
	if (h->hh_host != 0)
		check_str(buf, h, h->hh_host);
	else if (h->hh_minor == 1)
		abort();
	for (i = 0; i < h->hh_nhdrs; i++) {
		check_str(buf, h, h->hh_hdrs[i].hf_name);
		check_str(buf, h, h->hh_hdrs[i].hf_value);
		name = buf + h->hh_hdrs[i].hf_name;
		if (strlen(name) != h->hh_hdrs[i].hf_namelen)
			abort();
		if (name[0] == '\0' || (v = http_head_header(buf, h,
		    name)) == NULL || v < buf || v >= buf + h->hh_len)
			abort();
		/* the first of that name, known to the parser or not */
		for (j = 0; j < i; j++)
			if (strcasecmp(buf + h->hh_hdrs[j].hf_name, name) == 0)
				break;
		if (v != buf + h->hh_hdrs[j].hf_value)
			abort();
	}
}

/* proto_value_ctl() word by word finds what a byte loop finds */
static void
check_ctl(const uint8_t *data, size_t len)
{
	const char	*v = (const char *)data, *want = NULL;
	size_t		 i;

	for (i = 0; i < len && want == NULL; i++)
		if ((data[i] < 0x20 && data[i] != '\t') || data[i] == 0x7f)
			want = v + i;
	if (proto_value_ctl(v, len) != want)
		abort();
}

/* body[0, len) decoded, cut at split (len for one piece) */
static int
decode(const uint8_t *data, size_t len, size_t split,
    struct http_chunked *c, struct http_head *h, char **out)
{
	char	*b = copy(data, len);
	int	 r;

	memset(c, 0, sizeof(*c));
	r = http_chunked_decode(c, b, split, FUZZ_MAX_BODY, h);
	if (c->hc_out > c->hc_in || c->hc_in > split)
		abort();
	if (r == 0 && split < len) {
		r = http_chunked_decode(c, b, len, FUZZ_MAX_BODY, h);
		if (c->hc_out > c->hc_in || c->hc_in > len)
			abort();
	}
	if (r == -1 && (h->hh_why == NULL || (h->hh_status != 400 &&
	    h->hh_status != 413)))
		abort();
	*out = b;
	return r;
}

static void
check_body(const uint8_t *data, size_t len, size_t split)
{
	struct http_chunked	 c1, c2;
	struct http_head	 h1, h2;
	char			*a, *b;
	int			 r1, r2;

	memset(&h1, 0, sizeof(h1));
	memset(&h2, 0, sizeof(h2));
	r1 = decode(data, len, len, &c1, &h1, &a);
	r2 = decode(data, len, split, &c2, &h2, &b);
	if (r1 != r2)
		abort();
	if (r1 == -1 && h1.hh_status != h2.hh_status)
		abort();
	if (r1 == 1 && (c1.hc_in != c2.hc_in || c1.hc_out != c2.hc_out ||
	    c1.hc_out > FUZZ_MAX_BODY || memcmp(a, b, c1.hc_out) != 0))
		abort();
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_head	 h, hs;
	char			*buf, *cut;
	size_t			 len, split;
	int			 r;

	if (size < 1)
		return 0;
	len = size - 1;
	split = (size_t)data[0] * (len + 1) / 256;
	data++;
	check_ctl(data, len);

	buf = copy(data, len);
	r = http_head_parse(buf, len, FUZZ_MAX_HEAD, FUZZ_MAX_BODY, &h);
	if (r == -1) {
		if (h.hh_why == NULL || (h.hh_status != 400 &&
		    h.hh_status != 413 && h.hh_status != 417 &&
		    h.hh_status != 431 && h.hh_status != 501 &&
		    h.hh_status != 505))
			abort();
	} else if (r == 1) {
		check_head(buf, len, &h);
		/* cut short, the same head is not all in yet */
		cut = copy(data, split);
		r = http_head_parse(cut, split, FUZZ_MAX_HEAD, FUZZ_MAX_BODY,
		    &hs);
		if (split < h.hh_len ? r != 0 : r != 1 || hs.hh_len != h.hh_len)
			abort();
		free(cut);
		if (h.hh_chunked)
			check_body(data + h.hh_len, len - h.hh_len,
			    split > h.hh_len ? split - h.hh_len : 0);
	} else if (r != 0 || len >= FUZZ_MAX_HEAD)
		abort();
	free(buf);
	return 0;
}
