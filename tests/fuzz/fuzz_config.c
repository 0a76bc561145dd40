/*
 * libFuzzer: config_load_buffer() on arbitrary bytes.  A refusal must say
 * where; a config that loads must hold what the header promises (every
 * name a configured backend, every stdio backend a command and argv,
 * every HTTP backend a URL and no command); loading the same bytes again
 * must give the same answer.  ASan catches leaks on either path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/config.h"

#define NAME	"fuzz.yaml"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_backend(const struct config *cf, const struct config_backend *cb)
{
	size_t	 i;

	if (cb->cb_name == NULL || cb->cb_name[0] == '\0' ||
	    strlen(cb->cb_name) > CONFIG_NAME_MAX ||
	    config_backend_find(cf, cb->cb_name) != cb ||
	    cb->cb_timeout_ms == 0)
		abort();
	switch (cb->cb_transport) {
	case TRANSPORT_STDIO:
		if (cb->cb_url != NULL || cb->cb_command == NULL ||
		    cb->cb_command[0] == '\0' || cb->cb_argv == NULL ||
		    cb->cb_argv[0] == NULL ||
		    strcmp(cb->cb_argv[0], cb->cb_command) != 0)
			abort();
		for (i = 0; cb->cb_env != NULL && cb->cb_env[i] != NULL; i++)
			if (strchr(cb->cb_env[i], '=') == NULL ||
			    cb->cb_env[i][0] == '=')
				abort();
		if (cb->cb_env != NULL && i == 0)
			abort();	/* empty is NULL */
		break;
	case TRANSPORT_STREAMABLE_HTTP:
	case TRANSPORT_SSE:
		if (cb->cb_url == NULL || (strncmp(cb->cb_url, "http://", 7) !=
		    0 && strncmp(cb->cb_url, "https://", 8) != 0) ||
		    cb->cb_command != NULL || cb->cb_argv != NULL ||
		    cb->cb_env != NULL || cb->cb_cwd != NULL)
			abort();
		break;
	default:
		abort();
	}
}

static void
check_aggregation(const struct config *cf)
{
	const struct config_aggregation	*ca = &cf->cf_agg;
	const struct config_workload	*cw;
	const struct config_override	*co;
	size_t				 i, j;

	if (ca->ca_prefix_format == NULL || ca->ca_prefix_format[0] == '\0' ||
	    ca->ca_page_size < 1 || ca->ca_page_size > 10000 ||
	    ca->ca_max_backend_pages < 1 ||
	    ca->ca_max_backend_pages > 10000 || ca->ca_cache_ttl_ms == 0)
		abort();
	if ((ca->ca_conflict == CONFIG_CONFLICT_PRIORITY) !=
	    (ca->ca_npriority > 0))
		abort();
	for (i = 0; i < ca->ca_npriority; i++)
		if (config_backend_find(cf, ca->ca_priority[i]) == NULL)
			abort();
	if (ca->ca_priority != NULL && ca->ca_priority[i] != NULL)
		abort();
	if (ca->ca_nworkloads > cf->cf_nbackends)
		abort();
	for (i = 0; i < ca->ca_nworkloads; i++) {
		cw = &ca->ca_workloads[i];
		if (config_backend_find(cf, cw->cw_name) == NULL)
			abort();
		for (j = 0; j < cw->cw_nfilter; j++)
			if (cw->cw_filter[j] == NULL ||
			    cw->cw_filter[j][0] == '\0')
				abort();
		if (cw->cw_filter != NULL && cw->cw_filter[j] != NULL)
			abort();
		for (j = 0; j < cw->cw_noverrides; j++) {
			co = &cw->cw_overrides[j];
			if (co->co_tool == NULL || (co->co_name == NULL &&
			    co->co_description == NULL &&
			    co->co_annotations == NULL) ||
			    (co->co_annotations != NULL &&
			    (!json_is_object(co->co_annotations) ||
			    json_object_size(co->co_annotations) == 0)))
				abort();
		}
	}
}

/* telemetry: a usable collector URL and bounds as documented */
static void
check_telemetry(const struct config *cf)
{
	const struct config_telemetry	*ct = &cf->cf_telemetry;
	const char			*u = ct->ct_url;
	size_t				 i;

	if (ct->ct_service_name == NULL || ct->ct_service_version == NULL ||
	    !(ct->ct_sampling_rate >= 0.0 && ct->ct_sampling_rate <= 1.0) ||
	    ct->ct_queue_max < 1 || ct->ct_batch_max < 1 ||
	    ct->ct_batch_max > ct->ct_queue_max ||
	    ct->ct_interval_ms < 100 || ct->ct_timeout_ms < 100 ||
	    ct->ct_metrics_interval_ms < 1000)
		abort();
	if (ct->ct_enabled != (u != NULL && (ct->ct_tracing ||
	    ct->ct_metrics)) || (u == NULL && (ct->ct_tracing ||
	    ct->ct_metrics || ct->ct_insecure)))
		abort();
	if (u != NULL && (strncasecmp(u, ct->ct_insecure ? "http://" :
	    "https://", ct->ct_insecure ? 7 : 8) != 0 ||
	    u[strlen(u) - 1] == '/' || strpbrk(u, " ?#@\r\n") != NULL))
		abort();
	for (i = 0; i < ct->ct_nheaders; i++)
		if (ct->ct_headers[i].oh_name[0] == '\0' ||
		    strpbrk(ct->ct_headers[i].oh_value, "\r\n") != NULL)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config	*cf, *again;
	char		 err[CONFIG_ERR_MAX], err2[CONFIG_ERR_MAX];
	size_t		 i;

	cf = config_load_buffer(NAME, (const char *)data, size, err,
	    sizeof(err));
	again = config_load_buffer(NAME, (const char *)data, size, err2,
	    sizeof(err2));
	if ((cf == NULL) != (again == NULL))
		abort();
	if (cf == NULL) {
		if (strncmp(err, NAME ":", strlen(NAME ":")) != 0 ||
		    strcmp(err, err2) != 0)
			abort();
		return 0;
	}
	if (err[0] != '\0' ||
#ifdef CONFIG_BACKENDS_MAX
	    cf->cf_nbackends > CONFIG_BACKENDS_MAX ||
#endif
	    cf->cf_nbackends != again->cf_nbackends ||
	    strcmp(cf->cf_file, NAME) != 0)
		abort();
	for (i = 0; i < cf->cf_nbackends; i++) {
		check_backend(cf, &cf->cf_backends[i]);
		if (strcmp(cf->cf_backends[i].cb_name,
		    again->cf_backends[i].cb_name) != 0)
			abort();
	}
	check_aggregation(cf);
	check_telemetry(cf);
	if (cf->cf_event_buffer < 16 || cf->cf_event_buffer > 100000 ||
	    cf->cf_pending_timeout_ms == 0 ||
	    cf->cf_session_max_ms < cf->cf_session_ttl_ms)
		abort();
	config_free(cf);
	config_free(again);
	return 0;
}
