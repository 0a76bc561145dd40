/*
 * vmcpd.yaml's incomingAuth: the type (anonymous, oidc, local), the
 * oidc keys of the reference vMCP (issuer, audience, jwksUrl, ...),
 * daemon.listen's "unix:/path" form (local's listener), and the check
 * against daemon.listen once every section is loaded: an
 * anonymous daemon on an address other than loopback must be asked for
 * (allowAnonymousRemote), never a default; incomingAuth.authz, Cedar
 * policies parsed and checked here so a bad one stops `vmcpd -n`.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config_load.h"
#include "shared/cedar.h"

#define AUTH_SKEW_DEFAULT_MS	(30ULL * 1000)
#define AUTH_SKEW_MAX_MS	(5ULL * 60 * 1000)

static int
load_inauth_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_inauth	*ci = arg;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "anonymous") == 0)
		ci->ci_type = CONFIG_INAUTH_ANONYMOUS;
	else if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "oidc") == 0)
		ci->ci_type = CONFIG_INAUTH_OIDC;
	else if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "local") == 0)
		ci->ci_type = CONFIG_INAUTH_LOCAL;
	else
		return config_expected(ld, v, path, "anonymous, oidc or local");
	return 0;
}

/*
 * An absolute http(s) URL without a fragment or user info; http only
 * with insecureAllowHttp (checked once the section is loaded, since
 * the flag may come after the URL).
 */
static int
load_url(struct loader *ld, struct cnode *v, const char *path, char **dst)
{
	const char	*s, *a;
	size_t		 alen;

	if (load_string(ld, v, path, dst) == -1)
		return -1;
	s = *dst;
	if (strncasecmp(s, "https://", 8) == 0)
		a = s + 8;
	else if (strncasecmp(s, "http://", 7) == 0)
		a = s + 7;
	else
		return config_expected(ld, v, path, "an http:// or https:// "
		    "URL");
	alen = strcspn(a, "/?#");
	if (alen == 0 || memchr(a, '@', alen) != NULL ||
	    strchr(s, '#') != NULL || strpbrk(s, " \t\r\n\"\\") != NULL)
		return config_expected(ld, v, path, "an http:// or https:// "
		    "URL with a host, no user info, fragment or spaces");
	return 0;
}

#define URL_FN(name, member)						\
static int								\
name(struct loader *ld, struct cnode *v, const char *path, void *arg)	\
{									\
	struct config_oidc *oi = arg;					\
									\
	return load_url(ld, v, path, &oi->member);			\
}
URL_FN(load_oidc_issuer, oi_issuer)
URL_FN(load_oidc_jwks, oi_jwks_url)
URL_FN(load_oidc_introspection, oi_introspection_url)
URL_FN(load_oidc_resource, oi_resource)

static int
load_oidc_scopes(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_oidc	*oi = arg;
	size_t			 i;

	if (load_string_seq(ld, v, path, "a sequence of scope names",
	    &oi->oi_scopes, &oi->oi_nscopes) == -1)
		return -1;
	/* RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) */
	for (i = 0; i < oi->oi_nscopes; i++)
		if (strpbrk(oi->oi_scopes[i], " \"\\") != NULL)
			return config_expected(ld, v->cn_kids[i], path,
			    "a scope name without spaces, quotes or "
			    "backslashes");
	return 0;
}

