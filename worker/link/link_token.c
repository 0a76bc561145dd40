/*
 * The token endpoint (link.h, link_int.h): a code's exchange (RFC 6749
 * 4.1.3, with the PKCE verifier of RFC 7636 4.5) and a refresh (RFC
 * 6749 6), POSTed on the worker's loop, the answer bounded and read by
 * shared/oauth_token.c.
 *
 * One refresh in flight per link across the workers: the worker that
 * adds "link|<scope>|<backend>" to the store's tokens db refreshes;
 * the others poll that record until it goes (the link is read again)
 * or says how the refresh ended ("needed", "failed", kept
 * LINK_FAIL_MS).  Across nodes (sessionStorage.provider redis) that
 * worker then asks Redis's flight (worker/redis/redis_flight.h) under
 * "<prefix>linkrf:<scope>|<backend>": one node refreshes and writes how
 * it ended ("ok", "needed", "failed") for LINK_FAIL_MS; the others read
 * that and the link again (ls_get makes the host's copy current), so an
 * upstream server that rotates refresh tokens sees one refresh.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "proto/form.h"
#include "proto/mheaders.h"
#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/link/link.h"
#include "worker/link/link_int.h"
#include "worker/process/process.h"
#include "worker/redis/redis_flight.h"
#include "worker/state/link_store.h"

#define LINK_TOK_MS		(10ULL * 1000)	/* one request */
#define LINK_TOK_BODY_MAX	(64 * 1024)
#define LINK_LOCK_MS		(15ULL * 1000)	/* one refresh */
#define LINK_FAIL_MS		(2ULL * 1000)	/* its end, told */
#define LINK_POLL_MS		50

struct link_tok {
	TAILQ_ENTRY(link_tok)	 lt_entry;
	struct http_call	*lt_http;
	link_tok_cb		 lt_cb;
	void			*lt_arg;
	char			*lt_buf;
	size_t			 lt_len;
	long			 lt_status;
};

static TAILQ_HEAD(, link_tok) toks = TAILQ_HEAD_INITIALIZER(toks);

static void
link_tok_free(struct link_tok *lt)
{
	TAILQ_REMOVE(&toks, lt, lt_entry);
	if (lt->lt_buf != NULL) {
		OPENSSL_cleanse(lt->lt_buf, lt->lt_len);
		free(lt->lt_buf);
	}
	free(lt);
}

static int
link_tok_head(void *arg, struct http_call *hc, long status)
{
	struct link_tok *lt = arg;

	(void)hc;
	lt->lt_status = status;
	return 0;
}

static int
link_tok_data(void *arg, struct http_call *hc, const char *buf, size_t len)
{
	struct link_tok	*lt = arg;

	(void)hc;
	return http_body_add(&lt->lt_buf, &lt->lt_len, buf, len,
	    LINK_TOK_BODY_MAX);
}

static void
link_tok_done(void *arg, struct http_call *hc, int result, const char *err)
{
	struct link_tok		*lt = arg;
	struct oauth_token	 t;
	char			 why[160], code[OAUTH_ERROR_MAX + 1];

	(void)hc;
	lt->lt_http = NULL;
	memset(&t, 0, sizeof(t));
	*code = '\0';
	if (result != 0) {
		(void)snprintf(why, sizeof(why), "the token endpoint cannot be "
		    "reached (%.100s)", err != NULL ? err : "no answer");
		lt->lt_cb(lt->lt_arg, LINK_TOK_FAILED, NULL, code, why);
	} else if (lt->lt_status == 400 || lt->lt_status == 401) {
		/* RFC 6749 5.2 */
		oauth_token_error(lt->lt_buf, lt->lt_len, code, sizeof(code));
		(void)snprintf(why, sizeof(why), "the token endpoint refused: "
		    "HTTP %ld %s", lt->lt_status, *code != '\0' ? code :
		    "(no error code)");
		lt->lt_cb(lt->lt_arg, *code != '\0' ? LINK_TOK_REFUSED :
		    LINK_TOK_FAILED, NULL, code, why);
	} else if (lt->lt_status != 200) {
		(void)snprintf(why, sizeof(why), "the token endpoint answered "
		    "HTTP %ld", lt->lt_status);
		lt->lt_cb(lt->lt_arg, LINK_TOK_FAILED, NULL, code, why);
	} else if (lt->lt_buf == NULL || oauth_token_parse(lt->lt_buf,
	    lt->lt_len, 0, LINK_TOKEN_MAX, &t, why, sizeof(why)) == -1) {
		if (lt->lt_buf == NULL)
			(void)snprintf(why, sizeof(why), "the token endpoint "
			    "answered nothing");
		lt->lt_cb(lt->lt_arg, LINK_TOK_FAILED, NULL, code, why);
	} else {
		lt->lt_cb(lt->lt_arg, LINK_TOK_OK, &t, code, "");
		oauth_token_clear(&t);
	}
	link_tok_free(lt);
}

