/*
 * vmcpd.yaml loader.  libyaml's event parser feeds a small tree of our
 * own, so that an alias is refused where it appears and the nesting
 * depth is bounded before anything deep is built.  Table-driven section
 * loaders then walk the tree into a struct config.  The first error
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

#include "config.h"

#define CONFIG_FILE_MAX		(1024 * 1024)
#define CONFIG_DEPTH_MAX	32

#define KIB	1024ULL
#define MIB	(1024 * KIB)
#define GIB	(1024 * MIB)
#define TIB	(1024 * GIB)

#define MS_SEC	1000ULL
#define MS_MIN	(60 * MS_SEC)
#define MS_HOUR	(60 * MS_MIN)

#define NS_MS	1000000ULL

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

static int	 config_verror(struct loader *, size_t, size_t, const char *,
		    va_list) __attribute__((format(printf, 4, 0)));
static int	 config_error(struct loader *, const struct cnode *,
		    const char *, ...) __attribute__((format(printf, 3, 4)));
static int	 config_errorat(struct loader *, size_t, size_t,
		    const char *, ...) __attribute__((format(printf, 4, 5)));

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

static int
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
static int
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
static char *
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

static int
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

static int
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

static void
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

static struct cnode *
cnode_new_scalar(const yaml_event_t *ev)
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
			if ((n = cnode_new_scalar(&ev)) == NULL) {
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
static int
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

static int
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
static int
load_text(struct loader *ld, struct cnode *v, const char *path)
{
	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		return config_expected(ld, v, path, "a string");
	return 0;
}

/*
 * A sequence of non-empty strings into a NULL-terminated array and its
 * count.  The array hangs off the config as soon as it exists, so that
 * config_free() cleans up after an error half-way.
 */
static int
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
static int
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

static int
load_duration(struct loader *ld, struct cnode *v, const char *path,
    uint64_t min, uint64_t *dst)
{
	uint64_t	 ms;
	const char	*what;
	int		 rc = -1;

	what = min > 0 ? "a duration greater than 0 (" DURATION_EXAMPLES ")" :
	    "a duration (" DURATION_EXAMPLES ")";
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
static void
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
static int
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

static struct cnode *
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
static struct cnode *
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

static int
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

static int
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

/*
 * Sections
 */

/* "host:port" or "[ipv6]:port" into *hostp (replaced) and *portp */
static int
load_hostport(struct loader *ld, struct cnode *v, const char *path,
    char **hostp, uint16_t *portp)
{
	char		 host[64], esc[SHOW_MAX * 4 + 8], *dup;
	const char	*s, *end, *port;
	struct in6_addr	 a6;
	struct in_addr	 a4;
	uint64_t	 n;
	size_t		 hlen;

	if (v->cn_type == CN_SEQ)
		return config_expected(ld, v, path, "\"host:port\" or "
		    "\"[ipv6-address]:port\" (quote it: [ starts a YAML "
		    "sequence)");
	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		return config_expected(ld, v, path,
		    "\"host:port\" or \"[ipv6-address]:port\"");
	s = v->cn_str;
	if (*s == '[') {
		if ((end = strchr(s, ']')) == NULL || end[1] != ':')
			return config_expected(ld, v, path,
			    "\"host:port\" or \"[ipv6-address]:port\"");
		port = end + 2;
		s++;
	} else {
		if ((end = strrchr(s, ':')) == NULL)
			return config_expected(ld, v, path,
			    "\"host:port\" or \"[ipv6-address]:port\"");
		if (memchr(s, ':', (size_t)(end - s)) != NULL)
			return config_expected(ld, v, path,
			    "\"host:port\" or \"[ipv6-address]:port\" "
			    "(put an IPv6 address in brackets)");
		port = end + 1;
	}
	hlen = (size_t)(end - s);
	if (hlen >= sizeof(host))
		hlen = sizeof(host) - 1;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if ((size_t)(end - s) >= sizeof(host) ||
	    (v->cn_str[0] == '[' && inet_pton(AF_INET6, host, &a6) != 1) ||
	    (v->cn_str[0] != '[' && inet_pton(AF_INET, host, &a4) != 1 &&
	    strcmp(host, "localhost") != 0))
		return config_error(ld, v, "%s: expected a numeric IPv4 "
		    "address, a bracketed IPv6 address or localhost as the "
		    "host, found \"%s\"", path, config_escape(esc, sizeof(esc),
		    s, (size_t)(end - s), SHOW_MAX));
	if (strlen(port) > 5 || config_parse_uint(port, &n) == -1 ||
	    n > 65535)
		return config_error(ld, v, "%s: expected a port from 0 to "
		    "65535, found \"%s\"", path, config_escape(esc, sizeof(esc),
		    port, strlen(port), SHOW_MAX));
	if ((dup = strdup(host)) == NULL)
		return config_error(ld, NULL, "out of memory");
	free(*hostp);
	*hostp = dup;
	*portp = (uint16_t)n;
	return 0;
}

static int
load_listen(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config *cf = arg;

	return load_hostport(ld, v, path, &cf->cf_listen_host,
	    &cf->cf_listen_port);
}

static int
load_diagnostics(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config *cf = arg;

	return load_hostport(ld, v, path, &cf->cf_diag_host,
	    &cf->cf_diag_port);
}

static int
load_workers(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config	*cf = arg;
	const char	*what = "\"auto\" or an integer from 1 to 256";
	uint64_t	 n;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "auto") == 0) {
		cf->cf_workers = 0;
		return 0;
	}
	if (load_plain(ld, v, path, what) == -1)
		return -1;
	if (config_parse_uint(v->cn_str, &n) == -1 || n < 1 || n > 256)
		return config_expected(ld, v, path, what);
	cf->cf_workers = (int)n;
	return 0;
}

