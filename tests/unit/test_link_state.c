/*
 * The requestState of a 2026-07-28 consent round (worker/link/link_state.c):
 * opens only as sealed here, for the same scope and backend, before its
 * expiry; a byte changed, appended or cut does not open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shared/link_rec.h"
#include "shared/seal.h"
#include "worker/link/link.h"

#define ID	CONSENT_PREFIX "0123456789abcdef0123456789abcdef"
#define NOW	1800000000000ULL

static int
setup(void **st)
{
	(void)st;
	return seal_key_generate();
}

static void
test_round_trip(void **st)
{
	char	 s[LINK_STATE_MAX], id[CONSENT_ID_LEN + 1];
	int	 round = 0;

	(void)st;
	assert_int_equal(link_state_seal("scope-a", "github", ID, 3, NOW, s,
	    sizeof(s)), 0);
	assert_true(link_state_ours(s));
	assert_null(strstr(s, "github"));
	assert_null(strstr(s, ID));
	assert_int_equal(link_state_open(s, "scope-a", "github", NOW + 1000,
	    id, sizeof(id), &round), 0);
	assert_string_equal(id, ID);
	assert_int_equal(round, 3);
}

static void
test_bound(void **st)
{
	char	 s[LINK_STATE_MAX], id[CONSENT_ID_LEN + 1];
	int	 round;

	(void)st;
	assert_int_equal(link_state_seal("scope-a", "github", ID, 1, NOW, s,
	    sizeof(s)), 0);
	/* another principal, another backend, expired */
	assert_int_equal(link_state_open(s, "scope-b", "github", NOW, id,
	    sizeof(id), &round), -1);
	assert_int_equal(link_state_open(s, "scope-a", "jira", NOW, id,
	    sizeof(id), &round), -1);
	assert_int_equal(link_state_open(s, "scope-a", "github",
	    NOW + CONSENT_TTL_MS, id, sizeof(id), &round), -1);
	/* an id buffer too small for it */
	assert_int_equal(link_state_open(s, "scope-a", "github", NOW, id, 8,
	    &round), -1);
}

static void
test_tampered(void **st)
{
	char	 s[LINK_STATE_MAX], t[LINK_STATE_MAX + 16];
	char	 id[CONSENT_ID_LEN + 1];
	size_t	 i, n;
	int	 round;

	(void)st;
	assert_int_equal(link_state_seal("scope-a", "github", ID, 1, NOW, s,
	    sizeof(s)), 0);
	n = strlen(s);
	/* every hex digit changed in turn */
	for (i = sizeof(LINK_STATE_PREFIX) - 1; i < n; i++) {
		memcpy(t, s, n + 1);
		t[i] = t[i] == '0' ? '1' : '0';
		assert_int_equal(link_state_open(t, "scope-a", "github", NOW,
		    id, sizeof(id), &round), -1);
	}
	/* appended to (the conformance check's "-TAMPERED"), cut, odd */
	memcpy(t, s, n + 1);
	strcat(t, "-TAMPERED");
	assert_int_equal(link_state_open(t, "scope-a", "github", NOW, id,
	    sizeof(id), &round), -1);
	t[n - 2] = '\0';
	assert_int_equal(link_state_open(t, "scope-a", "github", NOW, id,
	    sizeof(id), &round), -1);
	t[n - 3] = '\0';
	assert_int_equal(link_state_open(t, "scope-a", "github", NOW, id,
	    sizeof(id), &round), -1);
	/* not ours at all */
	assert_false(link_state_ours("opaque-backend-state"));
	assert_false(link_state_ours(NULL));
	assert_int_equal(link_state_open(LINK_STATE_PREFIX, "scope-a",
	    "github", NOW, id, sizeof(id), &round), -1);
	assert_int_equal(link_state_open("opaque", "scope-a", "github", NOW,
	    id, sizeof(id), &round), -1);
}

static void
test_other_key(void **st)
{
	char	 s[LINK_STATE_MAX], id[CONSENT_ID_LEN + 1];
	int	 round;

	(void)st;
	assert_int_equal(link_state_seal("scope-a", "github", ID, 1, NOW, s,
	    sizeof(s)), 0);
	/* a restart's new key: the old state does not open */
	assert_int_equal(seal_key_generate(), 0);
	assert_int_equal(link_state_open(s, "scope-a", "github", NOW, id,
	    sizeof(id), &round), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_other_key),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
