/*
 * MCP 2026-07-28's Mcp-Name and Mcp-Param-* header values
 * (mheaders.c), and base64.
 */
#ifndef VMCPD_MHEADERS_H
#define VMCPD_MHEADERS_H

#include <stddef.h>

#include <jansson.h>

struct proto_reqhdrs;	/* proto/classify.h */
struct proto_verdict;

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


/* RFC 4648 base64, strict on decode (canonical padding, zero pad bits,
 * no whitespace); url: the URL-safe alphabet without padding */
char	*proto_b64_encode(const void *, size_t, int url);
/* the same into out (outlen: room for it and a NUL): its length, or 0
 * when it does not fit */
size_t	 proto_b64_encode_buf(const void *, size_t, int url, char *out,
	    size_t outlen);
int	 proto_b64_decode(const char *, size_t, int url, unsigned char **out,
	    size_t *outlen);

#endif /* VMCPD_MHEADERS_H */
