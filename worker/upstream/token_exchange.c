/*
 * outgoingAuth token_exchange (token_exchange.h).
 *
 * Records in the store's tokens db, keyed
 * "<principal scope>|<backend>|<audience>|<scopes hash>" (the principal
 * scope is already a hash of issuer and subject): the sealed token,
 * expiring TEXCH_MARGIN_MS before the token does.  Beside each, while
 * an exchange runs, "lock|<key>" holds the exchanging worker's pid for
 * TEXCH_LOCK_MS; a failed exchange leaves "failed <why>" there for
 * TEXCH_FAIL_MS, so that a burst of calls costs the token endpoint one
 * request and every call is told why.  A worker that finds a lock
 * polls the store until the token or the failure shows.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/oauth_token.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "proto/form.h"
#include "worker/auth/auth.h"
#include "worker/http/httpd.h"
#include "proto/proto.h"
#include "worker/process/request_hold.h"
#include "worker/upstream/token_exchange.h"
#include "worker/state/link_store.h"
#include "worker/upstream/token_exchange_redis.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/upstream/backend_session.h"

#define TEXCH_LOCK_MS		(10ULL * 1000)	/* one exchange */
#define TEXCH_FAIL_MS		(2ULL * 1000)	/* a failure answers */
#define TEXCH_WAIT_MS		(10ULL * 1000)	/* a parked request */
#define TEXCH_POLL_MS		50
#define TEXCH_BODY_MAX		(64 * 1024)

/* a request held until its tokens are there (or its time is up) */
struct texch_wait {
	TAILQ_ENTRY(texch_wait)	 tw_entry;
	struct reqhold		 tw_hold;	/* worker, request, gone */
	void			(*tw_cont)(struct worker *, struct httpd_req *);
	uint64_t		 tw_deadline;
};

struct texch_call {
	TAILQ_ENTRY(texch_call)	 tc_entry;
	struct worker		*tc_w;
	const struct config_backend *tc_be;
	struct http_call	*tc_http;
	char			 tc_key[TEXCH_KEY_MAX];
	int64_t			 tc_subject_exp;
	char			*tc_buf;
	size_t			 tc_len;
	long			 tc_status;
	char			*tc_sub;	/* the client's token, until sent */
	size_t			 tc_sublen;
	struct texch_rfetch	*tc_fetch;	/* Redis read first */
	int			 tc_fleet;	/* Redis asked: tell it the end */
};

static struct {
	int			 t_on;		/* a token_exchange backend */
	/* views per principal: t_on, or an authorization_code backend
	 * (its lists made with each principal's link, worker/link/) */
	int			 t_views;
	struct event		*t_tick;
	TAILQ_HEAD(, texch_wait) t_waits;
	TAILQ_HEAD(, texch_call) t_calls;
} T;

int
texch_backend(const struct config_backend *be)
{
	return be->cb_outauth != NULL &&
	    be->cb_outauth->oa_type == CONFIG_OUTAUTH_EXCHANGE;
}

const char *
texch_view_scope(const struct httpd_req *req)
{
	const struct principal *p;

	if (!T.t_views || req == NULL || (p = auth_principal(req)) == NULL)
		return BSESSION_SCOPE_ANON;
	return p->p_scope;
}

static int
texch_key_of(const struct config_backend *be, const char *scope, char *key,
    size_t len)
{
	const struct config_outauth *oa = be->cb_outauth;

	return texch_key(key, len, scope, be->cb_name, oa->oa_tx_audience,
	    oa->oa_tx_scopes);
}

/*
 * The lock record of key: -1 (none), 0 (an exchange runs), or 1 with
 * why (the last one failed)
 */
