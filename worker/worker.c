/*
 * A worker: a fresh event_base after fork, the store opened in this
 * process, the HTTP front on the inherited listener, the backend
 * client.  A drain (reload, stop, or the master gone) stops accepting,
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
#include "wake.h"
#include "auth.h"
#include "texch.h"
#include "audit.h"
#include "authz.h"
#include "ratelimit.h"
#include "redis.h"
#include "worker.h"
#include "session_redis.h"
#include "pend_redis.h"
#include "handle_redis.h"
#include "health_redis.h"
#include "redis_flight.h"
#include "shared/seal.h"
#include "subs.h"

static struct worker	 the_worker;

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
	notify_stop(w);
	subs_stop(w);
	tv.tv_sec = w->w_conf->cf_drain_timeout_ms / 1000;
	tv.tv_usec = (w->w_conf->cf_drain_timeout_ms % 1000) * 1000;
	w->w_drain_ev = evtimer_new(w->w_base, worker_on_drain_deadline, w);
	if (w->w_drain_ev == NULL || evtimer_add(w->w_drain_ev, &tv) == -1)
		event_base_loopexit(w->w_base, NULL);
	worker_exit_if_idle(w);
}

/* draining: gone once no request is out and no client connection open */
void
worker_exit_if_idle(struct worker *w)
{
	if (w->w_draining && w->w_inflight == 0 && w->w_unflushed == 0 &&
	    front_nconns(w) == 0)
		event_base_loopexit(w->w_base, NULL);
}

void
worker_reply_flushed(struct worker *w)
{
	if (w->w_unflushed > 0)
		w->w_unflushed--;
	worker_exit_if_idle(w);
}

void *
worker_zalloc(size_t n)
{
	void	*p;

	/* explicit_bzero(): GCC folds malloc() and memset() into calloc() */
	if ((p = malloc(n)) != NULL)
		explicit_bzero(p, n);
	return p;
}

void
worker_request_hold(struct worker *w)
{
	w->w_inflight++;
}

/* the one place a request is let go of (ngx_http_close_request()) */
void
worker_request_release(struct worker *w, const char *where)
{
	if (w->w_inflight == 0) {
		log_warnx("%s: request released with none in flight", where);
		return;
	}
	w->w_inflight--;
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
		stream_wake(w, m->wm_a);
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

struct worker *
worker_self(void)
{
	return &the_worker;
}

/*
 * What a worker and the builder set up alike after the fork: the struct
 * (the caller sets the rest), a loop whose SIGTERM and SIGQUIT call
 * on_signal, the signals the master blocked across the fork unblocked,
 * this process's store handle, the backend client and the wake socket.
 * base_flags are event_config flags for the loop.
 */
void
worker_process_init(struct worker *w, const struct config *conf,
    unsigned int gen, int chan_fd, int base_flags,
    event_callback_fn on_signal,
    void (*on_wake)(void *, const struct wake_msg *))
{
	struct event_config	*cfg;
	sigset_t		 mask;
	int			 cleared = 0;

	memset(w, 0, sizeof(*w));
	/* the fleet's sealing key replaces the master's own (seal.h) */
	if (conf->cf_sstore.css_have_seal_key &&
	    seal_key_set(conf->cf_sstore.css_seal_key) == -1)
		fatalx("cannot set the sealing key");
	w->w_conf = conf;
	w->w_slot = -1;
	w->w_gen = gen;
	w->w_pid = getpid();
	w->w_chan = chan_fd;
	w->w_listen_fd = -1;
	w->w_diag_fd = -1;
	TAILQ_INIT(&w->w_reqs);

	if ((cfg = event_config_new()) == NULL ||
	    (base_flags != 0 && event_config_set_flag(cfg, base_flags) == -1) ||
	    (w->w_base = event_base_new_with_config(cfg)) == NULL)
		fatalx("event_base_new failed");
	event_config_free(cfg);
	if ((w->w_sig_term = evsignal_new(w->w_base, SIGTERM, on_signal,
	    w)) == NULL || evsignal_add(w->w_sig_term, NULL) == -1)
		fatalx("cannot handle SIGTERM");
	if ((w->w_sig_usr1 = evsignal_new(w->w_base, SIGQUIT, on_signal,
	    w)) == NULL || evsignal_add(w->w_sig_usr1, NULL) == -1)
		fatalx("cannot handle SIGQUIT");
	sigemptyset(&mask);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);

	if (store_open(&w->w_store, conf->cf_state_dir, conf->cf_map_size,
	    conf->cf_max_readers, 0) == -1)
		fatalx("cannot open the state in %s", conf->cf_state_dir);
	/* a respawn after a crash: free the slots the dead one held */
	if (store_reader_check(w->w_store, &cleared) == 0 && cleared > 0)
		log_info("cleared %d stale reader slots", cleared);
	if ((w->w_hc = http_client_new(w->w_base)) == NULL)
		fatalx("cannot create the backend HTTP client");
	if (wake_init(w->w_base, conf, w->w_pid, on_wake, w) == -1)
		fatalx("cannot set up the wake socket");
}

void
worker_main(const struct config *conf, int slot, unsigned int gen,
    int listen_fd, int diag_fd, struct diag_slot *stats, int nstats,
    int chan_fd)
{
	struct worker		*w = &the_worker;

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
	if (audit_init(w) == -1)
		fatalx("cannot open the audit log");
	if (authz_init(w) == -1)
		fatalx("cannot set up authorization");
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
	stream_init(w);
	mrtr_init(w);
	if ((w->w_chan_ev = event_new(w->w_base, chan_fd, EV_READ | EV_PERSIST,
	    worker_on_channel, w)) == NULL ||
	    event_add(w->w_chan_ev, NULL) == -1)
		fatalx("cannot watch the master channel");
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
	audit_free();
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
