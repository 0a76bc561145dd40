/*
 * libFuzzer: jsonrpc_parse() on arbitrary bytes.  A message that parses
 * must classify consistently, dump, and parse back into the same kind;
 * a refusal must carry a known code and a message.  A request's params
 * go through jsonrpc_params_check() too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_msg(const struct jsonrpc_msg *m)
{
	switch (m->jm_kind) {
	case JSONRPC_REQUEST:
		if (m->jm_method == NULL || m->jm_method[0] == '\0' ||
		    !(json_is_string(m->jm_id) || json_is_integer(m->jm_id)))
			abort();
		break;
	case JSONRPC_NOTIFICATION:
		if (m->jm_method == NULL || m->jm_id != NULL)
			abort();
		break;
	case JSONRPC_RESPONSE:
		if (!json_is_object(m->jm_result) || m->jm_error != NULL ||
		    m->jm_method != NULL || m->jm_id == NULL)
			abort();
		break;
	case JSONRPC_ERROR:
		if (!json_is_object(m->jm_error) || m->jm_result != NULL ||
		    m->jm_method != NULL)
			abort();
		break;
	default:
		abort();
	}
	if (m->jm_params != NULL && !json_is_object(m->jm_params))
		abort();
	if (m->jm_id != NULL &&
	    !(json_is_string(m->jm_id) || json_is_integer(m->jm_id)))
		abort();
}

static int
has_nul(const json_t *v)
{
	return json_is_string(v) &&
	    strlen(json_string_value(v)) != json_string_length(v);
}

/*
 * What the edges read as C strings holds no "\u0000"; a request's params
 * pass jsonrpc_params_check() only with a string or integer
 * progressToken and a name without NUL, and fail it only with -32602.
 */
static void
check_strings(const struct jsonrpc_msg *m)
{
	struct jsonrpc_err	 e;
	const json_t		*tok;
	int			 rc;

	if (has_nul(json_object_get(m->jm_root, "method")) ||
	    has_nul(m->jm_id))
		abort();
	if (m->jm_kind != JSONRPC_REQUEST)
		return;
	rc = jsonrpc_params_check(m, &e);
	if (rc == -1) {
		if (e.je_code != JSONRPC_INVALID_PARAMS || e.je_http != 200 ||
		    e.je_msg[0] == '\0')
			abort();
		return;
	}
	tok = json_object_get(json_object_get(m->jm_params, "_meta"),
	    "progressToken");
	if (rc != 0 || (tok != NULL && !json_is_string(tok) &&
	    !json_is_integer(tok)) || has_nul(tok) ||
	    has_nul(json_object_get(m->jm_params, "name")))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jsonrpc_msg	 m, m2;
	struct jsonrpc_err	 e;
	json_t			*reply;
	char			*s, *s2;
	size_t			 len, len2;

	if (jsonrpc_parse((const char *)data, size, &m, &e) == -1) {
		if (m.jm_root != NULL || e.je_msg[0] == '\0' ||
		    memchr(e.je_msg, '\0', sizeof(e.je_msg)) == NULL)
			abort();
		if (!((e.je_code == JSONRPC_PARSE_ERROR ||
		    e.je_code == JSONRPC_INVALID_REQUEST) && e.je_http == 400) &&
		    !(e.je_code == JSONRPC_INTERNAL_ERROR && e.je_http == 500))
			abort();
		/* the error reply itself must build and dump */
		reply = jsonrpc_error_new(NULL, e.je_code, e.je_msg, NULL);
		if (reply != NULL) {
			s = jsonrpc_dump(reply, &len);
			free(s);
			json_decref(reply);
		}
		return 0;
	}
	check_msg(&m);
	check_strings(&m);

	s = jsonrpc_dump(m.jm_root, &len);
	if (s == NULL)
		goto out;	/* allocation failure only */
	if (len != strlen(s))
		abort();
	if (jsonrpc_parse(s, len, &m2, &e) == -1)
		abort();
	if (m2.jm_kind != m.jm_kind || !json_equal(m2.jm_root, m.jm_root))
		abort();
	/* dumping is stable: dump(parse(dump(x))) == dump(x) */
	s2 = jsonrpc_dump(m2.jm_root, &len2);
	if (s2 != NULL && (len2 != len || memcmp(s, s2, len) != 0))
		abort();
	free(s2);
	jsonrpc_msg_clear(&m2);
	free(s);

	/* answer it the way the edge would */
	if (m.jm_kind == JSONRPC_REQUEST) {
		reply = jsonrpc_result_new(m.jm_id,
		    json_deep_copy(m.jm_params));
		s = reply != NULL ? jsonrpc_dump(reply, &len) : NULL;
		free(s);
		json_decref(reply);
		reply = jsonrpc_error_new(m.jm_id, JSONRPC_METHOD_NOT_FOUND,
		    m.jm_method, NULL);
		s = reply != NULL ? jsonrpc_dump(reply, &len) : NULL;
		free(s);
		json_decref(reply);
	}
out:
	jsonrpc_msg_clear(&m);
	return 0;
}
