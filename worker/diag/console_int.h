/*
 * What console_auth.c tells console_action.c (console.h): who the
 * admin is, the CSRF and Origin checks, and the small fixed pages both
 * answer with.
 */
#ifndef VMCPD_CONSOLE_INT_H
#define VMCPD_CONSOLE_INT_H

#include <stddef.h>

#include "worker/diag/console.h"

#define CONSOLE_USER_MAX	128

/* how an admin was recognised */
enum console_via {
	CONSOLE_VIA_NONE = 0,
	CONSOLE_VIA_TOKEN,	/* Authorization: Bearer <the token> */
	CONSOLE_VIA_SESSION	/* the session cookie (a token or a login) */
};

struct console_who {
	enum console_via cw_via;
	char		 cw_user[CONSOLE_USER_MAX + 1];	/* shown, audited */
	char		 cw_sub[CONSOLE_USER_MAX + 1];	/* the login's sub */
	char		 cw_csrf[CONSOLE_CSRF_LEN + 1];
};

/* req's admin into who: 1, or 0 (not one; who->cw_via NONE) */
int	 console_who(struct worker *, struct httpd_req *,
	    struct console_who *);
/* the form's csrf is who's (constant time): 1, else 0 */
int	 console_csrf_ok(const struct console_who *, const char *csrf);
/*
 * A browser's POST comes from the console's own page: Origin, when
 * sent, names the request's Host; Sec-Fetch-Site, when sent, is
 * same-origin.  1, else 0.
 */
int	 console_origin_ok(struct httpd_req *);
/* the value of field name of a form body (application/x-www-form-
 * urlencoded), decoded into out: 0, or -1 (none, too long) */
int	 console_form_get(struct httpd_req *, const char *name, char *out,
	    size_t outlen);
/*
 * A fixed page: title and msg escaped, a link back to the console,
 * no-store, a CSP of default-src 'none'; cookie a Set-Cookie value or
 * NULL; csrf an admin's (a sign-out form), or NULL.
 */
void	 console_page(struct httpd_req *, int status, const char *title,
	    const char *msg, const char *cookie, const char *csrf);

#endif /* VMCPD_CONSOLE_INT_H */
