/*
 * The fast path for a client's POST: the envelope rules of
 * jsonrpc_parse() checked on the spans of proto_json_check(), without
 * building a tree.  It answers "surely accepted" or "not sure", never
 * "refused": every doubt goes to jsonrpc_parse(), which knows the
 * exact error to answer with.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/classify.h"
#include "proto/mheaders.h"
#include "proto/jsonspan.h"

#define SCAN_MEMBERS	16	/* at the top, and in params */

static int
jsonrpc_scan_key(const struct proto_span *m, const char *key)
{
	size_t len = strlen(key);

	return m->ps_keylen == len && memcmp(m->ps_key, key, len) == 0;
}

/* a string value without escapes: its text inside the quotes */
static int
jsonrpc_scan_plain(const struct proto_span *m, const char **s, size_t *len)
{
	if (m->ps_val[0] != '"' ||
	    memchr(m->ps_val, '\\', m->ps_vallen) != NULL)
		return -1;
	*s = m->ps_val + 1;
	*len = m->ps_vallen - 2;
	return 0;
}

/*
 * An integer (the scan checked its syntax and range) in the form
 * jansson dumps it: a caller may copy the text instead of the value.
 */
static int
jsonrpc_scan_int(const struct proto_span *m)
{
	size_t i;

	if (m->ps_vallen == 2 && memcmp(m->ps_val, "-0", 2) == 0)
		return -1;
	for (i = m->ps_val[0] == '-'; i < m->ps_vallen; i++)
		if (m->ps_val[i] < '0' || m->ps_val[i] > '9')
			return -1;
	return 0;
}

/*
 * jsonrpc_scan(), params' members also in sub (*nsub, 0 if none) and,
 * if meta is not NULL, params._meta's in meta (its pm_n 0 unless
 * params._meta is an object; above its pm_max when they did not fit)
 */
static int
jsonrpc_scan_sub(const char *buf, size_t len, struct jsonrpc_scan *out,
    struct proto_span *sub, size_t *nsub, struct proto_members *meta)
{
	struct proto_span	 top[SCAN_MEMBERS];
	struct proto_members	 ps = { sub, SCAN_MEMBERS, 0, "_meta", meta };
	struct proto_members	 pm = { top, SCAN_MEMBERS, 0, "params", &ps };
	const struct proto_span	*m, *id = NULL, *method = NULL;
	const struct proto_span	*params = NULL;
	size_t			 i;
	int			 version = 0;

	memset(out, 0, sizeof(*out));
	*nsub = 0;
	if (meta != NULL)
		meta->pm_n = 0;
	if (proto_json_check(buf, len, &pm) == -1)
		goto fail;
	for (i = 0; i < pm.pm_n; i++) {
		m = &top[i];
		if (jsonrpc_scan_key(m, "jsonrpc")) {
			/* "2\u002e0" is 2.0 too: rare, left to jansson */
			if (m->ps_vallen != 5 ||
			    memcmp(m->ps_val, "\"2.0\"", 5) != 0)
				goto fail;
			version = 1;
		} else if (jsonrpc_scan_key(m, "method"))
			method = m;
		else if (jsonrpc_scan_key(m, "id"))
			id = m;
		else if (jsonrpc_scan_key(m, "params"))
			params = m;
		else if (jsonrpc_scan_key(m, "result") ||
		    jsonrpc_scan_key(m, "error"))
			goto fail;
	}
	if (!version || method == NULL || jsonrpc_scan_plain(method,
	    &out->js_method, &out->js_methodlen) == -1 ||
	    out->js_methodlen == 0)
		goto fail;
	/* the method's entry, once: the edges switch on it */
	out->js_mm = mcp_method_lookup(out->js_method, out->js_methodlen);

	if (id != NULL) {
		if (jsonrpc_scan_plain(id, &out->js_id, &out->js_idlen) == 0)
			out->js_idkind = JSONRPC_SCAN_ID_STRING;
		else if (jsonrpc_scan_int(id) == 0) {
			out->js_idkind = JSONRPC_SCAN_ID_INT;
			out->js_id = id->ps_val;
			out->js_idlen = id->ps_vallen;
		} else
			goto fail;
	}

