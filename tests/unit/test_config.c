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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"

#define BACKEND \
	"backends:\n" \
	"  - name: a\n" \
	"    url: http://127.0.0.1:3001/mcp\n" \
	"    transport: streamable-http\n"

static struct config *
load_ok(const char *yaml)
{
	struct config	*cf;
	char		 err[CONFIG_ERR_MAX];

	err[0] = '\0';
	cf = config_load_buffer("t.yaml", yaml, strlen(yaml), err,
	    sizeof(err));
	if (cf == NULL)
		fail_msg("unexpected error: %s", err);
	return cf;
}

/* the load fails with exactly this message */
static void
load_bad(const char *yaml, const char *msg)
{
	struct config	*cf;
	char		 err[CONFIG_ERR_MAX];

	memset(err, 'x', sizeof(err));
	err[sizeof(err) - 1] = '\0';
	cf = config_load_buffer("t.yaml", yaml, strlen(yaml), err,
	    sizeof(err));
	if (cf != NULL) {
		config_free(cf);
		fail_msg("loaded, expected: %s", msg);
	}
	assert_string_equal(err, msg);
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
	assert_int_equal(cf->cf_session_ttl_ms, 30 * 60 * 1000);
	assert_int_equal(cf->cf_session_max_ms, 24 * 3600 * 1000);
	assert_int_equal(cf->cf_timeout_default_ms, 30000);
	assert_int_equal(cf->cf_verbose, 0);
	assert_int_equal(cf->cf_nbackends, 1);
	assert_int_equal(cf->cf_backends[0].cb_timeout_ms, 30000);
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
	check_defaults(cf);
	assert_string_equal(cf->cf_backends[0].cb_name, "everything");
	assert_string_equal(cf->cf_backends[0].cb_url,
	    "http://127.0.0.1:3001/mcp");
	assert_int_equal(cf->cf_backends[0].cb_transport,
	    TRANSPORT_STREAMABLE_HTTP);
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
	cf = load_ok("daemon:\n"
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
	    "maxReaders, drainTimeout, workerHeader");
	load_bad(BACKEND "listen: 1.2.3.4:5\n",
	    "t.yaml:5:1: listen: unknown key, expected one of: name, "
	    "groupRef, metadata, daemon, http, sessions, backends, "
	    "operational, incomingAuth, outgoingAuth");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: streamable-http\n    headers: {}\n",
	    "t.yaml:5:5: backends[0].headers: unknown key, expected one of: "
	    "name, url, transport");
	load_bad(BACKEND "incomingAuth:\n  type: anonymous\n  oidc: {}\n",
	    "t.yaml:7:3: incomingAuth.oidc: unknown key, expected one of: "
	    "type");
	load_bad(BACKEND "sessions:\n  TTL: 1h\n",
	    "t.yaml:6:3: sessions.TTL: unknown key, did you mean \"ttl\"?");
	/* a key that is not a scalar */
	load_bad("? [a, b]\n: 1\n" BACKEND,
	    "t.yaml:1:3: key: expected a key name, found a sequence");
}

static void
test_err_not_supported(void **state)
{
	(void)state;
	load_bad(BACKEND "aggregation:\n  conflictResolution: prefix\n",
	    "t.yaml:5:1: aggregation is not supported yet by this version "
	    "of vmcpd");
	load_bad("compositeTools: []\n" BACKEND,
	    "t.yaml:1:1: compositeTools is not supported yet by this "
	    "version of vmcpd");
	load_bad("passthroughHeaders: [X-Trace]\n" BACKEND,
	    "t.yaml:1:1: passthroughHeaders is not supported yet by this "
	    "version of vmcpd");
	load_bad(BACKEND "operational:\n  failureHandling:\n"
	    "    healthCheckInterval: 30s\n",
	    "t.yaml:6:3: operational.failureHandling is not supported yet "
	    "by this version of vmcpd");
	load_bad(BACKEND "outgoingAuth:\n  backends: {}\n",
	    "t.yaml:6:3: outgoingAuth.backends is not supported yet by this "
	    "version of vmcpd");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: streamable-http\n    caBundlePath: /ca.pem\n",
	    "t.yaml:5:5: backends[0].caBundlePath is not supported yet by "
	    "this version of vmcpd");
	/* every other reference key */
	load_bad("compositeToolRefs: []\n" BACKEND, "t.yaml:1:1: "
	    "compositeToolRefs is not supported yet by this version of vmcpd");
	load_bad("rateLimiting: {}\n" BACKEND, "t.yaml:1:1: "
	    "rateLimiting is not supported yet by this version of vmcpd");
	load_bad("audit: {}\n" BACKEND, "t.yaml:1:1: "
	    "audit is not supported yet by this version of vmcpd");
	load_bad("telemetry: {}\n" BACKEND, "t.yaml:1:1: "
	    "telemetry is not supported yet by this version of vmcpd");
	load_bad("optimizer: {}\n" BACKEND, "t.yaml:1:1: "
	    "optimizer is not supported yet by this version of vmcpd");
	load_bad("codeMode: {}\n" BACKEND, "t.yaml:1:1: "
	    "codeMode is not supported yet by this version of vmcpd");
	load_bad("sessionStorage: {}\n" BACKEND, "t.yaml:1:1: "
	    "sessionStorage is not supported yet by this version of vmcpd");
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
	    "t.yaml:1:7: name: a string may not contain NUL");
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
	/* long and odd values are escaped and cut */
	load_bad("daemon:\n  workers: \"\\t0123456789012345678901234567890"
	    "123456789012345678901234567890\\\"\"\n" BACKEND,
	    "t.yaml:2:12: daemon.workers: expected \"auto\" or an integer "
	    "from 1 to 256, found the quoted string \"\\t012345678901234567"
	    "89012345678901234567890123456...\"");
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
	    "t.yaml:2:5: backends[0]: missing required key \"url\"");
	load_bad("backends:\n  - {name: a, url: http://x/}\n",
	    "t.yaml:2:5: backends[0]: missing required key \"transport\"");
	load_bad(BACKEND "incomingAuth: {}\n",
	    "t.yaml:5:15: incomingAuth: missing required key \"type\"");
}

