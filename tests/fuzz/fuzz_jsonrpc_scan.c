/*
 * libFuzzer, differential: whatever jsonrpc_scan() accepts,
 * jsonrpc_parse() must accept as the same request or notification,
 * with an equal method, id, params, params.name and params._meta.  The
 * Legacy edge's fast path routes on what the scan says, so any
 * disagreement here is a client seeing one message and a backend
 * another.  The strict JSON scan under it is held to jansson on its own
 * too: most mutations break the envelope long before they reach a
 * duplicate key or a big number.
 *
 * The Modern hot path's proto_modern_scan_call() is held to the full
 * path (jsonrpc_parse, proto_classify, jsonrpc_params_check) the same
 * way, with the headers a client would send, plain and encoded; and
 * proto_params_strip_meta_text(), the params a 2025-11-25 backend gets
 * on that path, to proto_meta_strip() on the tree.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"
#include "proto/mheaders.h"
#include "proto/meta.h"
#include "proto/jsonspan.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* the scanned id as jansson would have loaded it */
static json_t *
scan_id_json(const struct jsonrpc_scan *s)
{
	char		 num[32];
	char		*end;
	long long	 v;

	switch (s->js_idkind) {
	case JSONRPC_SCAN_ID_STRING:
		return json_stringn(s->js_id, s->js_idlen);
	case JSONRPC_SCAN_ID_INT:
		if (s->js_idlen == 0 || s->js_idlen >= sizeof(num))
			abort();
		memcpy(num, s->js_id, s->js_idlen);
		num[s->js_idlen] = '\0';
		errno = 0;
		v = strtoll(num, &end, 10);
		if (errno != 0 || *end != '\0')
			abort();
		return json_integer(v);
	}
	abort();
}

/* what proto_json_check() accepts, jansson loads, duplicates refused */
static void
check_strict(const char *buf, size_t size)
{
	struct proto_span	 top[8], sub[8];
	struct proto_members	 ps = { sub, 8, 0, NULL, NULL };
	struct proto_members	 pm = { top, 8, 0, "params", &ps };
	json_error_t		 jerr;
	json_t			*o, *p;
	size_t			 i;

	if (proto_json_check(buf, size, &pm) == -1)
		return;
	o = json_loadb(buf, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
	    &jerr);
	if (!json_is_object(o) || json_object_size(o) != pm.pm_n)
		abort();
	for (i = 0; i < pm.pm_n; i++)
		if (top[i].ps_key == NULL)
			abort();
	p = json_object_get(o, "params");
	if (json_is_object(p) && json_object_size(p) != ps.pm_n)
		abort();
	json_decref(o);
}

static int
span_is(const char *s, size_t len, const char *want)
{
	return want != NULL && strlen(want) == len && memcmp(s, want, len) == 0;
}

/* a span's text loaded as jansson would, equal to v */
static int
span_json_is(const char *s, size_t len, const json_t *v)
{
	json_error_t	 jerr;
	json_t		*t;
	int		 eq;

	t = json_loadb(s, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, &jerr);
	eq = t != NULL && json_equal(t, v);
	json_decref(t);
	return eq;
}

/* params text stripped of its _meta is the tree stripped, renamed too */
static void
check_strip(const char *ptext, size_t plen, const json_t *params,
    const char *own)
{
	json_error_t	 jerr;
	json_t		*p, *got;
	char		*out, *ownj = NULL;
	size_t		 len;

	if (own != NULL) {
		got = json_string(own);
		if ((ownj = json_dumps(got, JSON_ENCODE_ANY)) == NULL)
			abort();
		json_decref(got);
	}
	out = proto_params_strip_meta_text(ptext, plen, ownj, ownj != NULL ?
	    strlen(ownj) : 0, &len);
	free(ownj);
	if (out == NULL)
		return;
	if ((p = json_copy((json_t *)params)) == NULL)
		abort();
	if (own != NULL && json_object_get(p, "name") != NULL)
		(void)json_object_set_new(p, "name", json_string(own));
	if (proto_params_strip_meta(p) == -1)
		abort();
	got = json_loadb(out, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
	    &jerr);
	if (got == NULL || !json_equal(got, p))
		abort();
	json_decref(got);
	json_decref(p);
	free(out);
}

/* what the Modern hot path is sure of, the full path takes the same */
static void
check_modern(const char *buf, size_t size, const struct proto_reqhdrs *h)
{
	static const struct proto_mcall zero;
	struct proto_mcall	 mc;
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 err;
	struct proto_verdict	 v;
	const json_t		*meta;
	json_t			*id;

	if (proto_modern_scan_call(buf, size, h, &mc) == 0) {
		if (memcmp(&mc, &zero, sizeof(mc)) != 0)
			abort();
		return;
	}
	if (jsonrpc_parse(buf, size, &m, NULL) == -1 ||
	    m.jm_kind != JSONRPC_REQUEST ||
	    strcmp(m.jm_method, "tools/call") != 0)
		abort();
	if (proto_classify(&m, h, &v) == -1 || v.pv_era != PROTO_ERA_MODERN)
		abort();
	proto_verdict_clear(&v);
	if (jsonrpc_params_check(&m, &err) == -1)
		abort();
	if ((id = jsonrpc_scan_id(&mc.mc_scan)) == NULL ||
	    !json_equal(id, m.jm_id))
		abort();
	json_decref(id);
	if (!span_json_is(mc.mc_scan.js_params, mc.mc_scan.js_paramslen,
	    m.jm_params))
		abort();
	meta = json_object_get(m.jm_params, "_meta");
	if (!span_json_is(mc.mc_scan.js_meta, mc.mc_scan.js_metalen, meta) ||
	    !span_json_is(mc.mc_caps, mc.mc_capslen, json_object_get(meta,
	    MCP_META_CLIENT_CAPABILITIES)))
		abort();
	/* what the hot path does not carry is never there */
	if (json_object_get(meta, "io.modelcontextprotocol/logLevel") !=
	    NULL || json_object_get(m.jm_params, "inputResponses") != NULL ||
	    json_object_get(m.jm_params, "requestState") != NULL)
		abort();
	jsonrpc_msg_clear(&m);
}

