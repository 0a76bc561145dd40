/*
 * vmcpd.yaml's server sections: the table-driven loaders of daemon,
 * http, sessions, metadata, operational and the incomingAuth hook
 * (struct field f_fn, called by config.c's load_root()), and the checks
 * that follow them once every section is loaded (session caps, each
 * backend's timeout).  backends is in config_backends.c, aggregation in
 * config_aggregation.c; the loader's internals are in config_load.h.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_load.h"

/*
 * Sections
 */

/* "host:port" or "[ipv6]:port" into *hostp (replaced) and *portp */
static int
load_hostport(struct loader *ld, struct cnode *v, const char *path,
    char **hostp, uint16_t *portp)
{
	char		 host[64], esc[SHOW_MAX * 4 + 8], *dup;
	const char	*s, *end, *port;
	struct in6_addr	 a6;
	struct in_addr	 a4;
	uint64_t	 n;
	size_t		 hlen;

	if (v->cn_type == CN_SEQ)
		return config_expected(ld, v, path, "\"host:port\" or "
		    "\"[ipv6-address]:port\" (quote it: [ starts a YAML "
		    "sequence)");
	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		return config_expected(ld, v, path,
		    "\"host:port\" or \"[ipv6-address]:port\"");
	s = v->cn_str;
	if (*s == '[') {
		if ((end = strchr(s, ']')) == NULL || end[1] != ':')
			return config_expected(ld, v, path,
			    "\"host:port\" or \"[ipv6-address]:port\"");
		port = end + 2;
		s++;
	} else {
		if ((end = strrchr(s, ':')) == NULL)
			return config_expected(ld, v, path,
			    "\"host:port\" or \"[ipv6-address]:port\"");
		if (memchr(s, ':', (size_t)(end - s)) != NULL)
			return config_expected(ld, v, path,
			    "\"host:port\" or \"[ipv6-address]:port\" "
			    "(put an IPv6 address in brackets)");
		port = end + 1;
	}
	hlen = (size_t)(end - s);
	if (hlen >= sizeof(host))
		hlen = sizeof(host) - 1;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if ((size_t)(end - s) >= sizeof(host) ||
	    (v->cn_str[0] == '[' && inet_pton(AF_INET6, host, &a6) != 1) ||
	    (v->cn_str[0] != '[' && inet_pton(AF_INET, host, &a4) != 1 &&
	    strcmp(host, "localhost") != 0))
		return config_error(ld, v, "%s: expected a numeric IPv4 "
		    "address, a bracketed IPv6 address or localhost as the "
		    "host, found \"%s\"", path, config_escape(esc, sizeof(esc),
		    s, (size_t)(end - s), SHOW_MAX));
	if (strlen(port) > 5 || config_parse_uint(port, &n) == -1 ||
	    n > 65535)
		return config_error(ld, v, "%s: expected a port from 0 to "
		    "65535, found \"%s\"", path, config_escape(esc, sizeof(esc),
		    port, strlen(port), SHOW_MAX));
	if ((dup = strdup(host)) == NULL)
		return config_error(ld, NULL, "out of memory");
	free(*hostp);
	*hostp = dup;
	*portp = (uint16_t)n;
	return 0;
}

static int
load_listen(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config *cf = arg;

	ld->ld_listen = v;
	/* "unix:/path": a Unix socket (incomingAuth local's peers) */
	if (v->cn_type == CN_SCALAR && strncmp(v->cn_str, "unix:", 5) == 0)
		return config_listen_unix(ld, v, path, cf);
	return load_hostport(ld, v, path, &cf->cf_listen_host,
	    &cf->cf_listen_port);
}

static int
load_diagnostics(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config *cf = arg;

	ld->ld_diag = v;
	return load_hostport(ld, v, path, &cf->cf_diag_host,
	    &cf->cf_diag_port);
}

