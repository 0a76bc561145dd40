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

#define CONFIG_DEFAULT_PATH	"/etc/vmcpd/vmcpd.yaml"
#define CONFIG_EMBEDDED_NAME	"<embedded>"
#define CONFIG_ERR_MAX		512
#define CONFIG_NAME_MAX		64

#define CONFIG_SESSIONS_MAX	100000000	/* sessions.maxSessions */
#define CONFIG_PRINCIPALS_DEFAULT 10000	/* sessions.maxPrincipals */
#define CONFIG_BSESSIONS_MAX	1000000	/* sessions.maxBackendSessions */
#define CONFIG_SUBS_DEFAULT	1000	/* sessions.maxSubscriptions */
#define CONFIG_SUBS_MAX		1000000
#define CONFIG_SUBS_PRINCIPAL_DEFAULT 10000 /* ...PerPrincipal */

#include "shared/config_backend.h"
#include "shared/config_agg.h"
#include "shared/config_access.h"
#include "shared/config_console.h"
#include "shared/config_sstore.h"
#include "shared/config_telemetry.h"
#include "shared/config_value.h"

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
	struct config_console	 cf_console;		/* daemon.console */

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

	/* telemetry: (config_telemetry.c) */
	struct config_telemetry	 cf_telemetry;

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
	struct config_health	 cf_health;

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

/*
 * What a valid file says that an operator should hear (vmcpd -n, and at
 * start): each as a line "file: warning: ..." on f; with check (-n),
 * also "file: note: ..." for what the file cannot tell.
 */
void		 config_warn(const struct config *, FILE *, int check);

/* daemon.listen "unix:/path": the path, else NULL */
const char	*config_listen_unix_path(const struct config *);

/* the default configuration compiled into the binary (etc/vmcpd.yaml) */
extern const char	config_embedded[];
extern const size_t	config_embedded_len;

#endif
