/*
 * The worker's authorization glue (authz.h): the 403 gate and the list
 * filter, over the worker's cache of decisions (authz_rule.c).
 *
 * The gate is the request pipeline's first phase (pipeline.c), before a
 * Legacy session is looked up, before the rate limit and before
 * routing: a denied call takes no token, and a forbidden, a hidden and
 * a nonexistent item get the same 403 (MCP 2025-11-25, Authorization;
 * docs/ARCHITECTURE.md, "Authorization").  The item is what the view
 * advertises: a tool by its advertised name with the view's
 * annotations (never the request's), a resource by the exact URI read
 * (a template's read by the expanded URI).  Lists are pages of the
 * shared view filtered item by item (view_layout_page()), so no view
 * is built per principal.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/auth/audit.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/http/httpd.h"
#include "proto/method.h"
#include "worker/process/process.h"
#include "worker/view/core.h"
#include "worker/view/view.h"
#include "worker/view/view_get.h"

static struct authz_conf	 authz_conf;
static struct authz_cache	*authz_cache;
static int			 authz_enabled;

int
authz_init(struct worker *w)
{
	core_set_filter(authz_filter_item);
	if (authz_conf_init(&authz_conf, w->w_conf) == -1)
		return 0;
	if ((authz_cache = authz_cache_new(AUTHZ_WHO_MAX,
	    AUTHZ_ITEMS_MAX)) == NULL)
		return -1;
	authz_enabled = 1;
	return 0;
}

void
authz_free(void)
{
	authz_cache_free(authz_cache);
	authz_cache = NULL;
	authz_enabled = 0;
}

int
authz_on(const struct worker *w)
{
	(void)w;
	return authz_enabled;
}

/* the request's principal in the cache, or NULL (every access denied) */
static struct authz_who *
authz_who_of(struct worker *w, struct httpd_req *req)
{
	const struct principal *p = auth_principal(req);

	if (p == NULL)
		return NULL;
	/* a reload is a new generation of workers with their config */
	return authz_cache_who(authz_cache, &authz_conf, w->w_gen, p->p_scope,
	    p->p_claims);
}

/* a string member with no NUL in it, or NULL */
static const char *
authz_string(const json_t *params, const char *key)
{
	const json_t *v = json_object_get(params, key);

	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return NULL;
	return json_string_value(v);
}

/* a denial at the gate: logged with why, audited; -1 */
static int
authz_denied(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const char *why)
{
	/* the reason stays here: the client learns the kind only */
	log_debug("%s denied: %s", mm->mm_name, why);
	audit_set_outcome(w, req, AUDIT_DENIED);
	return -1;
}

int
authz_gate(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const json_t *params, json_t *view)
{
	char	why[CEDAR_ERRLEN + 32];

	if (!authz_enabled || mm == NULL || mm->mm_action == MCP_ACTION_NONE)
		return 0;
	if (authz_gate_who(w, authz_who_of(w, req), mm, params, view, why,
	    sizeof(why)))
		return 0;
	return authz_denied(w, req, mm, why);
}

int
authz_gate_who(struct worker *w, struct authz_who *who,
    const struct mcp_method *mm, const json_t *params, json_t *view,
    char *why, size_t whysz)
{
	struct cedar_call	 call;
	json_t			*item = NULL, *args;
	int			 allow = 0;

	/* a completion is its ref's prompts/get or resources/read */
	mm = authz_target(mm, params, &params);
	memset(&call, 0, sizeof(call));
	(void)snprintf(why, whysz, "no name");
	args = json_object_get(params, "arguments");
	call.cc_arguments = json_is_object(args) ? args : NULL;
	switch (mm->mm_action) {
	case MCP_ACTION_CALL_TOOL:
		call.cc_kind = CEDAR_TOOL;
		if ((call.cc_name = authz_string(params, "name")) == NULL)
			goto deny;
		/*
		 * The annotations of the tool the view advertises under the
		 * name: a name it does not list has none; a view that can't
		 * be read denies (a forbid on a hint must not fall away).
		 */
		(void)snprintf(why, whysz, "the view can't be read");
		if (authz_view_tool(w, view, call.cc_name, &item) == -1)
			goto deny;
		call.cc_annotations = json_object_get(item, "annotations");
		break;
	case MCP_ACTION_GET_PROMPT:
		call.cc_kind = CEDAR_PROMPT;
		if ((call.cc_name = authz_string(params, "name")) == NULL)
			goto deny;
		break;
	case MCP_ACTION_READ_RESOURCE:
		/*
		 * The exact URI asked for: a template's read is expanded; a
		 * completion's ref names the template by its uriTemplate,
		 * as its list shows it.
		 */
		call.cc_kind = CEDAR_RESOURCE;
		call.cc_arguments = NULL;
		if ((call.cc_name = authz_string(params, "uri")) == NULL)
			goto deny;
		break;
	default:
		(void)snprintf(why, whysz, "a ref of no known type");
		goto deny;
	}
	allow = authz_who_call(who, &call, why, whysz);
deny:
	json_decref(item);
	return allow;
}

