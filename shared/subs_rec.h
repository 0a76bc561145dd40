/*
 * Resource subscriptions' records in the store's subs db, pure (keys,
 * values, the reconciler's decisions): written by shared/store_subs.c,
 * read by worker/events/subs.c and vmcpctl.  docs/ARCHITECTURE.md, Resource
 * subscriptions.
 *
 *   h|<holder>|<uri key>|<backend key>	a holding: ["backend", "uri"],
 *					grouped by its principal
 *   k|<backend key>|<uri key>|<holder>	its index entry, same value
 *   m|<backend key>|<uri key>		made at the backend: ["backend",
 *					"uri", "scope session id"]
 *   d|<backend key>|<uri key>		a mark: the first holder came or
 *					the last went: ["backend", "uri"]
 *   p|<pid>.<start>			a worker that holds listen streams
 *
 * A holder is "s" and a Legacy session's id, or "l<pid>.<start>.<n>"
 * for the n-th subscriptions/listen stream of the worker pid started
 * at start (its /proc start time, in clock ticks since boot: a pid
 * used again is another process).  The URI and backend keys are hex
 * of the first 128 and 64 bits of SHA-256: fixed widths, so that no
 * backend name or URI can make one key the prefix of another's.
 */
#ifndef VMCPD_SUBS_REC_H
#define VMCPD_SUBS_REC_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define SUBS_UK_LEN	32	/* hex, 128 bits */
#define SUBS_BK_LEN	16	/* hex, 64 bits */
#define SUBS_HOLDER_MAX	64
#define SUBS_KEY_MAX	(2 + SUBS_HOLDER_MAX + 1 + SUBS_UK_LEN + 1 + \
			    SUBS_BK_LEN)

#define SUBS_HOLD	'h'
#define SUBS_WANT	'k'
#define SUBS_MADE	'm'
#define SUBS_DIRTY	'd'
#define SUBS_WORKER	'p'

void	 subs_uri_key(const char *uri, char out[SUBS_UK_LEN + 1]);
void	 subs_backend_key(const char *backend, char out[SUBS_BK_LEN + 1]);

/* holders: 0, or -1 (too long) */
int	 subs_holder_session(const char *sid, char *out, size_t outlen);
int	 subs_holder_listen(pid_t, uint64_t start, uint64_t n, char *out,
	    size_t outlen);
/* a listen holder's worker: 0, or -1 (a session's, or malformed) */
int	 subs_holder_worker(const char *holder, size_t len, pid_t *,
	    uint64_t *start);

/*
 * Keys, written to buf (at least SUBS_KEY_MAX bytes): their length, or
 * 0 if a part does not fit.  The prefixes end with their '|'.
 */
size_t	 subs_key_hold(char *buf, const char *holder, const char *uk,
	    const char *bk);
size_t	 subs_prefix_holder(char *buf, const char *holder);
size_t	 subs_prefix_holder_uri(char *buf, const char *holder,
	    const char *uk);
/* a holder's holdings, or of one URI (uri not NULL) only */
size_t	 subs_prefix_release(char *buf, const char *holder, const char *uri);
size_t	 subs_key_pair(char *buf, char kind, const char *bk, const char *uk);
size_t	 subs_prefix_want(char *buf, const char *bk, const char *uk);
size_t	 subs_prefix_backend(char *buf, char kind, const char *bk);
size_t	 subs_key_worker(char *buf, pid_t, uint64_t start);
/* a worker's key's prefix of its holdings, h|l<pid>.<start>. */
size_t	 subs_prefix_worker_holds(char *buf, const char *wkey, size_t wlen);

/*
 * From a holding's key (h|), its index entry's key (k|) and that key's
 * prefix up to the URI key (*plen: every holder of the pair), and the
 * pair's mark (d|): 0, or -1 if hkey is no holding's key.
 */
int	 subs_key_of_hold(const void *hkey, size_t hklen, char *kbuf,
	    size_t *klen, size_t *plen, char *dbuf, size_t *dlen);
/* a pair key's (m|, d|, k|) backend and URI keys: 0, or -1 */
int	 subs_key_split(const void *key, size_t klen, char bk[SUBS_BK_LEN + 1],
	    char uk[SUBS_UK_LEN + 1]);

/* values: JSON arrays ["backend", "uri"] or ["backend", "uri", "bsid"] */
struct subs_val {
	char	*sv_backend;
	char	*sv_uri;
	char	*sv_bsid;	/* m| only, else NULL */
};
/* a malloc'd value (bsid may be NULL): 0, or -1 */
int	 subs_val_encode(const char *backend, const char *uri,
	    const char *bsid, char **buf, size_t *len);
int	 subs_val_decode(const void *buf, size_t len, struct subs_val *);
void	 subs_val_clear(struct subs_val *);

/* the start time (field 22) of a /proc/PID/stat text: 0, or -1 */
int	 subs_stat_start(const char *buf, size_t len, uint64_t *start);

/*
 * What the backend needs for one (backend, URI): wanted (a holder
 * left), made (made_bsid: the scope session it was made on, NULL if
 * none), on the scope session listened to now (cur_bsid).
 */
enum subs_act {
	SUBS_ACT_NONE = 0,
	SUBS_ACT_SUBSCRIBE,	/* on cur_bsid, recorded first */
	SUBS_ACT_UNSUBSCRIBE,	/* the record dropped once it is answered */
	SUBS_ACT_FORGET		/* made on a session gone: the record goes */
};
enum subs_act subs_decide(int wanted, const char *made_bsid,
	    const char *cur_bsid);

/*
 * How many marks the reconciler takes now: room in its queue (queued
 * of qmax) while fewer than max calls are in flight; 0 when the calls
 * are all out (a completion takes the next).
 */
size_t	 subs_take_count(size_t inflight, size_t max, size_t queued,
	    size_t qmax);

#endif /* VMCPD_SUBS_REC_H */
