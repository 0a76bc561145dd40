/*
 * Unit tests for shared/config_outauth_code.c: outgoingAuth type
 * authorization_code (per-user upstream accounts), key by key: the
 * accepted forms, the defaults, the exact message of each refusal, its
 * needs (incomingAuth oidc with a client), the warning without a seal
 * key file, and the client secret never in a message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "config_unit.h"

#define SECRET	"s3cr3t-cl13nt"

#define IDP \
	"incomingAuth:\n  type: oidc\n  oidc:\n" \
	"    issuer: https://idp.example\n    audience: vmcp\n" \
	"    clientId: vmcpd\n    clientSecretEnv: VMCPD_TEST_IDPS\n"
#define AC_HEAD	BACKEND IDP \
	"outgoingAuth:\n  backends:\n    a:\n" \
	"      type: authorization_code\n      authorizationCode:\n"
/* the least a section holds */
#define AC_MIN \
	"        authorizationUrl: https://gh.example/login/oauth/authorize\n" \
	"        tokenUrl: https://gh.example/login/oauth/access_token\n" \
	"        clientId: Iv1.abc\n" \
	"        callbackUrl: https://vmcpd.example/oauth/callback\n"

static int
setup(void **state)
{
	(void)state;
	setenv("VMCPD_TEST_IDPS", "idp-secret", 1);
	setenv("VMCPD_TEST_ACS", SECRET, 1);
	return 0;
}

static void
test_code_full(void **state)
{
	struct config			*cf;
	const struct config_outauth	*oa;
	char				*w;

	(void)state;
	cf = load_ok(AC_HEAD AC_MIN
	    "        clientSecretEnv: VMCPD_TEST_ACS\n"
	    "        scopes: [repo, \"read:org\"]\n"
	    "        tokenEndpointAuthMethod: client_secret_post\n"
	    "        extraAuthorizeParams: {prompt: consent, "
	    "access_type: offline}\n");
	oa = config_backend_find(cf, "a")->cb_outauth;
	assert_non_null(oa);
	assert_int_equal(oa->oa_type, CONFIG_OUTAUTH_CODE);
	assert_string_equal(config_outauth_name(oa->oa_type),
	    "authorization_code");
	assert_null(oa->oa_ac_issuer);
	assert_string_equal(oa->oa_ac_authorize_url,
	    "https://gh.example/login/oauth/authorize");
	assert_string_equal(oa->oa_ac_token_url,
	    "https://gh.example/login/oauth/access_token");
	assert_string_equal(oa->oa_ac_client_id, "Iv1.abc");
	assert_string_equal(oa->oa_ac_secret, SECRET);
	assert_string_equal(oa->oa_ac_secret_env, "VMCPD_TEST_ACS");
	assert_string_equal(oa->oa_ac_scopes, "repo read:org");
	assert_string_equal(oa->oa_ac_callback_url,
	    "https://vmcpd.example/oauth/callback");
	assert_int_equal(oa->oa_ac_secret_post, 1);
	assert_string_equal(oa->oa_ac_extra[0], "prompt");
	assert_string_equal(oa->oa_ac_extra[1], "consent");
	assert_string_equal(oa->oa_ac_extra[2], "access_type");
	assert_string_equal(oa->oa_ac_extra[3], "offline");
	assert_null(oa->oa_ac_extra[4]);
	/* no seal key file: links do not outlive a restart, said once */
	w = warnings(cf);
	assert_non_null(strstr(w, "t.yaml: warning: backend a uses "
	    "authorization_code without sessionStorage.sealKeyFile: users' "
	    "links are sealed under a key made at each start, so every "
	    "restart loses them and each user consents again\n"));
	assert_null(strstr(w, SECRET));
	free(w);
	config_free(cf);
}

