/*
 * One maker per record across the nodes, the process's side
 * (worker/redis/redis_flight.h; the scripts and their answer are pure, in
 * redis_codec.c): the read-or-lock, polled while another node makes
 * the record, and the write after.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <openssl/rand.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_flight.h"
#include "worker/process/process.h"

#define REDIS_FLIGHT_KEY_MAX	512

struct redis_flight {
	TAILQ_ENTRY(redis_flight) rf_entry;
	char			 rf_key[REDIS_FLIGHT_KEY_MAX];
	char			 rf_lock[REDIS_FLIGHT_KEY_MAX +
				    REDIS_FLIGHT_LOCK_MAX];
	struct redis_cmd	*rf_cmd;
	struct event		*rf_timer;	/* the next poll */
	uint64_t		 rf_deadline;	/* monotonic ms */
	uint64_t		 rf_lock_ms;
	uint64_t		 rf_wait_ms;
	enum redis_user		 rf_user;
	const char		*rf_what;
	redis_flight_cb		 rf_cb;
	void			*rf_arg;
};

static struct {
	struct worker		*fl_w;
	int			 fl_on;
	int			 fl_closed;	/* redis_flight_free() */
	char			 fl_holder[33];	/* this process's lock value */
	TAILQ_HEAD(, redis_flight) fl_fetches;
} FL = { .fl_fetches = TAILQ_HEAD_INITIALIZER(FL.fl_fetches) };

static uint64_t
redis_flight_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
redis_flight_init(struct worker *w)
{
	uint8_t	 r[16];
	size_t	 i;

	if (FL.fl_on || w->w_conf->cf_sstore.css_provider !=
	    CONFIG_SSTORE_REDIS || RAND_bytes(r, sizeof(r)) != 1)
		return;
	for (i = 0; i < sizeof(r); i++)
		(void)snprintf(FL.fl_holder + 2 * i, 3, "%02x", r[i]);
	FL.fl_w = w;
	FL.fl_on = 1;
	(void)redis_script_add(redis_flight_get_lua);
	(void)redis_script_add(redis_flight_done_lua);
}

static void
redis_flight_end(struct redis_flight *rf, enum redis_flight_got kind,
    const char *val, size_t len, uint64_t ttl_ms)
{
	TAILQ_REMOVE(&FL.fl_fetches, rf, rf_entry);
	rf->rf_cb(rf->rf_arg, kind, val, len, ttl_ms);
	event_free(rf->rf_timer);
	free(rf);
}

static void
redis_flight_on_get(void *arg, const redisReply *reply, const char *err)
{
	struct redis_flight	*rf = arg;
	struct timeval		 tv = { 0, REDIS_FLIGHT_POLL_MS * 1000 };
	const char		*val;
	size_t			 len;
	uint64_t		 ttl;
	enum redis_flight_got	 kind;

	rf->rf_cmd = NULL;
	kind = err != NULL ? REDIS_FLIGHT_ERROR : redis_flight_answer(reply,
	    &val, &len, &ttl);
	switch (kind) {
	case REDIS_FLIGHT_ERROR:
		redis_failed(rf->rf_user, rf->rf_what, reply, err);
		redis_flight_end(rf, REDIS_FLIGHT_LOCAL, NULL, 0, 0);
		return;
	case REDIS_FLIGHT_BUSY:
		if (redis_flight_now() >= rf->rf_deadline) {
			if (redis_log_due(rf->rf_user))
				log_warnx("%s (redis): another node's did not "
				    "come in %llu s: made here",
				    redis_user_name(rf->rf_user),
				    (unsigned long long)rf->rf_wait_ms / 1000);
			redis_flight_end(rf, REDIS_FLIGHT_LOCAL, NULL, 0, 0);
		} else
			(void)evtimer_add(rf->rf_timer, &tv);
		return;
	case REDIS_FLIGHT_HIT:
		redis_flight_end(rf, kind, val, len, ttl);
		return;
	default:
		redis_flight_end(rf, kind, NULL, 0, 0);
		return;
	}
}

/* the read-or-lock script: 0, or -1 (not sent) */
static int
redis_flight_send(struct redis_flight *rf)
{
	struct redis_args a;

	redis_args_evalsha(&a, redis_flight_get_lua, 2);
	redis_args_push(&a, rf->rf_key);
	redis_args_push(&a, rf->rf_lock);
	redis_args_push(&a, FL.fl_holder);
	redis_args_push_u64(&a, rf->rf_lock_ms);
	if ((rf->rf_cmd = redis_send(&a, redis_flight_on_get, rf)) == NULL) {
		redis_failed(rf->rf_user, rf->rf_what, NULL, "not connected");
		return -1;
	}
	return 0;
}

