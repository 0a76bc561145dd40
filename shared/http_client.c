/*
 * Outbound HTTP.  Plain http:// to an IP address and Unix-socket
 * targets go through the lean HTTP/1.1 client in http_h1.c; the rest
 * (https, host names) through libcurl's multi_socket interface, driven
 * by the worker's libevent loop: libcurl tells us which sockets to watch
 * (one persistent event each) and when to wake it (one timer), we
 * hand readiness back with curl_multi_socket_action().
 *
 * libcurl refuses curl_multi_add_handle/remove_handle while one of
 * its callbacks runs (CURLM_RECURSIVE_API_CALL), and our hc_head and
 * hc_data run inside its header and write callbacks.  So every call
 * started or cancelled while curl_multi_socket_action() is on the
 * stack is parked on a list and handled once it returns.  Completed
 * transfers are first moved to a done queue and only then reported,
 * so an hc_done that cancels or starts other calls is safe.
 *
 * http_client_free() must not be called from inside a callback.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "proto/proto.h"
#include "shared/log.h"
#include "shared/http_client.h"
#include "shared/http_h1.h"

#define HTTP_MAXCONNECTS	64
#define HTTP_CONNECT_TIMEOUT_MS	10000L
/* below Node's default keepAliveTimeout (5 s): avoid the idle-close race */
#define HTTP_MAXAGE_CONN_S	4L
#define HTTP_RESP_HDRS_MAX	100
#define HTTP_RESP_HEAD_MAX	(64 * 1024)

#define HTTP_POOL_MAX		32
#define HTTP_SPARE_MAX		32	/* finished calls kept for the next */
#define HTTP_SPARE_BUF		4096	/* buffers a spare call keeps */
#define HTTP_TARGETS_MAX	8

enum http_call_state {
	HC_NEW,		/* not started */
	HC_PENDING,	/* started inside socket_action; not yet added */
	HC_ACTIVE,	/* in the multi handle */
	HC_ZOMBIE,	/* cancelled inside socket_action; still added */
	HC_DONE,	/* transfer over, on the done queue */
	HC_FINISHING	/* being reported */
};

/* a response header: offsets of its name and value in c_hbuf */
struct http_hdr {
	size_t	h_name;
	size_t	h_value;
};

TAILQ_HEAD(http_call_list, http_call);

struct http_call {
	TAILQ_ENTRY(http_call)	 c_entry;
	struct http_client	*c_client;
	CURL			*c_easy;
	enum http_call_state	 c_state;
	char			*c_method;
	char			*c_url;
	char			*c_target;	/* host:port, for messages */
	char			*c_unix;	/* Unix socket path */
	char			*c_cafile;	/* CA bundle, or NULL */
	int			 c_public_only;	/* no private addresses */
	/* the request head as sent by http_h1.c: the request line and
	 * Host (when the URL suits it), then every added header */
	char			*c_req;
	size_t			 c_reqlen;
	size_t			 c_reqcap;
	size_t			 c_req_hdrs;	/* where added headers start */
	int			 c_h1_url;	/* URL parsed for http_h1.c */
	int			 c_h1;		/* going through http_h1.c */
	int			 c_in_cb;	/* in an http_h1.c callback */
	struct h1_exchange	 c_x;
	struct curl_slist	*c_reqhdrs;
	int			 c_has_ctype;
	int			 c_has_accept;
	char			*c_body;
	size_t			 c_bodylen;
	int			 c_has_body;
	uint64_t		 c_timeout_ms;
	struct http_call_cbs	 c_cbs;
	void			*c_arg;
	struct http_hdr		*c_hdrs;
	size_t			 c_nhdrs;
	size_t			 c_hdrcap;
	size_t			 c_hdrbytes;
	/* every name and value, NUL-terminated, in one buffer: two
	 * allocations a header cost more than the rest of keeping it */
	char			*c_hbuf;
	size_t			 c_hlen;
	size_t			 c_hcap;
	long			 c_status;
	int			 c_head_done;
	int			 c_cancelled;
	int			 c_aborted;	/* a callback said stop */
	CURLcode		 c_result;
	char			 c_errbuf[CURL_ERROR_SIZE];
	char			 c_errmsg[CURL_ERROR_SIZE + 256];
};

struct http_sock {
	LIST_ENTRY(http_sock)	 s_entry;
	struct http_client	*s_client;
	struct event		*s_ev;
	curl_socket_t		 s_fd;
	short			 s_kind;	/* what s_ev watches */
};

