/*
 * The MCP method table: one entry per method of 2025-11-25 and
 * 2026-07-28 (MCP 2025-11-25 and 2026-07-28, Schema; the tasks
 * extension for tasks/update and notifications/tasks), looked up once
 * per request by the front and carried in the message (jm_mm) to the
 * Legacy and the Modern edge, which switch on its id and read its
 * flags instead of comparing names.  Pure: no I/O.
 */
#ifndef VMCPD_METHOD_H
#define VMCPD_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "proto/method_id.h"

enum mcp_method_kind {
	MCP_KIND_REQUEST = 1,
	MCP_KIND_NOTIFICATION
};

/* who sends it */
#define MCP_DIR_C2S	0x1	/* client to server */
#define MCP_DIR_S2C	0x2	/* server to client */

/* revisions, as a set */
#define MCP_REV_LEGACY	0x1	/* 2025-11-25 */
#define MCP_REV_MODERN	0x2	/* 2026-07-28 */

/*
 * The capability a method needs: the server's for what a client sends
 * (a method behind one not offered does not exist), the client's for
 * what a server sends.
 */
enum mcp_cap {
	MCP_CAP_NONE = 0,
	MCP_CAP_TOOLS,
	MCP_CAP_PROMPTS,
	MCP_CAP_RESOURCES,
	MCP_CAP_COMPLETIONS,
	MCP_CAP_LOGGING,
	MCP_CAP_TASKS,
	MCP_CAP_SAMPLING,
	MCP_CAP_ELICITATION,
	MCP_CAP_ROOTS
};

/* what a request is routed to one backend by */
enum mcp_route {
	MCP_ROUTE_NONE = 0,
	MCP_ROUTE_TOOL,		/* params.name, a tool's */
	MCP_ROUTE_PROMPT,	/* params.name, a prompt's */
	MCP_ROUTE_URI,		/* params.uri */
	MCP_ROUTE_REF		/* params.ref: a prompt's name or a URI */
};

/* the Cedar action a request is authorized as (worker/auth/authz.c) */
enum mcp_action {
	MCP_ACTION_NONE = 0,
	MCP_ACTION_CALL_TOOL,		/* params.name, a tool */
	MCP_ACTION_GET_PROMPT,		/* params.name, a prompt */
	MCP_ACTION_READ_RESOURCE,	/* params.uri */
	/*
	 * the action of what params.ref names: a ref/prompt's get_prompt
	 * on its name, a ref/resource's read_resource on its uri (a
	 * template's uriTemplate, as the list shows it, or a resource's URI)
	 */
	MCP_ACTION_OF_REF
};

/* mm_flags */
#define MCP_MF_SESSION	0x01	/* needs a Legacy session */
#define MCP_MF_METERED	0x02	/* counted by rate limits */
#define MCP_MF_MRTR	0x04	/* may answer input_required (2026-07-28) */
#define MCP_MF_CACHEABLE 0x08	/* a complete result is cacheable
				   (2026-07-28, Caching) */
/*
 * How vmcpd serves what a client sends (each method it serves has one
 * of these, or lists: mm_lists, filtered item by item): on to a backend
 * on the client's behalf, which then needs a Cedar action (mm_action),
 * or MCP_MF_NOGATE and the reason why not at its entry in method.c;
 * or answered by vmcpd itself.  tests/unit/test_method.c holds the
 * table to it.
 */
#define MCP_MF_BACKEND	0x10	/* reaches a backend for the client */
#define MCP_MF_NOGATE	0x20	/* ... no Cedar action, on purpose */
#define MCP_MF_LOCAL	0x40	/* answered by vmcpd, no backend */

struct mcp_method {
	const char		*mm_name;
	uint8_t			 mm_len;	/* strlen(mm_name) */
	enum mcp_method_id	 mm_id;
	enum mcp_method_kind	 mm_kind;
	uint8_t			 mm_dir;	/* MCP_DIR_* */
	uint8_t			 mm_revs;	/* MCP_REV_*: defined in */
	uint8_t			 mm_served;	/* MCP_REV_*: vmcpd serves
						   it to clients in */
	enum mcp_cap		 mm_cap;
	enum mcp_route		 mm_route;
	const char		*mm_route_key;	/* the params member routed
						   by: "name", "uri", "ref" */
	const char		*mm_lists;	/* a list's result member:
						   "tools", ...; else NULL */
	const char		*mm_hname;	/* the params member Mcp-Name
						   mirrors (2026-07-28) */
	enum mcp_action		 mm_action;
	const char		*mm_audit;	/* the audit event type */
	unsigned int		 mm_flags;	/* MCP_MF_* */
};

/* the method named by len bytes at name (no NUL needed), or NULL */
const struct mcp_method	*mcp_method_lookup(const char *name, size_t len);
/* the same for a C string (NULL: NULL) */
const struct mcp_method	*mcp_method_find(const char *name);
/* the entry of an id (a valid one) */
const struct mcp_method	*mcp_method_get(enum mcp_method_id);
/* a capability's name in capabilities objects ("tools", ...), or NULL */
const char		*mcp_cap_name(enum mcp_cap);

/* the message's entry is this method's: the way to test a method,
 * instead of comparing its name */
#define MCP_METHOD_IS(mm, id)	((mm) != NULL && (mm)->mm_id == (id))

/* served to clients in this revision set */
#define MCP_METHOD_SERVED(mm, rev)	((mm) != NULL && \
	((mm)->mm_served & (rev)) != 0)

#endif /* VMCPD_METHOD_H */
