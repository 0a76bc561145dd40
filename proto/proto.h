/*
 * MCP and JSON-RPC wire rules: pure functions, no I/O, no libevent,
 * unit-tested and fuzzed.  JSON values are jansson's.  This header: the
 * error codes, the revisions and their eras; the rest by concern in
 * proto/: jsonrpc.h, headers.h, http_req.h, sse.h, classify.h,
 * mheaders.h, mrequest.h, probe.h, cursor.h, meta.h, jsonspan.h.
 */
#ifndef VMCPD_PROTO_H
#define VMCPD_PROTO_H

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
/* the tasks extension's id (SEP-2663), in capabilities' extensions */
#define MCP_TASKS_EXTENSION	"io.modelcontextprotocol/tasks"
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

#endif /* VMCPD_PROTO_H */
