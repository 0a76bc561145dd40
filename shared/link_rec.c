/*
 * The records of per-user upstream accounts (link_rec.h): one line of
 * JSON each, version-tagged ("v"), bounded on both sides; consent ids,
 * the consents' random strings and PKCE (RFC 7636).  Apart from the
 * store and the worker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "proto/mheaders.h"
#include "shared/link_rec.h"
#include "shared/rand_id.h"
#include "shared/rec_json.h"

#define LINK_REC_V	1
/* a record's line at most: two tokens, escaped, and the rest */
#define LINK_REC_MAX	(4 * LINK_TOKEN_MAX + 8 * 1024)

static const char *const consent_legs[] = { "login", "upstream" };

/* o, dumped and freed; NULL past LINK_REC_MAX */
static char *
link_dump(json_t *o, size_t *len)
{
	char	*s;

	if (o == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s != NULL && (*len = strlen(s)) > LINK_REC_MAX) {
		OPENSSL_cleanse(s, *len);
		free(s);
		return NULL;
	}
	return s;
}

char *
link_rec_encode(const struct link_rec *lr, size_t *len)
{
	return link_dump(json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:I, s:s, "
	    "s:s}", "v", LINK_REC_V, "backend", lr->lr_backend, "iss",
	    lr->lr_iss, "sub", lr->lr_sub, "linked",
	    (json_int_t)lr->lr_linked_ms, "refreshed",
	    (json_int_t)lr->lr_refreshed_ms, "expires",
	    (json_int_t)lr->lr_expires_ms, "access", lr->lr_access,
	    "refresh", lr->lr_refresh), len);
}

char *
consent_rec_encode(const struct consent_rec *cr, size_t *len)
{
	if ((size_t)cr->cr_leg >= sizeof(consent_legs) /
	    sizeof(consent_legs[0]))
		return NULL;
	return link_dump(json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, "
	    "s:I, s:I, s:s, s:s}", "v", LINK_REC_V, "id", cr->cr_id, "scope",
	    cr->cr_scope, "iss", cr->cr_iss, "sub", cr->cr_sub, "backend",
	    cr->cr_backend, "sid", cr->cr_sid, "leg", consent_legs[cr->cr_leg],
	    "created", (json_int_t)cr->cr_created_ms, "expires",
	    (json_int_t)cr->cr_expires_ms, "nonce", cr->cr_nonce, "verifier",
	    cr->cr_verifier), len);
}

/* the line parsed, if it is an object of this version */
static json_t *
link_load(const void *data, size_t len)
{
	json_t		*o, *v;
	json_error_t	 je;

	if (data == NULL || len > LINK_REC_MAX || (o = json_loadb(data, len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL)
		return NULL;
	v = json_object_get(o, "v");
	if (!json_is_object(o) || !json_is_integer(v) ||
	    json_integer_value(v) != LINK_REC_V) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int
link_rec_decode(const void *data, size_t len, struct link_rec *lr)
{
	json_t	*o;
	int	 rc = -1;

	memset(lr, 0, sizeof(*lr));
	if ((o = link_load(data, len)) == NULL)
		return -1;
	if (rec_json_copy(o, "backend", lr->lr_backend, LINK_NAME_MAX,
	    0) == 0 &&
	    rec_json_copy(o, "iss", lr->lr_iss, LINK_ISS_MAX, 1) == 0 &&
	    rec_json_copy(o, "sub", lr->lr_sub, LINK_SUB_MAX, 1) == 0 &&
	    rec_json_stamp(o, "linked", &lr->lr_linked_ms) == 0 &&
	    rec_json_stamp(o, "refreshed", &lr->lr_refreshed_ms) == 0 &&
	    rec_json_stamp(o, "expires", &lr->lr_expires_ms) == 0 &&
	    rec_json_copy(o, "access", lr->lr_access, LINK_TOKEN_MAX, 1) == 0 &&
	    rec_json_copy(o, "refresh", lr->lr_refresh, LINK_TOKEN_MAX, 1) == 0)
		rc = 0;
	json_decref(o);
	if (rc == -1)
		OPENSSL_cleanse(lr, sizeof(*lr));
	return rc;
}

int
consent_rec_decode(const void *data, size_t len, struct consent_rec *cr)
{
	json_t		*o;
	const char	*leg;
	size_t		 i;
	int		 rc = -1;

	memset(cr, 0, sizeof(*cr));
	if ((o = link_load(data, len)) == NULL)
		return -1;
	leg = json_string_value(json_object_get(o, "leg"));
	for (i = 0; leg != NULL && i < sizeof(consent_legs) /
	    sizeof(consent_legs[0]); i++)
		if (strcmp(leg, consent_legs[i]) == 0) {
			cr->cr_leg = (enum consent_leg)i;
			break;
		}
	if (leg != NULL && i < sizeof(consent_legs) /
	    sizeof(consent_legs[0]) &&
	    rec_json_copy(o, "id", cr->cr_id, CONSENT_ID_LEN, 0) == 0 &&
	    consent_id_valid(cr->cr_id) &&
	    rec_json_copy(o, "scope", cr->cr_scope, LINK_SCOPE_MAX, 0) == 0 &&
	    rec_json_copy(o, "iss", cr->cr_iss, LINK_ISS_MAX, 1) == 0 &&
	    rec_json_copy(o, "sub", cr->cr_sub, LINK_SUB_MAX, 1) == 0 &&
	    rec_json_copy(o, "backend", cr->cr_backend, LINK_NAME_MAX,
	    0) == 0 &&
	    rec_json_copy(o, "sid", cr->cr_sid, LINK_SID_MAX, 1) == 0 &&
	    rec_json_stamp(o, "created", &cr->cr_created_ms) == 0 &&
	    rec_json_stamp(o, "expires", &cr->cr_expires_ms) == 0 &&
	    rec_json_copy(o, "nonce", cr->cr_nonce, CONSENT_NONCE_LEN,
	    1) == 0 &&
	    rec_json_copy(o, "verifier", cr->cr_verifier, CONSENT_VERIFIER_LEN,
	    1) == 0)
		rc = 0;
	json_decref(o);
	if (rc == -1)
		OPENSSL_cleanse(cr, sizeof(*cr));
	return rc;
}

int
consent_id_new(char id[CONSENT_ID_LEN + 1])
{
	return rand_id_new(CONSENT_PREFIX, CONSENT_RAND_BYTES, id);
}

int
consent_id_valid(const char *s)
{
	return s != NULL && rand_id_valid(CONSENT_PREFIX, CONSENT_RAND_BYTES,
	    s, strnlen(s, CONSENT_ID_LEN + 1));
}

/* RFC 4648 5: each character 6 random bits (64 divides 256: uniform);
 * RFC 7636 4.1's unreserved characters all */
int
link_random(char *buf, size_t len)
{
	static const char	 al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char		 rb[256];
	size_t			 i;

	if (len > sizeof(rb) || RAND_bytes(rb, (int)len) != 1)
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = al[rb[i] & 63];
	buf[len] = '\0';
	OPENSSL_cleanse(rb, len);
	return 0;
}

/* BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), 43 characters */
int
link_pkce_challenge(const char *verifier, char out[44])
{
	unsigned char	 d[SHA256_DIGEST_LENGTH];
	char		*b;

	(void)SHA256((const unsigned char *)verifier, strlen(verifier), d);
	if ((b = proto_b64_encode(d, sizeof(d), 1)) == NULL)
		return -1;
	if (strlen(b) != 43) {
		free(b);
		return -1;
	}
	memcpy(out, b, 44);
	free(b);
	return 0;
}
