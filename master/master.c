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

#define RELOAD_READY_MS	15000	/* a new generation must be ready by then */
#define KILL_GRACE_MS	2000	/* after the drain deadline, SIGKILL */
/*
 * A stop signal again within this of the first is the same stop, not an
 * operator's second one: sent to the whole process group, a signal also
 * reaches a wrapper in that group that forwards it to us (npm run).
 */
#define STOP_REPEAT_MS	1000
#define HEALTHY_MS	10000	/* a worker up this long is not looping */

enum child_kind {
	CHILD_WORKER,
	CHILD_KEEPER,
	CHILD_BRIDGE,		/* slot: the backend's index */
	CHILD_BUILDER		/* the view builder */
};

enum child_state {
	CHILD_STARTING,
	CHILD_READY,
	CHILD_DRAINING
};

struct child {
	TAILQ_ENTRY(child)	 c_entry;
	pid_t			 c_pid;
	int			 c_fd;		/* channel; -1 after EOF */
	enum child_kind		 c_kind;
	enum child_state	 c_state;
	int			 c_slot;	/* worker slot, -1 keeper */
	unsigned int		 c_gen;
	uint64_t		 c_started_ms;
	uint64_t		 c_kill_ms;	/* SIGKILL then; 0 = never */
	int			 c_killed;	/* SIGKILLed as an operator asked */
};

/* respawn bookkeeping of one slot of a generation */
struct slot {
	pid_t		 sl_pid;	/* 0 when not running */
	int		 sl_crashes;	/* consecutive quick deaths */
	uint64_t	 sl_respawn_ms;	/* 0 = nothing scheduled */
	int		 sl_fatal;	/* exited deliberately: leave dead */
};

struct gen {
	unsigned int	 g_num;
	struct config	*g_conf;
	int		 g_listen_fd;
	uint16_t	 g_port;
	int		 g_diag_fd;	/* diagnostics listener; -1: none */
	struct diag_slot *g_stats;	/* shared with the workers */
	int		 g_nworkers;
	struct slot	*g_workers;
	struct slot	 g_keeper;
	struct slot	 g_builder;
	struct slot	*g_bridges;	/* one per backend; used: stdio, sse */
	uint64_t	 g_deadline_ms;	/* pending reload must be ready by */
};

pid_t master_pid;

static TAILQ_HEAD(, child) children = TAILQ_HEAD_INITIALIZER(children);
static struct gen	*cur, *next;
static unsigned int	 gen_seq;
static int		 debug_mode;
static int		 stopping;
static uint64_t		 stop_ms;	/* when the stop began */
static int		 exit_status;

static volatile sig_atomic_t sig_chld, sig_hup, sig_term, sig_usr1;

static void	 master_signal(int);

static const char *
master_kind_name(enum child_kind kind)
{
	switch (kind) {
	case CHILD_KEEPER:
		return "keeper";
	case CHILD_BRIDGE:
		return "bridge";
	case CHILD_BUILDER:
		return "builder";
	default:
		return "worker";
	}
}
static struct gen *gen_new(struct config *, int listen_fd, uint16_t port);
static void	 gen_free(struct gen *, const struct gen *keep);
static int	 gen_spawn_all(struct gen *);
static int	 master_spawn(struct gen *, enum child_kind, int slot);
static void	 master_reap(void);
static void	 master_reload(void);
static void	 master_reload_commit(void);
static void	 master_reload_abort(const char *why);
static void	 master_stop(int);
static void	 master_drain_gen(unsigned int gen, uint64_t drain_ms);
static void	 master_read_channel(struct child *);
static void	 master_tick(void);
static int	 master_workers_alive(const struct gen *);
static int	 master_write_port(const struct config *, uint16_t);
static int	 master_check_store(const struct config *);

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

static int
master_nworkers(const struct config *conf)
{
	long n;

	if (conf->cf_workers > 0)
		return conf->cf_workers;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (n > 64 ? 64 : (int)n);
}