static int
texch_lock_state(struct worker *w, const char *key, char *why, size_t len)
{
	struct store_rec	 rec;
	char			 lk[TEXCH_KEY_MAX + 8];
	int			 rc;

	(void)snprintf(lk, sizeof(lk), "lock|%s", key);
	memset(&rec, 0, sizeof(rec));
	if ((rc = store_get(w->w_store, STORE_TOKENS, lk, strlen(lk),
	    store_now_ms(), &rec)) != 0)
		return rc == STORE_NOTFOUND ? -1 : 0;
	rc = strncmp(rec.sr_data, "failed ", 7) == 0;
	if (rc && why != NULL)
		(void)snprintf(why, len, "%s", rec.sr_data + 7);
	free(rec.sr_data);
	return rc;
}

/* the token of key, unsealed into out: 0, or -1 (none, or not ours) */
static int
texch_load(struct worker *w, const char *key, char *out, size_t outlen,
    size_t *plen)
{
	struct store_rec	 rec;
	int			 rc;

	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_TOKENS, key, strlen(key),
	    store_now_ms(), &rec) != 0)
		return -1;
	rc = seal_open(key, strlen(key), (const uint8_t *)rec.sr_data,
	    rec.sr_len, (uint8_t *)out, outlen, plen);
	OPENSSL_cleanse(rec.sr_data, rec.sr_len);
	free(rec.sr_data);
	return rc;
}

/* a token of key that opens (one sealed by a run before this one, under
 * another key, does not: it is exchanged anew) */
static int
texch_have(struct worker *w, const char *key)
{
	char	*buf;
	size_t	 n;
	int	 rc;

	if ((buf = malloc(TEXCH_AUTHZ_MAX)) == NULL)
		return 0;
	rc = texch_load(w, key, buf, TEXCH_AUTHZ_MAX, &n) == 0;
	OPENSSL_cleanse(buf, TEXCH_AUTHZ_MAX);
	free(buf);
	return rc;
}

int
texch_credential(struct worker *w, const struct config_backend *be,
    const char *scope, char *authz, size_t len, char *why, size_t whylen)
{
	char	 key[TEXCH_KEY_MAX], fail[160];
	size_t	 n;

	if (strcmp(scope, BSESSION_SCOPE_ANON) == 0) {
		(void)snprintf(why, whylen, "backend %s needs the client's "
		    "own token (token_exchange) and there is none here",
		    be->cb_name);
		return -1;
	}
	if (len < 8 || texch_key_of(be, scope, key, sizeof(key)) == -1)
		goto none;
	memcpy(authz, "Bearer ", 7);
	if (texch_load(w, key, authz + 7, len - 8, &n) == 0) {
		authz[7 + n] = '\0';
		return 0;
	}
	OPENSSL_cleanse(authz, len);
	if (texch_lock_state(w, key, fail, sizeof(fail)) == 1) {
		(void)snprintf(why, whylen, "backend %s: the token exchange "
		    "failed: %s", be->cb_name, fail);
		return -1;
	}
 none:
	(void)snprintf(why, whylen, "backend %s: no exchanged token for this "
	    "client (token_exchange): it expired or could not be had in "
	    "time", be->cb_name);
	return -1;
}

/*
 * Exchanges
 */

static void
texch_call_free_sub(struct texch_call *tc)
{
	if (tc->tc_sub != NULL) {
		OPENSSL_cleanse(tc->tc_sub, tc->tc_sublen);
		free(tc->tc_sub);
		tc->tc_sub = NULL;
	}
}

