/*
 * counters_op.c: the MCP operation durations of a fake slot as OTLP
 * histograms (diag_otlp_collect()): this process's slot only, one point
 * per series with a count, the conventions' names, unit, attributes and
 * bounds, bucket counts as the slot holds them (not cumulative), the
 * sum in seconds; and a backend request's method read off its body.
 * A request's target tagged (only a tools/call's or a prompts/get's),
 * the same key found again, the table's bound and long names folded
 * into "_other", and the request's duration counted under its target.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "unit.h"

#include "proto/method.h"
#include "shared/config.h"
#include "shared/otlp.h"
#include "shared/stats.h"
#include "worker/http/httpd.h"
#include "worker/http/httpd_int.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

#include "unit_slots.h"

static struct diag_slot *
slot(int i)
{
	return diag_stats_slot(w.w_stats, &conf, i);
}

static int
op_index(const char *method)
{
	return diag_op_method(mcp_method_find(method));
}

/* the attribute key's string value of a point, or NULL */
static const char *
attr(const struct otlp_hist_point *hp, const char *key)
{
	static char	buf[128];
	size_t		i;

	for (i = 0; i < hp->hp_nattrs; i++)
		if (strcmp(hp->hp_attrs[i].oa_key, key) == 0) {
			assert_int_equal(hp->hp_attrs[i].oa_type, OTLP_V_STR);
			assert_true(hp->hp_attrs[i].oa_len < sizeof(buf));
			memcpy(buf, hp->hp_attrs[i].oa_str,
			    hp->hp_attrs[i].oa_len);
			buf[hp->hp_attrs[i].oa_len] = '\0';
			return buf;
		}
	return NULL;
}

static const struct otlp_hist_point *
point_of(const struct otlp_histogram *h, const char *method,
    const char *key, const char *name)
{
	const struct otlp_hist_point	*hp;
	const char			*v;
	size_t				 i;

	for (i = 0; i < h->oh_npoints; i++) {
		hp = &h->oh_points[i];
		if (strcmp(attr(hp, "mcp.method.name"), method) != 0)
			continue;
		if (key == NULL || ((v = attr(hp, key)) != NULL &&
		    strcmp(v, name) == 0))
			return hp;
	}
	return NULL;
}

static void
test_empty(void **state)
{
	struct diag_otlp	o;

	(void)state;
	assert_int_equal(diag_otlp_collect(&w, &o), 0);
	assert_int_equal(o.do_npoints, 0);
	assert_int_equal(o.do_hist[0].oh_npoints, 0);
	assert_int_equal(o.do_hist[1].oh_npoints, 0);
	assert_string_equal(o.do_hist[0].oh_name,
	    "mcp.server.operation.duration");
	diag_otlp_free(&o);
}

