/*
 * The console's actions, POST /console/action (console.h): a form of
 * the console's page (application/x-www-form-urlencoded: action,
 * backend, kind, name, csrf), taken only from an admin
 * (console_auth.c), from the console's own origin, with the session's
 * CSRF token.  Each is audited (vmcp_console_action) and logged:
 *
 *	reprobe		the backend's era, initialize cache and health
 *			forgotten: the next request probes it again
 *			(shared/backend_ops.c, as vmcpctl reprobe)
 *	drop-sessions	the identity scopes' backend sessions of the
 *			backend dropped (as vmcpctl drop-sessions)
 *	approve, reject	a pending pinned change of (backend, kind,
 *			name) decided (pin_decide(): the host's pins,
 *			and Redis with provider redis); approve-all every
 *			pending change of the backend
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "proto/http_req.h"
#include "shared/backend_ops.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/pin_rec.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/diag/console_int.h"
#include "worker/http/httpd.h"
#include "worker/process/process.h"
#include "worker/state/pin_store.h"

#define CONSOLE_AUDIT_TYPE	"vmcp_console_action"

struct console_act {
	char	ca_action[32];
	char	ca_backend[PIN_BACKEND_MAX + 1];
	char	ca_kind[16];
	char	ca_name[PIN_NAME_MAX + 1];
};

/* the event: who (the login's sub and name, or the token), what, how
 * it ended */
static void
act_audit(struct worker *w, const struct console_who *who,
    const struct console_act *a, int ok, const char *result)
{
	struct principal	 p;
	json_t			*target, *extra;

	memset(&p, 0, sizeof(p));
	p.p_sub = (char *)(who->cw_sub[0] != '\0' ? who->cw_sub :
	    who->cw_user);
	p.p_claims = json_pack("{s:s}", "name", who->cw_user);
	target = json_pack("{s:s, s:s, s:s, s:s*, s:s*}", "type",
	    "console_action", "method", a->ca_action, "backend",
	    a->ca_backend, "kind", a->ca_kind[0] != '\0' ? a->ca_kind : NULL,
	    "name", a->ca_name[0] != '\0' ? a->ca_name : NULL);
	extra = json_pack("{s:s, s:s}", "via", who->cw_via ==
	    CONSOLE_VIA_TOKEN ? "token" : "session", "result", result);
	audit_workflow(w, &p, CONSOLE_AUDIT_TYPE, ok ? "success" : "failure",
	    target, extra);
	json_decref(p.p_claims);
	log_info("console: %s: %s %s%s%s: %s", who->cw_user, a->ca_action,
	    a->ca_backend, a->ca_name[0] != '\0' ? " " : "", a->ca_name,
	    result);
}

/* the action done: 0 (msg says what happened), or an HTTP status */
static int
act_do(struct worker *w, const struct console_act *a, char *msg,
    size_t len)
{
	enum pin_kind	 kind;
	long		 n;
	int		 dropped, approve;

	if (strcmp(a->ca_action, CONSOLE_ACT_REPROBE) == 0) {
		if (backend_ops_reprobe(w->w_store, a->ca_backend,
		    &dropped) == -1) {
			(void)snprintf(msg, len, "backend %s: the store "
			    "could not be changed", a->ca_backend);
			return 500;
		}
		(void)snprintf(msg, len, "backend %s: %s%s; the next request "
		    "to it probes it again", a->ca_backend, dropped &
		    BOPS_ERA ? "era record dropped" : "no era record",
		    dropped & BOPS_HEALTH ? ", health record dropped" : "");
		return 0;
	}
	if (strcmp(a->ca_action, CONSOLE_ACT_DROP) == 0) {
		if ((n = backend_ops_drop_sessions(w->w_store,
		    a->ca_backend)) == -1) {
			(void)snprintf(msg, len, "backend %s: the store "
			    "could not be changed", a->ca_backend);
			return 500;
		}
		(void)snprintf(msg, len, "backend %s: %ld identity scope "
		    "sessions dropped; the next listing opens a new one",
		    a->ca_backend, n);
		return 0;
	}
	approve = strcmp(a->ca_action, CONSOLE_ACT_REJECT) != 0;
	if (strcmp(a->ca_action, CONSOLE_ACT_APPROVE_ALL) == 0)
		kind = PIN_TOOL;
	else if (pin_kind_parse(a->ca_kind, &kind) == -1 ||
	    a->ca_name[0] == '\0') {
		(void)snprintf(msg, len, "%s needs kind (tool, prompt or "
		    "template) and name", a->ca_action);
		return 400;
	}
	if ((n = pin_decide(w, a->ca_backend, kind, strcmp(a->ca_action,
	    CONSOLE_ACT_APPROVE_ALL) == 0 ? NULL : a->ca_name, approve)) == -1) {
		(void)snprintf(msg, len, "backend %s: the pins could not be "
		    "changed", a->ca_backend);
		return 500;
	}
	if (n == 0) {
		(void)snprintf(msg, len, "backend %s: no pending change%s%s",
		    a->ca_backend, a->ca_name[0] != '\0' ? " of " : "",
		    a->ca_name);
		return 404;
	}
	(void)snprintf(msg, len, "backend %s: %ld change%s %s; clients are "
	    "told the lists changed", a->ca_backend, n, n == 1 ? "" : "s",
	    approve ? "approved" : "rejected");
	return 0;
}