static void
texch_call_end(struct texch_call *tc, const char *fail)
{
	struct timeval	 now_tv = { 0, 0 };
	struct worker	*w = tc->tc_w;
	char		 lk[TEXCH_KEY_MAX + 8], msg[200];
	uint64_t	 now = store_now_ms();

	(void)snprintf(lk, sizeof(lk), "lock|%s", tc->tc_key);
	if (fail == NULL)
		(void)store_del(w->w_store, STORE_TOKENS, lk, strlen(lk));
	else {
		log_warnx("backend %s: token exchange failed: %s",
		    tc->tc_be->cb_name, fail);
		(void)snprintf(msg, sizeof(msg), "failed %s", fail);
		(void)store_put(w->w_store, STORE_TOKENS, lk, strlen(lk), msg,
		    strlen(msg), now + TEXCH_FAIL_MS, now);
		/* the other nodes need not wait for the lock to expire */
		if (tc->tc_fleet)
			texch_store->tt_done(tc->tc_key, NULL, 0, 0);
	}
	TAILQ_REMOVE(&T.t_calls, tc, tc_entry);
	texch_store->tt_cancel(tc->tc_fetch);
	texch_call_free_sub(tc);
	if (tc->tc_buf != NULL) {
		OPENSSL_cleanse(tc->tc_buf, tc->tc_len);
		free(tc->tc_buf);
	}
	free(tc);
	(void)evtimer_add(T.t_tick, &now_tv);
}

static int
texch_on_head(void *arg, struct http_call *hc, long status)
{
	struct texch_call *tc = arg;

	(void)hc;
	tc->tc_status = status;
	return 0;
}

static int
texch_on_data(void *arg, struct http_call *hc, const char *buf, size_t len)
{
	struct texch_call	*tc = arg;

	(void)hc;
	return http_body_add(&tc->tc_buf, &tc->tc_len, buf, len,
	    TEXCH_BODY_MAX);
}

/* an RFC 6749 5.2 error answer: its error code, short and printable */
static void
texch_oauth_error(const struct texch_call *tc, char *out, size_t len)
{
	char	 e[OAUTH_ERROR_MAX + 1];

	oauth_token_error(tc->tc_buf, tc->tc_len, e, sizeof(e));
	(void)snprintf(out, len, "the token endpoint answered HTTP %ld%s%s",
	    tc->tc_status, *e != '\0' ? ": " : "", e);
}

static void
texch_on_done(void *arg, struct http_call *hc, int result, const char *err)
{
	struct texch_call	*tc = arg;
	struct worker		*w = tc->tc_w;
	char			 why[160], *tok = NULL;
	uint8_t			*sealed = NULL;
	int64_t			 ein;
	uint64_t		 now = store_now_ms(), exp;
	size_t			 n, slen;

	(void)hc;
	tc->tc_http = NULL;
	if (result != 0) {
		(void)snprintf(why, sizeof(why), "the token endpoint cannot be "
		    "reached (%.100s)", err != NULL ? err : "no answer");
		texch_call_end(tc, why);
		return;
	}
	if (tc->tc_status != 200) {
		texch_oauth_error(tc, why, sizeof(why));
		texch_call_end(tc, why);
		return;
	}
	if (tc->tc_buf == NULL || texch_parse(tc->tc_buf, tc->tc_len, &tok,
	    &ein, why, sizeof(why)) == -1) {
		if (tc->tc_buf == NULL)
			(void)snprintf(why, sizeof(why), "the token endpoint "
			    "answered nothing");
		texch_call_end(tc, why);
		return;
	}
	n = strlen(tok);
	slen = n + SEAL_OVERHEAD;
	exp = texch_expiry(now, ein, tc->tc_subject_exp);
	if (exp == 0) {
		(void)snprintf(why, sizeof(why), "the exchanged token expires "
		    "at once");
		goto fail;
	}
	if ((sealed = malloc(slen)) == NULL ||
	    seal_data(tc->tc_key, strlen(tc->tc_key), tok, n, sealed,
	    slen) == -1 || store_put(w->w_store, STORE_TOKENS, tc->tc_key,
	    strlen(tc->tc_key), sealed, slen, exp, now) == -1) {
		(void)snprintf(why, sizeof(why), "cannot keep the exchanged "
		    "token");
		goto fail;
	}
	log_debug("backend %s: token exchanged (for %llu s)",
	    tc->tc_be->cb_name, (unsigned long long)((exp - now) / 1000));
	/* for the other nodes, as long as it is of use here */
	if (tc->tc_fleet)
		texch_store->tt_done(tc->tc_key, tok, n, exp - now);
	OPENSSL_cleanse(tok, n);
	free(tok);
	free(sealed);
	texch_call_end(tc, NULL);
	return;
 fail:
	OPENSSL_cleanse(tok, n);
	free(tok);
	free(sealed);
	texch_call_end(tc, why);
}

