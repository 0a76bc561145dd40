/*
 * Inside the pipeline (worker/pipeline/): the request's span
 * (pipeline_trace.c), as the phases note it.
 */
#ifndef VMCPD_PIPELINE_INT_H
#define VMCPD_PIPELINE_INT_H

struct request;

/* its SERVER span named and its context taken, once it runs */
void	pipeline_trace_start(struct request *);
/* the backend it is routed to */
void	pipeline_trace_backend(struct request *);
/* a phase waits (an INTERNAL span name), and resumes (err: failed) */
void	pipeline_trace_wait(struct request *, const char *name);
void	pipeline_trace_resumed(struct request *, const char *err);

#endif /* VMCPD_PIPELINE_INT_H */
