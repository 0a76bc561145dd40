/*
 * Unit tests for daemon.console (shared/config_console.c): the token
 * from the environment or a file, the OIDC login, and the diagnostics
 * listener off loopback refused without either.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "config_unit.h"

#define TOKEN	"0123456789abcdef0123456789abcdef-console"
#define DIAG	"daemon:\n  diagnostics: 127.0.0.1:9100\n"
#define OFF	"daemon:\n  diagnostics: 0.0.0.0:9100\n"
#define ISSUER	"incomingAuth:\n  type: oidc\n  oidc:\n" \
		"    issuer: https://idp.example\n    audience: vmcp\n" \
		"    clientId: vmcp-login\n"

static void
test_console_token_env(void **state)
{
	struct config	*cf;

	(void)state;
	setenv("VMCPD_TEST_CONSOLE", TOKEN, 1);
	cf = load_ok(DIAG "  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n"
	    BACKEND);
	assert_int_equal(cf->cf_console.cc_on, 1);
	assert_string_equal(cf->cf_console.cc_token, TOKEN);
	assert_int_equal(cf->cf_console.cc_login, 0);
	assert_int_equal(cf->cf_console.cc_auth_reads, 0);
	assert_int_equal(cf->cf_console.cc_session_ttl_ms, 8 * 3600 * 1000);
	config_free(cf);
	/* off loopback: allowed with it, and reads need a login */
	cf = load_ok(OFF "  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n"
	    "    sessionTtl: 30m\n" BACKEND);
	assert_int_equal(cf->cf_console.cc_auth_reads, 1);
	assert_int_equal(cf->cf_console.cc_session_ttl_ms, 30 * 60 * 1000);
	config_free(cf);
	/* no console: the defaults */
	cf = load_ok(DIAG BACKEND);
	assert_int_equal(cf->cf_console.cc_on, 0);
	assert_null(cf->cf_console.cc_token);
	config_free(cf);

	setenv("VMCPD_TEST_CONSOLE", "short", 1);
	load_bad(DIAG "  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n" BACKEND,
	    "t.yaml:4:15: daemon.console.tokenEnv: the token has 5 bytes; "
	    "expected 32 to 512 (openssl rand -base64 32)");
	setenv("VMCPD_TEST_CONSOLE", TOKEN " x", 1);
	load_bad(DIAG "  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n" BACKEND,
	    "t.yaml:4:15: daemon.console.tokenEnv: the token holds a space "
	    "or a byte that is not printable ASCII");
	unsetenv("VMCPD_TEST_CONSOLE");
	load_bad(DIAG "  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n" BACKEND,
	    "t.yaml:4:15: daemon.console.tokenEnv: the environment variable "
	    "VMCPD_TEST_CONSOLE is not set or empty");
}

static void
test_console_token_file(void **state)
{
	struct config	*cf;
	char		 path[] = "/tmp/vmcpd-console-XXXXXX", yaml[512];
	int		 fd;

	(void)state;
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(write(fd, TOKEN "\n", sizeof(TOKEN)),
	    (ssize_t)sizeof(TOKEN));
	(void)close(fd);
	(void)snprintf(yaml, sizeof(yaml), DIAG "  console:\n    tokenFile: "
	    "%s\n" BACKEND, path);
	cf = load_ok(yaml);
	assert_string_equal(cf->cf_console.cc_token, TOKEN);
	config_free(cf);
	assert_int_equal(chmod(path, 0644), 0);
	load_err(yaml, "mode", yaml + 256, 256);
	assert_non_null(strstr(yaml + 256, "may be read or written by group "
	    "or others (mode 0644): chmod 600 it"));
	(void)unlink(path);
	load_bad(DIAG "  console:\n    tokenFile: relative\n" BACKEND,
	    "t.yaml:4:16: daemon.console.tokenFile: expected an absolute "
	    "path, found \"relative\"");
}

static void
test_console_login(void **state)
{
	struct config	*cf;

	(void)state;
	cf = load_ok(DIAG "  console:\n    login:\n      callbackUrl: "
	    "http://127.0.0.1:9100/console/callback\n      adminGroup: ops\n"
	    BACKEND ISSUER);
	assert_int_equal(cf->cf_console.cc_login, 1);
	assert_null(cf->cf_console.cc_token);
	assert_null(cf->cf_console.cc_client_id);	/* the issuer's */
	assert_string_equal(cf->cf_console.cc_admin_group, "ops");
	assert_string_equal(cf->cf_console.cc_groups_claim, "groups");
	config_free(cf);
	load_bad(DIAG "  console:\n    login:\n      callbackUrl: "
	    "http://127.0.0.1:9100/console/callback\n      adminGroup: ops\n"
	    BACKEND, "t.yaml:5:7: daemon.console.login: needs "
	    "incomingAuth.type oidc (the login is at its issuer)");
	load_bad(DIAG "  console:\n    login:\n      callbackUrl: "
	    "http://127.0.0.1:9100/cb\n      adminGroup: ops\n" BACKEND ISSUER,
	    "t.yaml:5:20: daemon.console.login.callbackUrl: expected the "
	    "console's URL as the browser reaches the diagnostics listener, "
	    "ending in /console/callback "
	    "(http://127.0.0.1:9090/console/callback), found "
	    "\"http://127.0.0.1:9100/cb\"");
	load_bad(DIAG "  console:\n    login:\n      callbackUrl: "
	    "http://127.0.0.1:9100/console/callback\n" BACKEND ISSUER,
	    "t.yaml:5:7: daemon.console.login: missing required key "
	    "\"adminGroup\"");
}

static void
test_console_errors(void **state)
{
	(void)state;
	/* the diagnostics off loopback need authentication */
	load_bad(OFF BACKEND,
	    "t.yaml:2:16: daemon.diagnostics: 0.0.0.0 is not a loopback "
	    "address and the listener has no authentication: set "
	    "daemon.console (tokenEnv, tokenFile or login) or bind it to "
	    "127.0.0.1");
	load_bad(DIAG "  console: {}\n" BACKEND,
	    "t.yaml:3:12: daemon.console: expected tokenEnv, tokenFile or "
	    "login (who may act on the console)");
	load_bad(DIAG "  console:\n    token: x\n" BACKEND,
	    "t.yaml:4:5: daemon.console.token: unknown key, expected one of: "
	    "tokenEnv, tokenFile, login, sessionTtl, authenticateReads");
	setenv("VMCPD_TEST_CONSOLE", TOKEN, 1);
	load_bad(OFF "  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n"
	    "    authenticateReads: false\n" BACKEND,
	    "t.yaml:5:24: daemon.console.authenticateReads: must be true "
	    "with daemon.diagnostics off loopback (0.0.0.0)");
	load_bad("daemon:\n  console:\n    tokenEnv: VMCPD_TEST_CONSOLE\n"
	    BACKEND, "t.yaml:3:5: daemon.console: needs daemon.diagnostics "
	    "(the console is served there)");
	unsetenv("VMCPD_TEST_CONSOLE");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_console_token_env),
		cmocka_unit_test(test_console_token_file),
		cmocka_unit_test(test_console_login),
		cmocka_unit_test(test_console_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
