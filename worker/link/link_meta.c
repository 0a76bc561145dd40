/*
 * An authorization server's metadata (link_int.h): the clients'
 * identity provider's (OpenID Connect Discovery 1.0, 4) for the
 * person's login, an upstream server's (RFC 8414 3, then OpenID's)
 * when only its issuer is configured.  Fetched on this worker's loop at
 * first use, kept for the worker's life (a failure is kept
 * LINK_META_RETRY_MS, then fetched again); what waits for it is told
 * when it comes.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/link/link.h"
#include "worker/link/link_int.h"
#include "worker/process/process.h"

#define LINK_META_MAX		(64 * 1024)
#define LINK_META_MS		5000
#define LINK_META_RETRY_MS	(30ULL * 1000)

struct link_meta_wait {
	TAILQ_ENTRY(link_meta_wait)	 mw_entry;
	link_meta_cb			 mw_cb;
	void				*mw_arg;
};

struct link_meta {
	TAILQ_ENTRY(link_meta)		 lm_entry;
	struct worker			*lm_w;
	char				*lm_issuer;
	int				 lm_oidc;
	char				*lm_cafile;
	int				 lm_public_only;
	int				 lm_try;	/* document tried */
	struct http_call		*lm_call;
	char				*lm_buf;
	size_t				 lm_len;
	long				 lm_status;
	char				*lm_authorize;	/* known */
	char				*lm_token;
	uint64_t			 lm_failed_ms;
	TAILQ_HEAD(, link_meta_wait)	 lm_waits;
};

static TAILQ_HEAD(, link_meta) metas = TAILQ_HEAD_INITIALIZER(metas);

static const char *const link_meta_paths[] = {
	"/.well-known/oauth-authorization-server",
	"/.well-known/openid-configuration",
	NULL
};

static void	link_meta_fetch(struct worker *, struct link_meta *);

static void
link_meta_tell(struct link_meta *lm, int rc)
{
	struct link_meta_wait	*mw;

	while ((mw = TAILQ_FIRST(&lm->lm_waits)) != NULL) {
		TAILQ_REMOVE(&lm->lm_waits, mw, mw_entry);
		mw->mw_cb(mw->mw_arg, rc, lm->lm_authorize, lm->lm_token);
		free(mw);
	}
}

static int
link_meta_head(void *arg, struct http_call *hc, long status)
{
	struct link_meta *lm = arg;

	(void)hc;
	lm->lm_status = status;
	return 0;
}

static int
link_meta_data(void *arg, struct http_call *hc, const char *buf, size_t len)
{
	struct link_meta	*lm = arg;

	(void)hc;
	return http_body_add(&lm->lm_buf, &lm->lm_len, buf, len,
	    LINK_META_MAX);
}

/* the document read: 0, or -1 */
static int
link_meta_read(struct link_meta *lm)
{
	json_t		*doc;
	const char	*iss, *az, *tk;
	int		 rc = -1;

	if ((doc = json_loadb(lm->lm_buf, lm->lm_len, JSON_REJECT_DUPLICATES,
	    NULL)) == NULL)
		return -1;
	/* RFC 8414 3.3, OpenID Discovery 4.3: the same issuer */
	iss = json_string_value(json_object_get(doc, "issuer"));
	az = json_string_value(json_object_get(doc, "authorization_endpoint"));
	tk = json_string_value(json_object_get(doc, "token_endpoint"));
	if (iss != NULL && strcmp(iss, lm->lm_issuer) == 0 && az != NULL &&
	    tk != NULL && strncmp(az, "http", 4) == 0 &&
	    strncmp(tk, "http", 4) == 0 && strlen(az) < 2048 &&
	    strlen(tk) < 2048 && (lm->lm_authorize = strdup(az)) != NULL &&
	    (lm->lm_token = strdup(tk)) != NULL)
		rc = 0;
	json_decref(doc);
	return rc;
}

static void
link_meta_done(void *arg, struct http_call *hc, int result, const char *err)
{
	struct link_meta	*lm = arg;
	struct worker		*w = lm->lm_w;

	(void)hc;
	lm->lm_call = NULL;
	if (result == 0 && lm->lm_status == 200 && lm->lm_buf != NULL &&
	    link_meta_read(lm) == 0) {
		free(lm->lm_buf);
		lm->lm_buf = NULL;
		log_info("link: %s's metadata fetched", lm->lm_issuer);
		link_meta_tell(lm, 0);
		return;
	}
	free(lm->lm_buf);
	lm->lm_buf = NULL;
	lm->lm_len = 0;
	free(lm->lm_authorize);
	lm->lm_authorize = NULL;
	if (!lm->lm_oidc && link_meta_paths[++lm->lm_try] != NULL) {
		link_meta_fetch(w, lm);
		return;
	}
	log_warnx("link: %s's metadata could not be had (%s)", lm->lm_issuer,
	    result != 0 ? (err != NULL ? err : "no answer") :
	    "no usable document");
	lm->lm_failed_ms = store_now_ms();
	link_meta_tell(lm, -1);
}

