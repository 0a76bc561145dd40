/*
 * vmcpd.yaml loader: the messages and the YAML tree.  libyaml's event
 * parser feeds a small tree of our own (struct cnode), so that an alias
 * is refused where it appears and the nesting depth is bounded before
 * anything deep is built; every message names a node's file:line:column.
 * config.c drives a load; config_fields.c walks the tree into a config.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config.h"
#include "config_load.h"

#define CONFIG_DEPTH_MAX	32

static int	 config_verror(struct loader *, size_t, size_t, const char *,
		    va_list) __attribute__((format(printf, 4, 0)));

/*
 * Messages
 */

static int
config_verror(struct loader *ld, size_t line, size_t col, const char *fmt,
    va_list ap)
{
	int	 n;

	if (ld->ld_err == NULL || ld->ld_errlen == 0)
		return -1;
	if (line > 0)
		n = snprintf(ld->ld_err, ld->ld_errlen, "%s:%zu:%zu: ",
		    ld->ld_name, line, col);
	else
		n = snprintf(ld->ld_err, ld->ld_errlen, "%s: ", ld->ld_name);
	if (n >= 0 && (size_t)n < ld->ld_errlen)
		(void)vsnprintf(ld->ld_err + n, ld->ld_errlen - n, fmt, ap);
	return -1;
}

int
config_errorat(struct loader *ld, size_t line, size_t col, const char *fmt,
    ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)config_verror(ld, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* at the node's position, or without one when there is no node */
int
config_error(struct loader *ld, const struct cnode *n, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	if (n != NULL)
		(void)config_verror(ld, n->cn_line, n->cn_col, fmt, ap);
	else
		(void)config_verror(ld, 0, 0, fmt, ap);
	va_end(ap);
	return -1;
}

/* escape s for a message; at most max characters, then "..." */
char *
config_escape(char *dst, size_t dlen, const char *s, size_t len, size_t max)
{
	size_t		 i, o = 0, shown = 0, tlen;
	char		 tmp[8];
	unsigned char	 c;

	if (dlen == 0)
		return dst;
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		/* a UTF-8 continuation byte belongs to the character before */
		if ((c & 0xc0) == 0x80 && i > 0) {
			if (o + 1 >= dlen)
				break;
			dst[o++] = (char)c;
			continue;
		}
		if (shown++ == max)
			(void)snprintf(tmp, sizeof(tmp), "...");
		else if (c == '"' || c == '\\')
			(void)snprintf(tmp, sizeof(tmp), "\\%c", c);
		else if (c == '\n')
			(void)snprintf(tmp, sizeof(tmp), "\\n");
		else if (c == '\t')
			(void)snprintf(tmp, sizeof(tmp), "\\t");
		else if (c < 0x20 || c == 0x7f)
			(void)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		else
			(void)snprintf(tmp, sizeof(tmp), "%c", c);
		tlen = strlen(tmp);
		if (o + tlen >= dlen)
			break;
		memcpy(dst + o, tmp, tlen);
		o += tlen;
		if (shown > max)
			break;
	}
	dst[o] = '\0';
	return dst;
}

int
cnode_is_null(const struct cnode *n)
{
	return n->cn_type == CN_SCALAR && n->cn_plain &&
	    (n->cn_len == 0 || strcmp(n->cn_str, "~") == 0 ||
	    strcmp(n->cn_str, "null") == 0 || strcmp(n->cn_str, "Null") == 0 ||
	    strcmp(n->cn_str, "NULL") == 0);
}

/* what was found, for "expected X, found Y" */
static const char *
cnode_show(const struct cnode *n, char *buf, size_t len)
{
	char	 esc[SHOW_MAX * 4 + 8];

	if (n->cn_type == CN_MAP)
		(void)snprintf(buf, len, "a mapping");
	else if (n->cn_type == CN_SEQ)
		(void)snprintf(buf, len, "a sequence");
	else if (cnode_is_null(n))
		(void)snprintf(buf, len, "null");
	else
		(void)snprintf(buf, len, "\"%s\"", config_escape(esc,
		    sizeof(esc), n->cn_str, n->cn_len, SHOW_MAX));
	return buf;
}

