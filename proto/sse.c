/*
 * text/event-stream: an incremental parser following the WHATWG
 * "event stream interpretation" rules, and the matching formatter.
 *
 * The parser works on bytes, not decoded text: invalid UTF-8 passes
 * through to the data and is the JSON layer's to refuse.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/sse.h"

struct sse_buf {
	char	*b_data;	/* NUL-terminated once allocated */
	size_t	 b_len;
	size_t	 b_cap;
};

struct sse_parser {
	sse_event_cb	 sp_cb;
	void		*sp_arg;
	size_t		 sp_max;	/* cap on sp_data + sp_line */
	struct sse_buf	 sp_line;	/* a line not yet terminated */
	struct sse_buf	 sp_data;	/* data buffer, each line + "\n" */
	struct sse_buf	 sp_event;	/* event type buffer */
	struct sse_buf	 sp_idbuf;	/* last event ID buffer */
	struct sse_buf	 sp_lastid;	/* committed at each blank line */
	long		 sp_retry;	/* reported with the next event */
	int		 sp_idset;	/* this event had a valid id field */
	int		 sp_cr;		/* a CR ended the last feed */
	int		 sp_bom;	/* BOM bytes matched; -1 once past */
	int		 sp_failed;
};

static const unsigned char sse_bom[3] = { 0xef, 0xbb, 0xbf };

static int	 sse_buf_append(struct sse_buf *, const char *, size_t);
static void	 sse_buf_free(struct sse_buf *);
static const char *sse_buf_str(const struct sse_buf *);
static int	 sse_over_cap(const struct sse_parser *, size_t);
static int	 sse_dispatch(struct sse_parser *);
static int	 sse_line(struct sse_parser *, const char *, size_t);
static int	 sse_bytes(struct sse_parser *, const char *, size_t);
static size_t	 sse_eol_len(const char *, size_t, size_t);
static size_t	 sse_eol_find(const char *, size_t, size_t);

static int
sse_buf_append(struct sse_buf *b, const char *s, size_t n)
{
	size_t	 cap;
	char	*d;

	if (n > SIZE_MAX - b->b_len - 1)
		return -1;
	if (b->b_len + n + 1 > b->b_cap) {
		cap = b->b_cap != 0 ? b->b_cap : 64;
		while (cap < b->b_len + n + 1)
			cap = cap > SIZE_MAX / 2 ? b->b_len + n + 1 : cap * 2;
		if ((d = realloc(b->b_data, cap)) == NULL)
			return -1;
		b->b_data = d;
		b->b_cap = cap;
	}
	if (n > 0)
		memcpy(b->b_data + b->b_len, s, n);
	b->b_len += n;
	b->b_data[b->b_len] = '\0';
	return 0;
}

static void
sse_buf_free(struct sse_buf *b)
{
	free(b->b_data);
	memset(b, 0, sizeof(*b));
}

static const char *
sse_buf_str(const struct sse_buf *b)
{
	return b->b_data != NULL ? b->b_data : "";
}

/* the cap counts the data so far plus the line being read */
static int
sse_over_cap(const struct sse_parser *p, size_t line)
{
	return p->sp_max != 0 && (p->sp_data.b_len > p->sp_max ||
	    line > p->sp_max - p->sp_data.b_len);
}

struct sse_parser *
sse_parser_new(size_t max_event, sse_event_cb cb, void *arg)
{
	struct sse_parser *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->sp_cb = cb;
	p->sp_arg = arg;
	p->sp_max = max_event;
	p->sp_retry = -1;
	return p;
}

void
sse_parser_free(struct sse_parser *p)
{
	if (p == NULL)
		return;
	sse_buf_free(&p->sp_line);
	sse_buf_free(&p->sp_data);
	sse_buf_free(&p->sp_event);
	sse_buf_free(&p->sp_idbuf);
	sse_buf_free(&p->sp_lastid);
	free(p);
}

const char *
sse_parser_last_id(const struct sse_parser *p)
{
	return sse_buf_str(&p->sp_lastid);
}

size_t
sse_parser_held(const struct sse_parser *p)
{
	return p->sp_line.b_cap + p->sp_data.b_cap + p->sp_event.b_cap +
	    p->sp_idbuf.b_cap + p->sp_lastid.b_cap;
}

/*
 * A blank line.  The id is committed even when nothing is dispatched,
 * but only here: a connection lost in the middle of an event must not
 * resume after that event's id.
 */
