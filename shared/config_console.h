/*
 * daemon.console: who may use the operator's console on the
 * diagnostics listener (worker/diag/console.h).  Without it the
 * listener must be on loopback and the console is read-only.
 */
#ifndef VMCPD_CONFIG_CONSOLE_H
#define VMCPD_CONFIG_CONSOLE_H

#include <stdint.h>

#define CONSOLE_TOKEN_MIN	32	/* bytes of a console token */
#define CONSOLE_TOKEN_MAX	512
#define CONSOLE_TTL_DEFAULT_MS	(8ULL * 3600 * 1000)

struct config_console {
	int		 cc_on;			/* daemon.console given */
	char		*cc_token;		/* tokenEnv's or tokenFile's */
	char		*cc_token_env;
	char		*cc_token_file;
	/* login: an OIDC login at incomingAuth.oidc's issuer */
	int		 cc_login;
	char		*cc_client_id;		/* default the issuer's */
	char		*cc_client_secret;	/* clientSecretEnv's */
	char		*cc_client_secret_env;
	char		*cc_callback_url;	/* .../console/callback */
	char		*cc_admin_group;	/* required in the claim */
	char		*cc_groups_claim;	/* default "groups" */
	uint64_t	 cc_session_ttl_ms;	/* the session cookie's */
	int		 cc_auth_reads;		/* reading needs a login */
};

#endif /* VMCPD_CONFIG_CONSOLE_H */