/* the client's bearer token (auth.c checked its form) */
static const char *
texch_subject(struct httpd_req *req, size_t *len)
{
	const char	*h = front_header(req, "Authorization"), *t;

	if (h == NULL || strncasecmp(h, "Bearer", 6) != 0)
		return NULL;
	for (t = h + 6; *t == ' ' || *t == '\t'; t++)
		;
	*len = strcspn(t, " \t");
	return *len > 0 ? t : NULL;
}

/*
 * RFC 8693 2.1: the request, client authentication as RFC 6749 2.3.1.
 * 0, or -1 with tc ended (its lock says why)
 */
static int
texch_exchange(struct texch_call *tc)
{
	static const struct http_call_cbs cbs = { texch_on_head,
	    texch_on_data, texch_on_done };
	const struct config_backend *be = tc->tc_be;
	const struct config_outauth *oa = be->cb_outauth;
	char			*body = NULL;
	size_t			 blen = 0;

	if (proto_form_add(&body, &blen, "grant_type",
	    "urn:ietf:params:oauth:grant-type:token-exchange") == -1 ||
	    proto_form_add(&body, &blen, "subject_token", tc->tc_sub) == -1 ||
	    proto_form_add(&body, &blen, "subject_token_type",
	    oa->oa_tx_subject_type) == -1 ||
	    proto_form_add(&body, &blen, "requested_token_type",
	    CONFIG_TX_ACCESS_TOKEN) == -1 ||
	    (oa->oa_tx_audience != NULL && proto_form_add(&body, &blen,
	    "audience", oa->oa_tx_audience) == -1) ||
	    (oa->oa_tx_scopes != NULL && proto_form_add(&body, &blen,
	    "scope", oa->oa_tx_scopes) == -1) ||
	    (oa->oa_tx_client_id != NULL && proto_form_add(&body, &blen,
	    "client_id", oa->oa_tx_client_id) == -1) ||
	    (oa->oa_tx_secret != NULL && proto_form_add(&body, &blen,
	    "client_secret", oa->oa_tx_secret) == -1))
		goto fail;
	texch_call_free_sub(tc);
	if ((tc->tc_http = http_call_new(tc->tc_w->w_hc, "POST",
	    oa->oa_tx_url)) == NULL)
		goto fail;
	http_call_set_timeout(tc->tc_http, TEXCH_LOCK_MS - 1000);
	if ((be->cb_ca_bundle != NULL && http_call_set_ca_file(tc->tc_http,
	    be->cb_ca_bundle) == -1) ||
	    http_call_add_header(tc->tc_http, "Content-Type",
	    "application/x-www-form-urlencoded") == -1 ||
	    http_call_add_header(tc->tc_http, "Accept",
	    "application/json") == -1 ||
	    http_call_set_body(tc->tc_http, body, blen) == -1) {
		http_call_cancel(tc->tc_http);
		tc->tc_http = NULL;
		goto fail;
	}
	if (http_call_start(tc->tc_http, &cbs, tc) == -1) {
		tc->tc_http = NULL;
		goto fail;
	}
	OPENSSL_cleanse(body, blen);
	free(body);
	return 0;
 fail:
	if (body != NULL)
		OPENSSL_cleanse(body, blen);
	free(body);
	texch_call_end(tc, "cannot send the request");
	return -1;
}

/*
 * Redis answered (provider redis): another node's token, now this
 * host's copy until Redis would drop it; or this node exchanges.
 */
