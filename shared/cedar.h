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
 * as jansson JSON in Cedar's entity JSON format.  This header: the
 * policies, entities and a decision; what they read of a call's
 * arguments in cedar_args.h, requests in vmcpd's entity model in
 * cedar_request.h.
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


#endif
