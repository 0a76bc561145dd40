/*
 * Pinning as the builder uses it (pin_store.h): every definition a
 * backend lists is checked against its pin in this host's copy of the
 * pins db (shared/pin_db.h) before the lists go into a view; a first
 * sight is pinned, a different one is a pending change, told once per
 * new hash (a warning, the audit through the builder's hook, the
 * counter).  The watch lists a backend again when an operator decided
 * on its pins, so that clients get list_changed.  With
 * sessionStorage.provider redis, pin_remote (pin_redis.c) carries what
 * is written here to the fleet.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/pin_db.h"
#include "shared/store.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/state/pin_store.h"

#define PIN_WATCH_MS	1000	/* the decision stamps looked at */

const struct pin_remote	*pin_remote;

static pin_changed_cb	 pin_watch_cb;
static pin_change_cb	 pin_change_hook;
static struct event	*pin_watch_ev;
static uint64_t		*pin_decided;	/* per configured backend */
static size_t		 pin_ndecided;

void
pin_on_change(pin_change_cb cb)
{
	pin_change_hook = cb;
}

/* rec written to the host's copy, and to the fleet's with Redis */
static void
pin_write(struct worker *w, const struct pin_rec *rec)
{
	if (pin_db_put(w->w_store, rec) == -1) {
		log_warnx("pins: cannot store the pin of %s %s of backend %s",
		    pin_kind_name(rec->pr_kind), rec->pr_name, rec->pr_backend);
		return;
	}
	if (pin_remote != NULL)
		pin_remote->pr_put(w, rec);
}

/* the verdict on a definition that is a pending change */
static enum pin_verdict
pin_pending(struct worker *w)
{
	return w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_ENFORCE ?
	    PIN_WITHHOLD : PIN_FLAG;
}

/* a change not seen before: pending, told once */
static void
pin_changed(struct worker *w, struct pin_rec *rec, const char *hash,
    char **text)
{
	int enforce = w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_ENFORCE;

	rec->pr_state = PIN_PENDING;
	(void)snprintf(rec->pr_new, sizeof(rec->pr_new), "%s", hash);
	free(rec->pr_new_text);
	rec->pr_new_text = *text;
	*text = NULL;
	rec->pr_new_ms = store_now_ms();
	pin_write(w, rec);
	log_warnx("pins: %s %s of backend %s changed since it was pinned "
	    "(%.12s, now %.12s); %s until an operator approves it "
	    "(vmcpctl pins approve %s %s)", pin_kind_name(rec->pr_kind),
	    rec->pr_name, rec->pr_backend, rec->pr_hash, hash,
	    enforce ? "withheld" : "served, flagged", rec->pr_backend,
	    rec->pr_name);
	diag_count_pin_change(w);
	if (pin_change_hook != NULL)
		pin_change_hook(w, rec);
}

enum pin_verdict
pin_check(struct worker *w, const struct config_backend *be,
    enum pin_kind kind, const json_t *item)
{
	struct pin_rec		 rec;
	char			 name[PIN_NAME_MAX + 1];
	char			 hash[PIN_HASH_LEN + 1];
	char			*text = NULL;
	enum pin_verdict	 v = PIN_SERVE;
	int			 rc;

