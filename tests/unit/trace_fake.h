/*
 * The request's spans (worker/pipeline/pipeline_trace.c) faked as with
 * tracing off, for the unit tests that link the pipeline with fake
 * neighbours (test_pipeline.c, codec_fake.h): it stops the linker from
 * pulling the tracer and the HTTP server it reads.
 */
#ifndef VMCPD_TEST_TRACE_FAKE_H
#define VMCPD_TEST_TRACE_FAKE_H

#include "worker/pipeline/pipeline.h"
#include "worker/pipeline/pipeline_int.h"

void
pipeline_trace_start(struct request *r)
{
	(void)r;
}

void
pipeline_trace_backend(struct request *r)
{
	(void)r;
}

void
pipeline_trace_session(struct request *r, const char *sid)
{
	(void)r;
	(void)sid;
}

void
pipeline_trace_wait(struct request *r, const char *name)
{
	(void)r;
	(void)name;
}

void
pipeline_trace_resumed(struct request *r, const char *err)
{
	(void)r;
	(void)err;
}

#endif /* VMCPD_TEST_TRACE_FAKE_H */
