/*
 * The view builder: one process per generation, forked and respawned by
 * the master like a worker (nginx's cache manager is the model).  It
 * lists the backends, parses their lists, resolves, lays out and stores
 * every view (view_builds.c), so that no worker's loop ever does: a worker
 * asks for a build with a WAKE_VIEW_BUILD wake-up, goes on serving the
 * stored view meanwhile, and reads the new one in place when it is
 * stored (WAKE_VIEW_READY wakes the requests that wait for a first
 * one).  It has its own libevent loop, backend client and store
 * handle, no listening socket, and runs at a lower priority than the
 * workers: the calls they serve come first.
 */
#include <sys/resource.h>
#include <sys/types.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/ipc.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/trace/trace.h"
#include "worker/process/wake.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_sub.h"
#include "worker/state/stream_redis.h"
#include "worker/upstream/health_redis.h"
#include "worker/builder/verdict_redis.h"
#include "worker/state/pin_store.h"
#include "worker/builder/relist.h"
#include "shared/stats.h"
#include "worker/builder/builder.h"
#include "worker/events/notify.h"
#include "worker/events/stream.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"
#include "worker/worker_main.h"

/*
 * Below the workers, but not far: a worker's own store write waits on
 * LMDB's one writer lock while the builder stores a layout, so a builder
 * starved of CPU inside that write would stall the worker with it.
 */
#define BUILDER_NICE	5

static void
builder_on_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct worker *w = arg;

	(void)sig;
	(void)ev;
	event_base_loopexit(w->w_base, NULL);
}

/* a drain or a stop: a build under way is left (the next one redoes it) */
static void
builder_on_channel(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;
	struct ipc_msg	 m;
	int		 rc;

	(void)ev;
	while ((rc = ipc_recv(fd, &m)) == 1) {
		switch (m.im_type) {
		case IPC_DRAIN:
		case IPC_STOP:
			event_base_loopexit(w->w_base, NULL);
			break;
		case IPC_REOPEN:
			if (log_reopen() == -1)
				log_warn("reopening the log file");
			break;
		default:
			break;
		}
	}
	if (rc == -1)
		event_base_loopexit(w->w_base, NULL);	/* the master is gone */
}

static void
builder_on_wake(void *arg, const struct wake_msg *m)
{
	struct worker *w = arg;

	if (m->wm_type == WAKE_VIEW_BUILD)
		views_build_request(w, m->wm_a, m->wm_b[0] != '\0' ? m->wm_b :
		    NULL);
}

void
builder_main(const struct config *conf, unsigned int gen,
    struct diag_slot *stats, int nworkers, int chan_fd)
{
	struct worker	*w = worker_self();
	struct event	*chan_ev;

	if (setpriority(PRIO_PROCESS, 0, BUILDER_NICE) == -1)
		log_warn("setpriority");
	worker_process_init(w, conf, gen, chan_fd, 0, builder_on_signal,
	    builder_on_wake);
	/* no worker slot; its backend figures in the diag slot after theirs */
	w->w_stats = stats;
	w->w_nstats = nworkers;
	w->w_stat_slot = nworkers;
	if ((chan_ev = event_new(w->w_base, chan_fd, EV_READ | EV_PERSIST,
	    builder_on_channel, w)) == NULL || event_add(chan_ev, NULL) == -1)
		fatalx("cannot watch the master channel");
	views_builder_init(w);
	(void)trace_init(w, "builder");
	/* the lists it announces go to the sessions' events in Redis; and
	 * it says, once a node, when Redis would lose them at a restart */
	if (redis_init(w) == 0)
		redis_persist_watch();
	stream_redis_init(w);
	stream_init(w);
	/* the fleet's pins, into this host's copy */
	pin_redis_init(w);
	health_redis_init(w);
	health_redis_verdicts(verdict_redis_put);
	verdict_redis_init(w);
	if (probe_init(w) == -1)
		fatalx("cannot set up the health checks");
	(void)ipc_send(chan_fd, IPC_READY, NULL, 0);
	log_debug("building views (nice %d)", BUILDER_NICE);

	(void)event_base_dispatch(w->w_base);

	log_debug("exiting");
	trace_fini();
	redis_sub_free();
	redis_free();
	verdict_redis_free();
	wake_free();
	probe_free();
	upstream_free_all(w);
	backend_free_all(w);
	views_free();
	notify_free(w);
	relist_free();
	eras_free();
	core_free();
	session_cache_free();
	http_client_free(w->w_hc);
	store_close(w->w_store);
	event_free(chan_ev);
	event_free(w->w_sig_term);
	event_free(w->w_sig_usr1);
	event_base_free(w->w_base);
	exit(0);
}
