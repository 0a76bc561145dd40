/*
 * Session records: id minting, the JSON codec, expiry arithmetic and a
 * round trip through a real store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/store.h"
#include "proto/headers.h"
#include "worker/process/process.h"
#include "worker/state/session.h"

static void
test_mint_id(void **state)
{
	char	a[SESSION_ID_LEN + 1], b[SESSION_ID_LEN + 1];
	size_t	i;

	(void)state;
	assert_int_equal(session_mint_id(a), 0);
	assert_int_equal(session_mint_id(b), 0);
	assert_int_equal(strlen(a), SESSION_ID_LEN);
	assert_string_not_equal(a, b);
	assert_true(proto_session_id_valid(a));
	for (i = 0; i < SESSION_ID_LEN; i++)
		assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkl"
		    "mnopqrstuvwxyz0123456789-_", a[i]));
}

static void
fill(struct session *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->s_id, "abc");
	s->s_version = strdup("2025-11-25");
	s->s_owner = strdup("");
	s->s_client_caps = json_pack("{s:{}}", "elicitation");
	s->s_client_info = json_pack("{s:s, s:s}", "name", "c", "version", "1");
	s->s_initialized = 1;
	s->s_created_ms = 1000;
	s->s_seen_ms = 2000;
	s->s_max_ms = 90000;
	assert_int_equal(session_backend_set(s, "everything", "bsid-1",
	    "2025-11-25"), 0);
	assert_int_equal(session_backend_set(s, "stateless", NULL, "2025-06-18"),
	    0);
}

static void
test_codec_round_trip(void **state)
{
	struct session		 s, d;
	struct session_backend	*sb;
	char			*buf;
	size_t			 len;

	(void)state;
	fill(&s);
	assert_int_equal(session_encode(&s, &buf, &len), 0);
	assert_int_equal(session_decode(buf, len, &d), 0);
	assert_string_equal(d.s_version, "2025-11-25");
	assert_true(json_equal(d.s_client_caps, s.s_client_caps));
	assert_true(json_equal(d.s_client_info, s.s_client_info));
	assert_int_equal(d.s_initialized, 1);
	assert_int_equal(d.s_created_ms, 1000);
	assert_int_equal(d.s_seen_ms, 2000);
	assert_int_equal(d.s_max_ms, 90000);
	assert_null(d.s_log_level);
	assert_int_equal(d.s_nbackends, 2);
	assert_non_null(sb = session_backend_get(&d, "everything"));
	assert_string_equal(sb->sb_sid, "bsid-1");
	assert_non_null(sb = session_backend_get(&d, "stateless"));
	assert_null(sb->sb_sid);
	assert_string_equal(sb->sb_version, "2025-06-18");
	assert_null(session_backend_get(&d, "nope"));
	free(buf);
	session_clear(&s);
	session_clear(&d);
}

static void
test_backend_replace(void **state)
{
	struct session s;

	(void)state;
	fill(&s);
	assert_int_equal(session_backend_set(&s, "everything", "bsid-2", NULL),
	    0);
	assert_int_equal(s.s_nbackends, 2);
	assert_string_equal(session_backend_get(&s, "everything")->sb_sid,
	    "bsid-2");
	assert_null(session_backend_get(&s, "everything")->sb_version);
	session_clear(&s);
}

static void
test_decode_rejects(void **state)
{
	struct session	s;
	static const char *bad[] = {
		"",
		"[]",
		"{\"v\":1}",
		"{\"v\":2,\"pv\":\"x\",\"owner\":\"\",\"init\":true,"
		    "\"created\":1,\"seen\":1,\"max\":1,\"backends\":{}}",
		"{\"v\":1,\"pv\":\"x\",\"owner\":\"\",\"init\":true,"
		    "\"created\":1,\"seen\":1,\"max\":1,\"backends\":[]}",
		"{\"v\":1,\"pv\":\"x\",\"owner\":\"\",\"init\":true,"
		    "\"created\":1,\"seen\":1,\"max\":1,"
		    "\"backends\":{\"b\":{\"sid\":5}}}",
	};
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(session_decode(bad[i], strlen(bad[i]), &s),
		    -1);
}

static void
test_expiry(void **state)
{
	struct session s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.s_seen_ms = 1000;
	s.s_max_ms = 100000;
	assert_int_equal(session_expiry(&s, 5000), 6000);
	/* the absolute cap wins over the sliding ttl */
	assert_int_equal(session_expiry(&s, 500000), 100000);
}

/* a store in dir (a mkdtemp() template) holding fill()'s session */
static struct store *
store_with_abc(char *dir, const char *level, uint64_t now)
{
	struct store	*st;
	struct session	 s;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(store_open(&st, dir, 16 << 20, 126, 0), 0);
	fill(&s);
	if (level != NULL)
		assert_non_null(s.s_log_level = strdup(level));
	s.s_seen_ms = now;
	s.s_max_ms = now + 60000;
	assert_int_equal(session_save(st, &s, 10000, now), 0);
	session_clear(&s);
	return st;
}

