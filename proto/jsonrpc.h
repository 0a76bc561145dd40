/*
 * JSON-RPC 2.0 messages (jsonrpc.c): parsed, checked, scanned without
 * allocation (jsonrpc_scan.c), built and dumped.
 */
#ifndef VMCPD_JSONRPC_H
#define VMCPD_JSONRPC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct mcp_method;	/* proto/method.h */

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
	/* params has a top-level "task" (2025-11-25's experimental tasks,
	 * which vmcpd does not pass on) */
	int		 js_task;
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

#endif /* VMCPD_JSONRPC_H */
