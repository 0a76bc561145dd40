/*
 * A worker: every part set up after fork on the process (process.c),
 * the HTTP front on the inherited listener, the wake-ups of other
 * workers and the master's messages dispatched.  A drain (reload, stop, or the master gone) stops accepting,
 * serves the connections it has until each closes (httpd.c), and exits
 * then, or at the drain deadline.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/ipc.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/http_client.h"
#include "worker/trace/trace.h"
#include "worker/process/wake.h"
#include "worker/auth/auth.h"
#include "worker/upstream/token_exchange.h"
#include "worker/auth/audit.h"
#include "worker/auth/authz.h"
#include "worker/auth/ratelimit.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_sub.h"
#include "shared/stats.h"
#include "worker/diag/diag.h"
#include "worker/events/listen_stream.h"
#include "worker/events/notify.h"
#include "worker/events/stream.h"
#include "worker/front.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/relay/mrtr.h"
#include "worker/request/cancel.h"
#include "worker/request/modern.h"
#include "worker/state/session.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_session_store.h"
#include "worker/upstream/backend_session_close.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_hooks.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"
#include "worker/worker_main.h"
#include "worker/state/session_redis.h"
#include "worker/relay/pending_redis.h"
#include "worker/composite/handle_redis.h"
#include "worker/state/link_store.h"
#include "worker/link/link.h"
#include "worker/pipeline/pipeline.h"
#include "worker/state/task_store.h"
#include "worker/upstream/health_redis.h"
#include "worker/redis/redis_flight.h"
#include "shared/seal.h"
#include "worker/events/subs.h"

static void	 worker_drain(struct worker *, int);

static void
worker_on_drain_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)ev;
	log_info("drain deadline reached with %zu requests in flight and %zu "
	    "connections open", w->w_inflight, front_nconns(w));
	event_base_loopexit(w->w_base, NULL);
}

/*
 * stop: no new generation takes the clients over (a stop, not a
 * reload), so idle connections are closed now rather than kept for
 * requests that may be on their way.
 */
static void
worker_drain(struct worker *w, int stop)
{
	struct timeval tv;

	if (w->w_draining) {
		if (stop)
			front_drain(w, 1);
		return;
	}
	w->w_draining = 1;
	log_debug("draining%s", stop ? " to stop" : "");
	front_drain(w, stop);
	diag_drain(w);
	stream_drain(w);
	listen_drain(w);
	trace_drain();
	notify_stop(w);
	subs_stop(w);
	tv.tv_sec = w->w_conf->cf_drain_timeout_ms / 1000;
	tv.tv_usec = (w->w_conf->cf_drain_timeout_ms % 1000) * 1000;
	w->w_drain_ev = evtimer_new(w->w_base, worker_on_drain_deadline, w);
	if (w->w_drain_ev == NULL || evtimer_add(w->w_drain_ev, &tv) == -1)
		event_base_loopexit(w->w_base, NULL);
	worker_exit_if_idle(w);
}

static void
worker_on_signal(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	if (sig == SIGTERM || sig == SIGQUIT)
		worker_drain(arg, 1);
}

static void
worker_on_channel(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;
	struct ipc_msg	 m;
	int		 rc;

	(void)ev;
	while ((rc = ipc_recv(fd, &m)) == 1) {
		switch (m.im_type) {
		case IPC_DRAIN:
			worker_drain(w, m.im_len == strlen(IPC_DRAIN_STOP) &&
			    memcmp(m.im_data, IPC_DRAIN_STOP, m.im_len) == 0);
			break;
		case IPC_STOP:
			event_base_loopexit(w->w_base, NULL);
			break;
		case IPC_REOPEN:
			if (log_reopen() == -1)
				log_warn("reopening the log file");
			audit_reopen(w);
			break;
		default:
			break;
		}
	}
	if (rc == -1) {
		/* the master is gone: finish what we have, then go */
		event_del(w->w_chan_ev);
		worker_drain(w, 1);
	}
}

