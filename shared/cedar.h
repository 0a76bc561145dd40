/*
 * Cedar policies: a parser and an evaluator for the subset vmcpd
 * supports (docs/ARCHITECTURE.md, "Authorization"): permit/forbid,
 * scopes == and in (action in [..]), when/unless, || && !, == != < <= >
 * >=, in, has, like, .attr and ["attr"], .contains/.containsAll/
 * .containsAny/.isEmpty(), set literals, Bool/Long/String literals and
 * entity references.  Anything else of Cedar is a parse error saying it
 * is not supported, never a silent difference: whatever parses here
 * means what it means to the official evaluator (a differential test
 * holds the two equal).
 *
 * Pure: no I/O, no global state.  Values of entities and contexts come
 * as jansson JSON in Cedar's entity JSON format.
 */
#ifndef VMCPD_CEDAR_H
#define VMCPD_CEDAR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* limits: no policy file makes the parser or evaluator recurse or work unbounded */
#define CEDAR_TEXT_MAX		(1024 * 1024)	/* bytes of text */
#define CEDAR_DEPTH_MAX		64		/* expression nesting */
#define CEDAR_VALUE_DEPTH_MAX	32		/* a JSON value's nesting */
#define CEDAR_FUEL		(16L * 1024 * 1024) /* steps a request */
#define CEDAR_ERRLEN		256

struct cedar_policyset;
struct cedar_entities;

/* a byte string: Cedar strings and ids may hold NUL */
struct cedar_str {
	const char	*cs_ptr;
	size_t		 cs_len;
};

/* an entity UID: type is a path such as "Client" or "NS::Tool" */
struct cedar_uid {
	struct cedar_str cu_type;
	struct cedar_str cu_id;
};

/*
 * The policies of text (len bytes, not NUL-terminated necessarily),
 * or NULL with "file:line:col: message" in err.  An empty text is an
 * empty set (the caller decides whether that is acceptable).
 */
struct cedar_policyset *cedar_parse(const char *file, const char *text,
		    size_t len, char *err, size_t errsz);
void		 cedar_policyset_free(struct cedar_policyset *);
size_t		 cedar_policyset_len(const struct cedar_policyset *);

/*
 * What Cedar accepts but vmcpd refuses at load, because the policy could
 * never do what its author meant: an Action entity, in a scope or an
 * expression, whose id is not one of actions (NULL-terminated), and an
 * `in` whose right side is a literal that is no entity (a string, a
 * number, a set literal with such an element: an error on every
 * request).  0, or -1 with "file:line:col: message" in err.
 */
int		 cedar_policyset_check(const struct cedar_policyset *,
		    const char *const *actions, char *err, size_t errsz);

/*
 * What the policies may read of a call's arguments (the arg_* attributes
 * of the resource and of the context, below), found when the set is
 * parsed: nothing, the arguments cedar_policyset_reads_arg() names, or
 * all of them (a policy uses context whole: context == .., [context]).
 * Conservative: an attribute arg_k or arg_k_present read or tested
 * (.arg_k, ["arg_k"], has arg_k) on any expression counts.  A call
 * authorized with only the arguments read gets the decision it gets
 * with all of them.
 */
enum cedar_args {
	CEDAR_ARGS_NONE = 0,
	CEDAR_ARGS_SOME,
	CEDAR_ARGS_ALL
};
enum cedar_args	 cedar_policyset_args(const struct cedar_policyset *);
/* 1 if the argument named key (klen bytes) may be read */
int		 cedar_policyset_reads_arg(const struct cedar_policyset *,
		    const char *key, size_t klen);
/* the i-th argument name of a CEDAR_ARGS_SOME set (sorted), or NULL */
const struct cedar_str *cedar_policyset_arg_name(
		    const struct cedar_policyset *, size_t i);
/*
 * The arguments of args (a call's, parsed) the policies may read: *out
 * NULL when they read none or args is no object, else a new object of
 * those (args itself when they read all).  0, or -1 out of memory.
 */
int		 cedar_args_pick(const struct cedar_policyset *,
		    const json_t *args, json_t **out);
/*
 * The same off a tools/call's params' text (a JSON object): *args NULL
 * when they read none or the params have no arguments object, else a
 * new object of the arguments read, only their values parsed (the
 * whole object when a key holds an escape, more than CEDAR_ARGS_SCAN
 * members are sent, or every argument is read).  0, or -1 (text that does not load as jsonrpc_parse() loads
 * it, a name read twice, out of memory): the caller denies.  A key sent
 * twice that no policy reads is not looked for (the front's scan refused
 * it already).
 */
#define CEDAR_ARGS_SCAN	64
int		 cedar_args_text(const struct cedar_policyset *,
		    const char *params, size_t plen, json_t **args);

/*
 * An entity store.  A store with a base is a layer over it: a UID found
 * here hides the base's, parents are followed through both.  The base
 * must outlive the layer.
 */
struct cedar_entities *cedar_entities_new(const struct cedar_entities *base);
void		 cedar_entities_free(struct cedar_entities *);
/*
 * Adds one entity or an array of them in Cedar's JSON form
 * ({"uid": {"type", "id"}, "attrs": {}, "parents": [uid]}; attribute
 * values: bool, integer (Long), string, array (Set), object (Record),
 * {"__entity": uid}, {"__extn": {"fn": "decimal", "arg": "1.5"}}).
 * 0, or -1 with a message (the store is unchanged on error).
 */
int		 cedar_entities_add_json(struct cedar_entities *,
		    const json_t *, char *err, size_t errsz);

enum cedar_decision {
	CEDAR_DENY = 0,
	CEDAR_ALLOW
};

/* what one policy did for one request */
enum cedar_result {
	CEDAR_NOT_SATISFIED = 0,	/* scope or a condition false */
	CEDAR_SATISFIED,
	CEDAR_ERROR			/* a condition errored: skipped */
};

struct cedar_request {
	struct cedar_uid	 cr_principal;
	struct cedar_uid	 cr_action;
	struct cedar_uid	 cr_resource;
	const json_t		*cr_context;	/* Cedar JSON; NULL: {} */
};

struct cedar_response {
	/* Cedar's decision: Allow iff a permit is satisfied and no forbid */
	enum cedar_decision	 cr_decision;
	/* policies that errored (Cedar skips them; vmcpd fails closed) */
	size_t			 cr_nerrors;
	size_t			 cr_error_policy;	/* the first */
	char			 cr_error[CEDAR_ERRLEN]; /* line:col: msg */
	/* if not NULL, cedar_policyset_len() results, one per policy */
	enum cedar_result	*cr_results;
};

/*
 * Evaluates every policy for the request, as Cedar does.  0 with the
 * response filled, or -1 with a message in resp->cr_error if the request
 * itself is malformed (a context that is no Cedar record) or memory ran
 * out; the caller then denies.
 */
int		 cedar_authorize(const struct cedar_policyset *,
		    const struct cedar_entities *, const struct cedar_request *,
		    struct cedar_response *resp);

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

#endif
