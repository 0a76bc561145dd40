/*
 * The builder's relists (relist.h): a backend whose lists changed
 * (worker 0's listener, notify.c, passed it on) is listed again, one
 * relist under way and one pending at most per backend, at least an
 * interval apart that grows while the backend storms (flow.h's gate);
 * the sessions and listen streams are told when the view changed
 * (notify_lists_changed()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/upstream/flow.h"
#include "worker/builder/relist.h"
#include "worker/events/notify.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/view/view_get.h"

/* one backend's relists at least this far apart, the
 * interval doubled (up to the most) after one that folded this many
 * changes or more (three in an interval, when worker 0 passes ten a
 * second at most): a storm.  A calm backend's change reaches the
 * clients within a second (the forward, this, the relist); a
 * second change as soon after a first as the suite's makes it
 * (SEP-2575's list-changed checks wait 1.5 s for each) */
#define RELIST_MIN_MS	500
#define RELIST_MAX_MS	30000
#define RELIST_STORM_FOLDS	2

/* in the builder: one backend's relists for its list changes */
struct relist {
	struct worker			*rl_w;
	const struct config_backend	*rl_be;
	struct lcgate			 rl_gate;
	struct event			*rl_timer;	/* the pending one */
	json_t				*rl_old;	/* the view before */
	uint64_t			 rl_storm_from;	/* heard at its start */
	uint64_t			 rl_storm_at;	/* ms */
};

static struct relist	*relists;
static size_t		 nrelists;
static json_t		*relist_last;	/* the last view compared against */

static void	relist_run_one(struct relist *);

static void
relist_run(void *arg)
{
	relist_run_one(arg);
}

/* the relist is over: the next one now, later, or none */
static void
relist_done(struct relist *r)
{
	enum lcgate_act	act;
	uint64_t	now = store_now_ms(), due = 0;

	act = lcgate_done(&r->rl_gate, now, &due);
	notify_gate(act, now, due, r->rl_timer, relist_run, r);
}

static void
relist_on_view(void *arg, json_t *view, const char *err)
{
	struct relist	*r = arg;
	json_t		*old;

	if (view == NULL) {
		log_warnx("view rebuild after %s changed: %s",
		    r->rl_be->cb_name, err);
		goto done;
	}
	/*
	 * Against what the sessions were last told of, when there is such
	 * a view: the relists of two backends both take the view before
	 * either ends, and only the first change is news.
	 */
	old = relist_last != NULL ? relist_last : json_incref(r->rl_old);
	relist_last = json_incref(view);
	notify_lists_changed(r->rl_w, old, view, r->rl_be->cb_name);
	json_decref(old);
done:
	json_decref(r->rl_old);
	r->rl_old = NULL;
	relist_done(r);
}

/* a storm's start and end, said once each, with what worker 0 heard */
static void
relist_storm(struct relist *r, int storm, uint64_t now)
{
	uint64_t heard;

	if (storm == 0)
		return;
	heard = diag_list_changes(r->rl_w, r->rl_be);
	if (storm == 1) {
		r->rl_storm_from = heard;
		r->rl_storm_at = now;
		log_warnx("backend %s sends list_changed in a storm (%llu so "
		    "far); listing it again at most every %u s while it goes "
		    "on", r->rl_be->cb_name, (unsigned long long)heard,
		    r->rl_gate.lg_interval / 1000);
	} else
		log_info("backend %s: its list_changed storm is over (%llu "
		    "in %llu s); listed again on each change",
		    r->rl_be->cb_name, (unsigned long long)(heard -
		    r->rl_storm_from), (unsigned long long)(now -
		    r->rl_storm_at) / 1000);
}

/*
 * List the backend again: only it, the others' lists taken as they are
 * (view_refresh()); what the lists were is the shared view, else the
 * last one seen.
 */
static void
relist_run_one(struct relist *r)
{
	uint64_t	now = store_now_ms();
	int		storm;

	storm = lcgate_start(&r->rl_gate, now);
	relist_storm(r, storm, now);
	diag_count_relist(r->rl_w, r->rl_be, storm == 1,
	    r->rl_gate.lg_interval);
	json_decref(r->rl_old);
	if ((r->rl_old = view_peek(r->rl_w)) == NULL)
		r->rl_old = json_incref(relist_last);
	/* on -1 no callback came nor will */
	if (view_refresh(r->rl_w, r->rl_be->cb_name, relist_on_view, r) ==
	    -1) {
		log_warnx("backend %s changed: cannot list it again",
		    r->rl_be->cb_name);
		json_decref(r->rl_old);
		r->rl_old = NULL;
		relist_done(r);
	}
}

static void
relist_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	relist_run_one(arg);
}

/* the builder's relist state of backend, set up at its first change */
static struct relist *
relist_of(struct worker *w, const char *backend)
{
	const struct config	*cf = w->w_conf;
	size_t			 i;

	if (relists == NULL && cf->cf_nbackends > 0) {
		if ((relists = calloc(cf->cf_nbackends,
		    sizeof(*relists))) == NULL)
			return NULL;
		nrelists = cf->cf_nbackends;
		for (i = 0; i < nrelists; i++) {
			relists[i].rl_w = w;
			relists[i].rl_be = &cf->cf_backends[i];
			lcgate_init(&relists[i].rl_gate, RELIST_MIN_MS,
			    RELIST_MAX_MS, RELIST_STORM_FOLDS);
			relists[i].rl_timer = evtimer_new(w->w_base,
			    relist_on_timer, &relists[i]);
		}
	}
	for (i = 0; i < nrelists; i++)
		if (strcmp(relists[i].rl_be->cb_name, backend) == 0)
			return relists[i].rl_timer != NULL ? &relists[i] : NULL;
	return NULL;
}

/*
 * In the view builder: backend's lists changed (view_changed()).  One
 * relist under way and one pending at most: a change that finds one
 * pending is folded into it, which starts after it and lists what it
 * made too; so the last change of a storm is never lost.
 */
void
relist_backend(struct worker *w, const char *backend)
{
	struct relist	*r;
	enum lcgate_act	 act;
	uint64_t	 now = store_now_ms(), due = 0;

	if ((r = relist_of(w, backend)) == NULL)
		return;
	act = lcgate_change(&r->rl_gate, now, &due);
	notify_gate(act, now, due, r->rl_timer, relist_run, r);
}

/* at exit, after views_free() dropped the relists' waiters */
void
relist_free(void)
{
	size_t i;

	for (i = 0; i < nrelists; i++) {
		if (relists[i].rl_timer != NULL)
			event_free(relists[i].rl_timer);
		json_decref(relists[i].rl_old);
	}
	free(relists);
	relists = NULL;
	nrelists = 0;
	json_decref(relist_last);
	relist_last = NULL;
}
