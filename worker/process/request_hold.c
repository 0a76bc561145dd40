/*
 * A request held across an asynchronous wait: worker/process/request_hold.h.
 */
#include "worker/http/httpd.h"
#include "worker/process/request_hold.h"
#include "worker/process/process.h"

static void
reqhold_on_close(struct httpd_req *req, void *arg)
{
	struct reqhold *rh = arg;

	(void)req;
	rh->rh_gone = 1;
}

void
reqhold_attach(struct reqhold *rh, struct worker *w, struct httpd_req *req)
{
	rh->rh_w = w;
	rh->rh_req = req;
	rh->rh_gone = 0;
	httpd_req_set_close_cb(req, reqhold_on_close, rh);
	worker_request_hold(w);
}

void
reqhold_detach(struct reqhold *rh)
{
	httpd_req_set_close_cb(rh->rh_req, NULL, NULL);
}
