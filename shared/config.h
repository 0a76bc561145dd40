/*
 * vmcpd.yaml: the configuration, loaded strictly with libyaml.  An
 * unknown key, a wrong type or an impossible combination is an error
 * reported as "file:line:column: message".  Every accepted key is
 * honoured; reference-vMCP keys that vmcpd does not implement yet are
 * rejected with a message that says so.
 */
#ifndef VMCPD_CONFIG_H
#define VMCPD_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "proto/proto.h"

#define CONFIG_DEFAULT_PATH	"/etc/vmcpd/vmcpd.yaml"
#define CONFIG_EMBEDDED_NAME	"<embedded>"
#define CONFIG_ERR_MAX		512
#define CONFIG_NAME_MAX		64

/*
 * Any number of backends by default: everything sized by them is
 * allocated per configuration.  Build with -DCONFIG_BACKENDS_MAX=N for
 * a daemon that accepts at most N (1: a single-backend daemon); the
 * loader and its messages follow.
 */
#define CONFIG_SESSIONS_MAX	100000000	/* sessions.maxSessions */
#define CONFIG_PRINCIPALS_DEFAULT 10000	/* sessions.maxPrincipals */
#define CONFIG_BSESSIONS_MAX	1000000	/* sessions.maxBackendSessions */
#define CONFIG_SUBS_DEFAULT	1000	/* sessions.maxSubscriptions */
#define CONFIG_SUBS_MAX		1000000
#define CONFIG_SUBS_PRINCIPAL_DEFAULT 10000 /* ...PerPrincipal */

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
	CONFIG_OUTAUTH_EXCHANGE		/* token_exchange (RFC 8693) */
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
};

enum config_conflict {
	CONFIG_CONFLICT_PREFIX = 0,	/* the reference's default */
	CONFIG_CONFLICT_PRIORITY,
	CONFIG_CONFLICT_MANUAL
};

enum config_prefix_mode {
	CONFIG_PREFIX_ALWAYS = 0,	/* every name, as the reference */
	CONFIG_PREFIX_ON_CONFLICT	/* only names claimed twice */
};

enum config_partial_failure {
	CONFIG_PARTIAL_FAIL = 0,	/* one backend failing fails a list */
	CONFIG_PARTIAL_BEST_EFFORT	/* leave the failing backend out */
};

/*
 * aggregation.tools[].overrides.<co_tool>: at least one of the three is
 * set.  co_annotations is an object holding only the hints to replace
 * ("title" a string, the *Hint keys booleans), as view_override takes.
 */
struct config_override {
	char			*co_tool;	/* the backend's own name */
	char			*co_name;	/* or NULL */
	char			*co_description; /* or NULL */
	json_t			*co_annotations; /* or NULL */
};

/*
 * aggregation.tools[]: at most one per backend.  cw_filter holds names
 * after the overrides, before the prefix; NULL-terminated, NULL when
 * absent, and cw_nfilter 0 (absent or []) means no filter.
 */
struct config_workload {
	char			*cw_name;	/* a configured backend */
	char			**cw_filter;
	size_t			 cw_nfilter;
	int			 cw_exclude_all;
	struct config_override	*cw_overrides;	/* in file order */
	size_t			 cw_noverrides;
};

/*
 * aggregation: the view_policy of worker/view/view.h, plus how views are
 * built and served.  ca_priority (backend names, the first wins,
 * NULL-terminated) is set only with priority, and then not empty.
 */
struct config_aggregation {
	enum config_conflict	 ca_conflict;		/* default prefix */
	char			*ca_prefix_format;	/* "{workload}_" */
	enum config_prefix_mode	 ca_prefix_mode;	/* default always */
	char			**ca_priority;
	size_t			 ca_npriority;
	int			 ca_exclude_all_tools;
	int			 ca_default_deny;	/* visibility deny */
	struct config_workload	*ca_workloads;		/* in file order */
	size_t			 ca_nworkloads;
	uint64_t		 ca_cache_ttl_ms;	/* view kept, 5 min */
	unsigned int		 ca_page_size;		/* Legacy lists, 1000 */
	unsigned int		 ca_max_backend_pages;	/* followed, 100 */
	size_t			 ca_max_backend_list;	/* bytes, 32 MiB */
	unsigned int		 ca_max_desc;		/* characters, 16384 */
	unsigned int		 ca_max_title;		/* characters, 256 */
};

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