static int
load_workers(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config	*cf = arg;
	const char	*what = "\"auto\" or an integer from 1 to 256";
	uint64_t	 n;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "auto") == 0) {
		cf->cf_workers = 0;
		return 0;
	}
	if (load_plain(ld, v, path, what) == -1)
		return -1;
	if (config_parse_uint(v->cn_str, &n) == -1 || n < 1 || n > 256)
		return config_expected(ld, v, path, what);
	cf->cf_workers = (int)n;
	return 0;
}

int
load_daemon(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "listen", F_FN, cf, load_listen, 0, 0 },
		{ "workers", F_FN, cf, load_workers, 0, 0 },
		{ "stateDir", F_STRING, &cf->cf_state_dir, NULL, 0, 0 },
		{ "user", F_STRING, &cf->cf_user, NULL, 0, 0 },
		{ "logFile", F_STRING, &cf->cf_log_file, NULL, 0, 0 },
		{ "portFile", F_STRING, &cf->cf_port_file, NULL, 0, 0 },
		{ "mapSize", F_SIZE, &cf->cf_map_size, NULL, MIB, TIB },
		{ "maxReaders", F_UINT, &cf->cf_max_readers, NULL, 16, 65536 },
		{ "drainTimeout", F_DURATION, &cf->cf_drain_timeout_ms, NULL,
		    0, 0 },
		{ "workerHeader", F_BOOL, &cf->cf_worker_header, NULL, 0, 0 },
		{ "diagnostics", F_FN, cf, load_diagnostics, 0, 0 },
		{ "console", F_FN, &cf->cf_console, load_console, 0, 0 },
	};
	const struct cnode	*d;
	size_t			 i;

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cf->cf_diag_host != NULL && cf->cf_diag_port != 0 &&
	    cf->cf_diag_port == cf->cf_listen_port &&
	    strcmp(cf->cf_diag_host, cf->cf_listen_host) == 0) {
		for (i = 0, d = NULL; i + 1 < n->cn_nkids; i += 2)
			if (strcmp(n->cn_kids[i]->cn_str, "diagnostics") == 0)
				d = n->cn_kids[i + 1];
		return config_error(ld, d, "%s.diagnostics: expected an "
		    "address other than daemon.listen's", path);
	}
	return 0;
}

