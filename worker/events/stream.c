/*
 * Standalone GET streams of Legacy sessions, and delivery to them from
 * any worker.
 *
 * A session's events live in the store's "events" database under
 * session id || be64 seq (seq from 1, the newest sessions.eventBuffer
 * kept); seq 0 is the holder record naming the worker that holds the
 * session's GET stream.  A producer on any worker appends an event and
 * sends the holder a datagram on its wake socket; the holder reads the
 * events it has not sent yet and writes them.  The datagram only says
 * "look in the store": a lost one is made up for by the keep-alive
 * tick, and a client that reconnects (to any worker) with
 * Last-Event-ID gets every event after that id replayed.
 *
 * With sessionStorage.provider redis the events are in Redis instead
 * (stream_redis.h): a producer appends and wakes the holder as above,
 * and a stream writes only what it reads back from Redis, so what a
 * client saw survives the host, and its ids hold on every node.
 *
 * A POST's SSE stream that vmcpd ended before its response (SEP-1699
 * polling: legacy.c) goes on the same way as a stream of its own, named
 * by a tag (STREAM_TAG_LEN hex digits) within its session: its events
 * are kept under "." || session id || tag || be64 seq (a session id
 * never begins with "."), their ids are "<tag>-<seq>" (the priming
 * event's "<tag>-0"), and a GET with such a Last-Event-ID resumes that
 * stream, on any worker, and ends after the response.
 */
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include "worker/http/httpd.h"

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "worker/auth/auth.h"
#include "worker/redis/redis.h"
#include "worker/state/session_redis.h"
#include "worker/state/stream_redis.h"
#include "worker/process/wake.h"
#include "proto/proto.h"
#include "proto/hex.h"
#include "proto/jsonrpc.h"
#include "proto/jsonspan.h"
#include "proto/sse.h"
#include "worker/events/stream.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/state/session.h"

#define STREAM_PREFIX_MAX (1 + SESSION_ID_LEN + STREAM_TAG_LEN)
#define STREAM_POST_TICK_MS 1000	/* a resumed POST stream's look */

struct gstream {
	TAILQ_ENTRY(gstream)	 gs_entry;
	struct worker		*gs_w;
	struct httpd_req	*gs_req;
	struct event		*gs_tick;
	struct event		*gs_expire;	/* the client token's exp */
	char			 gs_sid[SESSION_ID_LEN + 1];
	char			 gs_tag[STREAM_TAG_LEN + 1]; /* "": GET's */
	uint64_t		 gs_last;	/* last seq written */
	int			 gs_done;	/* a POST stream's response sent */
	/* provider redis: the read under way, another to follow, and
	 * the first read's Last-Event-ID (-1: none) until it answers */
	struct redis_cmd	*gs_rcmd;
	int			 gs_ragain;
	int			 gs_primed;
	int64_t			 gs_rfirst;
};

static TAILQ_HEAD(, gstream) gstreams = TAILQ_HEAD_INITIALIZER(gstreams);

/*
 * Where a session's events are kept (sessionStorage.provider), chosen
 * once by stream_init(): this host's store (a scan per flush), or Redis
 * (a read per flush, stream_redis.h), so that a stream resumes on any
 * node.  st_open: a new stream's first position, its SSE started
 * (resumed: after Last-Event-ID after); st_flush: what the stream has
 * not sent yet, written; st_append: an event kept and its stream told
 * (0), or -1.
 */
struct stream_store {
	void	(*st_open)(struct gstream *, int resumed, uint64_t after);
	void	(*st_flush)(struct gstream *);
	int	(*st_append)(struct worker *, const char *sid, const char *tag,
		    const char *data, size_t len);
};
static const struct stream_store stream_store_lmdb, stream_store_redis;
static const struct stream_store *stream_store = &stream_store_lmdb;

/* the key prefix of a stream's events (tag "": the GET stream's) */
static size_t
stream_prefix(uint8_t *key, const char *sid, const char *tag)
{
	size_t	n = 0;

	if (tag[0] != '\0')
		key[n++] = '.';
	memcpy(key + n, sid, SESSION_ID_LEN);
	n += SESSION_ID_LEN;
	if (tag[0] != '\0') {
		memcpy(key + n, tag, STREAM_TAG_LEN);
		n += STREAM_TAG_LEN;
	}
	return n;
}

