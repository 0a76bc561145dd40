/*
 * Unit tests for shared/config.c: good files with their values checked
 * field by field, one test per error kind with the exact message, and
 * the duration and size parsers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/cedar.h"
#include "shared/composite.h"
#include "shared/config.h"
#include "config_unit.h"

/* the multi-backend tests need a build without a limit, or a high one */
#ifdef CONFIG_BACKENDS_MAX
#define NEED_BACKENDS(n)	do {				\
	if (CONFIG_BACKENDS_MAX < (n))				\
		skip();						\
} while (0)
#else
#define NEED_BACKENDS(n)	do { } while (0)
#endif

static void
check_agg_defaults(const struct config_aggregation *ca)
{
	assert_int_equal(ca->ca_conflict, CONFIG_CONFLICT_PREFIX);
	assert_string_equal(ca->ca_prefix_format, "{workload}_");
	assert_int_equal(ca->ca_prefix_mode, CONFIG_PREFIX_ALWAYS);
	assert_null(ca->ca_priority);
	assert_int_equal(ca->ca_npriority, 0);
	assert_int_equal(ca->ca_exclude_all_tools, 0);
	assert_int_equal(ca->ca_default_deny, 0);
	assert_null(ca->ca_workloads);
	assert_int_equal(ca->ca_nworkloads, 0);
	assert_int_equal(ca->ca_cache_ttl_ms, 5 * 60 * 1000);
	assert_int_equal(ca->ca_page_size, 1000);
	assert_int_equal(ca->ca_max_backend_pages, 100);
	assert_int_equal(ca->ca_max_backend_list, 32 * 1024 * 1024);
	assert_int_equal(ca->ca_max_desc, 16384);
	assert_int_equal(ca->ca_max_title, 256);
	assert_int_equal(ca->ca_pin_mode, CONFIG_PIN_WARN);
}

/* every default, as documented in vmcpd.yaml(5) */
static void
check_defaults(const struct config *cf)
{
	assert_string_equal(cf->cf_name, "vmcpd");
	assert_null(cf->cf_group_ref);
	assert_string_equal(cf->cf_listen_host, "127.0.0.1");
	assert_int_equal(cf->cf_listen_port, 4483);
	assert_null(cf->cf_port_file);
	assert_null(cf->cf_diag_host);		/* off */
	assert_int_equal(cf->cf_workers, 0);
	assert_string_equal(cf->cf_state_dir, "./var");
	assert_null(cf->cf_user);
	assert_null(cf->cf_log_file);
	assert_int_equal(cf->cf_map_size, 1024ULL * 1024 * 1024);
	assert_int_equal(cf->cf_max_readers, 512);
	assert_int_equal(cf->cf_drain_timeout_ms, 30000);
	assert_int_equal(cf->cf_worker_header, 0);
	assert_int_equal(cf->cf_max_header_size, 16 * 1024);
	assert_int_equal(cf->cf_max_body_size, 4 * 1024 * 1024);
	assert_int_equal(cf->cf_http_timeout_ms, 30000);
	assert_int_equal(cf->cf_keepalive_ms, 15000);
	assert_int_equal(cf->cf_header_timeout_ms, 10000);
	assert_int_equal(cf->cf_request_timeout_ms, 60000);
	assert_int_equal(cf->cf_max_conns, 2048);
	assert_int_equal(cf->cf_max_conns_client, 256);
	assert_null(cf->cf_allowed_hosts);
	assert_int_equal(cf->cf_nallowed_hosts, 0);
	assert_null(cf->cf_allowed_origins);
	assert_int_equal(cf->cf_nallowed_origins, 0);
	assert_int_equal(cf->cf_session_ttl_ms, 30 * 60 * 1000);
	assert_int_equal(cf->cf_session_max_ms, 24 * 3600 * 1000);
	assert_int_equal(cf->cf_event_buffer, 1000);
	assert_int_equal(cf->cf_pending_timeout_ms, 5 * 60 * 1000);
	assert_int_equal(cf->cf_timeout_default_ms, 30000);
	assert_int_equal(cf->cf_partial_failure, CONFIG_PARTIAL_FAIL);
	assert_int_equal(cf->cf_health.ch_interval_ms, 30000);
	assert_int_equal(cf->cf_health.ch_timeout_ms, 10000);
	assert_int_equal(cf->cf_health.ch_unhealthy, 3);
	assert_int_equal(cf->cf_health.ch_report_ms, 30000);
	assert_int_equal(cf->cf_health.ch_cb_enabled, 0);
	assert_int_equal(cf->cf_health.ch_cb_threshold, 5);
	assert_int_equal(cf->cf_health.ch_cb_timeout_ms, 60000);
	assert_int_equal(cf->cf_answer_buf, 256 * 1024 * 1024);
	assert_int_equal(cf->cf_answer_buf_backend, 128 * 1024 * 1024);
	assert_int_equal(cf->cf_verbose, 0);
}

/* the one Streamable HTTP backend of a minimal file */
static void
check_one_http_backend(const struct config *cf)
{
	assert_int_equal(cf->cf_nbackends, 1);
	assert_int_equal(cf->cf_backends[0].cb_timeout_ms, 30000);
	assert_null(cf->cf_backends[0].cb_command);
	assert_null(cf->cf_backends[0].cb_argv);
	assert_null(cf->cf_backends[0].cb_env);
	assert_null(cf->cf_backends[0].cb_cwd);
}

/*
 * etc/vmcpd.yaml, compiled in: the defaults, two demo backends run over
 * stdio, names prefixed only on conflict, and one composite tool
 */
static void
check_etc(const struct config *cf)
{
	struct config_aggregation	 ca;
	const struct config_backend	*be;

	check_defaults(cf);
	assert_int_equal(cf->cf_nbackends, 2);
	be = &cf->cf_backends[0];
	assert_string_equal(be->cb_name, "everything");
	assert_int_equal(be->cb_transport, TRANSPORT_STDIO);
	assert_null(be->cb_url);
	assert_string_equal(be->cb_command, "node");
	assert_string_equal(be->cb_argv[0], "node");
	assert_string_equal(be->cb_argv[1],
	    "node_modules/@modelcontextprotocol/server-everything/dist/"
	    "index.js");
	assert_string_equal(be->cb_argv[2], "stdio");
	assert_null(be->cb_argv[3]);
	assert_null(be->cb_env);
	be = &cf->cf_backends[1];
	assert_string_equal(be->cb_name, "memory");
	assert_int_equal(be->cb_transport, TRANSPORT_STDIO);
	assert_string_equal(be->cb_env[0], "MEMORY_FILE_PATH=var/memory.jsonl");
	assert_null(be->cb_env[1]);
	assert_int_equal(be->cb_timeout_ms, 30000);
	assert_int_equal(cf->cf_agg.ca_prefix_mode, CONFIG_PREFIX_ON_CONFLICT);
	ca = cf->cf_agg;
	ca.ca_prefix_mode = CONFIG_PREFIX_ALWAYS;
	check_agg_defaults(&ca);
	/* one composite over both demo backends */
	assert_int_equal(cf->cf_composites->cl_n, 1);
	assert_non_null(composite_find(cf, "echo_sum", 8));
}

/*
 * Good files
 */

static void
test_embedded(void **state)
{
	struct config	*cf;
	char		 err[CONFIG_ERR_MAX];

	(void)state;
	assert_int_equal(config_embedded_len, strlen(config_embedded));
	cf = config_load_buffer(CONFIG_EMBEDDED_NAME, config_embedded,
	    config_embedded_len, err, sizeof(err));
	if (cf == NULL)
		fail_msg("embedded config: %s", err);
	assert_string_equal(cf->cf_file, "<embedded>");
	check_etc(cf);
	config_free(cf);
}

static void
test_minimal(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(BACKEND);
	assert_string_equal(cf->cf_file, "t.yaml");
	check_defaults(cf);
	check_one_http_backend(cf);
	check_agg_defaults(&cf->cf_agg);
	assert_string_equal(cf->cf_backends[0].cb_name, "a");
	assert_string_equal(cf->cf_backends[0].cb_url,
	    "http://127.0.0.1:3001/mcp");
	assert_int_equal(cf->cf_backends[0].cb_transport,
	    TRANSPORT_STREAMABLE_HTTP);
	config_free(cf);
}

static const char full_yaml[] =
    "# every key, none at its default\n"
    "name: gateway\n"
    "groupRef: eng-tools\n"
    "metadata:\n"
    "  team: platform\n"
    "  env: \"prod\"\n"
    "daemon:\n"
    "  listen: \"[::1]:0\"\n"
    "  workers: 4\n"
    "  stateDir: /var/lib/vmcpd\n"
    "  user: _vmcpd\n"
    "  logFile: /var/log/vmcpd.log\n"
    "  portFile: /run/vmcpd.port\n"
    "  mapSize: 2GiB\n"
    "  maxReaders: 1024\n"
    "  drainTimeout: 1m30s\n"
    "  workerHeader: true\n"
    "http:\n"
    "  maxHeaderSize: 8KiB\n"
    "  maxBodySize: 1048576\n"
    "  timeout: 1.5s\n"
    "  keepAlive: 250ms\n"
    "sessions:\n"
    "  ttl: 1h\n"
    "  maxLifetime: 1h\n"
    "backends:\n"
    "  - name: every_thing.v-2\n"
    "    url: https://mcp.example.org/mcp\n"
    "    transport: streamable-http\n"
    "operational:\n"
    "  logLevel: debug\n"
    "  timeouts:\n"
    "    default: 45s\n"
    "    perWorkload:\n"
    "      every_thing.v-2: 2m\n"
    "incomingAuth:\n"
    "  type: anonymous\n"
    "outgoingAuth:\n"
    "  source: inline\n"
    "  default:\n"
    "    type: unauthenticated\n";

static void
check_full(const struct config *cf)
{
	assert_string_equal(cf->cf_name, "gateway");
	assert_string_equal(cf->cf_group_ref, "eng-tools");
	assert_string_equal(cf->cf_listen_host, "::1");
	assert_int_equal(cf->cf_listen_port, 0);
	assert_int_equal(cf->cf_workers, 4);
	assert_string_equal(cf->cf_state_dir, "/var/lib/vmcpd");
	assert_string_equal(cf->cf_user, "_vmcpd");
	assert_string_equal(cf->cf_log_file, "/var/log/vmcpd.log");
	assert_string_equal(cf->cf_port_file, "/run/vmcpd.port");
	assert_int_equal(cf->cf_map_size, 2ULL * 1024 * 1024 * 1024);
	assert_int_equal(cf->cf_max_readers, 1024);
	assert_int_equal(cf->cf_drain_timeout_ms, 90000);
	assert_int_equal(cf->cf_worker_header, 1);
	assert_int_equal(cf->cf_max_header_size, 8192);
	assert_int_equal(cf->cf_max_body_size, 1048576);
	assert_int_equal(cf->cf_http_timeout_ms, 1500);
	assert_int_equal(cf->cf_keepalive_ms, 250);
	assert_int_equal(cf->cf_session_ttl_ms, 3600000);
	assert_int_equal(cf->cf_session_max_ms, 3600000);
	assert_int_equal(cf->cf_nbackends, 1);
	assert_string_equal(cf->cf_backends[0].cb_name, "every_thing.v-2");
	assert_string_equal(cf->cf_backends[0].cb_url,
	    "https://mcp.example.org/mcp");
	assert_int_equal(cf->cf_backends[0].cb_transport,
	    TRANSPORT_STREAMABLE_HTTP);
	assert_int_equal(cf->cf_backends[0].cb_timeout_ms, 120000);
	assert_int_equal(cf->cf_timeout_default_ms, 45000);
	assert_int_equal(cf->cf_verbose, 1);
}

static void
test_full(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(full_yaml);
	check_full(cf);
	config_free(cf);
}

static void
test_values(void **state)
{
	struct config	*cf;

	(void)state;
	/* flow style, localhost, plain-integer seconds, logLevel info */
	cf = load_ok("daemon: {listen: localhost:65535, workers: auto, "
	    "workerHeader: false}\n"
	    "http: {timeout: 10, maxBodySize: 256MiB, maxHeaderSize: 1K}\n"
	    "operational: {logLevel: info, timeouts: {default: 1s}}\n"
	    "incomingAuth: {type: anonymous}\n"
	    "outgoingAuth: {default: {}}\n"
	    "metadata: {}\n"
	    BACKEND);
	assert_string_equal(cf->cf_listen_host, "localhost");
	assert_int_equal(cf->cf_listen_port, 65535);
	assert_null(cf->cf_diag_host);
	assert_int_equal(cf->cf_workers, 0);
	assert_int_equal(cf->cf_worker_header, 0);
	assert_int_equal(cf->cf_http_timeout_ms, 10000);
	assert_int_equal(cf->cf_max_body_size, 256 * 1024 * 1024);
	assert_int_equal(cf->cf_max_header_size, 1024);
	assert_int_equal(cf->cf_verbose, 0);
	assert_int_equal(cf->cf_timeout_default_ms, 1000);
	/* the default applies to a backend without a perWorkload entry */
	assert_int_equal(cf->cf_backends[0].cb_timeout_ms, 1000);
	config_free(cf);

	/* bounds are inclusive; a quoted "auto" is still auto */
	cf = load_ok("incomingAuth: {type: anonymous, "
	    "allowAnonymousRemote: true}\n"
	    "daemon:\n"
	    "  listen: 0.0.0.0:1\n"
	    "  workers: 256\n"
	    "  mapSize: 1TiB\n"
	    "  maxReaders: 65536\n"
	    "  drainTimeout: 0s\n"
	    "http:\n"
	    "  maxHeaderSize: 1MiB\n"
	    "  maxBodySize: 1024\n"
	    BACKEND);
	assert_string_equal(cf->cf_listen_host, "0.0.0.0");
	assert_int_equal(cf->cf_listen_port, 1);
	assert_int_equal(cf->cf_workers, 256);
	assert_int_equal(cf->cf_map_size, 1ULL << 40);
	assert_int_equal(cf->cf_max_readers, 65536);
	assert_int_equal(cf->cf_drain_timeout_ms, 0);
	assert_int_equal(cf->cf_max_header_size, 1024 * 1024);
	assert_int_equal(cf->cf_max_body_size, 1024);
	config_free(cf);

	/* the diagnostics listener, as daemon.listen is written */
	cf = load_ok("daemon:\n  diagnostics: 127.0.0.1:9100\n" BACKEND);
	assert_string_equal(cf->cf_diag_host, "127.0.0.1");
	assert_int_equal(cf->cf_diag_port, 9100);
	config_free(cf);
	cf = load_ok("daemon:\n  diagnostics: \"[::1]:0\"\n"
	    "  listen: 127.0.0.1:0\n" BACKEND);
	assert_string_equal(cf->cf_diag_host, "::1");
	assert_int_equal(cf->cf_diag_port, 0);
	config_free(cf);

	cf = load_ok("daemon:\n  workers: \"auto\"\n" BACKEND);
	assert_int_equal(cf->cf_workers, 0);
	config_free(cf);
	cf = load_ok("daemon:\n  workers: 1\n" BACKEND);
	assert_int_equal(cf->cf_workers, 1);
	config_free(cf);
}

static void
test_two_configs(void **state)
{
	struct config	*a, *b;

	(void)state;
	/* a reload keeps the old config alive while loading the new one */
	a = load_ok(full_yaml);
	b = load_ok(BACKEND);
	check_full(a);
	check_defaults(b);
	config_free(a);
	check_defaults(b);
	check_agg_defaults(&b->cf_agg);
	config_free(b);
}

static void
test_lookup(void **state)
{
	struct config	*cf;
	const struct config_backend *cb;

	(void)state;
	cf = load_ok(BACKEND);
	cb = config_backend_find(cf, "a");
	assert_non_null(cb);
	assert_ptr_equal(cb, &cf->cf_backends[0]);
	assert_null(config_backend_find(cf, "b"));
	assert_null(config_backend_find(cf, "A"));
	assert_null(config_backend_find(cf, ""));
	assert_null(config_backend_find(cf, NULL));
	assert_null(config_backend_find(NULL, "a"));
	config_free(cf);
	config_free(NULL);

	assert_string_equal(config_transport_name(TRANSPORT_STREAMABLE_HTTP),
	    "streamable-http");
	assert_string_equal(config_transport_name(TRANSPORT_SSE), "sse");
	assert_string_equal(config_transport_name(TRANSPORT_STDIO), "stdio");
	assert_string_equal(config_transport_name((enum config_transport)42),
	    "unknown");
}

/* http: the slow-client deadlines, connection caps and rebinding lists */
static void
test_http_front(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok("http:\n"
	    "  headerTimeout: 2s\n"
	    "  requestTimeout: 1m\n"
	    "  maxConnections: 100\n"
	    "  maxConnectionsPerClient: 7\n"
	    "  allowedHosts: [mcp.example.com, \"[fe80::1]\", \"::1\",\n"
	    "    10.0.0.1]\n"
	    "  allowedOrigins: [\"https://app.example.com:8443\", \"*\"]\n"
	    BACKEND);
	assert_int_equal(cf->cf_header_timeout_ms, 2000);
	assert_int_equal(cf->cf_request_timeout_ms, 60000);
	assert_int_equal(cf->cf_max_conns, 100);
	assert_int_equal(cf->cf_max_conns_client, 7);
	assert_int_equal(cf->cf_nallowed_hosts, 4);
	assert_string_equal(cf->cf_allowed_hosts[0], "mcp.example.com");
	assert_string_equal(cf->cf_allowed_hosts[1], "[fe80::1]");
	assert_null(cf->cf_allowed_hosts[4]);
	assert_int_equal(cf->cf_nallowed_origins, 2);
	assert_string_equal(cf->cf_allowed_origins[1], "*");
	config_free(cf);

	load_bad("http:\n  maxConnectionsPerClient: 0\n" BACKEND,
	    "t.yaml:2:28: http.maxConnectionsPerClient: expected an integer "
	    "from 1 to 1000000, found \"0\"");
	load_bad("http:\n  allowedHosts: mcp.example.com\n" BACKEND,
	    "t.yaml:2:17: http.allowedHosts: expected a list of host names "
	    "or addresses without a port, or \"*\", found \"mcp.example.com\"");
	load_bad("http:\n  allowedHosts: [a.example, \"b.example:8080\"]\n"
	    BACKEND,
	    "t.yaml:2:29: http.allowedHosts[1]: expected a list of host names "
	    "or addresses without a port, or \"*\", found \"b.example:8080\"");
	load_bad("http:\n  allowedOrigins: [\"https://a.example/\"]\n"
	    BACKEND,
	    "t.yaml:2:20: http.allowedOrigins[0]: expected a list of origins "
	    "such as https://app.example.com:8443 (scheme://host[:port]) or "
	    "\"*\", found \"https://a.example/\"");
	load_bad("http:\n  allowedOrigins: [a.example]\n" BACKEND,
	    "t.yaml:2:20: http.allowedOrigins[0]: expected a list of origins "
	    "such as https://app.example.com:8443 (scheme://host[:port]) or "
	    "\"*\", found \"a.example\"");

	assert_true(config_host_loopback("localhost", 9));
	assert_true(config_host_loopback("LocalHost", 9));
	assert_true(config_host_loopback("127.0.0.1", 9));
	assert_true(config_host_loopback("127.9.8.7", 9));
	assert_true(config_host_loopback("[::1]", 5));
	assert_true(config_host_loopback("::1", 3));
	assert_false(config_host_loopback("localhost.", 10));
	assert_false(config_host_loopback("127.1", 5));
	assert_false(config_host_loopback("128.0.0.1", 9));
	assert_false(config_host_loopback("127.0.0.1.evil.example", 22));
	assert_false(config_host_loopback("[::ffff:127.0.0.1]", 18));
	assert_false(config_host_loopback("0.0.0.0", 7));
	assert_false(config_host_loopback("", 0));
}

