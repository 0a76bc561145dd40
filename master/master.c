/*
 * Supervision: fork the workers and the keeper, respawn what crashes
 * (with backoff when it crash-loops, never after a deliberate fatal
 * exit), reload on SIGHUP as a new generation, stop gracefully on
 * SIGTERM/SIGINT/SIGQUIT, reopen logs on SIGUSR1.
 *
 * The master does not use libevent: signals are blocked except inside
 * ppoll(), whose handlers only set flags.  That avoids the two libevent
 * fork traps (an inherited epoll fd, see event_reinit(3); a signal fd
 * shared with the children) entirely.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/ipc.h"
#include "shared/log.h"
#include "shared/seal.h"
#include "shared/paths.h"
#include "shared/stats.h"
#include "shared/store.h"
#include "shared/version.h"
#include "worker/worker_main.h"
#include "bridge.h"
#include "master.h"
#include "master_int.h"

/*
 * A stop signal again within this of the first is the same stop, not an
 * operator's second one: sent to the whole process group, a signal also
 * reaches a wrapper in that group that forwards it to us (npm run).
 */
#define STOP_REPEAT_MS	1000

pid_t master_pid;

struct master_child_list master_children =
    TAILQ_HEAD_INITIALIZER(master_children);
struct gen		*master_cur, *master_next;
static int		 debug_mode;
int			 master_stopping;
static uint64_t		 stop_ms;	/* when the stop began */
int			 master_exit_status;

static volatile sig_atomic_t sig_chld, sig_hup, sig_term, sig_usr1;

static void	 master_signal(int);

static void	 master_read_channel(struct child *);
static void	 master_tick(void);

uint64_t
mono_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
master_signal(int sig)
{
	switch (sig) {
	case SIGCHLD:
		sig_chld = 1;
		break;
	case SIGHUP:
		sig_hup = 1;
		break;
	case SIGUSR1:
		sig_usr1 = 1;
		break;
	default:
		sig_term = 1;
		break;
	}
}

void
master_stop(int hard)
{
	struct child *c;

	if (hard) {
		TAILQ_FOREACH(c, &master_children, c_entry) {
			c->c_killed = 1;
			(void)kill(c->c_pid, SIGKILL);
		}
		return;
	}
	if (master_stopping)
		return;
	master_stopping = 1;
	stop_ms = mono_ms();
	log_info("stopping");
	if (master_next != NULL) {
		/* no failure: the generation a reload is starting stops too */
		log_info("generation %u, not ready yet, stops too", master_next->g_num);
		master_drain_gen(master_next->g_num,
		    master_next->g_conf->cf_drain_timeout_ms);
		gen_free(master_next, master_cur);
		master_next = NULL;
	}
	/* workers of a generation already draining: it is a stop now */
	TAILQ_FOREACH(c, &master_children, c_entry)
		if (c->c_kind == CHILD_WORKER && c->c_state ==
		    CHILD_DRAINING && c->c_fd != -1)
			(void)ipc_send(c->c_fd, IPC_DRAIN, IPC_DRAIN_STOP,
			    strlen(IPC_DRAIN_STOP));
	master_drain_gen(master_cur->g_num,
	    master_cur->g_conf->cf_drain_timeout_ms);
}

static void
master_read_channel(struct child *c)
{
	struct ipc_msg	m;
	int		rc;

	while ((rc = ipc_recv(c->c_fd, &m)) == 1) {
		if (m.im_type == IPC_READY && c->c_state == CHILD_STARTING)
			c->c_state = CHILD_READY;
	}
	if (rc == -1) {
		close(c->c_fd);
		c->c_fd = -1;
	}
	if (master_next != NULL && c->c_gen == master_next->g_num &&
	    gen_ready(master_next))
		master_reload_commit();
}

