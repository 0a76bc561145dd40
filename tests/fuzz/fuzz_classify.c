/*
 * libFuzzer: era classification and the Modern header rules on
 * arbitrary messages and headers.  Input: one byte saying which headers
 * are present, then NUL-separated fields: the JSON body,
 * MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, then
 * Mcp-Param-* name/value pairs.  Verdicts must be well formed and
 * repeatable; nothing may crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"
#include "proto/mheaders.h"
#include "proto/meta.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define NFIELD 12

struct fields {
	char	*f_s[NFIELD];
	size_t	 f_n;
};

static const char *
param_cb(void *arg, const char *name)
{
	struct fields	*f = arg;
	size_t		 i;

	for (i = 5; i + 1 < f->f_n; i += 2)
		if (strcasecmp(f->f_s[i], name) == 0)
			return f->f_s[i + 1];
	return NULL;
}

static void
check_verdict(int rc, const struct proto_verdict *v)
{
	size_t i;

	if (v->pv_era != PROTO_ERA_LEGACY && v->pv_era != PROTO_ERA_MODERN)
		abort();
	if (rc == 0) {
		if (v->pv_http != 0 || v->pv_code != 0 || v->pv_data != NULL ||
		    v->pv_msg[0] != '\0')
			abort();
		return;
	}
	if (rc != -1)
		abort();
	switch (v->pv_code) {
	case JSONRPC_INVALID_REQUEST:
	case JSONRPC_INVALID_PARAMS:
	case MCP_ERR_HEADER_MISMATCH:
		if (v->pv_http != 400 || v->pv_data != NULL)
			abort();
		break;
	case MCP_ERR_UNSUPPORTED_VERSION:
		if (v->pv_http != 400 || !json_is_array(json_object_get(
		    v->pv_data, "supported")) || !json_is_string(
		    json_object_get(v->pv_data, "requested")))
			abort();
		break;
	case JSONRPC_METHOD_NOT_FOUND:
		if (v->pv_http != 404 || v->pv_era != PROTO_ERA_MODERN)
			abort();
		break;
	case JSONRPC_INTERNAL_ERROR:
		if (v->pv_http != 500)
			abort();
		break;
	default:
		abort();
	}
	if (v->pv_code != JSONRPC_INVALID_REQUEST &&
	    v->pv_era != PROTO_ERA_MODERN)
		abort();	/* Legacy is never refused here */
	if (memchr(v->pv_msg, '\0', sizeof(v->pv_msg)) == NULL ||
	    v->pv_msg[0] == '\0')
		abort();
	for (i = 0; v->pv_msg[i] != '\0'; i++)
		if ((unsigned char)v->pv_msg[i] < 0x20 ||
		    (unsigned char)v->pv_msg[i] >= 0x7f)
			abort();
}

static void
check_header(const char *raw)
{
	char *dec, *enc, *again;

	if (proto_hdr_decode(raw, &dec) == -1) {
		if (dec != NULL || proto_hdr_is(raw, raw, strlen(raw)) != 0)
			abort();
		return;
	}
	/* the copy-free compare agrees with decoding */
	if (proto_hdr_is(raw, dec, strlen(dec)) != 1 ||
	    proto_hdr_is(raw, raw, strlen(raw)) != (strcmp(raw, dec) == 0))
		abort();
	if ((enc = proto_hdr_encode(dec)) == NULL ||
	    proto_hdr_decode(enc, &again) == -1 || strcmp(again, dec) != 0)
		abort();
	free(again);
	free(enc);
	free(dec);
}

