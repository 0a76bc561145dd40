/*
 * vmcpd.yaml's outgoingAuth: how vmcpd authenticates to each backend,
 * in the reference vMCP's keys (source: inline, default, backends.NAME,
 * each {type, headerInjection: {...}, tokenExchange: {...}}).  Strategy
 * resolution is the reference's: the backend's entry, else the default,
 * else unauthenticated.  Values are loaded first and backend names
 * checked once every section is loaded (backends may come later in the
 * file).  A credential is a secret: no message quotes it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_load.h"

const char *
config_outauth_name(enum config_outauth_type t)
{
	switch (t) {
	case CONFIG_OUTAUTH_HEADER:
		return "header_injection";
	case CONFIG_OUTAUTH_EXCHANGE:
		return "token_exchange";
	case CONFIG_OUTAUTH_CODE:
		return "authorization_code";
	case CONFIG_OUTAUTH_UNAUTHENTICATED:
	default:
		return "unauthenticated";
	}
}

/* a new entry in cf_outauth (the array grows: no pointer kept yet) */
static struct config_outauth *
outauth_add(struct loader *ld)
{
	struct config		*cf = ld->ld_cf;
	struct config_outauth	*oa;

	if ((oa = reallocarray(cf->cf_outauth, cf->cf_noutauth + 1,
	    sizeof(*oa))) == NULL) {
		config_error(ld, NULL, "out of memory");
		return NULL;
	}
	cf->cf_outauth = oa;
	oa = &cf->cf_outauth[cf->cf_noutauth++];
	memset(oa, 0, sizeof(*oa));
	return oa;
}

static int
load_outauth_source(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	(void)arg;
	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "inline") == 0)
		return 0;
	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "discovered") == 0)
		return config_error(ld, v, "outgoingAuth source discovered "
		    NOTYET);
	return config_expected(ld, v, path, "inline");
}

static int
load_outauth_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const char *const later[] = { "upstream_inject", "aws_sts",
	    "obo", "xaa", NULL };
	struct config_outauth	*oa = arg;
	size_t			 i;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str,
	    "unauthenticated") == 0) {
		oa->oa_type = CONFIG_OUTAUTH_UNAUTHENTICATED;
		return 0;
	}
	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str,
	    "header_injection") == 0) {
		oa->oa_type = CONFIG_OUTAUTH_HEADER;
		return 0;
	}
	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str,
	    "token_exchange") == 0) {
		oa->oa_type = CONFIG_OUTAUTH_EXCHANGE;
		return 0;
	}
	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str,
	    "authorization_code") == 0) {
		oa->oa_type = CONFIG_OUTAUTH_CODE;
		return 0;
	}
	if (v->cn_type == CN_SCALAR)
		for (i = 0; later[i] != NULL; i++)
			if (strcmp(v->cn_str, later[i]) == 0)
				return config_error(ld, v, "outgoingAuth type "
				    "%s " NOTYET, later[i]);
	return config_expected(ld, v, path, "unauthenticated, "
	    "header_injection, token_exchange or authorization_code");
}

/* RFC 9110 5.6.2: token = 1*tchar */
int
config_http_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) &&
		    strchr("!#$%&'*+-.^_`|~", *s) == NULL)
			return 0;
	return 1;
}

/* RFC 9110 5.5: field-value, visible characters, spaces and tabs, no
 * leading or trailing whitespace; not empty */
int
config_http_value(const char *s)
{
	size_t	 n = strlen(s), i;

	if (n == 0 || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' ||
	    s[n - 1] == '\t')
		return 0;
	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') ||
		    s[i] == 0x7f)
			return 0;
	return 1;
}

/* headers that frame the message or that vmcpd's HTTP client writes:
 * a configured header may not replace them (hop-by-hop ones as RFC 9110
 * 7.6.1) */
int
config_http_framing(const char *name)
{
	static const char *const framing[] = { "Host", "Content-Length",
	    "Content-Type", "Accept", "Transfer-Encoding", "Connection",
	    "Keep-Alive", "TE", "Trailer", "Upgrade", "Expect",
	    "Proxy-Connection", NULL };
	size_t	 i;

	for (i = 0; framing[i] != NULL; i++)
		if (strcasecmp(name, framing[i]) == 0)
			return 1;
	return 0;
}

