/*
 * vmcpctl: look into the LMDB state of vmcpd.  The environment is
 * opened read-only and every read transaction is short, so a running
 * daemon is never blocked and never sees its pages pinned for long.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "shared/config.h"
#include "shared/handle_rec.h"
#include "shared/task_rec.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "shared/store_codec.h"
#include "tools/vmcpctl.h"

/* the daemon's default table size, should we be the one creating it */
#define CTL_MAX_READERS	512

struct ctl_env {
	char		*ce_dir;
	uint64_t	 ce_map_size;
	unsigned int	 ce_max_readers;
};

/* the session caps of the configuration, when there is one (not -d) */
static unsigned int	 ctl_session_cap, ctl_session_cap_addr;
static unsigned int	 ctl_bsession_cap;	/* per backend */

struct ctl_dump {
	const char	*cd_db;
	uint64_t	 cd_now;
	int		 cd_all;
	int		 cd_err;
};

void
ctl_usage(void)
{
	fprintf(stderr,
	    "usage: vmcpctl [-q] [-d statedir] [-f file] dump [-a] [db]\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] stat [-j]\n"
	    "       vmcpctl [-q] [-f file] status [-j]\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] reprobe backend\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] rebuild-views\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] drop-sessions "
	    "backend\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] links [-j]\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] links revoke "
	    "scope|sub backend\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] pins [-j] [-v]\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] pins approve | reject "
	    "backend name\n"
	    "       vmcpctl [-q] [-d statedir] [-f file] pins approve-all "
	    "backend\n");
}

static void
ctl_db_names(void)
{
	unsigned int i;

	fprintf(stderr, "vmcpctl: known dbs:");
	for (i = 0; i < STORE_NDB; i++)
		fprintf(stderr, " %s", store_db_name(i));
	fprintf(stderr, "\n");
}

/*
 * The state dir: -d, else daemon.stateDir of -f, of the default file
 * if it exists, or of the embedded default configuration.
 */
