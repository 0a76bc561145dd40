/*
 * The insides of the outbound HTTP client (http_client.h), shared by its
 * files alone: the client and a call's life (http_client.c), calls
 * through http_h1.c (http_client_h1.c) and through libcurl
 * (http_client_curl.c); a call itself is http_call_int.h's.
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

#include "shared/http_call_int.h"

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
