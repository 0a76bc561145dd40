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

/*
 * How many backends this version accepts.  This is the only place the
 * limit lives: the loader, the name uniqueness check and perWorkload
 * already handle any number.
 */
#define CONFIG_BACKENDS_MAX	1

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
	struct cnode	*ld_perworkload;	/* resolved after backends */
	int		 ld_have_backends;
};

enum field_type {
	F_FN,		/* f_fn(ld, value, path, f_ptr) */
	F_STRING,	/* char **: non-empty string */
	F_BOOL,		/* int *: true or false */
	F_UINT,		/* unsigned int *: plain integer f_min..f_max */
	F_SIZE,		/* uint64_t *: size f_min..f_max */
	F_SIZET,	/* size_t *: size f_min..f_max */
	F_DURATION,	/* uint64_t * ms: duration >= f_min ms */
	F_NOTYET	/* a reference vMCP key not implemented yet */
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
	size_t	 i, o = 0, shown = 0;
	char	 tmp[8];
	unsigned char c;

	if (dlen == 0)
		return dst;
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (shown == max) {
			(void)snprintf(tmp, sizeof(tmp), "...");
		} else if (c == '"' || c == '\\') {
			(void)snprintf(tmp, sizeof(tmp), "\\%c", c);
		} else if (c == '\n') {
			(void)snprintf(tmp, sizeof(tmp), "\\n");
		} else if (c == '\t') {
			(void)snprintf(tmp, sizeof(tmp), "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			(void)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		} else {
			tmp[0] = (char)c;
			tmp[1] = '\0';
		}
		if (o + strlen(tmp) >= dlen)
			break;
		memcpy(dst + o, tmp, strlen(tmp));
		o += strlen(tmp);
		if (shown++ == max)
			break;
		/* a UTF-8 sequence counts as one character */
		while (i + 1 < len && ((unsigned char)s[i + 1] & 0xc0) == 0x80 &&
		    c >= 0x80 && o + 1 < dlen)
			dst[o++] = s[++i];
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
			if ((n = cnode_new(CN_SCALAR, &ev.start_mark)) ==
			    NULL || (n->cn_str =
			    malloc(ev.data.scalar.length + 1)) == NULL) {
				config_error(ld, NULL, "out of memory");
				failed = 1;
				break;
			}
			memcpy(n->cn_str, ev.data.scalar.value,
			    ev.data.scalar.length);
			n->cn_str[ev.data.scalar.length] = '\0';
			n->cn_len = ev.data.scalar.length;
			n->cn_plain =
			    ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
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
		for (ndig = 0; isdigit((unsigned char)*p); p++, ndig++) {
			if (whole > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
				return -1;
			whole = whole * 10 + (uint64_t)(*p - '0');
		}
		frac = 0;
		scale = 1;
		nfrac = 0;
		if (*p == '.') {
			/* digits past nanosecond precision of hours are noise */
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
		if (whole > UINT64_MAX / v)
			return -1;
		whole *= v;
		fv = (uint64_t)((double)frac * ((double)v / (double)scale));
		if (whole > UINT64_MAX - fv || total > UINT64_MAX - whole - fv)
			return -1;
		total += whole + fv;
	}
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
	if (strlen(v->cn_str) != v->cn_len)
		return config_error(ld, v, "%s: a string may not contain NUL",
		    path);
	if ((s = strdup(v->cn_str)) == NULL)
		return config_error(ld, NULL, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
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

static int
load_duration(struct loader *ld, struct cnode *v, const char *path,
    uint64_t min, uint64_t *dst)
{
	uint64_t	 ms;
	const char	*what;

	what = min > 0 ? "a duration greater than 0 (" DURATION_EXAMPLES ")" :
	    "a duration (" DURATION_EXAMPLES ")";
	if (v->cn_type != CN_SCALAR ||
	    config_parse_duration(v->cn_str, &ms) == -1 || ms < min)
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
 * A mapping with scalar keys, none twice.  Sorting keeps this linear-ish
 * for the large free-form maps (metadata, perWorkload).
 */
static int
load_map_check(struct loader *ld, struct cnode *n, const char *path)
{
	struct cnode	**keys = NULL, *dup = NULL, *first = NULL, *start;
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
	qsort(keys, nkeys, sizeof(*keys), config_cmp_keys);
	start = keys[0];
	for (i = 1; i < nkeys; i++) {
		if (!config_same_key(keys[i], start)) {
			start = keys[i];
			continue;
		}
		/* report the earliest repetition in the file */
		if (dup == NULL || config_before(keys[i], dup)) {
			dup = keys[i];
			first = start;
		}
	}
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
map_get(const struct cnode *n, const char *key)
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
		if (fields[i].f_type == F_NOTYET)
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
	if (map_get(n, key) != NULL)
		return 0;
	if (*path == '\0')
		return config_error(ld, n, "missing required key \"%s\"", key);
	return config_error(ld, n, "%s: missing required key \"%s\"", path,
	    key);
}

/*
 * Sections
 */

static int
load_listen(struct loader *ld, struct cnode *v, const char *path, void *arg)
{
	struct config	*cf = arg;
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
	free(cf->cf_listen_host);
	cf->cf_listen_host = dup;
	cf->cf_listen_port = (uint16_t)n;
	return 0;
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
	};

	return load_fields(ld, n, path, fields, nitems(fields));
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
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (cf->cf_session_max_ms >= cf->cf_session_ttl_ms)
		return 0;
	max = map_get(n, "maxLifetime");
	if ((ttl = map_get(n, "ttl")) == NULL)
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

static int
load_backend_transport(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;

	if (v->cn_type == CN_SCALAR) {
		if (strcmp(v->cn_str, "streamable-http") == 0) {
			cb->cb_transport = TRANSPORT_STREAMABLE_HTTP;
			return 0;
		}
		if (strcmp(v->cn_str, "sse") == 0 ||
		    strcmp(v->cn_str, "stdio") == 0)
			return config_error(ld, v, "transport %s " NOTYET,
			    v->cn_str);
	}
	return config_expected(ld, v, path, "streamable-http, sse or stdio");
}

static int
load_backends(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_backend	*cb;
	struct cnode		*name;
	char			 bpath[PATH_MAX_LEN];
	size_t			 i, j;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of backends");
	if (n->cn_nkids == 0)
		return config_error(ld, n, "%s: expected at least one backend, "
		    "found an empty sequence", path);
	if (n->cn_nkids > CONFIG_BACKENDS_MAX) {
		if (CONFIG_BACKENDS_MAX == 1)
			return config_error(ld, n->cn_kids[1], "only one "
			    "backend is supported by this version of vmcpd");
		return config_error(ld, n->cn_kids[CONFIG_BACKENDS_MAX],
		    "at most %d backends are supported by this version of "
		    "vmcpd", CONFIG_BACKENDS_MAX);
	}
	if ((cf->cf_backends = calloc(n->cn_nkids, sizeof(*cb))) == NULL)
		return config_error(ld, NULL, "out of memory");
	ld->ld_have_backends = 1;
	for (i = 0; i < n->cn_nkids; i++) {
		cb = &cf->cf_backends[i];
		cf->cf_nbackends++;
		(void)snprintf(bpath, sizeof(bpath), "%s[%zu]", path, i);
		{
			const struct field fields[] = {
				{ "name", F_FN, cb, load_backend_name, 0, 0 },
				{ "url", F_FN, cb, load_backend_url, 0, 0 },
				{ "transport", F_FN, cb,
				    load_backend_transport, 0, 0 },
				{ "type", F_NOTYET, NULL, NULL, 0, 0 },
				{ "caBundlePath", F_NOTYET, NULL, NULL, 0, 0 },
				{ "metadata", F_NOTYET, NULL, NULL, 0, 0 },
			};

			if (load_fields(ld, n->cn_kids[i], bpath, fields,
			    nitems(fields)) == -1)
				return -1;
		}
		if (config_require(ld, n->cn_kids[i], bpath, "name") == -1 ||
		    config_require(ld, n->cn_kids[i], bpath, "url") == -1 ||
		    config_require(ld, n->cn_kids[i], bpath,
		    "transport") == -1)
			return -1;
		for (j = 0; j < i; j++) {
			if (strcmp(cf->cf_backends[j].cb_name,
			    cb->cb_name) != 0)
				continue;
			name = map_get(n->cn_kids[i], "name");
			return config_error(ld, name, "%s.name: duplicate "
			    "backend name \"%s\" (first in %s[%zu])", bpath,
			    cb->cb_name, path, j);
		}
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
	struct config	*cf = arg;

	if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "info") == 0)
		cf->cf_verbose = 0;
	else if (v->cn_type == CN_SCALAR && strcmp(v->cn_str, "debug") == 0)
		cf->cf_verbose = 1;
	else
		return config_expected(ld, v, path, "info or debug");
	return 0;
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
load_operational(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config	*cf = arg;
	const struct field fields[] = {
		{ "logLevel", F_FN, cf, load_loglevel, 0, 0 },
		{ "timeouts", F_FN, cf, load_timeouts, 0, 0 },
		{ "failureHandling", F_NOTYET, NULL, NULL, 0, 0 },
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

static int
load_root(struct loader *ld, struct cnode *root)
{
	struct config		*cf = ld->ld_cf;
	struct config_backend	*cb;
	struct cnode		*key;
	char			 kpath[PATH_MAX_LEN], names[CONFIG_ERR_MAX];
	size_t			 i;
	uint64_t		 ms;
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
		{ "aggregation", F_NOTYET, NULL, NULL, 0, 0 },
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

	for (i = 0; i < cf->cf_nbackends; i++)
		cf->cf_backends[i].cb_timeout_ms = cf->cf_timeout_default_ms;
	if (ld->ld_perworkload == NULL)
		return 0;
	for (i = 0; i + 1 < ld->ld_perworkload->cn_nkids; i += 2) {
		key = ld->ld_perworkload->cn_kids[i];
		config_path(kpath, sizeof(kpath),
		    "operational.timeouts.perWorkload", key);
		cb = (struct config_backend *)config_backend_find(cf,
		    key->cn_str);
		if (cb == NULL || strlen(cb->cb_name) != key->cn_len) {
			config_backend_names(cf, names, sizeof(names));
			return config_error(ld, key, "%s: no such backend "
			    "(configured backends: %s)", kpath, names);
		}
		(void)config_parse_duration(ld->ld_perworkload->cn_kids[i +
		    1]->cn_str, &ms);
		cb->cb_timeout_ms = ms;
	}
	return 0;
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
	    (cf->cf_state_dir = strdup("./var")) == NULL) {
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
	cf->cf_session_ttl_ms = 30 * MS_MIN;
	cf->cf_session_max_ms = 24 * MS_HOUR;
	cf->cf_timeout_default_ms = 30 * MS_SEC;
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

void
config_free(struct config *cf)
{
	size_t	 i;

	if (cf == NULL)
		return;
	for (i = 0; i < cf->cf_nbackends; i++) {
		free(cf->cf_backends[i].cb_name);
		free(cf->cf_backends[i].cb_url);
	}
	free(cf->cf_backends);
	free(cf->cf_file);
	free(cf->cf_name);
	free(cf->cf_group_ref);
	free(cf->cf_listen_host);
	free(cf->cf_port_file);
	free(cf->cf_state_dir);
	free(cf->cf_user);
	free(cf->cf_log_file);
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