struct http_client {
	struct event_base	*hc_base;
	CURLM			*hc_multi;
	struct event		*hc_timer;
	struct http_call_list	 hc_active;
	struct http_call_list	 hc_pending;
	struct http_call_list	 hc_zombies;
	struct http_call_list	 hc_done;
	LIST_HEAD(, http_sock)	 hc_socks;
	struct h1_client	*hc_h1;
	size_t			 hc_inflight;
	int			 hc_in_action;
	int			 hc_closing;
	/* easy handles of finished calls, reset for the next ones: an
	 * easy handle is kilobytes to allocate and set up per call */
	CURL			*hc_pool[HTTP_POOL_MAX];
	int			 hc_npool;
	/* calls freed, kept with their head buffers: a call is over the
	 * size malloc keeps per thread, so each cost a trip to its bins */
	struct http_call	*hc_spare[HTTP_SPARE_MAX];
	int			 hc_nspare;
	/* "host:port" of recent URLs: parsing every call's URL again
	 * costs more than the rest of setting it up */
	struct {
		char		*ut_url;
		char		*ut_target;
	}			 hc_targets[HTTP_TARGETS_MAX];
	int			 hc_ntargets;
	/* http_url_split() of recent URLs (a backend's, on every call):
	 * the split points into hs_url, the cache's own copy */
	struct {
		char		*hs_url;
		struct http_url	 hs_u;
		int		 hs_rc;
	}			 hc_splits[HTTP_TARGETS_MAX];
	int			 hc_nsplits;
};

static int	http_curl_ready;

/* s is an RFC 9110 token: its length, or 0 */
static size_t
http_token_valid(const char *s)
{
	const char	*p;

	for (p = s; *p != '\0'; p++)
		if (!proto_is_tchar(*p))
			return 0;
	return (size_t)(p - s);
}

static void
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

static void
http_call_spare_free(struct http_call *call)
{
	free(call->c_hbuf);
	free(call->c_hdrs);
	free(call->c_req);
	free(call);
}

/* a zeroed call, a spare one's buffers kept */
static struct http_call *
http_call_alloc(struct http_client *c)
{
	struct http_call	*call;
	char			*req, *hbuf;
	struct http_hdr		*hdrs;
	size_t			 reqcap, hcap, hdrcap;

	if (c->hc_nspare == 0)
		return calloc(1, sizeof(*call));
	call = c->hc_spare[--c->hc_nspare];
	req = call->c_req;
	reqcap = call->c_reqcap;
	hbuf = call->c_hbuf;
	hcap = call->c_hcap;
	hdrs = call->c_hdrs;
	hdrcap = call->c_hdrcap;
	memset(call, 0, sizeof(*call));
	call->c_req = req;
	call->c_reqcap = reqcap;
	call->c_hbuf = hbuf;
	call->c_hcap = hcap;
	call->c_hdrs = hdrs;
	call->c_hdrcap = hdrcap;
	return call;
}

static void
http_call_free(struct http_call *call)
{
	struct http_client *c = call->c_client;

	if (call->c_easy != NULL) {
		if (c != NULL && !c->hc_closing && !c->hc_in_action &&
		    c->hc_npool < HTTP_POOL_MAX) {
			/* no-op unless still added */
			(void)curl_multi_remove_handle(c->hc_multi,
			    call->c_easy);
			curl_easy_reset(call->c_easy);
			c->hc_pool[c->hc_npool++] = call->c_easy;
		} else
			curl_easy_cleanup(call->c_easy);
	}
	curl_slist_free_all(call->c_reqhdrs);
	free(call->c_body);
	free(call->c_target);
	free(call->c_unix);
	free(call->c_cafile);
	free(call->c_url);
	free(call->c_method);
	if (c != NULL && !c->hc_closing && c->hc_nspare < HTTP_SPARE_MAX) {
		if (call->c_reqcap > HTTP_SPARE_BUF) {
			free(call->c_req);
			call->c_req = NULL;
			call->c_reqcap = 0;
		}
		if (call->c_hcap > HTTP_SPARE_BUF ||
		    call->c_hdrcap * sizeof(*call->c_hdrs) > HTTP_SPARE_BUF) {
			free(call->c_hbuf);
			free(call->c_hdrs);
			call->c_hbuf = NULL;
			call->c_hdrs = NULL;
			call->c_hcap = call->c_hdrcap = 0;
		}
		c->hc_spare[c->hc_nspare++] = call;
		return;
	}
	http_call_spare_free(call);
}

/* len more bytes of the request head, to be written there; or NULL */
static char *
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
static int
http_call_req_add(struct http_call *call, const char *s, size_t len)
{
	char	*p;

	if ((p = http_call_req_grow(call, len)) == NULL)
		return -1;
	memcpy(p, s, len);
	return 0;
}

static int
http_call_req_str(struct http_call *call, const char *s)
{
	return http_call_req_add(call, s, strlen(s));
}

static void
http_call_detach(struct http_call *call)
{
	struct http_client	*c = call->c_client;

	(void)curl_multi_remove_handle(c->hc_multi, call->c_easy);
}

/* Runs the user's hc_head once.  -1: stop the transfer. */
static int
http_call_head(struct http_call *call)
{
	int	r;

	if (call->c_head_done)
		return 0;
	call->c_head_done = 1;
	if (curl_easy_getinfo(call->c_easy, CURLINFO_RESPONSE_CODE,
	    &call->c_status) != CURLE_OK)
		call->c_status = 0;
	if (call->c_cbs.hc_head == NULL)
		return 0;
	r = call->c_cbs.hc_head(call->c_arg, call, call->c_status);
	if (call->c_cancelled)
		return -1;
	if (r != 0) {
		call->c_aborted = 1;
		return -1;
	}
	return 0;
}

static int
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
static const char *
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

