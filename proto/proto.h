/*
 * MCP and JSON-RPC wire rules: pure functions, no I/O, no libevent,
 * unit-tested and fuzzed.  JSON values are jansson's.
 */
#ifndef VMCPD_PROTO_H
#define VMCPD_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* JSON-RPC 2.0 and MCP error codes (mcp-wire.md section 5) */
#define JSONRPC_PARSE_ERROR		-32700
#define JSONRPC_INVALID_REQUEST		-32600
#define JSONRPC_METHOD_NOT_FOUND	-32601
#define JSONRPC_INVALID_PARAMS		-32602
#define JSONRPC_INTERNAL_ERROR		-32603
#define MCP_ERR_TRANSPORT		-32000	/* SDK convention: transport */
#define MCP_ERR_SESSION_NOT_FOUND	-32001	/* SDK convention */
#define MCP_ERR_RESOURCE_NOT_FOUND	-32002	/* Legacy */
#define MCP_ERR_HEADER_MISMATCH		-32020	/* Modern */
#define MCP_ERR_MISSING_CAPABILITY	-32021	/* Modern */
#define MCP_ERR_UNSUPPORTED_VERSION	-32022	/* Modern */
#define MCP_ERR_URL_ELICITATION		-32042	/* Legacy */

#define MCP_VERSION_LEGACY	"2025-11-25"
#define MCP_VERSION_MODERN	"2026-07-28"

enum jsonrpc_kind {
	JSONRPC_REQUEST = 1,
	JSONRPC_NOTIFICATION,
	JSONRPC_RESPONSE,	/* has "result" */
	JSONRPC_ERROR		/* has "error" */
};

/*
 * A parsed message.  jm_root owns everything; the other members are
 * borrowed references into it (NULL when absent).
 */
struct jsonrpc_msg {
	enum jsonrpc_kind	 jm_kind;
	json_t			*jm_root;
	json_t			*jm_id;		/* string or integer */
	const char		*jm_method;
	json_t			*jm_params;	/* object, if present */
	json_t			*jm_result;
	json_t			*jm_error;
};

/* Why a message was refused: the code, a message that helps, and the
 * HTTP status the Legacy edge answers with. */
struct jsonrpc_err {
	int	je_code;
	int	je_http;
	char	je_msg[256];
};

/*
 * Parse one JSON-RPC message (not a batch).  Rejects duplicate keys,
 * a wrong "jsonrpc", a null/float/bool/object id, a non-string method,
 * params that are not an object, both result and error, and so on.
 * A JSON array gets -32600 "batch" (batches are not allowed since
 * 2025-06-18).  Returns 0, or -1 with err filled in.
 */
int	 jsonrpc_parse(const char *buf, size_t len, struct jsonrpc_msg *out,
	    struct jsonrpc_err *err);
void	 jsonrpc_msg_clear(struct jsonrpc_msg *);

/* Builders; each returns a new reference or NULL on allocation failure.
 * id is borrowed; result, params and data are stolen, even on failure.
 * id may be NULL (rendered as JSON null for errors). */
json_t	*jsonrpc_error_new(json_t *id, int code, const char *message,
	    json_t *data);
json_t	*jsonrpc_result_new(json_t *id, json_t *result);	/* steals result */
json_t	*jsonrpc_request_new(json_t *id, const char *method,
	    json_t *params);				/* steals params */
json_t	*jsonrpc_notification_new(const char *method, json_t *params);
/* compact serialisation; *len set; caller frees */
char	*jsonrpc_dump(const json_t *, size_t *len);

/* HTTP header rules (mcp-wire.md section 2.1) */
/* 1 if an Accept header value lists the media type (or a wildcard that
 * covers it, with q > 0), else 0 */
int	 proto_accept_has(const char *accept, const char *type);
/* 1 if a Content-Type header value is application/json (params ok) */
int	 proto_content_type_is_json(const char *ctype);
/* 1 if the value is a syntactically valid session id: 1..128 chars of
 * visible ASCII 0x21-0x7e */
int	 proto_session_id_valid(const char *sid);
/* a Legacy version vmcpd serves, or NULL: used to echo or pick */
const char *proto_legacy_version_pick(const char *requested);
/* 1 if the version string is one vmcpd knows at all (either era) */
int	 proto_version_known(const char *version);

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
void	 sse_parser_free(struct sse_parser *);

/*
 * Format one SSE event: "id: ...\nevent: ...\ndata: ...\n\n" with each
 * line of data on its own data: line.  id and event may be NULL.
 * Returns a malloc'd string and its length in *len, or NULL.
 */
char	*sse_format_event(const char *id, const char *event, const char *data,
	    size_t datalen, size_t *len);

#endif