static void
test_file(void **state)
{
	struct config	*cf;
	char		 path[] = "/tmp/test_config.XXXXXX", dir[64];
	char		 err[CONFIG_ERR_MAX], want[CONFIG_ERR_MAX + 64];
	char		*big;
	FILE		*fp;
	int		 fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_non_null(fp = fdopen(fd, "w"));
	assert_int_equal(fputs(full_yaml, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	cf = config_load_file(path, err, sizeof(err));
	if (cf == NULL)
		fail_msg("%s", err);
	assert_string_equal(cf->cf_file, path);
	check_full(cf);
	config_free(cf);

	/* an error names the path */
	assert_non_null(fp = fopen(path, "w"));
	assert_int_equal(fputs("daemon:\n  workers: 0\n", fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	assert_null(config_load_file(path, err, sizeof(err)));
	(void)snprintf(want, sizeof(want), "%s:2:12: daemon.workers: "
	    "expected \"auto\" or an integer from 1 to 256, found \"0\"",
	    path);
	assert_string_equal(err, want);

	/* larger than 1 MiB: a comment so that only the size is wrong */
	assert_non_null(big = malloc(1024 * 1024 + 1));
	memset(big, ' ', 1024 * 1024 + 1);
	big[0] = '#';
	assert_non_null(fp = fopen(path, "w"));
	assert_int_equal(fwrite(big, 1, 1024 * 1024 + 1, fp), 1024 * 1024 + 1);
	assert_int_equal(fclose(fp), 0);
	assert_null(config_load_file(path, err, sizeof(err)));
	(void)snprintf(want, sizeof(want), "%s: file is larger than 1 MiB",
	    path);
	assert_string_equal(err, want);
	err[0] = '\0';
	assert_null(config_load_buffer("t.yaml", big, 1024 * 1024 + 1, err,
	    sizeof(err)));
	assert_string_equal(err, "t.yaml: file is larger than 1 MiB");
	/* exactly 1 MiB is allowed: then only "backends" is missing */
	assert_null(config_load_buffer("t.yaml", big, 1024 * 1024, err,
	    sizeof(err)));
	assert_string_equal(err, "t.yaml:1:1: missing required key "
	    "\"backends\"");
	free(big);
	assert_int_equal(unlink(path), 0);

	assert_null(config_load_file(path, err, sizeof(err)));
	(void)snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	assert_string_equal(err, want);

	(void)snprintf(dir, sizeof(dir), "/tmp");
	assert_null(config_load_file(dir, err, sizeof(err)));
	assert_string_equal(err, "/tmp: Is a directory");

	/* a small error buffer truncates, a NULL one is allowed */
	assert_null(config_load_buffer("t.yaml", "x: 1\n", 5, err, 8));
	assert_string_equal(err, "t.yaml:");
	assert_null(config_load_buffer("t.yaml", "x: 1\n", 5, NULL, 0));
}

/*
 * Bad files, one test per kind of error
 */

static void
test_err_syntax(void **state)
{
	(void)state;
	load_bad("daemon:\n\tworkers: 4\n",
	    "t.yaml:2:1: syntax error: found character that cannot start "
	    "any token (while scanning for the next token)");
	load_bad("daemon:\n  workers: 4\n bad\n" BACKEND,
	    "t.yaml:3:2: syntax error: did not find expected key "
	    "(while parsing a block mapping at line 1, column 1)");
	load_bad("name: \"abc\n",
	    "t.yaml:2:1: syntax error: found unexpected end of stream "
	    "(while scanning a quoted scalar at line 1, column 7)");
	/* an unquoted IPv6 listen address starts a flow sequence */
	load_bad("daemon:\n  listen: [::1]:4483\n",
	    "t.yaml:2:12: syntax error: did not find expected node content "
	    "(while parsing a flow node)");
	/* the reader refuses control characters */
	load_bad("name: a\x01\n",
	    "t.yaml:1:8: syntax error: control characters are not allowed");
}

static void
test_err_alias(void **state)
{
	(void)state;
	load_bad("name: &n gw\ngroupRef: *n\n" BACKEND,
	    "t.yaml:2:11: YAML aliases are not allowed");
	/* the billion-laughs shape stops at the first alias */
	load_bad("a: &a [x, x]\nb: &b [*a, *a]\n",
	    "t.yaml:2:8: YAML aliases are not allowed");
}

static void
test_err_tag(void **state)
{
	(void)state;
	load_bad("daemon:\n  workers: !!int 4\n" BACKEND,
	    "t.yaml:2:12: YAML tags are not allowed");
	load_bad("daemon: !!map {}\n" BACKEND,
	    "t.yaml:1:9: YAML tags are not allowed");
}

static void
test_err_documents(void **state)
{
	(void)state;
	load_bad(BACKEND "---\n" BACKEND,
	    "t.yaml:5:1: only one YAML document is allowed");
}

static void
test_err_depth(void **state)
{
	char	 buf[256];
	int	 i, o = 0;

	(void)state;
	/* metadata plus 31 more levels is 32: a type error, not depth */
	o += snprintf(buf + o, sizeof(buf) - o, "metadata: ");
	for (i = 0; i < 31; i++)
		o += snprintf(buf + o, sizeof(buf) - o, "[");
	for (i = 0; i < 31; i++)
		o += snprintf(buf + o, sizeof(buf) - o, "]");
	load_bad(buf, "t.yaml:1:11: metadata: expected a mapping, "
	    "found a sequence");
	o = 0;
	o += snprintf(buf + o, sizeof(buf) - o, "metadata: ");
	for (i = 0; i < 32; i++)
		o += snprintf(buf + o, sizeof(buf) - o, "[");
	for (i = 0; i < 32; i++)
		o += snprintf(buf + o, sizeof(buf) - o, "]");
	load_bad(buf, "t.yaml:1:42: nesting is deeper than 32 levels");
}

static void
test_err_unknown_key(void **state)
{
	(void)state;
	load_bad("daemon:\n  wrokers: 4\n" BACKEND,
	    "t.yaml:2:3: daemon.wrokers: unknown key, did you mean "
	    "\"workers\"?");
	load_bad("daemon:\n  state_dir: /x\n" BACKEND,
	    "t.yaml:2:3: daemon.state_dir: unknown key, did you mean "
	    "\"stateDir\"?");
	load_bad("daemon:\n  colour: red\n" BACKEND,
	    "t.yaml:2:3: daemon.colour: unknown key, expected one of: "
	    "listen, workers, stateDir, user, logFile, portFile, mapSize, "
	    "maxReaders, drainTimeout, workerHeader, diagnostics");
	load_bad(BACKEND "listen: 1.2.3.4:5\n",
	    "t.yaml:5:1: listen: unknown key, expected one of: name, "
	    "groupRef, metadata, daemon, http, sessions, backends, "
	    "operational, incomingAuth, outgoingAuth, aggregation, "
	    "compositeTools, rateLimiting, audit, telemetry, "
	    "sessionStorage");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: streamable-http\n    headers: {}\n",
	    "t.yaml:5:5: backends[0].headers: unknown key, expected one of: "
	    "name, url, transport, command, args, env, cwd, era, caBundlePath");
	load_bad(BACKEND "incomingAuth:\n  type: anonymous\n  odic: {}\n",
	    "t.yaml:7:3: incomingAuth.odic: unknown key, expected one of: "
	    "type, oidc, allowAnonymousRemote, authz");
	load_bad(BACKEND "sessions:\n  TTL: 1h\n",
	    "t.yaml:6:3: sessions.TTL: unknown key, did you mean \"ttl\"?");
	/* a key that is not a scalar */
	load_bad("? [a, b]\n: 1\n" BACKEND,
	    "t.yaml:1:3: key: expected a key name, found a sequence");
}

static void
test_failure_handling(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(BACKEND "operational:\n  failureHandling:\n"
	    "    healthCheckInterval: 5s\n    healthCheckTimeout: 2s\n"
	    "    unhealthyThreshold: 2\n    statusReportingInterval: 1m\n"
	    "    circuitBreaker: {enabled: true, failureThreshold: 3, "
	    "timeout: 2s}\n");
	assert_int_equal(cf->cf_health.ch_interval_ms, 5000);
	assert_int_equal(cf->cf_health.ch_timeout_ms, 2000);
	assert_int_equal(cf->cf_health.ch_unhealthy, 2);
	assert_int_equal(cf->cf_health.ch_report_ms, 60000);
	assert_int_equal(cf->cf_health.ch_cb_enabled, 1);
	assert_int_equal(cf->cf_health.ch_cb_threshold, 3);
	assert_int_equal(cf->cf_health.ch_cb_timeout_ms, 2000);
	config_free(cf);
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    healthCheckTimeout: 30s\n",
	    "t.yaml:7:25: operational.failureHandling.healthCheckTimeout "
	    "(30000 ms) must be shorter than healthCheckInterval (30000 ms)");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    unhealthyThreshold: 0\n",
	    "t.yaml:7:25: operational.failureHandling.unhealthyThreshold: expected an integer from 1 to 1000000, found \"0\"");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    circuitBreaker: {enabled: yes}\n",
	    "t.yaml:7:31: operational.failureHandling.circuitBreaker.enabled: expected true or false, found \"yes\"");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    circuitBreaker: {timeout: 10ms}\n",
	    "t.yaml:7:31: operational.failureHandling.circuitBreaker.timeout: expected a duration of at least 1s (such as 30s, 5m or 1h30m), found \"10ms\"");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    circuitBreaker: {failureThreshold: 0}\n",
	    "t.yaml:7:40: operational.failureHandling.circuitBreaker.failureThreshold: expected an integer from 1 to 1000000, found \"0\"");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    circuitBreaker: {tripAfter: 3}\n",
	    "t.yaml:7:22: operational.failureHandling.circuitBreaker.tripAfter: unknown key, expected one of: enabled, failureThreshold, timeout");
}

/* operational.answerBuffer and aggregation.maxBackendListSize */
static void
test_answer_buffer(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(BACKEND "operational:\n  answerBuffer:\n"
	    "    perWorker: 64MiB\n    perBackend: 16MiB\n"
	    "aggregation:\n  maxBackendListSize: 1MiB\n");
	assert_int_equal(cf->cf_answer_buf, 64 * 1024 * 1024);
	assert_int_equal(cf->cf_answer_buf_backend, 16 * 1024 * 1024);
	assert_int_equal(cf->cf_agg.ca_max_backend_list, 1024 * 1024);
	config_free(cf);
	/* perBackend left out: half of perWorker */
	cf = load_ok(BACKEND "operational:\n  answerBuffer: {perWorker: 8MiB}\n");
	assert_int_equal(cf->cf_answer_buf, 8 * 1024 * 1024);
	assert_int_equal(cf->cf_answer_buf_backend, 4 * 1024 * 1024);
	config_free(cf);
	load_bad(BACKEND "operational:\n  answerBuffer:\n"
	    "    perWorker: 8MiB\n    perBackend: 16MiB\n",
	    "t.yaml:8:5: operational.answerBuffer.perBackend: more than "
	    "perWorker, which binds first");
	load_bad(BACKEND "operational:\n  answerBuffer: {perWorker: 1KiB}\n",
	    "t.yaml:6:29: operational.answerBuffer.perWorker: expected a size from 1MiB to 64GiB (bytes, or a number with a K, M, G or T suffix), found \"1KiB\"");
	load_bad(BACKEND "operational:\n  answerBuffer: {total: 1MiB}\n",
	    "t.yaml:6:18: operational.answerBuffer.total: unknown key, expected one of: perWorker, perBackend");
	load_bad(BACKEND "aggregation:\n  maxBackendListSize: 2GiB\n",
	    "t.yaml:6:23: aggregation.maxBackendListSize: expected a size from 64KiB to 1GiB (bytes, or a number with a K, M, G or T suffix), found \"2GiB\"");
}

/* compositeTools: loaded into cf_composites, errors with file:line:col */
static void
test_composite_tools(void **state)
{
	struct config	*cf;
	const char	*yaml = BACKEND
	    "compositeTools:\n"
	    "  - name: twice\n"
	    "    description: echo twice\n"
	    "    steps:\n"
	    "      - {id: one, tool: a.echo}\n"
	    "      - {id: two, tool: a.echo, dependsOn: [one]}\n";

	(void)state;
	cf = load_ok(yaml);
	assert_non_null(cf->cf_composites);
	assert_int_equal(cf->cf_composites->cl_n, 1);
	assert_non_null(composite_find(cf, "twice", 5));
	assert_null(composite_find(cf, "twic", 4));
	assert_null(composite_find(cf, "twice2", 6));
	config_free(cf);
	cf = load_ok(BACKEND "compositeTools: []\n");
	assert_int_equal(cf->cf_composites->cl_n, 0);
	assert_null(composite_find(cf, "x", 1));
	config_free(cf);
	cf = load_ok(BACKEND);
	assert_null(cf->cf_composites);
	assert_null(composite_find(cf, "x", 1));
	config_free(cf);
	load_bad(BACKEND "compositeTools:\n  - name: c\n"
	    "    description: d\n    steps:\n"
	    "      - {id: a, tool: a.echo, dependsOn: [b]}\n",
	    "t.yaml:9:43: compositeTools[0].steps[0].dependsOn[0]: no step "
	    "\"b\" in this composite");
	load_bad(BACKEND "compositeTools: {}\n",
	    "t.yaml:5:17: compositeTools: expected a sequence of composite "
	    "tools, found a mapping");
}

static void
test_err_not_supported(void **state)
{
	(void)state;
	load_bad("compositeToolRefs: []\n" BACKEND,
	    "t.yaml:1:1: compositeToolRefs is not supported yet by this "
	    "version of vmcpd");
	load_bad("passthroughHeaders: [X-Trace]\n" BACKEND,
	    "t.yaml:1:1: passthroughHeaders is not supported yet by this "
	    "version of vmcpd");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: sse\n    type: entry\n",
	    "t.yaml:5:5: backends[0].type is not supported yet by this "
	    "version of vmcpd");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: sse\n    metadata: {}\n",
	    "t.yaml:5:5: backends[0].metadata is not supported yet by this "
	    "version of vmcpd");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: streamable-http\n    caBundlePath: /nonexistent.pem\n",
	    "t.yaml:5:19: backends[0].caBundlePath: cannot read "
	    "/nonexistent.pem");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: sse\n    caBundlePath: /etc/hostname\n",
	    "t.yaml:5:5: backends[0].caBundlePath: only with transport "
	    "streamable-http");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: streamable-http\n    caBundlePath: ca.pem\n",
	    "t.yaml:5:19: backends[0].caBundlePath: expected an absolute "
	    "path, found \"ca.pem\"");
	/* every other reference key */
	load_bad("compositeToolRefs: []\n" BACKEND, "t.yaml:1:1: "
	    "compositeToolRefs is not supported yet by this version of vmcpd");
	load_bad("optimizer: {}\n" BACKEND, "t.yaml:1:1: "
	    "optimizer is not supported yet by this version of vmcpd");
	load_bad("codeMode: {}\n" BACKEND, "t.yaml:1:1: "
	    "codeMode is not supported yet by this version of vmcpd");
}

static void
test_err_type(void **state)
{
	(void)state;
	load_bad("daemon: 5\n" BACKEND,
	    "t.yaml:1:9: daemon: expected a mapping, found \"5\"");
	load_bad("http:\n" BACKEND,
	    "t.yaml:1:6: http: expected a mapping, found null");
	load_bad("- a\n- b\n",
	    "t.yaml:1:1: expected a mapping, found a sequence");
	load_bad("name: {a: b}\n" BACKEND,
	    "t.yaml:1:7: name: expected a non-empty string, found a mapping");
	load_bad("name: \"\"\n" BACKEND,
	    "t.yaml:1:7: name: expected a non-empty string, found \"\"");
	load_bad("daemon:\n  user: ~\n" BACKEND,
	    "t.yaml:2:9: daemon.user: expected a non-empty string, "
	    "found null");
	load_bad("name: \"a\\0b\"\n" BACKEND,
	    "t.yaml:1:7: NUL characters are not allowed");
	load_bad(BACKEND "operational:\n  logLevel: \"debug\\0\"\n",
	    "t.yaml:6:13: NUL characters are not allowed");
	load_bad("metadata:\n  team: [a]\n" BACKEND,
	    "t.yaml:2:9: metadata.team: expected a non-empty string, "
	    "found a sequence");
	/* an integer must be a plain scalar */
	load_bad("daemon:\n  workers: \"5\"\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found the quoted string \"5\"");
	load_bad("daemon:\n  maxReaders: '64'\n" BACKEND,
	    "t.yaml:2:15: daemon.maxReaders: expected an integer from 16 "
	    "to 65536, found the quoted string \"64\"");
	load_bad("daemon:\n  maxReaders: 0x40\n" BACKEND,
	    "t.yaml:2:15: daemon.maxReaders: expected an integer from 16 "
	    "to 65536, found \"0x40\"");
	/* a bool is plain true or false */
	load_bad("daemon:\n  workerHeader: yes\n" BACKEND,
	    "t.yaml:2:17: daemon.workerHeader: expected true or false, "
	    "found \"yes\"");
	load_bad("daemon:\n  workerHeader: \"true\"\n" BACKEND,
	    "t.yaml:2:17: daemon.workerHeader: expected true or false, "
	    "found the quoted string \"true\"");
	load_bad("backends: {name: a}\n",
	    "t.yaml:1:11: backends: expected a sequence of backends, "
	    "found a mapping");
}

static void
test_err_escape(void **state)
{
	char	 yaml[256], want[512];
	int	 i, o, w;

	(void)state;
	/* long and odd values are escaped and cut */
	load_bad("daemon:\n  workers: \"\\t0123456789012345678901234567890"
	    "123456789012345678901234567890\\\"\"\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found the quoted string \"\\t012345678901234567"
	    "89012345678901234567890123456...\"");
	/* a UTF-8 character counts as one of the 48 shown */
	o = snprintf(yaml, sizeof(yaml), "daemon:\n  workers: ");
	w = snprintf(want, sizeof(want), "t.yaml:2:12: daemon.workers: "
	    "expected \"auto\" or an integer from 1 to 256, found \"");
	for (i = 0; i < 50; i++)
		o += snprintf(yaml + o, sizeof(yaml) - o, "\xc3\xa9");
	for (i = 0; i < 48; i++)
		w += snprintf(want + w, sizeof(want) - w, "\xc3\xa9");
	(void)snprintf(yaml + o, sizeof(yaml) - o, "\n" BACKEND);
	(void)snprintf(want + w, sizeof(want) - w, "...\"");
	load_bad(yaml, want);
	/* an odd key in a path */
	load_bad("daemon:\n  \"a\\tb\": 1\n" BACKEND,
	    "t.yaml:2:3: daemon.a\\tb: unknown key, expected one of: "
	    "listen, workers, stateDir, user, logFile, portFile, mapSize, "
	    "maxReaders, drainTimeout, workerHeader, diagnostics");
}

static void
test_err_range(void **state)
{
	(void)state;
	load_bad("daemon:\n  workers: 0\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found \"0\"");
	load_bad("daemon:\n  workers: 257\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found \"257\"");
	load_bad("daemon:\n  workers: 18446744073709551617\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found \"18446744073709551617\"");
	load_bad("daemon:\n  workers: -1\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found \"-1\"");
	load_bad("daemon:\n  maxReaders: 15\n" BACKEND,
	    "t.yaml:2:15: daemon.maxReaders: expected an integer from 16 "
	    "to 65536, found \"15\"");
	load_bad("daemon:\n  maxReaders: 65537\n" BACKEND,
	    "t.yaml:2:15: daemon.maxReaders: expected an integer from 16 "
	    "to 65536, found \"65537\"");
}