static size_t
http_call_header_cb(char *buf, size_t size, size_t nitems, void *arg)
{
	struct http_call	*call = arg;
	size_t			 len = size * nitems, l = len;
	long			 code = 0;
	const char		*why;

	if (call->c_cancelled)
		return 0;
	if (call->c_head_done)
		return len;	/* trailers: not part of the head */
	if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
		/* a new response (after a 1xx): forget the previous head */
		http_call_clear_headers(call);
		return len;
	}
	while (l > 0 && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
		l--;
	if (l > 0) {
		if ((why = proto_field_line_problem(buf, l)) != NULL) {
			(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
			    "invalid response head from %s: %s",
			    call->c_target, why);
			return 0;
		}
		if (http_call_store_header(call, buf, l) == -1) {
			(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
			    "response head from %s too large",
			    call->c_target);
			return 0;
		}
		return len;
	}
	/* end of a head: interim (1xx) heads are skipped */
	(void)curl_easy_getinfo(call->c_easy, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 100 && code < 200)
		return len;
	if ((why = http_call_framing_problem(call)) != NULL) {
		(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
		    "invalid response head from %s: %s", call->c_target, why);
		return 0;
	}
	if (http_call_head(call) == -1)
		return 0;
	return len;
}

static size_t
http_call_write_cb(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct http_call	*call = arg;
	size_t			 len = size * nmemb;
	int			 r;

	if (call->c_cancelled)
		return 0;
	if (http_call_head(call) == -1)
		return 0;
	if (len == 0 || call->c_cbs.hc_data == NULL)
		return len;
	r = call->c_cbs.hc_data(call->c_arg, call, buf, len);
	if (call->c_cancelled)
		return 0;
	if (r != 0) {
		call->c_aborted = 1;
		return 0;
	}
	return len;
}

static const char *
http_call_errmsg(struct http_call *call)
{
	long		 oserr = 0;
	curl_off_t	 ct = 0;
	long		 reqsize = 0;
	uint64_t	 ms;

	if (call->c_errmsg[0] != '\0')
		return call->c_errmsg;
	if (call->c_aborted)
		return "aborted";
	switch (call->c_result) {
	case CURLE_COULDNT_CONNECT:
		(void)curl_easy_getinfo(call->c_easy, CURLINFO_OS_ERRNO,
		    &oserr);
		(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
		    "connect to %s failed: %s", call->c_target,
		    oserr != 0 ? strerror((int)oserr) :
		    call->c_errbuf[0] != '\0' ? call->c_errbuf :
		    curl_easy_strerror(call->c_result));
		return call->c_errmsg;
	case CURLE_OPERATION_TIMEDOUT:
		/* a reused connection has no connect time: look at whether
		 * the request went out instead */
		(void)curl_easy_getinfo(call->c_easy, CURLINFO_REQUEST_SIZE,
		    &reqsize);
		(void)curl_easy_getinfo(call->c_easy, CURLINFO_CONNECT_TIME_T,
		    &ct);
		if (ct == 0 && reqsize <= 0) {
			ms = HTTP_CONNECT_TIMEOUT_MS;
			if (call->c_timeout_ms != 0 && call->c_timeout_ms < ms)
				ms = call->c_timeout_ms;
			(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
			    "connect to %s timed out after %llu ms",
			    call->c_target, (unsigned long long)ms);
		} else if (call->c_timeout_ms != 0)
			(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
			    "timed out after %llu ms",
			    (unsigned long long)call->c_timeout_ms);
		else
			break;
		return call->c_errmsg;
	default:
		break;
	}
	if (call->c_errbuf[0] != '\0')
		return call->c_errbuf;
	return curl_easy_strerror(call->c_result);
}

/* Reports a finished call (state HC_FINISHING, on no list) and frees it. */
static void
http_call_finish(struct http_call *call)
{
	struct http_client	*c = call->c_client;
	int			 result;
	const char		*msg = NULL;

	c->hc_inflight--;
	if (call->c_result == CURLE_OK && call->c_errmsg[0] == '\0') {
		/* no body: the head was not reported yet */
		(void)http_call_head(call);
		if (call->c_cancelled) {
			http_call_free(call);
			return;
		}
	}
	result = (call->c_result == CURLE_OK && !call->c_aborted &&
	    call->c_errmsg[0] == '\0') ? 0 : -1;
	if (result == -1)
		msg = http_call_errmsg(call);
	if (call->c_cbs.hc_done != NULL)
		call->c_cbs.hc_done(call->c_arg, call, result, msg);
	http_call_free(call);
}

/*
 * Work that had to wait until curl_multi_socket_action() returned:
 * cancelled transfers, new ones, then completions.
 */
