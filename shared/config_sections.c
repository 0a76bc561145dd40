/*
 * vmcpd.yaml's sections: the table-driven loaders of daemon, http,
 * sessions, backends, operational, the auth keys and aggregation
 * (struct field f_fn, called by config.c's load_root()), and the checks
 * across sections once all are loaded.  The loader's internals are in
 * config_load.h.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/proto.h"
#include "proto/headers.h"
#include "config.h"
#include "config_load.h"
#include "shared/http_client.h"

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

static int
load_backend_name(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;
	const char		*p;

	if (v->cn_type == CN_SCALAR && v->cn_len >= 1 &&
	    v->cn_len <= CONFIG_NAME_MAX && !cnode_is_null(v)) {
		for (p = v->cn_str; *p != '\0'; p++)
			if (!isalnum((unsigned char)*p) && *p != '_' &&
			    *p != '.' && *p != '-')
				break;
		if (*p == '\0' && (size_t)(p - v->cn_str) == v->cn_len)
			return load_string(ld, v, path, &cb->cb_name);
	}
	return config_expected(ld, v, path,
	    "1 to 64 characters from A-Z a-z 0-9 _ . -");
}

static int
load_backend_url(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;
	const char		*rest;
	char			*shown, esc[SHOW_MAX * 4 + 8];
	size_t			 i;
	int			 rc;

	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		goto bad;
	if (strncmp(v->cn_str, "http://", 7) == 0)
		rest = v->cn_str + 7;
	else if (strncmp(v->cn_str, "https://", 8) == 0)
		rest = v->cn_str + 8;
	else
		goto bad;
	if (*rest == '\0' || *rest == '/')
		goto bad;
	for (i = 0; i < v->cn_len; i++)
		if (isspace((unsigned char)v->cn_str[i]) ||
		    iscntrl((unsigned char)v->cn_str[i]))
			goto bad;
	if (load_string(ld, v, path, &cb->cb_url) == -1)
		return -1;
	/* what is stored, logged and shown of it: no credentials */
	if ((cb->cb_url_shown = http_url_redact(cb->cb_url)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;

bad:
	/* the value may hold a password: not shown, even here */
	if (v->cn_type != CN_SCALAR || cnode_is_null(v) ||
	    (shown = http_url_redact(v->cn_str)) == NULL)
		return config_expected(ld, v, path,
		    "an http:// or https:// URL without whitespace");
	rc = config_error(ld, v, "%s: expected an http:// or https:// URL "
	    "without whitespace, found \"%s\"", path, config_escape(esc,
	    sizeof(esc), shown, strlen(shown), SHOW_MAX));
	free(shown);
	return rc;
}

struct choice {
	const char	*ch_name;
	int		 ch_value;
};

static int
load_enum(struct loader *ld, struct cnode *v, const char *path,
    const struct choice *ch, size_t nch, const char *what, int *dst)
{
	size_t	 i;

	if (v->cn_type == CN_SCALAR && !cnode_is_null(v))
		for (i = 0; i < nch; i++)
			if (strcmp(v->cn_str, ch[i].ch_name) == 0) {
				*dst = ch[i].ch_value;
				return 0;
			}
	return config_expected(ld, v, path, what);
}

static int
load_backend_transport(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "streamable-http", TRANSPORT_STREAMABLE_HTTP },
		{ "sse", TRANSPORT_SSE },
		{ "stdio", TRANSPORT_STDIO },
	};
	struct config_backend	*cb = arg;
	int			 t = 0;

	if (load_enum(ld, v, path, ch, nitems(ch),
	    "streamable-http, sse or stdio", &t) == -1)
		return -1;
	cb->cb_transport = (enum config_transport)t;
	return 0;
}

static int
load_backend_era(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "auto", PROTO_ERA_UNKNOWN },
		{ "legacy", PROTO_ERA_LEGACY },
		{ "modern", PROTO_ERA_MODERN },
	};
	struct config_backend	*cb = arg;
	int			 e = 0;

	if (load_enum(ld, v, path, ch, nitems(ch), "auto, legacy or modern",
	    &e) == -1)
		return -1;
	cb->cb_era = (enum proto_era)e;
	return 0;
}

