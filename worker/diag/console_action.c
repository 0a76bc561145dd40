/*
 * The console's actions, POST /console/action (console.h).
 */
#include "worker/diag/console.h"

int
console_action_route(struct worker *w, struct httpd_req *req)
{
	(void)w;
	(void)req;
	return 0;
}