static int
sse_dispatch(struct sse_parser *p)
{
	struct sse_event	ev;
	int			rc;

	/* no id so far (the SDK's default stream): nothing to allocate */
	if (p->sp_idbuf.b_len > 0 || p->sp_lastid.b_len > 0) {
		p->sp_lastid.b_len = 0;
		if (sse_buf_append(&p->sp_lastid, p->sp_idbuf.b_data,
		    p->sp_idbuf.b_len) == -1)
			return -1;
	}
	if (p->sp_data.b_len == 0) {
		/* WHATWG: no data, no event; a retry waits for the next */
		p->sp_event.b_len = 0;
		p->sp_idset = 0;
		return 0;
	}
	p->sp_data.b_data[--p->sp_data.b_len] = '\0';	/* the last "\n" */
	if (p->sp_event.b_data != NULL)
		p->sp_event.b_data[p->sp_event.b_len] = '\0';
	ev.se_event = sse_buf_str(&p->sp_event);
	ev.se_data = p->sp_data.b_data;
	ev.se_data_len = p->sp_data.b_len;
	ev.se_id = p->sp_idset ? sse_buf_str(&p->sp_lastid) : NULL;
	ev.se_retry = p->sp_retry;
	rc = p->sp_cb != NULL ? p->sp_cb(p->sp_arg, &ev) : 0;
	p->sp_data.b_len = 0;
	p->sp_event.b_len = 0;
	p->sp_idset = 0;
	p->sp_retry = -1;
	return rc != 0 ? -1 : 0;
}

static int
sse_line(struct sse_parser *p, const char *line, size_t n)
{
	const char	*colon, *val;
	size_t		 nlen, vlen, i;
	long		 retry;

	if (n == 0)
		return sse_dispatch(p);
	if (line[0] == ':')
		return 0;	/* comment */
	if ((colon = memchr(line, ':', n)) != NULL) {
		nlen = (size_t)(colon - line);
		val = colon + 1;
		vlen = n - nlen - 1;
		if (vlen > 0 && val[0] == ' ') {
			val++;
			vlen--;
		}
	} else {
		nlen = n;
		val = "";
		vlen = 0;
	}

	if (nlen == 5 && memcmp(line, "event", 5) == 0) {
		p->sp_event.b_len = 0;
		return sse_buf_append(&p->sp_event, val, vlen);
	}
	if (nlen == 4 && memcmp(line, "data", 4) == 0) {
		if (sse_buf_append(&p->sp_data, val, vlen) == -1 ||
		    sse_buf_append(&p->sp_data, "\n", 1) == -1)
			return -1;
		return sse_over_cap(p, 0) ? -1 : 0;
	}
	if (nlen == 2 && memcmp(line, "id", 2) == 0) {
		if (memchr(val, '\0', vlen) != NULL)
			return 0;
		p->sp_idbuf.b_len = 0;
		p->sp_idset = 1;
		return sse_buf_append(&p->sp_idbuf, val, vlen);
	}
	if (nlen == 5 && memcmp(line, "retry", 5) == 0) {
		if (vlen == 0)
			return 0;
		retry = 0;
		for (i = 0; i < vlen; i++) {
			if (val[i] < '0' || val[i] > '9')
				return 0;
			if (retry > (LONG_MAX - (val[i] - '0')) / 10)
				return 0;	/* absurd: ignored */
			retry = retry * 10 + (val[i] - '0');
		}
		p->sp_retry = retry;
		return 0;
	}
	return 0;	/* unknown field: ignored */
}

/* length of the line end at buf[i] (a CR or LF), 0 if it needs more */
static size_t
sse_eol_len(const char *buf, size_t len, size_t i)
{
	if (buf[i] == '\n')
		return 1;
	if (i + 1 < len)
		return buf[i + 1] == '\n' ? 2 : 1;
	return 0;
}

/* the first CR or LF at or after buf[i], or len: memchr scans a data
 * line many bytes at a time, a byte loop one */
static size_t
sse_eol_find(const char *buf, size_t len, size_t i)
{
	const char	*lf, *cr;
	size_t		 end;

	lf = memchr(buf + i, '\n', len - i);
	end = lf != NULL ? (size_t)(lf - buf) : len;
	if ((cr = memchr(buf + i, '\r', end - i)) != NULL)
		return (size_t)(cr - buf);
	return end;
}

static int
sse_bytes(struct sse_parser *p, const char *buf, size_t len)
{
	const char	*line;
	size_t		 i = 0, j, n, eol;

	if (len > 0 && p->sp_cr) {
		/* the CR that ended the last feed and this LF are one end */
		if (buf[0] == '\n')
			i = 1;
		p->sp_cr = 0;
	}
	while (i < len) {
		j = sse_eol_find(buf, len, i);
		if (j == len) {
			if (sse_over_cap(p, p->sp_line.b_len + (j - i)) ||
			    sse_buf_append(&p->sp_line, buf + i, j - i) == -1)
				return -1;
			return 0;
		}
		if (p->sp_line.b_len > 0) {
			if (sse_over_cap(p, p->sp_line.b_len + (j - i)) ||
			    sse_buf_append(&p->sp_line, buf + i, j - i) == -1)
				return -1;
			line = p->sp_line.b_data;
			n = p->sp_line.b_len;
		} else {
			if (sse_over_cap(p, j - i))
				return -1;
			line = buf + i;
			n = j - i;
		}
		/* reset first: sse_line() may grow sp_data, not sp_line */
		p->sp_line.b_len = 0;
		if (sse_line(p, line, n) == -1)
			return -1;
		if ((eol = sse_eol_len(buf, len, j)) == 0) {
			p->sp_cr = 1;	/* a CR last: an LF may follow */
			eol = 1;
		}
		i = j + eol;
	}
	return 0;
}