static void
test_err_size(void **state)
{
	(void)state;
	load_bad("daemon:\n  mapSize: 1023KiB\n" BACKEND,
	    "t.yaml:2:12: daemon.mapSize: expected a size from 1MiB to 1TiB "
	    "(bytes, or a number with a K, M, G or T suffix), found "
	    "\"1023KiB\"");
	load_bad("daemon:\n  mapSize: 1025G\n" BACKEND,
	    "t.yaml:2:12: daemon.mapSize: expected a size from 1MiB to 1TiB "
	    "(bytes, or a number with a K, M, G or T suffix), found "
	    "\"1025G\"");
	load_bad("http:\n  maxHeaderSize: 1023\n" BACKEND,
	    "t.yaml:2:18: http.maxHeaderSize: expected a size from 1KiB to "
	    "1MiB (bytes, or a number with a K, M, G or T suffix), found "
	    "\"1023\"");
	load_bad("http:\n  maxBodySize: 257MiB\n" BACKEND,
	    "t.yaml:2:16: http.maxBodySize: expected a size from 1KiB to "
	    "256MiB (bytes, or a number with a K, M, G or T suffix), found "
	    "\"257MiB\"");
	load_bad("http:\n  maxBodySize: 4 MiB\n" BACKEND,
	    "t.yaml:2:16: http.maxBodySize: expected a size from 1KiB to "
	    "256MiB (bytes, or a number with a K, M, G or T suffix), found "
	    "\"4 MiB\"");
	load_bad("http:\n  maxBodySize: 99999999999999999999\n" BACKEND,
	    "t.yaml:2:16: http.maxBodySize: expected a size from 1KiB to "
	    "256MiB (bytes, or a number with a K, M, G or T suffix), found "
	    "\"99999999999999999999\"");
}

/* what a valid file is warned of: listeners off loopback */
static void
test_warnings(void **state)
{
	static const struct {
		const char	*yaml;
		const char	*want;
	} cases[] = {
		{ "daemon:\n  diagnostics: 127.0.0.1:9100\n", "" },
		{ "daemon:\n  diagnostics: \"[::1]:9100\"\n", "" },
		{ "daemon:\n  diagnostics: localhost:9100\n", "" },
		{ "daemon:\n  diagnostics: 0.0.0.0:9100\n",
		    "t.yaml: warning: daemon.diagnostics on 0.0.0.0 is not a "
		    "loopback address: /status and /metrics (backends, health, "
		    "sessions, workers) answer whoever reaches it, without "
		    "authentication; bind it to 127.0.0.1 or keep it behind a "
		    "firewall (requests must be addressed to a loopback name or "
		    "one in http.allowedHosts)\n" },
		{ "daemon:\n  listen: 0.0.0.0:4483\nincomingAuth:\n  type: "
		    "anonymous\n  allowAnonymousRemote: true\n",
		    "t.yaml: warning: listening on 0.0.0.0 with no "
		    "http.allowedHosts: only requests addressed to localhost, "
		    "127.0.0.0/8 or [::1] are served\n" },
		{ "daemon:\n  listen: 0.0.0.0:4483\nincomingAuth:\n  type: "
		    "anonymous\n  allowAnonymousRemote: true\nhttp:\n  "
		    "allowedHosts: [mcp.example.com]\n", "" },
		{ "sessionStorage:\n  provider: redis\n  address: "
		    "127.0.0.1:6379\n",
		    "t.yaml: note: sessionStorage redis: sessions, pending "
		    "relays, handles, tokens and rate limits last only as long "
		    "as Redis keeps them; run Redis with appendonly yes (vmcpd "
		    "warns once connected if it does not)\n" },
	};
	struct config	*cf;
	char		*w, yaml[512];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		(void)snprintf(yaml, sizeof(yaml), "%s" BACKEND, cases[i].yaml);
		cf = load_ok(yaml);
		w = warnings(cf);
		assert_string_equal(w, cases[i].want);
		free(w);
		config_free(cf);
	}
}

static void
test_err_diagnostics(void **state)
{
	(void)state;
	load_bad("daemon:\n  diagnostics: 9100\n" BACKEND,
	    "t.yaml:2:16: daemon.diagnostics: expected \"host:port\" or "
	    "\"[ipv6-address]:port\", found \"9100\"");
	load_bad("daemon:\n  diagnostics: example.org:9100\n" BACKEND,
	    "t.yaml:2:16: daemon.diagnostics: expected a numeric IPv4 "
	    "address, a bracketed IPv6 address or localhost as the host, "
	    "found \"example.org\"");
	load_bad("daemon:\n  diagnostics: 127.0.0.1:65536\n" BACKEND,
	    "t.yaml:2:16: daemon.diagnostics: expected a port from 0 to "
	    "65535, found \"65536\"");
	/* not the main port (the default one, here) */
	load_bad("daemon:\n  diagnostics: 127.0.0.1:4483\n" BACKEND,
	    "t.yaml:2:16: daemon.diagnostics: expected an address other "
	    "than daemon.listen's");
	load_bad("daemon:\n  diagnostics: 127.0.0.1:80\n"
	    "  listen: 127.0.0.1:80\n" BACKEND,
	    "t.yaml:2:16: daemon.diagnostics: expected an address other "
	    "than daemon.listen's");
}

static void
test_err_duration(void **state)
{
	(void)state;
	load_bad("http:\n  timeout: 0s\n" BACKEND,
	    "t.yaml:2:12: http.timeout: expected a duration greater than 0 "
	    "(such as 30s, 5m or 1h30m), found \"0s\"");
	load_bad("http:\n  keepAlive: 15 s\n" BACKEND,
	    "t.yaml:2:14: http.keepAlive: expected a duration greater than 0 "
	    "(such as 30s, 5m or 1h30m), found \"15 s\"");
	load_bad("daemon:\n  drainTimeout: -1s\n" BACKEND,
	    "t.yaml:2:17: daemon.drainTimeout: expected a duration "
	    "(such as 30s, 5m or 1h30m), found \"-1s\"");
	load_bad("sessions:\n  ttl: 1d\n" BACKEND,
	    "t.yaml:2:8: sessions.ttl: expected a duration greater than 0 "
	    "(such as 30s, 5m or 1h30m), found \"1d\"");
	load_bad("sessions:\n  maxLifetime: []\n" BACKEND,
	    "t.yaml:2:16: sessions.maxLifetime: expected a duration greater "
	    "than 0 (such as 30s, 5m or 1h30m), found a sequence");
	load_bad(BACKEND "operational:\n  timeouts:\n    default: 0\n",
	    "t.yaml:7:14: operational.timeouts.default: expected a duration "
	    "greater than 0 (such as 30s, 5m or 1h30m), found \"0\"");
	load_bad(BACKEND "operational:\n  timeouts:\n    perWorkload:\n"
	    "      a: soon\n",
	    "t.yaml:8:10: operational.timeouts.perWorkload.a: expected a "
	    "duration greater than 0 (such as 30s, 5m or 1h30m), found "
	    "\"soon\"");
	/* too large to represent: said so, not "greater than 0" */
	load_bad("http:\n  timeout: 99999999999999999999s\n" BACKEND,
	    "t.yaml:2:12: http.timeout: expected a duration of at most "
	    "5124095h34m33s (2^64 - 1 ns), found \"99999999999999999999s\"");
	load_bad("daemon:\n  drainTimeout: 5124096h\n" BACKEND,
	    "t.yaml:2:17: daemon.drainTimeout: expected a duration of at "
	    "most 5124095h34m33s (2^64 - 1 ns), found \"5124096h\"");
	load_bad(BACKEND "operational:\n  timeouts:\n    perWorkload:\n"
	    "      a: 5124095h35m\n",
	    "t.yaml:8:10: operational.timeouts.perWorkload.a: expected a "
	    "duration of at most 5124095h34m33s (2^64 - 1 ns), found "
	    "\"5124095h35m\"");
	/* malformed past a large number: still malformed */
	load_bad("http:\n  timeout: 99999999999999999999x\n" BACKEND,
	    "t.yaml:2:12: http.timeout: expected a duration greater than 0 "
	    "(such as 30s, 5m or 1h30m), found \"99999999999999999999x\"");
}

static void
test_err_duplicate(void **state)
{
	(void)state;
	load_bad("daemon:\n  workers: 2\n  user: x\n  workers: 3\n" BACKEND,
	    "t.yaml:4:3: daemon.workers: duplicate key (first at line 2, "
	    "column 3)");
	load_bad(BACKEND "name: a\nname: b\n",
	    "t.yaml:6:1: name: duplicate key (first at line 5, column 1)");
	/* the earliest repetition is reported, whatever the sort order */
	load_bad("metadata: {z: 1, a: 1, z: 2, a: 2}\n" BACKEND,
	    "t.yaml:1:24: metadata.z: duplicate key (first at line 1, "
	    "column 12)");
	load_bad("metadata: {b: 1, \"b\": 2}\n" BACKEND,
	    "t.yaml:1:18: metadata.b: duplicate key (first at line 1, "
	    "column 12)");
}

static void
test_err_missing(void **state)
{
	(void)state;
	load_bad("", "t.yaml:1:1: missing required key \"backends\"");
	load_bad("# nothing\n", "t.yaml:1:1: missing required key "
	    "\"backends\"");
	load_bad("\nname: gw\n", "t.yaml:2:1: missing required key "
	    "\"backends\"");
	load_bad("backends:\n  - url: http://x/\n"
	    "    transport: streamable-http\n",
	    "t.yaml:2:5: backends[0]: missing required key \"name\"");
	load_bad("backends:\n  - name: a\n    transport: streamable-http\n",
	    "t.yaml:2:5: backends[0]: missing required key \"url\" for "
	    "transport streamable-http");
	load_bad("backends:\n  - {name: a, transport: sse}\n",
	    "t.yaml:2:5: backends[0]: missing required key \"url\" for "
	    "transport sse");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    args: [x]\n",
	    "t.yaml:2:5: backends[0]: missing required key \"command\" for "
	    "transport stdio");
	load_bad("backends:\n  - {name: a, url: http://x/}\n",
	    "t.yaml:2:5: backends[0]: missing required key \"transport\"");
	load_bad(BACKEND "incomingAuth: {}\n",
	    "t.yaml:5:15: incomingAuth: missing required key \"type\"");
}

static void
test_err_backends(void **state)
{
	struct config	*cf;

	(void)state;
	/* no backends: an empty view, not an error */
	cf = load_ok("backends: []\n");
	assert_int_equal(cf->cf_nbackends, 0);
	assert_null(cf->cf_backends);
	config_free(cf);
	load_bad("name: x\n",
	    "t.yaml:1:1: missing required key \"backends\"");
	load_bad("backends:\n",
	    "t.yaml:1:10: backends: expected a sequence of backends, "
	    "found null");
	load_bad("backends:\n  - a\n",
	    "t.yaml:2:5: backends[0]: expected a mapping, found \"a\"");
	load_bad("backends:\n  - name: a b\n    url: http://x/\n"
	    "    transport: streamable-http\n",
	    "t.yaml:2:11: backends[0].name: expected 1 to 64 characters "
	    "from A-Z a-z 0-9 _ . -, found \"a b\"");
	load_bad("backends:\n  - name: \"\"\n",
	    "t.yaml:2:11: backends[0].name: expected 1 to 64 characters "
	    "from A-Z a-z 0-9 _ . -, found \"\"");
	/* 65 characters */
	load_bad("backends:\n  - name: x123456789012345678901234567890123456"
	    "7890123456789012345678901234\n",
	    "t.yaml:2:11: backends[0].name: expected 1 to 64 characters "
	    "from A-Z a-z 0-9 _ . -, found \"x1234567890123456789012345678"
	    "9012345678901234567...\"");
	cf = load_ok("backends:\n  - name: a\n    url: \"https://me:pw@x:8443"
	    "/mcp?api_key=k&tenant=t\"\n    transport: streamable-http\n");
	assert_string_equal(cf->cf_backends[0].cb_url,
	    "https://me:pw@x:8443/mcp?api_key=k&tenant=t");
	assert_string_equal(cf->cf_backends[0].cb_url_shown,
	    "https://***@x:8443/mcp?api_key=***&tenant=***");
	config_free(cf);
	load_bad("backends:\n  - name: a\n    url: ftp://x/\n",
	    "t.yaml:3:10: backends[0].url: expected an http:// or https:// "
	    "URL without whitespace, found \"ftp://x/\"");
	/* a password in a refused URL is not shown, even here */
	load_bad("backends:\n  - name: a\n    url: \"ftp://u:pw@x/?key=v\"\n",
	    "t.yaml:3:10: backends[0].url: expected an http:// or https:// "
	    "URL without whitespace, found \"ftp://***@x/?key=***\"");
	load_bad("backends:\n  - name: a\n    url: \"http://x/a b\"\n",
	    "t.yaml:3:10: backends[0].url: expected an http:// or https:// "
	    "URL without whitespace, found \"http://x/a b\"");
	load_bad("backends:\n  - name: a\n    url: http://\n",
	    "t.yaml:3:10: backends[0].url: expected an http:// or https:// "
	    "URL without whitespace, found \"http://\"");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: grpc\n",
	    "t.yaml:4:16: backends[0].transport: expected streamable-http, "
	    "sse or stdio, found \"grpc\"");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: STDIO\n",
	    "t.yaml:4:16: backends[0].transport: expected streamable-http, "
	    "sse or stdio, found \"STDIO\"");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: [sse]\n",
	    "t.yaml:4:16: backends[0].transport: expected streamable-http, "
	    "sse or stdio, found a sequence");
	load_bad("backends:\n  - name: a\n    url: x\n"
	    "    transport: sse\n",
	    "t.yaml:3:10: backends[0].url: expected an http:// or https:// "
	    "URL without whitespace, found \"x\"");
}

static void
test_err_listen(void **state)
{
	(void)state;
	load_bad("daemon:\n  listen: 4483\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected \"host:port\" or "
	    "\"[ipv6-address]:port\", found \"4483\"");
	load_bad("daemon:\n  listen: \"::1:4483\"\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected \"host:port\" or "
	    "\"[ipv6-address]:port\" (put an IPv6 address in brackets), "
	    "found \"::1:4483\"");
	load_bad("daemon:\n  listen: \"[::1]4483\"\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected \"host:port\" or "
	    "\"[ipv6-address]:port\", found \"[::1]4483\"");
	load_bad("daemon:\n  listen: example.org:80\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected a numeric IPv4 address, "
	    "a bracketed IPv6 address or localhost as the host, found "
	    "\"example.org\"");
	load_bad("daemon:\n  listen: :80\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected a numeric IPv4 address, "
	    "a bracketed IPv6 address or localhost as the host, found \"\"");
	load_bad("daemon:\n  listen: \"[127.0.0.1]:80\"\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected a numeric IPv4 address, "
	    "a bracketed IPv6 address or localhost as the host, found "
	    "\"127.0.0.1\"");
	load_bad("daemon:\n  listen: 127.0.0.1:65536\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected a port from 0 to 65535, "
	    "found \"65536\"");
	load_bad("daemon:\n  listen: \"127.0.0.1:\"\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected a port from 0 to 65535, "
	    "found \"\"");
	load_bad("daemon:\n  listen: 127.0.0.1:000080\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected a port from 0 to 65535, "
	    "found \"000080\"");
	load_bad("daemon:\n  listen: [\"::1\"]\n" BACKEND,
	    "t.yaml:2:11: daemon.listen: expected \"host:port\" or "
	    "\"[ipv6-address]:port\" (quote it: [ starts a YAML sequence), "
	    "found a sequence");
}

static void
test_err_sessions(void **state)
{
	(void)state;
	load_bad("sessions:\n  ttl: 2h\n  maxLifetime: 1h\n" BACKEND,
	    "t.yaml:3:16: sessions.maxLifetime: expected a duration not "
	    "shorter than sessions.ttl (\"2h\"), found \"1h\"");
	load_bad("sessions:\n  ttl: 25h\n" BACKEND,
	    "t.yaml:2:8: sessions.ttl: expected a duration not longer than "
	    "sessions.maxLifetime (24h by default), found \"25h\"");
	load_bad("sessions:\n  maxLifetime: 29m\n" BACKEND,
	    "t.yaml:2:16: sessions.maxLifetime: expected a duration not "
	    "shorter than sessions.ttl (30m by default), found \"29m\"");
}

static void
test_err_perworkload(void **state)
{
	(void)state;
	load_bad("operational:\n  timeouts:\n    perWorkload:\n"
	    "      b: 5s\n" BACKEND,
	    "t.yaml:4:7: operational.timeouts.perWorkload.b: no such backend "
	    "(configured backends: a)");
	load_bad(BACKEND "operational:\n  timeouts:\n    perWorkload: 5s\n",
	    "t.yaml:7:18: operational.timeouts.perWorkload: expected a "
	    "mapping, found \"5s\"");
}

static void
test_err_auth(void **state)
{
	(void)state;
	load_bad(BACKEND "incomingAuth:\n  type: oidc\n",
	    "t.yaml:6:9: incomingAuth: type oidc needs an oidc section "
	    "(issuer, audience)");
	load_bad(BACKEND "incomingAuth:\n  type: local\n",
	    "t.yaml: incomingAuth: type local needs daemon.listen: "
	    "unix:/path (a peer's user is known only on a Unix socket)");
	load_bad(BACKEND "incomingAuth:\n  type: none\n",
	    "t.yaml:6:9: incomingAuth.type: expected anonymous, oidc or "
	    "local, found \"none\"");
	load_bad(BACKEND "daemon: {listen: \"unix:run/vmcpd.sock\"}\n",
	    "t.yaml:5:18: daemon.listen: expected unix: and an absolute path "
	    "of at most 107 bytes, found \"unix:run/vmcpd.sock\"");
	load_bad(BACKEND "outgoingAuth:\n  source: discovered\n",
	    "t.yaml:6:11: outgoingAuth source discovered is not supported "
	    "yet by this version of vmcpd");
	load_bad(BACKEND "outgoingAuth:\n  source: file\n",
	    "t.yaml:6:11: outgoingAuth.source: expected inline, found "
	    "\"file\"");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: aws_sts\n",
	    "t.yaml:7:11: outgoingAuth type aws_sts is not supported "
	    "yet by this version of vmcpd");
	load_bad(BACKEND "outgoingAuth:\n  default:\n    type: basic\n",
	    "t.yaml:7:11: outgoingAuth.default.type: expected "
	    "unauthenticated, header_injection, token_exchange or "
	    "authorization_code, found "
	    "\"basic\"");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    tokenExchange: {tokenUrl: https://idp/token}\n",
	    "t.yaml:7:5: outgoingAuth.default.tokenExchange: only with "
	    "type token_exchange");
}

#define TWO_BACKENDS \
	"backends:\n" \
	"  - name: a\n" \
	"    url: http://127.0.0.1:3001/mcp\n" \
	"    transport: streamable-http\n" \
	"  - name: b\n" \
	"    url: http://127.0.0.1:3002/mcp\n" \
	"    transport: streamable-http\n" \
	"  - name: s\n" \
	"    url: http://127.0.0.1:3003/sse\n" \
	"    transport: sse\n"

static void
test_outauth(void **state)
{
	struct config			*cf;
	const struct config_backend	*a, *b, *s;

	(void)state;
	/* the backend's entry, else the default, else none */
	setenv("VMCPD_TEST_HDR", "Bearer from-env", 1);
	cf = load_ok(TWO_BACKENDS
	    "outgoingAuth:\n"
	    "  source: inline\n"
	    "  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: X-Api-Key, headerValue: k1}\n"
	    "  backends:\n"
	    "    b:\n"
	    "      type: header_injection\n"
	    "      headerInjection:\n"
	    "        headerName: Authorization\n"
	    "        headerValueEnv: VMCPD_TEST_HDR\n"
	    "    s: {type: unauthenticated}\n");
	a = config_backend_find(cf, "a");
	b = config_backend_find(cf, "b");
	s = config_backend_find(cf, "s");
	assert_non_null(a->cb_outauth);
	assert_int_equal(a->cb_outauth->oa_type, CONFIG_OUTAUTH_HEADER);
	assert_string_equal(a->cb_outauth->oa_header_name, "X-Api-Key");
	assert_string_equal(a->cb_outauth->oa_header_value, "k1");
	assert_non_null(b->cb_outauth);
	assert_string_equal(b->cb_outauth->oa_header_name, "Authorization");
	assert_string_equal(b->cb_outauth->oa_header_value,
	    "Bearer from-env");
	assert_null(s->cb_outauth);
	config_free(cf);

	/* no default: unauthenticated */
	cf = load_ok(BACKEND "outgoingAuth:\n  backends:\n    a:\n"
	    "      type: unauthenticated\n");
	assert_null(config_backend_find(cf, "a")->cb_outauth);
	config_free(cf);
	unsetenv("VMCPD_TEST_HDR");
}

