/*
 * vmcpd.yaml's access control (config.h): incomingAuth (OIDC, Cedar
 * authorization), rateLimiting and audit.
 */
#ifndef VMCPD_CONFIG_ACCESS_H
#define VMCPD_CONFIG_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * incomingAuth (docs: vmcpd.yaml(5)): who a client is.  anonymous is
 * the default; on an address other than loopback it needs
 * ci_anon_remote.  oidc: bearer JWTs (RFC 9068) of one issuer, checked
 * against its JWKS, or opaque tokens through RFC 7662 introspection.
 */
enum config_inauth_type {
	CONFIG_INAUTH_ANONYMOUS = 0,
	CONFIG_INAUTH_OIDC,
	CONFIG_INAUTH_LOCAL
};

struct cedar_policyset;
struct cedar_entities;

struct config_oidc {
	char			*oi_issuer;		/* exact "iss" */
	char			*oi_audience;		/* in "aud" */
	char			*oi_jwks_url;		/* or NULL: discovery */
	char			*oi_client_id;		/* introspection */
	char			*oi_client_secret_env;
	char			*oi_client_secret;	/* from the env */
	char			*oi_resource;		/* RFC 9728; or NULL */
	char			*oi_introspection_url;	/* or NULL */
	char			*oi_ca_bundle;		/* or NULL: system */
	char			**oi_scopes;		/* NULL-terminated */
	size_t			 oi_nscopes;
	int			 oi_insecure_http;
	int			 oi_jwks_private_ip;
	uint64_t		 oi_skew_ms;		/* clockSkew, 30 s */
};

/*
 * incomingAuth.authz: Cedar policies, checked at load (config_auth.c).
 * The policies and the store belong to the config, so a reload swaps
 * them with the rest of it.
 */
struct config_authz {
	int			 az_cedar;	/* type: cedar (else none) */
	struct cedar_policyset	*az_policies;	/* every policies[] text */
	struct cedar_entities	*az_entities;	/* entitiesJson */
	char			*az_group_claim;	/* groupClaimName */
	char			*az_role_claim;		/* roleClaimName */
	char			*az_group_type;		/* groupEntityType */
};

struct config_inauth {
	enum config_inauth_type	 ci_type;
	int			 ci_anon_remote;	/* allowAnonymousRemote */
	/* local: daemon.listen is "unix:/path"; the principal is the
	 * peer's uid (SO_PEERCRED), issuer "local" */
	struct config_oidc	 ci_oidc;
	struct config_authz	 ci_authz;
};

/* rateLimiting: a token bucket; sb_max 0 = none */
struct config_bucket {
	unsigned int		 cb_max;	/* maxTokens */
	uint64_t		 cb_period_ms;	/* refillPeriod */
};

struct config_tool_limit {
	char			*ctl_name;	/* advertised tool name */
	struct config_bucket	 ctl_shared;
	struct config_bucket	 ctl_per_user;
};

struct config_ratelimit {
	int			 crl_enabled;	/* any bucket set */
	struct config_bucket	 crl_shared;
	struct config_bucket	 crl_per_user;
	struct config_tool_limit *crl_tools;
	size_t			 crl_ntools;
};

/* audit: */
struct config_audit {
	int			 ca_enabled;
	char			*ca_log_file;	/* NULL: stderr */
	char			*ca_component;	/* default "vmcpd" */
	char			**ca_types;	/* eventTypes; none = all */
	size_t			 ca_ntypes;
	char			**ca_exclude;	/* excludeEventTypes */
	size_t			 ca_nexclude;
	int			 ca_request_data;
	size_t			 ca_max_data;	/* maxDataSize, 1024 */
};

#endif /* VMCPD_CONFIG_ACCESS_H */
