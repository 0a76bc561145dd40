/*
 * The trust table of Redis's client-side caching: worker/redis/redis_tracking.h.
 */
#include <string.h>

#include "worker/redis/redis_tracking.h"

/* FNV-1a: the ids are random already, this only spreads them */
size_t
rtrack_slot(const char *id, size_t len)
{
	uint64_t	h = 0xcbf29ce484222325ULL;
	size_t		i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)id[i];
		h *= 0x100000001b3ULL;
	}
	return (size_t)(h & (RTRACK_SLOTS - 1));
}

/* id's length, or 0 when it can't be trusted */
static size_t
rtrack_len(const char *id)
{
	size_t len = strnlen(id, RTRACK_ID_MAX + 1);

	return len > RTRACK_ID_MAX ? 0 : len;
}

void
rtrack_init(struct rtrack *rt)
{
	memset(rt, 0, sizeof(*rt));
}

void
rtrack_flush(struct rtrack *rt)
{
	rt->rt_flushed = ++rt->rt_seq;
}

void
rtrack_set_on(struct rtrack *rt, int on)
{
	rt->rt_on = on;
	rtrack_flush(rt);
}

uint64_t
rtrack_ticket(struct rtrack *rt)
{
	return ++rt->rt_seq;
}

int
rtrack_answer(struct rtrack *rt, const char *id, uint64_t ticket,
    uint64_t stamp)
{
	struct rtrack_slot	*rs;
	size_t			 len = rtrack_len(id);

	if (!rt->rt_on || stamp == 0 || len == 0 || ticket <= rt->rt_flushed)
		return 0;
	rs = &rt->rt_slots[rtrack_slot(id, len)];
	if (rs->rs_inval > ticket)
		return 0;
	/* a newer answer trusted already stays (answers come in order) */
	if (strcmp(rs->rs_id, id) == 0 && rs->rs_ticket > ticket)
		return 0;
	memcpy(rs->rs_id, id, len + 1);
	rs->rs_stamp = stamp;
	rs->rs_ticket = ticket;
	return 1;
}

int
rtrack_trusted(const struct rtrack *rt, const char *id, uint64_t stamp)
{
	const struct rtrack_slot	*rs;
	size_t				 len = rtrack_len(id);

	if (!rt->rt_on || stamp == 0 || len == 0)
		return 0;
	rs = &rt->rt_slots[rtrack_slot(id, len)];
	return rs->rs_stamp == stamp && rs->rs_ticket > rt->rt_flushed &&
	    rs->rs_ticket > rs->rs_inval && strcmp(rs->rs_id, id) == 0;
}

void
rtrack_invalidate(struct rtrack *rt, const char *id, size_t len)
{
	struct rtrack_slot *rs = &rt->rt_slots[rtrack_slot(id, len)];

	rs->rs_inval = ++rt->rt_seq;
	if (len <= RTRACK_ID_MAX && memcmp(rs->rs_id, id, len) == 0 &&
	    rs->rs_id[len] == '\0')
		rs->rs_id[0] = '\0';
}
