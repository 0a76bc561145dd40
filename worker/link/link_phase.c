/*
 * The pipeline's credential phase (link.h, pipeline.h): a request routed
 * to a backend whose outgoingAuth is authorization_code goes on only
 * with its principal's own link, refreshed first when its access token
 * is about to expire; else the person is asked to consent (a consent
 * record, then the codec's rc_consent: an elicitation, or a message
 * naming the backend and the URL).  The upstream edge reads the link
 * itself (link_credential(), upstream_authz()).
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/link_rec.h"
#include "shared/log.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "proto/proto.h"
#include "worker/auth/auth.h"
#include "worker/link/link.h"
#include "worker/pipeline/pipeline.h"
#include "worker/process/process.h"
#include "worker/process/request.h"
#include "worker/state/link_store.h"

/* where a request's credential phase is */
enum lw_state {
	LW_LOOKING,		/* ls_get out */
	LW_FOUND,		/* its answer in */
	LW_REFRESHING,		/* link_refresh() out */
	LW_REFRESHED,
	LW_CONSENTING,		/* link_consent_new() out */
	LW_CONSENTED
};

struct link_wait {
	struct request	*lw_r;
	enum lw_state	 lw_state;
	int		 lw_rc;		/* the store's, the consent's */
	int		 lw_usable;	/* the link found is good to use */
	int		 lw_refreshable;	/* ... else it has a refresh */
	enum link_state	 lw_ls;		/* the refresh's verdict */
	int		 lw_round;	/* a 2026-07-28 retry's, else 0 */
	char		 lw_id[CONSENT_ID_LEN + 1];
	char		 lw_url[LINK_URL_MAX];
};

/* link_consent_new()'s pending writes, for link_consent_cancel() */
struct link_cnew {
	TAILQ_ENTRY(link_cnew)	 cn_entry;
	consent_new_cb		 cn_cb;
	void			*cn_arg;
	const struct config_backend *cn_be;
	char			 cn_id[CONSENT_ID_LEN + 1];
};
static TAILQ_HEAD(, link_cnew) link_cnews =
    TAILQ_HEAD_INITIALIZER(link_cnews);

