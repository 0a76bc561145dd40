/*
 * Unit tests for shared/pin_db.c: the pins db in a real LMDB store
 * (mkdtemp(3)): records written and read back, listed by backend or
 * all (in key order, the decision stamps left out, a stop honoured),
 * counted when pending, decided one by one or all of a backend, each
 * decision moving the backend's stamp; and what vmcpctl sees through a
 * read-only store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/pin_db.h"
#include "shared/store.h"
#include "unit.h"

#define MAP_SIZE	(8ULL * 1024 * 1024)

struct fixture {
	char		 f_dir[64];
	struct store	*f_st;
};

static int
setup(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	*state = f;
	if (unit_store_dir_make("test_pin_db", f->f_dir,
	    sizeof(f->f_dir)) == -1 ||
	    store_open(&f->f_st, f->f_dir, MAP_SIZE, 64, 0) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	store_close(f->f_st);
	unit_store_dir_remove(f->f_dir);
	free(f);
	return 0;
}

/* a record of (backend, kind, name): pinned to "h<c>", or pending "n<c>" */
static void
put(struct store *st, const char *backend, enum pin_kind kind,
    const char *name, enum pin_state state, char c)
{
	struct pin_rec	pr;

	memset(&pr, 0, sizeof(pr));
	(void)snprintf(pr.pr_backend, sizeof(pr.pr_backend), "%s", backend);
	(void)snprintf(pr.pr_name, sizeof(pr.pr_name), "%s", name);
	pr.pr_kind = kind;
	pr.pr_state = state;
	memset(pr.pr_hash, c, PIN_HASH_LEN);
	pr.pr_text = strdup("{\"name\":\"old\"}");
	pr.pr_pinned_ms = 1000;
	if (state != PIN_PINNED) {
		memset(pr.pr_new, 'e', PIN_HASH_LEN);
		pr.pr_new_text = strdup("{\"name\":\"new\"}");
		pr.pr_new_ms = 2000;
	}
	assert_int_equal(pin_db_put(st, &pr), 0);
	pin_rec_clear(&pr);
}

struct seen {
	char	s_keys[16][PIN_KEY_MAX + 1];
	int	s_n;
	int	s_stop;		/* stop after this many, 0: never */
};

static int
on_rec(void *arg, const struct pin_rec *pr)
{
	struct seen	*s = arg;

	assert_true(s->s_n < 16);
	assert_true(pin_key(s->s_keys[s->s_n], pr->pr_backend, pr->pr_kind,
	    pr->pr_name) > 0);
	s->s_n++;
	return s->s_stop != 0 && s->s_n >= s->s_stop;
}

static void
test_pin_db_records(void **state)
{
	struct fixture	*f = *state;
	struct pin_rec	 pr;

	(void)state;
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "x", &pr),
	    STORE_NOTFOUND);
	put(f->f_st, "gh", PIN_TOOL, "x", PIN_PINNED, 'a');
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "x", &pr), 0);
	assert_string_equal(pr.pr_backend, "gh");
	assert_int_equal(pr.pr_state, PIN_PINNED);
	assert_int_equal(pr.pr_hash[0], 'a');
	assert_string_equal(pr.pr_text, "{\"name\":\"old\"}");
	pin_rec_clear(&pr);
	/* the kind is part of the key */
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_PROMPT, "x", &pr),
	    STORE_NOTFOUND);
	/* rewritten whole */
	put(f->f_st, "gh", PIN_TOOL, "x", PIN_PENDING, 'a');
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "x", &pr), 0);
	assert_int_equal(pr.pr_state, PIN_PENDING);
	assert_string_equal(pr.pr_new_text, "{\"name\":\"new\"}");
	pin_rec_clear(&pr);
	/* counted pending (one read: the store's group count), and not
	 * once written back pinned, nor once dropped */
	assert_int_equal(pin_db_pending(f->f_st, "gh"), 1);
	assert_int_equal(pin_db_pending(f->f_st, NULL), 1);
	put(f->f_st, "gh", PIN_TOOL, "x", PIN_PINNED, 'a');
	assert_int_equal(pin_db_pending(f->f_st, "gh"), 0);
	put(f->f_st, "gh", PIN_TOOL, "x", PIN_PENDING, 'a');
	assert_int_equal(pin_db_pending(f->f_st, NULL), 1);
	assert_int_equal(pin_db_del(f->f_st, "gh", PIN_TOOL, "x"), 0);
	assert_int_equal(pin_db_pending(f->f_st, "gh"), 0);
	assert_int_equal(pin_db_pending(f->f_st, NULL), 0);
	assert_int_equal(pin_db_del(f->f_st, "gh", PIN_TOOL, "x"),
	    STORE_NOTFOUND);
	/* a bad name is an error, not a miss */
	assert_int_equal(pin_db_get(f->f_st, "a|b", PIN_TOOL, "x", &pr), -1);
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "", &pr), -1);
	/* a damaged record reads as an error, and is skipped by a list */
	assert_int_equal(store_put(f->f_st, STORE_PINS, "gh|tool|bad", 11,
	    "{}", 2, 0, 1), 0);
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "bad", &pr), -1);
	assert_int_equal(pin_db_list(f->f_st, NULL, on_rec,
	    &(struct seen){ .s_n = 0 }), 0);
}

