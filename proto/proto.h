/*
 * MCP and JSON-RPC wire rules: pure functions, no I/O, no libevent,
 * unit-tested and fuzzed.  JSON values are jansson's.
 */
#ifndef VMCPD_PROTO_H
#define VMCPD_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>

#include "method.h"

/* JSON-RPC 2.0 and MCP error codes (MCP 2026-07-28, Overview, Error Codes) */
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

/*
 * The era of a request, a client or a backend: the one name for a
 * revision everywhere (classification, backend records, configuration,
 * page caches).  PROTO_ERA_UNKNOWN is a backend not known yet, a probe
 * that decided nothing, or a backend's "era: auto" in the configuration.
 * PROTO_ERA_BOTH is only ever a backend's record: it speaks both, and
 * each client is met in its own (proto_era_pick()).
 */
enum proto_era {
	PROTO_ERA_UNKNOWN = 0,
	PROTO_ERA_LEGACY,	/* 2025-11-25: initialize, sessions */
	PROTO_ERA_MODERN,	/* 2026-07-28: stateless, per-request _meta */
	PROTO_ERA_BOTH		/* a backend that speaks both */
};
/* the revision vmcpd speaks in an era, "unknown" for PROTO_ERA_UNKNOWN,
 * "both" for PROTO_ERA_BOTH */
const char	*proto_era_version(enum proto_era);
/*
 * The era policy: the revision a request goes to a backend in.  pin is
 * the backend's configured era (PROTO_ERA_UNKNOWN for "auto"), record
 * what is known of it (PROTO_ERA_UNKNOWN: not yet), client the era of
 * the client the request comes for, or PROTO_ERA_UNKNOWN when none
 * (lists, notifications).  A pin wins; a backend that speaks both gets
 * the client's era, and 2026-07-28 when there is no client; otherwise
 * the record (PROTO_ERA_UNKNOWN: probe it first).
 */
enum proto_era	 proto_era_pick(enum proto_era pin, enum proto_era record,
	    enum proto_era client);
/* the era of a protocol version vmcpd knows, else PROTO_ERA_UNKNOWN
 * (also for NULL) */
enum proto_era	 proto_era_of_version(const char *version);

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
	const struct mcp_method	*jm_mm;		/* jm_method's entry, or NULL
						   for one vmcpd does not know */
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
/* "an object", "a string", ...: a JSON value's type for messages */
const char *jsonrpc_type_name(const json_t *);
int	 jsonrpc_parse(const char *buf, size_t len, struct jsonrpc_msg *out,
	    struct jsonrpc_err *err);
void	 jsonrpc_msg_clear(struct jsonrpc_msg *);
/*
 * A request's params past the envelope: 0, or -1 with err set to
 * -32602 (HTTP 200) for a _meta.progressToken that is not a string or
 * an integer, or "\u0000" in a string that vmcpd reads (a member of
 * params or params.ref, progressToken or a reserved _meta key).
 */
int	 jsonrpc_params_check(const struct jsonrpc_msg *,
	    struct jsonrpc_err *);

/*
 * A fast, allocation-free look at a request or notification
 * (jsonrpc_scan.c).  All spans point into the scanned buffer and live
 * as long as it does; none is NUL-terminated.
 */
#define JSONRPC_SCAN_ID_NONE	0	/* a notification */
#define JSONRPC_SCAN_ID_INT	1
#define JSONRPC_SCAN_ID_STRING	2

