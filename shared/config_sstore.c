/*
 * vmcpd.yaml sessionStorage: the reference vMCP's keys ({provider,
 * address, db, keyPrefix}, the password from THV_SESSION_REDIS_PASSWORD)
 * and the provider lmdb, this host's store alone (the default; the
 * reference's memory is the same thing here).  docs/ARCHITECTURE.md,
 * Beyond one host, says what provider redis shares.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/headers.h"
#include "config_load.h"
#include "jwt.h"

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

/*
 * A seal key file: exactly 32 bytes (raw), or, a final newline (CRLF)
 * aside, 64 hex digits or the base64 of 32 bytes (standard or URL
 * alphabet, padded or not: what "openssl rand -base64 32" writes).
 */
int
config_sstore_key_decode(const char *s, size_t len, uint8_t key[32])
{
	char	 url[43];
	size_t	 i;
	int	 a, b;

	if (len == 32) {
		memcpy(key, s, 32);
		return 0;
	}
	if (len > 0 && s[len - 1] == '\n')
		len--;
	if (len > 0 && s[len - 1] == '\r')
		len--;
	if (len == 64) {
		for (i = 0; i < 32; i++) {
			if ((a = proto_hex_digit((unsigned char)s[2 * i])) ==
			    -1 || (b = proto_hex_digit(
			    (unsigned char)s[2 * i + 1])) == -1)
				goto fail;
			key[i] = (uint8_t)(a << 4 | b);
		}
		return 0;
	}
	/* 32 bytes are 43 base64 digits, then one '=' when padded */
	if (len == 44 && s[43] == '=')
		len = 43;
	if (len != 43)
		goto fail;
	for (i = 0; i < len; i++)
		url[i] = s[i] == '+' ? '-' : s[i] == '/' ? '_' : s[i];
	b = jwt_b64url_decode(url, len, key) == 32;
	explicit_bzero(url, sizeof(url));
	if (b)
		return 0;
 fail:
	explicit_bzero(key, 32);
	return -1;
}

/*
 * The key is read when the configuration is (vmcpd -n, start, reload,
 * as the user vmcpd runs as): a file any other user may read would
 * hand them every node's tokens in Redis, so it is refused.
 */
static int
load_sstore_key_file(struct loader *ld, struct cnode *n, const char *path,
    void *arg)
{
	struct config_sstore	*ss = arg;

	free(ss->css_seal_key_file);
	ss->css_seal_key_file = NULL;
	if (load_string(ld, n, path, &ss->css_seal_key_file) == -1)
		return -1;
	if (ss->css_seal_key_file[0] != '/')
		return config_expected(ld, n, path, "an absolute path");
	return 0;
}

/* the key of sealKeyFile (n its value), once the provider is known */
static int
sstore_read_key(struct loader *ld, struct cnode *n, const char *path,
    struct config_sstore *ss)
{
	struct stat		 st;
	char			 buf[130];
	ssize_t			 r;
	size_t			 len = 0;
	int			 fd, rc = -1;

	if ((fd = open(ss->css_seal_key_file, O_RDONLY | O_CLOEXEC)) == -1)
		return config_error(ld, n, "%s: cannot read %s: %s", path,
		    ss->css_seal_key_file, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		(void)config_error(ld, n, "%s: %s is not a regular file",
		    path, ss->css_seal_key_file);
		goto done;
	}
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		(void)config_error(ld, n, "%s: %s may be read or written by "
		    "group or others (mode %04o): chmod 600 it", path,
		    ss->css_seal_key_file, (unsigned int)(st.st_mode & 07777));
		goto done;
	}
	while (len < sizeof(buf) && (r = read(fd, buf + len,
	    sizeof(buf) - len)) != 0) {
		if (r == -1) {
			if (errno == EINTR)
				continue;
			(void)config_error(ld, n, "%s: cannot read %s: %s",
			    path, ss->css_seal_key_file, strerror(errno));
			goto done;
		}
		len += (size_t)r;
	}
	if (config_sstore_key_decode(buf, len, ss->css_seal_key) == -1) {
		(void)config_error(ld, n, "%s: %s does not hold a 32-byte "
		    "key: 32 bytes, 64 hex digits or their base64 (openssl "
		    "rand -base64 32)", path, ss->css_seal_key_file);
		goto done;
	}
	ss->css_have_seal_key = 1;
	rc = 0;
 done:
	explicit_bzero(buf, sizeof(buf));
	(void)close(fd);
	return rc;
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
	char			 kpath[PATH_MAX_LEN];
	const struct field	 fields[] = {
		{ "provider", F_FN, ss, load_sstore_provider, 0, 0 },
		{ "address", F_FN, ss, load_sstore_address, 0, 0 },
		{ "db", F_UINT, &ss->css_db, NULL, 0, INT_MAX },
		{ "keyPrefix", F_FN, ss, load_sstore_prefix, 0, 0 },
		{ "sealKeyFile", F_FN, ss, load_sstore_key_file, 0, 0 },
	};

	ld->ld_sstore = n;
	if (load_fields(ld, n, path, fields, nitems(fields)) == -1)
		return -1;
	if (config_require(ld, n, path, "provider") == -1)
		return -1;
	/* with lmdb too: without it a host's key is made at each start
	 * and users' links (authorization_code) do not outlive it */
	if (ss->css_seal_key_file != NULL) {
		config_path(kpath, sizeof(kpath), path, cnode_get_key(n,
		    "sealKeyFile"));
		if (sstore_read_key(ld, cnode_get(n, "sealKeyFile"), kpath,
		    ss) == -1)
			return -1;
	}
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
config_sstore_resolve(struct loader *ld)
{
	const struct config	*cf = ld->ld_cf;
	const struct config_backend *be;
	size_t			 i;

	if (cf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS ||
	    cf->cf_sstore.css_have_seal_key)
		return 0;
	for (i = 0; i < cf->cf_nbackends; i++) {
		be = &cf->cf_backends[i];
		if (be->cb_outauth == NULL ||
		    (be->cb_outauth->oa_type != CONFIG_OUTAUTH_EXCHANGE &&
		    be->cb_outauth->oa_type != CONFIG_OUTAUTH_CODE))
			continue;
		return config_error(ld, ld->ld_sstore, "sessionStorage: "
		    "backend %s uses %s, and with provider redis its tokens "
		    "are shared sealed: set "
		    "sessionStorage.sealKeyFile to a file of 32 random bytes, "
		    "the same on every node (openssl rand -base64 32 > FILE; "
		    "chmod 600 FILE)", be->cb_name,
		    config_outauth_name(be->cb_outauth->oa_type));
	}
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
	free(ss->css_seal_key_file);
	explicit_bzero(ss->css_seal_key, sizeof(ss->css_seal_key));
	if (ss->css_password != NULL) {
		explicit_bzero(ss->css_password, strlen(ss->css_password));
		free(ss->css_password);
	}
}