static int
act_known(const char *action)
{
	static const char *const acts[] = { CONSOLE_ACT_REPROBE,
	    CONSOLE_ACT_DROP, CONSOLE_ACT_APPROVE, CONSOLE_ACT_APPROVE_ALL,
	    CONSOLE_ACT_REJECT };
	size_t	i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (strcmp(action, acts[i]) == 0)
			return 1;
	return 0;
}

int
console_action_route(struct worker *w, struct httpd_req *req)
{
	struct console_who	 who;
	struct console_act	 a;
	char			 csrf[CONSOLE_CSRF_LEN + 2], msg[512];
	int			 st;

	if (strcmp(httpd_req_path(req), CONSOLE_ACTION_PATH) != 0)
		return 0;
	if (httpd_req_method(req) != HTTP_M_POST) {
		(void)httpd_add_header(req, "Allow", "POST");
		console_page(req, 405, "Method not allowed", "Actions are "
		    "POSTed by the console's forms.", NULL, NULL);
		return 1;
	}
	if (!console_actions_enabled(w)) {
		console_page(req, 403, "Read-only", "The console is "
		    "read-only: daemon.console sets no token and no login.",
		    NULL, NULL);
		return 1;
	}
	/* another site's page: refused before anything is read */
	if (!console_origin_ok(req)) {
		log_warnx("console: an action from another origin refused");
		console_page(req, 403, "Refused", "This form was sent from "
		    "another site.", NULL, NULL);
		return 1;
	}
	if (!console_who(w, req, &who)) {
		(void)httpd_add_header(req, "WWW-Authenticate",
		    "Bearer realm=\"vmcpd console\"");
		console_page(req, 401, "Sign in first", "Actions need the "
		    "console's token or an administrator's login "
		    "(/console/login).", NULL, NULL);
		return 1;
	}
	if (console_form_get(req, "csrf", csrf, sizeof(csrf)) == -1 ||
	    !console_csrf_ok(&who, csrf)) {
		log_warnx("console: %s: an action with a missing or wrong "
		    "CSRF token refused", who.cw_user);
		console_page(req, 403, "Refused", "The form's CSRF token is "
		    "missing or wrong: reload the console and try again.",
		    NULL, NULL);
		OPENSSL_cleanse(&who, sizeof(who));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	if (console_form_get(req, "action", a.ca_action,
	    sizeof(a.ca_action)) == -1 || !act_known(a.ca_action) ||
	    console_form_get(req, "backend", a.ca_backend,
	    sizeof(a.ca_backend)) == -1 ||
	    !backend_ops_name_ok(a.ca_backend)) {
		console_page(req, 400, "Bad request", "Expected action "
		    "(reprobe, drop-sessions, approve, approve-all or reject) "
		    "and backend.", NULL, NULL);
		OPENSSL_cleanse(&who, sizeof(who));
		return 1;
	}
	(void)console_form_get(req, "kind", a.ca_kind, sizeof(a.ca_kind));
	(void)console_form_get(req, "name", a.ca_name, sizeof(a.ca_name));
	if (config_backend_find(w->w_conf, a.ca_backend) == NULL) {
		(void)snprintf(msg, sizeof(msg), "backend %s: no such backend",
		    a.ca_backend);
		st = 404;
	} else
		st = act_do(w, &a, msg, sizeof(msg));
	act_audit(w, &who, &a, st == 0, msg);
	console_page(req, st == 0 ? 200 : st, st == 0 ? "Done" : "Not done",
	    msg, NULL, NULL);
	OPENSSL_cleanse(&who, sizeof(who));
	return 1;
}