struct jsonrpc_scan {
	const char	*js_method;	/* inside the quotes, no escapes */
	size_t		 js_methodlen;	/* > 0 */
	const struct mcp_method *js_mm;	/* its entry, or NULL */
	int		 js_idkind;	/* JSONRPC_SCAN_ID_* */
	/* INT: the integer's text, as json_dumps() writes it (-?[0-9]+,
	 * no "-0", fits int64); STRING: inside the quotes, no escapes */
	const char	*js_id;
	size_t		 js_idlen;
	const char	*js_params;	/* the params object's text, or NULL */
	size_t		 js_paramslen;
	/* params' top-level "name" inside the quotes, no escapes; NULL
	 * when params is absent or has no "name" */
	const char	*js_name;
	size_t		 js_namelen;
	/* params' top-level "_meta" value's text (any type), or NULL: the
	 * era (proto_classify) turns on it */
	const char	*js_meta;
	size_t		 js_metalen;
};
/*
 * 1 only if jsonrpc_parse() would surely accept buf as a request (id
 * present) or notification with this method, id, params, params.name
 * and params._meta; 0, with *out zeroed, whenever not sure: then call
 * jsonrpc_parse(), which also words the errors.  Besides anything not
 * JSON or refused by jsonrpc_parse(), 0 for: escaped keys anywhere,
 * escapes in "jsonrpc", the method, a string id or params.name, a
 * "name" that is not a string, a "result" or "error" member, more
 * than 16 members at the top or in params, and the limits of
 * proto_json_check().  Unknown members are allowed, as jsonrpc_parse()
 * allows them.
 */
int	 jsonrpc_scan(const char *buf, size_t len, struct jsonrpc_scan *out);
/* the scanned id as a tree (an INT's value fits json_int_t), or NULL */
json_t	*jsonrpc_scan_id(const struct jsonrpc_scan *);
/*
 * The params' text (js_params) with its name's text (js_name, inside
 * it) replaced by to: what the params are under another name, built
 * without a tree.  malloc'd, NUL-terminated, its length in *lenp.
 * NULL when to would need escaping (a quote, a backslash, a control
 * character), the name does not lie between quotes inside the params,
 * or out of memory.
 */
char	*jsonrpc_scan_rename(const char *params, size_t plen,
	    const char *name, size_t namelen, const char *to, size_t *lenp);

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

/* HTTP header rules (MCP 2025-11-25, Transports, Streamable HTTP) */
/* 1 if an Accept header value lists the media type (or a wildcard that
 * covers it, with q > 0), else 0 */
int	 proto_accept_has(const char *accept, const char *type);
/* narrow [*v, *e) to the field value without leading/trailing OWS */
void	 proto_ows_trim(const char **v, const char **e);
/*
 * One header line of a backend's response, without its line end: NULL
 * if it is a field line (or an obs-fold continuation) vmcpd may use,
 * or why not: no field name, a name that is no token, a NUL or other
 * control character but HTAB (what the front refuses in a request).
 */
const char *proto_field_line_problem(const char *line, size_t len);
/* the first control character but HTAB (or DEL) in v[0, n), or NULL */
const char *proto_value_ctl(const char *v, size_t n);
/* the first control character but HTAB (or DEL) in [p, end), CR and LF
 * included, or end: where a well-formed field line's value stops */
const char *proto_value_stop(const char *p, const char *end);
/* the first byte in [p, end) that is no RFC 6750 2.1 b64token
 * character (ALPHA, DIGIT, "-", ".", "_", "~", "+", "/"; the "="
 * padding after them is the caller's), or end */
const char *proto_b64token_stop(const char *p, const char *end);
/* the value of a hexadecimal digit, or -1 */
int	 proto_hex_digit(int c);
/* v in base 10 or 16 (lower case) written backwards from end, which is
 * not written; returns where the digits start.  No printf on hot paths. */
char	*proto_utoa(char *end, uint64_t v, int base);
/* 1 if c is an RFC 9110 tchar (a token's character) */
extern const unsigned char proto_tchar[256];
static inline int
proto_is_tchar(char c)
{
	return proto_tchar[(unsigned char)c];
}
/* 1 if a Content-Type header value is application/json (params ok) */
int	 proto_content_type_is_json(const char *ctype);
/* 1 if the value is a syntactically valid session id: 1..128 chars of
 * visible ASCII 0x21-0x7e */
int	 proto_session_id_valid(const char *sid);
/*
 * 1 if name[0, len) is a tool name as MCP 2025-11-25 has them ("Tool
 * Names"): 1 to 128 characters of A-Z a-z 0-9 _ - .
 */
#define PROTO_TOOL_NAME_MAX	128
int	 proto_tool_name_valid(const char *name, size_t len);
/* a Legacy version vmcpd serves, or NULL: used to echo or pick */
const char *proto_legacy_version_pick(const char *requested);
/* 1 if the version string is one vmcpd knows at all (either era):
 * proto_era_of_version() is not PROTO_ERA_UNKNOWN */
