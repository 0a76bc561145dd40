/*
 * The web leg's pure pieces (worker/link/link_page.c): a query's
 * parameters, a state's two shapes, the leg's cookie, escaping.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared/link_rec.h"
#include "shared/http_client.h"
#include "worker/link/link_int.h"

#define ID	"vmcpd-e-0123456789abcdef0123456789abcdef"
#define NONCE	"abcdefghijABCDEFGHIJ0123456789-_abcdefghij"

static void
test_query(void **state)
{
	char	 out[16];

	(void)state;
	assert_int_equal(link_query_get("a=1&code=x%2By+z&b", "code", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "x+y z");
	assert_int_equal(link_query_get("xcode=1&code=", "code", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(link_query_get("code", "code", out, sizeof(out)), -1);
	assert_int_equal(link_query_get("code=%0a", "code", out,
	    sizeof(out)), -1);
	assert_int_equal(link_query_get("code=%4", "code", out,
	    sizeof(out)), -1);
	assert_int_equal(link_query_get("code=0123456789abcdef", "code", out,
	    sizeof(out)), -1);
	assert_int_equal(link_query_get(NULL, "code", out, sizeof(out)), -1);
}

static void
test_state(void **state)
{
	char	 id[CONSENT_ID_LEN + 1], nonce[CONSENT_NONCE_LEN + 1];

	(void)state;
	assert_int_equal(strlen(NONCE "k"), CONSENT_NONCE_LEN);
	assert_int_equal(link_state_split(ID "." NONCE "k", id, sizeof(id),
	    nonce, sizeof(nonce)), 0);
	assert_string_equal(id, ID);
	assert_string_equal(nonce, NONCE "k");
	/* either shape wrong: refused */
	assert_int_equal(link_state_split(ID "." NONCE, id, sizeof(id),
	    nonce, sizeof(nonce)), -1);
	assert_int_equal(link_state_split(ID "." NONCE "!", id, sizeof(id),
	    nonce, sizeof(nonce)), -1);
	assert_int_equal(link_state_split("vmcpd-e-0123456789abcdef0123456789"
	    "abcdeF." NONCE "k", id, sizeof(id), nonce, sizeof(nonce)), -1);
	assert_int_equal(link_state_split(ID NONCE "k", id, sizeof(id), nonce,
	    sizeof(nonce)), -1);
}

static void
test_cookie(void **state)
{
	char	 a[40], b[40], out[40];

	(void)state;
	assert_int_equal(link_cookie_value("verifier-1", a, sizeof(a)), 0);
	assert_int_equal(link_cookie_value("verifier-2", b, sizeof(b)), 0);
	assert_int_equal(strlen(a), 32);
	assert_string_not_equal(a, b);
	assert_null(strstr(a, "verifier"));
	assert_int_equal(link_cookie_get("x=1; vmcpd_e=abc ; y=2", "vmcpd_e",
	    out, sizeof(out)), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(link_cookie_get("xvmcpd_e=abc", "vmcpd_e", out,
	    sizeof(out)), -1);
	assert_int_equal(link_cookie_get(NULL, "vmcpd_e", out, sizeof(out)),
	    -1);
}

static void
test_escape(void **state)
{
	char	*e;
	size_t	 n;

	(void)state;
	e = link_html_escape("<b a=\"x\">'&'</b>");
	assert_string_equal(e, "&lt;b a=&quot;x&quot;&gt;&#39;&amp;&#39;"
	    "&lt;/b&gt;");
	free(e);
	e = NULL;
	n = 0;
	assert_int_equal(http_body_add(&e, &n, "ab", 2, 4), 0);
	assert_int_equal(http_body_add(&e, &n, "cd", 2, 4), 0);
	assert_string_equal(e, "abcd");
	assert_int_equal(http_body_add(&e, &n, "e", 1, 4), 1);
	assert_int_equal(n, 4);
	free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_cookie),
		cmocka_unit_test(test_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