int
sse_parser_feed(struct sse_parser *p, const char *buf, size_t len)
{
	size_t held;

	if (p->sp_failed)
		return -1;
	if (len == 0)
		return 0;
	/* one U+FEFF at the very start is dropped, even split over feeds */
	if (p->sp_bom >= 0) {
		while (len > 0 && p->sp_bom < 3 &&
		    (unsigned char)buf[0] == sse_bom[p->sp_bom]) {
			p->sp_bom++;
			buf++;
			len--;
		}
		if (p->sp_bom == 3)
			p->sp_bom = -1;
		else if (len == 0)
			return 0;
		else {
			held = (size_t)p->sp_bom;
			p->sp_bom = -1;
			/* a partial BOM was text after all */
			if (held > 0 && held < sizeof(sse_bom) &&
			    sse_bytes(p, (const char *)sse_bom, held) == -1)
				goto fail;
		}
	}
	if (sse_bytes(p, buf, len) == -1)
		goto fail;
	return 0;

fail:
	p->sp_failed = 1;
	return -1;
}

/*
 * Data is split at CRLF, CR and LF, one data: line each, so the parser
 * joins it back with "\n".  An id or event with a line end in it would
 * break the framing, so it is refused (EINVAL).
 */
char *
sse_format_event(const char *id, const char *event, const char *data,
    size_t datalen, size_t *len)
{
	static const char	 pfx[] = "data: ";
	size_t			 idlen = 0, evlen = 0, nlines = 1, i, total;
	char			*out, *o;

	if ((id != NULL && strpbrk(id, "\r\n") != NULL) ||
	    (event != NULL && strpbrk(event, "\r\n") != NULL) ||
	    (data == NULL && datalen > 0) || datalen > SIZE_MAX / 16) {
		errno = EINVAL;
		return NULL;
	}
	if (data == NULL)
		data = "";
	for (i = 0; i < datalen; i++) {
		if (data[i] == '\r' && i + 1 < datalen && data[i + 1] == '\n')
			i++;
		if (data[i] == '\r' || data[i] == '\n')
			nlines++;
	}
	if (id != NULL)
		idlen = strlen(id);
	if (event != NULL)
		evlen = strlen(event);
	/* "id: " id "\n" "event: " event "\n" nlines x ("data: " "\n") */
	total = datalen + nlines * (sizeof(pfx) - 1 + 1) + 2;
	if (id != NULL)
		total += idlen + 5;
	if (event != NULL)
		total += evlen + 8;
	if ((out = malloc(total)) == NULL)
		return NULL;
	o = out;
	if (id != NULL) {
		memcpy(o, "id: ", 4);
		memcpy(o + 4, id, idlen);
		o[4 + idlen] = '\n';
		o += idlen + 5;
	}
	if (event != NULL) {
		memcpy(o, "event: ", 7);
		memcpy(o + 7, event, evlen);
		o[7 + evlen] = '\n';
		o += evlen + 8;
	}
	memcpy(o, pfx, sizeof(pfx) - 1);
	o += sizeof(pfx) - 1;
	for (i = 0; i < datalen; i++) {
		if (data[i] != '\r' && data[i] != '\n') {
			*o++ = data[i];
			continue;
		}
		if (data[i] == '\r' && i + 1 < datalen && data[i + 1] == '\n')
			i++;
		*o++ = '\n';
		memcpy(o, pfx, sizeof(pfx) - 1);
		o += sizeof(pfx) - 1;
	}
	*o++ = '\n';
	*o++ = '\n';
	*o = '\0';
	if (len != NULL)
		*len = (size_t)(o - out);
	return out;
}

int
sse_id_parse(const char *s, char *tag, size_t taglen, unsigned long long *seq)
{
	const char	*p = s;
	char		*end;
	size_t		 i, n = 0;

	tag[0] = '\0';
	if (taglen > 0 && strlen(s) > taglen && s[taglen] == '-') {
		for (i = 0; i < taglen; i++)
			if (!((s[i] >= '0' && s[i] <= '9') ||
			    (s[i] >= 'a' && s[i] <= 'f')))
				return -1;
		n = taglen;
		p = s + taglen + 1;
	}
	if (*p < '0' || *p > '9' || (*p == '0' && p[1] != '\0'))
		return -1;
	errno = 0;
	*seq = strtoull(p, &end, 10);
	if (*end != '\0' || errno != 0)
		return -1;
	memcpy(tag, s, n);
	tag[n] = '\0';
	return 0;
}
