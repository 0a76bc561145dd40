/*
 * shared/health.c: the circuit breaker's decisions, and the breaker as
 * every process shares it through a store in a mkdtemp(3) directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/health_probe.h"
#include "shared/store.h"

#define NOW	1000000ULL

static void
test_steps(void **state)
{
	struct breaker		b;
	enum breaker_verdict	v;

	(void)state;
	memset(&b, 0, sizeof(b));
	/* closed: no write on a pass or on a success */
	assert_int_equal(breaker_admit_step(&b, 5000, 100, NOW, &v), 0);
	assert_int_equal(v, BREAKER_PASS);
	assert_int_equal(breaker_outcome_step(&b, 3, 0, 0, NOW), 0);
	/* two failures count, the third opens */
	assert_int_equal(breaker_outcome_step(&b, 3, 1, 0, NOW), 1);
	assert_int_equal(breaker_outcome_step(&b, 3, 1, 0, NOW), 1);
	assert_int_equal(b.bk_state, BREAKER_CLOSED);
	assert_int_equal(breaker_outcome_step(&b, 3, 1, 0, NOW + 1), 1);
	assert_int_equal(b.bk_state, BREAKER_OPEN);
	assert_int_equal(b.bk_fails, 3);
	assert_int_equal(b.bk_opened_ms, NOW + 1);
	/* open: refused until the timeout, then one trial */
	assert_int_equal(breaker_admit_step(&b, 5000, 100, NOW + 4000, &v),
	    0);
	assert_int_equal(v, BREAKER_REJECT);
	assert_int_equal(breaker_admit_step(&b, 5000, 100, NOW + 5001, &v),
	    1);
	assert_int_equal(v, BREAKER_TRIAL);
	assert_int_equal(b.bk_state, BREAKER_HALF_OPEN);
	assert_int_equal(breaker_admit_step(&b, 5000, 100, NOW + 5002, &v),
	    0);
	assert_int_equal(v, BREAKER_REJECT);
	/* a call from before the opening fails: nothing changes state */
	(void)breaker_outcome_step(&b, 3, 1, 0, NOW + 5003);
	assert_int_equal(b.bk_state, BREAKER_HALF_OPEN);
	/* a lost trial's lease runs out: another trial */
	assert_int_equal(breaker_admit_step(&b, 5000, 100, NOW + 5101, &v),
	    1);
	assert_int_equal(v, BREAKER_TRIAL);
	/* the trial fails: open again, from now */
	assert_int_equal(breaker_outcome_step(&b, 3, 1, 1, NOW + 5200), 1);
	assert_int_equal(b.bk_state, BREAKER_OPEN);
	assert_int_equal(b.bk_opened_ms, NOW + 5200);
	/* the next trial succeeds: closed, nothing counted */
	assert_int_equal(breaker_admit_step(&b, 5000, 100, NOW + 10200, &v),
	    1);
	assert_int_equal(v, BREAKER_TRIAL);
	assert_int_equal(breaker_outcome_step(&b, 3, 0, 1, NOW + 10201), 1);
	assert_int_equal(b.bk_state, BREAKER_CLOSED);
	assert_int_equal(b.bk_fails, 0);
	/* a success after failures below the threshold resets them */
	(void)breaker_outcome_step(&b, 3, 1, 0, NOW);
	assert_int_equal(breaker_outcome_step(&b, 3, 0, 0, NOW), 1);
	assert_int_equal(b.bk_fails, 0);
}

static void
rm_env(const char *dir)
{
	char	 p[512];
	DIR	*d;
	struct dirent *e;

	if ((d = opendir(dir)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			(void)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			(void)unlink(p);
		}
		(void)closedir(d);
	}
	(void)rmdir(dir);
}

/* a store's directory, made by mkdtemp(3) */
static void
env_dir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	(void)snprintf(dir, len, "%s/test_health.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
}

/* through the store: what one caller writes the next decides on (one
 * handle: LMDB forbids opening an environment twice in a process) */
