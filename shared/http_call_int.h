/*
 * One call of the outbound HTTP client (http_client_int.h): its state,
 * what it sends and what it received, and what http_call.c does with
 * them (the request head written, the response head stored).
 */
#ifndef VMCPD_HTTP_CALL_INT_H
#define VMCPD_HTTP_CALL_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "shared/http_client.h"
#include "shared/http_h1.h"

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

/* http_call.c: the request head, the response head */
size_t	 http_token_valid(const char *);
char	*http_call_req_grow(struct http_call *, size_t);
int	 http_call_req_add(struct http_call *, const char *, size_t);
int	 http_call_req_str(struct http_call *, const char *);
void	 http_call_clear_headers(struct http_call *);
int	 http_call_store_header(struct http_call *, const char *, size_t);
const char *http_call_framing_problem(const struct http_call *);

#endif /* VMCPD_HTTP_CALL_INT_H */
