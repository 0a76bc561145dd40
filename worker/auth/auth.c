/*
 * Incoming authentication for type oidc (auth.h).
 *
 * Keys.  The issuer's JWKS is fetched by one worker at a time, on the
 * worker's loop (the async HTTP client), never per request: the worker
 * that adds the lock record "lock|<issuer hash>" to the store's keys db
 * fetches (discovery, then the JWKS, or jwksUrl straight) and stores
 * the document under "jwks|<issuer hash>"; every worker reads it from
 * there when its stamp changes.  It is fetched again when the JWKS
 * answer's Cache-Control max-age says (1 min to 1 h; 5 min without
 * one: the "next|" record, shared by the workers), and on a token whose kid is unknown at most once per 30 s across all
 * workers (the "refetch|" record), so tokens with random kids cannot
 * make vmcpd hammer the issuer.  A fetch that fails keeps the old keys;
 * they expire 24 h after the last good fetch.  Without keys, or with a
 * kid still unknown, a token is refused with 401: never allowed, never
 * a 500.
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
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/jwt.h"
#include "shared/log.h"
#include "shared/store.h"
#include "proto/form.h"
#include "proto/proto.h"
#include "proto/headers.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "worker/process/request_hold.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"

#define AUTH_REFRESH_MS		(5ULL * 60 * 1000)	/* scheduled */
#define AUTH_REFRESH_MIN_MS	(60ULL * 1000)		/* max-age bounds */
#define AUTH_REFRESH_MAX_MS	(60ULL * 60 * 1000)
#define AUTH_REFETCH_MS		(30ULL * 1000)		/* unknown kid */
#define AUTH_KEYS_TTL_MS	(24ULL * 60 * 60 * 1000) /* hard max age */
#define AUTH_LOCK_MS		(15ULL * 1000)		/* one fetch */
#define AUTH_FETCH_MS		5000			/* per HTTP call */
#define AUTH_WAIT_MS		5000			/* a parked request */
#define AUTH_POLL_MS		100
#define AUTH_INTRO_MAX		(64 * 1024)		/* an answer */
#define AUTH_INTRO_INFLIGHT	32	/* per worker: no amplifier */

struct auth_wait {
	TAILQ_ENTRY(auth_wait)	 aw_entry;
	struct reqhold		 aw_hold;	/* worker, request, gone */
	auth_cont_fn		 aw_cont;
	uint64_t		 aw_deadline;
	/* introspection of an opaque token */
	struct http_call	*aw_call;
	char			*aw_tok;	/* its cache key */
	size_t			 aw_toklen;
	char			*aw_buf;
	size_t			 aw_len;
	int			 aw_done;	/* answered: resume */
	struct principal	*aw_p;		/* its verdict, or NULL */
	const char		*aw_why;
	int			 aw_intro;	/* counted in a_nintro */
};

static struct {
	struct worker		*a_w;
	const struct config_oidc *a_oi;
	int			 a_on;		/* oidc */
	int			 a_local;	/* local: SO_PEERCRED */
	char			 a_jwks_key[48];
	char			 a_lock_key[48];
	char			 a_refetch_key[48];
	char			 a_next_key[48];	/* next refresh */
	struct jwks		 a_jwks;
	struct store_rec	 a_have;	/* the stamp a_jwks came from */
	struct event		*a_tick;
	struct http_call	*a_call;	/* a fetch in flight */
	int			 a_discovery;	/* a_call is discovery */
	char			*a_buf;
	size_t			 a_len;
	TAILQ_HEAD(, auth_wait)	 a_waits;
	size_t			 a_nintro;	/* introspections in flight */
	struct auth_cache	*a_cache;
} A;

static void	auth_keys_fetch(struct worker *, const char *url, int disc);
static void	auth_resume_all(int force);
static void	auth_check(struct worker *, struct httpd_req *, auth_cont_fn,
		    int may_wait, int *verdict);

static int64_t
auth_now(void)
{
	return (int64_t)time(NULL);
}

