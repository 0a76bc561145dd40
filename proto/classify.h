#ifndef VMCPD_CLASSIFY_H
#define VMCPD_CLASSIFY_H

#include <stddef.h>

#include <jansson.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"

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

#endif /* VMCPD_CLASSIFY_H */
