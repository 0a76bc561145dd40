/*
 * /metrics: the MCP operation durations (counters_op.c), summed over
 * every slot, named as the OpenTelemetry MCP semantic conventions name
 * them with Prometheus's unit suffix:
 *
 *	mcp_server_operation_duration_seconds{method, tool, prompt,
 *	    backend, outcome}
 *	mcp_client_operation_duration_seconds{backend, method}
 *
 * Every label is always there ("" when it does not apply: tool for
 * all but tools/call, prompt for all but prompts/get, backend for a
 * composite tool or a request not routed), so a series keeps one label
 * set.  Only series with a count are shown.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proto/method.h"
#include "shared/config.h"
#include "shared/stats.h"
#include "worker/diag/diag.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"

/* a target of one slot, to be summed with its likes of the others */
struct diag_tref {
	const struct diag_target	*tr_dt;
	char				 tr_name[DIAG_TARGET_NAME];
};

static int
diag_tref_cmp(const void *a, const void *b)
{
	const struct diag_tref	*x = a, *y = b;

	if (x->tr_dt->dt_kind != y->tr_dt->dt_kind)
		return x->tr_dt->dt_kind < y->tr_dt->dt_kind ? -1 : 1;
	if (x->tr_dt->dt_backend != y->tr_dt->dt_backend)
		return x->tr_dt->dt_backend < y->tr_dt->dt_backend ? -1 : 1;
	return strcmp(x->tr_name, y->tr_name);
}

static void
diag_hist_sum(struct diag_hist *sum, const struct diag_hist *h)
{
	size_t	i;

	for (i = 0; i <= DIAG_OP_BOUNDS; i++)
		sum->dh_n[i] += diag_load(&h->dh_n[i]);
	sum->dh_sum_us += diag_load(&h->dh_sum_us);
}

/* a label value as the text format quotes it (\\, \", \n) into out */
static void
diag_label_text(char *out, size_t size, const char *s)
{
	size_t	n = 0;

	for (; *s != '\0' && n + 3 < size; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			out[n++] = '\\';
			out[n++] = *s == '\n' ? 'n' : *s;
		} else
			out[n++] = *s;
	}
	out[n] = '\0';
}

/* one histogram's lines: name{labels,le=...}, _sum, _count */
static int
diag_hist_lines(struct evbuffer *b, const char *name, const char *labels,
    const struct diag_hist *h)
{
	uint64_t	cum = 0;
	size_t		i;

	for (i = 0; i <= DIAG_OP_BOUNDS; i++) {
		cum += h->dh_n[i];
		if (evbuffer_add_printf(b, "%s_bucket{%s,le=\"%s\"} %llu\n",
		    name, labels, diag_op_le[i], (unsigned long long)cum) < 0)
			return -1;
	}
	return evbuffer_add_printf(b, "%s_sum{%s} %llu.%06llu\n"
	    "%s_count{%s} %llu\n", name, labels,
	    (unsigned long long)(h->dh_sum_us / 1000000),
	    (unsigned long long)(h->dh_sum_us % 1000000), name, labels,
	    (unsigned long long)cum) < 0 ? -1 : 0;
}

#define DIAG_SERVER	"mcp_server_operation_duration_seconds"
#define DIAG_CLIENT	"mcp_client_operation_duration_seconds"

/* a server series of method m (with tool or prompt name) and outcome o */
static int
diag_server_series(struct evbuffer *b, const struct worker *w, int m,
    const struct diag_target *dt, const char *name, int o,
    const struct diag_hist *h)
{
	char		 labels[512], esc[2 * DIAG_TARGET_NAME + 1];
	const char	*be = "";

	esc[0] = '\0';
	if (dt != NULL) {
		diag_label_text(esc, sizeof(esc), name);
		if (dt->dt_backend != 0 &&
		    dt->dt_backend <= w->w_conf->cf_nbackends)
			be = w->w_conf->cf_backends[dt->dt_backend - 1].cb_name;
	}
	(void)snprintf(labels, sizeof(labels), "method=\"%s\",tool=\"%s\","
	    "prompt=\"%s\",backend=\"%s\",outcome=\"%s\"",
	    diag_op_method_name(m),
	    dt != NULL && dt->dt_kind == DIAG_TARGET_TOOL ? esc : "",
	    dt != NULL && dt->dt_kind == DIAG_TARGET_PROMPT ? esc : "", be,
	    diag_outcomes[o]);
	return diag_hist_lines(b, DIAG_SERVER, labels, h);
}