static void
test_pin_db_list(void **state)
{
	struct fixture	*f = *state;
	struct seen	 s;
	char		 name[32];
	int		 i;

	put(f->f_st, "gh", PIN_TOOL, "b", PIN_PINNED, 'a');
	put(f->f_st, "gh", PIN_PROMPT, "a", PIN_PENDING, 'a');
	put(f->f_st, "g", PIN_TOOL, "z", PIN_PENDING, 'a');
	put(f->f_st, "gh2", PIN_TOOL, "a", PIN_REJECTED, 'a');
	/* a stamp of each, which no list hands out */
	assert_int_equal(pin_db_stamp(f->f_st, "gh"), 0);
	assert_int_equal(pin_db_stamp(f->f_st, "g"), 0);

	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_list(f->f_st, "gh", on_rec, &s), 2);
	assert_int_equal(s.s_n, 2);
	assert_string_equal(s.s_keys[0], "gh|prompt|a");
	assert_string_equal(s.s_keys[1], "gh|tool|b");
	/* "g" is no prefix of "gh"'s records */
	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_list(f->f_st, "g", on_rec, &s), 1);
	assert_string_equal(s.s_keys[0], "g|tool|z");
	memset(&s, 0, sizeof(s));
	/* in byte order: '2' < 'h' < '|' */
	assert_int_equal(pin_db_list(f->f_st, NULL, on_rec, &s), 4);
	assert_string_equal(s.s_keys[0], "gh2|tool|a");
	assert_string_equal(s.s_keys[1], "gh|prompt|a");
	assert_string_equal(s.s_keys[3], "g|tool|z");
	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_list(f->f_st, "none", on_rec, &s), 0);
	assert_int_equal(pin_db_list(f->f_st, "a|b", on_rec, &s), -1);

	/* pending only; rejected ones are decided */
	assert_int_equal(pin_db_pending(f->f_st, NULL), 2);
	assert_int_equal(pin_db_pending(f->f_st, "gh"), 1);
	assert_int_equal(pin_db_pending(f->f_st, "gh2"), 0);

	/* the changes alone: pending and rejected, in key order */
	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_list_changes(f->f_st, NULL, on_rec, &s), 3);
	assert_string_equal(s.s_keys[0], "gh2|tool|a");
	assert_string_equal(s.s_keys[1], "gh|prompt|a");
	assert_string_equal(s.s_keys[2], "g|tool|z");
	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_list_changes(f->f_st, "gh", on_rec, &s), 1);

	/* a stop is honoured; more than a page is walked whole */
	s.s_stop = 1;
	s.s_n = 0;
	assert_int_equal(pin_db_list(f->f_st, NULL, on_rec, &s), 1);
	for (i = 0; i < 150; i++) {
		(void)snprintf(name, sizeof(name), "t%03d", i);
		put(f->f_st, "many", PIN_TOOL, name, i % 3 == 0 ? PIN_PENDING :
		    PIN_PINNED, 'b');
	}
	assert_int_equal(pin_db_pending(f->f_st, "many"), 50);
	assert_int_equal(pin_db_list(f->f_st, "many", on_rec,
	    &(struct seen){ .s_stop = 15 }), 15);
}

