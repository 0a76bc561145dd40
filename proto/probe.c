/*
 * Which revision a backend speaks, from its answer to a 2026-07-28
 * server/discover (MCP 2026-07-28, Streamable HTTP, section Backward
 * Compatibility: a recognised 2026-07-28 error means Modern; the table
 * is in docs/ARCHITECTURE.md, Backend eras), with one change: a
 * -32022 that does not list 2026-07-28 means the backend cannot be
 * spoken to in it, so it is Legacy to us).  A backend that lists both
 * revisions, or negotiates 2025-11-25 in the initialize that follows a
 * Modern verdict, speaks both; and the era policy that meets each
 * client in its own revision there.
 */
#include <stdio.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/probe.h"

static int
probe_lists(const json_t *versions, enum proto_era era)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach((json_t *)versions, i, v)
		if (proto_era_of_version(json_string_value(v)) == era)
			return 1;
	return 0;
}

/* a list with 2026-07-28: MODERN, or BOTH if it has a 2025 revision too */
static enum proto_era
probe_listed(const json_t *versions, char *why, size_t whylen,
    const char *what)
{
	if (probe_lists(versions, PROTO_ERA_LEGACY)) {
		(void)snprintf(why, whylen, "%s lists " MCP_VERSION_MODERN
		    " and a 2025 revision", what);
		return PROTO_ERA_BOTH;
	}
	(void)snprintf(why, whylen, "%s lists " MCP_VERSION_MODERN, what);
	return PROTO_ERA_MODERN;
}

/* no answer, or not the backend's own: authentication, passing trouble */
static int
probe_inconclusive(int answered, long status, char *why, size_t whylen)
{
	if (!answered) {
		(void)snprintf(why, whylen, "no answer");
		return 1;
	}
	if (status == 401 || status == 403 || status == 407) {
		(void)snprintf(why, whylen, "HTTP %ld (authentication)",
		    status);
		return 1;
	}
	if (status == 408 || status == 429 || status >= 500) {
		(void)snprintf(why, whylen, "HTTP %ld (transient)", status);
		return 1;
	}
	return 0;
}

enum proto_era
proto_probe_outcome(int answered, long status, const json_t *msg,
    char *why, size_t whylen)
{
	const json_t	*result, *error, *rt, *vs;
	json_int_t	 code;

	if (probe_inconclusive(answered, status, why, whylen))
		return PROTO_ERA_UNKNOWN;
	result = json_object_get(msg, "result");
	error = json_object_get(msg, "error");
	if (json_is_object(result)) {
		vs = json_object_get(result, "supportedVersions");
		if (probe_lists(vs, PROTO_ERA_MODERN))
			return probe_listed(vs, why, whylen,
			    "server/discover");
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
			vs = json_object_get(json_object_get(error, "data"),
			    "supported");
			if (probe_lists(vs, PROTO_ERA_MODERN))
				return probe_listed(vs, why, whylen, "-32022");
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

enum proto_era
proto_probe_initialize(int answered, long status, const json_t *msg,
    char *why, size_t whylen)
{
	const char *pv;

	if (probe_inconclusive(answered, status, why, whylen))
		return PROTO_ERA_UNKNOWN;
	pv = json_string_value(json_object_get(json_object_get(msg,
	    "result"), "protocolVersion"));
	if (proto_era_of_version(pv) == PROTO_ERA_LEGACY) {
		(void)snprintf(why, whylen, "server/discover lists "
		    MCP_VERSION_MODERN " and initialize negotiates %s", pv);
		return PROTO_ERA_BOTH;
	}
	(void)snprintf(why, whylen, "server/discover lists " MCP_VERSION_MODERN
	    "; initialize: HTTP %ld, %s", status, pv != NULL ? "not 2025" :
	    "no result");
	return PROTO_ERA_MODERN;
}

enum proto_era
proto_era_pick(enum proto_era pin, enum proto_era record,
    enum proto_era client)
{
	if (pin == PROTO_ERA_LEGACY || pin == PROTO_ERA_MODERN)
		return pin;
	if (record != PROTO_ERA_BOTH)
		return record;
	/* lists and notifications of a dual backend go in 2026-07-28:
	 * stateless, and what its server/discover describes */
	return client == PROTO_ERA_LEGACY ? PROTO_ERA_LEGACY :
	    PROTO_ERA_MODERN;
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
