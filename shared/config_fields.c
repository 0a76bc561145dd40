/*
 * vmcpd.yaml loader: values and the field walk.  The value parsers
 * (durations, sizes, integers), the typed loaders of a scalar or a
 * sequence, key lookup in a mapping, and load_fields(), which walks a
 * mapping against a section's table of struct field, refusing unknown
 * keys (with the nearest known one) and duplicates.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_load.h"

#define NS_MS	1000000ULL

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

void
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

int
load_choice(struct loader *ld, struct cnode *v, const char *path,
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