static int
load_oidc_secret_env(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_oidc	*oi = arg;
	const char		*val;

	if (load_env_ref(ld, v, path, &oi->oi_client_secret_env, &val) == -1)
		return -1;
	free(oi->oi_client_secret);
	if ((oi->oi_client_secret = strdup(val)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

/* caBundlePath: a readable PEM file, by absolute path */
int
load_ca_path(struct loader *ld, struct cnode *v, const char *path,
    char **dst)
{
	if (load_string(ld, v, path, dst) == -1)
		return -1;
	if ((*dst)[0] != '/')
		return config_expected(ld, v, path, "an absolute path");
	if (access(*dst, R_OK) == -1)
		return config_error(ld, v, "%s: cannot read %s", path, *dst);
	return 0;
}

static int
load_oidc_ca(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config_oidc	*oi = arg;

	return load_ca_path(ld, v, path, &oi->oi_ca_bundle);
}

/* http:// only where asked for */
static int
oidc_check_http(struct loader *ld, struct cnode *n, const char *path,
    const char *key, const char *url, int insecure)
{
	if (url == NULL || insecure || strncasecmp(url, "http://", 7) != 0)
		return 0;
	return config_error(ld, cnode_get(n, key), "%s.%s: an http:// URL "
	    "needs insecureAllowHttp: true (tokens and keys would travel "
	    "unprotected); use https://", path, key);
}

static int
load_oidc(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_oidc	*oi = arg;
	const struct field fields[] = {
		{ "issuer", F_FN, oi, load_oidc_issuer, 0, 0 },
		{ "audience", F_STRING, &oi->oi_audience, NULL, 0, 0 },
		{ "clientId", F_STRING, &oi->oi_client_id, NULL, 0, 0 },
		{ "clientSecretEnv", F_FN, oi, load_oidc_secret_env, 0, 0 },
		{ "resource", F_FN, oi, load_oidc_resource, 0, 0 },
		{ "jwksUrl", F_FN, oi, load_oidc_jwks, 0, 0 },
		{ "introspectionUrl", F_FN, oi, load_oidc_introspection,
		    0, 0 },
		{ "scopes", F_FN, oi, load_oidc_scopes, 0, 0 },
		{ "caBundlePath", F_FN, oi, load_oidc_ca, 0, 0 },
		{ "insecureAllowHttp", F_BOOL, &oi->oi_insecure_http, NULL,
		    0, 0 },
		{ "jwksAllowPrivateIp", F_BOOL, &oi->oi_jwks_private_ip,
		    NULL, 0, 0 },
		{ "protectedResourceAllowPrivateIp", F_NOTYET, NULL, NULL,
		    0, 0 },
		{ "clockSkew", F_DURATION, &oi->oi_skew_ms, NULL, 0, 0 },
	};

	oi->oi_skew_ms = AUTH_SKEW_DEFAULT_MS;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "issuer") == -1 ||
	    config_require(ld, n, path, "audience") == -1)
		return -1;
	if (oi->oi_skew_ms > AUTH_SKEW_MAX_MS)
		return config_error(ld, cnode_get(n, "clockSkew"),
		    "%s.clockSkew: expected at most 5m", path);
	if (oidc_check_http(ld, n, path, "issuer", oi->oi_issuer,
	    oi->oi_insecure_http) == -1 ||
	    oidc_check_http(ld, n, path, "jwksUrl", oi->oi_jwks_url,
	    oi->oi_insecure_http) == -1 ||
	    oidc_check_http(ld, n, path, "introspectionUrl",
	    oi->oi_introspection_url, oi->oi_insecure_http) == -1)
		return -1;
	if (oi->oi_client_secret != NULL && oi->oi_client_id == NULL)
		return config_error(ld, cnode_get_key(n, "clientSecretEnv"),
		    "%s.clientSecretEnv: needs clientId", path);
	return 0;
}

/* the actions of the reference's entity model (docs/ARCHITECTURE.md) */
static const char *const authz_actions[] = {
	"call_tool", "get_prompt", "read_resource", NULL
};

#define AUTHZ_FILE	"policy"	/* cedar_parse()'s name for a text */

/*
 * A Cedar message "policy:L:C: msg" about the text of scalar v, at the
 * place in the file where a literal block (|) or a one-line scalar has
 * it; elsewhere (folded text) at the scalar, with L and C.
 */
static int
authz_error(struct loader *ld, const struct cnode *v, const char *path,
    const char *cerr)
{
	unsigned	 l, c;
	int		 off = 0;
	const char	*msg;

	if (sscanf(cerr, AUTHZ_FILE ":%u:%u: %n", &l, &c, &off) != 2 ||
	    off == 0)
		return config_error(ld, v, "%s: %s", path, cerr);
	msg = cerr + off;
	if (v->cn_body_line > 0)
		return config_errorat(ld, v->cn_body_line + l - 1,
		    v->cn_body_col + c - 1, "%s: %s", path, msg);
	if (v->cn_oneline && l == 1)
		return config_errorat(ld, v->cn_line,
		    v->cn_col + (v->cn_quoted ? 1 : 0) + c - 1, "%s: %s",
		    path, msg);
	return config_error(ld, v, "%s: line %u, column %u of the policy: %s",
	    path, l, c, msg);
}

/*
 * Each text is parsed and checked alone, for its positions; the set is
 * then all of them as one text.  An empty list or text would admit
 * nothing or, read as "no policy", everything: both are errors.
 */
static int
load_authz_policies(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_authz	*az = arg;
	struct cedar_policyset	*ps;
	struct cnode		*k;
	char			 err[CEDAR_ERRLEN], ipath[PATH_MAX_LEN];
	char			*all = NULL, *p;
	size_t			 i, len = 0;
	int			 rc = -1;

	if (v->cn_type != CN_SEQ || v->cn_nkids == 0)
		return config_expected(ld, v, path, "a non-empty sequence of "
		    "Cedar policy texts");
	for (i = 0; i < v->cn_nkids; i++) {
		k = v->cn_kids[i];
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (k->cn_type != CN_SCALAR) {
			config_expected(ld, k, ipath, "a Cedar policy text");
			goto out;
		}
		if ((ps = cedar_parse(AUTHZ_FILE, k->cn_str, k->cn_len, err,
		    sizeof(err))) == NULL) {
			authz_error(ld, k, ipath, err);
			goto out;
		}
		if (cedar_policyset_len(ps) == 0)
			config_error(ld, k, "%s: holds no policy", ipath);
		else if (cedar_policyset_check(ps, authz_actions, err,
		    sizeof(err)) == -1)
			authz_error(ld, k, ipath, err);
		else
			rc = 0;
		cedar_policyset_free(ps);
		if (rc == -1)
			goto out;
		rc = -1;
		if ((p = realloc(all, len + k->cn_len + 2)) == NULL) {
			config_error(ld, NULL, "out of memory");
			goto out;
		}
		all = p;
		memcpy(all + len, k->cn_str, k->cn_len);
		len += k->cn_len;
		all[len++] = '\n';
	}
	cedar_policyset_free(az->az_policies);
	if ((az->az_policies = cedar_parse(AUTHZ_FILE, all, len, err,
	    sizeof(err))) == NULL) {
		config_error(ld, v, "%s: %s", path, err);
		goto out;
	}
	rc = 0;
out:
	free(all);
	return rc;
}

static int
load_authz_entities(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_authz	*az = arg;
	json_t			*j;
	json_error_t		 je;
	char			 err[CEDAR_ERRLEN];
	int			 rc;

	if (v->cn_type != CN_SCALAR)
		return config_expected(ld, v, path, "Cedar entities as a JSON "
		    "string");
	if ((j = json_loadb(v->cn_str, v->cn_len, 0, &je)) == NULL)
		return config_error(ld, v, "%s: not JSON: %s (line %d, column "
		    "%d of the value)", path, je.text, je.line, je.column);
	cedar_entities_free(az->az_entities);
	if ((az->az_entities = cedar_entities_new(NULL)) == NULL) {
		json_decref(j);
		return config_error(ld, NULL, "out of memory");
	}
	rc = cedar_entities_add_json(az->az_entities, j, err, sizeof(err));
	json_decref(j);
	if (rc == -1)
		return config_error(ld, v, "%s: %s", path, err);
	return 0;
}

static int
load_authz_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_authz	*az = arg;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "cedar") == 0)
		az->az_cedar = 1;
	else if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "none") == 0)
		az->az_cedar = 0;
	else
		return config_expected(ld, v, path, "cedar or none");
	return 0;
}

