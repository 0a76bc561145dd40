/*
 * Trace context in params._meta (meta_trace.h), read and written on
 * the text where it can be: a traced call pays for one scan of the
 * message and one copy of its params, not for a tree.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/jsonspan.h"
#include "proto/jsonw.h"
#include "proto/meta_trace.h"

#define MT_TOP		16	/* a JSON-RPC message's members */
#define MT_MEMBERS	32	/* params' and _meta's, on the text path */

enum mt_key { MT_PARENT, MT_STATE, MT_BAGGAGE, MT_OTHER };

static enum mt_key
mt_key(const struct proto_span *m)
{
	if (m->ps_key == NULL)
		return MT_OTHER;
	if (m->ps_keylen == 11 && memcmp(m->ps_key, "traceparent", 11) == 0)
		return MT_PARENT;
	if (m->ps_keylen == 10 && memcmp(m->ps_key, "tracestate", 10) == 0)
		return MT_STATE;
	if (m->ps_keylen == 7 && memcmp(m->ps_key, "baggage", 7) == 0)
		return MT_BAGGAGE;
	return MT_OTHER;
}

/* _meta's members into out: the first of each, when a plain string */
static void
mt_pick(const struct proto_span *m, size_t n, struct proto_trace_meta *out)
{
	const char	**s[MT_OTHER] = { &out->tm_parent, &out->tm_state,
			    &out->tm_baggage };
	size_t		 *l[MT_OTHER] = { &out->tm_parentlen,
			    &out->tm_statelen, &out->tm_baggagelen };
	enum mt_key	  k;
	size_t		  i;

	for (i = 0; i < n; i++) {
		if ((k = mt_key(&m[i])) == MT_OTHER || *s[k] != NULL)
			continue;
		if (m[i].ps_val[0] != '"' ||
		    memchr(m[i].ps_val, '\\', m[i].ps_vallen) != NULL)
			continue;
		*s[k] = m[i].ps_val + 1;
		*l[k] = m[i].ps_vallen - 2;
	}
}

int
proto_meta_trace_find(const char *body, size_t len,
    struct proto_trace_meta *out)
{
	struct proto_span	 top[MT_TOP], m[MT_MEMBERS], one;
	struct proto_members	 meta = { m, MT_MEMBERS, 0, NULL, NULL };
	/* params' own members are not kept: only its _meta's */
	struct proto_members	 params = { &one, 0, 0, "_meta", &meta };
	struct proto_members	 pm = { top, MT_TOP, 0, "params", &params };

	memset(out, 0, sizeof(*out));
	if (body == NULL || memmem(body, len, "_meta", 5) == NULL)
		return 0;
	if (proto_json_members_sub(body, len, &pm) == -1 ||
	    meta.pm_n > meta.pm_max)
		return -1;
	mt_pick(m, meta.pm_n, out);
	return 0;
}

int
proto_meta_trace_members(const char *meta, size_t len,
    struct proto_trace_meta *out)
{
	struct proto_span	m[MT_MEMBERS];
	size_t			n;

	memset(out, 0, sizeof(*out));
	if (meta == NULL || proto_json_members(meta, len, m, MT_MEMBERS,
	    &n) == -1)
		return -1;
	mt_pick(m, n, out);
	return 0;
}

/*
 * The new _meta object, as the member key (NULL: a bare value): the
 * trace members first, then m[n] but the client's trace members, as
 * their text was.  -1 if a value is not UTF-8.
 */
static int
mt_meta_write(struct jsonw *jw, const char *key, const struct proto_span *m,
    size_t n, const char *traceparent, const char *tracestate,
    const char *baggage)
{
	size_t i;

	jsonw_obj(jw, key);
	if (jsonw_str(jw, "traceparent", traceparent) == -1 ||
	    (tracestate != NULL &&
	    jsonw_str(jw, "tracestate", tracestate) == -1) ||
	    (baggage != NULL && jsonw_str(jw, "baggage", baggage) == -1))
		return -1;
	for (i = 0; i < n; i++) {
		if (mt_key(&m[i]) != MT_OTHER)
			continue;
		if (jw->jw_comma)
			jsonw_bytes(jw, ",", 1);
		jsonw_bytes(jw, "\"", 1);
		jsonw_bytes(jw, m[i].ps_key, m[i].ps_keylen);
		jsonw_bytes(jw, "\":", 2);
		jsonw_bytes(jw, m[i].ps_val, m[i].ps_vallen);
		jw->jw_comma = 1;
	}
	jsonw_end(jw);
	return 0;
}

