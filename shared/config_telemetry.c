/*
 * vmcpd.yaml's telemetry: OpenTelemetry traces and metrics exported over
 * OTLP/HTTP (config_telemetry.h).  The reference vMCP's keys (endpoint
 * as "host:port" or a URL, insecure, serviceName, samplingRate as a
 * string, headers, customAttributes, caCertPath, ...) and vmcpd's own
 * (protocol, headersFromEnv, propagateBaggage, the exporter's bounds).
 * Reference keys vmcpd does not implement are refused, each saying what
 * to use instead.  Header values are secrets: messages name the header,
 * never quote its value.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_load.h"
#include "shared/version.h"

#define TEL_HEADERS_MAX		64	/* headers + headersFromEnv */
#define TEL_ATTRS_MAX		128	/* OpenTelemetry's attribute limit */
#define TEL_ATTR_KEY_MAX	256
#define TEL_ATTR_VALUE_MAX	4096
#define TEL_QUEUE_MAX		1000000

#define MS_SEC	1000ULL
#define MS_MIN	(60 * MS_SEC)
#define MS_HOUR	(60 * MS_MIN)

#define ENDPOINT_WHAT	"host:port or an http:// or https:// URL (such as " \
	"127.0.0.1:4318, [::1]:4318 or https://otel.example.com:4318)"

/* a duration key and its bounds */
struct tel_range {
	uint64_t	*tr_ms;
	uint64_t	 tr_min;
	uint64_t	 tr_max;
	const char	*tr_what;
};

/* the reference's keys vmcpd refuses, and what to use instead */
static const struct {
	const char	*tr_key;
	const char	*tr_instead;
} tel_refused[] = {
	{ "enablePrometheusMetricsPath", "vmcpd serves Prometheus /metrics "
	    "on daemon.diagnostics" },
	{ "prometheusPort", "vmcpd serves Prometheus /metrics on "
	    "daemon.diagnostics (host:port)" },
	{ "metricsOnTransportPort", "vmcpd serves Prometheus /metrics on "
	    "daemon.diagnostics only, never on daemon.listen" },
	{ "environmentVariables", "give resource attributes in "
	    "customAttributes (and collector headers from the environment in "
	    "headersFromEnv)" },
	{ "useLegacyAttributes", "vmcpd emits only the OpenTelemetry MCP "
	    "semantic conventions' attributes" },
};

/* resource attributes vmcpd sets itself (vmcpd.yaml(5), TELEMETRY) */
static const char *const tel_own_attrs[] = {
	"service.name", "service.version", "service.instance.id",
	"process.pid", "vmcpd.process",
};

static int
load_tel_refused(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	const struct cnode	*key = v, *up = v->cn_up;
	size_t			 i;

	(void)arg;
	/* the key's position, as for the keys not supported yet */
	for (i = 1; up != NULL && i < up->cn_nkids; i += 2)
		if (up->cn_kids[i] == v)
			key = up->cn_kids[i - 1];
	for (i = 0; i < nitems(tel_refused); i++)
		if (strcmp(key->cn_str, tel_refused[i].tr_key) == 0)
			break;
	return config_error(ld, key, "%s: vmcpd does not implement this "
	    "reference key; %s", path, i < nitems(tel_refused) ?
	    tel_refused[i].tr_instead : "see vmcpd.yaml(5)");
}

static int
load_tel_duration(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	const struct tel_range	*r = arg;
	uint64_t		 ms;

	if (v->cn_type != CN_SCALAR || cnode_is_null(v) ||
	    config_parse_duration(v->cn_str, &ms) != 0 || ms < r->tr_min ||
	    ms > r->tr_max)
		return config_expected(ld, v, path, r->tr_what);
	*r->tr_ms = ms;
	return 0;
}

/* "0.05" as the reference writes it, or a number; 0 to 1, decimal */
static int
load_tel_sampling(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_telemetry	*ct = arg;
	const char		*s;
	size_t			 i, ndig = 0, ndot = 0;
	double			 r;

	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		goto bad;
	s = v->cn_str;
	for (i = 0; i < v->cn_len; i++) {
		if (s[i] == '.')
			ndot++;
		else if (isdigit((unsigned char)s[i]))
			ndig++;
		else
			goto bad;
	}
	if (ndig == 0 || ndot > 1)
		goto bad;
	r = strtod(s, NULL);
	if (!(r >= 0.0 && r <= 1.0))
		goto bad;
	ct->ct_sampling_rate = r;
	return 0;
bad:
	return config_expected(ld, v, path, "a rate from 0 to 1, such as "
	    "\"0.05\" or 1");
}

