/*
 * The probes' verdicts shared through Redis, the builder's side (the
 * pure parts are verdict_redis_codec.c; the design in docs/ARCHITECTURE.md,
 * Beyond one host).  Each probe's end writes this node's verdict and
 * reads the others' in one script; a change anywhere is published on
 * the fleet's channel, and a timer reads again what a lost message
 * would have said.  What the rule picks is written to the host's
 * health db (health_fleet_set()), where the view and /status read it;
 * a change of a backend's place in the view rebuilds its part.
 * Nothing is waited for: the builder's loop goes on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/health_probe.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_sub.h"
#include "worker/upstream/token_exchange.h"
#include "worker/builder/builder.h"
#include "worker/process/process.h"
#include "worker/view/view_get.h"
#include "worker/builder/verdict_redis.h"

static struct {
	struct worker	*vr_w;
	int		 vr_on;
	char		 vr_node[PROBE_NODE_MAX];
	char		 vr_chan[VERDICT_RKEY_MAX];
	uint64_t	 vr_window_ms;	/* our entries count this long */
	struct event	*vr_timer;
	uint64_t	*vr_read_ms;	/* per backend: last answer (ours) */
	uint8_t		*vr_reading;	/* per backend: a read is out */
	uint8_t		*vr_follow;	/* per backend: another's verdict */
} VR;

static uint64_t
verdict_mono_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The rule's pick into the host's copy: follow another node's verdict
 * (until a while after its entry stops counting, so that Redis down
 * leaves this node to its own), or our own.  A backend that enters or
 * leaves the view has its part rebuilt.
 */
static void
verdict_redis_apply(size_t i, const redisReply *reply)
{
	struct worker			*w = VR.vr_w;
	const struct config_backend	*be = &w->w_conf->cf_backends[i];
	const struct verdict_entry	*l;
	struct verdict_entry		 e;
	struct verdict_fold		 f;
	struct probe_fleet		 cur, pf;
	struct probe_rec		 before, after;
	uint64_t			 rnow, now = store_now_ms(), keep;
	size_t				 n, k;
	int				 had, follow;

	if (verdict_redis_answer(reply, &rnow, &n) == -1) {
		redis_failed(REDIS_USER_VERDICT, NULL, reply, NULL);
		return;
	}
	VR.vr_read_ms[i] = verdict_mono_ms();
	verdict_fold_init(&f, VR.vr_node, rnow);
	for (k = 0; k < n; k++)
		if (verdict_redis_entry(reply, k, &e) == 0)
			verdict_fold_add(&f, &e);
	follow = verdict_fold_result(&f, &l);
	VR.vr_follow[i] = (uint8_t)follow;
	if ((had = health_fleet_get(w->w_store, be->cb_name, now, &cur)) ==
	    -1 || health_verdict_get(w->w_store, be->cb_name, now, &before,
	    NULL, 0) == -1)
		return;
	if (!follow) {
		if (!had)
			return;
		if (health_fleet_set(w->w_store, be->cb_name, NULL, now) == -1)
			goto fail;
		log_info("backend %s: its own health checks decide again",
		    be->cb_name);
	} else {
		memset(&pf, 0, sizeof(pf));
		pf.pf_state = l->ve_state;
		pf.pf_since_ms = now - (rnow > l->ve_since ? rnow -
		    l->ve_since : 0);
		(void)snprintf(pf.pf_node, sizeof(pf.pf_node), "%.*s",
		    (int)l->ve_nodelen, l->ve_node);
		(void)snprintf(pf.pf_err, sizeof(pf.pf_err), "%.*s",
		    (int)l->ve_errlen, l->ve_err);
		/* past its entry's expiry by a few reads: Redis down, the
		 * copy lapses and our own verdicts rule */
		keep = l->ve_exp > rnow ? l->ve_exp - rnow : 0;
		if (keep < 3 * VERDICT_REREAD_MS)
			keep = 3 * VERDICT_REREAD_MS;
		pf.pf_until_ms = now + keep;
		/* the same one, not near its end: nothing to write */
		if (had && cur.pf_state == pf.pf_state &&
		    strcmp(cur.pf_node, pf.pf_node) == 0 &&
		    cur.pf_until_ms > now + 2 * VERDICT_REREAD_MS)
			return;
		if (health_fleet_set(w->w_store, be->cb_name, &pf, now) == -1)
			goto fail;
		if (!had || cur.pf_state != pf.pf_state ||
		    strcmp(cur.pf_node, pf.pf_node) != 0) {
			log_info("backend %s: %s on node %s%s%s", be->cb_name,
			    probe_state_name(pf.pf_state), pf.pf_node,
			    pf.pf_err[0] != '\0' ? ": " : "", pf.pf_err);
			/* followed at once; our own probe confirms it or
			 * overrules it now, not an interval later */
			if (verdict_fold_confirm(&f, l))
				probe_soon(be);
		}
	}
	if (health_verdict_get(w->w_store, be->cb_name, now, &after, NULL,
	    0) == 0 && probe_state_out(before.pr_state) !=
	    probe_state_out(after.pr_state))
		view_changed_soon(w, be);
	return;
fail:
	log_warn("backend %s: cannot record the fleet's health verdict",
	    be->cb_name);
}

