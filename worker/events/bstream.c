/*
 * A backend's notification stream held open, and opened again with
 * backoff when it ends (bstream.h): what notify.c's listeners and
 * listen_tasks.c's task listens share.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "proto/jsonrpc.h"
#include "proto/sse.h"
#include "worker/events/bstream.h"
#include "worker/process/process.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_stream.h"

#define BSTREAM_EVENT_MAX	(1024 * 1024)
#define BSTREAM_NONE_MS		60000	/* the backend offers none */

static const int bstream_backoff_ms[] = { 500, 1000, 2000, 5000, 10000,
    30000 };

static int	bstream_on_event(void *, const struct sse_event *);

static void
bstream_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct bstream *bs = arg;

	(void)fd;
	(void)ev;
	bs->bs_ops->bo_open(bs->bs_arg);
}

int
bstream_init(struct bstream *bs, struct worker *w,
    const struct config_backend *be, const char *what,
    const struct bstream_ops *ops, void *arg)
{
	memset(bs, 0, sizeof(*bs));
	bs->bs_w = w;
	bs->bs_be = be;
	bs->bs_what = what;
	bs->bs_ops = ops;
	bs->bs_arg = arg;
	if ((bs->bs_timer = evtimer_new(w->w_base, bstream_on_timer, bs)) ==
	    NULL)
		return -1;
	return 0;
}

void
bstream_retry(struct bstream *bs, int ms)
{
	struct timeval tv;

	if (bs->bs_timer == NULL)
		return;
	if (ms < 0) {
		ms = bstream_backoff_ms[bs->bs_fails < 5 ? bs->bs_fails : 5];
		bs->bs_fails++;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	(void)evtimer_add(bs->bs_timer, &tv);
}

static void
bstream_parser_free(struct bstream *bs)
{
	if (bs->bs_sse != NULL)
		sse_parser_free(bs->bs_sse);
	bs->bs_sse = NULL;
}

void
bstream_hangup(struct bstream *bs)
{
	upstream_cancel(bs->bs_up);
	bs->bs_up = NULL;
	bstream_parser_free(bs);
}

void
bstream_free(struct bstream *bs)
{
	bstream_hangup(bs);
	if (bs->bs_timer != NULL)
		event_free(bs->bs_timer);
	bs->bs_timer = NULL;
}

static int
bstream_on_head(void *arg, struct http_call *hc, long status)
{
	struct bstream	*bs = arg;
	const char	*ct = http_call_header(hc, "Content-Type");

	bs->bs_status = status;
	if (status != 200 || ct == NULL ||
	    strncasecmp(ct, "text/event-stream", 17) != 0)
		return -1;
	bs->bs_fails = 0;
	log_debug("%s of backend %s open", bs->bs_what, bs->bs_be->cb_name);
	if ((bs->bs_sse = sse_parser_new(BSTREAM_EVENT_MAX,
	    bstream_on_event, bs)) == NULL)
		return -1;
	if (bs->bs_ops->bo_up != NULL)
		bs->bs_ops->bo_up(bs->bs_arg);
	return 0;
}

/* a message event, parsed once for whichever stream this is */
static int
bstream_on_event(void *arg, const struct sse_event *ev)
{
	struct bstream		*bs = arg;
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 err;

	if (ev->se_data_len == 0 || (ev->se_event[0] != '\0' &&
	    strcmp(ev->se_event, "message") != 0))
		return 0;
	if (jsonrpc_parse(ev->se_data, ev->se_data_len, &m, &err) == -1) {
		log_warnx("backend %s sent an invalid message on its %s: %s",
		    bs->bs_be->cb_name, bs->bs_what, err.je_msg);
		return 0;
	}
	bs->bs_ops->bo_message(bs->bs_arg, &m);
	jsonrpc_msg_clear(&m);
	return 0;
}

static int
bstream_on_data(void *arg, struct http_call *hc, const char *buf, size_t len)
{
	struct bstream *bs = arg;

	(void)hc;
	return sse_parser_feed(bs->bs_sse, buf, len) == -1 ? -1 : 0;
}

/* the stream ended (or never started): what that means is the upstream
 * edge's (a session forgotten, an era probed again); again later */
static void
bstream_on_done(void *arg, struct http_call *hc, int result, const char *err)
{
	struct bstream	*bs = arg;
	struct upstream	*u = bs->bs_up;
	int		 again;

	(void)hc;
	bs->bs_up = NULL;
	bstream_parser_free(bs);
	again = bs->bs_ops->bo_down(bs->bs_arg);
	if (result == -1)
		log_debug("%s of backend %s: %s", bs->bs_what,
		    bs->bs_be->cb_name, err);
	if (upstream_stream_ended(u, bs->bs_status) == UPSTREAM_END_NO_STREAM)
		bstream_retry(bs, BSTREAM_NONE_MS);
	else if (again)
		bstream_retry(bs, -1);
	bs->bs_status = 0;
}

const struct http_call_cbs bstream_cbs = {
	bstream_on_head, bstream_on_data, bstream_on_done
};
