/*
 * The worker's second connection to Redis: its subscription, and the
 * client-side caching whose invalidations arrive on it.
 */
#ifndef VMCPD_REDIS_SUB_H
#define VMCPD_REDIS_SUB_H

#include <stddef.h>
#include <stdint.h>

#include "worker/redis/redis.h"	/* redis_cb */

struct worker;
struct redis_args;

/*
 * Redis's client-side caching (CLIENT TRACKING, RESP2 redirect mode):
 * with redis_track_init() the subscription (below) takes
 * "__redis__:invalidate" too, and the command connection asks, on
 * each connect and whenever the subscription's connection id changes,
 * that the reads of the commands sent by redis_send_tracked() be
 * tracked (OPTIN: no other command's).  inval(key, len) for each key
 * written (or expired, evicted) since a tracked read of it, NULL for
 * every key (a flush); on(1) each time tracking is asked for (a read
 * sent from then on is tracked if Redis accepts), on(0) when it is off
 * (either connection lost, or Redis refused).  A caller trusts only
 * what it read since the last on(1), and nothing after an on(0).
 */
typedef void (*redis_inval_cb)(const char *key, size_t len);
typedef void (*redis_track_cb)(int on);
void	 redis_track_init(redis_inval_cb, redis_track_cb);
/*
 * redis_send() with its reads tracked: *tracked says whether they are
 * (0: tracking is off, the command is sent all the same).
 */
struct redis_cmd *redis_send_tracked(struct redis_args *, redis_cb,
	    void *arg, int *tracked);
/*
 * Redis answered, on this connection, a command sent within the last
 * ms: a Redis that hangs answers nothing, and what was trusted on its
 * word stops being trusted that long after its last proof of life
 * (its hang itself is seen when a command waits REDIS_TIMEOUT_MS).
 */
#define REDIS_FRESH_MS		1000
int	 redis_fresh(uint64_t ms);
/*
 * redis_sub.c's side: tracking wanted; its connection's id (0: none)
 * and name (CLIENT SETNAME, random: checked with CLIENT LIST ID after
 * the redirect, as ids start again from 1 when Redis restarts);
 * redis_sub_reset() drops the subscription's connection, to be made
 * again (its id named another client)
 */
#define REDIS_SUB_NAME_LEN	48
int	 redis_track_wanted(void);
void	 redis_track_redirect(long long id, const char *name);
void	 redis_track_inval(const char *key, size_t len);
void	 redis_sub_reset(void);

/*
 * The worker's subscription (worker/redis/redis_sub.c): a connection of its
 * own (one in subscribe mode takes no other command) on this worker's
 * channel, "<keyPrefix>wake:<random>", made again with backoff after a
 * loss.  A message lost meanwhile is covered by its reader's own timer.
 * cb(payload, len) for each message.
 */
typedef void (*redis_sub_cb)(const char *, size_t);
int	 redis_sub_init(struct worker *, redis_sub_cb);
/* the same on a channel shared by the nodes; cb(NULL, 0) each time it
 * is subscribed (again): what was published before is lost */
int	 redis_sub_init_channel(struct worker *, const char *chan,
	    redis_sub_cb);
void	 redis_sub_free(void);
/* this worker's channel, or NULL (no subscription) */
const char *redis_sub_channel(void);

#endif /* VMCPD_REDIS_SUB_H */