/* seq 0 under the prefix: the holder record */
static size_t
stream_holder_key(uint8_t *key, const char *sid, const char *tag)
{
	size_t	n = stream_prefix(key, sid, tag);

	memset(key + n, 0, 8);
	return n + 8;
}

/* an event's id: "<seq>" on the GET stream, "<tag>-<seq>" on a POST's */
static void
stream_event_id(char *buf, size_t size, const char *tag, uint64_t seq)
{
	(void)snprintf(buf, size, "%s%s%llu", tag, tag[0] != '\0' ? "-" : "",
	    (unsigned long long)seq);
}

/* the pid and wake socket of the worker holding sid's GET stream */
static int
stream_holder_get(struct worker *w, const char *sid, const char *tag,
    pid_t *pid, char *sock, size_t socklen)
{
	struct store_rec	 rec;
	uint8_t			 key[STREAM_PREFIX_MAX + 8];
	json_t			*o;
	json_error_t		 jerr;
	json_int_t		 p;
	const char		*path;
	size_t			 klen;
	int			 rc = -1;

	klen = stream_holder_key(key, sid, tag);
	memset(&rec, 0, sizeof(rec));
	if (store_get(w->w_store, STORE_EVENTS, key, klen,
	    store_now_ms(), &rec) != 0)
		return -1;
	if ((o = json_loadb(rec.sr_data, rec.sr_len, 0, &jerr)) != NULL &&
	    json_unpack(o, "{s:I, s:s}", "pid", &p, "sock", &path) == 0) {
		*pid = (pid_t)p;
		(void)snprintf(sock, socklen, "%s", path);
		rc = 0;
	}
	json_decref(o);
	store_rec_clear(&rec);
	return rc;
}

static void
stream_holder_set(struct worker *w, const char *sid, const char *tag)
{
	uint8_t		 key[STREAM_PREFIX_MAX + 8];
	char		 buf[512];
	int		 n;
	size_t		 klen;
	uint64_t	 now = store_now_ms();

	klen = stream_holder_key(key, sid, tag);
	n = snprintf(buf, sizeof(buf), "{\"pid\":%d,\"sock\":\"%s\",\"at\":%llu}",
	    (int)w->w_pid, wake_self_path(), (unsigned long long)now);
	if (n <= 0 || (size_t)n >= sizeof(buf) ||
	    store_put(w->w_store, STORE_EVENTS, key, klen, buf, n,
	    now + w->w_conf->cf_session_max_ms, now) == -1)
		log_warnx("cannot record the GET stream of %.8s...", sid);
}

static void
stream_holder_clear(struct worker *w, const char *sid, const char *tag)
{
	uint8_t	key[STREAM_PREFIX_MAX + 8];
	char	sock[128];
	pid_t	pid;
	size_t	klen;

	if (stream_holder_get(w, sid, tag, &pid, sock, sizeof(sock)) == 0 &&
	    pid == w->w_pid) {
		klen = stream_holder_key(key, sid, tag);
		(void)store_del(w->w_store, STORE_EVENTS, key, klen);
	}
}

static struct gstream *
stream_find(const char *sid, const char *tag)
{
	struct gstream *gs;

	TAILQ_FOREACH(gs, &gstreams, gs_entry)
		if (strcmp(gs->gs_sid, sid) == 0 &&
		    strcmp(gs->gs_tag, tag) == 0)
			return gs;
	return NULL;
}

static void
stream_free(struct gstream *gs)
{
	TAILQ_REMOVE(&gstreams, gs, gs_entry);
	if (gs->gs_tick != NULL)
		event_free(gs->gs_tick);
	if (gs->gs_expire != NULL)
		event_free(gs->gs_expire);
	if (gs->gs_req != NULL)
		httpd_req_set_close_cb(gs->gs_req, NULL, NULL);
	redis_cancel(gs->gs_rcmd);
	stream_holder_clear(gs->gs_w, gs->gs_sid, gs->gs_tag);
	worker_request_release(gs->gs_w, __func__);
	free(gs);
}

