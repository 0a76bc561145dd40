/*
 * Socket paths in the state directory (paths.h).
 */
#include <stdio.h>

#include "shared/config.h"
#include "shared/paths.h"

int
paths_bridge_socket(const struct config *conf, const char *name, char *buf,
    size_t len)
{
	int n;

	n = snprintf(buf, len, "%s/bridge-%s.sock", conf->cf_state_dir, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
