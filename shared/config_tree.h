/*
 * The vmcpd.yaml loader's YAML tree and messages (config_tree.c), under
 * config_load.h: a node of the tree, the loader's state, and the
 * "file:line:column: message" errors every section loader reports.
 */
#ifndef VMCPD_CONFIG_TREE_H
#define VMCPD_CONFIG_TREE_H

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
	struct cnode	*ld_diag;		/* daemon.diagnostics */
	struct cnode	*ld_console;		/* daemon.console */
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
char	*config_escape(char *, size_t, const char *, size_t, size_t);
int	 config_expected(struct loader *, const struct cnode *,
	    const char *path, const char *what);
void	 config_path(char *, size_t, const char *path,
	    const struct cnode *key);

#endif /* VMCPD_CONFIG_TREE_H */
