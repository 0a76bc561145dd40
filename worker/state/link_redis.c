/*
 * Per-user upstream accounts in Redis (sessionStorage.provider redis;
 * link_store.h): <prefix>link:<scope>|<backend> holds a link's stored
 * form (link.c: its clear line, then its record sealed bound to
 * "<scope>|<backend>", under the fleet's sealKeyFile key), and
 * <prefix>consent:<id> a consent sealed whole, with the consent's TTL.
 * Whichever node a person's browser reaches completes the consent (the
 * callback takes it with GETDEL: once, across the nodes), and every
 * node uses the link.  ls_get copies the link into this host's store,
 * where link_credential() reads it synchronously; ls_put writes both,
 * ls_del drops both.  Asynchronous on the loop; a command not answered
 * fails the caller's step (never a link thought stored and not).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/state/link_store.h"

#define LINK_RKEY_MAX	(LINK_KEY_MAX + 256)

enum link_op {
	LINK_OP_GET,
	LINK_OP_PUT,
	LINK_OP_DEL,
	LINK_OP_CPUT,
	LINK_OP_CGET	/* and GETDEL's take */
};

struct link_rcmd {
	TAILQ_ENTRY(link_rcmd)	 lc_entry;
	struct redis_cmd	*lc_cmd;
	enum link_op		 lc_op;
	char			 lc_key[LINK_KEY_MAX + 1];	/* or the id */
	/* a put's stored form, copied here once Redis has it */
	char			*lc_data;
	size_t			 lc_len;
	uint64_t		 lc_expires_ms;
	link_done_cb		 lc_done;
	link_get_cb		 lc_get;
	consent_get_cb		 lc_cget;
	void			*lc_arg;
};

static TAILQ_HEAD(, link_rcmd) link_rcmds =
    TAILQ_HEAD_INITIALIZER(link_rcmds);
static struct worker *link_redis_w;

static int	link_redis_get(struct worker *, const char *, const char *,
		    link_get_cb, void *);
static int	link_redis_put(struct worker *, const char *,
		    const struct link_rec *, link_done_cb, void *);
static int	link_redis_del(struct worker *, const char *, const char *,
		    link_done_cb, void *);
static int	link_redis_cput(struct worker *, const struct consent_rec *,
		    link_done_cb, void *);
static int	link_redis_cget(struct worker *, const char *, consent_get_cb,
		    void *);
static int	link_redis_ctake(struct worker *, const char *,
		    consent_get_cb, void *);
static void	link_redis_cancel(void *);

static const struct link_store link_store_redis = {
	link_redis_get,
	link_redis_put,
	link_redis_del,
	link_redis_cput,
	link_redis_cget,
	link_redis_ctake,
	link_redis_cancel
};

void
link_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	link_redis_w = w;
	link_store = &link_store_redis;
}

static void
link_rcmd_free(struct link_rcmd *lc)
{
	if (lc->lc_data != NULL) {
		OPENSSL_cleanse(lc->lc_data, lc->lc_len);
		free(lc->lc_data);
	}
	free(lc);
}

/* the command's entry, off the list (cb may cancel others) */
static struct link_rcmd *
link_redis_take(struct link_rcmd *lc)
{
	TAILQ_REMOVE(&link_rcmds, lc, lc_entry);
	return lc;
}

static int
link_redis_failed(const redisReply *reply, const char *err)
{
	if (err == NULL && reply != NULL && reply->type != REDIS_REPLY_ERROR)
		return 0;
	redis_failed(REDIS_USER_LINK, NULL, reply, err);
	return 1;
}

/* GET of a link: the host's copy made current (dropped if gone) */
static void
link_redis_on_get(struct link_rcmd *lc, const redisReply *reply)
{
	struct worker	*w = link_redis_w;
	struct link_rec	*lr = NULL;
	int		 rc = STORE_NOTFOUND;

	if (reply->type == REDIS_REPLY_STRING &&
	    (lr = malloc(sizeof(*lr))) != NULL &&
	    link_unseal(lc->lc_key, reply->str, reply->len, lr) == 0)
		rc = link_lmdb_write(w, lc->lc_key, reply->str, reply->len,
		    link_expiry(lr));
	else if (reply->type == REDIS_REPLY_STRING && lr == NULL)
		rc = -1;
	else if (reply->type != REDIS_REPLY_NIL &&
	    reply->type != REDIS_REPLY_STRING) {
		redis_failed(REDIS_USER_LINK, "a link not read", reply, NULL);
		rc = -1;
	}
	if (rc == STORE_NOTFOUND)
		(void)store_del(w->w_store, STORE_LINKS, lc->lc_key,
		    strlen(lc->lc_key));
	lc->lc_get(lc->lc_arg, rc, rc == 0 ? lr : NULL);
	if (lr != NULL) {
		OPENSSL_cleanse(lr, sizeof(*lr));
		free(lr);
	}
}

