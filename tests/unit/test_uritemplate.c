/*
 * proto/uritemplate.c: RFC 6570 URI template matching, table-driven:
 * literals, simple, reserved {+x}, fragment {#x}, label, path, path
 * parameters, query, several variables, prefix and explode modifiers,
 * non-matches, malformed templates, limits, and no backtracking.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/uritemplate.h"

struct tm_case {
	const char	*t;
	const char	*u;
	int		 m;
};

static void
test_template_match(void **state)
{
	static const struct tm_case c[] = {
		/* literals */
		{ "res://static", "res://static", 1 },
		{ "res://static", "res://Static", 0 },
		{ "res://static", "res://static/", 0 },
		{ "", "", 1 },
		{ "", "x", 0 },
		/* simple: no / ? #, not empty */
		{ "file:///{path}", "file:///notes", 1 },
		{ "file:///{path}", "file:///a%2Fb", 1 },
		{ "file:///{path}", "file:///a/b", 0 },
		{ "file:///{path}", "file:///a?x=1", 0 },
		{ "file:///{path}", "file:///a#top", 0 },
		{ "file:///{path}", "file:///", 0 },
		{ "repo://{owner}/{repo}/issues/{id}",
		    "repo://octo/hello/issues/42", 1 },
		{ "repo://{owner}/{repo}/issues/{id}",
		    "repo://octo/hello/pulls/42", 0 },
		{ "repo://{owner}/{repo}/issues/{id}",
		    "repo://octo/hello/issues/42/x", 0 },
		{ "res://{id}.json", "res://42.json", 1 },
		{ "res://{id}.json", "res://4.2.json", 1 },
		{ "res://{id}.json", "res://.json", 0 },
		{ "{x,y}", "1,2", 1 },
		{ "{list}", "red,green,blue", 1 },
		{ "{keys*}", "a=1,b=2", 1 },
		{ "{a}{b}", "x", 0 },
		{ "{a}{b}", "xy", 1 },
		/* reserved: anything, not empty */
		{ "file:///{+path}", "file:///a/b/c.txt", 1 },
		{ "file:///{+path}", "file:///a?b#c", 1 },
		{ "file:///{+path}", "file:///", 0 },
		{ "{+base}/x", "http://h/y/x", 1 },
		/* fragment */
		{ "page{#section}", "page#intro", 1 },
		{ "page{#section}", "page", 1 },
		{ "page{#section}", "page#a/b?c", 1 },
		{ "page{#section}", "pagex", 0 },
		/* label */
		{ "doc{.fmt}", "doc.json", 1 },
		{ "doc{.fmt}", "doc", 1 },
		{ "doc{.fmt}", "doc.tar.gz", 1 },
		{ "doc{.fmt}", "doc.a/b", 0 },
		{ "doc{.fmt}", "docx", 0 },
		/* path segments */
		{ "/users{/id}", "/users", 1 },
		{ "/users{/id}", "/users/42", 1 },
		{ "/users{/id}", "/users/42/x", 0 },
		{ "/users{/id}", "/users42", 0 },
		{ "/a{/x,y}", "/a/1/2", 1 },
		{ "/a{/x,y}", "/a/1/2/3", 0 },
		{ "/a{/x,y}/end", "/a/1/end", 1 },
		{ "/a{/path*}", "/a/1/2/3", 1 },
		{ "/a{/path*}", "/a/1?x", 0 },
		/* path-style parameters */
		{ "m{;x,y}", "m;x=1;y=2", 1 },
		{ "m{;x,y}", "m;x;y=2", 1 },
		{ "m{;x,y}", "m;y=2", 1 },
		{ "m{;x,y}", "m", 1 },
		{ "m{;x,y}", "m;z=1", 0 },
		{ "m{;x,y}", "m;y=1;x=2", 0 },
		{ "m{;x,y}", "m;x=1/2", 0 },
		{ "m{;p*}", "m;a=1;b;c=3", 1 },
		/* query */
		{ "weather://{city}{?units,lang}", "weather://paris", 1 },
		{ "weather://{city}{?units,lang}",
		    "weather://paris?units=metric", 1 },
		{ "weather://{city}{?units,lang}",
		    "weather://paris?units=metric&lang=fr", 1 },
		{ "weather://{city}{?units,lang}", "weather://paris?lang=fr",
		    1 },
		{ "weather://{city}{?units,lang}", "weather://paris?units=",
		    1 },
		{ "weather://{city}{?units,lang}",
		    "weather://paris?lang=fr&units=metric", 0 },
		{ "weather://{city}{?units,lang}",
		    "weather://paris?other=1", 0 },
		/* {var} excludes only / ? #: '&' and '=' pass, as in SDKs */
		{ "weather://{city}{?units,lang}",
		    "weather://paris&units=metric", 1 },
		{ "weather://{city}?units={u}", "weather://paris", 0 },
		{ "weather://{city}{?units,lang}", "weather://paris?units",
		    0 },
		{ "weather://{city}{?units,lang}",
		    "weather://paris?units=a&units=b", 0 },
		{ "weather://{city}{?units,lang}",
		    "weather://paris?units=1#f", 0 },
		{ "s{?q*}", "s?a=1&b=2&c=3", 1 },
		{ "s{?q*}", "s", 1 },
		{ "s{?x,q*}", "s?x=1&a=2&b=3", 1 },
		{ "s{?x,q*}", "s?a=2", 1 },
		{ "s{?x}{&page}", "s?x=1&page=2", 1 },
		{ "s{?x}{&page}", "s&page=2", 1 },
		{ "s{&page}", "s?page=2", 0 },
		{ "s{?a.b,c%41}", "s?a.b=1&c%41=2", 1 },
		{ "s{?list:3}", "s?list=abc", 1 },
		/* several variables in one template */
		{ "repo://{owner}/{repo}{/path*}{?ref}",
		    "repo://octo/hello/src/main.c?ref=v1", 1 },
		{ "repo://{owner}/{repo}{/path*}{?ref}",
		    "repo://octo/hello", 1 },
		{ "repo://{owner}/{repo}{/path*}{?ref}",
		    "repo://octo", 0 },
		{ "db://{host}:{port}/{+table}", "db://h:5432/s/t", 1 },
		{ "db://{host}:{port}/{+table}", "db://h/s/t", 0 },
		{ "{scheme}://{+rest}{#frag}", "a://b/c#d", 1 },
		/* prefix modifiers: parsed, the length not checked */
		{ "res://{id:3}", "res://abc", 1 },
		{ "res://{id:3}", "res://abcdef", 1 },
		{ "res://{id:3}", "res://", 0 },
		{ "res://{+p:2}/x", "res://a/b/x", 1 },
		/* explode */
		{ "res://{list*}", "res://a,b,c", 1 },
		{ "res://{list*}", "res://a/b", 0 },
		{ "res://{+list*}", "res://a/b", 1 },
		{ "doc{.ext*}", "doc.tar.gz", 1 },
		/* non-matches: literal around expressions, case, truncation */
		{ "res://{id}/meta", "res://42/data", 0 },
		{ "res://{id}/meta", "res://42/meta/", 0 },
		{ "res://{id}/meta", "RES://42/meta", 0 },
		{ "res://{id}", "res:/42", 0 },
		{ "res://{id}", "", 0 },
		{ "page{#section}", "page#", 1 },
		{ "page{#section}x", "page#ax", 1 },
		/* malformed templates never match */
		{ "res://{id", "res://{id", 0 },
		{ "res://id}", "res://id}", 0 },
		{ "res://{}", "res://x", 0 },
		{ "res://{=x}", "res://x", 0 },
		{ "res://{!x}", "res://x", 0 },
		{ "res://{a b}", "res://x", 0 },
		{ "res://{x:0}", "res://x", 0 },
		{ "res://{x:10000}", "res://x", 0 },
		{ "res://{x..y}", "res://x", 0 },
		{ "res://{.x.}", "res://.x", 0 },
		{ "res://{%4}", "res://x", 0 },
		{ "res://{x,}", "res://x", 0 },
		{ "res://{x*y}", "res://x", 0 },
		{ "res://{{x}}", "res://x", 0 },
		{ "res://{x:9999}", "res://x", 1 },
		{ "res://{x.y}", "res://x", 1 },
		{ "res://{%41_b}", "res://x", 1 },
	};
	size_t	i;
	char	*big;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (uritemplate_match(c[i].t, c[i].u) != c[i].m)
			fail_msg("template \"%s\" uri \"%s\": want %d", c[i].t,
			    c[i].u, c[i].m);
	assert_int_equal(uritemplate_match(NULL, "x"), 0);
	assert_int_equal(uritemplate_match("x", NULL), 0);

	/* over the limits: no match even when it would */
	big = malloc(URITEMPLATE_URI_MAX + 2);
	assert_non_null(big);
	memset(big, 'a', URITEMPLATE_URI_MAX + 1);
	big[URITEMPLATE_URI_MAX + 1] = '\0';
	assert_int_equal(uritemplate_match("{+x}", big), 0);
	big[URITEMPLATE_URI_MAX] = '\0';
	assert_int_equal(uritemplate_match("{+x}", big), 1);
	assert_int_equal(uritemplate_match(big, big), 0);
	big[URITEMPLATE_TMPL_MAX] = '\0';
	assert_int_equal(uritemplate_match(big, big), 1);
	free(big);
}

/* no backtracking blow-up: many adjacent expressions, a long miss */
static void
test_template_match_linear(void **state)
{
	char	 t[4000], u[16384];
	clock_t	 start;
	size_t	 i;

	(void)state;
	for (i = 0; i + 3 < sizeof(t) - 1; i += 3)
		memcpy(t + i, "{a}", 3);
	t[i] = '\0';
	memset(u, 'a', sizeof(u) - 2);
	u[sizeof(u) - 2] = '/';
	u[sizeof(u) - 1] = '\0';
	start = clock();
	assert_int_equal(uritemplate_match(t, u), 0);
	u[sizeof(u) - 2] = 'a';
	assert_int_equal(uritemplate_match(t, u), 1);
	/* seconds would mean backtracking; a linear scan takes well under */
	assert_true((double)(clock() - start) / CLOCKS_PER_SEC < 20.0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_match),
		cmocka_unit_test(test_template_match_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