static void
test_err_backends(void **state)
{
	(void)state;
	load_bad("backends: []\n",
	    "t.yaml:1:11: backends: expected at least one backend, found an "
	    "empty sequence");
	load_bad(BACKEND "  - name: b\n    url: http://127.0.0.1:3002/mcp\n"
	    "    transport: streamable-http\n",
	    "t.yaml:5:5: only one backend is supported by this version of "
	    "vmcpd");
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
	load_bad("backends:\n  - name: a\n    url: ftp://x/\n",
	    "t.yaml:3:10: backends[0].url: expected an http:// or https:// "
	    "URL without whitespace, found \"ftp://x/\"");
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
	    "    transport: sse\n",
	    "t.yaml:4:16: transport sse is not supported yet by this "
	    "version of vmcpd");
	load_bad("backends:\n  - name: a\n    url: http://x/\n"
	    "    transport: stdio\n",
	    "t.yaml:4:16: transport stdio is not supported yet by this "
	    "version of vmcpd");
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
	    "t.yaml:6:9: incomingAuth type oidc is not supported yet by this "
	    "version of vmcpd");
	load_bad(BACKEND "incomingAuth:\n  type: local\n",
	    "t.yaml:6:9: incomingAuth type local is not supported yet by "
	    "this version of vmcpd");
	load_bad(BACKEND "incomingAuth:\n  type: none\n",
	    "t.yaml:6:9: incomingAuth.type: expected anonymous, found "
	    "\"none\"");
	load_bad(BACKEND "outgoingAuth:\n  source: discovered\n",
	    "t.yaml:6:11: outgoingAuth source discovered is not supported "
	    "yet by this version of vmcpd");
	load_bad(BACKEND "outgoingAuth:\n  source: file\n",
	    "t.yaml:6:11: outgoingAuth.source: expected inline, found "
	    "\"file\"");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    type: token_exchange\n",
	    "t.yaml:7:11: outgoingAuth type token_exchange is not supported "
	    "yet by this version of vmcpd");
	load_bad(BACKEND "outgoingAuth:\n  default:\n    type: basic\n",
	    "t.yaml:7:11: outgoingAuth.default.type: expected "
	    "unauthenticated, found \"basic\"");
	load_bad(BACKEND "outgoingAuth:\n  default:\n"
	    "    headerInjection: {headerName: X}\n",
	    "t.yaml:7:5: outgoingAuth.default.headerInjection is not "
	    "supported yet by this version of vmcpd");
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
check_duration_bad(const char *s)
{
	uint64_t	 ms = 12345;

	if (config_parse_duration(s, &ms) != -1)
		fail_msg("duration \"%s\" accepted", s);
	assert_int_equal(ms, 12345);
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
	/* overflow: digits, one term, the sum, bare seconds */
	check_duration_bad("18446744073709551616s");
	check_duration_bad("5124096h");
	check_duration_bad("5124095h35m");
	check_duration_bad("18446744074");
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded),
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_two_configs),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_err_syntax),
		cmocka_unit_test(test_err_alias),
		cmocka_unit_test(test_err_tag),
		cmocka_unit_test(test_err_documents),
		cmocka_unit_test(test_err_depth),
		cmocka_unit_test(test_err_unknown_key),
		cmocka_unit_test(test_err_not_supported),
		cmocka_unit_test(test_err_type),
		cmocka_unit_test(test_err_range),
		cmocka_unit_test(test_err_size),
		cmocka_unit_test(test_err_duration),
		cmocka_unit_test(test_err_duplicate),
		cmocka_unit_test(test_err_missing),
		cmocka_unit_test(test_err_backends),
		cmocka_unit_test(test_err_listen),
		cmocka_unit_test(test_err_sessions),
		cmocka_unit_test(test_err_perworkload),
		cmocka_unit_test(test_err_auth),
		cmocka_unit_test(test_err_loglevel),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
