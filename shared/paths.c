/*
 * Socket paths in the state directory (paths.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "shared/config.h"
#include "shared/paths.h"

static int	paths_format(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static int
paths_format(char *buf, size_t len, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
paths_bridge_socket(const struct config *conf, const char *name, char *buf,
    size_t len)
{
	return paths_format(buf, len, "%s/bridge-%s.sock", conf->cf_state_dir,
	    name);
}

int
paths_wake_socket(const struct config *conf, pid_t pid, char *buf, size_t len)
{
	return paths_format(buf, len, "%s/w-%d.sock", conf->cf_state_dir,
	    (int)pid);
}