static void
link_meta_fetch(struct worker *w, struct link_meta *lm)
{
	static const struct http_call_cbs cbs = { link_meta_head,
	    link_meta_data, link_meta_done };
	size_t		 ilen = strlen(lm->lm_issuer);
	char		*url = NULL;

	/* after the issuer, as OpenID Discovery 4 has it (RFC 8414 3
	 * puts it before an issuer's path: issuers with none agree) */
	if (ilen > 0 && lm->lm_issuer[ilen - 1] == '/')
		ilen--;
	if (asprintf(&url, "%.*s%s", (int)ilen, lm->lm_issuer,
	    link_meta_paths[lm->lm_oidc ? 1 : lm->lm_try]) == -1)
		url = NULL;
	if (url == NULL ||
	    (lm->lm_call = http_call_new(w->w_hc, "GET", url)) == NULL)
		goto fail;
	http_call_set_timeout(lm->lm_call, LINK_META_MS);
	if ((lm->lm_cafile != NULL && http_call_set_ca_file(lm->lm_call,
	    lm->lm_cafile) == -1) || (lm->lm_public_only &&
	    http_call_set_public_only(lm->lm_call) == -1) ||
	    http_call_add_header(lm->lm_call, "Accept",
	    "application/json") == -1) {
		http_call_cancel(lm->lm_call);
		goto fail;
	}
	free(url);
	if (http_call_start(lm->lm_call, &cbs, lm) == -1) {
		lm->lm_call = NULL;
		lm->lm_failed_ms = store_now_ms();
		link_meta_tell(lm, -1);
	}
	return;
 fail:
	free(url);
	lm->lm_call = NULL;
	lm->lm_failed_ms = store_now_ms();
	link_meta_tell(lm, -1);
}

int
link_meta_get(struct worker *w, const char *issuer, int oidc,
    const char *cafile, int public_only, link_meta_cb cb, void *arg)
{
	struct link_meta	*lm;
	struct link_meta_wait	*mw;

	TAILQ_FOREACH(lm, &metas, lm_entry)
		if (strcmp(lm->lm_issuer, issuer) == 0 && lm->lm_oidc == oidc)
			break;
	if (lm == NULL) {
		if ((lm = calloc(1, sizeof(*lm))) == NULL ||
		    (lm->lm_issuer = strdup(issuer)) == NULL ||
		    (cafile != NULL && (lm->lm_cafile = strdup(cafile)) ==
		    NULL)) {
			if (lm != NULL)
				free(lm->lm_issuer);
			free(lm);
			return -1;
		}
		lm->lm_w = w;
		lm->lm_oidc = oidc;
		lm->lm_public_only = public_only;
		TAILQ_INIT(&lm->lm_waits);
		TAILQ_INSERT_TAIL(&metas, lm, lm_entry);
	}
	if (lm->lm_token != NULL) {
		cb(arg, 0, lm->lm_authorize, lm->lm_token);
		return 0;
	}
	if (lm->lm_call == NULL && lm->lm_failed_ms != 0 &&
	    store_now_ms() < lm->lm_failed_ms + LINK_META_RETRY_MS) {
		cb(arg, -1, NULL, NULL);
		return 0;
	}
	if ((mw = calloc(1, sizeof(*mw))) == NULL)
		return -1;
	mw->mw_cb = cb;
	mw->mw_arg = arg;
	TAILQ_INSERT_TAIL(&lm->lm_waits, mw, mw_entry);
	if (lm->lm_call == NULL) {
		lm->lm_try = 0;
		lm->lm_failed_ms = 0;
		link_meta_fetch(w, lm);
	}
	return 0;
}

int
link_endpoints(struct worker *w, const struct config_backend *be,
    link_meta_cb cb, void *arg)
{
	const struct config_outauth *oa = be->cb_outauth;

	if (oa->oa_ac_authorize_url != NULL && oa->oa_ac_token_url != NULL) {
		cb(arg, 0, oa->oa_ac_authorize_url, oa->oa_ac_token_url);
		return 0;
	}
	if (oa->oa_ac_issuer == NULL)
		return -1;
	/* the configured one wins over the metadata's: the caller's cb
	 * reads oa first (link_web.c, link_token.c) */
	return link_meta_get(w, oa->oa_ac_issuer, 0, be->cb_ca_bundle, 0, cb,
	    arg);
}

void
link_meta_cancel(void *arg)
{
	struct link_meta	*lm;
	struct link_meta_wait	*mw, *next;

	TAILQ_FOREACH(lm, &metas, lm_entry)
		for (mw = TAILQ_FIRST(&lm->lm_waits); mw != NULL; mw = next) {
			next = TAILQ_NEXT(mw, mw_entry);
			if (mw->mw_arg == arg) {
				TAILQ_REMOVE(&lm->lm_waits, mw, mw_entry);
				free(mw);
			}
		}
}

void
link_meta_free_all(void)
{
	struct link_meta	*lm;
	struct link_meta_wait	*mw;

	while ((lm = TAILQ_FIRST(&metas)) != NULL) {
		TAILQ_REMOVE(&metas, lm, lm_entry);
		if (lm->lm_call != NULL)
			http_call_cancel(lm->lm_call);
		while ((mw = TAILQ_FIRST(&lm->lm_waits)) != NULL) {
			TAILQ_REMOVE(&lm->lm_waits, mw, mw_entry);
			free(mw);
		}
		free(lm->lm_issuer);
		free(lm->lm_cafile);
		free(lm->lm_buf);
		free(lm->lm_authorize);
		free(lm->lm_token);
		free(lm);
	}
}

void
link_free(void)
{
	link_meta_free_all();
	link_refresh_free_all();
}
