/*
 * vmcpctl's operator commands: status (the daemon's /status, read from
 * the diagnostics listener, for a terminal), and in an incident:
 * reprobe (forget a backend's era record, initialize cache and health
 * record: the next request probes it again), rebuild-views (drop the stored views:
 * the next list rebuilds them from the backends), drop-sessions (drop
 * the identity scopes' backend sessions of a backend: the next listing
 * opens a new one).  The writes are the daemon's own deletes, each in
 * its own short write transaction; workers notice on their next read.
 */
#include <sys/types.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "shared/health.h"
#include "shared/health_probe.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "tools/vmcpctl.h"

#define CTL_STATUS_MAX	(16 * 1024 * 1024)

char	ctl_diag_addr[300];

int
ctl_opt_json(int argc, char *argv[], int *json, int nargs)
{
	int ch;

	*json = 0;
	optind = 0;
	while ((ch = getopt(argc, argv, "+j")) != -1) {
		switch (ch) {
		case 'j':
			*json = 1;
			break;
		default:
			ctl_usage();
			return 1;
		}
	}
	if (argc - optind != nargs) {
		ctl_usage();
		return 1;
	}
	return 0;
}

struct ctl_buf {
	char	*cb_data;
	size_t	 cb_len;
};

static size_t
ctl_curl_write(char *p, size_t size, size_t n, void *arg)
{
	struct ctl_buf	*b = arg;
	char		*q;

	n *= size;
	if (b->cb_len + n > CTL_STATUS_MAX ||
	    (q = realloc(b->cb_data, b->cb_len + n + 1)) == NULL)
		return 0;
	memcpy(q + b->cb_len, p, n);
	b->cb_data = q;
	b->cb_len += n;
	q[b->cb_len] = '\0';
	return n;
}

