/*
 * The event replay buffer in Redis, the worker's side (the pure parts
 * are stream_redis_codec.c; the design in docs/ARCHITECTURE.md, Beyond one
 * host): the append a producer sends, and the read a GET stream makes
 * to write what follows the last event it sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/state/session_redis.h"
#include "worker/state/stream_redis.h"

static struct worker	*stream_redis_w;

void
stream_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	stream_redis_w = w;
	(void)redis_script_add(stream_redis_append_lua);
	(void)redis_script_add(stream_redis_read_lua);
}

int
stream_redis_on(void)
{
	return stream_redis_w != NULL;
}

struct stream_rappend {
	struct worker	*ra_w;
	void		(*ra_done)(struct worker *, const char *, const char *,
			    uint64_t);
	char		 ra_sid[SESSION_ID_LEN + 1];
	char		 ra_tag[24];
};

static void
stream_redis_on_append(void *arg, const redisReply *reply, const char *err)
{
	struct stream_rappend	*ra = arg;
	uint64_t		 id;

	if ((id = err == NULL ? stream_redis_appended(reply) : 0) == 0)
		session_redis_failed("an event not kept", reply, err);
	ra->ra_done(ra->ra_w, ra->ra_sid, ra->ra_tag, id);
	free(ra);
}

int
stream_redis_append(struct worker *w, const char *sid, const char *tag,
    const char *msg, size_t mlen, void (*done)(struct worker *,
    const char *, const char *, uint64_t))
{
	struct stream_rappend	*ra;
	struct redis_args	 a;
	char			 ev[SESSION_RKEY_MAX], seq[SESSION_RKEY_MAX];
	size_t			 evlen, seqlen;

	if ((evlen = stream_redis_keys(ev, seq, sizeof(ev),
	    w->w_conf->cf_sstore.css_prefix, sid, tag, &seqlen)) == 0 ||
	    strlen(tag) >= sizeof(ra->ra_tag) ||
	    (ra = calloc(1, sizeof(*ra))) == NULL)
		return -1;
	ra->ra_w = w;
	ra->ra_done = done;
	(void)snprintf(ra->ra_sid, sizeof(ra->ra_sid), "%s", sid);
	(void)snprintf(ra->ra_tag, sizeof(ra->ra_tag), "%s", tag);
	stream_redis_append_args(&a, ev, evlen, seq, seqlen, msg, mlen,
	    w->w_conf->cf_event_buffer, w->w_conf->cf_session_max_ms);
	if (redis_send(&a, stream_redis_on_append, ra) == NULL) {
		session_redis_failed("an event not kept", NULL,
		    "not connected");
		free(ra);
		return -1;
	}
	return 0;
}

struct redis_cmd *
stream_redis_read(struct worker *w, const char *sid, const char *tag,
    int64_t after, redis_cb cb, void *arg)
{
	struct redis_args	 a;
	struct redis_cmd	*cmd;
	char			 ev[SESSION_RKEY_MAX], seq[SESSION_RKEY_MAX];
	size_t			 evlen, seqlen;

	if ((evlen = stream_redis_keys(ev, seq, sizeof(ev),
	    w->w_conf->cf_sstore.css_prefix, sid, tag, &seqlen)) == 0)
		return NULL;
	stream_redis_read_args(&a, ev, evlen, seq, seqlen, after);
	if ((cmd = redis_send(&a, cb, arg)) == NULL)
		session_redis_failed("events not read", NULL, "not connected");
	return cmd;
}