static void
verdict_redis_on_answer(void *arg, const redisReply *reply, const char *err)
{
	size_t i = (size_t)(uintptr_t)arg;

	if (VR.vr_w == NULL || i >= VR.vr_w->w_conf->cf_nbackends)
		return;
	VR.vr_reading[i] = 0;
	if (err != NULL || reply == NULL || reply->type == REDIS_REPLY_ERROR) {
		redis_failed(REDIS_USER_VERDICT, NULL, reply, err);
		return;
	}
	verdict_redis_apply(i, reply);
}

/* the script on backend i, its key in key (the caller's, as a is),
 * then the op's arguments */
static int
verdict_redis_args(size_t i, struct redis_args *a, char *key, size_t size)
{
	size_t klen;

	if ((klen = redis_key(key, size, VR.vr_w->w_conf->cf_sstore.css_prefix,
	    REDIS_KIND_VERDICT, VR.vr_w->w_conf->cf_backends[i].cb_name,
	    NULL)) == 0)
		return -1;
	redis_args_evalsha(a, verdict_redis_lua, 1);
	redis_args_pushn(a, key, klen);
	return 0;
}

static void
verdict_redis_send(size_t i, struct redis_args *a)
{
	if (redis_send(a, verdict_redis_on_answer, (void *)(uintptr_t)i) ==
	    NULL) {
		redis_failed(REDIS_USER_VERDICT, NULL, NULL, "not connected");
		return;
	}
	VR.vr_reading[i] = 1;
}

static int
verdict_redis_probed(size_t i)
{
	return !texch_backend(&VR.vr_w->w_conf->cf_backends[i]);
}

static void
verdict_redis_read(size_t i)
{
	struct redis_args	a;
	char			key[VERDICT_RKEY_MAX];

	if (VR.vr_reading[i] || !verdict_redis_probed(i) ||
	    verdict_redis_args(i, &a, key, sizeof(key)) == -1)
		return;
	redis_args_push(&a, "r");
	verdict_redis_send(i, &a);
}

void
verdict_redis_put(const struct config_backend *be, const struct probe_rec *pr,
    enum probe_outcome o)
{
	struct probe_fleet	 pf;
	struct redis_args	 a;
	char			 key[VERDICT_RKEY_MAX];
	size_t			 i;

	if (!VR.vr_on)
		return;
	i = (size_t)(be - VR.vr_w->w_conf->cf_backends);
	if (i >= VR.vr_w->w_conf->cf_nbackends)
		return;
	/*
	 * Our probe, newer than the verdict followed, says otherwise: ours
	 * rules (the rule's, applied here too, so that it holds while
	 * Redis does not answer)
	 */
	if (VR.vr_follow[i] && health_fleet_get(VR.vr_w->w_store,
	    be->cb_name, store_now_ms(), &pf) == 1 &&
	    verdict_class(pf.pf_state) != o) {
		VR.vr_follow[i] = 0;
		if (health_fleet_set(VR.vr_w->w_store, be->cb_name, NULL,
		    store_now_ms()) == 0)
			log_info("backend %s: its own health checks decide "
			    "again", be->cb_name);
	}
	if (verdict_redis_args(i, &a, key, sizeof(key)) == -1)
		return;
	redis_args_push(&a, "w");
	redis_args_push(&a, VR.vr_node);
	redis_args_push_u64(&a, pr->pr_state);
	redis_args_push_u64(&a, (uint64_t)o);
	redis_args_push_u64(&a, VR.vr_window_ms);
	redis_args_push(&a, o != PROBE_OK ? pr->pr_err : "");
	redis_args_push(&a, VR.vr_chan);
	redis_args_push(&a, be->cb_name);
	/* a write reads too: a read out meanwhile answers before it */
	verdict_redis_send(i, &a);
}

/* a backend's name on the channel: another node's verdict changed */
static void
verdict_redis_on_message(const char *name, size_t len)
{
	const struct config	*cf = VR.vr_w->w_conf;
	size_t			 i;

	for (i = 0; i < cf->cf_nbackends; i++)
		if (name == NULL || (strlen(cf->cf_backends[i].cb_name) ==
		    len && memcmp(cf->cf_backends[i].cb_name, name, len) == 0))
			verdict_redis_read(i);
}

