/*
 * The worker's Redis connection: worker/redis/redis.h.  Redis answers the
 * commands of one connection in order, so the commands waiting are a
 * FIFO and one timer watches the oldest: when it is REDIS_TIMEOUT_MS
 * old the connection is dropped, which answers every waiting command
 * with an error (hiredis calls their callbacks with no reply).
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libevent.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_sub.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

struct redis_cmd {
	TAILQ_ENTRY(redis_cmd)	 rc_entry;
	redis_cb		 rc_cb;		/* NULL: cancelled */
	void			*rc_arg;
	uint64_t		 rc_deadline;	/* monotonic ms */
	uint64_t		 rc_sent;	/* monotonic ms */
};

static struct {
	struct worker		*r_w;
	redisAsyncContext	*r_ac;
	int			 r_up;		/* connected */
	int			 r_closing;	/* redis_free() */
	int			 r_again;	/* redis_reconnect() */
	const char		*r_why;		/* why the commands fail */
	struct event		*r_retry;	/* reconnect */
	struct event		*r_timer;	/* connect, then the oldest */
	uint64_t		 r_backoff_ms;
	int			 r_warned;	/* the loss is logged */
	char			 r_ip[NI_MAXHOST];
	int			 r_port;
	TAILQ_HEAD(, redis_cmd)	 r_cmds;	/* sent, in order */
	const char		*r_scripts[REDIS_SCRIPTS];
	int			 r_nscripts;
	redis_inval_cb		 r_inval;	/* client-side caching */
	redis_track_cb		 r_track;
	long long		 r_track_id;	/* the subscription's */
	char			 r_track_name[REDIS_SUB_NAME_LEN];
	uintptr_t		 r_track_gen;	/* tracking asked */
	int			 r_track_strange; /* not the subscription */
	int			 r_tracking;	/* asked on this connection */
	int			 r_track_warned;
	uint64_t		 r_proved;	/* an answered command's send */
	int			 r_persist_watch; /* asked at each connect */
	char			 r_persist_aof[16]; /* appendonly, "": ? */
	char			 r_persist_said[320]; /* the last verdict */
} rds = { .r_cmds = TAILQ_HEAD_INITIALIZER(rds.r_cmds) };

static void	redis_connect(void);
static void	redis_track_off(void);

static uint64_t
redis_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
redis_arm(struct event *ev, uint64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	(void)evtimer_add(ev, &tv);
}

/* the connection is gone (hiredis frees it): try again after a while */
static void
redis_lost(const char *why)
{
	rds.r_ac = NULL;
	rds.r_up = 0;
	redis_track_off();
	(void)evtimer_del(rds.r_timer);
	if (rds.r_closing || evtimer_pending(rds.r_retry, NULL))
		return;
	if (rds.r_again) {
		/* redis_reconnect(): Redis is there, no backoff */
		rds.r_again = 0;
		redis_arm(rds.r_retry, 0);
		return;
	}
	if (!rds.r_warned) {
		rds.r_warned = 1;
		log_warnx("redis %s:%d: %s (trying again)", rds.r_ip,
		    rds.r_port, why);
	}
	redis_arm(rds.r_retry, rds.r_backoff_ms);
	rds.r_backoff_ms *= 2;
	if (rds.r_backoff_ms > REDIS_BACKOFF_MAX_MS)
		rds.r_backoff_ms = REDIS_BACKOFF_MAX_MS;
}

/* drop the connection now: every waiting command is answered (error) */
static void
redis_drop(const char *why)
{
	redisAsyncContext *ac = rds.r_ac;

	if (ac == NULL)
		return;
	rds.r_why = why;
	redis_lost(why);
	redisAsyncFree(ac);
	rds.r_why = NULL;
}

static void
redis_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct redis_cmd	*c;
	uint64_t		 now = redis_now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	if (!rds.r_up) {
		redis_drop("connect timed out");
		return;
	}
	if ((c = TAILQ_FIRST(&rds.r_cmds)) == NULL)
		return;
	if (c->rc_deadline > now) {
		redis_arm(rds.r_timer, c->rc_deadline - now);
		return;
	}
	redis_drop("no answer in time");
}

static void
redis_on_retry(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	redis_connect();
}