static void
test_code_defaults(void **state)
{
	struct config			*cf;
	const struct config_outauth	*oa;

	(void)state;
	/* an issuer alone (RFC 8414 at run time); http to loopback; the
	 * default strategy; Basic; no secret, scopes or parameters */
	cf = load_ok(BACKEND IDP "outgoingAuth:\n  default:\n"
	    "    type: authorization_code\n    authorizationCode:\n"
	    "      issuer: http://127.0.0.1:9/as\n"
	    "      clientId: c\n"
	    "      callbackUrl: http://localhost:4483/oauth/callback\n");
	oa = config_backend_find(cf, "a")->cb_outauth;
	assert_int_equal(oa->oa_type, CONFIG_OUTAUTH_CODE);
	assert_string_equal(oa->oa_ac_issuer, "http://127.0.0.1:9/as");
	assert_null(oa->oa_ac_authorize_url);
	assert_null(oa->oa_ac_token_url);
	assert_null(oa->oa_ac_secret);
	assert_null(oa->oa_ac_scopes);
	assert_null(oa->oa_ac_extra);
	assert_int_equal(oa->oa_ac_secret_post, 0);
	config_free(cf);
	/* inline secret, basic said */
	cf = load_ok(AC_HEAD AC_MIN "        clientSecret: " SECRET "\n"
	    "        tokenEndpointAuthMethod: client_secret_basic\n");
	oa = config_backend_find(cf, "a")->cb_outauth;
	assert_string_equal(oa->oa_ac_secret, SECRET);
	assert_int_equal(oa->oa_ac_secret_post, 0);
	config_free(cf);
}

static void
test_code_refused(void **state)
{
	char	 err[CONFIG_ERR_MAX];

	(void)state;
	load_bad(AC_HEAD "        clientId: c\n"
	    "        callbackUrl: https://v.example/oauth/callback\n",
	    "t.yaml:17:9: outgoingAuth.backends.a.authorizationCode: needs "
	    "issuer, or both authorizationUrl and tokenUrl");
	load_bad(AC_HEAD AC_MIN "        issuer: https://gh.example\n",
	    "t.yaml:21:9: outgoingAuth.backends.a.authorizationCode: issuer "
	    "(its endpoints from its RFC 8414 metadata) and "
	    "authorizationUrl/tokenUrl are exclusive; set one");
	load_bad(AC_HEAD "        issuer: https://gh.example\n"
	    "        callbackUrl: https://v.example/oauth/callback\n",
	    "t.yaml:17:9: outgoingAuth.backends.a.authorizationCode: missing "
	    "required key \"clientId\"");
	load_bad(AC_HEAD "        issuer: https://gh.example\n"
	    "        clientId: c\n",
	    "t.yaml:17:9: outgoingAuth.backends.a.authorizationCode: missing "
	    "required key \"callbackUrl\"");
	load_bad(AC_HEAD "        issuer: http://gh.example\n",
	    "t.yaml:17:17: outgoingAuth.backends.a.authorizationCode.issuer: "
	    "expected an https:// URL (http:// only to 127.0.0.1, [::1] or "
	    "localhost), found \"http://gh.example\"");
	load_bad(AC_HEAD "        issuer: https://gh.example\n"
	    "        clientId: c\n"
	    "        callbackUrl: https://v.example/mcp/oauth/callback\n",
	    "t.yaml:19:22: outgoingAuth.backends.a.authorizationCode."
	    "callbackUrl: expected vmcpd's own URL ending in the path "
	    "/oauth/callback (no query), e.g. "
	    "https://vmcpd.example.com/oauth/callback, found "
	    "\"https://v.example/mcp/oauth/callback\"");
	load_bad(AC_HEAD "        issuer: https://gh.example\n"
	    "        clientId: c\n"
	    "        callbackUrl: https://v.example/oauth/callback?x=1\n",
	    "t.yaml:19:22: outgoingAuth.backends.a.authorizationCode."
	    "callbackUrl: expected vmcpd's own URL ending in the path "
	    "/oauth/callback (no query), e.g. "
	    "https://vmcpd.example.com/oauth/callback, found "
	    "\"https://v.example/oauth/callback?x=1\"");
	load_bad(AC_HEAD AC_MIN "        tokenEndpointAuthMethod: none\n",
	    "t.yaml:21:34: outgoingAuth.backends.a.authorizationCode."
	    "tokenEndpointAuthMethod: expected client_secret_basic or "
	    "client_secret_post, found \"none\"");
	load_bad(AC_HEAD AC_MIN "        extraAuthorizeParams: "
	    "{prompt: consent, state: x}\n",
	    "t.yaml:21:49: outgoingAuth.backends.a.authorizationCode."
	    "extraAuthorizeParams.state: state is a parameter vmcpd sets "
	    "itself");
	load_bad(AC_HEAD AC_MIN "        extraAuthorizeParams: "
	    "{code_challenge: x}\n",
	    "t.yaml:21:32: outgoingAuth.backends.a.authorizationCode."
	    "extraAuthorizeParams.code_challenge: code_challenge is a "
	    "parameter vmcpd sets itself");
	load_bad(AC_HEAD AC_MIN "        extraAuthorizeParams: {a: [1]}\n",
	    "t.yaml:21:35: outgoingAuth.backends.a.authorizationCode."
	    "extraAuthorizeParams.a: expected a string");
	load_bad(AC_HEAD AC_MIN "        refreshUrl: https://x\n",
	    "t.yaml:21:9: outgoingAuth.backends.a.authorizationCode.refreshUrl: "
	    "unknown key, expected one of: issuer, authorizationUrl, "
	    "tokenUrl, clientId, clientSecret, clientSecretEnv, scopes, "
	    "callbackUrl, tokenEndpointAuthMethod, extraAuthorizeParams");
	/* the secret never quoted, even when both forms are given */
	load_err(AC_HEAD AC_MIN "        clientSecret: " SECRET "\n"
	    "        clientSecretEnv: VMCPD_TEST_ACS\n", "exclusive", err,
	    sizeof(err));
	assert_string_equal(err, "t.yaml:22:9: outgoingAuth.backends.a."
	    "authorizationCode: clientSecret and clientSecretEnv are "
	    "exclusive; set one");
	/* the section with its type only */
	load_bad(AC_HEAD "        x: 1\n" "      tokenExchange: {}\n",
	    "t.yaml:17:9: outgoingAuth.backends.a.authorizationCode.x: unknown "
	    "key, expected one of: issuer, authorizationUrl, "
	    "tokenUrl, clientId, clientSecret, clientSecretEnv, scopes, "
	    "callbackUrl, tokenEndpointAuthMethod, extraAuthorizeParams");
	load_bad(BACKEND IDP "outgoingAuth:\n  backends:\n    a:\n"
	    "      type: authorization_code\n",
	    "t.yaml:15:13: outgoingAuth.backends.a: type authorization_code "
	    "needs an authorizationCode section (clientId, callbackUrl, issuer "
	    "or authorizationUrl and tokenUrl, ...)");
	load_bad(BACKEND IDP "outgoingAuth:\n  backends:\n    a:\n"
	    "      type: token_exchange\n"
	    "      tokenExchange: {tokenUrl: https://i/t}\n"
	    "      authorizationCode: {clientId: c, issuer: https://i, "
	    "callbackUrl: https://v/oauth/callback}\n",
	    "t.yaml:17:7: outgoingAuth.backends.a.authorizationCode: only "
	    "with type authorization_code");
}