int	 proto_version_known(const char *version);

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
/* the bytes its buffers hold now (an event and a line being read) */
size_t	 sse_parser_held(const struct sse_parser *);
void	 sse_parser_free(struct sse_parser *);

/*
 * Format one SSE event: "id: ...\nevent: ...\ndata: ...\n\n" with each
 * line of data on its own data: line.  id and event may be NULL.
 * Returns a malloc'd string and its length in *len, or NULL.
 */
char	*sse_format_event(const char *id, const char *event, const char *data,
	    size_t datalen, size_t *len);

/*
 * MCP 2026-07-28 ("Modern"): era classification, the request checks
 * answered with 400 before dispatch, header values, list cursors and
 * reserved _meta keys (MCP 2026-07-28: Versioning, Streamable HTTP,
 * Overview's sections _meta and Error Codes).
 */
#define MCP_META_PROTOCOL_VERSION	"io.modelcontextprotocol/protocolVersion"
#define MCP_META_CLIENT_CAPABILITIES	\
	"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT_INFO		"io.modelcontextprotocol/clientInfo"
#define MCP_META_SERVER_INFO		"io.modelcontextprotocol/serverInfo"

/* request headers; NULL = absent; values as received */
struct proto_reqhdrs {
	const char	*rh_protocol_version;	/* MCP-Protocol-Version */
	const char	*rh_method;		/* Mcp-Method */
	const char	*rh_name;		/* Mcp-Name */
	const char	*rh_session;		/* Mcp-Session-Id */
	/* Mcp-Param-<name>, name matched case-insensitively; may be NULL */
	const char	*(*rh_param)(void *arg, const char *name);
	void		*rh_arg;
};

struct proto_verdict {
	enum proto_era	 pv_era;
	int		 pv_http;	/* 0 = accepted; else the status to answer */
	int		 pv_code;	/* JSON-RPC code when refused */
	char		 pv_msg[256];	/* a message that helps (ASCII) */
	json_t		*pv_data;	/* error data (owned) or NULL */
};

/*
 * Decide the era of one parsed POST body (MCP 2026-07-28, Versioning;
 * body first) and, for Modern (Streamable HTTP, section Server
 * Validation), check in this order: the _meta envelope
 * (400 -32602), MCP-Protocol-Version = claim, Mcp-Method = method and
 * Mcp-Name = params.name/uri/taskId (400 -32020; on notifications only
 * the headers that are present), then the version (400 -32022 with
 * data {supported, requested}); a Modern initialize is 404 -32601.
 * Other unknown methods are left to the dispatcher.  hdrs may be NULL.
 * Returns 0 (pv_http 0, pv_era says which era serves it) or -1 when
 * refused (pv_http, pv_code, pv_msg and maybe pv_data set; 500 -32603
 * when out of memory).  Clear the verdict with proto_verdict_clear().
 */
int	 proto_classify(const struct jsonrpc_msg *,
	    const struct proto_reqhdrs *, struct proto_verdict *);
void	 proto_verdict_clear(struct proto_verdict *);

/*
 * The Modern hot path's look at a POST (jsonrpc_scan.c): 1 only if
 * jsonrpc_parse(), proto_classify() with these headers and
 * jsonrpc_params_check() would surely accept buf as a 2026-07-28
 * tools/call request with an id, params.name and a params._meta whose
 * claim is 2026-07-28, and the request has nothing the hot path does
 * not carry: no logLevel, inputResponses or requestState, none of
 * params' uri, type, cursor, level, protocolVersion or ref.  0, with
 * *out zeroed, whenever not sure: then parse, which words the errors.
 * mc_caps is the clientCapabilities object's text.  Mcp-Param-* is
 * not looked at: it depends on the tool (proto_param_headers_check).
 */
struct proto_mcall {
	struct jsonrpc_scan	 mc_scan;
	const char		*mc_caps;
	size_t			 mc_capslen;
};
int	 proto_modern_scan_call(const char *buf, size_t len,
	    const struct proto_reqhdrs *, struct proto_mcall *);