/* groupEntityType: a Cedar type name such as THVGroup or NS::Group */
static int
load_authz_group_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_authz	*az = arg;
	const char		*s;

	if (load_string(ld, v, path, &az->az_group_type) == -1)
		return -1;
	for (s = az->az_group_type; *s != '\0'; ) {
		if (!isalpha((unsigned char)*s) && *s != '_')
			break;
		while (isalnum((unsigned char)*s) || *s == '_')
			s++;
		if (*s == '\0')
			return 0;
		if (strncmp(s, "::", 2) != 0)
			break;
		s += 2;
	}
	return config_expected(ld, v, path, "a Cedar type name (letters, "
	    "digits and _, parts joined by ::)");
}

static int
load_authz(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_authz	*az = arg;
	struct cnode		*pol;
	const struct field fields[] = {
		{ "type", F_FN, az, load_authz_type, 0, 0 },
		{ "policies", F_FN, az, load_authz_policies, 0, 0 },
		{ "entitiesJson", F_FN, az, load_authz_entities, 0, 0 },
		{ "groupClaimName", F_STRING, &az->az_group_claim, NULL,
		    0, 0 },
		{ "roleClaimName", F_STRING, &az->az_role_claim, NULL, 0, 0 },
		{ "groupEntityType", F_FN, az, load_authz_group_type, 0, 0 },
		{ "primaryUpstreamProvider", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "type") == -1)
		return -1;
	pol = cnode_get_key(n, "policies");
	if (!az->az_cedar) {
		if (pol != NULL)
			return config_error(ld, pol, "%s.policies: only with "
			    "type: cedar", path);
		return 0;
	}
	if (pol == NULL)
		return config_error(ld, cnode_get(n, "type"), "%s: type cedar "
		    "needs policies (a non-empty list; no list would allow "
		    "everything)", path);
	return 0;
}

