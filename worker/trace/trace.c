/*
 * Spans (trace.h): made, named, attributed and ended here, queued for
 * trace_export.c.  Ids come from a generator seeded from the OS after
 * fork (each process its own), sampling from tracectx.c.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "proto/hex.h"
#include "proto/method.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/otlp.h"
#include "shared/tracectx.h"
#include "worker/process/process.h"
#include "worker/trace/trace.h"
#include "worker/trace/trace_int.h"

int		 trace_enabled;

static uint64_t	 trace_threshold;	/* samplingRate's */
int		 trace_baggage;		/* propagateBaggage */
static uint64_t	 trace_rng[4];		/* xoshiro256** */

static uint64_t
trace_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* ids need to be unique and spread (the ratio sampler reads them), not
 * secret: a fast generator seeded from the OS in each process */
static uint64_t
trace_rand(void)
{
	uint64_t	*s = trace_rng;
	uint64_t	 r = trace_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = trace_rotl(s[3], 45);
	return r;
}

static void
trace_rand_bytes(uint8_t *b, size_t len)
{
	uint64_t	 r;
	size_t		 n;

	while (len > 0) {
		r = trace_rand();
		n = len < sizeof(r) ? len : sizeof(r);
		memcpy(b, &r, n);
		b += n;
		len -= n;
	}
}

static int
trace_id_zero(const uint8_t *b, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

/* an all-zero id is invalid (W3C 3.2.2.3, 3.2.2.4) */
static void
trace_new_id(uint8_t *b, size_t len)
{
	do
		trace_rand_bytes(b, len);
	while (trace_id_zero(b, len));
}

uint64_t
trace_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int
trace_init(struct worker *w, const char *role)
{
	const struct config_telemetry *ct = &w->w_conf->cf_telemetry;

	trace_enabled = 0;
	if (!ct->ct_enabled)
		return 0;
	(void)trace_metrics_init(w, role);
	if (!ct->ct_tracing)
		return 0;
	if (RAND_bytes((unsigned char *)trace_rng, sizeof(trace_rng)) != 1 ||
	    trace_id_zero((uint8_t *)trace_rng, sizeof(trace_rng))) {
		log_warnx("tracing off: no random seed for span ids");
		return -1;
	}
	trace_threshold = tracectx_ratio_threshold(ct->ct_sampling_rate);
	trace_baggage = ct->ct_baggage;
	if (trace_export_init(w, role) == -1) {
		log_warnx("tracing off: the exporter cannot start");
		return -1;
	}
	trace_enabled = 1;
	return 0;
}

void
trace_fini(void)
{
	trace_metrics_fini();
	if (!trace_enabled)
		return;
	trace_enabled = 0;
	trace_export_fini();
}

void
trace_drain(void)
{
	if (trace_enabled)
		trace_export_drain();
}

static char *
trace_strndup(const char *s, size_t len)
{
	return s != NULL ? strndup(s, len) : NULL;
}

void
trace_span_free(struct trace_span *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ts_os.os_nattrs; i++)
		if (s->ts_owned & (1U << i))
			free((char *)s->ts_attrs[i].oa_str);
	trace_ref_clear(&s->ts_ref);
	trace_span_free(s->ts_phase);
	free(s->ts_name);
	free(s->ts_msg);
	free(s);
}

