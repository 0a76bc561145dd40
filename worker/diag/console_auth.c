/*
 * Who may read the console's listener and who may act (console.h),
 * with daemon.console (shared/config_console.h):
 *
 *	the token	Authorization: Bearer <token> (a script, curl),
 *			or typed once into /console/login's form
 *	the login	/console/login?with=oidc: an OpenID Connect login
 *			at incomingAuth.oidc's issuer (code flow, PKCE,
 *			state bound to this browser by a cookie); the ID
 *			token checked by auth_id_claims(), its groups
 *			claim must hold login.adminGroup
 *
 * Either gives a session cookie: vmcpd_console, HttpOnly,
 * SameSite=Strict, sealed with the daemon's key (shared/seal.h: any
 * worker, and with sealKeyFile any node, opens it; altered, it does
 * not) over who, how, its expiry and the session's CSRF token, which
 * every form carries and every POST must show; a token's session also
 * holds a hash of the token, so that a new token (a reload) signs it
 * out.  A Bearer request's CSRF token is derived from the token: a
 * browser never sends the header on its own, and the forms of a page
 * read with it still work.
 * Nothing secret (the token, a code, a cookie) reaches a page or a log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "proto/form.h"
#include "proto/headers.h"
#include "proto/http_req.h"
#include "proto/mheaders.h"
#include "proto/proto.h"
#include "shared/config.h"
#include "shared/link_rec.h"
#include "shared/log.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "worker/auth/auth.h"
#include "worker/diag/console_int.h"
#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"
#include "worker/link/link_int.h"
#include "worker/process/process.h"
#include "worker/process/request_hold.h"

#define CONSOLE_COOKIE		"vmcpd_console"
#define CONSOLE_LOGIN_COOKIE	"vmcpd_console_login"
/* bound as the seal's associated data: neither opens as the other */
#define CONSOLE_AD_SESSION	"vmcpd console session v1"
#define CONSOLE_AD_LOGIN	"vmcpd console login v1"
#define CONSOLE_SEALED_MAX	1024	/* a cookie's sealed bytes */
#define CONSOLE_NONCE_LEN	32
#define CONSOLE_VERIFIER_LEN	64
#define CONSOLE_LOGIN_MS	(10ULL * 60 * 1000)	/* a login's leg */
#define CONSOLE_CODE_MAX	2048
#define CONSOLE_FORM_MAX	4096

static const struct config_console *
ca_conf(const struct worker *w)
{
	return &w->w_conf->cf_console;
}

int
console_actions_enabled(const struct worker *w)
{
	return ca_conf(w)->cc_on;
}

/*
 * Sealed cookies: a JSON object sealed under ad, in hex (seal_json_hex())
 */

/* the cookie name of req opened under ad, unexpired: its object, or
 * NULL */
static json_t *
ca_open(struct httpd_req *req, const char *name, const char *ad)
{
	char		 hx[2 * CONSOLE_SEALED_MAX + 1];
	json_t		*o;
	json_int_t	 e;

	if (link_cookie_get(httpd_req_header(req, "Cookie"), name, hx,
	    sizeof(hx)) == -1 || (o = seal_json_open_hex(ad, hx,
	    CONSOLE_SEALED_MAX)) == NULL)
		return NULL;
	e = json_integer_value(json_object_get(o, "e"));
	if (e <= 0 || (uint64_t)e <= store_now_ms()) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* a Set-Cookie value: malloc'd, or NULL */
static char *
ca_cookie(const struct worker *w, const char *name, const char *path,
    const char *value, uint64_t age_ms, const char *samesite)
{
	const char	*cb = ca_conf(w)->cc_callback_url;
	char		*c;

	if (asprintf(&c, "%s=%s; Path=%s; Max-Age=%llu; HttpOnly; "
	    "SameSite=%s%s", name, value != NULL ? value : "", path,
	    value != NULL ? (unsigned long long)(age_ms / 1000) : 0ULL,
	    samesite, cb != NULL && strncasecmp(cb, "https:", 6) == 0 ?
	    "; Secure" : "") == -1)
		return NULL;
	return c;
}

/*
 * The token
 */

/* s is the console's token: SHA-256 of both compared (constant time,
 * whatever their lengths) */
static int
ca_token_ok(const struct worker *w, const char *s)
{
	const char	*tok = ca_conf(w)->cc_token;
	unsigned char	 a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];

	if (tok == NULL || s == NULL)
		return 0;
	(void)SHA256((const unsigned char *)s, strlen(s), a);
	(void)SHA256((const unsigned char *)tok, strlen(tok), b);
	return CRYPTO_memcmp(a, b, sizeof(a)) == 0;
}