static struct gen *
gen_new(struct config *conf, int listen_fd, uint16_t port)
{
	struct gen *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->g_num = ++gen_seq;
	g->g_conf = conf;
	g->g_listen_fd = listen_fd;
	g->g_port = port;
	g->g_diag_fd = -1;
	g->g_nworkers = master_nworkers(conf);
	/* before any fork of this generation, so its workers share it; the
	 * slot after the workers' is the builder's */
	g->g_stats = mmap(NULL, diag_stats_size(conf, g->g_nworkers + 1),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->g_stats == MAP_FAILED ||
	    (g->g_workers = calloc(g->g_nworkers, sizeof(struct slot))) ==
	    NULL || (g->g_bridges = calloc(conf->cf_nbackends + 1,
	    sizeof(struct slot))) == NULL) {
		if (g->g_stats != MAP_FAILED)
			(void)munmap(g->g_stats, diag_stats_size(conf,
			    g->g_nworkers + 1));
		free(g->g_workers);
		free(g);
		return NULL;
	}
	if (conf->cf_nbackends == 0)
		log_info("no backends configured (backends: []): serving an "
		    "empty view; add backends to %s and reload", conf->cf_file);
	return g;
}

/* g's config and listeners, but those keep (NULL: none) goes on with */
static void
gen_free(struct gen *g, const struct gen *keep)
{
	if (g == NULL)
		return;
	if (g->g_listen_fd != -1 &&
	    (keep == NULL || keep->g_listen_fd != g->g_listen_fd))
		close(g->g_listen_fd);
	if (g->g_diag_fd != -1 &&
	    (keep == NULL || keep->g_diag_fd != g->g_diag_fd))
		close(g->g_diag_fd);
	(void)munmap(g->g_stats,
	    diag_stats_size(g->g_conf, g->g_nworkers + 1));
	config_free(g->g_conf);
	free(g->g_workers);
	free(g->g_bridges);
	free(g);
}

/* the backends reached through a bridge process: stdio and legacy SSE */
static int
gen_bridged(const struct gen *g, size_t i)
{
	return g->g_conf->cf_backends[i].cb_transport == TRANSPORT_STDIO ||
	    g->g_conf->cf_backends[i].cb_transport == TRANSPORT_SSE;
}

static int
gen_nbridges(const struct gen *g)
{
	size_t	i;
	int	n = 0;

	for (i = 0; i < g->g_conf->cf_nbackends; i++)
		n += gen_bridged(g, i);
	return n;
}

static void __attribute__((noreturn))
master_bridge_main(struct gen *g, int slot, int chan_fd)
{
	const struct config_backend	*be = &g->g_conf->cf_backends[slot];
	struct bridge_spec		 bs;
	char				 path[256];

	if (paths_bridge_socket(g->g_conf, be->cb_name, path,
	    sizeof(path)) == -1)
		fatalx("%s: the state directory path is too long for a "
		    "socket", be->cb_name);
	memset(&bs, 0, sizeof(bs));
	bs.bs_name = be->cb_name;
	if (be->cb_transport == TRANSPORT_SSE)
		bs.bs_url = be->cb_url;
	else {
		bs.bs_command = be->cb_command;
		bs.bs_argv = be->cb_argv;
		bs.bs_env = be->cb_env;
		bs.bs_cwd = be->cb_cwd;
	}
	bs.bs_socket = path;
	bs.bs_timeout_ms = be->cb_timeout_ms;
	bridge_main(&bs, chan_fd);
}

static int
gen_spawn_all(struct gen *g)
{
	size_t	b;
	int	i;

	if (master_spawn(g, CHILD_KEEPER, -1) == -1 ||
	    master_spawn(g, CHILD_BUILDER, -1) == -1)
		return -1;
	for (b = 0; b < g->g_conf->cf_nbackends; b++)
		if (gen_bridged(g, b) &&
		    master_spawn(g, CHILD_BRIDGE, (int)b) == -1)
			return -1;
	for (i = 0; i < g->g_nworkers; i++)
		if (master_spawn(g, CHILD_WORKER, i) == -1)
			return -1;
	return 0;
}

/*
 * In a new child of g: the listeners of the other generation closed, and
 * g's own too unless it is a worker, which accepts on them.
 */
static void
master_child_listeners(const struct gen *g, enum child_kind kind)
{
	const struct gen	*o = cur == g ? next : cur;

	if (o != NULL && o->g_listen_fd != g->g_listen_fd)
		close(o->g_listen_fd);
	if (o != NULL && o->g_diag_fd != -1 && o->g_diag_fd != g->g_diag_fd)
		close(o->g_diag_fd);
	if (kind == CHILD_WORKER)
		return;
	close(g->g_listen_fd);
	if (g->g_diag_fd != -1)
		close(g->g_diag_fd);
}

