/*
 * The compositeTools loader's internals, shared by composite_config.c
 * (helpers, top level), composite_config_steps.c (the steps) and
 * composite_config_graph.c (the graph checks); composite.h is the API.
 */
#ifndef VMCPD_COMPOSITE_LOAD_H
#define VMCPD_COMPOSITE_LOAD_H

#include <stddef.h>

#include "shared/composite.h"
#include "config_load.h"

/* one compiled template and where it came from, for the graph checks */
struct tref {
	const struct tmpl	*tr_tmpl;
	const struct cnode	*tr_node;
	char			 tr_path[PATH_MAX_LEN];
	size_t			 tr_step;	/* SIZE_MAX: the output */
	int			 tr_inner;	/* in a forEach inner step */
};

struct cload {
	struct loader		*cl_ld;
	struct composite	*cl_co;
	struct tref		*cl_refs;
	size_t			 cl_nrefs;
	size_t			 cl_step;	/* being loaded */
	int			 cl_inner;
	struct cnode		**cl_depnodes;	/* per step: its dependsOn */
	uint8_t			*cl_anc;	/* [i * n + j]: j before i */
};

/* composite_config.c: values and templates */
void	 cload_subpath(char *, size_t, const char *path, const char *key);
int	 cload_grab(struct loader *, struct cnode *, const char *, void *);
int	 cload_json(struct loader *, struct cnode *, const char *path,
	    json_t **, int);
int	 cload_tvalue_compile(struct loader *, const struct cnode *,
	    const char *path, struct composite_tvalue *);
int	 cload_tmpl(struct cload *, struct cnode *, const char *path,
	    struct tmpl **);
int	 cload_tvalue_refs(struct cload *, const struct cnode *,
	    const char *path, const struct composite_tvalue *, size_t *);

/* composite_config_steps.c: one step */
int	 cload_enum(struct loader *, struct cnode *, const char *path,
	    const char *const *names, size_t, const char *what, int *);
int	 cload_step(struct cload *, struct cnode *, const char *,
	    struct composite_step *);

/* composite_config_graph.c: the graph, once every step is loaded */
int	 cload_graph(struct cload *, const char *path);
int	 cload_check_refs(struct cload *);

#endif /* VMCPD_COMPOSITE_LOAD_H */
