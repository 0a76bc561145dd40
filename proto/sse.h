/*
 * Server-sent events (sse.c): parsed as they come, formatted.
 */
#ifndef VMCPD_SSE_H
#define VMCPD_SSE_H

#include <stddef.h>

/*
 * An incremental text/event-stream parser (WHATWG rules): CR, LF and
 * CRLF line ends (also split across feeds), a leading BOM, comments,
 * one space after the colon dropped, data lines joined with "\n", an
 * event dispatched at a blank line, ids containing NUL ignored, retry
 * digits only, and a cap on the bytes of one event.
 */
struct sse_event {
	const char	*se_event;	/* "" if none (means "message") */
	const char	*se_data;	/* joined data, NUL-terminated */
	size_t		 se_data_len;
	const char	*se_id;		/* NULL if the event set none */
	long		 se_retry;	/* -1 if none */
};
/* return 0 to go on, non-zero to make sse_parser_feed() fail */
typedef int (*sse_event_cb)(void *arg, const struct sse_event *);

struct sse_parser;
struct sse_parser *sse_parser_new(size_t max_event, sse_event_cb, void *arg);
/* 0, or -1 when an event exceeds the cap or the callback stopped it */
int	 sse_parser_feed(struct sse_parser *, const char *buf, size_t len);
/* the last event id seen, committed at each blank line (WHATWG "last
 * event ID string": what a reconnection sends as Last-Event-ID), or "" */
const char *sse_parser_last_id(const struct sse_parser *);
/* the bytes its buffers hold now (an event and a line being read) */
size_t	 sse_parser_held(const struct sse_parser *);
void	 sse_parser_free(struct sse_parser *);

/*
 * Format one SSE event: "id: ...\nevent: ...\ndata: ...\n\n" with each
 * line of data on its own data: line.  id and event may be NULL.
 * Returns a malloc'd string and its length in *len, or NULL.
 */
char	*sse_format_event(const char *id, const char *event, const char *data,
	    size_t datalen, size_t *len);

/*
 * An event id vmcpd issues, as a client sends it back in Last-Event-ID:
 * "<seq>" or "<tag>-<seq>", seq decimal without sign, space or leading
 * zero, tag taglen lower-case hex digits (tag: taglen + 1 bytes, "" for
 * none).  0, or -1 for anything else.
 */
int	 sse_id_parse(const char *s, char *tag, size_t taglen,
	    unsigned long long *seq);

#endif /* VMCPD_SSE_H */
