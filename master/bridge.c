/*
 * The bridge: one process per stdio or HTTP+SSE backend.  Its upstream
 * is either the MCP server command run on pipes (newline-delimited
 * JSON-RPC on stdin and stdout, stderr logged line by line) or a
 * 2024-11-05 HTTP+SSE connection to the server's URL (a GET stream
 * whose first event names the endpoint to POST messages to, every
 * server message an event on that stream).  The bridge initializes the
 * server once per process or connection, and serves it on a Unix socket
 * as a stateful Streamable HTTP endpoint (MCP 2025-11-25, Transports,
 * Streamable HTTP) that every worker reaches with libcurl.  Both upstreams
 * sit behind struct bridge_upstream; everything else is shared.
 *
 * Sessions are routing keys only: initialize is answered from the
 * server's cached InitializeResult with a fresh random session id; one
 * server process (or connection) serves every session.
 *
 * Ids.  A request written to the server gets a bridge-unique integer
 * id, and when the caller asked for progress that same integer becomes
 * its progressToken, so callers that use the same ids or tokens never
 * see each other's answers.  A request the server sends gets a
 * bridge-unique string id ("bridge-N"); the caller answers with that id
 * and the bridge writes the answer back under the server's own id.
 *
 * What the server sends is routed thus (neither upstream carries any
 * correlation for anything but responses):
 *  - a response: to the request with its id, the caller's id restored
 *    (a response after the request timed out is dropped);
 *  - notifications/progress: to the request whose token it names;
 *  - notifications/message: to the request in flight when there is
 *    exactly one, else to every GET stream;
 *  - a request (elicitation/create, sampling/createMessage,
 *    roots/list): to the only request in flight if there is one, else
 *    to the most recent in-flight tools/call, prompts/get or
 *    resources/read; with neither the server gets -32601 "no client to
 *    ask".  The bridge answers the server's ping itself;
 *  - any other notification (list_changed, resources/updated): to every
 *    GET stream of every session.
 *
 * A caller's notifications/cancelled is forwarded under the bridge id
 * and ends that request's stream without a response.  The server is
 * restarted (reconnected to) with backoff when it exits (its stream
 * ends, a GET or POST fails); requests in flight then fail, and
 * requests arriving while it is down wait for it up to the request
 * timeout.  Subscriptions and log levels set by callers do not survive
 * a restart.
 */
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "shared/ipc.h"
#include "shared/log.h"
#include "bridge_int.h"

static struct bridge	 the_bridge;

static const uint64_t	 bridge_backoff[] = { 100, 500, 2000, 10000 };

uint64_t
bridge_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
bridge_tv(struct timeval *tv, uint64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)((ms % 1000) * 1000);
}

int
bridge_streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* log up to BRIDGE_ERRLINE_MAX bytes of what a server wrote, tamed */
void
bridge_log_text(struct bridge *b, const char *what, const char *s,
    size_t len)
{
	char	buf[BRIDGE_ERRLINE_MAX + 1];
	size_t	i;

	while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == '\n'))
		len--;
	if (len > BRIDGE_ERRLINE_MAX)
		len = BRIDGE_ERRLINE_MAX;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
	buf[len] = '\0';
	if (what == NULL)
		log_info("%s: %s", b->b_name, buf);
	else
		log_warnx("%s: %s: %s", b->b_name, what, buf);
}

static void
bridge_on_init_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge *b = arg;

	(void)fd;
	(void)ev;
	if (b->b_conn.bc_sse != NULL && b->b_conn.bc_sse->ss_endpoint == NULL) {
		log_warnx("%s: no endpoint event within %llu ms", b->b_name,
		    (unsigned long long)b->b_timeout_ms);
		b->b_up->up_stop(b, "no endpoint event in time");
		return;
	}
	log_warnx("%s: no answer to initialize within %llu ms", b->b_name,
	    (unsigned long long)b->b_timeout_ms);
	b->b_up->up_stop(b, "initialize timed out");
}

/* initialize, once per server process or connection */
int
bridge_server_hello(struct bridge *b)
{
	json_t	*params, *req, *id;
	int	 rc;

	b->b_init_bid = ++b->b_seq;
	if ((id = json_integer((json_int_t)b->b_init_bid)) == NULL)
		return -1;
	params = json_pack("{s:s, s:{s:{}, s:{}, s:{s:b}}, s:{s:s, s:s}}",
	    "protocolVersion", BRIDGE_PROTOCOL_VERSION,
	    "capabilities", "elicitation", "sampling", "roots", "listChanged",
	    1, "clientInfo", "name", "vmcpd-bridge", "version", "1.0");
	req = jsonrpc_request_new(id, "initialize", params);
	json_decref(id);
	if (params == NULL || req == NULL) {
		json_decref(req);
		return -1;
	}
	rc = bridge_server_write(b, req);
	json_decref(req);
	return rc;
}

