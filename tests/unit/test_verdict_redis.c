/*
 * The probes' verdicts in Redis, the pure parts (worker/builder/verdict_redis_codec.c):
 * the keys and node id, an entry's value, the script's answer, and the
 * rule that picks the verdict a node acts on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/health_probe.h"
#include "worker/redis/redis_codec.h"
#include "worker/builder/verdict_redis.h"

static void
test_keys(void **state)
{
	char	buf[128], small[16], a[PROBE_NODE_MAX], b[PROBE_NODE_MAX];

	(void)state;
	assert_int_equal(redis_key(buf, sizeof(buf), "thv:vmcp:session:",
	    REDIS_KIND_VERDICT, "b1", NULL),
	    strlen("thv:vmcp:session:verdict:b1"));
	assert_string_equal(buf, "thv:vmcp:session:verdict:b1");
	assert_int_equal(redis_key(small, sizeof(small), "",
	    REDIS_KIND_VERDICT, "0123456789abcdef", NULL), 0);
	/* the channel */
	assert_int_equal(redis_key(buf, sizeof(buf), "p:", REDIS_KIND_HEALTH,
	    NULL), 8);
	assert_string_equal(buf, "p:health");
	/* host:tag; a long host name is cut, never the tag */
	assert_int_equal(verdict_node_id(a, sizeof(a), "h1", "0badcafe"), 11);
	assert_string_equal(a, "h1:0badcafe");
	memset(buf, 'x', 100);
	buf[100] = '\0';
	assert_int_equal(verdict_node_id(b, sizeof(b), buf, "0badcafe"),
	    PROBE_NODE_MAX - 1);
	assert_string_equal(b + PROBE_NODE_MAX - 1 - 9, ":0badcafe");
	assert_int_not_equal(verdict_node_id(a, sizeof(a), NULL, "01234567"),
	    0);
	assert_string_equal(a, "localhost:01234567");
	assert_non_null(strstr(verdict_redis_lua, "TIME"));
	assert_non_null(strstr(verdict_redis_lua, "PUBLISH"));
	assert_int_equal(strlen(redis_script_sha(verdict_redis_lua)), 40);
}

static void
test_entry(void **state)
{
	struct verdict_entry	 e;
	const char		*v;

	(void)state;
	v = "3 1000 1500 6500 1 backend b: refused";
	assert_int_equal(verdict_entry_parse("n1", 2, v, strlen(v), &e), 0);
	assert_int_equal(e.ve_state, PROBE_UNHEALTHY);
	assert_int_equal(e.ve_since, 1000);
	assert_int_equal(e.ve_at, 1500);
	assert_int_equal(e.ve_exp, 6500);
	assert_int_equal(e.ve_last, PROBE_FAILED);
	assert_int_equal(e.ve_errlen, strlen("backend b: refused"));
	assert_memory_equal(e.ve_err, "backend b: refused", e.ve_errlen);
	assert_ptr_equal(e.ve_node, "n1");
	/* no error */
	v = "1 5 6 7 0 ";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), 0);
	assert_int_equal(e.ve_state, PROBE_HEALTHY);
	assert_int_equal(e.ve_errlen, 0);
	/* not understood: a state or outcome out of range, a field
	 * missing, no space after the outcome, a sign, too many digits,
	 * no node */
	v = "5 1 2 3 0 ";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1 1 2 3 3 ";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1 1 2 3";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1 1 2 3 0";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1 -1 2 3 0 ";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1 12345678901234567890 2 3 0 ";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1  1 2 3 0 ";
	assert_int_equal(verdict_entry_parse("n", 1, v, strlen(v), &e), -1);
	v = "1 1 2 3 0 ";
	assert_int_equal(verdict_entry_parse("", 0, v, strlen(v), &e), -1);
	assert_int_equal(verdict_entry_parse("n", 1, v, 0, &e), -1);
}