static int
load_tel_protocol(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "http/protobuf", CONFIG_OTLP_PROTOBUF },
		{ "http/json", CONFIG_OTLP_JSON },
	};
	struct config_telemetry	*ct = arg;
	int			 p;

	if (load_choice(ld, v, path, ch, nitems(ch), "http/protobuf or "
	    "http/json (vmcpd exports over OTLP/HTTP, not gRPC)", &p) == -1)
		return -1;
	ct->ct_protocol = (enum config_otlp_protocol)p;
	return 0;
}

static int
load_tel_ca(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config_telemetry	*ct = arg;

	return load_ca_path(ld, v, path, &ct->ct_ca_file);
}

/* a string (config_tree.c refuses a NUL inside one) */
static int
tel_scalar(const struct cnode *v)
{
	return v->cn_type == CN_SCALAR && !cnode_is_null(v);
}

/*
 * headers: and headersFromEnv: into one list, each name once whatever
 * its case.  The values are secrets: messages never quote them.
 */
static int
tel_load_headers(struct loader *ld, struct cnode *n, const char *path,
    struct config_telemetry *ct, int fromenv)
{
	struct config_otlp_header	*h;
	struct cnode			*key, *v;
	char				 kpath[PATH_MAX_LEN], *env = NULL;
	const char			*val;
	size_t				 i, j, nkeys;
	int				 rc;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if ((nkeys = n->cn_nkids / 2) == 0)
		return 0;
	if (ct->ct_nheaders + nkeys > TEL_HEADERS_MAX)
		return config_error(ld, n, "%s: more than %d headers in "
		    "headers and headersFromEnv together", path,
		    TEL_HEADERS_MAX);
	if ((h = reallocarray(ct->ct_headers, ct->ct_nheaders + nkeys,
	    sizeof(*h))) == NULL)
		return config_error(ld, NULL, "out of memory");
	ct->ct_headers = h;
	for (i = 0; i < nkeys; i++) {
		key = n->cn_kids[2 * i];
		v = n->cn_kids[2 * i + 1];
		config_path(kpath, sizeof(kpath), path, key);
		if (!tel_scalar(key) || !config_http_token(key->cn_str))
			return config_error(ld, key, "%s: expected an HTTP "
			    "header name (RFC 9110 token)", kpath);
		if (config_http_framing(key->cn_str) ||
		    strcasecmp(key->cn_str, "Content-Encoding") == 0)
			return config_error(ld, key, "%s: %s is a header "
			    "vmcpd's exporter sets itself", kpath,
			    key->cn_str);
		for (j = 0; j < ct->ct_nheaders; j++)
			if (strcasecmp(ct->ct_headers[j].oh_name,
			    key->cn_str) == 0)
				return config_error(ld, key, "%s: header %s "
				    "is given twice (in headers or "
				    "headersFromEnv; names ignore case)", kpath,
				    ct->ct_headers[j].oh_name);
		if (fromenv) {
			rc = load_env_ref(ld, v, kpath, &env, &val);
			free(env);
			env = NULL;
			if (rc == -1)
				return -1;
		} else if (!tel_scalar(v))
			return config_error(ld, v, "%s: expected a string",
			    kpath);
		else
			val = v->cn_str;
		if (!config_http_value(val))
			return config_error(ld, v, "%s: expected an HTTP "
			    "header value (visible characters and spaces, not "
			    "empty, no line breaks)", kpath);
		h = &ct->ct_headers[ct->ct_nheaders++];
		h->oh_name = strdup(key->cn_str);
		h->oh_value = strdup(val);
		if (h->oh_name == NULL || h->oh_value == NULL)
			return config_error(ld, NULL, "out of memory");
	}
	return 0;
}

static int
load_tel_headers(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	return tel_load_headers(ld, n, path, arg, 0);
}

static int
load_tel_headers_env(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	return tel_load_headers(ld, n, path, arg, 1);
}

