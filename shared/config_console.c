/*
 * daemon.console (config_console.h): the console's token (tokenEnv or
 * tokenFile), an OIDC login of an admin group (login:), and the rule
 * that the diagnostics listener off loopback needs one of them.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config_load.h"

/* a token as the operator typed it: printable ASCII, no space */
static int
console_token_set(struct loader *ld, struct cnode *v, const char *path,
    struct config_console *cc, const char *val, size_t len)
{
	size_t	i;

	if (len < CONSOLE_TOKEN_MIN || len > CONSOLE_TOKEN_MAX)
		return config_error(ld, v, "%s: the token has %zu bytes; "
		    "expected %d to %d (openssl rand -base64 32)", path, len,
		    CONSOLE_TOKEN_MIN, CONSOLE_TOKEN_MAX);
	for (i = 0; i < len; i++)
		if (val[i] <= 0x20 || val[i] >= 0x7f)
			return config_error(ld, v, "%s: the token holds a "
			    "space or a byte that is not printable ASCII",
			    path);
	if (cc->cc_token != NULL) {
		explicit_bzero(cc->cc_token, strlen(cc->cc_token));
		free(cc->cc_token);
	}
	if ((cc->cc_token = strndup(val, len)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

static int
load_console_token_env(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_console	*cc = arg;
	const char		*val;

	if (load_env_ref(ld, v, path, &cc->cc_token_env, &val) == -1)
		return -1;
	return console_token_set(ld, v, path, cc, val, strlen(val));
}

/*
 * Read as the configuration is (start, reload, vmcpd -n): a file that
 * others may read hands them the console, so it is refused.
 */
static int
load_console_token_file(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_console	*cc = arg;
	struct stat		 st;
	char			 buf[CONSOLE_TOKEN_MAX + 2];
	ssize_t			 r;
	size_t			 len = 0;
	int			 fd, rc = -1;

	if (load_string(ld, v, path, &cc->cc_token_file) == -1)
		return -1;
	if (cc->cc_token_file[0] != '/')
		return config_expected(ld, v, path, "an absolute path");
	if ((fd = open(cc->cc_token_file, O_RDONLY | O_CLOEXEC)) == -1)
		return config_error(ld, v, "%s: cannot read %s: %s", path,
		    cc->cc_token_file, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		(void)config_error(ld, v, "%s: %s is not a regular file", path,
		    cc->cc_token_file);
	else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		(void)config_error(ld, v, "%s: %s may be read or written by "
		    "group or others (mode %04o): chmod 600 it", path,
		    cc->cc_token_file, (unsigned int)(st.st_mode & 07777));
	else {
		while (len < sizeof(buf) && (r = read(fd, buf + len,
		    sizeof(buf) - len)) != 0) {
			if (r == -1 && errno == EINTR)
				continue;
			if (r == -1)
				break;
			len += (size_t)r;
		}
		/* one line: its newline is not the token's */
		while (len > 0 && (buf[len - 1] == '\n' ||
		    buf[len - 1] == '\r'))
			len--;
		rc = console_token_set(ld, v, path, cc, buf, len);
	}
	explicit_bzero(buf, sizeof(buf));
	(void)close(fd);
	return rc;
}

static int
load_console_secret_env(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_console	*cc = arg;

	return config_outauth_secret_env(ld, v, path,
	    &cc->cc_client_secret_env, &cc->cc_client_secret);
}

static int
load_console_callback(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_console	*cc = arg;
	const char		*u;

	if (load_string(ld, v, path, &cc->cc_callback_url) == -1)
		return -1;
	u = cc->cc_callback_url;
	if ((strncasecmp(u, "https://", 8) != 0 &&
	    strncasecmp(u, "http://", 7) != 0) ||
	    strlen(u) < sizeof("/console/callback") ||
	    strcmp(u + strlen(u) - (sizeof("/console/callback") - 1),
	    "/console/callback") != 0)
		return config_expected(ld, v, path, "the console's URL as "
		    "the browser reaches the diagnostics listener, ending in "
		    "/console/callback (http://127.0.0.1:9090/console/callback)");
	return 0;
}

static int
load_console_login(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_console	*cc = arg;
	const struct field fields[] = {
		{ "clientId", F_STRING, &cc->cc_client_id, NULL, 0, 0 },
		{ "clientSecretEnv", F_FN, cc, load_console_secret_env, 0, 0 },
		{ "callbackUrl", F_FN, cc, load_console_callback, 0, 0 },
		{ "adminGroup", F_STRING, &cc->cc_admin_group, NULL, 0, 0 },
		{ "groupsClaim", F_STRING, &cc->cc_groups_claim, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "callbackUrl") == -1 ||
	    config_require(ld, n, path, "adminGroup") == -1)
		return -1;
	cc->cc_login = 1;
	return 0;
}

int
load_console(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_console	*cc = arg;
	const struct field fields[] = {
		{ "tokenEnv", F_FN, cc, load_console_token_env, 0, 0 },
		{ "tokenFile", F_FN, cc, load_console_token_file, 0, 0 },
		{ "login", F_FN, cc, load_console_login, 0, 0 },
		{ "sessionTtl", F_DURATION, &cc->cc_session_ttl_ms, NULL,
		    60 * 1000, 0 },
		{ "authenticateReads", F_BOOL, &cc->cc_auth_reads, NULL, 0, 0 },
	};

	ld->ld_console = n;
	cc->cc_session_ttl_ms = CONSOLE_TTL_DEFAULT_MS;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cnode_get(n, "tokenEnv") != NULL &&
	    cnode_get(n, "tokenFile") != NULL)
		return config_error(ld, cnode_get_key(n, "tokenFile"),
		    "%s: tokenEnv and tokenFile are exclusive; set one", path);
	if (cc->cc_token == NULL && !cc->cc_login)
		return config_error(ld, n, "%s: expected tokenEnv, tokenFile "
		    "or login (who may act on the console)", path);
	if (cc->cc_session_ttl_ms > 7ULL * 24 * 3600 * 1000)
		return config_error(ld, cnode_get(n, "sessionTtl"),
		    "%s.sessionTtl: expected at most 7d", path);
	cc->cc_on = 1;
	return 0;
}

/*
 * Off loopback the listener shows backends, sessions and errors to
 * whoever reaches it, and the console acts: only behind a login.
 */
int
config_console_resolve(struct loader *ld)
{
	struct config		*cf = ld->ld_cf;
	struct config_console	*cc = &cf->cf_console;
	const struct config_oidc *oi = &cf->cf_inauth.ci_oidc;
	const char		*d = cf->cf_diag_host;
	struct cnode		*login;

	if (d != NULL && !config_host_loopback(d, strlen(d))) {
		if (!cc->cc_on)
			return config_error(ld, ld->ld_diag, "daemon."
			    "diagnostics: %s is not a loopback address and "
			    "the listener has no authentication: set "
			    "daemon.console (tokenEnv, tokenFile or login) "
			    "or bind it to 127.0.0.1", d);
		if (ld->ld_console != NULL &&
		    cnode_get(ld->ld_console, "authenticateReads") != NULL &&
		    !cc->cc_auth_reads)
			return config_error(ld, cnode_get(ld->ld_console,
			    "authenticateReads"), "daemon.console."
			    "authenticateReads: must be true with "
			    "daemon.diagnostics off loopback (%s)", d);
		cc->cc_auth_reads = 1;
	}
	if (cc->cc_on && d == NULL)
		return config_error(ld, ld->ld_console, "daemon.console: "
		    "needs daemon.diagnostics (the console is served there)");
	if (!cc->cc_login)
		return 0;
	login = ld->ld_console != NULL ? cnode_get(ld->ld_console, "login") :
	    NULL;
	if (cf->cf_inauth.ci_type != CONFIG_INAUTH_OIDC)
		return config_error(ld, login, "daemon.console.login: needs "
		    "incomingAuth.type oidc (the login is at its issuer)");
	if (cc->cc_client_id == NULL && oi->oi_client_id == NULL)
		return config_error(ld, login, "daemon.console.login: "
		    "expected clientId (or incomingAuth.oidc.clientId)");
	if (cc->cc_groups_claim == NULL &&
	    (cc->cc_groups_claim = strdup("groups")) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

void
config_console_free(struct config *cf)
{
	struct config_console	*cc = &cf->cf_console;

	if (cc->cc_token != NULL)
		explicit_bzero(cc->cc_token, strlen(cc->cc_token));
	if (cc->cc_client_secret != NULL)
		explicit_bzero(cc->cc_client_secret,
		    strlen(cc->cc_client_secret));
	free(cc->cc_token);
	free(cc->cc_token_env);
	free(cc->cc_token_file);
	free(cc->cc_client_id);
	free(cc->cc_client_secret);
	free(cc->cc_client_secret_env);
	free(cc->cc_callback_url);
	free(cc->cc_admin_group);
	free(cc->cc_groups_claim);
}
