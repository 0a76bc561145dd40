#ifndef VMCPD_MREQUEST_H
#define VMCPD_MREQUEST_H

#include <stddef.h>

#include <jansson.h>

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
/* caps declare the tasks extension (MCP_TASKS_EXTENSION) */
int	 proto_caps_tasks(const json_t *caps);
/* a copy of caps without the tasks extension (NULL: no memory): what a
 * hop that cannot carry a task declares */
json_t	*proto_caps_without_tasks(const json_t *caps);
/* the client capability a server-to-client request (or input request)
 * needs: "elicitation", "sampling", "roots", or NULL for another method */
const char *proto_request_capability(const char *method);

#endif /* VMCPD_MREQUEST_H */