/*
 * An Mcp-Name or Mcp-Param-* value: OWS trimmed, "=?base64?...?="
 * decoded (canonical base64 of UTF-8 without NUL), control characters,
 * DEL and raw non-ASCII refused.  0 and a malloc'd *out, or -1 with
 * *out NULL (errno ENOMEM when out of memory, else EINVAL).
 */
int	 proto_hdr_decode(const char *raw, char **out);
/* 1 if raw decodes (proto_hdr_decode) to val[0, len) exactly */
int	 proto_hdr_is(const char *raw, const char *val, size_t len);
/* the value to send: as-is when plain visible ASCII (SP and HTAB inside
 * allowed), else the base64 form; malloc'd, NULL when out of memory */
char	*proto_hdr_encode(const char *value);
/* 1 if v[0, n) is sent as it is (proto_hdr_encode() would copy it) */
int	 proto_hdr_plain(const char *v, size_t n);
/*
 * The x-mcp-header annotations of a tool's inputSchema: *map becomes
 * {"<Name>": ["prop", "subprop", ...]} (possibly empty).  -1 with a
 * reason in why when a rule of Streamable HTTP, section Schema Extension,
 * is broken (the tool must then be left out of a Modern tools/list) or
 * out of memory; *map is NULL.
 */
int	 proto_x_mcp_headers(const json_t *input_schema, json_t **map,
	    char *why, size_t whylen);
/*
 * Check the Mcp-Param-* headers of a tools/call against the map from
 * proto_x_mcp_headers() and params.arguments: an argument present and
 * not null needs its header with an equal value (integers compared
 * numerically, booleans as true/false); a header for an absent or null
 * argument is refused too.  0, or -1 with the verdict set to 400 -32020.
 */
int	 proto_param_headers_check(const json_t *map,
	    const json_t *arguments, const struct proto_reqhdrs *,
	    struct proto_verdict *);
/* the Mcp-Param-* values to send for arguments: {"<Name>": value},
 * encoded; 0, or -1 (out of memory) with *out NULL */
int	 proto_param_headers_build(const json_t *map,
	    const json_t *arguments, json_t **out);

/*
 * Requests to a 2026-07-28 backend.  proto_modern_caps: a client's
 * capabilities as 2026-07-28 ClientCapabilities (roots without
 * listChanged, no tasks).  proto_modern_params: a copy of params whose
 * _meta keeps what travels (proto_meta_strip) and gets this hop's
 * protocolVersion, clientCapabilities (caps mirrored; NULL: {}),
 * clientInfo and logLevel (each NULL: none).  proto_modern_name: the
 * Mcp-Name value (params.name or params.uri), or NULL.
 */
json_t	*proto_modern_caps(const json_t *caps);
json_t	*proto_modern_params(const json_t *params, const json_t *caps,
	    const json_t *client_info, const char *log_level);
/* this hop's _meta alone, as proto_modern_params would set it, dumped */
char	*proto_modern_meta_text(const json_t *params, const json_t *caps,
	    const json_t *client_info, const char *log_level, size_t *len);
const char *proto_modern_name(const char *method, const json_t *params);
/* the client capability a server-to-client request (or input request)
 * needs: "elicitation", "sampling", "roots", or NULL for another method */
const char *proto_request_capability(const char *method);

/*
 * A backend's revision from its answer to a 2026-07-28 server/discover
 * (Streamable HTTP, section Backward Compatibility): answered 0 when no
 * HTTP answer came (refused, reset, timeout); status the HTTP status;
 * msg the JSON-RPC response in
 * the body, or NULL.  Authentication refusals and transient failures
 * are inconclusive: PROTO_ERA_UNKNOWN (use Legacy, cache nothing).  A
 * reason goes in why.
 */
enum proto_era proto_probe_outcome(int answered, long status,
	    const json_t *msg, char *why, size_t whylen);
/*
 * A backend found 2026-07-28 by server/discover (which lists only that
 * revision when its 2025-11-25 side is served apart, as the SDK's
 * servers do) is then sent a 2025-11-25 initialize: PROTO_ERA_BOTH when
 * it negotiates a 2025 revision, PROTO_ERA_MODERN when it answers
 * anything else, PROTO_ERA_UNKNOWN when that is inconclusive (as
 * above).  A reason goes in why.
 */
