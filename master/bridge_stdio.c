/*
 * The bridge's stdio upstream: the MCP server command run on pipes in
 * its own process group, newline-delimited JSON-RPC on its stdin and
 * stdout, its stderr logged line by line.  bridge.c reaps it and calls
 * bridge_stdio_gone().
 */
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "shared/log.h"
#include "bridge_int.h"

/*
 * The server process
 */

static void
bridge_server_signal(pid_t pid, int sig)
{
	/* its own group, unless it has not run setsid() yet */
	if (kill(-pid, sig) == -1 && errno == ESRCH)
		(void)kill(pid, sig);
}

static void
bridge_server_kill(struct bridge *b, const char *why)
{
	struct timeval tv;

	if (b->b_proc.bp_pid <= 0 ||
	    (b->b_state != SRV_STARTING && b->b_state != SRV_READY))
		return;
	log_info("%s: stopping the server (pid %d): %s", b->b_name,
	    (int)b->b_proc.bp_pid, why);
	b->b_state = SRV_KILLING;
	evtimer_del(b->b_init_ev);
	bridge_server_signal(b->b_proc.bp_pid, SIGTERM);
	bridge_tv(&tv, BRIDGE_KILL_GRACE_MS);
	(void)evtimer_add(b->b_proc.bp_kill_ev, &tv);
}

static void
bridge_on_kill_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge *b = arg;

	(void)fd;
	(void)ev;
	if (b->b_proc.bp_pid <= 0)
		return;
	if (b->b_state != SRV_KILLING) {
		bridge_server_kill(b, "it closed its pipes but did not exit");
		return;
	}
	log_warnx("%s: the server (pid %d) ignored SIGTERM; killing it",
	    b->b_name, (int)b->b_proc.bp_pid);
	bridge_server_signal(b->b_proc.bp_pid, SIGKILL);
}

/*
 * The next LF-terminated line (without the LF, NUL-terminated) or NULL.
 * *scanned remembers how far the buffer is known to hold no LF, so a
 * long line arriving in small reads is not searched again and again.
 */
static char *
bridge_readline(struct evbuffer *in, size_t *scanned, size_t *lenp)
{
	struct evbuffer_ptr	 start, eol;
	size_t			 eol_len, len = evbuffer_get_length(in);
	char			*line;

	if (*scanned >= len ||
	    evbuffer_ptr_set(in, &start, *scanned, EVBUFFER_PTR_SET) == -1)
		return NULL;
	eol = evbuffer_search_eol(in, &start, &eol_len, EVBUFFER_EOL_LF);
	if (eol.pos == -1) {
		*scanned = len;
		return NULL;
	}
	*scanned = 0;
	if ((line = malloc((size_t)eol.pos + 1)) == NULL)
		return NULL;
	if (evbuffer_remove(in, line, (size_t)eol.pos) != (int)eol.pos) {
		free(line);
		return NULL;
	}
	(void)evbuffer_drain(in, eol_len);
	line[eol.pos] = '\0';
	*lenp = (size_t)eol.pos;
	return line;
}

static void
bridge_server_on_stdout(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line;
	size_t		 len;

	while ((line = bridge_readline(in, &b->b_proc.bp_out_scanned, &len)) !=
	    NULL) {
		if (len > BRIDGE_LINE_MAX) {
			free(line);
			goto overflow;
		}
		bridge_server_line(b, line, len);
		free(line);
		if (b->b_proc.bp_out != bev)
			return;
	}
	if (evbuffer_get_length(in) <= BRIDGE_LINE_MAX)
		return;
overflow:
	log_warnx("%s: the server wrote a line of more than %d bytes; "
	    "restarting it", b->b_name, BRIDGE_LINE_MAX);
	bufferevent_free(b->b_proc.bp_out);
	b->b_proc.bp_out = NULL;
	bridge_server_kill(b, "line too long");
}

/* a pipe closed: the server is probably exiting; make sure it does */
static void
bridge_server_doomed(struct bridge *b)
{
	struct timeval tv;

	if (b->b_proc.bp_pid <= 0 || b->b_state == SRV_KILLING ||
	    evtimer_pending(b->b_proc.bp_kill_ev, NULL))
		return;
	bridge_tv(&tv, BRIDGE_KILL_GRACE_MS);
	(void)evtimer_add(b->b_proc.bp_kill_ev, &tv);
}

static void
bridge_server_on_stdout_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		bufferevent_disable(bev, EV_READ);
		bridge_server_doomed(arg);
	}
}