static void
http_client_settle(struct http_client *c)
{
	struct http_call	*call;
	CURLMsg			*m;
	CURLMcode		 mc;
	void			*priv;
	int			 left;

	while ((call = TAILQ_FIRST(&c->hc_zombies)) != NULL) {
		TAILQ_REMOVE(&c->hc_zombies, call, c_entry);
		http_call_detach(call);
		http_call_free(call);
	}
	while ((call = TAILQ_FIRST(&c->hc_pending)) != NULL) {
		TAILQ_REMOVE(&c->hc_pending, call, c_entry);
		if ((mc = curl_multi_add_handle(c->hc_multi, call->c_easy)) !=
		    CURLM_OK) {
			(void)snprintf(call->c_errmsg, sizeof(call->c_errmsg),
			    "cannot start request: %s",
			    curl_multi_strerror(mc));
			call->c_state = HC_DONE;
			TAILQ_INSERT_TAIL(&c->hc_done, call, c_entry);
			continue;
		}
		call->c_state = HC_ACTIVE;
		TAILQ_INSERT_TAIL(&c->hc_active, call, c_entry);
	}

	while ((m = curl_multi_info_read(c->hc_multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		priv = NULL;
		if (curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
		    &priv) != CURLE_OK || priv == NULL)
			continue;
		call = priv;
		call->c_result = m->data.result;
		/* m is invalid once the handle is removed */
		TAILQ_REMOVE(&c->hc_active, call, c_entry);
		http_call_detach(call);
		call->c_state = HC_DONE;
		TAILQ_INSERT_TAIL(&c->hc_done, call, c_entry);
	}

	/* hc_done may cancel queued calls: they leave this queue then */
	while ((call = TAILQ_FIRST(&c->hc_done)) != NULL) {
		TAILQ_REMOVE(&c->hc_done, call, c_entry);
		call->c_state = HC_FINISHING;
		http_call_finish(call);
	}
}

static void
http_client_drive(struct http_client *c, curl_socket_t fd, int action)
{
	int	running;

	c->hc_in_action = 1;
	(void)curl_multi_socket_action(c->hc_multi, fd, action, &running);
	c->hc_in_action = 0;
	http_client_settle(c);
}

static void
http_client_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_sock	*s = arg;
	int			 action = 0;

	if (what & EV_READ)
		action |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		action |= CURL_CSELECT_OUT;
	http_client_drive(s->s_client, fd, action);
}

static void
http_client_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	http_client_drive(arg, CURL_SOCKET_TIMEOUT, 0);
}

static void
http_sock_free(struct http_sock *s)
{
	LIST_REMOVE(s, s_entry);
	event_free(s->s_ev);
	free(s);
}

static int
http_client_socket_fn(CURL *easy, curl_socket_t fd, int what, void *arg,
    void *sockp)
{
	struct http_client	*c = arg;
	struct http_sock	*s = sockp;
	short			 kind = EV_PERSIST;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL)
			http_sock_free(s);
		return 0;
	}
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;

	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			goto fail;
		s->s_client = c;
		s->s_fd = fd;
		if ((s->s_ev = event_new(c->hc_base, fd, kind,
		    http_client_sock_cb, s)) == NULL) {
			free(s);
			goto fail;
		}
		LIST_INSERT_HEAD(&c->hc_socks, s, s_entry);
		if (curl_multi_assign(c->hc_multi, fd, s) != CURLM_OK) {
			http_sock_free(s);
			goto fail;
		}
	} else {
		/* the same interest again: no epoll_ctl round trip */
		if (s->s_kind == kind)
			return 0;
		(void)event_del(s->s_ev);
		if (event_assign(s->s_ev, c->hc_base, fd, kind,
		    http_client_sock_cb, s) == -1)
			goto fail;
	}
	if (event_add(s->s_ev, NULL) == -1)
		goto fail;
	s->s_kind = kind;
	return 0;
 fail:
	log_warnx("http client: cannot watch socket %d", (int)fd);
	return -1;
}

