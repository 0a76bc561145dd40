/*
 * What the Redis drivers (tests/unit/drive_*_redis.c) share: a worker
 * on one event loop with one backend, sessionStorage redis at
 * 127.0.0.1:port and a state directory, the wait for the connection,
 * and the end.  Include after the headers it names.
 */
#ifndef VMCPD_DRIVE_REDIS_H
#define VMCPD_DRIVE_REDIS_H

#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/redis/redis.h"

static struct event	*drive_redis_tick;
static void		(*drive_redis_go)(void);
static int		 drive_bad;	/* a step failed: the exit status */

/* one line a step */
static inline void
drive_check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		drive_bad = 1;
}

/* w on a new loop, its store at dir, Redis at port: 0, or -1 */
static inline int
drive_redis_open(struct worker *w, const char *backend, const char *port,
    const char *dir)
{
	struct config	*cf;
	char		 yaml[512], err[CONFIG_ERR_MAX];

	(void)snprintf(yaml, sizeof(yaml), "backends:\n  - {name: %s, "
	    "url: http://127.0.0.1:9/mcp, transport: streamable-http}\n"
	    "sessionStorage: {provider: redis, address: \"127.0.0.1:%s\"}\n",
	    backend, port);
	if ((cf = config_load_buffer("drive.yaml", yaml, strlen(yaml), err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	memset(w, 0, sizeof(*w));
	w->w_conf = cf;
	if ((w->w_base = event_base_new()) == NULL ||
	    store_open(&w->w_store, dir, 16 << 20, 126, 0) == -1 ||
	    redis_init(w) == -1)
		return -1;
	return 0;
}

/* go() once connected, or a failure and the end after five seconds */
static inline void
drive_redis_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	static int	 n;
	struct timeval	 tv = { 0, 50000 };
	struct worker	*w = arg;

	(void)fd;
	(void)ev;
	if (redis_up()) {
		drive_redis_go();
		return;
	}
	if (++n > 100) {
		drive_check(0, "connected to Redis");
		(void)event_base_loopexit(w->w_base, NULL);
		return;
	}
	(void)evtimer_add(drive_redis_tick, &tv);
}

/* the loop, for twenty seconds at most; then fini() (NULL: none), and w
 * closed */
static inline void
drive_redis_run(struct worker *w, void (*go)(void), void (*fini)(void))
{
	struct timeval	tv = { 0, 0 }, limit = { 20, 0 };

	drive_redis_go = go;
	drive_redis_tick = evtimer_new(w->w_base, drive_redis_on_tick, w);
	(void)evtimer_add(drive_redis_tick, &tv);
	(void)event_base_loopexit(w->w_base, &limit);
	(void)event_base_dispatch(w->w_base);
	if (fini != NULL)
		fini();
	redis_free();
	event_free(drive_redis_tick);
	store_close(w->w_store);
	event_base_free(w->w_base);
	config_free((struct config *)(uintptr_t)w->w_conf);
}

#endif /* VMCPD_DRIVE_REDIS_H */