void
auth_scope_of(const char *iss, const char *sub, char out[AUTH_SCOPE_LEN + 1])
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 md[SHA256_DIGEST_LENGTH];
	EVP_MD_CTX		*m;
	size_t			 i;

	memset(md, 0, sizeof(md));
	if ((m = EVP_MD_CTX_new()) != NULL) {
		(void)EVP_DigestInit_ex(m, EVP_sha256(), NULL);
		(void)EVP_DigestUpdate(m, iss, strlen(iss) + 1);
		(void)EVP_DigestUpdate(m, sub, strlen(sub));
		(void)EVP_DigestFinal_ex(m, md, NULL);
		EVP_MD_CTX_free(m);
	}
	for (i = 0; i < AUTH_SCOPE_LEN / 2; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[AUTH_SCOPE_LEN] = '\0';
}

int
auth_scope_eq(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);

	return la == lb && CRYPTO_memcmp(a, b, la) == 0;
}

static void
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
static struct principal *
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
	return A.a_on || A.a_local ? httpd_req_data(req) : NULL;
}

struct principal *
auth_principal_hold(const struct httpd_req *req)
{
	struct principal *p = A.a_on || A.a_local ? httpd_req_data(req) :
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
	const char	*res = A.a_oi->oi_resource, *host, *p;
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
	const char	*aud = A.a_oi->oi_audience, *host;

	if (A.a_oi->oi_resource != NULL)
		return snprintf(buf, len, "%s", A.a_oi->oi_resource) >=
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
	for (i = 0; i < A.a_oi->oi_nscopes && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "",
		    A.a_oi->oi_scopes[i]);
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
	if (!A.a_on) {
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
	for (i = 0; i < A.a_oi->oi_nscopes; i++)
		(void)json_array_append_new(scopes,
		    json_string(A.a_oi->oi_scopes[i]));
	doc = json_pack("{s:s, s:[s], s:[s], s:o}", "resource", res,
	    "authorization_servers", A.a_oi->oi_issuer,
	    "bearer_methods_supported", "header", "scopes_supported", scopes);
	(void)httpd_add_header(req, "Access-Control-Allow-Origin", "*");
	front_reply_json(req, doc != NULL ? 200 : 500, doc, NULL);
	json_decref(doc);
	return 1;
}

/*
 * Keys
 */

/* an endpoint we may call: https, or http with insecureAllowHttp */
static int
auth_url_ok(const char *url)
{
	return strncasecmp(url, "https://", 8) == 0 ||
	    (strncasecmp(url, "http://", 7) == 0 && A.a_oi->oi_insecure_http);
}

static struct http_call *
auth_call_new(struct worker *w, const char *method, const char *url)
{
	struct http_call *c;

	if (!auth_url_ok(url)) {
		log_warnx("auth: %s refused: http:// without "
		    "insecureAllowHttp", url);
		return NULL;
	}
	if ((c = http_call_new(w->w_hc, method, url)) == NULL)
		return NULL;
	if (!A.a_oi->oi_jwks_private_ip &&
	    http_call_set_public_only(c) == -1) {
		log_warnx("auth: %s refused: a private address (see "
		    "jwksAllowPrivateIp)", url);
		http_call_cancel(c);
		return NULL;
	}
	http_call_set_timeout(c, AUTH_FETCH_MS);
	if ((A.a_oi->oi_ca_bundle != NULL &&
	    http_call_set_ca_file(c, A.a_oi->oi_ca_bundle) == -1) ||
	    http_call_add_header(c, "Accept", "application/json") == -1) {
		http_call_cancel(c);
		return NULL;
	}
	return c;
}

/* the stored JWKS, read again if its stamp changed */
static void
auth_keys_load(struct worker *w)
{
	struct store_rec	 rec;
	struct jwks		 jw;
	const char		*why;
	int			 rc;

	memset(&rec, 0, sizeof(rec));
	rc = store_get_changed(w->w_store, STORE_KEYS, A.a_jwks_key,
	    strlen(A.a_jwks_key), store_now_ms(), &A.a_have, &rec);
	if (rc == STORE_UNCHANGED || rc == -1)
		return;
	if (rc == STORE_NOTFOUND) {
		if (A.a_jwks.jw_nkeys > 0)
			log_warnx("auth: the issuer's keys expired");
		jwks_clear(&A.a_jwks);
		memset(&A.a_have, 0, sizeof(A.a_have));
		return;
	}
	if (jwks_parse(rec.sr_data, rec.sr_len, &jw, &why) == 0) {
		jwks_clear(&A.a_jwks);
		A.a_jwks = jw;
	}
	A.a_have.sr_updated_ms = rec.sr_updated_ms;
	A.a_have.sr_len = rec.sr_len;
	A.a_have.sr_expires_ms = rec.sr_expires_ms;
	free(rec.sr_data);
}

/*
 * How long a JWKS answer is good for: its Cache-Control max-age (RFC
 * 9111 5.2.2.1), within AUTH_REFRESH_MIN_MS..AUTH_REFRESH_MAX_MS (a
 * key rotation is seen within the hour; a tiny max-age does not make
 * vmcpd hammer the issuer); AUTH_REFRESH_MS without one, or with
 * no-cache / no-store.
 */
uint64_t
auth_refresh_ms(const char *cc)
{
	const char	*p;
	uint64_t	 v = 0;
	int		 digits = 0;

	if (cc == NULL || strcasestr(cc, "no-cache") != NULL ||
	    strcasestr(cc, "no-store") != NULL)
		return AUTH_REFRESH_MS;
	for (p = cc; (p = strcasestr(p, "max-age")) != NULL; p += 7) {
		/* a directive of its own, not s-maxage or x-max-age */
		if (p != cc && p[-1] != ' ' && p[-1] != ',' && p[-1] != '\t')
			continue;
		if (p[7] != '=')
			continue;
		for (p += 8; *p >= '0' && *p <= '9'; p++, digits++)
			if (v < 10000000)
				v = v * 10 + (uint64_t)(*p - '0');
		break;
	}
	if (digits == 0)
		return AUTH_REFRESH_MS;
	v *= 1000;
	if (v < AUTH_REFRESH_MIN_MS)
		return AUTH_REFRESH_MIN_MS;
	return v > AUTH_REFRESH_MAX_MS ? AUTH_REFRESH_MAX_MS : v;
}

/* the scheduled refresh is due (no worker fetched within its time) */
static int
auth_refresh_due(struct worker *w, uint64_t now)
{
	struct store_rec	 rec;

	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_KEYS, A.a_next_key,
	    strlen(A.a_next_key), now, &rec) == 0) {
		free(rec.sr_data);
		return 0;
	}
	return 1;
}

