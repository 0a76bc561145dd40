/*
 * The bridge's legacy SSE upstream: a 2024-11-05 HTTP+SSE connection
 * to the server's URL, a GET stream whose first event names the
 * endpoint to POST messages to, every server message an event on that
 * stream.
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include <curl/curl.h>

#include "proto/sse.h"
#include "shared/log.h"
#include "shared/http_client.h"
#include "bridge_int.h"

static void	bridge_sse_lost(struct bridge *, int expected,
		    const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
static int	bridge_sse_post(struct bridge *, struct bsse *, struct bpost *);

/*
 * The HTTP+SSE server (2024-11-05).  Nothing here may end the
 * connection from inside bridge_sse_write(): a caller of
 * bridge_server_write() may hold a request that bridge_server_lost()
 * would free.  Everything else runs from libcurl's callbacks, where
 * http_call_cancel() is safe, or from timers.
 */

/* scheme, host and port of a parsed URL, compared case-insensitively */
static int
bridge_url_origin_eq(CURLU *a, CURLU *b)
{
	static const CURLUPart	 parts[] = {
	    CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };
	char			*x, *y;
	size_t			 i;
	int			 same = 1;

	for (i = 0; same && i < sizeof(parts) / sizeof(parts[0]); i++) {
		x = y = NULL;
		if (curl_url_get(a, parts[i], &x, CURLU_DEFAULT_PORT) !=
		    CURLUE_OK ||
		    curl_url_get(b, parts[i], &y, CURLU_DEFAULT_PORT) !=
		    CURLUE_OK || strcasecmp(x, y) != 0)
			same = 0;
		curl_free(x);
		curl_free(y);
	}
	return same;
}

/*
 * The endpoint event's URI resolved against the stream's URL, or NULL
 * with why filled in.  Same origin only, as the SDK's client: a server
 * must not send our POSTs (and any credentials) elsewhere.
 */
static char *
bridge_sse_resolve(const char *base, const char *ref, size_t len, char *why,
    size_t whylen)
{
	CURLU	*bu = NULL, *u = NULL;
	char	*refz = NULL, *url = NULL, *out = NULL;

	if (len == 0 || len > BRIDGE_ENDPOINT_MAX ||
	    memchr(ref, '\0', len) != NULL) {
		(void)snprintf(why, whylen, "empty or too long");
		return NULL;
	}
	if ((refz = strndup(ref, len)) == NULL ||
	    (bu = curl_url()) == NULL ||
	    curl_url_set(bu, CURLUPART_URL, base, 0) != CURLUE_OK ||
	    (u = curl_url_dup(bu)) == NULL) {
		(void)snprintf(why, whylen, "out of memory");
		goto done;
	}
	/* a relative reference is resolved against what u holds */
	if (curl_url_set(u, CURLUPART_URL, refz, 0) != CURLUE_OK) {
		(void)snprintf(why, whylen, "not a URI");
		goto done;
	}
	if (!bridge_url_origin_eq(bu, u)) {
		(void)snprintf(why, whylen, "another origin");
		goto done;
	}
	if (curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK ||
	    (out = strdup(url)) == NULL)
		(void)snprintf(why, whylen, "out of memory");
done:
	curl_free(url);
	curl_url_cleanup(u);
	curl_url_cleanup(bu);
	free(refz);
	return out;
}

static void
bridge_post_free(struct bsse *ss, struct bpost *p)
{
	TAILQ_REMOVE(&ss->ss_posts, p, p_entry);
	if (p->p_call != NULL) {
		http_call_cancel(p->p_call);
		ss->ss_nsent--;
	} else
		ss->ss_queued -= p->p_len;
	free(p->p_body);
	free(p);
}

/* end the connection: no callback of its calls runs after this */
static void
bridge_sse_close(struct bsse *ss)
{
	while (!TAILQ_EMPTY(&ss->ss_posts))
		bridge_post_free(ss, TAILQ_FIRST(&ss->ss_posts));
	http_call_cancel(ss->ss_get);
	ss->ss_get = NULL;
	if (ss->ss_feeding) {
		ss->ss_dead = 1;	/* the parser is on the stack */
		return;
	}
	sse_parser_free(ss->ss_parser);
	free(ss->ss_endpoint);
	free(ss);
}

