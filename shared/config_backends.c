/*
 * vmcpd.yaml's backends section: each backend's name, transport
 * (streamable-http, sse, stdio) and its keys (url or command, args, env,
 * cwd), the era it speaks, its CA bundle, and keys of one transport
 * given to another; names are unique.  Called through struct field
 * (config.c's load_root()); the loader's internals are in config_load.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "config.h"
#include "config_load.h"
#include "shared/http_client.h"

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
	char			*shown, esc[SHOW_MAX * 4 + 8];
	size_t			 i;
	int			 rc;

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
	if (load_string(ld, v, path, &cb->cb_url) == -1)
		return -1;
	/* what is stored, logged and shown of it: no credentials */
	if ((cb->cb_url_shown = http_url_redact(cb->cb_url)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;

bad:
	/* the value may hold a password: not shown, even here */
	if (v->cn_type != CN_SCALAR || cnode_is_null(v) ||
	    (shown = http_url_redact(v->cn_str)) == NULL)
		return config_expected(ld, v, path,
		    "an http:// or https:// URL without whitespace");
	rc = config_error(ld, v, "%s: expected an http:// or https:// URL "
	    "without whitespace, found \"%s\"", path, config_escape(esc,
	    sizeof(esc), shown, strlen(shown), SHOW_MAX));
	free(shown);
	return rc;
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

	if (load_choice(ld, v, path, ch, nitems(ch),
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

	if (load_choice(ld, v, path, ch, nitems(ch), "auto, legacy or modern",
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

int
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
load_backend_ca(struct loader *ld, struct cnode *v, const char *path,
    void *arg)
{
	struct config_backend	*cb = arg;

	return load_ca_path(ld, v, path, &cb->cb_ca_bundle);
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
		{ "caBundlePath", F_FN, cb, load_backend_ca, 0, 0 },
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
	/* the bridges make their own calls */
	if (cb->cb_ca_bundle != NULL &&
	    cb->cb_transport != TRANSPORT_STREAMABLE_HTTP)
		return config_error(ld, cnode_get_key(n, "caBundlePath"),
		    "%s.caBundlePath: only with transport streamable-http",
		    path);
	if (cb->cb_transport == TRANSPORT_STDIO)
		return config_backend_argv(ld, cb, cnode_get(n, "args"));
	return 0;
}

int
load_backends(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_backend	*cb;
	char			 bpath[PATH_MAX_LEN];
	size_t			 i, j;

	if (n->cn_type != CN_SEQ)
		return config_expected(ld, n, path, "a sequence of backends");
	/* "backends: []" is a daemon that serves an empty view */
	ld->ld_have_backends = 1;
	if (n->cn_nkids == 0)
		return 0;
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

/* "a, b, c" for a message */
void
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
