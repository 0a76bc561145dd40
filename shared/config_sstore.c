/*
 * vmcpd.yaml sessionStorage: the reference vMCP's keys ({provider,
 * address, db, keyPrefix}, the password from THV_SESSION_REDIS_PASSWORD)
 * and the provider lmdb, this host's store alone (the default; the
 * reference's memory is the same thing here).  docs/ARCHITECTURE.md,
 * Beyond one host, says what provider redis shares.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config_load.h"

#define SSTORE_PORT		6379
#define SSTORE_PREFIX		"thv:vmcp:session:"
#define SSTORE_PASSWORD_ENV	"THV_SESSION_REDIS_PASSWORD"
#define SSTORE_NAMESPACE_ENV	"VMCP_NAMESPACE"

/*
 * "host:port", "[v6]:port" or a bare host (port 6379), as the reference
 * takes it: 0, or -1 with nothing allocated.
 */
int
config_sstore_address(const char *s, char **host, uint16_t *port)
{
	const char	*h = s, *end, *colon;
	uint64_t	 p = SSTORE_PORT;
	size_t		 hlen;

	*host = NULL;
	if (*s == '[') {
		h = s + 1;
		if ((end = strchr(h, ']')) == NULL)
			return -1;
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != '\0' && colon == NULL)
			return -1;
	} else {
		colon = strrchr(s, ':');
		if (colon != NULL && strchr(s, ':') != colon)
			return -1;	/* a bare v6 address needs [] */
		end = colon != NULL ? colon : s + strlen(s);
	}
	hlen = (size_t)(end - h);
	if (hlen == 0 || hlen > 253 || memchr(h, '/', hlen) != NULL ||
	    memchr(h, ' ', hlen) != NULL)
		return -1;
	if (colon != NULL && (config_parse_uint(colon + 1, &p) == -1 ||
	    p == 0 || p > 65535))
		return -1;
	if ((*host = strndup(h, hlen)) == NULL)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

static int
load_sstore_provider(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_sstore *ss = arg;

	if (load_plain(ld, n, path, "lmdb, memory or redis") == -1)
		return -1;
	if (strcmp(n->cn_str, "lmdb") == 0 || strcmp(n->cn_str, "memory") == 0)
		ss->css_provider = CONFIG_SSTORE_LMDB;
	else if (strcmp(n->cn_str, "redis") == 0)
		ss->css_provider = CONFIG_SSTORE_REDIS;
	else
		return config_expected(ld, n, path, "lmdb, memory or redis");
	return 0;
}

static int
load_sstore_address(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_sstore	*ss = arg;
	char			*s = NULL;

	if (load_string(ld, n, path, &s) == -1)
		return -1;
	free(ss->css_host);
	ss->css_host = NULL;
	if (config_sstore_address(s, &ss->css_host, &ss->css_port) == -1) {
		free(s);
		return config_expected(ld, n, path, "a Redis address host:port "
		    "(or [IPv6]:port)");
	}
	free(s);
	return 0;
}

static int
load_sstore_prefix(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_sstore	*ss = arg;
	char			*s = NULL;
	size_t			 i;

	if (load_string(ld, n, path, &s) == -1)
		return -1;
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f) {
			free(s);
			return config_expected(ld, n, path, "a key prefix "
			    "without spaces or control characters");
		}
	free(ss->css_prefix);
	ss->css_prefix = s;
	return 0;
}

int
load_session_storage(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config		*cf = arg;
	struct config_sstore	*ss = &cf->cf_sstore;
	const char		*pw;
	const struct field	 fields[] = {
		{ "provider", F_FN, ss, load_sstore_provider, 0, 0 },
		{ "address", F_FN, ss, load_sstore_address, 0, 0 },
		{ "db", F_UINT, &ss->css_db, NULL, 0, INT_MAX },
		{ "keyPrefix", F_FN, ss, load_sstore_prefix, 0, 0 },
	};

	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (config_require(ld, n, path, "provider") == -1)
		return -1;
	if (ss->css_provider == CONFIG_SSTORE_LMDB) {
		if (ss->css_host != NULL)
			return config_error(ld, cnode_get_key(n, "address"),
			    "%s.address: only with provider redis", path);
		return 0;
	}
	if (config_require(ld, n, path, "address") == -1)
		return -1;
	/* read here, so that a reload picks a changed one up */
	free(ss->css_password);
	ss->css_password = NULL;
	if ((pw = getenv(SSTORE_PASSWORD_ENV)) != NULL && *pw != '\0' &&
	    (ss->css_password = strdup(pw)) == NULL)
		return config_error(ld, NULL, "out of memory");
	return 0;
}

int
config_sstore_defaults(struct config *cf)
{
	struct config_sstore	*ss = &cf->cf_sstore;
	const char		*ns;

	ss->css_port = SSTORE_PORT;
	if ((ns = getenv(SSTORE_NAMESPACE_ENV)) == NULL || *ns == '\0')
		ns = "local";
	if ((ss->css_prefix = strdup(SSTORE_PREFIX)) == NULL ||
	    (ss->css_namespace = strdup(ns)) == NULL)
		return -1;
	return 0;
}

void
config_sstore_free(struct config *cf)
{
	struct config_sstore *ss = &cf->cf_sstore;

	free(ss->css_host);
	free(ss->css_prefix);
	free(ss->css_namespace);
	if (ss->css_password != NULL) {
		explicit_bzero(ss->css_password, strlen(ss->css_password));
		free(ss->css_password);
	}
}