static void
bridge_server_on_stderr(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line, buf[BRIDGE_ERRLINE_MAX];
	size_t		 len;
	int		 n;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		bridge_log_text(b, NULL, line, len);
		free(line);
	}
	/* a line with no end in sight: log it in pieces */
	while (evbuffer_get_length(in) >= sizeof(buf)) {
		if ((n = evbuffer_remove(in, buf, sizeof(buf))) <= 0)
			break;
		bridge_log_text(b, NULL, buf, (size_t)n);
	}
}

static void
bridge_server_on_stderr_event(struct bufferevent *bev, short what, void *arg)
{
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_disable(bev, EV_READ);
}

static void
bridge_server_on_stdin_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & BEV_EVENT_ERROR)
		bridge_server_doomed(arg);
}

/* in the child: become the server */
static void __attribute__((noreturn))
bridge_server_exec(const struct bridge_spec *sp, pid_t parent, int in,
    int out, int err)
{
	sigset_t	 mask;
	char *const	*e;
	int		 sig, fd, maxfd;

	/* a SIGKILLed bridge must not leave its server behind */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(127);
	(void)setsid();
	if (dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1 ||
	    dup2(err, STDERR_FILENO) == -1)
		_exit(127);
	/* nothing of the daemon's (listeners, channels) reaches it */
	if (close_range(3, ~0U, 0) == -1) {
		maxfd = (int)sysconf(_SC_OPEN_MAX);
		if (maxfd < 0 || maxfd > 65536)
			maxfd = 65536;
		for (fd = 3; fd < maxfd; fd++)
			(void)close(fd);
	}
	/* ignored signals stay ignored across exec: undo child_setup() */
	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&mask);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);
	for (e = sp->bs_env; e != NULL && *e != NULL; e++)
		if (strchr(*e, '=') != NULL && **e != '=')
			(void)putenv(*e);
	if (sp->bs_cwd != NULL && chdir(sp->bs_cwd) == -1) {
		dprintf(STDERR_FILENO, "cannot change to %s: %s\n",
		    sp->bs_cwd, strerror(errno));
		_exit(127);
	}
	execvp(sp->bs_command, sp->bs_argv);
	dprintf(STDERR_FILENO, "cannot execute %s: %s\n", sp->bs_command,
	    strerror(errno));
	_exit(127);
}

static struct bufferevent *
bridge_pipe_bev(struct bridge *b, int fd, bufferevent_data_cb readcb,
    bufferevent_event_cb eventcb)
{
	struct bufferevent *bev;

	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (bev = bufferevent_socket_new(b->b_base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		return NULL;
	}
	bufferevent_setcb(bev, readcb, NULL, eventcb, b);
	if (readcb != NULL) {
		/* a little past the cap, so an endless line is seen */
		bufferevent_setwatermark(bev, EV_READ, 0,
		    BRIDGE_LINE_MAX + 65536);
		if (bufferevent_enable(bev, EV_READ) == -1) {
			bufferevent_free(bev);
			return NULL;
		}
	}
	return bev;
}

static int
bridge_stdio_write(struct bridge *b, const char *s, size_t len)
{
	struct evbuffer *out;

	if (b->b_proc.bp_in == NULL)
		return -1;
	out = bufferevent_get_output(b->b_proc.bp_in);
	if (evbuffer_get_length(out) > BRIDGE_STDIN_MAX) {
		log_warnx("%s: the server is not reading its input",
		    b->b_name);
		return -1;
	}
	/* reserve first so the message and its newline go in together */
	if (evbuffer_expand(out, len + 1) == -1 ||
	    evbuffer_add(out, s, len) == -1 || evbuffer_add(out, "\n", 1) == -1)
		return -1;
	return 0;
}

static int
bridge_server_spawn(struct bridge *b)
{
	struct bridge_proc		*p = &b->b_proc;
	const struct bridge_spec	*sp = b->b_spec;
	struct timeval			 tv;
	sigset_t			 all, old;
	int				 in[2] = { -1, -1 };
	int				 out[2] = { -1, -1 };
	int				 err[2] = { -1, -1 };
	pid_t				 pid, self = getpid();

	b->b_started_ms = bridge_now_ms();
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1) {
		log_warn("%s: pipe", b->b_name);
		goto fail;
	}
	/* no libevent handler may run in the child before exec */
	sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		bridge_server_exec(sp, self, in[0], out[1], err[1]);
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		log_warn("%s: fork", b->b_name);
		goto fail;
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	p->bp_pid = pid;
	b->b_state = SRV_STARTING;
	b->b_exit_msg[0] = '\0';
	log_info("%s: started %s as pid %d", b->b_name, sp->bs_command,
	    (int)pid);

	p->bp_out_scanned = 0;
	p->bp_in = bridge_pipe_bev(b, in[1], NULL,
	    bridge_server_on_stdin_event);
	p->bp_out = bridge_pipe_bev(b, out[0], bridge_server_on_stdout,
	    bridge_server_on_stdout_event);
	p->bp_err = bridge_pipe_bev(b, err[0], bridge_server_on_stderr,
	    bridge_server_on_stderr_event);
	if (p->bp_in == NULL || p->bp_out == NULL || p->bp_err == NULL) {
		log_warnx("%s: cannot watch the server's pipes", b->b_name);
		bridge_server_kill(b, "out of resources");
		return 0;
	}

	if (bridge_server_hello(b) == -1) {
		bridge_server_kill(b, "cannot send initialize");
		return 0;
	}
	bridge_tv(&tv, b->b_timeout_ms);
	(void)evtimer_add(b->b_init_ev, &tv);
	return 0;

fail:
	if (in[0] != -1) {
		close(in[0]);
		close(in[1]);
	}
	if (out[0] != -1) {
		close(out[0]);
		close(out[1]);
	}
	if (err[0] != -1) {
		close(err[0]);
		close(err[1]);
	}
	return -1;
}