int
config_host_loopback(const char *host, size_t len)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;
	char		 buf[64];

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof(buf))
		return 0;
	/* the commonest Host of all, without inet_pton() */
	if (len == 9 && memcmp(host, "127.0.0.1", 9) == 0)
		return 1;
	memcpy(buf, host, len);
	buf[len] = '\0';
	if (strcasecmp(buf, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, buf, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/*
 * http.allowedHosts: host names or addresses without a port (an IPv6
 * address bare or in brackets), or "*"; http.allowedOrigins: origins
 * "scheme://host[:port]", or "*".
 */
static int
load_allowed(struct loader *ld, struct cnode *n, const char *path,
    char ***dst, size_t *count, int origins)
{
	const char	*what = origins ? "a list of origins such as "
			    "https://app.example.com:8443 "
			    "(scheme://host[:port]) or \"*\"" : "a list of host "
			    "names or addresses without a port, or \"*\"";
	struct in6_addr	 a6;
	char		 buf[64], ipath[PATH_MAX_LEN];
	const char	*s, *p;
	size_t		 i, len;

	if (load_string_seq(ld, n, path, what, dst, count) == -1)
		return -1;
	for (i = 0; i < *count; i++) {
		s = (*dst)[i];
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (strcmp(s, "*") == 0)
			continue;
		if (strpbrk(s, " \t/?#@*") != NULL && !origins)
			goto bad;
		if (origins) {
			if ((p = strstr(s, "://")) == NULL || p == s ||
			    p[3] == '\0' || strpbrk(p + 3, " \t/?#@*") !=
			    NULL || strpbrk(s, " \t") != NULL)
				goto bad;
			continue;
		}
		/* a colon only in an IPv6 address: no port */
		if (strchr(s, ':') == NULL)
			continue;
		len = strlen(s);
		if (s[0] == '[' && s[len - 1] == ']') {
			s++;
			len -= 2;
		}
		if (len >= sizeof(buf))
			goto bad;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			goto bad;
	}
	return 0;
bad:
	return config_expected(ld, n->cn_kids[i], ipath, what);
}

static int
load_allowed_hosts(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;

	return load_allowed(ld, n, path, &cf->cf_allowed_hosts,
	    &cf->cf_nallowed_hosts, 0);
}

static int
load_allowed_origins(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;

	return load_allowed(ld, n, path, &cf->cf_allowed_origins,
	    &cf->cf_nallowed_origins, 1);
}

int
load_http(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "maxHeaderSize", F_SIZET, &cf->cf_max_header_size, NULL,
		    KIB, MIB },
		{ "maxBodySize", F_SIZET, &cf->cf_max_body_size, NULL,
		    KIB, 256 * MIB },
		{ "timeout", F_DURATION, &cf->cf_http_timeout_ms, NULL, 1, 0 },
		{ "keepAlive", F_DURATION, &cf->cf_keepalive_ms, NULL, 1, 0 },
		{ "headerTimeout", F_DURATION, &cf->cf_header_timeout_ms, NULL,
		    1, 0 },
		{ "requestTimeout", F_DURATION, &cf->cf_request_timeout_ms,
		    NULL, 1, 0 },
		{ "maxConnections", F_UINT, &cf->cf_max_conns, NULL, 1,
		    1000000 },
		{ "maxConnectionsPerClient", F_UINT, &cf->cf_max_conns_client,
		    NULL, 1, 1000000 },
		{ "allowedHosts", F_FN, cf, load_allowed_hosts, 0, 0 },
		{ "allowedOrigins", F_FN, cf, load_allowed_origins, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

int
load_sessions(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	struct cnode	*ttl, *max;
	char		 esc[SHOW_MAX * 4 + 8], tesc[SHOW_MAX * 4 + 8];
	const struct field fields[] = {
		{ "ttl", F_DURATION, &cf->cf_session_ttl_ms, NULL, 1, 0 },
		{ "maxLifetime", F_DURATION, &cf->cf_session_max_ms, NULL,
		    1, 0 },
		{ "eventBuffer", F_UINT, &cf->cf_event_buffer, NULL,
		    16, 100000 },
		{ "pendingTimeout", F_DURATION, &cf->cf_pending_timeout_ms,
		    NULL, 1, 0 },
		{ "maxSessions", F_UINT, &cf->cf_session_cap, NULL,
		    1, CONFIG_SESSIONS_MAX },
		{ "maxPerAddress", F_UINT, &cf->cf_session_cap_addr, NULL,
		    1, CONFIG_SESSIONS_MAX },
		{ "maxPrincipals", F_UINT, &cf->cf_principal_cap, NULL,
		    1, CONFIG_SESSIONS_MAX },
		/* a principal's backend sessions: closed when idle (their
		 * last use is written once a second: more than that) */
		{ "backendSessionTtl", F_DURATION, &cf->cf_bsession_ttl_ms,
		    NULL, 2000, 0 },
		{ "maxBackendSessions", F_UINT, &cf->cf_bsession_cap, NULL,
		    1, CONFIG_BSESSIONS_MAX },
		{ "maxSubscriptions", F_UINT, &cf->cf_subs_cap, NULL,
		    1, CONFIG_SUBS_MAX },
		{ "maxSubscriptionsPerPrincipal", F_UINT,
		    &cf->cf_subs_cap_principal, NULL, 1, CONFIG_SESSIONS_MAX },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cf->cf_session_max_ms >= cf->cf_session_ttl_ms)
		return 0;
	max = cnode_get(n, "maxLifetime");
	if ((ttl = cnode_get(n, "ttl")) == NULL)
		return config_error(ld, max, "%s.maxLifetime: expected a "
		    "duration not shorter than %s.ttl (30m by default), found "
		    "\"%s\"", path, path, config_escape(esc, sizeof(esc),
		    max->cn_str, max->cn_len, SHOW_MAX));
	if (max != NULL)
		return config_error(ld, max, "%s.maxLifetime: expected a "
		    "duration not shorter than %s.ttl (\"%s\"), found \"%s\"",
		    path, path, config_escape(tesc, sizeof(tesc), ttl->cn_str,
		    ttl->cn_len, SHOW_MAX), config_escape(esc, sizeof(esc),
		    max->cn_str, max->cn_len, SHOW_MAX));
	return config_error(ld, ttl, "%s.ttl: expected a duration not longer "
	    "than %s.maxLifetime (24h by default), found \"%s\"", path, path,
	    config_escape(esc, sizeof(esc), ttl->cn_str, ttl->cn_len,
	    SHOW_MAX));
}

/*
 * The session caps by default: one session per 2 KiB of map (a record
 * of ~600 bytes, its index entry and B-tree slack, with room to spare
 * for the rest), and a quarter of that per client address.
 */
void
config_resolve_sessions(struct config *cf)
{
	uint64_t n;

	if (cf->cf_session_cap == 0) {
		n = cf->cf_map_size / (2 * KIB);
		if (n > CONFIG_SESSIONS_MAX)
			n = CONFIG_SESSIONS_MAX;
		cf->cf_session_cap = n < 16 ? 16 : (unsigned int)n;
	}
	if (cf->cf_session_cap_addr == 0)
		cf->cf_session_cap_addr = cf->cf_session_cap / 4 > 0 ?
		    cf->cf_session_cap / 4 : 1;
	if (cf->cf_principal_cap == 0)
		cf->cf_principal_cap = CONFIG_PRINCIPALS_DEFAULT;
	if (cf->cf_subs_cap == 0)
		cf->cf_subs_cap = CONFIG_SUBS_DEFAULT;
	if (cf->cf_subs_cap_principal == 0)
		cf->cf_subs_cap_principal = CONFIG_SUBS_PRINCIPAL_DEFAULT;
}

int
load_metadata(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	char	 kpath[PATH_MAX_LEN], *tmp = NULL;
	size_t	 i;

	(void)arg;
	if (load_map_check(ld, n, path) == -1)
		return -1;
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
		/* informational: checked, then dropped */
		if (load_string(ld, n->cn_kids[i + 1], kpath, &tmp) == -1)
			return -1;
		free(tmp);
		tmp = NULL;
	}
	return 0;
}

static int
load_loglevel(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "info", 0 },
		{ "debug", 1 },
	};
	struct config	*cf = arg;

	return load_choice(ld, v, path, ch, nitems(ch), "info or debug",
	    &cf->cf_verbose);
}