static int
load_daemon(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "listen", F_FN, cf, load_listen, 0, 0 },
		{ "workers", F_FN, cf, load_workers, 0, 0 },
		{ "stateDir", F_STRING, &cf->cf_state_dir, NULL, 0, 0 },
		{ "user", F_STRING, &cf->cf_user, NULL, 0, 0 },
		{ "logFile", F_STRING, &cf->cf_log_file, NULL, 0, 0 },
		{ "portFile", F_STRING, &cf->cf_port_file, NULL, 0, 0 },
		{ "mapSize", F_SIZE, &cf->cf_map_size, NULL, MIB, TIB },
		{ "maxReaders", F_UINT, &cf->cf_max_readers, NULL, 16, 65536 },
		{ "drainTimeout", F_DURATION, &cf->cf_drain_timeout_ms, NULL,
		    0, 0 },
		{ "workerHeader", F_BOOL, &cf->cf_worker_header, NULL, 0, 0 },
		{ "diagnostics", F_FN, cf, load_diagnostics, 0, 0 },
	};
	const struct cnode	*d;
	size_t			 i;

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cf->cf_diag_host != NULL && cf->cf_diag_port != 0 &&
	    cf->cf_diag_port == cf->cf_listen_port &&
	    strcmp(cf->cf_diag_host, cf->cf_listen_host) == 0) {
		for (i = 0, d = NULL; i + 1 < n->cn_nkids; i += 2)
			if (strcmp(n->cn_kids[i]->cn_str, "diagnostics") == 0)
				d = n->cn_kids[i + 1];
		return config_error(ld, d, "%s.diagnostics: expected an "
		    "address other than daemon.listen's", path);
	}
	return 0;
}

