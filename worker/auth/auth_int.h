/*
 * Internals of incoming authentication shared by its files: auth.c
 * (principals, answers, waiting requests, the check, setup),
 * auth_keys.c (the issuer's JWKS fetched, stored and read),
 * auth_intro.c (an opaque token's introspection).  Not for the rest of
 * the worker: its interface is auth.h.
 */
#ifndef VMCPD_AUTH_INT_H
#define VMCPD_AUTH_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "shared/jwt.h"
#include "shared/store.h"
#include "worker/auth/auth.h"
#include "worker/process/request_hold.h"

struct config_oidc;
struct event;
struct http_call;

struct auth_wait {
	TAILQ_ENTRY(auth_wait)	 aw_entry;
	struct reqhold		 aw_hold;	/* worker, request, gone */
	auth_cont_fn		 aw_cont;
	uint64_t		 aw_deadline;
	/* introspection of an opaque token */
	struct http_call	*aw_call;
	char			*aw_tok;	/* its cache key */
	size_t			 aw_toklen;
	char			*aw_buf;
	size_t			 aw_len;
	int			 aw_done;	/* answered: resume */
	struct principal	*aw_p;		/* its verdict, or NULL */
	const char		*aw_why;
	int			 aw_intro;	/* counted in a_nintro */
};

/* the worker's authentication state (auth_init() fills it) */
struct auth_state {
	struct worker		*a_w;
	const struct config_oidc *a_oi;
	int			 a_on;		/* oidc */
	int			 a_local;	/* local: SO_PEERCRED */
	char			 a_jwks_key[48];
	char			 a_lock_key[48];
	char			 a_refetch_key[48];
	char			 a_next_key[48];	/* next refresh */
	struct jwks		 a_jwks;
	struct store_rec	 a_have;	/* the stamp a_jwks came from */
	struct event		*a_tick;
	struct http_call	*a_call;	/* a fetch in flight */
	int			 a_discovery;	/* a_call is discovery */
	char			*a_buf;
	size_t			 a_len;
	TAILQ_HEAD(, auth_wait)	 a_waits;
	size_t			 a_nintro;	/* introspections in flight */
	struct auth_cache	*a_cache;
};
extern struct auth_state auth;

/* auth.c */
int64_t	 auth_now(void);
void	 principal_unref(void *);
struct principal *principal_new(json_t *claims, int64_t exp);
struct auth_wait *auth_wait_new(struct worker *, struct httpd_req *,
	    auth_cont_fn);
void	 auth_wait_end(struct auth_wait *);
void	 auth_resume_all(int force);

/* auth_keys.c */
struct http_call *auth_call_new(struct worker *, const char *method,
	    const char *url);
void	 auth_keys_load(struct worker *);
int	 auth_refresh_due(struct worker *, uint64_t now);
int	 auth_keys_kick(struct worker *);
int	 auth_keys_unknown_kid(struct worker *);

/* auth_intro.c */
int	 auth_introspect(struct worker *, struct httpd_req *, auth_cont_fn,
	    const char *tok);

#endif /* VMCPD_AUTH_INT_H */
