/*
 * Calls through libcurl's multi_socket interface (https, host names),
 * driven by the worker's libevent loop: libcurl tells us which sockets
 * to watch (one persistent event each) and when to wake it (one timer),
 * we hand readiness back with curl_multi_socket_action().  Easy handles
 * of finished calls are pooled for the next ones.
 *
 * libcurl refuses curl_multi_add_handle/remove_handle while one of
 * its callbacks runs (CURLM_RECURSIVE_API_CALL), and our hc_head and
 * hc_data run inside its header and write callbacks.  So every call
 * started or cancelled while curl_multi_socket_action() is on the
 * stack is parked on a list and handled once it returns.  Completed
 * transfers are first moved to a done queue and only then reported,
 * so an hc_done that cancels or starts other calls is safe.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "proto/headers.h"
#include "shared/log.h"
#include "shared/http_client_int.h"

#define HTTP_MAXCONNECTS	64
#define HTTP_CONNECT_TIMEOUT_MS	10000L
/* below Node's default keepAliveTimeout (5 s): avoid the idle-close race */
#define HTTP_MAXAGE_CONN_S	4L

struct http_sock {
	LIST_ENTRY(http_sock)	 s_entry;
	struct http_client	*s_client;
	struct event		*s_ev;
	curl_socket_t		 s_fd;
	short			 s_kind;	/* what s_ev watches */
};

static int	http_curl_ready;

void
http_curl_detach(struct http_call *call)
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

/* the calls cancelled while libcurl was on the stack */
static void
http_curl_bury(struct http_client *c)
{
	struct http_call	*call;

	while ((call = TAILQ_FIRST(&c->hc_zombies)) != NULL) {
		TAILQ_REMOVE(&c->hc_zombies, call, c_entry);
		http_curl_detach(call);
		http_call_free(call);
	}
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

	http_curl_bury(c);
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
		http_curl_detach(call);
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

/* the easy handle back to the pool, or cleaned up */
void
http_curl_release(struct http_call *call)
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
}

int
http_curl_init(struct http_client *c)
{
	if (!http_curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			log_warnx("http client: curl_global_init failed");
			return -1;
		}
		http_curl_ready = 1;
	}
	TAILQ_INIT(&c->hc_pending);
	TAILQ_INIT(&c->hc_zombies);
	TAILQ_INIT(&c->hc_done);
	LIST_INIT(&c->hc_socks);
	if ((c->hc_timer = evtimer_new(c->hc_base, http_client_timer_cb, c)) ==
	    NULL)
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
	return 0;
 fail:
	if (c->hc_multi != NULL)
		curl_multi_cleanup(c->hc_multi);
	if (c->hc_timer != NULL)
		event_free(c->hc_timer);
	return -1;
}

/* the calls libcurl still holds (hc_active is emptied first), the pool,
 * the multi handle; hc_closing is set */
void
http_curl_free(struct http_client *c)
{
	struct http_call	*call;
	struct http_sock	*s;

	http_curl_bury(c);
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
	while (c->hc_ntargets > 0) {
		c->hc_ntargets--;
		free(c->hc_targets[c->hc_ntargets].ut_url);
		free(c->hc_targets[c->hc_ntargets].ut_target);
	}
	/* closes the cached connections, which may call socket_fn */
	curl_multi_cleanup(c->hc_multi);
	while ((s = LIST_FIRST(&c->hc_socks)) != NULL)
		http_sock_free(s);
	event_free(c->hc_timer);
}

/* a URL http_h1.c does not split: its "host:port", remembered for the
 * URLs the client saw last; 0, or -1 (a bad URL fails now, not in the
 * loop) */
int
http_curl_target(struct http_call *call, const char *url)
{
	struct http_client	*c = call->c_client;
	CURLU			*u = NULL;
	char			*scheme = NULL, *host = NULL, *port = NULL;
	int			 i, rc = -1;

	for (i = 0; i < c->hc_ntargets; i++)
		if (strcmp(c->hc_targets[i].ut_url, url) == 0)
			break;
	if (i < c->hc_ntargets) {
		if ((call->c_target = strdup(c->hc_targets[i].ut_target)) ==
		    NULL)
			return -1;
		return 0;
	}
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
	rc = 0;
 fail:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

/* the easy handle set up and added, or parked while libcurl runs */
int
http_curl_start(struct http_call *call)
{
	struct http_client	*c = call->c_client;

	if (http_call_curl_prepare(call) == -1 || http_call_setup(call) == -1)
		return -1;
	if (c->hc_in_action) {
		call->c_state = HC_PENDING;
		TAILQ_INSERT_TAIL(&c->hc_pending, call, c_entry);
	} else {
		if (curl_multi_add_handle(c->hc_multi, call->c_easy) !=
		    CURLM_OK)
			return -1;
		call->c_state = HC_ACTIVE;
		TAILQ_INSERT_TAIL(&c->hc_active, call, c_entry);
	}
	c->hc_inflight++;
	return 0;
}

/* an active call, off hc_active already */
void
http_curl_cancel(struct http_call *call)
{
	struct http_client	*c = call->c_client;

	if (c->hc_in_action) {
		/* libcurl is on the stack: remove it afterwards */
		call->c_state = HC_ZOMBIE;
		TAILQ_INSERT_TAIL(&c->hc_zombies, call, c_entry);
		return;
	}
	http_curl_detach(call);
	http_call_free(call);
}