static int
master_spawn(struct gen *g, enum child_kind kind, int slot)
{
	struct child	*c, *o;
	struct slot	*sl;
	struct diag_slot *ds;
	char		 name[64];
	int		 fds[2];
	pid_t		 pid;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("%s", __func__);
		return -1;
	}
	if (ipc_pair(fds) == -1) {
		log_warn("%s: socketpair", __func__);
		free(c);
		return -1;
	}
	switch ((pid = fork())) {
	case -1:
		log_warn("%s: fork", __func__);
		close(fds[0]);
		close(fds[1]);
		free(c);
		return -1;
	case 0:
		free(c);	/* the master's bookkeeping, not the child's */
		close(fds[0]);
		/* nothing of the master's other children leaks into this one */
		TAILQ_FOREACH(o, &children, c_entry)
			if (o->c_fd != -1)
				close(o->c_fd);
		master_child_listeners(g, kind);
		if (kind == CHILD_KEEPER) {
			(void)snprintf(name, sizeof(name), "keeper g%u",
			    g->g_num);
			child_setup(name, fds[1]);
			keeper_main(g->g_conf, g->g_num, fds[1]);
		}
		if (kind == CHILD_BUILDER) {
			(void)snprintf(name, sizeof(name), "builder g%u",
			    g->g_num);
			child_setup(name, fds[1]);
			builder_main(g->g_conf, g->g_num, g->g_stats,
			    g->g_nworkers, fds[1]);
		}
		if (kind == CHILD_BRIDGE) {
			(void)snprintf(name, sizeof(name), "bridge %s g%u",
			    g->g_conf->cf_backends[slot].cb_name, g->g_num);
			child_setup(name, fds[1]);
			master_bridge_main(g, slot, fds[1]);
		}
		(void)snprintf(name, sizeof(name), "worker %d g%u", slot,
		    g->g_num);
		child_setup(name, fds[1]);
		worker_main(g->g_conf, slot, g->g_num, g->g_listen_fd,
		    g->g_diag_fd, g->g_stats, g->g_nworkers, fds[1]);
	default:
		break;
	}
	close(fds[1]);
	c->c_pid = pid;
	c->c_fd = fds[0];
	c->c_kind = kind;
	c->c_state = CHILD_STARTING;
	c->c_slot = slot;
	c->c_gen = g->g_num;
	c->c_started_ms = mono_ms();
	TAILQ_INSERT_TAIL(&children, c, c_entry);
	if (kind == CHILD_KEEPER || kind == CHILD_BUILDER) {
		sl = kind == CHILD_KEEPER ? &g->g_keeper : &g->g_builder;
		sl->sl_pid = pid;
		sl->sl_respawn_ms = 0;
	} else if (kind == CHILD_BRIDGE) {
		g->g_bridges[slot].sl_pid = pid;
		g->g_bridges[slot].sl_respawn_ms = 0;
	} else {
		g->g_workers[slot].sl_pid = pid;
		g->g_workers[slot].sl_respawn_ms = 0;
		ds = diag_stats_slot(g->g_stats, g->g_conf, slot);
		if (__atomic_load_n(&ds->ds_pid, __ATOMIC_RELAXED) != 0)
			__atomic_fetch_add(&ds->ds_restarts, 1,
			    __ATOMIC_RELAXED);
		__atomic_store_n(&ds->ds_pid, (uint64_t)pid, __ATOMIC_RELAXED);
	}
	log_debug("started %s %d of generation %u as pid %d",
	    master_kind_name(kind), slot, g->g_num, (int)pid);
	return 0;
}

static struct slot *
gen_slot(struct gen *g, const struct child *c)
{
	if (g == NULL || g->g_num != c->c_gen)
		return NULL;
	if (c->c_kind == CHILD_KEEPER)
		return &g->g_keeper;
	if (c->c_kind == CHILD_BUILDER)
		return &g->g_builder;
	if (c->c_kind == CHILD_BRIDGE)
		return c->c_slot >= 0 &&
		    (size_t)c->c_slot < g->g_conf->cf_nbackends ?
		    &g->g_bridges[c->c_slot] : NULL;
	if (c->c_slot < 0 || c->c_slot >= g->g_nworkers)
		return NULL;
	return &g->g_workers[c->c_slot];
}

