/*
 * The fast path for a client's POST: the envelope rules of
 * jsonrpc_parse() checked on the spans of proto_json_check(), without
 * building a tree.  It answers "surely accepted" or "not sure", never
 * "refused": every doubt goes to jsonrpc_parse(), which knows the
 * exact error to answer with.
 */
#include <string.h>

#include "proto.h"

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

int
jsonrpc_scan(const char *buf, size_t len, struct jsonrpc_scan *out)
{
	struct proto_span	 top[SCAN_MEMBERS], sub[SCAN_MEMBERS];
	struct proto_members	 ps = { sub, SCAN_MEMBERS, 0, NULL, NULL };
	struct proto_members	 pm = { top, SCAN_MEMBERS, 0, "params", &ps };
	const struct proto_span	*m, *id = NULL, *method = NULL;
	const struct proto_span	*params = NULL;
	size_t			 i;
	int			 version = 0;

	memset(out, 0, sizeof(*out));
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
		}
	}
	return 1;

fail:
	memset(out, 0, sizeof(*out));
	return 0;
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