/* and the MCP headers vmcpd writes itself: a credential may not
 * replace them */
static int
outauth_reserved(const char *name)
{
	static const char *const reserved[] = { "Mcp-Session-Id",
	    "MCP-Protocol-Version", "Last-Event-ID", "Mcp-Method", "Mcp-Name",
	    NULL };
	size_t	 i;

	if (config_http_framing(name))
		return 1;
	for (i = 0; reserved[i] != NULL; i++)
		if (strcasecmp(name, reserved[i]) == 0)
			return 1;
	return strncasecmp(name, "Mcp-Param-", 10) == 0;
}

static int
load_header_name(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	if (load_string(ld, v, path, &oa->oa_header_name) == -1)
		return -1;
	if (!config_http_token(oa->oa_header_name))
		return config_expected(ld, v, path, "an HTTP header name "
		    "(RFC 9110 token)");
	if (outauth_reserved(oa->oa_header_name))
		return config_error(ld, v, "%s: %s is a header vmcpd sets "
		    "itself", path, oa->oa_header_name);
	return 0;
}

/* the value is a secret: messages name the key, never quote it */
static int
outauth_set_value(struct loader *ld, struct cnode *v, const char *path,
    struct config_outauth *oa, const char *val)
{
	if (!config_http_value(val))
		return config_error(ld, v, "%s: expected an HTTP header value "
		    "(visible characters and spaces, not empty, no line "
		    "breaks)", path);
	/* both keys given: the load fails later, the first is freed */
	if (oa->oa_header_value != NULL) {
		explicit_bzero(oa->oa_header_value,
		    strlen(oa->oa_header_value));
		free(oa->oa_header_value);
	}
	if ((oa->oa_header_value = strdup(val)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

static int
load_header_value(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		return config_error(ld, v, "%s: expected a string", path);
	return outauth_set_value(ld, v, path, oa, v->cn_str);
}

static int
load_header_env(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;
	const char		*val;

	if (load_env_ref(ld, v, path, &oa->oa_header_env, &val) == -1)
		return -1;
	return outauth_set_value(ld, v, path, oa, val);
}

static int
load_header_injection(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;
	const struct field fields[] = {
		{ "headerName", F_FN, oa, load_header_name, 0, 0 },
		{ "headerValue", F_FN, oa, load_header_value, 0, 0 },
		{ "headerValueEnv", F_FN, oa, load_header_env, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "headerName") == -1)
		return -1;
	if (cnode_get(n, "headerValue") != NULL &&
	    cnode_get(n, "headerValueEnv") != NULL)
		return config_error(ld, cnode_get_key(n, "headerValueEnv"),
		    "%s: headerValue and headerValueEnv are exclusive; set one",
		    path);
	if (oa->oa_header_value == NULL)
		return config_error(ld, n, "%s: needs headerValue or "
		    "headerValueEnv", path);
	return 0;
}

/*
 * An authorization server's URL: https://, or http:// to a loopback
 * host only (client secrets and tokens travel on it)
 */
int
config_outauth_url(struct loader *ld, struct cnode *v, const char *path,
    char **dst)
{
	const char	*u;

	if (load_string(ld, v, path, dst) == -1)
		return -1;
	u = *dst;
	if (strncasecmp(u, "https://", 8) == 0 && u[8] != '\0' &&
	    u[8] != '/')
		return 0;
	if (strncasecmp(u, "http://", 7) == 0 && config_outauth_loopback(u + 7))
		return 0;
	return config_expected(ld, v, path, "an https:// URL (http:// only "
	    "to 127.0.0.1, [::1] or localhost)");
}

static int
load_tx_url(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_url(ld, v, path, &oa->oa_tx_url);
}

/* "127.x.y.z", "[::1]" or "localhost", then ':', '/' or the end */
int
config_outauth_loopback(const char *host)
{
	size_t	 n;

	if (strncmp(host, "[::1]", 5) == 0)
		n = 5;
	else if (strncasecmp(host, "localhost", 9) == 0)
		n = 9;
	else if (strncmp(host, "127.", 4) == 0)
		n = 4 + strspn(host + 4, "0123456789.");
	else
		return 0;
	return host[n] == '\0' || host[n] == ':' || host[n] == '/';
}

/* a client secret into *dst (the one before, if any, zeroed) */
static int
config_outauth_secret(struct loader *ld, struct cnode *v, const char *path,
    char **dst, const char *val)
{
	if (*val == '\0')
		return config_error(ld, v, "%s: expected a non-empty secret",
		    path);
	if (*dst != NULL) {
		explicit_bzero(*dst, strlen(*dst));
		free(*dst);
	}
	if ((*dst = strdup(val)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

/* clientSecret: inline */
int
config_outauth_secret_str(struct loader *ld, struct cnode *v,
    const char *path, char **dst)
{
	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		return config_error(ld, v, "%s: expected a string", path);
	return config_outauth_secret(ld, v, path, dst, v->cn_str);
}

/* clientSecretEnv: the variable's name into *env, its value into *dst */
int
config_outauth_secret_env(struct loader *ld, struct cnode *v,
    const char *path, char **env, char **dst)
{
	const char	*val;

	if (load_env_ref(ld, v, path, env, &val) == -1)
		return -1;
	return config_outauth_secret(ld, v, path, dst, val);
}

static int
load_tx_secret(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_secret_str(ld, v, path, &oa->oa_tx_secret);
}

static int
load_tx_secret_env(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_secret_env(ld, v, path, &oa->oa_tx_secret_env,
	    &oa->oa_tx_secret);
}

/* RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) */
static int
tx_scope_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < 0x21 || *s > 0x7e || *s == '"' || *s == '\\')
			return 0;
	return 1;
}

/* a sequence of scopes, space-joined into *dst (NULL if empty) */
int
config_outauth_scopes(struct loader *ld, struct cnode *v, const char *path,
    char **dst)
{
	char			**sv = NULL, *j = NULL;
	size_t			 n = 0, i, len = 0;
	int			 rc = -1;

	if (load_string_seq(ld, v, path, "a sequence of scopes", &sv,
	    &n) == -1)
		goto done;
	for (i = 0; i < n; i++) {
		if (!tx_scope_token(sv[i])) {
			config_error(ld, v->cn_kids[i], "%s[%zu]: expected an "
			    "OAuth scope (RFC 6749 3.3: no spaces, quotes or "
			    "backslashes)", path, i);
			goto done;
		}
		len += strlen(sv[i]) + 1;
	}
	if (n > 0) {
		if ((j = malloc(len)) == NULL) {
			config_error(ld, NULL, "out of memory");
			goto done;
		}
		for (i = 0, len = 0; i < n; i++) {
			if (i > 0)
				j[len++] = ' ';
			memcpy(j + len, sv[i], strlen(sv[i]));
			len += strlen(sv[i]);
		}
		j[len] = '\0';
	}
	free(*dst);
	*dst = j;
	rc = 0;
 done:
	for (i = 0; sv != NULL && sv[i] != NULL; i++)
		free(sv[i]);
	free(sv);
	return rc;
}

static int
load_tx_scopes(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_scopes(ld, v, path, &oa->oa_tx_scopes);
}

/* RFC 8693 3: the URN, or the reference's short forms */
static int
load_tx_subject_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const char *const types[][2] = {
		{ "access_token", CONFIG_TX_ACCESS_TOKEN },
		{ "id_token", "urn:ietf:params:oauth:token-type:id_token" },
		{ "jwt", "urn:ietf:params:oauth:token-type:jwt" },
	};
	struct config_outauth	*oa = arg;
	size_t			 i;

	if (v->cn_type == CN_SCALAR)
		for (i = 0; i < nitems(types); i++)
			if (strcmp(v->cn_str, types[i][0]) == 0 ||
			    strcmp(v->cn_str, types[i][1]) == 0) {
				oa->oa_tx_subject_type = types[i][1];
				return 0;
			}
	return config_expected(ld, v, path, "access_token, id_token or jwt "
	    "(or its urn:ietf:params:oauth:token-type: URN)");
}

static int
load_token_exchange(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;
	const struct field fields[] = {
		{ "tokenUrl", F_FN, oa, load_tx_url, 0, 0 },
		{ "clientId", F_STRING, &oa->oa_tx_client_id, NULL, 0, 0 },
		{ "clientSecret", F_FN, oa, load_tx_secret, 0, 0 },
		{ "clientSecretEnv", F_FN, oa, load_tx_secret_env, 0, 0 },
		{ "audience", F_STRING, &oa->oa_tx_audience, NULL, 0, 0 },
		{ "scopes", F_FN, oa, load_tx_scopes, 0, 0 },
		{ "subjectTokenType", F_FN, oa, load_tx_subject_type, 0, 0 },
		{ "subjectProviderName", F_NOTYET, NULL, NULL, 0, 0 },
	};

	oa->oa_tx_subject_type = CONFIG_TX_ACCESS_TOKEN;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "tokenUrl") == -1)
		return -1;
	if (cnode_get(n, "clientSecret") != NULL &&
	    cnode_get(n, "clientSecretEnv") != NULL)
		return config_error(ld, cnode_get_key(n, "clientSecretEnv"),
		    "%s: clientSecret and clientSecretEnv are exclusive; set "
		    "one", path);
	if (oa->oa_tx_secret != NULL && oa->oa_tx_client_id == NULL)
		return config_error(ld, n, "%s: a client secret needs clientId",
		    path);
	return 0;
}

/* each type's section: given with that type only, and needed by it */
static const struct {
	enum config_outauth_type	 t;
	const char			*key;
	const char			*what;
} outauth_sections[] = {
	{ CONFIG_OUTAUTH_HEADER, "headerInjection", "headerName, "
	    "headerValue or headerValueEnv" },
	{ CONFIG_OUTAUTH_EXCHANGE, "tokenExchange", "tokenUrl, clientId, "
	    "..." },
	{ CONFIG_OUTAUTH_CODE, "authorizationCode", "clientId, callbackUrl, "
	    "issuer or authorizationUrl and tokenUrl, ..." },
};

static int
load_strategy(struct loader *ld, struct cnode *n, const char *path,
    struct config_outauth *oa)
{
	struct cnode	*sec;
	size_t		 i;
	const struct field fields[] = {
		{ "type", F_FN, oa, load_outauth_type, 0, 0 },
		{ "headerInjection", F_FN, oa, load_header_injection, 0, 0 },
		{ "tokenExchange", F_FN, oa, load_token_exchange, 0, 0 },
		{ "authorizationCode", F_FN, oa, load_authorization_code,
		    0, 0 },
		{ "upstreamInject", F_NOTYET, NULL, NULL, 0, 0 },
		{ "awsSts", F_NOTYET, NULL, NULL, 0, 0 },
		{ "obo", F_NOTYET, NULL, NULL, 0, 0 },
		{ "xaa", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	for (i = 0; i < nitems(outauth_sections); i++) {
		sec = cnode_get_key(n, outauth_sections[i].key);
		if (oa->oa_type == outauth_sections[i].t && sec == NULL)
			return config_error(ld, cnode_get(n, "type"), "%s: "
			    "type %s needs %s %s section (%s)", path,
			    config_outauth_name(oa->oa_type),
			    outauth_sections[i].key[0] == 'a' ? "an" : "a",
			    outauth_sections[i].key, outauth_sections[i].what);
		if (oa->oa_type != outauth_sections[i].t && sec != NULL)
			return config_error(ld, sec, "%s.%s: only with type "
			    "%s", path, outauth_sections[i].key,
			    config_outauth_name(outauth_sections[i].t));
	}
	return 0;
}

static int
load_outauth_default(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_outauth	*oa;

	(void)arg;
	if ((oa = outauth_add(ld)) == NULL)
		return -1;
	ld->ld_outauth_default = n;
	return load_strategy(ld, n, path, oa);
}

static int
load_outauth_backends(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_outauth	*oa;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i;

	(void)arg;
	if (load_map_check(ld, n, path) == -1)
		return -1;
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
		if ((oa = outauth_add(ld)) == NULL)
			return -1;
		if ((oa->oa_backend = strdup(n->cn_kids[i]->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
		if (load_strategy(ld, n->cn_kids[i + 1], kpath, oa) == -1)
			return -1;
	}
	ld->ld_outauth_backends = n;
	return 0;
}

int
load_outgoing_auth(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	const struct field fields[] = {
		{ "source", F_FN, NULL, load_outauth_source, 0, 0 },
		{ "default", F_FN, NULL, load_outauth_default, 0, 0 },
		{ "backends", F_FN, NULL, load_outauth_backends, 0, 0 },
	};

	(void)arg;
	return load_fields(ld, n, path, fields, nitems(fields));
}

/*
 * Each backend's strategy.  The names in backends must be configured
 * backends; a credential goes only where vmcpd speaks HTTP to the
 * backend itself (a bridged sse or stdio backend would silently go
 * without it, and a missing credential is never a quiet fallback).
 */
int
config_outauth_resolve(struct loader *ld)
{
	struct config		*cf = ld->ld_cf;
	struct config_backend	*be;
	const struct config_outauth *def = NULL, *oa;
	struct cnode		*key;
	size_t			 i, j;

	for (i = 0; i < cf->cf_noutauth; i++)
		if (cf->cf_outauth[i].oa_backend == NULL)
			def = &cf->cf_outauth[i];
	for (i = 0; ld->ld_outauth_backends != NULL &&
	    i + 1 < ld->ld_outauth_backends->cn_nkids; i += 2) {
		key = ld->ld_outauth_backends->cn_kids[i];
		if (config_backend_find(cf, key->cn_str) == NULL)
			return config_error(ld, key, "outgoingAuth.backends: "
			    "no backend named \"%s\"", key->cn_str);
	}
	for (i = 0; i < cf->cf_nbackends; i++) {
		be = &cf->cf_backends[i];
		oa = def;
		for (j = 0; j < cf->cf_noutauth; j++)
			if (cf->cf_outauth[j].oa_backend != NULL &&
			    strcmp(cf->cf_outauth[j].oa_backend,
			    be->cb_name) == 0)
				oa = &cf->cf_outauth[j];
		if (oa == NULL || oa->oa_type ==
		    CONFIG_OUTAUTH_UNAUTHENTICATED) {
			be->cb_outauth = NULL;
			continue;
		}
		if (be->cb_transport != TRANSPORT_STREAMABLE_HTTP)
			return config_error(ld, oa->oa_backend != NULL ?
			    cnode_get_key(ld->ld_outauth_backends,
			    be->cb_name) : ld->ld_outauth_default,
			    "outgoingAuth: backend %s uses transport %s; %s "
			    "needs streamable-http (give it type "
			    "unauthenticated in outgoingAuth.backends)",
			    be->cb_name, config_transport_name(
			    be->cb_transport), config_outauth_name(
			    oa->oa_type));
		if (oa->oa_type == CONFIG_OUTAUTH_EXCHANGE &&
		    cf->cf_inauth.ci_type != CONFIG_INAUTH_OIDC)
			return config_error(ld, oa->oa_backend != NULL ?
			    cnode_get_key(ld->ld_outauth_backends,
			    be->cb_name) : ld->ld_outauth_default,
			    "outgoingAuth: backend %s uses token_exchange, "
			    "which needs incomingAuth type oidc (the client's "
			    "access token is what is exchanged)", be->cb_name);
		if (oa->oa_type == CONFIG_OUTAUTH_CODE &&
		    config_outauth_code_check(ld, oa->oa_backend != NULL ?
		    cnode_get_key(ld->ld_outauth_backends, be->cb_name) :
		    ld->ld_outauth_default, be->cb_name) == -1)
			return -1;
		be->cb_outauth = oa;
	}
	return 0;
}

void
config_outauth_free(struct config *cf)
{
	struct config_outauth	*oa;
	size_t			 i;

	for (i = 0; i < cf->cf_noutauth; i++) {
		oa = &cf->cf_outauth[i];
		free(oa->oa_backend);
		free(oa->oa_header_name);
		free(oa->oa_header_env);
		if (oa->oa_header_value != NULL) {
			explicit_bzero(oa->oa_header_value,
			    strlen(oa->oa_header_value));
			free(oa->oa_header_value);
		}
		free(oa->oa_tx_url);
		free(oa->oa_tx_client_id);
		free(oa->oa_tx_secret_env);
		free(oa->oa_tx_audience);
		free(oa->oa_tx_scopes);
		if (oa->oa_tx_secret != NULL) {
			explicit_bzero(oa->oa_tx_secret,
			    strlen(oa->oa_tx_secret));
			free(oa->oa_tx_secret);
		}
		config_outauth_code_free(oa);
	}
	free(cf->cf_outauth);
	cf->cf_outauth = NULL;
	cf->cf_noutauth = 0;
}
