/*
 * stats.c: the layout of the daemon's shared figures (stats.h): a slot
 * is a struct diag_slot and one struct diag_backend per backend.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "stats.h"

size_t
diag_stats_size(const struct config *conf, int nslots)
{
	return (size_t)nslots * (sizeof(struct diag_slot) +
	    conf->cf_nbackends * sizeof(struct diag_backend));
}

struct diag_slot *
diag_stats_slot(struct diag_slot *base, const struct config *conf, int slot)
{
	return (struct diag_slot *)((char *)base + diag_stats_size(conf,
	    slot));
}
