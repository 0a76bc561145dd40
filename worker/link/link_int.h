/*
 * The link room's internals (link.h): the token endpoint client
 * (link_token.c), an authorization server's metadata (link_meta.c) and
 * the pure pieces of the web leg (link_page.c, fuzzed by
 * tests/fuzz/fuzz_link_page.c).
 */
#ifndef VMCPD_LINK_INT_H
#define VMCPD_LINK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "shared/oauth_token.h"

struct worker;
struct http_call;

/* a token endpoint's answer, told once */
enum link_tok_rc {
	LINK_TOK_OK = 0,
	LINK_TOK_REFUSED,	/* an RFC 6749 5.2 error (code says) */
	LINK_TOK_FAILED		/* unreachable, 5xx, garbled */
};
typedef void	(*link_tok_cb)(void *arg, enum link_tok_rc,
		    struct oauth_token *, const char *code, const char *why);

/* where and as whom a token request is sent */
struct link_tok_client {
	const char	*ltc_url;
	const char	*ltc_cafile;	/* or NULL */
	const char	*ltc_id;
	const char	*ltc_secret;	/* or NULL */
	int		 ltc_post;	/* client_secret_post, not Basic */
	int		 ltc_public_only;	/* no private address */
};

/*
 * POST the form (NULL-terminated name, value pairs) to the token
 * endpoint; cb(arg, ...) once, later, with the answer (the token's
 * strings the callee's to take or leave: they are cleared after cb).
 * NULL: not sent, cb never called.
 */
struct link_tok	*link_tok_post(struct worker *, const struct link_tok_client *,
		    const char *const *form, link_tok_cb, void *arg);
void		 link_tok_cancel(struct link_tok *);
void		 link_tok_free_all(void);

/*
 * An authorization server's metadata (RFC 8414, OpenID Connect
 * Discovery), fetched once per worker and kept: cb(arg, 0, authorize,
 * token) or cb(arg, -1, NULL, NULL); at once when known.  issuer's
 * documents are tried in order (oidc: openid-configuration only).
 */
typedef void	(*link_meta_cb)(void *arg, int rc, const char *authorize,
		    const char *token);
int	 link_meta_get(struct worker *, const char *issuer, int oidc,
	    const char *cafile, int public_only, link_meta_cb, void *arg);
void	 link_meta_cancel(void *arg);
void	 link_meta_free_all(void);

/* be's authorization and token endpoints: configured, or from its
 * issuer's metadata (as link_meta_get()) */
struct config_backend;
int	 link_endpoints(struct worker *, const struct config_backend *,
	    link_meta_cb, void *arg);
/* the upstream server's client for be at token_url */
void	 link_tok_client_of(const struct config_backend *,
	    const char *token_url, struct link_tok_client *);
void	 link_refresh_free_all(void);

/* link_page.c, pure */
#define LINK_COOKIE_PREFIX	"vmcpd_"
/* the value of the query parameter name of q, decoded: 0, -1 none or
 * too long or holding a control character */
int	 link_query_get(const char *q, const char *name, char *out,
	    size_t outlen);
/* state "<consent id>.<nonce>" split and checked: 0, or -1 */
int	 link_state_split(const char *state, char *id, size_t idlen,
	    char *nonce, size_t noncelen);
/* the cookie proving a leg's browser: derived from its verifier */
int	 link_cookie_value(const char *verifier, char *out, size_t len);
/* the value of cookie name in a Cookie header: 0, or -1 */
int	 link_cookie_get(const char *hdr, const char *name, char *out,
	    size_t outlen);
/* s HTML-escaped (& < > " ' ), malloc'd; NULL: no memory */
char	*link_html_escape(const char *s);

#endif /* VMCPD_LINK_INT_H */