int
link_consent_url(const struct config_backend *be, const char *id, char *url,
    size_t len)
{
	const char	*cb = be->cb_outauth->oa_ac_callback_url, *host, *end;
	int		 n;

	/* the origin: scheme "://" authority, before any path */
	if (cb == NULL || (host = strstr(cb, "://")) == NULL)
		return -1;
	host += 3;
	end = host + strcspn(host, "/?#");
	n = snprintf(url, len, "%.*s/oauth/start?consent=%s",
	    (int)(end - cb), cb, id);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void
link_cnew_free(struct link_cnew *cn)
{
	TAILQ_REMOVE(&link_cnews, cn, cn_entry);
	free(cn);
}

static void
link_consent_put(void *arg, int rc)
{
	struct link_cnew	*cn = arg;
	consent_new_cb		 cb = cn->cn_cb;
	void			*cbarg = cn->cn_arg;
	char			 id[CONSENT_ID_LEN + 1];
	char			 url[LINK_URL_MAX];

	(void)snprintf(id, sizeof(id), "%s", cn->cn_id);
	if (rc == 0 && link_consent_url(cn->cn_be, id, url,
	    sizeof(url)) == -1)
		rc = -1;
	link_cnew_free(cn);
	if (rc == 0)
		cb(cbarg, 0, id, url);
	else
		cb(cbarg, -1, NULL, NULL);
}

int
link_consent_new(struct worker *w, const struct principal *p,
    const struct config_backend *be, const char *sid, consent_new_cb cb,
    void *arg)
{
	struct consent_rec	*cr;
	struct link_cnew	*cn;
	uint64_t		 now = store_now_ms();
	int			 rc = -1;

	if (p == NULL || (cr = calloc(1, sizeof(*cr))) == NULL)
		return -1;
	if ((cn = calloc(1, sizeof(*cn))) == NULL ||
	    consent_id_new(cr->cr_id) == -1)
		goto out;
	(void)snprintf(cr->cr_scope, sizeof(cr->cr_scope), "%s", p->p_scope);
	(void)snprintf(cr->cr_iss, sizeof(cr->cr_iss), "%s",
	    p->p_iss != NULL ? p->p_iss : "");
	(void)snprintf(cr->cr_sub, sizeof(cr->cr_sub), "%s",
	    p->p_sub != NULL ? p->p_sub : "");
	(void)snprintf(cr->cr_backend, sizeof(cr->cr_backend), "%s",
	    be->cb_name);
	(void)snprintf(cr->cr_sid, sizeof(cr->cr_sid), "%s",
	    sid != NULL ? sid : "");
	cr->cr_leg = CONSENT_LOGIN;
	cr->cr_created_ms = now;
	cr->cr_expires_ms = now + CONSENT_TTL_MS;
	cn->cn_cb = cb;
	cn->cn_arg = arg;
	cn->cn_be = be;
	memcpy(cn->cn_id, cr->cr_id, sizeof(cn->cn_id));
	/* in the list first: the store may answer within the call */
	TAILQ_INSERT_TAIL(&link_cnews, cn, cn_entry);
	if (link_store->ls_cput(w, cr, link_consent_put, cn) == -1) {
		link_cnew_free(cn);
		cn = NULL;
		goto out;
	}
	cn = NULL;
	link_count(w, LINKC_CONSENT_STARTED);
	rc = 0;
out:
	free(cn);
	OPENSSL_cleanse(cr, sizeof(*cr));
	free(cr);
	return rc;
}

void
link_consent_cancel(void *arg)
{
	struct link_cnew	*cn, *next;

	for (cn = TAILQ_FIRST(&link_cnews); cn != NULL; cn = next) {
		next = TAILQ_NEXT(cn, cn_entry);
		if (cn->cn_arg == arg) {
			link_store->ls_cancel(cn);
			link_cnew_free(cn);
		}
	}
}

/* a callback's news: on now, inside the phase's own call, or later */
static void
link_phase_wake(struct link_wait *lw)
{
	struct request *r = lw->lw_r;

	if (!r->r_stepping)
		pipeline_resume(r, r->r_view, NULL);
}

static void
link_phase_found(void *arg, int rc, const struct link_rec *lr)
{
	struct link_wait	*lw = arg;
	uint64_t		 now = store_now_ms();

	lw->lw_state = LW_FOUND;
	lw->lw_rc = rc;
	if (rc == 0 && lr != NULL && lr->lr_access[0] != '\0') {
		lw->lw_usable = lr->lr_expires_ms == 0 ||
		    lr->lr_expires_ms > now + LINK_MARGIN_MS;
		lw->lw_refreshable = lr->lr_refresh[0] != '\0';
	}
	link_phase_wake(lw);
}

static void
link_phase_refreshed(void *arg, enum link_state ls)
{
	struct link_wait *lw = arg;

	lw->lw_state = LW_REFRESHED;
	lw->lw_ls = ls;
	link_phase_wake(lw);
}

static void
link_phase_consented(void *arg, int rc, const char *id, const char *url)
{
	struct link_wait *lw = arg;

	lw->lw_state = LW_CONSENTED;
	lw->lw_rc = rc;
	if (rc == 0) {
		(void)snprintf(lw->lw_id, sizeof(lw->lw_id), "%s", id);
		(void)snprintf(lw->lw_url, sizeof(lw->lw_url), "%s", url);
	}
	link_phase_wake(lw);
}

/* the link could not be told: an error naming the backend, never a
 * token */
static enum pipeline_rc
link_phase_fail(struct request *r, const char *what)
{
	char msg[300];

	(void)snprintf(msg, sizeof(msg), "Backend %s: %s; try again",
	    r->r_be->cb_name, what);
	r->r_codec->rc_error(r, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
	return PIPELINE_DONE;
}

/* the person must consent: the codec answers */
static enum pipeline_rc
link_phase_consent(struct request *r, struct link_wait *lw)
{
	char msg[LINK_URL_MAX + LINK_NAME_MAX + 200];

	log_info("backend %s: no usable link for the principal: consent %s "
	    "asked", r->r_be->cb_name, lw->lw_id);
	if (r->r_codec->rc_consent != NULL) {
		r->r_codec->rc_consent(r, lw->lw_id, lw->lw_url,
		    lw->lw_round + 1);
		return PIPELINE_DONE;
	}
	link_consent_text(r->r_be->cb_name, lw->lw_url, msg, sizeof(msg));
	r->r_codec->rc_error(r, 200, MCP_ERR_TRANSPORT, msg, NULL);
	return PIPELINE_DONE;
}

/*
 * No usable link: a new consent, or (a retry whose person said it is
 * done, but no link yet) the same one asked again, a bounded number of
 * rounds
 */
static enum pipeline_rc
link_phase_ask(struct request *r, struct link_wait *lw)
{
	if (lw->lw_round > 0) {
		if (lw->lw_round >= LINK_ROUNDS)
			return link_phase_fail(r, "the account is still not "
			    "linked after the consent's rounds");
		if (link_consent_url(r->r_be, lw->lw_id, lw->lw_url,
		    sizeof(lw->lw_url)) == -1)
			return link_phase_fail(r, "the consent's URL is too "
			    "long");
		return link_phase_consent(r, lw);
	}
	lw->lw_state = LW_CONSENTING;
	if (link_consent_new(r->r_w, r->r_principal, r->r_be, r->r_sid,
	    link_phase_consented, lw) == -1)
		return link_phase_fail(r, "a consent could not be started");
	if (lw->lw_state == LW_CONSENTING)
		return PIPELINE_WAIT;
	return link_phase(r);
}

static enum pipeline_rc
link_phase_look(struct request *r, struct link_wait *lw)
{
	lw->lw_state = LW_LOOKING;
	if (link_store->ls_get(r->r_w, r->r_principal->p_scope,
	    r->r_be->cb_name, link_phase_found, lw) == -1)
		return link_phase_fail(r, "the linked accounts can't be read");
	if (lw->lw_state == LW_LOOKING)
		return PIPELINE_WAIT;
	return link_phase(r);
}

static enum pipeline_rc
link_phase_start(struct request *r)
{
	const struct request_codec	*c = r->r_codec;
	struct link_wait		*lw;
	char				 msg[300];

	if (r->r_principal == NULL) {
		/* no one to link: such a backend acts as a signed-in user */
		(void)snprintf(msg, sizeof(msg), "Backend %s acts as each "
		    "user's own account: it needs an authenticated client",
		    r->r_be->cb_name);
		c->rc_error(r, 200, JSONRPC_INVALID_REQUEST, msg, NULL);
		return PIPELINE_DONE;
	}
	if ((lw = calloc(1, sizeof(*lw))) == NULL) {
		c->rc_error(r, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return PIPELINE_DONE;
	}
	lw->lw_r = r;
	r->r_link = lw;
	if (c->rc_consent_answer != NULL)
		switch (c->rc_consent_answer(r, lw->lw_id, sizeof(lw->lw_id),
		    &lw->lw_round)) {
		case LINK_ANSWER_DONE:
			return PIPELINE_DONE;
		case LINK_ANSWER_ACCEPTED:
			break;
		default:
			lw->lw_round = 0;
			break;
		}
	return link_phase_look(r, lw);
}

enum pipeline_rc
link_phase(struct request *r)
{
	struct link_wait	*lw = r->r_link;

	if (r->r_be == NULL || !link_backend(r->r_be))
		return PIPELINE_NEXT;
	if (lw == NULL)
		return link_phase_start(r);
	switch (lw->lw_state) {
	case LW_FOUND:
		if (lw->lw_rc == -1)
			return link_phase_fail(r, "the linked accounts can't "
			    "be read");
		if (lw->lw_rc != 0)
			return link_phase_ask(r, lw);
		if (lw->lw_usable)
			return PIPELINE_NEXT;
		if (!lw->lw_refreshable)
			return link_phase_ask(r, lw);
		lw->lw_state = LW_REFRESHING;
		if (link_refresh(r->r_w, r->r_be, r->r_principal->p_scope,
		    link_phase_refreshed, lw) == -1)
			return link_phase_fail(r, "the account's token could "
			    "not be refreshed");
		return lw->lw_state == LW_REFRESHING ? PIPELINE_WAIT :
		    link_phase(r);
	case LW_REFRESHED:
		if (lw->lw_ls == LINK_OK)
			return PIPELINE_NEXT;
		if (lw->lw_ls == LINK_NEEDED) {
			lw->lw_round = 0;	/* the link is gone: anew */
			return link_phase_ask(r, lw);
		}
		return link_phase_fail(r, "the account's token could not be "
		    "refreshed");
	case LW_CONSENTED:
		if (lw->lw_rc != 0)
			return link_phase_fail(r, "a consent could not be "
			    "started");
		return link_phase_consent(r, lw);
	default:
		return PIPELINE_WAIT;	/* still out: its callback resumes */
	}
}

void
link_phase_cancel(struct request *r)
{
	struct link_wait *lw = r->r_link;

	if (lw == NULL)
		return;
	link_store->ls_cancel(lw);
	link_refresh_cancel(lw);
	link_consent_cancel(lw);
	r->r_link = NULL;
	free(lw);
}