/* the targets of every slot, sorted so that likes are together */
static struct diag_tref *
diag_trefs(const struct worker *w, size_t *np)
{
	const struct diag_slot	*ds;
	const struct diag_target *dt;
	struct diag_tref	*t;
	size_t			 n = 0, k;
	int			 i;

	*np = 0;
	if ((t = calloc((size_t)(w->w_nstats + 1) * DIAG_TARGETS,
	    sizeof(*t))) == NULL)
		return NULL;
	for (i = 0; w->w_stats != NULL && i <= w->w_nstats; i++) {
		ds = diag_slot_at(w, i);
		for (k = 0; k < DIAG_TARGETS; k++) {
			dt = &ds->ds_targets[k];
			if (!__atomic_load_n(&dt->dt_ready, __ATOMIC_ACQUIRE))
				continue;
			t[n].tr_dt = dt;
			memcpy(t[n].tr_name, dt->dt_name, DIAG_TARGET_NAME);
			t[n].tr_name[DIAG_TARGET_NAME - 1] = '\0';
			n++;
		}
	}
	qsort(t, n, sizeof(*t), diag_tref_cmp);
	*np = n;
	return t;
}

/* the tools and prompts: like targets of all slots summed */
static int
diag_server_targets(struct evbuffer *b, const struct worker *w)
{
	struct diag_tref	*t;
	struct diag_hist	 sum[DIAG_NOUTCOMES];
	size_t			 n, i, j;
	int			 o, m, rc = -1;

	if ((t = diag_trefs(w, &n)) == NULL)
		return -1;
	for (i = 0; i < n; i = j) {
		memset(sum, 0, sizeof(sum));
		for (j = i; j < n && diag_tref_cmp(&t[i], &t[j]) == 0; j++)
			for (o = 0; o < DIAG_NOUTCOMES; o++)
				diag_hist_sum(&sum[o], &t[j].tr_dt->dt_ops[o]);
		m = diag_op_method(mcp_method_get(t[i].tr_dt->dt_kind ==
		    DIAG_TARGET_PROMPT ? MCP_M_PROMPTS_GET : MCP_M_TOOLS_CALL));
		for (o = 0; o < DIAG_NOUTCOMES; o++)
			if (diag_hist_count(&sum[o]) != 0 &&
			    diag_server_series(b, w, m, t[i].tr_dt,
			    t[i].tr_name, o, &sum[o]) == -1)
				goto done;
	}
	rc = 0;
done:
	free(t);
	return rc;
}

int
diag_op_metrics(struct evbuffer *b, const struct worker *w)
{
	struct diag_hist	 sum;
	char			 labels[256];
	size_t			 bi;
	int			 m, o, i;

	if (diag_family(b, DIAG_SERVER, "histogram", "Time from a request's "
	    "arrival to its reply written (mcp.server.operation.duration), "
	    "by MCP method, the view's tool or prompt called and its "
	    "backend (\"\" when none; \"_other\" past the table or a name "
	    "past 63 bytes) and outcome (ok, rpc_error, rejected: 4xx, "
	    "failed: 5xx, aborted).") == -1)
		return -1;
	for (m = 0; m < DIAG_OP_METHODS; m++)
		for (o = 0; o < DIAG_NOUTCOMES; o++) {
			memset(&sum, 0, sizeof(sum));
			for (i = 0; w->w_stats != NULL && i <= w->w_nstats;
			    i++)
				diag_hist_sum(&sum,
				    &diag_slot_at(w, i)->ds_ops[m][o]);
			if (diag_hist_count(&sum) != 0 &&
			    diag_server_series(b, w, m, NULL, NULL, o,
			    &sum) == -1)
				return -1;
		}
	if (diag_server_targets(b, w) == -1)
		return -1;
	if (diag_family(b, DIAG_CLIENT, "histogram", "Time of each request "
	    "to a backend, from sending it to its answer or failure "
	    "(mcp.client.operation.duration), by backend and MCP method.") ==
	    -1)
		return -1;
	for (bi = 0; bi < w->w_conf->cf_nbackends; bi++)
		for (m = 0; m < DIAG_OP_METHODS; m++) {
			memset(&sum, 0, sizeof(sum));
			for (i = 0; w->w_stats != NULL && i <= w->w_nstats;
			    i++)
				diag_hist_sum(&sum, &diag_slot_at(w, i)->
				    ds_backends[bi].db_ops[m]);
			if (diag_hist_count(&sum) == 0)
				continue;
			(void)snprintf(labels, sizeof(labels),
			    "backend=\"%s\",method=\"%s\"",
			    w->w_conf->cf_backends[bi].cb_name,
			    diag_op_method_name(m));
			if (diag_hist_lines(b, DIAG_CLIENT, labels, &sum) == -1)
				return -1;
		}
	return 0;
}
