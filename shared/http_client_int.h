/*
 * The insides of the outbound HTTP client (http_client.h), shared by its
 * files alone: the client and a call's life (http_client.c), what a call
 * sends and receives (http_call.c), calls through http_h1.c
 * (http_client_h1.c) and through libcurl (http_client_curl.c).
 */
#ifndef VMCPD_HTTP_CLIENT_INT_H
#define VMCPD_HTTP_CLIENT_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "shared/http_client.h"
#include "shared/http_h1.h"

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
	int			 c_target_kept;	/* the split cache's */
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
	/* last: a reused call clears only their first bytes */
	char			 c_errbuf[CURL_ERROR_SIZE];
	char			 c_errmsg[CURL_ERROR_SIZE + 256];
};

struct http_sock;

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
	 * the split points into hs_url, the cache's own copy; with it what
	 * each call to it sends after the method (" path HTTP/1.1\r\n
	 * Host: auth\r\n") and its "host:port", built once */
	struct {
		char		*hs_url;
		struct http_url	 hs_u;
		int		 hs_rc;
		char		*hs_line;
		size_t		 hs_linelen;
		char		*hs_target;
	}			 hc_splits[HTTP_TARGETS_MAX];
	int			 hc_nsplits;
};

/* http_client.c: a call's life */
void	 http_call_free(struct http_call *);

/* http_call.c: the request head, the response head */
size_t	 http_token_valid(const char *);
char	*http_call_req_grow(struct http_call *, size_t);
int	 http_call_req_add(struct http_call *, const char *, size_t);
int	 http_call_req_str(struct http_call *, const char *);
void	 http_call_clear_headers(struct http_call *);
int	 http_call_store_header(struct http_call *, const char *, size_t);
const char *http_call_framing_problem(const struct http_call *);

/* http_client_h1.c: calls through http_h1.c */
void	 http_h1_free(struct http_client *);
int	 http_h1_url(struct http_call *, const char *);
int	 http_h1_start(struct http_call *);
void	 http_h1_cancel(struct http_call *);

/* http_client_curl.c: calls through libcurl */
int	 http_curl_init(struct http_client *);
void	 http_curl_free(struct http_client *);
int	 http_curl_target(struct http_call *, const char *);
int	 http_curl_start(struct http_call *);
void	 http_curl_cancel(struct http_call *);
void	 http_curl_detach(struct http_call *);
void	 http_curl_release(struct http_call *);

#endif
