/*
 * Legacy client sessions.  The record lives in the store's "sessions"
 * database, so whichever worker gets a request can serve it and a
 * worker crash loses nothing.  Its expiry is sliding (ttl after the
 * last use) under an absolute cap (created + maxLifetime).
 */
#include <sys/random.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "shared/store_codec.h"
#include "shared/http_client.h"
#include "proto/jsonrpc.h"
#include "proto/mheaders.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/state/session_redis.h"
#include "worker/state/session_store.h"

#define SESSION_RECORD_VERSION	1

int
session_mint_id(char out[SESSION_ID_LEN + 1])
{
	unsigned char		r[32];
	size_t			got = 0;
	ssize_t			n;
	int			rc = 0;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	/* 256 bits as base64url without padding: 43 characters */
	if (proto_b64_encode_buf(r, sizeof(r), 1, out, SESSION_ID_LEN + 1) !=
	    SESSION_ID_LEN)
		rc = -1;
	explicit_bzero(r, sizeof(r));
	return rc;
}

/* a string of s freed, unless it lies in session_copy()'s block */
void
session_str_free(struct session *s, char *p)
{
	if (p != NULL && (s->s_pack == NULL || p < s->s_pack ||
	    p >= s->s_pack + s->s_packlen))
		free(p);
}

void
session_clear(struct session *s)
{
	size_t i;

	session_str_free(s, s->s_version);
	json_decref(s->s_client_caps);
	json_decref(s->s_client_info);
	session_str_free(s, s->s_owner);
	session_str_free(s, s->s_log_level);
	json_decref(s->s_subs);
	for (i = 0; i < s->s_nbackends; i++) {
		session_str_free(s, s->s_backends[i].sb_name);
		session_str_free(s, s->s_backends[i].sb_sid);
		session_str_free(s, s->s_backends[i].sb_version);
	}
	if ((char *)s->s_backends != s->s_pack)
		free(s->s_backends);
	free(s->s_pack);
	memset(s, 0, sizeof(*s));
}

int
session_encode(const struct session *s, char **buf, size_t *len)
{
	json_t	*o = NULL, *b = NULL, *e;
	size_t	 i;

	if ((b = json_object()) == NULL)
		goto fail;
	for (i = 0; i < s->s_nbackends; i++) {
		e = json_pack("{s:s*, s:s*}", "sid", s->s_backends[i].sb_sid,
		    "pv", s->s_backends[i].sb_version);
		if (e == NULL || json_object_set_new(b,
		    s->s_backends[i].sb_name, e) == -1)
			goto fail;
	}
	o = json_pack("{s:i, s:s, s:O*, s:O*, s:s, s:s*, s:b, s:I, s:I, s:I, "
	    "s:O, s:O*}",
	    "v", SESSION_RECORD_VERSION,
	    "pv", s->s_version != NULL ? s->s_version : "",
	    "caps", s->s_client_caps,
	    "info", s->s_client_info,
	    "owner", s->s_owner != NULL ? s->s_owner : "",
	    "lvl", s->s_log_level,
	    "init", s->s_initialized,
	    "created", (json_int_t)s->s_created_ms,
	    "seen", (json_int_t)s->s_seen_ms,
	    "max", (json_int_t)s->s_max_ms,
	    "backends", b,
	    "subs", s->s_subs);
	/* a read-through copy of a Redis record: its version stamp */
	if (o == NULL || (s->s_rstamp != 0 && json_object_set_new(o, "rs",
	    json_integer((json_int_t)s->s_rstamp)) == -1))
		goto fail;
	json_decref(b);
	*buf = jsonrpc_dump(o, len);
	json_decref(o);
	return *buf == NULL ? -1 : 0;
fail:
	json_decref(b);
	json_decref(o);
	return -1;
}

