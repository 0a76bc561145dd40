/*
 * A JSON text writer: objects, strings, integers and ready-made JSON
 * text appended to a growing buffer, without a tree.  Strings are
 * written as jansson's json_dumps() writes them with JSON_COMPACT |
 * JSON_ENSURE_ASCII (RFC 8259 7: '"', '\\' and the control characters
 * escaped, \b \f \n \r \t by name, every other one and every non-ASCII
 * character as \uXXXX, upper-case hex, a surrogate pair past the BMP),
 * so that no string can end its own value or its line; a string that is
 * not UTF-8 (RFC 3629: no overlong form, no surrogate, nothing past
 * U+10FFFF) is refused whole, as json_string() refuses it.  Pure: no
 * I/O, no global state.
 */
#ifndef VMCPD_JSONW_H
#define VMCPD_JSONW_H

#include <stddef.h>

struct jsonw {
	char	*jw_buf;	/* malloc'd, NUL-terminated; or NULL */
	size_t	 jw_len;
	size_t	 jw_cap;
	int	 jw_comma;	/* a value before: the next member needs "," */
	int	 jw_failed;	/* out of memory: the text is not whole */
};

/* empty again (its buffer kept for the next text) */
void	 jsonw_reset(struct jsonw *);
void	 jsonw_free(struct jsonw *);
/*
 * Each call writes one value; key is its member's name inside an
 * object, or NULL for a value that is no member (the outermost).  A key
 * is the caller's own name, written as it is: one that needs escaping
 * is a bug.
 * jsonw_obj() opens an object that jsonw_end() closes.
 */
void	 jsonw_obj(struct jsonw *, const char *key);
void	 jsonw_end(struct jsonw *);
void	 jsonw_int(struct jsonw *, const char *key, long long);
/* 0, or -1 with nothing written: s (len bytes) is not UTF-8 */
int	 jsonw_str(struct jsonw *, const char *key, const char *s);
int	 jsonw_strn(struct jsonw *, const char *key, const char *s,
	    size_t len);
/* text (a whole JSON value, the caller's to vouch for) as it is */
void	 jsonw_raw(struct jsonw *, const char *key, const char *text,
	    size_t len);
/* where the text ends, to go back to (a member found bad after all) */
struct jsonw_mark {
	size_t	 jm_len;
	int	 jm_comma;
};
void	 jsonw_mark(const struct jsonw *, struct jsonw_mark *);
void	 jsonw_undo(struct jsonw *, const struct jsonw_mark *);
/* len bytes at the end as they are (a newline after the outermost) */
void	 jsonw_bytes(struct jsonw *, const char *, size_t len);

#endif /* VMCPD_JSONW_H */