/* a span under parent (its ids and state set), recording or not */
static struct trace_span *
trace_span_new(const struct trace_ref *parent, enum otlp_span_kind kind,
    int recording, const uint8_t *root)
{
	struct trace_span	*s;
	struct otlp_span	*os;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	os = &s->ts_os;
	s->ts_recording = recording;
	if (parent != NULL && parent->tr_set) {
		s->ts_ref.tr_ctx = parent->tr_ctx;
		/* flags this version does not know go out as zero (W3C
		 * 3.2.2.5) */
		s->ts_ref.tr_ctx.tc_flags &= TRACECTX_SAMPLED;
		if ((parent->tr_state != NULL && (s->ts_ref.tr_state =
		    strdup(parent->tr_state)) == NULL) ||
		    (parent->tr_baggage != NULL && (s->ts_ref.tr_baggage =
		    strdup(parent->tr_baggage)) == NULL)) {
			trace_span_free(s);
			return NULL;
		}
	}
	s->ts_ref.tr_set = 1;
	if (!recording)
		return s;	/* the parent's context, passed on as it is */
	if (parent != NULL && parent->tr_set) {
		memcpy(os->os_parent_id, parent->tr_ctx.tc_span,
		    sizeof(os->os_parent_id));
		os->os_has_parent = 1;
	} else {
		memcpy(s->ts_ref.tr_ctx.tc_trace, root,
		    sizeof(s->ts_ref.tr_ctx.tc_trace));
		s->ts_ref.tr_ctx.tc_flags = TRACECTX_SAMPLED;
	}
	trace_new_id(s->ts_ref.tr_ctx.tc_span, sizeof(s->ts_ref.tr_ctx.tc_span));
	memcpy(os->os_trace_id, s->ts_ref.tr_ctx.tc_trace,
	    sizeof(os->os_trace_id));
	memcpy(os->os_span_id, s->ts_ref.tr_ctx.tc_span,
	    sizeof(os->os_span_id));
	os->os_flags = s->ts_ref.tr_ctx.tc_flags;
	os->os_trace_state = s->ts_ref.tr_state;
	os->os_kind = kind;
	os->os_attrs = s->ts_attrs;
	os->os_start_ns = trace_now_ns();
	return s;
}

/* the sampling decision: the parent's flag, or for a new trace (its
 * id made into root) samplingRate on that id */
static int
trace_sampled(const struct trace_ref *parent,
    uint8_t root[TRACECTX_TRACE_LEN])
{
	if (parent != NULL && parent->tr_set)
		return (parent->tr_ctx.tc_flags & TRACECTX_SAMPLED) != 0;
	if (trace_threshold == 0 || (parent != NULL && parent->tr_unsampled))
		return 0;
	trace_new_id(root, TRACECTX_TRACE_LEN);
	return tracectx_ratio_sampled(root, trace_threshold);
}

struct trace_span *
trace_server_begin(const char *tp, size_t tplen, const char *ts, size_t tslen,
    const char *bg, size_t bglen)
{
	struct trace_ref	 parent;
	struct trace_span	*s;
	uint8_t			 root[TRACECTX_TRACE_LEN];

	memset(&parent, 0, sizeof(parent));
	if (tp != NULL && tracectx_parse(&parent.tr_ctx, tp, tplen) == 0) {
		parent.tr_set = 1;
		/* tracestate goes with its traceparent only (W3C 3.3) */
		if (ts != NULL && tslen > 0 &&
		    tracectx_state_check(ts, tslen) == 0)
			parent.tr_state = trace_strndup(ts, tslen);
	}
	if (trace_baggage && bg != NULL && bglen > 0 &&
	    bglen <= TRACE_BAGGAGE_MAX && memchr(bg, '\n', bglen) == NULL &&
	    memchr(bg, '\r', bglen) == NULL)
		parent.tr_baggage = trace_strndup(bg, bglen);
	if (trace_sampled(&parent, root))
		s = trace_span_new(&parent, OTLP_KIND_SERVER, 1, root);
	else if (parent.tr_set)
		s = trace_span_new(&parent, OTLP_KIND_SERVER, 0, root);
	else
		s = NULL;
	trace_ref_clear(&parent);
	return s;
}

struct trace_span *
trace_begin(const struct trace_ref *parent, enum otlp_span_kind kind,
    const char *name)
{
	struct trace_span	*s;
	uint8_t			 root[TRACECTX_TRACE_LEN];

	if (!trace_enabled || !trace_sampled(parent, root))
		return NULL;
	if ((s = trace_span_new(parent, kind, 1, root)) == NULL)
		return NULL;
	if (name != NULL)
		trace_set_name(s, name, NULL, 0);
	return s;
}