static void
test_err_outauth(void **state)
{
	(void)state;
	load_bad(BACKEND "outgoingAuth:\n  backends:\n    nope:\n"
	    "      type: unauthenticated\n",
	    "t.yaml:7:5: outgoingAuth.backends: no backend named \"nope\"");
	load_bad(BACKEND "outgoingAuth:\n  backends:\n    a:\n"
	    "      type: token_exchange\n",
	    "t.yaml:8:13: outgoingAuth.backends.a: type token_exchange "
	    "needs a tokenExchange section (tokenUrl, clientId, ...)");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n",
	    "t.yaml:7:11: outgoingAuth.default: type header_injection needs "
	    "a headerInjection section (headerName, headerValue or "
	    "headerValueEnv)");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    headerInjection: {headerName: X, headerValue: v}\n",
	    "t.yaml:7:5: outgoingAuth.default.headerInjection: only with "
	    "type header_injection");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerValue: v}\n",
	    "t.yaml:8:22: outgoingAuth.default.headerInjection: missing "
	    "required key \"headerName\"");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: X}\n",
	    "t.yaml:8:22: outgoingAuth.default.headerInjection: needs "
	    "headerValue or headerValueEnv");
	setenv("VMCPD_TEST_HDR", "v2", 1);
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: X, headerValue: v,\n"
	    "      headerValueEnv: VMCPD_TEST_HDR}\n",
	    "t.yaml:9:7: outgoingAuth.default.headerInjection: headerValue "
	    "and headerValueEnv are exclusive; set one");
	unsetenv("VMCPD_TEST_HDR");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: X, headerValueEnv: "
	    "VMCPD_TEST_UNSET}\n",
	    "t.yaml:8:54: outgoingAuth.default.headerInjection."
	    "headerValueEnv: the environment variable VMCPD_TEST_UNSET is "
	    "not set or empty");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: \"X Y\", headerValue: v}\n",
	    "t.yaml:8:35: outgoingAuth.default.headerInjection.headerName: "
	    "expected an HTTP header name (RFC 9110 token), found \"X Y\"");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: mcp-session-id, "
	    "headerValue: v}\n",
	    "t.yaml:8:35: outgoingAuth.default.headerInjection.headerName: "
	    "mcp-session-id is a header vmcpd sets itself");
	/* the value is never quoted back */
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: X, headerValue: "
	    "\"sec\\r\\nret\"}\n",
	    "t.yaml:8:51: outgoingAuth.default.headerInjection.headerValue: "
	    "expected an HTTP header value (visible characters and spaces, "
	    "not empty, no line breaks)");
	load_bad("backends:\n  - name: s\n    url: http://127.0.0.1:1/sse\n"
	    "    transport: sse\n"
	    "outgoingAuth:\n  default:\n"
	    "    type: header_injection\n"
	    "    headerInjection: {headerName: X, headerValue: v}\n",
	    "t.yaml:7:5: outgoingAuth: backend s uses transport sse; "
	    "header_injection needs streamable-http (give it type "
	    "unauthenticated in outgoingAuth.backends)");
}

static void
test_err_loglevel(void **state)
{
	(void)state;
	load_bad(BACKEND "operational:\n  logLevel: trace\n",
	    "t.yaml:6:13: operational.logLevel: expected info or debug, "
	    "found \"trace\"");
}

/*
 * Several backends and aggregation
 */

#define BACKENDS3 \
	"backends:\n" \
	"  - {name: a, url: http://x/a, transport: streamable-http}\n" \
	"  - {name: b, url: http://x/b, transport: sse}\n" \
	"  - {name: c, command: server, transport: stdio}\n"

static const char multi_yaml[] =
    "# three transports, every aggregation key\n"
    "backends:\n"
    "  - name: github\n"
    "    url: https://mcp.example.org/github/mcp\n"
    "    transport: streamable-http\n"
    "  - name: slack\n"
    "    transport: sse\n"
    "    url: http://127.0.0.1:8103/sse\n"
    "  - name: memory\n"
    "    transport: stdio\n"
    "    command: npx\n"
    "    args: [-y, \"@modelcontextprotocol/server-memory\", \"\", 3001]\n"
    "    env:\n"
    "      MEMORY_FILE_PATH: /var/lib/vmcpd/memory.jsonl\n"
    "      _EMPTY: \"\"\n"
    "      PORT: 3001\n"
    "    cwd: /var/lib/vmcpd\n"
    "sessions:\n"
    "  eventBuffer: 100000\n"
    "  pendingTimeout: 90s\n"
    "aggregation:\n"
    "  conflictResolution: priority\n"
    "  conflictResolutionConfig:\n"
    "    prefixFormat: \"{workload}.\"\n"
    "    prefixMode: onConflict\n"
    "    priorityOrder: [memory, github]\n"
    "  excludeAllTools: true\n"
    "  defaultToolVisibility: deny\n"
    "  tools:\n"
    "    - workload: github\n"
    "      filter: [get_issue, gh_create_issue, search]\n"
    "      overrides:\n"
    "        create_issue:\n"
    "          name: gh_create_issue\n"
    "          description: Create a GitHub issue\n"
    "        search:\n"
    "          annotations: {title: Search, readOnlyHint: true,\n"
    "            destructiveHint: false, idempotentHint: true,\n"
    "            openWorldHint: false}\n"
    "    - workload: memory\n"
    "      excludeAll: true\n"
    "    - workload: slack\n"
    "      filter: []\n"
    "  cacheTtl: 30s\n"
    "  pageSize: 10000\n"
    "  maxBackendPages: 1\n"
    "  maxDescriptionLength: 1000\n"
    "  maxTitleLength: 16\n"
    "operational:\n"
    "  failureHandling:\n"
    "    partialFailureMode: best_effort\n"
    "  timeouts:\n"
    "    perWorkload:\n"
    "      memory: 5s\n"
    "      slack: 1m\n";

/* the JSON text of annotations, keys sorted */
static void
check_json(json_t *j, const char *want)
{
	char	*s;

	assert_non_null(j);
	assert_non_null(s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT));
	if (strcmp(s, want) != 0) {
		fail_msg("json %s, want %s", s, want);
	}
	free(s);
}

static void
test_multi(void **state)
{
	struct config			*cf;
	const struct config_backend	*cb;
	const struct config_aggregation	*ca;
	const struct config_workload	*cw;
	const struct config_override	*co;

	(void)state;
	NEED_BACKENDS(3);
	cf = load_ok(multi_yaml);
	assert_int_equal(cf->cf_nbackends, 3);

	cb = &cf->cf_backends[0];
	assert_string_equal(cb->cb_name, "github");
	assert_string_equal(cb->cb_url, "https://mcp.example.org/github/mcp");
	assert_string_equal(cb->cb_url_shown,
	    "https://mcp.example.org/github/mcp");
	assert_int_equal(cb->cb_transport, TRANSPORT_STREAMABLE_HTTP);
	assert_int_equal(cb->cb_timeout_ms, 30000);
	assert_null(cb->cb_command);
	assert_null(cb->cb_argv);
	assert_null(cb->cb_env);
	assert_null(cb->cb_cwd);

	cb = &cf->cf_backends[1];
	assert_string_equal(cb->cb_name, "slack");
	assert_string_equal(cb->cb_url, "http://127.0.0.1:8103/sse");
	assert_int_equal(cb->cb_transport, TRANSPORT_SSE);
	assert_int_equal(cb->cb_timeout_ms, 60000);
	assert_null(cb->cb_command);
	assert_null(cb->cb_argv);
	assert_null(cb->cb_env);
	assert_null(cb->cb_cwd);

	cb = &cf->cf_backends[2];
	assert_string_equal(cb->cb_name, "memory");
	assert_null(cb->cb_url);
	assert_int_equal(cb->cb_transport, TRANSPORT_STDIO);
	assert_int_equal(cb->cb_timeout_ms, 5000);
	assert_string_equal(cb->cb_command, "npx");
	assert_non_null(cb->cb_argv);
	assert_string_equal(cb->cb_argv[0], "npx");
	assert_string_equal(cb->cb_argv[1], "-y");
	assert_string_equal(cb->cb_argv[2],
	    "@modelcontextprotocol/server-memory");
	assert_string_equal(cb->cb_argv[3], "");
	assert_string_equal(cb->cb_argv[4], "3001");
	assert_null(cb->cb_argv[5]);
	assert_non_null(cb->cb_env);
	assert_string_equal(cb->cb_env[0],
	    "MEMORY_FILE_PATH=/var/lib/vmcpd/memory.jsonl");
	assert_string_equal(cb->cb_env[1], "_EMPTY=");
	assert_string_equal(cb->cb_env[2], "PORT=3001");
	assert_null(cb->cb_env[3]);
	assert_string_equal(cb->cb_cwd, "/var/lib/vmcpd");
	assert_ptr_equal(config_backend_find(cf, "memory"), cb);

	assert_int_equal(cf->cf_event_buffer, 100000);
	assert_int_equal(cf->cf_pending_timeout_ms, 90000);
	assert_int_equal(cf->cf_partial_failure, CONFIG_PARTIAL_BEST_EFFORT);

	ca = &cf->cf_agg;
	assert_int_equal(ca->ca_conflict, CONFIG_CONFLICT_PRIORITY);
	assert_string_equal(ca->ca_prefix_format, "{workload}.");
	assert_int_equal(ca->ca_prefix_mode, CONFIG_PREFIX_ON_CONFLICT);
	assert_int_equal(ca->ca_npriority, 2);
	assert_string_equal(ca->ca_priority[0], "memory");
	assert_string_equal(ca->ca_priority[1], "github");
	assert_null(ca->ca_priority[2]);
	assert_int_equal(ca->ca_exclude_all_tools, 1);
	assert_int_equal(ca->ca_default_deny, 1);
	assert_int_equal(ca->ca_cache_ttl_ms, 30000);
	assert_int_equal(ca->ca_page_size, 10000);
	assert_int_equal(ca->ca_max_backend_pages, 1);
	assert_int_equal(ca->ca_max_desc, 1000);
	assert_int_equal(ca->ca_max_title, 16);
	assert_int_equal(ca->ca_nworkloads, 3);

	cw = &ca->ca_workloads[0];
	assert_string_equal(cw->cw_name, "github");
	assert_int_equal(cw->cw_exclude_all, 0);
	assert_int_equal(cw->cw_nfilter, 3);
	assert_string_equal(cw->cw_filter[0], "get_issue");
	assert_string_equal(cw->cw_filter[1], "gh_create_issue");
	assert_string_equal(cw->cw_filter[2], "search");
	assert_null(cw->cw_filter[3]);
	assert_int_equal(cw->cw_noverrides, 2);
	co = &cw->cw_overrides[0];
	assert_string_equal(co->co_tool, "create_issue");
	assert_string_equal(co->co_name, "gh_create_issue");
	assert_string_equal(co->co_description, "Create a GitHub issue");
	assert_null(co->co_annotations);
	co = &cw->cw_overrides[1];
	assert_string_equal(co->co_tool, "search");
	assert_null(co->co_name);
	assert_null(co->co_description);
	check_json(co->co_annotations, "{\"destructiveHint\":false,"
	    "\"idempotentHint\":true,\"openWorldHint\":false,"
	    "\"readOnlyHint\":true,\"title\":\"Search\"}");

	cw = &ca->ca_workloads[1];
	assert_string_equal(cw->cw_name, "memory");
	assert_int_equal(cw->cw_exclude_all, 1);
	assert_null(cw->cw_filter);
	assert_int_equal(cw->cw_nfilter, 0);
	assert_null(cw->cw_overrides);
	assert_int_equal(cw->cw_noverrides, 0);

	/* an empty filter is no filter */
	cw = &ca->ca_workloads[2];
	assert_string_equal(cw->cw_name, "slack");
	assert_int_equal(cw->cw_nfilter, 0);
	assert_int_equal(cw->cw_exclude_all, 0);
	config_free(cf);
}

static void
test_stdio(void **state)
{
	struct config			*cf;
	const struct config_backend	*cb;

	(void)state;
	/* no args, no env, no cwd: argv is just the command */
	cf = load_ok("backends:\n  - name: s\n    transport: stdio\n"
	    "    command: /usr/bin/mcp server\n");
	cb = &cf->cf_backends[0];
	assert_int_equal(cb->cb_transport, TRANSPORT_STDIO);
	assert_null(cb->cb_url);
	assert_string_equal(cb->cb_command, "/usr/bin/mcp server");
	assert_string_equal(cb->cb_argv[0], "/usr/bin/mcp server");
	assert_null(cb->cb_argv[1]);
	assert_null(cb->cb_env);
	assert_null(cb->cb_cwd);
	assert_int_equal(cb->cb_timeout_ms, 30000);
	config_free(cf);

	/* empty args and env; any scalar is an argument, "~" too */
	cf = load_ok("backends:\n  - {name: s, transport: stdio, "
	    "command: x, args: [], env: {}}\n");
	cb = &cf->cf_backends[0];
	assert_string_equal(cb->cb_argv[0], "x");
	assert_null(cb->cb_argv[1]);
	assert_null(cb->cb_env);
	config_free(cf);
	cf = load_ok("backends:\n  - name: s\n    args: [--port, 3001, true, "
	    "\"~\", 'a b']\n    env: {a: 1, Z_9: \"x=y\"}\n"
	    "    transport: stdio\n    command: x\n");
	cb = &cf->cf_backends[0];
	assert_string_equal(cb->cb_argv[0], "x");
	assert_string_equal(cb->cb_argv[1], "--port");
	assert_string_equal(cb->cb_argv[2], "3001");
	assert_string_equal(cb->cb_argv[3], "true");
	assert_string_equal(cb->cb_argv[4], "~");
	assert_string_equal(cb->cb_argv[5], "a b");
	assert_null(cb->cb_argv[6]);
	assert_string_equal(cb->cb_env[0], "a=1");
	assert_string_equal(cb->cb_env[1], "Z_9=x=y");
	assert_null(cb->cb_env[2]);
	config_free(cf);

	/* an SSE backend alone */
	cf = load_ok("backends:\n  - {name: s, transport: sse, "
	    "url: \"https://[::1]:8443/sse\"}\n");
	cb = &cf->cf_backends[0];
	assert_int_equal(cb->cb_transport, TRANSPORT_SSE);
	assert_string_equal(cb->cb_url, "https://[::1]:8443/sse");
	assert_null(cb->cb_argv);
	config_free(cf);
}

static void
test_aggregation(void **state)
{
	struct config			*cf;
	const struct config_aggregation	*ca;
	const struct config_override	*co;

	(void)state;
	NEED_BACKENDS(3);
	/* an empty block is the defaults; so is "" */
	cf = load_ok(BACKENDS3 "aggregation: {}\n");
	check_agg_defaults(&cf->cf_agg);
	config_free(cf);
	cf = load_ok(BACKENDS3 "aggregation:\n  conflictResolution: prefix\n"
	    "  defaultToolVisibility: \"\"\n  excludeAllTools: false\n"
	    "  conflictResolutionConfig: {prefixMode: always}\n");
	check_agg_defaults(&cf->cf_agg);
	config_free(cf);
	cf = load_ok(BACKENDS3 "aggregation:\n  pinning: {mode: warn}\n");
	check_agg_defaults(&cf->cf_agg);
	config_free(cf);
	cf = load_ok(BACKENDS3 "aggregation:\n  pinning: {mode: enforce}\n");
	assert_int_equal(cf->cf_agg.ca_pin_mode, CONFIG_PIN_ENFORCE);
	config_free(cf);
	cf = load_ok(BACKENDS3 "aggregation:\n  pinning:\n    mode: off\n");
	assert_int_equal(cf->cf_agg.ca_pin_mode, CONFIG_PIN_OFF);
	config_free(cf);
	cf = load_ok(BACKENDS3 "aggregation:\n  defaultToolVisibility: allow\n"
	    "  conflictResolutionConfig: {prefixFormat: x}\n");
	assert_int_equal(cf->cf_agg.ca_default_deny, 0);
	assert_string_equal(cf->cf_agg.ca_prefix_format, "x");
	config_free(cf);

	/* manual needs no tools; prefixMode goes with any strategy */
	cf = load_ok(BACKENDS3 "aggregation:\n  conflictResolution: manual\n"
	    "  conflictResolutionConfig: {prefixMode: onConflict}\n"
	    "  defaultToolVisibility: deny\n");
	ca = &cf->cf_agg;
	assert_int_equal(ca->ca_conflict, CONFIG_CONFLICT_MANUAL);
	assert_int_equal(ca->ca_prefix_mode, CONFIG_PREFIX_ON_CONFLICT);
	assert_int_equal(ca->ca_default_deny, 1);
	assert_int_equal(ca->ca_nworkloads, 0);
	config_free(cf);

	/* priority with deny: every listed backend has a tools entry */
	cf = load_ok(BACKENDS3 "aggregation:\n"
	    "  conflictResolution: priority\n"
	    "  defaultToolVisibility: deny\n"
	    "  conflictResolutionConfig: {priorityOrder: [c, a]}\n"
	    "  tools: [{workload: a}, {workload: c, excludeAll: true}]\n");
	ca = &cf->cf_agg;
	assert_int_equal(ca->ca_conflict, CONFIG_CONFLICT_PRIORITY);
	assert_int_equal(ca->ca_npriority, 2);
	assert_string_equal(ca->ca_priority[0], "c");
	assert_string_equal(ca->ca_priority[1], "a");
	assert_int_equal(ca->ca_nworkloads, 2);
	assert_string_equal(ca->ca_workloads[1].cw_name, "c");
	assert_int_equal(ca->ca_workloads[1].cw_exclude_all, 1);
	config_free(cf);
	/* priority with allow: no tools entry needed */
	cf = load_ok(BACKENDS3 "aggregation:\n"
	    "  conflictResolution: priority\n"
	    "  conflictResolutionConfig: {priorityOrder: [b]}\n");
	assert_int_equal(cf->cf_agg.ca_npriority, 1);
	config_free(cf);

	/* an override of annotations alone is one; bounds are inclusive */
	cf = load_ok(BACKENDS3 "aggregation:\n  cacheTtl: 1ms\n"
	    "  pageSize: 1\n  maxBackendPages: 10000\n"
	    "  tools:\n    - workload: b\n      overrides:\n"
	    "        echo: {annotations: {readOnlyHint: false}}\n"
	    "        add: {description: Adds}\n");
	ca = &cf->cf_agg;
	assert_int_equal(ca->ca_cache_ttl_ms, 1);
	assert_int_equal(ca->ca_page_size, 1);
	assert_int_equal(ca->ca_max_backend_pages, 10000);
	assert_int_equal(ca->ca_workloads[0].cw_noverrides, 2);
	co = &ca->ca_workloads[0].cw_overrides[0];
	assert_string_equal(co->co_tool, "echo");
	assert_null(co->co_name);
	assert_null(co->co_description);
	check_json(co->co_annotations, "{\"readOnlyHint\":false}");
	co = &ca->ca_workloads[0].cw_overrides[1];
	assert_string_equal(co->co_tool, "add");
	assert_string_equal(co->co_description, "Adds");
	assert_null(co->co_annotations);
	config_free(cf);

	/*
	 * A filter may name a tool that an override renames when another
	 * tool takes the name, or when the override keeps the name.
	 */
	cf = load_ok(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      filter: [echo, say, add, sum]\n      overrides:\n"
	    "        echo: {name: say}\n        shout: {name: echo}\n"
	    "        add: {name: add}\n        sum: {description: x}\n");
	assert_int_equal(cf->cf_agg.ca_workloads[0].cw_nfilter, 4);
	assert_int_equal(cf->cf_agg.ca_workloads[0].cw_noverrides, 4);
	config_free(cf);
	/* the priority example of vmcpd.yaml(5) */
	cf = load_ok("backends:\n"
	    "  - {name: github, url: http://x/g, transport: streamable-http}\n"
	    "  - {name: jira, url: http://x/j, transport: streamable-http}\n"
	    "  - {name: slack, url: http://x/s, transport: sse}\n"
	    "aggregation:\n"
	    "  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n"
	    "    priorityOrder: [github, jira]\n"
	    "  defaultToolVisibility: deny\n"
	    "  tools:\n"
	    "    - workload: github\n"
	    "      filter: [get_issue, search_issues]\n"
	    "    - workload: jira\n"
	    "      filter: [get_issue, create_issue]\n");
	assert_int_equal(cf->cf_agg.ca_npriority, 2);
	assert_int_equal(cf->cf_agg.ca_nworkloads, 2);
	config_free(cf);
	/* the same new name in two backends is for the strategy to settle */
	cf = load_ok(BACKENDS3 "aggregation:\n  tools:\n"
	    "    - {workload: a, overrides: {x: {name: y}}}\n"
	    "    - {workload: b, overrides: {x: {name: y}}}\n");
	assert_int_equal(cf->cf_agg.ca_nworkloads, 2);
	config_free(cf);
}