/*
 * sessionStorage: where the records that must outlive a host live
 * (docs/ARCHITECTURE.md, Beyond one host).  lmdb (or the reference's
 * memory): this host's store only.
 */
enum config_sstore_provider {
	CONFIG_SSTORE_LMDB = 0,
	CONFIG_SSTORE_REDIS
};

struct config_sstore {
	enum config_sstore_provider css_provider;
	char			*css_host;	/* address, numeric or name */
	uint16_t		 css_port;	/* default 6379 */
	unsigned int		 css_db;	/* SELECT, 0 */
	char			*css_prefix;	/* keyPrefix */
	char			*css_password;	/* THV_SESSION_REDIS_PASSWORD;
						 * never logged */
	char			*css_namespace;	/* VMCP_NAMESPACE, "local" */
	/* sealKeyFile: the key the nodes seal exchanged tokens with in
	 * Redis (shared/seal.h); never logged, printed or dumped */
	char			*css_seal_key_file;
	uint8_t			 css_seal_key[32];
	int			 css_have_seal_key;
};

/* a Redis address: "host:port", "[v6]:port", "host" (6379): 0 or -1 */
int	config_sstore_address(const char *, char **host, uint16_t *port);
/* a seal key file's content: 32 bytes, 64 hex digits or base64 of 32
 * bytes (a final newline allowed): 0, or -1 */
int	config_sstore_key_decode(const char *, size_t, uint8_t key[32]);

struct config {
	char			*cf_file;	/* path, or CONFIG_EMBEDDED_NAME */
	char			*cf_name;	/* name: (default "vmcpd") */
	char			*cf_group_ref;	/* groupRef: (accepted, informational) */

	/* daemon: */
	char			*cf_listen_host;	/* default 127.0.0.1, or
							 * "unix:/path" */
	uint16_t		 cf_listen_port;	/* default 4483; 0 = any */
	char			*cf_port_file;		/* write bound port here */
	char			*cf_diag_host;		/* diagnostics; NULL = off */
	uint16_t		 cf_diag_port;		/* 0 = any */
	int			 cf_workers;		/* 0 = one per core */
	char			*cf_state_dir;		/* default ./var */
	char			*cf_user;		/* drop to this user */
	char			*cf_log_file;		/* NULL = syslog/stderr */
	uint64_t		 cf_map_size;		/* bytes, default 1 GiB */
	unsigned int		 cf_max_readers;	/* default 512 */
	uint64_t		 cf_drain_timeout_ms;	/* default 30 s */
	int			 cf_worker_header;	/* add Vmcpd-Worker header */

	/* http: */
	size_t			 cf_max_header_size;	/* default 16 KiB */
	size_t			 cf_max_body_size;	/* default 4 MiB */
	uint64_t		 cf_http_timeout_ms;	/* default 30 s */
	uint64_t		 cf_keepalive_ms;	/* SSE comment, 15 s */
	uint64_t		 cf_header_timeout_ms;	/* whole head, 10 s */
	uint64_t		 cf_request_timeout_ms;	/* whole request, 60 s */
	unsigned int		 cf_max_conns;		/* per worker, 2048 */
	unsigned int		 cf_max_conns_client;	/* and address, 256 */
	char			**cf_allowed_hosts;	/* besides loopback */
	size_t			 cf_nallowed_hosts;
	char			**cf_allowed_origins;	/* besides loopback */
	size_t			 cf_nallowed_origins;

	/* sessions: */
	uint64_t		 cf_session_ttl_ms;	/* sliding, 30 min */
	uint64_t		 cf_session_max_ms;	/* absolute, 24 h */
	unsigned int		 cf_event_buffer;	/* per session, 1000 */
	uint64_t		 cf_pending_timeout_ms;	/* to client, 5 min */
	unsigned int		 cf_session_cap;	/* live; mapSize/2KiB */
	unsigned int		 cf_session_cap_addr;	/* per address; 1/4 */
	unsigned int		 cf_principal_cap;	/* with state; 10000 */
	uint64_t		 cf_bsession_ttl_ms;	/* principals', 10m */
	unsigned int		 cf_bsession_cap;	/* per backend, 1000 */
	unsigned int		 cf_subs_cap;		/* URIs a listen stream
							 * or session, 1000 */
	unsigned int		 cf_subs_cap_principal;	/* across them, 10000 */

