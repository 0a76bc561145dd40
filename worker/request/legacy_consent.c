/*
 * A 2025-11-25 client's consent answer (rc_consent, pipeline.h; the
 * credential phase, worker/link/link_phase.c): the person must link
 * the backend's account at url first.
 */
#include <stdio.h>

#include <jansson.h>

#include "shared/config.h"
#include "shared/link_rec.h"
#include "proto/method.h"
#include "proto/proto.h"
#include "worker/link/link.h"
#include "worker/pipeline/pipeline.h"
#include "worker/request/legacy_req.h"

/*
 * A client whose session declared elicitation.url gets -32042 with the
 * elicitation (MCP 2025-11-25, Elicitation, URL Elicitation Required
 * Error), and notifications/elicitation/complete on its session once
 * the web leg is done (link_web.c).  One that did not must not be sent
 * a URL-mode elicitation: a tools/call gets a tool result with isError
 * that the model and the person can read; another method an error with
 * the same words, -32000 (JSON-RPC 2.0 5.1, a server error of the
 * implementation's range): not -32042, which would be the elicitation
 * the client did not declare, nor -32602 or -32603, since nothing is
 * wrong with the request or the server.
 */
void
legacy_consent(struct request *r, const char *id, const char *url,
    int round)
{
	struct mcp_req	*mr = (struct mcp_req *)r;	/* mr_r is its head */
	const char	*be = r->r_be->cb_name;
	char		 msg[LINK_URL_MAX + LINK_NAME_MAX + 200];
	json_t		*e, *data;

	(void)round;
	if (link_caps_url(r->r_caps)) {
		if ((e = link_consent_elicit(be, id, url)) == NULL ||
		    (data = json_pack("{s:[o]}", "elicitations", e)) == NULL) {
			legacy_req_error(mr, JSONRPC_INTERNAL_ERROR,
			    "Internal error: out of memory");
			return;
		}
		(void)snprintf(msg, sizeof(msg), "URL elicitation required: "
		    LINK_CONSENT_FMT, be);
		legacy_req_answer(mr, jsonrpc_error_new(r->r_msg.jm_id,
		    MCP_ERR_URL_ELICITATION, msg, data));
		return;
	}
	if (r->r_msg.jm_mm->mm_id == MCP_M_TOOLS_CALL) {
		legacy_req_answer(mr, jsonrpc_result_new(r->r_msg.jm_id,
		    link_consent_result(be, url)));
		return;
	}
	link_consent_text(be, url, msg, sizeof(msg));
	legacy_req_error(mr, MCP_ERR_TRANSPORT, msg);
}
