/*
 * Incoming authentication for type oidc: the issuer's keys (auth.h,
 * auth_int.h).
 *
 * Keys.  The issuer's JWKS is fetched by one worker at a time, on the
 * worker's loop (the async HTTP client), never per request: the worker
 * that adds the lock record "lock|<issuer hash>" to the store's keys db
 * fetches (discovery, then the JWKS, or jwksUrl straight) and stores
 * the document under "jwks|<issuer hash>"; every worker reads it from
 * there when its stamp changes.  It is fetched again when the JWKS
 * answer's Cache-Control max-age says (1 min to 1 h; 5 min without
 * one: the "next|" record, shared by the workers), and on a token
 * whose kid is unknown at most once per 30 s across all workers (the
 * "refetch|" record), so tokens with random kids cannot make vmcpd
 * hammer the issuer.  A fetch that fails keeps the old keys;
 * they expire 24 h after the last good fetch.  Without keys, or with a
 * kid still unknown, a token is refused with 401: never allowed, never
 * a 500.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/jwt.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/auth/auth.h"
#include "worker/auth/auth_int.h"
#include "worker/process/process.h"

#define AUTH_REFRESH_MS		(5ULL * 60 * 1000)	/* scheduled */
#define AUTH_REFRESH_MIN_MS	(60ULL * 1000)		/* max-age bounds */
#define AUTH_REFRESH_MAX_MS	(60ULL * 60 * 1000)
#define AUTH_REFETCH_MS		(30ULL * 1000)		/* unknown kid */
#define AUTH_KEYS_TTL_MS	(24ULL * 60 * 60 * 1000) /* hard max age */
#define AUTH_LOCK_MS		(15ULL * 1000)		/* one fetch */
#define AUTH_FETCH_MS		5000			/* per HTTP call */

static void	auth_keys_fetch(struct worker *, const char *url, int disc);

/* an endpoint we may call: https, or http with insecureAllowHttp */
static int
auth_url_ok(const char *url)
{
	return strncasecmp(url, "https://", 8) == 0 ||
	    (strncasecmp(url, "http://", 7) == 0 &&
	    auth.a_oi->oi_insecure_http);
}

struct http_call *
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
	if (!auth.a_oi->oi_jwks_private_ip &&
	    http_call_set_public_only(c) == -1) {
		log_warnx("auth: %s refused: a private address (see "
		    "jwksAllowPrivateIp)", url);
		http_call_cancel(c);
		return NULL;
	}
	http_call_set_timeout(c, AUTH_FETCH_MS);
	if ((auth.a_oi->oi_ca_bundle != NULL &&
	    http_call_set_ca_file(c, auth.a_oi->oi_ca_bundle) == -1) ||
	    http_call_add_header(c, "Accept", "application/json") == -1) {
		http_call_cancel(c);
		return NULL;
	}
	return c;
}

/* the stored JWKS, read again if its stamp changed */
void
auth_keys_load(struct worker *w)
{
	struct store_rec	 rec;
	struct jwks		 jw;
	const char		*why;
	int			 rc;

	memset(&rec, 0, sizeof(rec));
	rc = store_get_changed(w->w_store, STORE_KEYS, auth.a_jwks_key,
	    strlen(auth.a_jwks_key), store_now_ms(), &auth.a_have, &rec);
	if (rc == STORE_UNCHANGED || rc == -1)
		return;
	if (rc == STORE_NOTFOUND) {
		if (auth.a_jwks.jw_nkeys > 0)
			log_warnx("auth: the issuer's keys expired");
		jwks_clear(&auth.a_jwks);
		memset(&auth.a_have, 0, sizeof(auth.a_have));
		return;
	}
	if (jwks_parse(rec.sr_data, rec.sr_len, &jw, &why) == 0) {
		jwks_clear(&auth.a_jwks);
		auth.a_jwks = jw;
	}
	auth.a_have.sr_updated_ms = rec.sr_updated_ms;
	auth.a_have.sr_len = rec.sr_len;
	auth.a_have.sr_expires_ms = rec.sr_expires_ms;
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
int
auth_refresh_due(struct worker *w, uint64_t now)
{
	struct store_rec	 rec;

	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_KEYS, auth.a_next_key,
	    strlen(auth.a_next_key), now, &rec) == 0) {
		free(rec.sr_data);
		return 0;
	}
	return 1;
}

