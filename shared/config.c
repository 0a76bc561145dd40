/*
 * vmcpd.yaml loader.  libyaml's event parser feeds a small tree of our
 * own (config_tree.c).  Table-driven section loaders (config_sections.c
 * and its siblings) then walk the tree into a struct config, through the
 * field walk (config_fields.c: load_fields()).  Here: the top-level
 * table, the checks across sections once all are loaded, the defaults,
 * and the API (load, free, lookups).  The first error stops the load;
 * nothing here is global, so two configs can coexist during a reload.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/composite.h"
#include "config.h"
#include "config_load.h"

#define CONFIG_FILE_MAX		(1024 * 1024)

#define MS_SEC	1000ULL
#define MS_MIN	(60 * MS_SEC)
#define MS_HOUR	(60 * MS_MIN)

/*
 * The top level, and the checks across sections
 */

static int
load_root(struct loader *ld, struct cnode *root)
{
	struct config	*cf = ld->ld_cf;
	const struct field fields[] = {
		{ "name", F_STRING, &cf->cf_name, NULL, 0, 0 },
		{ "groupRef", F_STRING, &cf->cf_group_ref, NULL, 0, 0 },
		{ "metadata", F_FN, NULL, load_metadata, 0, 0 },
		{ "daemon", F_FN, cf, load_daemon, 0, 0 },
		{ "http", F_FN, cf, load_http, 0, 0 },
		{ "sessions", F_FN, cf, load_sessions, 0, 0 },
		{ "backends", F_FN, cf, load_backends, 0, 0 },
		{ "operational", F_FN, cf, load_operational, 0, 0 },
		{ "incomingAuth", F_FN, cf, load_incoming_auth, 0, 0 },
		{ "outgoingAuth", F_FN, NULL, load_outgoing_auth, 0, 0 },
		{ "aggregation", F_FN, &cf->cf_agg, load_aggregation, 0, 0 },
		{ "compositeTools", F_FN, cf, load_composite_tools, 0, 0 },
		{ "compositeToolRefs", F_NOTYET, NULL, NULL, 0, 0 },
		{ "rateLimiting", F_FN, cf, load_rate_limiting, 0, 0 },
		{ "audit", F_FN, cf, load_audit, 0, 0 },
		{ "telemetry", F_FN, cf, load_telemetry, 0, 0 },
		{ "optimizer", F_NOTYET, NULL, NULL, 0, 0 },
		{ "codeMode", F_NOTYET, NULL, NULL, 0, 0 },
		{ "sessionStorage", F_FN, cf, load_session_storage, 0, 0 },
		{ "passthroughHeaders", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (root == NULL)
		return config_errorat(ld, 1, 1,
		    "missing required key \"backends\"");
	if (load_fields(ld, root, "", fields, nitems(fields)) == -1)
		return -1;
	if (!ld->ld_have_backends)
		return config_require(ld, root, "", "backends");

	if (config_resolve_timeouts(ld) == -1)
		return -1;
	config_resolve_sessions(ld->ld_cf);
	if (config_auth_resolve(ld) == -1 || config_outauth_resolve(ld) == -1 ||
	    config_sstore_resolve(ld) == -1 || config_telemetry_resolve(ld) == -1)
		return -1;
	return config_resolve_aggregation(ld);
}

/*
 * API
 */

static struct config *
config_new(const char *file)
{
	struct config	*cf;

	if ((cf = calloc(1, sizeof(*cf))) == NULL)
		return NULL;
	if ((cf->cf_file = strdup(file)) == NULL ||
	    (cf->cf_name = strdup("vmcpd")) == NULL ||
	    (cf->cf_listen_host = strdup("127.0.0.1")) == NULL ||
	    (cf->cf_state_dir = strdup("./var")) == NULL ||
	    (cf->cf_agg.ca_prefix_format = strdup("{workload}_")) == NULL ||
	    config_policy_defaults(cf) == -1 ||
	    config_telemetry_defaults(cf) == -1 ||
	    config_sstore_defaults(cf) == -1) {
		config_free(cf);
		return NULL;
	}
	cf->cf_listen_port = 4483;
	cf->cf_workers = 0;
	cf->cf_map_size = GIB;
	cf->cf_max_readers = 512;
	cf->cf_drain_timeout_ms = 30 * MS_SEC;
	cf->cf_max_header_size = 16 * KIB;
	cf->cf_max_body_size = 4 * MIB;
	cf->cf_http_timeout_ms = 30 * MS_SEC;
	cf->cf_keepalive_ms = 15 * MS_SEC;
	cf->cf_header_timeout_ms = 10 * MS_SEC;
	cf->cf_request_timeout_ms = 60 * MS_SEC;
	cf->cf_max_conns = 2048;
	cf->cf_max_conns_client = 256;
	cf->cf_session_ttl_ms = 30 * MS_MIN;
	cf->cf_session_max_ms = 24 * MS_HOUR;
	cf->cf_event_buffer = 1000;
	cf->cf_pending_timeout_ms = 5 * MS_MIN;
	cf->cf_bsession_ttl_ms = 10 * MS_MIN;
	cf->cf_bsession_cap = 1000;
	cf->cf_agg.ca_conflict = CONFIG_CONFLICT_PREFIX;
	cf->cf_agg.ca_prefix_mode = CONFIG_PREFIX_ALWAYS;
	cf->cf_agg.ca_cache_ttl_ms = 5 * MS_MIN;
	cf->cf_agg.ca_page_size = 1000;
	cf->cf_agg.ca_max_backend_pages = 100;
	cf->cf_agg.ca_max_backend_list = 32 * MIB;
	cf->cf_answer_buf = 256 * MIB;
	cf->cf_answer_buf_backend = 128 * MIB;
	cf->cf_agg.ca_max_desc = 16384;
	cf->cf_agg.ca_max_title = 256;
	cf->cf_agg.ca_pin_mode = CONFIG_PIN_WARN;
	cf->cf_timeout_default_ms = 30 * MS_SEC;
	cf->cf_partial_failure = CONFIG_PARTIAL_FAIL;
	cf->cf_health.ch_interval_ms = 30 * MS_SEC;
	cf->cf_health.ch_timeout_ms = 10 * MS_SEC;
	cf->cf_health.ch_unhealthy = 3;
	cf->cf_health.ch_report_ms = 30 * MS_SEC;
	cf->cf_health.ch_cb_threshold = 5;
	cf->cf_health.ch_cb_timeout_ms = 60 * MS_SEC;
	return cf;
}

struct config *
config_load_buffer(const char *name, const char *buf, size_t len, char *err,
    size_t errlen)
{
	struct loader	 ld;
	struct cnode	*root = NULL;

	memset(&ld, 0, sizeof(ld));
	ld.ld_name = name != NULL ? name : "-";
	ld.ld_err = err;
	ld.ld_errlen = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (buf == NULL && len > 0) {
		config_error(&ld, NULL, "no input");
		return NULL;
	}
	if (len > CONFIG_FILE_MAX) {
		config_error(&ld, NULL, "file is larger than 1 MiB");
		return NULL;
	}
	if ((ld.ld_cf = config_new(ld.ld_name)) == NULL) {
		config_error(&ld, NULL, "out of memory");
		return NULL;
	}
	if (config_tree_parse(&ld, buf != NULL ? buf : "", len, &root) == -1 ||
	    load_root(&ld, root) == -1)
		goto fail;
	cnode_free(root);
	return ld.ld_cf;

fail:
	cnode_free(root);
	config_free(ld.ld_cf);
	return NULL;
}

/*
 * One top-level section of buf alone, through fn (a struct field f_fn):
 * for a section's unit tests before it is wired to the loader.
 */
int
config_load_section(const char *name, const char *buf, size_t len,
    const char *key, int (*fn)(struct loader *, struct cnode *,
    const char *, void *), void *arg, char *err, size_t errlen)
{
	struct loader	 ld;
	struct cnode	*root = NULL, *v;
	int		 rc = -1;

	memset(&ld, 0, sizeof(ld));
	ld.ld_name = name;
	ld.ld_err = err;
	ld.ld_errlen = errlen;
	if (config_tree_parse(&ld, buf, len, &root) == -1 ||
	    (root != NULL && load_map_check(&ld, root, "") == -1))
		goto done;
	if ((v = cnode_get(root, key)) == NULL)
		config_error(&ld, root, "missing key \"%s\"", key);
	else
		rc = fn(&ld, v, key, arg);
done:
	cnode_free(root);
	return rc;
}

struct config *
config_load_file(const char *path, char *err, size_t errlen)
{
	struct loader	 ld;
	struct config	*cf = NULL;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0, cap;
	ssize_t		 n;
	int		 fd;

	memset(&ld, 0, sizeof(ld));
	ld.ld_name = path;
	ld.ld_err = err;
	ld.ld_errlen = errlen;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		config_error(&ld, NULL, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		config_error(&ld, NULL, "%s", strerror(errno));
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		config_error(&ld, NULL, "%s", strerror(EISDIR));
		goto done;
	}
	if (S_ISREG(st.st_mode) && st.st_size > CONFIG_FILE_MAX) {
		config_error(&ld, NULL, "file is larger than 1 MiB");
		goto done;
	}
	/* read one byte past the limit to notice a growing file or a pipe */
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 4096;
	if ((buf = malloc(cap)) == NULL) {
		config_error(&ld, NULL, "out of memory");
		goto done;
	}
	for (;;) {
		if (len == cap) {
			char	*nbuf;

			if (cap > CONFIG_FILE_MAX) {
				config_error(&ld, NULL,
				    "file is larger than 1 MiB");
				goto done;
			}
			cap = cap * 2 > CONFIG_FILE_MAX + 1 ?
			    CONFIG_FILE_MAX + 1 : cap * 2;
			if ((nbuf = realloc(buf, cap)) == NULL) {
				config_error(&ld, NULL, "out of memory");
				goto done;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			config_error(&ld, NULL, "%s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	cf = config_load_buffer(path, buf, len, err, errlen);

done:
	free(buf);
	close(fd);
	return cf;
}

static void
config_aggregation_free(struct config_aggregation *ca)
{
	struct config_workload	*cw;
	struct config_override	*co;
	size_t			 i, j;

	for (i = 0; i < ca->ca_nworkloads; i++) {
		cw = &ca->ca_workloads[i];
		free(cw->cw_name);
		config_strv_free(cw->cw_filter);
		for (j = 0; j < cw->cw_noverrides; j++) {
			co = &cw->cw_overrides[j];
			free(co->co_tool);
			free(co->co_name);
			free(co->co_description);
			json_decref(co->co_annotations);
		}
		free(cw->cw_overrides);
	}
	free(ca->ca_workloads);
	config_strv_free(ca->ca_priority);
	free(ca->ca_prefix_format);
}

void
config_free(struct config *cf)
{
	struct config_backend	*cb;
	size_t			 i;

	if (cf == NULL)
		return;
	for (i = 0; i < cf->cf_nbackends; i++) {
		cb = &cf->cf_backends[i];
		free(cb->cb_name);
		free(cb->cb_url);
		free(cb->cb_url_shown);
		free(cb->cb_command);
		config_strv_free(cb->cb_argv);
		config_strv_free(cb->cb_env);
		free(cb->cb_cwd);
		free(cb->cb_ca_bundle);
	}
	free(cf->cf_backends);
	config_aggregation_free(&cf->cf_agg);
	config_auth_free(&cf->cf_inauth);
	config_outauth_free(cf);
	config_policy_free(cf);
	config_telemetry_free(cf);
	if (cf->cf_composites != NULL)
		composite_list_free(cf->cf_composites);
	free(cf->cf_composites);
	config_sstore_free(cf);
	free(cf->cf_file);
	free(cf->cf_name);
	free(cf->cf_group_ref);
	free(cf->cf_listen_host);
	free(cf->cf_diag_host);
	free(cf->cf_port_file);
	free(cf->cf_state_dir);
	free(cf->cf_user);
	free(cf->cf_log_file);
	config_strv_free(cf->cf_allowed_hosts);
	config_strv_free(cf->cf_allowed_origins);
	free(cf);
}

const struct config_backend *
config_backend_find(const struct config *cf, const char *name)
{
	size_t	 i;

	if (cf == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cf->cf_nbackends; i++)
		if (cf->cf_backends[i].cb_name != NULL &&
		    strcmp(cf->cf_backends[i].cb_name, name) == 0)
			return &cf->cf_backends[i];
	return NULL;
}

const char *
config_era_name(enum proto_era e)
{
	switch (e) {
	case PROTO_ERA_UNKNOWN:
		return "auto";
	case PROTO_ERA_LEGACY:
		return "legacy";
	case PROTO_ERA_MODERN:
		return "modern";
	case PROTO_ERA_BOTH:
		break;	/* a record, never a setting */
	}
	return "unknown";
}

const char *
config_transport_name(enum config_transport t)
{
	switch (t) {
	case TRANSPORT_STREAMABLE_HTTP:
		return "streamable-http";
	case TRANSPORT_SSE:
		return "sse";
	case TRANSPORT_STDIO:
		return "stdio";
	}
	return "unknown";
}
