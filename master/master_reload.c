/*
 * The master's reload on SIGHUP: the configuration read again becomes a
 * new generation beside the current one, which it replaces once ready
 * (or is abandoned if it is not by RELOAD_READY_MS); listeners whose
 * address stays the same are kept.
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
int
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

void
master_reload(void)
{
	struct config	*conf;
	char		 err[CONFIG_ERR_MAX];
	int		 fd, dfd;
	uint16_t	 port;
	const struct config *old = master_cur->g_conf;

	if (master_stopping)
		return;
	if (master_next != NULL) {
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
		fd = master_cur->g_listen_fd;
		port = master_cur->g_port;
	} else if ((fd = listen_open(conf->cf_listen_host,
	    conf->cf_listen_port, &port)) == -1) {
		log_warnx("reload failed, still serving the previous "
		    "configuration");
		config_free(conf);
		return;
	}
	if (master_diag_same(conf, old))
		dfd = master_cur->g_diag_fd;
	else if ((dfd = master_diag_open(conf, fd)) == -2) {
		log_warnx("reload failed, still serving the previous "
		    "configuration");
		if (fd != master_cur->g_listen_fd)
			close(fd);
		config_free(conf);
		return;
	}
	if ((master_next = gen_new(conf, fd, port)) == NULL) {
		log_warn("reload");
		if (fd != master_cur->g_listen_fd)
			close(fd);
		if (dfd != -1 && dfd != master_cur->g_diag_fd)
			close(dfd);
		config_free(conf);
		return;
	}
	master_next->g_diag_fd = dfd;
	master_next->g_deadline_ms = mono_ms() + RELOAD_READY_MS;
	if (gen_spawn_all(master_next) == -1)
		master_reload_abort("could not start the new generation");
}

int
gen_ready(const struct gen *g)
{
	const struct child *c;
	int n = 0;

	TAILQ_FOREACH(c, &master_children, c_entry) {
		if (c->c_gen != g->g_num)
			continue;
		if (c->c_state != CHILD_READY)
			return 0;
		n++;
	}
	return n == g->g_nworkers + 2 + gen_nbridges(g);
}

void
master_reload_commit(void)
{
	struct gen *old = master_cur;

	log_info("generation %u ready (%d workers); draining generation %u",
	    master_next->g_num, master_next->g_nworkers, old->g_num);
	master_drain_gen(old->g_num, old->g_conf->cf_drain_timeout_ms);
	master_cur = master_next;
	master_next = NULL;
	(void)master_write_port(master_cur->g_conf, master_cur->g_port);
	gen_free(old, master_cur);
}

void
master_reload_abort(const char *why)
{
	struct child *c;

	log_warnx("reload failed (%s); still serving generation %u", why,
	    master_cur->g_num);
	TAILQ_FOREACH(c, &master_children, c_entry)
		if (c->c_gen == master_next->g_num) {
			c->c_state = CHILD_DRAINING;
			c->c_kill_ms = 0;
			(void)kill(c->c_pid, SIGKILL);
		}
	gen_free(master_next, master_cur);
	master_next = NULL;
}
