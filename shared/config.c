/*
 * vmcpd.yaml loader.  libyaml's event parser feeds a small tree of our
 * own, so that an alias is refused where it appears and the nesting
 * depth is bounded before anything deep is built.  Table-driven section
 * loaders (config_sections.c) then walk the tree into a struct config,
 * through the field walk here (load_fields()).  The first error
 * stops the load; nothing here is global, so two configs can coexist
 * during a reload.
 */
#include <sys/stat.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <yaml.h>

#include "shared/composite.h"
#include "config.h"
#include "config_load.h"

#define CONFIG_FILE_MAX		(1024 * 1024)
#define CONFIG_DEPTH_MAX	32

#define MS_SEC	1000ULL
#define MS_MIN	(60 * MS_SEC)
#define MS_HOUR	(60 * MS_MIN)

#define NS_MS	1000000ULL

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

/* 1KiB, 256MiB, or bytes when no unit divides it */
static const char *
config_show_size(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };
	static const uint64_t mults[] = { TIB, GIB, MIB, KIB };
	size_t	 i;

	for (i = 0; i < nitems(units); i++)
		if (v >= mults[i] && v % mults[i] == 0) {
			(void)snprintf(buf, len, "%llu%s",
			    (unsigned long long)(v / mults[i]), units[i]);
			return buf;
		}
	(void)snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/*
 * The YAML tree
 */

static void
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

static int
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

/*
 * Value parsers
 */

