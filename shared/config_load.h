/*
 * The vmcpd.yaml loader's internals, shared by the loader (config.c: the
 * top level and the API; config_tree.c: the YAML tree and messages, in
 * config_tree.h; config_fields.c: value parsers and the generic field
 * walk) and the section loaders (config_sections.c and its siblings);
 * config.h is the API.
 */
#ifndef VMCPD_CONFIG_LOAD_H
#define VMCPD_CONFIG_LOAD_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "config.h"
#include "config_tree.h"

enum field_type {
	F_FN,		/* f_fn(ld, value, path, f_ptr) */
	F_STRING,	/* char **: non-empty string */
	F_BOOL,		/* int *: true or false */
	F_UINT,		/* unsigned int *: plain integer f_min..f_max */
	F_SIZE,		/* uint64_t *: size f_min..f_max */
	F_SIZET,	/* size_t *: size f_min..f_max */
	F_DURATION,	/* uint64_t * ms: duration >= f_min ms */
	F_NOTYET,	/* a reference vMCP key not implemented yet */
	F_K8SONLY	/* a reference vMCP key for Kubernetes only */
};

struct field {
	const char	*f_key;
	enum field_type	 f_type;
	void		*f_ptr;
	int		(*f_fn)(struct loader *, struct cnode *, const char *,
			    void *);
	uint64_t	 f_min;
	uint64_t	 f_max;
};

/* choices of an enumerated key, for load_choice() */
struct choice {
	const char	*ch_name;
	int		 ch_value;
};

/* config_fields.c: values, the field walk */
int	 config_parse_uint(const char *, uint64_t *);
void	 config_strv_free(char **);
void	 config_find_dup(struct cnode **, size_t, struct cnode **dupp,
	    struct cnode **firstp);
int	 config_require(struct loader *, struct cnode *, const char *path,
	    const char *key);
struct cnode *cnode_get(const struct cnode *, const char *key);
struct cnode *cnode_get_key(const struct cnode *, const char *key);
int	 load_string(struct loader *, struct cnode *, const char *path,
	    char **);
int	 load_text(struct loader *, struct cnode *, const char *path);
int	 load_env_ref(struct loader *, struct cnode *, const char *path,
	    char **name, const char **valp);
int	 load_string_seq(struct loader *, struct cnode *, const char *path,
	    const char *what, char ***, size_t *);
int	 load_plain(struct loader *, struct cnode *, const char *path,
	    const char *what);
int	 load_duration(struct loader *, struct cnode *, const char *path,
	    uint64_t min, uint64_t *);
int	 load_map_check(struct loader *, struct cnode *, const char *path);
int	 load_fields(struct loader *, struct cnode *, const char *path,
	    const struct field *, size_t);
int	 load_choice(struct loader *, struct cnode *, const char *path,
	    const struct choice *, size_t, const char *what, int *);
/* config.c */
int	 config_load_section(const char *name, const char *buf, size_t len,
	    const char *key, int (*)(struct loader *, struct cnode *,
	    const char *, void *), void *, char *err, size_t errlen);

/* config_sections.c: daemon, http, sessions, metadata, operational (struct
 * field f_fn), and the checks after them once every section is loaded */
int	 load_metadata(struct loader *, struct cnode *, const char *, void *);
int	 load_daemon(struct loader *, struct cnode *, const char *, void *);
/* config_console.c: daemon.console, and the diagnostics' address */
int	 load_console(struct loader *, struct cnode *, const char *, void *);
int	 config_console_resolve(struct loader *);
void	 config_console_free(struct config *);
int	 load_http(struct loader *, struct cnode *, const char *, void *);
int	 load_sessions(struct loader *, struct cnode *, const char *, void *);
int	 load_operational(struct loader *, struct cnode *, const char *,
	    void *);
int	 load_incoming_auth(struct loader *, struct cnode *, const char *,
	    void *);
