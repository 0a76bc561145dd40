/*
 * vmcpd.yaml's outgoingAuth type authorization_code (worker/link/link.h):
 * each principal's own tokens from the backend's authorization server
 * (RFC 6749 4.1 with PKCE), obtained through a consent in the person's
 * browser.  The section names the authorization server (an issuer whose
 * RFC 8414 metadata is fetched at run time, or its two endpoints),
 * vmcpd's client there and vmcpd's own callback.  The client secret is
 * a secret: no message quotes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_load.h"

#define CODE_CALLBACK_PATH	"/oauth/callback"

static int
load_ac_issuer(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_url(ld, v, path, &oa->oa_ac_issuer);
}

static int
load_ac_authorize_url(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_url(ld, v, path, &oa->oa_ac_authorize_url);
}

static int
load_ac_token_url(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_url(ld, v, path, &oa->oa_ac_token_url);
}

/* vmcpd's own: served on the main listener at exactly /oauth/callback
 * (no query: the authorization server appends its own) */
static int
load_ac_callback(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;
	const char		*p;

	if (config_outauth_url(ld, v, path, &oa->oa_ac_callback_url) == -1)
		return -1;
	p = strstr(oa->oa_ac_callback_url, "://") + 3;
	p += strcspn(p, "/?#");
	if (strcmp(p, CODE_CALLBACK_PATH) != 0)
		return config_expected(ld, v, path, "vmcpd's own URL ending "
		    "in the path " CODE_CALLBACK_PATH " (no query), e.g. "
		    "https://vmcpd.example.com" CODE_CALLBACK_PATH);
	return 0;
}

static int
load_ac_secret(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_secret_str(ld, v, path, &oa->oa_ac_secret);
}

static int
load_ac_secret_env(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_secret_env(ld, v, path, &oa->oa_ac_secret_env,
	    &oa->oa_ac_secret);
}

static int
load_ac_scopes(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	return config_outauth_scopes(ld, v, path, &oa->oa_ac_scopes);
}

/* RFC 6749 2.3.1: in an Authorization header, or in the body */
static int
load_ac_auth_method(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str,
	    "client_secret_basic") == 0)
		oa->oa_ac_secret_post = 0;
	else if (v->cn_type == CN_SCALAR && strcmp(v->cn_str,
	    "client_secret_post") == 0)
		oa->oa_ac_secret_post = 1;
	else
		return config_expected(ld, v, path, "client_secret_basic or "
		    "client_secret_post");
	return 0;
}

/* the parameters vmcpd sets itself on the authorization request
 * (RFC 6749 4.1.1, RFC 7636 4.3) */
static int
ac_param_ours(const char *name)
{
	static const char *const ours[] = { "response_type", "client_id",
	    "redirect_uri", "scope", "state", "code_challenge",
	    "code_challenge_method", NULL };
	size_t	 i;

	for (i = 0; ours[i] != NULL; i++)
		if (strcmp(name, ours[i]) == 0)
			return 1;
	return 0;
}