static void
check_body(const struct jsonrpc_msg *m, const struct proto_reqhdrs *h)
{
	struct proto_verdict	 v, v2;
	json_t			*schema, *map, *meta, *r;
	const char		*k;
	json_t			*val;
	int			 rc;

	rc = proto_classify(m, h, &v);
	check_verdict(rc, &v);
	if (m->jm_kind == JSONRPC_RESPONSE || m->jm_kind == JSONRPC_ERROR) {
		if (rc != 0 || v.pv_era != PROTO_ERA_LEGACY)
			abort();
	}
	if (proto_classify(m, h, &v2) != rc || v2.pv_era != v.pv_era ||
	    v2.pv_http != v.pv_http || v2.pv_code != v.pv_code ||
	    strcmp(v2.pv_msg, v.pv_msg) != 0 ||
	    (v.pv_data == NULL) != (v2.pv_data == NULL) ||
	    (v.pv_data != NULL && !json_equal(v2.pv_data, v.pv_data)))
		abort();
	proto_verdict_clear(&v);
	proto_verdict_clear(&v2);
	if (v.pv_data != NULL || v.pv_http != 0)
		abort();

	/* params.inputSchema (else params) as a tool's schema */
	if ((schema = json_object_get(m->jm_params, "inputSchema")) == NULL)
		schema = m->jm_params;
	if (proto_x_mcp_headers(schema, &map, NULL, 0) == 0) {
		if (!json_is_object(map))
			abort();
		rc = proto_param_headers_check(map,
		    json_object_get(m->jm_params, "arguments"), h, &v);
		if ((rc == 0 && v.pv_http != 0) || (rc == -1 &&
		    v.pv_code != MCP_ERR_HEADER_MISMATCH &&
		    v.pv_code != JSONRPC_INTERNAL_ERROR))
			abort();
		json_decref(map);
	} else if (map != NULL)
		abort();

	/* _meta: nothing reserved survives the strip */
	meta = json_deep_copy(json_object_get(m->jm_params, "_meta"));
	proto_meta_strip(meta);
	json_object_foreach(meta, k, val)
		if (proto_meta_reserved(k))
			abort();
	json_decref(meta);

	if (m->jm_params != NULL) {
		r = proto_modern_result(json_deep_copy(m->jm_params), NULL,
		    json_object_get(m->jm_params, "serverInfo"), 0, "public");
		if (r == NULL || !json_is_string(json_object_get(r,
		    "resultType")))
			abort();
		json_decref(r);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fields		 f;
	struct proto_reqhdrs	 h;
	struct jsonrpc_msg	 m;
	const uint8_t		*p, *end, *nul;
	size_t			 i, len;
	unsigned		 mask;

	if (size < 1)
		return 0;
	mask = data[0];
	memset(&f, 0, sizeof(f));
	/* exact-size copies of each field, so ASan sees overreads */
	for (p = data + 1, end = data + size; f.f_n < NFIELD && p <= end;) {
		nul = memchr(p, '\0', (size_t)(end - p));
		len = nul != NULL ? (size_t)(nul - p) : (size_t)(end - p);
		if ((f.f_s[f.f_n] = malloc(len + 1)) == NULL)
			abort();
		memcpy(f.f_s[f.f_n], p, len);
		f.f_s[f.f_n][len] = '\0';
		f.f_n++;
		if (nul == NULL)
			break;
		p = nul + 1;
	}

	memset(&h, 0, sizeof(h));
	h.rh_protocol_version = mask & 1 && f.f_n > 1 ? f.f_s[1] : NULL;
	h.rh_method = mask & 2 && f.f_n > 2 ? f.f_s[2] : NULL;
	h.rh_name = mask & 4 && f.f_n > 3 ? f.f_s[3] : NULL;
	h.rh_session = mask & 8 && f.f_n > 4 ? f.f_s[4] : NULL;
	if (mask & 16) {
		h.rh_param = param_cb;
		h.rh_arg = &f;
	}
	for (i = 1; i < f.f_n; i++)
		check_header(f.f_s[i]);

	if (f.f_n > 0 &&
	    jsonrpc_parse(f.f_s[0], strlen(f.f_s[0]), &m, NULL) == 0) {
		check_body(&m, &h);
		check_body(&m, NULL);
		jsonrpc_msg_clear(&m);
	}
	for (i = 0; i < f.f_n; i++)
		free(f.f_s[i]);
	return 0;
}