/* the connection is over: say why, fail what it had, reconnect */
static void
bridge_sse_lost(struct bridge *b, int expected, const char *fmt, ...)
{
	struct bsse	*ss = b->b_conn.bc_sse;
	va_list		 ap;

	va_start(ap, fmt);
	(void)vsnprintf(b->b_exit_msg, sizeof(b->b_exit_msg), fmt, ap);
	va_end(ap);
	if (expected)
		log_info("%s: %s", b->b_name, b->b_exit_msg);
	else
		log_warnx("%s: %s", b->b_name, b->b_exit_msg);
	b->b_conn.bc_sse = NULL;
	if (ss != NULL)
		bridge_sse_close(ss);
	bridge_server_lost(b);
}

static void
bridge_sse_stop(struct bridge *b, const char *why)
{
	if (b->b_conn.bc_sse == NULL)
		return;
	bridge_sse_lost(b, 1, "backend connection to %s closed: %s",
	    b->b_conn.bc_url, why);
}

static int
bridge_post_on_data(void *arg, struct http_call *call, const char *buf,
    size_t len)
{
	struct bpost	*p = arg;
	size_t		 n;

	(void)call;
	/* the body says nothing, but a refusal's start is worth a log */
	n = sizeof(p->p_resp) - p->p_resplen;
	if (n > len)
		n = len;
	memcpy(p->p_resp + p->p_resplen, buf, n);
	p->p_resplen += n;
	return 0;
}

/* start queued POSTs while there is room */
static void
bridge_sse_pump(struct bridge *b, struct bsse *ss)
{
	struct bpost *p;

	TAILQ_FOREACH(p, &ss->ss_posts, p_entry) {
		if (ss->ss_nsent >= BRIDGE_POSTS_MAX)
			return;
		if (p->p_call != NULL)
			continue;
		if (bridge_sse_post(b, ss, p) == -1) {
			bridge_sse_lost(b, 0, "cannot POST to the endpoint of "
			    "%s: out of resources", b->b_conn.bc_url);
			return;
		}
		ss->ss_queued -= p->p_len;
	}
}

static void
bridge_post_on_done(void *arg, struct http_call *call, int result,
    const char *errmsg)
{
	struct bpost	*p = arg;
	struct bsse	*ss = p->p_ss;
	struct bridge	*b = ss->ss_b;
	long		 status = http_call_status(call);

	/* the call is freed once this returns */
	TAILQ_REMOVE(&ss->ss_posts, p, p_entry);
	ss->ss_nsent--;
	if (result == -1) {
		free(p);
		bridge_sse_lost(b, 0, "backend connection lost: POST to the "
		    "endpoint of %s: %s", b->b_conn.bc_url,
		    errmsg != NULL ? errmsg : "failed");
		return;
	}
	if (status < 200 || status > 299) {
		if (p->p_resplen > 0)
			bridge_log_text(b, "the server refused a message",
			    p->p_resp, p->p_resplen);
		free(p);
		bridge_sse_lost(b, 0, "backend refused a message: POST to the "
		    "endpoint of %s: HTTP %ld", b->b_conn.bc_url, status);
		return;
	}
	free(p);
	bridge_sse_pump(b, ss);
}

/* hand one queued message to libcurl; p->p_call stays NULL on failure */
static int
bridge_sse_post(struct bridge *b, struct bsse *ss, struct bpost *p)
{
	static const struct http_call_cbs	 cbs = {
		NULL, bridge_post_on_data, bridge_post_on_done
	};
	struct http_call			*call;

	if ((call = http_call_new(b->b_conn.bc_client, "POST",
	    ss->ss_endpoint)) == NULL)
		return -1;
	if (http_call_add_header(call, "Content-Type",
	    "application/json") == -1 ||
	    (b->b_conn.bc_version[0] != '\0' && http_call_add_header(call,
	    "MCP-Protocol-Version", b->b_conn.bc_version) == -1) ||
	    http_call_set_body(call, p->p_body, p->p_len) == -1) {
		http_call_cancel(call);
		return -1;
	}
	/* answered at once (202) by any server that is alive */
	http_call_set_timeout(call, b->b_timeout_ms);
	if (http_call_start(call, &cbs, p) == -1)
		return -1;
	p->p_call = call;
	free(p->p_body);
	p->p_body = NULL;
	ss->ss_nsent++;
	return 0;
}