static void
test_pin_db_decide(void **state)
{
	struct fixture	*f = *state;
	struct pin_rec	 pr;
	struct seen	 s;
	uint64_t	 d0, d1, d2;

	put(f->f_st, "gh", PIN_TOOL, "a", PIN_PENDING, 'a');
	put(f->f_st, "gh", PIN_TOOL, "b", PIN_PENDING, 'b');
	put(f->f_st, "gh", PIN_PROMPT, "c", PIN_PENDING, 'c');
	put(f->f_st, "gh", PIN_TOOL, "d", PIN_PINNED, 'd');
	put(f->f_st, "other", PIN_TOOL, "a", PIN_PENDING, 'a');
	assert_int_equal(pin_db_decided(f->f_st, "gh"), 0);

	/* nothing by that name: no change, no stamp */
	assert_int_equal(pin_db_decide(f->f_st, "gh", PIN_TOOL, "zz", 1), 0);
	assert_int_equal(pin_db_decide(f->f_st, "gh", PIN_TOOL, "d", 1), 0);
	assert_int_equal(pin_db_decided(f->f_st, "gh"), 0);

	/* approve one: the change is the pin */
	assert_int_equal(pin_db_decide(f->f_st, "gh", PIN_TOOL, "a", 1), 1);
	assert_true((d0 = pin_db_decided(f->f_st, "gh")) > 0);
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "a", &pr), 0);
	assert_int_equal(pr.pr_state, PIN_PINNED);
	assert_int_equal(pr.pr_hash[0], 'e');
	assert_string_equal(pr.pr_text, "{\"name\":\"new\"}");
	assert_null(pr.pr_new_text);
	pin_rec_clear(&pr);
	assert_int_equal(pin_db_pending(f->f_st, "gh"), 2);

	/* reject one: kept, marked; the stamp moves even within a ms */
	assert_int_equal(pin_db_decide(f->f_st, "gh", PIN_TOOL, "b", 0), 1);
	assert_true((d1 = pin_db_decided(f->f_st, "gh")) > d0);
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "b", &pr), 0);
	assert_int_equal(pr.pr_state, PIN_REJECTED);
	assert_int_equal(pr.pr_hash[0], 'b');
	pin_rec_clear(&pr);
	assert_int_equal(pin_db_decide(f->f_st, "gh", PIN_TOOL, "b", 0), 0);
	assert_int_equal(pin_db_decided(f->f_st, "gh"), d1);

	/* approve-all: the pending ones of gh, every kind, not the
	 * rejected one, not another backend's; each handed on */
	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_decide_each(f->f_st, "gh", PIN_TOOL, NULL, 1,
	    on_rec, &s), 1);
	assert_int_equal(s.s_n, 1);
	assert_string_equal(s.s_keys[0], "gh|prompt|c");
	assert_true((d2 = pin_db_decided(f->f_st, "gh")) > d1);
	assert_int_equal(pin_db_pending(f->f_st, "gh"), 0);
	assert_int_equal(pin_db_get(f->f_st, "gh", PIN_TOOL, "b", &pr), 0);
	assert_int_equal(pr.pr_state, PIN_REJECTED);
	pin_rec_clear(&pr);
	assert_int_equal(pin_db_pending(f->f_st, "other"), 1);
	assert_int_equal(pin_db_decided(f->f_st, "other"), 0);
	/* a rejected change approved by name */
	assert_int_equal(pin_db_decide(f->f_st, "gh", PIN_TOOL, "b", 1), 1);
	assert_true(pin_db_decided(f->f_st, "gh") > d2);
	/* every backend at once is no decision */
	assert_int_equal(pin_db_decide(f->f_st, NULL, PIN_TOOL, NULL, 1), -1);
}

/* vmcpctl reads through a read-only store, a decision through its own */
static void
test_pin_db_rdonly(void **state)
{
	struct fixture	*f = *state;
	struct store	*ro;
	struct seen	 s;

	assert_int_equal(store_open(&ro, f->f_dir, 0, 0, STORE_RDONLY), 0);
	put(f->f_st, "gh", PIN_TOOL, "a", PIN_PENDING, 'a');
	memset(&s, 0, sizeof(s));
	assert_int_equal(pin_db_list(ro, NULL, on_rec, &s), 1);
	assert_int_equal(pin_db_pending(ro, "gh"), 1);
	assert_int_equal(pin_db_decide(ro, "gh", PIN_TOOL, "a", 1), -1);
	store_close(ro);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pin_db_records, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pin_db_list, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pin_db_decide, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pin_db_rdonly, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
