/*
 * An operator's word on a backend (backend_ops.h): vmcpctl's reprobe
 * and drop-sessions, which the console gives too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/backend_ops.h"
#include "shared/health_probe.h"
#include "shared/store_stat.h"

struct bops_keys {
	const char	 *bk_suffix;
	char		**bk_keys;
	size_t		  bk_n;
	int		  bk_err;
};

static int
bops_keys_cb(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct bops_keys  *bk = arg;
	char		 **k, *p;
	size_t		   sl;

	(void)rec;
	if (bk->bk_suffix != NULL && ((sl = strlen(bk->bk_suffix)) > klen ||
	    memcmp((const char *)key + klen - sl, bk->bk_suffix, sl) != 0))
		return 0;
	if ((k = reallocarray(bk->bk_keys, bk->bk_n + 1, sizeof(*k))) ==
	    NULL || (p = malloc(klen + 1)) == NULL) {
		if (k != NULL)
			bk->bk_keys = k;
		bk->bk_err = 1;
		return 1;
	}
	memcpy(p, key, klen);
	p[klen] = '\0';
	bk->bk_keys = k;
	bk->bk_keys[bk->bk_n++] = p;
	return 0;
}

/* the keys gathered in one read, then each deleted in its own write */
long
backend_ops_delete(struct store *st, enum store_db db, const char *suffix)
{
	struct bops_keys bk = { suffix, NULL, 0, 0 };
	size_t		 i;
	long		 n = 0;

	if (store_iter(st, db, store_now_ms(), 1, bops_keys_cb, &bk) == -1 ||
	    bk.bk_err)
		n = -1;
	for (i = 0; i < bk.bk_n; i++) {
		if (n != -1 && store_del(st, db, bk.bk_keys[i],
		    strlen(bk.bk_keys[i])) == 0)
			n++;
		free(bk.bk_keys[i]);
	}
	free(bk.bk_keys);
	return n;
}

int
backend_ops_name_ok(const char *name)
{
	return name != NULL && *name != '\0' && strchr(name, '|') == NULL;
}

int
backend_ops_reprobe(struct store *st, const char *backend, int *dropped)
{
	int	era, info, health;

	*dropped = 0;
	era = store_del(st, STORE_ERAS, backend, strlen(backend));
	info = store_del(st, STORE_BACKENDS, backend, strlen(backend));
	/* its health starts over: unknown until the next health check */
	health = health_probe_clear(st, backend);
	if (era == -1 && info == -1 && health == -1)
		return -1;
	*dropped = (era == 0 ? BOPS_ERA : 0) | (info == 0 ? BOPS_INFO : 0) |
	    (health == 1 ? BOPS_HEALTH : 0);
	return 0;
}

long
backend_ops_drop_sessions(struct store *st, const char *backend)
{
	char	suffix[300];

	if ((size_t)snprintf(suffix, sizeof(suffix), "|%s", backend) >=
	    sizeof(suffix))
		return -1;
	return backend_ops_delete(st, STORE_BSESSIONS, suffix);
}
