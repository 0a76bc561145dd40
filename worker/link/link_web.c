/*
 * The person's side of a consent (link.h; docs/ARCHITECTURE.md,
 * "Linking users' accounts"): GET /oauth/start and /oauth/callback on
 * the main listener, outside /mcp and without a bearer token (a
 * browser's).
 *
 *	/oauth/start?consent=<id>	the URL of the elicitation
 *		(link_consent_new(): the origin of the backend's
 *		callbackUrl, then this path): the consent read, a login
 *		leg's nonce and PKCE verifier stored, a cookie bound to
 *		them set, 302 to the clients' identity provider
 *	/oauth/callback?code&state	state "<id>.<nonce>"; the leg's
 *		nonce and cookie must match.  The login leg: the code
 *		exchanged, the ID token checked, the person must be the
 *		principal who asked; then the upstream leg's nonce and
 *		verifier, 302 to the backend's authorization server.
 *		The upstream leg: the consent taken (once), the code
 *		exchanged, the link stored, the 2025-11-25 session told
 *		(notifications/elicitation/complete), a page.
 *
 * Nothing secret (a code, a token, a verifier) reaches a page or a
 * log line: the log says the consent id, the backend, the outcome.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "proto/form.h"
#include "proto/http_req.h"
#include "proto/proto.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/auth/auth.h"
#include "worker/events/stream.h"
#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"
#include "worker/link/link.h"
#include "worker/link/link_int.h"
#include "worker/process/process.h"
#include "worker/process/request_hold.h"
#include "worker/state/link_store.h"

#define LINK_CODE_MAX		2048	/* an authorization code */
#define LINK_PARAM_MAX		256	/* state, error */

enum lw_step {
	LW_START = 0,
	LW_LOGIN,	/* the IdP's callback */
	LW_UPSTREAM	/* the upstream server's */
};

struct lw {
	struct reqhold		 lw_hold;
	enum lw_step		 lw_step;
	struct consent_rec	 lw_cr;
	const struct config_backend *lw_be;
	char			 lw_id[CONSENT_ID_LEN + 1];
	char			 lw_nonce[CONSENT_NONCE_LEN + 1];
	char			*lw_code;	/* the callback's, or NULL */
	char			 lw_error[LINK_PARAM_MAX];
	char			 lw_iss[LINK_PARAM_MAX];	/* RFC 9207, or "" */
	char			*lw_authorize;	/* the next leg's */
	struct link_tok		*lw_tok;
	int			 lw_store;	/* a link_store call pending */
	int			 lw_wrong;	/* another person: a page */
};

static void	lw_page(struct lw *, int status, const char *title,
		    const char *msg);

static void
lw_free(struct lw *lw)
{
	if (lw->lw_store)
		link_store->ls_cancel(lw);
	link_meta_cancel(lw);
	link_tok_cancel(lw->lw_tok);
	if (lw->lw_code != NULL) {
		OPENSSL_cleanse(lw->lw_code, strlen(lw->lw_code));
		free(lw->lw_code);
	}
	free(lw->lw_authorize);
	OPENSSL_cleanse(&lw->lw_cr, sizeof(lw->lw_cr));
	free(lw);
}

