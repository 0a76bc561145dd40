/*
 * Incoming authentication for type oidc: an opaque token checked by
 * introspection (RFC 7662) at the authorization server, the request
 * waiting meanwhile (auth.h, auth_int.h).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/jwt.h"
#include "shared/log.h"
#include "proto/form.h"
#include "worker/auth/auth.h"
#include "worker/auth/auth_int.h"

#define AUTH_INTRO_MAX		(64 * 1024)		/* an answer */

static int
auth_intro_data(void *arg, struct http_call *c, const char *buf, size_t len)
{
	struct auth_wait	*aw = arg;

	(void)c;
	return http_body_add(&aw->aw_buf, &aw->aw_len, buf, len,
	    AUTH_INTRO_MAX);
}

static void
auth_intro_done(void *arg, struct http_call *c, int result, const char *err)
{
	struct auth_wait	*aw = arg;
	struct jwt_policy	 pol;
	json_t			*doc = NULL;
	int64_t			 exp;

	aw->aw_call = NULL;
	aw->aw_done = 1;
	aw->aw_why = "the token could not be checked";
	if (result != 0 || http_call_status(c) != 200) {
		log_warnx("auth: introspection failed: %s", err != NULL ? err :
		    "not 200");
		goto done;
	}
	doc = json_loadb(aw->aw_buf != NULL ? aw->aw_buf : "", aw->aw_len,
	    JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_true(json_object_get(doc, "active"))) {
		aw->aw_why = "the token is not active";
		goto done;
	}
	/* RFC 7662 2.2: sub is optional; a client's own token (a
	 * client_credentials grant) is that client's (RFC 9068 2.2) */
	if (json_object_get(doc, "sub") == NULL &&
	    json_is_string(json_object_get(doc, "client_id")))
		(void)json_object_set(doc, "sub",
		    json_object_get(doc, "client_id"));
	pol.jp_issuer = auth.a_oi->oi_issuer;
	pol.jp_audience = auth.a_oi->oi_audience;
	pol.jp_now = auth_now();
	pol.jp_skew = (int64_t)(auth.a_oi->oi_skew_ms / 1000);
	if (jwt_check_claims(doc, &pol, &exp, &aw->aw_why) == -1)
		goto done;
	if ((aw->aw_p = principal_new(doc, exp)) != NULL) {
		doc = NULL;
		auth_cache_put(auth.a_cache, aw->aw_tok, aw->aw_toklen,
		    aw->aw_p);
	}
done:
	json_decref(doc);
	auth_wait_end(aw);
}

int
auth_introspect(struct worker *w, struct httpd_req *req, auth_cont_fn cont,
    const char *tok)
{
	static const struct http_call_cbs cbs = { NULL, auth_intro_data,
	    auth_intro_done };
	struct auth_wait	*aw;
	struct http_call	*c;
	char			*etok = NULL, *body = NULL, *id = NULL;
	char			*sec = NULL, *cred = NULL, *key = NULL;
	unsigned char		 b64[1024];
	int			 ok = -1;

	if ((c = auth_call_new(w, "POST", auth.a_oi->oi_introspection_url)) ==
	    NULL || (etok = proto_form_escape(tok)) == NULL)
		goto done;
	if (auth.a_oi->oi_client_secret != NULL) {
		/* RFC 6749 2.3.1: form-encoded, then Basic */
		if ((id = proto_form_escape(auth.a_oi->oi_client_id)) == NULL ||
		    (sec = proto_form_escape(auth.a_oi->oi_client_secret)) ==
		    NULL || asprintf(&cred, "%s:%s", id, sec) == -1 ||
		    strlen(cred) * 4 / 3 + 8 > sizeof(b64))
			goto done;
		memcpy(b64, "Basic ", 6);
		EVP_EncodeBlock(b64 + 6, (unsigned char *)cred,
		    (int)strlen(cred));
		if (http_call_add_header(c, "Authorization", (char *)b64) == -1)
			goto done;
		if (asprintf(&body, "token=%s&token_type_hint=access_token",
		    etok) == -1)
			body = NULL;
	} else if (auth.a_oi->oi_client_id != NULL) {
		if ((id = proto_form_escape(auth.a_oi->oi_client_id)) == NULL ||
		    asprintf(&body, "token=%s&token_type_hint=access_token&"
		    "client_id=%s", etok, id) == -1)
			body = NULL;
	} else if (asprintf(&body, "token=%s&token_type_hint=access_token",
	    etok) == -1)
		body = NULL;
	if (body == NULL ||
	    http_call_add_header(c, "Content-Type",
	    "application/x-www-form-urlencoded") == -1 ||
	    http_call_set_body(c, body, strlen(body)) == -1 ||
	    (key = strdup(tok)) == NULL ||
	    (aw = auth_wait_new(w, req, cont)) == NULL)
		goto done;
	aw->aw_tok = key;
	aw->aw_toklen = strlen(key);
	key = NULL;
	aw->aw_call = c;
	aw->aw_deadline = UINT64_MAX;
	aw->aw_intro = 1;
	auth.a_nintro++;
	if (http_call_start(c, &cbs, aw) == -1) {
		aw->aw_call = NULL;
		aw->aw_done = 1;
		c = NULL;
		auth_wait_end(aw);
		ok = 0;
		goto done;
	}
	c = NULL;
	ok = 0;
done:
	if (c != NULL)
		http_call_cancel(c);
	if (cred != NULL)
		explicit_bzero(cred, strlen(cred));
	if (sec != NULL)
		explicit_bzero(sec, strlen(sec));
	if (key != NULL)
		explicit_bzero(key, strlen(key));
	free(key);
	explicit_bzero(b64, sizeof(b64));
	free(cred);
	free(sec);
	free(id);
	free(etok);
	free(body);
	return ok;
}
