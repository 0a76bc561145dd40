/*
 * Cedar requests in the reference's entity model (cedar_request.c).
 */
#ifndef VMCPD_CEDAR_REQUEST_H
#define VMCPD_CEDAR_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shared/cedar.h"

/*
 * Requests in the reference's entity model.  A principal is built once
 * per token: Client::"<sub>" with every claim k as claim_k (but tsid),
 * parents <groupEntityType>::"<g>" for each string in the group claim
 * (a flat name or a dotted path; else the first array of groups, roles,
 * cognito:groups) and the role claim.  An access is built per call:
 * Action::"call_tool" | "get_prompt" | "read_resource" (operation);
 * Tool::"<advertised name>" | Prompt::"<name>" | Resource::"<exact URI>"
 * with the view's boolean hints (readOnlyHint, destructiveHint,
 * idempotentHint, openWorldHint), then name, operation, feature, uri
 * (these can't be overridden), and arg_k per scalar argument k
 * (arg_k_present for an object or array), parent MCP::"<server>"; the
 * context holds the claim_* and arg_* values.  An entity the static
 * store holds under the same UID lends its attributes (the request's
 * win) and its parents.  JSON integers are Longs; claims and arguments
 * are never read as Cedar JSON escapes.
 */
struct cedar_authz_conf {
	const char	*ca_group_claim;	/* NULL: the usual names */
	const char	*ca_role_claim;		/* NULL: none */
	const char	*ca_group_type;		/* NULL: THVGroup */
	const char	*ca_server;		/* MCP::"<server>"; NULL: none */
};

enum cedar_kind {
	CEDAR_TOOL,
	CEDAR_PROMPT,
	CEDAR_RESOURCE
};

struct cedar_call {
	enum cedar_kind	 cc_kind;
	const char	*cc_name;	/* advertised name, or exact URI */
	const json_t	*cc_annotations; /* the view's, never the client's */
	const json_t	*cc_arguments;	/* an object, or NULL */
	const char	*cc_server;	/* parent MCP::"<server>"; NULL:
					   the conf's ca_server */
};

struct cedar_principal;
struct cedar_access;

/* NULL with a message if claims has no non-empty string sub */
struct cedar_principal *cedar_principal_new(const struct cedar_authz_conf *,
		    const struct cedar_entities *store, const json_t *claims,
		    char *err, size_t errsz);
void		 cedar_principal_free(struct cedar_principal *);
/* the principal must outlive the access */
struct cedar_access *cedar_access_new(const struct cedar_authz_conf *,
		    const struct cedar_principal *, const struct cedar_call *,
		    char *err, size_t errsz);
void		 cedar_access_free(struct cedar_access *);
int		 cedar_access_authorize(const struct cedar_policyset *,
		    const struct cedar_access *, struct cedar_response *);

#endif /* VMCPD_CEDAR_REQUEST_H */
