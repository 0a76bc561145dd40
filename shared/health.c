/*
 * Backend health (health.h): the circuit breaker of each backend,
 * shared through the store by every worker and the builder.  The hot
 * path reads; it writes when a request fails, when the breaker changes
 * state, and once on the first success after failures.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "shared/health.h"
#include "shared/health_probe.h"
#include "log.h"
#include "shared/store.h"
#include "shared/store_update.h"

#define BREAKER_PREFIX	"breaker/"

const char *
breaker_state_name(enum breaker_state st)
{
	switch (st) {
	case BREAKER_CLOSED:
		return "closed";
	case BREAKER_OPEN:
		return "open";
	case BREAKER_HALF_OPEN:
		return "half-open";
	}
	return "unknown";
}

int
breaker_admit_step(struct breaker *b, uint64_t open_ms, uint64_t lease_ms,
    uint64_t now_ms, enum breaker_verdict *v)
{
	switch (b->bk_state) {
	case BREAKER_OPEN:
		if (now_ms < b->bk_opened_ms + open_ms)
			break;
		b->bk_state = BREAKER_HALF_OPEN;
		/* FALLTHROUGH */
	case BREAKER_HALF_OPEN:
		/* one trial at a time; a lost trial's lease runs out */
		if (b->bk_state == BREAKER_HALF_OPEN &&
		    now_ms >= b->bk_lease_ms) {
			b->bk_lease_ms = now_ms + lease_ms;
			*v = BREAKER_TRIAL;
			return 1;
		}
		break;
	default:
		*v = BREAKER_PASS;
		return 0;
	}
	*v = BREAKER_REJECT;
	return 0;
}

int
breaker_outcome_step(struct breaker *b, unsigned int threshold, int failed,
    int trial, uint64_t now_ms)
{
	if (!failed) {
		if (b->bk_state == BREAKER_CLOSED && b->bk_fails == 0)
			return 0;
		memset(b, 0, sizeof(*b));
		return 1;
	}
	if (b->bk_fails < UINT32_MAX)
		b->bk_fails++;
	switch (b->bk_state) {
	case BREAKER_CLOSED:
		if (b->bk_fails >= threshold) {
			b->bk_state = BREAKER_OPEN;
			b->bk_opened_ms = now_ms;
		}
		break;
	case BREAKER_HALF_OPEN:
		/* the trial failed: open again; a call let through before
		 * the breaker opened changes nothing */
		if (trial) {
			b->bk_state = BREAKER_OPEN;
			b->bk_opened_ms = now_ms;
			b->bk_lease_ms = 0;
		}
		break;
	default:
		break;
	}
	return 1;
}

int
breaker_adopt_step(struct breaker *b, uint32_t fails, uint64_t open_age_ms,
    uint64_t now_ms, uint64_t read_ms)
{
	uint64_t opened;

	if (open_age_ms == BREAKER_SHARED_CLOSED) {
		/* closed on the fleet: a breaker opened here closes too,
		 * unless it opened after the read left (a failure of ours
		 * the read did not see yet) */
		if (b->bk_state == BREAKER_CLOSED ||
		    b->bk_opened_ms >= read_ms)
			return 0;
		memset(b, 0, sizeof(*b));
		return 1;
	}
	opened = now_ms > open_age_ms ? now_ms - open_age_ms : 0;
	/*
	 * open here since no earlier than on the fleet: kept.  The age is
	 * measured on another clock (a round trip apart), so the same
	 * opening read again may look a little later: within the slack it
	 * is the same one, and a half-open trial under way is not undone.
	 */
	if (b->bk_state != BREAKER_CLOSED &&
	    opened < b->bk_opened_ms + BREAKER_ADOPT_SLACK_MS)
		return 0;
	b->bk_state = BREAKER_OPEN;
	b->bk_fails = fails;
	b->bk_opened_ms = opened;
	b->bk_lease_ms = 0;
	return 1;
}

static size_t
health_key(char *key, size_t len, const char *backend)
{
	int n;

	n = snprintf(key, len, BREAKER_PREFIX "%s", backend);
	if (n < 0 || (size_t)n >= len)
		return 0;
	return (size_t)n;
}

/* a record of another layout reads as none */
static void
breaker_decode(struct breaker *b, const void *data, size_t len)
{
	memset(b, 0, sizeof(*b));
	if (data != NULL && len == sizeof(*b))
		memcpy(b, data, sizeof(*b));
	if (b->bk_state > BREAKER_HALF_OPEN)
		memset(b, 0, sizeof(*b));
}

