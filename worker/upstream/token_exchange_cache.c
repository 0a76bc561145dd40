/*
 * token_exchange's pure parts (token_exchange.h): the cache key, when a token
 * stops being used, and the token endpoint's answer (RFC 8693 2.2.1).
 * No store, no I/O: unit tested (test_texch.c) and fuzzed (fuzz_texch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/sha.h>

#include "proto/hex.h"
#include "worker/upstream/token_exchange.h"

/*
 * The cache key: the principal, the backend, the audience and the
 * scopes asked for.  An audience that would not fit (or holds a '|') is
 * hashed, as the scopes always are: 0, or -1 if it cannot fit.
 */
int
texch_key(char *buf, size_t len, const char *scope, const char *backend,
    const char *audience, const char *scopes)
{
	unsigned char	 d[SHA256_DIGEST_LENGTH];
	char		 sh[17], ah[33];
	const char	*aud = audience != NULL ? audience : "-";
	int		 n;

	(void)SHA256((const unsigned char *)(scopes != NULL ? scopes : ""),
	    scopes != NULL ? strlen(scopes) : 0, d);
	proto_hex(d, 8, sh);
	if (strlen(aud) > 96 || strchr(aud, '|') != NULL || *aud == '\0') {
		(void)SHA256((const unsigned char *)aud, strlen(aud), d);
		proto_hex(d, 16, ah);
		aud = ah;
	}
	n = snprintf(buf, len, "%s|%s|%s|%s", scope, backend, aud, sh);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * When the cached token stops being used: TEXCH_MARGIN_MS before it
 * expires (a quarter of its life if that is short), and never after
 * the subject token (the client's) expires.  0: not worth caching.
 */
uint64_t
texch_expiry(uint64_t now_ms, int64_t expires_in_s, int64_t subject_exp_s)
{
	uint64_t	 life, margin;

	if (expires_in_s <= 0)
		expires_in_s = TEXCH_DEFAULT_TTL_S;
	life = (uint64_t)expires_in_s * 1000;
	if (subject_exp_s > 0) {
		if ((uint64_t)subject_exp_s * 1000 <= now_ms)
			return 0;
		if ((uint64_t)subject_exp_s * 1000 - now_ms < life)
			life = (uint64_t)subject_exp_s * 1000 - now_ms;
	}
	margin = life / 4 < TEXCH_MARGIN_MS ? life / 4 : TEXCH_MARGIN_MS;
	if (life - margin == 0)
		return 0;
	return now_ms + life - margin;
}

/* a principal's slot is renewed once a TEXCH_TOUCH_MS, not per request */
int
texch_principal_stale(uint64_t expires_ms, uint64_t now_ms)
{
	return expires_ms < now_ms + TEXCH_PRINCIPAL_MS - TEXCH_TOUCH_MS;
}

/* RFC 8693 2.2.1 (RFC 6749 5.1): access_token, issued_token_type,
 * token_type (Bearer or N_A), expires_in */
int
texch_parse(const char *body, size_t len, char **token, int64_t *expires_in,
    char *why, size_t whylen)
{
	json_t		*doc, *v;
	const char	*tok, *tt;
	size_t		 i, n;

	*token = NULL;
	*expires_in = 0;
	if ((doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL || !json_is_object(doc)) {
		(void)snprintf(why, whylen, "the token endpoint's answer is "
		    "not a JSON object");
		json_decref(doc);
		return -1;
	}
	tok = json_string_value(json_object_get(doc, "access_token"));
	tt = json_string_value(json_object_get(doc, "token_type"));
	n = tok != NULL ? json_string_length(json_object_get(doc,
	    "access_token")) : 0;
	if (tok == NULL || n == 0 || n > TEXCH_TOKEN_MAX ||
	    strlen(tok) != n) {
		(void)snprintf(why, whylen, "the token endpoint's answer has "
		    "no usable access_token");
		goto fail;
	}
	/* it goes into a header: RFC 6750 2.1 b64token characters */
	for (i = 0; i < n; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-._~+/=", tok[i]) == NULL) {
			(void)snprintf(why, whylen, "the token endpoint's "
			    "access_token is not a bearer token");
			goto fail;
		}
	if (json_string_value(json_object_get(doc, "issued_token_type")) ==
	    NULL) {
		(void)snprintf(why, whylen, "the token endpoint's answer has "
		    "no issued_token_type (RFC 8693 2.2.1)");
		goto fail;
	}
	if (tt != NULL && strcasecmp(tt, "Bearer") != 0 &&
	    strcasecmp(tt, "N_A") != 0) {
		(void)snprintf(why, whylen, "the token endpoint issued a "
		    "token of type %.32s, not Bearer", tt);
		goto fail;
	}
	v = json_object_get(doc, "expires_in");
	if (v != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) <= 0) {
			(void)snprintf(why, whylen, "the token endpoint's "
			    "expires_in is not a positive integer");
			goto fail;
		}
		*expires_in = json_integer_value(v);
	}
	if ((*token = strdup(tok)) == NULL) {
		(void)snprintf(why, whylen, "out of memory");
		goto fail;
	}
	json_decref(doc);
	return 0;
 fail:
	json_decref(doc);
	return -1;
}
