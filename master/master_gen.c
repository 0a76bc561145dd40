/*
 * The master's generations and their children: a generation is one
 * configuration with its listeners and its slots (workers, keeper, view
 * builder, bridges); fork them, reap them, respawn what crashes (with
 * backoff when it crash-loops, never after a deliberate fatal exit),
 * drain an old generation.
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

static unsigned int	 gen_seq;

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
static int
master_nworkers(const struct config *conf)
{
	long n;

	if (conf->cf_workers > 0)
		return conf->cf_workers;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (n > 64 ? 64 : (int)n);
}

struct gen *
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
void
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

int
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

int
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
	const struct gen	*o = master_cur == g ? master_next : master_cur;

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

int
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
		TAILQ_FOREACH(o, &master_children, c_entry)
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
	TAILQ_INSERT_TAIL(&master_children, c, c_entry);
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
	if ((master_stopping || c->c_state == CHILD_DRAINING) && (!crashed ||
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

	if (master_next != NULL && c->c_gen == master_next->g_num) {
		master_reload_abort("a child of the new generation died "
		    "before it was ready");
		return;
	}
	if ((sl = gen_slot(master_cur, c)) == NULL || sl->sl_pid != c->c_pid)
		return;		/* an old generation's child: not respawned */
	sl->sl_pid = 0;
	if (master_stopping || c->c_state == CHILD_DRAINING)
		return;
	if (fatal_exit) {
		log_warnx("%s %d exited deliberately (fatal error); not "
		    "respawning it", what, c->c_slot);
		sl->sl_fatal = 1;
		if (c->c_kind == CHILD_WORKER && master_workers_alive(master_cur) == 0) {
			log_warnx("no worker left; stopping");
			master_exit_status = 1;
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

void
master_reap(void)
{
	struct child	*c;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(c, &master_children, c_entry)
			if (c->c_pid == pid)
				break;
		if (c == NULL)
			continue;
		TAILQ_REMOVE(&master_children, c, c_entry);
		if (c->c_fd != -1)
			close(c->c_fd);
		master_child_gone(c, status);
		free(c);
	}
}

void
master_drain_gen(unsigned int gen, uint64_t drain_ms)
{
	struct child	*c;
	uint64_t	 now = mono_ms();

	TAILQ_FOREACH(c, &master_children, c_entry) {
		if (c->c_gen != gen || c->c_state == CHILD_DRAINING)
			continue;
		c->c_state = CHILD_DRAINING;
		c->c_kill_ms = now + drain_ms + KILL_GRACE_MS;
		if (c->c_fd == -1 || ipc_send(c->c_fd, IPC_DRAIN,
		    master_stopping ? IPC_DRAIN_STOP : NULL, master_stopping ?
		    strlen(IPC_DRAIN_STOP) : 0) == -1)
			(void)kill(c->c_pid, SIGTERM);
	}
}