int
authz_gate_text(struct worker *w, struct httpd_req *req,
    const struct mcp_method *mm, const char *name, size_t namelen,
    const char *params, size_t plen, json_t *view)
{
	char	*text = NULL;
	char	 why[CEDAR_ERRLEN + 32];
	size_t	 tlen = 0;
	int	 rc, allow = 0;

	if (!authz_enabled || mm == NULL || mm->mm_action == MCP_ACTION_NONE)
		return 0;
	/* the reasons are written only for a denial (snprintf() per call
	 * was a thousand instructions) */
	if (mm->mm_action != MCP_ACTION_CALL_TOOL) {
		(void)snprintf(why, sizeof(why), "not a tools/call");
		goto deny;
	}
	/* the tool the view advertises under the name, as authz_gate() */
	if ((rc = view_item_get(w, view, VIEW_KIND_TOOLS, name, namelen,
	    &text, &tlen)) == -1) {
		(void)snprintf(why, sizeof(why), "the view can't be read");
		goto deny;
	}
	allow = authz_who_tool(authz_who_of(w, req), name, namelen,
	    rc == 0 ? text : NULL, tlen, params, plen, why, sizeof(why));
	free(text);
deny:
	return allow ? 0 : authz_denied(w, req, mm, why);
}

int
authz_view_tool(struct worker *w, json_t *view, const char *name,
    json_t **itemp)
{
	char	*text = NULL;
	size_t	 tlen;
	int	 rc;

	*itemp = NULL;
	rc = view_item_get(w, view, VIEW_KIND_TOOLS, name, strlen(name),
	    &text, &tlen);
	if (rc == 0)
		*itemp = json_loadb(text, tlen, 0, NULL);
	free(text);
	return rc == -1 || (rc == 0 && *itemp == NULL) ? -1 : 0;
}

int
authz_step(struct worker *w, const struct principal *p,
    const struct cedar_call *call, char *why, size_t whysz)
{
	if (!authz_enabled)
		return 1;
	return authz_who_call(p == NULL ? NULL : authz_cache_who(authz_cache,
	    &authz_conf, w->w_gen, p->p_scope, p->p_claims), call, why, whysz);
}

struct authz_filter *
authz_list_filter(struct worker *w, struct httpd_req *req,
    struct authz_filter *f)
{
	if (!authz_enabled)
		return NULL;
	f->af_who = authz_who_of(w, req);
	return f;
}

/*
 * One resource by its URI alone, as a resources/read or
 * resources/subscribe of it is gated: each URI of a subscriptions/listen
 * (listen_stream.c).  0 allowed (or authz off), -1 denied, audited as denied;
 * the caller answers as for authz_gate().
 */
int
authz_gate_task(struct worker *w, struct httpd_req *req, const char *tool,
    json_t *view)
{
	json_t	*call;
	int	 rc;

	if (!authz_enabled)
		return 0;
	if ((call = json_pack("{s:s}", "name", tool)) == NULL)
		return -2;
	rc = authz_gate(w, req, mcp_method_get(MCP_M_TOOLS_CALL), call, view);
	json_decref(call);
	return rc;
}

int
authz_gate_uri(struct worker *w, struct httpd_req *req, const char *uri)
{
	struct cedar_call	 call;
	char			 why[CEDAR_ERRLEN + 32];

	if (!authz_enabled)
		return 0;
	memset(&call, 0, sizeof(call));
	(void)snprintf(why, sizeof(why), "no principal");
	call.cc_kind = CEDAR_RESOURCE;
	call.cc_name = uri;
	if (authz_who_call(authz_who_of(w, req), &call, why, sizeof(why)))
		return 0;
	log_debug("subscriptions/listen denied: %s", why);
	audit_set_outcome(w, req, AUDIT_DENIED);
	return -1;
}