/* timers: respawns, kill deadlines, a pending reload's deadline */
static void
master_tick(void)
{
	struct child	*c;
	uint64_t	 now = mono_ms();
	int		 i;

	TAILQ_FOREACH(c, &master_children, c_entry)
		if (c->c_kill_ms != 0 && now >= c->c_kill_ms) {
			log_warnx("pid %d did not finish draining in time; "
			    "killing it", (int)c->c_pid);
			(void)kill(c->c_pid, SIGKILL);
			c->c_kill_ms = 0;
		}
	if (master_next != NULL && now >= master_next->g_deadline_ms)
		master_reload_abort("the new generation was not ready in time");
	if (master_stopping)
		return;
	if (master_cur->g_keeper.sl_respawn_ms != 0 &&
	    now >= master_cur->g_keeper.sl_respawn_ms)
		(void)master_spawn(master_cur, CHILD_KEEPER, -1);
	if (master_cur->g_builder.sl_respawn_ms != 0 &&
	    now >= master_cur->g_builder.sl_respawn_ms)
		if (master_spawn(master_cur, CHILD_BUILDER, -1) == -1)
			master_cur->g_builder.sl_respawn_ms = now + 1000;
	for (i = 0; i < master_cur->g_nworkers; i++)
		if (master_cur->g_workers[i].sl_respawn_ms != 0 &&
		    now >= master_cur->g_workers[i].sl_respawn_ms)
			if (master_spawn(master_cur, CHILD_WORKER, i) == -1)
				master_cur->g_workers[i].sl_respawn_ms =
				    now + 1000;
	for (i = 0; (size_t)i < master_cur->g_conf->cf_nbackends; i++)
		if (master_cur->g_bridges[i].sl_respawn_ms != 0 &&
		    now >= master_cur->g_bridges[i].sl_respawn_ms)
			if (master_spawn(master_cur, CHILD_BRIDGE, i) == -1)
				master_cur->g_bridges[i].sl_respawn_ms =
				    now + 1000;
}

static int
master_timeout(void)
{
	const struct child	*c;
	uint64_t		 now = mono_ms(), t = now + 1000;
	int			 i;

	TAILQ_FOREACH(c, &master_children, c_entry)
		if (c->c_kill_ms != 0 && c->c_kill_ms < t)
			t = c->c_kill_ms;
	if (master_next != NULL && master_next->g_deadline_ms < t)
		t = master_next->g_deadline_ms;
	if (master_cur->g_keeper.sl_respawn_ms != 0 &&
	    master_cur->g_keeper.sl_respawn_ms < t)
		t = master_cur->g_keeper.sl_respawn_ms;
	if (master_cur->g_builder.sl_respawn_ms != 0 &&
	    master_cur->g_builder.sl_respawn_ms < t)
		t = master_cur->g_builder.sl_respawn_ms;
	for (i = 0; i < master_cur->g_nworkers; i++)
		if (master_cur->g_workers[i].sl_respawn_ms != 0 &&
		    master_cur->g_workers[i].sl_respawn_ms < t)
			t = master_cur->g_workers[i].sl_respawn_ms;
	for (i = 0; (size_t)i < master_cur->g_conf->cf_nbackends; i++)
		if (master_cur->g_bridges[i].sl_respawn_ms != 0 &&
		    master_cur->g_bridges[i].sl_respawn_ms < t)
			t = master_cur->g_bridges[i].sl_respawn_ms;
	return t <= now ? 0 : (int)(t - now);
}

int
master_write_port(const struct config *conf, uint16_t port)
{
	FILE *fp;

	if (conf->cf_port_file == NULL)
		return 0;
	if ((fp = fopen(conf->cf_port_file, "w")) == NULL) {
		log_warn("%s", conf->cf_port_file);
		return -1;
	}
	fprintf(fp, "%u\n", port);
	if (fclose(fp) == EOF) {
		log_warn("%s", conf->cf_port_file);
		return -1;
	}
	return 0;
}

/* open and close the store once so a bad state dir fails here, loudly */
int
master_check_store(const struct config *conf)
{
	struct store	*st;
	int		 cleared = 0;

	if (store_open(&st, conf->cf_state_dir, conf->cf_map_size,
	    conf->cf_max_readers, 0) == -1) {
		log_warnx("cannot open the state in %s", conf->cf_state_dir);
		return -1;
	}
	(void)store_reader_check(st, &cleared);
	if (cleared > 0)
		log_info("cleared %d stale LMDB reader slots", cleared);
	store_close(st);
	return 0;
}

/*
 * The audit log must be writable before workers start: a worker that
 * cannot open it exits, and the master would only restart it in a loop.
 * create: open it as the workers will (O_CREAT), else only access(2)
 * (vmcpd -n must not leave files behind).
 */
int
master_check_audit(const struct config *conf, int create)
{
	const char	*file = conf->cf_audit.ca_log_file;
	char		 dir[PATH_MAX], *slash;
	int		 fd;

	if (!conf->cf_audit.ca_enabled || file == NULL)
		return 0;
	if (create) {
		fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		    0600);
		if (fd == -1)
			goto fail;
		(void)close(fd);
		return 0;
	}
	if (access(file, W_OK) == 0)
		return 0;
	if (errno != ENOENT)
		goto fail;
	if (snprintf(dir, sizeof(dir), "%s", file) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	if ((slash = strrchr(dir, '/')) != NULL)
		slash[slash == dir ? 1 : 0] = '\0';
	if (access(dir, W_OK | X_OK) == 0)
		return 0;
fail:
	log_warn("audit.logFile %s", file);
	return -1;
}

