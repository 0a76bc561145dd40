/*
 * Outbound HTTP: the client and a call's life.  Plain http:// to an IP
 * address and Unix-socket targets go through the lean HTTP/1.1 client
 * in http_h1.c (http_client_h1.c); the rest (https, host names) through
 * libcurl's multi_socket interface on the worker's libevent loop
 * (http_client_curl.c, which parks calls started or cancelled while
 * libcurl is on the stack: HC_PENDING, HC_ZOMBIE, HC_DONE).  What a call
 * sends and receives: http_call.c.
 *
 * http_client_free() must not be called from inside a callback.
 */
#include <sys/queue.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "shared/http_client_int.h"

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
	/* the message buffers (most of it) need only be empty strings */
	memset(call, 0, offsetof(struct http_call, c_errbuf));
	call->c_errbuf[0] = call->c_errmsg[0] = '\0';
	call->c_req = req;
	call->c_reqcap = reqcap;
	call->c_hbuf = hbuf;
	call->c_hcap = hcap;
	call->c_hdrs = hdrs;
	call->c_hdrcap = hdrcap;
	return call;
}

void
http_call_free(struct http_call *call)
{
	struct http_client *c = call->c_client;

	http_curl_release(call);
	free(call->c_body);
	if (!call->c_target_kept)
		free(call->c_target);
	call->c_target_kept = 0;
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

struct http_client *
http_client_new(struct event_base *base)
{
	struct http_client	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->hc_base = base;
	TAILQ_INIT(&c->hc_active);
	if ((c->hc_h1 = h1_client_new(base)) == NULL)
		goto fail;
	if (http_curl_init(c) == -1)
		goto fail;
	return c;
 fail:
	h1_client_free(c->hc_h1);
	free(c);
	return NULL;
}

void
http_client_free(struct http_client *c)
{
	struct http_call	*call;

	if (c == NULL)
		return;
	c->hc_closing = 1;
	while ((call = TAILQ_FIRST(&c->hc_active)) != NULL) {
		TAILQ_REMOVE(&c->hc_active, call, c_entry);
		if (call->c_h1)
			h1_exchange_cancel(c->hc_h1, &call->c_x);
		else
			http_curl_detach(call);
		http_call_free(call);
	}
	http_curl_free(c);
	while (c->hc_nspare > 0)
		http_call_spare_free(c->hc_spare[--c->hc_nspare]);
	http_h1_free(c);
	free(c);
}

struct http_call *
http_call_new(struct http_client *c, const char *method, const char *url)
{
	struct http_call	*call;
	int			 r;

	if (c == NULL || method == NULL || url == NULL ||
	    !http_token_valid(method))
		return NULL;
	if ((call = http_call_alloc(c)) == NULL)
		return NULL;
	call->c_client = c;
	call->c_state = HC_NEW;
	if ((call->c_method = strdup(method)) == NULL)
		goto fail;
	if ((r = http_h1_url(call, url)) == -2)
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
	if (http_curl_target(call, url) == -1)
		goto fail;
	return call;
 fail:
	http_call_free(call);
	return NULL;
}

int
http_call_start(struct http_call *call, const struct http_call_cbs *cbs,
    void *arg)
{
	if (call->c_state != HC_NEW)
		return -1;
	if (cbs != NULL)
		call->c_cbs = *cbs;
	call->c_arg = arg;
	/* a host name without a Unix socket needs libcurl's resolver */
	if (call->c_h1_url && (call->c_h1 || call->c_unix != NULL)) {
		call->c_h1 = 1;
		if (http_h1_start(call) == -1)
			goto fail;
		return 0;
	}
	call->c_h1 = 0;
	if (http_curl_start(call) == -1)
		goto fail;
	return 0;
 fail:
	http_call_free(call);
	return -1;
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
		if (call->c_h1)
			http_h1_cancel(call);
		else
			http_curl_cancel(call);
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