static int
ctl_env_resolve(struct ctl_env *ce, const char *dir, const char *file)
{
	struct config	*cf = NULL;
	char		 errbuf[CONFIG_ERR_MAX];

	memset(ce, 0, sizeof(*ce));
	ce->ce_max_readers = CTL_MAX_READERS;
	if (file == NULL && dir == NULL &&
	    access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		file = CONFIG_DEFAULT_PATH;
	if (file != NULL)
		cf = config_load_file(file, errbuf, sizeof(errbuf));
	else if (dir == NULL)
		cf = config_load_buffer(CONFIG_EMBEDDED_NAME, config_embedded,
		    config_embedded_len, errbuf, sizeof(errbuf));
	if (cf == NULL && (file != NULL || dir == NULL)) {
		warnx("%s", errbuf);
		return -1;
	}
	if (cf != NULL) {
		ce->ce_map_size = cf->cf_map_size;
		ce->ce_max_readers = cf->cf_max_readers;
		ctl_session_cap = cf->cf_session_cap;
		ctl_session_cap_addr = cf->cf_session_cap_addr;
		ctl_bsession_cap = cf->cf_bsession_cap;
		ctl_links_config(cf);
		if (cf->cf_diag_host != NULL)
			(void)snprintf(ctl_diag_addr, 300, strchr(
			    cf->cf_diag_host, ':') != NULL ? "[%s]:%u" :
			    "%s:%u", cf->cf_diag_host,
			    (unsigned int)cf->cf_diag_port);
	}
	ce->ce_dir = strdup(dir != NULL ? dir : cf->cf_state_dir);
	config_free(cf);
	if (ce->ce_dir == NULL) {
		warn("strdup");
		return -1;
	}
	return 0;
}

static int
ctl_env_open(const struct ctl_env *ce, struct store **st, int write)
{
	struct stat	 sb;
	char		 path[4096];

	if (stat(ce->ce_dir, &sb) == -1) {
		warn("state directory %s", ce->ce_dir);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		warnx("state directory %s: not a directory", ce->ce_dir);
		return -1;
	}
	/* do not leave a lock.mdb behind in a directory without an env */
	if (snprintf(path, sizeof(path), "%s/data.mdb", ce->ce_dir) >=
	    (int)sizeof(path)) {
		warnx("state directory %s: path too long", ce->ce_dir);
		return -1;
	}
	if (access(path, F_OK) == -1) {
		warnx("state directory %s: no LMDB environment (%s: %s)",
		    ce->ce_dir, path, strerror(errno));
		return -1;
	}
	/* the incident commands delete records: the daemon's own writes */
	if (store_open(st, ce->ce_dir, ce->ce_map_size, ce->ce_max_readers,
	    write ? 0 : STORE_RDONLY) == -1) {
		warn("cannot open the LMDB environment in %s", ce->ce_dir);
		return -1;
	}
	return 0;
}

/* --- JSON helpers --- */

/* length of a valid UTF-8 sequence without control characters, or 0 */
static size_t
ctl_utf8_char(const unsigned char *p, size_t len)
{
	uint32_t	 cp;
	size_t		 n, i;

	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* overlong, surrogate, out of range, C1 control */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return n;
}

static int
ctl_printable(const void *buf, size_t len)
{
	const unsigned char	*p = buf;
	size_t			 n;

	while (len > 0) {
		if ((n = ctl_utf8_char(p, len)) == 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/* "hex:..." for bytes that are not printable text */
static json_t *
ctl_hex(const void *buf, size_t len)
{
	static const char	 digits[] = "0123456789abcdef";
	const unsigned char	*p = buf;
	json_t			*j;
	char			*s;
	size_t			 i;

	if ((s = malloc(4 + 2 * len + 1)) == NULL)
		return NULL;
	memcpy(s, "hex:", 4);
	for (i = 0; i < len; i++) {
		s[4 + 2 * i] = digits[p[i] >> 4];
		s[4 + 2 * i + 1] = digits[p[i] & 0x0f];
	}
	s[4 + 2 * len] = '\0';
	j = json_string(s);
	free(s);
	return j;
}

static json_t *
ctl_text(const void *buf, size_t len)
{
	if (ctl_printable(buf, len))
		return json_stringn(buf, len);
	return ctl_hex(buf, len);
}

json_t *
ctl_time(uint64_t ms)
{
	struct tm	 tm;
	time_t		 t;
	char		 buf[64];
	size_t		 n;

	if (ms == 0)
		return json_null();
	t = (time_t)(ms / 1000);
	if ((uint64_t)t != ms / 1000 || gmtime_r(&t, &tm) == NULL ||
	    tm.tm_year + 1900 > 9999 ||
	    (n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		/* beyond calendar range: the number, as text */
		(void)snprintf(buf, sizeof(buf), "%llu",
		    (unsigned long long)ms);
		return json_string(buf);
	}
	(void)snprintf(buf + n, sizeof(buf) - n, ".%03uZ",
	    (unsigned int)(ms % 1000));
	return json_string(buf);
}

/*
 * The payload as JSON text: itself when it is valid JSON, made one line
 * (whitespace is the only place a raw CR, LF or tab can be in valid
 * JSON), else a JSON string.  Re-encoding a parsed value would change
 * numbers such as 0.1, so the text is kept as written.
 */
static int
ctl_jsonspace(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static char *
ctl_value(const char *data, size_t len)
{
	json_t		*j;
	json_error_t	 jerr;
	char		*s;
	size_t		 i, start, end;

	if ((j = json_loadb(data, len,
	    JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &jerr)) != NULL) {
		json_decref(j);
		start = 0;
		end = len;
		while (start < end && ctl_jsonspace(data[start]))
			start++;
		while (end > start && ctl_jsonspace(data[end - 1]))
			end--;
		if ((s = malloc(end - start + 1)) == NULL)
			return NULL;
		for (i = start; i < end; i++)
			s[i - start] = ctl_jsonspace(data[i]) ? ' ' : data[i];
		s[end - start] = '\0';
		return s;
	}
	if ((j = json_stringn(data, len)) == NULL &&
	    (j = ctl_hex(data, len)) == NULL)
		return NULL;
	s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	json_decref(j);
	return s;
}

/*
 * An era record's value with its backend URL redacted: a record
 * written before URLs were stored redacted shows none of it either.
 */
static char *
ctl_value_era(const char *data, size_t len)
{
	json_t	*j;
	char	*url = NULL, *s = NULL;

	if ((j = json_loadb(data, len, 0, NULL)) == NULL ||
	    !json_is_string(json_object_get(j, "url"))) {
		json_decref(j);
		return ctl_value(data, len);
	}
	if ((url = http_url_redact(json_string_value(json_object_get(j,
	    "url")))) != NULL && json_object_set_new(j, "url",
	    json_string(url)) == 0)
		s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	free(url);
	json_decref(j);
	return s;
}

static int
ctl_set(json_t *o, const char *key, json_t *v)
{
	if (v == NULL)
		return -1;
	return json_object_set_new(o, key, v);
}

/*
 * A workflow handle: what it is and whose, never its state (the steps'
 * outputs, a backend's requestState) nor its whole id, which would
 * resume it.
 */
static int
ctl_dump_handle(struct ctl_dump *cd, const void *key, size_t klen,
    const struct store_rec *rec)
{
	json_t	*o;
	char	*s;
	int	 rc = -1;

	/* a task (shared/task_rec.h) alike: never its whole id */
	if ((o = strcmp(cd->cd_db, store_db_name(STORE_TASKS)) == 0 ?
	    task_rec_dump(key, klen, rec->sr_data, rec->sr_len) :
	    handle_rec_dump(key, klen, rec->sr_data,
	    rec->sr_len)) == NULL ||
	    json_object_set_new(o, "db", json_string(cd->cd_db)) == -1 ||
	    (json_object_get(o, "created") != NULL &&
	    ctl_set(o, "created", ctl_time((uint64_t)json_integer_value(
	    json_object_get(o, "created")))) == -1) ||
	    ctl_set(o, "expires", ctl_time(rec->sr_expires_ms)) == -1 ||
	    (cd->cd_all && store_rec_expired(rec->sr_expires_ms,
	    cd->cd_now) && ctl_set(o, "expired", json_true()) == -1) ||
	    (s = json_dumps(o, JSON_COMPACT)) == NULL) {
		warnx("%s: out of memory", cd->cd_db);
		cd->cd_err = 1;
		json_decref(o);
		return 1;
	}
	if (printf("%s\n", s) < 0) {
		warn("stdout");
		cd->cd_err = 1;
	} else
		rc = 0;
	free(s);
	json_decref(o);
	return rc == 0 ? 0 : 1;
}

/*
 * A scope's backend session (worker/upstream/backend_session.h): whose ("anon", the
 * shared scope, or a principal's scope), which backend, and its last
 * use (its updated stamp); lock records as they are.
 */
static int
ctl_dump_bsession(json_t *o, const void *key, size_t klen,
    const struct store_rec *rec)
{
	const char	*k = key, *bar;

	if ((klen >= 5 && memcmp(k, "lock|", 5) == 0) ||
	    (bar = memchr(k, '|', klen)) == NULL)
		return 0;
	if (ctl_set(o, "scope", json_stringn(k, (size_t)(bar - k))) == -1 ||
	    ctl_set(o, "backend", json_stringn(bar + 1,
	    klen - (size_t)(bar + 1 - k))) == -1 ||
	    ctl_set(o, "holder", json_string((size_t)(bar - k) == 4 &&
	    memcmp(k, "anon", 4) == 0 ? "shared" : "principal")) == -1 ||
	    ctl_set(o, "lastUsed", ctl_time(rec->sr_updated_ms)) == -1)
		return -1;
	return 0;
}

/* a user's link: its clear part (who, which backend, when), never a
 * token, sealed or not; a consent not at all */
static char *
ctl_dump_link(const struct store_rec *rec)
{
	json_t	*v;
	char	*s;

	if ((v = ctl_link_value(rec)) == NULL)
		return NULL;
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	return s;
}

static int
ctl_dump_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct ctl_dump	*cd = arg;
	json_t		*o;
	char		*head = NULL, *value = NULL;
	size_t		 hlen;
	int		 rc = -1;

	if (strcmp(cd->cd_db, store_db_name(STORE_HANDLES)) == 0 ||
	    strcmp(cd->cd_db, store_db_name(STORE_TASKS)) == 0)
		return ctl_dump_handle(cd, key, klen, rec);
	if ((o = json_object()) == NULL)
		goto done;
	if (ctl_set(o, "db", json_string(cd->cd_db)) == -1 ||
	    ctl_set(o, "key", ctl_text(key, klen)) == -1 ||
	    ctl_set(o, "expires", ctl_time(rec->sr_expires_ms)) == -1 ||
	    ctl_set(o, "updated", ctl_time(rec->sr_updated_ms)) == -1 ||
	    ctl_set(o, "type", json_integer(rec->sr_type)) == -1 ||
	    ctl_set(o, "flags", json_integer(rec->sr_flags)) == -1)
		goto done;
	if (cd->cd_all && store_rec_expired(rec->sr_expires_ms, cd->cd_now) &&
	    ctl_set(o, "expired", json_true()) == -1)
		goto done;
	if (strcmp(cd->cd_db, store_db_name(STORE_BSESSIONS)) == 0 &&
	    ctl_dump_bsession(o, key, klen, rec) == -1)
		goto done;
	/* exchanged tokens, users' links and consents: their keys and
	 * expiry, never their values (sealed, but shown nowhere all the
	 * same) */
	if ((head = json_dumps(o, JSON_COMPACT)) == NULL)
		goto done;
	if (strcmp(cd->cd_db, "tokens") == 0 || strcmp(cd->cd_db,
	    store_db_name(STORE_CONSENTS)) == 0)
		value = strdup("\"(not shown)\"");
	else if (strcmp(cd->cd_db, store_db_name(STORE_LINKS)) == 0)
		value = ctl_dump_link(rec);
	else if (strcmp(cd->cd_db, store_db_name(STORE_ERAS)) == 0)
		value = ctl_value_era(rec->sr_data, rec->sr_len);
	else
		value = ctl_value(rec->sr_data, rec->sr_len);
	if (value == NULL)
		goto done;
	/* splice the value in as the last member */
	hlen = strlen(head);
	if (hlen < 2 || head[hlen - 1] != '}')
		goto done;
	head[hlen - 1] = '\0';
	if (printf("%s,\"value\":%s}\n", head, value) < 0) {
		warn("stdout");
		cd->cd_err = 1;
		rc = 1;
		goto out;
	}
	rc = 0;
done:
	if (rc == -1) {
		warnx("%s: out of memory", cd->cd_db);
		cd->cd_err = 1;
		rc = 1;
	}
out:
	free(head);
	free(value);
	json_decref(o);
	return rc;
}

/* --- commands --- */

static int
ctl_dump(struct store *st, int argc, char *argv[])
{
	struct ctl_dump	 cd;
	enum store_db	 db, first = 0, last = STORE_NDB - 1;
	int		 ch;

	memset(&cd, 0, sizeof(cd));
	optind = 0;
	while ((ch = getopt(argc, argv, "+a")) != -1) {
		switch (ch) {
		case 'a':
			cd.cd_all = 1;
			break;
		default:
			ctl_usage();
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		ctl_usage();
		return 1;
	}
	if (argc == 1) {
		if (store_db_lookup(argv[0], &db) == -1) {
			warnx("unknown db \"%s\"", argv[0]);
			ctl_db_names();
			return 1;
		}
		first = last = db;
	}
	if (st == NULL)
		return 0;	/* arguments checked before the env is opened */
	cd.cd_now = store_now_ms();
	for (db = first; db <= last && !cd.cd_err; db++) {
		cd.cd_db = store_db_name(db);
		if (store_iter(st, db, cd.cd_now, cd.cd_all, ctl_dump_cb,
		    &cd) == -1) {
			warnx("%s: cannot read the db", cd.cd_db);
			return 1;
		}
	}
	return cd.cd_err ? 1 : 0;
}

static void
ctl_human(char *buf, size_t len, uint64_t n)
{
	static const char	*const units[] = { "B", "KiB", "MiB", "GiB",
				    "TiB", "PiB", "EiB" };
	double			 v = (double)n;
	unsigned int		 u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		(void)snprintf(buf, len, "%llu B", (unsigned long long)n);
	else
		(void)snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* bytes in use: the file's high-water mark less LMDB's free list */
static uint64_t
ctl_in_use(const struct store_envstat *es)
{
	return es->se_used_bytes > es->se_free_bytes ?
	    es->se_used_bytes - es->se_free_bytes : 0;
}

/* one count of ctl_bsessions(): arg is the member, "client" or "scope" */
struct ctl_bcount {
	json_t		*cb_all;
	const char	*cb_member;
};

static int
ctl_bsessions_add(void *arg, const char *name, size_t nlen, uint64_t n)
{
	struct ctl_bcount	*bc = arg;
	const char		*member = bc->cb_member;
	json_t			*b;

	(void)nlen;
	/* a principal's are grouped as "p|<backend>" (bsession_group();
	 * a name too long for that is shown as its group has it) */
	if (strcmp(member, "scope") == 0 && strncmp(name, "p|", 2) == 0) {
		member = "principal";
		name += 2;
	}
	if ((b = json_object_get(bc->cb_all, name)) == NULL) {
		if ((b = json_pack("{s:i, s:i, s:i}", "client", 0, "scope", 0,
		    "principal", 0)) == NULL ||
		    json_object_set_new(bc->cb_all, name, b) == -1)
			return 1;
	}
	return json_object_set_new(b, member,
	    json_integer((json_int_t)n)) == -1;
}

/*
 * The backend sessions vmcpd holds open, per backend: those of client
 * sessions (the store's gauges), of the shared scope and of principals
 * (the bsessions records, grouped by backend and by "p|<backend>").
 */
static json_t *
ctl_bsessions(struct store *st)
{
	struct ctl_bcount bc;

	if ((bc.cb_all = json_object()) == NULL)
		return NULL;
	bc.cb_member = "client";
	if (store_gauges(st, ctl_bsessions_add, &bc) == -1)
		goto fail;
	bc.cb_member = "scope";
	if (store_groups(st, STORE_BSESSIONS, ctl_bsessions_add, &bc) == -1)
		goto fail;
	return bc.cb_all;
fail:
	json_decref(bc.cb_all);
	return NULL;
}

static int
ctl_stat_json(const struct store_envstat *es, unsigned int permille,
    json_t *bsess)
{
	json_t		*o, *dbs, *d, *r, *sess;
	char		*s;
	unsigned int	 i;
	int		 rc = 1;

	o = json_object();
	dbs = json_object();
	r = json_object();
	sess = json_object();
	if (o == NULL || dbs == NULL || r == NULL || sess == NULL)
		goto fail;
	if (ctl_set(sess, "count", json_integer((json_int_t)
	    es->se_db[STORE_SESSIONS].sd_entries)) == -1 ||
	    (ctl_session_cap > 0 && (ctl_set(sess, "max",
	    json_integer(ctl_session_cap)) == -1 || ctl_set(sess,
	    "maxPerAddress", json_integer(ctl_session_cap_addr)) == -1)) ||
	    json_object_set(o, "sessions", sess) == -1 ||
	    ctl_set(o, "freeBytes",
	    json_integer((json_int_t)es->se_free_bytes)) == -1 ||
	    ctl_set(o, "inUseBytes",
	    json_integer((json_int_t)ctl_in_use(es))) == -1 ||
	    ctl_set(o, "headroomBytes",
	    json_integer((json_int_t)es->se_headroom_bytes)) == -1)
		goto fail;
	for (i = 0; i < STORE_NDB; i++) {
		if ((d = json_object()) == NULL ||
		    ctl_set(d, "entries",
		    json_integer((json_int_t)es->se_db[i].sd_entries)) == -1 ||
		    ctl_set(d, "pages",
		    json_integer((json_int_t)es->se_db[i].sd_pages)) == -1 ||
		    json_object_set_new(dbs, es->se_db[i].sd_name, d) == -1)
			goto fail;
	}
	if (ctl_set(r, "used", json_integer(es->se_num_readers)) == -1 ||
	    ctl_set(r, "max", json_integer(es->se_max_readers)) == -1)
		goto fail;
	if (json_object_set(o, "dbs", dbs) == -1 ||
	    ctl_set(o, "mapSize", json_integer((json_int_t)es->se_map_size)) ==
	    -1 ||
	    ctl_set(o, "usedBytes",
	    json_integer((json_int_t)es->se_used_bytes)) == -1 ||
	    ctl_set(o, "usedPercent", json_real(permille / 10.0)) == -1 ||
	    ctl_set(o, "pageSize", json_integer(es->se_page_size)) == -1 ||
	    json_object_set(o, "readers", r) == -1 ||
	    ctl_set(o, "expiryEntries",
	    json_integer((json_int_t)es->se_expiry_entries)) == -1 ||
	    json_object_set(o, "backendSessions", bsess) == -1 ||
	    (ctl_bsession_cap > 0 && ctl_set(o, "principalSessionsMax",
	    json_integer(ctl_bsession_cap)) == -1))
		goto fail;
	if ((s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6))) ==
	    NULL)
		goto fail;
	if (printf("%s\n", s) < 0)
		warn("stdout");
	else
		rc = 0;
	free(s);
	json_decref(o);
	json_decref(dbs);
	json_decref(r);
	json_decref(sess);
	return rc;

fail:
	warnx("stat: out of memory");
	json_decref(o);
	json_decref(dbs);
	json_decref(r);
	json_decref(sess);
	return 1;
}

static int
ctl_stat(struct store *st, int argc, char *argv[])
{
	struct store_envstat	 es;
	char			 h1[32], h2[32], h3[32];
	unsigned int		 i, permille = 0, inuse = 0, stop;
	int			 ch, json = 0, rc;
	json_t			*bsess, *b;
	const char		*name;

	optind = 0;
	while ((ch = getopt(argc, argv, "+j")) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		default:
			ctl_usage();
			return 1;
		}
	}
	if (argc - optind != 0) {
		ctl_usage();
		return 1;
	}
	if (st == NULL)
		return 0;
	if (store_envstat(st, &es) == -1) {
		warnx("cannot read the environment's statistics");
		return 1;
	}
	if (es.se_map_size > 0) {
		permille = (unsigned int)(es.se_used_bytes * 1000 /
		    es.se_map_size);
		inuse = (unsigned int)(ctl_in_use(&es) * 1000 /
		    es.se_map_size);
	}
	if ((bsess = ctl_bsessions(st)) == NULL) {
		warnx("cannot read the backend sessions' counts");
		return 1;
	}
	if (json) {
		rc = ctl_stat_json(&es, permille, bsess);
		json_decref(bsess);
		return rc;
	}

	printf("%-12s %12s %12s\n", "db", "entries", "pages");
	for (i = 0; i < STORE_NDB; i++)
		printf("%-12s %12zu %12zu\n", es.se_db[i].sd_name,
		    es.se_db[i].sd_entries, es.se_db[i].sd_pages);
	ctl_human(h1, sizeof(h1), es.se_map_size);
	ctl_human(h2, sizeof(h2), es.se_used_bytes);
	printf("map size     %llu bytes (%s)\n",
	    (unsigned long long)es.se_map_size, h1);
	printf("used         %llu bytes (%s, %u.%u%%)\n",
	    (unsigned long long)es.se_used_bytes, h2, permille / 10,
	    permille % 10);
	ctl_human(h3, sizeof(h3), ctl_in_use(&es));
	stop = es.se_map_size > 0 ? (unsigned int)((es.se_map_size -
	    es.se_headroom_bytes) * 1000 / es.se_map_size) : 0;
	printf("in use       %llu bytes (%s, %u.%u%%; new records stop at "
	    "%u.%u%%)\n", (unsigned long long)ctl_in_use(&es), h3,
	    inuse / 10, inuse % 10, stop / 10, stop % 10);
	if (ctl_session_cap > 0)
		printf("sessions     %zu of %u (%u per address)\n",
		    es.se_db[STORE_SESSIONS].sd_entries, ctl_session_cap,
		    ctl_session_cap_addr);
	else
		printf("sessions     %zu\n",
		    es.se_db[STORE_SESSIONS].sd_entries);
	printf("page size    %u bytes\n", es.se_page_size);
	printf("readers      %u/%u\n", es.se_num_readers, es.se_max_readers);
	printf("expiry index %zu entries\n", es.se_expiry_entries);
	/* what each backend has open for vmcpd (closing: queued to close) */
	printf("backend sessions (%zu records queued to close)\n",
	    es.se_db[STORE_CLOSING].sd_entries);
	json_object_foreach(bsess, name, b)
		printf("  %-24s %8lld client %8lld scope %8lld principal\n",
		    name, (long long)json_integer_value(json_object_get(b,
		    "client")), (long long)json_integer_value(
		    json_object_get(b, "scope")), (long long)
		    json_integer_value(json_object_get(b, "principal")));
	if (ctl_bsession_cap > 0)
		printf("principals'  at most %u per backend "
		    "(sessions.maxBackendSessions)\n", ctl_bsession_cap);
	json_decref(bsess);
	return 0;
}

/*
 * cc_run is called twice: without a store to check the arguments, then
 * with the store open (read-write for cc_write); a command that reads
 * no store (cc_direct) is run by that instead.
 */
static const struct ctl_cmd {
	const char	*cc_name;
	int		(*cc_run)(struct store *, int, char *[]);
	int		(*cc_direct)(int, char *[]);
	int		 cc_write;
} ctl_cmds[] = {
	{ "dump", ctl_dump, NULL, 0 },
	{ "stat", ctl_stat, NULL, 0 },
	{ "status", ctl_status, ctl_status_show, 0 },
	{ "reprobe", ctl_reprobe, NULL, 1 },
	{ "rebuild-views", ctl_rebuild_views, NULL, 1 },
	{ "drop-sessions", ctl_drop_sessions, NULL, 1 },
	{ "links", ctl_links, NULL, 0 },
	{ "pins", ctl_pins, NULL, 0 },
};

int
main(int argc, char *argv[])
{
	const struct ctl_cmd	*cmd = NULL;
	struct ctl_env		 ce;
	struct store		*st = NULL;
	const char		*dir = NULL, *file = NULL;
	size_t			 i;
	int			 ch, quiet = 0, rc;

	while ((ch = getopt(argc, argv, "+d:f:q")) != -1) {
		switch (ch) {
		case 'd':
			dir = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			ctl_usage();
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		ctl_usage();
		return 1;
	}
	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (strcmp(argv[0], ctl_cmds[i].cc_name) == 0)
			cmd = &ctl_cmds[i];
	if (cmd == NULL) {
		warnx("unknown command \"%s\"", argv[0]);
		ctl_usage();
		return 1;
	}
	/* diagnostics of the store go to stderr, or nowhere with -q */
	log_init(1, "vmcpctl");
	if (quiet)
		(void)log_setfile("/dev/null");

	/* check the command's arguments before touching anything */
	if ((rc = cmd->cc_run(NULL, argc, argv)) != 0)
		return rc;
	if (ctl_env_resolve(&ce, dir, file) == -1)
		return 1;
	if (cmd->cc_direct != NULL) {
		free(ce.ce_dir);
		rc = cmd->cc_direct(argc, argv);
		goto out;
	}
	if (ctl_env_open(&ce, &st, cmd->cc_write || (cmd->cc_run ==
	    ctl_links && ctl_links_writes(argc, argv)) || (cmd->cc_run ==
	    ctl_pins && ctl_pins_writes(argc, argv))) == -1) {
		free(ce.ce_dir);
		return 1;
	}
	rc = cmd->cc_run(st, argc, argv);
	store_close(st);
	free(ce.ce_dir);
out:
	if (fflush(stdout) == EOF || ferror(stdout)) {
		warn("stdout");
		rc = 1;
	}
	(void)log_setfile(NULL);
	return rc;
}
