/*
 * Listing one backend for a build (view_builds.c): its stored "raw"
 * lists while fresh, else its description and every page of every list
 * it offers, through the upstream edge (upstream.c); the lists stored
 * for every process's builds.
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/view/view.h"
#include "proto/proto.h"
#include "worker/process/process.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_result.h"
#include "worker/upstream/token_exchange.h"
#include "worker/state/link_store.h"
#include "worker/view/view_int.h"
#include "worker/builder/view_build.h"

const struct vkind_info vkinds[VK_N] = {
	{ "tools/list", "tools", "tools" },
	{ "resources/list", "resources", "resources" },
	{ "resources/templates/list", "resourceTemplates", "resources" },
	{ "prompts/list", "prompts", "prompts" },
};

static void	vfetch_next(struct vfetch *);

static void vfetch_fail(struct vfetch *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* use a "raw" record's lists (borrowed from it: f keeps references) */
static void
vfetch_take(struct vfetch *f, json_t *raw)
{
	int k;

	for (k = 0; k < VK_N; k++) {
		json_decref(f->vf_lists[k]);
		f->vf_lists[k] = json_incref(json_object_get(raw,
		    vkinds[k].vk_field));
		if (f->vf_lists[k] == NULL)
			f->vf_lists[k] = json_array();
	}
	json_decref(f->vf_caps);
	f->vf_caps = json_incref(json_object_get(raw, "capabilities"));
	f->vf_listed = views_stamp(raw, "listed");
}

/*
 * The scope a backend is listed in: a principal's view lists its
 * token_exchange backends as that principal, its authorization_code
 * ones as that principal if it holds a link (else as everyone, without
 * credentials: many servers list without a token), the others as
 * everyone (their lists, stored once, serve every principal's view)
 */
static const char *
vfetch_scope(const struct vfetch *f)
{
	/* lists are no one's: the shared scope (backend_session.h) */
	return bsession_scope_pick(f->vf_build->vb_scope,
	    texch_backend(f->vf_be) || f->vf_linked, BSESSION_FOR_SHARED);
}

/*
 * An authorization_code backend's lists, last listed with anyone's
 * link: what a principal without one is shown when the backend will
 * not list without a token, so that the person sees its tools and a
 * call asks for the consent.  Per backend, in this pseudo-scope.
 */
#define VFETCH_LINKED_SCOPE	"linked"
#define VFETCH_LINKED_TTL_MS	(24ULL * 60 * 60 * 1000)

static int
vfetch_linked_stand_in(struct vfetch *f)
{
	json_t *raw;

	if (!link_backend(f->vf_be) || f->vf_linked || (raw = view_load(
	    f->vf_build->vb_w, "raw", VFETCH_LINKED_SCOPE, f->vf_be->cb_name,
	    NULL)) == NULL)
		return 0;
	vfetch_take(f, raw);
	json_decref(raw);
	return 1;
}

/*
 * A token_exchange backend has nothing to list in the shared scope
 * (no client token to list it with): each principal's view lists it as
 * that principal, so the shared build leaves it out without a word.
 */
int
vfetch_per_principal(const struct vfetch *f)
{
	return texch_backend(f->vf_be) &&
	    strcmp(f->vf_build->vb_scope, VIEW_SCOPE_ANON) == 0;
}

/*
 * Fresh lists: stored for every worker's builds, unless the store has
 * some listed after this listing began (another build saw a change we
 * may have missed): then those are used.
 */