static int
health_on_read(void *arg, const void *data, size_t len)
{
	breaker_decode(arg, data, len);
	return 0;
}

int
health_breaker_get(struct store *s, const char *backend, uint64_t now_ms,
    struct breaker *b)
{
	char	 key[STORE_KEY_MAX];
	size_t	 klen;
	int	 rc;

	memset(b, 0, sizeof(*b));
	if ((klen = health_key(key, sizeof(key), backend)) == 0) {
		errno = EINVAL;
		return -1;
	}
	rc = store_read(s, STORE_HEALTH, key, klen, now_ms, health_on_read, b);
	return rc == -1 ? -1 : 0;
}

struct health_upd {
	const struct config_health	*hu_ch;
	uint64_t			 hu_now;
	uint64_t			 hu_lease;
	int				 hu_admit;	/* else an outcome */
	int				 hu_release;	/* or a lease back */
	int				 hu_failed;
	int				 hu_trial;
	int				 hu_adopt;	/* or the fleet's */
	uint32_t			 hu_sfails;
	uint64_t			 hu_sage;
	uint64_t			 hu_read;	/* the read left */
	enum breaker_verdict		 hu_verdict;
	struct breaker			 hu_old;
	struct breaker			 hu_new;
};

static int
health_on_update(void *arg, const void *data, size_t len, void *out,
    size_t outmax, size_t *outlen)
{
	struct health_upd	*hu = arg;
	struct breaker		*b = &hu->hu_new;
	int			 changed;

	breaker_decode(&hu->hu_old, data, len);
	*b = hu->hu_old;
	if (hu->hu_release) {
		/* the trial sent nothing: the next caller may try */
		changed = b->bk_state == BREAKER_HALF_OPEN && b->bk_lease_ms;
		b->bk_lease_ms = 0;
	} else if (hu->hu_adopt)
		changed = breaker_adopt_step(b, hu->hu_sfails, hu->hu_sage,
		    hu->hu_now, hu->hu_read);
	else if (hu->hu_admit)
		changed = breaker_admit_step(b, hu->hu_ch->ch_cb_timeout_ms,
		    hu->hu_lease, hu->hu_now, &hu->hu_verdict);
	else
		changed = breaker_outcome_step(b, hu->hu_ch->ch_cb_threshold,
		    hu->hu_failed, hu->hu_trial, hu->hu_now);
	if (!changed)
		return STORE_UPD_KEEP;
	if (b->bk_state == BREAKER_CLOSED && b->bk_fails == 0)
		return data != NULL ? STORE_UPD_DEL : STORE_UPD_KEEP;
	if (outmax < sizeof(*b))
		return STORE_UPD_KEEP;
	memcpy(out, b, sizeof(*b));
	*outlen = sizeof(*b);
	return STORE_UPD_PUT;
}

static int
health_update(struct store *s, const char *backend, struct health_upd *hu)
{
	char	 key[STORE_KEY_MAX];
	size_t	 klen;

	if ((klen = health_key(key, sizeof(key), backend)) == 0)
		return -1;
	if (store_update(s, STORE_HEALTH, key, klen, hu->hu_now,
	    health_on_update, hu) == -1) {
		log_warnx("backend %s: circuit breaker: %s", backend,
		    strerror(errno));
		return -1;
	}
	return 0;
}

enum breaker_verdict
health_breaker_admit(struct store *s, const char *backend,
    const struct config_health *ch, uint64_t lease_ms, uint64_t now_ms,
    struct breaker *b)
{
	struct health_upd	hu;
	enum breaker_verdict	v;
	struct breaker		probe;

	if (health_breaker_get(s, backend, now_ms, b) == -1)
		return BREAKER_PASS;
	probe = *b;
	/* closed, or open and not due: decided on the read alone */
	if (!breaker_admit_step(&probe, ch->ch_cb_timeout_ms, lease_ms,
	    now_ms, &v))
		return v;
	memset(&hu, 0, sizeof(hu));
	hu.hu_ch = ch;
	hu.hu_now = now_ms;
	hu.hu_lease = lease_ms;
	hu.hu_admit = 1;
	hu.hu_verdict = BREAKER_PASS;
	if (health_update(s, backend, &hu) == -1)
		return BREAKER_PASS;
	*b = hu.hu_new;
	if (hu.hu_verdict == BREAKER_TRIAL &&
	    hu.hu_old.bk_state == BREAKER_OPEN)
		log_info("backend %s: circuit half-open, one trial request "
		    "let through", backend);
	return hu.hu_verdict;
}