	if (params != NULL) {
		/* ps holds its members only when it is an object */
		if (params->ps_val[0] != '{')
			goto fail;
		out->js_params = params->ps_val;
		out->js_paramslen = params->ps_vallen;
		for (i = 0; i < ps.pm_n; i++) {
			m = &sub[i];
			if (jsonrpc_scan_key(m, "name") &&
			    jsonrpc_scan_plain(m, &out->js_name,
			    &out->js_namelen) == -1)
				goto fail;
			if (jsonrpc_scan_key(m, "_meta")) {
				out->js_meta = m->ps_val;
				out->js_metalen = m->ps_vallen;
			}
			if (jsonrpc_scan_key(m, "task"))
				out->js_task = 1;
		}
		*nsub = ps.pm_n;
	}
	return 1;

fail:
	memset(out, 0, sizeof(*out));
	*nsub = 0;
	return 0;
}

int
jsonrpc_scan(const char *buf, size_t len, struct jsonrpc_scan *out)
{
	struct proto_span	sub[SCAN_MEMBERS];
	size_t			nsub;

	return jsonrpc_scan_sub(buf, len, out, sub, &nsub, NULL);
}

/* a header value without its RFC 9110 OWS, as proto_classify() reads it */
static int
jsonrpc_scan_hdr_is(const char *h, const char *want, size_t wlen)
{
	size_t n;

	if (h == NULL)
		return 0;
	while (*h == ' ' || *h == '\t')
		h++;
	n = strlen(h);
	while (n > 0 && (h[n - 1] == ' ' || h[n - 1] == '\t'))
		n--;
	return n == wlen && memcmp(h, want, wlen) == 0;
}

/* an integer: the strict scan checked the syntax and range already */
static int
jsonrpc_scan_is_int(const struct proto_span *m)
{
	size_t i;

	for (i = 0; i < m->ps_vallen; i++)
		if (m->ps_val[i] == '.' || m->ps_val[i] == 'e' ||
		    m->ps_val[i] == 'E')
			return 0;
	return m->ps_val[0] == '-' || (m->ps_val[0] >= '0' &&
	    m->ps_val[0] <= '9');
}

/* clientInfo as era_envelope_problem() wants it: string name, version */
static int
jsonrpc_scan_info_ok(const struct proto_span *info)
{
	struct proto_span	 m[SCAN_MEMBERS];
	const struct proto_span	*name, *version;
	size_t			 n;

	if (info->ps_val[0] != '{' || proto_json_members(info->ps_val,
	    info->ps_vallen, m, SCAN_MEMBERS, &n) == -1)
		return 0;
	name = proto_json_member(m, n, "name");
	version = proto_json_member(m, n, "version");
	return name != NULL && name->ps_val[0] == '"' &&
	    version != NULL && version->ps_val[0] == '"';
}

/*
 * The checks of proto_classify() and jsonrpc_params_check() on the
 * spans, for the one request the Modern hot path takes.  Anything that
 * could be refused, or that the hot path does not carry (logLevel, the
 * MRTR retry's members, the members jsonrpc_params_check() reads for
 * "\u0000"), is "not sure".
 */
/* keys and their lengths: a member is matched by its length first */
struct scan_key {
	const char	*sk_key;
	size_t		 sk_len;
};
#define SCAN_KEY(k)	{ k, sizeof(k) - 1 }

/* the index in keys[n] of a member's key, or -1 */
static int
jsonrpc_scan_which(const struct proto_span *m, const struct scan_key *keys,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m->ps_keylen == keys[i].sk_len &&
		    memcmp(m->ps_key, keys[i].sk_key, m->ps_keylen) == 0)
			return (int)i;
	return -1;
}

