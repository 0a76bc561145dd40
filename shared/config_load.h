/*
 * The vmcpd.yaml loader's internals, shared by the loader (config.c: the
 * top level and the API; config_tree.c: the YAML tree and messages;
 * config_fields.c: value parsers and the generic field walk) and the
 * section loaders (config_sections.c and its siblings); config.h is the
 * API.
 */
#ifndef VMCPD_CONFIG_LOAD_H
#define VMCPD_CONFIG_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define KIB	1024ULL
#define MIB	(1024 * KIB)
#define GIB	(1024 * MIB)
#define TIB	(1024 * GIB)

#define SHOW_MAX	48	/* characters of a value quoted in a message */
#define PATH_MAX_LEN	256

#define NOTYET	"is not supported yet by this version of vmcpd"
#define K8SONLY	"is not supported (Kubernetes only)"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

enum cnode_type {
	CN_SCALAR,
	CN_MAP,
	CN_SEQ
};

/* a YAML node; a mapping keeps key, value, key, value, ... in cn_kids */
struct cnode {
	enum cnode_type	 cn_type;
	int		 cn_plain;	/* plain scalar: may be a number */
	int		 cn_quoted;	/* '...' or "..." */
	int		 cn_oneline;	/* starts and ends on one line */
	size_t		 cn_body_line;	/* literal |: where the text starts, */
	size_t		 cn_body_col;	/* else 0 */
	char		*cn_str;	/* scalar text, NUL-terminated */
	size_t		 cn_len;
	size_t		 cn_line;	/* 1-based */
	size_t		 cn_col;	/* 1-based */
	struct cnode	*cn_up;
	struct cnode	**cn_kids;
	size_t		 cn_nkids;
	size_t		 cn_cap;
};

struct loader {
	const char	*ld_name;
	char		*ld_err;
	size_t		 ld_errlen;
	struct config	*ld_cf;
	int		 ld_have_backends;

	/* backend names, resolved once the backends are known */
	struct cnode	*ld_perworkload;
	struct cnode	*ld_priority;	/* aggregation...priorityOrder */
	struct cnode	*ld_tools;	/* aggregation.tools */
	struct cnode	*ld_listen;	/* daemon.listen, for later checks */
	struct cnode	*ld_outauth_default;	/* outgoingAuth.default */
	struct cnode	*ld_outauth_backends;	/* outgoingAuth.backends */
	struct cnode	*ld_sstore;		/* sessionStorage */
};

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

/* config_tree.c: messages, the YAML tree */
int	 config_tree_parse(struct loader *, const char *, size_t,
	    struct cnode **rootp);
void	 cnode_free(struct cnode *);
int	 cnode_is_null(const struct cnode *);
int	 config_errorat(struct loader *, size_t line, size_t col,
	    const char *, ...) __attribute__((format(printf, 4, 5)));
int	 config_error(struct loader *, const struct cnode *, const char *,
	    ...) __attribute__((format(printf, 3, 4)));
int	 config_errorat(struct loader *, size_t line, size_t col,
	    const char *, ...) __attribute__((format(printf, 4, 5)));
char	*config_escape(char *, size_t, const char *, size_t, size_t);
int	 config_expected(struct loader *, const struct cnode *,
	    const char *path, const char *what);
void	 config_path(char *, size_t, const char *path,
	    const struct cnode *key);
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
/* config_policy.c: rateLimiting and audit */
int	 load_rate_limiting(struct loader *, struct cnode *, const char *,
	    void *);
int	 load_audit(struct loader *, struct cnode *, const char *, void *);
int	 config_policy_defaults(struct config *);
void	 config_policy_free(struct config *);

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
