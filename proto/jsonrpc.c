/*
 * JSON-RPC 2.0 envelope parsing and building (JSON-RPC 2.0; MCP
 * 2025-11-25, Overview, section Messages).  Pure: no I/O, no global state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/meta.h"

#define BATCH_MSG "batches are not supported (JSON-RPC batching was " \
	"removed in MCP 2025-06-18)"

static void	 jsonrpc_err_set(struct jsonrpc_err *, int, int,
		    const char *, ...) __attribute__((format(printf, 4, 5)));
static int	 jsonrpc_id_check(json_t *, int, struct jsonrpc_err *);
static int	 jsonrpc_error_check(json_t *, struct jsonrpc_err *);
static const char *jsonrpc_code_text(int);
static json_t	*jsonrpc_call_new(json_t *, const char *, json_t *);

static void
jsonrpc_err_set(struct jsonrpc_err *err, int code, int http,
    const char *fmt, ...)
{
	va_list ap;

	err->je_code = code;
	err->je_http = http;
	va_start(ap, fmt);
	(void)vsnprintf(err->je_msg, sizeof(err->je_msg), fmt, ap);
	va_end(ap);
}

/* "not a float": the article reads naturally after "not" */
const char *
jsonrpc_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a float";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

/* null_ok: an error response may carry "id": null (id not known) */
/* a string that a C string would cut short */
static int
jsonrpc_has_nul(const json_t *s)
{
	return json_is_string(s) &&
	    strlen(json_string_value(s)) != json_string_length(s);
}

static int
jsonrpc_id_check(json_t *id, int null_ok, struct jsonrpc_err *err)
{
	if (jsonrpc_has_nul(id)) {
		/* ids are matched as C strings (relays, pending records) */
		jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
		    "a string \"id\" must not contain \"\\u0000\"");
		return -1;
	}
	if (json_is_string(id) || json_is_integer(id))
		return 0;
	if (null_ok && json_is_null(id))
		return 0;
	jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
	    "\"id\" must be a string or an integer, not %s",
	    jsonrpc_type_name(id));
	return -1;
}

static int
jsonrpc_error_check(json_t *e, struct jsonrpc_err *err)
{
	if (!json_is_object(e) ||
	    !json_is_integer(json_object_get(e, "code")) ||
	    !json_is_string(json_object_get(e, "message"))) {
		jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
		    "\"error\" must be an object with an integer \"code\" "
		    "and a string \"message\"");
		return -1;
	}
	return 0;
}

int
jsonrpc_parse(const char *buf, size_t len, struct jsonrpc_msg *out,
    struct jsonrpc_err *err)
{
	struct jsonrpc_err	 scratch;
	json_error_t		 jerr;
	json_t			*root = NULL, *v, *id, *method, *params;
	json_t			*result, *error;

	if (err == NULL)
		err = &scratch;
	memset(err, 0, sizeof(*err));
	memset(out, 0, sizeof(*out));

