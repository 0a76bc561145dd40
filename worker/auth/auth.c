/*
 * Incoming authentication for type oidc (auth.h).
 *
 * The issuer's keys are auth_keys.c's, an opaque token's introspection
 * auth_intro.c's.
 *
 * Cache.  A verified token is remembered, until its exp, in a
 * direct-mapped table per worker (auth_cache.c): a repeated token costs
 * a keyed hash and a compare of its bytes, no signature check.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/jwt.h"
#include "shared/store.h"
#include "proto/proto.h"
#include "proto/hex.h"
#include "proto/headers.h"
#include "worker/auth/auth.h"
#include "worker/auth/auth_int.h"
#include "worker/http/httpd.h"
#include "worker/process/request_hold.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"

#define AUTH_WAIT_MS		5000			/* a parked request */
#define AUTH_POLL_MS		100
#define AUTH_INTRO_INFLIGHT	32	/* per worker: no amplifier */

struct auth_state auth;

static void	auth_check(struct worker *, struct httpd_req *, auth_cont_fn,
		    int may_wait, int *verdict);

int64_t
auth_now(void)
{
	return (int64_t)time(NULL);
}

void
auth_scope_of(const char *iss, const char *sub, char out[AUTH_SCOPE_LEN + 1])
{
	unsigned char		 md[SHA256_DIGEST_LENGTH];
	EVP_MD_CTX		*m;

	memset(md, 0, sizeof(md));
	if ((m = EVP_MD_CTX_new()) != NULL) {
		(void)EVP_DigestInit_ex(m, EVP_sha256(), NULL);
		(void)EVP_DigestUpdate(m, iss, strlen(iss) + 1);
		(void)EVP_DigestUpdate(m, sub, strlen(sub));
		(void)EVP_DigestFinal_ex(m, md, NULL);
		EVP_MD_CTX_free(m);
	}
	proto_hex(md, AUTH_SCOPE_LEN / 2, out);
}

int
auth_scope_eq(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);

	return la == lb && CRYPTO_memcmp(a, b, la) == 0;
}

void
principal_unref(void *arg)
{
	struct principal *p = arg;

	if (p == NULL || --p->p_refs > 0)
		return;
	free(p->p_iss);
	free(p->p_sub);
	json_decref(p->p_claims);
	free(p);
}

/* from verified claims (taken) */
struct principal *
principal_new(json_t *claims, int64_t exp)
{
	struct principal	*p;
	const char		*iss, *sub;

	iss = json_string_value(json_object_get(claims, "iss"));
	sub = json_string_value(json_object_get(claims, "sub"));
	if (iss == NULL || sub == NULL || (p = calloc(1, sizeof(*p))) == NULL) {
		json_decref(claims);
		return NULL;
	}
	p->p_refs = 1;
	p->p_claims = claims;
	p->p_exp = exp;
	if ((p->p_iss = strdup(iss)) == NULL ||
	    (p->p_sub = strdup(sub)) == NULL) {
		principal_unref(p);
		return NULL;
	}
	auth_scope_of(iss, sub, p->p_scope);
	return p;
}

const struct principal *
auth_principal(const struct httpd_req *req)
{
	return auth.a_on || auth.a_local ? httpd_req_data(req) : NULL;
}

struct principal *
auth_principal_hold(const struct httpd_req *req)
{
	struct principal *p = auth.a_on || auth.a_local ? httpd_req_data(req) :
	    NULL;

	if (p != NULL)
		p->p_refs++;
	return p;
}

void
auth_principal_drop(struct principal *p)
{
	principal_unref(p);
}

const char *
auth_scope(const struct httpd_req *req)
{
	const struct principal *p = auth_principal(req);

	return p != NULL ? p->p_scope : "";
}

static void
auth_attach(struct httpd_req *req, struct principal *p)
{
	p->p_refs++;
	httpd_req_set_data(req, p, principal_unref);
}

/*
 * Answers
 */

