/*
 * Unit tests for worker/composite/handle.c and the store's claim (store_claim(),
 * shared/store_write.c) in a mkdtemp(3) environment: a handle minted
 * and resumed once, then every misuse (another owner, a replay, a
 * forged or tampered id, expiry before and after the sweep, another
 * composite, a changed definition, the caps), a race of two processes
 * for one handle, and the record's meta line without the state.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/composite.h"
#include "shared/handle_rec.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "shared/store_sweep.h"
#include "worker/composite/handle.h"
#include "unit.h"

#define MAP_SIZE	(64ULL * 1024 * 1024)
#define NOW		1000000ULL
#define LATER		(NOW + 60000)
#define ALICE		"0123456789abcdef0123456789abcdef"
#define BOB		"fedcba9876543210fedcba9876543210"

static const char YAML[] =
"compositeTools:\n"
"  - name: w\n"
"    description: d\n"
"    steps:\n"
"      - {id: a, tool: x.a}\n"
"  - name: other\n"
"    description: d\n"
"    steps:\n"
"      - {id: a, tool: x.a}\n";

/* the vmcpctl built beside this test (build/tests/.. or build-san) */
static char	 vmcpctl[512];

struct fixture {
	char			 f_dir[64];
	struct store		*f_st;
	struct composite_list	 f_cl;
	const struct composite	*f_w;
	const struct composite	*f_other;
	json_t			*f_snap;
};

static void
load(const char *yaml, struct composite_list *cl)
{
	char	 err[512];

	memset(cl, 0, sizeof(*cl));
	if (composite_load_buffer("t.yaml", yaml, strlen(yaml), cl, err,
	    sizeof(err)) == -1)
		fail_msg("unexpected error: %s", err);
}

static int
setup(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	if (unit_store_dir_make("test_handle", f->f_dir, sizeof(f->f_dir)) ==
	    -1 ||
	    store_open(&f->f_st, f->f_dir, MAP_SIZE, 126, 0) == -1)
		return -1;
	load(YAML, &f->f_cl);
	f->f_w = f->f_cl.cl_items[0];
	f->f_other = f->f_cl.cl_items[1];
	f->f_snap = jparse("{\"v\": 1, \"steps\": [{\"id\": \"a\", "
	    "\"inner\": {\"requestState\": \"backend-secret\"}}]}");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	store_close(f->f_st);
	unit_store_dir_remove(f->f_dir);
	composite_list_free(&f->f_cl);
	json_decref(f->f_snap);
	free(f);
	return 0;
}

static void
mint(struct fixture *f, const char *owner, char *id)
{
	assert_int_equal(handle_mint(f->f_st, owner, f->f_w, f->f_snap, NOW,
	    LATER, id), HANDLE_OK);
}

static enum handle_err
resume(struct fixture *f, const char *id, const char *owner,
    const struct composite *co, uint64_t now)
{
	json_t		*snap = NULL;
	enum handle_err	 e;

	e = handle_resume(f->f_st, id, owner, co, now, &snap);
	if (e == HANDLE_OK) {
		assert_true(json_equal(snap, f->f_snap));
		json_decref(snap);
	} else
		assert_null(snap);
	return e;
}

static void
test_handle_once(void **state)
{
	struct fixture	*f = *state;
	char		 id[HANDLE_ID_LEN + 1], id2[HANDLE_ID_LEN + 1];

	mint(f, ALICE, id);
	assert_int_equal(strlen(id), HANDLE_ID_LEN);
	assert_memory_equal(id, HANDLE_PREFIX, strlen(HANDLE_PREFIX));
	assert_true(handle_id_valid(id));
	mint(f, ALICE, id2);
	assert_string_not_equal(id, id2);
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW + 1), HANDLE_OK);
	/* the first resume took it */
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW + 2),
	    HANDLE_REPLAYED);
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW + 3),
	    HANDLE_REPLAYED);
	/* the anonymous principal owns its own */
	mint(f, "", id);
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW), HANDLE_NOT_OWNER);
	assert_int_equal(resume(f, id, "", f->f_w, NOW), HANDLE_OK);
	assert_string_equal(handle_err_name(HANDLE_UNKNOWN),
	    "unknown_or_forged");
	assert_string_equal(handle_err_name(HANDLE_STALE),
	    "stale_definition");
}