/* the Mcp-Name a client sends for params.name, plain, then encoded */
static void
check_modern_headers(const char *buf, size_t size)
{
	struct jsonrpc_scan	 s;
	struct proto_reqhdrs	 h;
	char			*name = NULL, *b64 = NULL, *enc = NULL;
	size_t			 n;

	memset(&h, 0, sizeof(h));
	h.rh_protocol_version = "2026-07-28";
	h.rh_method = "tools/call";
	check_modern(buf, size, &h);
	if (jsonrpc_scan(buf, size, &s) == 0 || s.js_name == NULL ||
	    (name = strndup(s.js_name, s.js_namelen)) == NULL)
		return;
	h.rh_name = name;
	check_modern(buf, size, &h);
	h.rh_protocol_version = " 2026-07-28\t";
	h.rh_method = "tools/call ";
	if ((b64 = proto_b64_encode(name, strlen(name), 0)) != NULL &&
	    (enc = malloc(strlen(b64) + 12)) != NULL) {
		n = strlen(b64);
		memcpy(enc, "=?base64?", 9);
		memcpy(enc + 9, b64, n);
		memcpy(enc + 9 + n, "?=", 3);
		h.rh_name = enc;
		check_modern(buf, size, &h);
	}
	free(enc);
	free(b64);
	free(name);
}

/*
 * The Legacy edge sends a prefixed tool's call as the params' text with
 * only the name's text replaced: jansson must read it as the same
 * params under the new name.
 */
static void
check_rename(const struct jsonrpc_scan *s, json_t *params)
{
	static const char	 to[] = "b_\xc3\xa9" "cho tool";
	json_t			*got, *want;
	json_error_t		 jerr;
	char			*t;
	size_t			 len;

	if ((t = jsonrpc_scan_rename(s->js_params, s->js_paramslen,
	    s->js_name, s->js_namelen, to, &len)) == NULL)
		abort();
	got = json_loadb(t, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
	    &jerr);
	if ((want = json_copy(params)) == NULL ||
	    json_object_set_new(want, "name",
	    json_string(to)) == -1 || got == NULL ||
	    !json_equal(got, want))
		abort();
	json_decref(got);
	json_decref(want);
	free(t);
	/* a name the splice cannot write as it is */
	if (jsonrpc_scan_rename(s->js_params, s->js_paramslen, s->js_name,
	    s->js_namelen, "a\"b", &len) != NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct jsonrpc_scan zero;
	struct jsonrpc_scan	 s;
	struct jsonrpc_msg	 m;
	json_error_t		 jerr;
	json_t			*id, *params, *name, *meta, *v;
	char			*dump;
	const char		*buf = (const char *)data;

	check_strict(buf, size);
	check_modern_headers(buf, size);
	if (jsonrpc_scan(buf, size, &s) == 0) {
		if (memcmp(&s, &zero, sizeof(s)) != 0)
			abort();
		return 0;
	}
	if (jsonrpc_parse(buf, size, &m, NULL) == -1)
		abort();
	if (m.jm_kind != (s.js_idkind == JSONRPC_SCAN_ID_NONE ?
	    JSONRPC_NOTIFICATION : JSONRPC_REQUEST))
		abort();
	if (s.js_methodlen == 0 ||
	    !span_is(s.js_method, s.js_methodlen, m.jm_method))
		abort();

	if (s.js_idkind == JSONRPC_SCAN_ID_NONE) {
		if (s.js_id != NULL || m.jm_id != NULL)
			abort();
	} else {
		if ((id = scan_id_json(&s)) == NULL)
			abort();
		if (!json_equal(id, m.jm_id))
			abort();
		json_decref(id);
		/* an integer's text is the one jansson writes back */
		if (s.js_idkind == JSONRPC_SCAN_ID_INT) {
			dump = json_dumps(m.jm_id, JSON_ENCODE_ANY);
			if (dump == NULL || !span_is(s.js_id, s.js_idlen, dump))
				abort();
			free(dump);
		}
	}

	if (s.js_params == NULL) {
		if (m.jm_params != NULL)
			abort();
	} else {
		params = json_loadb(s.js_params, s.js_paramslen,
		    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
		if (params == NULL || !json_equal(params, m.jm_params))
			abort();
		json_decref(params);
		check_strip(s.js_params, s.js_paramslen, m.jm_params, NULL);
		check_strip(s.js_params, s.js_paramslen, m.jm_params,
		    "b_\"x\"");
	}

	name = m.jm_params != NULL ? json_object_get(m.jm_params, "name") :
	    NULL;
	if (s.js_name == NULL) {
		if (name != NULL)
			abort();
	} else if (!json_is_string(name) ||
	    json_string_length(name) != s.js_namelen ||
	    memcmp(json_string_value(name), s.js_name, s.js_namelen) != 0)
		abort();
	else
		check_rename(&s, m.jm_params);


	meta = m.jm_params != NULL ? json_object_get(m.jm_params, "_meta") :
	    NULL;
	if (s.js_meta == NULL) {
		if (meta != NULL)
			abort();
	} else {
		v = json_loadb(s.js_meta, s.js_metalen,
		    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL,
		    &jerr);
		if (v == NULL || !json_equal(v, meta))
			abort();
		json_decref(v);
	}

	jsonrpc_msg_clear(&m);
	return 0;
}
