/*
 * The Modern edge's request as the backend gets it (modern_params(),
 * upstream's create_request): to a 2026-07-28 backend the client's
 * params under the backend's names with this hop's _meta (built once
 * per distinct client _meta and cached), to a 2025-11-25 one without
 * the Modern envelope; on the hot path as text, without a tree.
 */
#include <stdlib.h>
#include <string.h>

#include "worker/http/httpd.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/mrequest.h"
#include "proto/meta.h"
#include "proto/jsonspan.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/request/modern.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "shared/config_backend.h"
#include "worker/request/modern_req.h"

/* s as a JSON string's text, or NULL */
static char *
modern_json_string(const char *s, size_t *len)
{
	json_t	*j;
	char	*t;

	if ((j = json_string(s)) == NULL)
		return NULL;
	t = jsonrpc_dump(j, len);
	json_decref(j);
	return t;
}

/*
 * The backend's params are the client's but for the envelope: a tool or
 * prompt under its own name, a resource read (URIs are not renamed).
 */
static int
modern_same_target(struct mreq *m)
{
	const struct mcp_method	*mm = m->m_r.r_msg.jm_mm;
	json_t			*own;
	const char		*k = mm->mm_route_key;

	/* completion/complete's ref may be renamed inside */
	if (mm->mm_route == MCP_ROUTE_NONE || mm->mm_route == MCP_ROUTE_REF)
		return 0;
	own = json_object_get(m->m_r.r_bparams, k);
	return own != NULL && json_equal(own,
	    json_object_get(m->m_r.r_msg.jm_params, k));
}

/*
 * This hop's _meta by the client's _meta text, which alone decides it
 * (its capabilities, log level and the keys that travel): a client
 * sends the same _meta call after call, and building and dumping it
 * costs more than the rest of the request.
 */
#define MODERN_META_CACHE	8
#define MODERN_META_KEY_MAX	4096	/* a bigger _meta takes the tree path */
static struct {
	char	*mc_in;
	size_t	 mc_inlen;
	char	*mc_out;
	size_t	 mc_outlen;
} modern_meta_cache[MODERN_META_CACHE];
static size_t modern_meta_next;

static const char *
modern_meta_find(const char *in, size_t inlen, size_t *outlen)
{
	size_t i;

	for (i = 0; i < MODERN_META_CACHE; i++)
		if (modern_meta_cache[i].mc_in != NULL &&
		    modern_meta_cache[i].mc_inlen == inlen &&
		    memcmp(modern_meta_cache[i].mc_in, in, inlen) == 0) {
			*outlen = modern_meta_cache[i].mc_outlen;
			return modern_meta_cache[i].mc_out;
		}
	return NULL;
}

static const char *
modern_meta_text(const char *in, size_t inlen, const json_t *params,
    const json_t *caps, const char *level, size_t *outlen)
{
	json_t		*info;
	const char	*hit;
	char		*out, *key;
	size_t		 i, olen;

	if (inlen > MODERN_META_KEY_MAX)
		return NULL;
	if ((hit = modern_meta_find(in, inlen, outlen)) != NULL)
		return hit;
	if ((info = upstream_client_info()) == NULL)
		return NULL;
	out = proto_modern_meta_text(params, caps, info, level, &olen);
	json_decref(info);
	if (out == NULL || (key = malloc(inlen)) == NULL) {
		free(out);
		return NULL;
	}
	memcpy(key, in, inlen);
	i = modern_meta_next++ % MODERN_META_CACHE;
	free(modern_meta_cache[i].mc_in);
	free(modern_meta_cache[i].mc_out);
	modern_meta_cache[i].mc_in = key;
	modern_meta_cache[i].mc_inlen = inlen;
	modern_meta_cache[i].mc_out = out;
	modern_meta_cache[i].mc_outlen = olen;
	*outlen = olen;
	return out;
}

void
modern_free_all(void)
{
	size_t i;

	for (i = 0; i < MODERN_META_CACHE; i++) {
		free(modern_meta_cache[i].mc_in);
		free(modern_meta_cache[i].mc_out);
		modern_meta_cache[i].mc_in = modern_meta_cache[i].mc_out = NULL;
	}
}

/*
 * The client's params text with this hop's _meta in it, or NULL; the
 * text only if same (not renamed), else the cache alone is filled, for
 * the hot path's next call with this _meta.
 */
static char *
modern_params_text(struct mreq *m, const json_t *p, const char *level,
    int same, size_t *len)
{
	const char	*ptext, *cmeta, *hop;
	size_t		 plen, cmlen, hoplen;

	if ((ptext = front_params_text(m->m_r.r_req, &plen)) == NULL ||
	    (cmeta = proto_json_value(ptext, plen, "_meta", &cmlen)) == NULL ||
	    (hop = modern_meta_text(cmeta, cmlen, p, m->m_r.r_caps, level,
	    &hoplen)) == NULL || !same)
		return NULL;
	return proto_text_replace(ptext, plen, cmeta, cmlen, hop, hoplen, len);
}

