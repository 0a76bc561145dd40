/*
 * Which era a POST body speaks (MCP 2026-07-28, Versioning, section
 * Backward Compatibility; body first: a session id does not outweigh the
 * _meta), and the Modern checks answered with 400 before dispatch
 * (Streamable HTTP, section Server Validation): the
 * _meta envelope, the standard headers, then the protocol version.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"
#include "proto/mheaders.h"

#define SNIP	56	/* room for a peer's string quoted in a message */

static int	 era_refuse(struct proto_verdict *, int, int, const char *,
		    ...) __attribute__((format(printf, 4, 5)));
static const char *era_snip(char *, size_t, const char *, size_t);
static const char *era_trim(const char *, size_t *);
static int	 era_eq(const char *, size_t, const char *, size_t);
static int	 era_version_modern(const char *, size_t);
static const char *era_envelope_problem(const json_t *, int);
static int	 era_claim_modern(const json_t *, const json_t *);
static int	 era_name_check(const struct jsonrpc_msg *,
		    const struct proto_reqhdrs *, struct proto_verdict *);
static int	 era_modern(const struct jsonrpc_msg *, const json_t *,
		    const json_t *, const struct proto_reqhdrs *,
		    struct proto_verdict *);

static int
era_refuse(struct proto_verdict *v, int http, int code, const char *fmt, ...)
{
	va_list ap;

	v->pv_http = http;
	v->pv_code = code;
	va_start(ap, fmt);
	(void)vsnprintf(v->pv_msg, sizeof(v->pv_msg), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * A peer's string made safe to quote: printable ASCII only, cut short.
 * Keeps pv_msg valid UTF-8 whatever the peer sent, so the error builder
 * never falls back to a bare code name.
 */
static const char *
era_snip(char *dst, size_t dstlen, const char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 4 < dstlen; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (i < n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
	return dst;
}

/* RFC 9110 field values exclude leading and trailing OWS */
static const char *
era_trim(const char *s, size_t *len)
{
	size_t n;

	*len = 0;
	if (s == NULL)
		return NULL;
	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	*len = n;
	return s;
}

static int
era_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* the SDKs' era rule: a version sorting at or after 2026-07-28 */
static int
era_version_modern(const char *v, size_t n)
{
	static const char	first[] = MCP_VERSION_MODERN;
	size_t			flen = sizeof(first) - 1;
	int			c;

	c = memcmp(v, first, n < flen ? n : flen);
	return c > 0 || (c == 0 && n >= flen);
}

/*
 * What is wrong with a Modern request's _meta, or NULL.  A notification
 * only needs its claim to be a string: notification params carry no
 * client capabilities.
 */
static const char *
era_envelope_problem(const json_t *meta, int request)
{
	const json_t *info, *cur;

	if (!json_is_string(json_object_get(meta, MCP_META_PROTOCOL_VERSION)))
		return "\"" MCP_META_PROTOCOL_VERSION "\" must be a string";
	if (!request)
		return NULL;
	cur = json_object_get(meta, MCP_META_CLIENT_CAPABILITIES);
	if (cur == NULL)
		return "\"" MCP_META_CLIENT_CAPABILITIES "\" is missing "
		    "({} declares no optional capability)";
	if (!json_is_object(cur))
		return "\"" MCP_META_CLIENT_CAPABILITIES "\" must be an object";
	/* optional, but when given it is an Implementation */
	if ((info = json_object_get(meta, MCP_META_CLIENT_INFO)) != NULL &&
	    (!json_is_object(info) ||
	    !json_is_string(json_object_get(info, "name")) ||
	    !json_is_string(json_object_get(info, "version"))))
		return "\"" MCP_META_CLIENT_INFO "\" must be an object with "
		    "string \"name\" and \"version\"";
	return NULL;
}

/* an initialize is Modern only with a well-formed Modern-era claim */
static int
era_claim_modern(const json_t *meta, const json_t *claim)
{
	return json_is_string(claim) &&
	    era_version_modern(json_string_value(claim),
	    json_string_length(claim)) &&
	    era_envelope_problem(meta, 1) == NULL;
}

static int
era_name_check(const struct jsonrpc_msg *m, const struct proto_reqhdrs *h,
    struct proto_verdict *v)
{
	const json_t		*body;
	const char		*bv = NULL, *field;
	char			*dec = NULL, s1[SNIP], s2[SNIP];
	size_t			 bvlen = 0;

	/* the body field Mcp-Name mirrors (Streamable HTTP, section
	 * Standard Request Headers; taskId: the tasks extension) */
	if (m->jm_mm == NULL || (field = m->jm_mm->mm_hname) == NULL)
		return 0;
	body = json_object_get(m->jm_params, field);
	if (json_is_string(body)) {
		bv = json_string_value(body);
		bvlen = json_string_length(body);
	}
	/* a body without the field is the dispatcher's -32602 */
	if (h->rh_name == NULL) {
		if (bv == NULL)
			return 0;
		return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
		    "the Mcp-Name header is missing: %s needs it to equal "
		    "params.%s (\"%s\")", m->jm_method, field,
		    era_snip(s1, sizeof(s1), bv, bvlen));
	}
	if (proto_hdr_decode(h->rh_name, &dec) == -1) {
		if (errno == ENOMEM)
			return era_refuse(v, 500, JSONRPC_INTERNAL_ERROR,
			    "Internal error: out of memory");
		return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
		    "the Mcp-Name header is malformed (control or non-ASCII "
		    "characters, or a bad =?base64?...?= value)");
	}
	if (bv != NULL && !era_eq(dec, strlen(dec), bv, bvlen)) {
		(void)era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
		    "the Mcp-Name header \"%s\" does not match params.%s "
		    "\"%s\"", era_snip(s1, sizeof(s1), dec, strlen(dec)),
		    field, era_snip(s2, sizeof(s2), bv, bvlen));
		free(dec);
		return -1;
	}
	free(dec);
	return 0;
}

