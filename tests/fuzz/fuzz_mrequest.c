/*
 * libFuzzer: what vmcpd builds for and reads from a 2026-07-28 backend.
 * Input: a JSON value (a tool's inputSchema, or a backend's answer),
 * NUL, a JSON value (the call's arguments, or request params).  Checks
 * the probe tables are total, the request envelope always carries this
 * hop's version, and every Mcp-Param-* set vmcpd builds is accepted by
 * its own check (what it sends, a 2026-07-28 server must accept).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/proto.h"
#include "proto/classify.h"
#include "proto/mheaders.h"
#include "proto/mrequest.h"
#include "proto/probe.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *
hdr_lookup(void *arg, const char *name)
{
	const char	*k;
	json_t		*v;

	json_object_foreach((json_t *)arg, k, v)
		if (strcasecmp(k, name) == 0)
			return json_string_value(v);
	return NULL;
}

/* a string holding NUL cannot travel in a header at all */
static int
has_nul(const json_t *j)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	if (json_is_string(j))
		return strlen(json_string_value(j)) != json_string_length(j);
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if (has_nul(v))
				return 1;
	}
	if (json_is_array(j))
		json_array_foreach(j, i, v)
			if (has_nul(v))
				return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long statuses[] = { 200, 400, 401, 404, 429, 503 };
	struct proto_reqhdrs	 h;
	struct proto_verdict	 v;
	json_t			*a, *b, *map = NULL, *hdrs = NULL, *p;
	const uint8_t		*nul;
	char			 why[256];
	size_t			 alen, i;
	enum proto_era		 o;

	if ((nul = memchr(data, '\0', size)) == NULL)
		return 0;
	alen = (size_t)(nul - data);
	a = json_loadb((const char *)data, alen, JSON_DECODE_ANY, NULL);
	b = json_loadb((const char *)nul + 1, size - alen - 1,
	    JSON_DECODE_ANY, NULL);

	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		o = proto_probe_outcome(1, statuses[i], a, why, sizeof(why));
		if (o != PROTO_ERA_LEGACY && o != PROTO_ERA_MODERN &&
		    o != PROTO_ERA_UNKNOWN && o != PROTO_ERA_BOTH)
			abort();
		/* the initialize after a Modern verdict never says Legacy */
		o = proto_probe_initialize(1, statuses[i], a, why,
		    sizeof(why));
		if (o != PROTO_ERA_MODERN && o != PROTO_ERA_UNKNOWN &&
		    o != PROTO_ERA_BOTH)
			abort();
	}
	(void)proto_modern_error(a);

	if ((p = proto_modern_params(b, a, a, "info")) != NULL) {
		if (strcmp(json_string_value(json_object_get(json_object_get(
		    p, "_meta"), MCP_META_PROTOCOL_VERSION)),
		    MCP_VERSION_MODERN) != 0)
			abort();
		(void)proto_modern_name("tools/call", p);
		json_decref(p);
	}

	if (proto_x_mcp_headers(a, &map, why, sizeof(why)) == 0 &&
	    proto_param_headers_build(map, b, &hdrs) == 0 && !has_nul(b)) {
		memset(&h, 0, sizeof(h));
		h.rh_param = hdr_lookup;
		h.rh_arg = hdrs;
		if (proto_param_headers_check(map, b, &h, &v) != 0 &&
		    v.pv_http != 500)
			abort();
		proto_verdict_clear(&v);
	}
	json_decref(hdrs);
	json_decref(map);
	json_decref(a);
	json_decref(b);
	return 0;
}
