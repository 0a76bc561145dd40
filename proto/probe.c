/*
 * Which revision a backend speaks, from its answer to a 2026-07-28
 * server/discover (MCP 2026-07-28, Streamable HTTP, section Backward
 * Compatibility: a recognised 2026-07-28 error means Modern; the table
 * is in docs/ARCHITECTURE.md, Backend eras), with one change: a
 * -32022 that does not list 2026-07-28 means the backend cannot be
 * spoken to in it, so it is Legacy to us).
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"

static int
probe_lists_modern(const json_t *versions)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach((json_t *)versions, i, v)
		if (proto_era_of_version(json_string_value(v)) ==
		    PROTO_ERA_MODERN)
			return 1;
	return 0;
}

enum proto_era
proto_probe_outcome(int answered, long status, const json_t *msg,
    char *why, size_t whylen)
{
	const json_t	*result, *error, *rt;
	json_int_t	 code;

	if (!answered) {
		(void)snprintf(why, whylen, "no answer");
		return PROTO_ERA_UNKNOWN;
	}
	/* not the backend speaking: an auth layer or a passing failure */
	if (status == 401 || status == 403 || status == 407) {
		(void)snprintf(why, whylen, "HTTP %ld (authentication)",
		    status);
		return PROTO_ERA_UNKNOWN;
	}
	if (status == 408 || status == 429 || status >= 500) {
		(void)snprintf(why, whylen, "HTTP %ld (transient)", status);
		return PROTO_ERA_UNKNOWN;
	}
	result = json_object_get(msg, "result");
	error = json_object_get(msg, "error");
	if (json_is_object(result)) {
		if (probe_lists_modern(json_object_get(result,
		    "supportedVersions"))) {
			(void)snprintf(why, whylen, "server/discover lists "
			    MCP_VERSION_MODERN);
			return PROTO_ERA_MODERN;
		}
		rt = json_object_get(result, "resultType");
		if (json_is_string(rt) && strcmp(json_string_value(rt),
		    "complete") != 0) {
			(void)snprintf(why, whylen, "a 2026-07-28 result "
			    "envelope (resultType %.32s)",
			    json_string_value(rt));
			return PROTO_ERA_MODERN;
		}
		(void)snprintf(why, whylen, "server/discover does not list "
		    MCP_VERSION_MODERN);
		return PROTO_ERA_LEGACY;
	}
	if (json_is_object(error) && json_is_integer(json_object_get(error,
	    "code"))) {
		code = json_integer_value(json_object_get(error, "code"));
		if (code == MCP_ERR_HEADER_MISMATCH ||
		    code == MCP_ERR_MISSING_CAPABILITY) {
			(void)snprintf(why, whylen, "a 2026-07-28 error "
			    "(%lld)", (long long)code);
			return PROTO_ERA_MODERN;
		}
		if (code == MCP_ERR_UNSUPPORTED_VERSION) {
			if (probe_lists_modern(json_object_get(
			    json_object_get(error, "data"), "supported"))) {
				(void)snprintf(why, whylen, "-32022 lists "
				    MCP_VERSION_MODERN);
				return PROTO_ERA_MODERN;
			}
			(void)snprintf(why, whylen, "-32022 without "
			    MCP_VERSION_MODERN);
			return PROTO_ERA_LEGACY;
		}
		(void)snprintf(why, whylen, "HTTP %ld, error %lld", status,
		    (long long)code);
		return PROTO_ERA_LEGACY;
	}
	(void)snprintf(why, whylen, "HTTP %ld, no JSON-RPC answer", status);
	return PROTO_ERA_LEGACY;
}

int
proto_modern_error(const json_t *msg)
{
	json_t		*code;
	json_int_t	 c;

	code = json_object_get(json_object_get(msg, "error"), "code");
	if (!json_is_integer(code))
		return 0;
	c = json_integer_value(code);
	return c == MCP_ERR_HEADER_MISMATCH ||
	    c == MCP_ERR_MISSING_CAPABILITY ||
	    c == MCP_ERR_UNSUPPORTED_VERSION;
}
