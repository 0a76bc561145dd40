/*
 * compositeTools[]: the step graph's checks, once every step is
 * loaded: dependsOn names known steps and makes no cycle, and each
 * template reads only steps among its dependencies (or the forEach item
 * it runs in) and only the .params keys that parameters declares.
 * Called by composite_config.c's load_composite().
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "config_load.h"
#include "composite_load.h"

static size_t
composite_step_find(const struct composite *co, const char *id)
{
	size_t	 i;

	for (i = 0; i < co->co_nsteps; i++)
		if (co->co_steps[i].cs_id != NULL &&
		    strcmp(co->co_steps[i].cs_id, id) == 0)
			return i;
	return SIZE_MAX;
}

/* dependsOn ids to indexes; then each step's ancestors, which finds
 * cycles: steps are settled in rounds, and what is left is in a cycle */
int
cload_graph(struct cload *cl, const char *path)
{
	struct composite	*co = cl->cl_co;
	struct composite_step	*cs;
	struct cnode		*d;
	size_t			 i, j, k, n = co->co_nsteps, left;
	uint8_t			*done;
	int			 progress;

	for (i = 0; i < n; i++) {
		cs = &co->co_steps[i];
		if ((d = cl->cl_depnodes[i]) == NULL)
			continue;
		if ((cs->cs_deps = calloc(d->cn_nkids + 1,
		    sizeof(*cs->cs_deps))) == NULL)
			return config_error(cl->cl_ld, NULL, "out of memory");
		for (j = 0; j < d->cn_nkids; j++) {
			if (d->cn_kids[j]->cn_type != CN_SCALAR ||
			    (k = composite_step_find(co,
			    d->cn_kids[j]->cn_str)) == SIZE_MAX)
				return config_error(cl->cl_ld, d->cn_kids[j],
				    "%s.steps[%zu].dependsOn[%zu]: no step "
				    "\"%s\" in this composite", path, i, j,
				    d->cn_kids[j]->cn_type == CN_SCALAR ?
				    d->cn_kids[j]->cn_str : "");
			if (k == i)
				return config_error(cl->cl_ld, d->cn_kids[j],
				    "%s.steps[%zu].dependsOn[%zu]: a step "
				    "cannot depend on itself", path, i, j);
			cs->cs_deps[cs->cs_ndeps++] = k;
		}
	}
	if ((cl->cl_anc = calloc(n * n, 1)) == NULL ||
	    (done = calloc(n, 1)) == NULL)
		return config_error(cl->cl_ld, NULL, "out of memory");
	for (left = n, progress = 1; left > 0 && progress;) {
		progress = 0;
		for (i = 0; i < n; i++) {
			cs = &co->co_steps[i];
			if (done[i])
				continue;
			for (j = 0; j < cs->cs_ndeps; j++)
				if (!done[cs->cs_deps[j]])
					break;
			if (j < cs->cs_ndeps)
				continue;
			for (j = 0; j < cs->cs_ndeps; j++) {
				k = cs->cs_deps[j];
				cl->cl_anc[i * n + k] = 1;
				for (k = 0; k < n; k++)
					if (cl->cl_anc[cs->cs_deps[j] * n + k])
						cl->cl_anc[i * n + k] = 1;
			}
			done[i] = 1;
			left--;
			progress = 1;
		}
	}
	for (i = 0; i < n && left > 0; i++)
		if (!done[i]) {
			free(done);
			return config_error(cl->cl_ld, cl->cl_depnodes[i],
			    "%s.steps[%zu].dependsOn: step \"%s\" is in a "
			    "dependency cycle", path, i, co->co_steps[i].cs_id);
		}
	free(done);
	return 0;
}

struct refcheck {
	struct cload		*rc_cl;
	const struct tref	*rc_ref;
	char			 rc_msg[CONFIG_ERR_MAX];
};

