/*
 * A token endpoint's answer (RFC 6749 5.1, 5.2; RFC 8693 2.2.1; OpenID
 * Connect Core 3.1.3.3), parsed: one pure parser for every grant vmcpd
 * asks for (a token exchange, an authorization code, a refresh),
 * fuzzed (tests/fuzz/fuzz_oauth_token.c).  No message ever quotes a
 * token.
 */
#ifndef VMCPD_OAUTH_TOKEN_H
#define VMCPD_OAUTH_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define OAUTH_TOKEN_MAX		(16 * 1024 - 8)	/* any token's bytes */
#define OAUTH_SCOPE_MAX		1024
#define OAUTH_ERROR_MAX		40	/* an error code kept */

/* flags */
#define OAUTH_EXCHANGE		0x1	/* RFC 8693: issued_token_type */

struct oauth_token {
	char	*ot_access;	/* a b64token (RFC 6750 2.1) */
	char	*ot_refresh;	/* VSCHARs (RFC 6749 A.17), or NULL */
	char	*ot_id_token;	/* a compact JWS's characters, or NULL */
	char	*ot_scope;	/* NQSCHARs and spaces, or NULL */
	int64_t	 ot_expires_in;	/* seconds; 0: not said */
};

/*
 * A 200 answer: 0 with *t filled (malloc'd strings, at most max bytes
 * a token), or -1 with why and *t empty.
 */
int	 oauth_token_parse(const char *body, size_t len, int flags,
	    size_t max, struct oauth_token *t, char *why, size_t whylen);
/* the strings wiped and freed */
void	 oauth_token_clear(struct oauth_token *);
/*
 * An error answer (RFC 6749 5.2): its error code, printable and at
 * most OAUTH_ERROR_MAX bytes, into code ("" when there is none).
 */
void	 oauth_token_error(const char *body, size_t len, char *code,
	    size_t codelen);

#endif /* VMCPD_OAUTH_TOKEN_H */
