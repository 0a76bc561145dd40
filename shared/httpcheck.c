/*
 * HTTP request checks shared by the workers' front and the bridges.
 */
#include <sys/queue.h>

#include <strings.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "httpcheck.h"

int
httpcheck_framing(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;
	int			 cl = 0, te = 0;

	TAILQ_FOREACH(kv, h, next) {
		if (strcasecmp(kv->key, "Content-Length") == 0)
			cl++;
		else if (strcasecmp(kv->key, "Transfer-Encoding") == 0)
			te++;
	}
	return cl <= 1 && !(cl > 0 && te > 0);
}
