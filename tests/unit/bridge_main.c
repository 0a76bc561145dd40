/*
 * bridge-test: the bridge standalone, for the interop tests.
 *
 *	bridge-test [-v] [-t timeout_ms] [-C dir] [-e K=V]...
 *	    -n name -s socket -- command [arg ...]
 *	bridge-test [-v] [-t timeout_ms] -n name -s socket -u url
 *
 * The first runs a stdio server; the second (-u) speaks HTTP+SSE
 * (2024-11-05) to the server at url.
 * It plays the master: forks the bridge with a control channel (the
 * bridge runs child_setup() and bridge_main() as under vmcpd), prints
 * "ready <bridge pid>" once the bridge sends IPC_READY, turns SIGTERM
 * or SIGINT into IPC_STOP and SIGHUP into IPC_DRAIN, and exits with
 * the bridge's status once the bridge is gone and every orphan it left
 * has been reaped (it is a child subreaper, so a SIGKILLed bridge's
 * server is reparented here and its death can be observed).
 */
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "master/bridge.h"
#include "master/master.h"
#include "shared/ipc.h"
#include "shared/log.h"

#define ORPHAN_WAIT_MS	5000

pid_t master_pid;		/* child_setup() checks getppid() against it */

static volatile sig_atomic_t got_term, got_chld, got_hup;

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bridge-test [-v] [-t timeout_ms] [-C dir] "
	    "[-e K=V]... -n name -s socket -- command [arg ...]\n"
	    "       bridge-test [-v] [-t timeout_ms] -n name -s socket "
	    "-u url\n");
	exit(2);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
main(int argc, char *argv[])
{
	struct bridge_spec	 spec;
	struct sigaction	 sa;
	struct pollfd		 pfd;
	struct timespec		 ts;
	struct ipc_msg		 m;
	sigset_t		 block, empty;
	char			**env = NULL, name[80];
	size_t			 nenv = 0;
	uint64_t		 gone_ms = 0;
	pid_t			 pid, bridge;
	int			 ch, fds[2], status, rc, verbose = 0;
	int			 chan_open = 1, stop_sent = 0, exit_code = 1;

	memset(&spec, 0, sizeof(spec));
	while ((ch = getopt(argc, argv, "+C:e:n:s:t:u:v")) != -1) {
		switch (ch) {
		case 'C':
			spec.bs_cwd = optarg;
			break;
		case 'e':
			if ((env = reallocarray(env, nenv + 2,
			    sizeof(*env))) == NULL)
				return 1;
			env[nenv++] = optarg;
			env[nenv] = NULL;
			break;
		case 'n':
			spec.bs_name = optarg;
			break;
		case 's':
			spec.bs_socket = optarg;
			break;
		case 't':
			spec.bs_timeout_ms = strtoull(optarg, NULL, 10);
			break;
		case 'u':
			spec.bs_url = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (spec.bs_name == NULL || spec.bs_socket == NULL)
		usage();
	if (spec.bs_url != NULL) {
		/* as the master will: no command with a URL */
		if (argc > 0 || env != NULL || spec.bs_cwd != NULL)
			usage();
	} else {
		if (argc < 1)
			usage();
		spec.bs_command = argv[0];
		spec.bs_argv = argv;
		spec.bs_env = env;
	}

	log_init(1, "bridge-test");
	log_setverbose(verbose);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		fatal("PR_SET_CHILD_SUBREAPER");

	/* as in the master: handled signals are blocked except in ppoll */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGHUP);
	(void)sigprocmask(SIG_BLOCK, &block, NULL);
	sigemptyset(&empty);

	master_pid = getpid();
	if (ipc_pair(fds) == -1)
		fatal("socketpair");
	switch ((bridge = fork())) {
	case -1:
		fatal("fork");
	case 0:
		close(fds[0]);
		(void)snprintf(name, sizeof(name), "bridge %s", spec.bs_name);
		child_setup(name, fds[1]);
		bridge_main(&spec, fds[1]);
	default:
		break;
	}
	close(fds[1]);

	for (;;) {
		if (got_chld) {
			got_chld = 0;
			while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
				if (pid != bridge)
					continue;
				bridge = 0;
				gone_ms = now_ms();
				exit_code = WIFEXITED(status) ?
				    WEXITSTATUS(status) :
				    128 + WTERMSIG(status);
			}
			if (bridge == 0 && pid == -1 && errno == ECHILD)
				break;		/* nothing left to reap */
		}
		if (bridge == 0 && now_ms() - gone_ms > ORPHAN_WAIT_MS) {
			log_warnx("orphans still alive after %d ms",
			    ORPHAN_WAIT_MS);
			break;
		}
		if (got_term && !stop_sent && bridge != 0) {
			stop_sent = 1;
			if (!chan_open ||
			    ipc_send(fds[0], IPC_STOP, NULL, 0) == -1)
				(void)kill(bridge, SIGTERM);
		}
		if (got_hup) {
			got_hup = 0;
			if (chan_open && bridge != 0)
				(void)ipc_send(fds[0], IPC_DRAIN, NULL, 0);
		}
		pfd.fd = chan_open ? fds[0] : -1;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ts.tv_sec = 0;
		ts.tv_nsec = 100 * 1000000;
		rc = ppoll(&pfd, 1, &ts, &empty);
		if (rc == -1 && errno != EINTR)
			fatal("ppoll");
		if (rc > 0 && chan_open) {
			while ((rc = ipc_recv(fds[0], &m)) == 1)
				if (m.im_type == IPC_READY) {
					printf("ready %d\n", (int)bridge);
					fflush(stdout);
				}
			if (rc == -1) {
				chan_open = 0;
				close(fds[0]);
			}
		}
		got_chld = 1;	/* cheap: reap on every pass */
	}
	free(env);
	return exit_code;
}