/* RFC 6749 2.3.1: id and secret form-encoded, then Basic */
static int
link_tok_basic(struct http_call *hc, const char *id, const char *secret)
{
	char	*ei = NULL, *es = NULL, *pair = NULL, *b64 = NULL, *h = NULL;
	int	 rc = -1;

	if ((ei = proto_form_escape(id)) == NULL ||
	    (es = proto_form_escape(secret)) == NULL ||
	    asprintf(&pair, "%s:%s", ei, es) == -1)
		goto done;
	if ((b64 = proto_b64_encode(pair, strlen(pair), 0)) == NULL ||
	    asprintf(&h, "Basic %s", b64) == -1) {
		h = NULL;
		goto done;
	}
	rc = http_call_add_header(hc, "Authorization", h);
 done:
	if (pair != NULL)
		OPENSSL_cleanse(pair, strlen(pair));
	if (es != NULL)
		OPENSSL_cleanse(es, strlen(es));
	if (b64 != NULL)
		OPENSSL_cleanse(b64, strlen(b64));
	if (h != NULL)
		OPENSSL_cleanse(h, strlen(h));
	free(ei);
	free(es);
	free(pair);
	free(b64);
	free(h);
	return rc;
}

struct link_tok *
link_tok_post(struct worker *w, const struct link_tok_client *c,
    const char *const *form, link_tok_cb cb, void *arg)
{
	static const struct http_call_cbs cbs = { link_tok_head,
	    link_tok_data, link_tok_done };
	struct link_tok	*lt;
	char		*body = NULL;
	size_t		 blen = 0, i;

	for (i = 0; form[i] != NULL; i += 2)
		if (proto_form_add(&body, &blen, form[i], form[i + 1]) == -1)
			goto fail;
	if (c->ltc_post || c->ltc_secret == NULL) {
		if (proto_form_add(&body, &blen, "client_id",
		    c->ltc_id) == -1 ||
		    (c->ltc_secret != NULL && proto_form_add(&body, &blen,
		    "client_secret", c->ltc_secret) == -1))
			goto fail;
	}
	if ((lt = calloc(1, sizeof(*lt))) == NULL)
		goto fail;
	lt->lt_cb = cb;
	lt->lt_arg = arg;
	if ((lt->lt_http = http_call_new(w->w_hc, "POST", c->ltc_url)) ==
	    NULL) {
		free(lt);
		goto fail;
	}
	http_call_set_timeout(lt->lt_http, LINK_TOK_MS);
	if ((c->ltc_cafile != NULL && http_call_set_ca_file(lt->lt_http,
	    c->ltc_cafile) == -1) || (c->ltc_public_only &&
	    http_call_set_public_only(lt->lt_http) == -1) ||
	    (!c->ltc_post && c->ltc_secret != NULL &&
	    link_tok_basic(lt->lt_http, c->ltc_id, c->ltc_secret) == -1) ||
	    http_call_add_header(lt->lt_http, "Content-Type",
	    "application/x-www-form-urlencoded") == -1 ||
	    http_call_add_header(lt->lt_http, "Accept",
	    "application/json") == -1 ||
	    http_call_set_body(lt->lt_http, body, blen) == -1) {
		http_call_cancel(lt->lt_http);
		free(lt);
		goto fail;
	}
	OPENSSL_cleanse(body, blen);
	free(body);
	body = NULL;
	TAILQ_INSERT_TAIL(&toks, lt, lt_entry);
	if (http_call_start(lt->lt_http, &cbs, lt) == -1) {
		lt->lt_http = NULL;
		link_tok_free(lt);
		return NULL;
	}
	return lt;
 fail:
	if (body != NULL)
		OPENSSL_cleanse(body, blen);
	free(body);
	return NULL;
}

