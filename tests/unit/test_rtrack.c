/*
 * The trust table of Redis's client-side caching (worker/redis/redis_tracking.c):
 * an answer is trusted only if no invalidation of its key and no flush
 * came between its read being sent and its answer, as a table of the
 * orders events can come in; then what ends the trust.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/redis/redis_tracking.h"

#define ID	"s0000000000000000000000000000000000000000001"
#define OTHER	"s0000000000000000000000000000000000000000002"

/* what may happen between a read sent (its ticket) and its answer */
enum ev {
	EV_END = 0,
	EV_SEND,		/* the read of ID is sent */
	EV_INVAL,		/* Redis: ID's key written */
	EV_INVAL_OTHER,		/* Redis: another key, another slot */
	EV_FLUSH,		/* Redis: everything (FLUSHALL) */
	EV_OFF,			/* a connection lost */
	EV_ON,			/* tracking set (again) */
	EV_ANSWER		/* the read's answer: stamp 7 */
};

static const struct {
	const char	*name;
	enum ev		 evs[8];
	int		 trusted;	/* after the last event */
} cases[] = {
	{ "answer alone", { EV_SEND, EV_ANSWER }, 1 },
	{ "invalidation before the read", { EV_INVAL, EV_SEND, EV_ANSWER },
	    1 },
	{ "invalidation between read and answer",
	    { EV_SEND, EV_INVAL, EV_ANSWER }, 0 },
	{ "invalidation after the answer", { EV_SEND, EV_ANSWER, EV_INVAL },
	    0 },
	{ "another key's invalidation meanwhile",
	    { EV_SEND, EV_INVAL_OTHER, EV_ANSWER }, 1 },
	{ "flush between", { EV_SEND, EV_FLUSH, EV_ANSWER }, 0 },
	{ "flush after", { EV_SEND, EV_ANSWER, EV_FLUSH }, 0 },
	{ "connection lost between", { EV_SEND, EV_OFF, EV_ANSWER }, 0 },
	{ "lost and set again between",
	    { EV_SEND, EV_OFF, EV_ON, EV_ANSWER }, 0 },
	{ "set again after", { EV_SEND, EV_ANSWER, EV_ON }, 0 },
	{ "sent while off, answered once on",
	    { EV_OFF, EV_SEND, EV_ON, EV_ANSWER }, 0 },
	{ "sent while off, answered while off", { EV_OFF, EV_SEND, EV_ANSWER },
	    0 },
	{ "read again after an invalidation",
	    { EV_SEND, EV_ANSWER, EV_INVAL, EV_SEND, EV_ANSWER }, 1 },
	{ "read again after a flush",
	    { EV_SEND, EV_ANSWER, EV_FLUSH, EV_SEND, EV_ANSWER }, 1 },
	{ "two reads, the invalidation between their sends",
	    { EV_SEND, EV_INVAL, EV_SEND, EV_ANSWER, EV_ANSWER }, 1 },
};

static void
test_races(void **state)
{
	struct rtrack	*rt;
	uint64_t	 tickets[8];
	size_t		 i, j, sent, answered;

	(void)state;
	assert_non_null(rt = malloc(sizeof(*rt)));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rtrack_init(rt);
		rtrack_set_on(rt, 1);
		sent = answered = 0;
		for (j = 0; cases[i].evs[j] != EV_END; j++) {
			switch (cases[i].evs[j]) {
			case EV_SEND:
				tickets[sent++] = rtrack_ticket(rt);
				break;
			case EV_INVAL:
				rtrack_invalidate(rt, ID, strlen(ID));
				break;
			case EV_INVAL_OTHER:
				rtrack_invalidate(rt, OTHER, strlen(OTHER));
				break;
			case EV_FLUSH:
				rtrack_flush(rt);
				break;
			case EV_OFF:
				rtrack_set_on(rt, 0);
				break;
			case EV_ON:
				rtrack_set_on(rt, 1);
				break;
			case EV_ANSWER:
				(void)rtrack_answer(rt, ID,
				    tickets[answered++], 7);
				break;
			case EV_END:
				break;
			}
		}
		if (rtrack_trusted(rt, ID, 7) != cases[i].trusted)
			fail_msg("%s: trusted %d, not %d", cases[i].name,
			    !cases[i].trusted, cases[i].trusted);
	}
	free(rt);
}