enum proto_era proto_probe_initialize(int answered, long status,
	    const json_t *msg, char *why, size_t whylen);
/* 1 if a JSON-RPC response is one of 2026-07-28's own errors (-3202x):
 * the backend speaks it and refused this request on its terms */
int	 proto_modern_error(const json_t *msg);

/* RFC 4648 base64, strict on decode (canonical padding, zero pad bits,
 * no whitespace); url: the URL-safe alphabet without padding */
char	*proto_b64_encode(const void *, size_t, int url);
int	 proto_b64_decode(const char *, size_t, int url, unsigned char **out,
	    size_t *outlen);

/*
 * Opaque cursors for vmcpd's own Modern lists: base64url of a small
 * checksummed binary record naming the list kind ("tools", "prompts",
 * "resources", "resourceTemplates"), the last key returned and how
 * many items with that key were returned, so a list that changed
 * resumes after that key.  At most PROTO_CURSOR_MAX characters; keys of
 * up to PROTO_CURSOR_KEY_MAX bytes always fit (a page may simply end at
 * an item whose key fits).  decode: -1 for a malformed, oversized or
 * another kind's cursor (answer -32602); *last_key is malloc'd.
 */
#define PROTO_CURSOR_MAX	512
#define PROTO_CURSOR_KEY_MAX	360
char	*proto_cursor_encode(const char *kind, const char *last_key,
	    size_t dup_index);
int	 proto_cursor_decode(const char *cursor, const char *kind,
	    char **last_key, size_t *dup_index);
/* where to continue in an array sorted by key_field (bytewise): after
 * the first dup_index items whose key is last_key, or at the first
 * greater key; an item without a string key counts as "" */
int	 proto_cursor_resume(const json_t *sorted_items,
	    const char *key_field, const char *last_key, size_t dup_index,
	    size_t *start);
/* the cursor that resumes at sorted_items[end] (0 < end <= size), or
 * NULL (out of memory, or that item's key does not fit) */
char	*proto_cursor_next(const json_t *sorted_items,
	    const char *key_field, const char *kind, size_t end);

/* 1 if a _meta key has a prefix reserved for MCP: one whose second label
 * is "modelcontextprotocol" or "mcp" (io.modelcontextprotocol/, dev.mcp/) */
int	 proto_meta_reserved(const char *key);
/* drop the MCP-reserved keys of a _meta object; progressToken, trace
 * context (traceparent, tracestate, baggage) and vendor keys stay */
void	 proto_meta_strip(json_t *meta);
/*
 * 1 if proto_meta_strip() would leave nothing of the _meta object in
 * this text (a backend's result _meta is, as a rule, its serverInfo
 * alone): no tree is needed.  0 if it would keep a key, or when not
 * sure (not an object, an escaped key, more than 8 members).
 */
int	 proto_meta_text_dropped(const char *json, size_t len);
/* params' _meta stripped, and deleted when nothing is left or it is no
 * object: as a 2025-11-25 hop gets it; -1 out of memory */
int	 proto_params_strip_meta(json_t *params);
/*
 * Dress a result for a Modern client: resultType (NULL: "complete"),
 * _meta[io.modelcontextprotocol/serverInfo] (a copy; NULL: none), ttlMs
 * when ttl_ms >= 0 and cacheScope when not NULL.  result is stolen (NULL:
 * an empty result); returns it, or NULL when out of memory.
 */
json_t	*proto_modern_result(json_t *result, const char *result_type,
	    const json_t *server_info, long long ttl_ms,
	    const char *cache_scope);


/*
 * A validating, allocation-free scan of a JSON object (jsonspan.c):
 * 0 if buf is exactly one JSON object of valid UTF-8 with at most max
 * top-level members, whose key (NULL if it holds an escape) and value
 * spans are put in out; -1 otherwise.  Duplicate keys are not looked
 * for: callers use it on what they will pass on, not to decide.
 */
struct proto_span {
	const char	*ps_key;	/* inside the quotes */
	size_t		 ps_keylen;
	const char	*ps_val;	/* the value's text */
	size_t		 ps_vallen;
};
int	 proto_json_members(const char *buf, size_t len,
	    struct proto_span *out, size_t max, size_t *n);
