/*
 * The keeper: LMDB upkeep for every process.  It syncs the environment
 * about once a second (workers write with MDB_NOSYNC, so a process
 * crash loses nothing and a power loss at most ~1 s), sweeps expired
 * records in small batches bounded by time, and clears stale reader
 * slots.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/ipc.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_sweep.h"
#include "master.h"

#define KEEPER_TICK_MS		1000
#define KEEPER_READERS_MS	15000
/*
 * A sweep is small write txns (a worker's write waits for one at most)
 * for up to half a tick: stale index entries count in a batch, so only
 * the clock, not what a batch deleted, says when to stop.
 */
#define KEEPER_SWEEP_BATCH	256
#define KEEPER_SWEEP_PAUSE_NS	1000000	/* between batches: 1 ms */
#define KEEPER_SWEEP_BUDGET_MS	500

static volatile sig_atomic_t keeper_term;

static void
keeper_signal(int sig)
{
	(void)sig;
	keeper_term = 1;
}

static void
keeper_upkeep(struct store *st, int readers)
{
	const struct timespec	 pause = { 0, KEEPER_SWEEP_PAUSE_NS };
	struct store_sweep	 ss;
	uint64_t		 start = mono_ms();
	size_t			 total = 0, entries = 0;
	int			 cleared = 0, more;

	do {
		if (store_sweep(st, store_now_ms(), KEEPER_SWEEP_BATCH,
		    &ss) == -1)
			break;
		total += ss.ss_deleted;
		entries += ss.ss_entries;
		more = ss.ss_more;
		/*
		 * Let a waiting worker's write in between two batches: an
		 * unlocked mutex is not handed over, and a yield lets the
		 * sweep take it again before the woken worker runs.
		 */
		if (more)
			(void)nanosleep(&pause, NULL);
	} while (more && mono_ms() - start < KEEPER_SWEEP_BUDGET_MS);
	if (total > 0 || entries > 0)
		log_debug("swept %zu expired records, %zu index entries in "
		    "%llu ms", total, entries,
		    (unsigned long long)(mono_ms() - start));
	if (store_sync(st) == -1)
		log_warnx("store sync failed");
	if (readers) {
		if (store_reader_check(st, &cleared) == 0 && cleared > 0)
			log_info("cleared %d stale reader slots", cleared);
	}
}

void
keeper_main(const struct config *conf, unsigned int gen, int chan_fd)
{
	struct sigaction sa;
	struct store	*st;
	struct pollfd	 pfd;
	struct ipc_msg	 m;
	sigset_t	 mask;
	uint64_t	 next_tick, next_readers, now;
	int		 rc, draining = 0;

	(void)gen;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = keeper_signal;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGQUIT, &sa, NULL);
	sigemptyset(&mask);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);

	if (store_open(&st, conf->cf_state_dir, conf->cf_map_size,
	    conf->cf_max_readers, 0) == -1)
		fatalx("cannot open the state in %s", conf->cf_state_dir);
	(void)ipc_send(chan_fd, IPC_READY, NULL, 0);

	next_tick = mono_ms() + KEEPER_TICK_MS;
	next_readers = mono_ms() + KEEPER_READERS_MS;
	while (!keeper_term && !draining) {
		now = mono_ms();
		pfd.fd = chan_fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		rc = poll(&pfd, 1, now >= next_tick ? 0 :
		    (int)(next_tick - now));
		if (rc == -1 && errno != EINTR)
			fatal("poll");
		if (rc > 0) {
			while ((rc = ipc_recv(chan_fd, &m)) == 1) {
				if (m.im_type == IPC_DRAIN ||
				    m.im_type == IPC_STOP)
					draining = 1;
				else if (m.im_type == IPC_REOPEN)
					(void)log_reopen();
			}
			if (rc == -1)
				draining = 1;	/* the master is gone */
		}
		now = mono_ms();
		if (now >= next_tick) {
			keeper_upkeep(st, now >= next_readers);
			if (now >= next_readers)
				next_readers = now + KEEPER_READERS_MS;
			next_tick = now + KEEPER_TICK_MS;
		}
	}
	(void)store_sync(st);
	store_close(st);
	exit(0);
}
