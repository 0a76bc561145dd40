/*
 * Per-user upstream accounts: outgoingAuth type authorization_code
 * (docs/ARCHITECTURE.md, "Linking users' accounts").  A call to such a
 * backend by a principal holding no usable link of its own is not sent:
 * the client is sent to a URL of vmcpd's (URL-mode elicitation), where
 * the person logs in at the clients' identity provider (the same
 * principal, or nothing is linked) and then consents at the backend's
 * authorization server; vmcpd keeps the tokens (link_store.h) and
 * sends them, refreshed, on that principal's calls.
 *
 *	link_web.c	/oauth/start and /oauth/callback on the main
 *			listener, the pages the person sees
 *	link_token.c	the token endpoint: a code's exchange, a refresh
 *			(one in flight per link across workers and nodes)
 *	link_phase.c	the pipeline's credential phase: a link, or a
 *			consent (the codec's rc_consent); set on the
 *			pipeline by worker.c (pipeline_credential_set())
 *	link_answer.c	what the codecs answer a consent with
 *	link_state.c	a 2026-07-28 consent round's sealed requestState
 */
#ifndef VMCPD_LINK_H
#define VMCPD_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "worker/pipeline/pipeline.h"
#include "worker/process/counters.h"

struct config_backend;
struct httpd_req;
struct principal;
struct worker;

/* an access token this close to its expiry is refreshed first */
#define LINK_MARGIN_MS		(60ULL * 1000)
#define LINK_URL_MAX		2048

enum link_state {
	LINK_OK = 0,		/* a usable link: the call goes on */
	LINK_NEEDED,		/* none, or refused upstream: consent */
	LINK_FAILED		/* could not tell (store, upstream down) */
};

typedef void	(*link_state_cb)(void *arg, enum link_state);


/* be's outgoingAuth is authorization_code (worker/state/link_backend.c,
 * declared in link_store.h too, for the rooms below this one) */
int	 link_backend(const struct config_backend *);
/* the worker's end: what the room keeps (metadata, refreshes) freed */
void	 link_free(void);

/* link_web.c: 1 if path is /oauth/start or /oauth/callback (answered),
 * else 0 */
int	 link_web(struct worker *, struct httpd_req *, const char *path);

/*
 * link_token.c: the link of (scope, be) refreshed with its refresh
 * token, one refresh in flight per link across the workers (and the
 * nodes, with Redis); cb(arg, LINK_OK) once it is stored,
 * LINK_NEEDED when the upstream server refused it (the link is
 * dropped), LINK_FAILED else.  -1: cb will not be called.
 */
int	 link_refresh(struct worker *, const struct config_backend *,
	    const char *scope, link_state_cb, void *arg);
void	 link_refresh_cancel(void *arg);

/*
 * link_phase.c: a new consent for p's call to be (sid: the 2025-11-25
 * session to tell of its completion, or NULL), stored; cb(arg, 0, id,
 * url) with the elicitationId and the URL the person opens, or cb(arg,
 * -1, NULL, NULL).  -1: cb will not be called.  The URL is the origin
 * of be's callbackUrl, then "/oauth/start?consent=" and the id
 * (link_consent_url()): what /oauth/start reads.
 */
typedef void	(*consent_new_cb)(void *arg, int rc, const char *id,
		    const char *url);
int	 link_consent_new(struct worker *, const struct principal *,
	    const struct config_backend *, const char *sid, consent_new_cb,
	    void *arg);
/* arg's pending link_consent_new() dropped: cb will not be called */
void	 link_consent_cancel(void *arg);
/* the URL of consent id for be, in url: 0, or -1 (too long) */
int	 link_consent_url(const struct config_backend *, const char *id,
	    char *url, size_t len);

/*
 * link_phase.c: the pipeline's credential phase (pipeline.h,
 * PIPELINE_CREDENTIAL) for a request r (struct request) routed to a
 * backend of link_backend(): NEXT with a usable link, WAIT while the
 * store or a refresh answers, DONE once answered (a consent through
 * the codec's rc_consent, or an error).  link_phase_cancel(): r's wait
 * dropped (the request ends).
 */
enum pipeline_rc link_phase(struct request *);
void	 link_phase_cancel(struct request *);

/* a codec's rc_consent_answer() */
#define LINK_ANSWER_NONE	0	/* not an answer to a consent */
#define LINK_ANSWER_ACCEPTED	1	/* the person says it is done */
#define LINK_ANSWER_DONE	2	/* the request answered */

/*
 * The requestState of a 2026-07-28 consent round (modern_consent.c):
 * sealed (shared/seal.h: AES-GCM, so altered it does not open) over
 * the principal's scope, the backend, the consent id, the round and
 * an expiry (CONSENT_TTL_MS).  link_state_seal(): the string in out,
 * 0 or -1.  link_state_open(): 0 with the consent's id and round if s
 * is one of these, sealed here, for this scope and backend, and not
 * expired; -1 else.  link_state_ours(): s has the prefix.
 */
#define LINK_STATE_PREFIX	"vmcpd-l-"
#define LINK_STATE_MAX		1024
int	 link_state_seal(const char *scope, const char *backend,
	    const char *id, int round, uint64_t now_ms, char *out,
	    size_t len);
int	 link_state_open(const char *s, const char *scope,
	    const char *backend, uint64_t now_ms, char *id, size_t idlen,
	    int *round);
int	 link_state_ours(const char *s);
/* a consent's inputRequests key */
#define LINK_INPUT_KEY		"vmcpd-consent"
/* rounds of a consent's input_required for one call (as MRTR_ROUNDS) */
#define LINK_ROUNDS		10
/* the message of a consent's elicitation and of its refusals */
#define LINK_CONSENT_FMT	"%s needs your consent: open the link to " \
				"connect your account"
/*
 * What the codecs answer with (new references, NULL: no memory): the
 * URL-mode elicitation's params (with elicitationId for 2025-11-25,
 * without for a 2026-07-28 inputRequest: id NULL), and the tool result
 * with isError for a client that declared no URL mode; link_consent_text()
 * its text (names the backend and the URL).
 */
json_t	*link_consent_elicit(const char *backend, const char *id,
	    const char *url);
json_t	*link_consent_result(const char *backend, const char *url);
void	 link_consent_text(const char *backend, const char *url, char *buf,
	    size_t len);
/* the client declared URL-mode elicitation (caps: its capabilities) */
int	 link_caps_url(const json_t *caps);
#define LINK_CONSENT_TEXT_FMT	"Backend %s acts as your own account " \
				"there, which is not linked yet: open %s " \
				"to connect it, then try again"

#endif /* VMCPD_LINK_H */
