/*
 * The Cedar subset's lexer (cedar_lex.c), for its parsers of policies
 * (cedar_parse.c) and of expressions (cedar_parse_expr.c); private to
 * those three files.
 */
#ifndef CEDAR_LEX_H
#define CEDAR_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "shared/cedar_int.h"

/* the lexer */

enum tok {
	T_EOF,
	T_IDENT,
	T_INT,
	T_STR,
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_LBRACE,
	T_RBRACE,
	T_COMMA,
	T_SEMI,
	T_DOT,
	T_COLONS,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_AND,
	T_OR,
	T_NOT,
	T_MINUS,
	T_AT,
	T_ARITH,		/* + * */
	T_QUESTION,		/* template slots */
	T_OTHER
};

struct token {
	enum tok	 t_t;
	const char	*t_p;	/* start in the text */
	size_t		 t_len;
	unsigned	 t_line;
	unsigned	 t_col;
	uint64_t	 t_int;	/* T_INT: the magnitude, if !t_big */
	int		 t_big;
};

struct parser {
	const char	*p_file;
	const char	*p_text;
	size_t		 p_len;
	size_t		 p_pos;
	unsigned	 p_line;
	unsigned	 p_col;
	struct token	 p_tok;
	struct token	 p_next;	/* one token of lookahead */
	int		 p_have_next;
	struct arena	*p_ar;
	char		*p_err;
	size_t		 p_errsz;
	int		 p_failed;
	int		 p_depth;
};

void	*cedar_perr(struct parser *, unsigned, unsigned, const char *, ...)
	    __attribute__((format(printf, 4, 5)));
void	*cedar_perr_tok(struct parser *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	*cedar_perr_unexpected(struct parser *, const char *);
void	 cedar_lex_adv(struct parser *, size_t);
void	 cedar_lex_next(struct parser *);
const struct token *cedar_lex_peek(struct parser *);
int	 cedar_tok_is(const struct token *, const char *);
int	 cedar_tok_reserved(const struct token *);
int	 cedar_tok_var(const struct token *);
int	 cedar_expect(struct parser *, enum tok, const char *);
int	 cedar_str_decode(struct parser *, int, struct cedar_str **,
	    size_t *);

/* cedar_parse_expr.c */
int	 cedar_parse_entity(struct parser *, struct cedar_uid *);
struct expr *cedar_parse_expr(struct parser *);

#endif /* CEDAR_LEX_H */