static void
redis_on_reply(redisAsyncContext *ac, void *r, void *priv)
{
	struct redis_cmd	*c = priv, *next;
	const redisReply	*reply = r;
	uint64_t		 now;

	TAILQ_REMOVE(&rds.r_cmds, c, rc_entry);
	/* Redis was alive when it was sent, if on this connection */
	if (reply != NULL && ac == rds.r_ac && c->rc_sent > rds.r_proved)
		rds.r_proved = c->rc_sent;
	if (c->rc_cb != NULL) {
		if (reply != NULL)
			c->rc_cb(c->rc_arg, reply, NULL);
		else
			c->rc_cb(c->rc_arg, NULL, rds.r_why != NULL ?
			    rds.r_why : ac->errstr[0] != '\0' ? ac->errstr :
			    "connection lost");
	}
	free(c);
	if (!rds.r_up || rds.r_ac != ac)
		return;
	/* the timer follows the oldest command */
	if ((next = TAILQ_FIRST(&rds.r_cmds)) == NULL)
		(void)evtimer_del(rds.r_timer);
	else if (!evtimer_pending(rds.r_timer, NULL)) {
		now = redis_now_ms();
		redis_arm(rds.r_timer, next->rc_deadline > now ?
		    next->rc_deadline - now : 0);
	}
}

/* AUTH, SELECT, SCRIPT LOAD: a refusal is logged, the connection dropped */
static void
redis_on_setup(redisAsyncContext *ac, void *r, void *priv)
{
	const redisReply *reply = r;

	if (reply == NULL || reply->type != REDIS_REPLY_ERROR)
		return;
	log_warnx("redis %s:%d: %s refused: %.*s", rds.r_ip, rds.r_port,
	    (const char *)priv, (int)reply->len, reply->str);
	rds.r_warned = 1;
	rds.r_up = 0;
	redisAsyncDisconnect(ac);
}

static void
redis_script_load(const char *text)
{
	const char	*argv[3] = { "SCRIPT", "LOAD", text };
	size_t		 lens[3] = { 6, 4, strlen(text) };

	(void)redisAsyncCommandArgv(rds.r_ac, redis_on_setup, "SCRIPT LOAD",
	    3, argv, lens);
}

/*
 * Client-side caching (redis_sub.h): what was tracked is to be trusted no
 * more, if anything was.
 */
static void
redis_track_off(void)
{
	if (!rds.r_tracking)
		return;
	rds.r_tracking = 0;
	rds.r_track(0);
}

/* caching refused: said once, and off until asked for again */
static void
redis_track_refused(const char *what, const redisReply *reply)
{
	if (!rds.r_track_warned) {
		rds.r_track_warned = 1;
		log_warnx("redis %s:%d: %s refused (sessions are checked "
		    "on each request): %.*s", rds.r_ip, rds.r_port, what,
		    (int)reply->len, reply->str);
	}
	redis_track_off();
}

/*
 * CLIENT CACHING's answer: refused (an ACL), the reads that follow are
 * not tracked, and this comes before their answers.
 */
static void
redis_on_caching(redisAsyncContext *ac, void *r, void *priv)
{
	const redisReply *reply = r;

	(void)priv;
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR &&
	    ac == rds.r_ac)
		redis_track_refused("CLIENT CACHING", reply);
}

/*
 * CLIENT TRACKING's answer, then CLIENT LIST ID's (priv: the asking's
 * number; an answer to an earlier one is past).  Refused (an old
 * Redis, an ACL), caching stays off on this connection, which goes on
 * as before, until asked for again.  The id redirected to is not the
 * subscription's connection (a Redis restarted, whose ids started
 * again, while that connection is not yet seen lost): off, and the
 * subscription is made again, once (its name refused, say, it stays
 * off).
 */
static void
redis_on_track(redisAsyncContext *ac, void *r, void *priv)
{
	const redisReply	*reply = r;
	char			 want[REDIS_SUB_NAME_LEN + 8];

	if (reply == NULL || ac != rds.r_ac || (uintptr_t)priv !=
	    rds.r_track_gen || !rds.r_tracking)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		redis_track_refused("CLIENT TRACKING", reply);
		return;
	}
	if (reply->type != REDIS_REPLY_STRING)
		return;		/* +OK */
	(void)snprintf(want, sizeof(want), " name=%s ", rds.r_track_name);
	if (strstr(reply->str, want) != NULL) {
		rds.r_track_strange = 0;
		return;
	}
	redis_track_off();
	if (rds.r_track_strange++ > 0) {
		if (rds.r_track_strange == 2)
			log_warnx("redis %s:%d: client %lld is not this "
			    "worker's subscription again (sessions are "
			    "checked on each request)", rds.r_ip, rds.r_port,
			    rds.r_track_id);
		return;
	}
	log_warnx("redis %s:%d: client %lld is not this worker's "
	    "subscription; subscribing again", rds.r_ip, rds.r_port,
	    rds.r_track_id);
	redis_sub_reset();
}