static void
test_shared(void **state)
{
	struct config_health	 ch;
	struct store		*a, *b;
	struct breaker		 br;
	char			 dir[64];

	(void)state;
	env_dir(dir, sizeof(dir));
	assert_int_equal(store_open(&a, dir, 4 << 20, 64, 0), 0);
	b = a;
	memset(&ch, 0, sizeof(ch));
	ch.ch_cb_enabled = 1;
	ch.ch_cb_threshold = 2;
	ch.ch_cb_timeout_ms = 1000;

	assert_int_equal(health_breaker_admit(a, "x", &ch, 100, NOW, &br),
	    BREAKER_PASS);
	health_breaker_record(a, "x", &ch, 1, 0, NOW, NULL);
	health_breaker_record(b, "x", &ch, 1, 0, NOW, NULL);
	/* open for both; another backend is not touched */
	assert_int_equal(health_breaker_admit(a, "x", &ch, 100, NOW + 10,
	    &br), BREAKER_REJECT);
	assert_int_equal(br.bk_fails, 2);
	assert_int_equal(health_breaker_admit(b, "x", &ch, 100, NOW + 10,
	    &br), BREAKER_REJECT);
	assert_int_equal(health_breaker_admit(b, "y", &ch, 100, NOW + 10,
	    &br), BREAKER_PASS);
	/* past the timeout one handle gets the trial, the other not */
	assert_int_equal(health_breaker_admit(a, "x", &ch, 100, NOW + 1000,
	    &br), BREAKER_TRIAL);
	assert_int_equal(health_breaker_admit(b, "x", &ch, 100, NOW + 1001,
	    &br), BREAKER_REJECT);
	assert_int_equal(br.bk_state, BREAKER_HALF_OPEN);
	/* a trial that sent nothing (a cached answer) hands its lease back */
	health_breaker_release(a, "x", &ch, NOW + 1001);
	assert_int_equal(health_breaker_admit(b, "x", &ch, 100, NOW + 1001,
	    &br), BREAKER_TRIAL);
	/* its success closes the breaker for both: the record is gone */
	health_breaker_record(a, "x", &ch, 0, 1, NOW + 1002, NULL);
	assert_int_equal(health_breaker_get(b, "x", NOW + 1003, &br), 0);
	assert_int_equal(br.bk_state, BREAKER_CLOSED);
	assert_int_equal(br.bk_fails, 0);
	assert_int_equal(health_breaker_admit(b, "x", &ch, 100, NOW + 1003,
	    &br), BREAKER_PASS);
	store_close(a);
	rm_env(dir);
}

/* the health checks' states: threshold 3, timeout 1000 ms */
static void
test_probe_steps(void **state)
{
	struct probe_rec p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_string_equal(probe_state_name(p.pr_state), "unknown");
	/* a first failure below the threshold leaves it unknown */
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_FAILED, 0, "refused",
	    NOW), 0);
	assert_int_equal(p.pr_state, PROBE_UNKNOWN);
	assert_string_equal(p.pr_err, "refused");
	/* answered after a failure: degraded, for one interval */
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_OK, 1000, NULL, NOW),
	    1);
	assert_int_equal(p.pr_state, PROBE_DEGRADED);
	assert_int_equal(p.pr_fails, 0);
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_OK, 1000, NULL, NOW),
	    1);
	assert_int_equal(p.pr_state, PROBE_HEALTHY);
	assert_int_equal(p.pr_latency_us, 1000);
	/* slower than half the timeout: degraded */
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_OK, 600000, NULL,
	    NOW), 1);
	assert_int_equal(p.pr_state, PROBE_DEGRADED);
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_OK, 400000, NULL,
	    NOW), 1);
	assert_int_equal(p.pr_state, PROBE_HEALTHY);
	/* fewer failures than the threshold change nothing; then unhealthy */
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_FAILED, 0, "a", NOW),
	    0);
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_FAILED, 0, "b", NOW),
	    0);
	assert_int_equal(p.pr_state, PROBE_HEALTHY);
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_FAILED, 0, "c",
	    NOW + 5), 1);
	assert_int_equal(p.pr_state, PROBE_UNHEALTHY);
	assert_true(probe_state_out(p.pr_state));
	assert_int_equal(p.pr_fails, 3);
	assert_int_equal(p.pr_at_ms, NOW + 5);
	assert_string_equal(p.pr_err, "c");
	/* back: degraded first (in the view again), then healthy */
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_OK, 10, NULL, NOW),
	    1);
	assert_int_equal(p.pr_state, PROBE_DEGRADED);
	assert_false(probe_state_out(p.pr_state));
	/* 401/403: unauthenticated at once, whatever the threshold */
	assert_int_equal(probe_step(&p, 3, 1000, PROBE_DENIED, 10,
	    "HTTP 401", NOW), 1);
	assert_int_equal(p.pr_state, PROBE_UNAUTHENTICATED);
	assert_false(probe_state_out(p.pr_state));
	assert_string_equal(probe_state_name(p.pr_state), "unauthenticated");
}