/* a config of 200 backends loads: nothing caps their number */
#ifdef CONFIG_BACKENDS_MAX
#define LIMIT_BACKENDS	CONFIG_BACKENDS_MAX
#else
#define LIMIT_BACKENDS	200
#endif

static void
test_limit(void **state)
{
	struct config	*cf;
	char		*yaml, name[16];
	size_t		 len = 0, cap = 128 * (LIMIT_BACKENDS + 2);
	int		 i;
#ifdef CONFIG_BACKENDS_MAX
	char		 want[CONFIG_ERR_MAX], err[CONFIG_ERR_MAX];
#endif

	(void)state;
	assert_non_null(yaml = malloc(cap));
	len += (size_t)snprintf(yaml + len, cap - len, "backends:\n");
	for (i = 0; i < LIMIT_BACKENDS; i++)
		len += (size_t)snprintf(yaml + len, cap - len, "  - {name: b%d, "
		    "url: http://x/, transport: sse}\n", i);
	cf = load_ok(yaml);
	assert_int_equal(cf->cf_nbackends, LIMIT_BACKENDS);
	(void)snprintf(name, sizeof(name), "b%d", LIMIT_BACKENDS - 1);
	assert_string_equal(cf->cf_backends[LIMIT_BACKENDS - 1].cb_name,
	    name);
	assert_non_null(config_backend_find(cf, name));
	config_free(cf);

#ifdef CONFIG_BACKENDS_MAX
	(void)snprintf(yaml + len, cap - len, "  - {name: x, url: http://x/, "
	    "transport: sse}\n");
	if (CONFIG_BACKENDS_MAX == 1)
		(void)snprintf(want, sizeof(want), "t.yaml:3:5: only one "
		    "backend is supported by this version of vmcpd");
	else
		(void)snprintf(want, sizeof(want), "t.yaml:%d:5: at most %d "
		    "backends are supported by this version of vmcpd",
		    CONFIG_BACKENDS_MAX + 2, CONFIG_BACKENDS_MAX);
	assert_null(config_load_buffer("t.yaml", yaml, strlen(yaml), err,
	    sizeof(err)));
	assert_string_equal(err, want);
#endif
	free(yaml);
}

/* backends[].era: auto by default; modern only over streamable-http */
static void
test_backend_era(void **state)
{
	struct config *cf;

	(void)state;
	cf = load_ok("backends:\n  - {name: a, url: http://x/, transport: "
	    "streamable-http}\n  - {name: b, url: http://x/, transport: "
	    "streamable-http, era: modern}\n  - {name: c, url: http://x/, "
	    "transport: sse, era: legacy}\n  - {name: d, url: http://x/, "
	    "transport: streamable-http, era: auto}\n");
	assert_int_equal(cf->cf_backends[0].cb_era, PROTO_ERA_UNKNOWN);
	assert_int_equal(cf->cf_backends[1].cb_era, PROTO_ERA_MODERN);
	assert_int_equal(cf->cf_backends[2].cb_era, PROTO_ERA_LEGACY);
	assert_int_equal(cf->cf_backends[3].cb_era, PROTO_ERA_UNKNOWN);
	assert_string_equal(config_era_name(cf->cf_backends[1].cb_era),
	    "modern");
	config_free(cf);
	load_bad("backends:\n  - {name: a, url: http://x/, transport: "
	    "streamable-http, era: 2026}\n",
	    "t.yaml:2:64: backends[0].era: expected auto, legacy or modern, "
	    "found \"2026\"");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    era: modern\n",
	    "t.yaml:5:10: backends[0].era: modern needs transport "
	    "streamable-http (stdio backends speak 2025-11-25 or older)");
}

static void
test_err_stdio(void **state)
{
	(void)state;
	/* keys of the other kind of transport, the first in the file */
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    url: http://x/\n",
	    "t.yaml:5:5: backends[0].url: not allowed with transport stdio "
	    "(a stdio backend runs command)");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: sse\n    cwd: /tmp\n    command: x\n",
	    "t.yaml:5:5: backends[0].cwd: not allowed with transport sse "
	    "(only a stdio backend runs a command)");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    args: [x]\n    transport: streamable-http\n",
	    "t.yaml:4:5: backends[0].args: not allowed with transport "
	    "streamable-http (only a stdio backend runs a command)");
	load_bad("backends:\n  - {name: a, url: http://x/, transport: "
	    "streamable-http, env: {A: b}}\n",
	    "t.yaml:2:59: backends[0].env: not allowed with transport "
	    "streamable-http (only a stdio backend runs a command)");
	load_bad("backends:\n  - {command: x, name: a, url: http://x/, "
	    "transport: sse}\n",
	    "t.yaml:2:6: backends[0].command: not allowed with transport sse "
	    "(only a stdio backend runs a command)");
	/* values */
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: \"\"\n",
	    "t.yaml:4:14: backends[0].command: expected a non-empty string, "
	    "found \"\"");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: [npx, x]\n",
	    "t.yaml:4:14: backends[0].command: expected a non-empty string, "
	    "found a sequence");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    args: -y\n",
	    "t.yaml:5:11: backends[0].args: expected a sequence of strings, "
	    "found \"-y\"");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    args: [a, ~]\n",
	    "t.yaml:5:15: backends[0].args[1]: expected a string, found null");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    args: [{a: b}]\n",
	    "t.yaml:5:12: backends[0].args[0]: expected a string, found a "
	    "mapping");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: [A=b]\n",
	    "t.yaml:5:10: backends[0].env: expected a mapping, found a "
	    "sequence");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: {1A: x}\n",
	    "t.yaml:5:11: backends[0].env.1A: expected an environment "
	    "variable name ([A-Za-z_][A-Za-z0-9_]*), found \"1A\"");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: {B: x, \"A-B\": y}\n",
	    "t.yaml:5:17: backends[0].env.A-B: expected an environment "
	    "variable name ([A-Za-z_][A-Za-z0-9_]*), found \"A-B\"");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: {\"\": y}\n",
	    "t.yaml:5:11: backends[0].env.: expected an environment "
	    "variable name ([A-Za-z_][A-Za-z0-9_]*), found \"\"");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: {A: [x]}\n",
	    "t.yaml:5:14: backends[0].env.A: expected a string, found a "
	    "sequence");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: {A: ~}\n",
	    "t.yaml:5:14: backends[0].env.A: expected a string, found null");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    env: {A: x, A: y}\n",
	    "t.yaml:5:17: backends[0].env.A: duplicate key (first at line 5, "
	    "column 11)");
	load_bad("backends:\n  - name: a\n    transport: stdio\n"
	    "    command: x\n    cwd: ~\n",
	    "t.yaml:5:10: backends[0].cwd: expected a non-empty string, "
	    "found null");
}

static void
test_err_multi(void **state)
{
	(void)state;
	NEED_BACKENDS(3);
	load_bad(BACKENDS3 "  - {name: b, command: y, transport: stdio}\n",
	    "t.yaml:5:12: backends[3].name: duplicate backend name \"b\" "
	    "(first in backends[1])");
	load_bad(BACKENDS3 "operational:\n  timeouts:\n    perWorkload:\n"
	    "      a: 1s\n      d: 2s\n",
	    "t.yaml:9:7: operational.timeouts.perWorkload.d: no such backend "
	    "(configured backends: a, b, c)");
	/* the error in the second backend names it */
	load_bad(BACKENDS3 "  - {name: d, transport: stdio}\n",
	    "t.yaml:5:5: backends[3]: missing required key \"command\" for "
	    "transport stdio");
}

static void
test_err_aggregation(void **state)
{
	(void)state;
	NEED_BACKENDS(3);
	load_bad(BACKENDS3 "aggregation: []\n",
	    "t.yaml:5:14: aggregation: expected a mapping, found a sequence");
	load_bad(BACKENDS3 "aggregation:\n  colour: red\n",
	    "t.yaml:6:3: aggregation.colour: unknown key, expected one of: "
	    "conflictResolution, conflictResolutionConfig, excludeAllTools, "
	    "defaultToolVisibility, tools, cacheTtl, pageSize, "
	    "maxBackendPages, maxBackendListSize, maxDescriptionLength, "
	    "maxTitleLength, pinning");
	load_bad(BACKENDS3 "aggregation:\n  pinning: {mode: strict}\n",
	    "t.yaml:6:19: aggregation.pinning.mode: expected off, warn or "
	    "enforce, found \"strict\"");
	load_bad(BACKENDS3 "aggregation:\n  pinning: {mode: [warn]}\n",
	    "t.yaml:6:19: aggregation.pinning.mode: expected off, warn or "
	    "enforce, found a sequence");
	load_bad(BACKENDS3 "aggregation:\n  pinning: {modes: warn}\n",
	    "t.yaml:6:13: aggregation.pinning.modes: unknown key, did you "
	    "mean \"mode\"?");
	load_bad(BACKENDS3 "aggregation:\n  pinning: enforce\n",
	    "t.yaml:6:12: aggregation.pinning: expected a mapping, found "
	    "\"enforce\"");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: first\n",
	    "t.yaml:6:23: aggregation.conflictResolution: expected prefix, "
	    "priority or manual, found \"first\"");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolutionConfig: x\n",
	    "t.yaml:6:29: aggregation.conflictResolutionConfig: expected a "
	    "mapping, found \"x\"");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolutionConfig:\n"
	    "    prefixFormat: \"\"\n",
	    "t.yaml:7:19: aggregation.conflictResolutionConfig.prefixFormat: "
	    "expected a non-empty string, found \"\"");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolutionConfig:\n"
	    "    prefixMode: on_conflict\n",
	    "t.yaml:7:17: aggregation.conflictResolutionConfig.prefixMode: "
	    "expected always or onConflict, found \"on_conflict\"");
	load_bad(BACKENDS3 "aggregation:\n  excludeAllTools: yes\n",
	    "t.yaml:6:20: aggregation.excludeAllTools: expected true or "
	    "false, found \"yes\"");
	load_bad(BACKENDS3 "aggregation:\n  defaultToolVisibility: hidden\n",
	    "t.yaml:6:26: aggregation.defaultToolVisibility: expected allow, "
	    "deny or \"\", found \"hidden\"");
	load_bad(BACKENDS3 "aggregation:\n  defaultToolVisibility: ~\n",
	    "t.yaml:6:26: aggregation.defaultToolVisibility: expected allow, "
	    "deny or \"\", found null");
	load_bad(BACKENDS3 "aggregation:\n  cacheTtl: 0s\n",
	    "t.yaml:6:13: aggregation.cacheTtl: expected a duration greater "
	    "than 0 (such as 30s, 5m or 1h30m), found \"0s\"");
	load_bad(BACKENDS3 "aggregation:\n  pageSize: 0\n",
	    "t.yaml:6:13: aggregation.pageSize: expected an integer from 1 to "
	    "10000, found \"0\"");
	load_bad(BACKENDS3 "aggregation:\n  pageSize: 10001\n",
	    "t.yaml:6:13: aggregation.pageSize: expected an integer from 1 to "
	    "10000, found \"10001\"");
	load_bad(BACKENDS3 "aggregation:\n  maxBackendPages: 0\n",
	    "t.yaml:6:20: aggregation.maxBackendPages: expected an integer "
	    "from 1 to 10000, found \"0\"");
	load_bad(BACKENDS3 "aggregation:\n  maxBackendPages: \"5\"\n",
	    "t.yaml:6:20: aggregation.maxBackendPages: expected an integer "
	    "from 1 to 10000, found the quoted string \"5\"");
	load_bad(BACKENDS3 "aggregation:\n  maxDescriptionLength: 15\n",
	    "t.yaml:6:25: aggregation.maxDescriptionLength: expected an "
	    "integer from 16 to 16777216, found \"15\"");
	load_bad(BACKENDS3 "aggregation:\n  maxTitleLength: 65537\n",
	    "t.yaml:6:19: aggregation.maxTitleLength: expected an integer "
	    "from 16 to 65536, found \"65537\"");
}

static void
test_err_priority(void **state)
{
	(void)state;
	NEED_BACKENDS(3);
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n",
	    "t.yaml:6:3: aggregation: missing required key "
	    "\"conflictResolutionConfig\" for conflictResolution priority");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n    prefixFormat: x_\n",
	    "t.yaml:8:5: aggregation.conflictResolutionConfig: missing "
	    "required key \"priorityOrder\" for conflictResolution priority");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n    priorityOrder: []\n",
	    "t.yaml:8:20: aggregation.conflictResolutionConfig.priorityOrder: "
	    "expected at least one backend for conflictResolution priority, "
	    "found an empty sequence");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n    priorityOrder: a\n",
	    "t.yaml:8:20: aggregation.conflictResolutionConfig.priorityOrder: "
	    "expected a sequence of backend names, found \"a\"");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n    priorityOrder: [a, \"\"]\n",
	    "t.yaml:8:24: aggregation.conflictResolutionConfig."
	    "priorityOrder[1]: expected a non-empty string, found \"\"");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n    priorityOrder: [a, x]\n",
	    "t.yaml:8:24: aggregation.conflictResolutionConfig."
	    "priorityOrder[1]: no such backend \"x\" (configured backends: "
	    "a, b, c)");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  conflictResolutionConfig:\n    priorityOrder: [b, a, b]\n",
	    "t.yaml:8:27: aggregation.conflictResolutionConfig."
	    "priorityOrder[2]: duplicate backend \"b\" (first in "
	    "aggregation.conflictResolutionConfig.priorityOrder[0])");
	/* only priority uses the order */
	load_bad(BACKENDS3 "aggregation:\n  conflictResolutionConfig:\n"
	    "    priorityOrder: [a]\n",
	    "t.yaml:7:5: aggregation.conflictResolutionConfig.priorityOrder: "
	    "not allowed with conflictResolution prefix (only priority uses "
	    "it)");
	load_bad(BACKENDS3 "aggregation:\n  conflictResolutionConfig:\n"
	    "    priorityOrder: [a]\n  conflictResolution: manual\n",
	    "t.yaml:7:5: aggregation.conflictResolutionConfig.priorityOrder: "
	    "not allowed with conflictResolution manual (only priority uses "
	    "it)");
	/* deny: a backend with no tools entry cannot win */
	load_bad(BACKENDS3 "aggregation:\n  conflictResolution: priority\n"
	    "  defaultToolVisibility: deny\n"
	    "  conflictResolutionConfig:\n    priorityOrder: [a, b]\n"
	    "  tools:\n    - workload: a\n",
	    "t.yaml:9:24: aggregation.conflictResolutionConfig."
	    "priorityOrder[1]: backend \"b\" has no aggregation.tools entry, "
	    "so with defaultToolVisibility deny it has no tools to give "
	    "priority to");
}

static void
test_err_tools(void **state)
{
	(void)state;
	NEED_BACKENDS(3);
	load_bad(BACKENDS3 "aggregation:\n  tools: {}\n",
	    "t.yaml:6:10: aggregation.tools: expected a sequence of "
	    "per-backend tool settings, found a mapping");
	load_bad(BACKENDS3 "aggregation:\n  tools: [a]\n",
	    "t.yaml:6:11: aggregation.tools[0]: expected a mapping, found "
	    "\"a\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - filter: [x]\n",
	    "t.yaml:7:7: aggregation.tools[0]: missing required key "
	    "\"workload\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: \"\"\n",
	    "t.yaml:7:17: aggregation.tools[0].workload: expected a non-empty "
	    "string, found \"\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: x\n",
	    "t.yaml:7:17: aggregation.tools[0].workload: no such backend "
	    "\"x\" (configured backends: a, b, c)");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "    - workload: b\n    - workload: a\n",
	    "t.yaml:9:17: aggregation.tools[2].workload: duplicate workload "
	    "\"a\" (first in aggregation.tools[0])");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      toolConfigRef: {name: x}\n",
	    "t.yaml:8:7: aggregation.tools[0].toolConfigRef is not supported "
	    "(Kubernetes only)");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      filters: [x]\n",
	    "t.yaml:8:7: aggregation.tools[0].filters: unknown key, did you "
	    "mean \"filter\"?");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      colour: red\n",
	    "t.yaml:8:7: aggregation.tools[0].colour: unknown key, expected "
	    "one of: workload, filter, excludeAll, overrides");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      filter: x\n",
	    "t.yaml:8:15: aggregation.tools[0].filter: expected a sequence of "
	    "tool names, found \"x\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      filter: [a, ~]\n",
	    "t.yaml:8:19: aggregation.tools[0].filter[1]: expected a "
	    "non-empty string, found null");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      excludeAll: \"true\"\n",
	    "t.yaml:8:19: aggregation.tools[0].excludeAll: expected true or "
	    "false, found the quoted string \"true\"");
}

static void
test_err_overrides(void **state)
{
	(void)state;
	NEED_BACKENDS(3);
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides: [x]\n",
	    "t.yaml:8:18: aggregation.tools[0].overrides: expected a mapping, "
	    "found a sequence");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: {}\n",
	    "t.yaml:9:15: aggregation.tools[0].overrides.echo: expected name, "
	    "description or annotations, found an empty mapping");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: ~\n",
	    "t.yaml:9:15: aggregation.tools[0].overrides.echo: expected a "
	    "mapping, found null");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        \"\": {name: x}\n",
	    "t.yaml:9:9: aggregation.tools[0].overrides.: expected a tool "
	    "name, found \"\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: {name: \"\"}\n",
	    "t.yaml:9:22: aggregation.tools[0].overrides.echo.name: expected "
	    "a non-empty string, found \"\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        \"bad name\": {name: \"new name\"}\n",
	    "t.yaml:9:28: aggregation.tools[0].overrides.bad name.name: "
	    "expected a tool name (1 to 128 letters, digits, \".\", \"_\", "
	    "\"-\"), found \"new name\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: {description: [x]}\n",
	    "t.yaml:9:29: aggregation.tools[0].overrides.echo.description: "
	    "expected a non-empty string, found a sequence");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: {title: x}\n",
	    "t.yaml:9:16: aggregation.tools[0].overrides.echo.title: unknown "
	    "key, expected one of: name, description, annotations");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: {annotations: {}}\n",
	    "t.yaml:9:29: aggregation.tools[0].overrides.echo.annotations: "
	    "expected at least one of title, readOnlyHint, destructiveHint, "
	    "idempotentHint or openWorldHint, found an empty mapping");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo: {annotations: {readOnlyHint: 1}}\n",
	    "t.yaml:9:44: aggregation.tools[0].overrides.echo.annotations."
	    "readOnlyHint: expected true or false, found \"1\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo:\n          annotations:\n"
	    "            readonlyhint: true\n",
	    "t.yaml:11:13: aggregation.tools[0].overrides.echo.annotations."
	    "readonlyhint: unknown key, did you mean \"readOnlyHint\"?");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo:\n          annotations:\n"
	    "            title: \"\"\n",
	    "t.yaml:11:20: aggregation.tools[0].overrides.echo.annotations."
	    "title: expected a non-empty string, found \"\"");
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        echo:\n          annotations: x\n",
	    "t.yaml:10:24: aggregation.tools[0].overrides.echo.annotations: "
	    "expected a mapping, found \"x\"");
	/* two tools of one backend renamed alike */
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      overrides:\n        x: {name: same}\n"
	    "        y: {description: d}\n        z: {name: same}\n",
	    "t.yaml:11:19: aggregation.tools[0].overrides.z.name: duplicate "
	    "new name \"same\" (first at line 9, column 19)");
	/* the filter takes the new names */
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: a\n"
	    "      filter: [add, echo]\n      overrides:\n"
	    "        get-sum: {name: add}\n        echo: {name: say}\n",
	    "t.yaml:8:21: aggregation.tools[0].filter[1]: \"echo\" is renamed "
	    "to \"say\" by overrides, and the filter takes the new name");
	/* the override may come first */
	load_bad(BACKENDS3 "aggregation:\n  tools:\n    - workload: b\n"
	    "      overrides: {echo: {name: say}}\n      filter: [echo]\n",
	    "t.yaml:9:16: aggregation.tools[0].filter[0]: \"echo\" is renamed "
	    "to \"say\" by overrides, and the filter takes the new name");
}

