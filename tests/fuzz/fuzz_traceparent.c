/*
 * What clients send as trace context (shared/tracectx.c): a
 * traceparent (the header, or params._meta.traceparent) and a
 * tracestate.  Whatever traceparent is accepted must be 55 bytes of
 * version 00 written back as it came (after its OWS) or a later
 * version's first 55 with the version changed, with nonzero ids; an
 * accepted tracestate must hold only what the list's grammar allows.
 * The sampler must agree with its threshold on any trace id.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/tracectx.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_parent(const char *s, size_t len)
{
	struct tracectx	tc, again;
	char		out[TRACECTX_HEADER_LEN + 1];

	if (tracectx_parse(&tc, s, len) != 0)
		return;
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	tracectx_format(&tc, out);
	if (strlen(out) != TRACECTX_HEADER_LEN || len < TRACECTX_HEADER_LEN ||
	    memcmp(out + 2, s + 2, TRACECTX_HEADER_LEN - 2) != 0 ||
	    (s[0] == '0' && s[1] == '0' && memcmp(out, s, 2) != 0) ||
	    (s[0] == 'f' && s[1] == 'f'))
		abort();
	if (tracectx_parse(&again, out, TRACECTX_HEADER_LEN) != 0 ||
	    memcmp(&again, &tc, sizeof(tc)) != 0)
		abort();
}

static void
fuzz_state(const char *s, size_t len)
{
	size_t	i, commas = 0, eqs = 0;

	if (tracectx_state_check(s, len) != 0)
		return;
	if (len > TRACECTX_STATE_MAX)
		abort();
	for (i = 0; i < len; i++) {
		if (s[i] == ',')
			commas++;
		else if (s[i] == '=')
			eqs++;
		else if (s[i] != '\t' && (s[i] < 0x20 || s[i] > 0x7e))
			abort();
	}
	/* 32 members at most, each with one '=' or none (empty) */
	if (commas > 31 || eqs == 0 || eqs > commas + 1)
		abort();
}

static void
fuzz_ratio(const uint8_t *data, size_t size)
{
	uint8_t		trace[TRACECTX_TRACE_LEN];
	uint64_t	th, v = 0;
	double		rate;
	size_t		i;

	if (size < sizeof(rate) + TRACECTX_TRACE_LEN)
		return;
	memcpy(&rate, data, sizeof(rate));
	memcpy(trace, data + sizeof(rate), TRACECTX_TRACE_LEN);
	th = tracectx_ratio_threshold(rate);
	if (th > (UINT64_C(1) << 56) || (!(rate > 0) && th != 0) ||
	    (rate >= 1 && th != UINT64_C(1) << 56))
		abort();
	for (i = 9; i < TRACECTX_TRACE_LEN; i++)
		v = v << 8 | trace[i];
	if (tracectx_ratio_sampled(trace, th) != (v < th))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* no NUL at the end: every function takes a length */
	char *s = malloc(size > 0 ? size : 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	fuzz_parent(s, size);
	fuzz_state(s, size);
	fuzz_ratio(data, size);
	free(s);
	return 0;
}
