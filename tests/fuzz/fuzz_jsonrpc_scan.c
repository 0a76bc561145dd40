/*
 * libFuzzer, differential: whatever jsonrpc_scan() accepts,
 * jsonrpc_parse() must accept as the same request or notification,
 * with an equal method, id, params, params.name and params._meta.  The
 * Legacy edge's fast path routes on what the scan says, so any
 * disagreement here is a client seeing one message and a backend
 * another.  The strict JSON scan under it is held to jansson on its own
 * too: most mutations break the envelope long before they reach a
 * duplicate key or a big number.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

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