/* a hash of the token under domain (43 characters): the forms' CSRF
 * token of a Bearer request; the token's mark in its sessions */
static void
ca_token_hash(const struct worker *w, const char *domain,
    char out[CONSOLE_CSRF_LEN + 1])
{
	char		 in[32 + CONSOLE_TOKEN_MAX];
	unsigned char	 d[SHA256_DIGEST_LENGTH];
	int		 n;

	n = snprintf(in, sizeof(in), "vmcpd console %s\n%s", domain,
	    ca_conf(w)->cc_token);
	(void)SHA256((const unsigned char *)in, n > 0 && (size_t)n <
	    sizeof(in) ? (size_t)n : 0, d);
	/* 43 base64url characters of the 32 bytes */
	if (proto_b64_encode_buf(d, sizeof(d), 1, out, CONSOLE_CSRF_LEN + 1) !=
	    CONSOLE_CSRF_LEN)
		memset(out, 0, CONSOLE_CSRF_LEN + 1);	/* matches nothing */
	OPENSSL_cleanse(in, sizeof(in));
	OPENSSL_cleanse(d, sizeof(d));
}

/* a token's session holds its mark: another token (a reload that
 * changed it) signs it out */
static int
ca_token_mark_ok(const struct worker *w, const char *mark)
{
	char	want[CONSOLE_CSRF_LEN + 1];
	int	ok;

	if (ca_conf(w)->cc_token == NULL)
		return 0;
	ca_token_hash(w, "session", want);
	ok = strlen(mark) == CONSOLE_CSRF_LEN &&
	    CRYPTO_memcmp(want, mark, CONSOLE_CSRF_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

/*
 * Who
 */

int
console_who(struct worker *w, struct httpd_req *req, struct console_who *who)
{
	const char	*h = httpd_req_header(req, "Authorization");
	json_t		*o;
	const char	*u, *s, *c, *v;

	memset(who, 0, sizeof(*who));
	if (!console_actions_enabled(w))
		return 0;
	if (h != NULL) {
		if (strncasecmp(h, "Bearer ", 7) != 0 || !ca_token_ok(w,
		    h + 7 + strspn(h + 7, " ")))
			return 0;
		who->cw_via = CONSOLE_VIA_TOKEN;
		(void)snprintf(who->cw_user, sizeof(who->cw_user),
		    "console token");
		ca_token_hash(w, "csrf", who->cw_csrf);
		return 1;
	}
	if ((o = ca_open(req, CONSOLE_COOKIE, CONSOLE_AD_SESSION)) == NULL)
		return 0;
	if (json_unpack(o, "{s:s, s:s, s:s, s:s}", "u", &u, "d", &s, "c", &c,
	    "v", &v) == 0 && strlen(c) == CONSOLE_CSRF_LEN &&
	    (strcmp(v, "token") == 0 ? ca_token_mark_ok(w, s) :
	    strcmp(v, "login") == 0 && ca_conf(w)->cc_login)) {
		who->cw_via = CONSOLE_VIA_SESSION;
		(void)snprintf(who->cw_user, sizeof(who->cw_user), "%s", u);
		if (strcmp(v, "login") == 0)
			(void)snprintf(who->cw_sub, sizeof(who->cw_sub), "%s",
			    s);
		memcpy(who->cw_csrf, c, CONSOLE_CSRF_LEN + 1);
	}
	json_decref(o);
	return who->cw_via != CONSOLE_VIA_NONE;
}

int
console_csrf_ok(const struct console_who *who, const char *csrf)
{
	return who->cw_via != CONSOLE_VIA_NONE && csrf != NULL &&
	    strlen(csrf) == CONSOLE_CSRF_LEN &&
	    CRYPTO_memcmp(who->cw_csrf, csrf, CONSOLE_CSRF_LEN) == 0;
}

int
console_origin_ok(struct httpd_req *req)
{
	const char	*o = httpd_req_header(req, "Origin");
	const char	*sfs = httpd_req_header(req, "Sec-Fetch-Site");
	const char	*host = httpd_req_header(req, "Host");
	const char	*p;

	if (sfs != NULL && strcmp(sfs, "same-origin") != 0)
		return 0;
	if (o == NULL)
		return 1;
	if ((p = strstr(o, "://")) == NULL || host == NULL ||
	    (strncasecmp(o, "http://", 7) != 0 &&
	    strncasecmp(o, "https://", 8) != 0))
		return 0;
	return strcasecmp(p + 3, host) == 0;
}

int
console_auth_admin(struct worker *w, struct httpd_req *req,
    char tok[CONSOLE_CSRF_LEN + 1])
{
	struct console_who	who;

	tok[0] = '\0';
	if (!console_who(w, req, &who))
		return 0;
	memcpy(tok, who.cw_csrf, CONSOLE_CSRF_LEN + 1);
	OPENSSL_cleanse(&who, sizeof(who));
	return 1;
}

int
console_auth_read(struct worker *w, struct httpd_req *req)
{
	struct console_who	 who;
	const char		*accept = httpd_req_header(req, "Accept");

	if (!ca_conf(w)->cc_auth_reads || console_who(w, req, &who))
		return 1;
	/* a person's browser goes to the login; a script is told how */
	if (httpd_req_method(req) == HTTP_M_GET &&
	    strcmp(httpd_req_path(req), "/") == 0 && accept != NULL &&
	    strstr(accept, "text/html") != NULL) {
		(void)httpd_add_header(req, "Cache-Control", "no-store");
		(void)httpd_add_header(req, "Location", "/console/login");
		httpd_send_reply_iov(req, 303, NULL, 0);
		return 0;
	}
	(void)httpd_add_header(req, "WWW-Authenticate",
	    "Bearer realm=\"vmcpd console\"");
	front_reply_error(req, 401, NULL, JSONRPC_INVALID_REQUEST,
	    "Unauthorized: the diagnostics listener needs the console's "
	    "token (Authorization: Bearer) or a login at /console/login");
	return 0;
}

/*
 * Pages
 */

int
console_form_get(struct httpd_req *req, const char *name, char *out,
    size_t outlen)
{
	const char	*ct = httpd_req_header(req, "Content-Type");
	const char	*body;
	char		 buf[CONSOLE_FORM_MAX + 1];
	size_t		 len;

	if (ct == NULL || strncasecmp(ct, "application/x-www-form-urlencoded",
	    33) != 0 || (body = httpd_req_body(req, &len)) == NULL ||
	    len > CONSOLE_FORM_MAX)
		return -1;
	memcpy(buf, body, len);
	buf[len] = '\0';
	return link_query_get(buf, name, out, outlen);
}

/* a page's: no cache, no frame, no script, forms to this origin only */
static void
ca_page_headers(struct httpd_req *req)
{
	(void)httpd_add_header(req, "Cache-Control", "no-store");
	/* same-origin: a no-referrer page's forms would send Origin: null */
	(void)httpd_add_header(req, "Referrer-Policy", "same-origin");
	(void)httpd_add_header(req, "Content-Security-Policy",
	    "default-src 'none'; form-action 'self'; frame-ancestors 'none'");
	(void)httpd_add_header(req, "X-Content-Type-Options", "nosniff");
	(void)httpd_add_header(req, "Content-Type", "text/html; charset=utf-8");
}

/* body (NULL: no memory, a 500) sent */
static void
ca_send(struct httpd_req *req, int status, const char *body)
{
	struct iovec	 iov;

	iov.iov_base = (char *)(body != NULL ? body : "out of memory\n");
	iov.iov_len = strlen(iov.iov_base);
	httpd_send_reply_iov(req, body != NULL ? status : 500, &iov, 1);
}

void
console_page(struct httpd_req *req, int status, const char *title,
    const char *msg, const char *cookie, const char *csrf)
{
	char		*t, *m, *body = NULL;

	ca_page_headers(req);
	if (cookie != NULL)
		(void)httpd_add_header(req, "Set-Cookie", cookie);
	t = link_html_escape(title);
	m = link_html_escape(msg);
	/* csrf is base64url: nothing in it to escape */
	if (t == NULL || m == NULL || asprintf(&body, "<!doctype html>\n"
	    "<html><head><meta charset=\"utf-8\"><title>%s</title></head>\n"
	    "<body><h1>%s</h1>\n<p id=\"msg\">%s</p>\n"
	    "<p><a href=\"/\">Back to the console</a></p>\n%s%s%s"
	    "</body></html>\n", t, t, m, csrf != NULL ? "<form method=\"post\" "
	    "action=\"/console/logout\"><input type=\"hidden\" "
	    "name=\"csrf\" value=\"" : "", csrf != NULL ? csrf : "",
	    csrf != NULL ? "\"><button type=\"submit\">Sign out</button>"
	    "</form>\n" : "") == -1)
		body = NULL;
	ca_send(req, status, body);
	free(t);
	free(m);
	free(body);
}

/* the session cookie for user (sub: the login's, or the token's mark),
 * and a page that takes the browser on to the console */
static void
ca_session_start(struct worker *w, struct httpd_req *req, const char *via,
    const char *user, const char *sub)
{
	const struct config_console *cc = ca_conf(w);
	char		 csrf[CONSOLE_CSRF_LEN + 1], *sealed = NULL;
	char		*cookie = NULL, msg[CONSOLE_USER_MAX + 64];
	json_t		*o;

	if (link_random(csrf, CONSOLE_CSRF_LEN) == 0 && (o = json_pack(
	    "{s:s, s:s, s:s, s:s, s:I}", "v", via, "u", user, "d", sub, "c",
	    csrf, "e", (json_int_t)(store_now_ms() +
	    cc->cc_session_ttl_ms))) != NULL) {
		sealed = seal_json_hex(CONSOLE_AD_SESSION, o,
		    CONSOLE_SEALED_MAX);
		json_decref(o);
	}
	if (sealed == NULL || (cookie = ca_cookie(w, CONSOLE_COOKIE, "/",
	    sealed, cc->cc_session_ttl_ms, "Strict")) == NULL) {
		free(sealed);
		OPENSSL_cleanse(csrf, sizeof(csrf));
		console_page(req, 500, "Not signed in", "The session could "
		    "not be made. Try again.", NULL, NULL);
		return;
	}
	log_info("console: %s signed in (%s)", user, via);
	(void)snprintf(msg, sizeof(msg), "Signed in as %s.", user);
	console_page(req, 200, "Signed in", msg, cookie, csrf);
	OPENSSL_cleanse(csrf, sizeof(csrf));
	free(sealed);
	free(cookie);
}

/* GET /console/login: how to sign in */
static void
ca_login_page(struct worker *w, struct httpd_req *req, int status,
    const char *note)
{
	const struct config_console *cc = ca_conf(w);
	char		*n = NULL, *body = NULL;

	ca_page_headers(req);
	if ((n = link_html_escape(note != NULL ? note : "")) == NULL ||
	    asprintf(&body, "<!doctype html>\n<html><head><meta "
	    "charset=\"utf-8\"><title>vmcpd console: sign in</title>"
	    "</head>\n<body><h1>Sign in to the console</h1>\n"
	    "<p id=\"msg\">%s</p>\n%s%s<p><a href=\"/\">Back to the console"
	    "</a></p></body></html>\n", n, cc->cc_token != NULL ?
	    "<form method=\"post\" action=\"/console/login\">"
	    "<label>Console token <input type=\"password\" name=\"token\" "
	    "autocomplete=\"off\"></label> <button type=\"submit\">Sign in"
	    "</button></form>\n" : "", cc->cc_login ?
	    "<p><a id=\"oidc\" href=\"/console/login?with=oidc\">Sign in "
	    "with your identity provider</a></p>\n" : "") == -1)
		body = NULL;
	ca_send(req, status, body);
	free(n);
	free(body);
}

/* POST /console/login: the token typed into the form */
static void
ca_login_token(struct worker *w, struct httpd_req *req)
{
	char	tok[CONSOLE_TOKEN_MAX + 1], mark[CONSOLE_CSRF_LEN + 1];

	if (!console_origin_ok(req)) {
		console_page(req, 403, "Refused", "This form was sent from "
		    "another site.", NULL, NULL);
		return;
	}
	if (ca_conf(w)->cc_token == NULL || console_form_get(req, "token",
	    tok, sizeof(tok)) == -1 || !ca_token_ok(w, tok)) {
		OPENSSL_cleanse(tok, sizeof(tok));
		log_warnx("console: a sign-in with a wrong token");
		ca_login_page(w, req, 401, "That is not the console's token.");
		return;
	}
	OPENSSL_cleanse(tok, sizeof(tok));
	ca_token_hash(w, "session", mark);
	ca_session_start(w, req, "token", "console token", mark);
}

/*
 * The OIDC login
 */

struct ca_login {
	struct reqhold	 cl_hold;
	char		 cl_verifier[CONSOLE_VERIFIER_LEN + 1];
	char		 cl_nonce[CONSOLE_NONCE_LEN + 1];
	char		*cl_code;
	struct link_tok	*cl_tok;
};

static void
cl_free(struct ca_login *cl)
{
	link_meta_cancel(cl);
	link_tok_cancel(cl->cl_tok);
	if (cl->cl_code != NULL) {
		OPENSSL_cleanse(cl->cl_code, strlen(cl->cl_code));
		free(cl->cl_code);
	}
	OPENSSL_cleanse(cl, sizeof(*cl));
	free(cl);
}

/* the wait ends: the page, the request let go, cl freed */
static void
cl_page(struct ca_login *cl, int status, const char *title, const char *msg)
{
	struct worker	*w = cl->cl_hold.rh_w;

	reqhold_detach(&cl->cl_hold);
	console_page(cl->cl_hold.rh_req, status, title, msg, NULL, NULL);
	worker_request_release(w, __func__);
	cl_free(cl);
}

static const char *
ca_client_id(const struct worker *w)
{
	const struct config_console *cc = ca_conf(w);

	return cc->cc_client_id != NULL ? cc->cc_client_id :
	    w->w_conf->cf_inauth.ci_oidc.oi_client_id;
}

static int
ca_meta(struct ca_login *cl, link_meta_cb cb)
{
	const struct config_oidc *oi = &cl->cl_hold.rh_w->w_conf->cf_inauth.
	    ci_oidc;

	return link_meta_get(cl->cl_hold.rh_w, oi->oi_issuer, 1,
	    oi->oi_ca_bundle, !oi->oi_jwks_private_ip, cb, cl);
}

/* the 302 to the issuer's authorization endpoint (RFC 6749 4.1.1,
 * RFC 7636 4.3), its state and verifier in the sealed login cookie */
static void
cl_start_on_meta(void *arg, int rc, const char *authorize, const char *token)
{
	struct ca_login	*cl = arg;
	struct worker	*w = cl->cl_hold.rh_w;
	struct httpd_req *req = cl->cl_hold.rh_req;
	char		 ch[44], *q = NULL, *url = NULL, *sealed = NULL;
	char		*cookie = NULL;
	size_t		 qlen = 0;
	json_t		*o;

	(void)token;
	if (rc != 0) {
		cl_page(cl, 502, "Sign-in is unavailable", "The identity "
		    "provider cannot be reached. Try again in a moment.");
		return;
	}
	if ((o = json_pack("{s:s, s:s, s:I}", "n", cl->cl_nonce, "p",
	    cl->cl_verifier, "e", (json_int_t)(store_now_ms() +
	    CONSOLE_LOGIN_MS))) != NULL) {
		sealed = seal_json_hex(CONSOLE_AD_LOGIN, o,
		    CONSOLE_SEALED_MAX);
		json_decref(o);
	}
	if (sealed == NULL || link_pkce_challenge(cl->cl_verifier, ch) == -1 ||
	    proto_form_add(&q, &qlen, "response_type", "code") == -1 ||
	    proto_form_add(&q, &qlen, "client_id", ca_client_id(w)) == -1 ||
	    proto_form_add(&q, &qlen, "redirect_uri",
	    ca_conf(w)->cc_callback_url) == -1 ||
	    proto_form_add(&q, &qlen, "scope", "openid") == -1 ||
	    proto_form_add(&q, &qlen, "state", cl->cl_nonce) == -1 ||
	    proto_form_add(&q, &qlen, "code_challenge", ch) == -1 ||
	    proto_form_add(&q, &qlen, "code_challenge_method", "S256") == -1 ||
	    asprintf(&url, "%s%c%s", authorize, strchr(authorize, '?') !=
	    NULL ? '&' : '?', q) == -1 || (cookie = ca_cookie(w,
	    CONSOLE_LOGIN_COOKIE, "/console", sealed, CONSOLE_LOGIN_MS,
	    "Lax")) == NULL) {
		free(q);
		free(url);
		free(sealed);
		cl_page(cl, 500, "Sign-in failed", "The sign-in could not be "
		    "started. Try again.");
		return;
	}
	reqhold_detach(&cl->cl_hold);
	(void)httpd_add_header(req, "Cache-Control", "no-store");
	(void)httpd_add_header(req, "Referrer-Policy", "same-origin");
	(void)httpd_add_header(req, "Set-Cookie", cookie);
	(void)httpd_add_header(req, "Location", url);
	httpd_send_reply_iov(req, 302, NULL, 0);
	worker_request_release(w, __func__);
	free(q);
	free(url);
	free(sealed);
	free(cookie);
	cl_free(cl);
}

/* the groups claim (an array of strings, or one string) holds group */
static int
ca_in_group(const json_t *claims, const char *claim, const char *group)
{
	const json_t	*g = json_object_get(claims, claim), *v;
	size_t		 i;

	if (json_is_string(g))
		return strcmp(json_string_value(g), group) == 0;
	json_array_foreach(g, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    group) == 0)
			return 1;
	return 0;
}

static void
cl_cb_on_token(void *arg, enum link_tok_rc rc, struct oauth_token *t,
    const char *code, const char *why)
{
	struct ca_login	*cl = arg;
	struct worker	*w = cl->cl_hold.rh_w;
	const struct config_console *cc = ca_conf(w);
	char		 scope[AUTH_SCOPE_LEN + 1], user[CONSOLE_USER_MAX + 1];
	const char	*iwhy, *u, *sub;
	char		*lc;
	json_t		*claims = NULL;
	int		 v;

	(void)code;
	cl->cl_tok = NULL;
	if (rc != LINK_TOK_OK || t->ot_id_token == NULL) {
		log_warnx("console: the login's code exchange failed: %s",
		    rc != LINK_TOK_OK ? why : "no id_token");
		cl_page(cl, 502, "Sign-in failed", "The identity provider did "
		    "not confirm who you are. Try again.");
		return;
	}
	if ((v = auth_id_claims(w, t->ot_id_token, ca_client_id(w), scope,
	    &claims, &iwhy)) != 0) {
		log_warnx("console: the login's ID token is refused: %s", iwhy);
		cl_page(cl, v == -2 ? 503 : 502, "Sign-in failed", v == -2 ?
		    "The identity provider's keys are not here yet. Try again "
		    "in a moment." : "The identity provider's answer could not "
		    "be verified.");
		return;
	}
	sub = json_string_value(json_object_get(claims, "sub"));
	if ((u = json_string_value(json_object_get(claims,
	    "preferred_username"))) == NULL && (u = json_string_value(
	    json_object_get(claims, "email"))) == NULL)
		u = sub;
	(void)snprintf(user, sizeof(user), "%s", u != NULL ? u : "?");
	if (!ca_in_group(claims, cc->cc_groups_claim, cc->cc_admin_group)) {
		log_warnx("console: %s signed in but is not in the admin "
		    "group; refused", user);
		json_decref(claims);
		cl_page(cl, 403, "Not an administrator", "You signed in, but "
		    "your account is not in the console's admin group: the "
		    "console stays read-only for you.");
		return;
	}
	reqhold_detach(&cl->cl_hold);
	/* the login's leg is spent: its cookie goes */
	if ((lc = ca_cookie(w, CONSOLE_LOGIN_COOKIE, "/console", NULL, 0,
	    "Lax")) != NULL)
		(void)httpd_add_header(cl->cl_hold.rh_req, "Set-Cookie", lc);
	free(lc);
	ca_session_start(w, cl->cl_hold.rh_req, "login", user,
	    sub != NULL ? sub : "");
	worker_request_release(w, __func__);
	json_decref(claims);
	cl_free(cl);
}

static void
cl_cb_on_meta(void *arg, int rc, const char *authorize, const char *token)
{
	struct ca_login		*cl = arg;
	struct worker		*w = cl->cl_hold.rh_w;
	const struct config_oidc *oi = &w->w_conf->cf_inauth.ci_oidc;
	const struct config_console *cc = ca_conf(w);
	struct link_tok_client	 c;
	const char		*form[] = { "grant_type", "authorization_code",
	    "code", cl->cl_code, "redirect_uri", cc->cc_callback_url,
	    "code_verifier", cl->cl_verifier, NULL };

	(void)authorize;
	if (rc != 0) {
		cl_page(cl, 502, "Sign-in is unavailable", "The identity "
		    "provider cannot be reached. Try again in a moment.");
		return;
	}
	memset(&c, 0, sizeof(c));
	c.ltc_url = token;
	c.ltc_cafile = oi->oi_ca_bundle;
	c.ltc_id = ca_client_id(w);
	c.ltc_secret = cc->cc_client_id != NULL ? cc->cc_client_secret :
	    oi->oi_client_secret;
	c.ltc_public_only = !oi->oi_jwks_private_ip;
	if ((cl->cl_tok = link_tok_post(w, &c, form, cl_cb_on_token, cl)) ==
	    NULL)
		cl_cb_on_token(cl, LINK_TOK_FAILED, NULL, "",
		    "cannot send the request");
}

/* GET /console/callback?code&state: this browser's login, come back */
static void
ca_callback(struct ca_login *cl)
{
	struct httpd_req *req = cl->cl_hold.rh_req;
	const char	*q = httpd_req_query(req), *n, *p;
	char		 state[CONSOLE_NONCE_LEN + 2], iss[256];
	json_t		*o;

	if ((o = ca_open(req, CONSOLE_LOGIN_COOKIE, CONSOLE_AD_LOGIN)) ==
	    NULL || json_unpack(o, "{s:s, s:s}", "n", &n, "p", &p) != 0 ||
	    strlen(n) != CONSOLE_NONCE_LEN || strlen(p) !=
	    CONSOLE_VERIFIER_LEN || link_query_get(q, "state", state,
	    sizeof(state)) == -1 || strlen(state) != CONSOLE_NONCE_LEN ||
	    CRYPTO_memcmp(state, n, CONSOLE_NONCE_LEN) != 0) {
		json_decref(o);
		cl_page(cl, 400, "Not this browser's sign-in", "This sign-in "
		    "was not started here, or it expired. Start again from "
		    "the console.");
		return;
	}
	memcpy(cl->cl_verifier, p, CONSOLE_VERIFIER_LEN + 1);
	json_decref(o);
	/* RFC 9207: an answer that names its issuer names ours */
	if (link_query_get(q, "iss", iss, sizeof(iss)) == 0 && strcmp(iss,
	    cl->cl_hold.rh_w->w_conf->cf_inauth.ci_oidc.oi_issuer) != 0) {
		cl_page(cl, 400, "Answer from another server", "This sign-in "
		    "answer names another server. Start again from the "
		    "console.");
		return;
	}
	if ((cl->cl_code = malloc(CONSOLE_CODE_MAX)) == NULL ||
	    link_query_get(q, "code", cl->cl_code, CONSOLE_CODE_MAX) == -1 ||
	    *cl->cl_code == '\0') {
		cl_page(cl, 403, "Sign-in refused", "The sign-in was refused "
		    "or cancelled.");
		return;
	}
	if (ca_meta(cl, cl_cb_on_meta) == -1)
		cl_cb_on_meta(cl, -1, NULL, NULL);
}

static void
ca_login_oidc(struct worker *w, struct httpd_req *req, int callback)
{
	struct ca_login	*cl;

	if ((cl = calloc(1, sizeof(*cl))) == NULL) {
		console_page(req, 500, "Sign-in failed", "Out of memory.",
		    NULL, NULL);
		return;
	}
	reqhold_attach(&cl->cl_hold, w, req);
	if (callback) {
		ca_callback(cl);
		return;
	}
	if (link_random(cl->cl_nonce, CONSOLE_NONCE_LEN) == -1 ||
	    link_random(cl->cl_verifier, CONSOLE_VERIFIER_LEN) == -1) {
		cl_page(cl, 500, "Sign-in failed", "No randomness.");
		return;
	}
	if (ca_meta(cl, cl_start_on_meta) == -1)
		cl_start_on_meta(cl, -1, NULL, NULL);
}

/* POST /console/logout: the session cookie cleared */
static void
ca_logout(struct worker *w, struct httpd_req *req)
{
	struct console_who	 who;
	char			 csrf[CONSOLE_CSRF_LEN + 2], *cookie;

	if (!console_origin_ok(req) || !console_who(w, req, &who) ||
	    console_form_get(req, "csrf", csrf, sizeof(csrf)) == -1 ||
	    !console_csrf_ok(&who, csrf)) {
		console_page(req, 403, "Refused", "Sign out from the "
		    "console's own page.", NULL, NULL);
		return;
	}
	log_info("console: %s signed out", who.cw_user);
	cookie = ca_cookie(w, CONSOLE_COOKIE, "/", NULL, 0, "Strict");
	console_page(req, 200, "Signed out", "You are signed out.", cookie,
	    NULL);
	free(cookie);
}

int
console_auth_route(struct worker *w, struct httpd_req *req)
{
	const char	*path = httpd_req_path(req);
	const char	*q = httpd_req_query(req);
	const struct config_console *cc = ca_conf(w);
	struct console_who who;
	int		 m = httpd_req_method(req), oidc;
	char		 with[16], msg[CONSOLE_USER_MAX + 32];

	if (strcmp(path, "/console/login") != 0 &&
	    strcmp(path, "/console/callback") != 0 &&
	    strcmp(path, "/console/logout") != 0)
		return 0;
	if (!cc->cc_on) {
		console_page(req, 404, "Not found", "The console has no "
		    "sign-in: daemon.console is not set, so it is read-only.",
		    NULL, NULL);
		return 1;
	}
	if (strcmp(path, "/console/logout") == 0 || (m == HTTP_M_POST &&
	    strcmp(path, "/console/login") == 0)) {
		if (m != HTTP_M_POST) {
			(void)httpd_add_header(req, "Allow", "POST");
			console_page(req, 405, "Method not allowed", "POST "
			    "only.", NULL, NULL);
		} else if (strcmp(path, "/console/logout") == 0)
			ca_logout(w, req);
		else
			ca_login_token(w, req);
		return 1;
	}
	if (m != HTTP_M_GET) {
		(void)httpd_add_header(req, "Allow", strcmp(path,
		    "/console/login") == 0 ? "GET, POST" : "GET");
		console_page(req, 405, "Method not allowed", "GET only.", NULL, NULL);
		return 1;
	}
	if (strcmp(path, "/console/callback") == 0) {
		if (!cc->cc_login)
			console_page(req, 404, "Not found", "No login is "
			    "configured (daemon.console.login).", NULL, NULL);
		else
			ca_login_oidc(w, req, 1);
		return 1;
	}
	oidc = link_query_get(q, "with", with, sizeof(with)) == 0 &&
	    strcmp(with, "oidc") == 0;
	/* signed in already: who, and the sign-out form (its CSRF token,
	 * which a script with the Bearer token reads here too) */
	if (!oidc && console_who(w, req, &who)) {
		(void)snprintf(msg, sizeof(msg), "Signed in as %s.",
		    who.cw_user);
		console_page(req, 200, "Signed in", msg, NULL, who.cw_csrf);
		OPENSSL_cleanse(&who, sizeof(who));
	} else if (cc->cc_login && (cc->cc_token == NULL || oidc))
		ca_login_oidc(w, req, 0);
	else
		ca_login_page(w, req, 200, cc->cc_token != NULL ? "Type the "
		    "console's token (daemon.console)." : "");
	return 1;
}