/* read what a dead server left in a pipe (bounded) */
static void
bridge_pipe_drain(struct bufferevent *bev)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	int		 fd = (int)bufferevent_getfd(bev);

	while (evbuffer_get_length(in) <= BRIDGE_LINE_MAX &&
	    evbuffer_read(in, fd, 65536) > 0)
		;
}

static void
bridge_pipes_free(struct bridge_proc *p)
{
	if (p->bp_in != NULL)
		bufferevent_free(p->bp_in);
	if (p->bp_out != NULL)
		bufferevent_free(p->bp_out);
	if (p->bp_err != NULL)
		bufferevent_free(p->bp_err);
	p->bp_in = p->bp_out = p->bp_err = NULL;
}

void
bridge_stdio_gone(struct bridge *b, int status)
{
	struct bridge_proc	*p = &b->b_proc;
	pid_t			 pid = p->bp_pid;
	int			 expected = b->b_state == SRV_KILLING;

	b->b_state = SRV_EXITED;
	/* what it wrote before it died still counts */
	if (p->bp_out != NULL) {
		bridge_pipe_drain(p->bp_out);
		bridge_server_on_stdout(p->bp_out, b);
	}
	if (p->bp_err != NULL) {
		bridge_pipe_drain(p->bp_err);
		bridge_server_on_stderr(p->bp_err, b);
		if (evbuffer_get_length(bufferevent_get_input(p->bp_err)) > 0) {
			char	buf[BRIDGE_ERRLINE_MAX];
			int	n;

			n = evbuffer_remove(bufferevent_get_input(p->bp_err),
			    buf, sizeof(buf));
			if (n > 0)
				bridge_log_text(b, NULL, buf, (size_t)n);
		}
	}
	/* whatever it left in its group goes with it */
	(void)kill(-pid, SIGKILL);
	if (WIFSIGNALED(status))
		(void)snprintf(b->b_exit_msg, sizeof(b->b_exit_msg),
		    "backend process exited: signal %d", WTERMSIG(status));
	else
		(void)snprintf(b->b_exit_msg, sizeof(b->b_exit_msg),
		    "backend process exited: status %d", WEXITSTATUS(status));
	if (expected)
		log_info("%s: server (pid %d): %s", b->b_name, (int)pid,
		    b->b_exit_msg);
	else
		log_warnx("%s: server (pid %d): %s", b->b_name, (int)pid,
		    b->b_exit_msg);

	bridge_pipes_free(p);
	p->bp_pid = 0;
	evtimer_del(p->bp_kill_ev);
	bridge_server_lost(b);
}

static void
bridge_stdio_init(struct bridge *b)
{
	const struct bridge_spec *sp = b->b_spec;

	if (sp->bs_command == NULL || sp->bs_argv == NULL ||
	    sp->bs_argv[0] == NULL)
		fatalx("%s: no command", b->b_name);
	if ((b->b_proc.bp_kill_ev = evtimer_new(b->b_base,
	    bridge_on_kill_deadline, b)) == NULL)
		fatalx("%s: cannot create timers", b->b_name);
}

static void
bridge_stdio_cleanup(struct bridge *b)
{
	struct bridge_proc *p = &b->b_proc;

	if (p->bp_pid > 0) {
		bridge_server_signal(p->bp_pid, SIGKILL);
		(void)waitpid(p->bp_pid, NULL, 0);
		p->bp_pid = 0;
	}
	bridge_pipes_free(p);
	event_free(p->bp_kill_ev);
}

const struct bridge_upstream bridge_stdio_upstream = {
	"not JSON-RPC on stdout", bridge_stdio_init,
	bridge_server_spawn, bridge_stdio_write, bridge_server_kill,
	bridge_stdio_cleanup
};