/* no server will come (draining): what waits for one fails now */
static void
bridge_breqs_fail_waiting(struct bridge *b)
{
	struct breq *r, *next;

	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_bid == 0)
			bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
			    b->b_exit_msg[0] != '\0' ? b->b_exit_msg :
			    "the bridge is stopping");
	}
}

static void
bridge_server_schedule(struct bridge *b)
{
	struct timeval	tv;
	uint64_t	delay;

	if (b->b_stopping)
		return;
	if (b->b_draining) {
		bridge_breqs_fail_waiting(b);
		return;
	}
	if (bridge_now_ms() - b->b_started_ms >= BRIDGE_HEALTHY_MS)
		b->b_restarts = 0;
	delay = bridge_backoff[b->b_restarts < 3 ? b->b_restarts : 3];
	b->b_restarts++;
	if (b->b_conn.bc_url != NULL)
		log_info("%s: reconnecting to %s in %llu ms", b->b_name,
		    b->b_conn.bc_url, (unsigned long long)delay);
	else
		log_info("%s: restarting the server in %llu ms", b->b_name,
		    (unsigned long long)delay);
	bridge_tv(&tv, delay);
	(void)evtimer_add(b->b_restart_ev, &tv);
}

static void
bridge_on_restart(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge *b = arg;

	(void)fd;
	(void)ev;
	if (b->b_stopping || b->b_state != SRV_DOWN)
		return;
	if (b->b_up->up_start(b) == -1)
		bridge_server_schedule(b);
}

/* the server is gone, b_exit_msg says why: fail what it had, restart */
void
bridge_server_lost(struct bridge *b)
{
	struct breq	*r, *next;
	struct bsrvreq	*sr;
	struct timeval	 tv;

	evtimer_del(b->b_init_ev);
	b->b_state = SRV_DOWN;
	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_bid != 0)
			bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
			    b->b_exit_msg);
	}
	/* their ids meant something to the dead server only */
	while ((sr = TAILQ_FIRST(&b->b_srvreqs)) != NULL)
		bridge_srvreq_free(b, sr);

	if (b->b_stopping) {
		bridge_tv(&tv, BRIDGE_EXIT_FLUSH_MS);
		(void)event_base_loopexit(b->b_base, &tv);
		return;
	}
	bridge_server_schedule(b);
}

static void
bridge_on_sigchld(evutil_socket_t sig, short ev, void *arg)
{
	struct bridge	*b = arg;
	pid_t		 pid;
	int		 status;

	(void)sig;
	(void)ev;
	/* the server, and (we are a subreaper) anything it orphaned */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (b->b_proc.bp_pid > 0 && pid == b->b_proc.bp_pid)
			bridge_stdio_gone(b, status);
}

/*
 * Lifecycle
 */

void
bridge_stop(struct bridge *b, const char *why)
{
	struct breq	*r;
	struct timeval	 tv;

	if (b->b_stopping)
		return;
	b->b_stopping = 1;
	log_debug("%s: stopping: %s", b->b_name, why);
	bridge_unlisten(b);
	evtimer_del(b->b_restart_ev);
	while ((r = TAILQ_FIRST(&b->b_reqs)) != NULL)
		bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
		    "the bridge is stopping");
	bridge_streams_end(b);
	if (b->b_state != SRV_DOWN) {
		/* the loop ends once it is gone (reaped) */
		b->b_up->up_stop(b, why);
		return;
	}
	bridge_tv(&tv, BRIDGE_EXIT_FLUSH_MS);
	(void)event_base_loopexit(b->b_base, &tv);
}

static void
bridge_drain(struct bridge *b)
{
	if (b->b_draining || b->b_stopping)
		return;
	b->b_draining = 1;
	log_debug("%s: draining", b->b_name);
	bridge_unlisten(b);
	evtimer_del(b->b_restart_ev);
	bridge_streams_end(b);
	if (b->b_state == SRV_DOWN)
		bridge_breqs_fail_waiting(b);
	if (b->b_nreqs == 0 && !b->b_stopping)
		bridge_stop(b, "drained");
}

/*
 * SIGTERM, SIGQUIT: what the master's DRAIN does.  A stop signal sent to
 * vmcpd's whole process group reaches the bridge beside the master's
 * DRAIN, and the workers finish their calls through it meanwhile.
 */
static void
bridge_on_signal(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	log_debug("%s: %s", ((struct bridge *)arg)->b_name,
	    sig == SIGTERM ? "SIGTERM" : "SIGQUIT");
	bridge_drain(arg);
}

static void
bridge_on_channel(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge	*b = arg;
	struct ipc_msg	 m;
	int		 rc;

	(void)ev;
	while ((rc = ipc_recv(fd, &m)) == 1) {
		switch (m.im_type) {
		case IPC_DRAIN:
			bridge_drain(b);
			break;
		case IPC_STOP:
			bridge_stop(b, "told to stop");
			break;
		case IPC_REOPEN:
			if (log_reopen() == -1)
				log_warn("reopening the log file");
			break;
		default:
			break;
		}
	}
	if (rc == -1) {
		event_del(b->b_chan_ev);
		bridge_stop(b, "the master is gone");
	}
}