int
health_breaker_record(struct store *s, const char *backend,
    const struct config_health *ch, int failed, int trial, uint64_t now_ms,
    int *reset)
{
	struct health_upd	hu;
	struct breaker		b;

	if (reset != NULL)
		*reset = 0;
	/* the common case, a success with nothing to reset: a read */
	if (!failed && !trial) {
		if (health_breaker_get(s, backend, now_ms, &b) == -1 ||
		    (b.bk_state == BREAKER_CLOSED && b.bk_fails == 0))
			return -1;
	}
	memset(&hu, 0, sizeof(hu));
	hu.hu_ch = ch;
	hu.hu_now = now_ms;
	hu.hu_failed = failed;
	hu.hu_trial = trial;
	if (health_update(s, backend, &hu) == -1)
		return -1;
	if (reset != NULL && !failed && hu.hu_old.bk_fails > 0)
		*reset = 1;
	if (hu.hu_old.bk_state == hu.hu_new.bk_state)
		return -1;
	if (hu.hu_new.bk_state == BREAKER_OPEN)
		log_warnx("backend %s: circuit open after %u failures; "
		    "requests fail at once for %llu s", backend,
		    hu.hu_new.bk_fails,
		    (unsigned long long)(ch->ch_cb_timeout_ms / 1000));
	else
		log_info("backend %s: circuit %s", backend,
		    breaker_state_name((enum breaker_state)hu.hu_new.bk_state));
	return (int)hu.hu_new.bk_state;
}

void
health_breaker_release(struct store *s, const char *backend,
    const struct config_health *ch, uint64_t now_ms)
{
	struct health_upd hu;

	memset(&hu, 0, sizeof(hu));
	hu.hu_ch = ch;
	hu.hu_now = now_ms;
	hu.hu_release = 1;
	(void)health_update(s, backend, &hu);
}

int
health_breaker_adopt(struct store *s, const char *backend,
    const struct config_health *ch, uint32_t fails, uint64_t open_age_ms,
    uint64_t now_ms, uint64_t read_ms)
{
	struct health_upd hu;

	memset(&hu, 0, sizeof(hu));
	hu.hu_ch = ch;
	hu.hu_now = now_ms;
	hu.hu_read = read_ms;
	hu.hu_adopt = 1;
	hu.hu_sfails = fails;
	hu.hu_sage = open_age_ms;
	if (health_update(s, backend, &hu) == -1 ||
	    hu.hu_old.bk_state == hu.hu_new.bk_state)
		return -1;
	if (hu.hu_new.bk_state == BREAKER_OPEN)
		log_warnx("backend %s: circuit open on another node; requests "
		    "fail at once for %llu s", backend,
		    (unsigned long long)(ch->ch_cb_timeout_ms / 1000));
	else
		log_info("backend %s: circuit closed on another node",
		    backend);
	return (int)hu.hu_new.bk_state;
}

/* --- active health: the probes' record ---------------------------------- */

#define PROBE_PREFIX	"probe/"

const char *
probe_state_name(enum probe_state st)
{
	switch (st) {
	case PROBE_HEALTHY:
		return "healthy";
	case PROBE_DEGRADED:
		return "degraded";
	case PROBE_UNHEALTHY:
		return "unhealthy";
	case PROBE_UNAUTHENTICATED:
		return "unauthenticated";
	default:
		break;
	}
	return "unknown";
}

int
probe_state_out(enum probe_state st)
{
	return st == PROBE_UNHEALTHY;
}

int
probe_step(struct probe_rec *p, unsigned int threshold, uint64_t timeout_ms,
    enum probe_outcome o, uint64_t latency_us, const char *err,
    uint64_t now_ms)
{
	uint32_t old = p->pr_state;

	p->pr_at_ms = now_ms;
	switch (o) {
	case PROBE_OK:
		p->pr_latency_us = latency_us;
		/* slow, or the first answer after failures: degraded */
		if ((timeout_ms > 0 && latency_us > timeout_ms * 1000 / 2) ||
		    p->pr_fails > 0 || old == PROBE_UNHEALTHY ||
		    old == PROBE_UNAUTHENTICATED)
			p->pr_state = PROBE_DEGRADED;
		else
			p->pr_state = PROBE_HEALTHY;
		p->pr_fails = 0;
		break;
	case PROBE_DENIED:
		p->pr_latency_us = latency_us;
		p->pr_state = PROBE_UNAUTHENTICATED;
		p->pr_fails = 0;
		break;
	case PROBE_FAILED:
		if (p->pr_fails < UINT32_MAX)
			p->pr_fails++;
		if (p->pr_fails >= (threshold > 0 ? threshold : 1))
			p->pr_state = PROBE_UNHEALTHY;
		break;
	}
	if (err != NULL && o != PROBE_OK)
		(void)snprintf(p->pr_err, sizeof(p->pr_err), "%s", err);
	return p->pr_state != old;
}