/* what the person is shown, and the log's line */
static void
lw_send(struct lw *lw, int status, const char *title, const char *msg,
    const char *location, const char *cookie)
{
	struct worker		*w = lw->lw_hold.rh_w;
	struct httpd_req	*req = lw->lw_hold.rh_req;
	struct iovec		 iov;
	char			*t = NULL, *m = NULL, *body = NULL;

	reqhold_detach(&lw->lw_hold);
	(void)httpd_add_header(req, "Cache-Control", "no-store");
	(void)httpd_add_header(req, "Referrer-Policy", "no-referrer");
	(void)httpd_add_header(req, "Content-Security-Policy",
	    "default-src 'none'; frame-ancestors 'none'");
	(void)httpd_add_header(req, "X-Content-Type-Options", "nosniff");
	if (cookie != NULL)
		(void)httpd_add_header(req, "Set-Cookie", cookie);
	if (location != NULL) {
		(void)httpd_add_header(req, "Location", location);
		httpd_send_reply_iov(req, 302, NULL, 0);
	} else {
		(void)httpd_add_header(req, "Content-Type",
		    "text/html; charset=utf-8");
		if ((t = link_html_escape(title)) == NULL ||
		    (m = link_html_escape(msg)) == NULL ||
		    asprintf(&body, "<!doctype html>\n<html><head>"
		    "<meta charset=\"utf-8\"><title>%s</title></head>\n"
		    "<body><h1>%s</h1>\n<p>%s</p></body></html>\n", t, t,
		    m) == -1)
			body = NULL;
		iov.iov_base = body != NULL ? body : (char *)"out of memory\n";
		iov.iov_len = strlen(iov.iov_base);
		httpd_send_reply_iov(req, body != NULL ? status : 500, &iov,
		    1);
	}
	free(t);
	free(m);
	free(body);
	worker_request_release(w, __func__);
}

static void
lw_page(struct lw *lw, int status, const char *title, const char *msg)
{
	log_info("link: consent %s%s%s: %d %s", *lw->lw_id != '\0' ?
	    lw->lw_id : "(none)", lw->lw_be != NULL ? ", backend " : "",
	    lw->lw_be != NULL ? lw->lw_be->cb_name : "", status, title);
	lw_send(lw, status, title, msg, NULL, NULL);
	lw_free(lw);
}

static void
lw_refused(struct lw *lw, int status, const char *title, const char *msg)
{
	link_count(lw->lw_hold.rh_w, LINKC_CONSENT_REFUSED);
	lw_page(lw, status, title, msg);
}

static void
lw_gone(struct lw *lw)
{
	lw_refused(lw, 410, "This link has expired",
	    "The sign-in link is unknown, used already or expired. Go back "
	    "to your client and try again: it will give you a new link.");
}

static const struct config_backend *
lw_backend(struct worker *w, const char *name)
{
	const struct config	*cf = w->w_conf;
	size_t			 i;

	for (i = 0; i < cf->cf_nbackends; i++)
		if (strcmp(cf->cf_backends[i].cb_name, name) == 0)
			return link_backend(&cf->cf_backends[i]) ?
			    &cf->cf_backends[i] : NULL;
	return NULL;
}