/* checked here, copied behind the command by config_backend_argv() */
static int
load_backend_args(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	char	 ipath[PATH_MAX_LEN];
	size_t	 i;

	(void)arg;
	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of strings");
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (load_text(ld, n->cn_kids[i], ipath) == -1)
			return -1;
	}
	return 0;
}

int
config_env_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (s++; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int
load_backend_env(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;
	struct cnode		*key, *v;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, nenv = 0;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if (n->cn_nkids == 0)
		return 0;
	if ((cb->cb_env = calloc(n->cn_nkids / 2 + 1,
	    sizeof(*cb->cb_env))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		v = n->cn_kids[i + 1];
		config_path(kpath, sizeof(kpath), path, key);
		if (!config_env_name(key->cn_str))
			return config_expected(ld, key, kpath,
			    "an environment variable name "
			    "([A-Za-z_][A-Za-z0-9_]*)");
		if (load_text(ld, v, kpath) == -1)
			return -1;
		if (asprintf(&cb->cb_env[nenv], "%s=%s", key->cn_str,
		    v->cn_str) == -1) {
			cb->cb_env[nenv] = NULL;
			return config_error(ld, NULL, "out of memory");
		}
		nenv++;
	}
	return 0;
}

/* argv[0] is the command, then the args */
static int
config_backend_argv(struct loader *ld, struct config_backend *cb,
    const struct cnode *args)
{
	size_t	 i, nargs = args != NULL ? args->cn_nkids : 0;

	if ((cb->cb_argv = calloc(nargs + 2, sizeof(*cb->cb_argv))) == NULL ||
	    (cb->cb_argv[0] = strdup(cb->cb_command)) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < nargs; i++)
		if ((cb->cb_argv[i + 1] = strdup(args->cn_kids[i]->cn_str)) ==
		    NULL)
			return config_error(ld, NULL, "out of memory");
	return 0;
}

/*
 * Keys of one kind of transport given to the other, in file order so
 * that the first one in the file is the one reported.
 */
static int
config_backend_keys(struct loader *ld, struct cnode *n, const char *path,
    const struct config_backend *cb)
{
	static const char *const stdio_keys[] = { "command", "args", "env",
	    "cwd", NULL };
	static const char *const http_keys[] = { "url", NULL };
	const char *const	*bad;
	const char		*tname, *why;
	struct cnode		*key;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, j;

	tname = config_transport_name(cb->cb_transport);
	if (cb->cb_transport == TRANSPORT_STDIO) {
		bad = http_keys;
		why = "a stdio backend runs command";
	} else {
		bad = stdio_keys;
		why = "only a stdio backend runs a command";
	}
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		for (j = 0; bad[j] != NULL; j++)
			if (strcmp(key->cn_str, bad[j]) == 0)
				break;
		if (bad[j] == NULL)
			continue;
		config_path(kpath, sizeof(kpath), path, key);
		return config_error(ld, key, "%s: not allowed with transport "
		    "%s (%s)", kpath, tname, why);
	}
	if (cb->cb_transport == TRANSPORT_STDIO ? cb->cb_command != NULL :
	    cb->cb_url != NULL)
		return 0;
	return config_error(ld, n, "%s: missing required key \"%s\" for "
	    "transport %s", path, cb->cb_transport == TRANSPORT_STDIO ?
	    "command" : "url", tname);
}

static int
load_backend_ca(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;

	return load_ca_path(ld, v, path, &cb->cb_ca_bundle);
}

static int
load_backend(struct loader *ld, struct cnode *n, const char *path,
    struct config_backend *cb)
{
	const struct field fields[] = {
		{ "name", F_FN, cb, load_backend_name, 0, 0 },
		{ "url", F_FN, cb, load_backend_url, 0, 0 },
		{ "transport", F_FN, cb, load_backend_transport, 0, 0 },
		{ "command", F_STRING, &cb->cb_command, NULL, 0, 0 },
		{ "args", F_FN, NULL, load_backend_args, 0, 0 },
		{ "env", F_FN, cb, load_backend_env, 0, 0 },
		{ "cwd", F_STRING, &cb->cb_cwd, NULL, 0, 0 },
		{ "era", F_FN, cb, load_backend_era, 0, 0 },
		{ "type", F_NOTYET, NULL, NULL, 0, 0 },
		{ "caBundlePath", F_FN, cb, load_backend_ca, 0, 0 },
		{ "metadata", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "name") == -1 ||
	    config_require(ld, n, path, "transport") == -1 ||
	    config_backend_keys(ld, n, path, cb) == -1)
		return -1;
	/* the bridges speak 2025-11-25 to the workers */
	if (cb->cb_era == PROTO_ERA_MODERN &&
	    cb->cb_transport != TRANSPORT_STREAMABLE_HTTP)
		return config_error(ld, cnode_get(n, "era"), "%s.era: modern "
		    "needs transport streamable-http (%s backends speak "
		    "2025-11-25 or older)", path,
		    config_transport_name(cb->cb_transport));
	/* the bridges make their own calls */
	if (cb->cb_ca_bundle != NULL &&
	    cb->cb_transport != TRANSPORT_STREAMABLE_HTTP)
		return config_error(ld, cnode_get_key(n, "caBundlePath"),
		    "%s.caBundlePath: only with transport streamable-http",
		    path);
	if (cb->cb_transport == TRANSPORT_STDIO)
		return config_backend_argv(ld, cb, cnode_get(n, "args"));
	return 0;
}

int
load_backends(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_backend	*cb;
	char			 bpath[PATH_MAX_LEN];
	size_t			 i, j;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of backends");
	/* "backends: []" is a daemon that serves an empty view */
	ld->ld_have_backends = 1;
	if (n->cn_nkids == 0)
		return 0;
#ifdef CONFIG_BACKENDS_MAX
	if (n->cn_nkids > CONFIG_BACKENDS_MAX) {
		if (CONFIG_BACKENDS_MAX == 1)
			return config_error(ld, n->cn_kids[1], "only one "
			    "backend is supported by this version of vmcpd");
		return config_error(ld, n->cn_kids[CONFIG_BACKENDS_MAX],
		    "at most %d backends are supported by this version of "
		    "vmcpd", CONFIG_BACKENDS_MAX);
	}
#endif
	if ((cf->cf_backends = calloc(n->cn_nkids, sizeof(*cb))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < n->cn_nkids; i++) {
		cb = &cf->cf_backends[i];
		cf->cf_nbackends++;
		(void)snprintf(bpath, sizeof(bpath), "%s[%zu]", path, i);
		if (load_backend(ld, n->cn_kids[i], bpath, cb) == -1)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(cf->cf_backends[j].cb_name,
			    cb->cb_name) == 0)
				return config_error(ld,
				    cnode_get(n->cn_kids[i], "name"),
				    "%s.name: duplicate backend name \"%s\" "
				    "(first in %s[%zu])", bpath, cb->cb_name,
				    path, j);
	}
	return 0;
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

	return load_enum(ld, v, path, ch, nitems(ch), "info or debug",
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

	if (load_enum(ld, v, path, ch, nitems(ch), "fail or best_effort",
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

/*
 * aggregation
 */

static const char *
config_conflict_name(enum config_conflict c)
{
	switch (c) {
	case CONFIG_CONFLICT_PREFIX:
		return "prefix";
	case CONFIG_CONFLICT_PRIORITY:
		return "priority";
	case CONFIG_CONFLICT_MANUAL:
		return "manual";
	}
	return "unknown";
}

static int
load_conflict(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "prefix", CONFIG_CONFLICT_PREFIX },
		{ "priority", CONFIG_CONFLICT_PRIORITY },
		{ "manual", CONFIG_CONFLICT_MANUAL },
	};
	struct config_aggregation	*ca = arg;
	int				 c = 0;

	if (load_enum(ld, v, path, ch, nitems(ch),
	    "prefix, priority or manual", &c) == -1)
		return -1;
	ca->ca_conflict = (enum config_conflict)c;
	return 0;
}

static int
load_prefix_mode(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "always", CONFIG_PREFIX_ALWAYS },
		{ "onConflict", CONFIG_PREFIX_ON_CONFLICT },
	};
	struct config_aggregation	*ca = arg;
	int				 m = 0;

	if (load_enum(ld, v, path, ch, nitems(ch), "always or onConflict",
	    &m) == -1)
		return -1;
	ca->ca_prefix_mode = (enum config_prefix_mode)m;
	return 0;
}

/* "" is the reference's spelling of the default */
static int
load_visibility(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "allow", 0 },
		{ "deny", 1 },
		{ "", 0 },
	};
	struct config_aggregation	*ca = arg;

	return load_enum(ld, v, path, ch, nitems(ch), "allow, deny or \"\"",
	    &ca->ca_default_deny);
}