	if (buf == NULL)
		len = 0;
	/*
	 * JSON_ALLOW_NUL: "\u0000" in a string is valid JSON (RFC 8259
	 * section 7) and passes through intact; the strings vmcpd itself
	 * reads as C strings are checked for it (here and in
	 * jsonrpc_params_check()).  No JSON_DISABLE_EOF_CHECK (trailing
	 * garbage is refused).  JSON_DECODE_ANY so "1" is reported as
	 * "not an object" rather than as a parse error.
	 */
	root = json_loadb(buf != NULL ? buf : "", len, JSON_ALLOW_NUL |
	    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (root == NULL) {
		if (json_error_code(&jerr) == json_error_out_of_memory) {
			jsonrpc_err_set(err, JSONRPC_INTERNAL_ERROR, 500,
			    "Internal error: out of memory");
			goto fail;
		}
		jsonrpc_err_set(err, JSONRPC_PARSE_ERROR, 400,
		    "Parse error: %s at line %d column %d", jerr.text,
		    jerr.line, jerr.column);
		goto fail;
	}
	if (json_is_array(root)) {
		jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
		    "%s", BATCH_MSG);
		goto fail;
	}
	if (!json_is_object(root)) {
		jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
		    "a JSON-RPC message must be a JSON object, not %s",
		    jsonrpc_type_name(root));
		goto fail;
	}

	v = json_object_get(root, "jsonrpc");
	if (!json_is_string(v) || json_string_length(v) != 3 ||
	    strcmp(json_string_value(v), "2.0") != 0) {
		jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
		    "\"jsonrpc\" must be \"2.0\"");
		goto fail;
	}
	id = json_object_get(root, "id");
	method = json_object_get(root, "method");
	params = json_object_get(root, "params");
	result = json_object_get(root, "result");
	error = json_object_get(root, "error");

	if (method != NULL) {
		if (!json_is_string(method) ||
		    json_string_length(method) == 0) {
			jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
			    "\"method\" must be a non-empty string");
			goto fail;
		}
		if (jsonrpc_has_nul(method)) {
			jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
			    "\"method\" must not contain \"\\u0000\"");
			goto fail;
		}
		if (result != NULL || error != NULL) {
			jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
			    "a message cannot have both \"method\" and "
			    "\"%s\"", result != NULL ? "result" : "error");
			goto fail;
		}
		/* MCP params are always named: an object, never an array */
		if (params != NULL && !json_is_object(params)) {
			jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
			    "\"params\" must be an object, not %s",
			    jsonrpc_type_name(params));
			goto fail;
		}
		if (id != NULL && jsonrpc_id_check(id, 0, err) == -1)
			goto fail;
		out->jm_kind = id != NULL ? JSONRPC_REQUEST :
		    JSONRPC_NOTIFICATION;
		out->jm_method = json_string_value(method);
		out->jm_mm = mcp_method_lookup(out->jm_method,
		    json_string_length(method));
		out->jm_params = params;
		out->jm_id = id;
	} else if (result != NULL || error != NULL) {
		if (result != NULL && error != NULL) {
			jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
			    "a message cannot have both \"result\" and "
			    "\"error\"");
			goto fail;
		}
		if (params != NULL) {
			jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
			    "a response cannot have \"params\"");
			goto fail;
		}
		if (result != NULL) {
			if (id == NULL) {
				jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST,
				    400, "a response must have an \"id\"");
				goto fail;
			}
			if (jsonrpc_id_check(id, 0, err) == -1)
				goto fail;
			/* every MCP result is an object (Result) */
			if (!json_is_object(result)) {
				jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST,
				    400, "\"result\" must be an object, not %s",
				    jsonrpc_type_name(result));
				goto fail;
			}
			out->jm_kind = JSONRPC_RESPONSE;
			out->jm_result = result;
		} else {
			/* the 2025-11-25 schema makes an error's id optional */
			if (id != NULL && jsonrpc_id_check(id, 1, err) == -1)
				goto fail;
			if (jsonrpc_error_check(error, err) == -1)
				goto fail;
			out->jm_kind = JSONRPC_ERROR;
			out->jm_error = error;
		}
		out->jm_id = json_is_null(id) ? NULL : id;
	} else {
		jsonrpc_err_set(err, JSONRPC_INVALID_REQUEST, 400,
		    "a message must have \"method\", \"result\" or \"error\"");
		goto fail;
	}
	out->jm_root = root;
	return 0;

fail:
	json_decref(root);
	memset(out, 0, sizeof(*out));
	return -1;
}

/*
 * The first member of o (an object, or not) that vmcpd reads as a C
 * string and that holds "\u0000": one of keys, or with meta, the
 * progressToken and the reserved _meta keys.
 */
static const char *
jsonrpc_nul_member(const json_t *o, const char *const *keys, int meta)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	json_object_foreach((json_t *)o, k, v) {
		if (!jsonrpc_has_nul(v))
			continue;
		if (meta && (strcmp(k, "progressToken") == 0 ||
		    proto_meta_reserved(k)))
			return k;
		for (i = 0; keys != NULL && keys[i] != NULL; i++)
			if (strcmp(k, keys[i]) == 0)
				return k;
	}
	return NULL;
}

int
jsonrpc_params_check(const struct jsonrpc_msg *m, struct jsonrpc_err *err)
{
	static const char *const read[] = { "name", "uri", "type",
	    "cursor", "level", "protocolVersion", NULL };
	const json_t	*meta, *tok;
	const char	*k;

	memset(err, 0, sizeof(*err));
	if (m->jm_params == NULL)
		return 0;
	meta = json_object_get(m->jm_params, "_meta");
	tok = json_object_get(meta, "progressToken");
	if (tok != NULL && !json_is_string(tok) && !json_is_integer(tok)) {
		jsonrpc_err_set(err, JSONRPC_INVALID_PARAMS, 200,
		    "Invalid params: _meta.progressToken must be a string "
		    "or an integer, not %s", jsonrpc_type_name(tok));
		return -1;
	}
	/* arguments and everything else pass through as they are */
	if ((k = jsonrpc_nul_member(m->jm_params, read, 0)) != NULL ||
	    (k = jsonrpc_nul_member(json_object_get(m->jm_params, "ref"),
	    read, 0)) != NULL ||
	    (k = jsonrpc_nul_member(meta, NULL, 1)) != NULL) {
		jsonrpc_err_set(err, JSONRPC_INVALID_PARAMS, 200,
		    "Invalid params: \"%s\" must not contain \"\\u0000\"", k);
		return -1;
	}
	return 0;
}