static void
test_collect(void **state)
{
	struct diag_slot		*ds = slot(1), *other = slot(0);
	struct diag_target		*dt = &ds->ds_targets[7];
	struct diag_otlp		 o;
	const struct otlp_histogram	*sh, *ch;
	const struct otlp_hist_point	*hp;
	uint64_t			 start;
	size_t				 i;
	int				 init = op_index("initialize");

	(void)state;
	/* initialize: 2 ok at 0.015 s and 0.4 s; 1 rejected */
	ds->ds_ops[init][DIAG_OK].dh_n[1] = 1;
	ds->ds_ops[init][DIAG_OK].dh_n[5] = 1;
	ds->ds_ops[init][DIAG_OK].dh_sum_us = 415000;
	ds->ds_ops[init][DIAG_REJECTED].dh_n[0] = 1;
	/* a tool of backend two: 3 ok, 1 rpc_error */
	dt->dt_kind = DIAG_TARGET_TOOL;
	dt->dt_backend = 2;
	strcpy(dt->dt_name, "echo");
	dt->dt_ops[DIAG_OK].dh_n[DIAG_OP_BOUNDS] = 3;	/* +Inf */
	dt->dt_ops[DIAG_OK].dh_sum_us = 3 * 400000000ull;
	dt->dt_ops[DIAG_RPC_ERROR].dh_n[2] = 1;
	dt->dt_ready = 1;
	/* a prompt of no backend (a name folded) */
	ds->ds_targets[90].dt_kind = DIAG_TARGET_PROMPT;
	strcpy(ds->ds_targets[90].dt_name, "_other");
	ds->ds_targets[90].dt_ops[DIAG_ABORTED].dh_n[0] = 1;
	ds->ds_targets[90].dt_ready = 1;
	/* another slot's figures are not this process's */
	other->ds_ops[init][DIAG_FAILED].dh_n[0] = 9;
	other->ds_backends[0].db_ops[0].dh_n[0] = 9;
	/* a backend request of backend one, answered */
	start = diag_backend_start("tools/call");
	diag_backend_done(&w, &bes[0], start, 0, 200, NULL);
	/* and one of backend two that failed, its method unknown */
	start = diag_backend_start("x/y");
	diag_backend_done(&w, &bes[1], start, -1, 0, "refused");

	assert_int_equal(diag_otlp_collect(&w, &o), 0);
	sh = &o.do_hist[0];
	ch = &o.do_hist[1];
	assert_string_equal(sh->oh_name, "mcp.server.operation.duration");
	assert_string_equal(ch->oh_name, "mcp.client.operation.duration");
	assert_string_equal(sh->oh_unit, "s");
	assert_string_equal(ch->oh_unit, "s");
	assert_int_equal(sh->oh_npoints, 5);
	assert_int_equal(ch->oh_npoints, 2);
	for (i = 0; i < o.do_npoints; i++) {
		hp = &o.do_points[i];
		assert_int_equal(hp->hp_nbounds, DIAG_OP_BOUNDS);
		assert_true(hp->hp_bounds[0] == 0.01);
		assert_true(hp->hp_bounds[DIAG_OP_BOUNDS - 1] == 300);
		assert_true(hp->hp_start_ns > 0);
		assert_true(hp->hp_time_ns >= hp->hp_start_ns);
	}

	/* initialize ok: its buckets as they are, the sum in seconds */
	hp = NULL;
	for (i = 0; i < sh->oh_npoints; i++)
		if (strcmp(attr(&sh->oh_points[i], "mcp.method.name"),
		    "initialize") == 0 &&
		    attr(&sh->oh_points[i], "error.type") == NULL)
			hp = &sh->oh_points[i];
	assert_non_null(hp);
	assert_int_equal(hp->hp_nattrs, 1);
	assert_int_equal(hp->hp_count, 2);
	assert_int_equal(hp->hp_buckets[1], 1);
	assert_int_equal(hp->hp_buckets[5], 1);
	assert_int_equal(hp->hp_buckets[0], 0);
	assert_true(hp->hp_sum > 0.4149 && hp->hp_sum < 0.4151);
	hp = point_of(sh, "initialize", "error.type", "rejected");
	assert_non_null(hp);
	assert_int_equal(hp->hp_count, 1);
	assert_null(point_of(sh, "initialize", "error.type", "failed"));

	/* the tool: its name, backend, and error.type only when not ok */
	hp = point_of(sh, "tools/call", "error.type", "rpc_error");
	assert_non_null(hp);
	assert_string_equal(attr(hp, "gen_ai.tool.name"), "echo");
	assert_string_equal(attr(hp, "vmcpd.backend.name"), "two");
	assert_int_equal(hp->hp_count, 1);
	assert_int_equal(hp->hp_buckets[2], 1);
	for (i = 0; i < sh->oh_npoints; i++) {
		hp = &sh->oh_points[i];
		if (strcmp(attr(hp, "mcp.method.name"), "tools/call") == 0 &&
		    attr(hp, "error.type") == NULL)
			break;
	}
	assert_true(i < sh->oh_npoints);
	assert_int_equal(hp->hp_nattrs, 3);
	assert_int_equal(hp->hp_count, 3);
	assert_int_equal(hp->hp_buckets[DIAG_OP_BOUNDS], 3);
	assert_true(hp->hp_sum == 1200.0);
	assert_null(attr(hp, "gen_ai.prompt.name"));

	/* the folded prompt: prompts/get, no backend */
	hp = point_of(sh, "prompts/get", "gen_ai.prompt.name", "_other");
	assert_non_null(hp);
	assert_null(attr(hp, "vmcpd.backend.name"));
	assert_null(attr(hp, "gen_ai.tool.name"));
	assert_string_equal(attr(hp, "error.type"), "aborted");

	/* the client side: by backend and method, this slot's only */
	hp = point_of(ch, "tools/call", "vmcpd.backend.name", "one");
	assert_non_null(hp);
	assert_int_equal(hp->hp_count, 1);
	assert_int_equal(hp->hp_nattrs, 2);
	hp = point_of(ch, "other", "vmcpd.backend.name", "two");
	assert_non_null(hp);
	assert_int_equal(hp->hp_count, 1);
	assert_null(point_of(ch, "initialize", NULL, NULL));

	diag_otlp_free(&o);
	assert_null(o.do_points);
}

/* a process with no slot (no shared figures) collects nothing */
static void
test_no_slot(void **state)
{
	struct diag_otlp	o;
	struct diag_slot	*keep = w.w_stats;

	(void)state;
	w.w_stats = NULL;
	assert_int_equal(diag_otlp_collect(&w, &o), 0);
	assert_int_equal(o.do_npoints, 0);
	diag_otlp_free(&o);
	w.w_stats = keep;
}

/* a request of method, arrived ago_us before now (a real struct) */
static void
req_make(struct httpd_req *req, const char *method, uint64_t ago_us)
{
	memset(req, 0, sizeof(*req));
	diag_tag_method(req, mcp_method_find(method));
	req->r_arrived = diag_now_us() - ago_us;
}