int
config_host_loopback(const char *host, size_t len)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;
	char		 buf[64];

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, host, len);
	buf[len] = '\0';
	if (strcasecmp(buf, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, buf, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/*
 * http.allowedHosts: host names or addresses without a port (an IPv6
 * address bare or in brackets), or "*"; http.allowedOrigins: origins
 * "scheme://host[:port]", or "*".
 */
static int
load_allowed(struct loader *ld, struct cnode *n, const char *path,
    char ***dst, size_t *count, int origins)
{
	const char	*what = origins ? "a list of origins such as "
			    "https://app.example.com:8443 "
			    "(scheme://host[:port]) or \"*\"" : "a list of host "
			    "names or addresses without a port, or \"*\"";
	struct in6_addr	 a6;
	char		 buf[64], ipath[PATH_MAX_LEN];
	const char	*s, *p;
	size_t		 i, len;

	if (load_string_seq(ld, n, path, what, dst, count) == -1)
		return -1;
	for (i = 0; i < *count; i++) {
		s = (*dst)[i];
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (strcmp(s, "*") == 0)
			continue;
		if (strpbrk(s, " \t/?#@*") != NULL && !origins)
			goto bad;
		if (origins) {
			if ((p = strstr(s, "://")) == NULL || p == s ||
			    p[3] == '\0' || strpbrk(p + 3, " \t/?#@*") !=
			    NULL || strpbrk(s, " \t") != NULL)
				goto bad;
			continue;
		}
		/* a colon only in an IPv6 address: no port */
		if (strchr(s, ':') == NULL)
			continue;
		len = strlen(s);
		if (s[0] == '[' && s[len - 1] == ']') {
			s++;
			len -= 2;
		}
		if (len >= sizeof(buf))
			goto bad;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			goto bad;
	}
	return 0;
bad:
	return config_expected(ld, n->cn_kids[i], ipath, what);
}

static int
load_allowed_hosts(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;

	return load_allowed(ld, n, path, &cf->cf_allowed_hosts,
	    &cf->cf_nallowed_hosts, 0);
}

static int
load_allowed_origins(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;

	return load_allowed(ld, n, path, &cf->cf_allowed_origins,
	    &cf->cf_nallowed_origins, 1);
}

static int
load_http(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "maxHeaderSize", F_SIZET, &cf->cf_max_header_size, NULL,
		    KIB, MIB },
		{ "maxBodySize", F_SIZET, &cf->cf_max_body_size, NULL,
		    KIB, 256 * MIB },
		{ "timeout", F_DURATION, &cf->cf_http_timeout_ms, NULL, 1, 0 },
		{ "keepAlive", F_DURATION, &cf->cf_keepalive_ms, NULL, 1, 0 },
		{ "headerTimeout", F_DURATION, &cf->cf_header_timeout_ms, NULL,
		    1, 0 },
		{ "requestTimeout", F_DURATION, &cf->cf_request_timeout_ms,
		    NULL, 1, 0 },
		{ "maxConnections", F_UINT, &cf->cf_max_conns, NULL, 1,
		    1000000 },
		{ "maxConnectionsPerClient", F_UINT, &cf->cf_max_conns_client,
		    NULL, 1, 1000000 },
		{ "allowedHosts", F_FN, cf, load_allowed_hosts, 0, 0 },
		{ "allowedOrigins", F_FN, cf, load_allowed_origins, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_sessions(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	struct cnode	*ttl, *max;
	char		 esc[SHOW_MAX * 4 + 8], tesc[SHOW_MAX * 4 + 8];
	const struct field fields[] = {
		{ "ttl", F_DURATION, &cf->cf_session_ttl_ms, NULL, 1, 0 },
		{ "maxLifetime", F_DURATION, &cf->cf_session_max_ms, NULL,
		    1, 0 },
		{ "eventBuffer", F_UINT, &cf->cf_event_buffer, NULL,
		    16, 100000 },
		{ "pendingTimeout", F_DURATION, &cf->cf_pending_timeout_ms,
		    NULL, 1, 0 },
		{ "maxSessions", F_UINT, &cf->cf_session_cap, NULL,
		    1, CONFIG_SESSIONS_MAX },
		{ "maxPerAddress", F_UINT, &cf->cf_session_cap_addr, NULL,
		    1, CONFIG_SESSIONS_MAX },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cf->cf_session_max_ms >= cf->cf_session_ttl_ms)
		return 0;
	max = cnode_get(n, "maxLifetime");
	if ((ttl = cnode_get(n, "ttl")) == NULL)
		return config_error(ld, max, "%s.maxLifetime: expected a "
		    "duration not shorter than %s.ttl (30m by default), found "
		    "\"%s\"", path, path, config_escape(esc, sizeof(esc),
		    max->cn_str, max->cn_len, SHOW_MAX));
	if (max != NULL)
		return config_error(ld, max, "%s.maxLifetime: expected a "
		    "duration not shorter than %s.ttl (\"%s\"), found \"%s\"",
		    path, path, config_escape(tesc, sizeof(tesc), ttl->cn_str,
		    ttl->cn_len, SHOW_MAX), config_escape(esc, sizeof(esc),
		    max->cn_str, max->cn_len, SHOW_MAX));
	return config_error(ld, ttl, "%s.ttl: expected a duration not longer "
	    "than %s.maxLifetime (24h by default), found \"%s\"", path, path,
	    config_escape(esc, sizeof(esc), ttl->cn_str, ttl->cn_len,
	    SHOW_MAX));
}

/*
 * The session caps by default: one session per 2 KiB of map (a record
 * of ~600 bytes, its index entry and B-tree slack, with room to spare
 * for the rest), and a quarter of that per client address.
 */
static void
config_resolve_sessions(struct config *cf)
{
	uint64_t n;

	if (cf->cf_session_cap == 0) {
		n = cf->cf_map_size / (2 * KIB);
		if (n > CONFIG_SESSIONS_MAX)
			n = CONFIG_SESSIONS_MAX;
		cf->cf_session_cap = n < 16 ? 16 : (unsigned int)n;
	}
	if (cf->cf_session_cap_addr == 0)
		cf->cf_session_cap_addr = cf->cf_session_cap / 4 > 0 ?
		    cf->cf_session_cap / 4 : 1;
}

static int
load_backend_name(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;
	const char		*p;

	if (v->cn_type == CN_SCALAR && v->cn_len >= 1 &&
	    v->cn_len <= CONFIG_NAME_MAX && !cnode_is_null(v)) {
		for (p = v->cn_str; *p != '\0'; p++)
			if (!isalnum((unsigned char)*p) && *p != '_' &&
			    *p != '.' && *p != '-')
				break;
		if (*p == '\0' && (size_t)(p - v->cn_str) == v->cn_len)
			return load_string(ld, v, path, &cb->cb_name);
	}
	return config_expected(ld, v, path,
	    "1 to 64 characters from A-Z a-z 0-9 _ . -");
}

static int
load_backend_url(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;
	const char		*rest;
	size_t			 i;

	if (v->cn_type != CN_SCALAR || cnode_is_null(v))
		goto bad;
	if (strncmp(v->cn_str, "http://", 7) == 0)
		rest = v->cn_str + 7;
	else if (strncmp(v->cn_str, "https://", 8) == 0)
		rest = v->cn_str + 8;
	else
		goto bad;
	if (*rest == '\0' || *rest == '/')
		goto bad;
	for (i = 0; i < v->cn_len; i++)
		if (isspace((unsigned char)v->cn_str[i]) ||
		    iscntrl((unsigned char)v->cn_str[i]))
			goto bad;
	return load_string(ld, v, path, &cb->cb_url);

bad:
	return config_expected(ld, v, path,
	    "an http:// or https:// URL without whitespace");
}

struct choice {
	const char	*ch_name;
	int		 ch_value;
};

static int
load_enum(struct loader *ld, struct cnode *v, const char *path,
    const struct choice *ch, size_t nch, const char *what, int *dst)
{
	size_t	 i;

	if (v->cn_type == CN_SCALAR && !cnode_is_null(v))
		for (i = 0; i < nch; i++)
			if (strcmp(v->cn_str, ch[i].ch_name) == 0) {
				*dst = ch[i].ch_value;
				return 0;
			}
	return config_expected(ld, v, path, what);
}

static int
load_backend_transport(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "streamable-http", TRANSPORT_STREAMABLE_HTTP },
		{ "sse", TRANSPORT_SSE },
		{ "stdio", TRANSPORT_STDIO },
	};
	struct config_backend	*cb = arg;
	int			 t = 0;

	if (load_enum(ld, v, path, ch, nitems(ch),
	    "streamable-http, sse or stdio", &t) == -1)
		return -1;
	cb->cb_transport = (enum config_transport)t;
	return 0;
}

static int
load_backend_era(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "auto", PROTO_ERA_UNKNOWN },
		{ "legacy", PROTO_ERA_LEGACY },
		{ "modern", PROTO_ERA_MODERN },
	};
	struct config_backend	*cb = arg;
	int			 e = 0;

	if (load_enum(ld, v, path, ch, nitems(ch), "auto, legacy or modern",
	    &e) == -1)
		return -1;
	cb->cb_era = (enum proto_era)e;
	return 0;
}

/* checked here, copied behind the command by config_backend_argv() */
static int
load_backend_args(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	char	 ipath[PATH_MAX_LEN];
	size_t	 i;

	(void)arg;
	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of strings");
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (load_text(ld, n->cn_kids[i], ipath) == -1)
			return -1;
	}
	return 0;
}