void
jsonrpc_msg_clear(struct jsonrpc_msg *m)
{
	if (m == NULL)
		return;
	json_decref(m->jm_root);
	memset(m, 0, sizeof(*m));
}

static const char *
jsonrpc_code_text(int code)
{
	switch (code) {
	case JSONRPC_PARSE_ERROR:
		return "Parse error";
	case JSONRPC_INVALID_REQUEST:
		return "Invalid Request";
	case JSONRPC_METHOD_NOT_FOUND:
		return "Method not found";
	case JSONRPC_INVALID_PARAMS:
		return "Invalid params";
	case JSONRPC_INTERNAL_ERROR:
		return "Internal error";
	}
	return "Error";
}

/*
 * Builders: id is borrowed (a reference is taken); result, params and
 * data are stolen, also when the builder fails, so a caller never has
 * to clean up after a NULL return.  Keys go in in wire order and
 * jansson keeps insertion order.
 */
json_t *
jsonrpc_error_new(json_t *id, int code, const char *message, json_t *data)
{
	json_t	*msg = NULL, *e = NULL, *text;

	if ((e = json_object()) == NULL)
		goto fail;
	if (json_object_set_new(e, "code", json_integer(code)) == -1)
		goto fail;
	/* a message that is not UTF-8 falls back to the code's name */
	text = json_string(message != NULL ? message : "");
	if (message == NULL || text == NULL) {
		json_decref(text);
		text = json_string(jsonrpc_code_text(code));
	}
	if (json_object_set_new(e, "message", text) == -1)
		goto fail;
	if (data != NULL) {
		json_t *d = data;

		data = NULL;
		if (json_object_set_new(e, "data", d) == -1)
			goto fail;
	}
	if ((msg = json_object()) == NULL)
		goto fail;
	if (json_object_set_new(msg, "jsonrpc", json_string("2.0")) == -1 ||
	    json_object_set(msg, "id", id != NULL ? id : json_null()) == -1)
		goto fail;
	if (json_object_set_new(msg, "error", e) == -1) {
		e = NULL;
		goto fail;
	}
	return msg;

fail:
	json_decref(data);
	json_decref(e);
	json_decref(msg);
	return NULL;
}

json_t *
jsonrpc_result_new(json_t *id, json_t *result)
{
	json_t	*msg = NULL, *r;

	if (id == NULL)
		goto fail;
	if (result == NULL && (result = json_object()) == NULL)
		goto fail;
	if ((msg = json_object()) == NULL)
		goto fail;
	if (json_object_set_new(msg, "jsonrpc", json_string("2.0")) == -1 ||
	    json_object_set(msg, "id", id) == -1)
		goto fail;
	r = result;
	result = NULL;
	if (json_object_set_new(msg, "result", r) == -1)
		goto fail;
	return msg;

fail:
	json_decref(result);
	json_decref(msg);
	return NULL;
}

static json_t *
jsonrpc_call_new(json_t *id, const char *method, json_t *params)
{
	json_t	*msg = NULL, *p;

	if (method == NULL || (msg = json_object()) == NULL)
		goto fail;
	if (json_object_set_new(msg, "jsonrpc", json_string("2.0")) == -1)
		goto fail;
	if (id != NULL && json_object_set(msg, "id", id) == -1)
		goto fail;
	if (json_object_set_new(msg, "method", json_string(method)) == -1)
		goto fail;
	if (params != NULL) {
		p = params;
		params = NULL;
		if (json_object_set_new(msg, "params", p) == -1)
			goto fail;
	}
	return msg;

fail:
	json_decref(params);
	json_decref(msg);
	return NULL;
}

json_t *
jsonrpc_request_new(json_t *id, const char *method, json_t *params)
{
	if (id == NULL) {
		json_decref(params);
		return NULL;
	}
	return jsonrpc_call_new(id, method, params);
}

json_t *
jsonrpc_notification_new(const char *method, json_t *params)
{
	return jsonrpc_call_new(NULL, method, params);
}

char *
jsonrpc_dump(const json_t *v, size_t *len)
{
	char	*s;

	if (v == NULL)
		return NULL;
	s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	if (s != NULL && len != NULL)
		*len = strlen(s);
	return s;
}