int
session_decode(const char *buf, size_t len, struct session *s)
{
	json_t		*o, *caps = NULL, *info = NULL, *b = NULL, *e;
	json_t		*subs = NULL;
	json_error_t	 jerr;
	const char	*pv, *owner, *lvl = NULL, *name, *sid, *bpv;
	json_int_t	 v, created, seen, max, rs = 0;
	int		 init;

	memset(s, 0, sizeof(*s));
	if ((o = json_loadb(buf, len, JSON_ALLOW_NUL, &jerr)) == NULL)
		return -1;
	if (json_unpack(o, "{s:I, s:s, s?o, s?o, s:s, s?s, s:b, s:I, s:I, "
	    "s:I, s:o, s?o, s?I}", "v", &v, "pv", &pv, "caps", &caps, "info",
	    &info, "owner", &owner, "lvl", &lvl, "init", &init, "created",
	    &created, "seen", &seen, "max", &max, "backends", &b, "subs", &subs,
	    "rs", &rs) == -1 || rs < 0 ||
	    v != SESSION_RECORD_VERSION || !json_is_object(b) ||
	    (subs != NULL && !json_is_array(subs)))
		goto fail;
	if ((s->s_version = strdup(pv)) == NULL ||
	    (s->s_owner = strdup(owner)) == NULL ||
	    (lvl != NULL && (s->s_log_level = strdup(lvl)) == NULL))
		goto fail;
	s->s_client_caps = json_incref(caps);
	s->s_client_info = json_incref(info);
	s->s_subs = json_incref(subs);
	s->s_initialized = init;
	s->s_created_ms = (uint64_t)created;
	s->s_seen_ms = (uint64_t)seen;
	s->s_max_ms = (uint64_t)max;
	s->s_rstamp = (uint64_t)rs;
	json_object_foreach(b, name, e) {
		sid = bpv = NULL;
		if (json_unpack(e, "{s?s, s?s}", "sid", &sid, "pv", &bpv) == -1)
			goto fail;
		if (session_backend_set(s, name, sid, bpv) == -1)
			goto fail;
	}
	json_decref(o);
	return 0;
fail:
	json_decref(o);
	session_clear(s);
	return -1;
}

int
session_holds_backends(const struct session *s)
{
	size_t i;

	/* its resource subscriptions are released when it ends (subs.c) */
	if (json_array_size(s->s_subs) > 0)
		return 1;
	for (i = 0; i < s->s_nbackends; i++)
		if (s->s_backends[i].sb_sid != NULL)
			return 1;
	return 0;
}

uint64_t
session_expiry(const struct session *s, uint64_t ttl_ms)
{
	uint64_t exp = s->s_seen_ms + ttl_ms;

	return exp < s->s_max_ms ? exp : s->s_max_ms;
}

/*
 * A worker keeps decoded copies of the sessions it serves; one cheap
 * read of the record's stamp (update time and length) says whether a
 * copy is still the record, so a request decodes its session only
 * when another worker (or this one) has changed it.  While no write at
 * all has been committed since that read (the store's generation), not
 * even the stamp is read: the copy is the record until it expires.
 */
#define SESSION_CACHE	256

static struct session_cached {
	struct session		sc_sess;
	struct store_rec	sc_stamp;
	uint64_t		sc_gen;	/* store_generation() then; 0: none */
	int			sc_used;
} session_cache[SESSION_CACHE];

