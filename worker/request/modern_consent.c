/*
 * A 2026-07-28 client's consent (rc_consent, rc_consent_answer;
 * pipeline.h, worker/link/link_phase.c): the person must link the
 * backend's account first.  A client that declared URL-mode
 * elicitation in this request's clientCapabilities gets an
 * input_required (MCP 2026-07-28, Multi Round-Trip Requests) asking
 * elicitation/create in URL mode, and a requestState sealed over the
 * principal, the backend, the consent and a short expiry
 * (link_state_seal()); its retry with the person's answer is checked
 * here before the link is looked up again.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "shared/config.h"
#include "shared/link_rec.h"
#include "proto/method.h"
#include "proto/proto.h"
#include "shared/store.h"
#include "worker/auth/auth.h"
#include "worker/link/link.h"
#include "worker/pipeline/pipeline.h"
#include "worker/request/modern_req.h"

#define MODERN_CONSENT_STATE	"invalid or expired requestState"

void
modern_consent(struct request *r, const char *id, const char *url,
    int round)
{
	struct mreq	*m = (struct mreq *)r;	/* m_r is its head */
	const char	*be = r->r_be->cb_name;
	char		 state[LINK_STATE_MAX];
	char		 msg[LINK_URL_MAX + LINK_NAME_MAX + 200];
	json_t		*res, *e;

	/* the capabilities this request declared, as a tree */
	if (modern_fast_load(m) == -1) {
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return;
	}
	if (link_caps_url(r->r_caps) &&
	    (r->r_msg.jm_mm->mm_flags & MCP_MF_MRTR)) {
		if (link_state_seal(r->r_principal->p_scope, be, id, round,
		    store_now_ms(), state, sizeof(state)) == -1 ||
		    (e = link_consent_elicit(be, NULL, url)) == NULL ||
		    (res = json_pack("{s:{s:{s:s, s:o}}, s:s}",
		    "inputRequests", LINK_INPUT_KEY, "method",
		    "elicitation/create", "params", e, "requestState",
		    state)) == NULL) {
			modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
			    "Internal error: out of memory", NULL);
			return;
		}
		modern_result_out(m, res, "input_required");
		return;
	}
	/* no URL mode declared: none is sent (MCP 2026-07-28, Multi
	 * Round-Trip Requests: only what the request's capabilities
	 * allow); a tool's result the model and the person can read,
	 * else -32021 naming the capability */
	if (r->r_msg.jm_mm->mm_id == MCP_M_TOOLS_CALL) {
		if ((res = link_consent_result(be, url)) == NULL)
			modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
			    "Internal error: out of memory", NULL);
		else
			modern_result_out(m, res, "complete");
		return;
	}
	link_consent_text(be, url, msg, sizeof(msg));
	modern_error(m, 400, MCP_ERR_MISSING_CAPABILITY, msg, json_pack(
	    "{s:{s:{s:{}}}}", "requiredCapabilities", "elicitation", "url"));
}

/* declined or cancelled: what the call gets */
static void
modern_consent_declined(struct mreq *m)
{
	char	 msg[LINK_NAME_MAX + 200];
	json_t	*res;

	(void)snprintf(msg, sizeof(msg), "Backend %s: the consent to link "
	    "your account was declined, so the call was not made",
	    m->m_r.r_be->cb_name);
	if (m->m_r.r_msg.jm_mm->mm_id != MCP_M_TOOLS_CALL) {
		modern_error(m, 200, JSONRPC_INVALID_REQUEST, msg, NULL);
		return;
	}
	if ((res = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
	    "text", "text", msg, "isError", 1)) == NULL)
		modern_error(m, 200, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
	else
		modern_result_out(m, res, "complete");
}

/*
 * A retry carrying a consent's requestState: refused (-32602, one
 * answer for every reason) unless it opens for this principal and
 * backend; declined or cancelled, the call is not made; accepted (or
 * no answer: the link is what counts), the state and the answers are
 * taken off the params (the backend never sees them) and the link is
 * looked up again.
 */
int
modern_consent_answer(struct request *r, char *id, size_t idlen, int *round)
{
	struct mreq	*m = (struct mreq *)r;	/* m_r is its head */
	json_t		*params = r->r_msg.jm_params, *ir;
	const char	*state, *action;

	if (r->r_fast.rf_params != NULL)
		return LINK_ANSWER_NONE;	/* no requestState on it */
	state = json_string_value(json_object_get(params, "requestState"));
	if (!link_state_ours(state))
		return LINK_ANSWER_NONE;
	ir = json_object_get(params, "inputResponses");
	if (link_state_open(state, r->r_principal->p_scope, r->r_be->cb_name,
	    store_now_ms(), id, idlen, round) == -1 ||
	    (ir != NULL && !json_is_object(ir))) {
		modern_error(m, 200, JSONRPC_INVALID_PARAMS,
		    MODERN_CONSENT_STATE, NULL);
		return LINK_ANSWER_DONE;
	}
	action = json_string_value(json_object_get(json_object_get(ir,
	    LINK_INPUT_KEY), "action"));
	if (action != NULL && (strcmp(action, "decline") == 0 ||
	    strcmp(action, "cancel") == 0)) {
		modern_consent_declined(m);
		return LINK_ANSWER_DONE;
	}
	(void)json_object_del(params, "requestState");
	(void)json_object_del(params, "inputResponses");
	return LINK_ANSWER_ACCEPTED;
}