/* names now, whether they are backends once the backends are known */
static int
load_priority(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;

	ld->ld_priority = n;
	return load_string_seq(ld, n, path, "a sequence of backend names",
	    &ca->ca_priority, &ca->ca_npriority);
}

static int
load_conflict_config(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	const struct field fields[] = {
		{ "prefixFormat", F_STRING, &ca->ca_prefix_format, NULL, 0, 0 },
		{ "prefixMode", F_FN, ca, load_prefix_mode, 0, 0 },
		{ "priorityOrder", F_FN, ca, load_priority, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_filter(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_workload	*cw = arg;

	return load_string_seq(ld, n, path, "a sequence of tool names",
	    &cw->cw_filter, &cw->cw_nfilter);
}

/* only the hints given, so that the others stay the backend's */
int
load_annotations(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	static const char *const hints[] = { "readOnlyHint",
	    "destructiveHint", "idempotentHint", "openWorldHint" };
	struct config_override	*co = arg;
	char			*title = NULL;
	int			 val[nitems(hints)] = { 0 };
	const struct field fields[] = {
		{ "title", F_STRING, &title, NULL, 0, 0 },
		{ hints[0], F_BOOL, &val[0], NULL, 0, 0 },
		{ hints[1], F_BOOL, &val[1], NULL, 0, 0 },
		{ hints[2], F_BOOL, &val[2], NULL, 0, 0 },
		{ hints[3], F_BOOL, &val[3], NULL, 0, 0 },
	};
	size_t			 i;

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		goto fail;
	if (n->cn_nkids == 0) {
		config_error(ld, n, "%s: expected at least one of title, "
		    "readOnlyHint, destructiveHint, idempotentHint or "
		    "openWorldHint, found an empty mapping", path);
		goto fail;
	}
	if ((co->co_annotations = json_object()) == NULL ||
	    (title != NULL && json_object_set_new(co->co_annotations,
	    "title", json_string(title)) == -1))
		goto oom;
	for (i = 0; i < nitems(hints); i++)
		if (cnode_get(n, hints[i]) != NULL &&
		    json_object_set_new(co->co_annotations, hints[i],
		    json_boolean(val[i])) == -1)
			goto oom;
	free(title);
	return 0;

oom:
	config_error(ld, NULL, "out of memory");
fail:
	free(title);
	return -1;
}

static int
load_override(struct loader *ld, struct cnode *n, const char *path,
    struct config_override *co)
{
	const struct field fields[] = {
		{ "name", F_STRING, &co->co_name, NULL, 0, 0 },
		{ "description", F_STRING, &co->co_description, NULL, 0, 0 },
		{ "annotations", F_FN, co, load_annotations, 0, 0 },
	};
	char		 kpath[PATH_MAX_LEN];

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	/* the name clients see: one the view would advertise */
	if (co->co_name != NULL && !proto_tool_name_valid(co->co_name,
	    strlen(co->co_name))) {
		config_path(kpath, sizeof(kpath), path, cnode_get_key(n,
		    "name"));
		return config_expected(ld, cnode_get(n, "name"), kpath,
		    "a tool name (1 to 128 letters, digits, \".\", \"_\", "
		    "\"-\")");
	}
	/* unlike the reference, annotations alone are an override */
	if (n->cn_nkids == 0)
		return config_error(ld, n, "%s: expected name, description or "
		    "annotations, found an empty mapping", path);
	return 0;
}

/* two tools of one backend renamed alike would be advertised twice */
static int
config_override_names(struct loader *ld, struct cnode *n, const char *path)
{
	struct cnode	**names, *dup, *first, *v;
	char		 kpath[PATH_MAX_LEN];
	size_t		 i, nnames = 0;

	if ((names = reallocarray(NULL, n->cn_nkids / 2 + 1,
	    sizeof(*names))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if ((v = cnode_get(n->cn_kids[i + 1], "name")) != NULL)
			names[nnames++] = v;
	config_find_dup(names, nnames, &dup, &first);
	free(names);
	if (dup == NULL)
		return 0;
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if (cnode_get(n->cn_kids[i + 1], "name") == dup)
			break;
	config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
	return config_error(ld, dup, "%s.name: duplicate new name \"%s\" "
	    "(first at line %zu, column %zu)", kpath, dup->cn_str,
	    first->cn_line, first->cn_col);
}

static int
load_overrides(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_workload	*cw = arg;
	struct config_override	*co;
	struct cnode		*key;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if ((cw->cw_overrides = calloc(n->cn_nkids / 2 + 1,
	    sizeof(*cw->cw_overrides))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		config_path(kpath, sizeof(kpath), path, key);
		if (key->cn_len == 0 || cnode_is_null(key))
			return config_expected(ld, key, kpath, "a tool name");
		co = &cw->cw_overrides[cw->cw_noverrides++];
		if ((co->co_tool = strdup(key->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
		if (load_override(ld, n->cn_kids[i + 1], kpath, co) == -1)
			return -1;
	}
	return config_override_names(ld, n, path);
}

static int
config_cmp_tool(const void *a, const void *b)
{
	const struct config_override *oa = *(struct config_override *const *)a;
	const struct config_override *ob = *(struct config_override *const *)b;

	return strcmp(oa->co_tool, ob->co_tool);
}

static int
config_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The filter takes names after the overrides: naming a tool that an
 * override renames matches nothing (the reference's own example does
 * this).  The name is still right if another tool is renamed to it.
 */
static int
config_filter_renamed(struct loader *ld, struct cnode *n, const char *path,
    const struct config_workload *cw)
{
	struct config_override	**tools = NULL, key, *kp, **found;
	struct cnode		*fn;
	char			**names = NULL;
	const char		*f;
	size_t			 i, nnames = 0;
	int			 rv = -1;

	fn = cnode_get(n, "filter");
	if (cw->cw_nfilter == 0 || cw->cw_noverrides == 0)
		return 0;
	if ((tools = reallocarray(NULL, cw->cw_noverrides,
	    sizeof(*tools))) == NULL ||
	    (names = reallocarray(NULL, cw->cw_noverrides,
	    sizeof(*names))) == NULL) {
		config_error(ld, NULL, "out of memory");
		goto done;
	}
	for (i = 0; i < cw->cw_noverrides; i++) {
		tools[i] = &cw->cw_overrides[i];
		if (cw->cw_overrides[i].co_name != NULL)
			names[nnames++] = cw->cw_overrides[i].co_name;
	}
	qsort(tools, cw->cw_noverrides, sizeof(*tools), config_cmp_tool);
	qsort(names, nnames, sizeof(*names), config_cmp_str);
	for (i = 0; i < cw->cw_nfilter; i++) {
		f = cw->cw_filter[i];
		key.co_tool = (char *)f;
		kp = &key;
		found = bsearch(&kp, tools, cw->cw_noverrides, sizeof(*tools),
		    config_cmp_tool);
		if (found == NULL || (*found)->co_name == NULL ||
		    strcmp((*found)->co_name, f) == 0 ||
		    bsearch(&f, names, nnames, sizeof(*names),
		    config_cmp_str) != NULL)
			continue;
		config_error(ld, fn->cn_kids[i], "%s.filter[%zu]: \"%s\" is "
		    "renamed to \"%s\" by overrides, and the filter takes the "
		    "new name", path, i, f, (*found)->co_name);
		goto done;
	}
	rv = 0;

done:
	free(tools);
	free(names);
	return rv;
}

static int
load_workload(struct loader *ld, struct cnode *n, const char *path,
    struct config_workload *cw)
{
	const struct field fields[] = {
		{ "workload", F_STRING, &cw->cw_name, NULL, 0, 0 },
		{ "filter", F_FN, cw, load_filter, 0, 0 },
		{ "excludeAll", F_BOOL, &cw->cw_exclude_all, NULL, 0, 0 },
		{ "overrides", F_FN, cw, load_overrides, 0, 0 },
		{ "toolConfigRef", F_K8SONLY, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "workload") == -1)
		return -1;
	return config_filter_renamed(ld, n, path, cw);
}

static int
load_tools(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_aggregation	*ca = arg;
	char				 ipath[PATH_MAX_LEN];
	size_t				 i;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path,
		    "a sequence of per-backend tool settings");
	if ((ca->ca_workloads = calloc(n->cn_nkids + 1,
	    sizeof(*ca->ca_workloads))) == NULL)
		return config_error(ld, NULL, "out of memory");
	ld->ld_tools = n;
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (load_workload(ld, n->cn_kids[i], ipath,
		    &ca->ca_workloads[ca->ca_nworkloads++]) == -1)
			return -1;
	}
	return 0;
}

int
load_aggregation(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	struct cnode			*crc, *key;
	const struct field fields[] = {
		{ "conflictResolution", F_FN, ca, load_conflict, 0, 0 },
		{ "conflictResolutionConfig", F_FN, ca, load_conflict_config,
		    0, 0 },
		{ "excludeAllTools", F_BOOL, &ca->ca_exclude_all_tools, NULL,
		    0, 0 },
		{ "defaultToolVisibility", F_FN, ca, load_visibility, 0, 0 },
		{ "tools", F_FN, ca, load_tools, 0, 0 },
		{ "cacheTtl", F_DURATION, &ca->ca_cache_ttl_ms, NULL, 1, 0 },
		{ "pageSize", F_UINT, &ca->ca_page_size, NULL, 1, 10000 },
		{ "maxBackendPages", F_UINT, &ca->ca_max_backend_pages, NULL,
		    1, 10000 },
		{ "maxBackendListSize", F_SIZET, &ca->ca_max_backend_list,
		    NULL, 64 * KIB, GIB },
		{ "maxDescriptionLength", F_UINT, &ca->ca_max_desc, NULL, 16,
		    16777216 },
		{ "maxTitleLength", F_UINT, &ca->ca_max_title, NULL, 16,
		    65536 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	crc = cnode_get(n, "conflictResolutionConfig");
	if (ca->ca_conflict != CONFIG_CONFLICT_PRIORITY) {
		if ((key = cnode_get_key(crc, "priorityOrder")) == NULL)
			return 0;
		return config_error(ld, key, "%s.conflictResolutionConfig."
		    "priorityOrder: not allowed with conflictResolution %s "
		    "(only priority uses it)", path,
		    config_conflict_name(ca->ca_conflict));
	}
	if (crc == NULL)
		return config_error(ld, n, "%s: missing required key "
		    "\"conflictResolutionConfig\" for conflictResolution "
		    "priority", path);
	if (ld->ld_priority == NULL)
		return config_error(ld, crc, "%s.conflictResolutionConfig: "
		    "missing required key \"priorityOrder\" for "
		    "conflictResolution priority", path);
	if (ca->ca_npriority == 0)
		return config_error(ld, ld->ld_priority, "%s."
		    "conflictResolutionConfig.priorityOrder: expected at least "
		    "one backend for conflictResolution priority, found an "
		    "empty sequence", path);
	return 0;
}

/* "a, b, c" for a message */
static void
config_backend_names(const struct config *cf, char *buf, size_t len)
{
	size_t	 i, o = 0;
	int	 r;

	buf[0] = '\0';
	for (i = 0; i < cf->cf_nbackends; i++) {
		r = snprintf(buf + o, len - o, "%s%s", i == 0 ? "" : ", ",
		    cf->cf_backends[i].cb_name);
		if (r < 0 || (size_t)r >= len - o)
			break;
		o += (size_t)r;
	}
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

#define PRIORITY_PATH	"aggregation.conflictResolutionConfig.priorityOrder"

/* names in the aggregation block are configured backends, none twice */
int
config_resolve_aggregation(struct loader *ld)
{
	struct config			*cf = ld->ld_cf;
	const struct config_aggregation	*ca = &cf->cf_agg;
	struct cnode			*v;
	char				 names[CONFIG_ERR_MAX];
	size_t				 i, j;

	config_backend_names(cf, names, sizeof(names));
	for (i = 0; i < ca->ca_npriority; i++) {
		v = ld->ld_priority->cn_kids[i];
		if (config_backend_find(cf, ca->ca_priority[i]) == NULL)
			return config_error(ld, v, PRIORITY_PATH "[%zu]: no "
			    "such backend \"%s\" (configured backends: %s)", i,
			    ca->ca_priority[i], names);
		for (j = 0; j < i; j++)
			if (strcmp(ca->ca_priority[j],
			    ca->ca_priority[i]) == 0)
				return config_error(ld, v, PRIORITY_PATH
				    "[%zu]: duplicate backend \"%s\" (first in "
				    PRIORITY_PATH "[%zu])", i,
				    ca->ca_priority[i], j);
	}
	for (i = 0; i < ca->ca_nworkloads; i++) {
		v = cnode_get(ld->ld_tools->cn_kids[i], "workload");
		if (config_backend_find(cf, ca->ca_workloads[i].cw_name) ==
		    NULL)
			return config_error(ld, v, "aggregation.tools[%zu]."
			    "workload: no such backend \"%s\" (configured "
			    "backends: %s)", i, ca->ca_workloads[i].cw_name,
			    names);
		for (j = 0; j < i; j++)
			if (strcmp(ca->ca_workloads[j].cw_name,
			    ca->ca_workloads[i].cw_name) == 0)
				return config_error(ld, v, "aggregation."
				    "tools[%zu].workload: duplicate workload "
				    "\"%s\" (first in aggregation.tools[%zu])",
				    i, ca->ca_workloads[i].cw_name, j);
	}
	/* the reference's rule: a backend with no tools cannot win */
	if (!ca->ca_default_deny || ca->ca_conflict != CONFIG_CONFLICT_PRIORITY)
		return 0;
	for (i = 0; i < ca->ca_npriority; i++) {
		for (j = 0; j < ca->ca_nworkloads; j++)
			if (strcmp(ca->ca_workloads[j].cw_name,
			    ca->ca_priority[i]) == 0)
				break;
		if (j == ca->ca_nworkloads)
			return config_error(ld, ld->ld_priority->cn_kids[i],
			    PRIORITY_PATH "[%zu]: backend \"%s\" has no "
			    "aggregation.tools entry, so with "
			    "defaultToolVisibility deny it has no tools to "
			    "give priority to", i, ca->ca_priority[i]);
	}
	return 0;
}