/* GET /status from the diagnostics listener, decoded, or NULL */
static json_t *
ctl_status_get(void)
{
	struct ctl_buf		 b = { NULL, 0 };
	struct curl_slist	*hdrs = NULL;
	CURL			*c;
	CURLcode		 rc;
	json_t			*o = NULL;
	json_error_t		 jerr;
	char			 url[400];
	long		 code = 0;

	if (ctl_diag_addr[0] == '\0') {
		warnx("status: daemon.diagnostics is not set in the "
		    "configuration (-f file): /status is served there");
		return NULL;
	}
	(void)snprintf(url, sizeof(url), "http://%s/status", ctl_diag_addr);
	if ((c = curl_easy_init()) == NULL) {
		warnx("status: cannot start libcurl");
		return NULL;
	}
	(void)curl_easy_setopt(c, CURLOPT_URL, url);
	/*
	 * A local client, whatever address the listener has: the name the
	 * Host check (DNS rebinding) always admits, not a wildcard's.
	 */
	if ((hdrs = curl_slist_append(NULL, "Host: localhost")) != NULL)
		(void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	(void)curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	(void)curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	(void)curl_easy_setopt(c, CURLOPT_PROXY, "");
	(void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ctl_curl_write);
	(void)curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(c);
	(void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK)
		warnx("status: %s: %s", url, curl_easy_strerror(rc));
	else if (code != 200)
		warnx("status: %s: HTTP %ld", url, code);
	else if ((o = json_loadb(b.cb_data, b.cb_len, 0, &jerr)) == NULL ||
	    !json_is_object(o)) {
		warnx("status: %s: not a JSON object: %s", url, jerr.text);
		json_decref(o);
		o = NULL;
	}
	free(b.cb_data);
	return o;
}

static long long
ctl_int(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

const char *
ctl_str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : dflt;
}

/* a latency in ms, or "-" */
static const char *
ctl_ms(char *buf, size_t len, const json_t *v)
{
	if (!json_is_number(v))
		return "-";
	(void)snprintf(buf, len, "%.1fms", json_number_value(v));
	return buf;
}

static void
ctl_status_print(const json_t *s)
{
	const json_t	*lm = json_object_get(s, "lmdb"), *x, *e, *le;
	size_t		 i;
	long long	 nerr;
	const char	*k;
	char		 b1[32], b2[32];
	json_t		*v;

	printf("%s %s, generation %lld; answered by worker %lld (pid %lld)\n",
	    ctl_str(s, "name", "vmcpd"), ctl_str(s, "version", "?"),
	    ctl_int(s, "generation"), ctl_int(s, "worker"), ctl_int(s, "pid"));
	printf("sessions %lld, pending relays %lld, view builds %lld, era "
	    "changes %lld\n", ctl_int(s, "sessions"),
	    ctl_int(s, "pendingRelays"), ctl_int(s, "viewBuilds"),
	    ctl_int(s, "eraChanges"));
	if (lm != NULL)
		printf("lmdb: %lld of %lld bytes used, readers %lld/%lld\n",
		    ctl_int(lm, "usedBytes"), ctl_int(lm, "mapSize"),
		    ctl_int(lm, "readers"), ctl_int(lm, "maxReaders"));
	printf("\n%-6s %-8s %10s %10s %8s\n", "worker", "pid", "requests",
	    "mcp", "restarts");
	json_array_foreach(json_object_get(s, "workers"), i, x)
		printf("%-6lld %-8lld %10lld %10lld %8lld\n",
		    ctl_int(x, "slot"), ctl_int(x, "pid"),
		    ctl_int(x, "requests"),
		    ctl_int(x, "mcpRequests"), ctl_int(x, "restarts"));
	printf("\n%-20s %-16s %-10s %-9s %-9s %9s %7s %9s %9s\n", "backend",
	    "transport", "revision", "health", "breaker", "requests",
	    "errors", "latency", "mean");
	json_array_foreach(json_object_get(s, "backends"), i, x) {
		nerr = 0;
		json_object_foreach((json_t *)json_object_get(x, "errors"), k,
		    v)
			nerr += json_integer_value(v);
		printf("%-20s %-16s %-10s %-9s %-9s %9lld %7lld %9s %9s\n",
		    ctl_str(x, "name", "?"), ctl_str(x, "transport", "?"),
		    ctl_str(x, "mcpRevision", "-"),
		    ctl_str(x, "health", "unknown"),
		    ctl_str(x, "breaker", "unknown"), ctl_int(x, "requests"),
		    nerr, ctl_ms(b1, sizeof(b1), json_object_get(x,
		    "latencyMs")), ctl_ms(b2, sizeof(b2), json_object_get(x,
		    "meanLatencyMs")));
		if ((e = json_object_get(x, "era")) != NULL &&
		    json_is_object(e))
			printf("  era %s since %s: %s\n",
			    ctl_str(e, "era", "?"), ctl_str(e, "at", "?"),
			    ctl_str(e, "why", "?"));
		/* sessionStorage redis: another node's verdict followed */
		if (json_is_string(json_object_get(x, "healthFrom")))
			printf("  health as node %s found it\n",
			    ctl_str(x, "healthFrom", "?"));
		if ((le = json_object_get(x, "lastError")) != NULL &&
		    json_is_object(le))
			printf("  last error at %s: %s\n", ctl_str(le, "at",
			    "?"), ctl_str(le, "message", "?"));
	}
}

/* the arguments' check: status reads no store */
int
ctl_status(struct store *st, int argc, char *argv[])
{
	int json;

	(void)st;
	return ctl_opt_json(argc, argv, &json, 0);
}

int
ctl_status_show(int argc, char *argv[])
{
	json_t	*s;
	int	 json;

	if (ctl_opt_json(argc, argv, &json, 0) != 0)
		return 1;
	if ((s = ctl_status_get()) == NULL)
		return 1;
	if (json) {
		if (json_dumpf(s, stdout, JSON_INDENT(2)) == -1)
			warnx("status: cannot print it");
		putchar('\n');
	} else
		ctl_status_print(s);
	json_decref(s);
	return 0;
}

/* the keys of db that match, collected first: no store call inside an
 * iteration (its read transaction) */
struct ctl_keys {
	const char	*ck_suffix;	/* "|name", or NULL: every key */
	char		**ck_keys;
	size_t		 ck_n;
	int		 ck_err;
};

static int
ctl_keys_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct ctl_keys	 *ck = arg;
	char		**k, *p;
	size_t		  sl;

	(void)rec;
	if (ck->ck_suffix != NULL && ((sl = strlen(ck->ck_suffix)) > klen ||
	    memcmp((const char *)key + klen - sl, ck->ck_suffix, sl) != 0))
		return 0;
	if ((k = reallocarray(ck->ck_keys, ck->ck_n + 1, sizeof(*k))) ==
	    NULL || (p = malloc(klen + 1)) == NULL) {
		if (k != NULL)
			ck->ck_keys = k;
		ck->ck_err = 1;
		return 1;
	}
	memcpy(p, key, klen);
	p[klen] = '\0';
	ck->ck_keys = k;
	ck->ck_keys[ck->ck_n++] = p;
	return 0;
}

