/*
 * Header values of the Modern transport (MCP 2026-07-28, Streamable
 * HTTP, section Request Metadata): the
 * "=?base64?...?=" value encoding, the x-mcp-header annotations of a
 * tool's inputSchema, and the Mcp-Param-* checks of a tools/call.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/proto.h"
#include "proto/classify.h"
#include "proto/mheaders.h"

#define SENT_PRE	"=?base64?"
#define SENT_PRELEN	(sizeof(SENT_PRE) - 1)
#define SENT_SUF	"?="
#define SENT_SUFLEN	(sizeof(SENT_SUF) - 1)
#define SCHEMA_DEPTH	128	/* deeper inputSchemas are refused */
#define SAFE_INT	9007199254740991LL	/* 2^53 - 1 */

static const char b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/*
 * Subschema keywords an x-mcp-header path must not cross; the set ones
 * hold {name: subschema}.  Annotations under them make the tool invalid.
 */
static const char *const hdr_unreachable[] = {
	"items", "prefixItems", "contains", "additionalProperties",
	"unevaluatedProperties", "unevaluatedItems", "propertyNames",
	"contentSchema", "oneOf", "anyOf", "allOf", "not", "if", "then",
	"else", "patternProperties", "dependentSchemas", "dependencies",
	"$defs", "definitions",
};
#define NUNREACHABLE (sizeof(hdr_unreachable) / sizeof(hdr_unreachable[0]))

struct hdr_scan {
	json_t	*hs_map;	/* header name -> path */
	json_t	*hs_path;	/* property names from the root */
	char	*hs_why;
	size_t	 hs_whylen;
};

static int	 b64_val(char, int);
static int	 hdr_is_tchar(unsigned char);
static int	 hdr_utf8_valid(const unsigned char *, size_t);
static int	 hdr_sentinel_like(const char *, size_t);
static int	 hdr_fail(struct hdr_scan *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static const char *hdr_path_name(const json_t *, char *, size_t);
static int	 hdr_annotation(struct hdr_scan *, const json_t *,
		    const json_t *, int);
static int	 hdr_visit(struct hdr_scan *, const json_t *, int, int);
static int	 hdr_visit_branches(struct hdr_scan *, const char *,
		    const json_t *, int);
static int	 hdr_int_equal(const char *, json_int_t);
static int	 hdr_real_equal(const char *, double);
static int	 hdr_value_matches(const char *, const json_t *);

static int
b64_val(char c, int url)
{
	const char *p;

	if (c == '\0' || (p = strchr(url ? b64_url : b64_std, c)) == NULL)
		return -1;
	return (int)(p - (url ? b64_url : b64_std));
}

size_t
proto_b64_encode_buf(const void *in, size_t len, int url, char *out,
    size_t outlen)
{
	const unsigned char	*s = in;
	const char		*al = url ? b64_url : b64_std;
	char			*o = out;
	size_t			 i, need;
	uint32_t		 v;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return 0;
	need = (len + 2) / 3 * 4;
	if (url && len % 3 != 0)
		need -= 3 - len % 3;	/* no padding */
	if (outlen < need + 1)
		return 0;
	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		*o++ = al[v >> 18 & 63];
		*o++ = al[v >> 12 & 63];
		*o++ = al[v >> 6 & 63];
		*o++ = al[v & 63];
	}
	if (i < len) {
		v = (uint32_t)s[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)s[i + 1] << 8;
		*o++ = al[v >> 18 & 63];
		*o++ = al[v >> 12 & 63];
		if (i + 1 < len)
			*o++ = al[v >> 6 & 63];
		else if (!url)
			*o++ = '=';
		if (!url)
			*o++ = '=';
	}
	*o = '\0';
	return (size_t)(o - out);
}

char *
proto_b64_encode(const void *in, size_t len, int url)
{
	char	*out;
	size_t	 n;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	n = (len + 2) / 3 * 4 + 1;
	if ((out = malloc(n)) == NULL)
		return NULL;
	(void)proto_b64_encode_buf(in, len, url, out, n);
	return out;
}

/*
 * Strict: exactly one spelling per byte string is accepted, so a
 * cursor or header value cannot be varied without being refused.
 */