static int
config_env_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (s++; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int
load_backend_env(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;
	struct cnode		*key, *v;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, nenv = 0;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if (n->cn_nkids == 0)
		return 0;
	if ((cb->cb_env = calloc(n->cn_nkids / 2 + 1,
	    sizeof(*cb->cb_env))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		v = n->cn_kids[i + 1];
		config_path(kpath, sizeof(kpath), path, key);
		if (!config_env_name(key->cn_str))
			return config_expected(ld, key, kpath,
			    "an environment variable name "
			    "([A-Za-z_][A-Za-z0-9_]*)");
		if (load_text(ld, v, kpath) == -1)
			return -1;
		if (asprintf(&cb->cb_env[nenv], "%s=%s", key->cn_str,
		    v->cn_str) == -1) {
			cb->cb_env[nenv] = NULL;
			return config_error(ld, NULL, "out of memory");
		}
		nenv++;
	}
	return 0;
}

/* argv[0] is the command, then the args */
static int
config_backend_argv(struct loader *ld, struct config_backend *cb,
    const struct cnode *args)
{
	size_t	 i, nargs = args != NULL ? args->cn_nkids : 0;

	if ((cb->cb_argv = calloc(nargs + 2, sizeof(*cb->cb_argv))) == NULL ||
	    (cb->cb_argv[0] = strdup(cb->cb_command)) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i < nargs; i++)
		if ((cb->cb_argv[i + 1] = strdup(args->cn_kids[i]->cn_str)) ==
		    NULL)
			return config_error(ld, NULL, "out of memory");
	return 0;
}

/*
 * Keys of one kind of transport given to the other, in file order so
 * that the first one in the file is the one reported.
 */
static int
config_backend_keys(struct loader *ld, struct cnode *n, const char *path,
    const struct config_backend *cb)
{
	static const char *const stdio_keys[] = { "command", "args", "env",
	    "cwd", NULL };
	static const char *const http_keys[] = { "url", NULL };
	const char *const	*bad;
	const char		*tname, *why;
	struct cnode		*key;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i, j;

	tname = config_transport_name(cb->cb_transport);
	if (cb->cb_transport == TRANSPORT_STDIO) {
		bad = http_keys;
		why = "a stdio backend runs command";
	} else {
		bad = stdio_keys;
		why = "only a stdio backend runs a command";
	}
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		for (j = 0; bad[j] != NULL; j++)
			if (strcmp(key->cn_str, bad[j]) == 0)
				break;
		if (bad[j] == NULL)
			continue;
		config_path(kpath, sizeof(kpath), path, key);
		return config_error(ld, key, "%s: not allowed with transport "
		    "%s (%s)", kpath, tname, why);
	}
	if (cb->cb_transport == TRANSPORT_STDIO ? cb->cb_command != NULL :
	    cb->cb_url != NULL)
		return 0;
	return config_error(ld, n, "%s: missing required key \"%s\" for "
	    "transport %s", path, cb->cb_transport == TRANSPORT_STDIO ?
	    "command" : "url", tname);
}

static int
load_backend(struct loader *ld, struct cnode *n, const char *path,
    struct config_backend *cb)
{
	const struct field fields[] = {
		{ "name", F_FN, cb, load_backend_name, 0, 0 },
		{ "url", F_FN, cb, load_backend_url, 0, 0 },
		{ "transport", F_FN, cb, load_backend_transport, 0, 0 },
		{ "command", F_STRING, &cb->cb_command, NULL, 0, 0 },
		{ "args", F_FN, NULL, load_backend_args, 0, 0 },
		{ "env", F_FN, cb, load_backend_env, 0, 0 },
		{ "cwd", F_STRING, &cb->cb_cwd, NULL, 0, 0 },
		{ "era", F_FN, cb, load_backend_era, 0, 0 },
		{ "type", F_NOTYET, NULL, NULL, 0, 0 },
		{ "caBundlePath", F_NOTYET, NULL, NULL, 0, 0 },
		{ "metadata", F_NOTYET, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "name") == -1 ||
	    config_require(ld, n, path, "transport") == -1 ||
	    config_backend_keys(ld, n, path, cb) == -1)
		return -1;
	/* the bridges speak 2025-11-25 to the workers */
	if (cb->cb_era == PROTO_ERA_MODERN &&
	    cb->cb_transport != TRANSPORT_STREAMABLE_HTTP)
		return config_error(ld, cnode_get(n, "era"), "%s.era: modern "
		    "needs transport streamable-http (%s backends speak "
		    "2025-11-25 or older)", path,
		    config_transport_name(cb->cb_transport));
	if (cb->cb_transport == TRANSPORT_STDIO)
		return config_backend_argv(ld, cb, cnode_get(n, "args"));
	return 0;
}

static int
load_backends(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_backend	*cb;
	char			 bpath[PATH_MAX_LEN];
	size_t			 i, j;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of backends");
	if (n->cn_nkids == 0)
		return config_error(ld, n, "%s: expected at least one backend, "
		    "found an empty sequence", path);
#ifdef CONFIG_BACKENDS_MAX
	if (n->cn_nkids > CONFIG_BACKENDS_MAX) {
		if (CONFIG_BACKENDS_MAX == 1)
			return config_error(ld, n->cn_kids[1], "only one "
			    "backend is supported by this version of vmcpd");
		return config_error(ld, n->cn_kids[CONFIG_BACKENDS_MAX],
		    "at most %d backends are supported by this version of "
		    "vmcpd", CONFIG_BACKENDS_MAX);
	}
#endif
	if ((cf->cf_backends = calloc(n->cn_nkids, sizeof(*cb))) == NULL)
		return config_error(ld, NULL, "out of memory");
	ld->ld_have_backends = 1;
	for (i = 0; i < n->cn_nkids; i++) {
		cb = &cf->cf_backends[i];
		cf->cf_nbackends++;
		(void)snprintf(bpath, sizeof(bpath), "%s[%zu]", path, i);
		if (load_backend(ld, n->cn_kids[i], bpath, cb) == -1)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(cf->cf_backends[j].cb_name,
			    cb->cb_name) == 0)
				return config_error(ld,
				    cnode_get(n->cn_kids[i], "name"),
				    "%s.name: duplicate backend name \"%s\" "
				    "(first in %s[%zu])", bpath, cb->cb_name,
				    path, j);
	}
	return 0;
}

static int
load_metadata(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	char	 kpath[PATH_MAX_LEN], *tmp = NULL;
	size_t	 i;

	(void)arg;
	if (load_map_check(ld, n, path) == -1)
		return -1;
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
		/* informational: checked, then dropped */
		if (load_string(ld, n->cn_kids[i + 1], kpath, &tmp) == -1)
			return -1;
		free(tmp);
		tmp = NULL;
	}
	return 0;
}

static int
load_loglevel(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "info", 0 },
		{ "debug", 1 },
	};
	struct config	*cf = arg;

	return load_enum(ld, v, path, ch, nitems(ch), "info or debug",
	    &cf->cf_verbose);
}