static int
master_workers_alive(const struct gen *g)
{
	int i, n = 0;

	for (i = 0; i < g->g_nworkers; i++)
		if (g->g_workers[i].sl_pid != 0 ||
		    g->g_workers[i].sl_respawn_ms != 0)
			n++;
	return n;
}

static void
master_child_gone(struct child *c, int status)
{
	struct slot	*sl;
	const char	*what = master_kind_name(c->c_kind);
	uint64_t	 now = mono_ms(), delay;
	int		 fatal_exit, crashed;
	static const uint64_t backoff[] = { 0, 100, 500, 2000, 10000 };

	fatal_exit = WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FATAL;
	crashed = WIFSIGNALED(status) ||
	    (WIFEXITED(status) && WEXITSTATUS(status) != 0);
	/* asked to go (a stop, a drain), it went: SIGTERM's default is a
	 * way to go too */
	if ((stopping || c->c_state == CHILD_DRAINING) && (!crashed ||
	    (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)))
		log_info("%s %d (pid %d, generation %u) stopped", what,
		    c->c_slot, (int)c->c_pid, c->c_gen);
	else if (c->c_killed)
		log_info("%s %d (pid %d, generation %u) killed", what,
		    c->c_slot, (int)c->c_pid, c->c_gen);
	else if (WIFSIGNALED(status))
		log_warnx("%s %d (pid %d, generation %u) killed by signal %d",
		    what, c->c_slot, (int)c->c_pid, c->c_gen,
		    WTERMSIG(status));
	else if (crashed)
		log_warnx("%s %d (pid %d, generation %u) exited with status %d",
		    what, c->c_slot, (int)c->c_pid, c->c_gen,
		    WEXITSTATUS(status));
	else
		log_debug("%s %d (pid %d, generation %u) exited", what,
		    c->c_slot, (int)c->c_pid, c->c_gen);

	if (next != NULL && c->c_gen == next->g_num) {
		master_reload_abort("a child of the new generation died "
		    "before it was ready");
		return;
	}
	if ((sl = gen_slot(cur, c)) == NULL || sl->sl_pid != c->c_pid)
		return;		/* an old generation's child: not respawned */
	sl->sl_pid = 0;
	if (stopping || c->c_state == CHILD_DRAINING)
		return;
	if (fatal_exit) {
		log_warnx("%s %d exited deliberately (fatal error); not "
		    "respawning it", what, c->c_slot);
		sl->sl_fatal = 1;
		if (c->c_kind == CHILD_WORKER && master_workers_alive(cur) == 0) {
			log_warnx("no worker left; stopping");
			exit_status = 1;
			master_stop(0);
		}
		return;
	}
	/* a clean exit nobody asked for (a stray SIGTERM) is no crash, nor
	 * a SIGKILL (an operator's, the OOM killer's): not the child's own
	 * doing, so it is back at once, however often */
	if (crashed && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) &&
	    now - c->c_started_ms < HEALTHY_MS)
		sl->sl_crashes++;
	else
		sl->sl_crashes = 0;
	if (!crashed)
		log_info("%s %d (pid %d) exited unasked; respawning it", what,
		    c->c_slot, (int)c->c_pid);
	delay = backoff[sl->sl_crashes < 4 ? sl->sl_crashes : 4];
	if (delay > 0)
		log_warnx("%s %d is crash-looping; respawning in %llu ms", what,
		    c->c_slot, (unsigned long long)delay);
	sl->sl_respawn_ms = now + delay;
	if (sl->sl_respawn_ms == 0)
		sl->sl_respawn_ms = 1;
}

static void
master_reap(void)
{
	struct child	*c;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(c, &children, c_entry)
			if (c->c_pid == pid)
				break;
		if (c == NULL)
			continue;
		TAILQ_REMOVE(&children, c, c_entry);
		if (c->c_fd != -1)
			close(c->c_fd);
		master_child_gone(c, status);
		free(c);
	}
}

static void
master_drain_gen(unsigned int gen, uint64_t drain_ms)
{
	struct child	*c;
	uint64_t	 now = mono_ms();

	TAILQ_FOREACH(c, &children, c_entry) {
		if (c->c_gen != gen || c->c_state == CHILD_DRAINING)
			continue;
		c->c_state = CHILD_DRAINING;
		c->c_kill_ms = now + drain_ms + KILL_GRACE_MS;
		if (c->c_fd == -1 || ipc_send(c->c_fd, IPC_DRAIN,
		    stopping ? IPC_DRAIN_STOP : NULL, stopping ?
		    strlen(IPC_DRAIN_STOP) : 0) == -1)
			(void)kill(c->c_pid, SIGTERM);
	}
}