/* a wake-up from another worker (wake.h) */
static void
worker_on_wake(void *arg, const struct wake_msg *m)
{
	struct worker *w = arg;

	switch (m->wm_type) {
	case WAKE_STREAM:
		stream_wake(w, m->wm_a, m->wm_b);
		break;
	case WAKE_LISTEN:
		listen_deliver(w, m->wm_a, m->wm_b[0] != '\0' ? m->wm_b :
		    NULL);
		break;
	case WAKE_MRTR:
		mrtr_wake(w, m->wm_a);
		break;
	case WAKE_RESUBSCRIBE:
		subs_wake(w);
		break;
	case WAKE_CANCEL:
		cancel_wake(w, m->wm_a, m->wm_b);
		break;
	case WAKE_VIEW_READY:
		views_wake(w, m->wm_a);
		break;
	case WAKE_VIEW_BUILD:	/* the builder's */
		break;
	}
}

void
worker_main(const struct config *conf, int slot, unsigned int gen,
    int listen_fd, int diag_fd, struct diag_slot *stats, int nstats,
    int chan_fd)
{
	struct worker		*w = worker_self();

	/*
	 * With the changelist, interest turned on and off within one loop
	 * pass (a socket's write interest when a write falls short, say)
	 * costs no epoll_ctl.  Workers never dup() a descriptor, the one
	 * thing the changelist cannot follow.
	 */
	worker_process_init(w, conf, gen, chan_fd,
	    EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST, worker_on_signal,
	    worker_on_wake);
	w->w_slot = slot;
	w->w_listen_fd = listen_fd;
	w->w_diag_fd = diag_fd;
	w->w_stats = stats;
	w->w_nstats = nstats;
	w->w_stat_slot = slot;
	if (auth_init(w) == -1)
		fatalx("cannot set up incoming authentication");
	if (texch_init(w) == -1)
		fatalx("cannot set up token exchange");
	pipeline_credential_set(link_phase, link_phase_cancel);
	if (audit_init(w) == -1)
		fatalx("cannot open the audit log");
	(void)trace_init(w, "worker");
	if (authz_init(w) == -1)
		fatalx("cannot set up authorization");
	/* the Vmcpd-Worker header of every reply, /mcp's and /status's */
	front_reply_init(w->w_conf, w->w_slot, w->w_pid);
	if (front_init(w) == -1)
		fatalx("cannot serve HTTP");
	if (diag_init(w) == -1)
		fatalx("cannot serve the diagnostics");
	(void)redis_init(w);
	ratelimit_init(w);
	session_redis_init(w);
	pend_redis_init(w);
	handle_redis_init(w);
	health_redis_init(w);
	texch_init_redis(w);
	bsession_redis_init(w);
	task_redis_init(w);
	link_redis_init(w);
	stream_init(w);
	mrtr_init(w);
	if ((w->w_chan_ev = event_new(w->w_base, chan_fd, EV_READ | EV_PERSIST,
	    worker_on_channel, w)) == NULL ||
	    event_add(w->w_chan_ev, NULL) == -1)
		fatalx("cannot watch the master channel");
	upstream_hooks.uh_resubscribe = notify_resubscribe;
	upstream_hooks.uh_closing = subs_closing;
	upstream_hooks.uh_session_end = subs_session_end;
	if (subs_init(w) == -1)
		fatalx("cannot set up resource subscriptions");
	notify_init(w);
	if (bclose_init(w) == -1)
		fatalx("cannot set up the backend session closer");
	(void)ipc_send(chan_fd, IPC_READY, NULL, 0);
	log_debug("serving");

	(void)event_base_dispatch(w->w_base);

	log_debug("exiting");
	notify_free(w);
	bclose_free();
	listen_drain(w);
	subs_free(w);
	stream_free_all(w);
	redis_sub_free();
	redis_flight_free();
	redis_free();	/* after the streams, which cancel their reads */
	ratelimit_free();
	wake_free();
	front_free(w);
	auth_free();
	texch_free();
	link_free();
	audit_free();
	trace_fini();
	authz_free();
	diag_free(w);
	upstream_free_all(w);
	backend_free_all(w);
	views_free();
	eras_free();
	core_free();
	mrtr_free_all();
	modern_free_all();
	session_cache_free();
	http_client_free(w->w_hc);
	store_close(w->w_store);
	event_free(w->w_chan_ev);
	event_free(w->w_sig_term);
	event_free(w->w_sig_usr1);
	if (w->w_drain_ev != NULL)
		event_free(w->w_drain_ev);
	event_base_free(w->w_base);
	exit(0);
}