/* the person logs in at the clients' issuer first: oidc, with a client */
static void
test_code_needs_oidc(void **state)
{
	(void)state;
	load_bad(BACKEND "outgoingAuth:\n  backends:\n    a:\n"
	    "      type: authorization_code\n      authorizationCode:\n" AC_MIN,
	    "t.yaml:7:5: outgoingAuth: backend a uses authorization_code, "
	    "which needs incomingAuth type oidc (the person who consents logs "
	    "in at that issuer in the browser first)");
	load_bad(BACKEND "incomingAuth:\n  type: oidc\n  oidc:\n"
	    "    issuer: https://idp.example\n    audience: vmcp\n"
	    "outgoingAuth:\n  backends:\n    a:\n"
	    "      type: authorization_code\n      authorizationCode:\n" AC_MIN,
	    "t.yaml:12:5: outgoingAuth: backend a uses authorization_code, "
	    "which needs incomingAuth.oidc.clientId and clientSecretEnv "
	    "(vmcpd's client at the issuer, where the person who consents "
	    "logs in in the browser first)");
	/* with redis, the nodes share the links: one seal key */
	load_bad(AC_HEAD AC_MIN "sessionStorage: {provider: redis, "
	    "address: a:1}\n",
	    "t.yaml:21:17: sessionStorage: backend a uses authorization_code, "
	    "and with provider redis its tokens are shared sealed: set "
	    "sessionStorage.sealKeyFile to a file of 32 random bytes, the "
	    "same on every node (openssl rand -base64 32 > FILE; chmod 600 "
	    "FILE)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_full),
		cmocka_unit_test(test_code_defaults),
		cmocka_unit_test(test_code_refused),
		cmocka_unit_test(test_code_needs_oidc),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