static void
texch_on_fetch(void *arg, enum texch_rget kind, const char *tok, size_t n,
    uint64_t ttl_ms)
{
	struct texch_call	*tc = arg;
	struct worker		*w = tc->tc_w;
	char			 lk[TEXCH_KEY_MAX + 8], pid[24];
	uint8_t			*sealed;
	uint64_t		 now = store_now_ms();
	size_t			 slen = n + SEAL_OVERHEAD;

	tc->tc_fetch = NULL;
	if (kind == TEXCH_R_HIT) {
		if ((sealed = malloc(slen)) == NULL ||
		    seal_data(tc->tc_key, strlen(tc->tc_key), tok, n, sealed,
		    slen) == -1 || store_put(w->w_store, STORE_TOKENS,
		    tc->tc_key, strlen(tc->tc_key), sealed, slen,
		    now + ttl_ms, now) == -1) {
			free(sealed);
			texch_call_end(tc, "cannot keep the exchanged token");
			return;
		}
		free(sealed);
		log_debug("backend %s: token another node exchanged (for "
		    "%llu s)", tc->tc_be->cb_name,
		    (unsigned long long)(ttl_ms / 1000));
		texch_call_end(tc, NULL);
		return;
	}
	/* this host's lock lasts the exchange too */
	(void)snprintf(lk, sizeof(lk), "lock|%s", tc->tc_key);
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	(void)store_put(w->w_store, STORE_TOKENS, lk, strlen(lk), pid,
	    strlen(pid), now + TEXCH_LOCK_MS, now);
	(void)texch_exchange(tc);
}

/* an exchange for key, from Redis first with provider redis: 0, or -1 */
static int
texch_start(struct worker *w, struct httpd_req *req,
    const struct config_backend *be, const char *key)
{
	const struct principal	*p = auth_principal(req);
	struct texch_call	*tc;
	const char		*subj;
	size_t			 slen;

	if ((subj = texch_subject(req, &slen)) == NULL ||
	    (tc = calloc(1, sizeof(*tc))) == NULL)
		return -1;
	if ((tc->tc_sub = strndup(subj, slen)) == NULL) {
		free(tc);
		return -1;
	}
	tc->tc_sublen = slen;
	tc->tc_w = w;
	tc->tc_be = be;
	tc->tc_subject_exp = p != NULL ? p->p_exp : 0;
	(void)snprintf(tc->tc_key, sizeof(tc->tc_key), "%s", key);
	TAILQ_INSERT_TAIL(&T.t_calls, tc, tc_entry);
	/* not shared, or Redis not there: exchanged here, not written */
	if ((tc->tc_fetch = texch_store->tt_fetch(key, texch_on_fetch,
	    tc)) != NULL) {
		tc->tc_fleet = 1;
		return 0;
	}
	(void)texch_exchange(tc);
	return 0;
}

/*
 * Each token_exchange backend's token for req's principal: had, being
 * had (by us or another worker), or started here.  Returns how many
 * are still to come.
 */
