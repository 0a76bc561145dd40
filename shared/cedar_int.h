/*
 * The Cedar subset's internals, shared by shared/cedar_value.c (arenas,
 * values, entity stores), cedar_parse.c (lexer, parser), cedar_eval.c
 * (load-time checks, evaluation) and cedar_request.c (requests in the
 * reference's entity model).  Nothing outside shared/cedar_*.c includes it.
 */
#ifndef VMCPD_CEDAR_INT_H
#define VMCPD_CEDAR_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/cedar.h"

/* arenas */

#define ARENA_CHUNK	(16 * 1024)
#define ARENA_ALIGN	16

struct arena_chunk {
	struct arena_chunk	*ac_next;
	size_t			 ac_size;
	size_t			 ac_used;
	max_align_t		 ac_data[];
};

struct arena {
	struct arena_chunk	*ar_head;
	size_t			 ar_total;
};

#define ARENA_LIMIT	(256UL * 1024 * 1024)

/* values */

enum cv_type {
	CV_BOOL,
	CV_LONG,
	CV_STRING,
	CV_ENTITY,
	CV_SET,
	CV_RECORD,
	CV_DECIMAL		/* from input only: Long scaled by 10^4 */
};

struct cv {
	enum cv_type		 cv_t;
	union {
		int		 b;
		int64_t		 l;
		struct cedar_str s;
		struct cedar_uid e;
		struct {
			const struct cv	**v;
			size_t		  n;
		}		 set;
		struct {	/* keys sorted, unique */
			struct cedar_str *k;
			const struct cv	**v;
			size_t		  n;
		}		 rec;
	}			 cv_u;
};

extern const char *const cedar_cv_names[];
extern const struct cv cedar_cv_true;
extern const struct cv cedar_cv_false;
extern const struct cv cedar_cv_empty;

#define CV_BOOLEAN(x)	((x) ? &cedar_cv_true : &cedar_cv_false)

/* entity stores */

struct ent {
	struct cedar_uid	 en_uid;
	const struct cv		*en_attrs;	/* a record */
	struct cedar_uid	*en_parents;
	size_t			 en_nparents;
	uint64_t		 en_hash;
};

struct cedar_entities {
	const struct cedar_entities	*ce_base;
	struct arena			 ce_arena;
	struct ent			**ce_tab;	/* open addressing */
	size_t				 ce_cap;
	size_t				 ce_n;
};

/* the tree */

enum op {
	E_LIT,
	E_VAR,
	E_AND,
	E_OR,
	E_NOT,
	E_EQ,
	E_NE,
	E_LT,
	E_LE,
	E_GT,
	E_GE,
	E_IN,
	E_HAS,
	E_LIKE,
	E_ATTR,
	E_CONTAINS,
	E_CONTAINSALL,
	E_CONTAINSANY,
	E_ISEMPTY,
	E_SET
};

struct expr {
	enum op			 x_op;
	unsigned		 x_line;
	unsigned		 x_col;
	int			 x_depth;
	const struct cv		*x_lit;		/* E_LIT */
	int			 x_var;		/* E_VAR */
	const struct expr	*x_a;
	const struct expr	*x_b;
	const struct expr	**x_v;		/* E_AND, E_OR, E_SET */
	size_t			 x_n;
	struct cedar_str	 x_key;		/* E_ATTR, E_HAS */
	struct cedar_str	*x_seg;		/* E_LIKE: between stars */
	size_t			 x_nseg;
};

enum scope_op {
	SC_ANY,
	SC_EQ,
	SC_IN
};

struct scope {
	enum scope_op		 sc_op;
	struct cedar_uid	*sc_uids;	/* SC_IN on action: several */
	size_t			 sc_n;
};

struct cond {
	const struct expr	*co_x;
	int			 co_unless;
};

struct policy {
	int			 po_forbid;
	unsigned		 po_line;
	unsigned		 po_col;
	struct scope		 po_scope[3];	/* principal, action, res. */
	struct cond		*po_cond;
	size_t			 po_ncond;
};

struct cedar_policyset {
	struct arena		 ps_arena;
	const char		*ps_file;
	struct policy		*ps_pol;
	size_t			 ps_n;
	/* the arguments the policies may read (cedar_args.c) */
	struct cedar_str	*ps_args;	/* sorted, unique */
	size_t			 ps_nargs;
	int			 ps_args_all;
};

/* cedar_value.c */
int		 cedar_json_errf(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
void		*cedar_arena_alloc(struct arena *, size_t);
void		*cedar_arena_array(struct arena *, size_t, size_t);
void		 cedar_arena_free(struct arena *);
int		 cedar_arena_str(struct arena *, const char *, size_t,
		    struct cedar_str *);
int		 cedar_str_eq(const struct cedar_str *,
		    const struct cedar_str *);
int		 cedar_str_cmp(const struct cedar_str *,
		    const struct cedar_str *);
int		 cedar_uid_eq(const struct cedar_uid *,
		    const struct cedar_uid *);
uint64_t	 cedar_uid_hash(const struct cedar_uid *);
const struct cv	*cedar_rec_get(const struct cv *,
		    const struct cedar_str *);
int		 cedar_cv_eq(const struct cv *, const struct cv *, long *);
int		 cedar_set_has(const struct cv *, const struct cv *, long *);
int		 cedar_is_digit(int);
int		 cedar_is_ident0(int);
int		 cedar_decimal_parse(const char *, size_t, int64_t *);
const struct cv	*cedar_rec_from_json(struct arena *, const json_t *, int,
		    char *, size_t);
const struct ent *cedar_ents_find(const struct cedar_entities *,
		    const struct cedar_uid *);
int		 cedar_ents_grow(struct cedar_entities *, size_t);
void		 cedar_ents_put(struct cedar_entities *, struct ent *);

/* cedar_parse.c */
int		 cedar_action_type_ok(const struct cedar_uid *);

/* cedar_args.c: the arguments ps may read, into ps; -1 out of memory */
int		 cedar_args_find(struct cedar_policyset *);

/* cedar_eval.c: cedar_authorize() with the context as a value, if ctx */
int		 cedar_authorize_ctx(const struct cedar_policyset *,
		    const struct cedar_entities *, const struct cedar_request *,
		    const struct cv *, struct cedar_response *);

#endif /* VMCPD_CEDAR_INT_H */