/* RFC 9728 3.1: the well-known segment between the host and the path */
static int
auth_metadata_url(struct httpd_req *req, char *buf, size_t len)
{
	const char	*res = auth.a_oi->oi_resource, *host, *p;
	size_t		 i, hlen;

	if (res != NULL) {
		p = strstr(res, "://") + 3;
		hlen = strcspn(p, "/?#");
		return snprintf(buf, len, "%.*s/.well-known/"
		    "oauth-protected-resource%.*s", (int)(p - res + hlen), res,
		    (int)strcspn(p + hlen, "?#"), p + hlen) >= (int)len ? -1 :
		    0;
	}
	if ((host = httpd_req_host(req)) == NULL)
		return -1;
	for (i = 0; host[i] != '\0'; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789.-:[]", host[i]) == NULL)
			return -1;
	return snprintf(buf, len, "http://%s/.well-known/"
	    "oauth-protected-resource/mcp", host) >= (int)len ? -1 : 0;
}

/* the resource this server is (RFC 8707), as the metadata names it */
static int
auth_resource(struct httpd_req *req, char *buf, size_t len)
{
	const char	*aud = auth.a_oi->oi_audience, *host;

	if (auth.a_oi->oi_resource != NULL)
		return snprintf(buf, len, "%s", auth.a_oi->oi_resource) >=
		    (int)len ? -1 : 0;
	if (strncmp(aud, "https://", 8) == 0 || strncmp(aud, "http://", 7) == 0)
		return snprintf(buf, len, "%s", aud) >= (int)len ? -1 : 0;
	if ((host = httpd_req_host(req)) == NULL)
		return -1;
	return snprintf(buf, len, "http://%s/mcp", host) >= (int)len ? -1 : 0;
}

static void
auth_scopes_text(char *buf, size_t len)
{
	size_t	 i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < auth.a_oi->oi_nscopes && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "",
		    auth.a_oi->oi_scopes[i]);
}

/*
 * 401 with the challenge (RFC 6750 3, RFC 9728 5.1): error only when a
 * token was sent; the description is one of our fixed texts, never the
 * token's content.
 */
static void
auth_refuse(struct httpd_req *req, const char *error, const char *why)
{
	char	 url[600], scopes[512], hdr[1600], msg[300];
	int	 n;

	if (auth_metadata_url(req, url, sizeof(url)) == -1)
		(void)snprintf(url, sizeof(url), "/.well-known/"
		    "oauth-protected-resource/mcp");
	auth_scopes_text(scopes, sizeof(scopes));
	n = snprintf(hdr, sizeof(hdr), "Bearer resource_metadata=\"%s\"",
	    url);
	if (scopes[0] != '\0' && n > 0 && (size_t)n < sizeof(hdr))
		n += snprintf(hdr + n, sizeof(hdr) - (size_t)n,
		    ", scope=\"%s\"", scopes);
	if (error != NULL && n > 0 && (size_t)n < sizeof(hdr))
		(void)snprintf(hdr + n, sizeof(hdr) - (size_t)n,
		    ", error=\"%s\", error_description=\"%s\"", error, why);
	(void)httpd_add_header(req, "WWW-Authenticate", hdr);
	(void)snprintf(msg, sizeof(msg), "Unauthorized: %s", why);
	front_reply_error(req, 401, NULL, MCP_ERR_TRANSPORT, msg);
}

