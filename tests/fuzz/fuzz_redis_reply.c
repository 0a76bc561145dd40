/*
 * libFuzzer: the rate limit's reading of a Redis answer
 * (worker/auth/ratelimit_redis.c ratelimit_redis_verdict()) on whatever
 * hiredis's RESP reader makes of arbitrary bytes, and the bucket keys
 * built from them.  A verdict is OK, LIMITED with a wait of at least
 * 1 ms, or ERROR; a key fits its buffer and is NUL-terminated.  The
 * same answers read as the session script's
 * (worker/state/session_redis_codec.c session_redis_verdict()): SAME or NEW with a
 * stamp of at least 1, NEW with its record inside the answer.  And as
 * GETDEL's of a pending request (worker/relay/pending_redis_codec.c
 * pend_redis_record()): a record is the answer's own non-empty string;
 * and as the MRTR answer script's (pend_redis_answered()); and as the
 * handle claim's (handle_redis_codec.c handle_redis_verdict()): a state
 * only with HANDLE_OK, the answer's own non-empty string.  And
 * as the event replay buffer's (worker/state/stream_redis_codec.c): the append's
 * id, the read's events, each inside the answer with a positive id.
 * And as the circuit breaker script's (worker/upstream/health_redis_codec.c
 * health_redis_decode()): three non-negative integers, an age no more
 * than the clock it was read on.  And as the probes' verdicts script's
 * (worker/builder/verdict_redis_codec.c): each entry inside the answer, in range,
 * and the rule's pick one of them, never this node's own; the bytes
 * read as one entry's value too.  And as the read-or-lock of a record
 * one node makes for all, exchanged tokens and principals' backend
 * sessions (worker/redis/redis_codec.c redis_flight_answer()): a record
 * inside the answer with a time to live of at least 1 ms, or none; an
 * exchanged token's key fits and holds no '|'.  And as a message of
 * Redis's client-side caching (worker/redis/redis_codec.c
 * redis_inval_each()): each key inside the answer, or NULL for every
 * key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_flight.h"
#include "worker/auth/ratelimit.h"
#include "worker/state/session_redis.h"
#include "worker/relay/pending_redis.h"
#include "worker/composite/handle_redis.h"
#include "worker/state/stream_redis.h"
#include "worker/upstream/health_redis.h"
#include "worker/builder/verdict_redis.h"
#include "worker/upstream/token_exchange_redis.h"
#include "shared/health.h"
#include "shared/health_probe.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * hiredis 0.14 allocates an array's declared element count up front
 * (its maxelements limit came with 1.0): an answer declaring more than
 * RESP_ELEMENTS_MAX is left out, as no answer of the script's is.  Any
 * '*' counts, not only one at a line's start: a bulk string's bytes
 * end where its length says, so the next reply may follow anything.
 */
#define RESP_ELEMENTS_MAX	1024

static int
resp_too_big(const char *in, size_t size)
{
	size_t		 i, j;
	uint64_t	 n;

	for (i = 0; i < size; i++) {
		if (in[i] != '*')
			continue;
		for (j = i + 1, n = 0; j < size && in[j] >= '0' &&
		    in[j] <= '9' && n <= RESP_ELEMENTS_MAX; j++)
			n = n * 10 + (uint64_t)(in[j] - '0');
		if (n > RESP_ELEMENTS_MAX)
			return 1;
	}
	return 0;
}

struct inval_seen {
	const redisReply	*is_r;
	size_t			 is_n;
};

static void
inval_key(const char *key, size_t len, void *arg)
{
	struct inval_seen	*is = arg;
	const redisReply	*keys = is->is_r->element[2];

	is->is_n++;
	if (key == NULL)
		return;
	if (keys->type != REDIS_REPLY_ARRAY || is->is_n > keys->elements ||
	    key != keys->element[is->is_n - 1]->str ||
	    len != keys->element[is->is_n - 1]->len)
		abort();
}

static void
inval_check(const redisReply *r)
{
	struct inval_seen	is = { r, 0 };
	int			rc;

	rc = redis_inval_each(r, inval_key, &is);
	if (rc < -1 || rc > 1 || (rc != 0 && is.is_n != 0))
		abort();
	if (rc == 0 && r->element[2]->type == REDIS_REPLY_ARRAY &&
	    is.is_n != r->element[2]->elements)
		abort();
	if (rc == 0 && r->element[2]->type != REDIS_REPLY_ARRAY &&
	    is.is_n != 1)
		abort();
}