/* a message lost, an entry run out: read what was not read lately */
static void
verdict_redis_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct probe_fleet	pf;
	uint64_t		now = verdict_mono_ms();
	size_t			i;

	(void)fd;
	(void)ev;
	(void)arg;
	for (i = 0; i < VR.vr_w->w_conf->cf_nbackends; i++) {
		/* a copy lapsed (Redis down): our own verdict, maybe
		 * another place in the view */
		if (VR.vr_follow[i] && health_fleet_get(VR.vr_w->w_store,
		    VR.vr_w->w_conf->cf_backends[i].cb_name, store_now_ms(),
		    &pf) == 0) {
			VR.vr_follow[i] = 0;
			log_info("backend %s: its own health checks decide "
			    "again", VR.vr_w->w_conf->cf_backends[i].cb_name);
			view_changed_soon(VR.vr_w,
			    &VR.vr_w->w_conf->cf_backends[i]);
		}
		if (redis_up() &&
		    now >= VR.vr_read_ms[i] + VERDICT_REREAD_MS / 2)
			verdict_redis_read(i);
	}
}

/*
 * Another node's verdict this host followed before (a restart, a reload)
 * is dropped when nothing shares verdicts any more, else watched until
 * the first read decides.
 */
static void
verdict_redis_left(struct worker *w, int on)
{
	struct probe_fleet	 pf;
	const char		*name;
	size_t			 i;

	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		name = w->w_conf->cf_backends[i].cb_name;
		if (health_fleet_get(w->w_store, name, store_now_ms(),
		    &pf) != 1)
			continue;
		if (on)
			VR.vr_follow[i] = 1;
		else
			(void)health_fleet_set(w->w_store, name, NULL,
			    store_now_ms());
	}
}

void
verdict_redis_init(struct worker *w)
{
	const struct config		*cf = w->w_conf;
	const struct config_health	*ch = &cf->cf_health;
	struct timeval			 tv;
	char				 host[256];
	char				 tag[HEALTH_NODE_TAG_LEN + 1];
	uint64_t			 win;

	if (cf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS ||
	    ch->ch_interval_ms == 0 || cf->cf_nbackends == 0) {
		verdict_redis_left(w, 0);
		return;
	}
	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	win = ch->ch_interval_ms * VERDICT_WINDOW_INTERVALS + ch->ch_timeout_ms;
	if (win < VERDICT_WINDOW_MIN_MS)
		win = VERDICT_WINDOW_MIN_MS;
	VR.vr_window_ms = win;
	if (health_node_tag(w->w_store, tag) == -1 || verdict_node_id(
	    VR.vr_node, sizeof(VR.vr_node), host, tag) == 0 ||
	    redis_key(VR.vr_chan, sizeof(VR.vr_chan),
	    cf->cf_sstore.css_prefix, REDIS_KIND_HEALTH, NULL) == 0 ||
	    (VR.vr_read_ms = calloc(cf->cf_nbackends,
	    sizeof(*VR.vr_read_ms))) == NULL || (VR.vr_reading =
	    calloc(cf->cf_nbackends, sizeof(*VR.vr_reading))) == NULL ||
	    (VR.vr_follow = calloc(cf->cf_nbackends,
	    sizeof(*VR.vr_follow))) == NULL ||
	    (VR.vr_timer = event_new(w->w_base, -1, EV_PERSIST,
	    verdict_redis_on_timer, NULL)) == NULL) {
		log_warnx("health verdicts (redis): cannot set up; each node "
		    "goes by its own probes");
		verdict_redis_free();
		return;
	}
	VR.vr_w = w;
	verdict_redis_left(w, 1);
	tv.tv_sec = VERDICT_REREAD_MS / 1000;
	tv.tv_usec = (VERDICT_REREAD_MS % 1000) * 1000;
	(void)event_add(VR.vr_timer, &tv);
	(void)redis_script_add(verdict_redis_lua);
	/* without it, another node's change is read on the timer */
	if (redis_sub_init_channel(w, VR.vr_chan, verdict_redis_on_message) ==
	    -1)
		log_warnx("health verdicts (redis): no subscription; other "
		    "nodes' verdicts are read every %d s",
		    VERDICT_REREAD_MS / 1000);
	VR.vr_on = 1;
	log_debug("health verdicts shared as node %s", VR.vr_node);
}

void
verdict_redis_free(void)
{
	if (VR.vr_timer != NULL)
		event_free(VR.vr_timer);
	free(VR.vr_read_ms);
	free(VR.vr_reading);
	free(VR.vr_follow);
	memset(&VR, 0, sizeof(VR));
}