/*
 * Ask for tracking, redirected to the subscription's connection: the
 * commands sent after this one are tracked if Redis accepts it (it
 * answers in order, so a refusal comes before their answers).
 */
static void
redis_track_on(void)
{
	char	id[24];

	if (rds.r_track == NULL || !rds.r_up || rds.r_ac == NULL ||
	    rds.r_track_id <= 0)
		return;
	/* what was read before, redirected elsewhere or not, is void */
	redis_track_off();
	(void)snprintf(id, sizeof(id), "%lld", rds.r_track_id);
	rds.r_track_gen++;
	if (redisAsyncCommand(rds.r_ac, redis_on_track,
	    (void *)rds.r_track_gen, "CLIENT TRACKING on REDIRECT %s OPTIN",
	    id) != REDIS_OK || redisAsyncCommand(rds.r_ac, redis_on_track,
	    (void *)rds.r_track_gen, "CLIENT LIST ID %s", id) != REDIS_OK)
		return;
	rds.r_tracking = 1;
	rds.r_track(1);
}

/*
 * CONFIG GET appendonly's answer (kept), then CONFIG GET save's: the
 * verdict said when it is news.  A refusal (CONFIG renamed, an ACL)
 * says nothing: vmcpd cannot know, and the manual says what to run.
 */
static void
redis_on_persist(redisAsyncContext *ac, void *r, void *priv)
{
	const char	*v = redis_config_value(r);
	char		 why[sizeof(rds.r_persist_said)];
	int		 rc;

	if (ac != rds.r_ac || r == NULL)
		return;
	if (priv == NULL) {
		(void)snprintf(rds.r_persist_aof, sizeof(rds.r_persist_aof),
		    "%s", v != NULL ? v : "");
		return;
	}
	rc = redis_persist_verdict(rds.r_persist_aof[0] != '\0' ?
	    rds.r_persist_aof : NULL, v, why, sizeof(why));
	if (rc == -1)
		log_debug("redis %s:%d: whether it persists is unknown "
		    "(CONFIG GET refused)", rds.r_ip, rds.r_port);
	else if (strcmp(rc == 1 ? why : "yes", rds.r_persist_said) != 0) {
		if (rc == 1)
			log_warnx("redis %s:%d: %s", rds.r_ip, rds.r_port, why);
		else
			log_info("redis %s:%d: persists (appendonly yes)",
			    rds.r_ip, rds.r_port);
		(void)snprintf(rds.r_persist_said,
		    sizeof(rds.r_persist_said), "%s", rc == 1 ? why : "yes");
	}
}

void
redis_persist_watch(void)
{
	rds.r_persist_watch = 1;
}

static void
redis_on_connect(const redisAsyncContext *ac, int status)
{
	const struct config_sstore	*ss = &rds.r_w->w_conf->cf_sstore;
	char				 db[16];
	int				 i;

	if (ac != rds.r_ac)
		return;
	if (status != REDIS_OK) {
		/* hiredis frees the context */
		redis_lost(ac->errstr[0] != '\0' ? ac->errstr :
		    "cannot connect");
		return;
	}
	(void)evtimer_del(rds.r_timer);
	rds.r_up = 1;
	rds.r_backoff_ms = REDIS_BACKOFF_MIN_MS;
	if (rds.r_warned)
		log_info("redis %s:%d: connected", rds.r_ip, rds.r_port);
	rds.r_warned = 0;
	/* sent first, so before any command; the password never logged */
	if (ss->css_password != NULL)
		(void)redisAsyncCommand(rds.r_ac, redis_on_setup, "AUTH",
		    "AUTH %s", ss->css_password);
	if (ss->css_db != 0) {
		(void)snprintf(db, sizeof(db), "%u", ss->css_db);
		(void)redisAsyncCommand(rds.r_ac, redis_on_setup, "SELECT",
		    "SELECT %s", db);
	}
	for (i = 0; i < rds.r_nscripts; i++)
		redis_script_load(rds.r_scripts[i]);
	redis_track_on();
	if (rds.r_persist_watch) {
		rds.r_persist_aof[0] = '\0';
		(void)redisAsyncCommand(rds.r_ac, redis_on_persist, NULL,
		    "CONFIG GET appendonly");
		(void)redisAsyncCommand(rds.r_ac, redis_on_persist, "save",
		    "CONFIG GET save");
	}
}

static void
redis_on_disconnect(const redisAsyncContext *ac, int status)
{
	(void)status;
	if (ac != rds.r_ac)
		return;
	redis_lost(ac->errstr[0] != '\0' ? ac->errstr : "connection closed");
}

