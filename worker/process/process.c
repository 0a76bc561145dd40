/*
 * The worker process (process.h): the one struct worker of this process,
 * set up after fork alike for a worker and the builder, and the count of
 * requests in flight that a drain waits for.  Below every part of the
 * worker: it calls none of them (the front's connection count is a hook
 * the front sets).
 */
#include <sys/types.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/seal.h"
#include "shared/store.h"
#include "worker/process/wake.h"
#include "worker/process/process.h"

static struct worker	 the_worker;

/* draining: gone once no request is out and no client connection open */
void
worker_exit_if_idle(struct worker *w)
{
	if (w->w_draining && w->w_inflight == 0 && w->w_unflushed == 0 &&
	    (w->w_nconns == NULL || w->w_nconns(w) == 0))
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
