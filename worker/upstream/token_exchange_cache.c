/*
 * token_exchange's pure parts (token_exchange.h): the cache key, when a token
 * stops being used, and the token endpoint's answer (RFC 8693 2.2.1,
 * read by shared/oauth_token.c).
 * No store, no I/O: unit tested (test_texch.c) and fuzzed (fuzz_texch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/sha.h>

#include "proto/hex.h"
#include "shared/oauth_token.h"
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
	struct oauth_token	 t;

	*token = NULL;
	*expires_in = 0;
	if (oauth_token_parse(body, len, OAUTH_EXCHANGE, TEXCH_TOKEN_MAX, &t,
	    why, whylen) == -1)
		return -1;
	*token = t.ot_access;
	*expires_in = t.ot_expires_in;
	t.ot_access = NULL;
	oauth_token_clear(&t);
	return 0;
}