void
link_tok_cancel(struct link_tok *lt)
{
	if (lt == NULL)
		return;
	if (lt->lt_http != NULL)
		http_call_cancel(lt->lt_http);
	link_tok_free(lt);
}

void
link_tok_free_all(void)
{
	while (!TAILQ_EMPTY(&toks))
		link_tok_cancel(TAILQ_FIRST(&toks));
}

/*
 * Refreshes
 */

struct link_rf {
	TAILQ_ENTRY(link_rf)	 rf_entry;
	struct worker		*rf_w;
	const struct config_backend *rf_be;
	char			 rf_scope[LINK_SCOPE_MAX + 1];
	char			 rf_lock[LINK_SCOPE_MAX + LINK_NAME_MAX + 8];
	link_state_cb		 rf_cb;		/* NULL: cancelled */
	void			*rf_arg;
	int			 rf_mine;	/* this worker refreshes */
	int			 rf_store;	/* a link_store call pending */
	uint64_t		 rf_deadline;	/* a waiter's */
	struct link_tok		*rf_tok;
	struct event		*rf_timer;
	struct link_rec		*rf_rec;	/* the link refreshed */
	enum link_state		 rf_end;
	struct redis_flight	*rf_flight;	/* Redis asked */
	int			 rf_fleet;	/* the fleet's: tell it */
	int			 rf_remote;	/* another node's refresh */
	char			 rf_rkey[LINK_SCOPE_MAX + LINK_NAME_MAX + 160];
};

static TAILQ_HEAD(, link_rf) rfs = TAILQ_HEAD_INITIALIZER(rfs);

static void
link_rf_free(struct link_rf *rf)
{
	TAILQ_REMOVE(&rfs, rf, rf_entry);
	if (rf->rf_store)
		link_store->ls_cancel(rf);
	link_meta_cancel(rf);
	link_tok_cancel(rf->rf_tok);
	if (rf->rf_flight != NULL)
		redis_flight_cancel(rf->rf_flight);
	if (rf->rf_timer != NULL)
		event_free(rf->rf_timer);
	if (rf->rf_rec != NULL) {
		OPENSSL_cleanse(rf->rf_rec, sizeof(*rf->rf_rec));
		free(rf->rf_rec);
	}
	free(rf);
}

/* the end, told; the lock let go (or left saying how it ended) */
static void
link_rf_end(struct link_rf *rf, enum link_state st)
{
	struct store	*s = rf->rf_w->w_store;
	const char	*say = st == LINK_NEEDED ? "needed" : "failed";
	uint64_t	 now = store_now_ms();

	if (rf->rf_mine) {
		if (st == LINK_OK)
			(void)store_del(s, STORE_TOKENS, rf->rf_lock,
			    strlen(rf->rf_lock));
		else
			(void)store_put(s, STORE_TOKENS, rf->rf_lock,
			    strlen(rf->rf_lock), say, strlen(say),
			    now + LINK_FAIL_MS, now);
		if (rf->rf_fleet)
			redis_flight_done(rf->rf_rkey, st == LINK_OK ? "ok" :
			    say, st == LINK_OK ? 2 : strlen(say), LINK_FAIL_MS,
			    REDIS_USER_LINK, "a link's refresh");
		if (!rf->rf_remote)
			link_count(rf->rf_w, st == LINK_OK ?
			    LINKC_REFRESH_OK : st == LINK_NEEDED ?
			    LINKC_REFRESH_REFUSED : LINKC_REFRESH_FAILED);
	}
	if (rf->rf_cb != NULL)
		rf->rf_cb(rf->rf_arg, st);
	link_rf_free(rf);
}

