/*
 * Who may read the console's listener and who may act (console.h).
 */
#include "worker/diag/console.h"

int
console_auth_read(struct worker *w, struct httpd_req *req)
{
	(void)w;
	(void)req;
	return 1;
}

int
console_actions_enabled(const struct worker *w)
{
	(void)w;
	return 0;
}

int
console_auth_admin(struct worker *w, struct httpd_req *req,
    char tok[CONSOLE_CSRF_LEN + 1])
{
	(void)w;
	(void)req;
	tok[0] = '\0';
	return 0;
}

int
console_auth_route(struct worker *w, struct httpd_req *req)
{
	(void)w;
	(void)req;
	return 0;
}