int	 config_resolve_timeouts(struct loader *);
void	 config_resolve_sessions(struct config *);
/* config_backends.c: backends */
int	 load_backends(struct loader *, struct cnode *, const char *, void *);
/* a C identifier: an environment variable's name, a forEach itemVar */
int	 config_env_name(const char *);
/* "a, b, c" for a message */
void	 config_backend_names(const struct config *, char *, size_t);
/* config_aggregation.c: aggregation */
int	 load_aggregation(struct loader *, struct cnode *, const char *,
	    void *);
int	 load_annotations(struct loader *, struct cnode *, const char *,
	    void *);	/* arg: struct config_override */
int	 config_resolve_aggregation(struct loader *);
/* config_auth.c: incomingAuth, and its checks against daemon.listen */
int	 config_auth_load(struct loader *, struct cnode *, const char *,
	    void *);
int	 config_auth_resolve(struct loader *);
int	 config_listen_unix(struct loader *, struct cnode *, const char *,
	    struct config *);
void	 config_auth_free(struct config_inauth *);
int	 load_ca_path(struct loader *, struct cnode *, const char *path,
	    char **);
/* config_outauth.c: outgoingAuth, and each backend's strategy */
int	 load_outgoing_auth(struct loader *, struct cnode *, const char *,
	    void *);
int	 config_outauth_resolve(struct loader *);
void	 config_outauth_free(struct config *);
/* what the strategies share: an authorization server's URL (https, or
 * http to loopback), scopes space-joined, a client secret inline or
 * from the environment (the old one zeroed) */
int	 config_outauth_url(struct loader *, struct cnode *, const char *path,
	    char **);
int	 config_outauth_scopes(struct loader *, struct cnode *,
	    const char *path, char **);
int	 config_outauth_secret_str(struct loader *, struct cnode *,
	    const char *path, char **);
int	 config_outauth_secret_env(struct loader *, struct cnode *,
	    const char *path, char **env, char **);
/* config_outauth_code.c: type authorization_code's section, its needs
 * (incomingAuth oidc with a client) once all is loaded, its fields freed */
int	 load_authorization_code(struct loader *, struct cnode *,
	    const char *path, void *);
int	 config_outauth_code_check(struct loader *, struct cnode *at,
	    const char *backend);
void	 config_outauth_code_free(struct config_outauth *);
/* HTTP fields a configuration sets (RFC 9110): a token, a field value
 * (visible, not empty, no line breaks), a header that frames the message
 * (Host, Content-Length, Connection, ...) and may not be set */
int	 config_http_token(const char *);
int	 config_http_value(const char *);
int	 config_http_framing(const char *);
/* config_policy.c: rateLimiting and audit */
int	 load_rate_limiting(struct loader *, struct cnode *, const char *,
	    void *);
int	 load_audit(struct loader *, struct cnode *, const char *, void *);
int	 config_policy_defaults(struct config *);
void	 config_policy_free(struct config *);

/* config_telemetry.c: telemetry (arg: struct config); the defaults once
 * name: is known */
int	 load_telemetry(struct loader *, struct cnode *, const char *, void *);
int	 config_telemetry_defaults(struct config *);
int	 config_telemetry_resolve(struct loader *);
void	 config_telemetry_warn(const struct config *, FILE *);
void	 config_telemetry_free(struct config *);

/* config_sstore.c: sessionStorage */
int	 load_session_storage(struct loader *, struct cnode *, const char *,
	    void *);
int	 config_sstore_defaults(struct config *);
/* once outgoingAuth is resolved: a token_exchange backend with provider
 * redis needs sealKeyFile */
int	 config_sstore_resolve(struct loader *);
void	 config_sstore_free(struct config *);

/* composite_config.c: compositeTools (arg: struct composite_list) */
int	 load_composites(struct loader *, struct cnode *, const char *,
	    void *);
/* compositeTools of the configuration (arg: struct config) */
int	 load_composite_tools(struct loader *, struct cnode *, const char *,
	    void *);

#endif /* VMCPD_CONFIG_LOAD_H */