/* the leg's cookie ("Set-Cookie" value): 0, or -1 */
static int
lw_cookie(const struct lw *lw, int clear, char *out, size_t len)
{
	const struct consent_rec *cr = &lw->lw_cr;
	const char	*cb = lw->lw_be->cb_outauth->oa_ac_callback_url;
	char		 val[40];
	uint64_t	 now = store_now_ms(), age;
	int		 n;

	age = cr->cr_expires_ms > now ? (cr->cr_expires_ms - now) / 1000 : 0;
	if (link_cookie_value(cr->cr_verifier, val, sizeof(val)) == -1)
		return -1;
	n = snprintf(out, len, "%s%s=%s; Path=/oauth; Max-Age=%llu; "
	    "HttpOnly; SameSite=Lax%s", LINK_COOKIE_PREFIX, cr->cr_id,
	    clear ? "" : val, clear ? 0ULL : (unsigned long long)age,
	    strncmp(cb, "https:", 6) == 0 ? "; Secure" : "");
	OPENSSL_cleanse(val, sizeof(val));
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* the browser that started this leg: its cookie (constant time) */
static int
lw_cookie_ok(const struct lw *lw)
{
	const char	*h = httpd_req_header(lw->lw_hold.rh_req, "Cookie");
	char		 name[64], got[64], want[40];
	int		 ok;

	(void)snprintf(name, sizeof(name), "%s%s", LINK_COOKIE_PREFIX,
	    lw->lw_cr.cr_id);
	if (link_cookie_get(h, name, got, sizeof(got)) == -1 ||
	    link_cookie_value(lw->lw_cr.cr_verifier, want, sizeof(want)) == -1)
		return 0;
	ok = strlen(got) == strlen(want) &&
	    CRYPTO_memcmp(got, want, strlen(want)) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

/* a new leg: its nonce and verifier */
static int
lw_new_leg(struct lw *lw, enum consent_leg leg)
{
	lw->lw_cr.cr_leg = leg;
	return link_random(lw->lw_cr.cr_nonce, CONSENT_NONCE_LEN) == -1 ||
	    link_random(lw->lw_cr.cr_verifier, CONSENT_VERIFIER_LEN) == -1 ?
	    -1 : 0;
}

/*
 * The 302 to an authorization endpoint (RFC 6749 4.1.1, RFC 7636 4.3)
 * for the leg now in lw_cr, its cookie set.
 */
static void
lw_redirect(struct lw *lw, const char *endpoint, const char *client_id,
    const char *scope, char **extra)
{
	const struct consent_rec *cr = &lw->lw_cr;
	char	 ch[44], state[CONSENT_ID_LEN + CONSENT_NONCE_LEN + 2];
	char	 cookie[256], *q = NULL, *url = NULL;
	size_t	 qlen = 0, i;

	(void)snprintf(state, sizeof(state), "%s.%s", cr->cr_id, cr->cr_nonce);
	if (link_pkce_challenge(cr->cr_verifier, ch) == -1 ||
	    proto_form_add(&q, &qlen, "response_type", "code") == -1 ||
	    proto_form_add(&q, &qlen, "client_id", client_id) == -1 ||
	    proto_form_add(&q, &qlen, "redirect_uri",
	    lw->lw_be->cb_outauth->oa_ac_callback_url) == -1 ||
	    (scope != NULL && proto_form_add(&q, &qlen, "scope", scope) ==
	    -1) || proto_form_add(&q, &qlen, "state", state) == -1 ||
	    proto_form_add(&q, &qlen, "code_challenge", ch) == -1 ||
	    proto_form_add(&q, &qlen, "code_challenge_method", "S256") == -1)
		goto fail;
	for (i = 0; extra != NULL && extra[i] != NULL; i += 2)
		if (proto_form_add(&q, &qlen, extra[i], extra[i + 1]) == -1)
			goto fail;
	if (asprintf(&url, "%s%c%s", endpoint, strchr(endpoint, '?') != NULL ?
	    '&' : '?', q) == -1) {
		url = NULL;
		goto fail;
	}
	if (lw_cookie(lw, 0, cookie, sizeof(cookie)) == -1)
		goto fail;
	log_info("link: consent %s, backend %s: %s", cr->cr_id,
	    lw->lw_be->cb_name, cr->cr_leg == CONSENT_LOGIN ?
	    "to the identity provider" : "to the upstream server");
	lw_send(lw, 302, NULL, NULL, url, cookie);
	free(q);
	free(url);
	lw_free(lw);
	return;
 fail:
	free(q);
	free(url);
	lw_page(lw, 500, "Something went wrong", "The sign-in could not be "
	    "started. Go back to your client and try again.");
}

/*
 * /oauth/start
 */

static const struct config_oidc *
lw_oidc(const struct lw *lw)
{
	return &lw->lw_hold.rh_w->w_conf->cf_inauth.ci_oidc;
}

static void
lw_start_on_put(void *arg, int rc)
{
	struct lw		*lw = arg;
	const struct config_oidc *oi = lw_oidc(lw);

	lw->lw_store = 0;
	if (rc != 0) {
		lw_page(lw, 503, "Try again", "The sign-in could not be "
		    "recorded. Reload this page in a moment.");
		return;
	}
	lw_redirect(lw, lw->lw_authorize, oi->oi_client_id, "openid", NULL);
}

static void
lw_start_on_meta(void *arg, int rc, const char *authorize, const char *token)
{
	struct lw	*lw = arg;

	(void)token;
	if (rc != 0 || (lw->lw_authorize = strdup(authorize)) == NULL ||
	    lw_new_leg(lw, CONSENT_LOGIN) == -1) {
		lw_page(lw, 502, "Sign-in is unavailable", "The identity "
		    "provider cannot be reached. Try again in a moment.");
		return;
	}
	lw->lw_store = 1;
	if (link_store->ls_cput(lw->lw_hold.rh_w, &lw->lw_cr, lw_start_on_put,
	    lw) == -1) {
		lw->lw_store = 0;
		lw_start_on_put(lw, -1);
	}
}

/* the IdP's metadata, for either leg's need */
static int
lw_idp(struct lw *lw, link_meta_cb cb)
{
	const struct config_oidc *oi = lw_oidc(lw);

	return link_meta_get(lw->lw_hold.rh_w, oi->oi_issuer, 1,
	    oi->oi_ca_bundle, !oi->oi_jwks_private_ip, cb, lw);
}

/* the consent read: 0 it is usable, else answered (and lw freed) */
static int
lw_consent(struct lw *lw, int rc, const struct consent_rec *cr)
{
	lw->lw_store = 0;
	if (rc == STORE_NOTFOUND || (rc == 0 && (cr->cr_expires_ms <=
	    store_now_ms() || strcmp(cr->cr_id, lw->lw_id) != 0))) {
		lw_gone(lw);
		return -1;
	}
	if (rc != 0) {
		lw_page(lw, 503, "Try again", "The sign-in could not be read. "
		    "Reload this page in a moment.");
		return -1;
	}
	memcpy(&lw->lw_cr, cr, sizeof(*cr));
	if ((lw->lw_be = lw_backend(lw->lw_hold.rh_w, cr->cr_backend)) ==
	    NULL) {
		lw_gone(lw);
		return -1;
	}
	return 0;
}

static void
lw_start_on_consent(void *arg, int rc, const struct consent_rec *cr)
{
	struct lw	*lw = arg;

	if (lw_consent(lw, rc, cr) == -1)
		return;
	if (lw_idp(lw, lw_start_on_meta) == -1)
		lw_start_on_meta(lw, -1, NULL, NULL);
}

/*
 * /oauth/callback, the upstream leg
 */

static void
lw_up_on_put(void *arg, int rc)
{
	struct lw	*lw = arg;
	struct worker	*w = lw->lw_hold.rh_w;
	json_t		*msg;
	char		 text[256], cookie[256];

	lw->lw_store = 0;
	if (rc != 0) {
		lw_page(lw, 503, "Not linked", "The account could not be "
		    "recorded. Go back to your client and try again.");
		return;
	}
	link_count(w, LINKC_CONSENT_COMPLETED);
	/* MCP 2025-11-25, elicitation: the URL mode's completion */
	if (lw->lw_cr.cr_sid[0] != '\0') {
		msg = json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0",
		    "method", "notifications/elicitation/complete", "params",
		    "elicitationId", lw->lw_cr.cr_id);
		if (msg == NULL || stream_publish(w, lw->lw_cr.cr_sid,
		    msg) == -1)
			log_warnx("link: consent %s: the session could not be "
			    "told", lw->lw_cr.cr_id);
		json_decref(msg);
	}
	(void)snprintf(text, sizeof(text), "%s is linked to your account; "
	    "you can return to your client.", lw->lw_be->cb_name);
	log_info("link: consent %s, backend %s: linked", lw->lw_cr.cr_id,
	    lw->lw_be->cb_name);
	if (lw_cookie(lw, 1, cookie, sizeof(cookie)) == -1)
		*cookie = '\0';
	lw_send(lw, 200, "Linked", text, NULL, *cookie != '\0' ? cookie :
	    NULL);
	lw_free(lw);
}

static void
lw_up_on_token(void *arg, enum link_tok_rc rc, struct oauth_token *t,
    const char *code, const char *why)
{
	struct lw	*lw = arg;
	struct link_rec	*lr;
	uint64_t	 now = store_now_ms();
	int		 put;

	(void)code;
	lw->lw_tok = NULL;
	if (rc != LINK_TOK_OK || strlen(t->ot_access) > LINK_TOKEN_MAX ||
	    (t->ot_refresh != NULL && strlen(t->ot_refresh) >
	    LINK_TOKEN_MAX)) {
		log_warnx("link: consent %s, backend %s: the code exchange "
		    "failed: %s", lw->lw_cr.cr_id, lw->lw_be->cb_name,
		    rc != LINK_TOK_OK ? why : "a token too long");
		lw_page(lw, 502, "Not linked", "The service's authorization "
		    "server did not give vmcpd a token. Go back to your "
		    "client and try again.");
		return;
	}
	if ((lr = calloc(1, sizeof(*lr))) == NULL) {
		lw_page(lw, 500, "Not linked", "Out of memory.");
		return;
	}
	(void)snprintf(lr->lr_backend, sizeof(lr->lr_backend), "%s",
	    lw->lw_be->cb_name);
	(void)snprintf(lr->lr_iss, sizeof(lr->lr_iss), "%s", lw->lw_cr.cr_iss);
	(void)snprintf(lr->lr_sub, sizeof(lr->lr_sub), "%s", lw->lw_cr.cr_sub);
	lr->lr_linked_ms = now;
	lr->lr_expires_ms = t->ot_expires_in > 0 ? now +
	    (uint64_t)t->ot_expires_in * 1000 : 0;
	(void)snprintf(lr->lr_access, sizeof(lr->lr_access), "%s",
	    t->ot_access);
	if (t->ot_refresh != NULL)
		(void)snprintf(lr->lr_refresh, sizeof(lr->lr_refresh), "%s",
		    t->ot_refresh);
	lw->lw_store = 1;
	put = link_store->ls_put(lw->lw_hold.rh_w, lw->lw_cr.cr_scope, lr,
	    lw_up_on_put, lw);
	OPENSSL_cleanse(lr, sizeof(*lr));
	free(lr);
	if (put == -1) {
		lw->lw_store = 0;
		lw_up_on_put(lw, -1);
	}
}

static void
lw_up_on_meta(void *arg, int rc, const char *authorize, const char *token)
{
	struct lw		*lw = arg;
	const struct config_outauth *oa = lw->lw_be->cb_outauth;
	struct link_tok_client	 c;
	const char		*form[] = { "grant_type", "authorization_code",
	    "code", lw->lw_code, "redirect_uri", oa->oa_ac_callback_url,
	    "code_verifier", lw->lw_cr.cr_verifier, NULL };

	(void)authorize;
	if (rc != 0) {
		lw_page(lw, 502, "Not linked", "The service's authorization "
		    "server cannot be reached. Go back to your client and try "
		    "again.");
		return;
	}
	link_tok_client_of(lw->lw_be, oa->oa_ac_token_url != NULL ?
	    oa->oa_ac_token_url : token, &c);
	if ((lw->lw_tok = link_tok_post(lw->lw_hold.rh_w, &c, form,
	    lw_up_on_token, lw)) == NULL)
		lw_up_on_token(lw, LINK_TOK_FAILED, NULL, "",
		    "cannot send the request");
}

/* the consent taken: this callback is its one completion */
static void
lw_up_on_take(void *arg, int rc, const struct consent_rec *cr)
{
	struct lw	*lw = arg;

	if (lw_consent(lw, rc, cr) == -1)
		return;
	/* taken after another leg began: not this callback's */
	if (lw->lw_cr.cr_leg != CONSENT_UPSTREAM ||
	    CRYPTO_memcmp(lw->lw_cr.cr_nonce, lw->lw_nonce,
	    CONSENT_NONCE_LEN) != 0) {
		lw_gone(lw);
		return;
	}
	if (lw->lw_code == NULL) {
		lw_refused(lw, 403, "Consent refused", "You refused to link "
		    "your account (or the service did): nothing was linked. "
		    "Your client will ask again if it needs it.");
		return;
	}
	if (link_endpoints(lw->lw_hold.rh_w, lw->lw_be, lw_up_on_meta,
	    lw) == -1)
		lw_up_on_meta(lw, -1, NULL, NULL);
}

/*
 * /oauth/callback, the login leg
 */

static void
lw_login_on_put(void *arg, int rc)
{
	struct lw		*lw = arg;
	const struct config_outauth *oa = lw->lw_be->cb_outauth;

	lw->lw_store = 0;
	if (lw->lw_wrong) {
		lw_refused(lw, 403, "Signed in as someone else",
		    "You are signed in as someone other than the person who "
		    "asked for this link: nothing was linked. Sign in as that "
		    "person, or go back to your client.");
		return;
	}
	if (rc != 0) {
		lw_page(lw, 503, "Try again", "The sign-in could not be "
		    "recorded. Go back to your client and try again.");
		return;
	}
	lw_redirect(lw, lw->lw_authorize, oa->oa_ac_client_id,
	    oa->oa_ac_scopes, oa->oa_ac_extra);
}

/* the upstream server's authorization endpoint: the next leg stored */
static void
lw_login_on_up(void *arg, int rc, const char *authorize, const char *token)
{
	struct lw	*lw = arg;
	const struct config_outauth *oa = lw->lw_be->cb_outauth;

	(void)token;
	if (oa->oa_ac_authorize_url != NULL)
		authorize = oa->oa_ac_authorize_url;
	if (rc != 0 || (lw->lw_authorize = strdup(authorize)) == NULL ||
	    lw_new_leg(lw, CONSENT_UPSTREAM) == -1) {
		lw_page(lw, 502, "Not linked", "The service's authorization "
		    "server cannot be reached. Go back to your client and try "
		    "again.");
		return;
	}
	lw->lw_store = 1;
	if (link_store->ls_cput(lw->lw_hold.rh_w, &lw->lw_cr, lw_login_on_put,
	    lw) == -1) {
		lw->lw_store = 0;
		lw_login_on_put(lw, -1);
	}
}

static void
lw_login_on_token(void *arg, enum link_tok_rc rc, struct oauth_token *t,
    const char *code, const char *why)
{
	struct lw	*lw = arg;
	struct worker	*w = lw->lw_hold.rh_w;
	const struct config_oidc *oi = &w->w_conf->cf_inauth.ci_oidc;
	char		 scope[AUTH_SCOPE_LEN + 1];
	const char	*iwhy;
	int		 v;

	(void)code;
	lw->lw_tok = NULL;
	if (rc != LINK_TOK_OK || t->ot_id_token == NULL) {
		log_warnx("link: consent %s: the login's code exchange "
		    "failed: %s", lw->lw_cr.cr_id, rc != LINK_TOK_OK ? why :
		    "no id_token");
		lw_page(lw, 502, "Sign-in failed", "The identity provider did "
		    "not confirm who you are. Go back to your client and try "
		    "again.");
		return;
	}
	if ((v = auth_id_token(w, t->ot_id_token, oi->oi_client_id, scope,
	    &iwhy)) != 0) {
		log_warnx("link: consent %s: the ID token is refused: %s",
		    lw->lw_cr.cr_id, iwhy);
		lw_page(lw, v == -2 ? 503 : 502, "Sign-in failed", v == -2 ?
		    "The identity provider's keys are not here yet. Go back "
		    "to your client and try again in a moment." :
		    "The identity provider's answer could not be verified.");
		return;
	}
	if (!auth_scope_eq(scope, lw->lw_cr.cr_scope)) {
		/* this leg's nonce is spent; the consent stays for the
		 * right person */
		lw->lw_wrong = 1;
		if (link_random(lw->lw_cr.cr_nonce, CONSENT_NONCE_LEN) == -1) {
			lw_login_on_put(lw, 0);
			return;
		}
		lw->lw_store = 1;
		if (link_store->ls_cput(w, &lw->lw_cr, lw_login_on_put,
		    lw) == -1) {
			lw->lw_store = 0;
			lw_login_on_put(lw, 0);
		}
		return;
	}
	if (link_endpoints(w, lw->lw_be, lw_login_on_up, lw) == -1)
		lw_login_on_up(lw, -1, NULL, NULL);
}

static void
lw_login_on_meta(void *arg, int rc, const char *authorize, const char *token)
{
	struct lw		*lw = arg;
	const struct config_oidc *oi = lw_oidc(lw);
	struct link_tok_client	 c;
	const char		*form[] = { "grant_type", "authorization_code",
	    "code", lw->lw_code, "redirect_uri",
	    lw->lw_be->cb_outauth->oa_ac_callback_url, "code_verifier",
	    lw->lw_cr.cr_verifier, NULL };

	(void)authorize;
	if (rc != 0) {
		lw_page(lw, 502, "Sign-in is unavailable", "The identity "
		    "provider cannot be reached. Try again in a moment.");
		return;
	}
	memset(&c, 0, sizeof(c));
	c.ltc_url = token;
	c.ltc_cafile = oi->oi_ca_bundle;
	c.ltc_id = oi->oi_client_id;
	c.ltc_secret = oi->oi_client_secret;
	c.ltc_public_only = !oi->oi_jwks_private_ip;
	if ((lw->lw_tok = link_tok_post(lw->lw_hold.rh_w, &c, form,
	    lw_login_on_token, lw)) == NULL)
		lw_login_on_token(lw, LINK_TOK_FAILED, NULL, "",
		    "cannot send the request");
}

/*
 * RFC 9207 (mix-up defence): an answer that names its issuer names the
 * one this leg went to, when vmcpd knows it (the IdP's always; the
 * upstream server's when configured by its issuer)
 */
static int
lw_iss_ok(const struct lw *lw)
{
	const struct config	*cf = lw->lw_hold.rh_w->w_conf;
	const char		*want;

	if (*lw->lw_iss == '\0')
		return 1;
	if (lw->lw_cr.cr_leg == CONSENT_UPSTREAM)
		want = lw->lw_be->cb_outauth->oa_ac_issuer;
	else
		want = cf->cf_inauth.ci_oidc.oi_issuer;
	return want == NULL || strcmp(want, lw->lw_iss) == 0;
}

static void
lw_callback_on_consent(void *arg, int rc, const struct consent_rec *cr)
{
	struct lw	*lw = arg;
	struct worker	*w = lw->lw_hold.rh_w;

	if (lw_consent(lw, rc, cr) == -1)
		return;
	/* the leg's nonce, and the browser that started the leg */
	if (CRYPTO_memcmp(lw->lw_cr.cr_nonce, lw->lw_nonce,
	    CONSENT_NONCE_LEN) != 0) {
		lw_gone(lw);
		return;
	}
	if (!lw_cookie_ok(lw)) {
		lw_refused(lw, 400, "Not this browser", "This sign-in was "
		    "started in another browser (or its cookie is gone): "
		    "nothing was linked. Go back to your client and try "
		    "again.");
		return;
	}
	if (!lw_iss_ok(lw)) {
		lw_refused(lw, 400, "Answer from another server", "This "
		    "sign-in answer names another server than the one vmcpd "
		    "sent you to: nothing was linked. Go back to your client "
		    "and try again.");
		return;
	}
	if (lw->lw_cr.cr_leg == CONSENT_UPSTREAM) {
		/* RFC 6749 10.5: a code is used once; so is the consent */
		lw->lw_step = LW_UPSTREAM;
		lw->lw_store = 1;
		if (link_store->ls_ctake(w, lw->lw_id, lw_up_on_take,
		    lw) == -1) {
			lw->lw_store = 0;
			lw_up_on_take(lw, -1, NULL);
		}
		return;
	}
	lw->lw_step = LW_LOGIN;
	if (lw->lw_code == NULL) {
		lw_refused(lw, 403, "Sign-in refused", "The sign-in was "
		    "refused or cancelled: nothing was linked. Go back to "
		    "your client and try again.");
		return;
	}
	if (lw_idp(lw, lw_login_on_meta) == -1)
		lw_login_on_meta(lw, -1, NULL, NULL);
}

/*
 * Entry
 */

static void
lw_callback(struct lw *lw, const char *q)
{
	char	 state[LINK_PARAM_MAX], *code;

	if (link_query_get(q, "state", state, sizeof(state)) == -1 ||
	    link_state_split(state, lw->lw_id, sizeof(lw->lw_id),
	    lw->lw_nonce, sizeof(lw->lw_nonce)) == -1) {
		*lw->lw_id = '\0';
		lw_refused(lw, 400, "This link is not valid", "The sign-in "
		    "answer is not one vmcpd sent. Go back to your client and "
		    "try again.");
		return;
	}
	if (link_query_get(q, "error", lw->lw_error,
	    sizeof(lw->lw_error)) == -1) {
		*lw->lw_error = '\0';
		if ((code = malloc(LINK_CODE_MAX)) == NULL ||
		    link_query_get(q, "code", code, LINK_CODE_MAX) == -1 ||
		    *code == '\0') {
			free(code);
			lw_refused(lw, 400, "This link is not valid", "The "
			    "sign-in answer has no code. Go back to your "
			    "client and try again.");
			return;
		}
		lw->lw_code = code;
	}
	if (link_query_get(q, "iss", lw->lw_iss, sizeof(lw->lw_iss)) == -1)
		*lw->lw_iss = '\0';
	lw->lw_store = 1;
	if (link_store->ls_cget(lw->lw_hold.rh_w, lw->lw_id,
	    lw_callback_on_consent, lw) == -1) {
		lw->lw_store = 0;
		lw_callback_on_consent(lw, -1, NULL);
	}
}

int
link_web(struct worker *w, struct httpd_req *req, const char *path)
{
	const char	*q = httpd_req_query(req);
	struct lw	*lw;
	int		 start = strcmp(path, "/oauth/start") == 0;

	if (!start && strcmp(path, "/oauth/callback") != 0)
		return 0;
	if (httpd_req_method(req) != HTTP_M_GET) {
		(void)httpd_add_header(req, "Allow", "GET");
		front_reply_error(req, 405, NULL, JSONRPC_INVALID_REQUEST,
		    "Method Not Allowed: GET only");
		return 1;
	}
	if ((lw = calloc(1, sizeof(*lw))) == NULL) {
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return 1;
	}
	reqhold_attach(&lw->lw_hold, w, req);
	if (w->w_conf->cf_inauth.ci_type != CONFIG_INAUTH_OIDC ||
	    w->w_conf->cf_inauth.ci_oidc.oi_client_id == NULL) {
		lw_page(lw, 404, "Not found", "No account linking here.");
		return 1;
	}
	if (!start) {
		lw_callback(lw, q);
		return 1;
	}
	lw->lw_step = LW_START;
	if (link_query_get(q, "consent", lw->lw_id, sizeof(lw->lw_id)) ==
	    -1 || !consent_id_valid(lw->lw_id)) {
		*lw->lw_id = '\0';
		lw_page(lw, 400, "This link is not valid", "Go back to your "
		    "client and try again: it will give you a new link.");
		return 1;
	}
	lw->lw_store = 1;
	if (link_store->ls_cget(w, lw->lw_id, lw_start_on_consent, lw) == -1) {
		lw->lw_store = 0;
		lw_start_on_consent(lw, -1, NULL);
	}
	return 1;
}