/* the member named key, or NULL: inline, so that with a literal key
 * (as every caller has) the length and the compare fold */
static inline const struct proto_span *
proto_json_member(const struct proto_span *m, size_t n, const char *key)
{
	size_t i, kl = strlen(key);

	for (i = 0; i < n; i++)
		if (m[i].ps_keylen == kl && m[i].ps_key != NULL &&
		    memcmp(m[i].ps_key, key, kl) == 0)
			return &m[i];
	return NULL;
}
/* the text of an object's member (no more than 32 members), or NULL */
const char *proto_json_value(const char *buf, size_t len, const char *key,
	    size_t *vlen);
/* text with [at, at + atlen) replaced by with; NUL-terminated */
char	*proto_text_replace(const char *text, size_t len, const char *at,
	    size_t atlen, const char *with, size_t wlen, size_t *outlen);
/* the same with up to PROTO_EDITS_MAX spans of text, in any order but
 * not overlapping (else NULL), each replaced */
#define PROTO_EDITS_MAX	4
struct proto_edit {
	const char	*pe_at;
	size_t		 pe_atlen;
	const char	*pe_with;
	size_t		 pe_wlen;
};
char	*proto_text_edit(const char *text, size_t len,
	    const struct proto_edit *, size_t n, size_t *outlen);
/*
 * proto_meta_strip() on text (meta.c): params (an object that jansson
 * loads) with its _meta stripped, and left out when nothing is left
 * (or when it is no object, as json_object_size() has it 0), as the
 * text of an equal object (the members' text kept, whitespace between
 * them not); NULL when not sure (a key with an escape or of 256 bytes
 * or more, more than 16 members in params or _meta) or out of memory.
 * name, when not NULL, is the JSON text that replaces params.name's.
 */
char	*proto_params_strip_meta_text(const char *params, size_t plen,
	    const char *name, size_t namelen, size_t *outlen);
/* *out (of *len bytes, room for *cap) += s[0..n), NUL-terminated,
 * grown as needed: 0, or -1 out of memory (*out left as it was) */
int	 proto_text_add(char **out, size_t *len, size_t *cap, const char *s,
	    size_t n);
/* the same with a member, "key":value (key without escapes), after a
 * comma unless *first, which is then cleared */
int	 proto_text_add_member(char **out, size_t *len, size_t *cap,
	    int *first, const struct proto_span *m);

/*
 * The members of an object for proto_json_check(): up to pm_max spans
 * in pm_span and their count in pm_n.  If pm_sub is set, the members of
 * the top-level member named pm_subkey go there too (pm_sub->pm_n stays
 * 0 unless that member is an object).
 */
struct proto_members {
	struct proto_span	*pm_span;
	size_t			 pm_max;
	size_t			 pm_n;
	const char		*pm_subkey;
	struct proto_members	*pm_sub;
};
/*
 * The strict scan (jsonspan.c): 0 only if json_loadb() with
 * JSON_REJECT_DUPLICATES (with or without JSON_DECODE_ANY) would surely
 * load buf as an object, and every key of it is free of escapes (so
 * ps_key is never NULL).  -1 when not, or not sure: a key with an
 * escape anywhere, more than 64 keys in the open objects at once,
 * nesting deeper than 512, more members than pm_max, an integer beyond
 * int64 or a real that might overflow a double.
 */
int	 proto_json_check(const char *buf, size_t len, struct proto_members *m);
/*
 * The first byte in [p, end) that a JSON string does not hold as it is
 * ('"', '\\', a control character) or that is not ASCII, or end: the
 * strict scan's run of plain bytes, sixteen at a time with SSE2
 * (jsonspan.c); the JSON writer (jsonw.c) copies such runs whole.
 */
const unsigned char *proto_json_plain(const unsigned char *p,
	    const unsigned char *end);
/*
 * proto_json_members() into m, the sub-object's members too: -1 if more
 * than m->pm_max at the top; the sub-object's count may pass its
 * pm_max (only that many kept), and with a repeated key it is the last
 * one's.
 */
int	 proto_json_members_sub(const char *buf, size_t len,
	    struct proto_members *m);

#endif