static int
http_client_timer_fn(CURLM *multi, long timeout_ms, void *arg)
{
	struct http_client	*c = arg;
	struct timeval		 tv;

	(void)multi;
	if (timeout_ms < 0) {
		(void)evtimer_del(c->hc_timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	return evtimer_add(c->hc_timer, &tv) == -1 ? -1 : 0;
}

struct http_client *
http_client_new(struct event_base *base)
{
	struct http_client	*c;

	if (!http_curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			log_warnx("http client: curl_global_init failed");
			return NULL;
		}
		http_curl_ready = 1;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->hc_base = base;
	TAILQ_INIT(&c->hc_active);
	TAILQ_INIT(&c->hc_pending);
	TAILQ_INIT(&c->hc_zombies);
	TAILQ_INIT(&c->hc_done);
	LIST_INIT(&c->hc_socks);
	if ((c->hc_timer = evtimer_new(base, http_client_timer_cb, c)) == NULL)
		goto fail;
	if ((c->hc_h1 = h1_client_new(base)) == NULL)
		goto fail;
	if ((c->hc_multi = curl_multi_init()) == NULL)
		goto fail;
	if (curl_multi_setopt(c->hc_multi, CURLMOPT_SOCKETFUNCTION,
	    http_client_socket_fn) != CURLM_OK ||
	    curl_multi_setopt(c->hc_multi, CURLMOPT_SOCKETDATA, c) !=
	    CURLM_OK ||
	    curl_multi_setopt(c->hc_multi, CURLMOPT_TIMERFUNCTION,
	    http_client_timer_fn) != CURLM_OK ||
	    curl_multi_setopt(c->hc_multi, CURLMOPT_TIMERDATA, c) !=
	    CURLM_OK ||
	    curl_multi_setopt(c->hc_multi, CURLMOPT_MAXCONNECTS,
	    (long)HTTP_MAXCONNECTS) != CURLM_OK)
		goto fail;
	return c;
 fail:
	h1_client_free(c->hc_h1);
	if (c->hc_multi != NULL)
		curl_multi_cleanup(c->hc_multi);
	if (c->hc_timer != NULL)
		event_free(c->hc_timer);
	free(c);
	return NULL;
}

void
http_client_free(struct http_client *c)
{
	struct http_call	*call;
	struct http_sock	*s;

	if (c == NULL)
		return;
	c->hc_closing = 1;
	while ((call = TAILQ_FIRST(&c->hc_active)) != NULL) {
		TAILQ_REMOVE(&c->hc_active, call, c_entry);
		if (call->c_h1)
			h1_exchange_cancel(c->hc_h1, &call->c_x);
		else
			http_call_detach(call);
		http_call_free(call);
	}
	while ((call = TAILQ_FIRST(&c->hc_zombies)) != NULL) {
		TAILQ_REMOVE(&c->hc_zombies, call, c_entry);
		http_call_detach(call);
		http_call_free(call);
	}
	while ((call = TAILQ_FIRST(&c->hc_pending)) != NULL) {
		TAILQ_REMOVE(&c->hc_pending, call, c_entry);
		http_call_free(call);
	}
	while ((call = TAILQ_FIRST(&c->hc_done)) != NULL) {
		TAILQ_REMOVE(&c->hc_done, call, c_entry);
		http_call_free(call);
	}
	while (c->hc_npool > 0)
		curl_easy_cleanup(c->hc_pool[--c->hc_npool]);
	while (c->hc_nspare > 0)
		http_call_spare_free(c->hc_spare[--c->hc_nspare]);
	while (c->hc_ntargets > 0) {
		c->hc_ntargets--;
		free(c->hc_targets[c->hc_ntargets].ut_url);
		free(c->hc_targets[c->hc_ntargets].ut_target);
	}
	while (c->hc_nsplits > 0)
		free(c->hc_splits[--c->hc_nsplits].hs_url);
	h1_client_free(c->hc_h1);
	/* closes the cached connections, which may call socket_fn */
	curl_multi_cleanup(c->hc_multi);
	while ((s = LIST_FIRST(&c->hc_socks)) != NULL)
		http_sock_free(s);
	event_free(c->hc_timer);
	free(c);
}

/* "host:port" for messages, without printf on the hot path */
static char *
http_target_make(const char *host, size_t hlen, unsigned long port)
{
	char	 num[24], *p, *t;
	size_t	 n;

	p = proto_utoa(num + sizeof(num), port, 10);
	n = (size_t)(num + sizeof(num) - p);
	if ((t = malloc(hlen + n + 2)) == NULL)
		return NULL;
	memcpy(t, host, hlen);
	t[hlen] = ':';
	memcpy(t + hlen + 1, p, n);
	t[hlen + 1 + n] = '\0';
	return t;
}

/*
 * A plain http:// URL split for http_h1.c: its request line and Host
 * go into the request head, an IP address into the exchange.  1: done
 * (the host is an address: http_h1.c can take it), 0: split, but the
 * host is a name (libcurl resolves it, unless a Unix socket is set),
 * -1: the URL is libcurl's to judge, -2: out of memory.
 */
/* http_url_split(), remembered for the URLs the client saw last */
static int
http_client_split(struct http_client *c, const char *url,
    struct http_url *u)
{
	int	 i, rc;
	char	*copy;

	for (i = 0; i < c->hc_nsplits; i++)
		if (strcmp(c->hc_splits[i].hs_url, url) == 0) {
			*u = c->hc_splits[i].hs_u;
			return c->hc_splits[i].hs_rc;
		}
	rc = http_url_split(url, u);
	if (c->hc_nsplits == HTTP_TARGETS_MAX || (copy = strdup(url)) == NULL)
		return rc;
	c->hc_splits[c->hc_nsplits].hs_url = copy;
	c->hc_splits[c->hc_nsplits].hs_rc = rc;
	if (rc == 0) {
		/* both spans lie in the URL: moved into the copy */
		c->hc_splits[c->hc_nsplits].hs_u = *u;
		c->hc_splits[c->hc_nsplits].hs_u.hu_auth = copy +
		    (u->hu_auth - url);
		c->hc_splits[c->hc_nsplits].hs_u.hu_path = copy +
		    (u->hu_path - url);
	}
	c->hc_nsplits++;
	return rc;
}

static int
http_call_h1_url(struct http_call *call, const char *url)
{
	struct http_url	 u;

	if (http_client_split(call->c_client, url, &u) == -1)
		return -1;
	memcpy(&call->c_x.hx_addr, &u.hu_addr, sizeof(u.hu_addr));
	call->c_x.hx_addrlen = u.hu_addrlen;
	if ((call->c_target = http_target_make(u.hu_auth, u.hu_hostlen,
	    u.hu_port)) == NULL)
		return -2;
	if (http_call_req_str(call, call->c_method) == -1 ||
	    http_call_req_add(call, " ", 1) == -1 ||
	    (u.hu_pathlen == 0 || *u.hu_path == '?' ?
	    http_call_req_add(call, "/", 1) : 0) == -1 ||
	    http_call_req_add(call, u.hu_path, u.hu_pathlen) == -1 ||
	    http_call_req_str(call, " HTTP/1.1\r\nHost: ") == -1 ||
	    http_call_req_add(call, u.hu_auth, u.hu_authlen) == -1 ||
	    http_call_req_add(call, "\r\n", 2) == -1)
		return -2;
	call->c_req_hdrs = call->c_reqlen;
	call->c_h1_url = 1;
	return u.hu_addrlen != 0;
}

struct http_call *
http_call_new(struct http_client *c, const char *method, const char *url)
{
	struct http_call	*call;
	CURLU			*u = NULL;
	char			*scheme = NULL, *host = NULL, *port = NULL;
	int			 i, r;

	if (c == NULL || method == NULL || url == NULL ||
	    !http_token_valid(method))
		return NULL;
	if ((call = http_call_alloc(c)) == NULL)
		return NULL;
	call->c_client = c;
	call->c_state = HC_NEW;
	if ((call->c_method = strdup(method)) == NULL)
		goto fail;
	if ((r = http_call_h1_url(call, url)) == -2)
		goto fail;
	/* an address: http_h1.c takes it whatever happens, libcurl never */
	if (r == 1) {
		call->c_h1 = 1;
		return call;
	}
	if ((call->c_url = strdup(url)) == NULL)
		goto fail;
	if (r == 0)
		return call;

	for (i = 0; i < c->hc_ntargets; i++)
		if (strcmp(c->hc_targets[i].ut_url, url) == 0)
			break;
	if (i < c->hc_ntargets) {
		if ((call->c_target = strdup(c->hc_targets[i].ut_target)) ==
		    NULL)
			goto fail;
		return call;
	}
	/* parsed here so a bad URL fails now, not in the loop */
	if ((u = curl_url()) == NULL ||
	    curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) !=
	    CURLUE_OK)
		goto fail;
	if (asprintf(&call->c_target, "%s:%s", host, port) == -1) {
		call->c_target = NULL;
		goto fail;
	}
	if (c->hc_ntargets < HTTP_TARGETS_MAX &&
	    (c->hc_targets[c->hc_ntargets].ut_url = strdup(url)) != NULL) {
		if ((c->hc_targets[c->hc_ntargets].ut_target =
		    strdup(call->c_target)) != NULL)
			c->hc_ntargets++;
		else
			free(c->hc_targets[c->hc_ntargets].ut_url);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return call;
 fail:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	http_call_free(call);
	return NULL;
}

/* the request headers as libcurl wants them: "Name;" sends an empty one */
static int
http_call_curl_headers(struct http_call *call)
{
	struct curl_slist	*l;
	const char		*p, *e, *end;
	char			*line;
	size_t			 len;

	if ((call->c_reqhdrs = curl_slist_append(NULL, "Expect:")) == NULL)
		return -1;
	p = call->c_req + call->c_req_hdrs;
	end = call->c_req + call->c_reqlen;
	while (p < end) {
		if ((e = memchr(p, '\r', (size_t)(end - p))) == NULL)
			e = end;
		len = (size_t)(e - p);
		if ((line = strndup(p, len)) == NULL)
			return -1;
		if (len > 0 && line[len - 1] == ':')
			line[len - 1] = ';';
		l = curl_slist_append(call->c_reqhdrs, line);
		free(line);
		if (l == NULL)
			return -1;
		call->c_reqhdrs = l;
		p = e + 2;
	}
	return 0;
}

static curl_socket_t http_call_opensocket(void *, curlsocktype,
		    struct curl_sockaddr *);

/* the libcurl side of a call, set up when it starts */
static int
http_call_curl_prepare(struct http_call *call)
{
	struct http_client	*c = call->c_client;

	if (http_call_curl_headers(call) == -1)
		return -1;
	if (c->hc_npool > 0)
		call->c_easy = c->hc_pool[--c->hc_npool];
	else if ((call->c_easy = curl_easy_init()) == NULL)
		return -1;
	if (curl_easy_setopt(call->c_easy, CURLOPT_URL, call->c_url) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_PRIVATE, call) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_ERRORBUFFER,
	    call->c_errbuf) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_HTTP_VERSION,
	    (long)CURL_HTTP_VERSION_1_1) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_PROTOCOLS_STR,
	    "http,https") != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_FOLLOWLOCATION, 0L) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_TCP_KEEPALIVE, 1L) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_MAXAGE_CONN,
	    HTTP_MAXAGE_CONN_S) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_CONNECTTIMEOUT_MS,
	    HTTP_CONNECT_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_HEADERFUNCTION,
	    http_call_header_cb) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_HEADERDATA, call) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_WRITEFUNCTION,
	    http_call_write_cb) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_WRITEDATA, call) !=
	    CURLE_OK)
		return -1;
	if (call->c_unix != NULL && curl_easy_setopt(call->c_easy,
	    CURLOPT_UNIX_SOCKET_PATH, call->c_unix) != CURLE_OK)
		return -1;
	if (call->c_cafile != NULL && curl_easy_setopt(call->c_easy,
	    CURLOPT_CAINFO, call->c_cafile) != CURLE_OK)
		return -1;
	if (call->c_public_only && (curl_easy_setopt(call->c_easy,
	    CURLOPT_OPENSOCKETFUNCTION, http_call_opensocket) != CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_OPENSOCKETDATA, call) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_FRESH_CONNECT, 1L) !=
	    CURLE_OK ||
	    curl_easy_setopt(call->c_easy, CURLOPT_FORBID_REUSE, 1L) !=
	    CURLE_OK))
		return -1;
	return 0;
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
	free(call->c_target);
	call->c_target = t;
	free(call->c_unix);
	call->c_unix = p;
	return 0;
}