int
config_expected(struct loader *ld, const struct cnode *n, const char *path,
    const char *what)
{
	char	 found[SHOW_MAX * 4 + 32];

	cnode_show(n, found, sizeof(found));
	if (*path == '\0')
		return config_error(ld, n, "expected %s, found %s", what,
		    found);
	return config_error(ld, n, "%s: expected %s, found %s", path, what,
	    found);
}

void
config_path(char *dst, size_t len, const char *path, const struct cnode *key)
{
	char	 esc[SHOW_MAX * 4 + 8];

	config_escape(esc, sizeof(esc), key->cn_str, key->cn_len, SHOW_MAX);
	if (*path == '\0')
		(void)snprintf(dst, len, "%s", esc);
	else
		(void)snprintf(dst, len, "%s.%s", path, esc);
}

/*
 * The YAML tree
 */

void
cnode_free(struct cnode *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->cn_nkids; i++)
		cnode_free(n->cn_kids[i]);
	free(n->cn_kids);
	free(n->cn_str);
	free(n);
}

static struct cnode *
cnode_new(enum cnode_type type, const yaml_mark_t *mark)
{
	struct cnode	*n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->cn_type = type;
	n->cn_line = mark->line + 1;
	n->cn_col = mark->column + 1;
	return n;
}

/*
 * For a literal block scalar (|), where its text starts in the file:
 * the line after the indicator, indented as its first non-blank line
 * (YAML 1.2, 8.1.1.1), so a position in the text maps to one in the file.
 */
static void
cnode_block_body(struct cnode *n, const yaml_event_t *ev, const char *buf,
    size_t len)
{
	size_t	 i = ev->start_mark.index, ind;

	while (i < len && buf[i] != '\n')
		i++;
	n->cn_body_line = ev->start_mark.line + 2;
	while (i < len) {
		for (i++, ind = 0; i < len && buf[i] == ' '; i++)
			ind++;
		if (i < len && buf[i] != '\n' && buf[i] != '\r') {
			n->cn_body_col = ind + 1;
			return;
		}
		while (i < len && buf[i] != '\n')
			i++;
	}
}

static struct cnode *
cnode_new_scalar(const yaml_event_t *ev, const char *buf, size_t len)
{
	struct cnode	*n;

	if ((n = cnode_new(CN_SCALAR, &ev->start_mark)) == NULL)
		return NULL;
	if ((n->cn_str = malloc(ev->data.scalar.length + 1)) == NULL) {
		free(n);
		return NULL;
	}
	memcpy(n->cn_str, ev->data.scalar.value, ev->data.scalar.length);
	n->cn_str[ev->data.scalar.length] = '\0';
	n->cn_len = ev->data.scalar.length;
	n->cn_plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->cn_quoted = ev->data.scalar.style ==
	    YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	n->cn_oneline = ev->start_mark.line == ev->end_mark.line;
	if (ev->data.scalar.style == YAML_LITERAL_SCALAR_STYLE)
		cnode_block_body(n, ev, buf, len);
	return n;
}

static int
cnode_add(struct cnode *parent, struct cnode *kid)
{
	struct cnode	**kids;
	size_t		  cap;

	if (parent->cn_nkids == parent->cn_cap) {
		cap = parent->cn_cap == 0 ? 8 : parent->cn_cap * 2;
		kids = reallocarray(parent->cn_kids, cap, sizeof(*kids));
		if (kids == NULL)
			return -1;
		parent->cn_kids = kids;
		parent->cn_cap = cap;
	}
	parent->cn_kids[parent->cn_nkids++] = kid;
	kid->cn_up = parent;
	return 0;
}

/* line and column of a byte offset, for reader errors */
static void
config_offset_pos(const char *buf, size_t len, size_t off, size_t *line,
    size_t *col)
{
	size_t	 i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80)
			(*col)++;
	}
}