static void
auth_fetch_end(struct worker *w, int ok)
{
	uint64_t	 now = store_now_ms();

	free(A.a_buf);
	A.a_buf = NULL;
	A.a_len = 0;
	A.a_call = NULL;
	/* a failure holds the lock as a back-off, marked so that waiting
	 * requests are answered now rather than at their deadline */
	if (ok)
		(void)store_del(w->w_store, STORE_KEYS, A.a_lock_key,
		    strlen(A.a_lock_key));
	else
		(void)store_put(w->w_store, STORE_KEYS, A.a_lock_key,
		    strlen(A.a_lock_key), "failed", 6, now + AUTH_LOCK_MS,
		    now);
	auth_keys_load(w);
	auth_resume_all(1);
}

static int
auth_fetch_head(void *arg, struct http_call *c, long status)
{
	(void)arg;
	(void)c;
	return status != 200;
}

/* a response body, NUL-terminated, within max bytes: non-zero aborts */
static int
auth_body_add(char **body, size_t *blen, const char *buf, size_t len,
    size_t max)
{
	char	*n;

	if (*blen + len > max || (n = realloc(*body, *blen + len + 1)) ==
	    NULL)
		return 1;
	memcpy(n + *blen, buf, len);
	*body = n;
	*blen += len;
	n[*blen] = '\0';
	return 0;
}

static int
auth_fetch_data(void *arg, struct http_call *c, const char *buf, size_t len)
{
	(void)arg;
	(void)c;
	return auth_body_add(&A.a_buf, &A.a_len, buf, len, JWKS_BODY_MAX);
}

