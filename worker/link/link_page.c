/*
 * The pure pieces of the web leg (link_int.h): what a browser sends
 * (a query, a state, a cookie) read, what it is shown escaped.  No
 * I/O; fuzzed (tests/fuzz/fuzz_link_page.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "proto/headers.h"
#include "proto/html.h"
#include "proto/jsonw.h"
#include "shared/link_rec.h"
#include "worker/link/link_int.h"

int
link_query_get(const char *q, const char *name, char *out, size_t outlen)
{
	size_t		 nlen = strlen(name), o;
	const char	*p, *end;
	int		 hi, lo;
	char		 c;

	if (q == NULL || outlen == 0)
		return -1;
	for (p = q; *p != '\0'; p = *end == '&' ? end + 1 : end) {
		end = p + strcspn(p, "&");
		if ((size_t)(end - p) <= nlen || strncmp(p, name, nlen) != 0 ||
		    p[nlen] != '=')
			continue;
		for (p += nlen + 1, o = 0; p < end; p++) {
			c = *p;
			if (c == '+')
				c = ' ';
			else if (c == '%') {
				if (end - p < 3 ||
				    (hi = proto_hex_digit(p[1])) < 0 ||
				    (lo = proto_hex_digit(p[2])) < 0)
					return -1;
				c = (char)(hi << 4 | lo);
				p += 2;
			}
			if ((unsigned char)c < 0x20 || c == 0x7f ||
			    o + 1 >= outlen)
				return -1;
			out[o++] = c;
		}
		out[o] = '\0';
		return 0;
	}
	return -1;
}

static int
link_urlsafe(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-_", s[i]) == NULL ||
		    s[i] == '\0')
			return 0;
	return 1;
}

int
link_state_split(const char *state, char *id, size_t idlen, char *nonce,
    size_t noncelen)
{
	const char	*dot = strchr(state, '.');
	size_t		 il;

	if (dot == NULL || (il = (size_t)(dot - state)) != CONSENT_ID_LEN ||
	    il >= idlen || strlen(dot + 1) != CONSENT_NONCE_LEN ||
	    CONSENT_NONCE_LEN >= noncelen ||
	    !link_urlsafe(dot + 1, CONSENT_NONCE_LEN))
		return -1;
	memcpy(id, state, il);
	id[il] = '\0';
	if (!consent_id_valid(id))
		return -1;
	memcpy(nonce, dot + 1, CONSENT_NONCE_LEN + 1);
	return 0;
}

int
link_cookie_value(const char *verifier, char *out, size_t len)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
	    "opqrstuvwxyz0123456789-_";
	unsigned char	 d[SHA256_DIGEST_LENGTH];
	char		 in[20 + CONSENT_VERIFIER_LEN + 1];
	size_t		 i;
	int		 n;

	/* 32 characters of 6 bits from the first 24 bytes */
	n = snprintf(in, sizeof(in), "vmcpd-consent-cookie%s", verifier);
	if (len < 33 || n < 0 || (size_t)n >= sizeof(in))
		return -1;
	(void)SHA256((const unsigned char *)in, (size_t)n, d);
	OPENSSL_cleanse(in, sizeof(in));
	for (i = 0; i < 32; i++)
		out[i] = b64[(d[i * 3 / 4] >> (i % 4)) & 0x3f];
	out[32] = '\0';
	OPENSSL_cleanse(d, sizeof(d));
	return 0;
}

int
link_cookie_get(const char *hdr, const char *name, char *out, size_t outlen)
{
	size_t		 nlen = strlen(name), vlen;
	const char	*p, *v;

	if (hdr == NULL)
		return -1;
	for (p = hdr; *p != '\0'; ) {
		p += strspn(p, " \t;");
		if (strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
			v = p + nlen + 1;
			vlen = strcspn(v, ";");
			while (vlen > 0 && (v[vlen - 1] == ' ' ||
			    v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= outlen)
				return -1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return 0;
		}
		p += strcspn(p, ";");
	}
	return -1;
}

char *
link_html_escape(const char *s)
{
	struct jsonw	 jw;

	memset(&jw, 0, sizeof(jw));
	html_escape(&jw, s);
	if (jw.jw_failed) {
		jsonw_free(&jw);
		return NULL;
	}
	return jw.jw_buf != NULL ? jw.jw_buf : strdup("");
}
