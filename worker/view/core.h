/*
 * The era-free core (core.c): what a request means against the view.
 */
#ifndef VMCPD_CORE_H
#define VMCPD_CORE_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "worker/view/view.h"

struct authz_filter;
struct config;
struct config_backend;

/* core.c: the era-free core, pure functions on the view */
enum core_kind {
	CORE_OTHER = 0,
	CORE_LIST,		/* answered from the view */
	CORE_ROUTE		/* forwarded to one backend */
};

struct core_err {
	int	ce_code;
	char	ce_msg[512];
};

enum core_kind core_method_kind(const char *method);
/* a list page as result text: Legacy, or 2026-07-28 with server_info;
 * authz (NULL: none) filters its items per principal
 * (worker/auth/authz_rule.h) */
struct authz_filter;
int	 core_list(json_t *view, const char *method, json_t *params,
	    size_t pagesize, const json_t *server_info,
	    struct authz_filter *authz, char **text, size_t *len,
	    struct core_err *);
int	 core_route(json_t *view, const struct config *, const char *method,
	    json_t *params, const struct config_backend **be,
	    json_t **bparams, struct core_err *);
/* tools/call by the name alone (name need not be NUL-terminated) */
int	 core_route_tool(json_t *view, const struct config *,
	    const char *name, size_t namelen,
	    const struct config_backend **be, const char **own,
	    struct core_err *);
json_t	*core_capabilities(json_t *view, int logging);
/*
 * caps (core_capabilities()) cut to what the principal of authz (NULL:
 * none, caps stay) may use, as its lists show it: prompts when it may
 * see a prompt, resources a resource or a template, completions either;
 * tools stay (tools/list always answers).
 */
void	 core_capabilities_shown(json_t *caps, json_t *view,
	    struct authz_filter *authz);
/* 1 if the tool core_route_tool() routed last declares x-mcp-header
 * arguments: read with its route, no second look-up */
int	 core_route_has_headers(void);
json_t	*core_tool_headers(json_t *view, const char *name);
/* the filter core_list() applies to a private list (authz.c's) */
void	 core_set_filter(int (*)(void *, enum view_kind, const char *,
	    size_t, const char *, size_t));
void	 core_free(void);
json_t	*core_param_headers(json_t *view, const char *method,
	    const json_t *params, const json_t *bparams);

#endif
