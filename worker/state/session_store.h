/*
 * Where Legacy sessions live (sessionStorage.provider), chosen once at
 * start: this host's store alone (session.c), or this host's store as
 * a copy of Redis's record (session_redis.c, which installs itself from
 * session_redis_init()).  Feature code calls through session_store and
 * never asks which it is; session_save(), session_create() and
 * session_delete() (worker.h) go through it too.
 */
#ifndef VMCPD_SESSION_STORE_H
#define VMCPD_SESSION_STORE_H

#include <stddef.h>
#include <stdint.h>

struct worker;
struct httpd_req;
struct store;
struct store_limit;
struct session;

/* the request goes on (cont(w, req) runs now or later) or is answered */
typedef void	(*session_cont_fn)(struct worker *, struct httpd_req *);
#define SESSION_SYNC_GO		0	/* go on now: the copy is current */
#define SESSION_SYNC_LATER	1	/* cont() runs, or it is answered */

struct session_store {
	/* s written (lim: a new one, under the caps): store_add_limited()'s
	 * or store_put_ext()'s answers */
	int	(*ss_put)(struct store *, const struct session *,
		    uint64_t ttl_ms, uint64_t now_ms,
		    const struct store_limit *);
	int	(*ss_delete)(struct store *, const char *id);
	/* a new session known to every node: done(arg, 0), or
	 * done(arg, -1) if it cannot be; -1: done is not called */
	int	(*ss_publish)(const struct session *, uint64_t ttl_ms,
		    uint64_t now_ms, void (*done)(void *, int), void *arg);
	/* a client's DELETE seen by every node first: as ss_publish */
	int	(*ss_unpublish)(const char *id, void (*done)(void *, int),
		    void *arg);
	/* before a request with Mcp-Session-Id goes on: SESSION_SYNC_* */
	int	(*ss_sync)(struct worker *, struct httpd_req *,
		    session_cont_fn);
};

extern const struct session_store *session_store;
/* this host's store alone, the default */
extern const struct session_store session_store_lmdb;

/* s encoded as rec written to the host's store and cached (session.c) */
int	 session_write(struct store *, const struct session *,
	    const char *rec, size_t len, uint64_t ttl_ms, uint64_t now_ms,
	    const struct store_limit *);

#endif /* VMCPD_SESSION_STORE_H */
