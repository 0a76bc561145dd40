/*
 * The operator's console on the diagnostics listener (daemon.diagnostics),
 * HAProxy's stats page the model: one server-rendered page at "/" that
 * works without scripts, refreshed by a small embedded script from
 * /status; read-only unless daemon.console gives a token or an OIDC
 * admin group, then with a few audited actions behind a CSRF check.
 *
 * Its files in the diagnostics room (worker/diag/):
 *	console.c	routes the listener's console paths (diag.c hands
 *			them over), GET / and the embedded assets
 *	console_page.c	the page's HTML from /status's JSON (pure,
 *			every text escaped: names, descriptions and error
 *			texts come from backends)
 *	console_auth.c	who may act: the console token, the OIDC login
 *			of an admin group, the session cookie, CSRF
 *	console_action.c POST /console/action: reprobe, approve or reject
 *			a pinned change, drop a backend's sessions; each
 *			audited
 */
#ifndef VMCPD_CONSOLE_H
#define VMCPD_CONSOLE_H

#include <stddef.h>

#include <jansson.h>

struct httpd_req;
struct jsonw;
struct worker;

/*
 * console.c: every request of the diagnostics listener comes here
 * first (after diag.c's Host check).  The login paths are served to
 * anyone; every other path is gated by console_auth_read(); then "/",
 * its assets and "/console/..." are served.  Handled (a reply is or
 * will be sent, a refusal included), 1; else 0: diag.c goes on with
 * /status and /metrics or its 404.
 */
int	 console_on_request(struct worker *, struct httpd_req *);

/*
 * console_auth.c.  May req read the listener (the page, /status,
 * /metrics)?  On a loopback bind anyone may; on another (refused by
 * the configuration unless daemon.console sets authentication) only
 * with the token (Authorization: Bearer) or an admin's session cookie.
 * 1 allowed; 0: refused, a 401 (or a redirect to the login) is sent.
 */
int	 console_auth_read(struct worker *, struct httpd_req *);
/* are actions configured at all (a token or an OIDC admin group)? */
int	 console_actions_enabled(const struct worker *);
/*
 * req is an admin's (token or session): the CSRF token its forms must
 * carry into tok (room for CONSOLE_CSRF_LEN + 1), 1; else 0 (the page
 * shows no action, only how to log in when a login is configured).
 */
#define CONSOLE_CSRF_LEN	43	/* 256 bits, base64url */
int	 console_auth_admin(struct worker *, struct httpd_req *,
	    char tok[CONSOLE_CSRF_LEN + 1]);
/* console_auth.c's own paths (/console/login, /console/callback,
 * /console/logout): handled 1, else 0 */
int	 console_auth_route(struct worker *, struct httpd_req *);

/* console_action.c: POST /console/action (form fields "action",
 * "backend", "kind", "name", "csrf"): handled 1, else 0 */
int	 console_action_route(struct worker *, struct httpd_req *);
/* the values of "action" the page's forms send (console_page.c) and
 * "kind" one of pin_kind_name()'s */
#define CONSOLE_ACT_REPROBE	"reprobe"
#define CONSOLE_ACT_DROP	"drop-sessions"
#define CONSOLE_ACT_APPROVE	"approve"
#define CONSOLE_ACT_REJECT	"reject"
#define CONSOLE_ACT_APPROVE_ALL	"approve-all"	/* every pending change of
						 * the backend */
#define CONSOLE_ACTION_PATH	"/console/action"
#define CONSOLE_LOGIN_PATH	"/console/login"

/*
 * console_page.c, pure (fuzzed: tests/fuzz/fuzz_console_page.c): the
 * page for /status's object st (diag_status_json()) appended to jw,
 * every text taken from st escaped (proto/html.h).  csrf: the admin's token, which
 * the action forms carry (NULL: none shown); login: actions are
 * configured and the reader is no admin, a link to log in is shown.
 * 0, or -1 (no memory: jw holds part of it).
 */
int	 console_page_render(struct jsonw *, const json_t *st,
	    const char *csrf, int login);

void	 console_free(void);

#endif /* VMCPD_CONSOLE_H */