int
auth_well_known(struct worker *w, struct httpd_req *req, const char *path)
{
	char	 res[600];
	json_t	*doc, *scopes;
	size_t	 i;

	if (strcmp(path, "/.well-known/oauth-protected-resource") != 0 &&
	    strcmp(path, "/.well-known/oauth-protected-resource/mcp") != 0)
		return 0;
	if (!auth.a_on) {
		front_reply_error(req, 404, NULL, JSONRPC_INVALID_REQUEST,
		    "Not Found: clients are anonymous (incomingAuth)");
		return 1;
	}
	if (!front_host_check(w->w_conf, req))
		return 1;
	if (front_get_only(req) == -1)
		return 1;
	if (auth_resource(req, res, sizeof(res)) == -1) {
		front_reply_error(req, 400, NULL, JSONRPC_INVALID_REQUEST,
		    "Bad Request: no Host");
		return 1;
	}
	scopes = json_array();
	for (i = 0; i < auth.a_oi->oi_nscopes; i++)
		(void)json_array_append_new(scopes,
		    json_string(auth.a_oi->oi_scopes[i]));
	doc = json_pack("{s:s, s:[s], s:[s], s:o}", "resource", res,
	    "authorization_servers", auth.a_oi->oi_issuer,
	    "bearer_methods_supported", "header", "scopes_supported", scopes);
	(void)httpd_add_header(req, "Access-Control-Allow-Origin", "*");
	front_reply_json(req, doc != NULL ? 200 : 500, doc, NULL);
	json_decref(doc);
	return 1;
}

/*
 * Waiting requests
 */

static void
auth_wait_free(struct auth_wait *aw)
{
	TAILQ_REMOVE(&auth.a_waits, aw, aw_entry);
	if (aw->aw_intro)
		auth.a_nintro--;
	if (aw->aw_call != NULL)
		http_call_cancel(aw->aw_call);
	principal_unref(aw->aw_p);
	free(aw->aw_buf);
	if (aw->aw_tok != NULL)
		explicit_bzero(aw->aw_tok, aw->aw_toklen);
	free(aw->aw_tok);
	free(aw);
}

struct auth_wait *
auth_wait_new(struct worker *w, struct httpd_req *req, auth_cont_fn cont)
{
	struct auth_wait *aw;

	if ((aw = calloc(1, sizeof(*aw))) == NULL)
		return NULL;
	aw->aw_cont = cont;
	aw->aw_deadline = store_now_ms() + AUTH_WAIT_MS;
	TAILQ_INSERT_TAIL(&auth.a_waits, aw, aw_entry);
	reqhold_attach(&aw->aw_hold, w, req);
	return aw;
}

/* the request goes on, or is answered; the wait ends */
void
auth_wait_end(struct auth_wait *aw)
{
	struct worker		*w = aw->aw_hold.rh_w;
	struct httpd_req	*req = aw->aw_hold.rh_req;
	auth_cont_fn		 cont = aw->aw_cont;
	int			 v = AUTH_ANSWERED;

	reqhold_detach(&aw->aw_hold);
	if (aw->aw_hold.rh_gone)
		auth_refuse(req, NULL, "the client went away");
	else if (aw->aw_call != NULL || aw->aw_done) {
		/* an introspection's verdict */
		if (aw->aw_p != NULL) {
			auth_attach(req, aw->aw_p);
			v = AUTH_GO;
		} else
			auth_refuse(req, "invalid_token", aw->aw_why != NULL ?
			    aw->aw_why : "the token could not be checked");
	} else
		auth_check(w, req, cont, 0, &v);
	auth_wait_free(aw);
	if (v == AUTH_GO)
		cont(w, req);
	worker_request_release(w, __func__);
}

/* key waiters go on when the keys changed, a fetch ended (force) or
 * their time is up */
void
auth_resume_all(int force)
{
	struct auth_wait	*aw, *next;
	uint64_t		 now = store_now_ms();

	for (aw = TAILQ_FIRST(&auth.a_waits); aw != NULL; aw = next) {
		next = TAILQ_NEXT(aw, aw_entry);
		if (aw->aw_call != NULL && !aw->aw_hold.rh_gone)
			continue;	/* introspection: its own callback */
		if (force || aw->aw_hold.rh_gone || aw->aw_done ||
		    now >= aw->aw_deadline)
			auth_wait_end(aw);
	}
}