/* delete db's records whose key ends in suffix (NULL: all); how many */
static long
ctl_delete(struct store *st, enum store_db db, const char *suffix)
{
	struct ctl_keys	 ck = { suffix, NULL, 0, 0 };
	size_t		 i;
	long		 n = 0;

	if (store_iter(st, db, store_now_ms(), 1, ctl_keys_cb, &ck) == -1 ||
	    ck.ck_err)
		n = -1;
	for (i = 0; i < ck.ck_n; i++) {
		if (n != -1 && store_del(st, db, ck.ck_keys[i],
		    strlen(ck.ck_keys[i])) == 0)
			n++;
		free(ck.ck_keys[i]);
	}
	free(ck.ck_keys);
	if (n == -1)
		warnx("cannot read or change the %s db", store_db_name(db));
	return n;
}

static int
ctl_backend_arg(int argc, char *argv[], const char **name)
{
	int json;

	if (ctl_opt_json(argc, argv, &json, 1) != 0 || json) {
		if (json)
			ctl_usage();
		return 1;
	}
	*name = argv[optind];
	if (**name == '\0' || strchr(*name, '|') != NULL) {
		warnx("%s: not a backend name", *name);
		return 1;
	}
	return 0;
}

int
ctl_reprobe(struct store *st, int argc, char *argv[])
{
	const char	*name;
	int		 era, info, health;

	if (ctl_backend_arg(argc, argv, &name) != 0)
		return 1;
	if (st == NULL)
		return 0;
	era = store_del(st, STORE_ERAS, name, strlen(name));
	info = store_del(st, STORE_BACKENDS, name, strlen(name));
	/* its health starts over: unknown until the next health check */
	health = health_probe_clear(st, name);
	if (era == -1 && info == -1 && health == -1) {
		warnx("backend %s: cannot change the store", name);
		return 1;
	}
	printf("backend %s: %s%s; the next request to it probes it again\n",
	    name, era == 0 ? "era record dropped" :
	    "no era record (not probed yet, or its era is pinned)",
	    health == 1 ? ", health record dropped" : "");
	return 0;
}

int
ctl_rebuild_views(struct store *st, int argc, char *argv[])
{
	long	n;
	int	json;

	if (ctl_opt_json(argc, argv, &json, 0) != 0 || json) {
		if (json)
			ctl_usage();
		return 1;
	}
	if (st == NULL)
		return 0;
	if ((n = ctl_delete(st, STORE_VIEWS, NULL)) == -1)
		return 1;
	printf("%ld view records dropped; the next list rebuilds the views "
	    "from the backends\n", n);
	return 0;
}

int
ctl_drop_sessions(struct store *st, int argc, char *argv[])
{
	const char	*name;
	char		 suffix[300];
	long		 n;

	if (ctl_backend_arg(argc, argv, &name) != 0)
		return 1;
	if (st == NULL)
		return 0;
	(void)snprintf(suffix, sizeof(suffix), "|%s", name);
	if ((n = ctl_delete(st, STORE_BSESSIONS, suffix)) == -1)
		return 1;
	printf("backend %s: %ld identity scope sessions dropped; the next "
	    "listing opens a new one\n", name, n);
	return 0;
}