static void
test_handle_not_owner(void **state)
{
	struct fixture	*f = *state;
	char		 id[HANDLE_ID_LEN + 1];

	mint(f, ALICE, id);
	assert_int_equal(resume(f, id, BOB, f->f_w, NOW), HANDLE_NOT_OWNER);
	assert_int_equal(resume(f, id, "", f->f_w, NOW), HANDLE_NOT_OWNER);
	/* a prefix of the owner is not the owner */
	assert_int_equal(resume(f, id, "0123456789abcdef", f->f_w, NOW),
	    HANDLE_NOT_OWNER);
	/* refusals take nothing: the owner still resumes */
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW), HANDLE_OK);
	/* and a stranger's try after that learns no more than before */
	assert_int_equal(resume(f, id, BOB, f->f_w, NOW), HANDLE_NOT_OWNER);
}

static void
test_handle_forged(void **state)
{
	struct fixture	*f = *state;
	char		 id[HANDLE_ID_LEN + 1], bad[HANDLE_ID_LEN + 16];
	static const char *const junk[] = {
		"", "x", "vmcpd-h-", "vmcpd-m-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"vmcpd-h-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"vmcpd-h-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"vmcpd-h-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"vmcpd-h-AAAAAAAAAAAAAAA/AAAAAAAAAAAAAAAA",
	};
	size_t		 i;

	mint(f, ALICE, id);
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		assert_int_equal(resume(f, junk[i], ALICE, f->f_w, NOW),
		    HANDLE_UNKNOWN);
	/* the conformance suite's tampering, and one character changed */
	(void)snprintf(bad, sizeof(bad), "%s-TAMPERED", id);
	assert_int_equal(resume(f, bad, ALICE, f->f_w, NOW), HANDLE_UNKNOWN);
	(void)snprintf(bad, sizeof(bad), "%s", id);
	bad[HANDLE_ID_LEN - 1] = bad[HANDLE_ID_LEN - 1] == 'A' ? 'B' : 'A';
	assert_int_equal(resume(f, bad, ALICE, f->f_w, NOW), HANDLE_UNKNOWN);
	/* none of that spent the real one */
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW), HANDLE_OK);
}

static void
test_handle_expired(void **state)
{
	struct fixture		*f = *state;
	struct store_sweep	 ss;
	char			 id[HANDLE_ID_LEN + 1];
	char			 g[STORE_GROUP_MAX];
	size_t			 n;

	mint(f, ALICE, id);
	assert_int_equal(resume(f, id, ALICE, f->f_w, LATER),
	    HANDLE_EXPIRED);
	assert_int_equal(resume(f, id, ALICE, f->f_w, LATER + 1),
	    HANDLE_EXPIRED);
	/* an expiry in the past is no handle */
	assert_int_equal(handle_mint(f->f_st, ALICE, f->f_w, f->f_snap, NOW,
	    NOW, id), HANDLE_ERROR);
	mint(f, ALICE, id);
	(void)snprintf(g, sizeof(g), "o|%s", ALICE);
	assert_int_equal(store_group_count(f->f_st, STORE_HANDLES, g,
	    strlen(g), &n), 0);
	assert_int_equal(n, 2);
	/* the keeper's sweep: gone, and the owner's count with it */
	assert_int_equal(store_sweep(f->f_st, LATER, 256, &ss), 2);
	assert_int_equal(resume(f, id, ALICE, f->f_w, LATER),
	    HANDLE_UNKNOWN);
	assert_int_equal(store_group_count(f->f_st, STORE_HANDLES, g,
	    strlen(g), &n), 0);
	assert_int_equal(n, 0);
}