/* the jansson route, for the text the scan does not take whole */
static char *
mt_params_tree(const char *params, size_t plen, const char *traceparent,
    const char *tracestate, const char *baggage, size_t *outlen)
{
	json_error_t	 e;
	json_t		*o;
	char		*s = NULL;

	o = json_loadb(params, plen, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES,
	    &e);
	if (json_is_object(o) && proto_params_trace(o, traceparent,
	    tracestate, baggage) == 0 &&
	    (s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)) != NULL)
		*outlen = strlen(s);
	json_decref(o);
	return s;
}

/* only JSON whitespace in s[0..len) */
static int
mt_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' &&
		    s[i] != '\r')
			return 0;
	return 1;
}

char *
proto_params_trace_text(const char *params, size_t plen,
    const char *traceparent, const char *tracestate, const char *baggage,
    size_t *outlen)
{
	struct proto_span	 p[MT_MEMBERS], m[MT_MEMBERS];
	struct proto_members	 mm = { m, MT_MEMBERS, 0, NULL, NULL };
	struct proto_members	 pm = { p, MT_MEMBERS, 0, "_meta", &mm };
	struct jsonw		 jw;
	const struct proto_span	*meta = NULL;
	const char		*open, *end;
	size_t			 i;

	memset(&jw, 0, sizeof(jw));
	if (traceparent == NULL)
		return NULL;
	if (params == NULL || mt_blank(params, plen)) {
		jsonw_obj(&jw, NULL);
		if (mt_meta_write(&jw, "_meta", NULL, 0, traceparent,
		    tracestate, baggage) == -1)
			goto fail;
		jsonw_end(&jw);
		goto done;
	}
	if (proto_json_members_sub(params, plen, &pm) == -1)
		goto tree;
	/*
	 * An escaped key may be "_meta" (or a trace key) once decoded, and
	 * a second _meta is one jansson refuses or reads otherwise: both
	 * go the tree's way, as does a _meta too big for m.
	 */
	for (i = 0; i < pm.pm_n; i++) {
		if (p[i].ps_key == NULL)
			goto tree;
		if (p[i].ps_keylen == 5 &&
		    memcmp(p[i].ps_key, "_meta", 5) == 0) {
			if (meta != NULL)
				goto tree;
			meta = &p[i];
		}
	}
	if (mm.pm_n > mm.pm_max)
		goto tree;
	for (i = 0; i < mm.pm_n; i++)
		if (m[i].ps_key == NULL)
			goto tree;

	end = params + plen;
	if (meta == NULL) {
		/* "_meta":{...} spliced in after the opening brace */
		open = (const char *)memchr(params, '{', plen) + 1;
		jsonw_bytes(&jw, params, (size_t)(open - params));
		if (mt_meta_write(&jw, "_meta", NULL, 0, traceparent,
		    tracestate, baggage) == -1)
			goto fail;
		if (pm.pm_n > 0)
			jsonw_bytes(&jw, ",", 1);
		jsonw_bytes(&jw, open, (size_t)(end - open));
	} else {
		/* _meta's value replaced; mm has members only if an object */
		jsonw_bytes(&jw, params, (size_t)(meta->ps_val - params));
		if (mt_meta_write(&jw, NULL, m, mm.pm_n, traceparent,
		    tracestate, baggage) == -1)
			goto fail;
		open = meta->ps_val + meta->ps_vallen;
		jsonw_bytes(&jw, open, (size_t)(end - open));
	}
done:
	if (jw.jw_failed)
		goto fail;
	*outlen = jw.jw_len;
	return jw.jw_buf;
tree:
	return mt_params_tree(params, plen, traceparent, tracestate, baggage,
	    outlen);
fail:
	jsonw_free(&jw);
	return NULL;
}

int
proto_params_trace(json_t *params, const char *traceparent,
    const char *tracestate, const char *baggage)
{
	json_t *meta;

	if (!json_is_object(params) || traceparent == NULL)
		return -1;
	meta = json_object_get(params, "_meta");
	/* a copy: the caller's params may share it with the client's */
	meta = json_is_object(meta) ? json_copy(meta) : json_object();
	if (meta == NULL)
		return -1;
	if (json_object_set_new(meta, "traceparent",
	    json_string(traceparent)) == -1)
		goto fail;
	if (tracestate == NULL)
		(void)json_object_del(meta, "tracestate");
	else if (json_object_set_new(meta, "tracestate",
	    json_string(tracestate)) == -1)
		goto fail;
	if (baggage == NULL)
		(void)json_object_del(meta, "baggage");
	else if (json_object_set_new(meta, "baggage",
	    json_string(baggage)) == -1)
		goto fail;
	return json_object_set_new(params, "_meta", meta);
fail:
	json_decref(meta);
	return -1;
}