static void
auth_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct worker		*w = arg;
	struct timeval		 tv = { 1, 0 };
	uint64_t		 stamp = auth.a_have.sr_updated_ms;
	uint64_t		 now = store_now_ms();

	(void)fd;
	(void)ev;
	auth_keys_load(w);
	if (auth.a_jwks.jw_nkeys == 0 ||
	    auth_refresh_due(w, now))
		(void)auth_keys_kick(w);
	if (!TAILQ_EMPTY(&auth.a_waits)) {
		auth_resume_all(auth.a_have.sr_updated_ms != stamp);
		tv.tv_sec = 0;
		tv.tv_usec = AUTH_POLL_MS * 1000;
	}
	(void)evtimer_add(auth.a_tick, &tv);
}

static void
auth_tick_soon(void)
{
	struct timeval	 tv = { 0, AUTH_POLL_MS * 1000 };

	(void)evtimer_add(auth.a_tick, &tv);
}

/*
 * The check
 */

/* RFC 6750 2.3 is not offered: a query's access_token is refused */
static int
auth_query_has_token(const char *q)
{
	const char	*p;

	for (p = q; p != NULL && *p != '\0'; p = strchr(p, '&'), p = p ?
	    p + 1 : NULL)
		if (strncmp(p, "access_token=", 13) == 0 ||
		    strncmp(p, "access_token&", 13) == 0 ||
		    strcmp(p, "access_token") == 0)
			return 1;
	return 0;
}

/* "Bearer" SP token68 (RFC 6750 2.1; the scheme case-insensitive, RFC
 * 9110 11.1): the token, or NULL */
static const char *
auth_bearer(const char *h, size_t *len)
{
	const char	*t;
	size_t		 n;

	if (strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
		return NULL;
	for (t = h + 6; *t == ' ' || *t == '\t'; t++)
		;
	/* sixteen bytes a step: strspn() here was 2k instructions a call */
	n = (size_t)(proto_b64token_stop(t, t + strlen(t)) - t);
	n += strspn(t + n, "=");
	if (n == 0 || t[n + strspn(t + n, " \t")] != '\0')
		return NULL;
	*len = n;
	return t;
}

static void
auth_check(struct worker *w, struct httpd_req *req, auth_cont_fn cont,
    int may_wait, int *verdict)
{
	struct jwt_policy	 pol;
	struct principal	*p;
	struct jwt		 t;
	const struct jwt_key	*k;
	const char		*h, *tok, *why;
	char			*copy;
	size_t			 len;
	int64_t			 exp;
	int			 rc;

	*verdict = AUTH_ANSWERED;
	if ((h = front_header(req, "Authorization")) == NULL) {
		auth_refuse(req, NULL, "an access token is required "
		    "(Authorization: Bearer)");
		return;
	}
	if ((tok = auth_bearer(h, &len)) == NULL) {
		auth_refuse(req, "invalid_request", "expected Authorization: "
		    "Bearer <token>");
		return;
	}
	if (len > JWT_TOKEN_MAX) {
		auth_refuse(req, "invalid_token", "the token is too large");
		return;
	}
	if ((p = auth_cache_get(auth.a_cache, tok, len, auth_now())) != NULL) {
		auth_attach(req, p);
		*verdict = AUTH_GO;
		return;
	}
	rc = jwt_parse(tok, len, &t, &why);
	if (rc == -1 && auth.a_oi->oi_introspection_url != NULL) {
		/* random opaque tokens must not become a flood of calls to
		 * the authorization server */
		if (auth.a_nintro >= AUTH_INTRO_INFLIGHT) {
			(void)httpd_add_header(req, "Retry-After", "1");
			front_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT,
			    "Service Unavailable: too many tokens being "
			    "checked; retry");
			return;
		}
		if ((copy = strndup(tok, len)) != NULL &&
		    auth_introspect(w, req, cont, copy) == 0)
			*verdict = AUTH_LATER;
		else
			auth_refuse(req, "invalid_token", "the token could "
			    "not be checked");
		free(copy);
		return;
	}
	if (rc != 0) {
		auth_refuse(req, "invalid_token", why);
		return;
	}
	auth_keys_load(w);
	if ((k = jwks_find(&auth.a_jwks, t.jt_kid)) == NULL) {
		if (may_wait && (auth.a_jwks.jw_nkeys == 0 ?
		    auth_keys_kick(w) : auth_keys_unknown_kid(w)) &&
		    auth_wait_new(w, req, cont) != NULL) {
			auth_tick_soon();
			*verdict = AUTH_LATER;
		} else
			auth_refuse(req, "invalid_token",
			    auth.a_jwks.jw_nkeys == 0 ?
			    "the issuer's keys are unavailable" :
			    "the token's key (kid) is unknown");
		jwt_clear(&t);
		return;
	}
	pol.jp_issuer = auth.a_oi->oi_issuer;
	pol.jp_audience = auth.a_oi->oi_audience;
	pol.jp_now = auth_now();
	pol.jp_skew = (int64_t)(auth.a_oi->oi_skew_ms / 1000);
	if (jwt_verify_sig(&t, k, &why) == -1 ||
	    jwt_check_claims(t.jt_claims, &pol, &exp, &why) == -1) {
		auth_refuse(req, "invalid_token", why);
		jwt_clear(&t);
		return;
	}
	p = principal_new(json_incref(t.jt_claims), exp);
	jwt_clear(&t);
	if (p == NULL) {
		auth_refuse(req, "invalid_token", "out of memory");
		return;
	}
	auth_cache_put(auth.a_cache, tok, len, p);
	auth_attach(req, p);
	principal_unref(p);
	*verdict = AUTH_GO;
}