static void
test_answer(void **state)
{
	redisReply	 r, now, h, kv[4];
	redisReply	*top[2] = { &now, &h }, *els[4] = { &kv[0], &kv[1],
			    &kv[2], &kv[3] };
	struct verdict_entry e;
	uint64_t	 t;
	size_t		 n;
	char		 v0[] = "4 10 20 30 2 HTTP 401", v1[] = "bad";

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&now, 0, sizeof(now));
	memset(&h, 0, sizeof(h));
	memset(kv, 0, sizeof(kv));
	assert_int_equal(verdict_redis_answer(NULL, &t, &n), -1);
	r.type = REDIS_REPLY_ARRAY;
	r.elements = 2;
	r.element = top;
	now.type = REDIS_REPLY_INTEGER;
	now.integer = 25;
	h.type = REDIS_REPLY_ARRAY;
	h.elements = 4;
	h.element = els;
	kv[0].type = kv[1].type = kv[2].type = kv[3].type =
	    REDIS_REPLY_STRING;
	kv[0].str = "a";
	kv[0].len = 1;
	kv[1].str = v0;
	kv[1].len = strlen(v0);
	kv[2].str = "b";
	kv[2].len = 1;
	kv[3].str = v1;
	kv[3].len = strlen(v1);
	assert_int_equal(verdict_redis_answer(&r, &t, &n), 0);
	assert_int_equal(t, 25);
	assert_int_equal(n, 2);
	assert_int_equal(verdict_redis_entry(&r, 0, &e), 0);
	assert_int_equal(e.ve_state, PROBE_UNAUTHENTICATED);
	assert_int_equal(e.ve_last, PROBE_DENIED);
	assert_memory_equal(e.ve_err, "HTTP 401", e.ve_errlen);
	assert_int_equal(verdict_redis_entry(&r, 1, &e), -1);
	assert_int_equal(verdict_redis_entry(&r, 2, &e), -1);
	/* an empty hash */
	h.elements = 0;
	assert_int_equal(verdict_redis_answer(&r, &t, &n), 0);
	assert_int_equal(n, 0);
	/* odd, a field not a string, a negative time, a wrong shape */
	h.elements = 3;
	assert_int_equal(verdict_redis_answer(&r, &t, &n), -1);
	h.elements = 4;
	kv[2].type = REDIS_REPLY_INTEGER;
	assert_int_equal(verdict_redis_entry(&r, 1, &e), -1);
	now.integer = -1;
	assert_int_equal(verdict_redis_answer(&r, &t, &n), -1);
	now.integer = 1;
	h.type = REDIS_REPLY_NIL;
	assert_int_equal(verdict_redis_answer(&r, &t, &n), -1);
	h.type = REDIS_REPLY_ARRAY;
	r.elements = 1;
	assert_int_equal(verdict_redis_answer(&r, &t, &n), -1);
}

/* an entry: node, state, since, at, expires, last outcome */
static struct verdict_entry
ent(const char *node, enum probe_state st, uint64_t since, uint64_t at,
    uint64_t exp, enum probe_outcome last)
{
	struct verdict_entry e;

	memset(&e, 0, sizeof(e));
	e.ve_node = node;
	e.ve_nodelen = strlen(node);
	e.ve_state = st;
	e.ve_since = since;
	e.ve_at = at;
	e.ve_exp = exp;
	e.ve_last = last;
	e.ve_err = "";
	return e;
}

/* the rule over n entries for self at now: followed or not, and whom */
static int
fold(struct verdict_fold *f, const char *self, uint64_t now,
    const struct verdict_entry *es, size_t n, const struct verdict_entry **l)
{
	size_t i;

	verdict_fold_init(f, self, now);
	for (i = 0; i < n; i++)
		verdict_fold_add(f, &es[i]);
	return verdict_fold_result(f, l);
}

/* the node followed, or NULL */
static const char *
pick(const char *self, uint64_t now, const struct verdict_entry *es,
    size_t n)
{
	static char		 who[64];
	struct verdict_fold	 f;
	const struct verdict_entry *l;

	if (!fold(&f, self, now, es, n, &l))
		return NULL;
	(void)snprintf(who, sizeof(who), "%.*s", (int)l->ve_nodelen,
	    l->ve_node);
	return who;
}

/* following, would self probe now? */
static int
confirm(const char *self, uint64_t now, const struct verdict_entry *es,
    size_t n)
{
	struct verdict_fold	 f;
	const struct verdict_entry *l;

	(void)fold(&f, self, now, es, n, &l);
	return verdict_fold_confirm(&f, l);
}