/*
 * Room for len bytes (and a NUL) kept with s, the first vlen of them
 * v's: in its own buffer while there is room (a span's strings cost no
 * allocation of their own), else on the heap, *owned set.  NULL: no
 * memory.
 */
static char *
trace_keep(struct trace_span *s, const char *v, size_t vlen, size_t len,
    int *owned)
{
	char	*c;

	*owned = 0;
	if (len < sizeof(s->ts_buf) - s->ts_buflen) {
		c = s->ts_buf + s->ts_buflen;
		s->ts_buflen += len + 1;
	} else if ((c = malloc(len + 1)) != NULL)
		*owned = 1;
	else
		return NULL;
	memcpy(c, v, vlen);
	c[len] = '\0';
	return c;
}

void
trace_set_name(struct trace_span *s, const char *method, const char *target,
    size_t tlen)
{
	size_t	 mlen;
	char	*n;
	int	 owned;

	if (s == NULL || !s->ts_recording)
		return;
	mlen = strlen(method);
	if (target == NULL)
		tlen = 0;
	if (tlen > TRACE_VALUE_MAX)
		tlen = TRACE_VALUE_MAX;
	if ((n = trace_keep(s, method, mlen, mlen + (tlen > 0 ? 1 + tlen :
	    0), &owned)) == NULL)
		return;
	if (tlen > 0) {
		n[mlen] = ' ';
		memcpy(n + mlen + 1, target, tlen);
	}
	free(s->ts_name);
	s->ts_name = owned ? n : NULL;
	s->ts_os.os_name = n;
}

/*
 * The attribute key's slot: its earlier one (set again), or a new one.
 * Keys are the callers' literals: one key is one pointer.
 */
static struct otlp_attr *
trace_attr(struct trace_span *s, const char *key)
{
	size_t	 i;

	uint32_t bit = 1U << (((uintptr_t)key >> 2) & 31);

	if (s == NULL || !s->ts_recording)
		return NULL;
	/* a key not set before (the rule) costs no search */
	for (i = (s->ts_keys & bit) ? 0 : s->ts_os.os_nattrs;
	    i < s->ts_os.os_nattrs; i++)
		if (s->ts_attrs[i].oa_key == key) {
			if (s->ts_owned & (1U << i))
				free((char *)s->ts_attrs[i].oa_str);
			s->ts_owned &= ~(1U << i);
			s->ts_attrs[i].oa_type = OTLP_V_INT;
			s->ts_attrs[i].oa_str = NULL;
			return &s->ts_attrs[i];
		}
	if (i == TRACE_ATTRS_MAX)
		return NULL;
	s->ts_os.os_nattrs++;
	s->ts_keys |= bit;
	memset(&s->ts_attrs[i], 0, sizeof(s->ts_attrs[i]));
	s->ts_attrs[i].oa_key = key;
	s->ts_attrs[i].oa_type = OTLP_V_INT;
	return &s->ts_attrs[i];
}

void
trace_set_str(struct trace_span *s, const char *key, const char *v,
    size_t len)
{
	struct otlp_attr	*a;
	char			*c;
	int			 owned;

	if (v == NULL || (a = trace_attr(s, key)) == NULL)
		return;
	if (len > TRACE_VALUE_MAX)
		len = TRACE_VALUE_MAX;
	if ((c = trace_keep(s, v, len, len, &owned)) == NULL)
		return;		/* left an integer 0 */
	a->oa_type = OTLP_V_STR;
	a->oa_str = c;
	a->oa_len = len;
	if (owned)
		s->ts_owned |= 1U << (a - s->ts_attrs);
}

void
trace_set_int(struct trace_span *s, const char *key, int64_t v)
{
	struct otlp_attr	*a;

	if ((a = trace_attr(s, key)) == NULL)
		return;
	a->oa_type = OTLP_V_INT;
	a->oa_int = v;
}