static void
auth_fetch_done(void *arg, struct http_call *c, int result, const char *err)
{
	struct worker	*w = arg;
	json_t		*doc;
	struct jwks	 jw;
	const char	*why, *iss, *uri;
	uint64_t	 now = store_now_ms(), refresh;
	char		*juri;

	A.a_call = NULL;
	if (result != 0 || A.a_buf == NULL) {
		log_warnx("auth: fetching the issuer's %s failed: %s",
		    A.a_discovery ? "discovery document" : "JWKS",
		    err != NULL ? err : "empty answer");
		auth_fetch_end(w, 0);
		return;
	}
	if (A.a_discovery) {
		/* OpenID Connect Discovery 1.0, 4.3: the same issuer */
		doc = json_loadb(A.a_buf, A.a_len, JSON_REJECT_DUPLICATES, NULL);
		iss = json_string_value(json_object_get(doc, "issuer"));
		uri = json_string_value(json_object_get(doc, "jwks_uri"));
		if (iss == NULL || strcmp(iss, A.a_oi->oi_issuer) != 0 ||
		    uri == NULL || (juri = strdup(uri)) == NULL) {
			log_warnx("auth: the discovery document names another "
			    "issuer or no jwks_uri");
			json_decref(doc);
			auth_fetch_end(w, 0);
			return;
		}
		json_decref(doc);
		free(A.a_buf);
		A.a_buf = NULL;
		A.a_len = 0;
		auth_keys_fetch(w, juri, 0);
		free(juri);
		return;
	}
	if (jwks_parse(A.a_buf, A.a_len, &jw, &why) == -1) {
		log_warnx("auth: the issuer's JWKS: %s", why);
		auth_fetch_end(w, 0);
		return;
	}
	jwks_clear(&jw);
	if (store_put(w->w_store, STORE_KEYS, A.a_jwks_key,
	    strlen(A.a_jwks_key), A.a_buf, A.a_len, now + AUTH_KEYS_TTL_MS,
	    now) == -1) {
		log_warnx("auth: cannot store the issuer's keys");
		auth_fetch_end(w, 0);
		return;
	}
	/* the next refresh as its Cache-Control says (RFC 9111 5.2.2.1) */
	refresh = auth_refresh_ms(http_call_header(c, "Cache-Control"));
	(void)store_put(w->w_store, STORE_KEYS, A.a_next_key,
	    strlen(A.a_next_key), "1", 1, now + refresh, now);
	log_info("auth: the issuer's keys fetched (%zu bytes; next in %llu s)",
	    A.a_len, (unsigned long long)(refresh / 1000));
	auth_fetch_end(w, 1);
}

static void
auth_keys_fetch(struct worker *w, const char *url, int disc)
{
	static const struct http_call_cbs cbs = { auth_fetch_head,
	    auth_fetch_data, auth_fetch_done };
	struct http_call *c;

	A.a_discovery = disc;
	if ((c = auth_call_new(w, "GET", url)) == NULL ||
	    http_call_start(c, &cbs, w) == -1) {
		A.a_call = NULL;
		auth_fetch_end(w, 0);
		return;
	}
	A.a_call = c;
}

/* start a fetch if no one is fetching: 1 when one is (ours or
 * another worker's), 0 when none is and none will be soon */
static int
auth_keys_kick(struct worker *w)
{
	struct store_rec	 rec;
	uint64_t		 now = store_now_ms();
	char			 pid[24], *url = NULL;
	const char		*iss = A.a_oi->oi_issuer;
	size_t			 ilen = strlen(iss);
	int			 rc;

	if (A.a_call != NULL)
		return 1;
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	rc = store_add(w->w_store, STORE_KEYS, A.a_lock_key,
	    strlen(A.a_lock_key), pid, strlen(pid), now + AUTH_LOCK_MS, now);
	if (rc == STORE_EXISTS) {
		memset(&rec, 0, sizeof(rec));
		if (store_get(w->w_store, STORE_KEYS, A.a_lock_key,
		    strlen(A.a_lock_key), now, &rec) != 0)
			return 1;
		rc = strcmp(rec.sr_data, "failed") != 0;
		free(rec.sr_data);
		return rc;
	}
	if (rc != 0)
		return 0;
	if (A.a_oi->oi_jwks_url != NULL) {
		auth_keys_fetch(w, A.a_oi->oi_jwks_url, 0);
		return A.a_call != NULL;
	}
	/* OpenID Connect Discovery 1.0, 4: issuer without a trailing / */
	if (asprintf(&url, "%.*s/.well-known/openid-configuration",
	    (int)(ilen > 0 && iss[ilen - 1] == '/' ? ilen - 1 : ilen),
	    iss) == -1) {
		auth_fetch_end(w, 0);
		return 0;
	}
	auth_keys_fetch(w, url, 1);
	free(url);
	return A.a_call != NULL;
}