/*
 * Messages are POSTed concurrently, a few at a time, as the SDK's
 * client does; the rest wait in order.
 */
static int
bridge_sse_write(struct bridge *b, const char *s, size_t len)
{
	struct bsse	*ss = b->b_conn.bc_sse;
	struct bpost	*p;

	if (ss == NULL || ss->ss_endpoint == NULL || ss->ss_dead)
		return -1;
	if (ss->ss_queued + len > BRIDGE_POST_QUEUE_MAX) {
		log_warnx("%s: the server is not taking messages", b->b_name);
		return -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	if ((p->p_body = malloc(len > 0 ? len : 1)) == NULL) {
		free(p);
		return -1;
	}
	memcpy(p->p_body, s, len);
	p->p_len = len;
	p->p_ss = ss;
	TAILQ_INSERT_TAIL(&ss->ss_posts, p, p_entry);
	ss->ss_queued += len;
	if (ss->ss_nsent < BRIDGE_POSTS_MAX) {
		if (bridge_sse_post(b, ss, p) == -1) {
			bridge_post_free(ss, p);
			return -1;
		}
		ss->ss_queued -= len;
	}
	return 0;
}

static void
bridge_sse_endpoint(struct bridge *b, struct bsse *ss, const char *data,
    size_t len)
{
	char why[64];

	if (ss->ss_endpoint != NULL) {
		log_debug("%s: ignored another endpoint event", b->b_name);
		return;
	}
	if ((ss->ss_endpoint = bridge_sse_resolve(b->b_spec->bs_url, data,
	    len, why, sizeof(why))) == NULL) {
		bridge_log_text(b, "a bad endpoint event", data, len);
		bridge_sse_lost(b, 0, "backend sent a bad endpoint on %s: %s",
		    b->b_conn.bc_url, why);
		return;
	}
	log_debug("%s: the endpoint is known; initializing", b->b_name);
	if (bridge_server_hello(b) == -1)
		bridge_sse_lost(b, 0, "cannot send initialize to %s",
		    b->b_conn.bc_url);
}

static int
bridge_sse_on_event(void *arg, const struct sse_event *ev)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;

	if (ss->ss_dead)
		return 1;
	if (strcmp(ev->se_event, "endpoint") == 0)
		bridge_sse_endpoint(b, ss, ev->se_data, ev->se_data_len);
	else if (ev->se_event[0] == '\0' ||
	    strcmp(ev->se_event, "message") == 0)
		bridge_server_line(b, ev->se_data, ev->se_data_len);
	else
		log_debug("%s: ignored an SSE event of another type",
		    b->b_name);
	return ss->ss_dead ? 1 : 0;
}

static int
bridge_sse_on_head(void *arg, struct http_call *call, long status)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;
	const char	*ct;
	size_t		 n = sizeof("text/event-stream") - 1;

	if (status < 200 || status > 299) {
		bridge_sse_lost(b, 0, "backend refused the SSE stream: GET %s: "
		    "HTTP %ld%s", b->b_conn.bc_url, status, status >= 300 &&
		    status < 400 ? " (redirects are not followed)" : "");
		return 1;
	}
	ct = http_call_header(call, "Content-Type");
	if (ct == NULL || strncasecmp(ct, "text/event-stream", n) != 0 ||
	    (ct[n] != '\0' && ct[n] != ';' && ct[n] != ' ')) {
		bridge_sse_lost(b, 0, "backend answered GET %s with no SSE "
		    "stream (Content-Type is not text/event-stream)",
		    b->b_conn.bc_url);
		return 1;
	}
	log_debug("%s: the SSE stream is open", b->b_name);
	return 0;
}

static int
bridge_sse_on_data(void *arg, struct http_call *call, const char *buf,
    size_t len)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;
	int		 rc;

	(void)call;
	ss->ss_feeding = 1;
	rc = sse_parser_feed(ss->ss_parser, buf, len);
	ss->ss_feeding = 0;
	if (ss->ss_dead) {
		/* closed by what an event caused: its calls are cancelled */
		bridge_sse_close(ss);
		return 1;
	}
	if (rc == -1) {
		bridge_sse_lost(b, 0, "backend sent an SSE event of more than "
		    "%d bytes on %s", BRIDGE_EVENT_MAX, b->b_conn.bc_url);
		return 1;
	}
	return 0;
}

