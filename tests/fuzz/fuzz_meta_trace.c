/*
 * Trace context in params._meta (proto/meta_trace.c), both ways, on a
 * client's text.  proto_meta_trace_find(): spans only inside the text,
 * and the very strings jansson reads at params._meta.  The first byte
 * chooses tracestate and baggage; the rest, read as params: whenever
 * jansson loads it as an object (as jsonrpc_parse() loads, duplicate
 * keys refused), proto_params_trace_text() must give text that loads
 * the same way, with _meta's trace members as asked and every other
 * member of params and of _meta equal to what it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/meta_trace.h"

#define TP	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define FLAGS	(JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES)

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* a span found is inside the text, and is what jansson reads there */
static void
fuzz_span(const char *buf, size_t len, const char *s, size_t slen,
    json_t *meta, const char *key)
{
	json_t *v;

	if (s == NULL)
		return;
	if (s <= buf || s + slen >= buf + len || s[-1] != '"' ||
	    s[slen] != '"' || memchr(s, '\\', slen) != NULL)
		abort();
	if (meta == NULL)
		return;
	v = json_object_get(meta, key);
	if (!json_is_string(v) || json_string_length(v) != slen ||
	    memcmp(json_string_value(v), s, slen) != 0)
		abort();
}

static void
fuzz_find(const char *buf, size_t len)
{
	struct proto_trace_meta	 tm;
	json_t			*o, *meta = NULL;

	if (proto_meta_trace_find(buf, len, &tm) != 0)
		return;
	o = json_loadb(buf, len, FLAGS, NULL);
	if (o != NULL)
		meta = json_object_get(json_object_get(o, "params"), "_meta");
	fuzz_span(buf, len, tm.tm_parent, tm.tm_parentlen, meta,
	    "traceparent");
	fuzz_span(buf, len, tm.tm_state, tm.tm_statelen, meta, "tracestate");
	fuzz_span(buf, len, tm.tm_baggage, tm.tm_baggagelen, meta, "baggage");
	json_decref(o);
}

/* the trace member key of m is s (NULL: none) */
static void
fuzz_member_is(json_t *m, const char *key, const char *s)
{
	json_t *v = json_object_get(m, key);

	if (s == NULL ? v != NULL :
	    !json_is_string(v) || strcmp(json_string_value(v), s) != 0)
		abort();
}

static void
fuzz_params(const char *params, size_t plen, const char *ts, const char *bg)
{
	json_t	*in, *got, *gmeta, *imeta;
	char	*out;
	size_t	 olen;

	out = proto_params_trace_text(params, plen, TP, ts, bg, &olen);
	if (out != NULL && strlen(out) != olen)
		abort();
	in = json_loadb(params, plen, FLAGS, NULL);
	if (!json_is_object(in)) {
		json_decref(in);
		free(out);
		return;
	}
	if (out == NULL || (got = json_loadb(out, olen, FLAGS, NULL)) ==
	    NULL || !json_is_object(got))
		abort();
	gmeta = json_object_get(got, "_meta");
	fuzz_member_is(gmeta, "traceparent", TP);
	fuzz_member_is(gmeta, "tracestate", ts);
	fuzz_member_is(gmeta, "baggage", bg);
	/* the rest as it was: _meta's other members, params' others */
	gmeta = json_copy(gmeta);
	(void)json_object_del(gmeta, "traceparent");
	(void)json_object_del(gmeta, "tracestate");
	(void)json_object_del(gmeta, "baggage");
	imeta = json_object_get(in, "_meta");
	imeta = json_is_object(imeta) ? json_copy(imeta) : json_object();
	(void)json_object_del(imeta, "traceparent");
	(void)json_object_del(imeta, "tracestate");
	(void)json_object_del(imeta, "baggage");
	if (!json_equal(gmeta, imeta))
		abort();
	(void)json_object_del(in, "_meta");
	(void)json_object_del(got, "_meta");
	if (!json_equal(in, got))
		abort();
	json_decref(gmeta);
	json_decref(imeta);
	json_decref(got);
	json_decref(in);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf = (const char *)data;
	const char	*ts, *bg;

	fuzz_find(buf, size);
	if (size == 0)
		return 0;
	/* values that need escaping, and non-ASCII */
	ts = data[0] & 1 ? "congo=t61rcWkgMzE,a=\"q\\" : NULL;
	bg = data[0] & 2 ? "user=al\xc3\xa9" "ce" : NULL;
	fuzz_params(buf + 1, size - 1, ts, bg);
	return 0;
}