/* a kid we do not know: refetch, at most every 30 s across workers */
static int
auth_keys_unknown_kid(struct worker *w)
{
	uint64_t	 now = store_now_ms();

	if (A.a_call != NULL)
		return 1;
	if (store_add(w->w_store, STORE_KEYS, A.a_refetch_key,
	    strlen(A.a_refetch_key), "1", 1, now + AUTH_REFETCH_MS, now) != 0)
		return 0;
	return auth_keys_kick(w);
}

/*
 * Waiting requests
 */

static void
auth_wait_free(struct auth_wait *aw)
{
	TAILQ_REMOVE(&A.a_waits, aw, aw_entry);
	if (aw->aw_intro)
		A.a_nintro--;
	if (aw->aw_call != NULL)
		http_call_cancel(aw->aw_call);
	principal_unref(aw->aw_p);
	free(aw->aw_buf);
	if (aw->aw_tok != NULL)
		explicit_bzero(aw->aw_tok, aw->aw_toklen);
	free(aw->aw_tok);
	free(aw);
}

static struct auth_wait *
auth_wait_new(struct worker *w, struct httpd_req *req, auth_cont_fn cont)
{
	struct auth_wait *aw;

	if ((aw = calloc(1, sizeof(*aw))) == NULL)
		return NULL;
	aw->aw_cont = cont;
	aw->aw_deadline = store_now_ms() + AUTH_WAIT_MS;
	TAILQ_INSERT_TAIL(&A.a_waits, aw, aw_entry);
	reqhold_attach(&aw->aw_hold, w, req);
	return aw;
}