static int
http_call_setup(struct http_call *call)
{
	CURL			*e = call->c_easy;
	struct curl_slist	*l;
	const char		*m = call->c_method;
	int			 post;

	post = call->c_has_body || strcmp(m, "POST") == 0;
	/* libcurl would otherwise label the body a form */
	if (post && !call->c_has_ctype) {
		if ((l = curl_slist_append(call->c_reqhdrs, "Content-Type:")) ==
		    NULL)
			return -1;
		call->c_reqhdrs = l;
	}
	if (curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->c_reqhdrs) !=
	    CURLE_OK)
		return -1;
	if (call->c_timeout_ms > 0 && curl_easy_setopt(e,
	    CURLOPT_TIMEOUT_MS, call->c_timeout_ms > LONG_MAX ? LONG_MAX :
	    (long)call->c_timeout_ms) != CURLE_OK)
		return -1;

	if (post) {
		if (curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)call->c_bodylen) != CURLE_OK ||
		    curl_easy_setopt(e, CURLOPT_POSTFIELDS,
		    call->c_body != NULL ? call->c_body : "") != CURLE_OK)
			return -1;
		if (strcmp(m, "POST") != 0 &&
		    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m) != CURLE_OK)
			return -1;
	} else if (strcmp(m, "GET") == 0) {
		if (curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK)
			return -1;
	} else if (strcmp(m, "HEAD") == 0) {
		if (curl_easy_setopt(e, CURLOPT_NOBODY, 1L) != CURLE_OK)
			return -1;
	} else if (curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m) != CURLE_OK)
		return -1;
	return 0;
}