static size_t
probe_key(char *key, size_t len, const char *backend)
{
	int n;

	n = snprintf(key, len, PROBE_PREFIX "%s", backend);
	if (n < 0 || (size_t)n >= len)
		return 0;
	return (size_t)n;
}

/* a record of another layout reads as none */
static void
probe_decode(struct probe_rec *p, const void *data, size_t len)
{
	memset(p, 0, sizeof(*p));
	if (data != NULL && len == sizeof(*p))
		memcpy(p, data, sizeof(*p));
	if (p->pr_state >= PROBE_NSTATES)
		memset(p, 0, sizeof(*p));
	p->pr_err[sizeof(p->pr_err) - 1] = '\0';
}

static int
probe_on_read(void *arg, const void *data, size_t len)
{
	probe_decode(arg, data, len);
	return 0;
}

int
health_probe_get(struct store *s, const char *backend, uint64_t now_ms,
    struct probe_rec *p)
{
	char	 key[STORE_KEY_MAX];
	size_t	 klen;
	int	 rc;

	memset(p, 0, sizeof(*p));
	if ((klen = probe_key(key, sizeof(key), backend)) == 0) {
		errno = EINVAL;
		return -1;
	}
	rc = store_read(s, STORE_HEALTH, key, klen, now_ms, probe_on_read, p);
	return rc == -1 ? -1 : 0;
}

struct probe_upd {
	const struct config_health	*pu_ch;
	enum probe_outcome		 pu_outcome;
	uint64_t			 pu_latency_us;
	const char			*pu_err;
	uint64_t			 pu_now;
	struct probe_rec		 pu_old;
	struct probe_rec		 pu_new;
};

static int
probe_on_update(void *arg, const void *data, size_t len, void *out,
    size_t outmax, size_t *outlen)
{
	struct probe_upd *pu = arg;

	probe_decode(&pu->pu_old, data, len);
	pu->pu_new = pu->pu_old;
	(void)probe_step(&pu->pu_new, pu->pu_ch->ch_unhealthy,
	    pu->pu_ch->ch_timeout_ms, pu->pu_outcome, pu->pu_latency_us,
	    pu->pu_err, pu->pu_now);
	if (outmax < sizeof(pu->pu_new))
		return STORE_UPD_KEEP;
	memcpy(out, &pu->pu_new, sizeof(pu->pu_new));
	*outlen = sizeof(pu->pu_new);
	return STORE_UPD_PUT;
}

int
health_probe_record(struct store *s, const char *backend,
    const struct config_health *ch, enum probe_outcome o,
    uint64_t latency_us, const char *err, uint64_t now_ms,
    struct probe_rec *old, struct probe_rec *cur)
{
	struct probe_upd	 pu;
	char			 key[STORE_KEY_MAX];
	size_t			 klen;

	memset(&pu, 0, sizeof(pu));
	pu.pu_ch = ch;
	pu.pu_outcome = o;
	pu.pu_latency_us = latency_us;
	pu.pu_err = err;
	pu.pu_now = now_ms;
	if ((klen = probe_key(key, sizeof(key), backend)) == 0 ||
	    store_update(s, STORE_HEALTH, key, klen, now_ms, probe_on_update,
	    &pu) == -1) {
		log_warnx("backend %s: cannot record its health: %s", backend,
		    strerror(errno));
		return -1;
	}
	*old = pu.pu_old;
	*cur = pu.pu_new;
	return 0;
}

int
health_probe_clear(struct store *s, const char *backend)
{
	struct probe_rec	 p;
	char			 key[STORE_KEY_MAX];
	size_t			 klen;

	if ((klen = probe_key(key, sizeof(key), backend)) == 0 ||
	    health_probe_get(s, backend, store_now_ms(), &p) == -1)
		return -1;
	if (p.pr_at_ms == 0)
		return 0;
	return store_del(s, STORE_HEALTH, key, klen) == -1 ? -1 : 1;
}

/* --- the fleet's verdict (provider redis) -------------------------------- */