static void
redis_connect(void)
{
	redisAsyncContext *ac;

	if (rds.r_ac != NULL || rds.r_closing)
		return;
	ac = redisAsyncConnect(rds.r_ip, rds.r_port);
	if (ac == NULL || ac->err) {
		rds.r_ac = NULL;
		redis_lost(ac != NULL ? ac->errstr : "out of memory");
		if (ac != NULL)
			redisAsyncFree(ac);
		return;
	}
	if (redisLibeventAttach(ac, rds.r_w->w_base) != REDIS_OK) {
		redisAsyncFree(ac);
		redis_lost("cannot watch the connection");
		return;
	}
	rds.r_ac = ac;
	(void)redisAsyncSetConnectCallback(ac, redis_on_connect);
	(void)redisAsyncSetDisconnectCallback(ac, redis_on_disconnect);
	redis_arm(rds.r_timer, REDIS_CONNECT_MS);
}

/*
 * The address is resolved once, when the worker starts (before its
 * loop runs): hiredis would resolve a name at every connect, blocking.
 */
static int
redis_resolve(const char *host, uint16_t port)
{
	struct addrinfo	 hints, *res;
	int		 rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		log_warnx("redis %s: %s", host, gai_strerror(rc));
		return -1;
	}
	rc = getnameinfo(res->ai_addr, res->ai_addrlen, rds.r_ip,
	    sizeof(rds.r_ip), NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	if (rc != 0) {
		log_warnx("redis %s: %s", host, gai_strerror(rc));
		return -1;
	}
	rds.r_port = port;
	return 0;
}

int
redis_init(struct worker *w)
{
	const struct config_sstore *ss = &w->w_conf->cf_sstore;

	if (ss->css_provider != CONFIG_SSTORE_REDIS || ss->css_host == NULL)
		return -1;
	rds.r_w = w;
	rds.r_backoff_ms = REDIS_BACKOFF_MIN_MS;
	if ((rds.r_retry = evtimer_new(w->w_base, redis_on_retry, NULL)) ==
	    NULL || (rds.r_timer = evtimer_new(w->w_base, redis_on_timer,
	    NULL)) == NULL)
		return -1;
	if (redis_resolve(ss->css_host, ss->css_port) == -1) {
		/*
		 * Not tried again: hiredis would resolve the name at each
		 * connect, on the loop.  Every command fails (a rate limit
		 * fails open) until a reload starts new workers.
		 */
		log_warnx("redis: %s does not resolve: not connecting until "
		    "a reload", ss->css_host);
		return -1;
	}
	redis_connect();
	return 0;
}

void
redis_free(void)
{
	struct redis_cmd *c;

	rds.r_closing = 1;
	TAILQ_FOREACH(c, &rds.r_cmds, rc_entry)
		c->rc_cb = NULL;
	redis_drop("shutting down");
	if (rds.r_retry != NULL)
		event_free(rds.r_retry);
	if (rds.r_timer != NULL)
		event_free(rds.r_timer);
	rds.r_retry = rds.r_timer = NULL;
}

/* the address resolved at start (redis_sub.c connects there too) */
int
redis_address(const char **ip, int *port)
{
	if (rds.r_w == NULL || rds.r_ip[0] == '\0')
		return -1;
	*ip = rds.r_ip;
	*port = rds.r_port;
	return 0;
}

int
redis_up(void)
{
	return rds.r_up;
}

struct redis_cmd *
redis_command(int argc, const char **argv, const size_t *lens,
    redis_cb cb, void *arg)
{
	struct redis_cmd *c;

	if (!rds.r_up || rds.r_ac == NULL)
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->rc_cb = cb;
	c->rc_arg = arg;
	c->rc_sent = redis_now_ms();
	c->rc_deadline = c->rc_sent + REDIS_TIMEOUT_MS;
	if (redisAsyncCommandArgv(rds.r_ac, redis_on_reply, c, argc, argv,
	    lens) != REDIS_OK) {
		free(c);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&rds.r_cmds, c, rc_entry);
	if (!evtimer_pending(rds.r_timer, NULL))
		redis_arm(rds.r_timer, REDIS_TIMEOUT_MS);
	return c;
}

struct redis_cmd *
redis_send(struct redis_args *a, redis_cb cb, void *arg)
{
	if (a->ra_over)
		return NULL;
	return redis_command(a->ra_argc, a->ra_argv, a->ra_lens, cb, arg);
}

void
redis_cancel(struct redis_cmd *c)
{
	if (c != NULL)
		c->rc_cb = NULL;
}