static void
link_rf_on_done(void *arg, int rc)
{
	struct link_rf	*rf = arg;

	rf->rf_store = 0;
	if (rc != 0)
		log_warnx("link: backend %s: the refreshed link cannot be "
		    "kept", rf->rf_be->cb_name);
	link_rf_end(rf, rc == 0 ? rf->rf_end : LINK_FAILED);
}

static void
link_rf_on_token(void *arg, enum link_tok_rc rc, struct oauth_token *t,
    const char *code, const char *why)
{
	struct link_rf	*rf = arg;
	struct link_rec	*lr = rf->rf_rec;
	uint64_t	 now = store_now_ms();

	rf->rf_tok = NULL;
	if (rc == LINK_TOK_REFUSED && strcmp(code, "invalid_grant") == 0) {
		/* RFC 6749 5.2: the grant is no more: consent anew */
		log_info("link: backend %s: the refresh was refused "
		    "(invalid_grant); the link is dropped", rf->rf_be->cb_name);
		rf->rf_end = LINK_NEEDED;
		rf->rf_store = 1;
		if (link_store->ls_del(rf->rf_w, rf->rf_scope,
		    rf->rf_be->cb_name, link_rf_on_done, rf) == -1) {
			rf->rf_store = 0;
			link_rf_end(rf, LINK_NEEDED);
		}
		return;
	}
	if (rc != LINK_TOK_OK) {
		log_warnx("link: backend %s: refresh failed: %s",
		    rf->rf_be->cb_name, why);
		link_rf_end(rf, LINK_FAILED);
		return;
	}
	if (strlen(t->ot_access) > LINK_TOKEN_MAX || (t->ot_refresh != NULL &&
	    strlen(t->ot_refresh) > LINK_TOKEN_MAX)) {
		link_rf_end(rf, LINK_FAILED);
		return;
	}
	(void)snprintf(lr->lr_access, sizeof(lr->lr_access), "%s",
	    t->ot_access);
	/* RFC 6749 6: no new refresh token, the old one stays */
	if (t->ot_refresh != NULL)
		(void)snprintf(lr->lr_refresh, sizeof(lr->lr_refresh), "%s",
		    t->ot_refresh);
	lr->lr_refreshed_ms = now;
	lr->lr_expires_ms = t->ot_expires_in > 0 ? now +
	    (uint64_t)t->ot_expires_in * 1000 : 0;
	log_debug("link: backend %s: refreshed", rf->rf_be->cb_name);
	rf->rf_end = LINK_OK;
	rf->rf_store = 1;
	if (link_store->ls_put(rf->rf_w, rf->rf_scope, lr, link_rf_on_done,
	    rf) == -1) {
		rf->rf_store = 0;
		link_rf_end(rf, LINK_FAILED);
	}
}

/* the upstream server's client, for be */
void
link_tok_client_of(const struct config_backend *be, const char *token_url,
    struct link_tok_client *c)
{
	const struct config_outauth *oa = be->cb_outauth;

	memset(c, 0, sizeof(*c));
	c->ltc_url = token_url;
	c->ltc_cafile = be->cb_ca_bundle;
	c->ltc_id = oa->oa_ac_client_id;
	c->ltc_secret = oa->oa_ac_secret;
	c->ltc_post = oa->oa_ac_secret_post;
}

static void
link_rf_on_meta(void *arg, int rc, const char *authorize, const char *token)
{
	struct link_rf		*rf = arg;
	struct link_tok_client	 c;
	const char		*form[] = { "grant_type", "refresh_token",
	    "refresh_token", rf->rf_rec->lr_refresh, NULL };

	(void)authorize;
	if (rc != 0) {
		link_rf_end(rf, LINK_FAILED);
		return;
	}
	if (rf->rf_be->cb_outauth->oa_ac_token_url != NULL)
		token = rf->rf_be->cb_outauth->oa_ac_token_url;
	link_tok_client_of(rf->rf_be, token, &c);
	if ((rf->rf_tok = link_tok_post(rf->rf_w, &c, form, link_rf_on_token,
	    rf)) == NULL)
		link_rf_end(rf, LINK_FAILED);
}