static void
auth_fetch_end(struct worker *w, int ok)
{
	uint64_t	 now = store_now_ms();

	free(auth.a_buf);
	auth.a_buf = NULL;
	auth.a_len = 0;
	auth.a_call = NULL;
	/* a failure holds the lock as a back-off, marked so that waiting
	 * requests are answered now rather than at their deadline */
	if (ok)
		(void)store_del(w->w_store, STORE_KEYS, auth.a_lock_key,
		    strlen(auth.a_lock_key));
	else
		(void)store_put(w->w_store, STORE_KEYS, auth.a_lock_key,
		    strlen(auth.a_lock_key), "failed", 6, now + AUTH_LOCK_MS,
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

static int
auth_fetch_data(void *arg, struct http_call *c, const char *buf, size_t len)
{
	(void)arg;
	(void)c;
	return http_body_add(&auth.a_buf, &auth.a_len, buf, len, JWKS_BODY_MAX);
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

	auth.a_call = NULL;
	if (result != 0 || auth.a_buf == NULL) {
		log_warnx("auth: fetching the issuer's %s failed: %s",
		    auth.a_discovery ? "discovery document" : "JWKS",
		    err != NULL ? err : "empty answer");
		auth_fetch_end(w, 0);
		return;
	}
	if (auth.a_discovery) {
		/* OpenID Connect Discovery 1.0, 4.3: the same issuer */
		doc = json_loadb(auth.a_buf, auth.a_len, JSON_REJECT_DUPLICATES,
		    NULL);
		iss = json_string_value(json_object_get(doc, "issuer"));
		uri = json_string_value(json_object_get(doc, "jwks_uri"));
		if (iss == NULL || strcmp(iss, auth.a_oi->oi_issuer) != 0 ||
		    uri == NULL || (juri = strdup(uri)) == NULL) {
			log_warnx("auth: the discovery document names another "
			    "issuer or no jwks_uri");
			json_decref(doc);
			auth_fetch_end(w, 0);
			return;
		}
		json_decref(doc);
		free(auth.a_buf);
		auth.a_buf = NULL;
		auth.a_len = 0;
		auth_keys_fetch(w, juri, 0);
		free(juri);
		return;
	}
	if (jwks_parse(auth.a_buf, auth.a_len, &jw, &why) == -1) {
		log_warnx("auth: the issuer's JWKS: %s", why);
		auth_fetch_end(w, 0);
		return;
	}
	jwks_clear(&jw);
	if (store_put(w->w_store, STORE_KEYS, auth.a_jwks_key,
	    strlen(auth.a_jwks_key), auth.a_buf, auth.a_len,
	    now + AUTH_KEYS_TTL_MS, now) == -1) {
		log_warnx("auth: cannot store the issuer's keys");
		auth_fetch_end(w, 0);
		return;
	}
	/* the next refresh as its Cache-Control says (RFC 9111 5.2.2.1) */
	refresh = auth_refresh_ms(http_call_header(c, "Cache-Control"));
	(void)store_put(w->w_store, STORE_KEYS, auth.a_next_key,
	    strlen(auth.a_next_key), "1", 1, now + refresh, now);
	log_info("auth: the issuer's keys fetched (%zu bytes; next in %llu s)",
	    auth.a_len, (unsigned long long)(refresh / 1000));
	auth_fetch_end(w, 1);
}

static void
auth_keys_fetch(struct worker *w, const char *url, int disc)
{
	static const struct http_call_cbs cbs = { auth_fetch_head,
	    auth_fetch_data, auth_fetch_done };
	struct http_call *c;

	auth.a_discovery = disc;
	if ((c = auth_call_new(w, "GET", url)) == NULL ||
	    http_call_start(c, &cbs, w) == -1) {
		auth.a_call = NULL;
		auth_fetch_end(w, 0);
		return;
	}
	auth.a_call = c;
}

/* start a fetch if no one is fetching: 1 when one is (ours or
 * another worker's), 0 when none is and none will be soon */
int
auth_keys_kick(struct worker *w)
{
	struct store_rec	 rec;
	uint64_t		 now = store_now_ms();
	char			 pid[24], *url = NULL;
	const char		*iss = auth.a_oi->oi_issuer;
	size_t			 ilen = strlen(iss);
	int			 rc;

	if (auth.a_call != NULL)
		return 1;
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	rc = store_add(w->w_store, STORE_KEYS, auth.a_lock_key,
	    strlen(auth.a_lock_key), pid, strlen(pid), now + AUTH_LOCK_MS, now);
	if (rc == STORE_EXISTS) {
		memset(&rec, 0, sizeof(rec));
		if (store_get(w->w_store, STORE_KEYS, auth.a_lock_key,
		    strlen(auth.a_lock_key), now, &rec) != 0)
			return 1;
		rc = strcmp(rec.sr_data, "failed") != 0;
		free(rec.sr_data);
		return rc;
	}
	if (rc != 0)
		return 0;
	if (auth.a_oi->oi_jwks_url != NULL) {
		auth_keys_fetch(w, auth.a_oi->oi_jwks_url, 0);
		return auth.a_call != NULL;
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
	return auth.a_call != NULL;
}

/* a kid we do not know: refetch, at most every 30 s across workers */
int
auth_keys_unknown_kid(struct worker *w)
{
	uint64_t	 now = store_now_ms();

	if (auth.a_call != NULL)
		return 1;
	if (store_add(w->w_store, STORE_KEYS, auth.a_refetch_key,
	    strlen(auth.a_refetch_key), "1", 1, now + AUTH_REFETCH_MS,
	    now) != 0)
		return 0;
	return auth_keys_kick(w);
}