static int
load_tel_attrs(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_telemetry	*ct = arg;
	struct config_otlp_attr	*a;
	struct cnode		*key, *v;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, j, nkeys;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if ((nkeys = n->cn_nkids / 2) == 0)
		return 0;
	if (nkeys > TEL_ATTRS_MAX)
		return config_error(ld, n, "%s: more than %d attributes", path,
		    TEL_ATTRS_MAX);
	if ((ct->ct_attrs = calloc(nkeys, sizeof(*ct->ct_attrs))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < nkeys; i++) {
		key = n->cn_kids[2 * i];
		v = n->cn_kids[2 * i + 1];
		config_path(kpath, sizeof(kpath), path, key);
		if (!tel_scalar(key) || key->cn_len == 0 ||
		    key->cn_len > TEL_ATTR_KEY_MAX)
			return config_error(ld, key, "%s: expected an "
			    "attribute name of 1 to %d bytes", kpath,
			    TEL_ATTR_KEY_MAX);
		for (j = 0; j < nitems(tel_own_attrs); j++)
			if (strcmp(key->cn_str, tel_own_attrs[j]) == 0)
				return config_error(ld, key, "%s: vmcpd sets "
				    "%s itself (service.name and "
				    "service.version: serviceName and "
				    "serviceVersion)", kpath, key->cn_str);
		if (!tel_scalar(v) || v->cn_len > TEL_ATTR_VALUE_MAX)
			return config_expected(ld, v, kpath, "a string of at "
			    "most 4096 bytes");
		a = &ct->ct_attrs[ct->ct_nattrs++];
		a->oa_key = strdup(key->cn_str);
		a->oa_value = strdup(v->cn_str);
		if (a->oa_key == NULL || a->oa_value == NULL)
			return config_error(ld, NULL, "out of memory");
	}
	return 0;
}

/*
 * host[:port] of len bytes at a: a name, an IPv4 address or [IPv6]; a
 * port from 1 to 65535, required when needport.
 */
static int
tel_authority(const char *a, size_t len, int needport)
{
	struct in6_addr	 in6;
	const char	*he, *p;
	char		 v6[INET6_ADDRSTRLEN];
	unsigned long	 port = 0;

	if (len == 0)
		return -1;
	if (a[0] == '[') {
		if ((he = memchr(a, ']', len)) == NULL || he == a + 1 ||
		    (size_t)(he - a - 1) >= sizeof(v6))
			return -1;
		memcpy(v6, a + 1, (size_t)(he - a - 1));
		v6[he - a - 1] = '\0';
		if (inet_pton(AF_INET6, v6, &in6) != 1)
			return -1;
		he++;
	} else {
		for (he = a; he < a + len && *he != ':'; he++)
			if (!isalnum((unsigned char)*he) &&
			    strchr(".-_", *he) == NULL)
				return -1;
		if (he == a)
			return -1;
	}
	if (he == a + len)
		return needport ? -1 : 0;
	if (*he != ':' || a + len - he < 2 || a + len - he > 6)
		return -1;
	for (p = he + 1; p < a + len; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	return port >= 1 && port <= 65535 ? 0 : -1;
}

/*
 * endpoint (in ct_url as written) into the collector's base URL, once
 * insecure is known: "host:port" takes https://, or http:// with
 * insecure: true; a URL keeps its scheme, which must agree with
 * insecure, and loses its trailing '/'.
 */
static int
tel_endpoint(struct loader *ld, struct cnode *n, const char *path,
    struct config_telemetry *ct)
{
	struct cnode	*v = cnode_get(n, "endpoint");
	const char	*ep = ct->ct_url, *a;
	char		 epath[PATH_MAX_LEN], *url;
	size_t		 i, alen, len;
	int		 https;

	(void)snprintf(epath, sizeof(epath), "%s.endpoint", path);
	/* user info or a query may hold a credential: not quoted */
	if (strchr(ep, '@') != NULL)
		return config_error(ld, v, "%s: expected %s, without user "
		    "info (give the collector's credentials in headers or "
		    "headersFromEnv)", epath, ENDPOINT_WHAT);
	if (strpbrk(ep, "?#") != NULL)
		return config_error(ld, v, "%s: expected a URL without a "
		    "query or fragment (vmcpd appends /v1/traces and "
		    "/v1/metrics; give credentials in headers or "
		    "headersFromEnv)", epath);
	for (i = 0; ep[i] != '\0'; i++)
		if (isspace((unsigned char)ep[i]) ||
		    iscntrl((unsigned char)ep[i]) ||
		    strchr("\"\\<>`{}|^", ep[i]) != NULL)
			return config_expected(ld, v, epath, ENDPOINT_WHAT);
	if (strstr(ep, "://") == NULL) {
		if (strchr(ep, '/') != NULL)
			return config_expected(ld, v, epath, "host:port "
			    "(a path needs the URL form, such as "
			    "https://otel.example.com/otlp)");
		if (tel_authority(ep, strlen(ep), 1) == -1)
			return config_expected(ld, v, epath, ENDPOINT_WHAT);
		len = strlen(ep) + sizeof("https://");
		if ((url = malloc(len)) == NULL)
			return config_error(ld, NULL, "out of memory");
		(void)snprintf(url, len, "%s://%s", ct->ct_insecure ? "http" :
		    "https", ep);
		goto done;
	}
	if (strncasecmp(ep, "https://", 8) == 0) {
		https = 1;
		a = ep + 8;
	} else if (strncasecmp(ep, "http://", 7) == 0) {
		https = 0;
		a = ep + 7;
	} else
		return config_expected(ld, v, epath, ENDPOINT_WHAT);
	alen = strcspn(a, "/?#");
	if (tel_authority(a, alen, 0) == -1)
		return config_expected(ld, v, epath, ENDPOINT_WHAT);
	if (!https && !ct->ct_insecure)
		return config_error(ld, v, "%s: an http:// URL sends spans "
		    "and headers unencrypted; set %s.insecure: true to allow "
		    "it, or use https://", epath, path);
	if (https && ct->ct_insecure)
		return config_error(ld, cnode_get(n, "insecure"),
		    "%s.insecure: true with an https:// endpoint; remove "
		    "insecure, or use an http:// URL", path);
	len = strlen(ep);
	while (len > (size_t)(a - ep) + alen && ep[len - 1] == '/')
		len--;
	if ((url = strndup(ep, len)) == NULL)
		return config_error(ld, NULL, "out of memory");
done:
	free(ct->ct_url);
	ct->ct_url = url;
	return 0;
}

/* tracingEnabled or metricsEnabled true: endpoint is required */
static int
tel_need_endpoint(struct loader *ld, struct cnode *n, const char *path,
    const char *key, int on)
{
	if (!on || cnode_get(n, "endpoint") != NULL)
		return 0;
	return config_error(ld, cnode_get_key(n, key), "%s.%s: true needs "
	    "%s.endpoint (the collector's OTLP/HTTP address)", path, key,
	    path);
}

int
load_telemetry(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_telemetry	*ct = &cf->cf_telemetry;
	struct tel_range	 interval = { &ct->ct_interval_ms, 100,
				    MS_HOUR, "a duration from 100ms to 1h" };
	struct tel_range	 timeout = { &ct->ct_timeout_ms, 100,
				    5 * MS_MIN, "a duration from 100ms to 5m" };
	struct tel_range	 mint = { &ct->ct_metrics_interval_ms, MS_SEC,
				    MS_HOUR, "a duration from 1s to 1h" };
	const struct field	 fields[] = {
		{ "endpoint", F_STRING, &ct->ct_url, NULL, 0, 0 },
		{ "insecure", F_BOOL, &ct->ct_insecure, NULL, 0, 0 },
		{ "serviceName", F_STRING, &ct->ct_service_name, NULL, 0, 0 },
		{ "serviceVersion", F_STRING, &ct->ct_service_version, NULL,
		    0, 0 },
		{ "tracingEnabled", F_BOOL, &ct->ct_tracing, NULL, 0, 0 },
		{ "metricsEnabled", F_BOOL, &ct->ct_metrics, NULL, 0, 0 },
		{ "samplingRate", F_FN, ct, load_tel_sampling, 0, 0 },
		{ "headers", F_FN, ct, load_tel_headers, 0, 0 },
		{ "headersFromEnv", F_FN, ct, load_tel_headers_env, 0, 0 },
		{ "customAttributes", F_FN, ct, load_tel_attrs, 0, 0 },
		{ "caCertPath", F_FN, ct, load_tel_ca, 0, 0 },
		{ "protocol", F_FN, ct, load_tel_protocol, 0, 0 },
		{ "propagateBaggage", F_BOOL, &ct->ct_baggage, NULL, 0, 0 },
		{ "maxQueueSize", F_UINT, &ct->ct_queue_max, NULL, 1,
		    TEL_QUEUE_MAX },
		{ "maxExportBatchSize", F_UINT, &ct->ct_batch_max, NULL, 1,
		    TEL_QUEUE_MAX },
		{ "exportInterval", F_FN, &interval, load_tel_duration, 0, 0 },
		{ "exportTimeout", F_FN, &timeout, load_tel_duration, 0, 0 },
		{ "metricsInterval", F_FN, &mint, load_tel_duration, 0, 0 },
		{ "enablePrometheusMetricsPath", F_FN, NULL, load_tel_refused,
		    0, 0 },
		{ "prometheusPort", F_FN, NULL, load_tel_refused, 0, 0 },
		{ "metricsOnTransportPort", F_FN, NULL, load_tel_refused,
		    0, 0 },
		{ "environmentVariables", F_FN, NULL, load_tel_refused, 0, 0 },
		{ "useLegacyAttributes", F_FN, NULL, load_tel_refused, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (ct->ct_batch_max > ct->ct_queue_max)
		return config_error(ld, cnode_get(n, "maxExportBatchSize"),
		    "%s.maxExportBatchSize: %u is more than maxQueueSize (%u)",
		    path, ct->ct_batch_max, ct->ct_queue_max);
	if (tel_need_endpoint(ld, n, path, "tracingEnabled",
	    ct->ct_tracing) == -1 ||
	    tel_need_endpoint(ld, n, path, "metricsEnabled",
	    ct->ct_metrics) == -1)
		return -1;
	if (ct->ct_url == NULL) {
		if (ct->ct_insecure)
			return config_error(ld, cnode_get_key(n, "insecure"),
			    "%s.insecure: needs %s.endpoint", path, path);
		return 0;
	}
	if (tel_endpoint(ld, n, path, ct) == -1)
		return -1;
	if (ct->ct_ca_file != NULL && strncasecmp(ct->ct_url, "https://",
	    8) != 0)
		return config_error(ld, cnode_get_key(n, "caCertPath"),
		    "%s.caCertPath: only with an https endpoint", path);
	ct->ct_enabled = ct->ct_tracing || ct->ct_metrics;
	return 0;
}

/* what a valid section should tell an operator (config_warn()) */
void
config_telemetry_warn(const struct config *cf, FILE *f)
{
	const struct config_telemetry	*ct = &cf->cf_telemetry;
	const char			*a, *e;

	if (ct->ct_url == NULL || (a = strstr(ct->ct_url, "://")) == NULL)
		return;
	if (!ct->ct_enabled)
		(void)fprintf(f, "%s: warning: telemetry.endpoint is set but "
		    "tracingEnabled and metricsEnabled are not: nothing is "
		    "exported\n", cf->cf_file);
	/* the reference's own example has it */
	a += 3;
	e = a + strcspn(a, "/");
	if (e - a > 5 && memcmp(e - 5, ":4317", 5) == 0)
		(void)fprintf(f, "%s: warning: telemetry.endpoint: port 4317 "
		    "is OTLP/gRPC's by convention; vmcpd exports OTLP/HTTP "
		    "(port 4318 by convention)\n", cf->cf_file);
}

int
config_telemetry_defaults(struct config *cf)
{
	struct config_telemetry	*ct = &cf->cf_telemetry;

	ct->ct_sampling_rate = 0.05;
	ct->ct_protocol = CONFIG_OTLP_PROTOBUF;
	ct->ct_queue_max = 2048;
	ct->ct_batch_max = 512;
	ct->ct_interval_ms = MS_SEC;
	ct->ct_timeout_ms = 10 * MS_SEC;
	ct->ct_metrics_interval_ms = 60 * MS_SEC;
	if ((ct->ct_service_version = strdup(VMCPD_VERSION)) == NULL)
		return -1;
	return 0;
}

/* serviceName defaults to name:, which may come after telemetry: */
int
config_telemetry_resolve(struct loader *ld)
{
	struct config_telemetry	*ct = &ld->ld_cf->cf_telemetry;

	if (ct->ct_service_name == NULL &&
	    (ct->ct_service_name = strdup(ld->ld_cf->cf_name)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

void
config_telemetry_free(struct config *cf)
{
	struct config_telemetry	*ct = &cf->cf_telemetry;
	size_t			 i;

	for (i = 0; i < ct->ct_nheaders; i++) {
		free(ct->ct_headers[i].oh_name);
		if (ct->ct_headers[i].oh_value != NULL) {
			explicit_bzero(ct->ct_headers[i].oh_value,
			    strlen(ct->ct_headers[i].oh_value));
			free(ct->ct_headers[i].oh_value);
		}
	}
	free(ct->ct_headers);
	for (i = 0; i < ct->ct_nattrs; i++) {
		free(ct->ct_attrs[i].oa_key);
		free(ct->ct_attrs[i].oa_value);
	}
	free(ct->ct_attrs);
	free(ct->ct_url);
	free(ct->ct_service_name);
	free(ct->ct_service_version);
	free(ct->ct_ca_file);
}