int
auth_id_token(struct worker *w, const char *tok, const char *client_id,
    char scope[AUTH_SCOPE_LEN + 1], const char **why)
{
	return auth_id_claims(w, tok, client_id, scope, NULL, why);
}

int
auth_id_claims(struct worker *w, const char *tok, const char *client_id,
    char scope[AUTH_SCOPE_LEN + 1], json_t **claims, const char **why)
{
	struct jwt_policy	 pol;
	struct jwt		 t;
	const struct jwt_key	*k;
	int64_t			 exp;
	int			 rc = -1;

	if (!auth.a_on || client_id == NULL) {
		*why = "incomingAuth is not oidc with a clientId";
		return -1;
	}
	if (jwt_parse(tok, strlen(tok), &t, why) != 0)
		return -1;
	auth_keys_load(w);
	if ((k = jwks_find(&auth.a_jwks, t.jt_kid)) == NULL) {
		(void)(auth.a_jwks.jw_nkeys == 0 ? auth_keys_kick(w) :
		    auth_keys_unknown_kid(w));
		*why = "the issuer's keys are not here yet";
		jwt_clear(&t);
		return -2;
	}
	pol.jp_issuer = auth.a_oi->oi_issuer;
	pol.jp_audience = client_id;
	pol.jp_now = auth_now();
	pol.jp_skew = (int64_t)(auth.a_oi->oi_skew_ms / 1000);
	if (jwt_verify_sig(&t, k, why) == 0 &&
	    jwt_check_claims(t.jt_claims, &pol, &exp, why) == 0) {
		auth_scope_of(pol.jp_issuer, json_string_value(
		    json_object_get(t.jt_claims, "sub")), scope);
		if (claims != NULL)
			*claims = json_incref(t.jt_claims);
		rc = 0;
	}
	jwt_clear(&t);
	return rc;
}

/*
 * local: the peer's user on the Unix socket (SO_PEERCRED), issuer
 * "local"; the name looked up once per uid and worker (the cache).
 */