/* the link to refresh, read */
static void
link_rf_on_link(void *arg, int rc, const struct link_rec *lr)
{
	struct link_rf	*rf = arg;

	rf->rf_store = 0;
	if (rc == STORE_NOTFOUND || (rc == 0 && lr->lr_refresh[0] == '\0')) {
		link_rf_end(rf, LINK_NEEDED);
		return;
	}
	if (rc != 0 || (rf->rf_rec = malloc(sizeof(*rf->rf_rec))) == NULL) {
		link_rf_end(rf, LINK_FAILED);
		return;
	}
	memcpy(rf->rf_rec, lr, sizeof(*lr));
	if (link_endpoints(rf->rf_w, rf->rf_be, link_rf_on_meta, rf) == -1)
		link_rf_end(rf, LINK_FAILED);
}

/* a waiter's: the link as another worker left it */
static void
link_rf_on_seen(void *arg, int rc, const struct link_rec *lr)
{
	struct link_rf	*rf = arg;
	uint64_t	 now = store_now_ms();

	rf->rf_store = 0;
	if (rc == STORE_NOTFOUND)
		link_rf_end(rf, LINK_NEEDED);
	else if (rc != 0)
		link_rf_end(rf, LINK_FAILED);
	else
		link_rf_end(rf, lr->lr_expires_ms == 0 ||
		    lr->lr_expires_ms > now + LINK_MARGIN_MS ? LINK_OK :
		    LINK_FAILED);
}

static void
link_rf_poll(evutil_socket_t fd, short ev, void *arg)
{
	struct link_rf		*rf = arg;
	struct timeval		 tv = { 0, LINK_POLL_MS * 1000 };
	struct store_rec	 rec;
	uint64_t		 now = store_now_ms();
	int			 rc;

	(void)fd;
	(void)ev;
	memset(&rec, 0, sizeof(rec));
	rc = store_get(rf->rf_w->w_store, STORE_TOKENS, rf->rf_lock,
	    strlen(rf->rf_lock), now, &rec);
	if (rc == 0) {
		if (strcmp(rec.sr_data, "needed") == 0 ||
		    strcmp(rec.sr_data, "failed") == 0) {
			rc = rec.sr_data[0] == 'n';
			store_rec_clear(&rec);
			link_rf_end(rf, rc ? LINK_NEEDED : LINK_FAILED);
			return;
		}
		store_rec_clear(&rec);
		if (now < rf->rf_deadline) {
			(void)evtimer_add(rf->rf_timer, &tv);
			return;
		}
		link_rf_end(rf, LINK_FAILED);
		return;
	}
	/* the other worker is done: the link as it left it */
	rf->rf_store = 1;
	if (link_store->ls_get(rf->rf_w, rf->rf_scope, rf->rf_be->cb_name,
	    link_rf_on_seen, rf) == -1) {
		rf->rf_store = 0;
		link_rf_end(rf, LINK_FAILED);
	}
}

/* this node refreshes: the link read first; 0, or -1 (cb not called) */
static int
link_rf_read(struct link_rf *rf)
{
	rf->rf_store = 1;
	if (link_store->ls_get(rf->rf_w, rf->rf_scope, rf->rf_be->cb_name,
	    link_rf_on_link, rf) == -1) {
		rf->rf_store = 0;
		return -1;
	}
	return 0;
}

