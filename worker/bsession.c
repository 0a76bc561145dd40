/*
 * Backend sessions that belong to an identity scope rather than to a
 * client session, kept in the store's "bsessions" database under
 * "scope|backend" so every worker uses the same one: the sessions
 * vmcpd lists a backend's capabilities on, holds its notification
 * stream on and subscribes to resources on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker.h"

#define BSESSION_TTL_MS	(60ULL * 60 * 1000)

static void
bsession_key(char *buf, size_t len, const char *scope, const char *backend)
{
	(void)snprintf(buf, len, "%s|%s", scope, backend);
}

/* the listing backend session of (scope, backend), if one is recorded */
int
bsession_load(struct worker *w, const char *scope,
    const struct config_backend *be, char **sid, char **ver)
{
	struct store_rec	 rec;
	json_t			*o;
	json_error_t		 jerr;
	const char		*s = NULL, *v = NULL;
	char			 key[STORE_KEY_MAX];
	int			 rc = -1;

	*sid = *ver = NULL;
	memset(&rec, 0, sizeof(rec));
	bsession_key(key, sizeof(key), scope, be->cb_name);
	if (store_get(w->w_store, STORE_BSESSIONS, key, strlen(key),
	    store_now_ms(), &rec) != 0)
		return -1;
	if ((o = json_loadb(rec.sr_data, rec.sr_len, 0, &jerr)) != NULL &&
	    json_unpack(o, "{s?s, s:s}", "sid", &s, "pv", &v) == 0) {
		*sid = s != NULL ? strdup(s) : NULL;
		*ver = strdup(v);
		rc = 0;
	}
	json_decref(o);
	store_rec_clear(&rec);
	return rc;
}

void
bsession_save(struct worker *w, const char *scope,
    const struct config_backend *be, const char *sid, const char *ver)
{
	json_t		*o;
	char		*buf, key[STORE_KEY_MAX];
	size_t		 len;
	uint64_t	 now = store_now_ms();

	bsession_key(key, sizeof(key), scope, be->cb_name);
	if ((o = json_pack("{s:s*, s:s}", "sid", sid, "pv", ver)) == NULL)
		return;
	if ((buf = jsonrpc_dump(o, &len)) != NULL) {
		/* grouped by backend: the store counts them per backend */
		if (store_put_ext(w->w_store, STORE_BSESSIONS, key,
		    strlen(key), buf, len, now + BSESSION_TTL_MS, now, 0,
		    be->cb_name, strlen(be->cb_name)) == -1)
			log_warnx("cannot record the backend session of %s",
			    be->cb_name);
		free(buf);
	}
	json_decref(o);
}

void
bsession_forget(struct worker *w, const char *scope,
    const struct config_backend *be)
{
	char key[STORE_KEY_MAX];

	bsession_key(key, sizeof(key), scope, be->cb_name);
	(void)store_del(w->w_store, STORE_BSESSIONS, key, strlen(key));
}