static void
stream_on_close(struct httpd_req *hr, void *arg)
{
	struct gstream *gs = arg;

	log_debug("GET stream of %.8s... closed by the client", gs->gs_sid);
	gs->gs_req = NULL;
	httpd_send_end(hr);	/* frees it */
	stream_free(gs);
}

struct stream_scan {
	struct gstream	*ss_gs;
	uint64_t	 ss_last;
	size_t		 ss_klen;	/* its events' key length */
	int		 ss_write;	/* else only find the last seq */
};

/*
 * Write event seq; a POST stream's response is its last (gs_done).  -1:
 * not sent (a slow reader, or gone).
 */
static int
stream_send(struct gstream *gs, uint64_t seq, const char *data, size_t len)
{
	char	id[STREAM_TAG_LEN + 24];
	size_t	vlen;

	stream_event_id(id, sizeof(id), gs->gs_tag, seq);
	if (front_sse_send_text(gs->gs_req, id, data, len) == -1)
		return -1;
	gs->gs_last = seq;
	if (gs->gs_tag[0] != '\0' && proto_json_value(data, len, "method",
	    &vlen) == NULL)
		gs->gs_done = 1;
	return 0;
}

static uint64_t
stream_key_seq(const void *key, size_t klen)
{
	const uint8_t	*k = key;
	uint64_t	 seq = 0;
	size_t		 i;

	for (i = klen - 8; i < klen; i++)
		seq = seq << 8 | k[i];
	return seq;
}

static int
stream_scan_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct stream_scan	*ss = arg;

	if (klen != ss->ss_klen)
		return 0;
	ss->ss_last = stream_key_seq(key, klen);
	if (!ss->ss_write)
		return 0;
	/* not sent (a slow reader): stays in the store for the next flush */
	if (stream_send(ss->ss_gs, ss->ss_last, rec->sr_data,
	    rec->sr_len) == -1)
		return 1;
	return ss->ss_gs->gs_done;
}

static void	stream_end(struct gstream *);
static void	stream_rflush(struct gstream *);

/* the SEP-1699 priming event: an id to resume from, no data */
static void
stream_prime(struct gstream *gs)
{
	char	id[STREAM_TAG_LEN + 24];

	stream_event_id(id, sizeof(id), gs->gs_tag, gs->gs_last);
	(void)front_sse_prime(gs->gs_req, id, -1);
}

/*
 * Redis did not keep or give the stream's events: it ends (fail closed,
 * docs/ARCHITECTURE.md, Beyond one host), saying why in an SSE comment;
 * the client resumes with Last-Event-ID, answered 503 until Redis is
 * back.
 */
static void
stream_rfail(struct gstream *gs)
{
	static const char msg[] = ": the session store (Redis) is "
	    "unavailable; resume with Last-Event-ID later\n\n";

	if (gs->gs_req != NULL) {
		/* the connection gone, stream_end() ends the request */
		httpd_req_set_close_cb(gs->gs_req, NULL, NULL);
		(void)httpd_send_chunk(gs->gs_req, msg, sizeof(msg) - 1);
	}
	stream_end(gs);
}

static void
stream_on_rread(void *arg, const redisReply *reply, const char *err)
{
	struct gstream	*gs = arg;
	const char	*msg;
	uint64_t	 after, seq;
	size_t		 count, i, mlen;

	gs->gs_rcmd = NULL;
	if (err != NULL || stream_redis_answer(reply, &after, &count) == -1) {
		session_redis_failed("events not read", reply, err);
		stream_rfail(gs);
		return;
	}
	if (!gs->gs_primed) {
		gs->gs_last = after;
		gs->gs_primed = 1;
		stream_prime(gs);
	}
	for (i = 0; i < count && !gs->gs_done; i++) {
		if (stream_redis_event(reply, i, &seq, &msg, &mlen) == -1 ||
		    seq <= gs->gs_last)
			continue;
		/* not sent (a slow reader, or gone): read again at the next
		 * flush, if any */
		if (stream_send(gs, seq, msg, mlen) == -1)
			return;
	}
	if (gs->gs_done) {
		stream_end(gs);
		return;
	}
	if (count == STREAM_RREAD_MAX || gs->gs_ragain) {
		gs->gs_ragain = 0;
		stream_rflush(gs);
	}
}