static void
bridge_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge	*b = arg;
	struct bsrvreq	*sr, *next;
	uint64_t	 now = bridge_now_ms();

	(void)fd;
	(void)ev;
	bridge_sessions_expire(b, now);
	for (sr = TAILQ_FIRST(&b->b_srvreqs); sr != NULL; sr = next) {
		next = TAILQ_NEXT(sr, sr_entry);
		if (now < sr->sr_expiry_ms)
			continue;
		bridge_server_error(b, sr->sr_server_id,
		    JSONRPC_INTERNAL_ERROR, "no answer from the client");
		bridge_srvreq_free(b, sr);
	}
}

/* the server's pipes must not land on fds 0-2 */
static void
bridge_fix_stdio(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) != -1 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
}

static void
bridge_cleanup(struct bridge *b)
{
	struct bsrvreq	*sr;
	pid_t		 pid;

	b->b_stopping = 1;
	b->b_up->up_cleanup(b);
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	while (!TAILQ_EMPTY(&b->b_reqs))
		bridge_breq_fail(TAILQ_FIRST(&b->b_reqs),
		    JSONRPC_INTERNAL_ERROR, "the bridge is stopping");
	bridge_http_cleanup(b);
	while ((sr = TAILQ_FIRST(&b->b_srvreqs)) != NULL)
		bridge_srvreq_free(b, sr);
	json_decref(b->b_init_result);
	event_free(b->b_chan_ev);
	event_free(b->b_sig_term);
	event_free(b->b_sig_quit);
	event_free(b->b_sig_chld);
	event_free(b->b_tick_ev);
	event_free(b->b_restart_ev);
	event_free(b->b_init_ev);
	event_base_free(b->b_base);
}

void
bridge_main(const struct bridge_spec *sp, int chan_fd)
{
	struct bridge	*b = &the_bridge;
	struct timeval	 tv;
	sigset_t	 mask;

	memset(b, 0, sizeof(*b));
	b->b_spec = sp;
	b->b_name = sp->bs_name != NULL ? sp->bs_name : "bridge";
	b->b_timeout_ms = sp->bs_timeout_ms > 0 ? sp->bs_timeout_ms :
	    BRIDGE_TIMEOUT_DEFAULT;
	TAILQ_INIT(&b->b_reqs);
	TAILQ_INIT(&b->b_srvreqs);
	b->b_up = sp->bs_url != NULL ? &bridge_sse_upstream :
	    &bridge_stdio_upstream;
	bridge_fix_stdio();
	/* what the server orphans is reparented to us and reaped */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);

	if ((b->b_base = event_base_new()) == NULL)
		fatalx("%s: event_base_new failed", b->b_name);
	b->b_up->up_init(b);
	if ((b->b_sig_term = evsignal_new(b->b_base, SIGTERM,
	    bridge_on_signal, b)) == NULL ||
	    evsignal_add(b->b_sig_term, NULL) == -1 ||
	    (b->b_sig_quit = evsignal_new(b->b_base, SIGQUIT,
	    bridge_on_signal, b)) == NULL ||
	    evsignal_add(b->b_sig_quit, NULL) == -1 ||
	    (b->b_sig_chld = evsignal_new(b->b_base, SIGCHLD,
	    bridge_on_sigchld, b)) == NULL ||
	    evsignal_add(b->b_sig_chld, NULL) == -1)
		fatalx("%s: cannot handle signals", b->b_name);
	sigemptyset(&mask);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);

	bridge_http_init(b);

	if ((b->b_tick_ev = event_new(b->b_base, -1, EV_PERSIST,
	    bridge_on_tick, b)) == NULL ||
	    (b->b_restart_ev = evtimer_new(b->b_base, bridge_on_restart,
	    b)) == NULL ||
	    (b->b_init_ev = evtimer_new(b->b_base, bridge_on_init_timeout,
	    b)) == NULL)
		fatalx("%s: cannot create timers", b->b_name);
	bridge_tv(&tv, BRIDGE_TICK_MS);
	(void)evtimer_add(b->b_tick_ev, &tv);
	if ((b->b_chan_ev = event_new(b->b_base, chan_fd, EV_READ | EV_PERSIST,
	    bridge_on_channel, b)) == NULL ||
	    event_add(b->b_chan_ev, NULL) == -1)
		fatalx("%s: cannot watch the master channel", b->b_name);

	if (b->b_up->up_start(b) == -1)
		bridge_server_schedule(b);
	(void)ipc_send(chan_fd, IPC_READY, NULL, 0);
	log_debug("%s: serving on %s", b->b_name, sp->bs_socket);

	(void)event_base_dispatch(b->b_base);

	log_debug("%s: exiting", b->b_name);
	bridge_cleanup(b);
	exit(0);
}