static struct session_cached *
session_cache_slot(const char *id)
{
	uint32_t	h = 2166136261u;

	for (; *id != '\0'; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return &session_cache[h % SESSION_CACHE];
}

/* src's string (or NULL) into the block at *p */
static char *
session_pack_str(char **p, const char *src)
{
	char	*d = *p;
	size_t	 n;

	if (src == NULL)
		return NULL;
	n = strlen(src) + 1;
	memcpy(d, src, n);
	*p += n;
	return d;
}

/*
 * A deep copy: the caller may change it (subscriptions, backends).  It
 * is made on every request: the backends' array and the strings go in
 * one allocation (session_str_free() knows it), the JSON is shared
 * (never changed in place) or copied.
 */
static int
session_copy(struct session *dst, const struct session *src)
{
	const struct session_backend	*sb;
	struct session_backend		*db;
	size_t				 i, len;
	char				*p;

	memset(dst, 0, sizeof(*dst));
	memcpy(dst->s_id, src->s_id, sizeof(dst->s_id));
	dst->s_initialized = src->s_initialized;
	dst->s_created_ms = src->s_created_ms;
	dst->s_seen_ms = src->s_seen_ms;
	dst->s_max_ms = src->s_max_ms;
	dst->s_rstamp = src->s_rstamp;
	len = src->s_nbackends * sizeof(*dst->s_backends);
#define PACKLEN(x)	((x) != NULL ? strlen(x) + 1 : 0)
	len += PACKLEN(src->s_version) + PACKLEN(src->s_owner) +
	    PACKLEN(src->s_log_level);
	for (i = 0; i < src->s_nbackends; i++) {
		sb = &src->s_backends[i];
		len += PACKLEN(sb->sb_name) + PACKLEN(sb->sb_sid) +
		    PACKLEN(sb->sb_version);
	}
#undef PACKLEN
	if (len > 0 && (dst->s_pack = malloc(len)) == NULL)
		return -1;
	dst->s_packlen = len;
	/* the array first: malloc() aligns it */
	p = dst->s_pack + src->s_nbackends * sizeof(*dst->s_backends);
	dst->s_version = session_pack_str(&p, src->s_version);
	dst->s_owner = session_pack_str(&p, src->s_owner);
	dst->s_log_level = session_pack_str(&p, src->s_log_level);
	/* the names are distinct already: one array, no look-ups */
	if (src->s_nbackends > 0)
		dst->s_backends = (struct session_backend *)(void *)dst->s_pack;
	for (i = 0; i < src->s_nbackends; i++) {
		sb = &src->s_backends[i];
		db = &dst->s_backends[dst->s_nbackends++];
		db->sb_name = session_pack_str(&p, sb->sb_name);
		db->sb_sid = session_pack_str(&p, sb->sb_sid);
		db->sb_version = session_pack_str(&p, sb->sb_version);
	}
	/* capabilities and client info are never changed in place */
	dst->s_client_caps = json_incref(src->s_client_caps);
	dst->s_client_info = json_incref(src->s_client_info);
	if (src->s_subs != NULL &&
	    (dst->s_subs = json_deep_copy(src->s_subs)) == NULL) {
		session_clear(dst);
		return -1;
	}
	return 0;
}

static void
session_cache_put(const struct session *s, uint64_t updated_ms, size_t len)
{
	struct session_cached *sc = session_cache_slot(s->s_id);

	if (sc->sc_used)
		session_clear(&sc->sc_sess);
	sc->sc_used = session_copy(&sc->sc_sess, s) == 0;
	memset(&sc->sc_stamp, 0, sizeof(sc->sc_stamp));
	sc->sc_stamp.sr_updated_ms = updated_ms;
	sc->sc_stamp.sr_len = len;
	sc->sc_gen = 0;	/* the next load reads the stamp */
}

void
session_cache_free(void)
{
	size_t i;

	for (i = 0; i < SESSION_CACHE; i++)
		if (session_cache[i].sc_used) {
			session_clear(&session_cache[i].sc_sess);
			session_cache[i].sc_used = 0;
		}
}

/* the record's decoded copy, fresh: 0 (*cp set), or as session_load() */
static int
session_load_cached(struct store *st, const char *id, uint64_t now_ms,
    struct session *s, const struct session **cp)
{
	struct session_cached	*sc = session_cache_slot(id);
	struct store_rec	 rec;
	uint64_t		 gen;
	int			 rc, cached;

	memset(&rec, 0, sizeof(rec));
	cached = sc->sc_used && strcmp(sc->sc_sess.s_id, id) == 0;
	gen = store_generation(st);
	if (cached && gen != 0 && gen == sc->sc_gen &&
	    !store_rec_expired(sc->sc_stamp.sr_expires_ms, now_ms)) {
		if (cp != NULL) {
			*cp = &sc->sc_sess;
			return 0;
		}
		return session_copy(s, &sc->sc_sess);
	}
	rc = store_get_changed(st, STORE_SESSIONS, id, strlen(id), now_ms,
	    cached ? &sc->sc_stamp : NULL, &rec);
	if (rc == STORE_UNCHANGED) {
		sc->sc_stamp.sr_expires_ms = rec.sr_expires_ms;
		sc->sc_gen = gen;
		if (cp != NULL) {
			*cp = &sc->sc_sess;
			return 0;
		}
		return session_copy(s, &sc->sc_sess);
	}
	if (rc != 0)
		return rc;
	rc = session_decode(rec.sr_data, rec.sr_len, s);
	if (rc == -1) {
		store_rec_clear(&rec);
		log_warnx("session record %.8s... is corrupt; ignoring it", id);
		return STORE_NOTFOUND;
	}
	(void)snprintf(s->s_id, sizeof(s->s_id), "%s", id);
	session_cache_put(s, rec.sr_updated_ms, rec.sr_len);
	if (sc->sc_used) {
		sc->sc_stamp.sr_expires_ms = rec.sr_expires_ms;
		sc->sc_gen = gen;
	}
	store_rec_clear(&rec);
	if (cp != NULL)
		*cp = s;
	return 0;
}

int
session_load(struct store *st, const char *id, uint64_t now_ms,
    struct session *s)
{
	return session_load_cached(st, id, now_ms, s, NULL);
}

/* the Redis stamp of this host's copy (0: none), without copying it */
uint64_t
session_copy_stamp(struct store *st, const char *id, uint64_t now_ms)
{
	const struct session	*cp;
	struct session		 s;
	uint64_t		 v = 0;

	memset(&s, 0, sizeof(s));
	if (session_load_cached(st, id, now_ms, &s, &cp) == 0)
		v = cp->s_rstamp;
	session_clear(&s);
	return v;
}

/*
 * Redis has no such session (ended on another node, or expired or lost
 * there): this host's copy goes.  An expired one is the sweep's; a live
 * one that names backend sessions is queued to close them, as the sweep
 * would (backend_session_close.c asks Redis first): a Redis restarted empty lost the
 * session and nothing else closes them (after a DELETE elsewhere, which
 * closed them, a second DELETE is a harmless 404).
 */
void
session_copy_gone(struct store *st, const char *id, uint64_t now_ms)
{
	struct store_rec	rec;
	size_t			len = strlen(id);

	memset(&rec, 0, sizeof(rec));
	if (store_get(st, STORE_SESSIONS, id, len, now_ms, &rec) != 0)
		return;
	if ((rec.sr_flags & STORE_F_CLOSE) && store_put_ext(st,
	    STORE_CLOSING, id, len, rec.sr_data, rec.sr_len, now_ms +
	    STORE_CLOSING_TTL_MS, now_ms, 0, NULL, 0) == -1)
		log_warnx("session %.8s...: its backend sessions not queued "
		    "to close", id);
	store_rec_clear(&rec);
	(void)store_del(st, STORE_SESSIONS, id, len);
}

/*
 * A session encoded as rec, written to this host's store (lim: a new
 * one under the caps); once it names a backend session, its end closes
 * that (backend_session_close.c).  What was written is the record now: cached, not
 * decoded again.  A copy of Redis's record (session_redis.c) is
 * written the same way, so that the node whose copy expires last
 * closes them, after asking Redis whether it lives on.
 */
int
session_write(struct store *st, const struct session *s, const char *rec,
    size_t len, uint64_t ttl_ms, uint64_t now_ms,
    const struct store_limit *lim)
{
	int rc;

	if (lim != NULL)
		rc = store_add_limited(st, STORE_SESSIONS, s->s_id,
		    strlen(s->s_id), rec, len, session_expiry(s, ttl_ms),
		    now_ms, lim);
	else
		rc = store_put_ext(st, STORE_SESSIONS, s->s_id,
		    strlen(s->s_id), rec, len, session_expiry(s, ttl_ms),
		    now_ms, session_holds_backends(s) ? STORE_F_CLOSE : 0,
		    NULL, 0);
	if (rc == 0)
		session_cache_put(s, now_ms, len);
	return rc;
}

static int
session_lmdb_put(struct store *st, const struct session *s, uint64_t ttl_ms,
    uint64_t now_ms, const struct store_limit *lim)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	if (session_encode(s, &buf, &len) == -1)
		return -1;
	rc = session_write(st, s, buf, len, ttl_ms, now_ms, lim);
	free(buf);
	return rc;
}