/* values now, names once the backends are known */
static int
load_perworkload(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	char		 kpath[PATH_MAX_LEN];
	uint64_t	 ms;
	size_t		 i;

	(void)arg;
	if (load_map_check(ld, n, path) == -1)
		return -1;
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
		if (load_duration(ld, n->cn_kids[i + 1], kpath, 1, &ms) == -1)
			return -1;
	}
	ld->ld_perworkload = n;
	return 0;
}

static int
load_timeouts(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "default", F_DURATION, &cf->cf_timeout_default_ms, NULL,
		    1, 0 },
		{ "perWorkload", F_FN, NULL, load_perworkload, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_partial_failure(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "fail", CONFIG_PARTIAL_FAIL },
		{ "best_effort", CONFIG_PARTIAL_BEST_EFFORT },
	};
	struct config	*cf = arg;
	int		 m = 0;

	if (load_enum(ld, v, path, ch, nitems(ch), "fail or best_effort",
	    &m) == -1)
		return -1;
	cf->cf_partial_failure = (enum config_partial_failure)m;
	return 0;
}

static int
load_failure_handling(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "partialFailureMode", F_FN, cf, load_partial_failure, 0, 0 },
		{ "healthCheckInterval", F_NOTYET, NULL, NULL, 0, 0 },
		{ "healthCheckTimeout", F_NOTYET, NULL, NULL, 0, 0 },
		{ "unhealthyThreshold", F_NOTYET, NULL, NULL, 0, 0 },
		{ "statusReportingInterval", F_NOTYET, NULL, NULL, 0, 0 },
		{ "circuitBreaker", F_NOTYET, NULL, NULL, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_operational(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "logLevel", F_FN, cf, load_loglevel, 0, 0 },
		{ "timeouts", F_FN, cf, load_timeouts, 0, 0 },
		{ "failureHandling", F_FN, cf, load_failure_handling, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

/*
 * Known reference values that vmcpd does not implement yet get "not
 * supported yet"; anything else is a plain type error.
 */
static int
load_choice(struct loader *ld, struct cnode *v, const char *path,
    const char *ok, const char *const *later, const char *what,
    const char *subject)
{
	size_t	 i;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, ok) == 0)
		return 0;
	if (v->cn_type == CN_SCALAR)
		for (i = 0; later[i] != NULL; i++)
			if (strcmp(v->cn_str, later[i]) == 0)
				return config_error(ld, v, "%s %s " NOTYET,
				    subject, later[i]);
	return config_expected(ld, v, path, what);
}

static int
load_inauth_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const char *const later[] = { "oidc", "local", NULL };

	(void)arg;
	return load_choice(ld, v, path, "anonymous", later, "anonymous",
	    "incomingAuth type");
}

static int
load_incoming_auth(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	const struct field fields[] = {
		{ "type", F_FN, NULL, load_inauth_type, 0, 0 },
	};

	(void)arg;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	return config_require(ld, n, path, "type");
}

static int
load_outauth_source(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const char *const later[] = { "discovered", NULL };

	(void)arg;
	return load_choice(ld, v, path, "inline", later, "inline",
	    "outgoingAuth source");
}

static int
load_outauth_type(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const char *const later[] = { "header_injection",
	    "token_exchange", "upstream_inject", "aws_sts", "obo", "xaa",
	    NULL };

	(void)arg;
	return load_choice(ld, v, path, "unauthenticated", later,
	    "unauthenticated", "outgoingAuth type");
}

static int
load_outauth_default(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	const struct field fields[] = {
		{ "type", F_FN, NULL, load_outauth_type, 0, 0 },
		{ "headerInjection", F_NOTYET, NULL, NULL, 0, 0 },
		{ "tokenExchange", F_NOTYET, NULL, NULL, 0, 0 },
		{ "upstreamInject", F_NOTYET, NULL, NULL, 0, 0 },
		{ "awsSts", F_NOTYET, NULL, NULL, 0, 0 },
		{ "obo", F_NOTYET, NULL, NULL, 0, 0 },
		{ "xaa", F_NOTYET, NULL, NULL, 0, 0 },
	};

	(void)arg;
	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_outgoing_auth(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	const struct field fields[] = {
		{ "source", F_FN, NULL, load_outauth_source, 0, 0 },
		{ "default", F_FN, NULL, load_outauth_default, 0, 0 },
		{ "backends", F_NOTYET, NULL, NULL, 0, 0 },
	};

	(void)arg;
	return load_fields(ld, n, path, fields, nitems(fields));
}

/*
 * aggregation
 */

static const char *
config_conflict_name(enum config_conflict c)
{
	switch (c) {
	case CONFIG_CONFLICT_PREFIX:
		return "prefix";
	case CONFIG_CONFLICT_PRIORITY:
		return "priority";
	case CONFIG_CONFLICT_MANUAL:
		return "manual";
	}
	return "unknown";
}

static int
load_conflict(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "prefix", CONFIG_CONFLICT_PREFIX },
		{ "priority", CONFIG_CONFLICT_PRIORITY },
		{ "manual", CONFIG_CONFLICT_MANUAL },
	};
	struct config_aggregation	*ca = arg;
	int				 c = 0;

	if (load_enum(ld, v, path, ch, nitems(ch),
	    "prefix, priority or manual", &c) == -1)
		return -1;
	ca->ca_conflict = (enum config_conflict)c;
	return 0;
}

static int
load_prefix_mode(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "always", CONFIG_PREFIX_ALWAYS },
		{ "onConflict", CONFIG_PREFIX_ON_CONFLICT },
	};
	struct config_aggregation	*ca = arg;
	int				 m = 0;

	if (load_enum(ld, v, path, ch, nitems(ch), "always or onConflict",
	    &m) == -1)
		return -1;
	ca->ca_prefix_mode = (enum config_prefix_mode)m;
	return 0;
}