static void
link_redis_on_cget(struct link_rcmd *lc, const redisReply *reply)
{
	struct consent_rec	 cr;
	int			 rc = STORE_NOTFOUND;

	if (reply->type == REDIS_REPLY_STRING && consent_unseal(lc->lc_key,
	    reply->str, reply->len, &cr) == 0)
		rc = 0;
	else if (reply->type != REDIS_REPLY_NIL &&
	    reply->type != REDIS_REPLY_STRING) {
		redis_failed(REDIS_USER_LINK, "a consent not read", reply,
		    NULL);
		rc = -1;
	}
	lc->lc_cget(lc->lc_arg, rc, rc == 0 ? &cr : NULL);
	OPENSSL_cleanse(&cr, sizeof(cr));
}

static void
link_redis_on_reply(void *arg, const redisReply *reply, const char *err)
{
	struct link_rcmd	*lc = link_redis_take(arg);
	struct worker		*w = link_redis_w;
	int			 rc = 0;

	if (link_redis_failed(reply, err)) {
		if (lc->lc_op == LINK_OP_GET)
			lc->lc_get(lc->lc_arg, -1, NULL);
		else if (lc->lc_op == LINK_OP_CGET)
			lc->lc_cget(lc->lc_arg, -1, NULL);
		else
			lc->lc_done(lc->lc_arg, -1);
		link_rcmd_free(lc);
		return;
	}
	switch (lc->lc_op) {
	case LINK_OP_GET:
		link_redis_on_get(lc, reply);
		break;
	case LINK_OP_CGET:
		link_redis_on_cget(lc, reply);
		break;
	case LINK_OP_PUT:
		rc = link_lmdb_write(w, lc->lc_key, lc->lc_data, lc->lc_len,
		    lc->lc_expires_ms);
		lc->lc_done(lc->lc_arg, rc);
		break;
	case LINK_OP_DEL:
		rc = store_del(w->w_store, STORE_LINKS, lc->lc_key,
		    strlen(lc->lc_key));
		lc->lc_done(lc->lc_arg, rc == 0 || rc == STORE_NOTFOUND ? 0 :
		    -1);
		break;
	case LINK_OP_CPUT:
		lc->lc_done(lc->lc_arg, 0);
		break;
	}
	link_rcmd_free(lc);
}

/* a command on kind's key of lc's key: sent (0), or -1 (lc freed) */
static int
link_redis_send(struct link_rcmd *lc, const char *cmd, const char *kind,
    const void *val, size_t vlen, uint64_t expires_ms)
{
	struct redis_args	 a;
	char			 rkey[LINK_RKEY_MAX];
	size_t			 klen;
	uint64_t		 now = store_now_ms();

	if ((klen = redis_key(rkey, sizeof(rkey),
	    link_redis_w->w_conf->cf_sstore.css_prefix, kind, lc->lc_key,
	    NULL)) == 0)
		goto fail;
	redis_args_init(&a);
	redis_args_push(&a, cmd);
	redis_args_pushn(&a, rkey, klen);
	if (val != NULL) {
		redis_args_pushn(&a, val, vlen);
		if (expires_ms != 0) {
			redis_args_push(&a, "PX");
			redis_args_push_u64(&a, expires_ms > now ?
			    expires_ms - now : 1);
		}
	}
	if ((lc->lc_cmd = redis_send(&a, link_redis_on_reply, lc)) == NULL) {
		redis_failed(REDIS_USER_LINK, NULL, NULL, "not connected");
		goto fail;
	}
	TAILQ_INSERT_TAIL(&link_rcmds, lc, lc_entry);
	return 0;
 fail:
	link_rcmd_free(lc);
	return -1;
}

