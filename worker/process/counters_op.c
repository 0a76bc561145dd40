/*
 * The MCP operation durations (counters.h): how long each request to
 * /mcp took from its arrival to its reply written, by method, outcome
 * and, for a tool or prompt of the view, its name and backend; and how
 * long each backend request took, by backend and method.  Written into
 * this process's own slot (shared/stats.h) like every counter; read by
 * diag_op.c for /metrics and by diag_otlp_collect() for OTLP.
 *
 * The names come from the view only (diag_tag_target() is called once
 * a call is routed to a tool or prompt of the view), and a slot holds
 * at most DIAG_TARGETS of them: the label sets stay bounded.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "proto/method.h"
#include "shared/config.h"
#include "shared/otlp.h"
#include "shared/stats.h"
#include "worker/http/httpd.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/process/request.h"

/* OpenTelemetry's advice for mcp.{server,client}.operation.duration */
const uint64_t diag_op_us[DIAG_OP_BOUNDS] = {
	10000, 20000, 50000, 100000, 200000, 500000, 1000000, 2000000,
	5000000, 10000000, 30000000, 60000000, 120000000, 300000000,
};
const char *const diag_op_le[DIAG_OP_BOUNDS + 1] = {
	"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10",
	"30", "60", "120", "300", "+Inf",
};
static const double diag_op_bounds[DIAG_OP_BOUNDS] = {
	0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
};

/* the request's target: diag_targets[] index + 1, in its tag's top bits
 * (the low 16 are the method's, 0x10000 and up httpd's) */
#define DIAG_TAG_TARGET_SHIFT	20

/* a start of diag_backend_start(): the method in the top byte */
#define DIAG_START_SHIFT	56
#define DIAG_START_US		((UINT64_C(1) << DIAG_START_SHIFT) - 1)

static const char diag_other[] = "_other";

const char *
diag_op_method_name(int i)
{
	return i < DIAG_OP_OTHER ? diag_methods[i] : "other";
}

void
diag_hist_add(struct diag_hist *h, uint64_t us)
{
	size_t	i;

	for (i = 0; i < DIAG_OP_BOUNDS && us > diag_op_us[i]; i++)
		;
	diag_add(&h->dh_n[i], 1);
	diag_add(&h->dh_sum_us, us);
}

uint64_t
diag_hist_count(const struct diag_hist *h)
{
	uint64_t	n = 0;
	size_t		i;

	for (i = 0; i <= DIAG_OP_BOUNDS; i++)
		n += diag_load(&h->dh_n[i]);
	return n;
}

static uint32_t
diag_target_hash(const char *name, size_t len, unsigned int kind,
    unsigned int be)
{
	uint32_t	h = 2166136261u;
	size_t		i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return (h ^ (kind << 16) ^ be) * 16777619u;
}

/*
 * The entry of (name, kind, backend) in the slot's table, made if new:
 * its index, or -1 (full: the last two entries are kept for "_other").
 */