static void
session_check(const redisReply *r)
{
	enum session_rverdict	 v;
	uint64_t		 stamp = 0;
	const char		*rec = NULL;
	size_t			 rlen = 0;

	v = session_redis_verdict(r, &stamp, &rec, &rlen);
	if ((v == SESSION_R_SAME || v == SESSION_R_NEW) && stamp == 0)
		abort();
	if (v == SESSION_R_NEW && (r->elements != 2 ||
	    rec != r->element[1]->str || rlen != r->element[1]->len))
		abort();
	if (v != SESSION_R_GONE && v != SESSION_R_SAME && v != SESSION_R_NEW &&
	    v != SESSION_R_ERROR)
		abort();
}

static void
pend_check(const redisReply *r)
{
	const char	*rec = NULL;
	size_t		 len = 0;
	int		 rc;

	rc = pend_redis_record(r, &rec, &len);
	if (rc == 1 && (r->type != REDIS_REPLY_STRING || rec != r->str ||
	    len != r->len || len == 0))
		abort();
	if (rc != 1 && (rec != NULL || len != 0 || rc < -1 || rc > 0))
		abort();
	/* the answer script's verdict: one of four */
	rc = pend_redis_answered(r);
	if (rc < -2 || rc > 1 || (rc != -2 && r->type != REDIS_REPLY_INTEGER))
		abort();
}

static void
handle_check(const redisReply *r)
{
	const char	*st = (const char *)1;
	size_t		 len = 1;
	enum handle_err	 e;

	e = handle_redis_verdict(r, &st, &len);
	if (e == HANDLE_OK && (r->type != REDIS_REPLY_ARRAY ||
	    r->elements != 1 || st != r->element[0]->str ||
	    len != r->element[0]->len || len == 0))
		abort();
	if (e != HANDLE_OK && (st != NULL || len != 0))
		abort();
}

static void
health_check(const redisReply *r)
{
	uint32_t	f;
	uint64_t	age;

	if (health_redis_decode(r, &f, &age) == -1)
		return;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->integer < 0 || (uint64_t)f >
	    (uint64_t)r->element[0]->integer ||
	    (age != BREAKER_SHARED_CLOSED &&
	    age > (uint64_t)r->element[2]->integer))
		abort();
}

static void
verdict_check_entry(const struct verdict_entry *e, const char *v, size_t len)
{
	if (e->ve_state >= PROBE_NSTATES || e->ve_last > PROBE_DENIED ||
	    e->ve_err < v || e->ve_err + e->ve_errlen != v + len)
		abort();
}

static void
verdict_check(const redisReply *r)
{
	struct verdict_fold		 f;
	struct verdict_entry		 e;
	const struct verdict_entry	*l;
	const redisReply		*v;
	uint64_t			 now;
	size_t				 n, i;

	if (verdict_redis_answer(r, &now, &n) == -1)
		return;
	if (n * 2 != r->element[1]->elements)
		abort();
	verdict_fold_init(&f, "self", now);
	for (i = 0; i < n; i++) {
		if (verdict_redis_entry(r, i, &e) == -1)
			continue;
		v = r->element[1]->element[2 * i + 1];
		verdict_check_entry(&e, v->str, v->len);
		if (e.ve_node != r->element[1]->element[2 * i]->str)
			abort();
		verdict_fold_add(&f, &e);
	}
	if (verdict_redis_entry(r, n, &e) != -1)
		abort();
	if (verdict_fold_result(&f, &l) == 1 && (l == NULL ||
	    l->ve_exp < now || l->ve_state == PROBE_UNKNOWN ||
	    (l->ve_nodelen == 4 && memcmp(l->ve_node, "self", 4) == 0)))
		abort();
}