/* provider redis: read what follows the last event sent, and write it */
static void
stream_rflush(struct gstream *gs)
{
	if (gs->gs_req == NULL)
		return;
	if (gs->gs_rcmd != NULL) {
		gs->gs_ragain = 1;
		return;
	}
	if ((gs->gs_rcmd = stream_redis_read(gs->gs_w, gs->gs_sid, gs->gs_tag,
	    gs->gs_primed ? (int64_t)gs->gs_last : gs->gs_rfirst,
	    stream_on_rread, gs)) == NULL)
		stream_rfail(gs);
}

/* write what the host's store has for this stream, not sent yet */
static void
stream_lmdb_flush(struct gstream *gs)
{
	struct stream_scan	ss;
	uint8_t			prefix[STREAM_PREFIX_MAX];
	size_t			plen;

	if (gs->gs_req == NULL)
		return;
	plen = stream_prefix(prefix, gs->gs_sid, gs->gs_tag);
	ss.ss_gs = gs;
	ss.ss_last = gs->gs_last;
	ss.ss_klen = plen + 8;
	ss.ss_write = 1;
	(void)store_scan(gs->gs_w->w_store, STORE_EVENTS, prefix, plen,
	    gs->gs_last, store_now_ms(), stream_scan_cb, &ss);
	if (gs->gs_done)
		stream_end(gs);
}

/* end a stream from our side: the client may come back elsewhere */
static void
stream_end(struct gstream *gs)
{
	if (gs->gs_req != NULL) {
		httpd_req_set_close_cb(gs->gs_req, NULL, NULL);
		front_sse_end(gs->gs_req);
		gs->gs_req = NULL;
	}
	stream_free(gs);
}

static void
stream_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct gstream		*gs = arg;
	struct store_rec	 rec;

	(void)fd;
	(void)ev;
	/* a session terminated (DELETE, expiry) elsewhere ends its stream */
	memset(&rec, 0, sizeof(rec));
	if (store_get(gs->gs_w->w_store, STORE_SESSIONS, gs->gs_sid,
	    strlen(gs->gs_sid), store_now_ms(), &rec) == STORE_NOTFOUND) {
		log_debug("session %.8s... is gone; ending its GET stream",
		    gs->gs_sid);
		stream_end(gs);
		return;
	}
	store_rec_clear(&rec);
	front_sse_keepalive(gs->gs_req);
	/* in case a wake-up was lost, or the event was made on another
	 * node (provider redis); last: a failed read ends the stream */
	stream_store->st_flush(gs);
}

/* the access token it was opened with expired: the client comes back
 * with a new one (RFC 6750 3.1: the token no longer authorizes) */
static void
stream_on_expire(evutil_socket_t fd, short ev, void *arg)
{
	struct gstream	*gs = arg;

	(void)fd;
	(void)ev;
	log_debug("GET stream of %.8s... ends: its access token expired",
	    gs->gs_sid);
	stream_end(gs);
}

/* a stream of a principal's request lasts until its token's exp */
static void
stream_set_expiry(struct gstream *gs, struct httpd_req *req)
{
	const struct principal	*p = auth_principal(req);
	struct timeval		 tv;
	uint64_t		 now = store_now_ms(), exp;

	if (p == NULL || p->p_exp <= 0)
		return;
	exp = (uint64_t)p->p_exp * 1000;
	exp = exp > now ? exp - now : 0;
	tv.tv_sec = (time_t)(exp / 1000);
	tv.tv_usec = (suseconds_t)(exp % 1000) * 1000;
	if ((gs->gs_expire = evtimer_new(gs->gs_w->w_base, stream_on_expire,
	    gs)) != NULL)
		(void)evtimer_add(gs->gs_expire, &tv);
}