static void
vfetch_save(struct vfetch *f)
{
	struct vbuild	*b = f->vf_build;
	json_t		*raw;

	f->vf_listed = f->vf_started;
	raw = view_load(b->vb_w, "raw", vfetch_scope(f),
	    f->vf_be->cb_name, &f->vf_rec);
	if (raw != NULL && views_stamp(raw, "listed") > f->vf_started) {
		vfetch_take(f, raw);
		json_decref(raw);
		return;
	}
	json_decref(raw);
	raw = json_pack("{s:O*, s:O, s:O, s:O, s:O, s:I}",
	    "capabilities", f->vf_caps,
	    "tools", f->vf_lists[VK_TOOLS],
	    "resources", f->vf_lists[VK_RESOURCES],
	    "resourceTemplates", f->vf_lists[VK_TEMPLATES],
	    "prompts", f->vf_lists[VK_PROMPTS],
	    "listed", (json_int_t)f->vf_listed);
	if (raw != NULL)
		view_save(b->vb_w, "raw", vfetch_scope(f), f->vf_be->cb_name,
		    raw, views_ttl(b->vb_w) + VIEW_STALE_MS, 0, &f->vf_rec);
	/* kept longer: it stands in until someone lists with a link */
	if (raw != NULL && f->vf_linked)
		view_save(b->vb_w, "raw", VFETCH_LINKED_SCOPE,
		    f->vf_be->cb_name, raw, VFETCH_LINKED_TTL_MS, 0, NULL);
	json_decref(raw);
}

/* what went wrong with this backend: fmt names it */
static void
vfetch_fail(struct vfetch *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(f->vf_err, sizeof(f->vf_err), fmt, ap);
	va_end(ap);
	f->vf_ok = 0;
	if (f->vf_old != NULL) {
		vfetch_take(f, f->vf_old);
		f->vf_ok = f->vf_stale = 1;
	} else if (vfetch_linked_stand_in(f))
		f->vf_ok = f->vf_stale = 1;
	f->vf_done = 1;
	vbuild_fetched(f);
}

/* a page of a list (the upstream edge resent it once if need be) */
static void
vfetch_on_list(void *arg, const struct upstream_result *r)
{
	struct vfetch	*f = arg;
	json_t		*result, *items, *next, *response = r->ur_response;
	const char	*field = vkinds[f->vf_kind].vk_field;
	size_t		 i;

	f->vf_call = NULL;
	if (r->ur_status == UPSTREAM_FAILED) {
		/* the backend client's message names the backend already */
		vfetch_fail(f, "%s", r->ur_errmsg);
		return;
	}
	if (json_object_get(response, "error") != NULL) {
		const char *m = json_string_value(json_object_get(
		    json_object_get(response, "error"), "message"));

		vfetch_fail(f, "backend %s refused to list: %s",
		    f->vf_be->cb_name, m != NULL ? m : "(no message)");
		return;
	}
	result = json_object_get(response, "result");
	items = json_object_get(result, field);
	if (!json_is_array(items)) {
		vfetch_fail(f, "backend %s sent a list without \"%s\"",
		    f->vf_be->cb_name, field);
		return;
	}
	/* what one backend makes every process hold and the store keep */
	f->vf_bytes += json_dumpb(items, NULL, 0, JSON_COMPACT);
	if (f->vf_bytes > f->vf_build->vb_w->w_conf->cf_agg
	    .ca_max_backend_list) {
		vfetch_fail(f, "backend %s: its lists pass aggregation."
		    "maxBackendListSize (%zu bytes); refused",
		    f->vf_be->cb_name,
		    f->vf_build->vb_w->w_conf->cf_agg.ca_max_backend_list);
		return;
	}
	for (i = 0; i < json_array_size(items); i++)
		(void)json_array_append(f->vf_lists[f->vf_kind],
		    json_array_get(items, i));
	free(f->vf_cursor);
	f->vf_cursor = NULL;
	next = json_object_get(result, "nextCursor");
	if (json_is_string(next)) {
		/* bounded, and a repeated cursor is a loop */
		if (json_object_get(f->vf_cursors, json_string_value(next))) {
			vfetch_fail(f, "backend %s repeated a list cursor: "
			    "%.64s", f->vf_be->cb_name,
			    json_string_value(next));
			return;
		}
		if (++f->vf_pages >= f->vf_build->vb_w->w_conf->cf_agg
		    .ca_max_backend_pages) {
			vfetch_fail(f, "backend %s: a list longer than "
			    "aggregation.maxBackendPages", f->vf_be->cb_name);
			return;
		}
		if ((f->vf_cursor = strdup(json_string_value(next))) == NULL ||
		    json_object_set_new(f->vf_cursors, f->vf_cursor,
		    json_true()) == -1) {
			vfetch_fail(f, "backend %s: out of memory",
			    f->vf_be->cb_name);
			return;
		}
	} else {
		f->vf_kind++;
		f->vf_pages = 0;
		json_object_clear(f->vf_cursors);
	}
	vfetch_next(f);
}