int
proto_b64_decode(const char *in, size_t len, int url, unsigned char **out,
    size_t *outlen)
{
	unsigned char	*buf = NULL;
	size_t		 i, o = 0, pad = 0, n;
	uint32_t	 acc = 0;
	int		 d, bits = 0;

	*out = NULL;
	*outlen = 0;
	if (in == NULL)
		goto bad;
	if (!url) {
		if (len % 4 != 0)
			goto bad;
		while (pad < 2 && pad < len && in[len - 1 - pad] == '=')
			pad++;
	} else if (len % 4 == 1)
		goto bad;
	n = len - pad;
	if ((buf = malloc(n / 4 * 3 + 3)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if ((d = b64_val(in[i], url)) == -1)
			goto bad;
		acc = acc << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (unsigned char)(acc >> bits);
			acc &= (1U << bits) - 1;
		}
	}
	/* a lone last character, or pad bits that are not zero */
	if (bits >= 6 || acc != 0)
		goto bad;
	if (!url && pad != (4 - n % 4) % 4)
		goto bad;
	*out = buf;
	*outlen = o;
	return 0;

bad:
	free(buf);
	errno = EINVAL;
	return -1;
}

/* RFC 9110 tchar */
static int
hdr_is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* strict UTF-8: no overlong forms, surrogates or values past U+10FFFF */
static int
hdr_utf8_valid(const unsigned char *s, size_t n)
{
	size_t		i = 0, k, need;
	uint32_t	cp, min;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf) {
			need = 1;
			cp = s[i] & 0x1f;
			min = 0x80;
		} else if (s[i] >= 0xe0 && s[i] <= 0xef) {
			need = 2;
			cp = s[i] & 0x0f;
			min = 0x800;
		} else if (s[i] >= 0xf0 && s[i] <= 0xf4) {
			need = 3;
			cp = s[i] & 0x07;
			min = 0x10000;
		} else
			return 0;
		if (n - i - 1 < need)
			return 0;
		for (k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

/* starts with the marker and ends with "?=" (even overlapping) */
static int
hdr_sentinel_like(const char *s, size_t n)
{
	return n >= SENT_PRELEN + 1 && memcmp(s, SENT_PRE, SENT_PRELEN) == 0 &&
	    memcmp(s + n - SENT_SUFLEN, SENT_SUF, SENT_SUFLEN) == 0;
}

int
proto_hdr_decode(const char *raw, char **out)
{
	unsigned char	*dec;
	const char	*s;
	size_t		 n, i, dlen;

	*out = NULL;
	if (raw == NULL)
		goto bad;
	s = raw;
	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		/* raw UTF-8 must travel base64-encoded */
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			goto bad;
	}
	if (!hdr_sentinel_like(s, n)) {
		if ((*out = strndup(s, n)) == NULL)
			return -1;
		return 0;
	}
	/* "=?base64?=": the markers overlap, no payload to speak of */
	if (n < SENT_PRELEN + SENT_SUFLEN)
		goto bad;
	if (proto_b64_decode(s + SENT_PRELEN, n - SENT_PRELEN - SENT_SUFLEN,
	    0, &dec, &dlen) == -1)
		return -1;
	if (memchr(dec, '\0', dlen) != NULL || !hdr_utf8_valid(dec, dlen)) {
		free(dec);
		goto bad;
	}
	dec[dlen] = '\0';	/* the buffer always has room for it */
	*out = (char *)dec;
	return 0;

bad:
	errno = EINVAL;
	return -1;
}

int
proto_hdr_plain(const char *v, size_t n)
{
	size_t		i;
	unsigned char	c;

	/* an empty value is sent encoded: stacks drop empty headers */
	if (n == 0 || v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' ||
	    v[n - 1] == '\t' || hdr_sentinel_like(v, n))
		return 0;
	for (i = 0; i < n; i++) {
		c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return 0;
	}
	return 1;
}

/*
 * Most values are sent as they are: raw equal to val byte for byte and
 * plain needs no copy; anything else is decoded to compare.
 */
int
proto_hdr_is(const char *raw, const char *val, size_t len)
{
	char	*dec;
	int	 ok;

	if (raw == NULL)
		return 0;
	if (strncmp(raw, val, len) == 0 && raw[len] == '\0' &&
	    proto_hdr_plain(raw, len))
		return 1;
	if (proto_hdr_decode(raw, &dec) == -1)
		return 0;
	ok = strlen(dec) == len && memcmp(dec, val, len) == 0;
	free(dec);
	return ok;
}

