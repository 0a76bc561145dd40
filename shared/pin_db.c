/*
 * The pins db (pin_db.h): one record a definition under pin_key()'s
 * "<backend>|<kind>|<name>", never expiring, and one decision stamp a
 * backend under "<backend>|*" (no kind is "*"), bumped by every
 * decision so that a watch reads one small record.  A pending change's
 * record is in its backend's group, which the store counts, so that
 * /metrics and /status count them with one read.  Synchronous, each
 * call its own short transactions; a page of records is copied out
 * before any callback runs (store_range(), store_iter()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/pin_db.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_stat.h"
#include "shared/store_update.h"

#define PIN_DB_PAGE	64	/* records copied out at a time */
#define PIN_DB_PINNED	",\"state\":\"pinned\","
#define PIN_STAMP	"*"

int
pin_db_get(struct store *s, const char *backend, enum pin_kind kind,
    const char *name, struct pin_rec *pr)
{
	struct store_rec	 rec;
	char			 key[PIN_KEY_MAX + 1];
	int			 klen, rc;

	memset(pr, 0, sizeof(*pr));
	if ((klen = pin_key(key, backend, kind, name)) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((rc = store_get(s, STORE_PINS, key, (size_t)klen, store_now_ms(),
	    &rec)) != 0)
		return rc;
	rc = pin_rec_decode(rec.sr_data, rec.sr_len, pr);
	store_rec_clear(&rec);
	if (rc == -1) {
		log_warnx("%s: %s: not a pin record", __func__, key);
		errno = EINVAL;
	}
	return rc;
}

/*
 * A record's group, which the store counts: a pending change's is its
 * backend's name (a configured name fits STORE_GROUP_MAX), the rest's
 * PIN_GROUP_OTHER (no backend's name), so that pin_db_pending() is one
 * read.
 */
#define PIN_GROUP_OTHER	"|"

static const char *
pin_db_group(const struct pin_rec *pr)
{
	if (pr->pr_state != PIN_PENDING ||
	    strlen(pr->pr_backend) > STORE_GROUP_MAX)
		return PIN_GROUP_OTHER;
	return pr->pr_backend;
}

int
pin_db_put(struct store *s, const struct pin_rec *pr)
{
	char	 key[PIN_KEY_MAX + 1];
	char	*data;
	size_t	 len;
	int	 klen, rc;

	if ((klen = pin_key(key, pr->pr_backend, pr->pr_kind,
	    pr->pr_name)) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((data = pin_rec_encode(pr, &len)) == NULL)
		return -1;
	rc = store_put_ext(s, STORE_PINS, key, (size_t)klen, data, len, 0,
	    store_now_ms(), 0, pin_db_group(pr), strlen(pin_db_group(pr)));
	free(data);
	return rc;
}

int
pin_db_del(struct store *s, const char *backend, enum pin_kind kind,
    const char *name)
{
	char	key[PIN_KEY_MAX + 1];
	int	klen;

	if ((klen = pin_key(key, backend, kind, name)) == -1) {
		errno = EINVAL;
		return -1;
	}
	return store_del(s, STORE_PINS, key, (size_t)klen);
}

/* the key of backend's decision stamp, or of its records' prefix */
static int
pin_db_prefix(char buf[PIN_BACKEND_MAX + 3], const char *backend,
    const char *tail)
{
	size_t	bl;

	if (backend == NULL || (bl = strnlen(backend,
	    PIN_BACKEND_MAX + 1)) == 0 || bl > PIN_BACKEND_MAX ||
	    strchr(backend, '|') != NULL) {
		errno = EINVAL;
		return -1;
	}
	return snprintf(buf, PIN_BACKEND_MAX + 3, "%s|%s", backend, tail);
}

struct pin_walk {
	pin_db_cb	 pw_cb;
	int		(*pw_mut)(void *, struct pin_rec *);	/* or */
	int		 pw_changes;	/* pending and rejected ones only */
	void		*pw_arg;
	long		 pw_n;
	int		 pw_stop;
	char		 pw_after[PIN_KEY_MAX + 1];
	size_t		 pw_alen;
};

static int
pin_db_on_rec(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct pin_walk		*pw = arg;
	struct pin_rec		 pr;
	const char		*bar;

	if (klen <= PIN_KEY_MAX) {
		memcpy(pw->pw_after, key, klen);
		pw->pw_alen = klen;
	}
	/* a decision stamp: "<backend>|*" */
	if ((bar = memchr(key, '|', klen)) != NULL &&
	    (size_t)(bar - (const char *)key) + 2 == klen && bar[1] == '*')
		return 0;
	/*
	 * A pin without a change, told apart before it is parsed: every
	 * string inside is escaped, so only the record's own member reads
	 * so (pin_rec_encode(), compact)
	 */
	if (pw->pw_changes && memmem(rec->sr_data, rec->sr_len,
	    PIN_DB_PINNED, sizeof(PIN_DB_PINNED) - 1) != NULL)
		return 0;
	if (pin_rec_decode(rec->sr_data, rec->sr_len, &pr) == -1) {
		log_warnx("pin_db_list: %.*s: not a pin record",
		    (int)(klen > PIN_KEY_MAX ? PIN_KEY_MAX : klen),
		    (const char *)key);
		return 0;
	}
	pw->pw_n++;
	if (pw->pw_mut != NULL)
		pw->pw_stop = pw->pw_mut(pw->pw_arg, &pr) != 0;
	else
		pw->pw_stop = pw->pw_cb(pw->pw_arg, &pr) != 0;
	pin_rec_clear(&pr);
	return pw->pw_stop;
}

/* each record of backend (NULL: all) to pw's callback */
static int
pin_db_walk(struct store *s, const char *backend, struct pin_walk *pw)
{
	char		 prefix[PIN_BACKEND_MAX + 3];
	int		 plen, more = 1;

	if (backend == NULL) {
		if (store_iter(s, STORE_PINS, store_now_ms(), 0, pin_db_on_rec,
		    pw) == -1)
			return -1;
		return (int)pw->pw_n;
	}
	if ((plen = pin_db_prefix(prefix, backend, "")) == -1)
		return -1;
	while (more && !pw->pw_stop) {
		switch (store_range(s, STORE_PINS, prefix, (size_t)plen,
		    pw->pw_alen > 0 ? pw->pw_after : NULL, pw->pw_alen,
		    PIN_DB_PAGE, store_now_ms(), pin_db_on_rec, pw, &more)) {
		case -1:
			return -1;
		case 0:
			more = 0;
			break;
		}
	}
	return (int)pw->pw_n;
}

int
pin_db_list(struct store *s, const char *backend, pin_db_cb cb, void *arg)
{
	struct pin_walk	 pw;

	memset(&pw, 0, sizeof(pw));
	pw.pw_cb = cb;
	pw.pw_arg = arg;
	return pin_db_walk(s, backend, &pw);
}

int
pin_db_list_changes(struct store *s, const char *backend, pin_db_cb cb,
    void *arg)
{
	struct pin_walk	 pw;

	memset(&pw, 0, sizeof(pw));
	pw.pw_cb = cb;
	pw.pw_arg = arg;
	pw.pw_changes = 1;
	return pin_db_walk(s, backend, &pw);
}

static int
pin_db_on_pending(void *arg, const struct pin_rec *pr)
{
	long	*n = arg;

	if (pr->pr_state == PIN_PENDING)
		(*n)++;
	return 0;
}

static int
pin_db_on_group(void *arg, const char *name, size_t nlen, uint64_t n)
{
	long	*sum = arg;

	if (nlen != strlen(PIN_GROUP_OTHER) ||
	    memcmp(name, PIN_GROUP_OTHER, nlen) != 0)
		*sum += (long)n;
	return 0;
}

long
pin_db_pending(struct store *s, const char *backend)
{
	size_t	c;
	long	n = 0;

	if (backend == NULL)
		return store_groups(s, STORE_PINS, pin_db_on_group, &n) == -1 ?
		    -1 : n;
	if (strlen(backend) <= STORE_GROUP_MAX)
		return store_group_count(s, STORE_PINS, backend,
		    strlen(backend), &c) == -1 ? -1 : (long)c;
	/* a name past the groups' bound (not a configured one): a walk */
	if (pin_db_list(s, backend, pin_db_on_pending, &n) == -1)
		return -1;
	return n;
}

/* the stamp, decimal ms, moved to now or past its last value */
static int
pin_db_on_stamp(void *arg, const void *data, size_t len, void *out,
    size_t outmax, size_t *outlen)
{
	uint64_t	*now = arg, old = 0;
	char		 buf[32];
	int		 n;

	if (data != NULL && len > 0 && len < sizeof(buf)) {
		memcpy(buf, data, len);
		buf[len] = '\0';
		old = strtoull(buf, NULL, 10);
	}
	if (*now <= old)
		*now = old + 1;
	n = snprintf(out, outmax, "%" PRIu64, *now);
	if (n < 0 || (size_t)n >= outmax)
		return STORE_UPD_KEEP;
	*outlen = (size_t)n;
	return STORE_UPD_PUT;
}

/* backend's decision stamp moved on: 0, or -1 */
int
pin_db_stamp(struct store *s, const char *backend)
{
	char		key[PIN_BACKEND_MAX + 3];
	uint64_t	now = store_now_ms();
	int		klen;

	if ((klen = pin_db_prefix(key, backend, PIN_STAMP)) == -1)
		return -1;
	return store_update(s, STORE_PINS, key, (size_t)klen, now,
	    pin_db_on_stamp, &now) == -1 ? -1 : 0;
}

uint64_t
pin_db_decided(struct store *s, const char *backend)
{
	struct store_rec	rec;
	char			key[PIN_BACKEND_MAX + 3];
	uint64_t		ms = 0;
	int			klen;

	if ((klen = pin_db_prefix(key, backend, PIN_STAMP)) == -1 ||
	    store_get(s, STORE_PINS, key, (size_t)klen, store_now_ms(),
	    &rec) != 0)
		return 0;
	ms = strtoull(rec.sr_data, NULL, 10);
	store_rec_clear(&rec);
	return ms;
}

struct pin_decision {
	struct store	*pd_store;
	int		 pd_approve;
	int		 pd_all;
	uint64_t	 pd_now;
	long		 pd_n;
	int		 pd_fail;
	pin_db_cb	 pd_cb;
	void		*pd_arg;
};

/* one record decided and written back (then to pd_cb) */
static int
pin_db_on_decide(void *arg, struct pin_rec *pr)
{
	struct pin_decision	*pd = arg;

	if (pin_rec_decide(pr, pd->pd_approve, pd->pd_all, pd->pd_now) == 0)
		return 0;
	if (pin_db_put(pd->pd_store, pr) == -1) {
		log_warn("pin_db_decide: %s %s %s", pr->pr_backend,
		    pin_kind_name(pr->pr_kind), pr->pr_name);
		pd->pd_fail = 1;
		return 1;
	}
	pd->pd_n++;
	if (pd->pd_cb != NULL)
		(void)pd->pd_cb(pd->pd_arg, pr);
	return 0;
}

long
pin_db_decide_each(struct store *s, const char *backend, enum pin_kind kind,
    const char *name, int approve, pin_db_cb cb, void *arg)
{
	struct pin_decision	 pd;
	struct pin_walk		 pw;
	struct pin_rec		 pr;
	int			 rc;

	memset(&pd, 0, sizeof(pd));
	pd.pd_store = s;
	pd.pd_approve = approve;
	pd.pd_all = name == NULL;
	pd.pd_now = store_now_ms();
	pd.pd_cb = cb;
	pd.pd_arg = arg;
	if (name != NULL) {
		if ((rc = pin_db_get(s, backend, kind, name, &pr)) == -1)
			return -1;
		if (rc == STORE_NOTFOUND)
			return 0;
		(void)pin_db_on_decide(&pd, &pr);
		pin_rec_clear(&pr);
	} else {
		memset(&pw, 0, sizeof(pw));
		pw.pw_mut = pin_db_on_decide;
		pw.pw_arg = &pd;
		if (backend == NULL || pin_db_walk(s, backend, &pw) == -1)
			return -1;
	}
	if (pd.pd_n > 0 && pin_db_stamp(s, backend) == -1)
		log_warn("pin_db_decide: %s: the decision stamp", backend);
	if (pd.pd_n > 0 && store_gauge_add(s, approve ? PIN_DB_APPROVED :
	    PIN_DB_REJECTED, (int)pd.pd_n) == -1)
		log_warn("pin_db_decide: the decisions' count");
	return pd.pd_fail ? -1 : pd.pd_n;
}

long
pin_db_decide(struct store *s, const char *backend, enum pin_kind kind,
    const char *name, int approve)
{
	return pin_db_decide_each(s, backend, kind, name, approve, NULL, NULL);
}

int
pin_db_take(struct store *s, const void *data, size_t len,
    char backend[PIN_BACKEND_MAX + 1])
{
	struct pin_rec	rec, have;
	int		rc;

	if (pin_rec_decode(data, len, &rec) == -1)
		return -1;
	memcpy(backend, rec.pr_backend, sizeof(rec.pr_backend));
	/* pin_db_get() leaves have empty on any answer but 0 */
	if (pin_db_get(s, rec.pr_backend, rec.pr_kind, rec.pr_name,
	    &have) == 0 && have.pr_state == rec.pr_state &&
	    strcmp(have.pr_hash, rec.pr_hash) == 0 &&
	    strcmp(have.pr_new, rec.pr_new) == 0)
		rc = 0;
	else
		rc = pin_db_put(s, &rec) == 0 ? 1 : -1;
	pin_rec_clear(&have);
	pin_rec_clear(&rec);
	return rc;
}
