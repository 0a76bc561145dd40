/*
 * Driver of tests/interop/pins_ctl.test.mjs's Redis case:
 * worker/state/pin_redis.c against a real Redis (argv[1] its port,
 * argv[2] a state directory) on one event loop as the builder runs it.
 * The test put in Redis, before, what other nodes wrote for backend
 * weather: tool b pinned at hash 3..3, tool c's change 5..5 rejected,
 * and the decision stamp at 1.  Here: tool a is pinned first (it goes
 * to Redis), tool b is pinned at 2..2 (Redis's pin wins and comes back
 * into the host's copy), the first poll brings c's rejection into the
 * host's copy and moves the host's decision stamp and sends tool e,
 * which this host pinned before it shared its pins; then tool d's
 * change 7..7 is noticed and approved here (pin_decide()), which goes
 * to Redis; then, another node having seen d change again, a word on
 * a change Redis no longer holds is not written, and Redis's record
 * comes into the host's copy.  The test then reads Redis.  One line a
 * step; exit 0 if every step went as it should.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/pin_db.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/redis/redis.h"
#include "worker/state/pin_store.h"
#include "drive_redis.h"

static struct worker	 w;
static struct event	*tick;
static int		 step;

/* weather's tool name at hash c..c (and change n..n if n) */
static void
drive_rec(struct pin_rec *rec, const char *name, char c, char n)
{
	memset(rec, 0, sizeof(*rec));
	(void)snprintf(rec->pr_backend, sizeof(rec->pr_backend), "weather");
	(void)snprintf(rec->pr_name, sizeof(rec->pr_name), "%s", name);
	rec->pr_kind = PIN_TOOL;
	memset(rec->pr_hash, c, PIN_HASH_LEN);
	rec->pr_pinned_ms = store_now_ms();
	rec->pr_state = n ? PIN_PENDING : PIN_PINNED;
	if (n)
		memset(rec->pr_new, n, PIN_HASH_LEN);
}

/* the host's copy of weather's tool name: its state and hash's digit */
static int
drive_host(const char *name, enum pin_state st, char c)
{
	struct pin_rec	rec;
	int		ok;

	if (pin_db_get(w.w_store, "weather", PIN_TOOL, name, &rec) != 0)
		return 0;
	ok = rec.pr_state == st && rec.pr_hash[0] == c;
	pin_rec_clear(&rec);
	return ok;
}

/* as pin.c writes: the host's copy, then pin_remote */
static void
drive_write(const struct pin_rec *rec)
{
	drive_check(pin_db_put(w.w_store, rec) == 0, "written here");
	pin_remote->pr_put(&w, rec);
}

static void
drive_on_reply(void *arg, const redisReply *reply, const char *err)
{
	(void)arg;
	drive_check(err == NULL && reply != NULL, "written in Redis");
}

/* rec written in Redis as another node would */
static void
drive_hset(const struct pin_rec *rec)
{
	const char	*argv[4];
	size_t		 lens[4];
	char		 key[256], field[PIN_NAME_MAX + 8];
	char		*data;

	(void)snprintf(key, sizeof(key), "%spin:%s",
	    w.w_conf->cf_sstore.css_prefix, rec->pr_backend);
	(void)snprintf(field, sizeof(field), "tool|%s", rec->pr_name);
	if ((data = pin_rec_encode(rec, &lens[3])) == NULL)
		return;
	argv[0] = "HSET";
	argv[1] = key;
	argv[2] = field;
	argv[3] = data;
	lens[0] = 4;
	lens[1] = strlen(key);
	lens[2] = strlen(field);
	drive_check(redis_command(4, argv, lens, drive_on_reply, NULL) !=
	    NULL, "HSET sent");
	free(data);
}

static void
drive_next(void)
{
	struct pin_rec	 rec;
	struct timeval	 tv = { 0, 500000 };

	switch (step++) {
	case 0:
		drive_check(pin_remote != NULL, "pin_remote installed");
		if (pin_remote == NULL)
			goto out;
		drive_rec(&rec, "a", '1', 0);
		drive_write(&rec);
		drive_rec(&rec, "b", '2', 0);
		drive_write(&rec);
		break;
	case 1:
		drive_check(drive_host("b", PIN_PINNED, '3'),
		    "another node's first pin taken into the host's copy");
		drive_check(drive_host("a", PIN_PINNED, '1'),
		    "our first pin kept");
		/* the first poll is 2 s after the start */
		tv.tv_sec = 2;
		break;
	case 2:
		drive_check(drive_host("c", PIN_REJECTED, '4'),
		    "another node's rejection taken into the host's copy");
		drive_check(pin_db_decided(w.w_store, "weather") > 0,
		    "the host's decision stamp moved");
		drive_rec(&rec, "d", '6', '7');
		drive_write(&rec);
		break;
	case 3:
		drive_check(pin_decide(&w, "weather", PIN_TOOL, "d", 1) == 1,
		    "d's change approved here");
		drive_check(drive_host("d", PIN_PINNED, '7'),
		    "and in the host's copy");
		break;
	case 4:
		/* another node saw d change again (7 to 8); a word on a
		 * change Redis no longer holds (9) is not written */
		drive_rec(&rec, "d", '7', '8');
		drive_hset(&rec);
		drive_rec(&rec, "d", '9', 0);
		drive_check(pin_redis_decided(&w, &rec, rec.pr_hash) == 0,
		    "a stale word sent");
		break;
	case 5:
		drive_check(drive_host("d", PIN_PENDING, '7'),
		    "Redis's record stands, and comes into the host's copy");
		break;
	default:
		goto out;
	}
	(void)evtimer_add(tick, &tv);
	return;
 out:
	(void)event_base_loopexit(w.w_base, NULL);
}

/* the next step, a tick after the last */
static void
on_step(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	drive_next();
}

static void
drive_fini(void)
{
	if (pin_remote != NULL && pin_remote->pr_free != NULL)
		pin_remote->pr_free();
	event_free(tick);
}

int
main(int argc, char *argv[])
{
	struct pin_rec	rec;

	if (argc != 3) {
		fprintf(stderr, "usage: drive_pins_redis port statedir\n");
		return 2;
	}
	if (drive_redis_open(&w, "weather", argv[1], argv[2]) == -1)
		return 1;
	/* pinned before this node shared its pins */
	drive_rec(&rec, "e", 'e', 0);
	drive_check(pin_db_put(w.w_store, &rec) == 0, "e pinned alone");
	pin_redis_init(&w);
	tick = evtimer_new(w.w_base, on_step, NULL);
	drive_redis_run(&w, drive_next, drive_fini);
	if (step < 7)
		drive_check(0, "every step done in time");
	return drive_bad;
}
