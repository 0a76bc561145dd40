/*
 * Unit tests for shared/config_telemetry.c: vmcpd.yaml's telemetry:
 * section, key by key (accepted values, defaults, the exact message of
 * each refusal), the endpoint's forms, headers from the environment,
 * the reference keys vmcpd refuses, and header values never in a message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/version.h"
#include "config_unit.h"

/* a secret that no message may quote */
#define SECRET	"s3cr3t-t0ken-value"

/* "telemetry: {<body>}" and a backend */
static struct config *
tel_ok(const char *body)
{
	char	 yaml[12288];

	(void)snprintf(yaml, sizeof(yaml), "telemetry: {%s}\n" BACKEND, body);
	return load_ok(yaml);
}

/* the load fails, and its message quotes no secret */
static void
tel_err(const char *yaml, char *err, size_t errlen)
{
	load_err(yaml, "an error", err, errlen);
	if (strstr(err, SECRET) != NULL)
		fail_msg("the message quotes a secret: %s", err);
}

/* "telemetry: {<body>}" fails with exactly msg */
static void
tel_bad(const char *body, const char *msg)
{
	char	 yaml[12288], err[CONFIG_ERR_MAX];

	(void)snprintf(yaml, sizeof(yaml), "telemetry: {%s}\n" BACKEND, body);
	tel_err(yaml, err, sizeof(err));
	assert_string_equal(err, msg);
}

/* fails with a message that starts with prefix */
static void
tel_bad_prefix(const char *body, const char *prefix)
{
	char	 yaml[12288], err[CONFIG_ERR_MAX];

	(void)snprintf(yaml, sizeof(yaml), "telemetry: {%s}\n" BACKEND, body);
	tel_err(yaml, err, sizeof(err));
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("for {%s}: \"%s\" does not start with \"%s\"", body,
		    err, prefix);
}

static void
test_defaults(void **state)
{
	const struct config_telemetry	*ct;
	struct config			*cf;

	(void)state;
	cf = load_ok(BACKEND);
	ct = &cf->cf_telemetry;
	assert_false(ct->ct_enabled);
	assert_null(ct->ct_url);
	assert_false(ct->ct_insecure);
	assert_string_equal(ct->ct_service_name, "vmcpd");
	assert_string_equal(ct->ct_service_version, VMCPD_VERSION);
	assert_false(ct->ct_tracing);
	assert_false(ct->ct_metrics);
	assert_true(ct->ct_sampling_rate == 0.05);
	assert_int_equal(ct->ct_protocol, CONFIG_OTLP_PROTOBUF);
	assert_int_equal(ct->ct_nheaders, 0);
	assert_int_equal(ct->ct_nattrs, 0);
	assert_null(ct->ct_ca_file);
	assert_false(ct->ct_baggage);
	assert_int_equal(ct->ct_queue_max, 2048);
	assert_int_equal(ct->ct_batch_max, 512);
	assert_int_equal(ct->ct_interval_ms, 1000);
	assert_int_equal(ct->ct_timeout_ms, 10000);
	assert_int_equal(ct->ct_metrics_interval_ms, 60000);
	config_free(cf);

	/* an empty section is no telemetry */
	cf = tel_ok("");
	assert_false(cf->cf_telemetry.ct_enabled);
	config_free(cf);

	/* serviceName follows name:, even when name: comes after */
	cf = load_ok("telemetry: {endpoint: \"h:4318\", tracingEnabled: "
	    "true}\nname: eng-vmcp\n" BACKEND);
	assert_string_equal(cf->cf_telemetry.ct_service_name, "eng-vmcp");
	assert_true(cf->cf_telemetry.ct_enabled);
	config_free(cf);
}