static struct link_rcmd *
link_rcmd_new(enum link_op op, const char *key, void *arg)
{
	struct link_rcmd	*lc;

	if ((lc = calloc(1, sizeof(*lc))) == NULL)
		return NULL;
	lc->lc_op = op;
	lc->lc_arg = arg;
	if ((size_t)snprintf(lc->lc_key, sizeof(lc->lc_key), "%s", key) >=
	    sizeof(lc->lc_key)) {
		free(lc);
		return NULL;
	}
	return lc;
}

static int
link_redis_get(struct worker *w, const char *scope, const char *backend,
    link_get_cb cb, void *arg)
{
	struct link_rcmd	*lc;
	char			 key[LINK_KEY_MAX + 1];

	(void)w;
	if (link_key(key, scope, backend) == -1 ||
	    (lc = link_rcmd_new(LINK_OP_GET, key, arg)) == NULL)
		return -1;
	lc->lc_get = cb;
	return link_redis_send(lc, "GET", REDIS_KIND_LINK, NULL, 0, 0);
}

static int
link_redis_put(struct worker *w, const char *scope, const struct link_rec *lr,
    link_done_cb cb, void *arg)
{
	struct link_rcmd	*lc;
	char			 key[LINK_KEY_MAX + 1];

	(void)w;
	if (link_key(key, scope, lr->lr_backend) == -1 ||
	    (lc = link_rcmd_new(LINK_OP_PUT, key, arg)) == NULL)
		return -1;
	lc->lc_done = cb;
	lc->lc_expires_ms = link_expiry(lr);
	if ((lc->lc_data = link_seal(key, lr, &lc->lc_len)) == NULL) {
		link_rcmd_free(lc);
		return -1;
	}
	return link_redis_send(lc, "SET", REDIS_KIND_LINK, lc->lc_data,
	    lc->lc_len, lc->lc_expires_ms);
}

static int
link_redis_del(struct worker *w, const char *scope, const char *backend,
    link_done_cb cb, void *arg)
{
	struct link_rcmd	*lc;
	char			 key[LINK_KEY_MAX + 1];

	(void)w;
	if (link_key(key, scope, backend) == -1 ||
	    (lc = link_rcmd_new(LINK_OP_DEL, key, arg)) == NULL)
		return -1;
	lc->lc_done = cb;
	return link_redis_send(lc, "DEL", REDIS_KIND_LINK, NULL, 0, 0);
}

static int
link_redis_cput(struct worker *w, const struct consent_rec *cr,
    link_done_cb cb, void *arg)
{
	struct link_rcmd	*lc;
	char			*s;
	size_t			 len = 0;
	int			 rc;

	(void)w;
	if (!consent_id_valid(cr->cr_id) ||
	    (lc = link_rcmd_new(LINK_OP_CPUT, cr->cr_id, arg)) == NULL)
		return -1;
	lc->lc_done = cb;
	if ((s = consent_seal(cr, &len)) == NULL) {
		link_rcmd_free(lc);
		return -1;
	}
	rc = link_redis_send(lc, "SET", REDIS_KIND_CONSENT, s, len,
	    cr->cr_expires_ms);
	free(s);
	return rc;
}

static int
link_redis_consent(const char *cmd, const char *id, consent_get_cb cb,
    void *arg)
{
	struct link_rcmd	*lc;

	if (!consent_id_valid(id) ||
	    (lc = link_rcmd_new(LINK_OP_CGET, id, arg)) == NULL)
		return -1;
	lc->lc_cget = cb;
	return link_redis_send(lc, cmd, REDIS_KIND_CONSENT, NULL, 0, 0);
}

static int
link_redis_cget(struct worker *w, const char *id, consent_get_cb cb,
    void *arg)
{
	(void)w;
	return link_redis_consent("GET", id, cb, arg);
}

/* GETDEL: read and dropped in one command, so one taker of all has it */
static int
link_redis_ctake(struct worker *w, const char *id, consent_get_cb cb,
    void *arg)
{
	(void)w;
	return link_redis_consent("GETDEL", id, cb, arg);
}

static void
link_redis_cancel(void *arg)
{
	struct link_rcmd *lc, *next;

	for (lc = TAILQ_FIRST(&link_rcmds); lc != NULL; lc = next) {
		next = TAILQ_NEXT(lc, lc_entry);
		if (lc->lc_arg == arg) {
			redis_cancel(lc->lc_cmd);
			TAILQ_REMOVE(&link_rcmds, lc, lc_entry);
			link_rcmd_free(lc);
		}
	}
}
