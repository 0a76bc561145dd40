/*
 * An audit event's line (audit.h), written without a tree: the members
 * in the order, and with the text, that json_dumps() gave the tree the
 * event was once built as (JSON_COMPACT | JSON_PRESERVE_ORDER |
 * JSON_ENSURE_ASCII).  Every string goes through jsonw's escaping, so a
 * name, a URI, a header or a claim can neither end its value nor the
 * line.  A string that is not UTF-8 leaves its member out, and a
 * required one the whole line, as json_string() and json_pack() refused
 * them.  Pure: no I/O, no global state.
 */
#include <string.h>

#include "proto/jsonw.h"
#include "worker/auth/audit.h"

int
audit_line_write(struct jsonw *jw, const struct audit_line *al)
{
	struct jsonw_mark	 m;
	int			 bad = 0;

	jw->jw_comma = 0;	/* a line of its own after any before */
	jsonw_obj(jw, NULL);
	bad |= jsonw_str(jw, "audit_id", al->al_id);
	bad |= jsonw_str(jw, "type", al->al_type);
	bad |= jsonw_str(jw, "logged_at", al->al_when);
	bad |= jsonw_str(jw, "outcome", al->al_outcome);
	bad |= jsonw_str(jw, "component", al->al_component);
	jsonw_obj(jw, "source");
	bad |= jsonw_str(jw, "type", al->al_source_type);
	bad |= jsonw_str(jw, "value", al->al_source_value);
	if (al->al_source_extra) {
		jsonw_obj(jw, "extra");
		if (al->al_ua != NULL)
			(void)jsonw_str(jw, "user_agent", al->al_ua);
		if (al->al_reqid != NULL)
			(void)jsonw_str(jw, "request_id", al->al_reqid);
		jsonw_end(jw);
	}
	jsonw_end(jw);
	jsonw_obj(jw, "subjects");
	if (al->al_user_id != NULL)
		(void)jsonw_str(jw, "user_id", al->al_user_id);
	(void)jsonw_str(jw, "user", al->al_user);
	jsonw_end(jw);
	if (al->al_target_raw != NULL)
		jsonw_raw(jw, "target", al->al_target_raw,
		    al->al_target_rawlen);
	else {
		jsonw_obj(jw, "target");
		(void)jsonw_str(jw, "endpoint", "/mcp");
		bad |= jsonw_str(jw, "method", al->al_method);
		if (al->al_target_type != NULL)
			(void)jsonw_str(jw, "type", al->al_target_type);
		if (al->al_name != NULL)
			(void)jsonw_str(jw, "name", al->al_name);
		jsonw_end(jw);
	}
	jsonw_obj(jw, "metadata");
	if (al->al_extra_raw != NULL)
		jsonw_raw(jw, "extra", al->al_extra_raw, al->al_extra_rawlen);
	else {
		jsonw_obj(jw, "extra");
		jsonw_int(jw, "duration_ms", al->al_duration_ms);
		(void)jsonw_str(jw, "transport", "streamable-http");
		jsonw_int(jw, "status_code", al->al_status);
		if (al->al_backend != NULL)
			(void)jsonw_str(jw, "backend_name", al->al_backend);
		if (al->al_trace_id != NULL)
			(void)jsonw_str(jw, "trace_id", al->al_trace_id);
		if (al->al_span_id != NULL)
			(void)jsonw_str(jw, "span_id", al->al_span_id);
		jsonw_end(jw);
	}
	jsonw_end(jw);
	if (al->al_data != NULL) {
		jsonw_mark(jw, &m);
		jsonw_obj(jw, "data");
		if (jsonw_strn(jw, "request", al->al_data, al->al_datalen) ==
		    0)
			jsonw_end(jw);
		else
			jsonw_undo(jw, &m);
	}
	jsonw_end(jw);
	jsonw_bytes(jw, "\n", 1);
	return bad || jw->jw_failed ? -1 : 0;
}
