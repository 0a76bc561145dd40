/*
 * The Modern edge's request in flight, shared by modern.c (dispatch,
 * answers) and modern_params.c (the request as the backend gets it).
 */
#ifndef VMCPD_MODERN_REQ_H
#define VMCPD_MODERN_REQ_H

#include <jansson.h>

#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/upstream/upstream_result.h"
#include "worker/process/request.h"

/*
 * What the hot path's call (its spans in the request's r_fast) adds in
 * 2026-07-28, read off a scan of the body (proto_modern_scan_call)
 * instead of a tree; modern_fast_load() parses the body when the call
 * turns out to need the tree.
 */
struct modern_fast {
	const char	*mf_meta;	/* params._meta */
	size_t		 mf_metalen;
	char		*mf_name;	/* params.name, a copy (r_fast's) */
	const char	*mf_nameval;	/* its value's text, quotes and all */
	const char	*mf_caps;	/* _meta's clientCapabilities */
	size_t		 mf_capslen;
	char		*mf_own;	/* the backend's name if renamed */
};

struct mreq {
	struct request			 m_r;		/* no params if r_fast */
	struct modern_fast		 m_fast;
	int				 m_log;		/* logLevel was set */
	char				 m_needcap[32];	/* lacked by client */
	char				 m_refused[64];	/* method refused */
};

/* modern.c */
/* the hot path's call as a tree, from the body parsed again; a call
 * routed already gets its backend params (-1: it cannot) */
int	 modern_fast_load(struct mreq *);

/* modern_params.c */
/* the request in the revision the backend is met in (create_request
 * of struct upstream_cbs) */
int	 modern_params(void *arg, enum proto_era, struct upstream_params *);

#endif /* VMCPD_MODERN_REQ_H */
