/*
 * What the store holds, counted (vmcpctl, /status, the caps): the
 * environment's and each db's figures, gauges, groups, every record.
 */
#ifndef VMCPD_STORE_STAT_H
#define VMCPD_STORE_STAT_H

#include <stddef.h>
#include <stdint.h>

#include "shared/store.h"

struct store_dbstat {
	const char	*sd_name;
	size_t		 sd_entries;
	size_t		 sd_pages;	/* branch + leaf + overflow */
};

struct store_envstat {
	uint64_t	 se_map_size;
	uint64_t	 se_used_bytes;	/* (last page + 1) * page size */
	uint64_t	 se_free_bytes;	/* of that, free and reusable */
	uint64_t	 se_headroom_bytes; /* kept for deletes */
	unsigned int	 se_page_size;
	unsigned int	 se_max_readers;
	unsigned int	 se_num_readers;
	struct store_dbstat se_db[STORE_NDB];
	size_t		 se_expiry_entries;
};

int	 store_envstat(struct store *, struct store_envstat *);
/*
 * Gauges: named counters (1..STORE_GROUP_MAX bytes) kept beside the
 * groups' counts, one write txn per change; never below 0.
 */
int	 store_gauge_add(struct store *, const char *name, int delta);
int	 store_gauge_get(struct store *, const char *name, uint64_t *);
/* each gauge, or each group of db with its count, in key order */
typedef int (*store_count_cb)(void *arg, const char *name, size_t nlen,
    uint64_t n);
int	 store_gauges(struct store *, store_count_cb, void *arg);
int	 store_groups(struct store *, enum store_db, store_count_cb,
	    void *arg);
/* records in group (expired ones until swept), or -1 */
int	 store_group_count(struct store *, enum store_db, const void *group,
	    size_t glen, size_t *count);
int	 store_iter(struct store *, enum store_db, uint64_t now_ms,
	    int include_expired, store_iter_cb, void *arg);

#endif /* VMCPD_STORE_STAT_H */