/* Redis answered: another node's refresh ended, or this one's to make */
static void
link_rf_on_flight(void *arg, enum redis_flight_got got, const char *val,
    size_t len, uint64_t ttl_ms)
{
	struct link_rf	*rf = arg;

	(void)ttl_ms;
	rf->rf_flight = NULL;
	if (got == REDIS_FLIGHT_HIT) {
		rf->rf_remote = 1;
		if (len == 6 && memcmp(val, "needed", 6) == 0)
			link_rf_end(rf, LINK_NEEDED);
		else if (len == 2 && memcmp(val, "ok", 2) == 0) {
			/* the link as that node left it, made current here */
			rf->rf_store = 1;
			if (link_store->ls_get(rf->rf_w, rf->rf_scope,
			    rf->rf_be->cb_name, link_rf_on_seen, rf) == -1) {
				rf->rf_store = 0;
				link_rf_end(rf, LINK_FAILED);
			}
		} else
			link_rf_end(rf, LINK_FAILED);
		return;
	}
	rf->rf_fleet = got == REDIS_FLIGHT_MINE;
	if (link_rf_read(rf) == -1)
		link_rf_end(rf, LINK_FAILED);
}

int
link_refresh(struct worker *w, const struct config_backend *be,
    const char *scope, link_state_cb cb, void *arg)
{
	struct timeval	 tv = { 0, LINK_POLL_MS * 1000 };
	struct link_rf	*rf;
	uint64_t	 now = store_now_ms();
	char		 pid[24];
	int		 rc;

	if (strlen(scope) > LINK_SCOPE_MAX || (rf = calloc(1,
	    sizeof(*rf))) == NULL)
		return -1;
	rf->rf_w = w;
	rf->rf_be = be;
	rf->rf_cb = cb;
	rf->rf_arg = arg;
	(void)snprintf(rf->rf_scope, sizeof(rf->rf_scope), "%s", scope);
	(void)snprintf(rf->rf_lock, sizeof(rf->rf_lock), "link|%s|%s", scope,
	    be->cb_name);
	TAILQ_INSERT_TAIL(&rfs, rf, rf_entry);
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	rc = store_add(w->w_store, STORE_TOKENS, rf->rf_lock,
	    strlen(rf->rf_lock), pid, strlen(pid), now + LINK_LOCK_MS, now);
	if (rc == STORE_EXISTS) {
		/* another worker's refresh (or its end, just told) */
		rf->rf_deadline = now + LINK_LOCK_MS;
		if ((rf->rf_timer = evtimer_new(w->w_base, link_rf_poll,
		    rf)) == NULL || evtimer_add(rf->rf_timer, &tv) == -1) {
			link_rf_free(rf);
			return -1;
		}
		return 0;
	}
	if (rc != 0) {
		link_rf_free(rf);
		return -1;
	}
	rf->rf_mine = 1;
	/* the other nodes: Redis's flight first, with provider redis */
	redis_flight_init(w);
	if (snprintf(rf->rf_rkey, sizeof(rf->rf_rkey), "%slinkrf:%s|%s",
	    w->w_conf->cf_sstore.css_prefix != NULL ?
	    w->w_conf->cf_sstore.css_prefix : "", scope, be->cb_name) <
	    (int)sizeof(rf->rf_rkey) && (rf->rf_flight = redis_flight_fetch(
	    rf->rf_rkey, LINK_LOCK_MS, LINK_LOCK_MS, REDIS_USER_LINK,
	    "a link's refresh", link_rf_on_flight, rf)) != NULL)
		return 0;
	if (link_rf_read(rf) == -1) {
		rf->rf_cb = NULL;
		link_rf_end(rf, LINK_FAILED);
		return -1;
	}
	return 0;
}

void
link_refresh_cancel(void *arg)
{
	struct link_rf	*rf, *next;

	for (rf = TAILQ_FIRST(&rfs); rf != NULL; rf = next) {
		next = TAILQ_NEXT(rf, rf_entry);
		if (rf->rf_arg != arg || rf->rf_cb == NULL)
			continue;
		/* a refresh of ours goes on for the other workers */
		if (rf->rf_mine)
			rf->rf_cb = NULL;
		else
			link_rf_free(rf);
	}
}

void
link_refresh_free_all(void)
{
	while (!TAILQ_EMPTY(&rfs))
		link_rf_free(TAILQ_FIRST(&rfs));
	link_tok_free_all();
}
