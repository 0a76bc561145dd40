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

#define CONFIG_DEFAULT_PATH	"/etc/vmcpd/vmcpd.yaml"
#define CONFIG_EMBEDDED_NAME	"<embedded>"
#define CONFIG_ERR_MAX		512
#define CONFIG_NAME_MAX		64

enum config_transport {
	TRANSPORT_STREAMABLE_HTTP = 0,
	TRANSPORT_SSE,
	TRANSPORT_STDIO
};

struct config_backend {
	char			*cb_name;	/* [A-Za-z0-9_.-]{1,64} */
	char			*cb_url;	/* http:// or https:// */
	enum config_transport	 cb_transport;
	uint64_t		 cb_timeout_ms;	/* resolved from operational.timeouts */
};

struct config {
	char			*cf_file;	/* path, or CONFIG_EMBEDDED_NAME */
	char			*cf_name;	/* name: (default "vmcpd") */
	char			*cf_group_ref;	/* groupRef: (accepted, informational) */

	/* daemon: */
	char			*cf_listen_host;	/* default 127.0.0.1 */
	uint16_t		 cf_listen_port;	/* default 4483; 0 = any */
	char			*cf_port_file;		/* write bound port here */
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

	/* sessions: */
	uint64_t		 cf_session_ttl_ms;	/* sliding, 30 min */
	uint64_t		 cf_session_max_ms;	/* absolute, 24 h */

	/* backends: */
	struct config_backend	*cf_backends;
	size_t			 cf_nbackends;

	/* operational.timeouts.default */
	uint64_t		 cf_timeout_default_ms;	/* default 30 s */

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

/* value parsers, exposed for unit tests: 0 ok, -1 bad */
int		 config_parse_duration(const char *, uint64_t *ms);
int		 config_parse_size(const char *, uint64_t *bytes);

/* the default configuration compiled into the binary (etc/vmcpd.yaml) */
extern const char	config_embedded[];
extern const size_t	config_embedded_len;

#endif