static int
session_lmdb_delete(struct store *st, const char *id)
{
	return store_del(st, STORE_SESSIONS, id, strlen(id));
}

/* one host: every node has it already */
static int
session_lmdb_publish(const struct session *s, uint64_t ttl_ms,
    uint64_t now_ms, void (*done)(void *, int), void *arg)
{
	(void)s;
	(void)ttl_ms;
	(void)now_ms;
	done(arg, 0);
	return 0;
}

static int
session_lmdb_unpublish(const char *id, void (*done)(void *, int), void *arg)
{
	(void)id;
	done(arg, 0);
	return 0;
}

/* the host's copy is the session */
static int
session_lmdb_sync(struct worker *w, struct httpd_req *req,
    session_cont_fn cont)
{
	(void)w;
	(void)req;
	(void)cont;
	return SESSION_SYNC_GO;
}

const struct session_store session_store_lmdb = {
	session_lmdb_put,
	session_lmdb_delete,
	session_lmdb_publish,
	session_lmdb_unpublish,
	session_lmdb_sync
};
const struct session_store *session_store = &session_store_lmdb;

int
session_save(struct store *st, const struct session *s, uint64_t ttl_ms,
    uint64_t now_ms)
{
	return session_store->ss_put(st, s, ttl_ms, now_ms, NULL);
}