/* the request goes on, or is answered; the wait ends */
static void
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
static void
auth_resume_all(int force)
{
	struct auth_wait	*aw, *next;
	uint64_t		 now = store_now_ms();

	for (aw = TAILQ_FIRST(&A.a_waits); aw != NULL; aw = next) {
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
	uint64_t		 stamp = A.a_have.sr_updated_ms;
	uint64_t		 now = store_now_ms();

	(void)fd;
	(void)ev;
	auth_keys_load(w);
	if (A.a_jwks.jw_nkeys == 0 ||
	    auth_refresh_due(w, now))
		(void)auth_keys_kick(w);
	if (!TAILQ_EMPTY(&A.a_waits)) {
		auth_resume_all(A.a_have.sr_updated_ms != stamp);
		tv.tv_sec = 0;
		tv.tv_usec = AUTH_POLL_MS * 1000;
	}
	(void)evtimer_add(A.a_tick, &tv);
}

static void
auth_tick_soon(void)
{
	struct timeval	 tv = { 0, AUTH_POLL_MS * 1000 };

	(void)evtimer_add(A.a_tick, &tv);
}

/*
 * Introspection (RFC 7662) of an opaque token
 */

static int
auth_intro_data(void *arg, struct http_call *c, const char *buf, size_t len)
{
	struct auth_wait	*aw = arg;

	(void)c;
	return auth_body_add(&aw->aw_buf, &aw->aw_len, buf, len,
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
	pol.jp_issuer = A.a_oi->oi_issuer;
	pol.jp_audience = A.a_oi->oi_audience;
	pol.jp_now = auth_now();
	pol.jp_skew = (int64_t)(A.a_oi->oi_skew_ms / 1000);
	if (jwt_check_claims(doc, &pol, &exp, &aw->aw_why) == -1)
		goto done;
	if ((aw->aw_p = principal_new(doc, exp)) != NULL) {
		doc = NULL;
		auth_cache_put(A.a_cache, aw->aw_tok, aw->aw_toklen,
		    aw->aw_p);
	}
done:
	json_decref(doc);
	auth_wait_end(aw);
}

static int
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

	if ((c = auth_call_new(w, "POST", A.a_oi->oi_introspection_url)) ==
	    NULL || (etok = proto_form_escape(tok)) == NULL)
		goto done;
	if (A.a_oi->oi_client_secret != NULL) {
		/* RFC 6749 2.3.1: form-encoded, then Basic */
		if ((id = proto_form_escape(A.a_oi->oi_client_id)) == NULL ||
		    (sec = proto_form_escape(A.a_oi->oi_client_secret)) ==
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
	} else if (A.a_oi->oi_client_id != NULL) {
		if ((id = proto_form_escape(A.a_oi->oi_client_id)) == NULL ||
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
	A.a_nintro++;
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
	if ((p = auth_cache_get(A.a_cache, tok, len, auth_now())) != NULL) {
		auth_attach(req, p);
		*verdict = AUTH_GO;
		return;
	}
	rc = jwt_parse(tok, len, &t, &why);
	if (rc == -1 && A.a_oi->oi_introspection_url != NULL) {
		/* random opaque tokens must not become a flood of calls to
		 * the authorization server */
		if (A.a_nintro >= AUTH_INTRO_INFLIGHT) {
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
	if ((k = jwks_find(&A.a_jwks, t.jt_kid)) == NULL) {
		if (may_wait && (A.a_jwks.jw_nkeys == 0 ?
		    auth_keys_kick(w) : auth_keys_unknown_kid(w)) &&
		    auth_wait_new(w, req, cont) != NULL) {
			auth_tick_soon();
			*verdict = AUTH_LATER;
		} else
			auth_refuse(req, "invalid_token", A.a_jwks.jw_nkeys ==
			    0 ? "the issuer's keys are unavailable" :
			    "the token's key (kid) is unknown");
		jwt_clear(&t);
		return;
	}
	pol.jp_issuer = A.a_oi->oi_issuer;
	pol.jp_audience = A.a_oi->oi_audience;
	pol.jp_now = auth_now();
	pol.jp_skew = (int64_t)(A.a_oi->oi_skew_ms / 1000);
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
	auth_cache_put(A.a_cache, tok, len, p);
	auth_attach(req, p);
	principal_unref(p);
	*verdict = AUTH_GO;
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
	if ((p = auth_cache_get(A.a_cache, key, strlen(key), auth_now())) ==
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
		auth_cache_put(A.a_cache, key, strlen(key), p);
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

	if (A.a_local)
		return auth_local(req);
	if (!A.a_on)
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

	memset(&A, 0, sizeof(A));
	TAILQ_INIT(&A.a_waits);
	A.a_w = w;
	if (cf->cf_inauth.ci_type == CONFIG_INAUTH_LOCAL) {
		A.a_local = 1;
		if ((A.a_cache = auth_cache_new()) == NULL)
			return -1;
		return 0;
	}
	if (cf->cf_inauth.ci_type != CONFIG_INAUTH_OIDC)
		return 0;
	A.a_on = 1;
	A.a_oi = &cf->cf_inauth.ci_oidc;
	/* the issuer's hash names its records (an issuer may be long) */
	auth_scope_of(A.a_oi->oi_issuer, "", scope);
	(void)snprintf(A.a_jwks_key, sizeof(A.a_jwks_key), "jwks|%s", scope);
	(void)snprintf(A.a_lock_key, sizeof(A.a_lock_key), "lock|%s", scope);
	(void)snprintf(A.a_refetch_key, sizeof(A.a_refetch_key),
	    "refetch|%s", scope);
	(void)snprintf(A.a_next_key, sizeof(A.a_next_key), "next|%s", scope);
	if ((A.a_cache = auth_cache_new()) == NULL || (A.a_tick = evtimer_new(w->w_base, auth_on_tick, w)) ==
	    NULL || evtimer_add(A.a_tick, &tv) == -1)
		return -1;
	return 0;
}

void
auth_free(void)
{
	while (!TAILQ_EMPTY(&A.a_waits))
		auth_wait_free(TAILQ_FIRST(&A.a_waits));
	if (A.a_call != NULL)
		http_call_cancel(A.a_call);
	A.a_call = NULL;
	free(A.a_buf);
	auth_cache_free(A.a_cache);
	if (A.a_tick != NULL)
		event_free(A.a_tick);
	jwks_clear(&A.a_jwks);
	memset(&A, 0, sizeof(A));
}
