/*
 * The upstream edge's decisions, pure (no I/O, no store), so that they
 * are tested as a table (tests/unit/test_upstream.c): what to do with a
 * backend's answer (deliver it, or resend once), and what it is.
 */
#include <string.h>

#include <jansson.h>

#include "proto/method.h"
#include "proto/proto.h"
#include "proto/probe.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/upstream_rule.h"
#include "worker/upstream/backend.h"

/*
 * Resend once, and only what never ran: a 2025-11-25 session the
 * backend no longer knows (404, or a 400 naming it: nothing ran on
 * it) is opened anew; a 2026-07-28 request turned away before it ran
 * (an HTTP 4xx but 408 and 429) not in 2026-07-28 terms, or for its
 * version, means the era record was wrong: probe again.  A request
 * that reached the backend is never resent, lists included.
 */
enum upstream_next
upstream_next_step(enum proto_era era, int failed, int flags,
    const json_t *response, int retried)
{
	json_int_t code;

	if (retried || !failed)
		return UPSTREAM_DELIVER;
	if (era == PROTO_ERA_LEGACY)
		return (flags & BACKEND_F_LOST) ? UPSTREAM_REOPEN :
		    UPSTREAM_DELIVER;
	code = json_integer_value(json_object_get(json_object_get(response,
	    "error"), "code"));
	if ((flags & BACKEND_F_REFUSED) && (!proto_modern_error(response) ||
	    code == MCP_ERR_UNSUPPORTED_VERSION))
		return UPSTREAM_REPROBE;
	return UPSTREAM_DELIVER;
}

/*
 * A 2026-07-28 result's resultType (MCP 2026-07-28, Result envelope),
 * the len bytes of its string at v: complete, or input_required where
 * the method may carry an MRTR round (its table entry's MCP_MF_MRTR:
 * tools/call, prompts/get, resources/read); any other value is invalid
 * (*invalid says why), as the revision has a client treat one it does
 * not know; "task" is a tools/call's CreateTaskResult (the tasks
 * extension), final as a complete one is: the Modern codec maps its
 * task id (worker/request/modern_task.c).
 */
static enum upstream_status
upstream_rtype(const char *v, size_t len, const char *method,
    const char **invalid)
{
	const struct mcp_method *mm;

	if (len == 8 && memcmp(v, "complete", 8) == 0)
		return UPSTREAM_COMPLETE;
	if (len == 4 && memcmp(v, "task", 4) == 0 &&
	    (mm = mcp_method_find(method)) != NULL &&
	    mm->mm_id == MCP_M_TOOLS_CALL)
		return UPSTREAM_COMPLETE;
	if (len == 14 && memcmp(v, "input_required", 14) == 0) {
		if ((mm = mcp_method_find(method)) != NULL &&
		    (mm->mm_flags & MCP_MF_MRTR))
			return UPSTREAM_INPUT_REQUIRED;
		*invalid = "input_required, which only tools/call, "
		    "prompts/get and resources/read may answer";
		return UPSTREAM_FAILED;
	}
	*invalid = "a resultType that is neither complete nor "
	    "input_required (nor a tools/call's task)";
	return UPSTREAM_FAILED;
}

/*
 * What an answer is.  failed: no answer but perhaps an error body (a
 * 2026-07-28 backend's -3202x come with HTTP 400: that is its error;
 * a 2025-11-25 one's is a failure).  rtype: the result's resultType
 * (its JSON text, quotes and all: a span compare, no tree) when the
 * answer is text, else read from response.  *was_legacy: a 2026-07-28
 * request answered without resultType, so run as 2025-11-25 (the era
 * record is corrected; the call is never re-run).  *invalid: a
 * 2026-07-28 result that is none (upstream_rtype()), UPSTREAM_FAILED;
 * the caller names the backend.
 */
enum upstream_status
upstream_classify(enum proto_era era, int failed, const json_t *response,
    const char *kind, const char *rtype, size_t rtlen, const char *method,
    int *was_legacy, const char **invalid)
{
	const json_t	*result, *rt;

	*was_legacy = 0;
	*invalid = NULL;
	if (failed)
		return era == PROTO_ERA_MODERN && json_is_object(
		    json_object_get(response, "error")) ? UPSTREAM_ERROR :
		    UPSTREAM_FAILED;
	if (kind != NULL) {
		if (strcmp(kind, "error") == 0)
			return UPSTREAM_ERROR;
		if (era != PROTO_ERA_MODERN)
			return UPSTREAM_COMPLETE;
		if (rtype == NULL) {
			*was_legacy = 1;
			return UPSTREAM_COMPLETE;
		}
		/* an escaped string is no value vmcpd knows either */
		if (rtlen < 2 || rtype[0] != '"')
			return upstream_rtype(rtype, 0, method, invalid);
		return upstream_rtype(rtype + 1, rtlen - 2, method, invalid);
	}
	if (json_object_get(response, "error") != NULL)
		return UPSTREAM_ERROR;
	if (era != PROTO_ERA_MODERN)
		return UPSTREAM_COMPLETE;
	result = json_object_get(response, "result");
	rt = json_object_get(result, "resultType");
	if (!json_is_object(result))
		return UPSTREAM_COMPLETE;	/* the caller finds no result */
	if (rt == NULL) {
		*was_legacy = 1;
		return UPSTREAM_COMPLETE;
	}
	return upstream_rtype(json_is_string(rt) ? json_string_value(rt) : "",
	    json_string_length(rt), method, invalid);
}