	/* backends: */
	struct config_backend	*cf_backends;
	size_t			 cf_nbackends;

	/* aggregation: */
	struct config_aggregation cf_agg;

	/* incomingAuth: */
	struct config_inauth	 cf_inauth;

	/* outgoingAuth: the default, then one per backends entry */
	struct config_outauth	*cf_outauth;
	size_t			 cf_noutauth;

	/* compositeTools: (composite_config.c, shared/composite.h), or NULL */
	struct composite_list	*cf_composites;

	/* rateLimiting:, audit: (config_policy.c) */
	struct config_ratelimit	 cf_ratelimit;
	struct config_audit	 cf_audit;

	/* sessionStorage: (config_sstore.c) */
	struct config_sstore	 cf_sstore;

	/* operational.timeouts.default */
	uint64_t		 cf_timeout_default_ms;	/* default 30 s */

	/* operational.failureHandling.partialFailureMode */
	enum config_partial_failure cf_partial_failure;	/* default fail */

	/* operational.answerBuffer: backend answers a worker buffers at
	 * once, in all and of one backend (bytes) */
	size_t			 cf_answer_buf;		/* 256 MiB */
	size_t			 cf_answer_buf_backend;	/* 128 MiB */

	/* operational.failureHandling: health and the circuit breaker */
	struct config_health {
		uint64_t	 ch_interval_ms;	/* probes, 30 s */
		uint64_t	 ch_timeout_ms;		/* a probe's, 10 s */
		unsigned int	 ch_unhealthy;		/* failed probes, 3 */
		uint64_t	 ch_report_ms;		/* status log, 30 s */
		int		 ch_cb_enabled;		/* false */
		unsigned int	 ch_cb_threshold;	/* failures, 5 */
		uint64_t	 ch_cb_timeout_ms;	/* open, 60 s */
	}			 cf_health;

	/* operational.logLevel: debug */
	int			 cf_verbose;
};

/*
 * Load from a file (path != NULL) or from a buffer (name, buf, len).
 * On error return NULL and put "file:line:column: message" in err.
 */
struct config	*config_load_file(const char *path, char *err, size_t errlen);
struct config	*config_load_buffer(const char *name, const char *buf,
		    size_t len, char *err, size_t errlen);
void		 config_free(struct config *);
const struct config_backend *
		 config_backend_find(const struct config *, const char *name);
const char	*config_transport_name(enum config_transport);
const char	*config_era_name(enum proto_era);

/*
 * What a valid file says that an operator should hear (vmcpd -n, and at
 * start): each as a line "file: warning: ..." on f; with check (-n),
 * also "file: note: ..." for what the file cannot tell.
 */
void		 config_warn(const struct config *, FILE *, int check);

/* daemon.listen "unix:/path": the path, else NULL */
const char	*config_listen_unix_path(const struct config *);

/* 1 if host[0, len) is a loopback name: localhost, 127.0.0.0/8, ::1
 * (bare or in brackets) */
int		 config_host_loopback(const char *host, size_t len);

/* an outgoingAuth type's name, for messages and status */
const char	*config_outauth_name(enum config_outauth_type);
/* host (after "http://") is 127.0.0.0/8, [::1] or localhost: 1, else 0 */
int		 config_outauth_loopback(const char *host);

/* value parsers, exposed for unit tests: 0 ok, -1 bad; a duration
 * over 2^64 - 1 ns is -2 */
int		 config_parse_duration(const char *, uint64_t *ms);
int		 config_parse_size(const char *, uint64_t *bytes);

/* the default configuration compiled into the binary (etc/vmcpd.yaml) */
extern const char	config_embedded[];
extern const size_t	config_embedded_len;

#endif