/* a list request's params, in either revision: the cursor, if any */
static int
vfetch_params(void *arg, enum proto_era era, struct upstream_params *up)
{
	struct vfetch *f = arg;

	(void)era;
	if (f->vf_cursor != NULL && (up->up_tree = json_pack("{s:s}",
	    "cursor", f->vf_cursor)) == NULL)
		return -1;
	return 0;
}

/* a call of the fetch to its backend, for the build's scope */
static struct upstream *
vfetch_call(struct vfetch *f, const char *method, int flags,
    const struct upstream_cbs *cbs)
{
	struct upstream_req uq;

	memset(&uq, 0, sizeof(uq));
	uq.uq_method = method;
	uq.uq_scope = vfetch_scope(f);
	uq.uq_client = ERA_LISTING;
	uq.uq_flags = flags;
	return upstream_call(f->vf_build->vb_w, f->vf_be, &uq, cbs, f);
}

/* list the next kind the backend offers, or the next page of this one */
static void
vfetch_next(struct vfetch *f)
{
	static const struct upstream_cbs cbs = {
		vfetch_params, NULL, vfetch_on_list
	};

	while (f->vf_kind < VK_N && !json_is_object(json_object_get(f->vf_caps,
	    vkinds[f->vf_kind].vk_cap)))
		f->vf_kind++;
	if (f->vf_kind == VK_N) {
		vfetch_save(f);
		f->vf_ok = 1;
		f->vf_done = 1;
		vbuild_fetched(f);
		return;
	}
	f->vf_call = vfetch_call(f, vkinds[f->vf_kind].vk_method, 0, &cbs);
	if (f->vf_call == NULL)
		vfetch_fail(f, "backend %s: cannot send the list request",
		    f->vf_be->cb_name);
}

/* list what a backend's initialize or discover result says it offers */
static void
vfetch_list(struct vfetch *f, json_t *result)
{
	json_decref(f->vf_caps);
	f->vf_caps = json_incref(json_object_get(result, "capabilities"));
	vfetch_next(f);
}

/* what the backend offers: its initialize or server/discover result */
static void
vfetch_described(void *arg, const struct upstream_result *r)
{
	struct vfetch	*f = arg;
	json_t		*result;

	f->vf_call = NULL;
	result = json_object_get(r->ur_response, "result");
	if (r->ur_status == UPSTREAM_FAILED) {
		vfetch_fail(f, "%s", r->ur_errmsg);	/* it names the backend */
		return;
	}
	if (r->ur_status != UPSTREAM_COMPLETE || !json_is_object(result)) {
		vfetch_fail(f, "backend %s: no description (initialize or "
		    "server/discover result)", f->vf_be->cb_name);
		return;
	}
	vfetch_list(f, result);
}