static int
auth_local(struct httpd_req *req)
{
	struct passwd		 pw, *pwp = NULL;
	struct principal	*p;
	char			 key[32], buf[1024], name[32];
	json_t			*claims;
	uid_t			 uid;

	if (httpd_req_peer_uid(req, &uid) == -1) {
		front_reply_error(req, 403, NULL, MCP_ERR_TRANSPORT,
		    "Forbidden: the peer's user is unknown");
		return AUTH_ANSWERED;
	}
	(void)snprintf(key, sizeof(key), "uid:%lu", (unsigned long)uid);
	if ((p = auth_cache_get(auth.a_cache, key, strlen(key), auth_now())) ==
	    NULL) {
		(void)snprintf(name, sizeof(name), "%lu", (unsigned long)uid);
		if (getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp) != 0 ||
		    pwp == NULL)
			pwp = NULL;
		claims = json_pack("{s:s, s:s, s:I}", "iss", "local", "sub",
		    pwp != NULL ? pwp->pw_name : name, "uid", (json_int_t)uid);
		if (claims == NULL || (p = principal_new(claims, INT64_MAX)) ==
		    NULL) {
			front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
			    "Internal error: out of memory");
			return AUTH_ANSWERED;
		}
		auth_cache_put(auth.a_cache, key, strlen(key), p);
		principal_unref(p);
	}
	auth_attach(req, p);
	return AUTH_GO;
}

int
auth_request(struct worker *w, struct httpd_req *req, auth_cont_fn cont)
{
	const char	*q;
	int		 v;

	if (auth.a_local)
		return auth_local(req);
	if (!auth.a_on)
		return AUTH_GO;
	if ((q = httpd_req_query(req)) != NULL && auth_query_has_token(q)) {
		front_reply_error(req, 400, NULL, MCP_ERR_TRANSPORT,
		    "Bad Request: an access token in the query string is "
		    "refused; send it in the Authorization header");
		return AUTH_ANSWERED;
	}
	auth_check(w, req, cont, 1, &v);
	return v;
}

/*
 * Setup
 */

int
auth_init(struct worker *w)
{
	const struct config	*cf = w->w_conf;
	char			 scope[AUTH_SCOPE_LEN + 1];
	struct timeval		 tv = { 0, 0 };

	memset(&auth, 0, sizeof(auth));
	TAILQ_INIT(&auth.a_waits);
	auth.a_w = w;
	if (cf->cf_inauth.ci_type == CONFIG_INAUTH_LOCAL) {
		auth.a_local = 1;
		if ((auth.a_cache = auth_cache_new()) == NULL)
			return -1;
		return 0;
	}
	if (cf->cf_inauth.ci_type != CONFIG_INAUTH_OIDC)
		return 0;
	auth.a_on = 1;
	auth.a_oi = &cf->cf_inauth.ci_oidc;
	/* the issuer's hash names its records (an issuer may be long) */
	auth_scope_of(auth.a_oi->oi_issuer, "", scope);
	(void)snprintf(auth.a_jwks_key, sizeof(auth.a_jwks_key), "jwks|%s",
	    scope);
	(void)snprintf(auth.a_lock_key, sizeof(auth.a_lock_key), "lock|%s",
	    scope);
	(void)snprintf(auth.a_refetch_key, sizeof(auth.a_refetch_key),
	    "refetch|%s", scope);
	(void)snprintf(auth.a_next_key, sizeof(auth.a_next_key), "next|%s",
	    scope);
	if ((auth.a_cache = auth_cache_new()) == NULL ||
	    (auth.a_tick = evtimer_new(w->w_base, auth_on_tick, w)) == NULL ||
	    evtimer_add(auth.a_tick, &tv) == -1)
		return -1;
	return 0;
}

void
auth_free(void)
{
	while (!TAILQ_EMPTY(&auth.a_waits))
		auth_wait_free(TAILQ_FIRST(&auth.a_waits));
	if (auth.a_call != NULL)
		http_call_cancel(auth.a_call);
	auth.a_call = NULL;
	free(auth.a_buf);
	auth_cache_free(auth.a_cache);
	if (auth.a_tick != NULL)
		event_free(auth.a_tick);
	jwks_clear(&auth.a_jwks);
	memset(&auth, 0, sizeof(auth));
}