/* "" is the reference's spelling of the default */
static int
load_visibility(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	static const struct choice ch[] = {
		{ "allow", 0 },
		{ "deny", 1 },
		{ "", 0 },
	};
	struct config_aggregation	*ca = arg;

	return load_enum(ld, v, path, ch, nitems(ch), "allow, deny or \"\"",
	    &ca->ca_default_deny);
}

/* names now, whether they are backends once the backends are known */
static int
load_priority(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;

	ld->ld_priority = n;
	return load_string_seq(ld, n, path, "a sequence of backend names",
	    &ca->ca_priority, &ca->ca_npriority);
}

static int
load_conflict_config(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	const struct field fields[] = {
		{ "prefixFormat", F_STRING, &ca->ca_prefix_format, NULL, 0, 0 },
		{ "prefixMode", F_FN, ca, load_prefix_mode, 0, 0 },
		{ "priorityOrder", F_FN, ca, load_priority, 0, 0 },
	};

	return load_fields(ld, n, path, fields, nitems(fields));
}

static int
load_filter(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_workload	*cw = arg;

	return load_string_seq(ld, n, path, "a sequence of tool names",
	    &cw->cw_filter, &cw->cw_nfilter);
}

/* only the hints given, so that the others stay the backend's */
static int
load_annotations(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	static const char *const hints[] = { "readOnlyHint",
	    "destructiveHint", "idempotentHint", "openWorldHint" };
	struct config_override	*co = arg;
	char			*title = NULL;
	int			 val[nitems(hints)] = { 0 };
	const struct field fields[] = {
		{ "title", F_STRING, &title, NULL, 0, 0 },
		{ hints[0], F_BOOL, &val[0], NULL, 0, 0 },
		{ hints[1], F_BOOL, &val[1], NULL, 0, 0 },
		{ hints[2], F_BOOL, &val[2], NULL, 0, 0 },
		{ hints[3], F_BOOL, &val[3], NULL, 0, 0 },
	};
	size_t			 i;

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		goto fail;
	if (n->cn_nkids == 0) {
		config_error(ld, n, "%s: expected at least one of title, "
		    "readOnlyHint, destructiveHint, idempotentHint or "
		    "openWorldHint, found an empty mapping", path);
		goto fail;
	}
	if ((co->co_annotations = json_object()) == NULL ||
	    (title != NULL && json_object_set_new(co->co_annotations,
	    "title", json_string(title)) == -1))
		goto oom;
	for (i = 0; i < nitems(hints); i++)
		if (cnode_get(n, hints[i]) != NULL &&
		    json_object_set_new(co->co_annotations, hints[i],
		    json_boolean(val[i])) == -1)
			goto oom;
	free(title);
	return 0;

oom:
	config_error(ld, NULL, "out of memory");
fail:
	free(title);
	return -1;
}