/* start one backend: its cached lists, else fetch them */
void
vfetch_start(struct vfetch *f)
{
	static const struct upstream_cbs cbs = {
		NULL, NULL, vfetch_described
	};
	struct vbuild		*b = f->vf_build;
	struct view_clock	 c;
	json_t			*raw;
	enum view_part		 age;

	if (vfetch_per_principal(f)) {
		f->vf_done = 1;
		vbuild_fetched(f);
		return;
	}
	views_clock(b->vb_w, &c);
	f->vf_started = c.vl_now;
	f->vf_linked = link_backend(f->vf_be) &&
	    strcmp(b->vb_scope, VIEW_SCOPE_ANON) != 0 &&
	    link_held(b->vb_w, f->vf_be, b->vb_scope);
	if ((raw = view_load(b->vb_w, "raw", vfetch_scope(f),
	    f->vf_be->cb_name, &f->vf_rec)) != NULL) {
		age = view_part_age(&c, views_stamp(raw, "listed"));
		/* a build for one backend's change takes the others as
		 * they are: past cacheTtl, they are rebuilt soon after */
		if ((age == VIEW_PART_FRESH && !f->vf_force) ||
		    (age == VIEW_PART_STALE && b->vb_only != NULL &&
		    !f->vf_force)) {
			vfetch_take(f, raw);
			json_decref(raw);
			if ((f->vf_stale = age == VIEW_PART_STALE))
				(void)snprintf(f->vf_err, sizeof(f->vf_err),
				    "backend %s: not listed again yet",
				    f->vf_be->cb_name);
			f->vf_ok = 1;
			f->vf_done = 1;
			vbuild_fetched(f);
			return;
		}
		/* listed anew; these stand in if that fails */
		json_decref(f->vf_old);
		f->vf_old = age != VIEW_PART_MISSING ? raw : NULL;
		if (f->vf_old == NULL)
			json_decref(raw);
	}
	f->vf_tried = 1;
	/* the era, the scope's session and the cached description are
	 * the upstream edge's */
	if ((f->vf_call = vfetch_call(f, "server/discover",
	    UPSTREAM_F_DESCRIBE, &cbs)) == NULL)
		vfetch_fail(f, "backend %s: cannot describe it",
		    f->vf_be->cb_name);
}

void
vfetch_clear(struct vfetch *f)
{
	int k;

	upstream_cancel(f->vf_call);
	for (k = 0; k < VK_N; k++)
		json_decref(f->vf_lists[k]);
	json_decref(f->vf_caps);
	json_decref(f->vf_cursors);
	json_decref(f->vf_old);
	free(f->vf_cursor);
}

/* a fetch set to list its backend afresh, keeping what says how */
void
vfetch_reset(struct vfetch *f, struct vbuild *b,
    const struct config_backend *be, int force)
{
	unsigned int	redos = f->vf_redos;
	int		k;

	vfetch_clear(f);
	memset(f, 0, sizeof(*f));
	f->vf_build = b;
	f->vf_be = be;
	f->vf_force = force;
	f->vf_redos = redos;
	f->vf_cursors = json_object();
	for (k = 0; k < VK_N; k++)
		f->vf_lists[k] = json_array();
}

/*
 * Lists of the backend stored since f got its own and listed later (by
 * another build, in this worker or another): those are the ones to use.
 */
void
vfetch_newer(struct vfetch *f, const struct view_clock *c)
{
	struct vbuild	*b = f->vf_build;
	json_t		*raw;
	enum view_part	 age;
	uint64_t	 listed;

	if ((raw = view_load(b->vb_w, "raw", vfetch_scope(f),
	    f->vf_be->cb_name, &f->vf_rec)) == NULL)
		return;
	listed = views_stamp(raw, "listed");
	age = view_part_age(c, listed);
	if (age != VIEW_PART_MISSING && (!f->vf_ok || listed > f->vf_listed)) {
		vfetch_take(f, raw);
		f->vf_ok = 1;
		f->vf_tried = 0;
		if (!(f->vf_stale = age != VIEW_PART_FRESH))
			f->vf_err[0] = '\0';
		else
			(void)snprintf(f->vf_err, sizeof(f->vf_err),
			    "backend %s: not listed again yet",
			    f->vf_be->cb_name);
	}
	json_decref(raw);
}
