/*
 * Composite-tool templates, private to template_parse.c (the compiler
 * from Go text/template to a tree) and template_eval.c (its evaluator
 * and walker): the compiled tree.
 */
#ifndef TEMPLATE_INT_H
#define TEMPLATE_INT_H

#include <stddef.h>

#include <jansson.h>

enum tfn {
	FN_JSON,
	FN_QUOTE,
	FN_FROMJSON,
	FN_EQ,
	FN_NE,
	FN_LT,
	FN_LE,
	FN_GT,
	FN_GE,
	FN_AND,
	FN_OR,
	FN_NOT,
	FN_INDEX,
	FN_LEN
};

enum texpr_kind {
	EX_PATH,	/* ex_base (NULL: the context) then ex_segs */
	EX_VALUE,	/* a literal: ex_value */
	EX_CALL		/* ex_fn (ex_args) */
};

struct texpr {
	enum texpr_kind	  ex_kind;
	enum tfn	  ex_fn;
	struct texpr	 *ex_base;
	char		**ex_segs;
	size_t		  ex_nsegs;
	struct texpr	**ex_args;
	size_t		  ex_nargs;
	json_t		 *ex_value;
};

enum tnode_kind {
	TN_TEXT,
	TN_ACTION,
	TN_IF
};

struct tnode;

struct tlist {
	struct tnode	**tl_nodes;
	size_t		  tl_n;
};

struct tnode {
	enum tnode_kind	 tn_kind;
	char		*tn_text;
	size_t		 tn_len;
	struct texpr	*tn_expr;
	struct tlist	 tn_then;
	struct tlist	 tn_else;
};

struct tmpl {
	struct tlist	 t_body;
};

#endif /* TEMPLATE_INT_H */