static void
test_full(void **state)
{
	const struct config_telemetry	*ct;
	struct config			*cf;
	char				 yaml[2048];

	(void)state;
	setenv("TEL_TEST_TOKEN", "Bearer " SECRET, 1);
	(void)snprintf(yaml, sizeof(yaml),
	    "name: eng\n"
	    "telemetry:\n"
	    "  endpoint: https://otel.example.com:4318/otlp/\n"
	    "  insecure: false\n"
	    "  serviceName: gw\n"
	    "  serviceVersion: 9.9\n"
	    "  tracingEnabled: true\n"
	    "  metricsEnabled: true\n"
	    "  samplingRate: \"0.25\"\n"
	    "  headers: {X-Scope-OrgID: eng, x-b: \"a b\"}\n"
	    "  headersFromEnv: {Authorization: TEL_TEST_TOKEN}\n"
	    "  customAttributes: {deployment.environment.name: prod, n: 1}\n"
	    "  caCertPath: /etc/hostname\n"
	    "  protocol: http/json\n"
	    "  propagateBaggage: true\n"
	    "  maxQueueSize: 1000000\n"
	    "  maxExportBatchSize: 1000000\n"
	    "  exportInterval: 1h\n"
	    "  exportTimeout: 5m\n"
	    "  metricsInterval: 1s\n"
	    BACKEND);
	cf = load_ok(yaml);
	ct = &cf->cf_telemetry;
	assert_true(ct->ct_enabled);
	assert_string_equal(ct->ct_url, "https://otel.example.com:4318/otlp");
	assert_false(ct->ct_insecure);
	assert_string_equal(ct->ct_service_name, "gw");
	assert_string_equal(ct->ct_service_version, "9.9");
	assert_true(ct->ct_tracing);
	assert_true(ct->ct_metrics);
	assert_true(ct->ct_sampling_rate == 0.25);
	assert_int_equal(ct->ct_nheaders, 3);
	assert_string_equal(ct->ct_headers[0].oh_name, "X-Scope-OrgID");
	assert_string_equal(ct->ct_headers[0].oh_value, "eng");
	assert_string_equal(ct->ct_headers[1].oh_name, "x-b");
	assert_string_equal(ct->ct_headers[1].oh_value, "a b");
	assert_string_equal(ct->ct_headers[2].oh_name, "Authorization");
	assert_string_equal(ct->ct_headers[2].oh_value, "Bearer " SECRET);
	assert_int_equal(ct->ct_nattrs, 2);
	assert_string_equal(ct->ct_attrs[0].oa_key,
	    "deployment.environment.name");
	assert_string_equal(ct->ct_attrs[0].oa_value, "prod");
	assert_string_equal(ct->ct_attrs[1].oa_key, "n");
	assert_string_equal(ct->ct_attrs[1].oa_value, "1");
	assert_string_equal(ct->ct_ca_file, "/etc/hostname");
	assert_int_equal(ct->ct_protocol, CONFIG_OTLP_JSON);
	assert_true(ct->ct_baggage);
	assert_int_equal(ct->ct_queue_max, 1000000);
	assert_int_equal(ct->ct_batch_max, 1000000);
	assert_int_equal(ct->ct_interval_ms, 3600000);
	assert_int_equal(ct->ct_timeout_ms, 300000);
	assert_int_equal(ct->ct_metrics_interval_ms, 1000);
	config_free(cf);
	unsetenv("TEL_TEST_TOKEN");
}

static void
check_url(const char *body, const char *url)
{
	struct config	*cf;

	cf = tel_ok(body);
	assert_non_null(cf->cf_telemetry.ct_url);
	assert_string_equal(cf->cf_telemetry.ct_url, url);
	config_free(cf);
}