static int
load_ac_extra(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;
	struct cnode		*k, *v;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, np;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	np = n->cn_nkids / 2;
	if ((oa->oa_ac_extra = calloc(2 * np + 1, sizeof(char *))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < np; i++) {
		k = n->cn_kids[2 * i];
		v = n->cn_kids[2 * i + 1];
		config_path(kpath, sizeof(kpath), path, k);
		if (ac_param_ours(k->cn_str))
			return config_error(ld, k, "%s: %s is a parameter "
			    "vmcpd sets itself", kpath, k->cn_str);
		if (*k->cn_str == '\0')
			return config_error(ld, k, "%s: expected a parameter "
			    "name", path);
		if ((oa->oa_ac_extra[2 * i] = strdup(k->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
		if (v->cn_type != CN_SCALAR || cnode_is_null(v))
			return config_error(ld, v, "%s: expected a string",
			    kpath);
		if ((oa->oa_ac_extra[2 * i + 1] = strdup(v->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
	}
	return 0;
}

int
load_authorization_code(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_outauth	*oa = arg;
	const struct field fields[] = {
		{ "issuer", F_FN, oa, load_ac_issuer, 0, 0 },
		{ "authorizationUrl", F_FN, oa, load_ac_authorize_url, 0, 0 },
		{ "tokenUrl", F_FN, oa, load_ac_token_url, 0, 0 },
		{ "clientId", F_STRING, &oa->oa_ac_client_id, NULL, 0, 0 },
		{ "clientSecret", F_FN, oa, load_ac_secret, 0, 0 },
		{ "clientSecretEnv", F_FN, oa, load_ac_secret_env, 0, 0 },
		{ "scopes", F_FN, oa, load_ac_scopes, 0, 0 },
		{ "callbackUrl", F_FN, oa, load_ac_callback, 0, 0 },
		{ "tokenEndpointAuthMethod", F_FN, oa, load_ac_auth_method,
		    0, 0 },
		{ "extraAuthorizeParams", F_FN, oa, load_ac_extra, 0, 0 },
	};
	int	 urls;

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "clientId") == -1 ||
	    config_require(ld, n, path, "callbackUrl") == -1)
		return -1;
	if (cnode_get(n, "clientSecret") != NULL &&
	    cnode_get(n, "clientSecretEnv") != NULL)
		return config_error(ld, cnode_get_key(n, "clientSecretEnv"),
		    "%s: clientSecret and clientSecretEnv are exclusive; set "
		    "one", path);
	urls = (oa->oa_ac_authorize_url != NULL) +
	    (oa->oa_ac_token_url != NULL);
	if (oa->oa_ac_issuer != NULL && urls > 0)
		return config_error(ld, cnode_get_key(n, "issuer"), "%s: "
		    "issuer (its endpoints from its RFC 8414 metadata) and "
		    "authorizationUrl/tokenUrl are exclusive; set one", path);
	if (oa->oa_ac_issuer == NULL && urls < 2)
		return config_error(ld, n, "%s: needs issuer, or both "
		    "authorizationUrl and tokenUrl", path);
	return 0;
}

/*
 * The person consents in a browser, after logging in at the issuer the
 * clients' tokens come from, as vmcpd's client there: incomingAuth oidc
 * with its clientId and clientSecretEnv.
 */
int
config_outauth_code_check(struct loader *ld, struct cnode *at,
    const char *backend)
{
	const struct config_inauth *ci = &ld->ld_cf->cf_inauth;

	if (ci->ci_type != CONFIG_INAUTH_OIDC)
		return config_error(ld, at, "outgoingAuth: backend %s uses "
		    "authorization_code, which needs incomingAuth type oidc "
		    "(the person who consents logs in at that issuer in the "
		    "browser first)", backend);
	if (ci->ci_oidc.oi_client_id == NULL ||
	    ci->ci_oidc.oi_client_secret == NULL)
		return config_error(ld, at, "outgoingAuth: backend %s uses "
		    "authorization_code, which needs incomingAuth.oidc."
		    "clientId and clientSecretEnv (vmcpd's client at the "
		    "issuer, where the person who consents logs in in the "
		    "browser first)", backend);
	return 0;
}

void
config_outauth_code_free(struct config_outauth *oa)
{
	size_t	 i;

	free(oa->oa_ac_issuer);
	free(oa->oa_ac_authorize_url);
	free(oa->oa_ac_token_url);
	free(oa->oa_ac_client_id);
	free(oa->oa_ac_secret_env);
	free(oa->oa_ac_scopes);
	free(oa->oa_ac_callback_url);
	if (oa->oa_ac_secret != NULL) {
		explicit_bzero(oa->oa_ac_secret, strlen(oa->oa_ac_secret));
		free(oa->oa_ac_secret);
	}
	for (i = 0; oa->oa_ac_extra != NULL && oa->oa_ac_extra[i] != NULL;
	    i++)
		free(oa->oa_ac_extra[i]);
	free(oa->oa_ac_extra);
}
