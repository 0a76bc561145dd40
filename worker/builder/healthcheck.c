/*
 * Active health checks, in the view builder (builder.c): every
 * healthCheckInterval each backend gets one cheap request through the
 * backend edge, in the revision it speaks (ping over the builder's
 * scope session in 2025-11-25, server/discover in 2026-07-28), bounded
 * by healthCheckTimeout.  The circuit breaker neither gates nor counts
 * probes; an answered probe closes a breaker that is not closed, so a
 * backend that came back is back in the lists without waiting for
 * client traffic.  Outcomes go to the health db (health_probe_record());
 * a backend entering or leaving the unhealthy state is listed anew
 * (view_changed()), and the view leaves it out while it is unhealthy.
 * With sessionStorage redis each outcome goes to the fleet too, and the
 * verdict acted on may be another node's (health_store.h).
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/health_probe.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/upstream/health_redis.h"
#include "worker/builder/verdict_redis.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "proto/proto.h"
#include "worker/builder/builder.h"
#include "worker/process/process.h"
#include "worker/upstream/eras.h"
#include "worker/view/view_get.h"
#include "worker/upstream/health_store.h"

struct probe {
	struct worker			*p_w;
	const struct config_backend	*p_be;
	struct upstream			*p_call;
	struct event			*p_timer;	/* its timeout */
	uint64_t			 p_start_us;
};

static struct probe	*probes;
static size_t		 nprobes;
static struct event	*probe_tick, *probe_report;

static uint64_t
probe_now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
probe_timeval(struct timeval *tv, uint64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

static void
probe_done(struct probe *p, enum probe_outcome o, const char *err)
{
	const struct config_health	*ch = &p->p_w->w_conf->cf_health;
	const char			*name = p->p_be->cb_name;
	struct probe_rec		 old, cur, eff;
	struct breaker			 bk;
	uint64_t			 now = store_now_ms(), lat;
	int				 changed = 0, out;

	evtimer_del(p->p_timer);
	p->p_call = NULL;
	lat = probe_now_us() - p->p_start_us;
	/* in or out of the view: by the verdict acted on (ours, or the
	 * fleet's we follow) */
	out = health_verdict_get(p->p_w->w_store, name, now, &eff, NULL,
	    0) == 0 && probe_state_out(eff.pr_state);
	if (health_probe_record(p->p_w->w_store, name, ch, o, lat, err, now,
	    &old, &cur) == -1)
		return;
	/* may end our following another node's verdict */
	health_store->hs_verdict(p->p_be, &cur, o);
	if (old.pr_state != cur.pr_state) {
		if (cur.pr_state == PROBE_UNHEALTHY ||
		    cur.pr_state == PROBE_UNAUTHENTICATED)
			log_warnx("backend %s: %s (%s)", name,
			    probe_state_name(cur.pr_state), cur.pr_err);
		else
			log_info("backend %s: %s (probe answered in %llu ms)",
			    name, probe_state_name(cur.pr_state),
			    (unsigned long long)(lat / 1000));
	}
	changed = health_verdict_get(p->p_w->w_store, name, now, &eff, NULL,
	    0) == 0 && probe_state_out(eff.pr_state) != out;
	/* learned early: an answer closes a breaker that is not closed */
	if (o == PROBE_OK && ch->ch_cb_enabled && health_breaker_get(
	    p->p_w->w_store, name, now, &bk) == 0 &&
	    bk.bk_state != BREAKER_CLOSED && health_breaker_record(
	    p->p_w->w_store, name, ch, 0, 1, now, NULL) == BREAKER_CLOSED) {
		health_store->hs_breaker(name, 0);
		changed = 1;
	}
	if (changed)
		view_changed_soon(p->p_w, p->p_be);
}

static int
probe_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	(void)arg;
	(void)era;
	(void)up;	/* no params: ping, server/discover */
	return 0;
}

static void
probe_on_answer(void *arg, const struct upstream_result *r)
{
	struct probe	*p = arg;
	const char	*e = r->ur_errmsg != NULL ? r->ur_errmsg : "no answer";

	if (r->ur_status != UPSTREAM_FAILED)
		probe_done(p, PROBE_OK, NULL);
	else if (strstr(e, "HTTP 401") != NULL || strstr(e, "HTTP 403") !=
	    NULL)
		probe_done(p, PROBE_DENIED, e);
	else
		probe_done(p, PROBE_FAILED, e);
}

static void
probe_on_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct probe	*p = arg;
	char		 err[PROBE_ERR_MAX];

	(void)fd;
	(void)ev;
	upstream_cancel(p->p_call);
	(void)snprintf(err, sizeof(err), "backend %s: health check timed "
	    "out after %llu ms", p->p_be->cb_name, (unsigned long long)
	    p->p_w->w_conf->cf_health.ch_timeout_ms);
	probe_done(p, PROBE_FAILED, err);
}

