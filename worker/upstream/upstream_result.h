/*
 * A backend call's two sides as its caller sees them (upstream.h makes
 * the call): the params it builds for the revision the call goes in
 * (its create_request), what the backend sends mid-call, and the one
 * result it gets back.
 */
#ifndef VMCPD_UPSTREAM_RESULT_H
#define VMCPD_UPSTREAM_RESULT_H

#include <stddef.h>

#include <jansson.h>

#include "proto/proto.h"
#include "proto/jsonspan.h"


enum upstream_status {
	UPSTREAM_COMPLETE = 0,		/* a result */
	UPSTREAM_INPUT_REQUIRED,	/* a 2026-07-28 result asking input */
	UPSTREAM_ERROR,			/* the backend's JSON-RPC error */
	/* no answer, or an invalid one (a 2026-07-28 resultType the
	 * backend may not give): ur_errmsg says why */
	UPSTREAM_FAILED
};

struct upstream_result {
	enum upstream_status	 ur_status;
	enum proto_era		 ur_era;	/* the revision it went in */
	/* UPSTREAM_F_TEXT and a well-formed answer: the text of its
	 * "result" or "error" (ur_kind), JSON to pass on as it is */
	const char		*ur_kind;
	const char		*ur_text;
	size_t			 ur_len;
	/* a result's text: its members, as scanned (NULL: too many, or
	 * not known) */
	const struct proto_span	*ur_members;
	size_t			 ur_nmembers;
	/* else the JSON-RPC response (borrowed), or NULL */
	json_t			*ur_response;
	const char		*ur_errmsg;	/* UPSTREAM_FAILED */
};

/*
 * The params of a call as the caller builds them for revision era (its
 * create_request): a tree (up_tree, taken) or text (up_text, borrowed
 * for the call's life, or up_owned, taken).  For 2026-07-28 a tree gets
 * this hop's _meta here (up_caps mirrored, up_level); text must carry
 * it already.
 */
struct upstream_params {
	json_t		*up_tree;
	const char	*up_text;
	char		*up_owned;
	size_t		 up_len;
	/* 2026-07-28 headers: Mcp-Name's value unless the tree names it,
	 * and the Mcp-Param-* values (name -> string), borrowed */
	const char	*up_name;
	size_t		 up_namelen;
	const json_t	*up_phdrs;
	const json_t	*up_caps;
	const char	*up_level;
};

struct upstream_cbs {
	/* create_request: -1 fails the call (no memory, body gone) */
	int	(*uc_params)(void *arg, enum proto_era era,
		    struct upstream_params *);
	/*
	 * What the backend sends mid-call: a notification (progress, a
	 * log message) or a request for the client (elicitation,
	 * sampling, roots) on backend session bsid in revision version.
	 * 0: relayed (a request's answer goes back with upstream_post()),
	 * -1 with why: the backend gets that refusal.  May be NULL.
	 */
	int	(*uc_push)(void *arg, json_t *msg, const char *bsid,
		    const char *version, char *why, size_t whylen);
	/* once, unless cancelled */
	void	(*uc_done)(void *arg, const struct upstream_result *);
};

/* a response (the tree, or the text parsed): a new reference, or NULL */
json_t	*upstream_response(const struct upstream_result *);

#endif /* VMCPD_UPSTREAM_RESULT_H */