static int
texch_pending(struct worker *w, struct httpd_req *req, int start)
{
	const struct config	*cf = w->w_conf;
	const struct principal	*p = auth_principal(req);
	char			 key[TEXCH_KEY_MAX], lk[TEXCH_KEY_MAX + 8];
	char			 pid[24];
	uint64_t		 now;
	size_t			 i;
	int			 n = 0, ls;

	for (i = 0; i < cf->cf_nbackends; i++) {
		const struct config_backend *be = &cf->cf_backends[i];

		if (!texch_backend(be) || texch_key_of(be, p->p_scope, key,
		    sizeof(key)) == -1)
			continue;
		/* the lock first: a token written before it went is seen */
		ls = texch_lock_state(w, key, NULL, 0);
		if (texch_have(w, key) || ls == 1)
			continue;
		if (ls == 0) {
			n++;
			continue;
		}
		/* none: this worker starts the exchange */
		if (!start)
			continue;
		now = store_now_ms();
		(void)snprintf(lk, sizeof(lk), "lock|%s", key);
		(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
		if (store_add(w->w_store, STORE_TOKENS, lk, strlen(lk), pid,
		    strlen(pid), now + TEXCH_LOCK_MS, now) != 0) {
			n++;	/* another worker's, just now */
			continue;
		}
		if (texch_start(w, req, be, key) == -1) {
			(void)store_del(w->w_store, STORE_TOKENS, lk,
			    strlen(lk));
			continue;
		}
		n++;
	}
	return n;
}

static void
texch_wait_end(struct texch_wait *tw)
{
	struct worker		*w = tw->tw_hold.rh_w;
	struct httpd_req	*req = tw->tw_hold.rh_req;

	TAILQ_REMOVE(&T.t_waits, tw, tw_entry);
	reqhold_detach(&tw->tw_hold);
	if (tw->tw_hold.rh_gone)
		front_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT,
		    "the client went away");
	else
		tw->tw_cont(w, req);
	free(tw);
	worker_request_release(w, __func__);
}

static void
texch_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct texch_wait	*tw, *next;
	struct timeval		 tv = { 0, TEXCH_POLL_MS * 1000 };
	uint64_t		 now = store_now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	for (tw = TAILQ_FIRST(&T.t_waits); tw != NULL; tw = next) {
		next = TAILQ_NEXT(tw, tw_entry);
		if (tw->tw_hold.rh_gone || now >= tw->tw_deadline ||
		    texch_pending(tw->tw_hold.rh_w, tw->tw_hold.rh_req, 1) == 0)
			texch_wait_end(tw);
	}
	if (!TAILQ_EMPTY(&T.t_waits))
		(void)evtimer_add(T.t_tick, &tv);
}

/*
 * sessions.maxPrincipals: a principal's views, backend sessions and
 * tokens are made only once it holds a slot, "pr|<scope>" in the tokens
 * db, taken under the cap in the write txn that counts the group, so
 * the cap holds across the workers.  A new principal beyond it is
 * refused rather than another's state evicted: that state may serve
 * calls in flight, streams and backend sessions of live client
 * sessions, and a flood of new principals would turn into a flood of
 * exchanges and backend sessions closed and opened again.  A slot ends
 * TEXCH_PRINCIPAL_MS after its principal's last request.  0 go on, -1
 * refused (answered); a store error lets the request go on, as the
 * state it would make is bounded by its own expiry.
 */
static int
texch_admit(struct worker *w, struct httpd_req *req, const char *scope)
{
	static time_t		 logged;
	const struct config	*cf = w->w_conf;
	struct store_limit	 lim;
	struct store_rec	 rec;
	char			 key[TEXCH_KEY_MAX], msg[256];
	uint64_t		 now = store_now_ms();
	int			 rc;

	(void)snprintf(key, sizeof(key), "pr|%s", scope);
	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_TOKENS, key, strlen(key), now,
	    &rec) == 0) {
		rc = texch_principal_stale(rec.sr_expires_ms, now);
		store_rec_clear(&rec);
		/* the group stays the record's */
		if (rc)
			(void)store_put(w->w_store, STORE_TOKENS, key,
			    strlen(key), "p", 1, now + TEXCH_PRINCIPAL_MS, now);
		return 0;
	}
	memset(&lim, 0, sizeof(lim));
	lim.sl_group = TEXCH_PRINCIPALS;
	lim.sl_glen = strlen(TEXCH_PRINCIPALS);
	lim.sl_group_max = cf->cf_principal_cap;
	rc = store_add_limited(w->w_store, STORE_TOKENS, key, strlen(key),
	    "p", 1, now + TEXCH_PRINCIPAL_MS, now, &lim);
	if (rc != STORE_LIMIT_GROUP)
		return 0;
	(void)snprintf(msg, sizeof(msg), "Service Unavailable: too many "
	    "principals hold state (sessions.maxPrincipals is %u); try "
	    "again later", cf->cf_principal_cap);
	/* refusals come in floods: a line a second per worker */
	if (time(NULL) != logged) {
		logged = time(NULL);
		log_warnx("request refused: %s", msg);
	}
	front_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT, msg);
	return -1;
}