int
master_run(struct config *conf, int debug)
{
	struct sigaction sa;
	sigset_t	 mask, waitmask;
	struct pollfd	*pfd = NULL;
	struct child	**cs = NULL, *c;
	size_t		 cap = 0, nc;
	int		 fd, dfd, n, i, rc;
	uint16_t	 port;

	debug_mode = debug;
	master_pid = getpid();

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, &waitmask) == -1)
		fatal("sigprocmask");
	sigdelset(&waitmask, SIGCHLD);
	sigdelset(&waitmask, SIGHUP);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGQUIT);
	sigdelset(&waitmask, SIGUSR1);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = master_signal;
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGQUIT, &sa, NULL);
	(void)sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);

	/* the key of the sealed tokens (shared/seal.h): in memory only,
	 * inherited by every child forked from here on */
	if (seal_key_generate() == -1)
		fatalx("cannot make the sealing key");
	if (master_check_store(conf) == -1 ||
	    master_check_audit(conf, 1) == -1)
		exit(1);
	if ((fd = listen_open(conf->cf_listen_host, conf->cf_listen_port,
	    &port)) == -1 || (dfd = master_diag_open(conf, fd)) == -2)
		exit(1);
	if (master_write_port(conf, port) == -1)
		exit(1);
	if ((master_cur = gen_new(conf, fd, port)) == NULL)
		fatal("%s", __func__);
	master_cur->g_diag_fd = dfd;
	log_info("vmcpd %s listening on %s:%u with %d workers, state in %s",
	    VMCPD_VERSION, conf->cf_listen_host, port, master_cur->g_nworkers,
	    conf->cf_state_dir);
	/* said plainly: what provider redis shares today (ARCHITECTURE.md) */
	if (conf->cf_sstore.css_provider == CONFIG_SSTORE_REDIS)
		log_info("sessionStorage redis %s:%u: rate-limit buckets, "
		    "Legacy sessions and their events, relays, workflow "
		    "handles and circuit breakers are shared%s; health "
		    "check verdicts stay on this host",
		    conf->cf_sstore.css_host, conf->cf_sstore.css_port,
		    conf->cf_sstore.css_have_seal_key ? ", and exchanged "
		    "tokens, sealed" : "");
	if (gen_spawn_all(master_cur) == -1)
		fatalx("cannot start the workers");

	for (;;) {
		/* a stop first: a group-wide SIGTERM also ends the children,
		 * whose exits must not then look like crashes to respawn */
		if (sig_term) {
			sig_term = 0;
			if (!master_stopping)
				master_stop(0);
			else if (mono_ms() - stop_ms < STOP_REPEAT_MS)
				log_info("stop signal again within %d ms: the same "
				    "stop", STOP_REPEAT_MS);
			else {
				log_info("second stop signal: killing children");
				master_stop(1);
			}
		}
		if (sig_chld) {
			sig_chld = 0;
			master_reap();
		}
		if (sig_hup) {
			sig_hup = 0;
			master_reload();
		}
		if (sig_usr1) {
			sig_usr1 = 0;
			if (log_reopen() == -1)
				log_warn("reopening the log file");
			TAILQ_FOREACH(c, &master_children, c_entry)
				if (c->c_fd != -1)
					(void)ipc_send(c->c_fd, IPC_REOPEN,
					    NULL, 0);
		}
		master_tick();
		if (master_stopping && TAILQ_EMPTY(&master_children))
			break;
		/* one bridge per stdio or SSE backend: as many as they are */
		nc = 0;
		TAILQ_FOREACH(c, &master_children, c_entry)
			nc++;
		if (nc > cap) {
			cap = nc + 16;
			if ((pfd = reallocarray(pfd, cap, sizeof(*pfd))) ==
			    NULL || (cs = reallocarray(cs, cap,
			    sizeof(*cs))) == NULL)
				fatal("%s", __func__);
		}
		n = 0;
		TAILQ_FOREACH(c, &master_children, c_entry) {
			if (c->c_fd == -1)
				continue;
			pfd[n].fd = c->c_fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			cs[n++] = c;
		}
		{
			struct timespec ts;
			int ms = master_timeout();

			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (long)(ms % 1000) * 1000000;
			rc = ppoll(pfd, n, &ts, &waitmask);
		}
		if (rc == -1 && errno != EINTR)
			fatal("ppoll");
		for (i = 0; rc > 0 && i < n; i++)
			if (pfd[i].revents != 0)
				master_read_channel(cs[i]);
	}
	free(pfd);
	free(cs);
	log_info("stopped");
	if (master_cur->g_conf->cf_port_file != NULL)
		(void)unlink(master_cur->g_conf->cf_port_file);
	gen_free(master_cur, NULL);
	exit(master_exit_status);
}