#define FLEET_PREFIX	"fleet/"
#define FLEET_FOUND	2	/* apart from STORE_NOTFOUND */

static size_t
fleet_key(char *key, size_t len, const char *backend)
{
	int n;

	n = snprintf(key, len, FLEET_PREFIX "%s", backend);
	if (n < 0 || (size_t)n >= len)
		return 0;
	return (size_t)n;
}

int
health_fleet_set(struct store *s, const char *backend,
    const struct probe_fleet *pf, uint64_t now_ms)
{
	char	 key[STORE_KEY_MAX];
	size_t	 klen;

	if ((klen = fleet_key(key, sizeof(key), backend)) == 0) {
		errno = EINVAL;
		return -1;
	}
	if (pf != NULL)
		return store_put(s, STORE_HEALTH, key, klen, pf, sizeof(*pf),
		    pf->pf_until_ms, now_ms);
	return store_del(s, STORE_HEALTH, key, klen) == -1 ? -1 : 0;
}

static int
fleet_on_read(void *arg, const void *data, size_t len)
{
	struct probe_fleet *pf = arg;

	if (len != sizeof(*pf))
		return 0;	/* another layout reads as none */
	memcpy(pf, data, sizeof(*pf));
	pf->pf_node[sizeof(pf->pf_node) - 1] = '\0';
	pf->pf_err[sizeof(pf->pf_err) - 1] = '\0';
	return pf->pf_state > PROBE_UNKNOWN && pf->pf_state < PROBE_NSTATES ?
	    FLEET_FOUND : 0;
}

int
health_fleet_get(struct store *s, const char *backend, uint64_t now_ms,
    struct probe_fleet *pf)
{
	char	 key[STORE_KEY_MAX];
	size_t	 klen;
	int	 rc;

	memset(pf, 0, sizeof(*pf));
	if ((klen = fleet_key(key, sizeof(key), backend)) == 0) {
		errno = EINVAL;
		return -1;
	}
	rc = store_read(s, STORE_HEALTH, key, klen, now_ms, fleet_on_read,
	    pf);
	if (rc == -1)
		return -1;
	return rc == FLEET_FOUND;
}

int
health_verdict_get(struct store *s, const char *backend, uint64_t now_ms,
    struct probe_rec *p, char *node, size_t nodelen)
{
	struct probe_fleet pf;

	if (node != NULL && nodelen > 0)
		node[0] = '\0';
	if (health_probe_get(s, backend, now_ms, p) == -1)
		return -1;
	if (health_fleet_get(s, backend, now_ms, &pf) != 1)
		return 0;	/* our own, as on one host */
	p->pr_state = pf.pf_state;
	if (pf.pf_err[0] != '\0')
		(void)snprintf(p->pr_err, sizeof(p->pr_err), "%s", pf.pf_err);
	if (node != NULL && nodelen > 0)
		(void)snprintf(node, nodelen, "%s", pf.pf_node);
	return 0;
}

#define NODE_TAG_KEY	"node/tag"

static int
node_tag_on_read(void *arg, const void *data, size_t len)
{
	char		*tag = arg;
	const char	*d = data;
	size_t		 i;

	if (len != HEALTH_NODE_TAG_LEN)
		return 0;
	for (i = 0; i < len; i++)
		if (!((d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' &&
		    d[i] <= 'f')))
			return 0;
	memcpy(tag, d, len);
	tag[len] = '\0';
	return FLEET_FOUND;
}

int
health_node_tag(struct store *s, char tag[HEALTH_NODE_TAG_LEN + 1])
{
	unsigned char	r[HEALTH_NODE_TAG_LEN / 2];
	char		new[HEALTH_NODE_TAG_LEN + 1];
	size_t		i;
	int		rc;

	if ((rc = store_read(s, STORE_HEALTH, NODE_TAG_KEY,
	    sizeof(NODE_TAG_KEY) - 1, store_now_ms(), node_tag_on_read,
	    tag)) == FLEET_FOUND)
		return 0;
	if (rc == -1 || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	for (i = 0; i < sizeof(r); i++)
		(void)snprintf(new + 2 * i, 3, "%02x", r[i]);
	/* one draw kept: a record of another layout is replaced */
	if (store_put(s, STORE_HEALTH, NODE_TAG_KEY, sizeof(NODE_TAG_KEY) - 1,
	    new, HEALTH_NODE_TAG_LEN, 0, store_now_ms()) == -1)
		return -1;
	memcpy(tag, new, sizeof(new));
	return 0;
}