static void
test_err_new_sessions(void **state)
{
	(void)state;
	load_bad("sessions:\n  eventBuffer: 15\n" BACKEND,
	    "t.yaml:2:16: sessions.eventBuffer: expected an integer from 16 "
	    "to 100000, found \"15\"");
	load_bad("sessions:\n  eventBuffer: 100001\n" BACKEND,
	    "t.yaml:2:16: sessions.eventBuffer: expected an integer from 16 "
	    "to 100000, found \"100001\"");
	load_bad("sessions:\n  pendingTimeout: 0s\n" BACKEND,
	    "t.yaml:2:19: sessions.pendingTimeout: expected a duration "
	    "greater than 0 (such as 30s, 5m or 1h30m), found \"0s\"");
	load_bad("sessions:\n  maxSessions: 0\n" BACKEND,
	    "t.yaml:2:16: sessions.maxSessions: expected an integer from 1 "
	    "to 100000000, found \"0\"");
	load_bad("sessions:\n  maxPerAddress: 100000001\n" BACKEND,
	    "t.yaml:2:18: sessions.maxPerAddress: expected an integer from 1 "
	    "to 100000000, found \"100000001\"");
	load_bad("sessions:\n  maxPerAddress: [1]\n" BACKEND,
	    "t.yaml:2:18: sessions.maxPerAddress: expected an integer from 1 "
	    "to 100000000, found a sequence");
	load_bad("sessions:\n  maxPrincipals: 0\n" BACKEND,
	    "t.yaml:2:18: sessions.maxPrincipals: expected an integer from 1 "
	    "to 100000000, found \"0\"");
	load_bad("sessions:\n  maxPrincipals: many\n" BACKEND,
	    "t.yaml:2:18: sessions.maxPrincipals: expected an integer from 1 "
	    "to 100000000, found \"many\"");
	load_bad("sessions:\n  backendSessionTtl: 1s\n" BACKEND,
	    "t.yaml:2:22: sessions.backendSessionTtl: expected a duration of "
	    "at least 2s (such as 30s, 5m or 1h30m), found \"1s\"");
	load_bad("sessions:\n  backendSessionTtl: [1m]\n" BACKEND,
	    "t.yaml:2:22: sessions.backendSessionTtl: expected a duration of "
	    "at least 2s (such as 30s, 5m or 1h30m), found a sequence");
	load_bad("sessions:\n  maxBackendSessions: 0\n" BACKEND,
	    "t.yaml:2:23: sessions.maxBackendSessions: expected an integer "
	    "from 1 to 1000000, found \"0\"");
	load_bad("sessions:\n  maxBackendSession: 5\n" BACKEND,
	    "t.yaml:2:3: sessions.maxBackendSession: unknown key, did you "
	    "mean \"maxBackendSessions\"?");
	load_bad("sessions:\n  maxSubscriptions: 0\n" BACKEND,
	    "t.yaml:2:21: sessions.maxSubscriptions: expected an integer "
	    "from 1 to 1000000, found \"0\"");
	load_bad("sessions:\n  maxSubscriptions: 1000001\n" BACKEND,
	    "t.yaml:2:21: sessions.maxSubscriptions: expected an integer "
	    "from 1 to 1000000, found \"1000001\"");
	load_bad("sessions:\n  maxSubscriptionsPerPrincipal: -1\n" BACKEND,
	    "t.yaml:2:33: sessions.maxSubscriptionsPerPrincipal: expected an "
	    "integer from 1 to 100000000, found \"-1\"");
	load_bad("sessions:\n  maxSubscription: 5\n" BACKEND,
	    "t.yaml:2:3: sessions.maxSubscription: unknown key, did you mean "
	    "\"maxSubscriptions\"?");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    partialFailureMode: besteffort\n",
	    "t.yaml:7:25: operational.failureHandling.partialFailureMode: "
	    "expected fail or best_effort, found \"besteffort\"");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    partialFailure: fail\n",
	    "t.yaml:7:5: operational.failureHandling.partialFailure: unknown "
	    "key, expected one of: partialFailureMode, healthCheckInterval, "
	    "healthCheckTimeout, unhealthyThreshold, statusReportingInterval, "
	    "circuitBreaker");
	load_bad(BACKEND "operational:\n  failureHandling: fail\n",
	    "t.yaml:6:20: operational.failureHandling: expected a mapping, "
	    "found \"fail\"");
}

static void
test_new_values(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(BACKEND "sessions: {eventBuffer: 16, "
	    "pendingTimeout: 1ms}\n"
	    "operational: {failureHandling: {partialFailureMode: fail}}\n");
	assert_int_equal(cf->cf_event_buffer, 16);
	assert_int_equal(cf->cf_pending_timeout_ms, 1);
	assert_int_equal(cf->cf_partial_failure, CONFIG_PARTIAL_FAIL);
	/* the session caps follow the map by default */
	assert_int_equal(cf->cf_session_cap, 524288);
	assert_int_equal(cf->cf_session_cap_addr, 131072);
	assert_int_equal(cf->cf_principal_cap, 10000);
	assert_int_equal(cf->cf_subs_cap, 1000);
	assert_int_equal(cf->cf_subs_cap_principal, 10000);
	config_free(cf);
	cf = load_ok(BACKEND "daemon: {mapSize: 1MiB}\n");
	assert_int_equal(cf->cf_session_cap, 512);
	assert_int_equal(cf->cf_session_cap_addr, 128);
	config_free(cf);
	cf = load_ok(BACKEND "sessions: {maxSessions: 7}\n"
	    "daemon: {mapSize: 1MiB}\n");
	assert_int_equal(cf->cf_session_cap, 7);
	assert_int_equal(cf->cf_session_cap_addr, 1);
	config_free(cf);
	cf = load_ok(BACKEND "sessions: {maxSessions: 100000000, "
	    "maxPerAddress: 3}\n");
	assert_int_equal(cf->cf_session_cap, 100000000);
	assert_int_equal(cf->cf_session_cap_addr, 3);
	config_free(cf);
	cf = load_ok(BACKEND "sessions: {maxPrincipals: 2}\n");
	assert_int_equal(cf->cf_principal_cap, 2);
	/* a principal's backend sessions: 10 min idle, 1000 a backend */
	assert_int_equal(cf->cf_bsession_ttl_ms, 10 * 60 * 1000);
	assert_int_equal(cf->cf_bsession_cap, 1000);
	config_free(cf);
	cf = load_ok(BACKEND "sessions: {backendSessionTtl: 2s, "
	    "maxBackendSessions: 1000000}\n");
	assert_int_equal(cf->cf_bsession_ttl_ms, 2000);
	assert_int_equal(cf->cf_bsession_cap, 1000000);
	config_free(cf);
	cf = load_ok(BACKEND "sessions: {maxSubscriptions: 1000000, "
	    "maxSubscriptionsPerPrincipal: 3}\n");
	assert_int_equal(cf->cf_subs_cap, 1000000);
	assert_int_equal(cf->cf_subs_cap_principal, 3);
	config_free(cf);
	cf = load_ok(BACKEND "operational:\n  failureHandling: {}\n");
	assert_int_equal(cf->cf_partial_failure, CONFIG_PARTIAL_FAIL);
	config_free(cf);
}

/* etc/examples/aggregate.yaml, as documented in it */
static void
check_aggregate(const struct config *cf)
{
	const struct config_aggregation	*ca = &cf->cf_agg;
	const struct config_backend	*cb;

	assert_int_equal(cf->cf_nbackends, 3);
	cb = config_backend_find(cf, "everything");
	assert_non_null(cb);
	assert_int_equal(cb->cb_transport, TRANSPORT_STDIO);
	assert_string_equal(cb->cb_argv[0], "npx");
	assert_string_equal(cb->cb_argv[2],
	    "@modelcontextprotocol/server-everything");
	cb = config_backend_find(cf, "memory");
	assert_non_null(cb);
	assert_int_equal(cb->cb_transport, TRANSPORT_STDIO);
	assert_non_null(cb->cb_env);
	assert_non_null(cb->cb_cwd);
	cb = config_backend_find(cf, "remote");
	assert_non_null(cb);
	assert_int_equal(cb->cb_transport, TRANSPORT_STREAMABLE_HTTP);
	assert_int_equal(cb->cb_era, PROTO_ERA_UNKNOWN);
	assert_int_equal(cb->cb_timeout_ms, 10000);
	assert_int_equal(cf->cf_answer_buf, 256 * 1024 * 1024);
	assert_int_equal(cf->cf_answer_buf_backend, 128 * 1024 * 1024);
	assert_int_equal(ca->ca_conflict, CONFIG_CONFLICT_PREFIX);
	assert_int_equal(ca->ca_prefix_mode, CONFIG_PREFIX_ON_CONFLICT);
	assert_int_equal(ca->ca_nworkloads, 2);
	assert_int_equal(ca->ca_workloads[0].cw_nfilter, 3);
	assert_string_equal(ca->ca_workloads[0].cw_overrides[0].co_tool,
	    "get-sum");
	assert_string_equal(ca->ca_workloads[0].cw_overrides[0].co_name, "add");
	check_json(ca->ca_workloads[1].cw_overrides[0].co_annotations,
	    "{\"openWorldHint\":false,\"readOnlyHint\":true}");
}

/*
 * The files in etc/: the default and every example load.  Found from the
 * current directory or one above it, so that the test runs from the
 * repository root (tests/run.sh) or from build/tests.
 */