int
config_parse_duration(const char *s, uint64_t *ms)
{
	static const struct {
		const char	*u_name;
		uint64_t	 u_ns;
	} units[] = {
		{ "ns", 1 },
		{ "us", 1000 },
		{ "\xc2\xb5s", 1000 },	/* U+00B5 micro sign */
		{ "\xce\xbcs", 1000 },	/* U+03BC greek mu */
		{ "ms", 1000 * 1000 },
		{ "s", 1000 * 1000 * 1000 },
		{ "m", 60ULL * 1000 * 1000 * 1000 },
		{ "h", 3600ULL * 1000 * 1000 * 1000 },
	};
	const char	*p = s, *u;
	uint64_t	 total = 0, whole, frac, scale, unit, v, fv;
	size_t		 i, ulen, ndig, nfrac;
	int		 big = 0;

	if (s == NULL || *s == '\0')
		return -1;
	/* a bare integer is a number of seconds */
	for (p = s; isdigit((unsigned char)*p); p++)
		;
	if (*p == '\0')
		unit = units[5].u_ns;
	else
		unit = 0;

	p = s;
	while (*p != '\0') {
		whole = 0;
		/* too large is told apart from malformed: read on */
		for (ndig = 0; isdigit((unsigned char)*p); p++, ndig++) {
			if (whole > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
				big = 1;
			else
				whole = whole * 10 + (uint64_t)(*p - '0');
		}
		frac = 0;
		scale = 1;
		nfrac = 0;
		if (*p == '.') {
			/* digits past the ns precision of an hour are noise */
			for (p++; isdigit((unsigned char)*p); p++, nfrac++) {
				if (scale >= 1000000000000000000ULL)
					continue;
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
		if (ndig == 0 && nfrac == 0)
			return -1;
		if (unit == 0) {
			for (u = p; *u != '\0' && *u != '.' &&
			    !isdigit((unsigned char)*u); u++)
				;
			ulen = (size_t)(u - p);
			for (i = 0; i < nitems(units); i++)
				if (strlen(units[i].u_name) == ulen &&
				    memcmp(p, units[i].u_name, ulen) == 0)
					break;
			if (i == nitems(units))
				return -1;
			v = units[i].u_ns;
			p = u;
		} else
			v = unit;
		if (big || whole > UINT64_MAX / v) {
			big = 1;
			continue;
		}
		whole *= v;
		fv = (uint64_t)((double)frac * ((double)v / (double)scale));
		if (whole > UINT64_MAX - fv || total > UINT64_MAX - whole - fv) {
			big = 1;
			continue;
		}
		total += whole + fv;
	}
	if (big)
		return -2;
	/* round up so that a tiny duration does not become 0 */
	*ms = total / NS_MS + (total % NS_MS != 0);
	return 0;
}

int
config_parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char	*sf_name;
		uint64_t	 sf_mult;
	} sufs[] = {
		{ "", 1 },
		{ "K", KIB }, { "KB", KIB }, { "KiB", KIB },
		{ "M", MIB }, { "MB", MIB }, { "MiB", MIB },
		{ "G", GIB }, { "GB", GIB }, { "GiB", GIB },
		{ "T", TIB }, { "TB", TIB }, { "TiB", TIB },
	};
	const char	*p;
	uint64_t	 v = 0;
	size_t		 i;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -1;
	for (p = s; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (i = 0; i < nitems(sufs); i++)
		if (strcmp(p, sufs[i].sf_name) == 0)
			break;
	if (i == nitems(sufs) || v > UINT64_MAX / sufs[i].sf_mult)
		return -1;
	*bytes = v * sufs[i].sf_mult;
	return 0;
}

/* a plain decimal integer */
int
config_parse_uint(const char *s, uint64_t *out)
{
	uint64_t	 v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s != '\0')
		return -1;
	*out = v;
	return 0;
}

/*
 * Typed values
 */

int
load_string(struct loader *ld, struct cnode *v, const char *path,
    char **dst)
{
	char	*s;

	if (v->cn_type != CN_SCALAR || cnode_is_null(v) || v->cn_len == 0)
		return config_expected(ld, v, path, "a non-empty string");
	if ((s = strdup(v->cn_str)) == NULL)
		return config_error(ld, NULL, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
}

/* any scalar but null, empty allowed: an argument or environment value */
int
load_text(struct loader *ld, struct cnode *v, const char *path)
{
	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		return config_expected(ld, v, path, "a string");
	return 0;
}

/*
 * A *Env key: the name of an environment variable (into *name) that must
 * be set and not empty; its value (the environment's own) into *valp.
 * The value is a secret: messages name the variable, never quote it.
 */
int
load_env_ref(struct loader *ld, struct cnode *v, const char *path,
    char **name, const char **valp)
{
	const char	*val;
	size_t		 i;

	if (load_string(ld, v, path, name) == -1)
		return -1;
	for (i = 0; (*name)[i] != '\0'; i++)
		if (!isalnum((unsigned char)(*name)[i]) && (*name)[i] != '_')
			return config_expected(ld, v, path, "an environment "
			    "variable name");
	if ((val = getenv(*name)) == NULL || *val == '\0')
		return config_error(ld, v, "%s: the environment variable %s "
		    "is not set or empty", path, *name);
	*valp = val;
	return 0;
}

/*
 * A sequence of non-empty strings into a NULL-terminated array and its
 * count.  The array hangs off the config as soon as it exists, so that
 * config_free() cleans up after an error half-way.
 */
int
load_string_seq(struct loader *ld, struct cnode *n, const char *path,
    const char *what, char ***dst, size_t *count)
{
	char	 ipath[PATH_MAX_LEN];
	size_t	 i;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, what);
	if ((*dst = calloc(n->cn_nkids + 1, sizeof(**dst))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (load_string(ld, n->cn_kids[i], ipath, &(*dst)[i]) == -1)
			return -1;
		(*count)++;
	}
	return 0;
}

static void
config_strv_free(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* a scalar that libyaml marked plain, so 5 and "5" differ */
int
load_plain(struct loader *ld, struct cnode *v, const char *path,
    const char *what)
{
	char	 esc[SHOW_MAX * 4 + 8];

	if (v->cn_type == CN_SCALAR && !v->cn_plain)
		return config_error(ld, v,
		    "%s: expected %s, found the quoted string \"%s\"", path,
		    what, config_escape(esc, sizeof(esc), v->cn_str, v->cn_len,
		    SHOW_MAX));
	if (v->cn_type != CN_SCALAR)
		return config_expected(ld, v, path, what);
	return 0;
}

static int
load_bool(struct loader *ld, struct cnode *v, const char *path, int *dst)
{
	if (load_plain(ld, v, path, "true or false") == -1)
		return -1;
	if (strcmp(v->cn_str, "true") == 0)
		*dst = 1;
	else if (strcmp(v->cn_str, "false") == 0)
		*dst = 0;
	else
		return config_expected(ld, v, path, "true or false");
	return 0;
}

static int
load_uint(struct loader *ld, struct cnode *v, const char *path,
    const struct field *f)
{
	char		 what[96];
	uint64_t	 n;

	(void)snprintf(what, sizeof(what), "an integer from %llu to %llu",
	    (unsigned long long)f->f_min, (unsigned long long)f->f_max);
	if (load_plain(ld, v, path, what) == -1)
		return -1;
	if (config_parse_uint(v->cn_str, &n) == -1 || n < f->f_min ||
	    n > f->f_max)
		return config_expected(ld, v, path, what);
	*(unsigned int *)f->f_ptr = (unsigned int)n;
	return 0;
}

static int
load_size(struct loader *ld, struct cnode *v, const char *path,
    const struct field *f, uint64_t *dst)
{
	char		 what[160], lo[32], hi[32];
	uint64_t	 n;

	(void)snprintf(what, sizeof(what), "a size from %s to %s (bytes, "
	    "or a number with a K, M, G or T suffix)",
	    config_show_size(f->f_min, lo, sizeof(lo)),
	    config_show_size(f->f_max, hi, sizeof(hi)));
	if (v->cn_type != CN_SCALAR ||
	    config_parse_size(v->cn_str, &n) == -1 || n < f->f_min ||
	    n > f->f_max)
		return config_expected(ld, v, path, what);
	*dst = n;
	return 0;
}

#define DURATION_EXAMPLES	"such as 30s, 5m or 1h30m"
#define DURATION_MAX		"5124095h34m33s"

int
load_duration(struct loader *ld, struct cnode *v, const char *path,
    uint64_t min, uint64_t *dst)
{
	uint64_t	 ms;
	const char	*what;
	char		 least[128];
	int		 rc = -1;

	what = min > 0 ? "a duration greater than 0 (" DURATION_EXAMPLES ")" :
	    "a duration (" DURATION_EXAMPLES ")";
	if (min > 1) {
		(void)snprintf(least, sizeof(least), "a duration of at least "
		    "%llu%s (" DURATION_EXAMPLES ")", (unsigned long long)
		    (min % 1000 == 0 ? min / 1000 : min),
		    min % 1000 == 0 ? "s" : "ms");
		what = least;
	}
	if (v->cn_type == CN_SCALAR &&
	    (rc = config_parse_duration(v->cn_str, &ms)) == -2)
		what = "a duration of at most " DURATION_MAX " (2^64 - 1 ns)";
	if (rc != 0 || ms < min)
		return config_expected(ld, v, path, what);
	*dst = ms;
	return 0;
}

/*
 * Mappings
 */

static int
config_cmp_keys(const void *a, const void *b)
{
	const struct cnode *ka = *(struct cnode *const *)a;
	const struct cnode *kb = *(struct cnode *const *)b;
	size_t	 len;
	int	 c;

	len = ka->cn_len < kb->cn_len ? ka->cn_len : kb->cn_len;
	if ((c = memcmp(ka->cn_str, kb->cn_str, len)) != 0)
		return c;
	if (ka->cn_len != kb->cn_len)
		return ka->cn_len < kb->cn_len ? -1 : 1;
	/* then document order, so the first of equal keys comes first */
	if (ka->cn_line != kb->cn_line)
		return ka->cn_line < kb->cn_line ? -1 : 1;
	return ka->cn_col < kb->cn_col ? -1 : ka->cn_col > kb->cn_col;
}

static int
config_same_key(const struct cnode *a, const struct cnode *b)
{
	return a->cn_len == b->cn_len && memcmp(a->cn_str, b->cn_str,
	    a->cn_len) == 0;
}

static int
config_before(const struct cnode *a, const struct cnode *b)
{
	return a->cn_line < b->cn_line ||
	    (a->cn_line == b->cn_line && a->cn_col < b->cn_col);
}

/*
 * Of scalars, the repetition that comes first in the file and the one
 * it repeats.  Sorts the array; n log n, so that a large mapping or list
 * costs no more than reading it.
 */
void
config_find_dup(struct cnode **v, size_t n, struct cnode **dupp,
    struct cnode **firstp)
{
	struct cnode	*dup = NULL, *first = NULL, *start;
	size_t		 i;

	*dupp = *firstp = NULL;
	if (n < 2)
		return;
	qsort(v, n, sizeof(*v), config_cmp_keys);
	start = v[0];
	for (i = 1; i < n; i++) {
		if (!config_same_key(v[i], start)) {
			start = v[i];
			continue;
		}
		if (dup == NULL || config_before(v[i], dup)) {
			dup = v[i];
			first = start;
		}
	}
	*dupp = dup;
	*firstp = first;
}

/* A mapping with scalar keys, none twice. */
int
load_map_check(struct loader *ld, struct cnode *n, const char *path)
{
	struct cnode	**keys = NULL, *dup, *first;
	char		 kpath[PATH_MAX_LEN];
	size_t		 i, nkeys = n->cn_nkids / 2;

	if (n->cn_type != CN_MAP)
		return config_expected(ld, n, path, "a mapping");
	for (i = 0; i < nkeys; i++) {
		if (n->cn_kids[2 * i]->cn_type != CN_SCALAR)
			return config_expected(ld, n->cn_kids[2 * i],
			    *path == '\0' ? "key" : path, "a key name");
	}
	if (nkeys < 2)
		return 0;
	if ((keys = reallocarray(NULL, nkeys, sizeof(*keys))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < nkeys; i++)
		keys[i] = n->cn_kids[2 * i];
	config_find_dup(keys, nkeys, &dup, &first);
	free(keys);
	if (dup != NULL) {
		config_path(kpath, sizeof(kpath), path, dup);
		return config_error(ld, dup,
		    "%s: duplicate key (first at line %zu, column %zu)", kpath,
		    first->cn_line, first->cn_col);
	}
	return 0;
}

struct cnode *
cnode_get(const struct cnode *n, const char *key)
{
	size_t	 i;

	if (n == NULL || n->cn_type != CN_MAP)
		return NULL;
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if (strcmp(n->cn_kids[i]->cn_str, key) == 0 &&
		    strlen(key) == n->cn_kids[i]->cn_len)
			return n->cn_kids[i + 1];
	return NULL;
}

/* the key node itself, for messages about the key */
struct cnode *
cnode_get_key(const struct cnode *n, const char *key)
{
	size_t	 i;

	if (n == NULL || n->cn_type != CN_MAP)
		return NULL;
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if (strcmp(n->cn_kids[i]->cn_str, key) == 0 &&
		    strlen(key) == n->cn_kids[i]->cn_len)
			return n->cn_kids[i];
	return NULL;
}

/* Levenshtein distance, ignoring case so that max_readers ~ maxReaders */
static size_t
config_distance(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b), i, j, d[65], prev, tmp;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = i;
		for (j = 1; j <= lb; j++) {
			tmp = d[j];
			if (tolower((unsigned char)a[i - 1]) ==
			    tolower((unsigned char)b[j - 1]))
				d[j] = prev;
			else {
				d[j] = prev;
				if (d[j - 1] < d[j])
					d[j] = d[j - 1];
				if (tmp < d[j])
					d[j] = tmp;
				d[j]++;
			}
			prev = tmp;
		}
	}
	return d[lb];
}

static int
config_unknown_key(struct loader *ld, struct cnode *key, const char *kpath,
    const struct field *fields, size_t nfields)
{
	char		 list[CONFIG_ERR_MAX];
	const char	*best = NULL;
	size_t		 i, d, bestd = SIZE_MAX, limit, o = 0;
	int		 r;

	for (i = 0; i < nfields; i++) {
		d = config_distance(key->cn_str, fields[i].f_key);
		limit = strlen(fields[i].f_key) <= 4 ? 1 :
		    strlen(fields[i].f_key) <= 8 ? 2 : 3;
		if (d <= limit && d < bestd) {
			best = fields[i].f_key;
			bestd = d;
		}
	}
	if (best != NULL)
		return config_error(ld, key,
		    "%s: unknown key, did you mean \"%s\"?", kpath, best);
	list[0] = '\0';
	for (i = 0; i < nfields; i++) {
		if (fields[i].f_type == F_NOTYET ||
		    fields[i].f_type == F_K8SONLY)
			continue;
		r = snprintf(list + o, sizeof(list) - o, "%s%s",
		    o == 0 ? "" : ", ", fields[i].f_key);
		if (r < 0 || (size_t)r >= sizeof(list) - o)
			break;
		o += (size_t)r;
	}
	return config_error(ld, key, "%s: unknown key, expected one of: %s",
	    kpath, list);
}

int
load_fields(struct loader *ld, struct cnode *n, const char *path,
    const struct field *fields, size_t nfields)
{
	const struct field	*f;
	struct cnode		*key, *v;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, j;
	uint64_t		 u;
	int			 rv;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		v = n->cn_kids[i + 1];
		config_path(kpath, sizeof(kpath), path, key);
		for (j = 0; j < nfields; j++)
			if (strcmp(fields[j].f_key, key->cn_str) == 0 &&
			    strlen(fields[j].f_key) == key->cn_len)
				break;
		if (j == nfields)
			return config_unknown_key(ld, key, kpath, fields,
			    nfields);
		f = &fields[j];
		switch (f->f_type) {
		case F_FN:
			rv = f->f_fn(ld, v, kpath, f->f_ptr);
			break;
		case F_STRING:
			rv = load_string(ld, v, kpath, f->f_ptr);
			break;
		case F_BOOL:
			rv = load_bool(ld, v, kpath, f->f_ptr);
			break;
		case F_UINT:
			rv = load_uint(ld, v, kpath, f);
			break;
		case F_SIZE:
			rv = load_size(ld, v, kpath, f, f->f_ptr);
			break;
		case F_SIZET:
			if ((rv = load_size(ld, v, kpath, f, &u)) == 0)
				*(size_t *)f->f_ptr = (size_t)u;
			break;
		case F_DURATION:
			rv = load_duration(ld, v, kpath, f->f_min, f->f_ptr);
			break;
		case F_K8SONLY:
			rv = config_error(ld, key, "%s " K8SONLY, kpath);
			break;
		case F_NOTYET:
		default:
			rv = config_error(ld, key, "%s " NOTYET, kpath);
			break;
		}
		if (rv == -1)
			return -1;
	}
	return 0;
}

int
config_require(struct loader *ld, struct cnode *n, const char *path,
    const char *key)
{
	if (cnode_get(n, key) != NULL)
		return 0;
	if (*path == '\0')
		return config_error(ld, n, "missing required key \"%s\"", key);
	return config_error(ld, n, "%s: missing required key \"%s\"", path,
	    key);
}

static int
load_root(struct loader *ld, struct cnode *root)
{
	struct config	*cf = ld->ld_cf;
	const struct field fields[] = {
		{ "name", F_STRING, &cf->cf_name, NULL, 0, 0 },
		{ "groupRef", F_STRING, &cf->cf_group_ref, NULL, 0, 0 },
		{ "metadata", F_FN, NULL, load_metadata, 0, 0 },
		{ "daemon", F_FN, cf, load_daemon, 0, 0 },
		{ "http", F_FN, cf, load_http, 0, 0 },
		{ "sessions", F_FN, cf, load_sessions, 0, 0 },
		{ "backends", F_FN, cf, load_backends, 0, 0 },
		{ "operational", F_FN, cf, load_operational, 0, 0 },
		{ "incomingAuth", F_FN, cf, load_incoming_auth, 0, 0 },
		{ "outgoingAuth", F_FN, NULL, load_outgoing_auth, 0, 0 },
		{ "aggregation", F_FN, &cf->cf_agg, load_aggregation, 0, 0 },
		{ "compositeTools", F_FN, cf, load_composite_tools, 0, 0 },
		{ "compositeToolRefs", F_NOTYET, NULL, NULL, 0, 0 },
		{ "rateLimiting", F_FN, cf, load_rate_limiting, 0, 0 },
		{ "audit", F_FN, cf, load_audit, 0, 0 },
		{ "telemetry", F_NOTYET, NULL, NULL, 0, 0 },
		{ "optimizer", F_NOTYET, NULL, NULL, 0, 0 },
		{ "codeMode", F_NOTYET, NULL, NULL, 0, 0 },
		{ "sessionStorage", F_FN, cf, load_session_storage, 0, 0 },
		{ "passthroughHeaders", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (root == NULL)
		return config_errorat(ld, 1, 1,
		    "missing required key \"backends\"");
	if (load_fields(ld, root, "", fields, nitems(fields)) == -1)
		return -1;
	if (!ld->ld_have_backends)
		return config_require(ld, root, "", "backends");

	if (config_resolve_timeouts(ld) == -1)
		return -1;
	config_resolve_sessions(ld->ld_cf);
	if (config_auth_resolve(ld) == -1 || config_outauth_resolve(ld) == -1 ||
	    config_sstore_resolve(ld) == -1)
		return -1;
	return config_resolve_aggregation(ld);
}

/*
 * API
 */

static struct config *
config_new(const char *file)
{
	struct config	*cf;

	if ((cf = calloc(1, sizeof(*cf))) == NULL)
		return NULL;
	if ((cf->cf_file = strdup(file)) == NULL ||
	    (cf->cf_name = strdup("vmcpd")) == NULL ||
	    (cf->cf_listen_host = strdup("127.0.0.1")) == NULL ||
	    (cf->cf_state_dir = strdup("./var")) == NULL ||
	    (cf->cf_agg.ca_prefix_format = strdup("{workload}_")) == NULL ||
	    config_policy_defaults(cf) == -1 ||
	    config_sstore_defaults(cf) == -1) {
		config_free(cf);
		return NULL;
	}
	cf->cf_listen_port = 4483;
	cf->cf_workers = 0;
	cf->cf_map_size = GIB;
	cf->cf_max_readers = 512;
	cf->cf_drain_timeout_ms = 30 * MS_SEC;
	cf->cf_max_header_size = 16 * KIB;
	cf->cf_max_body_size = 4 * MIB;
	cf->cf_http_timeout_ms = 30 * MS_SEC;
	cf->cf_keepalive_ms = 15 * MS_SEC;
	cf->cf_header_timeout_ms = 10 * MS_SEC;
	cf->cf_request_timeout_ms = 60 * MS_SEC;
	cf->cf_max_conns = 2048;
	cf->cf_max_conns_client = 256;
	cf->cf_session_ttl_ms = 30 * MS_MIN;
	cf->cf_session_max_ms = 24 * MS_HOUR;
	cf->cf_event_buffer = 1000;
	cf->cf_pending_timeout_ms = 5 * MS_MIN;
	cf->cf_bsession_ttl_ms = 10 * MS_MIN;
	cf->cf_bsession_cap = 1000;
	cf->cf_agg.ca_conflict = CONFIG_CONFLICT_PREFIX;
	cf->cf_agg.ca_prefix_mode = CONFIG_PREFIX_ALWAYS;
	cf->cf_agg.ca_cache_ttl_ms = 5 * MS_MIN;
	cf->cf_agg.ca_page_size = 1000;
	cf->cf_agg.ca_max_backend_pages = 100;
	cf->cf_agg.ca_max_backend_list = 32 * MIB;
	cf->cf_answer_buf = 256 * MIB;
	cf->cf_answer_buf_backend = 128 * MIB;
	cf->cf_agg.ca_max_desc = 16384;
	cf->cf_agg.ca_max_title = 256;
	cf->cf_timeout_default_ms = 30 * MS_SEC;
	cf->cf_partial_failure = CONFIG_PARTIAL_FAIL;
	cf->cf_health.ch_interval_ms = 30 * MS_SEC;
	cf->cf_health.ch_timeout_ms = 10 * MS_SEC;
	cf->cf_health.ch_unhealthy = 3;
	cf->cf_health.ch_report_ms = 30 * MS_SEC;
	cf->cf_health.ch_cb_threshold = 5;
	cf->cf_health.ch_cb_timeout_ms = 60 * MS_SEC;
	return cf;
}

struct config *
config_load_buffer(const char *name, const char *buf, size_t len, char *err,
    size_t errlen)
{
	struct loader	 ld;
	struct cnode	*root = NULL;

	memset(&ld, 0, sizeof(ld));
	ld.ld_name = name != NULL ? name : "-";
	ld.ld_err = err;
	ld.ld_errlen = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (buf == NULL && len > 0) {
		config_error(&ld, NULL, "no input");
		return NULL;
	}
	if (len > CONFIG_FILE_MAX) {
		config_error(&ld, NULL, "file is larger than 1 MiB");
		return NULL;
	}
	if ((ld.ld_cf = config_new(ld.ld_name)) == NULL) {
		config_error(&ld, NULL, "out of memory");
		return NULL;
	}
	if (config_tree_parse(&ld, buf != NULL ? buf : "", len, &root) == -1 ||
	    load_root(&ld, root) == -1)
		goto fail;
	cnode_free(root);
	return ld.ld_cf;

fail:
	cnode_free(root);
	config_free(ld.ld_cf);
	return NULL;
}

/*
 * One top-level section of buf alone, through fn (a struct field f_fn):
 * for a section's unit tests before it is wired to the loader.
 */
int
config_load_section(const char *name, const char *buf, size_t len,
    const char *key, int (*fn)(struct loader *, struct cnode *,
    const char *, void *), void *arg, char *err, size_t errlen)
{
	struct loader	 ld;
	struct cnode	*root = NULL, *v;
	int		 rc = -1;

	memset(&ld, 0, sizeof(ld));
	ld.ld_name = name;
	ld.ld_err = err;
	ld.ld_errlen = errlen;
	if (config_tree_parse(&ld, buf, len, &root) == -1 ||
	    (root != NULL && load_map_check(&ld, root, "") == -1))
		goto done;
	if ((v = cnode_get(root, key)) == NULL)
		config_error(&ld, root, "missing key \"%s\"", key);
	else
		rc = fn(&ld, v, key, arg);
done:
	cnode_free(root);
	return rc;
}

struct config *
config_load_file(const char *path, char *err, size_t errlen)
{
	struct loader	 ld;
	struct config	*cf = NULL;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0, cap;
	ssize_t		 n;
	int		 fd;

	memset(&ld, 0, sizeof(ld));
	ld.ld_name = path;
	ld.ld_err = err;
	ld.ld_errlen = errlen;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		config_error(&ld, NULL, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		config_error(&ld, NULL, "%s", strerror(errno));
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		config_error(&ld, NULL, "%s", strerror(EISDIR));
		goto done;
	}
	if (S_ISREG(st.st_mode) && st.st_size > CONFIG_FILE_MAX) {
		config_error(&ld, NULL, "file is larger than 1 MiB");
		goto done;
	}
	/* read one byte past the limit to notice a growing file or a pipe */
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 4096;
	if ((buf = malloc(cap)) == NULL) {
		config_error(&ld, NULL, "out of memory");
		goto done;
	}
	for (;;) {
		if (len == cap) {
			char	*nbuf;

			if (cap > CONFIG_FILE_MAX) {
				config_error(&ld, NULL,
				    "file is larger than 1 MiB");
				goto done;
			}
			cap = cap * 2 > CONFIG_FILE_MAX + 1 ?
			    CONFIG_FILE_MAX + 1 : cap * 2;
			if ((nbuf = realloc(buf, cap)) == NULL) {
				config_error(&ld, NULL, "out of memory");
				goto done;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			config_error(&ld, NULL, "%s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	cf = config_load_buffer(path, buf, len, err, errlen);

done:
	free(buf);
	close(fd);
	return cf;
}

static void
config_aggregation_free(struct config_aggregation *ca)
{
	struct config_workload	*cw;
	struct config_override	*co;
	size_t			 i, j;

	for (i = 0; i < ca->ca_nworkloads; i++) {
		cw = &ca->ca_workloads[i];
		free(cw->cw_name);
		config_strv_free(cw->cw_filter);
		for (j = 0; j < cw->cw_noverrides; j++) {
			co = &cw->cw_overrides[j];
			free(co->co_tool);
			free(co->co_name);
			free(co->co_description);
			json_decref(co->co_annotations);
		}
		free(cw->cw_overrides);
	}
	free(ca->ca_workloads);
	config_strv_free(ca->ca_priority);
	free(ca->ca_prefix_format);
}

void
config_free(struct config *cf)
{
	struct config_backend	*cb;
	size_t			 i;

	if (cf == NULL)
		return;
	for (i = 0; i < cf->cf_nbackends; i++) {
		cb = &cf->cf_backends[i];
		free(cb->cb_name);
		free(cb->cb_url);
		free(cb->cb_url_shown);
		free(cb->cb_command);
		config_strv_free(cb->cb_argv);
		config_strv_free(cb->cb_env);
		free(cb->cb_cwd);
		free(cb->cb_ca_bundle);
	}
	free(cf->cf_backends);
	config_aggregation_free(&cf->cf_agg);
	config_auth_free(&cf->cf_inauth);
	config_outauth_free(cf);
	config_policy_free(cf);
	if (cf->cf_composites != NULL)
		composite_list_free(cf->cf_composites);
	free(cf->cf_composites);
	config_sstore_free(cf);
	free(cf->cf_file);
	free(cf->cf_name);
	free(cf->cf_group_ref);
	free(cf->cf_listen_host);
	free(cf->cf_diag_host);
	free(cf->cf_port_file);
	free(cf->cf_state_dir);
	free(cf->cf_user);
	free(cf->cf_log_file);
	config_strv_free(cf->cf_allowed_hosts);
	config_strv_free(cf->cf_allowed_origins);
	free(cf);
}

const struct config_backend *
config_backend_find(const struct config *cf, const char *name)
{
	size_t	 i;

	if (cf == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cf->cf_nbackends; i++)
		if (cf->cf_backends[i].cb_name != NULL &&
		    strcmp(cf->cf_backends[i].cb_name, name) == 0)
			return &cf->cf_backends[i];
	return NULL;
}

const char *
config_era_name(enum proto_era e)
{
	switch (e) {
	case PROTO_ERA_UNKNOWN:
		return "auto";
	case PROTO_ERA_LEGACY:
		return "legacy";
	case PROTO_ERA_MODERN:
		return "modern";
	case PROTO_ERA_BOTH:
		break;	/* a record, never a setting */
	}
	return "unknown";
}

const char *
config_transport_name(enum config_transport t)
{
	switch (t) {
	case TRANSPORT_STREAMABLE_HTTP:
		return "streamable-http";
	case TRANSPORT_SSE:
		return "sse";
	case TRANSPORT_STDIO:
		return "stdio";
	}
	return "unknown";
}