/* a store in a new directory, and a threshold of one failed probe */
static struct store *
probe_store(char *dir, size_t len, struct config_health *ch)
{
	struct store *s;

	env_dir(dir, len);
	assert_int_equal(store_open(&s, dir, 4 << 20, 64, 0), 0);
	memset(ch, 0, sizeof(*ch));
	ch->ch_unhealthy = 1;
	ch->ch_timeout_ms = 1000;
	return s;
}

/* the probe record through the store, and vmcpctl reprobe's clearing */
static void
test_probe_shared(void **state)
{
	struct config_health	 ch;
	struct store		*s;
	struct probe_rec	 old, cur;
	char			 dir[64];

	(void)state;
	s = probe_store(dir, sizeof(dir), &ch);

	assert_int_equal(health_probe_clear(s, "x"), 0);
	assert_int_equal(health_probe_record(s, "x", &ch, PROBE_FAILED, 0,
	    "gone", NOW, &old, &cur), 0);
	assert_int_equal(old.pr_state, PROBE_UNKNOWN);
	assert_int_equal(cur.pr_state, PROBE_UNHEALTHY);
	assert_int_equal(health_probe_get(s, "x", NOW + 1, &cur), 0);
	assert_int_equal(cur.pr_state, PROBE_UNHEALTHY);
	assert_string_equal(cur.pr_err, "gone");
	/* another backend is not touched */
	assert_int_equal(health_probe_get(s, "y", NOW + 1, &cur), 0);
	assert_int_equal(cur.pr_state, PROBE_UNKNOWN);
	assert_int_equal(health_probe_clear(s, "x"), 1);
	assert_int_equal(health_probe_get(s, "x", NOW + 2, &cur), 0);
	assert_int_equal(cur.pr_state, PROBE_UNKNOWN);
	assert_int_equal(cur.pr_at_ms, 0);
	store_close(s);
	rm_env(dir);
}

