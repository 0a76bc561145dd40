/*
 * A composite tool's run as spans (worker/trace/trace.h): an INTERNAL
 * span "vmcpd.workflow {name}" under the client request's SERVER span,
 * one "vmcpd.workflow.step {id}" under it for each step that runs, and
 * each step's backend requests under its step (a retry's or a resumed
 * run's under the workflow).  A run resumed on another worker is a new
 * workflow span under the retry's request.
 */
#include <stdlib.h>
#include <string.h>

#include "shared/composite.h"
#include "worker/composite/composite_run.h"
#include "worker/composite/composite_run_int.h"
#include "worker/http/httpd.h"
#include "worker/trace/trace.h"

void
crun_trace_begin(struct crun *cr, struct httpd_req *req)
{
	struct trace_ref	 parent;
	struct trace_span	*s;

	if (!trace_enabled)
		return;
	/* the context its steps go under when the run is not traced: the
	 * caller's to pass on, or none wanted */
	if (req == NULL || (s = httpd_req_trace(req)) == NULL) {
		cr->cr_ref.tr_unsampled = 1;
		return;
	}
	trace_ref_of(&parent, s, NULL);
	cr->cr_span = trace_begin(&parent, OTLP_KIND_INTERNAL, NULL);
	if (cr->cr_span == NULL) {
		cr->cr_ref = parent;	/* taken */
		return;
	}
	trace_ref_clear(&parent);
	trace_set_name(cr->cr_span, "vmcpd.workflow", cr->cr_co->co_name,
	    strlen(cr->cr_co->co_name));
	trace_set_str(cr->cr_span, "gen_ai.tool.name", cr->cr_co->co_name,
	    strlen(cr->cr_co->co_name));
	cr->cr_steps = calloc(cr->cr_co->co_nsteps, sizeof(*cr->cr_steps));
}

void
crun_trace_step(struct crun *cr, size_t i, enum wf_state st)
{
	const struct composite_step	*cs;
	struct trace_ref		 parent;
	struct trace_span		*s;

	if (cr->cr_steps == NULL || i >= cr->cr_co->co_nsteps)
		return;
	cs = &cr->cr_co->co_steps[i];
	if (st == WF_RUNNING) {
		if (cr->cr_steps[i] != NULL)
			return;
		trace_ref_of(&parent, cr->cr_span, NULL);
		s = trace_begin(&parent, OTLP_KIND_INTERNAL, NULL);
		trace_ref_clear(&parent);
		trace_set_name(s, "vmcpd.workflow.step", cs->cs_id,
		    strlen(cs->cs_id));
		cr->cr_steps[i] = s;
		return;
	}
	if ((s = cr->cr_steps[i]) == NULL)
		return;
	if (st == WF_FAILED)
		trace_set_error(s, "step_failed", NULL);
	else if (st == WF_SKIPPED)
		trace_set_str(s, "vmcpd.workflow.step.skipped", "true", 4);
	else if (st != WF_COMPLETED)
		return;
	trace_end(s);
	cr->cr_steps[i] = NULL;
}

void
crun_trace_call(struct crun *cr, struct request *r)
{
	const struct composite_step	*cs = cr->cr_calling;
	struct trace_span		*s = cr->cr_span;
	size_t				 i;

	trace_ref_clear(&r->r_trace);
	if (cr->cr_span == NULL) {
		trace_ref_of(&r->r_trace, NULL, &cr->cr_ref);
		return;
	}
	for (i = 0; cs != NULL && cr->cr_steps != NULL &&
	    i < cr->cr_co->co_nsteps; i++)
		if ((&cr->cr_co->co_steps[i] == cs ||
		    cr->cr_co->co_steps[i].cs_inner == cs) &&
		    cr->cr_steps[i] != NULL) {
			s = cr->cr_steps[i];
			break;
		}
	trace_ref_of(&r->r_trace, s, NULL);
}

void
crun_trace_end(struct crun *cr, const char *error)
{
	size_t	 i;

	trace_ref_clear(&cr->cr_ref);
	for (i = 0; cr->cr_steps != NULL && i < cr->cr_co->co_nsteps; i++)
		if (cr->cr_steps[i] != NULL) {
			trace_set_error(cr->cr_steps[i], "cancelled", error);
			trace_end(cr->cr_steps[i]);
		}
	free(cr->cr_steps);
	cr->cr_steps = NULL;
	/* its id, made after the span began */
	trace_set_str(cr->cr_span, "vmcpd.workflow.id", cr->cr_id,
	    strnlen(cr->cr_id, sizeof(cr->cr_id)));
	if (cr->cr_span != NULL && error != NULL)
		trace_set_error(cr->cr_span, "workflow_failed", error);
	trace_end(cr->cr_span);
	cr->cr_span = NULL;
}
