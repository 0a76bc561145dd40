/*
 * vmcpd.yaml's backends and their outgoingAuth (config.h): what a
 * backend is and how vmcpd authenticates to it.
 */
#ifndef VMCPD_CONFIG_BACKEND_H
#define VMCPD_CONFIG_BACKEND_H

#include <stdint.h>

#include "proto/proto.h"

/*
 * Any number of backends by default: everything sized by them is
 * allocated per configuration.  Build with -DCONFIG_BACKENDS_MAX=N for
 * a daemon that accepts at most N (1: a single-backend daemon); the
 * loader and its messages follow.
 */

enum config_transport {
	TRANSPORT_STREAMABLE_HTTP = 0,
	TRANSPORT_SSE,
	TRANSPORT_STDIO
};

struct config_outauth;

/*
 * A backend.  Streamable HTTP and SSE backends have cb_url and no
 * command; stdio backends have no URL and run cb_argv (argv[0] is
 * cb_command, looked up in PATH) in cb_cwd with cb_env, "K=V" strings
 * added to the environment vmcpd inherited.  The arrays are
 * NULL-terminated; cb_env is NULL when there are none.
 */
struct config_backend {
	char			*cb_name;	/* [A-Za-z0-9_.-]{1,64} */
	char			*cb_url;	/* http(s)://, or NULL */
	char			*cb_url_shown;	/* http_url_redact()'s */
	enum config_transport	 cb_transport;
	uint64_t		 cb_timeout_ms;	/* from operational.timeouts */
	/* era: which MCP revision vmcpd speaks to the backend, pinned
	 * (never probed), or PROTO_ERA_UNKNOWN for "auto": probed with
	 * server/discover, recorded in the store */
	enum proto_era		 cb_era;

	/* stdio only, else NULL */
	char			*cb_command;	/* non-empty */
	char			**cb_argv;	/* command, then args */
	char			**cb_env;	/* or NULL */
	char			*cb_cwd;	/* NULL = vmcpd's own */

	/* caBundlePath: https:// verified against it, not the system's
	 * (streamable-http only) */
	char			*cb_ca_bundle;

	/* outgoingAuth: its backends entry, else the default; NULL =
	 * unauthenticated (points into cf_outauth) */
	const struct config_outauth *cb_outauth;
};

/*
 * outgoingAuth: how vmcpd authenticates to a backend.  header_injection
 * sends one static header (the value resolved from the environment at
 * load time, a secret: never in a message or a log) on every request
 * to the backend.
 */
enum config_outauth_type {
	CONFIG_OUTAUTH_UNAUTHENTICATED = 0,
	CONFIG_OUTAUTH_HEADER,
	CONFIG_OUTAUTH_EXCHANGE,	/* token_exchange (RFC 8693) */
	CONFIG_OUTAUTH_CODE		/* authorization_code: per user */
};

/* RFC 8693 2.1 subject_token_type: the URN of a short form */
#define CONFIG_TX_ACCESS_TOKEN	"urn:ietf:params:oauth:token-type:access_token"

struct config_outauth {
	char			*oa_backend;	/* NULL: the default */
	enum config_outauth_type oa_type;
	char			*oa_header_name;
	char			*oa_header_value;	/* secret */
	char			*oa_header_env;		/* or NULL */
	/* token_exchange: the client's access token exchanged at
	 * oa_tx_url for one the backend takes (worker/upstream/token_exchange.c) */
	char			*oa_tx_url;
	char			*oa_tx_client_id;	/* or NULL */
	char			*oa_tx_secret;		/* secret, or NULL */
	char			*oa_tx_secret_env;	/* or NULL */
	char			*oa_tx_audience;	/* or NULL */
	char			*oa_tx_scopes;		/* space-joined, or NULL */
	const char		*oa_tx_subject_type;	/* a URN */
	/* authorization_code: each principal's own tokens from the
	 * backend's authorization server (worker/link/link.h); the two
	 * URLs given, or found from oa_ac_issuer's metadata (RFC 8414) */
	char			*oa_ac_issuer;		/* or NULL */
	char			*oa_ac_authorize_url;	/* or NULL: issuer's */
	char			*oa_ac_token_url;	/* or NULL: issuer's */
	char			*oa_ac_client_id;
	char			*oa_ac_secret;		/* secret, or NULL */
	char			*oa_ac_secret_env;	/* or NULL */
	char			*oa_ac_scopes;		/* space-joined, or NULL */
	char			*oa_ac_callback_url;	/* .../oauth/callback */
	int			 oa_ac_secret_post;	/* in the body, not Basic */
	/* extraAuthorizeParams: NULL-terminated name, value pairs */
	char			**oa_ac_extra;
};

/* operational.failureHandling: backends' health and circuit breakers */
struct config_health {
	uint64_t	 ch_interval_ms;	/* probes, 30 s */
	uint64_t	 ch_timeout_ms;		/* a probe's, 10 s */
	unsigned int	 ch_unhealthy;		/* failed probes, 3 */
	uint64_t	 ch_report_ms;		/* status log, 30 s */
	int		 ch_cb_enabled;		/* false */
	unsigned int	 ch_cb_threshold;	/* failures, 5 */
	uint64_t	 ch_cb_timeout_ms;	/* open, 60 s */
};

const char	*config_transport_name(enum config_transport);
const char	*config_era_name(enum proto_era);
/* an outgoingAuth type's name, for messages and status */
const char	*config_outauth_name(enum config_outauth_type);
/* host (after "http://") is 127.0.0.0/8, [::1] or localhost: 1, else 0 */
int		 config_outauth_loopback(const char *host);

#endif /* VMCPD_CONFIG_BACKEND_H */