/*
 * Whether two bound TCP sockets share a port and overlap in address (the
 * same address, or either a wildcard): SO_REUSEPORT would let the two
 * bind together and the kernel would split connections between them.
 */
static int
master_fds_overlap(int a, int b)
{
	struct sockaddr_storage	 sa, sb;
	socklen_t		 la = sizeof(sa), lb = sizeof(sb);
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (getsockname(a, (struct sockaddr *)&sa, &la) == -1 ||
	    getsockname(b, (struct sockaddr *)&sb, &lb) == -1 ||
	    sa.ss_family != sb.ss_family)
		return 0;
	if (sa.ss_family == AF_INET) {
		a4 = (const struct sockaddr_in *)&sa;
		b4 = (const struct sockaddr_in *)&sb;
		return a4->sin_port == b4->sin_port &&
		    (a4->sin_addr.s_addr == b4->sin_addr.s_addr ||
		    a4->sin_addr.s_addr == htonl(INADDR_ANY) ||
		    b4->sin_addr.s_addr == htonl(INADDR_ANY));
	}
	if (sa.ss_family == AF_INET6) {
		a6 = (const struct sockaddr_in6 *)&sa;
		b6 = (const struct sockaddr_in6 *)&sb;
		return a6->sin6_port == b6->sin6_port &&
		    (IN6_ARE_ADDR_EQUAL(&a6->sin6_addr, &b6->sin6_addr) ||
		    IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr) ||
		    IN6_IS_ADDR_UNSPECIFIED(&b6->sin6_addr));
	}
	return 0;
}

/*
 * conf's diagnostics listener: its fd, -1 for none, -2 on failure.
 * One overlapping the main listener (main_fd: its port drawn by the
 * kernel for port 0, or another name of its address) is refused.
 */
static int
master_diag_open(const struct config *conf, int main_fd)
{
	uint16_t	port;
	int		fd;

	if (conf->cf_diag_host == NULL)
		return -1;
	if ((fd = listen_open(conf->cf_diag_host, conf->cf_diag_port,
	    &port)) == -1)
		return -2;
	if (master_fds_overlap(fd, main_fd)) {
		log_warnx("daemon.diagnostics %s:%u: the main listener's "
		    "address", conf->cf_diag_host, port);
		close(fd);
		return -2;
	}
	log_info("diagnostics (/status, /metrics) on %s:%u",
	    conf->cf_diag_host, port);
	return fd;
}

/* a reload keeps the diagnostics listener when its address is the same */
static int
master_diag_same(const struct config *a, const struct config *b)
{
	if (a->cf_diag_host == NULL || b->cf_diag_host == NULL)
		return a->cf_diag_host == b->cf_diag_host;
	return strcmp(a->cf_diag_host, b->cf_diag_host) == 0 &&
	    a->cf_diag_port == b->cf_diag_port;
}

static void
master_reload(void)
{
	struct config	*conf;
	char		 err[CONFIG_ERR_MAX];
	int		 fd, dfd;
	uint16_t	 port;
	const struct config *old = cur->g_conf;

	if (stopping)
		return;
	if (next != NULL) {
		log_warnx("reload: a reload is already in progress");
		return;
	}
	log_info("reloading configuration from %s", old->cf_file);
	if (strcmp(old->cf_file, CONFIG_EMBEDDED_NAME) == 0)
		conf = config_load_buffer(CONFIG_EMBEDDED_NAME, config_embedded,
		    config_embedded_len, err, sizeof(err));
	else
		conf = config_load_file(old->cf_file, err, sizeof(err));
	if (conf == NULL) {
		log_warnx("reload failed, still serving the previous "
		    "configuration: %s", err);
		return;
	}
	if ((conf->cf_user == NULL) != (old->cf_user == NULL) ||
	    (conf->cf_user != NULL && strcmp(conf->cf_user, old->cf_user))) {
		log_warnx("reload failed: daemon.user cannot change on reload; "
		    "restart vmcpd");
		config_free(conf);
		return;
	}
	if (master_check_store(conf) == -1 ||
	    master_check_audit(conf, 1) == -1) {
		log_warnx("reload failed, still serving the previous "
		    "configuration");
		config_free(conf);
		return;
	}
	if (strcmp(conf->cf_listen_host, old->cf_listen_host) == 0 &&
	    conf->cf_listen_port == old->cf_listen_port) {
		fd = cur->g_listen_fd;
		port = cur->g_port;
	} else if ((fd = listen_open(conf->cf_listen_host,
	    conf->cf_listen_port, &port)) == -1) {
		log_warnx("reload failed, still serving the previous "
		    "configuration");
		config_free(conf);
		return;
	}
	if (master_diag_same(conf, old))
		dfd = cur->g_diag_fd;
	else if ((dfd = master_diag_open(conf, fd)) == -2) {
		log_warnx("reload failed, still serving the previous "
		    "configuration");
		if (fd != cur->g_listen_fd)
			close(fd);
		config_free(conf);
		return;
	}
	if ((next = gen_new(conf, fd, port)) == NULL) {
		log_warn("reload");
		if (fd != cur->g_listen_fd)
			close(fd);
		if (dfd != -1 && dfd != cur->g_diag_fd)
			close(dfd);
		config_free(conf);
		return;
	}
	next->g_diag_fd = dfd;
	next->g_deadline_ms = mono_ms() + RELOAD_READY_MS;
	if (gen_spawn_all(next) == -1)
		master_reload_abort("could not start the new generation");
}