static int
refcheck_fail(struct refcheck *rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
refcheck_fail(struct refcheck *rc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(rc->rc_msg, sizeof(rc->rc_msg), fmt, ap);
	va_end(ap);
	return 1;
}

static const struct composite_step *
refcheck_foreach(const struct refcheck *rc)
{
	const struct composite	*co = rc->rc_cl->cl_co;

	if (rc->rc_ref->tr_step == SIZE_MAX)
		return NULL;
	return &co->co_steps[rc->rc_ref->tr_step];
}

/* one path a template reads: does it name something that will be there */
static int
refcheck_path(const char *const *segs, size_t n, void *arg)
{
	static const char *const wf[] = { "id", "step_count", "status" };
	static const char *const sfields[] = { "status", "output", "content",
	    "error" };
	struct refcheck			*rc = arg;
	const struct tref		*tr = rc->rc_ref;
	const struct composite		*co = rc->rc_cl->cl_co;
	const struct composite_step	*cs, *fe;
	json_t				*props;
	size_t				 i, k, ns = co->co_nsteps;

	if (n == 0)
		return 0;
	if (strcmp(segs[0], "params") == 0) {
		props = json_object_get(co->co_params, "properties");
		if (n >= 2 && json_object_get(props, segs[1]) == NULL)
			return refcheck_fail(rc, ".params.%s: not a property "
			    "of parameters", segs[1]);
		return 0;
	}
	if (strcmp(segs[0], "workflow") == 0) {
		for (i = 0; n >= 2 && i < nitems(wf); i++)
			if (strcmp(segs[1], wf[i]) == 0)
				return 0;
		return n < 2 ? 0 : refcheck_fail(rc, ".workflow.%s: expected "
		    "one of id, step_count, status", segs[1]);
	}
	if (strcmp(segs[0], "forEach") == 0) {
		fe = refcheck_foreach(rc);
		if (!tr->tr_inner || fe == NULL)
			return refcheck_fail(rc, ".forEach: only inside a "
			    "forEach step's step");
		if (n >= 2 && strcmp(segs[1], "index") != 0 &&
		    strcmp(segs[1], fe->cs_itemvar) != 0)
			return refcheck_fail(rc, ".forEach.%s: expected "
			    ".forEach.%s or .forEach.index", segs[1],
			    fe->cs_itemvar);
		return 0;
	}
	if (strcmp(segs[0], "steps") != 0)
		return refcheck_fail(rc, ".%s: expected .params, .steps, "
		    ".forEach or .workflow", segs[0]);
	if (n < 2)
		return 0;
	if ((k = composite_step_find(co, segs[1])) == SIZE_MAX)
		return refcheck_fail(rc, ".steps.%s: no such step", segs[1]);
	if (tr->tr_step != SIZE_MAX && !rc->rc_cl->cl_anc[tr->tr_step * ns +
	    k])
		return refcheck_fail(rc, ".steps.%s: not among the step's "
		    "dependencies (dependsOn)", segs[1]);
	if (n < 3)
		return 0;
	for (i = 0; i < nitems(sfields); i++)
		if (strcmp(segs[2], sfields[i]) == 0)
			break;
	if (i == nitems(sfields))
		return refcheck_fail(rc, ".steps.%s.%s: expected status, "
		    "output, content or error", segs[1], segs[2]);
	cs = &co->co_steps[k];
	/* a step that may be skipped or fail on has defaultResults */
	if (i == 1 && n >= 4 && (cs->cs_cond != NULL || cs->cs_onerror ==
	    COMPOSITE_CONTINUE || cs->cs_ondecline != COMPOSITE_ABORT ||
	    cs->cs_oncancel != COMPOSITE_ABORT) &&
	    json_object_get(cs->cs_defaults, segs[3]) == NULL)
		return refcheck_fail(rc, ".steps.%s.output.%s: step \"%s\" "
		    "may be skipped, so its defaultResults needs \"%s\"",
		    segs[1], segs[3], segs[1], segs[3]);
	return 0;
}

int
cload_check_refs(struct cload *cl)
{
	struct refcheck	 rc;
	size_t		 i;

	memset(&rc, 0, sizeof(rc));
	rc.rc_cl = cl;
	for (i = 0; i < cl->cl_nrefs; i++) {
		rc.rc_ref = &cl->cl_refs[i];
		if (tmpl_walk_paths(rc.rc_ref->tr_tmpl, refcheck_path,
		    &rc) != 0)
			return config_error(cl->cl_ld, rc.rc_ref->tr_node,
			    "%s: %s", rc.rc_ref->tr_path, rc.rc_msg);
	}
	return 0;
}