/* a new session under the caps: store_add_limited()'s answers */
int
session_create(struct store *st, const struct session *s, uint64_t ttl_ms,
    uint64_t now_ms, const struct store_limit *lim)
{
	return session_store->ss_put(st, s, ttl_ms, now_ms, lim);
}

/* a read-through copy of the Redis record (stamp s_rstamp) */
int
session_put_copy(struct store *st, const struct session *s, uint64_t ttl_ms,
    uint64_t now_ms)
{
	return session_lmdb_put(st, s, ttl_ms, now_ms, NULL);
}

/*
 * The group a client's sessions count in (sessions.maxPerAddress), as
 * text: http_addr_group()'s, the one a connection counts in too.
 */
int
session_client_group(const struct sockaddr *sa, socklen_t salen, char *buf,
    size_t buflen)
{
	unsigned char	 key[HTTP_GROUP_LEN];
	char		 text[INET6_ADDRSTRLEN];
	int		 family;

	if (http_addr_group(sa, salen, &family, key) == -1 ||
	    inet_ntop(family, key, text, sizeof(text)) == NULL)
		return -1;
	return snprintf(buf, buflen, family == AF_INET6 ? "%s/64" : "%s",
	    text) < (int)buflen ? 0 : -1;
}

int
session_delete(struct store *st, const char *id)
{
	return session_store->ss_delete(st, id);
}

struct session_backend *
session_backend_get(struct session *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->s_nbackends; i++)
		if (strcmp(s->s_backends[i].sb_name, name) == 0)
			return &s->s_backends[i];
	return NULL;
}

int
session_backend_set(struct session *s, const char *name, const char *sid,
    const char *version)
{
	struct session_backend	*sb, *nb;
	char			*nsid = NULL, *nver = NULL, *nname = NULL;

	if ((sid != NULL && (nsid = strdup(sid)) == NULL) ||
	    (version != NULL && (nver = strdup(version)) == NULL))
		goto fail;
	if ((sb = session_backend_get(s, name)) == NULL) {
		if ((nname = strdup(name)) == NULL)
			goto fail;
		/* an array in session_copy()'s block stays there */
		if ((char *)s->s_backends == s->s_pack && s->s_pack != NULL) {
			if ((nb = reallocarray(NULL, s->s_nbackends + 1,
			    sizeof(*nb))) == NULL)
				goto fail;
			memcpy(nb, s->s_backends, s->s_nbackends *
			    sizeof(*nb));
		} else if ((nb = reallocarray(s->s_backends,
		    s->s_nbackends + 1, sizeof(*nb))) == NULL)
			goto fail;
		s->s_backends = nb;
		sb = &s->s_backends[s->s_nbackends++];
		memset(sb, 0, sizeof(*sb));
		sb->sb_name = nname;
	}
	session_str_free(s, sb->sb_sid);
	session_str_free(s, sb->sb_version);
	sb->sb_sid = nsid;
	sb->sb_version = nver;
	return 0;
fail:
	free(nsid);
	free(nver);
	free(nname);
	return -1;
}