void
stream_get(struct worker *w, struct httpd_req *req, struct session *s)
{
	struct gstream		*gs;
	struct timeval		 tv;
	const char		*lei = front_header(req, "Last-Event-ID");
	char			 sock[128], tag[STREAM_TAG_LEN + 1];
	unsigned long long	 after = 0;
	uint64_t		 ms;
	pid_t			 pid;

	tag[0] = '\0';
	if (lei != NULL && sse_id_parse(lei, tag, STREAM_TAG_LEN,
	    &after) == -1) {
		front_reply_error(req, 400, NULL, MCP_ERR_TRANSPORT,
		    "Bad Request: Last-Event-ID is not an event id of "
		    "this session");
		return;
	}
	/* one standalone stream per session, and one resumption per POST
	 * stream, wherever it is held */
	if (stream_find(s->s_id, tag) != NULL ||
	    (stream_holder_get(w, s->s_id, tag, &pid, sock,
	    sizeof(sock)) == 0 && pid != w->w_pid && kill(pid, 0) == 0)) {
		front_reply_error(req, 409, NULL, MCP_ERR_TRANSPORT,
		    tag[0] == '\0' ? "Conflict: this session already has a "
		    "GET stream open" : "Conflict: this stream is already "
		    "resumed");
		return;
	}
	if ((gs = calloc(1, sizeof(*gs))) == NULL) {
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	worker_request_hold(w);
	gs->gs_w = w;
	gs->gs_req = req;
	(void)snprintf(gs->gs_sid, sizeof(gs->gs_sid), "%s", s->s_id);
	(void)snprintf(gs->gs_tag, sizeof(gs->gs_tag), "%s", tag);
	TAILQ_INSERT_TAIL(&gstreams, gs, gs_entry);
	stream_holder_set(w, s->s_id, tag);
	/* the client may be gone at the first write: told from the loop */
	httpd_req_set_close_cb(req, stream_on_close, gs);
	stream_store->st_open(gs, lei != NULL, after);
	stream_store->st_flush(gs);
	if (stream_find(s->s_id, tag) == NULL)
		return;		/* ended at once: its response, or Redis down */
	/* a resumed POST stream looks often: its response may come from
	 * another node (provider redis), whose wake-ups do not reach here */
	ms = w->w_conf->cf_keepalive_ms;
	if (tag[0] != '\0' && ms > STREAM_POST_TICK_MS)
		ms = STREAM_POST_TICK_MS;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if ((gs->gs_tick = event_new(w->w_base, -1, EV_PERSIST, stream_on_tick,
	    gs)) != NULL)
		(void)event_add(gs->gs_tick, &tv);
	stream_set_expiry(gs, req);
	log_debug("GET stream of %.8s...%s%s opened after event %llu", s->s_id,
	    tag[0] != '\0' ? ", resuming POST stream " : "", tag,
	    (unsigned long long)gs->gs_last);
}

/* DELETE: the session's stream here ends now (elsewhere at its tick) */
void
stream_terminate(struct worker *w, const char *sid)
{
	struct gstream *gs, *next;

	(void)w;
	for (gs = TAILQ_FIRST(&gstreams); gs != NULL; gs = next) {
		next = TAILQ_NEXT(gs, gs_entry);
		if (strcmp(gs->gs_sid, sid) == 0)
			stream_end(gs);
	}
}

/* a stream has a new event: write it, or wake its holder */
static void
stream_notify(struct worker *w, const char *sid, const char *tag)
{
	struct gstream	*gs;
	char		 sock[128];
	pid_t		 pid;

	if ((gs = stream_find(sid, tag)) != NULL) {
		stream_store->st_flush(gs);
		return;
	}
	/* best effort: the holder's tick or a resume makes up for a loss */
	if (stream_holder_get(w, sid, tag, &pid, sock, sizeof(sock)) == 0)
		wake_send(pid, WAKE_STREAM, sid, tag);
}

/* provider redis: the event is in Redis (id), or is lost (0) */
static void
stream_on_appended(struct worker *w, const char *sid, const char *tag,
    uint64_t id)
{
	struct gstream	*gs;

	if (id != 0)
		stream_notify(w, sid, tag);
	else if ((gs = stream_find(sid, tag)) != NULL)
		stream_rfail(gs);
}

/* a fresh stream starts after what is already there */
static void
stream_lmdb_open(struct gstream *gs, int resumed, uint64_t after)
{
	struct stream_scan	ss;
	uint8_t			prefix[STREAM_PREFIX_MAX];
	size_t			plen;

	plen = stream_prefix(prefix, gs->gs_sid, gs->gs_tag);
	ss.ss_gs = gs;
	ss.ss_last = 0;
	ss.ss_klen = plen + 8;
	ss.ss_write = 0;
	(void)store_scan(gs->gs_w->w_store, STORE_EVENTS, prefix, plen, 0,
	    store_now_ms(), stream_scan_cb, &ss);
	/* so does a resume from an id past every event here: another
	 * node's, the session having moved (docs/ARCHITECTURE.md, Beyond
	 * one host); waiting for this host's ids to pass it would drop
	 * what comes */
	gs->gs_last = resumed && after <= ss.ss_last ? after : ss.ss_last;
	front_sse_start(gs->gs_req, NULL);
	stream_prime(gs);
}

static int
stream_lmdb_append(struct worker *w, const char *sid, const char *tag,
    const char *data, size_t len)
{
	uint8_t		prefix[STREAM_PREFIX_MAX];
	size_t		plen;
	uint64_t	now = store_now_ms();

	if (strlen(sid) != SESSION_ID_LEN)
		return -1;
	plen = stream_prefix(prefix, sid, tag);
	if (store_append(w->w_store, STORE_EVENTS, prefix, plen, data,
	    len, now + w->w_conf->cf_session_max_ms, now,
	    w->w_conf->cf_event_buffer, NULL) == -1)
		return -1;
	stream_notify(w, sid, tag);
	return 0;
}

/* primed when Redis answers the first read */
static void
stream_ropen(struct gstream *gs, int resumed, uint64_t after)
{
	gs->gs_rfirst = !resumed ? -1 : after > INT64_MAX ? INT64_MAX :
	    (int64_t)after;
	front_sse_start(gs->gs_req, NULL);
}

/* told once Redis has it (stream_on_appended()) */
static int
stream_rappend(struct worker *w, const char *sid, const char *tag,
    const char *data, size_t len)
{
	return stream_redis_append(w, sid, tag, data, len,
	    stream_on_appended);
}

static const struct stream_store stream_store_lmdb = {
	stream_lmdb_open,
	stream_lmdb_flush,
	stream_lmdb_append
};
static const struct stream_store stream_store_redis = {
	stream_ropen,
	stream_rflush,
	stream_rappend
};

/* after stream_redis_init(): the store the events are in */
void
stream_init(struct worker *w)
{
	(void)w;
	stream_store = stream_redis_on() ? &stream_store_redis :
	    &stream_store_lmdb;
}

/*
 * Queue a message for a session's GET stream and wake its holder.
 * Returns 0 once it is in the store (provider redis: sent to Redis),
 * whether or not a stream is open.
 */
int
stream_publish(struct worker *w, const char *sid, const json_t *msg)
{
	char			*data;
	size_t			 len;
	int			 rc;

	if ((data = jsonrpc_dump(msg, &len)) == NULL)
		return -1;
	rc = stream_store->st_append(w, sid, "", data, len);
	free(data);
	return rc;
}

/*
 * Keep an event of POST stream tag of session sid, whose connection
 * vmcpd ended (legacy.c), for its resumption; as stream_publish().
 */
int
stream_post_publish(struct worker *w, const char *sid, const char *tag,
    const char *data, size_t len)
{
	if (strlen(tag) != STREAM_TAG_LEN)
		return -1;
	return stream_store->st_append(w, sid, tag, data, len);
}

/* a new POST stream's tag: random, so unique within its session */
int
stream_post_tag(char tag[STREAM_TAG_LEN + 1])
{
	uint8_t	r[STREAM_TAG_LEN / 2];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	proto_hex(r, sizeof(r), tag);
	return 0;
}

/* WAKE_STREAM: that stream, if here, has events in the store */
void
stream_wake(struct worker *w, const char *sid, const char *tag)
{
	struct gstream *gs;

	(void)w;
	if ((gs = stream_find(sid, tag != NULL ? tag : "")) != NULL)
		stream_store->st_flush(gs);
}

/* drain: end every stream; clients resume elsewhere with Last-Event-ID */
void
stream_drain(struct worker *w)
{
	struct gstream *gs;

	(void)w;
	while ((gs = TAILQ_FIRST(&gstreams)) != NULL)
		stream_end(gs);
}

void
stream_free_all(struct worker *w)
{
	stream_drain(w);
}