static void
probe_start(struct probe *p)
{
	static const struct upstream_cbs cbs = {
		probe_params, NULL, probe_on_answer
	};
	const struct config_health	*ch = &p->p_w->w_conf->cf_health;
	struct upstream_req		 uq;
	struct timeval			 tv;

	if (p->p_call != NULL)
		return;		/* the last one is still out */
	/* token_exchange: only a client's token opens the backend, and a
	 * probe has none (never sent without it); client calls still
	 * feed its circuit breaker */
	if (texch_backend(p->p_be))
		return;
	memset(&uq, 0, sizeof(uq));
	uq.uq_method = "ping";
	uq.uq_client = ERA_LISTING;
	uq.uq_flags = UPSTREAM_F_PROBE;
	p->p_start_us = probe_now_us();
	if (ch->ch_timeout_ms > 0) {
		probe_timeval(&tv, ch->ch_timeout_ms);
		evtimer_add(p->p_timer, &tv);
	}
	if ((p->p_call = upstream_call(p->p_w, p->p_be, &uq, &cbs, p)) ==
	    NULL)
		probe_done(p, PROBE_FAILED, "cannot send the health check");
}

static void
probe_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	size_t i;

	(void)fd;
	(void)ev;
	(void)arg;
	for (i = 0; i < nprobes; i++)
		probe_start(&probes[i]);
	/* the fleet's breakers into this host's copy (provider redis) */
	health_store->hs_pull();
}

/*
 * Another node's verdict says otherwise than our last probe: ours
 * confirms it or overrules it now rather than at our next interval.
 */
void
probe_soon(const struct config_backend *be)
{
	size_t i;

	for (i = 0; i < nprobes; i++)
		if (probes[i].p_be == be)
			probe_start(&probes[i]);
}

/* statusReportingInterval: one line, only when a backend is not healthy */
static void
probe_on_report(evutil_socket_t fd, short ev, void *arg)
{
	struct worker		*w = arg;
	struct probe_rec	 pr;
	char			 line[1024];
	size_t			 i, len = 0, bad = 0;
	int			 n;

	(void)fd;
	(void)ev;
	line[0] = '\0';
	for (i = 0; i < nprobes; i++) {
		if (health_verdict_get(w->w_store, probes[i].p_be->cb_name,
		    store_now_ms(), &pr, NULL, 0) == -1 ||
		    pr.pr_state == PROBE_HEALTHY)
			continue;
		bad++;
		n = snprintf(line + len, sizeof(line) - len, "%s%s %s",
		    len > 0 ? ", " : "", probes[i].p_be->cb_name,
		    probe_state_name(pr.pr_state));
		if (n > 0 && (size_t)n < sizeof(line) - len)
			len += (size_t)n;
	}
	if (bad > 0)
		log_warnx("health: %zu of %zu backends not healthy: %s", bad,
		    nprobes, line);
}

int
probe_init(struct worker *w)
{
	const struct config_health	*ch = &w->w_conf->cf_health;
	struct timeval			 tv;
	size_t				 i;

	if (ch->ch_interval_ms == 0 || w->w_conf->cf_nbackends == 0)
		return 0;
	if ((probes = calloc(w->w_conf->cf_nbackends, sizeof(*probes))) ==
	    NULL)
		return -1;
	nprobes = w->w_conf->cf_nbackends;
	for (i = 0; i < nprobes; i++) {
		probes[i].p_w = w;
		probes[i].p_be = &w->w_conf->cf_backends[i];
		if ((probes[i].p_timer = evtimer_new(w->w_base,
		    probe_on_timeout, &probes[i])) == NULL)
			return -1;
	}
	probe_timeval(&tv, ch->ch_interval_ms);
	if ((probe_tick = event_new(w->w_base, -1, EV_PERSIST, probe_on_tick,
	    w)) == NULL || event_add(probe_tick, &tv) == -1)
		return -1;
	/* the first round at once: a record left unhealthy by the last
	 * generation (or run) would keep a live backend out an interval */
	memset(&tv, 0, sizeof(tv));
	if (event_base_once(w->w_base, -1, EV_TIMEOUT, probe_on_tick, w,
	    &tv) == -1)
		return -1;
	if (ch->ch_report_ms > 0) {
		probe_timeval(&tv, ch->ch_report_ms);
		if ((probe_report = event_new(w->w_base, -1, EV_PERSIST,
		    probe_on_report, w)) == NULL ||
		    event_add(probe_report, &tv) == -1)
			return -1;
	}
	return 0;
}

void
probe_free(void)
{
	size_t i;

	for (i = 0; i < nprobes; i++) {
		upstream_cancel(probes[i].p_call);
		if (probes[i].p_timer != NULL)
			event_free(probes[i].p_timer);
	}
	free(probes);
	probes = NULL;
	nprobes = 0;
	if (probe_tick != NULL)
		event_free(probe_tick);
	if (probe_report != NULL)
		event_free(probe_report);
	probe_tick = probe_report = NULL;
}