static int
gen_ready(const struct gen *g)
{
	const struct child *c;
	int n = 0;

	TAILQ_FOREACH(c, &children, c_entry) {
		if (c->c_gen != g->g_num)
			continue;
		if (c->c_state != CHILD_READY)
			return 0;
		n++;
	}
	return n == g->g_nworkers + 2 + gen_nbridges(g);
}

static void
master_reload_commit(void)
{
	struct gen *old = cur;

	log_info("generation %u ready (%d workers); draining generation %u",
	    next->g_num, next->g_nworkers, old->g_num);
	master_drain_gen(old->g_num, old->g_conf->cf_drain_timeout_ms);
	cur = next;
	next = NULL;
	(void)master_write_port(cur->g_conf, cur->g_port);
	gen_free(old, cur);
}

static void
master_reload_abort(const char *why)
{
	struct child *c;

	log_warnx("reload failed (%s); still serving generation %u", why,
	    cur->g_num);
	TAILQ_FOREACH(c, &children, c_entry)
		if (c->c_gen == next->g_num) {
			c->c_state = CHILD_DRAINING;
			c->c_kill_ms = 0;
			(void)kill(c->c_pid, SIGKILL);
		}
	gen_free(next, cur);
	next = NULL;
}

static void
master_stop(int hard)
{
	struct child *c;

	if (hard) {
		TAILQ_FOREACH(c, &children, c_entry) {
			c->c_killed = 1;
			(void)kill(c->c_pid, SIGKILL);
		}
		return;
	}
	if (stopping)
		return;
	stopping = 1;
	stop_ms = mono_ms();
	log_info("stopping");
	if (next != NULL) {
		/* no failure: the generation a reload is starting stops too */
		log_info("generation %u, not ready yet, stops too", next->g_num);
		master_drain_gen(next->g_num, next->g_conf->cf_drain_timeout_ms);
		gen_free(next, cur);
		next = NULL;
	}
	/* workers of a generation already draining: it is a stop now */
	TAILQ_FOREACH(c, &children, c_entry)
		if (c->c_kind == CHILD_WORKER && c->c_state ==
		    CHILD_DRAINING && c->c_fd != -1)
			(void)ipc_send(c->c_fd, IPC_DRAIN, IPC_DRAIN_STOP,
			    strlen(IPC_DRAIN_STOP));
	master_drain_gen(cur->g_num, cur->g_conf->cf_drain_timeout_ms);
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
	if (next != NULL && c->c_gen == next->g_num && gen_ready(next))
		master_reload_commit();
}