static void
test_examples(void **state)
{
	static const char *const roots[] = { ".", "..", "../.." };
	struct config	*cf;
	struct dirent	*de;
	DIR		*d;
	char		 path[1024], err[CONFIG_ERR_MAX];
	const char	*root = NULL;
	size_t		 i, len;
	int		 n = 0, aggregate = 0, oidc = 0, limits = 0;
	int		 composite = 0;
	int		 outgoing = 0, links = 0;
	int		 authz = 0, telemetry = 0;
	const struct config_outauth *oa;

	(void)state;
	/* outgoing.yaml's header value comes from the environment */
	setenv("GITHUB_TOKEN", "Bearer example", 1);
	setenv("JIRA_EXCHANGE_SECRET", "example", 1);
	/* github-links.yaml's: vmcpd's client secrets at both servers */
	setenv("GITHUB_CLIENT_SECRET", "example", 1);
	setenv("IDP_CLIENT_SECRET", "example", 1);
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		(void)snprintf(path, sizeof(path), "%s/shared/config.h",
		    roots[i]);
		if (access(path, R_OK) == 0) {
			root = roots[i];
			break;
		}
	}
	if (root == NULL)
		fail_msg("run from the repository root: no shared/config.h");

	(void)snprintf(path, sizeof(path), "%s/etc/vmcpd.yaml", root);
	if ((cf = config_load_file(path, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	check_etc(cf);
	config_free(cf);

	/* what make install puts in /etc/vmcpd: no backends, the unit's
	 * state directory */
	(void)snprintf(path, sizeof(path), "%s/etc/service/vmcpd.yaml", root);
	if ((cf = config_load_file(path, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	assert_int_equal(cf->cf_nbackends, 0);
	assert_string_equal(cf->cf_state_dir, "/var/lib/vmcpd");
	assert_null(cf->cf_user);
	config_free(cf);

	NEED_BACKENDS(3);
	(void)snprintf(path, sizeof(path), "%s/etc/examples", root);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		(void)snprintf(path, sizeof(path), "%s/etc/examples/%s", root,
		    de->d_name);
		if ((cf = config_load_file(path, err, sizeof(err))) == NULL)
			fail_msg("%s", err);
		if (strcmp(de->d_name, "aggregate.yaml") == 0) {
			aggregate = 1;
			check_aggregate(cf);
		}
		if (strcmp(de->d_name, "limits.yaml") == 0) {
			limits = 1;
			assert_int_equal(cf->cf_ratelimit.crl_per_user.cb_max,
			    100);
			assert_int_equal(cf->cf_ratelimit.crl_ntools, 1);
			assert_true(cf->cf_audit.ca_enabled);
		}
		if (strcmp(de->d_name, "authz.yaml") == 0) {
			authz = 1;
			assert_true(cf->cf_inauth.ci_authz.az_cedar);
			assert_int_equal(cedar_policyset_len(
			    cf->cf_inauth.ci_authz.az_policies), 9);
		}
		if (strcmp(de->d_name, "composite.yaml") == 0) {
			const struct composite *co;

			composite = 1;
			assert_int_equal(cf->cf_composites->cl_n, 1);
			assert_non_null(co = composite_find(cf, "triage_issue",
			    12));
			assert_int_equal(co->co_nsteps, 5);
			assert_int_equal(co->co_long, 1);
			assert_int_equal(co->co_steps[2].cs_kind,
			    COMPOSITE_FOREACH);
			assert_string_equal(co->co_steps[4].cs_tool,
			    "slack.post_message");
		}
		if (strcmp(de->d_name, "telemetry.yaml") == 0) {
			telemetry = 1;
			assert_true(cf->cf_telemetry.ct_enabled);
			assert_string_equal(cf->cf_telemetry.ct_url,
			    "http://127.0.0.1:4318");
		}
		if (strcmp(de->d_name, "oidc.yaml") == 0) {
			oidc = 1;
			assert_int_equal(cf->cf_inauth.ci_type,
			    CONFIG_INAUTH_OIDC);
			assert_string_equal(cf->cf_inauth.ci_oidc.oi_audience,
			    "https://mcp.example.com/mcp");
		}
		if (strcmp(de->d_name, "outgoing.yaml") == 0) {
			outgoing = 1;
			assert_string_equal(config_backend_find(cf,
			    "github")->cb_outauth->oa_header_value,
			    "Bearer example");
			assert_string_equal(config_backend_find(cf,
			    "search")->cb_outauth->oa_header_name,
			    "X-Api-Key");
			assert_null(config_backend_find(cf,
			    "local")->cb_outauth);
			assert_int_equal(config_backend_find(cf,
			    "jira")->cb_outauth->oa_type,
			    CONFIG_OUTAUTH_EXCHANGE);
			assert_string_equal(config_backend_find(cf,
			    "jira")->cb_outauth->oa_tx_audience, "jira-mcp");
		}
		if (strcmp(de->d_name, "github-links.yaml") == 0) {
			links = 1;
			oa = config_backend_find(cf, "github")->cb_outauth;
			assert_int_equal(oa->oa_type, CONFIG_OUTAUTH_CODE);
			assert_string_equal(oa->oa_ac_token_url,
			    "https://github.com/login/oauth/access_token");
			assert_int_equal(oa->oa_ac_secret_post, 1);
			assert_string_equal(oa->oa_ac_scopes, "repo read:org");
		}
		config_free(cf);
		n++;
	}
	closedir(d);
	unsetenv("GITHUB_CLIENT_SECRET");
	unsetenv("IDP_CLIENT_SECRET");
	unsetenv("GITHUB_TOKEN");
	unsetenv("JIRA_EXCHANGE_SECRET");
	assert_true(n >= 1);
	assert_true(aggregate);
	assert_true(oidc);
	assert_true(limits);
	assert_true(outgoing);
	assert_true(links);
	assert_true(authz);
	assert_true(composite);
	assert_true(telemetry);
}

/*
 * Value parsers
 */

static void
check_duration(const char *s, uint64_t want)
{
	uint64_t	 ms = 12345;

	if (config_parse_duration(s, &ms) != 0)
		fail_msg("duration \"%s\" rejected", s);
	if (ms != want)
		fail_msg("duration \"%s\": %llu, want %llu", s,
		    (unsigned long long)ms, (unsigned long long)want);
}

static void
check_duration_rc(const char *s, int rc)
{
	uint64_t	 ms = 12345;

	if (config_parse_duration(s, &ms) != rc)
		fail_msg("duration \"%s\": not %d", s, rc);
	assert_int_equal(ms, 12345);
}

static void
check_duration_bad(const char *s)
{
	check_duration_rc(s, -1);
}

static void
test_parse_duration(void **state)
{
	(void)state;
	check_duration("0", 0);
	check_duration("0s", 0);
	check_duration("0h0m", 0);
	check_duration("30", 30000);
	check_duration("30s", 30000);
	check_duration("5m", 300000);
	check_duration("1h30m", 5400000);
	check_duration("1h1m1s1ms", 3661001);
	check_duration("250ms", 250);
	check_duration("1.5s", 1500);
	check_duration("1.5h", 5400000);
	check_duration(".5s", 500);
	check_duration("5.s", 5000);
	check_duration("0.001s", 1);
	check_duration("2000us", 2);
	check_duration("1000\xc2\xb5s", 1);
	check_duration("1000\xce\xbcs", 1);
	check_duration("3000000ns", 3);
	check_duration("007s", 7000);
	/* a non-zero part below a millisecond rounds up, never to 0 */
	check_duration("1ns", 1);
	check_duration("1.000001ms", 2);
	check_duration("1.0000001ms", 1);
	/* the largest: 2^64-1 ns */
	check_duration("18446744073", 18446744073000);
	check_duration("5124095h34m", 18446744040000);

	check_duration_bad(NULL);
	check_duration_bad("");
	check_duration_bad("s");
	check_duration_bad(".");
	check_duration_bad(".s");
	check_duration_bad("-5s");
	check_duration_bad("+5s");
	check_duration_bad("5x");
	check_duration_bad("5 s");
	check_duration_bad(" 5s");
	check_duration_bad("5s ");
	check_duration_bad("1.5");
	check_duration_bad("1h30");
	check_duration_bad("5sm");
	check_duration_bad("1e3s");
	check_duration_bad("5S");
	check_duration_bad("1d");
	check_duration_bad("1..5s");
	check_duration_bad("inf");
	/* too large: digits, one term, the sum, bare seconds */
	check_duration_rc("18446744073709551616s", -2);
	check_duration_rc("5124096h", -2);
	check_duration_rc("5124095h35m", -2);
	check_duration_rc("18446744074", -2);
	check_duration_rc("5124095h34m34s", -2);
	check_duration("5124095h34m33s", 18446744073000);
	/* too large, then malformed: malformed */
	check_duration_bad("18446744073709551616x");
	check_duration_bad("5124096h1");
}

static void
check_size(const char *s, uint64_t want)
{
	uint64_t	 v = 12345;

	if (config_parse_size(s, &v) != 0)
		fail_msg("size \"%s\" rejected", s);
	if (v != want)
		fail_msg("size \"%s\": %llu, want %llu", s,
		    (unsigned long long)v, (unsigned long long)want);
}

static void
check_size_bad(const char *s)
{
	uint64_t	 v = 12345;

	if (config_parse_size(s, &v) != -1)
		fail_msg("size \"%s\" accepted", s);
	assert_int_equal(v, 12345);
}

static void
test_parse_size(void **state)
{
	(void)state;
	check_size("0", 0);
	check_size("1024", 1024);
	check_size("1K", 1024);
	check_size("1KB", 1024);
	check_size("16KiB", 16384);
	check_size("4M", 4ULL << 20);
	check_size("4MB", 4ULL << 20);
	check_size("4MiB", 4ULL << 20);
	check_size("1G", 1ULL << 30);
	check_size("1GB", 1ULL << 30);
	check_size("1GiB", 1ULL << 30);
	check_size("1T", 1ULL << 40);
	check_size("1TB", 1ULL << 40);
	check_size("1TiB", 1ULL << 40);
	check_size("18446744073709551615", UINT64_MAX);
	check_size("16777215TiB", 16777215ULL << 40);

	check_size_bad(NULL);
	check_size_bad("");
	check_size_bad("K");
	check_size_bad("-1");
	check_size_bad("+1");
	check_size_bad(" 1");
	check_size_bad("1 K");
	check_size_bad("1.5K");
	check_size_bad("1k");
	check_size_bad("1Kib");
	check_size_bad("1KiBs");
	check_size_bad("1B");
	check_size_bad("1P");
	check_size_bad("0x10");
	check_size_bad("18446744073709551616");
	check_size_bad("16777216TiB");
}

#define OIDC_HEAD	BACKEND "incomingAuth:\n  type: oidc\n  oidc:\n"
#define TX_HEAD	OIDC_HEAD "    issuer: https://idp.example\n" \
	"    audience: vmcp\n" \
	"outgoingAuth:\n  backends:\n    a:\n      type: token_exchange\n" \
	"      tokenExchange:\n"

static void
test_outauth_exchange(void **state)
{
	struct config			*cf;
	const struct config_outauth	*oa;

	(void)state;
	setenv("VMCPD_TEST_TXS", "s3cret", 1);
	cf = load_ok(TX_HEAD
	    "        tokenUrl: https://idp.example/token\n"
	    "        clientId: vmcp\n"
	    "        clientSecretEnv: VMCPD_TEST_TXS\n"
	    "        audience: github-mcp\n"
	    "        scopes: [repo, read:org]\n"
	    "        subjectTokenType: id_token\n");
	oa = config_backend_find(cf, "a")->cb_outauth;
	assert_non_null(oa);
	assert_int_equal(oa->oa_type, CONFIG_OUTAUTH_EXCHANGE);
	assert_string_equal(oa->oa_tx_url, "https://idp.example/token");
	assert_string_equal(oa->oa_tx_client_id, "vmcp");
	assert_string_equal(oa->oa_tx_secret, "s3cret");
	assert_string_equal(oa->oa_tx_audience, "github-mcp");
	assert_string_equal(oa->oa_tx_scopes, "repo read:org");
	assert_string_equal(oa->oa_tx_subject_type,
	    "urn:ietf:params:oauth:token-type:id_token");
	config_free(cf);
	unsetenv("VMCPD_TEST_TXS");

	/* the defaults; http:// to loopback */
	cf = load_ok(TX_HEAD "        tokenUrl: http://127.0.0.1:9/token\n");
	oa = config_backend_find(cf, "a")->cb_outauth;
	assert_string_equal(oa->oa_tx_subject_type, CONFIG_TX_ACCESS_TOKEN);
	assert_null(oa->oa_tx_client_id);
	assert_null(oa->oa_tx_secret);
	assert_null(oa->oa_tx_audience);
	assert_null(oa->oa_tx_scopes);
	config_free(cf);
	assert_int_equal(config_outauth_loopback("[::1]:80/t"), 1);
	assert_int_equal(config_outauth_loopback("localhost/t"), 1);
	assert_int_equal(config_outauth_loopback("127.0.0.1"), 1);
	assert_int_equal(config_outauth_loopback("127.evil.com/"), 0);
	assert_int_equal(config_outauth_loopback("127.0.0.1.nip.io/"), 0);
	assert_int_equal(config_outauth_loopback("10.0.0.1/"), 0);
}

static void
test_err_outauth_exchange(void **state)
{
	(void)state;
	load_bad(TX_HEAD "        clientId: x\n",
	    "t.yaml:15:9: outgoingAuth.backends.a.tokenExchange: missing "
	    "required key \"tokenUrl\"");
	load_bad(TX_HEAD "        tokenUrl: http://idp.example/token\n",
	    "t.yaml:15:19: outgoingAuth.backends.a.tokenExchange.tokenUrl: "
	    "expected an https:// URL (http:// only to 127.0.0.1, [::1] or "
	    "localhost), found \"http://idp.example/token\"");
	load_bad(TX_HEAD "        tokenUrl: https://i/t\n"
	    "        clientSecret: s\n",
	    "t.yaml:15:9: outgoingAuth.backends.a.tokenExchange: a client "
	    "secret needs clientId");
	setenv("VMCPD_TEST_TXS", "s3cret", 1);
	load_bad(TX_HEAD "        tokenUrl: https://i/t\n"
	    "        clientId: c\n        clientSecret: s\n"
	    "        clientSecretEnv: VMCPD_TEST_TXS\n",
	    "t.yaml:18:9: outgoingAuth.backends.a.tokenExchange: "
	    "clientSecret and clientSecretEnv are exclusive; set one");
	unsetenv("VMCPD_TEST_TXS");
	load_bad(TX_HEAD "        tokenUrl: https://i/t\n"
	    "        scopes: [\"a b\"]\n",
	    "t.yaml:16:18: outgoingAuth.backends.a.tokenExchange.scopes[0]: "
	    "expected an OAuth scope (RFC 6749 3.3: no spaces, quotes or "
	    "backslashes)");
	load_bad(TX_HEAD "        tokenUrl: https://i/t\n"
	    "        subjectTokenType: saml\n",
	    "t.yaml:16:27: outgoingAuth.backends.a.tokenExchange."
	    "subjectTokenType: expected access_token, id_token or jwt (or its "
	    "urn:ietf:params:oauth:token-type: URN), found \"saml\"");
	/* nothing to exchange without a client token */
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: token_exchange\n"
	    "    tokenExchange: {tokenUrl: https://i/t}\n",
	    "t.yaml:7:5: outgoingAuth: backend a uses token_exchange, which "
	    "needs incomingAuth type oidc (the client's access token is what "
	    "is exchanged)");
}

static void
test_auth_oidc(void **state)
{
	struct config		*cf;
	const struct config_oidc *oi;

	(void)state;
	/* the default: anonymous, loopback only */
	cf = load_ok(BACKEND);
	assert_int_equal(cf->cf_inauth.ci_type, CONFIG_INAUTH_ANONYMOUS);
	assert_int_equal(cf->cf_inauth.ci_anon_remote, 0);
	config_free(cf);

	setenv("VMCPD_TEST_SECRET", "s3cret", 1);
	cf = load_ok(OIDC_HEAD
	    "    issuer: https://idp.example.com/realms/eng\n"
	    "    audience: vmcp\n"
	    "    clientId: vmcpd\n"
	    "    clientSecretEnv: VMCPD_TEST_SECRET\n"
	    "    resource: https://vmcp.example.com/mcp\n"
	    "    jwksUrl: https://idp.example.com/jwks\n"
	    "    introspectionUrl: https://idp.example.com/introspect\n"
	    "    scopes: [openid, profile]\n"
	    "    caBundlePath: /etc/hostname\n"
	    "    jwksAllowPrivateIp: true\n"
	    "    clockSkew: 10s\n"
	    "daemon: {listen: \"0.0.0.0:4483\"}\n");
	oi = &cf->cf_inauth.ci_oidc;
	assert_int_equal(cf->cf_inauth.ci_type, CONFIG_INAUTH_OIDC);
	assert_string_equal(oi->oi_issuer, "https://idp.example.com/realms/eng");
	assert_string_equal(oi->oi_audience, "vmcp");
	assert_string_equal(oi->oi_client_id, "vmcpd");
	assert_string_equal(oi->oi_client_secret, "s3cret");
	assert_string_equal(oi->oi_resource, "https://vmcp.example.com/mcp");
	assert_string_equal(oi->oi_jwks_url, "https://idp.example.com/jwks");
	assert_string_equal(oi->oi_introspection_url,
	    "https://idp.example.com/introspect");
	assert_int_equal(oi->oi_nscopes, 2);
	assert_string_equal(oi->oi_scopes[1], "profile");
	assert_null(oi->oi_scopes[2]);
	assert_string_equal(oi->oi_ca_bundle, "/etc/hostname");
	assert_int_equal(oi->oi_jwks_private_ip, 1);
	assert_int_equal(oi->oi_insecure_http, 0);
	assert_int_equal(oi->oi_skew_ms, 10000);
	config_free(cf);

	/* the defaults; http with insecureAllowHttp */
	cf = load_ok(OIDC_HEAD "    issuer: http://127.0.0.1:9/\n"
	    "    audience: a\n    insecureAllowHttp: true\n");
	oi = &cf->cf_inauth.ci_oidc;
	assert_int_equal(oi->oi_skew_ms, 30000);
	assert_null(oi->oi_jwks_url);
	assert_null(oi->oi_scopes);
	assert_null(oi->oi_client_secret);
	config_free(cf);

	/* anonymous beyond loopback only when asked for */
	cf = load_ok(BACKEND "daemon: {listen: \"[::]:1\"}\n"
	    "incomingAuth: {type: anonymous, allowAnonymousRemote: true}\n");
	assert_int_equal(cf->cf_inauth.ci_anon_remote, 1);
	config_free(cf);
	cf = load_ok(BACKEND "daemon: {listen: \"localhost:1\"}\n");
	config_free(cf);

	/* local: on a Unix socket; anonymous there needs no flag */
	cf = load_ok(BACKEND "daemon: {listen: \"unix:/run/vmcpd.sock\"}\n"
	    "incomingAuth: {type: local}\n");
	assert_int_equal(cf->cf_inauth.ci_type, CONFIG_INAUTH_LOCAL);
	assert_string_equal(config_listen_unix_path(cf), "/run/vmcpd.sock");
	assert_int_equal(cf->cf_listen_port, 0);
	config_free(cf);
	cf = load_ok(BACKEND "daemon: {listen: \"unix:/run/vmcpd.sock\"}\n");
	assert_int_equal(cf->cf_inauth.ci_type, CONFIG_INAUTH_ANONYMOUS);
	config_free(cf);
	cf = load_ok(BACKEND);
	assert_null(config_listen_unix_path(cf));
	config_free(cf);
}

static void
test_err_oidc(void **state)
{
	(void)state;
	load_bad(BACKEND "daemon: {listen: \"0.0.0.0:1\"}\n",
	    "t.yaml:5:18: daemon.listen: 0.0.0.0 is not a loopback address and "
	    "incomingAuth is anonymous, so anyone who reaches it could use "
	    "every backend; configure incomingAuth.type: oidc, or set "
	    "incomingAuth.allowAnonymousRemote: true to accept this");
	load_bad(BACKEND "daemon: {listen: \"10.1.2.3:1\"}\n"
	    "incomingAuth: {type: anonymous, allowAnonymousRemote: false}\n",
	    "t.yaml:5:18: daemon.listen: 10.1.2.3 is not a loopback address "
	    "and "
	    "incomingAuth is anonymous, so anyone who reaches it could use "
	    "every backend; configure incomingAuth.type: oidc, or set "
	    "incomingAuth.allowAnonymousRemote: true to accept this");
	load_bad(OIDC_HEAD "    audience: a\n",
	    "t.yaml:8:5: incomingAuth.oidc: missing required key \"issuer\"");
	load_bad(OIDC_HEAD "    issuer: https://i/\n",
	    "t.yaml:8:5: incomingAuth.oidc: missing required key "
	    "\"audience\"");
	load_bad(OIDC_HEAD "    issuer: http://i/\n    audience: a\n",
	    "t.yaml:8:13: incomingAuth.oidc.issuer: an http:// URL needs "
	    "insecureAllowHttp: true (tokens and keys would travel "
	    "unprotected); use https://");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    jwksUrl: http://i/k\n",
	    "t.yaml:10:14: incomingAuth.oidc.jwksUrl: an http:// URL needs "
	    "insecureAllowHttp: true (tokens and keys would travel "
	    "unprotected); use https://");
	load_bad(OIDC_HEAD "    issuer: ftp://i/\n    audience: a\n",
	    "t.yaml:8:13: incomingAuth.oidc.issuer: expected an http:// or "
	    "https:// URL, found \"ftp://i/\"");
	load_bad(OIDC_HEAD "    issuer: https://u@i/\n    audience: a\n",
	    "t.yaml:8:13: incomingAuth.oidc.issuer: expected an http:// or "
	    "https:// URL with a host, no user info, fragment or spaces, "
	    "found \"https://u@i/\"");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: \"\"\n",
	    "t.yaml:9:15: incomingAuth.oidc.audience: expected a non-empty "
	    "string, found \"\"");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    clockSkew: 6m\n",
	    "t.yaml:10:16: incomingAuth.oidc.clockSkew: expected at most 5m");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    scopes: [\"a b\"]\n",
	    "t.yaml:10:14: incomingAuth.oidc.scopes: expected a scope name "
	    "without spaces, quotes or backslashes, found \"a b\"");
	unsetenv("VMCPD_TEST_NOSECRET");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    clientId: c\n    clientSecretEnv: VMCPD_TEST_NOSECRET\n",
	    "t.yaml:11:22: incomingAuth.oidc.clientSecretEnv: the environment "
	    "variable VMCPD_TEST_NOSECRET is not set or empty");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    caBundlePath: etc/ca.pem\n",
	    "t.yaml:10:19: incomingAuth.oidc.caBundlePath: expected an "
	    "absolute path, found \"etc/ca.pem\"");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    caBundlePath: /nonexistent/ca.pem\n",
	    "t.yaml:10:19: incomingAuth.oidc.caBundlePath: cannot read "
	    "/nonexistent/ca.pem");
	load_bad(OIDC_HEAD "    issuer: https://i/\n    audience: a\n"
	    "    insecureAllowHttp: yes\n",
	    "t.yaml:10:24: incomingAuth.oidc.insecureAllowHttp: expected true "
	    "or false, found \"yes\"");
	load_bad(BACKEND "incomingAuth:\n  type: anonymous\n"
	    "  oidc: {issuer: \"https://i/\", audience: a}\n",
	    "t.yaml:7:3: incomingAuth.oidc: only with type oidc");
}

#define AUTHZ_HEAD \
	BACKEND "incomingAuth:\n  type: anonymous\n  authz:\n"

/*
 * incomingAuth.authz: every policy parsed and checked at load, errors at
 * their place in the file; a valid cedar block loads (with an identity).
 */
static void
test_authz(void **state)
{
	struct config	*cf;

	(void)state;
	/* a literal block: the position inside it, in the file */
	load_bad(AUTHZ_HEAD "    type: cedar\n    policies:\n      - |\n"
	    "        permit(principal, action == Action::\"call_tool\",\n"
	    "               resource)\n"
	    "        when { resource.readOnlyHint == tru };\n",
	    "t.yaml:13:41: incomingAuth.authz.policies[0]: unknown name "
	    "'tru'");
	/* one-line plain and quoted scalars */
	load_bad(AUTHZ_HEAD "    type: cedar\n    policies:\n"
	    "      - permit(principal, action, resource) when { 1 + 2 };\n",
	    "t.yaml:10:54: incomingAuth.authz.policies[0]: arithmetic "
	    "(+ - *) is not supported");
	load_bad(AUTHZ_HEAD "    type: cedar\n"
	    "    policies: [\"permit(principal, action, resource);\", "
	    "\"permit(principal, action, resource) when { 1 + 2 };\"]\n",
	    "t.yaml:9:102: incomingAuth.authz.policies[1]: arithmetic "
	    "(+ - *) is not supported");
	/* folded text: at the scalar, with the policy's own position */
	load_bad(AUTHZ_HEAD "    type: cedar\n    policies:\n      - >\n"
	    "        permit(principal, action, resource)\n\n"
	    "        when { if };\n",
	    "t.yaml:10:9: incomingAuth.authz.policies[0]: line 2, column 8 "
	    "of the policy: if-then-else is not supported");
	/* an unknown action is an error, not a policy that never applies */
	load_bad(AUTHZ_HEAD "    type: cedar\n    policies:\n"
	    "      - permit(principal, action == Action::\"list_tools\", "
	    "resource);\n",
	    "t.yaml:10:9: incomingAuth.authz.policies[0]: unknown action "
	    "Action::\"list_tools\"");
	/* no policy is never allow-all */
	load_bad(AUTHZ_HEAD "    type: cedar\n    policies: []\n",
	    "t.yaml:9:15: incomingAuth.authz.policies: expected a non-empty "
	    "sequence of Cedar policy texts, found a sequence");
	load_bad(AUTHZ_HEAD "    type: cedar\n    policies: [\"// none\"]\n",
	    "t.yaml:9:16: incomingAuth.authz.policies[0]: holds no policy");
	load_bad(AUTHZ_HEAD "    type: cedar\n",
	    "t.yaml:8:11: incomingAuth.authz: type cedar needs policies (a "
	    "non-empty list; no list would allow everything)");
	load_bad(AUTHZ_HEAD "    groupClaimName: groups\n",
	    "t.yaml:8:5: incomingAuth.authz: missing required key \"type\"");
	load_bad(AUTHZ_HEAD "    type: none\n"
	    "    policies: [\"permit(principal, action, resource);\"]\n",
	    "t.yaml:9:5: incomingAuth.authz.policies: only with type: cedar");
	load_bad(AUTHZ_HEAD "    type: cedarv1\n",
	    "t.yaml:8:11: incomingAuth.authz.type: expected cedar or none, "
	    "found \"cedarv1\"");
	/* the store and the group type */
	load_bad(AUTHZ_HEAD "    type: cedar\n    entitiesJson: \"[1\"\n",
	    "t.yaml:9:19: incomingAuth.authz.entitiesJson: not JSON: "
	    "']' expected near end of file (line 1, column 2 of the value)");
	load_bad(AUTHZ_HEAD "    type: cedar\n    entitiesJson: \"[{}]\"\n",
	    "t.yaml:9:19: incomingAuth.authz.entitiesJson: an entity is an "
	    "object with a \"uid\"");
	load_bad(AUTHZ_HEAD "    type: cedar\n    groupEntityType: \"a b\"\n",
	    "t.yaml:9:22: incomingAuth.authz.groupEntityType: expected a "
	    "Cedar type name (letters, digits and _, parts joined by ::), "
	    "found \"a b\"");
	load_bad(AUTHZ_HEAD "    type: cedar\n    primaryUpstreamProvider: x\n",
	    "t.yaml:9:5: incomingAuth.authz.primaryUpstreamProvider is not "
	    "supported yet by this version of vmcpd");
	/* valid, but anonymous requests have no principal */
	load_bad(AUTHZ_HEAD "    type: cedar\n"
	    "    policies: [\"permit(principal, action, resource);\"]\n",
	    "t.yaml:8:11: incomingAuth.authz: type cedar needs an identity "
	    "(incomingAuth.type oidc or local); anonymous requests have no "
	    "principal and would all be denied");
	/* valid: loaded, with its store, claims and group type */
	cf = load_ok(BACKEND "incomingAuth:\n  type: oidc\n"
	    "  oidc: {issuer: \"https://i/\", audience: a}\n  authz:\n"
	    "    type: cedar\n    groupClaimName: groups\n"
	    "    roleClaimName: role\n    groupEntityType: NS::Group\n"
	    "    entitiesJson: '[{\"uid\": {\"type\": \"NS::Group\", "
	    "\"id\": \"eng\"}, \"attrs\": {}, \"parents\": []}]'\n"
	    "    policies:\n"
	    "      - permit(principal in NS::Group::\"eng\", action, "
	    "resource);\n"
	    "      - |\n        forbid(principal, action, resource)\n"
	    "        when { resource.destructiveHint == true };\n");
	assert_int_equal(cf->cf_inauth.ci_authz.az_cedar, 1);
	assert_int_equal(cedar_policyset_len(cf->cf_inauth.ci_authz.az_policies),
	    2);
	assert_non_null(cf->cf_inauth.ci_authz.az_entities);
	assert_string_equal(cf->cf_inauth.ci_authz.az_group_claim, "groups");
	assert_string_equal(cf->cf_inauth.ci_authz.az_role_claim, "role");
	assert_string_equal(cf->cf_inauth.ci_authz.az_group_type, "NS::Group");
	config_free(cf);
	/* type none is no authorization, as with no authz at all */
	cf = load_ok(AUTHZ_HEAD "    type: none\n");
	assert_int_equal(cf->cf_inauth.ci_authz.az_cedar, 0);
	assert_null(cf->cf_inauth.ci_authz.az_policies);
	config_free(cf);
}

