/*
 * HTTP header values as MCP's transports read them (headers.c).
 */
#ifndef VMCPD_PROTO_HEADERS_H
#define VMCPD_PROTO_HEADERS_H

#include <stddef.h>
#include <stdint.h>

/* HTTP header rules (MCP 2025-11-25, Transports, Streamable HTTP) */
/* 1 if an Accept header value lists the media type (or a wildcard that
 * covers it, with q > 0), else 0 */
int	 proto_accept_has(const char *accept, const char *type);
/* 1 if Accept lists type (exactly, q > 0) before other, else 0 */
int	 proto_accept_prefers(const char *accept, const char *type,
	    const char *other);
/* narrow [*v, *e) to the field value without leading/trailing OWS */
void	 proto_ows_trim(const char **v, const char **e);
/*
 * One header line of a backend's response, without its line end: NULL
 * if it is a field line (or an obs-fold continuation) vmcpd may use,
 * or why not: no field name, a name that is no token, a NUL or other
 * control character but HTAB (what the front refuses in a request).
 */
const char *proto_field_line_problem(const char *line, size_t len);
/* the first control character but HTAB (or DEL) in v[0, n), or NULL */
const char *proto_value_ctl(const char *v, size_t n);
/* the first control character but HTAB (or DEL) in [p, end), CR and LF
 * included, or end: where a well-formed field line's value stops */
const char *proto_value_stop(const char *p, const char *end);
/* the first byte in [p, end) that is no RFC 6750 2.1 b64token
 * character (ALPHA, DIGIT, "-", ".", "_", "~", "+", "/"; the "="
 * padding after them is the caller's), or end */
const char *proto_b64token_stop(const char *p, const char *end);
/* the value of a hexadecimal digit, or -1 */
int	 proto_hex_digit(int c);
/* v in base 10 or 16 (lower case) written backwards from end, which is
 * not written; returns where the digits start.  No printf on hot paths. */
char	*proto_utoa(char *end, uint64_t v, int base);
/* 1 if c is an RFC 9110 tchar (a token's character) */
extern const unsigned char proto_tchar[256];
static inline int
proto_is_tchar(char c)
{
	return proto_tchar[(unsigned char)c];
}
/* 1 if a Content-Type header value is application/json (params ok) */
int	 proto_content_type_is_json(const char *ctype);
/* 1 if the value is a syntactically valid session id: 1..128 chars of
 * visible ASCII 0x21-0x7e */
int	 proto_session_id_valid(const char *sid);
/*
 * 1 if name[0, len) is a tool name as MCP 2025-11-25 has them ("Tool
 * Names"): 1 to 128 characters of A-Z a-z 0-9 _ - .
 */
#define PROTO_TOOL_NAME_MAX	128
int	 proto_tool_name_valid(const char *name, size_t len);
/* a Legacy version vmcpd serves, or NULL: used to echo or pick */
const char *proto_legacy_version_pick(const char *requested);
/* 1 if the version string is one vmcpd knows at all (either era):
 * proto_era_of_version() is not PROTO_ERA_UNKNOWN */
int	 proto_version_known(const char *version);

#endif /* VMCPD_PROTO_HEADERS_H */
