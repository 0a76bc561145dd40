/*
 * Backend sessions that belong to an identity scope rather than to a
 * client session (backend_session.c; docs/ARCHITECTURE.md, Synthesized backend
 * sessions): the 2025-11-25 sessions vmcpd opens itself, kept in the
 * store's "bsessions" db under "scope|backend" so that every process
 * uses the same one.
 *
 * Two kinds of scope.  The shared one, "anon": lists, the notification
 * listener, resource subscriptions, and the requests of anonymous
 * 2026-07-28 clients; it lives BSESSION_TTL_MS from its open.  A
 * principal's (its hex scope, auth.h): that principal's requests on
 * every worker; it slides (sessions.backendSessionTtl after its last
 * use, stamped at most every BSESSION_TOUCH_MS), is closed at the
 * backend when it expires (STORE_F_CLOSE: the sweep queues it in
 * "closing", backend_session_close.c sends the DELETE), and at most
 * sessions.maxBackendSessions are kept per backend, the least recently
 * used evicted (and closed) for a new one.
 *
 * Whatever the scope, one initialize is in flight per (scope, backend)
 * across the processes: "lock|scope|backend" holds the opener's pid
 * while it opens, and the others wait for the record (upstream_open.c);
 * after a failure the next one tries.  With
 * sessionStorage.provider redis a principal's is also one across the
 * nodes (backend_session_redis.c).
 */
#ifndef VMCPD_BSESSION_H
#define VMCPD_BSESSION_H

#include <stddef.h>
#include <stdint.h>

struct worker;
struct principal;
struct config_backend;

#define BSESSION_SCOPE_ANON	"anon"
#define BSESSION_TTL_MS		(60ULL * 60 * 1000)	/* the shared scope's */
#define BSESSION_TOUCH_MS	1000	/* a principal's last use, stamped */
/* per-principal sessions are counted in the group "p|<backend>" */
#define BSESSION_GROUP_MAX	64

/* what a request asks a backend session for */
enum bsession_use {
	/* on a principal's behalf: a call, a read, a completion, a
	 * composite's step, an MRTR round */
	BSESSION_FOR_USER = 0,
	/* what no user owns: lists, the notification listener, resource
	 * subscriptions (one stream serves every subscriber) */
	BSESSION_FOR_SHARED
};

/*
 * The identity scope a request of principal p (NULL: anonymous) to be
 * goes under: the principal's for its own requests, and for anything
 * at all to a token_exchange backend (which needs its token); else the
 * shared scope.
 */
const char *bsession_scope(const struct principal *p,
	    const struct config_backend *be, enum bsession_use);

/* a principal's scope (sliding, closed when idle, capped) */
int	 bsession_per_principal(const char *scope);

/* the session of (scope, be): 0 with *sid (NULL: the backend gave
 * none) and *ver malloc'd, or -1; a principal's use is stamped (at most
 * every BSESSION_TOUCH_MS) */
int	 bsession_load(struct worker *, const char *scope,
	    const struct config_backend *, char **sid, char **ver);
/*
 * Record the session just opened for (scope, be): 0, 1 when another
 * process's is recorded already (this one is not: the caller closes
 * it), -1.  A principal's beyond sessions.maxBackendSessions evicts the
 * least recently used of the backend's, closed once its calls are over.
 */
int	 bsession_save(struct worker *, const char *scope,
	    const struct config_backend *, const char *sid, const char *ver);
/* the backend forgot it: the record goes, nothing to close */
void	 bsession_forget(struct worker *, const char *scope,
	    const struct config_backend *);

/*
 * One open per (scope, be) across the processes.  bsession_lock(): 0
 * this process opens (bsession_unlock() once it is recorded or failed),
 * or 1 another does (wait for the record).  bsession_locked(): 1 while
 * another opens, without taking the lock.
 */
int	 bsession_lock(struct worker *, const char *scope,
	    const struct config_backend *);
int	 bsession_locked(struct worker *, const char *scope,
	    const struct config_backend *);
void	 bsession_unlock(struct worker *, const char *scope,
	    const struct config_backend *);
/* how long a process waits for another's open (then fails) */
uint64_t bsession_lock_ms(const struct config_backend *);

/* a closing record's key ("scope|backend"): 1 with the backend's name
 * (NUL-terminated in name), or 0 (a client session's id) */
int	 bsession_closing_key(const void *key, size_t klen, char *name,
	    size_t len);
/* a session record's payload: 0 with *sid and *ver malloc'd, or -1 */
int	 bsession_decode(const char *data, size_t len, char **sid,
	    char **ver);

/* pure, for unit tests (test_bsession.c) */
const char *bsession_scope_pick(const char *pscope, int texch,
	    enum bsession_use);
/* the last use stamped at updated_ms is to be stamped again now */
int	 bsession_touch_due(uint64_t updated_ms, uint64_t now_ms);
/* the group a principal's sessions of backend are counted in: its
 * length, 0 if it does not fit */
size_t	 bsession_group(char *buf, size_t len, const char *backend);

#endif /* VMCPD_BSESSION_H */