static int
load_override(struct loader *ld, struct cnode *n, const char *path,
    struct config_override *co)
{
	const struct field fields[] = {
		{ "name", F_STRING, &co->co_name, NULL, 0, 0 },
		{ "description", F_STRING, &co->co_description, NULL, 0, 0 },
		{ "annotations", F_FN, co, load_annotations, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	/* unlike the reference, annotations alone are an override */
	if (n->cn_nkids == 0)
		return config_error(ld, n, "%s: expected name, description or "
		    "annotations, found an empty mapping", path);
	return 0;
}

/* two tools of one backend renamed alike would be advertised twice */
static int
config_override_names(struct loader *ld, struct cnode *n, const char *path)
{
	struct cnode	**names, *dup, *first, *v;
	char		 kpath[PATH_MAX_LEN];
	size_t		 i, nnames = 0;

	if ((names = reallocarray(NULL, n->cn_nkids / 2 + 1,
	    sizeof(*names))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if ((v = cnode_get(n->cn_kids[i + 1], "name")) != NULL)
			names[nnames++] = v;
	config_find_dup(names, nnames, &dup, &first);
	free(names);
	if (dup == NULL)
		return 0;
	for (i = 0; i + 1 < n->cn_nkids; i += 2)
		if (cnode_get(n->cn_kids[i + 1], "name") == dup)
			break;
	config_path(kpath, sizeof(kpath), path, n->cn_kids[i]);
	return config_error(ld, dup, "%s.name: duplicate new name \"%s\" "
	    "(first at line %zu, column %zu)", kpath, dup->cn_str,
	    first->cn_line, first->cn_col);
}

static int
load_overrides(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_workload	*cw = arg;
	struct config_override	*co;
	struct cnode		*key;
	char			 kpath[PATH_MAX_LEN];
	size_t			 i;

	if (load_map_check(ld, n, path) == -1)
		return -1;
	if ((cw->cw_overrides = calloc(n->cn_nkids / 2 + 1,
	    sizeof(*cw->cw_overrides))) == NULL)
		return config_error(ld, NULL, "out of memory");
	for (i = 0; i + 1 < n->cn_nkids; i += 2) {
		key = n->cn_kids[i];
		config_path(kpath, sizeof(kpath), path, key);
		if (key->cn_len == 0 || cnode_is_null(key))
			return config_expected(ld, key, kpath, "a tool name");
		co = &cw->cw_overrides[cw->cw_noverrides++];
		if ((co->co_tool = strdup(key->cn_str)) == NULL)
			return config_error(ld, NULL, "out of memory");
		if (load_override(ld, n->cn_kids[i + 1], kpath, co) == -1)
			return -1;
	}
	return config_override_names(ld, n, path);
}

static int
config_cmp_tool(const void *a, const void *b)
{
	const struct config_override *oa = *(struct config_override *const *)a;
	const struct config_override *ob = *(struct config_override *const *)b;

	return strcmp(oa->co_tool, ob->co_tool);
}

static int
config_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The filter takes names after the overrides: naming a tool that an
 * override renames matches nothing (the reference's own example does
 * this).  The name is still right if another tool is renamed to it.
 */
static int
config_filter_renamed(struct loader *ld, struct cnode *n, const char *path,
    const struct config_workload *cw)
{
	struct config_override	**tools = NULL, key, *kp, **found;
	struct cnode		*fn;
	char			**names = NULL;
	const char		*f;
	size_t			 i, nnames = 0;
	int			 rv = -1;

	fn = cnode_get(n, "filter");
	if (cw->cw_nfilter == 0 || cw->cw_noverrides == 0)
		return 0;
	if ((tools = reallocarray(NULL, cw->cw_noverrides,
	    sizeof(*tools))) == NULL ||
	    (names = reallocarray(NULL, cw->cw_noverrides,
	    sizeof(*names))) == NULL) {
		config_error(ld, NULL, "out of memory");
		goto done;
	}
	for (i = 0; i < cw->cw_noverrides; i++) {
		tools[i] = &cw->cw_overrides[i];
		if (cw->cw_overrides[i].co_name != NULL)
			names[nnames++] = cw->cw_overrides[i].co_name;
	}
	qsort(tools, cw->cw_noverrides, sizeof(*tools), config_cmp_tool);
	qsort(names, nnames, sizeof(*names), config_cmp_str);
	for (i = 0; i < cw->cw_nfilter; i++) {
		f = cw->cw_filter[i];
		key.co_tool = (char *)f;
		kp = &key;
		found = bsearch(&kp, tools, cw->cw_noverrides, sizeof(*tools),
		    config_cmp_tool);
		if (found == NULL || (*found)->co_name == NULL ||
		    strcmp((*found)->co_name, f) == 0 ||
		    bsearch(&f, names, nnames, sizeof(*names),
		    config_cmp_str) != NULL)
			continue;
		config_error(ld, fn->cn_kids[i], "%s.filter[%zu]: \"%s\" is "
		    "renamed to \"%s\" by overrides, and the filter takes the "
		    "new name", path, i, f, (*found)->co_name);
		goto done;
	}
	rv = 0;

done:
	free(tools);
	free(names);
	return rv;
}

static int
load_workload(struct loader *ld, struct cnode *n, const char *path,
    struct config_workload *cw)
{
	const struct field fields[] = {
		{ "workload", F_STRING, &cw->cw_name, NULL, 0, 0 },
		{ "filter", F_FN, cw, load_filter, 0, 0 },
		{ "excludeAll", F_BOOL, &cw->cw_exclude_all, NULL, 0, 0 },
		{ "overrides", F_FN, cw, load_overrides, 0, 0 },
		{ "toolConfigRef", F_K8SONLY, NULL, NULL, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1 ||
	    config_require(ld, n, path, "workload") == -1)
		return -1;
	return config_filter_renamed(ld, n, path, cw);
}

static int
load_tools(struct loader *ld, struct cnode *n, const char *path, void *arg)
{
	struct config_aggregation	*ca = arg;
	char				 ipath[PATH_MAX_LEN];
	size_t				 i;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path,
		    "a sequence of per-backend tool settings");
	if ((ca->ca_workloads = calloc(n->cn_nkids + 1,
	    sizeof(*ca->ca_workloads))) == NULL)
		return config_error(ld, NULL, "out of memory");
	ld->ld_tools = n;
	for (i = 0; i < n->cn_nkids; i++) {
		(void)snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		if (load_workload(ld, n->cn_kids[i], ipath,
		    &ca->ca_workloads[ca->ca_nworkloads++]) == -1)
			return -1;
	}
	return 0;
}

static int
load_aggregation(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_aggregation	*ca = arg;
	struct cnode			*crc, *key;
	const struct field fields[] = {
		{ "conflictResolution", F_FN, ca, load_conflict, 0, 0 },
		{ "conflictResolutionConfig", F_FN, ca, load_conflict_config,
		    0, 0 },
		{ "excludeAllTools", F_BOOL, &ca->ca_exclude_all_tools, NULL,
		    0, 0 },
		{ "defaultToolVisibility", F_FN, ca, load_visibility, 0, 0 },
		{ "tools", F_FN, ca, load_tools, 0, 0 },
		{ "cacheTtl", F_DURATION, &ca->ca_cache_ttl_ms, NULL, 1, 0 },
		{ "pageSize", F_UINT, &ca->ca_page_size, NULL, 1, 10000 },
		{ "maxBackendPages", F_UINT, &ca->ca_max_backend_pages, NULL,
		    1, 10000 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	crc = cnode_get(n, "conflictResolutionConfig");
	if (ca->ca_conflict != CONFIG_CONFLICT_PRIORITY) {
		if ((key = cnode_get_key(crc, "priorityOrder")) == NULL)
			return 0;
		return config_error(ld, key, "%s.conflictResolutionConfig."
		    "priorityOrder: not allowed with conflictResolution %s "
		    "(only priority uses it)", path,
		    config_conflict_name(ca->ca_conflict));
	}
	if (crc == NULL)
		return config_error(ld, n, "%s: missing required key "
		    "\"conflictResolutionConfig\" for conflictResolution "
		    "priority", path);
	if (ld->ld_priority == NULL)
		return config_error(ld, crc, "%s.conflictResolutionConfig: "
		    "missing required key \"priorityOrder\" for "
		    "conflictResolution priority", path);
	if (ca->ca_npriority == 0)
		return config_error(ld, ld->ld_priority, "%s."
		    "conflictResolutionConfig.priorityOrder: expected at least "
		    "one backend for conflictResolution priority, found an "
		    "empty sequence", path);
	return 0;
}

/* "a, b, c" for a message */
static void
config_backend_names(const struct config *cf, char *buf, size_t len)
{
	size_t	 i, o = 0;
	int	 r;

	buf[0] = '\0';
	for (i = 0; i < cf->cf_nbackends; i++) {
		r = snprintf(buf + o, len - o, "%s%s", i == 0 ? "" : ", ",
		    cf->cf_backends[i].cb_name);
		if (r < 0 || (size_t)r >= len - o)
			break;
		o += (size_t)r;
	}
}

/* every backend's timeout: its perWorkload entry, else the default */
static int
config_resolve_timeouts(struct loader *ld)
{
	struct config	*cf = ld->ld_cf;
	struct cnode	*pw = ld->ld_perworkload, *key;
	char		 kpath[PATH_MAX_LEN], names[CONFIG_ERR_MAX];
	size_t		 i, j;
	uint64_t	 ms;

	for (j = 0; j < cf->cf_nbackends; j++)
		cf->cf_backends[j].cb_timeout_ms = cf->cf_timeout_default_ms;
	for (i = 0; pw != NULL && i + 1 < pw->cn_nkids; i += 2) {
		key = pw->cn_kids[i];
		for (j = 0; j < cf->cf_nbackends; j++)
			if (strlen(cf->cf_backends[j].cb_name) == key->cn_len &&
			    strcmp(cf->cf_backends[j].cb_name,
			    key->cn_str) == 0)
				break;
		if (j == cf->cf_nbackends) {
			config_path(kpath, sizeof(kpath),
			    "operational.timeouts.perWorkload", key);
			config_backend_names(cf, names, sizeof(names));
			return config_error(ld, key, "%s: no such backend "
			    "(configured backends: %s)", kpath, names);
		}
		/* checked by load_perworkload() */
		(void)config_parse_duration(pw->cn_kids[i + 1]->cn_str, &ms);
		cf->cf_backends[j].cb_timeout_ms = ms;
	}
	return 0;
}

#define PRIORITY_PATH	"aggregation.conflictResolutionConfig.priorityOrder"

/* names in the aggregation block are configured backends, none twice */
static int
config_resolve_aggregation(struct loader *ld)
{
	struct config			*cf = ld->ld_cf;
	const struct config_aggregation	*ca = &cf->cf_agg;
	struct cnode			*v;
	char				 names[CONFIG_ERR_MAX];
	size_t				 i, j;

	config_backend_names(cf, names, sizeof(names));
	for (i = 0; i < ca->ca_npriority; i++) {
		v = ld->ld_priority->cn_kids[i];
		if (config_backend_find(cf, ca->ca_priority[i]) == NULL)
			return config_error(ld, v, PRIORITY_PATH "[%zu]: no "
			    "such backend \"%s\" (configured backends: %s)", i,
			    ca->ca_priority[i], names);
		for (j = 0; j < i; j++)
			if (strcmp(ca->ca_priority[j],
			    ca->ca_priority[i]) == 0)
				return config_error(ld, v, PRIORITY_PATH
				    "[%zu]: duplicate backend \"%s\" (first in "
				    PRIORITY_PATH "[%zu])", i,
				    ca->ca_priority[i], j);
	}
	for (i = 0; i < ca->ca_nworkloads; i++) {
		v = cnode_get(ld->ld_tools->cn_kids[i], "workload");
		if (config_backend_find(cf, ca->ca_workloads[i].cw_name) ==
		    NULL)
			return config_error(ld, v, "aggregation.tools[%zu]."
			    "workload: no such backend \"%s\" (configured "
			    "backends: %s)", i, ca->ca_workloads[i].cw_name,
			    names);
		for (j = 0; j < i; j++)
			if (strcmp(ca->ca_workloads[j].cw_name,
			    ca->ca_workloads[i].cw_name) == 0)
				return config_error(ld, v, "aggregation."
				    "tools[%zu].workload: duplicate workload "
				    "\"%s\" (first in aggregation.tools[%zu])",
				    i, ca->ca_workloads[i].cw_name, j);
	}
	/* the reference's rule: a backend with no tools cannot win */
	if (!ca->ca_default_deny || ca->ca_conflict != CONFIG_CONFLICT_PRIORITY)
		return 0;
	for (i = 0; i < ca->ca_npriority; i++) {
		for (j = 0; j < ca->ca_nworkloads; j++)
			if (strcmp(ca->ca_workloads[j].cw_name,
			    ca->ca_priority[i]) == 0)
				break;
		if (j == ca->ca_nworkloads)
			return config_error(ld, ld->ld_priority->cn_kids[i],
			    PRIORITY_PATH "[%zu]: backend \"%s\" has no "
			    "aggregation.tools entry, so with "
			    "defaultToolVisibility deny it has no tools to "
			    "give priority to", i, ca->ca_priority[i]);
	}
	return 0;
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
		{ "incomingAuth", F_FN, NULL, load_incoming_auth, 0, 0 },
		{ "outgoingAuth", F_FN, NULL, load_outgoing_auth, 0, 0 },
		{ "aggregation", F_FN, &cf->cf_agg, load_aggregation, 0, 0 },
		{ "compositeTools", F_NOTYET, NULL, NULL, 0, 0 },
		{ "compositeToolRefs", F_NOTYET, NULL, NULL, 0, 0 },
		{ "rateLimiting", F_NOTYET, NULL, NULL, 0, 0 },
		{ "audit", F_NOTYET, NULL, NULL, 0, 0 },
		{ "telemetry", F_NOTYET, NULL, NULL, 0, 0 },
		{ "optimizer", F_NOTYET, NULL, NULL, 0, 0 },
		{ "codeMode", F_NOTYET, NULL, NULL, 0, 0 },
		{ "sessionStorage", F_NOTYET, NULL, NULL, 0, 0 },
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
	    (cf->cf_agg.ca_prefix_format = strdup("{workload}_")) == NULL) {
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
	cf->cf_agg.ca_conflict = CONFIG_CONFLICT_PREFIX;
	cf->cf_agg.ca_prefix_mode = CONFIG_PREFIX_ALWAYS;
	cf->cf_agg.ca_cache_ttl_ms = 5 * MS_MIN;
	cf->cf_agg.ca_page_size = 1000;
	cf->cf_agg.ca_max_backend_pages = 100;
	cf->cf_timeout_default_ms = 30 * MS_SEC;
	cf->cf_partial_failure = CONFIG_PARTIAL_FAIL;
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
		free(cb->cb_command);
		config_strv_free(cb->cb_argv);
		config_strv_free(cb->cb_env);
		free(cb->cb_cwd);
	}
	free(cf->cf_backends);
	config_aggregation_free(&cf->cf_agg);
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
