/*
 * A token endpoint's answer (oauth_token.h).  Pure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "shared/oauth_token.h"

#define B64TOKEN	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
			"0123456789-._~+/="

/* member name of doc: a string of 1..max bytes, no NUL: it, else NULL */
static const char *
oauth_str(const json_t *doc, const char *name, size_t max)
{
	const json_t	*v = json_object_get(doc, name);
	const char	*s = json_string_value(v);
	size_t		 n;

	if (s == NULL)
		return NULL;
	n = json_string_length(v);
	if (n == 0 || n > max || strlen(s) != n)
		return NULL;
	return s;
}

/* every byte of s in set (or, with set NULL, in lo..hi) */
static int
oauth_chars(const char *s, const char *set, int lo, int hi)
{
	for (; *s != '\0'; s++) {
		if (set != NULL ? strchr(set, *s) == NULL :
		    (unsigned char)*s < lo || (unsigned char)*s > hi)
			return 0;
	}
	return 1;
}

static void
oauth_free_str(char **s)
{
	if (*s != NULL) {
		OPENSSL_cleanse(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

void
oauth_token_clear(struct oauth_token *t)
{
	oauth_free_str(&t->ot_access);
	oauth_free_str(&t->ot_refresh);
	oauth_free_str(&t->ot_id_token);
	free(t->ot_scope);
	memset(t, 0, sizeof(*t));
}

/* RFC 6749 5.1's refresh_token and scope, OpenID's id_token: 0, or -1 */
static int
oauth_token_more(const json_t *doc, size_t max, struct oauth_token *t,
    char *why, size_t whylen)
{
	const char	*s;

	if (json_object_get(doc, "refresh_token") != NULL &&
	    ((s = oauth_str(doc, "refresh_token", max)) == NULL ||
	    !oauth_chars(s, NULL, 0x20, 0x7e))) {
		(void)snprintf(why, whylen, "the token endpoint's "
		    "refresh_token is not usable");
		return -1;
	}
	if (json_object_get(doc, "id_token") != NULL &&
	    ((s = oauth_str(doc, "id_token", max)) == NULL ||
	    !oauth_chars(s, B64TOKEN, 0, 0))) {
		(void)snprintf(why, whylen, "the token endpoint's id_token "
		    "is not a JWT");
		return -1;
	}
	/* RFC 6749 A.4: scope-tokens of NQSCHARs, space-separated ("":
	 * none, as some servers say it) */
	if (json_object_get(doc, "scope") != NULL &&
	    json_string_length(json_object_get(doc, "scope")) > 0 &&
	    ((s = oauth_str(doc, "scope", OAUTH_SCOPE_MAX)) == NULL ||
	    !oauth_chars(s, NULL, 0x20, 0x7e) || strchr(s, '"') != NULL ||
	    strchr(s, '\\') != NULL)) {
		(void)snprintf(why, whylen, "the token endpoint's scope is "
		    "not a list of scopes");
		return -1;
	}
	if (((s = oauth_str(doc, "refresh_token", max)) != NULL &&
	    (t->ot_refresh = strdup(s)) == NULL) ||
	    ((s = oauth_str(doc, "id_token", max)) != NULL &&
	    (t->ot_id_token = strdup(s)) == NULL) ||
	    ((s = oauth_str(doc, "scope", OAUTH_SCOPE_MAX)) != NULL &&
	    (t->ot_scope = strdup(s)) == NULL)) {
		(void)snprintf(why, whylen, "out of memory");
		return -1;
	}
	return 0;
}

int
oauth_token_parse(const char *body, size_t len, int flags, size_t max,
    struct oauth_token *t, char *why, size_t whylen)
{
	json_t		*doc, *v;
	const char	*tok, *tt;

	memset(t, 0, sizeof(*t));
	if ((doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL || !json_is_object(doc)) {
		(void)snprintf(why, whylen, "the token endpoint's answer is "
		    "not a JSON object");
		json_decref(doc);
		return -1;
	}
	if ((tok = oauth_str(doc, "access_token", max)) == NULL) {
		(void)snprintf(why, whylen, "the token endpoint's answer has "
		    "no usable access_token");
		goto fail;
	}
	/* it goes into a header: RFC 6750 2.1 b64token characters */
	if (!oauth_chars(tok, B64TOKEN, 0, 0)) {
		(void)snprintf(why, whylen, "the token endpoint's "
		    "access_token is not a bearer token");
		goto fail;
	}
	if ((flags & OAUTH_EXCHANGE) && json_string_value(json_object_get(doc,
	    "issued_token_type")) == NULL) {
		(void)snprintf(why, whylen, "the token endpoint's answer has "
		    "no issued_token_type (RFC 8693 2.2.1)");
		goto fail;
	}
	/* RFC 6749 5.1 requires token_type; RFC 8693 allows N_A */
	tt = json_string_value(json_object_get(doc, "token_type"));
	if (tt == NULL && !(flags & OAUTH_EXCHANGE)) {
		(void)snprintf(why, whylen, "the token endpoint's answer has "
		    "no token_type (RFC 6749 5.1)");
		goto fail;
	}
	if (tt != NULL && strcasecmp(tt, "Bearer") != 0 &&
	    (!(flags & OAUTH_EXCHANGE) || strcasecmp(tt, "N_A") != 0)) {
		(void)snprintf(why, whylen, "the token endpoint issued a "
		    "token of type %.32s, not Bearer", oauth_chars(tt, NULL,
		    0x21, 0x7e) ? tt : "?");
		goto fail;
	}
	v = json_object_get(doc, "expires_in");
	if (v != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) <= 0) {
			(void)snprintf(why, whylen, "the token endpoint's "
			    "expires_in is not a positive integer");
			goto fail;
		}
		t->ot_expires_in = json_integer_value(v);
	}
	if ((t->ot_access = strdup(tok)) == NULL) {
		(void)snprintf(why, whylen, "out of memory");
		goto fail;
	}
	/* an exchange's answer is read for its access token alone */
	if (!(flags & OAUTH_EXCHANGE) && oauth_token_more(doc, max, t, why,
	    whylen) == -1)
		goto fail;
	json_decref(doc);
	return 0;
 fail:
	oauth_token_clear(t);
	json_decref(doc);
	return -1;
}

void
oauth_token_error(const char *body, size_t len, char *code, size_t codelen)
{
	json_t		*doc;
	const char	*e = NULL;

	if (codelen == 0)
		return;
	code[0] = '\0';
	if (body == NULL || (doc = json_loadb(body, len, 0, NULL)) == NULL)
		return;
	/* RFC 6749 5.2: error is NQSCHARs (%x20-21 / %x23-5B / %x5D-7E) */
	if ((e = oauth_str(doc, "error", OAUTH_ERROR_MAX)) != NULL &&
	    oauth_chars(e, NULL, 0x20, 0x7e) && strchr(e, '"') == NULL &&
	    strchr(e, '\\') == NULL)
		(void)snprintf(code, codelen, "%s", e);
	json_decref(doc);
}