/*
 * The hot path to a 2026-07-28 backend: the client's params text with
 * this hop's _meta in it, when the cache has it (else -1: the tree path
 * makes it, for the next call), and the backend's name if renamed.
 */
static int
modern_params_fast(struct mreq *m, struct upstream_params *up)
{
	struct modern_fast	*f = &m->m_fast;
	struct proto_edit	 e[2];
	const char		*hop;
	char			*text, *own = NULL;
	size_t			 hoplen, tlen, ownlen = 0;

	if ((hop = modern_meta_find(f->mf_meta, f->mf_metalen, &hoplen)) ==
	    NULL)
		return -1;
	if (f->mf_own != NULL &&
	    (own = modern_json_string(f->mf_own, &ownlen)) == NULL)
		return -1;
	e[0] = (struct proto_edit){ f->mf_meta, f->mf_metalen, hop, hoplen };
	e[1] = (struct proto_edit){ f->mf_nameval, m->m_r.r_fast.rf_namelen + 2, own,
	    ownlen };
	text = proto_text_edit(m->m_r.r_fast.rf_params, m->m_r.r_fast.rf_plen, e, own != NULL ?
	    2 : 1, &tlen);
	free(own);
	if (text == NULL)
		return -1;
	up->up_owned = text;
	up->up_len = tlen;
	/* Mcp-Name without a tree: this is the hot path */
	up->up_name = f->mf_own != NULL ? f->mf_own : f->mf_name;
	up->up_namelen = strlen(up->up_name);
	return 0;
}

/* Modern to Modern: the client's params under the backend's names,
 * MRTR fields and all, with the client's capabilities mirrored */
static int
modern_params_modern(struct mreq *m, struct upstream_params *up)
{
	json_t		*p, *v;
	const char	*level;
	int		 strip;

	/* the tasks extension is declared only to a backend that offers
	 * it: for one that does not, the tree, without the hop's cache
	 * (keyed by the client's _meta alone) */
	strip = modern_task_declared(m) &&
	    !modern_task_backend(m->m_r.r_view, m->m_r.r_be->cb_name);
	if (m->m_r.r_fast.rf_params != NULL) {
		if (!strip && modern_params_fast(m, up) == 0)
			return 0;
		if (modern_fast_load(m) == -1)
			return -1;
	}
	if (strip && m->m_bcaps == NULL &&
	    (m->m_bcaps = proto_caps_without_tasks(m->m_r.r_caps)) == NULL)
		return -1;
	if ((p = json_copy(m->m_r.r_bparams)) == NULL)
		return -1;
	up->up_tree = p;
	if ((v = json_object_get(m->m_r.r_msg.jm_params, "inputResponses")) !=
	    NULL && json_object_set(p, "inputResponses", v) == -1)
		return -1;
	if ((v = json_object_get(m->m_r.r_msg.jm_params, "requestState")) !=
	    NULL && json_object_set(p, "requestState", v) == -1)
		return -1;
	level = json_string_value(json_object_get(json_object_get(
	    m->m_r.r_msg.jm_params, "_meta"), "io.modelcontextprotocol/logLevel"));
	up->up_caps = strip ? m->m_bcaps : m->m_r.r_caps;
	up->up_level = level;
	up->up_phdrs = m->m_r.r_phdrs;
	/* not renamed: the client's own text goes on, its _meta replaced;
	 * renamed: this hop's _meta is cached for the hot path */
	if (m->m_r.r_req != NULL && !strip)
		up->up_owned = modern_params_text(m, p, level,
		    modern_same_target(m), &up->up_len);
	return 0;
}

/* the hot path's params for a 2025-11-25 backend: _meta stripped,
 * under the backend's name */
static char *
modern_fast_legacy_text(struct mreq *m, size_t *len)
{
	char	*own = NULL, *text;
	size_t	 ownlen = 0;

	if (m->m_fast.mf_own != NULL && (own = modern_json_string(
	    m->m_fast.mf_own, &ownlen)) == NULL)
		return NULL;
	text = proto_params_strip_meta_text(m->m_r.r_fast.rf_params,
	    m->m_r.r_fast.rf_plen, own, ownlen, len);
	free(own);
	return text;
}

/* the request for the revision the backend is met in (create_request) */
int
modern_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	struct mreq *m = arg;

	if (era == PROTO_ERA_MODERN)
		return modern_params_modern(m, up);
	/* the hot path: the client's params text, its _meta stripped */
	if (m->m_r.r_fast.rf_params != NULL &&
	    (up->up_owned = modern_fast_legacy_text(m, &up->up_len)) != NULL)
		return 0;
	if (modern_fast_load(m) == -1)
		return -1;
	up->up_tree = json_incref(m->m_r.r_bparams);
	return 0;
}