static void
test_session_storage(void **state)
{
	struct config	*cf;
	char		*host;
	uint16_t	 port;

	(void)state;
	/* the default: this host's store, the reference's keys' defaults */
	cf = load_ok(BACKEND);
	assert_int_equal(cf->cf_sstore.css_provider, CONFIG_SSTORE_LMDB);
	assert_null(cf->cf_sstore.css_host);
	assert_string_equal(cf->cf_sstore.css_prefix, "thv:vmcp:session:");
	assert_string_equal(cf->cf_sstore.css_namespace, "local");
	config_free(cf);
	cf = load_ok(BACKEND "sessionStorage: {provider: memory}\n");
	assert_int_equal(cf->cf_sstore.css_provider, CONFIG_SSTORE_LMDB);
	config_free(cf);

	assert_int_equal(setenv("THV_SESSION_REDIS_PASSWORD", "s3cret", 1),
	    0);
	assert_int_equal(setenv("VMCP_NAMESPACE", "prod", 1), 0);
	cf = load_ok(BACKEND "sessionStorage:\n  provider: redis\n"
	    "  address: 10.0.0.7:6380\n  db: 3\n  keyPrefix: \"vmcp:\"\n");
	assert_int_equal(cf->cf_sstore.css_provider, CONFIG_SSTORE_REDIS);
	assert_string_equal(cf->cf_sstore.css_host, "10.0.0.7");
	assert_int_equal(cf->cf_sstore.css_port, 6380);
	assert_int_equal(cf->cf_sstore.css_db, 3);
	assert_string_equal(cf->cf_sstore.css_prefix, "vmcp:");
	assert_string_equal(cf->cf_sstore.css_password, "s3cret");
	assert_string_equal(cf->cf_sstore.css_namespace, "prod");
	config_free(cf);
	assert_int_equal(unsetenv("THV_SESSION_REDIS_PASSWORD"), 0);
	assert_int_equal(unsetenv("VMCP_NAMESPACE"), 0);
	cf = load_ok(BACKEND "sessionStorage: {provider: redis, "
	    "address: \"[::1]:7000\"}\n");
	assert_string_equal(cf->cf_sstore.css_host, "::1");
	assert_int_equal(cf->cf_sstore.css_port, 7000);
	assert_null(cf->cf_sstore.css_password);
	config_free(cf);
	cf = load_ok(BACKEND "sessionStorage: {provider: redis, "
	    "address: redis.example}\n");
	assert_string_equal(cf->cf_sstore.css_host, "redis.example");
	assert_int_equal(cf->cf_sstore.css_port, 6379);
	config_free(cf);

	load_bad(BACKEND "sessionStorage: {}\n",
	    "t.yaml:5:17: sessionStorage: missing required key \"provider\"");
	load_bad(BACKEND "sessionStorage: {provider: etcd}\n",
	    "t.yaml:5:28: sessionStorage.provider: expected lmdb, memory or "
	    "redis, found \"etcd\"");
	load_bad(BACKEND "sessionStorage: {provider: redis}\n",
	    "t.yaml:5:17: sessionStorage: missing required key \"address\"");
	load_bad(BACKEND "sessionStorage: {provider: lmdb, address: a:1}\n",
	    "t.yaml:5:34: sessionStorage.address: only with provider redis");
	load_bad(BACKEND "sessionStorage: {provider: redis, address: "
	    "\"a:99999\"}\n",
	    "t.yaml:5:44: sessionStorage.address: expected a Redis address "
	    "host:port (or [IPv6]:port), found \"a:99999\"");
	load_bad(BACKEND "sessionStorage: {provider: redis, address: "
	    "\"::1:6379\"}\n",
	    "t.yaml:5:44: sessionStorage.address: expected a Redis address "
	    "host:port (or [IPv6]:port), found \"::1:6379\"");
	load_bad(BACKEND "sessionStorage: {provider: redis, address: a:1, "
	    "db: -1}\n",
	    "t.yaml:5:53: sessionStorage.db: expected an integer from 0 to "
	    "2147483647, found \"-1\"");
	load_bad(BACKEND "sessionStorage: {provider: redis, address: a:1, "
	    "keyPrefix: \"a b\"}\n",
	    "t.yaml:5:60: sessionStorage.keyPrefix: expected a key prefix "
	    "without spaces or control characters, found \"a b\"");
	load_bad(BACKEND "sessionStorage: {provider: redis, address: a:1, "
	    "password: x}\n",
	    "t.yaml:5:49: sessionStorage.password: unknown key, expected one "
	    "of: provider, address, db, keyPrefix, sealKeyFile");

	/* the address parser alone */
	assert_int_equal(config_sstore_address("h:1", &host, &port), 0);
	assert_string_equal(host, "h");
	assert_int_equal(port, 1);
	free(host);
	assert_int_equal(config_sstore_address("[fe80::1]", &host, &port), 0);
	assert_string_equal(host, "fe80::1");
	assert_int_equal(port, 6379);
	free(host);
	assert_int_equal(config_sstore_address("", &host, &port), -1);
	assert_int_equal(config_sstore_address(":6379", &host, &port), -1);
	assert_int_equal(config_sstore_address("h:", &host, &port), -1);
	assert_int_equal(config_sstore_address("[::1]x", &host, &port), -1);
	assert_int_equal(config_sstore_address("[::1", &host, &port), -1);
	assert_int_equal(config_sstore_address("h:0", &host, &port), -1);
	assert_null(host);
}

/* a key file in dir, with this content and mode: its path */
static void
seal_key_write(char *path, size_t len, const char *dir, const char *name,
    const void *data, size_t dlen, mode_t mode)
{
	FILE	*f;

	(void)snprintf(path, len, "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(data, 1, dlen, f), dlen);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

#define SEAL_HEAD	TX_HEAD "        tokenUrl: https://idp.example/token\n" \
	"sessionStorage:\n  provider: redis\n  address: 127.0.0.1:6379\n"

/* sessionStorage.sealKeyFile: the key the nodes seal tokens with */
static void
test_session_storage_seal_key(void **state)
{
	static const char	 hex[] = "000102030405060708090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1f\n";
	struct config		*cf;
	char			 dir[] = "/tmp/vmcpd-sealkey-XXXXXX";
	char			 path[256], yaml[1024], msg[512];
	uint8_t			 key[32], want[32];
	size_t			 i;

	(void)state;
	for (i = 0; i < 32; i++)
		want[i] = (uint8_t)i;
	assert_non_null(mkdtemp(dir));

	/* hex, base64 (padded or not, either alphabet), raw */
	assert_int_equal(config_sstore_key_decode(hex, sizeof(hex) - 1, key),
	    0);
	assert_memory_equal(key, want, 32);
	assert_int_equal(config_sstore_key_decode("AAECAwQFBgcICQoLDA0ODxAREh"
	    "MUFRYXGBkaGxwdHh8=\n", 45, key), 0);
	assert_memory_equal(key, want, 32);
	assert_int_equal(config_sstore_key_decode("AAECAwQFBgcICQoLDA0ODxAREh"
	    "MUFRYXGBkaGxwdHh8", 43, key), 0);
	assert_memory_equal(key, want, 32);
	assert_int_equal(config_sstore_key_decode((const char *)want, 32, key),
	    0);
	assert_memory_equal(key, want, 32);
	/* a byte short or long, a bad digit, bits left over */
	assert_int_equal(config_sstore_key_decode(hex, 62, key), -1);
	assert_int_equal(config_sstore_key_decode("x" "00102030405060708090a0b"
	    "0c0d0e0f101112131415161718191a1b1c1d1e1f", 64, key), -1);
	assert_int_equal(config_sstore_key_decode("AAECAwQFBgcICQoLDA0ODxAREh"
	    "MUFRYXGBkaGxwdHh9=", 44, key), -1);
	assert_int_equal(config_sstore_key_decode("", 0, key), -1);
	memset(path, 'k', 33);
	assert_int_equal(config_sstore_key_decode(path, 33, key), -1);

	/* read at load; the key held, its path kept */
	seal_key_write(path, sizeof(path), dir, "k", hex, sizeof(hex) - 1,
	    0600);
	(void)snprintf(yaml, sizeof(yaml), SEAL_HEAD "  sealKeyFile: %s\n",
	    path);
	cf = load_ok(yaml);
	assert_int_equal(cf->cf_sstore.css_have_seal_key, 1);
	assert_memory_equal(cf->cf_sstore.css_seal_key, want, 32);
	assert_string_equal(cf->cf_sstore.css_seal_key_file, path);
	config_free(cf);
	/* 0400 is fine too */
	assert_int_equal(chmod(path, 0400), 0);
	cf = load_ok(yaml);
	config_free(cf);

	/* redis and token_exchange without it: refused, naming it */
	load_bad(SEAL_HEAD, "t.yaml:17:3: sessionStorage: backend a uses "
	    "token_exchange, and with provider redis its tokens are shared "
	    "sealed: set sessionStorage.sealKeyFile to a file of 32 random "
	    "bytes, the same on every node (openssl rand -base64 32 > FILE; "
	    "chmod 600 FILE)");
	/* without token_exchange it is not needed */
	cf = load_ok(BACKEND "sessionStorage: {provider: redis, "
	    "address: a:1}\n");
	assert_int_equal(cf->cf_sstore.css_have_seal_key, 0);
	config_free(cf);

	/* readable by group or others */
	assert_int_equal(chmod(path, 0640), 0);
	(void)snprintf(msg, sizeof(msg), "t.yaml:19:16: "
	    "sessionStorage.sealKeyFile: %s may be read or written by group "
	    "or others (mode 0640): chmod 600 it", path);
	load_bad(yaml, msg);
	assert_int_equal(chmod(path, 0604), 0);
	(void)snprintf(msg, sizeof(msg), "t.yaml:19:16: "
	    "sessionStorage.sealKeyFile: %s may be read or written by group "
	    "or others (mode 0604): chmod 600 it", path);
	load_bad(yaml, msg);
	/* unreadable (as root, mode 0 reads: only when not root) */
	if (geteuid() != 0) {
		assert_int_equal(chmod(path, 0), 0);
		(void)snprintf(msg, sizeof(msg), "t.yaml:19:16: "
		    "sessionStorage.sealKeyFile: cannot read %s: Permission "
		    "denied", path);
		load_bad(yaml, msg);
	}
	assert_int_equal(unlink(path), 0);
	/* missing */
	(void)snprintf(msg, sizeof(msg), "t.yaml:19:16: "
	    "sessionStorage.sealKeyFile: cannot read %s: No such file or "
	    "directory", path);
	load_bad(yaml, msg);
	/* the wrong size; the content never quoted */
	seal_key_write(path, sizeof(path), dir, "k", "c2hvcnQ=\n", 9, 0600);
	(void)snprintf(msg, sizeof(msg), "t.yaml:19:16: "
	    "sessionStorage.sealKeyFile: %s does not hold a 32-byte key: 32 "
	    "bytes, 64 hex digits or their base64 (openssl rand -base64 32)",
	    path);
	load_bad(yaml, msg);
	assert_int_equal(unlink(path), 0);
	/* a directory */
	(void)snprintf(yaml, sizeof(yaml), SEAL_HEAD "  sealKeyFile: %s\n",
	    dir);
	(void)snprintf(msg, sizeof(msg), "t.yaml:19:16: "
	    "sessionStorage.sealKeyFile: %s is not a regular file", dir);
	load_bad(yaml, msg);
	/* a relative path */
	load_bad(SEAL_HEAD "  sealKeyFile: seal.key\n", "t.yaml:19:16: "
	    "sessionStorage.sealKeyFile: expected an absolute path, found "
	    "\"seal.key\"");
	/* with lmdb too (users' links outlive a restart) */
	seal_key_write(path, sizeof(path), dir, "k", hex, sizeof(hex) - 1,
	    0600);
	(void)snprintf(yaml, sizeof(yaml), BACKEND "sessionStorage: "
	    "{provider: lmdb, sealKeyFile: %s}\n", path);
	cf = load_ok(yaml);
	assert_int_equal(cf->cf_sstore.css_have_seal_key, 1);
	assert_memory_equal(cf->cf_sstore.css_seal_key, want, 32);
	config_free(cf);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void
test_rate_limiting(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(BACKEND "rateLimiting:\n"
	    "  shared: {maxTokens: 1000, refillPeriod: 1m}\n"
	    "  perUser: {maxTokens: 100, refillPeriod: 1m30s}\n"
	    "  tools:\n"
	    "    - name: expensive_search\n"
	    "      perUser: {maxTokens: 10, refillPeriod: 1h}\n");
	assert_true(cf->cf_ratelimit.crl_enabled);
	assert_int_equal(cf->cf_ratelimit.crl_shared.cb_max, 1000);
	assert_int_equal(cf->cf_ratelimit.crl_shared.cb_period_ms, 60000);
	assert_int_equal(cf->cf_ratelimit.crl_per_user.cb_max, 100);
	assert_int_equal(cf->cf_ratelimit.crl_per_user.cb_period_ms, 90000);
	assert_int_equal(cf->cf_ratelimit.crl_ntools, 1);
	assert_string_equal(cf->cf_ratelimit.crl_tools[0].ctl_name,
	    "expensive_search");
	assert_int_equal(cf->cf_ratelimit.crl_tools[0].ctl_shared.cb_max, 0);
	assert_int_equal(cf->cf_ratelimit.crl_tools[0].ctl_per_user.cb_max,
	    10);
	config_free(cf);

	cf = load_ok(BACKEND);
	assert_false(cf->cf_ratelimit.crl_enabled);
	config_free(cf);

	load_bad(BACKEND "rateLimiting: {}\n",
	    "t.yaml:5:15: rateLimiting: expected at least one of \"shared\", "
	    "\"perUser\" or \"tools\"");
	load_bad(BACKEND "rateLimiting:\n  shared: {maxTokens: 0, "
	    "refillPeriod: 1m}\n",
	    "t.yaml:6:23: rateLimiting.shared.maxTokens: expected an integer "
	    "from 1 to 1000000000, found \"0\"");
	load_bad(BACKEND "rateLimiting:\n  shared: {maxTokens: 5}\n",
	    "t.yaml:6:11: rateLimiting.shared: missing required key "
	    "\"refillPeriod\"");
	load_bad(BACKEND "rateLimiting:\n  shared: {maxTokens: 5, "
	    "refillPeriod: 0s}\n",
	    "t.yaml:6:40: rateLimiting.shared.refillPeriod: expected a "
	    "duration greater than 0 (such as 30s, 5m or 1h30m), found "
	    "\"0s\"");
	load_bad(BACKEND "rateLimiting:\n  perUser: {maxTokens: 5, "
	    "refill: 1m}\n",
	    "t.yaml:6:27: rateLimiting.perUser.refill: unknown key, expected "
	    "one of: maxTokens, refillPeriod");
	load_bad(BACKEND "rateLimiting:\n  tools:\n    - name: x\n",
	    "t.yaml:7:7: rateLimiting.tools[0]: expected \"shared\" or "
	    "\"perUser\" (or both)");
	load_bad(BACKEND "rateLimiting:\n  tools:\n"
	    "    - {name: x, shared: {maxTokens: 1, refillPeriod: 1s}}\n"
	    "    - {name: x, shared: {maxTokens: 1, refillPeriod: 1s}}\n",
	    "t.yaml:8:14: rateLimiting.tools[1].name: duplicate tool \"x\" "
	    "(first in rateLimiting.tools[0])");
	load_bad(BACKEND "rateLimiting:\n  tools:\n"
	    "    - {shared: {maxTokens: 1, refillPeriod: 1s}}\n",
	    "t.yaml:7:7: rateLimiting.tools[0]: missing required key "
	    "\"name\"");
}

static void
test_audit(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(BACKEND);
	assert_false(cf->cf_audit.ca_enabled);
	assert_string_equal(cf->cf_audit.ca_component, "vmcpd");
	assert_int_equal(cf->cf_audit.ca_max_data, 1024);
	config_free(cf);

	cf = load_ok(BACKEND "audit:\n  enabled: true\n"
	    "  logFile: /var/log/vmcpd/audit.jsonl\n"
	    "  component: eng-vmcp\n"
	    "  eventTypes: [mcp_tool_call, http_request]\n"
	    "  excludeEventTypes: [mcp_ping]\n"
	    "  includeRequestData: true\n"
	    "  maxDataSize: 4096\n");
	assert_true(cf->cf_audit.ca_enabled);
	assert_string_equal(cf->cf_audit.ca_log_file,
	    "/var/log/vmcpd/audit.jsonl");
	assert_string_equal(cf->cf_audit.ca_component, "eng-vmcp");
	assert_int_equal(cf->cf_audit.ca_ntypes, 2);
	assert_string_equal(cf->cf_audit.ca_types[1], "http_request");
	assert_int_equal(cf->cf_audit.ca_nexclude, 1);
	assert_true(cf->cf_audit.ca_request_data);
	assert_int_equal(cf->cf_audit.ca_max_data, 4096);
	config_free(cf);

	/* a composite run's events can be chosen too */
	cf = load_ok(BACKEND "audit:\n  enabled: true\n"
	    "  eventTypes: [vmcp_workflow_failed, vmcp_workflow_step_failed]\n"
	    "  excludeEventTypes: [vmcp_workflow_step_skipped]\n");
	assert_int_equal(cf->cf_audit.ca_ntypes, 2);
	assert_string_equal(cf->cf_audit.ca_types[1],
	    "vmcp_workflow_step_failed");
	config_free(cf);

	load_bad(BACKEND "audit:\n  eventTypes: [mcp_tool_calls]\n",
	    "t.yaml:6:16: audit.eventTypes: expected an audit event type "
	    "(mcp_initialize, mcp_tool_call, mcp_resource_read, http_request, "
	    "...; see vmcpd.yaml(5)), found \"mcp_tool_calls\"");
	load_bad(BACKEND "audit:\n  logFile: audit.log\n",
	    "t.yaml:6:12: audit.logFile: an absolute path expected");
	load_bad(BACKEND "audit:\n  includeResponseData: true\n",
	    "t.yaml:6:3: audit.includeResponseData is not supported yet by "
	    "this version of vmcpd");
	load_bad(BACKEND "audit:\n  maxDataSize: 0\n",
	    "t.yaml:6:16: audit.maxDataSize: expected a size from 1 to 1MiB "
	    "(bytes, or a number with a K, M, G or T suffix), found \"0\"");
	load_bad(BACKEND "audit:\n  enable: true\n",
	    "t.yaml:6:3: audit.enable: unknown key, did you mean "
	    "\"enabled\"?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded),
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_two_configs),
		cmocka_unit_test(test_http_front),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_err_syntax),
		cmocka_unit_test(test_err_alias),
		cmocka_unit_test(test_err_tag),
		cmocka_unit_test(test_err_documents),
		cmocka_unit_test(test_err_depth),
		cmocka_unit_test(test_err_unknown_key),
		cmocka_unit_test(test_failure_handling),
		cmocka_unit_test(test_answer_buffer),
		cmocka_unit_test(test_err_not_supported),
		cmocka_unit_test(test_composite_tools),
		cmocka_unit_test(test_err_type),
		cmocka_unit_test(test_err_escape),
		cmocka_unit_test(test_err_range),
		cmocka_unit_test(test_err_size),
		cmocka_unit_test(test_err_duration),
		cmocka_unit_test(test_err_diagnostics),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_err_duplicate),
		cmocka_unit_test(test_err_missing),
		cmocka_unit_test(test_err_backends),
		cmocka_unit_test(test_err_listen),
		cmocka_unit_test(test_err_sessions),
		cmocka_unit_test(test_err_perworkload),
		cmocka_unit_test(test_err_auth),
		cmocka_unit_test(test_outauth),
		cmocka_unit_test(test_err_outauth),
		cmocka_unit_test(test_outauth_exchange),
		cmocka_unit_test(test_err_outauth_exchange),
		cmocka_unit_test(test_auth_oidc),
		cmocka_unit_test(test_err_oidc),
		cmocka_unit_test(test_err_loglevel),
		cmocka_unit_test(test_multi),
		cmocka_unit_test(test_stdio),
		cmocka_unit_test(test_aggregation),
		cmocka_unit_test(test_new_values),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_err_stdio),
		cmocka_unit_test(test_backend_era),
		cmocka_unit_test(test_err_multi),
		cmocka_unit_test(test_err_aggregation),
		cmocka_unit_test(test_err_priority),
		cmocka_unit_test(test_err_tools),
		cmocka_unit_test(test_err_overrides),
		cmocka_unit_test(test_err_new_sessions),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_authz),
		cmocka_unit_test(test_rate_limiting),
		cmocka_unit_test(test_session_storage),
		cmocka_unit_test(test_session_storage_seal_key),
		cmocka_unit_test(test_audit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