int
proto_modern_scan_call(const char *buf, size_t len,
    const struct proto_reqhdrs *h, struct proto_mcall *out)
{
	static const struct scan_key unsure[] = { SCAN_KEY("uri"),
	    SCAN_KEY("type"), SCAN_KEY("cursor"), SCAN_KEY("level"),
	    SCAN_KEY("protocolVersion"), SCAN_KEY("ref"),
	    SCAN_KEY("inputResponses"), SCAN_KEY("requestState") };
	enum { K_CLAIM, K_CAPS, K_INFO, K_LOG, K_TOKEN, K_N };
	static const struct scan_key metakeys[K_N] = {
	    SCAN_KEY(MCP_META_PROTOCOL_VERSION),
	    SCAN_KEY(MCP_META_CLIENT_CAPABILITIES),
	    SCAN_KEY(MCP_META_CLIENT_INFO),
	    SCAN_KEY("io.modelcontextprotocol/logLevel"),
	    SCAN_KEY("progressToken") };
	struct jsonrpc_scan	*s = &out->mc_scan;
	struct proto_span	 p[SCAN_MEMBERS], m[SCAN_MEMBERS];
	struct proto_members	 meta = { m, SCAN_MEMBERS, 0, NULL, NULL };
	const struct proto_span	*k[K_N] = { NULL }, *v;
	size_t			 np, i;
	int			 w;

	memset(out, 0, sizeof(*out));
	if (h == NULL || jsonrpc_scan_sub(buf, len, s, p, &np, &meta) != 1 ||
	    s->js_idkind == JSONRPC_SCAN_ID_NONE || s->js_mm == NULL ||
	    s->js_mm->mm_id != MCP_M_TOOLS_CALL ||
	    s->js_name == NULL || s->js_meta == NULL ||
	    s->js_meta[0] != '{' ||
	    memchr(s->js_meta, '\\', s->js_metalen) != NULL)
		goto fail;
	for (i = 0; i < np; i++)
		if (jsonrpc_scan_which(&p[i], unsure, sizeof(unsure) /
		    sizeof(unsure[0])) != -1)
			goto fail;
	/* the strict scan kept _meta's members (no escaped or repeated
	 * keys): not all of them if there were too many */
	if (meta.pm_n > meta.pm_max)
		goto fail;
	for (i = 0; i < meta.pm_n; i++)
		if ((w = jsonrpc_scan_which(&m[i], metakeys, K_N)) != -1)
			k[w] = &m[i];

	/* the envelope (era_envelope_problem), then the version */
	if ((v = k[K_CLAIM]) == NULL ||
	    v->ps_vallen != sizeof(MCP_VERSION_MODERN) + 1 ||
	    memcmp(v->ps_val + 1, MCP_VERSION_MODERN,
	    sizeof(MCP_VERSION_MODERN) - 1) != 0 || v->ps_val[0] != '"')
		goto fail;
	if ((v = k[K_CAPS]) == NULL || v->ps_val[0] != '{')
		goto fail;
	out->mc_caps = v->ps_val;
	out->mc_capslen = v->ps_vallen;
	if (k[K_INFO] != NULL && !jsonrpc_scan_info_ok(k[K_INFO]))
		goto fail;
	if (k[K_LOG] != NULL)
		goto fail;
	/* jsonrpc_params_check(): a string or an integer */
	if ((v = k[K_TOKEN]) != NULL && v->ps_val[0] != '"' &&
	    !jsonrpc_scan_is_int(v))
		goto fail;

	/* the headers, each equal to what it mirrors */
	if (!jsonrpc_scan_hdr_is(h->rh_protocol_version, MCP_VERSION_MODERN,
	    sizeof(MCP_VERSION_MODERN) - 1) ||
	    !jsonrpc_scan_hdr_is(h->rh_method, s->js_mm->mm_name,
	    s->js_mm->mm_len) ||
	    !proto_hdr_is(h->rh_name, s->js_name, s->js_namelen))
		goto fail;
	return 1;

fail:
	memset(out, 0, sizeof(*out));
	return 0;
}

json_t *
jsonrpc_scan_id(const struct jsonrpc_scan *sc)
{
	unsigned long long	 u = 0;
	size_t			 i = 0;
	int			 neg;

	if (sc->js_idkind == JSONRPC_SCAN_ID_STRING)
		return json_stringn(sc->js_id, sc->js_idlen);
	if (sc->js_idkind != JSONRPC_SCAN_ID_INT)
		return NULL;
	neg = sc->js_idlen > 0 && sc->js_id[0] == '-';
	for (i = neg; i < sc->js_idlen; i++)
		u = u * 10 + (unsigned long long)(sc->js_id[i] - '0');
	return json_integer(neg ? (json_int_t)(0ULL - u) : (json_int_t)u);
}

char *
jsonrpc_scan_rename(const char *params, size_t plen, const char *name,
    size_t namelen, const char *to, size_t *lenp)
{
	const char	*c;

	for (c = to; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == '"' || *c == '\\')
			return NULL;
	if (name <= params || name + namelen >= params + plen ||
	    name[-1] != '"' || name[namelen] != '"')
		return NULL;
	return proto_text_replace(params, plen, name, namelen, to,
	    strlen(to), lenp);
}
