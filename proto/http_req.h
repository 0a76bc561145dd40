/*
 * An HTTP/1.1 request's head and chunked body, parsed in place
 * (http_req.c).
 */
#ifndef VMCPD_HTTP_REQ_H
#define VMCPD_HTTP_REQ_H

#include <stddef.h>
#include <stdint.h>

/*
 * HTTP/1.1 requests as the front reads them (http_req.c).  The head is
 * parsed in place once it is whole: names and values are NUL-terminated
 * where they lie and kept as offsets into the buffer.
 */
enum http_method {
	HTTP_M_OTHER = 0,
	HTTP_M_GET,
	HTTP_M_HEAD,
	HTTP_M_POST,
	HTTP_M_PUT,
	HTTP_M_DELETE,
	HTTP_M_OPTIONS,
	HTTP_M_PATCH
};
#define HTTP_HDRS_MAX	64
/* the headers vmcpd reads, known by the parser as it meets them */
enum http_field_id {
	HTTP_H_OTHER = 0,
	HTTP_H_HOST,
	HTTP_H_CONTENT_LENGTH,
	HTTP_H_TRANSFER_ENCODING,
	HTTP_H_CONNECTION,
	HTTP_H_EXPECT,
	HTTP_H_CONTENT_TYPE,
	HTTP_H_ACCEPT,
	HTTP_H_ORIGIN,
	HTTP_H_AUTHORIZATION,
	HTTP_H_MCP_SESSION_ID,
	HTTP_H_MCP_PROTOCOL_VERSION,
	HTTP_H_MCP_METHOD,
	HTTP_H_MCP_NAME,
	HTTP_H_LAST_EVENT_ID,
	HTTP_H_USER_AGENT,
	HTTP_H_X_REQUEST_ID,
	HTTP_H_N
};
/* the enum http_field_id of a token (ASCII case-insensitively) */
int	 http_hdr_id(const char *name, size_t len);
struct http_field {
	size_t		 hf_name;
	size_t		 hf_namelen;
	size_t		 hf_value;
	int		 hf_id;		/* enum http_field_id */
};
struct http_head {
	int			 hh_method;	/* enum http_method */
	int			 hh_minor;	/* HTTP/1.x */
	size_t			 hh_path;	/* the target's path */
	size_t			 hh_query;	/* its query, or 0 */
	size_t			 hh_host;	/* authority to check, or 0 */
	size_t			 hh_nhdrs;
	uint8_t			 hh_first[HTTP_H_N]; /* 1 + index, or 0 */
	size_t			 hh_len;	/* the head's bytes */
	uint64_t		 hh_clen;	/* Content-Length, or 0 */
	int			 hh_chunked;
	int			 hh_close;	/* no other request follows */
	int			 hh_continue;	/* Expect: 100-continue */
	int			 hh_status;	/* on -1: the answer, */
	const char		*hh_why;	/* and why */
	/* last: only the first hh_nhdrs are set, the rest is not cleared */
	struct http_field	 hh_hdrs[HTTP_HDRS_MAX];
};
/* 1 with *h filled, 0 if the head is not all in yet, -1 with
 * hh_status and hh_why saying why it is refused */
int	 http_head_parse(char *buf, size_t len, size_t max_head,
	    uint64_t max_body, struct http_head *h);
/* the first value of a header, or NULL */
const char *http_head_header(const char *buf, const struct http_head *h,
	    const char *name);
/* the same by enum http_field_id: no name to compare */
const char *http_head_known(const char *buf, const struct http_head *h,
	    int id);
enum http_chunk_state {
	HTTP_CHUNK_SIZE = 0,
	HTTP_CHUNK_DATA,
	HTTP_CHUNK_CRLF,
	HTTP_CHUNK_TRAILER
};
struct http_chunked {
	int		 hc_state;	/* enum http_chunk_state */
	uint64_t	 hc_left;	/* of the current chunk */
	size_t		 hc_in;		/* bytes of body read */
	size_t		 hc_out;	/* bytes of body decoded */
	size_t		 hc_trailer;
};
/* decodes body[hc_in, len) in place: 1 when whole, 0 for more, -1 as
 * http_head_parse (the struct starts zeroed) */
int	 http_chunked_decode(struct http_chunked *, char *body, size_t len,
	    uint64_t max_body, struct http_head *h);

#endif /* VMCPD_HTTP_REQ_H */