static void
store_gone(struct store *st, const char *dir)
{
	char	cmd[128];

	session_cache_free();
	store_close(st);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void
test_store_round_trip(void **state)
{
	struct store	*st;
	struct session	 d;
	char		 dir[] = "/tmp/vmcpd-test-session-XXXXXX";
	uint64_t	 now = store_now_ms();

	(void)state;
	st = store_with_abc(dir, NULL, now);
	assert_int_equal(session_load(st, "abc", now, &d), 0);
	assert_string_equal(d.s_id, "abc");
	assert_string_equal(session_backend_get(&d, "everything")->sb_sid,
	    "bsid-1");
	session_clear(&d);
	/* past the sliding ttl it is gone */
	assert_int_equal(session_load(st, "abc", now + 10001, &d),
	    STORE_NOTFOUND);
	assert_int_equal(session_load(st, "nope", now, &d), STORE_NOTFOUND);
	assert_int_equal(session_delete(st, "abc"), 0);
	assert_int_equal(session_load(st, "abc", now, &d), STORE_NOTFOUND);
	store_gone(st, dir);
}

/*
 * A load served from the worker's cache is session_copy()'s one block:
 * changing it (a backend's session replaced, a backend added, the log
 * level set) frees nothing in the block, and the cache keeps its values.
 */
static void
test_cached_copy_changed(void **state)
{
	struct store	*st;
	struct session	 d;
	char		 dir[] = "/tmp/vmcpd-test-session-XXXXXX";
	uint64_t	 now = store_now_ms();

	(void)state;
	st = store_with_abc(dir, "info", now);
	/* the first load may decode; the second is the cache's copy */
	assert_int_equal(session_load(st, "abc", now, &d), 0);
	session_clear(&d);
	assert_int_equal(session_load(st, "abc", now, &d), 0);
	assert_non_null(d.s_pack);
	assert_string_equal(d.s_log_level, "info");
	assert_int_equal(session_backend_set(&d, "everything", "bsid-2",
	    "2025-11-25"), 0);
	assert_int_equal(session_backend_set(&d, "third", "bsid-3", NULL), 0);
	session_str_free(&d, d.s_log_level);
	assert_non_null(d.s_log_level = strdup("debug"));
	assert_int_equal(d.s_nbackends, 3);
	assert_string_equal(session_backend_get(&d, "everything")->sb_sid,
	    "bsid-2");
	assert_string_equal(session_backend_get(&d, "stateless")->sb_version,
	    "2025-06-18");
	assert_string_equal(session_backend_get(&d, "third")->sb_sid,
	    "bsid-3");
	session_clear(&d);
	assert_int_equal(session_load(st, "abc", now, &d), 0);
	assert_string_equal(d.s_log_level, "info");
	assert_int_equal(d.s_nbackends, 2);
	assert_string_equal(session_backend_get(&d, "everything")->sb_sid,
	    "bsid-1");
	session_clear(&d);
	store_gone(st, dir);
}

static void
group_of(int family, const char *addr, char *buf, size_t len, int want)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 sl;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
		sl = sizeof(*sin);
	} else if (family == AF_INET6) {
		assert_int_equal(inet_pton(AF_INET6, addr, &sin6->sin6_addr),
		    1);
		sl = sizeof(*sin6);
	} else
		sl = sizeof(ss);
	assert_int_equal(session_client_group((struct sockaddr *)&ss, sl, buf,
	    len), want);
}

/* what sessions.maxPerAddress counts by */
static void
test_client_group(void **state)
{
	char buf[SESSION_GROUP_MAX];

	(void)state;
	group_of(AF_INET, "127.0.0.2", buf, sizeof(buf), 0);
	assert_string_equal(buf, "127.0.0.2");
	/* a v4 client on a v6 socket is that v4 address */
	group_of(AF_INET6, "::ffff:192.0.2.7", buf, sizeof(buf), 0);
	assert_string_equal(buf, "192.0.2.7");
	/* an IPv6 client by its /64 */
	group_of(AF_INET6, "2001:db8:1:2:aaaa:bbbb:cccc:dddd", buf,
	    sizeof(buf), 0);
	assert_string_equal(buf, "2001:db8:1:2::/64");
	group_of(AF_INET6, "2001:db8:1:2::1", buf, sizeof(buf), 0);
	assert_string_equal(buf, "2001:db8:1:2::/64");
	group_of(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", buf,
	    sizeof(buf), 0);
	assert_true(strlen(buf) < SESSION_GROUP_MAX);
	group_of(AF_INET6, "::1", buf, sizeof(buf), 0);
	assert_string_equal(buf, "::/64");
	/* too small a buffer, or another family */
	group_of(AF_INET, "127.0.0.1", buf, 5, -1);
	group_of(AF_UNIX, NULL, buf, sizeof(buf), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mint_id),
		cmocka_unit_test(test_codec_round_trip),
		cmocka_unit_test(test_backend_replace),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_store_round_trip),
		cmocka_unit_test(test_cached_copy_changed),
		cmocka_unit_test(test_client_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