/* the Modern path: the claim is present (json_t *claim, any type) */
static int
era_modern(const struct jsonrpc_msg *m, const json_t *meta,
    const json_t *claim, const struct proto_reqhdrs *h,
    struct proto_verdict *v)
{
	const char	*why, *cv, *hv, *mv;
	char		 s1[SNIP], s2[SNIP];
	size_t		 cvlen, hvlen, mvlen;
	int		 req = m->jm_kind == JSONRPC_REQUEST;

	v->pv_era = PROTO_ERA_MODERN;
	if ((why = era_envelope_problem(meta, req)) != NULL)
		return era_refuse(v, 400, JSONRPC_INVALID_PARAMS,
		    "Invalid params: params._meta for protocol 2026-07-28: %s",
		    why);
	cv = json_string_value(claim);
	cvlen = json_string_length(claim);

	/* header checks come before the version check: -32020 wins */
	hv = era_trim(h->rh_protocol_version, &hvlen);
	if (hv == NULL) {
		if (req)
			return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
			    "the MCP-Protocol-Version header is missing (it "
			    "must equal params._meta[\"%s\"], \"%s\")",
			    MCP_META_PROTOCOL_VERSION,
			    era_snip(s1, sizeof(s1), cv, cvlen));
	} else if (!era_eq(hv, hvlen, cv, cvlen))
		return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
		    "the MCP-Protocol-Version header \"%s\" does not match "
		    "params._meta[\"%s\"] \"%s\"",
		    era_snip(s1, sizeof(s1), hv, hvlen),
		    MCP_META_PROTOCOL_VERSION,
		    era_snip(s2, sizeof(s2), cv, cvlen));
	mv = era_trim(h->rh_method, &mvlen);
	if (mv == NULL) {
		if (req)
			return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
			    "the Mcp-Method header is missing (it must equal "
			    "the method, \"%s\")", era_snip(s1, sizeof(s1),
			    m->jm_method, strlen(m->jm_method)));
	} else if (!era_eq(mv, mvlen, m->jm_method, strlen(m->jm_method)))
		return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
		    "the Mcp-Method header \"%s\" does not match the method "
		    "\"%s\" (header values are case-sensitive)",
		    era_snip(s1, sizeof(s1), mv, mvlen),
		    era_snip(s2, sizeof(s2), m->jm_method,
		    strlen(m->jm_method)));
	if (req && era_name_check(m, h, v) == -1)
		return -1;

	/* a Legacy version inside the claim is unsupported here too */
	if (!era_eq(cv, cvlen, MCP_VERSION_MODERN,
	    sizeof(MCP_VERSION_MODERN) - 1)) {
		v->pv_data = json_pack("{s:[s],s:s%}", "supported",
		    MCP_VERSION_MODERN, "requested", cv, cvlen);
		if (v->pv_data == NULL)
			return era_refuse(v, 500, JSONRPC_INTERNAL_ERROR,
			    "Internal error: out of memory");
		return era_refuse(v, 400, MCP_ERR_UNSUPPORTED_VERSION,
		    "Unsupported protocol version \"%s\": supported is "
		    MCP_VERSION_MODERN " (" MCP_VERSION_LEGACY " and older "
		    "through initialize, without the _meta envelope)",
		    era_snip(s1, sizeof(s1), cv, cvlen));
	}
	if (m->jm_mm != NULL && m->jm_mm->mm_id == MCP_M_INITIALIZE)
		return era_refuse(v, 404, JSONRPC_METHOD_NOT_FOUND,
		    "Method not found: initialize does not exist in protocol "
		    MCP_VERSION_MODERN " (call server/discover, or send "
		    "initialize without the _meta envelope for "
		    MCP_VERSION_LEGACY ")");
	return 0;
}