static void
test_endpoint(void **state)
{
	(void)state;
	/* host:port: https, or http with insecure */
	check_url("endpoint: \"127.0.0.1:4318\"", "https://127.0.0.1:4318");
	check_url("endpoint: \"127.0.0.1:4318\", insecure: true",
	    "http://127.0.0.1:4318");
	check_url("endpoint: \"otel-collector.monitoring_ns:4318\"",
	    "https://otel-collector.monitoring_ns:4318");
	check_url("endpoint: \"[::1]:4318\", insecure: true",
	    "http://[::1]:4318");
	check_url("endpoint: \"[::ffff:127.0.0.1]:65535\"",
	    "https://[::ffff:127.0.0.1]:65535");
	/* a URL: as written, less its trailing '/' */
	check_url("endpoint: \"https://otel.example.com\"",
	    "https://otel.example.com");
	check_url("endpoint: \"https://otel.example.com/\"",
	    "https://otel.example.com");
	check_url("endpoint: \"HTTPS://h:443/a/b//\"", "HTTPS://h:443/a/b");
	check_url("endpoint: \"http://[::1]:4318/\", insecure: true",
	    "http://[::1]:4318");
	check_url("insecure: true, endpoint: \"http://localhost:4318\"",
	    "http://localhost:4318");

	/* the scheme and insecure must agree */
	tel_bad("endpoint: \"http://127.0.0.1:4318\"", "t.yaml:1:23: "
	    "telemetry.endpoint: an http:// URL sends spans and headers "
	    "unencrypted; set telemetry.insecure: true to allow it, or use "
	    "https://");
	tel_bad("endpoint: \"https://h:4318\", insecure: true", "t.yaml:1:51: "
	    "telemetry.insecure: true with an https:// endpoint; remove "
	    "insecure, or use an http:// URL");
	tel_bad("insecure: true", "t.yaml:1:13: telemetry.insecure: needs "
	    "telemetry.endpoint");

	/* malformed */
	tel_bad("endpoint: \"collector\"", "t.yaml:1:23: telemetry.endpoint: "
	    "expected host:port or an http:// or https:// URL (such as "
	    "127.0.0.1:4318, [::1]:4318 or https://otel.example.com:4318), "
	    "found \"collector\"");
	tel_bad("endpoint: \"h:4318/v1\"", "t.yaml:1:23: telemetry.endpoint: "
	    "expected host:port (a path needs the URL form, such as "
	    "https://otel.example.com/otlp), found \"h:4318/v1\"");
	/* a query may hold a credential: refused, and not quoted */
	tel_bad("endpoint: \"https://h/x?token=" SECRET "\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected a URL without a query or fragment "
	    "(vmcpd appends /v1/traces and /v1/metrics; give credentials in "
	    "headers or headersFromEnv)");
	tel_bad("endpoint: \"h:4318?k=" SECRET "\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected a URL without a query or fragment "
	    "(vmcpd appends /v1/traces and /v1/metrics; give credentials in "
	    "headers or headersFromEnv)");
	tel_bad_prefix("endpoint: \"https://h/#frag\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected a URL without a query");
	tel_bad("endpoint: 4318", "t.yaml:1:23: telemetry.endpoint: "
	    "expected host:port or an http:// or https:// URL (such as "
	    "127.0.0.1:4318, [::1]:4318 or https://otel.example.com:4318), "
	    "found \"4318\"");
	tel_bad("endpoint: [a]", "t.yaml:1:23: telemetry.endpoint: expected "
	    "a non-empty string, found a sequence");
	tel_bad_prefix("endpoint: \"h:0\"", "t.yaml:1:23: telemetry.endpoint: "
	    "expected host:port");
	tel_bad_prefix("endpoint: \"h:65536\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"h:\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"h:12x\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"::1:4318\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"[::1]\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"[::1:4318\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"[nothex]:4318\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"grpc://h:4317\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"https://\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"https:///v1\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"https://h:x/\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"https://h /\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	tel_bad_prefix("endpoint: \"https://h/\\r\\n\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port");
	/* user info may hold a password: refused, and not quoted */
	tel_bad("endpoint: \"https://u:" SECRET "@h:4318\"", "t.yaml:1:23: "
	    "telemetry.endpoint: expected host:port or an http:// or "
	    "https:// URL (such as 127.0.0.1:4318, [::1]:4318 or "
	    "https://otel.example.com:4318), without user info (give the "
	    "collector's credentials in headers or headersFromEnv)");
}

static void
test_enabled(void **state)
{
	struct config	*cf;

	(void)state;
	/* an endpoint alone exports nothing */
	cf = tel_ok("endpoint: \"h:4318\"");
	assert_false(cf->cf_telemetry.ct_enabled);
	config_free(cf);
	cf = tel_ok("endpoint: \"h:4318\", tracingEnabled: true, "
	    "metricsEnabled: false");
	assert_true(cf->cf_telemetry.ct_enabled);
	assert_true(cf->cf_telemetry.ct_tracing);
	assert_false(cf->cf_telemetry.ct_metrics);
	config_free(cf);
	cf = tel_ok("endpoint: \"h:4318\", metricsEnabled: true");
	assert_true(cf->cf_telemetry.ct_enabled);
	assert_false(cf->cf_telemetry.ct_tracing);
	config_free(cf);
	cf = tel_ok("tracingEnabled: false, metricsEnabled: false");
	assert_false(cf->cf_telemetry.ct_enabled);
	config_free(cf);

	tel_bad("tracingEnabled: true", "t.yaml:1:13: telemetry."
	    "tracingEnabled: true needs telemetry.endpoint (the collector's "
	    "OTLP/HTTP address)");
	tel_bad("metricsEnabled: true", "t.yaml:1:13: telemetry."
	    "metricsEnabled: true needs telemetry.endpoint (the collector's "
	    "OTLP/HTTP address)");
	tel_bad("tracingEnabled: \"true\"", "t.yaml:1:29: telemetry."
	    "tracingEnabled: expected true or false, found the quoted string "
	    "\"true\"");
	tel_bad("metricsEnabled: yes", "t.yaml:1:29: telemetry."
	    "metricsEnabled: expected true or false, found \"yes\"");
	tel_bad("insecure: 1", "t.yaml:1:23: telemetry.insecure: expected "
	    "true or false, found \"1\"");
	tel_bad("propagateBaggage: null", "t.yaml:1:31: telemetry."
	    "propagateBaggage: expected true or false, found null");
}

static void
check_rate(const char *v, double want)
{
	struct config	*cf;
	char		 body[128];

	(void)snprintf(body, sizeof(body), "samplingRate: %s", v);
	cf = tel_ok(body);
	assert_true(cf->cf_telemetry.ct_sampling_rate == want);
	config_free(cf);
}

static void
test_sampling(void **state)
{
	static const char *const bad[] = { "\"1.5\"", "1.01", "\"-0.1\"",
	    "-0", "abc", "\"1e-2\"", "\"nan\"", "\"inf\"", "\"\"", "null",
	    "\".\"", "\"0.1.2\"", "\" 0.5\"", "\"0x1p-2\"", "[0.5]" };
	char	 body[128];
	size_t	 i;

	(void)state;
	check_rate("\"0.05\"", 0.05);
	check_rate("0.05", 0.05);
	check_rate("0", 0.0);
	check_rate("\"1\"", 1.0);
	check_rate("1.0", 1.0);
	check_rate("\".5\"", 0.5);
	check_rate("\"1.\"", 1.0);
	check_rate("0.000001", 0.000001);
	tel_bad("samplingRate: \"1.5\"", "t.yaml:1:27: telemetry."
	    "samplingRate: expected a rate from 0 to 1, such as \"0.05\" or "
	    "1, found \"1.5\"");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		(void)snprintf(body, sizeof(body), "samplingRate: %s", bad[i]);
		tel_bad_prefix(body, "t.yaml:1:27: telemetry.samplingRate: "
		    "expected a rate from 0 to 1");
	}
}

static void
test_headers(void **state)
{
	(void)state;
	tel_bad("headers: {\"Bad Name\": x}", "t.yaml:1:23: telemetry."
	    "headers.Bad Name: expected an HTTP header name (RFC 9110 token)");
	tel_bad("headers: {\"\": x}", "t.yaml:1:23: telemetry.headers.: "
	    "expected an HTTP header name (RFC 9110 token)");
	tel_bad("headers: {content-type: text/plain}", "t.yaml:1:23: "
	    "telemetry.headers.content-type: content-type is a header "
	    "vmcpd's exporter sets itself");
	tel_bad("headers: {Host: h}", "t.yaml:1:23: telemetry.headers.Host: "
	    "Host is a header vmcpd's exporter sets itself");
	tel_bad("headers: {Content-Encoding: gzip}", "t.yaml:1:23: "
	    "telemetry.headers.Content-Encoding: Content-Encoding is a "
	    "header vmcpd's exporter sets itself");
	tel_bad("headers: {X-A: a, x-a: b}", "t.yaml:1:31: telemetry."
	    "headers.x-a: header X-A is given twice (in headers or "
	    "headersFromEnv; names ignore case)");
	tel_bad("headers: {X-A: a, X-A: b}", "t.yaml:1:31: telemetry."
	    "headers.X-A: duplicate key (first at line 1, column 23)");
	/* a value that would split the request: refused, never quoted */
	tel_bad("headers: {Authorization: \"Bearer " SECRET "\\r\\nX: y\"}",
	    "t.yaml:1:38: telemetry.headers.Authorization: expected an HTTP "
	    "header value (visible characters and spaces, not empty, no line "
	    "breaks)");
	tel_bad("headers: {Authorization: \" " SECRET "\"}", "t.yaml:1:38: "
	    "telemetry.headers.Authorization: expected an HTTP header value "
	    "(visible characters and spaces, not empty, no line breaks)");
	tel_bad("headers: {Authorization: \"" SECRET "\\0x\"}", "t.yaml:1:38: "
	    "NUL characters are not allowed");
	tel_bad("headers: {Authorization: [" SECRET "]}", "t.yaml:1:38: "
	    "telemetry.headers.Authorization: expected a string");
	tel_bad("headers: {Authorization: }", "t.yaml:1:38: "
	    "telemetry.headers.Authorization: expected a string");
	tel_bad("headers: [a]", "t.yaml:1:22: telemetry.headers: expected a "
	    "mapping, found a sequence");
}

static void
test_headers_env(void **state)
{
	struct config	*cf;
	char		 body[2048], yaml[4096], err[CONFIG_ERR_MAX];
	size_t		 i, o;

	(void)state;
	setenv("TEL_TEST_A", SECRET, 1);
	cf = tel_ok("headers: {X-Tenant: eng}, headersFromEnv: "
	    "{X-Api-Key: TEL_TEST_A}");
	assert_int_equal(cf->cf_telemetry.ct_nheaders, 2);
	assert_string_equal(cf->cf_telemetry.ct_headers[1].oh_name,
	    "X-Api-Key");
	assert_string_equal(cf->cf_telemetry.ct_headers[1].oh_value, SECRET);
	config_free(cf);

	/* the same name in both */
	tel_bad("headersFromEnv: {X-Api-Key: TEL_TEST_A}, headers: "
	    "{x-api-key: v}", "t.yaml:1:64: telemetry.headers.x-api-key: "
	    "header X-Api-Key is given twice (in headers or headersFromEnv; "
	    "names ignore case)");
	/* missing, empty: the variable is named, no value shown */
	unsetenv("TEL_TEST_MISSING");
	tel_bad("headersFromEnv: {Authorization: TEL_TEST_MISSING}",
	    "t.yaml:1:45: telemetry.headersFromEnv.Authorization: the "
	    "environment variable TEL_TEST_MISSING is not set or empty");
	setenv("TEL_TEST_EMPTY", "", 1);
	tel_bad("headersFromEnv: {Authorization: TEL_TEST_EMPTY}",
	    "t.yaml:1:45: telemetry.headersFromEnv.Authorization: the "
	    "environment variable TEL_TEST_EMPTY is not set or empty");
	unsetenv("TEL_TEST_EMPTY");
	tel_bad("headersFromEnv: {Authorization: \"not-a-name\"}",
	    "t.yaml:1:45: telemetry.headersFromEnv.Authorization: expected "
	    "an environment variable name, found \"not-a-name\"");
	/* a value from the environment that would split the request */
	setenv("TEL_TEST_CRLF", "Bearer " SECRET "\r\nX-Evil: 1", 1);
	tel_bad("headersFromEnv: {Authorization: TEL_TEST_CRLF}",
	    "t.yaml:1:45: telemetry.headersFromEnv.Authorization: expected "
	    "an HTTP header value (visible characters and spaces, not empty, "
	    "no line breaks)");
	unsetenv("TEL_TEST_CRLF");
	tel_bad("headersFromEnv: {Bad/Name: TEL_TEST_A}", "t.yaml:1:30: "
	    "telemetry.headersFromEnv.Bad/Name: expected an HTTP header name "
	    "(RFC 9110 token)");

	/* at most 64 headers in all */
	o = (size_t)snprintf(body, sizeof(body), "headers: {");
	for (i = 0; i < 64; i++)
		o += (size_t)snprintf(body + o, sizeof(body) - o, "%sX-%zu: v",
		    i == 0 ? "" : ", ", i);
	(void)snprintf(body + o, sizeof(body) - o, "}");
	cf = tel_ok(body);
	assert_int_equal(cf->cf_telemetry.ct_nheaders, 64);
	config_free(cf);
	(void)snprintf(body + o, sizeof(body) - o, "}, headersFromEnv: "
	    "{X-Key: TEL_TEST_A}");
	(void)snprintf(yaml, sizeof(yaml), "telemetry: {%s}\n" BACKEND, body);
	tel_err(yaml, err, sizeof(err));
	assert_non_null(strstr(err, ": telemetry.headersFromEnv: more than 64 "
	    "headers in headers and headersFromEnv together"));
	unsetenv("TEL_TEST_A");
}

static void
test_attributes(void **state)
{
	struct config	*cf;
	char		 body[8192];
	size_t		 i, o;

	(void)state;
	cf = tel_ok("customAttributes: {team: platform, empty: \"\"}");
	assert_int_equal(cf->cf_telemetry.ct_nattrs, 2);
	assert_string_equal(cf->cf_telemetry.ct_attrs[1].oa_key, "empty");
	assert_string_equal(cf->cf_telemetry.ct_attrs[1].oa_value, "");
	config_free(cf);

	tel_bad("customAttributes: {service.name: x}", "t.yaml:1:32: "
	    "telemetry.customAttributes.service.name: vmcpd sets service.name "
	    "itself (service.name and service.version: serviceName and "
	    "serviceVersion)");
	tel_bad("customAttributes: {process.pid: 1}", "t.yaml:1:32: "
	    "telemetry.customAttributes.process.pid: vmcpd sets process.pid "
	    "itself (service.name and service.version: serviceName and "
	    "serviceVersion)");
	tel_bad("customAttributes: {\"\": x}", "t.yaml:1:32: telemetry."
	    "customAttributes.: expected an attribute name of 1 to 256 bytes");
	tel_bad("customAttributes: {team: {a: b}}", "t.yaml:1:38: telemetry."
	    "customAttributes.team: expected a string of at most 4096 bytes, "
	    "found a mapping");
	tel_bad("customAttributes: {team: null}", "t.yaml:1:38: telemetry."
	    "customAttributes.team: expected a string of at most 4096 bytes, "
	    "found null");
	tel_bad("customAttributes: [a]", "t.yaml:1:31: telemetry."
	    "customAttributes: expected a mapping, found a sequence");

	/* at most 128 */
	o = (size_t)snprintf(body, sizeof(body), "customAttributes: {");
	for (i = 0; i < 129; i++)
		o += (size_t)snprintf(body + o, sizeof(body) - o, "%sa%zu: v",
		    i == 0 ? "" : ", ", i);
	(void)snprintf(body + o, sizeof(body) - o, "}");
	tel_bad(body, "t.yaml:1:31: telemetry.customAttributes: more than "
	    "128 attributes");
}

static void
test_ca_protocol(void **state)
{
	struct config	*cf;

	(void)state;
	cf = tel_ok("endpoint: \"h:4318\", caCertPath: /etc/hostname");
	assert_string_equal(cf->cf_telemetry.ct_ca_file, "/etc/hostname");
	config_free(cf);
	tel_bad("caCertPath: ca.pem", "t.yaml:1:25: telemetry.caCertPath: "
	    "expected an absolute path, found \"ca.pem\"");
	tel_bad("caCertPath: /nonexistent/ca.pem", "t.yaml:1:25: telemetry."
	    "caCertPath: cannot read /nonexistent/ca.pem");
	tel_bad("endpoint: \"h:4318\", insecure: true, caCertPath: "
	    "/etc/hostname", "t.yaml:1:49: telemetry.caCertPath: only with "
	    "an https endpoint");

	cf = tel_ok("protocol: http/protobuf");
	assert_int_equal(cf->cf_telemetry.ct_protocol, CONFIG_OTLP_PROTOBUF);
	config_free(cf);
	cf = tel_ok("protocol: http/json");
	assert_int_equal(cf->cf_telemetry.ct_protocol, CONFIG_OTLP_JSON);
	config_free(cf);
	tel_bad("protocol: grpc", "t.yaml:1:23: telemetry.protocol: expected "
	    "http/protobuf or http/json (vmcpd exports over OTLP/HTTP, not "
	    "gRPC), found \"grpc\"");
}

static void
test_bounds(void **state)
{
	struct config	*cf;

	(void)state;
	cf = tel_ok("maxQueueSize: 1, maxExportBatchSize: 1, exportInterval: "
	    "100ms, exportTimeout: 100ms, metricsInterval: 1h");
	assert_int_equal(cf->cf_telemetry.ct_queue_max, 1);
	assert_int_equal(cf->cf_telemetry.ct_batch_max, 1);
	assert_int_equal(cf->cf_telemetry.ct_interval_ms, 100);
	assert_int_equal(cf->cf_telemetry.ct_timeout_ms, 100);
	assert_int_equal(cf->cf_telemetry.ct_metrics_interval_ms, 3600000);
	config_free(cf);

	tel_bad("maxQueueSize: 0", "t.yaml:1:27: telemetry.maxQueueSize: "
	    "expected an integer from 1 to 1000000, found \"0\"");
	tel_bad("maxQueueSize: 1000001", "t.yaml:1:27: telemetry.maxQueueSize: "
	    "expected an integer from 1 to 1000000, found \"1000001\"");
	tel_bad("maxExportBatchSize: 0", "t.yaml:1:33: telemetry."
	    "maxExportBatchSize: expected an integer from 1 to 1000000, "
	    "found \"0\"");
	/* against the default queue, and one given after it */
	tel_bad("maxExportBatchSize: 4096", "t.yaml:1:33: telemetry."
	    "maxExportBatchSize: 4096 is more than maxQueueSize (2048)");
	tel_bad("maxExportBatchSize: 200, maxQueueSize: 100", "t.yaml:1:33: "
	    "telemetry.maxExportBatchSize: 200 is more than maxQueueSize "
	    "(100)");
	tel_bad("exportInterval: 99ms", "t.yaml:1:29: telemetry."
	    "exportInterval: expected a duration from 100ms to 1h, found "
	    "\"99ms\"");
	tel_bad("exportInterval: 1h1s", "t.yaml:1:29: telemetry."
	    "exportInterval: expected a duration from 100ms to 1h, found "
	    "\"1h1s\"");
	tel_bad("exportTimeout: 5m1s", "t.yaml:1:28: telemetry."
	    "exportTimeout: expected a duration from 100ms to 5m, found "
	    "\"5m1s\"");
	tel_bad("exportTimeout: soon", "t.yaml:1:28: telemetry."
	    "exportTimeout: expected a duration from 100ms to 5m, found "
	    "\"soon\"");
	tel_bad("metricsInterval: 999ms", "t.yaml:1:30: telemetry."
	    "metricsInterval: expected a duration from 1s to 1h, found "
	    "\"999ms\"");
	tel_bad("metricsInterval: [1s]", "t.yaml:1:30: telemetry."
	    "metricsInterval: expected a duration from 1s to 1h, found a "
	    "sequence");
	/* a bare integer is seconds, as elsewhere */
	cf = tel_ok("metricsInterval: 30");
	assert_int_equal(cf->cf_telemetry.ct_metrics_interval_ms, 30000);
	config_free(cf);
}

static void
test_refused(void **state)
{
	(void)state;
	tel_bad("enablePrometheusMetricsPath: true", "t.yaml:1:13: telemetry."
	    "enablePrometheusMetricsPath: vmcpd does not implement this "
	    "reference key; vmcpd serves Prometheus /metrics on "
	    "daemon.diagnostics");
	tel_bad("prometheusPort: 9464", "t.yaml:1:13: telemetry."
	    "prometheusPort: vmcpd does not implement this reference key; "
	    "vmcpd serves Prometheus /metrics on daemon.diagnostics "
	    "(host:port)");
	tel_bad("metricsOnTransportPort: true", "t.yaml:1:13: telemetry."
	    "metricsOnTransportPort: vmcpd does not implement this reference "
	    "key; vmcpd serves Prometheus /metrics on daemon.diagnostics "
	    "only, never on daemon.listen");
	tel_bad("environmentVariables: [HOME]", "t.yaml:1:13: telemetry."
	    "environmentVariables: vmcpd does not implement this reference "
	    "key; give resource attributes in customAttributes (and "
	    "collector headers from the environment in headersFromEnv)");
	tel_bad("useLegacyAttributes: true", "t.yaml:1:13: telemetry."
	    "useLegacyAttributes: vmcpd does not implement this reference "
	    "key; vmcpd emits only the OpenTelemetry MCP semantic "
	    "conventions' attributes");
	/* false is refused too: the key itself is not vmcpd's */
	tel_bad("useLegacyAttributes: false", "t.yaml:1:13: telemetry."
	    "useLegacyAttributes: vmcpd does not implement this reference "
	    "key; vmcpd emits only the OpenTelemetry MCP semantic "
	    "conventions' attributes");

	/* strict: unknown keys, wrong types */
	tel_bad("endpont: \"h:1\"", "t.yaml:1:13: telemetry.endpont: unknown "
	    "key, did you mean \"endpoint\"?");
	tel_bad("exporter: otlp", "t.yaml:1:13: telemetry.exporter: unknown "
	    "key, expected one of: endpoint, insecure, serviceName, "
	    "serviceVersion, tracingEnabled, metricsEnabled, samplingRate, "
	    "headers, headersFromEnv, customAttributes, caCertPath, protocol, "
	    "propagateBaggage, maxQueueSize, maxExportBatchSize, "
	    "exportInterval, exportTimeout, metricsInterval, "
	    "enablePrometheusMetricsPath, prometheusPort, "
	    "metricsOnTransportPort, environmentVariables, "
	    "useLegacyAttributes");
	tel_bad("serviceName: \"\"", "t.yaml:1:26: telemetry.serviceName: "
	    "expected a non-empty string, found \"\"");
	load_bad("telemetry: true\n" BACKEND, "t.yaml:1:12: telemetry: "
	    "expected a mapping, found \"true\"");
}

/* vmcpd -n's warnings: an endpoint that exports nothing, gRPC's port */
static void
test_warnings(void **state)
{
	static const struct {
		const char	*body;
		const char	*want;
	} cases[] = {
		{ "", "" },
		{ "endpoint: \"h:4318\", tracingEnabled: true", "" },
		{ "endpoint: \"https://h:43170/x:4317\", metricsEnabled: true",
		    "" },
		{ "endpoint: \"h:4318\"", "t.yaml: warning: "
		    "telemetry.endpoint is set but tracingEnabled and "
		    "metricsEnabled are not: nothing is exported\n" },
		{ "endpoint: \"127.0.0.1:4317\", insecure: true, "
		    "tracingEnabled: true", "t.yaml: warning: telemetry."
		    "endpoint: port 4317 is OTLP/gRPC's by convention; vmcpd "
		    "exports OTLP/HTTP (port 4318 by convention)\n" },
		{ "endpoint: \"https://[::1]:4317/\", metricsEnabled: true",
		    "t.yaml: warning: telemetry.endpoint: port 4317 is "
		    "OTLP/gRPC's by convention; vmcpd exports OTLP/HTTP (port "
		    "4318 by convention)\n" },
	};
	struct config	*cf;
	char		*w;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cf = tel_ok(cases[i].body);
		w = warnings(cf);
		assert_string_equal(w, cases[i].want);
		free(w);
		config_free(cf);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_enabled),
		cmocka_unit_test(test_sampling),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_headers_env),
		cmocka_unit_test(test_attributes),
		cmocka_unit_test(test_ca_protocol),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_warnings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