static void
bridge_sse_on_done(void *arg, struct http_call *call, int result,
    const char *errmsg)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;

	ss->ss_get = NULL;	/* freed once this returns */
	if (result == 0)
		bridge_sse_lost(b, 0, "backend connection lost: the SSE stream "
		    "from %s ended", b->b_conn.bc_url);
	else if (http_call_status(call) == 0)
		bridge_sse_lost(b, 0, "backend unreachable: GET %s: %s",
		    b->b_conn.bc_url, errmsg != NULL ? errmsg : "failed");
	else
		bridge_sse_lost(b, 0, "backend connection lost: the SSE stream "
		    "from %s broke: %s", b->b_conn.bc_url,
		    errmsg != NULL ? errmsg : "failed");
}

static int
bridge_sse_connect(struct bridge *b)
{
	static const struct http_call_cbs	 cbs = {
		bridge_sse_on_head, bridge_sse_on_data, bridge_sse_on_done
	};
	struct bsse				*ss;
	struct http_call			*call = NULL;
	struct timeval				 tv;

	b->b_started_ms = bridge_now_ms();
	if ((ss = calloc(1, sizeof(*ss))) == NULL)
		goto fail;
	ss->ss_b = b;
	TAILQ_INIT(&ss->ss_posts);
	if ((ss->ss_parser = sse_parser_new(BRIDGE_EVENT_MAX,
	    bridge_sse_on_event, ss)) == NULL ||
	    (call = http_call_new(b->b_conn.bc_client, "GET",
	    b->b_spec->bs_url)) == NULL ||
	    http_call_add_header(call, "Accept", "text/event-stream") == -1 ||
	    http_call_add_header(call, "Cache-Control", "no-cache") == -1)
		goto fail;
	/* a stream has no end in sight; b_init_ev bounds its start */
	http_call_set_timeout(call, 0);
	if (http_call_start(call, &cbs, ss) == -1) {
		call = NULL;
		goto fail;
	}
	ss->ss_get = call;
	b->b_conn.bc_sse = ss;
	b->b_state = SRV_STARTING;
	b->b_exit_msg[0] = '\0';
	b->b_conn.bc_version[0] = '\0';
	log_info("%s: connecting to %s", b->b_name, b->b_conn.bc_url);
	bridge_tv(&tv, b->b_timeout_ms);
	(void)evtimer_add(b->b_init_ev, &tv);
	return 0;

fail:
	log_warnx("%s: cannot connect to %s: out of resources", b->b_name,
	    b->b_conn.bc_url);
	http_call_cancel(call);
	if (ss != NULL) {
		sse_parser_free(ss->ss_parser);
		free(ss);
	}
	return -1;
}

static void
bridge_sse_init(struct bridge *b)
{
	const char *u = b->b_spec->bs_url;

	if (strncasecmp(u, "http://", 7) != 0 &&
	    strncasecmp(u, "https://", 8) != 0)
		fatalx("%s: not an http(s) URL", b->b_name);
	/* for messages: no credentials */
	if ((b->b_conn.bc_url = http_url_redact(u)) == NULL)
		fatalx("%s: out of memory", b->b_name);
	if ((b->b_conn.bc_client = http_client_new(b->b_base)) == NULL)
		fatalx("%s: cannot create an HTTP client", b->b_name);
}

static void
bridge_sse_cleanup(struct bridge *b)
{
	if (b->b_conn.bc_sse != NULL) {
		bridge_sse_close(b->b_conn.bc_sse);
		b->b_conn.bc_sse = NULL;
		b->b_state = SRV_DOWN;	/* nothing more to write to */
	}
	http_client_free(b->b_conn.bc_client);
	free(b->b_conn.bc_url);
}

const struct bridge_upstream bridge_sse_upstream = {
	"not JSON-RPC in an SSE event", bridge_sse_init,
	bridge_sse_connect, bridge_sse_write, bridge_sse_stop,
	bridge_sse_cleanup
};