static int
target_of(const struct httpd_req *req)
{
	return (int)(httpd_req_tag(req) >> 20) - 1;
}

static void
test_tag(void **state)
{
	struct diag_slot	*ds = slot(1);
	struct httpd_req	 req, req2;
	const struct diag_target *dt;
	char			 name[100];
	int			 i, t, other;

	(void)state;
	/* a tool of backend one, found again by a second call */
	req_make(&req, "tools/call", 15000);
	diag_tag_target(&w, &req, "echo", 4, &bes[0]);
	t = target_of(&req);
	assert_true(t >= 0 && t < DIAG_TARGETS);
	dt = &ds->ds_targets[t];
	assert_int_equal(dt->dt_ready, 1);
	assert_string_equal(dt->dt_name, "echo");
	assert_int_equal(dt->dt_kind, DIAG_TARGET_TOOL);
	assert_int_equal(dt->dt_backend, 1);
	/* a second tag (the pipeline after the fast route) keeps the first */
	diag_tag_target(&w, &req, "other", 5, &bes[1]);
	assert_int_equal(target_of(&req), t);
	req_make(&req2, "tools/call", 0);
	diag_tag_target(&w, &req2, "echo", 4, &bes[0]);
	assert_int_equal(target_of(&req2), t);
	/* the same name of another backend, or a prompt's, is another */
	req_make(&req2, "tools/call", 0);
	diag_tag_target(&w, &req2, "echo", 4, &bes[1]);
	assert_int_not_equal(target_of(&req2), t);
	req_make(&req2, "prompts/get", 0);
	diag_tag_target(&w, &req2, "echo", 4, &bes[0]);
	assert_int_not_equal(target_of(&req2), t);
	assert_int_equal(ds->ds_targets[target_of(&req2)].dt_kind,
	    DIAG_TARGET_PROMPT);
	/* other methods are not tagged */
	req_make(&req2, "tools/list", 0);
	diag_tag_target(&w, &req2, "echo", 4, &bes[0]);
	assert_int_equal(target_of(&req2), -1);

	/* its duration: 15 ms, the second bucket (0.01, 0.02] */
	req.r_status = 200;
	diag_count_mcp(&w, &req);
	assert_int_equal(dt->dt_ops[DIAG_OK].dh_n[1], 1);
	assert_true(dt->dt_ops[DIAG_OK].dh_sum_us >= 15000);
	assert_int_equal(diag_hist_count(&ds->ds_ops[op_index("tools/call")]
	    [DIAG_OK]), 0);
	/* an untagged one: by method; a GET stream is no operation */
	req_make(&req2, "tools/list", 0);
	req2.r_status = 200;
	diag_count_mcp(&w, &req2);
	assert_int_equal(diag_hist_count(&ds->ds_ops[op_index("tools/list")]
	    [DIAG_OK]), 1);
	memset(&req2, 0, sizeof(req2));
	diag_tag_kind(&req2, "stream");
	req2.r_arrived = diag_now_us();
	req2.r_status = 200;
	diag_count_mcp(&w, &req2);

	/* a name too long for the table: "_other", no backend */
	memset(name, 'n', sizeof(name));
	req_make(&req2, "tools/call", 0);
	diag_tag_target(&w, &req2, name, DIAG_TARGET_NAME, &bes[0]);
	other = target_of(&req2);
	assert_true(other >= 0);
	assert_string_equal(ds->ds_targets[other].dt_name, "_other");
	assert_int_equal(ds->ds_targets[other].dt_backend, 0);
	req_make(&req2, "tools/call", 0);
	diag_tag_target(&w, &req2, name, DIAG_TARGET_NAME - 1, &bes[0]);
	assert_int_not_equal(target_of(&req2), other);
	/* the table full: new names fold, known ones are still found */
	for (i = 0; i < 2 * DIAG_TARGETS; i++) {
		(void)snprintf(name, sizeof(name), "t%d", i);
		req_make(&req2, "tools/call", 0);
		diag_tag_target(&w, &req2, name, strlen(name), &bes[1]);
		assert_true(target_of(&req2) >= 0);
	}
	assert_int_equal(target_of(&req2), other);
	assert_true(ds->ds_ntargets <= DIAG_TARGETS);
	req_make(&req2, "tools/call", 0);
	diag_tag_target(&w, &req2, "echo", 4, &bes[0]);
	assert_int_equal(target_of(&req2), t);
	/* and a prompt past it: the prompts' "_other" (kept room) */
	req_make(&req2, "prompts/get", 0);
	diag_tag_target(&w, &req2, "new", 3, &bes[0]);
	assert_true(target_of(&req2) >= 0);
	assert_string_equal(ds->ds_targets[target_of(&req2)].dt_name,
	    "_other");
	assert_int_equal(ds->ds_targets[target_of(&req2)].dt_kind,
	    DIAG_TARGET_PROMPT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tag, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