static int
config_yaml_error(struct loader *ld, const yaml_parser_t *p, const char *buf,
    size_t len)
{
	size_t	 line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return config_error(ld, NULL, "out of memory");
	case YAML_READER_ERROR:
		config_offset_pos(buf, len, p->problem_offset, &line, &col);
		return config_errorat(ld, line, col, "syntax error: %s",
		    p->problem != NULL ? p->problem : "unreadable input");
	default:
		break;
	}
	line = p->problem_mark.line + 1;
	col = p->problem_mark.column + 1;
	if (p->context == NULL)
		return config_errorat(ld, line, col, "syntax error: %s",
		    p->problem != NULL ? p->problem : "invalid YAML");
	if (p->context_mark.line == p->problem_mark.line &&
	    p->context_mark.column == p->problem_mark.column)
		return config_errorat(ld, line, col, "syntax error: %s (%s)",
		    p->problem != NULL ? p->problem : "invalid YAML",
		    p->context);
	return config_errorat(ld, line, col,
	    "syntax error: %s (%s at line %zu, column %zu)",
	    p->problem != NULL ? p->problem : "invalid YAML", p->context,
	    p->context_mark.line + 1, p->context_mark.column + 1);
}

int
config_tree_parse(struct loader *ld, const char *buf, size_t len,
    struct cnode **rootp)
{
	yaml_parser_t	 p;
	yaml_event_t	 ev;
	struct cnode	*root = NULL, *cur = NULL, *n;
	int		 done = 0, ndocs = 0, depth = 0, failed;
	yaml_char_t	*tag;
	enum cnode_type	 type;

	*rootp = NULL;
	if (!yaml_parser_initialize(&p))
		return config_error(ld, NULL, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			config_yaml_error(ld, &p, buf, len);
			goto fail;
		}
		n = NULL;
		tag = NULL;
		failed = 0;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++ndocs > 1) {
				config_errorat(ld, ev.start_mark.line + 1,
				    ev.start_mark.column + 1,
				    "only one YAML document is allowed");
				failed = 1;
			}
			break;
		case YAML_ALIAS_EVENT:
			config_errorat(ld, ev.start_mark.line + 1,
			    ev.start_mark.column + 1,
			    "YAML aliases are not allowed");
			failed = 1;
			break;
		case YAML_SCALAR_EVENT:
			tag = ev.data.scalar.tag;
			if (tag != NULL)
				break;
			/* "\0" in a double-quoted scalar: no C string holds it */
			if (memchr(ev.data.scalar.value, '\0',
			    ev.data.scalar.length) != NULL) {
				config_errorat(ld, ev.start_mark.line + 1,
				    ev.start_mark.column + 1,
				    "NUL characters are not allowed");
				failed = 1;
				break;
			}
			if ((n = cnode_new_scalar(&ev, buf, len)) == NULL) {
				config_error(ld, NULL, "out of memory");
				failed = 1;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (ev.type == YAML_SEQUENCE_START_EVENT) {
				tag = ev.data.sequence_start.tag;
				type = CN_SEQ;
			} else {
				tag = ev.data.mapping_start.tag;
				type = CN_MAP;
			}
			if (tag != NULL)
				break;
			if (depth == CONFIG_DEPTH_MAX) {
				config_errorat(ld, ev.start_mark.line + 1,
				    ev.start_mark.column + 1,
				    "nesting is deeper than %d levels",
				    CONFIG_DEPTH_MAX);
				failed = 1;
				break;
			}
			if ((n = cnode_new(type, &ev.start_mark)) == NULL) {
				config_error(ld, NULL, "out of memory");
				failed = 1;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			cur = cur->cn_up;
			depth--;
			break;
		default:
			break;
		}
		if (tag != NULL) {
			config_errorat(ld, ev.start_mark.line + 1,
			    ev.start_mark.column + 1,
			    "YAML tags are not allowed");
			failed = 1;
		}
		yaml_event_delete(&ev);
		if (failed) {
			cnode_free(n);
			goto fail;
		}
		if (n == NULL)
			continue;
		if (cur == NULL)
			root = n;
		else if (cnode_add(cur, n) == -1) {
			cnode_free(n);
			config_error(ld, NULL, "out of memory");
			goto fail;
		}
		if (n->cn_type != CN_SCALAR) {
			cur = n;
			depth++;
		}
	}
	yaml_parser_delete(&p);
	*rootp = root;
	return 0;

fail:
	yaml_parser_delete(&p);
	cnode_free(root);
	return -1;
}