static void
test_stamps(void **state)
{
	struct rtrack	*rt;
	uint64_t	 t;

	(void)state;
	assert_non_null(rt = malloc(sizeof(*rt)));
	rtrack_init(rt);
	/* off at start: nothing trusted */
	assert_int_equal(rtrack_answer(rt, ID, rtrack_ticket(rt), 3), 0);
	rtrack_set_on(rt, 1);
	assert_int_equal(rtrack_answer(rt, ID, rtrack_ticket(rt), 3), 1);
	/* only with the stamp read; 0 (a copy with no stamp) never */
	assert_true(rtrack_trusted(rt, ID, 3));
	assert_false(rtrack_trusted(rt, ID, 4));
	assert_false(rtrack_trusted(rt, ID, 0));
	assert_false(rtrack_trusted(rt, OTHER, 3));
	assert_int_equal(rtrack_answer(rt, ID, rtrack_ticket(rt), 0), 0);
	/* a newer stamp replaces it */
	assert_int_equal(rtrack_answer(rt, ID, rtrack_ticket(rt), 4), 1);
	assert_true(rtrack_trusted(rt, ID, 4));
	assert_false(rtrack_trusted(rt, ID, 3));
	/* an older read answered later never replaces a newer one */
	t = rtrack_ticket(rt);
	assert_int_equal(rtrack_answer(rt, ID, rtrack_ticket(rt), 5), 1);
	assert_int_equal(rtrack_answer(rt, ID, t, 4), 0);
	assert_true(rtrack_trusted(rt, ID, 5));
	/* an id too long for the table is never trusted */
	{
		char	long_id[RTRACK_ID_MAX + 2];

		memset(long_id, 'a', sizeof(long_id) - 1);
		long_id[sizeof(long_id) - 1] = '\0';
		assert_int_equal(rtrack_answer(rt, long_id,
		    rtrack_ticket(rt), 1), 0);
		assert_false(rtrack_trusted(rt, long_id, 1));
		rtrack_invalidate(rt, long_id, strlen(long_id));
		assert_true(rtrack_trusted(rt, ID, 5));
	}
	free(rt);
}

/* ids sharing a slot: each evicts the other, and invalidates it */
static void
test_collisions(void **state)
{
	struct rtrack	*rt;
	char		 a[16], b[16];
	size_t		 sa;
	unsigned	 n;

	(void)state;
	assert_non_null(rt = malloc(sizeof(*rt)));
	(void)snprintf(a, sizeof(a), "id0");
	sa = rtrack_slot(a, strlen(a));
	for (n = 1;; n++) {
		(void)snprintf(b, sizeof(b), "id%u", n);
		if (rtrack_slot(b, strlen(b)) == sa)
			break;
	}
	rtrack_init(rt);
	rtrack_set_on(rt, 1);
	assert_int_equal(rtrack_answer(rt, a, rtrack_ticket(rt), 1), 1);
	assert_int_equal(rtrack_answer(rt, b, rtrack_ticket(rt), 1), 1);
	assert_false(rtrack_trusted(rt, a, 1));
	assert_true(rtrack_trusted(rt, b, 1));
	/* a's key written: b is checked again too (a check, not an error) */
	rtrack_invalidate(rt, a, strlen(a));
	assert_false(rtrack_trusted(rt, b, 1));
	assert_int_equal(rtrack_answer(rt, b, rtrack_ticket(rt), 1), 1);
	assert_true(rtrack_trusted(rt, b, 1));
	/* an invalidation's key is not NUL-terminated: its length counts */
	rtrack_invalidate(rt, "id", 2);
	assert_true(rtrack_trusted(rt, b, 1) ||
	    rtrack_slot("id", 2) == rtrack_slot(b, strlen(b)));
	free(rt);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_races),
		cmocka_unit_test(test_stamps),
		cmocka_unit_test(test_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