int
texch_request(struct worker *w, struct httpd_req *req,
    void (*cont)(struct worker *, struct httpd_req *))
{
	struct texch_wait	*tw;
	struct timeval		 tv = { 0, TEXCH_POLL_MS * 1000 };
	const struct principal	*p;

	if (!T.t_on || (p = auth_principal(req)) == NULL)
		return TEXCH_GO;
	if (texch_admit(w, req, p->p_scope) == -1)
		return TEXCH_ANSWERED;
	if (texch_pending(w, req, 1) == 0)
		return TEXCH_GO;
	/* no memory to wait: the calls say there is no token */
	if ((tw = calloc(1, sizeof(*tw))) == NULL)
		return TEXCH_GO;
	tw->tw_cont = cont;
	tw->tw_deadline = store_now_ms() + TEXCH_WAIT_MS;
	TAILQ_INSERT_TAIL(&T.t_waits, tw, tw_entry);
	reqhold_attach(&tw->tw_hold, w, req);
	(void)evtimer_add(T.t_tick, &tv);
	return TEXCH_LATER;
}

int
texch_init(struct worker *w)
{
	const struct config	*cf = w->w_conf;
	size_t			 i;

	memset(&T, 0, sizeof(T));
	TAILQ_INIT(&T.t_waits);
	TAILQ_INIT(&T.t_calls);
	for (i = 0; i < cf->cf_nbackends; i++)
		if (texch_backend(&cf->cf_backends[i]))
			T.t_on = T.t_views = 1;
		else if (link_backend(&cf->cf_backends[i]))
			T.t_views = 1;
	if (T.t_on && (T.t_tick = evtimer_new(w->w_base, texch_on_tick,
	    w)) == NULL)
		return -1;
	return 0;
}

/* this host's store alone: nothing asked, nothing to tell */
static struct texch_rfetch *
texch_lmdb_fetch(const char *key, texch_rfetch_cb cb, void *arg)
{
	(void)key;
	(void)cb;
	(void)arg;
	return NULL;
}

static void
texch_lmdb_cancel(struct texch_rfetch *tf)
{
	(void)tf;
}

static void
texch_lmdb_done(const char *key, const char *token, size_t len,
    uint64_t ttl_ms)
{
	(void)key;
	(void)token;
	(void)len;
	(void)ttl_ms;
}

static const struct texch_store texch_store_lmdb = {
	texch_lmdb_fetch,
	texch_lmdb_cancel,
	texch_lmdb_done
};
const struct texch_store *texch_store = &texch_store_lmdb;

/* after redis_init(): the tokens in Redis, with provider redis */
void
texch_init_redis(struct worker *w)
{
	if (T.t_on)
		texch_redis_init(w);
}

void
texch_free(void)
{
	struct texch_call	*tc;
	struct texch_wait	*tw;

	while ((tw = TAILQ_FIRST(&T.t_waits)) != NULL) {
		TAILQ_REMOVE(&T.t_waits, tw, tw_entry);
		free(tw);
	}
	while ((tc = TAILQ_FIRST(&T.t_calls)) != NULL) {
		TAILQ_REMOVE(&T.t_calls, tc, tc_entry);
		if (tc->tc_http != NULL)
			http_call_cancel(tc->tc_http);
		texch_store->tt_cancel(tc->tc_fetch);
		texch_call_free_sub(tc);
		free(tc->tc_buf);
		free(tc);
	}
	if (T.t_tick != NULL)
		event_free(T.t_tick);
	memset(&T, 0, sizeof(T));
}