int
config_auth_load(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_inauth	*ci = &cf->cf_inauth;
	struct cnode		*o;
	const struct field fields[] = {
		{ "type", F_FN, ci, load_inauth_type, 0, 0 },
		{ "oidc", F_FN, &ci->ci_oidc, load_oidc, 0, 0 },
		{ "allowAnonymousRemote", F_BOOL, &ci->ci_anon_remote, NULL,
		    0, 0 },
		{ "authz", F_FN, &ci->ci_authz, load_authz, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "type") == -1)
		return -1;
	o = cnode_get_key(n, "oidc");
	if (ci->ci_type == CONFIG_INAUTH_OIDC && o == NULL)
		return config_error(ld, cnode_get(n, "type"), "%s: type oidc "
		    "needs an oidc section (issuer, audience)", path);
	if (ci->ci_type != CONFIG_INAUTH_OIDC && o != NULL)
		return config_error(ld, o, "%s.oidc: only with type oidc",
		    path);
	/* policies name a principal: anonymous requests would all be denied */
	if (ci->ci_authz.az_cedar && ci->ci_type == CONFIG_INAUTH_ANONYMOUS)
		return config_error(ld, cnode_get(cnode_get(n, "authz"),
		    "type"), "%s.authz: type cedar needs an identity "
		    "(incomingAuth.type oidc or local); anonymous requests "
		    "have no principal and would all be denied", path);
	return 0;
}

/*
 * Anyone who can reach an anonymous daemon uses every backend as it:
 * beyond loopback that must be the operator's explicit choice
 * (ToolHive GHSA-hfrv-94x5-85p2 was this default gone wrong).
 */
int
config_auth_resolve(struct loader *ld)
{
	struct config	*cf = ld->ld_cf;
	const char	*h = cf->cf_listen_host;

	if (cf->cf_inauth.ci_type == CONFIG_INAUTH_LOCAL &&
	    config_listen_unix_path(cf) == NULL)
		return config_error(ld, ld->ld_listen, "incomingAuth: type "
		    "local needs daemon.listen: unix:/path (a peer's user is "
		    "known only on a Unix socket)");
	/* a Unix socket is as local as loopback: its file's mode decides */
	if (cf->cf_inauth.ci_type != CONFIG_INAUTH_ANONYMOUS ||
	    config_listen_unix_path(cf) != NULL ||
	    cf->cf_inauth.ci_anon_remote || config_host_loopback(h,
	    strlen(h)))
		return 0;
	return config_error(ld, ld->ld_listen, "daemon.listen: %s is not a "
	    "loopback address and incomingAuth is anonymous, so anyone who "
	    "reaches it could use every backend; configure "
	    "incomingAuth.type: oidc, or set "
	    "incomingAuth.allowAnonymousRemote: true to accept this", h);
}

