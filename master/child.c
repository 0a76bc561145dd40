/*
 * The first steps of every child after fork: its log name, death
 * signal, signal dispositions.  The handled signals stay blocked until
 * the child has installed its own handlers (libevent's in workers), so
 * nothing reaches a handler inherited from the master.
 */
#include <sys/prctl.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "shared/log.h"
#include "master.h"

extern pid_t master_pid;

void
child_setup(const char *procname, int chan_fd)
{
	struct sigaction sa;

	char		 comm[16];

	(void)chan_fd;
	log_procinit(procname);
	/* "vmcpd-worker" / "vmcpd-keeper" in ps(1) and /proc/PID/comm */
	(void)snprintf(comm, sizeof(comm), "vmcpd-%.*s",
	    (int)strcspn(procname, " "), procname);
	(void)prctl(PR_SET_NAME, comm, 0, 0, 0);
	/* a master that dies takes its children with it: no orphans */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		fatal("prctl");
	if (getppid() != master_pid)
		exit(0);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sa.sa_handler = SIG_IGN;
	/* the master coordinates: a terminal's ^C or hangup, log reopen */
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGUSR1, &sa, NULL);
	(void)sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGQUIT, &sa, NULL);
	(void)sigaction(SIGCHLD, &sa, NULL);
}