	if (w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_OFF)
		return PIN_SERVE;
	/* no name, or past the bounds: the view's own checks drop it */
	if (pin_digest(kind, item, name, hash, &text) == -1)
		return PIN_SERVE;
	memset(&rec, 0, sizeof(rec));
	rc = pin_db_get(w->w_store, be->cb_name, kind, name, &rec);
	if (rc == -1) {
		log_warnx("pins: cannot read the pin of %s %s of backend %s; "
		    "served", pin_kind_name(kind), name, be->cb_name);
		goto done;
	}
	if (rc == STORE_NOTFOUND) {
		/* a first sight is the pin */
		(void)snprintf(rec.pr_backend, sizeof(rec.pr_backend), "%s",
		    be->cb_name);
		rec.pr_kind = kind;
		(void)snprintf(rec.pr_name, sizeof(rec.pr_name), "%s", name);
		rec.pr_state = PIN_PINNED;
		(void)snprintf(rec.pr_hash, sizeof(rec.pr_hash), "%s", hash);
		rec.pr_text = text;
		text = NULL;
		rec.pr_pinned_ms = store_now_ms();
		pin_write(w, &rec);
		goto done;
	}
	if (strcmp(hash, rec.pr_hash) == 0) {
		/* the pinned one: a change the backend took back is
		 * pending no more; a rejected one stays refused */
		if (rec.pr_state == PIN_PENDING) {
			rec.pr_state = PIN_PINNED;
			rec.pr_new[0] = '\0';
			free(rec.pr_new_text);
			rec.pr_new_text = NULL;
			rec.pr_new_ms = 0;
			pin_write(w, &rec);
			log_info("pins: %s %s of backend %s is as pinned again",
			    pin_kind_name(kind), name, be->cb_name);
		}
		goto done;
	}
	if (strcmp(hash, rec.pr_new) == 0)
		v = rec.pr_state == PIN_REJECTED ? PIN_WITHHOLD :
		    pin_pending(w);
	else {
		pin_changed(w, &rec, hash, &text);
		v = pin_pending(w);
	}
done:
	pin_rec_clear(&rec);
	free(text);
	return v;
}

int
pin_withheld_error(char *buf, size_t len, const char *backend,
    enum pin_kind kind, const char *name)
{
	int n;

	n = snprintf(buf, len, "%s %.256s of backend %.128s changed since it "
	    "was pinned and is withheld until an operator approves the "
	    "change (vmcpctl pins approve %.128s %.256s)",
	    kind == PIN_PROMPT ? "Prompt" : kind == PIN_TEMPLATE ?
	    "Resource template" : "Tool", name, backend, backend, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void
pin_watch_stop(void)
{
	if (pin_watch_ev != NULL)
		event_free(pin_watch_ev);
	pin_watch_ev = NULL;
	free(pin_decided);
	pin_decided = NULL;
	pin_ndecided = 0;
}

/* a decision seen on backend i: its stamp moved since last looked */
static void
pin_watch_look(struct worker *w)
{
	const struct config_backend	*be;
	uint64_t			 d;
	size_t				 i;

	for (i = 0; i < pin_ndecided; i++) {
		be = &w->w_conf->cf_backends[i];
		if ((d = pin_db_decided(w->w_store, be->cb_name)) ==
		    pin_decided[i])
			continue;
		pin_decided[i] = d;
		log_info("pins: an operator decided on backend %s's pins; "
		    "listing it again", be->cb_name);
		if (pin_watch_cb != NULL)
			pin_watch_cb(w, be->cb_name);
	}
}

static void
pin_on_watch(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	pin_watch_look(arg);
}

void
pin_watch(struct worker *w, pin_changed_cb cb)
{
	struct timeval	tv = { PIN_WATCH_MS / 1000,
			    (PIN_WATCH_MS % 1000) * 1000 };
	size_t		i;

	pin_watch_cb = cb;
	if (w->w_conf->cf_agg.ca_pin_mode == CONFIG_PIN_OFF ||
	    w->w_conf->cf_nbackends == 0)
		return;
	if ((pin_decided = calloc(w->w_conf->cf_nbackends,
	    sizeof(*pin_decided))) == NULL)
		goto fail;
	pin_ndecided = w->w_conf->cf_nbackends;
	/* what was decided before this builder is in its first view */
	for (i = 0; i < pin_ndecided; i++)
		pin_decided[i] = pin_db_decided(w->w_store,
		    w->w_conf->cf_backends[i].cb_name);
	if ((pin_watch_ev = event_new(w->w_base, -1, EV_PERSIST,
	    pin_on_watch, w)) == NULL || event_add(pin_watch_ev, &tv) == -1)
		goto fail;
	return;
fail:
	log_warnx("pins: no watch of the operators' decisions; a decision "
	    "reaches the clients at the next listing");
	pin_watch_stop();
}

void
pin_free(void)
{
	pin_watch_stop();
	if (pin_remote != NULL && pin_remote->pr_free != NULL)
		pin_remote->pr_free();
	pin_remote = NULL;
}