/* timers: respawns, kill deadlines, a pending reload's deadline */
static void
master_tick(void)
{
	struct child	*c;
	uint64_t	 now = mono_ms();
	int		 i;

	TAILQ_FOREACH(c, &children, c_entry)
		if (c->c_kill_ms != 0 && now >= c->c_kill_ms) {
			log_warnx("pid %d did not finish draining in time; "
			    "killing it", (int)c->c_pid);
			(void)kill(c->c_pid, SIGKILL);
			c->c_kill_ms = 0;
		}
	if (next != NULL && now >= next->g_deadline_ms)
		master_reload_abort("the new generation was not ready in time");
	if (stopping)
		return;
	if (cur->g_keeper.sl_respawn_ms != 0 &&
	    now >= cur->g_keeper.sl_respawn_ms)
		(void)master_spawn(cur, CHILD_KEEPER, -1);
	if (cur->g_builder.sl_respawn_ms != 0 &&
	    now >= cur->g_builder.sl_respawn_ms)
		if (master_spawn(cur, CHILD_BUILDER, -1) == -1)
			cur->g_builder.sl_respawn_ms = now + 1000;
	for (i = 0; i < cur->g_nworkers; i++)
		if (cur->g_workers[i].sl_respawn_ms != 0 &&
		    now >= cur->g_workers[i].sl_respawn_ms)
			if (master_spawn(cur, CHILD_WORKER, i) == -1)
				cur->g_workers[i].sl_respawn_ms = now + 1000;
	for (i = 0; (size_t)i < cur->g_conf->cf_nbackends; i++)
		if (cur->g_bridges[i].sl_respawn_ms != 0 &&
		    now >= cur->g_bridges[i].sl_respawn_ms)
			if (master_spawn(cur, CHILD_BRIDGE, i) == -1)
				cur->g_bridges[i].sl_respawn_ms = now + 1000;
}

static int
master_timeout(void)
{
	const struct child	*c;
	uint64_t		 now = mono_ms(), t = now + 1000;
	int			 i;

	TAILQ_FOREACH(c, &children, c_entry)
		if (c->c_kill_ms != 0 && c->c_kill_ms < t)
			t = c->c_kill_ms;
	if (next != NULL && next->g_deadline_ms < t)
		t = next->g_deadline_ms;
	if (cur->g_keeper.sl_respawn_ms != 0 && cur->g_keeper.sl_respawn_ms < t)
		t = cur->g_keeper.sl_respawn_ms;
	if (cur->g_builder.sl_respawn_ms != 0 &&
	    cur->g_builder.sl_respawn_ms < t)
		t = cur->g_builder.sl_respawn_ms;
	for (i = 0; i < cur->g_nworkers; i++)
		if (cur->g_workers[i].sl_respawn_ms != 0 &&
		    cur->g_workers[i].sl_respawn_ms < t)
			t = cur->g_workers[i].sl_respawn_ms;
	for (i = 0; (size_t)i < cur->g_conf->cf_nbackends; i++)
		if (cur->g_bridges[i].sl_respawn_ms != 0 &&
		    cur->g_bridges[i].sl_respawn_ms < t)
			t = cur->g_bridges[i].sl_respawn_ms;
	return t <= now ? 0 : (int)(t - now);
}

static int
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
static int
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
	if ((cur = gen_new(conf, fd, port)) == NULL)
		fatal("%s", __func__);
	cur->g_diag_fd = dfd;
	log_info("vmcpd %s listening on %s:%u with %d workers, state in %s",
	    VMCPD_VERSION, conf->cf_listen_host, port, cur->g_nworkers,
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
	if (gen_spawn_all(cur) == -1)
		fatalx("cannot start the workers");

	for (;;) {
		/* a stop first: a group-wide SIGTERM also ends the children,
		 * whose exits must not then look like crashes to respawn */
		if (sig_term) {
			sig_term = 0;
			if (!stopping)
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
			TAILQ_FOREACH(c, &children, c_entry)
				if (c->c_fd != -1)
					(void)ipc_send(c->c_fd, IPC_REOPEN,
					    NULL, 0);
		}
		master_tick();
		if (stopping && TAILQ_EMPTY(&children))
			break;
		/* one bridge per stdio or SSE backend: as many as they are */
		nc = 0;
		TAILQ_FOREACH(c, &children, c_entry)
			nc++;
		if (nc > cap) {
			cap = nc + 16;
			if ((pfd = reallocarray(pfd, cap, sizeof(*pfd))) ==
			    NULL || (cs = reallocarray(cs, cap,
			    sizeof(*cs))) == NULL)
				fatal("%s", __func__);
		}
		n = 0;
		TAILQ_FOREACH(c, &children, c_entry) {
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
	if (cur->g_conf->cf_port_file != NULL)
		(void)unlink(cur->g_conf->cf_port_file);
	gen_free(cur, NULL);
	exit(exit_status);
}