static void
redis_flight_on_poll(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	if (redis_flight_send(arg) == -1)
		redis_flight_end(arg, REDIS_FLIGHT_LOCAL, NULL, 0, 0);
}

/* the key and its lock's: 0, or -1 (too long) */
static int
redis_flight_keys(const char *key, char *k, char *lk)
{
	int n;

	n = snprintf(k, REDIS_FLIGHT_KEY_MAX, "%s", key);
	if (n < 0 || n >= REDIS_FLIGHT_KEY_MAX)
		return -1;
	(void)snprintf(lk, REDIS_FLIGHT_KEY_MAX + REDIS_FLIGHT_LOCK_MAX,
	    "%s:lock", key);
	return 0;
}

struct redis_flight *
redis_flight_fetch(const char *key, uint64_t lock_ms, uint64_t wait_ms,
    enum redis_user user, const char *what, redis_flight_cb cb, void *arg)
{
	struct redis_flight	*rf;

	if (!FL.fl_on)
		return NULL;
	if (!redis_up()) {
		redis_failed(user, what, NULL, "not connected");
		return NULL;
	}
	if ((rf = calloc(1, sizeof(*rf))) == NULL)
		return NULL;
	rf->rf_lock_ms = lock_ms;
	rf->rf_wait_ms = wait_ms;
	rf->rf_user = user;
	rf->rf_what = what;
	if (redis_flight_keys(key, rf->rf_key, rf->rf_lock) == -1 ||
	    (rf->rf_timer = evtimer_new(FL.fl_w->w_base,
	    redis_flight_on_poll, rf)) == NULL ||
	    redis_flight_send(rf) == -1) {
		if (rf->rf_timer != NULL)
			event_free(rf->rf_timer);
		free(rf);
		return NULL;
	}
	rf->rf_cb = cb;
	rf->rf_arg = arg;
	rf->rf_deadline = redis_flight_now() + wait_ms;
	TAILQ_INSERT_TAIL(&FL.fl_fetches, rf, rf_entry);
	return rf;
}

void
redis_flight_cancel(struct redis_flight *rf)
{
	/* after redis_flight_free() every fetch is gone already */
	if (rf == NULL || FL.fl_closed)
		return;
	redis_cancel(rf->rf_cmd);
	TAILQ_REMOVE(&FL.fl_fetches, rf, rf_entry);
	event_free(rf->rf_timer);
	free(rf);
}

struct redis_flight_write {
	enum redis_user	 fw_user;
	const char	*fw_what;
};

static void
redis_flight_on_done(void *arg, const redisReply *reply, const char *err)
{
	const struct redis_flight_write *fw = arg;

	if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_INTEGER)
		redis_failed(fw->fw_user, fw->fw_what, reply, err);
}

void
redis_flight_done(const char *key, const char *val, size_t len,
    uint64_t ttl_ms, enum redis_user user, const char *what)
{
	/* one per user, as its name: constant for the callback */
	static struct redis_flight_write writes[REDIS_USER_COUNT];
	struct redis_args	 a;
	char			 k[REDIS_FLIGHT_KEY_MAX];
	char			 lk[REDIS_FLIGHT_KEY_MAX +
				    REDIS_FLIGHT_LOCK_MAX];

	if (!FL.fl_on || (unsigned)user >= REDIS_USER_COUNT ||
	    redis_flight_keys(key, k, lk) == -1)
		return;
	writes[user].fw_user = user;
	writes[user].fw_what = what;
	redis_args_evalsha(&a, redis_flight_done_lua, 2);
	redis_args_push(&a, k);
	redis_args_push(&a, lk);
	redis_args_pushn(&a, val != NULL ? val : "", val != NULL ? len : 0);
	redis_args_push_u64(&a, ttl_ms > 0 ? ttl_ms : 1);
	redis_args_push(&a, FL.fl_holder);
	if (redis_send(&a, redis_flight_on_done, &writes[user]) == NULL)
		redis_failed(user, what, NULL, "not connected");
}

void
redis_flight_free(void)
{
	struct redis_flight *rf;

	while ((rf = TAILQ_FIRST(&FL.fl_fetches)) != NULL)
		redis_flight_cancel(rf);
	FL.fl_on = 0;
	FL.fl_closed = 1;
}