int
proto_classify(const struct jsonrpc_msg *m, const struct proto_reqhdrs *h,
    struct proto_verdict *v)
{
	static const struct proto_reqhdrs none;
	const json_t	*meta = NULL, *claim = NULL;
	const char	*hv;
	char		 s1[SNIP];
	size_t		 hvlen;
	int		 modern_hdr;

	memset(v, 0, sizeof(*v));
	v->pv_era = PROTO_ERA_LEGACY;
	if (h == NULL)
		h = &none;
	if (m == NULL)
		return era_refuse(v, 400, JSONRPC_INVALID_REQUEST,
		    "Invalid Request: no JSON-RPC message");
	/* only sessions have server requests to answer */
	if (m->jm_kind == JSONRPC_RESPONSE || m->jm_kind == JSONRPC_ERROR)
		return 0;
	if (m->jm_method == NULL ||
	    (m->jm_kind != JSONRPC_REQUEST &&
	    m->jm_kind != JSONRPC_NOTIFICATION))
		return era_refuse(v, 400, JSONRPC_INVALID_REQUEST,
		    "Invalid Request: not a JSON-RPC request or notification");

	if (json_is_object(m->jm_params)) {
		meta = json_object_get(m->jm_params, "_meta");
		if (json_is_object(meta))
			claim = json_object_get(meta,
			    MCP_META_PROTOCOL_VERSION);
		else
			meta = NULL;
	}
	hv = era_trim(h->rh_protocol_version, &hvlen);
	modern_hdr = hv != NULL && era_version_modern(hv, hvlen);

	if (m->jm_mm != NULL && m->jm_mm->mm_id == MCP_M_INITIALIZE &&
	    !era_claim_modern(meta, claim)) {
		if (!modern_hdr)
			return 0;
		v->pv_era = PROTO_ERA_MODERN;
		return era_refuse(v, 400, MCP_ERR_HEADER_MISMATCH,
		    "initialize is the %s handshake but the "
		    "MCP-Protocol-Version header names \"%s\"",
		    MCP_VERSION_LEGACY, era_snip(s1, sizeof(s1), hv, hvlen));
	}
	if (claim != NULL)
		return era_modern(m, meta, claim, h, v);
	/* never a silent fall back to Legacy, session header or not */
	if (modern_hdr && m->jm_kind == JSONRPC_REQUEST) {
		v->pv_era = PROTO_ERA_MODERN;
		return era_refuse(v, 400, JSONRPC_INVALID_PARAMS,
		    "Invalid params: the MCP-Protocol-Version header names "
		    "\"%s\" but params._meta[\"%s\"] is missing",
		    era_snip(s1, sizeof(s1), hv, hvlen),
		    MCP_META_PROTOCOL_VERSION);
	}
	return 0;
}

void
proto_verdict_clear(struct proto_verdict *v)
{
	if (v == NULL)
		return;
	json_decref(v->pv_data);
	memset(v, 0, sizeof(*v));
}