/* http_h1.c's callbacks, mapped onto the caller's */

static int
http_h1_line(void *arg, const char *line, size_t len)
{
	struct http_call	*call = arg;

	if (line == NULL) {
		http_call_clear_headers(call);
		return 0;
	}
	return http_call_store_header(call, line, len);
}

/* after a caller's callback: did it cancel or abort the call? */
static int
http_h1_verdict(struct http_call *call, int r)
{
	call->c_in_cb = 0;
	if (call->c_cancelled)
		return H1_CANCELLED;
	if (r != 0) {
		call->c_aborted = 1;
		return H1_ABORT;
	}
	return H1_GO;
}

static int
http_h1_head(void *arg, long status)
{
	struct http_call	*call = arg;

	call->c_status = status;
	call->c_head_done = 1;
	if (call->c_cbs.hc_head == NULL)
		return H1_GO;
	call->c_in_cb = 1;
	return http_h1_verdict(call, call->c_cbs.hc_head(call->c_arg, call,
	    status));
}

static int
http_h1_data(void *arg, const char *buf, size_t len)
{
	struct http_call	*call = arg;

	if (call->c_cbs.hc_data == NULL)
		return H1_GO;
	call->c_in_cb = 1;
	return http_h1_verdict(call, call->c_cbs.hc_data(call->c_arg, call,
	    buf, len));
}

static void
http_h1_done(void *arg, int result, const char *errmsg)
{
	struct http_call	*call = arg;
	struct http_client	*c = call->c_client;

	TAILQ_REMOVE(&c->hc_active, call, c_entry);
	c->hc_inflight--;
	call->c_state = HC_FINISHING;
	if (call->c_cbs.hc_done != NULL)
		call->c_cbs.hc_done(call->c_arg, call, result,
		    result == 0 ? NULL : errmsg);
	http_call_free(call);
}

static void
http_h1_dropped(void *arg)
{
	http_call_free(arg);
}

static const struct h1_cbs http_h1_cbs = {
	http_h1_line, http_h1_head, http_h1_data, http_h1_done,
	http_h1_dropped
};