static void
test_handle_definition(void **state)
{
	struct fixture		*f = *state;
	struct composite_list	 cl;
	char			 id[HANDLE_ID_LEN + 1];

	mint(f, ALICE, id);
	assert_int_equal(resume(f, id, ALICE, f->f_other, NOW),
	    HANDLE_WRONG_TOOL);
	/* w reloaded with another step: its handles are stale */
	load("compositeTools:\n  - name: w\n    description: d\n"
	    "    steps:\n      - {id: a, tool: x.a}\n"
	    "      - {id: b, tool: x.b}\n", &cl);
	assert_string_not_equal(cl.cl_items[0]->co_fp, f->f_w->co_fp);
	assert_int_equal(resume(f, id, ALICE, cl.cl_items[0], NOW),
	    HANDLE_STALE);
	composite_list_free(&cl);
	/* reloaded unchanged: the same fingerprint, the handle resumes */
	load(YAML, &cl);
	assert_string_equal(cl.cl_items[0]->co_fp, f->f_w->co_fp);
	assert_int_equal(resume(f, id, ALICE, cl.cl_items[0], NOW),
	    HANDLE_OK);
	composite_list_free(&cl);
}

static void
test_handle_caps(void **state)
{
	struct fixture	*f = *state;
	char		 id[HANDLE_ID_LEN + 1];
	json_t		*big;
	char		*s;
	size_t		 i;

	for (i = 0; i < HANDLE_OWNER_CAP; i++)
		mint(f, ALICE, id);
	assert_int_equal(handle_mint(f->f_st, ALICE, f->f_w, f->f_snap, NOW,
	    LATER, id), HANDLE_LIMIT);
	assert_string_equal(id, "");
	/* another owner is not held back by alice's */
	mint(f, BOB, id);
	/* a used handle counts until it expires; an expired one is
	 * reclaimed at the cap */
	assert_int_equal(handle_mint(f->f_st, ALICE, f->f_w, f->f_snap,
	    LATER, LATER + 1000, id), HANDLE_OK);
	/* a state past the bound */
	s = calloc(1, HANDLE_STATE_MAX + 1);
	assert_non_null(s);
	memset(s, 'x', HANDLE_STATE_MAX);
	big = json_pack("{s:s}", "x", s);
	free(s);
	assert_int_equal(handle_mint(f->f_st, BOB, f->f_w, big, NOW, LATER,
	    id), HANDLE_LIMIT);
	json_decref(big);
}