const char *
config_listen_unix_path(const struct config *cf)
{
	return strncmp(cf->cf_listen_host, "unix:", 5) == 0 ?
	    cf->cf_listen_host + 5 : NULL;
}

void
config_warn(const struct config *cf, FILE *f, int check)
{
	const char	*h = cf->cf_listen_host;
	size_t		 i;

	/* DNS rebinding: off loopback, only loopback names are served */
	if (!config_host_loopback(h, strlen(h)) &&
	    cf->cf_nallowed_hosts == 0 && config_listen_unix_path(cf) == NULL)
		(void)fprintf(f, "%s: warning: listening on %s with no "
		    "http.allowedHosts: only requests addressed to localhost, "
		    "127.0.0.0/8 or [::1] are served\n", cf->cf_file, h);
	config_telemetry_warn(cf, f);
	/* links are sealed under a key made at each start without one */
	for (i = 0; i < cf->cf_nbackends; i++)
		if (cf->cf_backends[i].cb_outauth != NULL &&
		    cf->cf_backends[i].cb_outauth->oa_type ==
		    CONFIG_OUTAUTH_CODE && !cf->cf_sstore.css_have_seal_key) {
			(void)fprintf(f, "%s: warning: backend %s uses "
			    "authorization_code without "
			    "sessionStorage.sealKeyFile: users' links are "
			    "sealed under a key made at each start, so every "
			    "restart loses them and each user consents "
			    "again\n", cf->cf_file, cf->cf_backends[i].cb_name);
			break;
		}
	/* what no file can check: how the Redis there is run (at start,
	 * the builder asks Redis itself) */
	if (check && cf->cf_sstore.css_provider == CONFIG_SSTORE_REDIS)
		(void)fprintf(f, "%s: note: sessionStorage redis: sessions, "
		    "pending relays, handles, tokens and rate limits last only "
		    "as long as Redis keeps them; run Redis with appendonly "
		    "yes (vmcpd warns once connected if it does not)\n",
		    cf->cf_file);
}

/* "unix:/absolute/path", short enough for sun_path */
int
config_listen_unix(struct loader *ld, struct cnode *v, const char *path,
    struct config *cf)
{
	char	*dup;

	if (v->cn_str[5] != '/' || v->cn_len - 5 >= 108)
		return config_expected(ld, v, path, "unix: and an absolute "
		    "path of at most 107 bytes");
	if ((dup = strdup(v->cn_str)) == NULL)
		return config_error(ld, NULL, "out of memory");
	free(cf->cf_listen_host);
	cf->cf_listen_host = dup;
	cf->cf_listen_port = 0;
	return 0;
}

void
config_auth_free(struct config_inauth *ci)
{
	struct config_oidc	*oi = &ci->ci_oidc;
	size_t			 i;

	free(oi->oi_issuer);
	free(oi->oi_audience);
	free(oi->oi_jwks_url);
	free(oi->oi_client_id);
	free(oi->oi_client_secret_env);
	if (oi->oi_client_secret != NULL) {
		explicit_bzero(oi->oi_client_secret,
		    strlen(oi->oi_client_secret));
		free(oi->oi_client_secret);
	}
	free(oi->oi_resource);
	free(oi->oi_introspection_url);
	free(oi->oi_ca_bundle);
	for (i = 0; oi->oi_scopes != NULL && oi->oi_scopes[i] != NULL; i++)
		free(oi->oi_scopes[i]);
	free(oi->oi_scopes);
	cedar_policyset_free(ci->ci_authz.az_policies);
	cedar_entities_free(ci->ci_authz.az_entities);
	free(ci->ci_authz.az_group_claim);
	free(ci->ci_authz.az_role_claim);
	free(ci->ci_authz.az_group_type);
	memset(ci, 0, sizeof(*ci));
}
