/*
 * The console's routes on the diagnostics listener (console.h): the
 * login and action paths (console_auth.c, console_action.c), then,
 * for whom console_auth_read() lets read, the page at "/" and its two
 * assets, embedded in the binary (tools/embed.sh: no file is read at
 * run time, nothing is fetched from elsewhere).
 */
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/jsonw.h"
#include "worker/diag/console.h"
#include "worker/diag/diag.h"
#include "worker/http/http_reply.h"
#include "worker/http/httpd.h"

/* build/obj/console_js.c and console_css.c (the Makefile) */
extern const char	console_js[];
extern const size_t	console_js_len;
extern const char	console_css[];
extern const size_t	console_css_len;

/*
 * The page's own headers: its script and style only from here, no
 * inline script (every text of the page is a backend's or a client's),
 * no framing, forms only back here, never cached, never sniffed.
 */
static void
console_headers(struct httpd_req *req, const char *type)
{
	(void)httpd_add_header(req, "Content-Type", type);
	(void)httpd_add_header(req, "Content-Security-Policy",
	    "default-src 'none'; script-src 'self'; style-src 'self'; "
	    "connect-src 'self'; img-src 'self'; form-action 'self'; "
	    "frame-ancestors 'none'; base-uri 'none'");
	(void)httpd_add_header(req, "X-Content-Type-Options", "nosniff");
	(void)httpd_add_header(req, "X-Frame-Options", "DENY");
	/* not no-referrer: its forms would send Origin: null, which the
	 * listener's Origin check refuses */
	(void)httpd_add_header(req, "Referrer-Policy", "same-origin");
	(void)httpd_add_header(req, "Cache-Control", "no-store");
}

static void
console_asset(struct httpd_req *req, const char *type, const char *body,
    size_t len)
{
	struct iovec	 iov;

	if (front_get_only(req) == -1)
		return;
	console_headers(req, type);
	iov.iov_base = (void *)(uintptr_t)body;
	iov.iov_len = len;
	httpd_send_reply_iov(req, 200, &iov, 1);
}

/* GET /: the page as /status stands now */
static void
console_page(struct worker *w, struct httpd_req *req)
{
	struct jsonw	 jw;
	struct iovec	 iov;
	json_t		*st;
	char		 csrf[CONSOLE_CSRF_LEN + 1];
	int		 admin;

	if (front_get_only(req) == -1)
		return;
	memset(&jw, 0, sizeof(jw));
	admin = console_auth_admin(w, req, csrf);
	if ((st = diag_status_json(w)) == NULL ||
	    console_page_render(&jw, st, admin ? csrf : NULL, !admin &&
	    console_actions_enabled(w)) == -1) {
		json_decref(st);
		jsonw_free(&jw);
		front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	json_decref(st);
	console_headers(req, "text/html; charset=utf-8");
	iov.iov_base = jw.jw_buf;
	iov.iov_len = jw.jw_len;
	httpd_send_reply_iov(req, 200, &iov, 1);
	jsonw_free(&jw);
}

int
console_on_request(struct worker *w, struct httpd_req *req)
{
	const char	*path = httpd_req_path(req);

	if (console_auth_route(w, req) || console_action_route(w, req))
		return 1;
	if (!console_auth_read(w, req))
		return 1;
	if (strcmp(path, "/") == 0)
		console_page(w, req);
	else if (strcmp(path, "/console.js") == 0)
		console_asset(req, "text/javascript; charset=utf-8",
		    console_js, console_js_len);
	else if (strcmp(path, "/console.css") == 0)
		console_asset(req, "text/css; charset=utf-8", console_css,
		    console_css_len);
	else
		return 0;
	return 1;
}

void
console_free(void)
{
}