/* what a dump reads: the line, and after use no state at all */
static void
test_handle_record(void **state)
{
	struct fixture		*f = *state;
	struct store_rec	 rec;
	struct handle_meta	 hm;
	char			 id[HANDLE_ID_LEN + 1];
	size_t			 slen;

	mint(f, ALICE, id);
	assert_int_equal(store_get(f->f_st, STORE_HANDLES, id, strlen(id),
	    NOW, &rec), 0);
	assert_int_equal(handle_rec_meta(rec.sr_data, rec.sr_len, &hm), 0);
	assert_string_equal(hm.hm_owner, ALICE);
	assert_string_equal(hm.hm_composite, "w");
	assert_string_equal(hm.hm_fp, f->f_w->co_fp);
	assert_int_equal(hm.hm_created_ms, NOW);
	assert_int_equal(hm.hm_expires_ms, LATER);
	assert_int_equal(hm.hm_used, 0);
	assert_non_null(handle_rec_state(rec.sr_data, rec.sr_len, &slen));
	store_rec_clear(&rec);
	assert_int_equal(resume(f, id, ALICE, f->f_w, NOW), HANDLE_OK);
	assert_int_equal(store_get(f->f_st, STORE_HANDLES, id, strlen(id),
	    NOW, &rec), 0);
	assert_int_equal(handle_rec_meta(rec.sr_data, rec.sr_len, &hm), 0);
	assert_int_equal(hm.hm_used, 1);
	assert_int_equal(hm.hm_created_ms, NOW);
	assert_null(handle_rec_state(rec.sr_data, rec.sr_len, &slen));
	assert_null(strstr(rec.sr_data, "backend-secret"));
	/* the expiry is kept: a replay is known as one until then */
	assert_int_equal(rec.sr_expires_ms, LATER);
	store_rec_clear(&rec);
	/* a record that is no handle's is unknown, not a crash */
	assert_int_equal(store_put(f->f_st, STORE_HANDLES,
	    "vmcpd-h-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", HANDLE_ID_LEN,
	    "{\"owner\": 5}\n{}", 15, LATER, NOW), 0);
	assert_int_equal(resume(f, "vmcpd-h-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    ALICE, f->f_w, NOW), HANDLE_UNKNOWN);
	assert_int_equal(handle_rec_meta("{}", 2, &hm), -1);
	assert_int_equal(handle_rec_meta("nope\n{}", 7, &hm), -1);
}

/* vmcpctl dump handles: whose and what, never the state or the id */
static void
test_handle_dump(void **state)
{
	struct fixture	*f = *state;
	char		 id[HANDLE_ID_LEN + 1], cmd[1024], line[2048];
	json_t		*o, *d;
	FILE		*p;
	size_t		 n = 0;

	mint(f, ALICE, id);
	d = handle_rec_dump("vmcpd-h-x", 9, "junk", 4);
	assert_non_null(d);
	assert_false(json_is_true(json_object_get(d, "valid")));
	json_decref(d);
	if (access(vmcpctl, X_OK) == -1)
		skip();
	(void)snprintf(cmd, sizeof(cmd), "%s -q -d %s dump -a handles", vmcpctl,
	    f->f_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p) != NULL) {
		n++;
		assert_null(strstr(line, "backend-secret"));
		assert_null(strstr(line, id));
		o = jparse(line);
		assert_string_equal(json_string_value(json_object_get(o,
		    "db")), "handles");
		assert_int_equal(strncmp(json_string_value(json_object_get(o,
		    "key")), id, HANDLE_DUMP_ID), 0);
		assert_string_equal(json_string_value(json_object_get(o,
		    "owner")), ALICE);
		assert_string_equal(json_string_value(json_object_get(o,
		    "composite")), "w");
		assert_non_null(json_string_value(json_object_get(o,
		    "created")));
		assert_non_null(json_string_value(json_object_get(o,
		    "expires")));
		assert_false(json_is_true(json_object_get(o, "used")));
		assert_null(json_object_get(o, "value"));
		/* the test's clock is 1970 */
		assert_true(json_is_true(json_object_get(o, "expired")));
		json_decref(o);
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, 1);
}

/* two processes resume one handle at once: one wins, one is refused */
static void
test_handle_race(void **state)
{
	struct fixture	*f = *state;
	char		 id[HANDLE_ID_LEN + 1];
	pid_t		 pid[2];
	int		 status, ok = 0, replayed = 0, i;
	struct store	*st;
	json_t		*snap;
	enum handle_err	 e;

	mint(f, ALICE, id);
	for (i = 0; i < 2; i++) {
		if ((pid[i] = fork()) == -1)
			fail_msg("fork");
		if (pid[i] == 0) {
			/* never an env across fork: a fresh one */
			if (store_open(&st, f->f_dir, MAP_SIZE, 126, 0) == -1)
				_exit(100);
			e = handle_resume(st, id, ALICE, f->f_w, NOW, &snap);
			json_decref(snap);
			store_close(st);
			_exit((int)e);
		}
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == HANDLE_OK)
			ok++;
		else if (WEXITSTATUS(status) == HANDLE_REPLAYED)
			replayed++;
	}
	assert_int_equal(ok, 1);
	assert_int_equal(replayed, 1);
}

int
main(int argc, char *argv[])
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handle_once, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_not_owner, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_forged, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_expired, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_definition, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_caps, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_record, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_race, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_handle_dump, setup,
		    teardown),
	};
	char	 self[400];

	(void)argc;
	(void)snprintf(self, sizeof(self), "%s", argv[0]);
	(void)snprintf(vmcpctl, sizeof(vmcpctl), "%s/../vmcpctl",
	    dirname(self));

	return cmocka_run_group_tests(tests, NULL, NULL);
}
