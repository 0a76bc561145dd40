/*
 * Per-user upstream accounts (outgoingAuth type authorization_code): the
 * records.  A link is what one principal (identity scope) holds for one
 * backend: that person's own tokens from the backend's authorization
 * server, obtained through a consent (RFC 6749 4.1 with PKCE, RFC
 * 7636).  A consent is one pending elicitation: who asked, for which
 * backend, and the two legs' secrets (the person's login at vmcpd's
 * identity provider, then the upstream authorization server).
 *
 * Where they live: worker/state/link_store.h.  A link's tokens and a
 * consent's secrets are sealed at rest (shared/seal.h); what vmcpctl
 * shows (the principal, the backend, the expiry) is not.  Pure: no I/O.
 */
#ifndef VMCPD_LINK_REC_H
#define VMCPD_LINK_REC_H

#include <stddef.h>
#include <stdint.h>

#define LINK_NAME_MAX		128	/* a backend's name */
#define LINK_ISS_MAX		512	/* the principal's issuer */
#define LINK_SUB_MAX		256	/* its subject */
#define LINK_SCOPE_MAX		64	/* an identity scope (auth.h) */
#define LINK_TOKEN_MAX		(8 * 1024)	/* an access or refresh token */
#define LINK_SID_MAX		128	/* a 2025-11-25 session id */

/* a consent's id: the elicitationId, and in the URL the person opens */
#define CONSENT_PREFIX		"vmcpd-e-"
#define CONSENT_RAND_BYTES	16	/* 128 random bits */
#define CONSENT_ID_LEN		(8 + 32)	/* prefix, lower-case hex */
/* a leg's state nonce and PKCE verifier (RFC 7636 4.1: 43 to 128) */
#define CONSENT_NONCE_LEN	43
#define CONSENT_VERIFIER_LEN	64
/* a consent not completed within this is refused */
#define CONSENT_TTL_MS		(10ULL * 60 * 1000)

/* a link: one principal's tokens for one backend */
struct link_rec {
	char		 lr_backend[LINK_NAME_MAX + 1];
	char		 lr_iss[LINK_ISS_MAX + 1];	/* for vmcpctl */
	char		 lr_sub[LINK_SUB_MAX + 1];	/* for vmcpctl */
	uint64_t	 lr_linked_ms;		/* consent completed */
	uint64_t	 lr_refreshed_ms;	/* last refresh, or 0 */
	uint64_t	 lr_expires_ms;		/* the access token's; 0: none said */
	/* sealed at rest; "" when absent */
	char		 lr_access[LINK_TOKEN_MAX + 1];
	char		 lr_refresh[LINK_TOKEN_MAX + 1];
};

enum consent_leg {
	CONSENT_LOGIN = 0,	/* waiting for the person's login at the IdP */
	CONSENT_UPSTREAM	/* logged in: waiting for the upstream AS */
};

/* a pending consent, sealed whole at rest */
struct consent_rec {
	char		 cr_id[CONSENT_ID_LEN + 1];
	char		 cr_scope[LINK_SCOPE_MAX + 1];	/* who asked */
	char		 cr_iss[LINK_ISS_MAX + 1];
	char		 cr_sub[LINK_SUB_MAX + 1];
	char		 cr_backend[LINK_NAME_MAX + 1];
	char		 cr_sid[LINK_SID_MAX + 1];	/* "" but for 2025-11-25 */
	enum consent_leg cr_leg;
	uint64_t	 cr_created_ms;
	uint64_t	 cr_expires_ms;
	/* the current leg's: its state's nonce and its PKCE verifier (a
	 * leg's callback must match them, and the next leg replaces
	 * them: each is used once) */
	char		 cr_nonce[CONSENT_NONCE_LEN + 1];
	char		 cr_verifier[CONSENT_VERIFIER_LEN + 1];
};

/*
 * The codecs (shared/link_rec.c), fuzzed (tests/fuzz/fuzz_link_rec.c):
 * a payload of either record (malloc'd, *len set; NULL: no memory) in
 * the clear, to be sealed by its store; decode: 0, or -1 if it is no
 * such record (nothing read past len, every string bounded).
 */
char	*link_rec_encode(const struct link_rec *, size_t *len);
int	 link_rec_decode(const void *, size_t, struct link_rec *);
char	*consent_rec_encode(const struct consent_rec *, size_t *len);
int	 consent_rec_decode(const void *, size_t, struct consent_rec *);
/* a new consent id (CONSENT_PREFIX and 128 random bits): 0, or -1 */
int	 consent_id_new(char id[CONSENT_ID_LEN + 1]);
/* s is shaped as a consent id: 1, else 0 */
int	 consent_id_valid(const char *s);
/* a random URL-safe string of len characters (a nonce, a verifier;
 * len at most 256) and a NUL into buf: 0, or -1 */
int	 link_random(char *buf, size_t len);
/* the PKCE S256 challenge of verifier (RFC 7636 4.2), base64url: 0, or
 * -1 */
int	 link_pkce_challenge(const char *verifier, char out[44]);

#endif /* VMCPD_LINK_REC_H */