int
redis_script_add(const char *text)
{
	if (rds.r_nscripts == REDIS_SCRIPTS)
		return -1;
	rds.r_scripts[rds.r_nscripts++] = text;
	if (rds.r_up && rds.r_ac != NULL)
		redis_script_load(text);
	return 0;
}

void
redis_track_init(redis_inval_cb inval, redis_track_cb track)
{
	rds.r_inval = inval;
	rds.r_track = track;
}

int
redis_fresh(uint64_t ms)
{
	return rds.r_up && rds.r_proved != 0 &&
	    redis_now_ms() - rds.r_proved < ms;
}

int
redis_track_wanted(void)
{
	return rds.r_track != NULL;
}

/* the subscription (re)subscribed with connection id, or is lost (0) */
void
redis_track_redirect(long long id, const char *name)
{
	if (rds.r_track == NULL || id == rds.r_track_id)
		return;
	rds.r_track_id = id;
	(void)snprintf(rds.r_track_name, sizeof(rds.r_track_name), "%s",
	    name != NULL ? name : "");
	if (id <= 0)
		redis_track_off();
	else
		redis_track_on();
}

void
redis_track_inval(const char *key, size_t len)
{
	if (rds.r_inval != NULL)
		rds.r_inval(key, len);
}

struct redis_cmd *
redis_send_tracked(struct redis_args *a, redis_cb cb, void *arg,
    int *tracked)
{
	static const char	*argv[3] = { "CLIENT", "CACHING", "yes" };
	static const size_t	 lens[3] = { 6, 7, 3 };

	*tracked = 0;
	if (a->ra_over)
		return NULL;
	/* OPTIN: CLIENT CACHING yes makes the next command's reads tracked */
	if (rds.r_tracking && rds.r_up && rds.r_ac != NULL &&
	    redisAsyncCommandArgv(rds.r_ac, redis_on_caching, NULL, 3, argv,
	    lens) == REDIS_OK)
		*tracked = 1;
	return redis_send(a, cb, arg);
}

void
redis_reconnect(void)
{
	if (!rds.r_up || rds.r_ac == NULL)
		return;
	rds.r_up = 0;
	rds.r_again = 1;
	redisAsyncDisconnect(rds.r_ac);
}

/* each user's name and the end of its line, and when it last logged */
static struct {
	const char	*ru_name;
	const char	*ru_tail;
	time_t		 ru_logged;
} redis_users[REDIS_USER_COUNT] = {
	[REDIS_USER_SESSION] = { "session store", "", 0 },
	[REDIS_USER_HANDLE] = { "workflow handles", "", 0 },
	[REDIS_USER_HEALTH] = { "circuit breakers", "; each node keeps its own",
	    0 },
	[REDIS_USER_PEND] = { "pending requests", "", 0 },
	[REDIS_USER_VERDICT] = { "health verdicts",
	    "; each node goes by its own probes", 0 },
	[REDIS_USER_TOKEN] = { "exchanged tokens", "", 0 },
	[REDIS_USER_BSESSION] = { "backend sessions",
	    "; each node opens its own", 0 },
	[REDIS_USER_TASK] = { "tasks", "", 0 },
	[REDIS_USER_LINK] = { "linked accounts", "", 0 },
	[REDIS_USER_PIN] = { "pinned definitions",
	    "; this node goes by its own copy", 0 },
};

const char *
redis_failure(const redisReply *reply, const char *err)
{
	if (err == NULL && reply != NULL && reply->type == REDIS_REPLY_ERROR) {
		err = reply->str;
		/* flushed (SCRIPT FLUSH): loaded again on reconnect */
		if (strncmp(err, "NOSCRIPT", 8) == 0)
			redis_reconnect();
	}
	diag_count_redis_error(worker_self());	/* the builder's too */
	return err != NULL ? err : "an answer not understood";
}

void
redis_failed(enum redis_user u, const char *what, const redisReply *reply,
    const char *err)
{
	err = redis_failure(reply, err);
	if (!redis_log_due(u))
		return;
	log_warnx("%s (redis): %s%s%s%s", redis_users[u].ru_name,
	    what != NULL ? what : "", what != NULL ? ": " : "", err,
	    redis_users[u].ru_tail);
}

const char *
redis_user_name(enum redis_user u)
{
	return redis_users[u].ru_name;
}

int
redis_log_due(enum redis_user u)
{
	time_t	now = time(NULL);

	if (now == redis_users[u].ru_logged)
		return 0;
	redis_users[u].ru_logged = now;
	return 1;
}