/* the fleet's verdict followed over our own, until it lapses or goes */
static void
test_fleet(void **state)
{
	struct config_health	 ch;
	struct store		*s;
	struct probe_rec	 old, cur;
	struct probe_fleet	 pf;
	char			 dir[64], node[PROBE_NODE_MAX];

	(void)state;
	s = probe_store(dir, sizeof(dir), &ch);
	assert_int_equal(health_probe_record(s, "x", &ch, PROBE_OK, 10, NULL,
	    NOW, &old, &cur), 0);
	assert_int_equal(health_fleet_get(s, "x", NOW, &pf), 0);
	/* nothing followed: our own */
	assert_int_equal(health_verdict_get(s, "x", NOW, &cur, node,
	    sizeof(node)), 0);
	assert_int_equal(cur.pr_state, PROBE_HEALTHY);
	assert_string_equal(node, "");
	/* another node's unhealthy, until NOW + 100 */
	memset(&pf, 0, sizeof(pf));
	pf.pf_state = PROBE_UNHEALTHY;
	pf.pf_until_ms = NOW + 100;
	(void)snprintf(pf.pf_node, sizeof(pf.pf_node), "h:0badcafe");
	(void)snprintf(pf.pf_err, sizeof(pf.pf_err), "refused");
	assert_int_equal(health_fleet_set(s, "x", &pf, NOW), 0);
	assert_int_equal(health_verdict_get(s, "x", NOW + 1, &cur, node,
	    sizeof(node)), 0);
	assert_int_equal(cur.pr_state, PROBE_UNHEALTHY);
	assert_string_equal(cur.pr_err, "refused");
	assert_string_equal(node, "h:0badcafe");
	assert_int_equal(cur.pr_latency_us, 10);	/* the rest our own */
	/* the probe record itself stays ours */
	assert_int_equal(health_probe_get(s, "x", NOW + 1, &cur), 0);
	assert_int_equal(cur.pr_state, PROBE_HEALTHY);
	/* another backend is not touched */
	assert_int_equal(health_verdict_get(s, "y", NOW + 1, &cur, NULL, 0),
	    0);
	assert_int_equal(cur.pr_state, PROBE_UNKNOWN);
	/* lapsed (Redis no longer confirms it): our own */
	assert_int_equal(health_verdict_get(s, "x", NOW + 100, &cur, node,
	    sizeof(node)), 0);
	assert_int_equal(cur.pr_state, PROBE_HEALTHY);
	assert_string_equal(node, "");
	assert_int_equal(health_fleet_get(s, "x", NOW + 100, &pf), 0);
	/* dropped: our own */
	pf.pf_state = PROBE_DEGRADED;
	pf.pf_until_ms = NOW + 1000;
	assert_int_equal(health_fleet_set(s, "x", &pf, NOW), 0);
	assert_int_equal(health_fleet_get(s, "x", NOW, &pf), 1);
	assert_int_equal(pf.pf_state, PROBE_DEGRADED);
	assert_int_equal(health_fleet_set(s, "x", NULL, NOW), 0);
	assert_int_equal(health_fleet_get(s, "x", NOW, &pf), 0);
	assert_int_equal(health_fleet_set(s, "x", NULL, NOW), 0);
	/* an unknown state followed is none */
	memset(&pf, 0, sizeof(pf));
	pf.pf_until_ms = NOW + 1000;
	assert_int_equal(health_fleet_set(s, "x", &pf, NOW), 0);
	assert_int_equal(health_fleet_get(s, "x", NOW, &pf), 0);
	store_close(s);
	rm_env(dir);
}

/* the node tag: drawn once per state directory, then kept */
static void
test_node_tag(void **state)
{
	struct config_health	 ch;
	struct store		*s;
	char			 dir[64], t1[HEALTH_NODE_TAG_LEN + 1];
	char			 t2[HEALTH_NODE_TAG_LEN + 1];

	(void)state;
	s = probe_store(dir, sizeof(dir), &ch);
	assert_int_equal(health_node_tag(s, t1), 0);
	assert_int_equal(strlen(t1), HEALTH_NODE_TAG_LEN);
	assert_int_equal(strspn(t1, "0123456789abcdef"), HEALTH_NODE_TAG_LEN);
	assert_int_equal(health_node_tag(s, t2), 0);
	assert_string_equal(t1, t2);
	/* a record of another layout is drawn again */
	assert_int_equal(store_put(s, STORE_HEALTH, "node/tag", 8, "xyz", 3, 0,
	    NOW), 0);
	assert_int_equal(health_node_tag(s, t2), 0);
	assert_int_equal(strspn(t2, "0123456789abcdef"), HEALTH_NODE_TAG_LEN);
	assert_int_equal(health_node_tag(s, t1), 0);
	assert_string_equal(t1, t2);
	store_close(s);
	rm_env(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_probe_steps),
		cmocka_unit_test(test_probe_shared),
		cmocka_unit_test(test_fleet),
		cmocka_unit_test(test_node_tag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