char *
proto_hdr_encode(const char *value)
{
	char	*b64, *out;
	size_t	 n, blen;

	if (value == NULL)
		return NULL;
	n = strlen(value);
	if (proto_hdr_plain(value, n))
		return strdup(value);
	if ((b64 = proto_b64_encode(value, n, 0)) == NULL)
		return NULL;
	blen = strlen(b64);
	if ((out = malloc(SENT_PRELEN + blen + SENT_SUFLEN + 1)) != NULL) {
		memcpy(out, SENT_PRE, SENT_PRELEN);
		memcpy(out + SENT_PRELEN, b64, blen);
		memcpy(out + SENT_PRELEN + blen, SENT_SUF, SENT_SUFLEN + 1);
	}
	free(b64);
	return out;
}

static int
hdr_fail(struct hdr_scan *hs, const char *fmt, ...)
{
	va_list ap;

	if (hs->hs_why != NULL && hs->hs_whylen > 0) {
		va_start(ap, fmt);
		(void)vsnprintf(hs->hs_why, hs->hs_whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* "a.b.c", or "<root>", cut to fit */
static const char *
hdr_path_name(const json_t *path, char *buf, size_t len)
{
	size_t	i, o = 0;
	int	r;

	if (json_array_size(path) == 0)
		return "<root>";
	buf[0] = '\0';
	for (i = 0; i < json_array_size(path); i++) {
		r = snprintf(buf + o, len - o, "%s%s", i > 0 ? "." : "",
		    json_string_value(json_array_get(path, i)));
		if (r < 0 || (size_t)r >= len - o)
			break;
		o += (size_t)r;
	}
	return buf;
}

/* the annotation of one schema node at the current path */
static int
hdr_annotation(struct hdr_scan *hs, const json_t *node, const json_t *ann,
    int reachable)
{
	const char	*name, *type, *k, *pn;
	json_t		*p, *prior;
	char		 buf[128];
	size_t		 i, n;

	pn = hdr_path_name(hs->hs_path, buf, sizeof(buf));
	if (!reachable || json_array_size(hs->hs_path) == 0)
		return hdr_fail(hs, "%s: x-mcp-header is only allowed on a "
		    "property reached from the root through \"properties\" "
		    "alone", pn);
	if (!json_is_string(ann) || json_string_length(ann) == 0)
		return hdr_fail(hs, "%s: x-mcp-header must be a non-empty "
		    "string", pn);
	name = json_string_value(ann);
	n = json_string_length(ann);
	for (i = 0; i < n; i++)
		if (!hdr_is_tchar((unsigned char)name[i]))
			return hdr_fail(hs, "%s: x-mcp-header is not an HTTP "
			    "token (no spaces, controls or delimiters)", pn);
	type = json_string_value(json_object_get(node, "type"));
	if (type == NULL || (strcmp(type, "string") != 0 &&
	    strcmp(type, "integer") != 0 && strcmp(type, "boolean") != 0))
		return hdr_fail(hs, "%s: x-mcp-header %s is on a %s property "
		    "(only string, integer and boolean are allowed)", pn,
		    name, type != NULL ? type : "untyped");
	json_object_foreach((json_t *)hs->hs_map, k, prior)
		if (strcasecmp(k, name) == 0)
			return hdr_fail(hs, "%s: x-mcp-header %s repeats %s "
			    "(names are compared case-insensitively)", pn,
			    name, k);
	if ((p = json_copy(hs->hs_path)) == NULL ||
	    json_object_set_new(hs->hs_map, name, p) == -1)
		return hdr_fail(hs, "out of memory");
	return 0;
}

static int
hdr_visit(struct hdr_scan *hs, const json_t *node, int reachable, int depth)
{
	const json_t	*ann, *props, *child;
	const char	*key;
	size_t		 i;

	if (!json_is_object(node))
		return 0;	/* true/false schemas and junk hold nothing */
	if (depth > SCHEMA_DEPTH)
		return hdr_fail(hs, "inputSchema nested more than %d deep",
		    SCHEMA_DEPTH);
	if ((ann = json_object_get(node, "x-mcp-header")) != NULL &&
	    hdr_annotation(hs, node, ann, reachable) == -1)
		return -1;
	props = json_object_get(node, "properties");
	if (json_is_object(props)) {
		json_object_foreach((json_t *)props, key, child) {
			if (json_array_append_new(hs->hs_path,
			    json_string(key)) == -1)
				return hdr_fail(hs, "out of memory");
			if (hdr_visit(hs, child, reachable, depth + 1) == -1)
				return -1;
			json_array_remove(hs->hs_path,
			    json_array_size(hs->hs_path) - 1);
		}
	}
	for (i = 0; i < NUNREACHABLE; i++)
		if (hdr_visit_branches(hs, hdr_unreachable[i],
		    json_object_get(node, hdr_unreachable[i]), depth) == -1)
			return -1;
	return 0;
}

/* a keyword's subschemas: one, an array of them or {name: schema} */
static int
hdr_visit_branches(struct hdr_scan *hs, const char *kw, const json_t *sub,
    int depth)
{
	const json_t	*b;
	const char	*k;
	size_t		 i;
	int		 map;

	if (sub == NULL)
		return 0;
	map = strcmp(kw, "patternProperties") == 0 ||
	    strcmp(kw, "dependentSchemas") == 0 ||
	    strcmp(kw, "dependencies") == 0 || strcmp(kw, "$defs") == 0 ||
	    strcmp(kw, "definitions") == 0;
	if (json_is_array(sub)) {
		json_array_foreach(sub, i, b)
			if (hdr_visit(hs, b, 0, depth + 1) == -1)
				return -1;
	} else if (map && json_is_object(sub)) {
		json_object_foreach((json_t *)sub, k, b)
			if (hdr_visit(hs, b, 0, depth + 1) == -1)
				return -1;
	} else if (hdr_visit(hs, sub, 0, depth + 1) == -1)
		return -1;
	return 0;
}

/*
 * 1 if no "x-mcp-header" key is anywhere in v and v is no deeper than
 * a schema may be: most schemas, whose map is empty for sure.  Any
 * nesting counts, so this depth is never below hdr_visit()'s.
 */
static int
hdr_none(const json_t *v, int depth)
{
	const json_t	*x;
	const char	*k;
	size_t		 i;

	if (depth > SCHEMA_DEPTH)
		return 0;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			if (strcmp(k, "x-mcp-header") == 0 ||
			    !hdr_none(x, depth + 1))
				return 0;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (!hdr_none(x, depth + 1))
				return 0;
	}
	return 1;
}

int
proto_x_mcp_headers(const json_t *input_schema, json_t **map, char *why,
    size_t whylen)
{
	struct hdr_scan hs;

	*map = NULL;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	/* no allocation for a schema without annotations: a view's build
	 * asks this of every tool */
	if (hdr_none(input_schema, 0))
		return (*map = json_object()) != NULL ? 0 : -1;
	memset(&hs, 0, sizeof(hs));
	hs.hs_why = why;
	hs.hs_whylen = whylen;
	if ((hs.hs_map = json_object()) == NULL ||
	    (hs.hs_path = json_array()) == NULL) {
		(void)hdr_fail(&hs, "out of memory");
		goto fail;
	}
	if (hdr_visit(&hs, input_schema, 1, 0) == -1)
		goto fail;
	json_decref(hs.hs_path);
	*map = hs.hs_map;
	return 0;

fail:
	json_decref(hs.hs_path);
	json_decref(hs.hs_map);
	return -1;
}

/* a decimal -?D+(.D+)? equal to an integer: "042" and "42.0" are 42 */
static int
hdr_int_equal(const char *s, json_int_t want)
{
	unsigned long long	 mag = 0, lim;
	int			 neg = 0, digits = 0;

	if (*s == '-') {
		neg = 1;
		s++;
	}
	lim = (unsigned long long)SAFE_INT;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		mag = mag * 10 + (unsigned long long)(*s - '0');
		if (mag > lim)
			return 0;
	}
	if (digits == 0)
		return 0;
	if (*s == '.') {
		if (*++s == '\0')
			return 0;
		for (; *s == '0'; s++)
			;
	}
	if (*s != '\0')
		return 0;
	return neg ? -(long long)mag == want : (long long)mag == want;
}

static int
hdr_real_equal(const char *s, double want)
{
	const char	*p = s;
	char		*end;
	double		 d;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return 0;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if (*p != '\0')
		return 0;
	errno = 0;
	d = strtod(s, &end);
	return errno == 0 && *end == '\0' && d == want;
}

/* a decoded header against the body value (string, number or boolean) */
static int
hdr_value_matches(const char *hv, const json_t *bv)
{
	switch (json_typeof(bv)) {
	case JSON_STRING:
		return strlen(hv) == json_string_length(bv) &&
		    memcmp(hv, json_string_value(bv), strlen(hv)) == 0;
	case JSON_INTEGER:
		return hdr_int_equal(hv, json_integer_value(bv));
	case JSON_REAL:
		return hdr_real_equal(hv, json_real_value(bv));
	case JSON_TRUE:
		return strcmp(hv, "true") == 0;
	case JSON_FALSE:
		return strcmp(hv, "false") == 0;
	default:
		return 1;
	}
}

int
proto_param_headers_check(const json_t *map, const json_t *arguments,
    const struct proto_reqhdrs *h, struct proto_verdict *v)
{
	const json_t	*path, *bv, *seg;
	const char	*name, *raw;
	char		*dec = NULL;
	size_t		 i;
	json_int_t	 iv;
	int		 present;

	memset(v, 0, sizeof(*v));
	v->pv_era = PROTO_ERA_MODERN;
	json_object_foreach((json_t *)map, name, path) {
		bv = arguments;
		json_array_foreach(path, i, seg)
			bv = json_is_object(bv) ?
			    json_object_get(bv, json_string_value(seg)) : NULL;
		present = bv != NULL && !json_is_null(bv);
		raw = h != NULL && h->rh_param != NULL ?
		    h->rh_param(h->rh_arg, name) : NULL;
		/* the client sends no header for what it cannot render */
		if (json_is_object(bv) || json_is_array(bv))
			continue;
		if (json_is_integer(bv) && ((iv = json_integer_value(bv)) >
		    SAFE_INT || iv < -SAFE_INT))
			continue;
		if (!present && raw == NULL)
			continue;
		if (!present)
			goto mismatch;
		if (raw == NULL) {
			(void)snprintf(v->pv_msg, sizeof(v->pv_msg),
			    "the Mcp-Param-%.64s header is missing: the "
			    "argument it mirrors is in the body", name);
			goto refuse;
		}
		if (proto_hdr_decode(raw, &dec) == -1) {
			if (errno == ENOMEM) {
				v->pv_http = 500;
				v->pv_code = JSONRPC_INTERNAL_ERROR;
				(void)snprintf(v->pv_msg, sizeof(v->pv_msg),
				    "Internal error: out of memory");
				return -1;
			}
			(void)snprintf(v->pv_msg, sizeof(v->pv_msg),
			    "the Mcp-Param-%.64s header is malformed "
			    "(control or non-ASCII characters, or a bad "
			    "=?base64?...?= value)", name);
			goto refuse;
		}
		if (!hdr_value_matches(dec, bv)) {
			free(dec);
			goto mismatch;
		}
		free(dec);
	}
	return 0;

mismatch:
	(void)snprintf(v->pv_msg, sizeof(v->pv_msg), "the Mcp-Param-%.64s "
	    "header does not match the argument it mirrors%s", name,
	    present ? "" : " (absent or null in the body)");
refuse:
	v->pv_http = 400;
	v->pv_code = MCP_ERR_HEADER_MISMATCH;
	return -1;
}

/*
 * The Mcp-Param-* headers a client of ours would send for these
 * arguments: what proto_param_headers_check() accepts.  Objects,
 * arrays, null, absent and out-of-range integers get none.
 */
int
proto_param_headers_build(const json_t *map, const json_t *arguments,
    json_t **out)
{
	const json_t	*path, *bv, *seg;
	const char	*name;
	char		 num[512], *enc;
	const char	*plain;
	size_t		 i;
	json_int_t	 iv;
	double		 rv;

	if ((*out = json_object()) == NULL)
		return -1;
	json_object_foreach((json_t *)map, name, path) {
		bv = arguments;
		json_array_foreach(path, i, seg)
			bv = json_is_object(bv) ?
			    json_object_get(bv, json_string_value(seg)) : NULL;
		switch (json_typeof(bv != NULL ? bv : json_null())) {
		case JSON_STRING:
			plain = json_string_value(bv);
			break;
		case JSON_INTEGER:
			iv = json_integer_value(bv);
			if (iv > SAFE_INT || iv < -SAFE_INT)
				continue;
			(void)snprintf(num, sizeof(num), "%lld",
			    (long long)iv);
			plain = num;
			break;
		case JSON_REAL:
			/* plain decimal, as the check reads it back: %.17g
			 * round-trips but may use an exponent */
			rv = json_real_value(bv);
			(void)snprintf(num, sizeof(num), "%.17g", rv);
			if (strchr(num, 'e') != NULL)
				(void)snprintf(num, sizeof(num), (rv < 0 ? -rv :
				    rv) >= 1 ? "%.0f" : "%.340f", rv);
			plain = num;
			break;
		case JSON_TRUE:
			plain = "true";
			break;
		case JSON_FALSE:
			plain = "false";
			break;
		default:
			continue;
		}
		if ((enc = proto_hdr_encode(plain)) == NULL ||
		    json_object_set_new(*out, name, json_string(enc)) == -1) {
			free(enc);
			json_decref(*out);
			*out = NULL;
			return -1;
		}
		free(enc);
	}
	return 0;
}