static void
test_rule(void **state)
{
	struct verdict_entry es[4];

	(void)state;
	/* the outcome each state stands for */
	assert_int_equal(verdict_class(PROBE_UNHEALTHY), PROBE_FAILED);
	assert_int_equal(verdict_class(PROBE_UNAUTHENTICATED), PROBE_DENIED);
	assert_int_equal(verdict_class(PROBE_DEGRADED), PROBE_OK);
	assert_int_equal(verdict_class(PROBE_HEALTHY), PROBE_OK);
	/* alone: its own; following, a probe now unless ours agrees */
	es[0] = ent("A", PROBE_UNHEALTHY, 10, 12, 100, PROBE_FAILED);
	es[1] = ent("B", PROBE_HEALTHY, 0, 5, 100, PROBE_OK);
	assert_int_equal(confirm("B", 20, es, 2), 1);
	es[1] = ent("B", PROBE_HEALTHY, 0, 15, 100, PROBE_FAILED);
	assert_int_equal(confirm("B", 20, es, 2), 0);
	assert_int_equal(confirm("C", 20, es, 1), 1);
	es[1] = ent("B", PROBE_HEALTHY, 0, 15, 100, PROBE_OK);
	assert_int_equal(confirm("B", 20, es, 2), 0);	/* not following */

	es[0] = ent("A", PROBE_UNHEALTHY, 10, 12, 100, PROBE_FAILED);
	assert_null(pick("A", 20, es, 1));
	assert_null(pick("B", 20, es, 0));
	/* B probed last before A's change: B follows A (the test's case:
	 * B's interval is long) */
	es[1] = ent("B", PROBE_HEALTHY, 0, 5, 100, PROBE_OK);
	assert_string_equal(pick("B", 20, es, 2), "A");
	/* A's own changed later than B's: A keeps its own */
	assert_null(pick("A", 20, es, 2));
	/* B's probe since A's change answered: B's own path is fine, it
	 * keeps its own (and does so at each of its probes: no flapping
	 * with A's refreshes, which do not move A's since) */
	es[1] = ent("B", PROBE_HEALTHY, 0, 15, 100, PROBE_OK);
	assert_null(pick("B", 20, es, 2));
	es[0] = ent("A", PROBE_UNHEALTHY, 10, 30, 100, PROBE_FAILED);
	assert_null(pick("B", 31, es, 2));
	/* B's probe since then failed too (under its threshold): it
	 * agrees, and follows A at once */
	es[1] = ent("B", PROBE_HEALTHY, 0, 15, 100, PROBE_FAILED);
	assert_string_equal(pick("B", 20, es, 2), "A");
	/* recovery: A answered again (degraded since 40); B, out by its
	 * own count, has not probed since: it follows A back in */
	es[0] = ent("A", PROBE_DEGRADED, 40, 40, 100, PROBE_OK);
	es[1] = ent("B", PROBE_UNHEALTHY, 20, 30, 100, PROBE_FAILED);
	assert_string_equal(pick("B", 41, es, 2), "A");
	/* ... but B's own later failure keeps it out (its path) */
	es[1] = ent("B", PROBE_UNHEALTHY, 20, 45, 100, PROBE_FAILED);
	assert_null(pick("B", 46, es, 2));
	/* an entry past its expiry counts for nothing (its node stopped
	 * writing): B goes by its own */
	es[0] = ent("A", PROBE_UNHEALTHY, 10, 12, 19, PROBE_FAILED);
	es[1] = ent("B", PROBE_HEALTHY, 0, 5, 100, PROBE_OK);
	assert_null(pick("B", 20, es, 2));
	/* ours past its expiry: as if we had none, we follow */
	es[0] = ent("A", PROBE_UNHEALTHY, 10, 12, 100, PROBE_FAILED);
	es[1] = ent("B", PROBE_HEALTHY, 0, 15, 16, PROBE_OK);
	assert_string_equal(pick("B", 20, es, 2), "A");
	/* none of ours at all (Redis emptied, not probed yet) */
	assert_string_equal(pick("C", 20, es, 1), "A");
	/* unknown verdicts are nothing to follow */
	es[0] = ent("A", PROBE_UNKNOWN, 10, 12, 100, PROBE_FAILED);
	assert_null(pick("B", 20, es, 1));
	/* ours unknown (restarted, under the threshold) changed later:
	 * we still follow the last real verdict */
	es[0] = ent("A", PROBE_UNHEALTHY, 10, 12, 100, PROBE_FAILED);
	es[1] = ent("B", PROBE_UNKNOWN, 15, 15, 100, PROBE_FAILED);
	assert_string_equal(pick("B", 20, es, 2), "A");
	/* the latest change among several wins; ties by node id */
	es[0] = ent("A", PROBE_UNHEALTHY, 10, 30, 100, PROBE_FAILED);
	es[1] = ent("C", PROBE_HEALTHY, 12, 30, 100, PROBE_OK);
	es[2] = ent("D", PROBE_UNAUTHENTICATED, 11, 30, 100, PROBE_DENIED);
	assert_string_equal(pick("B", 40, es, 3), "C");
	es[1] = ent("C", PROBE_HEALTHY, 10, 30, 100, PROBE_OK);
	es[2] = ent("D", PROBE_UNAUTHENTICATED, 9, 30, 100, PROBE_DENIED);
	assert_string_equal(pick("B", 40, es, 3), "A");
	assert_string_equal(pick("B", 40, &es[1], 2), "C");
	/* unauthenticated elsewhere, answered here since: our own */
	es[0] = ent("A", PROBE_UNAUTHENTICATED, 10, 30, 100, PROBE_DENIED);
	es[1] = ent("B", PROBE_HEALTHY, 0, 20, 100, PROBE_OK);
	assert_null(pick("B", 40, es, 2));
	/* degraded elsewhere, answered here since: the same class, the
	 * fleet's (seen so on every node) */
	es[0] = ent("A", PROBE_DEGRADED, 10, 30, 100, PROBE_OK);
	assert_string_equal(pick("B", 40, es, 2), "A");
	/* a node id that is a prefix of ours is another node */
	es[0] = ent("B1", PROBE_UNHEALTHY, 10, 12, 100, PROBE_FAILED);
	es[1] = ent("B", PROBE_HEALTHY, 0, 5, 100, PROBE_OK);
	assert_string_equal(pick("B", 20, es, 2), "B1");
	assert_null(pick("B1", 20, es, 2));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_entry),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