void
trace_set_error(struct trace_span *s, const char *type, const char *message)
{
	if (s == NULL || !s->ts_recording)
		return;
	trace_set_str(s, "error.type", type, strlen(type));
	s->ts_os.os_status = OTLP_STATUS_ERROR;
	if (message != NULL) {
		free(s->ts_msg);
		s->ts_msg = strndup(message, TRACE_VALUE_MAX);
		s->ts_os.os_status_msg = s->ts_msg;
	}
}

void
trace_end(struct trace_span *s)
{
	if (s == NULL)
		return;
	if (!s->ts_recording || !trace_enabled) {
		trace_span_free(s);
		return;
	}
	s->ts_os.os_end_ns = trace_now_ns();
	if (s->ts_os.os_name == NULL)
		s->ts_os.os_name = "vmcpd";
	trace_export_push(s);
}

void
trace_discard(struct trace_span *s)
{
	trace_span_free(s);
}

void
trace_phase_begin(struct trace_span *s, const char *name)
{
	struct trace_ref	 ref;

	if (s == NULL || !s->ts_recording || s->ts_phase != NULL)
		return;
	trace_ref_of(&ref, s, NULL);
	s->ts_phase = trace_begin(&ref, OTLP_KIND_INTERNAL, name);
	trace_ref_clear(&ref);
}

void
trace_phase_end(struct trace_span *s, const char *error)
{
	if (s == NULL || s->ts_phase == NULL)
		return;
	if (error != NULL)
		trace_set_error(s->ts_phase, "failed", error);
	trace_end(s->ts_phase);
	s->ts_phase = NULL;
}

void
trace_ref_of(struct trace_ref *out, const struct trace_span *s,
    const struct trace_ref *parent)
{
	const struct trace_ref	*src = s != NULL ? &s->ts_ref : parent;

	memset(out, 0, sizeof(*out));
	if (src != NULL && src->tr_unsampled)
		out->tr_unsampled = 1;
	if (src == NULL || !src->tr_set)
		return;
	out->tr_ctx = src->tr_ctx;
	out->tr_state = src->tr_state != NULL ? strdup(src->tr_state) : NULL;
	out->tr_baggage = src->tr_baggage != NULL ? strdup(src->tr_baggage) :
	    NULL;
	out->tr_set = 1;
}

int
trace_ref_header(const struct trace_ref *r, char out[TRACECTX_HEADER_LEN + 1])
{
	if (r == NULL || !r->tr_set)
		return -1;
	tracectx_format(&r->tr_ctx, out);
	return 0;
}

const char *
trace_target_key(const struct mcp_method *mm)
{
	if (mm == NULL)
		return NULL;
	switch (mm->mm_id) {
	case MCP_M_TOOLS_CALL:
		return "gen_ai.tool.name";
	case MCP_M_PROMPTS_GET:
		return "gen_ai.prompt.name";
	case MCP_M_RESOURCES_READ:
	case MCP_M_RESOURCES_SUBSCRIBE:
	case MCP_M_RESOURCES_UNSUBSCRIBE:
		return "mcp.resource.uri";
	default:
		return NULL;
	}
}

int
trace_ids(const struct trace_span *s, char trace[33], char span[17])
{
	if (s == NULL)
		return -1;
	proto_hex(s->ts_ref.tr_ctx.tc_trace, TRACECTX_TRACE_LEN, trace);
	if (s->ts_recording)
		proto_hex(s->ts_ref.tr_ctx.tc_span, TRACECTX_SPAN_LEN, span);
	else
		span[0] = '\0';
	return 0;
}

size_t
trace_itoa(char out[24], int64_t v)
{
	char		 t[24];
	uint64_t	 u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t		 n = 0, len = 0;

	do
		t[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		out[len++] = '-';
	while (n > 0)
		out[len++] = t[--n];
	out[len] = '\0';
	return len;
}
