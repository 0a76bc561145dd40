/*
 * The console's routes on the diagnostics listener (console.h).
 */
#include <string.h>

#include "worker/diag/console.h"
#include "worker/http/httpd.h"

int
console_on_request(struct worker *w, struct httpd_req *req)
{
	if (console_auth_route(w, req) || console_action_route(w, req))
		return 1;
	if (!console_auth_read(w, req))
		return 1;
	return 0;
}

void
console_free(void)
{
}