/* the rest of the head, and the exchange for http_h1.c */
static int
http_call_h1_setup(struct http_call *call)
{
	struct h1_exchange	*x = &call->c_x;
	struct sockaddr_un	*sun = (struct sockaddr_un *)&x->hx_addr;
	char			 num[24], *s;
	size_t			 len;
	int			 post;

	if (call->c_unix != NULL) {
		if ((len = strlen(call->c_unix)) >= sizeof(sun->sun_path))
			return -1;
		memset(&x->hx_addr, 0, sizeof(x->hx_addr));
		sun->sun_family = AF_UNIX;
		memcpy(sun->sun_path, call->c_unix, len + 1);
		x->hx_addrlen = sizeof(*sun);
	}
	post = call->c_has_body || strcmp(call->c_method, "POST") == 0;
	/* what libcurl would send */
	if (!call->c_has_accept &&
	    http_call_req_str(call, "Accept: */*\r\n") == -1)
		return -1;
	if (post) {
		s = proto_utoa(num + sizeof(num), call->c_bodylen, 10);
		if (http_call_req_str(call, "Content-Length: ") == -1 ||
		    http_call_req_add(call, s, (size_t)(num + sizeof(num) - s))
		    == -1 ||
		    http_call_req_add(call, "\r\n", 2) == -1)
			return -1;
	}
	if (http_call_req_add(call, "\r\n", 2) == -1)
		return -1;
	x->hx_target = call->c_target;
	x->hx_out[0].iov_base = call->c_req;
	x->hx_out[0].iov_len = call->c_reqlen;
	x->hx_out[1].iov_base = call->c_body;
	x->hx_out[1].iov_len = post ? call->c_bodylen : 0;
	x->hx_head_only = strcmp(call->c_method, "HEAD") == 0;
	x->hx_timeout_ms = call->c_timeout_ms;
	x->hx_cbs = &http_h1_cbs;
	x->hx_arg = call;
	return 0;
}

int
http_call_start(struct http_call *call, const struct http_call_cbs *cbs,
    void *arg)
{
	struct http_client	*c = call->c_client;

	if (call->c_state != HC_NEW)
		return -1;
	if (cbs != NULL)
		call->c_cbs = *cbs;
	call->c_arg = arg;
	/* a host name without a Unix socket needs libcurl's resolver */
	if (call->c_h1_url && (call->c_h1 || call->c_unix != NULL)) {
		call->c_h1 = 1;
		if (http_call_h1_setup(call) == -1)
			goto fail;
		call->c_state = HC_ACTIVE;
		TAILQ_INSERT_TAIL(&c->hc_active, call, c_entry);
		c->hc_inflight++;
		if (h1_exchange_start(c->hc_h1, &call->c_x) == -1) {
			TAILQ_REMOVE(&c->hc_active, call, c_entry);
			c->hc_inflight--;
			goto fail;
		}
		return 0;
	}
	call->c_h1 = 0;
	if (http_call_curl_prepare(call) == -1 || http_call_setup(call) == -1)
		goto fail;
	if (c->hc_in_action) {
		call->c_state = HC_PENDING;
		TAILQ_INSERT_TAIL(&c->hc_pending, call, c_entry);
	} else {
		if (curl_multi_add_handle(c->hc_multi, call->c_easy) !=
		    CURLM_OK)
			goto fail;
		call->c_state = HC_ACTIVE;
		TAILQ_INSERT_TAIL(&c->hc_active, call, c_entry);
	}
	c->hc_inflight++;
	return 0;
 fail:
	http_call_free(call);
	return -1;
}

const char *
http_call_header(struct http_call *call, const char *name)
{
	size_t	i;

	for (i = call->c_nhdrs; i > 0; i--) {
		if (strcasecmp(http_hdr_name(call, i - 1), name) == 0)
			return http_hdr_value(call, i - 1);
	}
	return NULL;
}

long
http_call_status(struct http_call *call)
{
	return call->c_status;
}

void
http_call_cancel(struct http_call *call)
{
	struct http_client	*c;

	if (call == NULL || call->c_cancelled)
		return;
	c = call->c_client;
	call->c_cancelled = 1;
	switch (call->c_state) {
	case HC_NEW:
		http_call_free(call);
		break;
	case HC_PENDING:
		TAILQ_REMOVE(&c->hc_pending, call, c_entry);
		c->hc_inflight--;
		http_call_free(call);
		break;
	case HC_ACTIVE:
		TAILQ_REMOVE(&c->hc_active, call, c_entry);
		c->hc_inflight--;
		if (call->c_h1) {
			/* in its own callback: http_h1_dropped frees it */
			if (call->c_in_cb) {
				call->c_state = HC_ZOMBIE;
				break;
			}
			h1_exchange_cancel(c->hc_h1, &call->c_x);
			http_call_free(call);
			break;
		}
		if (c->hc_in_action) {
			/* libcurl is on the stack: remove it afterwards */
			call->c_state = HC_ZOMBIE;
			TAILQ_INSERT_TAIL(&c->hc_zombies, call, c_entry);
			break;
		}
		http_call_detach(call);
		http_call_free(call);
		break;
	case HC_DONE:
		TAILQ_REMOVE(&c->hc_done, call, c_entry);
		c->hc_inflight--;
		http_call_free(call);
		break;
	case HC_FINISHING:
		/* inside its own hc_head/hc_done: http_call_finish frees */
		break;
	case HC_ZOMBIE:
		break;
	}
}

size_t
http_client_active(const struct http_client *c)
{
	return c->hc_inflight;
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

static curl_socket_t
http_call_opensocket(void *arg, curlsocktype purpose,
    struct curl_sockaddr *addr)
{
	struct http_call	*call = arg;

	if (purpose != CURLSOCKTYPE_IPCXN ||
	    http_addr_private(&addr->addr)) {
		log_warnx("%s: refused: a private address", call->c_target !=
		    NULL ? call->c_target : "?");
		return CURL_SOCKET_BAD;
	}
	return socket(addr->family, addr->socktype, addr->protocol);
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