/* values now, names once the backends are known */
static int
load_perworkload(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	char		 kpath[PATH_MAX_LEN];
	uint64_t	 ms;
	size_t		 i;

	(void)arg;
	if (load_map_check(ld, n, path) == -1)
		return -1;
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
		if (load_duration(ld, n->cn_kids[i + 1], kpath, 1, &ms) == -1)
			return -1;
	}
	ld->ld_perworkload = n;
	return 0;
}

static int
load_timeouts(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "default", F_DURATION, &cf->cf_timeout_default_ms, NULL,
		    1, 0 },
		{ "perWorkload", F_FN, NULL, load_perworkload, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_partial_failure(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "fail", CONFIG_PARTIAL_FAIL },
		{ "best_effort", CONFIG_PARTIAL_BEST_EFFORT },
	};
	struct config	*cf = arg;
	int		 m = 0;

	if (load_choice(ld, v, path, ch, nitems(ch), "fail or best_effort",
	    &m) == -1)
		return -1;
	cf->cf_partial_failure = (enum config_partial_failure)m;
	return 0;
}

static int
load_circuit_breaker(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_health	*ch = arg;
	const struct field fields[] = {
		{ "enabled", F_BOOL, &ch->ch_cb_enabled, NULL, 0, 0 },
		{ "failureThreshold", F_UINT, &ch->ch_cb_threshold, NULL, 1,
		    1000000 },
		{ "timeout", F_DURATION, &ch->ch_cb_timeout_ms, NULL, 1000,
		    0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_failure_handling(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_health	*ch = &cf->cf_health;
	struct cnode		*v;
	const struct field fields[] = {
		{ "partialFailureMode", F_FN, cf, load_partial_failure, 0, 0 },
		{ "healthCheckInterval", F_DURATION, &ch->ch_interval_ms, NULL,
		    100, 0 },
		{ "healthCheckTimeout", F_DURATION, &ch->ch_timeout_ms, NULL,
		    1, 0 },
		{ "unhealthyThreshold", F_UINT, &ch->ch_unhealthy, NULL, 1,
		    1000000 },
		{ "statusReportingInterval", F_DURATION, &ch->ch_report_ms,
		    NULL, 1000, 0 },
		{ "circuitBreaker", F_FN, ch, load_circuit_breaker, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	/* a probe must end before the next one is due */
	if (ch->ch_timeout_ms >= ch->ch_interval_ms) {
		if ((v = cnode_get(n, "healthCheckTimeout")) == NULL)
			v = cnode_get(n, "healthCheckInterval");
		return config_error(ld, v, "%s.healthCheckTimeout (%llu ms) "
		    "must be shorter than healthCheckInterval (%llu ms)", path,
		    (unsigned long long)ch->ch_timeout_ms,
		    (unsigned long long)ch->ch_interval_ms);
	}
	return 0;
}

/*
 * answerBuffer: the backend answers a worker buffers at once.  One
 * backend's budget is at most the worker's; left out, it is half the
 * worker's (128 MiB of the 256 MiB default).
 */
static int
load_answer_buffer(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	struct cnode	*key;
	const struct field fields[] = {
		{ "perWorker", F_SIZET, &cf->cf_answer_buf, NULL, MIB,
		    64 * GIB },
		{ "perBackend", F_SIZET, &cf->cf_answer_buf_backend, NULL,
		    MIB, 64 * GIB },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if ((key = cnode_get_key(n, "perBackend")) == NULL)
		cf->cf_answer_buf_backend = cf->cf_answer_buf / 2;
	else if (cf->cf_answer_buf_backend > cf->cf_answer_buf)
		return config_error(ld, key, "%s.perBackend: more than "
		    "perWorker, which binds first", path);
	return 0;
}

int
load_operational(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "logLevel", F_FN, cf, load_loglevel, 0, 0 },
		{ "timeouts", F_FN, cf, load_timeouts, 0, 0 },
		{ "failureHandling", F_FN, cf, load_failure_handling, 0, 0 },
		{ "answerBuffer", F_FN, cf, load_answer_buffer, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

int
load_incoming_auth(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	return config_auth_load(ld, n, path, arg);
}

/* every backend's timeout: its perWorkload entry, else the default */
int
config_resolve_timeouts(struct loader *ld)
{
	struct config	*cf = ld->ld_cf;
	struct cnode	*pw = ld->ld_perworkload, *key;
	char		 kpath[PATH_MAX_LEN], names[CONFIG_ERR_MAX];
	size_t		 i, j;
	uint64_t	 ms;

	for (j = 0; j < cf->cf_nbackends; j++)
		cf->cf_backends[j].cb_timeout_ms = cf->cf_timeout_default_ms;
	for (i = 0; pw != NULL && i + 1 < pw->cn_nkids; i += 2) {
		key = pw->cn_kids[i];
		for (j = 0; j < cf->cf_nbackends; j++)
			if (strlen(cf->cf_backends[j].cb_name) == key->cn_len &&
			    strcmp(cf->cf_backends[j].cb_name,
			    key->cn_str) == 0)
				break;
		if (j == cf->cf_nbackends) {
			config_path(kpath, sizeof(kpath),
			    "operational.timeouts.perWorkload", key);
			config_backend_names(cf, names, sizeof(names));
			return config_error(ld, key, "%s: no such backend "
			    "(configured backends: %s)", kpath, names);
		}
		/* checked by load_perworkload() */
		(void)config_parse_duration(pw->cn_kids[i + 1]->cn_str, &ms);
		cf->cf_backends[j].cb_timeout_ms = ms;
	}
	return 0;
}