static void
stream_check(const redisReply *r)
{
	const char	*msg;
	uint64_t	 after, id;
	size_t		 count, i, mlen;

	if (stream_redis_appended(r) != 0 && (r->type != REDIS_REPLY_INTEGER ||
	    r->integer <= 0))
		abort();
	if (stream_redis_answer(r, &after, &count) == -1)
		return;
	if (count + 1 != r->elements || count > STREAM_RREAD_MAX)
		abort();
	for (i = 0; i < count; i++) {
		if (stream_redis_event(r, i, &id, &msg, &mlen) == -1)
			continue;
		if (id == 0 || msg < r->element[i + 1]->str ||
		    msg + mlen != r->element[i + 1]->str +
		    r->element[i + 1]->len)
			abort();
	}
	if (stream_redis_event(r, count, &id, &msg, &mlen) != -1)
		abort();
}

static void
texch_check(const redisReply *r)
{
	const char		*tok = (const char *)1;
	size_t			 len = 1;
	uint64_t		 ttl = 1;
	enum redis_flight_got	 k;

	k = redis_flight_answer(r, &tok, &len, &ttl);
	if (k == REDIS_FLIGHT_HIT && (r->type != REDIS_REPLY_ARRAY ||
	    r->elements != 2 || tok != r->element[0]->str ||
	    len != r->element[0]->len || len == 0 || ttl == 0))
		abort();
	if (k != REDIS_FLIGHT_HIT && (tok != NULL || len != 0 || ttl != 0 ||
	    (k != REDIS_FLIGHT_MINE && k != REDIS_FLIGHT_BUSY &&
	    k != REDIS_FLIGHT_ERROR)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	redisReader		*rr;
	void			*reply;
	enum ratelimit_verdict	 v;
	struct verdict_entry	 ve;
	uint64_t		 retry, leased;
	unsigned int		 want, granted;
	char			 key[RATELIMIT_RKEY_MAX];
	char			*in;
	size_t			 n;
	int			 i;

	/* NUL-terminated: the bytes name a session in a key too */
	if ((in = malloc(size + 1)) == NULL)
		abort();
	memcpy(in, data, size);
	in[size] = '\0';
	if ((rr = redisReaderCreate()) == NULL)
		abort();
	if (!resp_too_big(in, size) && redisReaderFeed(rr, in, size) ==
	    REDIS_OK) {
		for (i = 0; i < 8; i++) {
			reply = NULL;
			if (redisReaderGetReply(rr, &reply) != REDIS_OK ||
			    reply == NULL)
				break;
			/* a single call's, then a batch's answer */
			want = i % 2 == 0 ? 1 : 32;
			v = ratelimit_redis_verdict(reply, want, &granted,
			    &retry, &leased);
			if ((v == RATELIMIT_OK && (retry != 0 ||
			    granted != want)) || (v == RATELIMIT_LIMITED &&
			    (retry == 0 || granted >= want)) ||
			    (v == RATELIMIT_ERROR && granted != 0) ||
			    (v != RATELIMIT_OK && leased != 0) ||
			    (v != RATELIMIT_OK && v != RATELIMIT_LIMITED &&
			    v != RATELIMIT_ERROR))
				abort();
			session_check(reply);
			inval_check(reply);
			pend_check(reply);
			handle_check(reply);
			stream_check(reply);
			health_check(reply);
			verdict_check(reply);
			texch_check(reply);
			freeReplyObject(reply);
		}
	}
	redisReaderFree(rr);
	n = ratelimit_redis_key(key, sizeof(key), "local", "fuzz", 'V',
	    "0123456789abcdef0123456789abcdef", in, size);
	if (n != 0 && (n >= sizeof(key) || key[n] != '\0' ||
	    strlen(key) != n))
		abort();
	n = redis_key(key, sizeof(key), "thv:vmcp:session:", REDIS_KIND_PEND,
	    in, "vmcpd-r-0123456789abcdef0123456789abcdef", NULL);
	if (n != 0 && (n >= sizeof(key) || key[n] != '\0'))
		abort();
	if (verdict_entry_parse("n", 1, in, size, &ve) == 0)
		verdict_check_entry(&ve, in, size);
	n = texch_redis_key(key, sizeof(key), "thv:vmcp:session:", in);
	if (n != 0 && (n >= sizeof(key) || key[n] != '\0' ||
	    (strlen(in) == size && memchr(key, '|', n) != NULL)))
		abort();
	free(in);
	return 0;
}