static int
diag_target_find(struct diag_slot *ds, const char *name, size_t len,
    unsigned int kind, unsigned int be, int reserve)
{
	struct diag_target	*dt;
	size_t			 i, k;
	uint64_t		 n;

	i = diag_target_hash(name, len, kind, be) % DIAG_TARGETS;
	for (k = 0; k < DIAG_TARGETS; k++, i = (i + 1) % DIAG_TARGETS) {
		dt = &ds->ds_targets[i];
		if (__atomic_load_n(&dt->dt_ready, __ATOMIC_ACQUIRE)) {
			if (dt->dt_kind == kind && dt->dt_backend == be &&
			    strncmp(dt->dt_name, name, len) == 0 &&
			    dt->dt_name[len] == '\0')
				return (int)i;
			continue;
		}
		n = diag_load(&ds->ds_ntargets);
		if (n >= DIAG_TARGETS - (reserve ? 0 : 2))
			return -1;
		dt->dt_kind = (uint16_t)kind;
		dt->dt_backend = (uint16_t)be;
		memcpy(dt->dt_name, name, len);
		dt->dt_name[len] = '\0';
		diag_add(&ds->ds_ntargets, 1);
		__atomic_store_n(&dt->dt_ready, 1, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -1;
}

void
diag_tag_target(struct worker *w, struct httpd_req *req, const char *name,
    size_t len, const struct config_backend *be)
{
	struct diag_slot	*ds;
	unsigned int		 tag, kind, bi = 0;
	int			 i = -1;

	if (req == NULL || name == NULL || (ds = diag_slot_self(w)) == NULL)
		return;
	tag = httpd_req_tag(req);
	if (tag >> DIAG_TAG_TARGET_SHIFT != 0)
		return;		/* tagged by the fast route already */
	if (diag_tag_is(tag, MCP_M_TOOLS_CALL))
		kind = DIAG_TARGET_TOOL;
	else if (diag_tag_is(tag, MCP_M_PROMPTS_GET))
		kind = DIAG_TARGET_PROMPT;
	else
		return;
	if (be != NULL)
		bi = (unsigned int)(be - w->w_conf->cf_backends) + 1;
	if (len < DIAG_TARGET_NAME && memchr(name, '\0', len) == NULL)
		i = diag_target_find(ds, name, len, kind, bi, 0);
	if (i == -1)
		i = diag_target_find(ds, diag_other, sizeof(diag_other) - 1,
		    kind, 0, 1);
	if (i == -1)
		return;
	httpd_req_set_tag(req, (tag & ((1u << DIAG_TAG_TARGET_SHIFT) - 1)) |
	    (unsigned int)(i + 1) << DIAG_TAG_TARGET_SHIFT);
}

/* a request routed to a backend: its tool or prompt, as the client
 * named it (a name of the view, or it would not be routed); the fast
 * route's before a rename rewrites rf_name */
void
diag_tag_route(struct request *r)
{
	const json_t	*n;

	if (r->r_req == NULL)
		return;
	if ((n = json_object_get(r->r_msg.jm_params, "name")) != NULL &&
	    json_is_string(n))
		diag_tag_target(r->r_w, r->r_req, json_string_value(n),
		    json_string_length(n), r->r_be);
	else if (r->r_fast.rf_name != NULL)
		diag_tag_target(r->r_w, r->r_req, r->r_fast.rf_name,
		    r->r_fast.rf_namelen, r->r_be);
}

/* a request to /mcp answered (diag_count_mcp()): its duration */
void
diag_op_done(struct diag_slot *ds, struct httpd_req *req, unsigned int m,
    enum diag_outcome o)
{
	struct diag_target	*dt;
	uint64_t		 t0 = httpd_req_arrived(req), now;
	unsigned int		 t;

	if (t0 == 0)
		return;
	if (m >= DIAG_METHODS - 5) {
		if (m != DIAG_METHODS - 1)
			return;	/* not an operation: a stream, ... */
		m = DIAG_OP_OTHER;
	}
	now = diag_now_us();
	t = httpd_req_tag(req) >> DIAG_TAG_TARGET_SHIFT;
	if (t != 0 && t <= DIAG_TARGETS) {
		dt = &ds->ds_targets[t - 1];
		diag_hist_add(&dt->dt_ops[o], now > t0 ? now - t0 : 0);
	} else
		diag_hist_add(&ds->ds_ops[m][o], now > t0 ? now - t0 : 0);
}

/* a backend request leaves: its start and method, for
 * diag_backend_done() */
uint64_t
diag_backend_start(const char *method)
{
	return (uint64_t)diag_op_method(mcp_method_find(method)) <<
	    DIAG_START_SHIFT |
	    (diag_now_us() & DIAG_START_US);
}

/* the start's time (us), and its method into *m */
uint64_t
diag_backend_started(uint64_t start, int *m)
{
	*m = (int)(start >> DIAG_START_SHIFT);
	if (*m >= DIAG_OP_METHODS)
		*m = DIAG_OP_OTHER;
	return start & DIAG_START_US;
}

/* --- OTLP ---------------------------------------------------------- */

static uint64_t
diag_wall_ns(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t	diag_otlp_start_ns;

static void
diag_attr(struct otlp_attr *a, const char *key, const char *s)
{
	a->oa_key = key;
	a->oa_type = OTLP_V_STR;
	a->oa_str = s;
	a->oa_len = strlen(s);
}

/* one point of h under attrs a (n of them) into out's next one */
static void
diag_otlp_point(struct diag_otlp *out, const struct diag_hist *h,
    struct otlp_attr *a, size_t n, uint64_t now)
{
	struct otlp_hist_point	*hp = &out->do_points[out->do_npoints];
	uint64_t		*b = &out->do_buckets[out->do_npoints *
				    (DIAG_OP_BOUNDS + 1)];
	size_t			 i;

	for (i = 0; i <= DIAG_OP_BOUNDS; i++) {
		b[i] = diag_load(&h->dh_n[i]);
		hp->hp_count += b[i];
	}
	hp->hp_attrs = a;
	hp->hp_nattrs = n;
	hp->hp_start_ns = diag_otlp_start_ns;
	hp->hp_time_ns = now;
	hp->hp_sum = (double)diag_load(&h->dh_sum_us) / 1e6;
	hp->hp_buckets = b;
	hp->hp_bounds = diag_op_bounds;
	hp->hp_nbounds = DIAG_OP_BOUNDS;
	out->do_npoints++;
}

/* the attributes of a server point: method, target, backend, error */
static size_t
diag_otlp_server_attrs(const struct worker *w, struct otlp_attr *a,
    int m, const struct diag_target *dt, const char *name, int o)
{
	size_t	n = 0;

	diag_attr(&a[n++], "mcp.method.name", diag_op_method_name(m));
	if (dt != NULL) {
		diag_attr(&a[n++], dt->dt_kind == DIAG_TARGET_PROMPT ?
		    "gen_ai.prompt.name" : "gen_ai.tool.name", name);
		if (dt->dt_backend != 0 &&
		    dt->dt_backend <= w->w_conf->cf_nbackends)
			diag_attr(&a[n++], "vmcpd.backend.name",
			    w->w_conf->cf_backends[dt->dt_backend - 1].cb_name);
	}
	if (o != DIAG_OK)
		diag_attr(&a[n++], "error.type", diag_outcomes[o]);
	return n;
}

/* the points of this process's slot, counted (out NULL) or written */
static size_t
diag_otlp_walk(const struct worker *w, const struct diag_slot *ds,
    struct diag_otlp *out, uint64_t now)
{
	const struct diag_target	*dt;
	const struct diag_backend	*db;
	struct otlp_attr		*a;
	char				*name;
	size_t				 n = 0, bi, k;
	int				 m, o;

	for (m = 0; m < DIAG_OP_METHODS; m++)
		for (o = 0; o < DIAG_NOUTCOMES; o++) {
			if (diag_hist_count(&ds->ds_ops[m][o]) == 0)
				continue;
			if (out != NULL) {
				a = &out->do_attrs[n * DIAG_OTLP_ATTRS];
				diag_otlp_point(out, &ds->ds_ops[m][o], a,
				    diag_otlp_server_attrs(w, a, m, NULL,
				    NULL, o), now);
			}
			n++;
		}
	for (k = 0; k < DIAG_TARGETS; k++) {
		dt = &ds->ds_targets[k];
		if (!__atomic_load_n(&dt->dt_ready, __ATOMIC_ACQUIRE))
			continue;
		name = out != NULL ? &out->do_names[k * DIAG_TARGET_NAME] :
		    NULL;
		if (name != NULL) {
			memcpy(name, dt->dt_name, DIAG_TARGET_NAME);
			name[DIAG_TARGET_NAME - 1] = '\0';
		}
		m = diag_op_method(mcp_method_get(dt->dt_kind ==
		    DIAG_TARGET_PROMPT ? MCP_M_PROMPTS_GET : MCP_M_TOOLS_CALL));
		for (o = 0; o < DIAG_NOUTCOMES; o++) {
			if (diag_hist_count(&dt->dt_ops[o]) == 0)
				continue;
			if (out != NULL) {
				a = &out->do_attrs[n * DIAG_OTLP_ATTRS];
				diag_otlp_point(out, &dt->dt_ops[o], a,
				    diag_otlp_server_attrs(w, a, m, dt, name,
				    o), now);
			}
			n++;
		}
	}
	if (out != NULL)
		out->do_nserver = n;
	for (bi = 0; bi < w->w_conf->cf_nbackends; bi++) {
		db = &ds->ds_backends[bi];
		for (m = 0; m < DIAG_OP_METHODS; m++) {
			if (diag_hist_count(&db->db_ops[m]) == 0)
				continue;
			if (out != NULL) {
				a = &out->do_attrs[n * DIAG_OTLP_ATTRS];
				diag_attr(&a[0], "mcp.method.name",
				    diag_op_method_name(m));
				diag_attr(&a[1], "vmcpd.backend.name",
				    w->w_conf->cf_backends[bi].cb_name);
				diag_otlp_point(out, &db->db_ops[m], a, 2,
				    now);
			}
			n++;
		}
	}
	return n;
}

int
diag_otlp_collect(struct worker *w, struct diag_otlp *out)
{
	const struct diag_slot	*ds;
	uint64_t		 now = diag_wall_ns();
	size_t			 n;

	memset(out, 0, sizeof(*out));
	if ((ds = diag_slot_self(w)) == NULL)
		return 0;
	if (diag_otlp_start_ns == 0)
		diag_otlp_start_ns = now;
	n = diag_otlp_walk(w, ds, NULL, now);
	if (n > 0 && ((out->do_points = calloc(n,
	    sizeof(*out->do_points))) == NULL ||
	    (out->do_attrs = calloc(n * DIAG_OTLP_ATTRS,
	    sizeof(*out->do_attrs))) == NULL ||
	    (out->do_buckets = calloc(n * (DIAG_OP_BOUNDS + 1),
	    sizeof(*out->do_buckets))) == NULL ||
	    (out->do_names = calloc(DIAG_TARGETS, DIAG_TARGET_NAME)) ==
	    NULL)) {
		diag_otlp_free(out);
		return -1;
	}
	/* the slot is this process's own: nothing moved in between */
	if (n > 0)
		(void)diag_otlp_walk(w, ds, out, now);
	out->do_hist[0].oh_name = "mcp.server.operation.duration";
	out->do_hist[0].oh_desc = "MCP request or notification duration as "
	    "observed on the receiver from the time it was received until "
	    "the result or ack is sent.";
	out->do_hist[0].oh_unit = "s";
	out->do_hist[0].oh_points = out->do_points;
	out->do_hist[0].oh_npoints = out->do_nserver;
	out->do_hist[1].oh_name = "mcp.client.operation.duration";
	out->do_hist[1].oh_desc = "The duration of the MCP request or "
	    "notification as observed on the sender from the time it was "
	    "sent until the response or ack is received.";
	out->do_hist[1].oh_unit = "s";
	out->do_hist[1].oh_points = out->do_points + out->do_nserver;
	out->do_hist[1].oh_npoints = out->do_npoints - out->do_nserver;
	return 0;
}

void
diag_otlp_free(struct diag_otlp *out)
{
	free(out->do_points);
	free(out->do_attrs);
	free(out->do_buckets);
	free(out->do_names);
	memset(out, 0, sizeof(*out));
}
